/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The single-value files of the cpu.max family: cpu.max.burst,
 * cpu.cfs_period_us and cpu.cfs_burst_us (bw_u64_parse()) and
 * cpu.cfs_quota_us (bw_cfs_quota_parse()), with their formatters.
 *
 * Properties: results are 0, -EINVAL or -ERANGE, outputs untouched on
 * failure; parse(format(x)) == x for what was parsed and for the input's
 * first 8 bytes taken as a number; a quota parsed from cpu.cfs_quota_us is
 * in range ("-1" is max). */

#include <errno.h>
#include <string.h>

#include "bwgov/cgroup/cpumax.h"
#include "fuzz-util.h"

static void u64_round_trip(uint64_t v) {
        char buf[32];
        uint64_t again = 0;
        int n;

        n = bw_u64_format(v, buf, sizeof(buf));
        fuzz_check(n > 0 && (size_t) n == strlen(buf));
        fuzz_check(bw_u64_parse(buf, (size_t) n, &again) == 0 && again == v);
        /* Without the newline too. */
        fuzz_check(bw_u64_parse(buf, (size_t) n - 1, &again) == 0 && again == v);
        fuzz_check(bw_u64_format(v, buf, (size_t) n) == -ENOBUFS);
}

static void quota_round_trip(uint64_t quota_usec) {
        char buf[32];
        uint64_t again = 0;
        int n;

        n = bw_cfs_quota_format(quota_usec, buf, sizeof(buf));
        fuzz_check(n > 0 && (size_t) n == strlen(buf));
        fuzz_check(bw_cfs_quota_parse(buf, (size_t) n, &again) == 0 && again == quota_usec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_bytes b = { data, size };
        uint64_t v = 7;
        char buf[32];
        int r;

        r = bw_u64_parse((const char *) data, size, &v);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0)
                fuzz_check(v == 7);
        else
                u64_round_trip(v);

        v = 7;
        r = bw_cfs_quota_parse((const char *) data, size, &v);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0)
                fuzz_check(v == 7);
        else {
                fuzz_check(v == BW_QUOTA_MAX || (v >= BW_QUOTA_MIN_USEC && v <= BW_QUOTA_LIMIT_USEC));
                quota_round_trip(v);
        }

        v = fuzz_take_u64(&b);
        u64_round_trip(v);
        r = bw_cfs_quota_format(v, buf, sizeof(buf));
        fuzz_check(r == -EINVAL || r > 0);
        if (r > 0)
                quota_round_trip(v);
        return 0;
}
