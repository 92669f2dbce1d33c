/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.journal: bw_state_journal_apply() of the input over a state of
 * generation 1 with three entries, then bw_state_journal_format().
 *
 * Properties: the result is the number of lines applied or -EINVAL; the
 * entries stay sorted, found by name and well formed (as in fuzz-state);
 * the journal line of the whole result applied over an empty state of the
 * same generation gives the same entries, and formats to the same line. */

#include <errno.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "bwgov/state/state.h"
#include "fuzz-state-check.h"
#include "fuzz-util.h"
#include "bwgov/state/state-journal.h"

static const char base[] =
        "{\"schema_version\": 1, \"generation\": 1, \"units\": {"
        "\"a.service\": {\"baseline\":{\"burst_usec\":0,\"has_burst\":true,\"period_usec\":100000,"
        "\"quota_usec\":50000},\"cgroup\":\"a.service\",\"credit_usec\":5,\"debt_usec\":0,\"paused\":false,"
        "\"pending\":null,\"written\":null},"
        "\"b.slice\": {\"baseline\":{\"burst_usec\":0,\"has_burst\":false,\"period_usec\":100000,"
        "\"quota_usec\":null},\"cgroup\":\"b.slice\",\"credit_usec\":0,\"debt_usec\":0,\"paused\":true,"
        "\"pending\":null,\"written\":null,\"levers\":{\"weight\":\"100\"}},"
        "\"c.scope\": {\"baseline\":{\"burst_usec\":0,\"has_burst\":true,\"period_usec\":100000,"
        "\"quota_usec\":20000},\"cgroup\":\"x/c.scope\",\"credit_usec\":0,\"debt_usec\":0,\"paused\":false,"
        "\"pending\":{\"burst_usec\":20000,\"has_burst\":true,\"period_usec\":100000,\"quota_usec\":40000},"
        "\"written\":null}}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(bw_state_done) struct bw_state s = { 0 }, again = { 0 };
        _cleanup_free_ char *line = NULL, *line2 = NULL;
        int r;

        fuzz_check(bw_state_parse(base, strlen(base), &s) == 0 && s.generation == 1);
        r = bw_state_journal_apply(&s, (const char *) data, size);
        fuzz_check(r >= 0 || r == -EINVAL);
        check_units(&s);

        /* Every entry unsaved: the line holds them all. */
        for (size_t i = 0; i < s.n_units; i++)
                s.units[i].saved = false;
        fuzz_check(bw_state_journal_format(&s, &line) == 0);
        fuzz_check(!line == (s.n_units == 0 && s.n_forgotten == 0));
        if (!line)
                return 0;
        again.generation = 1;
        fuzz_check(bw_state_journal_apply(&again, line, strlen(line)) == 1);
        fuzz_check(again.n_units == s.n_units);
        for (size_t i = 0; i < s.n_units; i++)
                fuzz_check(same_unit(&s.units[i], &again.units[i]));
        for (size_t i = 0; i < again.n_units; i++)
                again.units[i].saved = false;
        fuzz_check(bw_state_journal_format(&again, &line2) == 0 && line2);
        /* The same entries; again forgot nothing. */
        fuzz_check(strcmp(strstr(line, "],\"units\":"), strstr(line2, "],\"units\":")) == 0);
        return 0;
}
