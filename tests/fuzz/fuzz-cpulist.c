/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CPU lists ("0-3,8,10-11": cpuset.cpus): bw_cpulist_parse() and
 * bw_cpulist_format().
 *
 * Properties: the result is 0, -EINVAL or -ENOMEM; the CPUs are ascending
 * without duplicates and at most BW_CPULIST_CPU_MAX; formatted with ranges
 * and parsed again they are the same CPUs (parse(format(x)) == x), and the
 * format is canonical (formatting again gives the same text). */

#include <errno.h>
#include <string.h>

#include "bwgov/cgroup/cpulist.h"
#include "bwgov/util/macro.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ unsigned *cpus = NULL, *again = NULL;
        _cleanup_free_ char *text = NULL, *text2 = NULL;
        size_t n = 0, m = 0;
        int r;

        r = bw_cpulist_parse((const char *) data, size, &cpus, &n);
        fuzz_check(r == 0 || r == -EINVAL);
        if (r < 0)
                return 0;
        for (size_t i = 0; i < n; i++)
                fuzz_check(cpus[i] <= BW_CPULIST_CPU_MAX && (i == 0 || cpus[i - 1] < cpus[i]));

        fuzz_check(bw_cpulist_format(cpus, n, &text) == 0);
        fuzz_check(bw_cpulist_parse(text, strlen(text), &again, &m) == 0);
        fuzz_check(m == n && (n == 0 || memcmp(cpus, again, n * sizeof(*cpus)) == 0));
        fuzz_check(bw_cpulist_format(again, m, &text2) == 0 && strcmp(text, text2) == 0);
        return 0;
}
