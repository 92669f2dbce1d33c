/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.json: bw_state_parse(), bw_state_format(), bw_state_find() and
 * bw_state_classify() on the input as the document.
 *
 * Properties: the result is 0 or -EINVAL; the entries are sorted by name
 * and each is found by name; every stored bandwidth validates; the state
 * formatted and parsed again is the same state (parse(format(x)) == x),
 * and formats to the same text; a second format of unchanged entries
 * formats none of them anew; the baseline is classified as the baseline,
 * the written and pending values as ours. */

#include <errno.h>
#include <string.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/cgroup/lever.h"
#include "bwgov/util/macro.h"
#include "bwgov/state/state.h"
#include "fuzz-state-check.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(bw_state_done) struct bw_state s = { 0 }, again = { 0 };
        _cleanup_free_ char *text = NULL, *text2 = NULL, *text3 = NULL;
        int r;

        r = bw_state_parse((const char *) data, size, &s);
        fuzz_check(r == 0 || r == -EINVAL);
        if (r < 0) {
                fuzz_check(s.n_units == 0 && !s.units);
                return 0;
        }
        check_units(&s);

        fuzz_check(bw_state_format(&s, &text) == 0);
        fuzz_check(s.changed == s.n_units);
        fuzz_check(bw_state_parse(text, strlen(text), &again) == 0);
        fuzz_check(again.n_units == s.n_units);
        for (size_t i = 0; i < s.n_units; i++)
                fuzz_check(same_unit(&s.units[i], &again.units[i]));

        fuzz_check(bw_state_format(&again, &text2) == 0);
        fuzz_check(strcmp(text, text2) == 0);
        fuzz_check(bw_state_format(&s, &text3) == 0);
        fuzz_check(s.changed == 0 && strcmp(text, text3) == 0);
        return 0;
}
