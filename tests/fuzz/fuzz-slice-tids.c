/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cgroup's thread list (cgroup.threads, v1 tasks): bw_slice_parse_tids().
 *
 * Properties: the result is 0 or -EINVAL; the ids are positive, ascending
 * and without duplicates; written back one per line they parse to the same
 * ids (parse(format(x)) == x). */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "bwgov/cgroup/slice.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ pid_t *tids = NULL, *again = NULL;
        _cleanup_free_ char *text = NULL;
        size_t n = 0, m = 0, len = 0;
        FILE *f;
        int r;

        r = bw_slice_parse_tids((const char *) data, size, &tids, &n);
        fuzz_check(r == 0 || r == -EINVAL);
        if (r < 0)
                return 0;
        for (size_t i = 0; i < n; i++)
                fuzz_check(tids[i] > 0 && (i == 0 || tids[i - 1] < tids[i]));

        f = open_memstream(&text, &len);
        fuzz_check(f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%d\n", (int) tids[i]);
        fuzz_check(fclose(f) == 0);
        fuzz_check(bw_slice_parse_tids(text, len, &again, &m) == 0);
        fuzz_check(m == n && (n == 0 || memcmp(tids, again, n * sizeof(*tids)) == 0));
        return 0;
}
