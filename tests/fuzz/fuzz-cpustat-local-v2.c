/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup v2 cpu.stat.local: bw_cpustat_local_parse_v2() ("throttled_usec N", µs).
 *
 * Properties: the result is 0, -EINVAL or -ENODATA; the output is untouched
 * on failure; "throttled_usec" written back as the kernel prints it parses to
 * the same value. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/cgroup/cpustat.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint64_t usec = 0xa5a5, again = 0;
        char buf[64];
        int r, n;

        r = bw_cpustat_local_parse_v2((const char *) data, size, &usec);
        fuzz_check(r == 0 || r == -EINVAL || r == -ENODATA);
        if (r < 0) {
                fuzz_check(usec == 0xa5a5);
                return 0;
        }

        n = snprintf(buf, sizeof(buf), "throttled_usec %" PRIu64 "\n", usec);
        fuzz_check(n > 0 && (size_t) n < sizeof(buf));
        fuzz_check(bw_cpustat_local_parse_v2(buf, (size_t) n, &again) == 0);
        fuzz_check(again == usec);
        return 0;
}
