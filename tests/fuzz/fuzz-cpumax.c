/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup v2 cpu.max: bw_cpumax_parse(), bw_cpumax_format(),
 * bw_bandwidth_validate() and bw_quota_to_string().
 *
 * Properties: the parser returns 0, -EINVAL or -ERANGE and leaves its
 * outputs untouched on failure; what it accepts is in the kernel's ranges
 * and formats to text that parses to the same pair (parse(format(x)) == x);
 * the input's first 16 bytes as a (quota, period) pair: format succeeds
 * exactly when the pair is in range, and then round-trips; a triple that
 * validates formats. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/cgroup/cpumax.h"
#include "fuzz-util.h"

static bool quota_ok(uint64_t quota_usec) {
        return quota_usec == BW_QUOTA_MAX || (quota_usec >= BW_QUOTA_MIN_USEC && quota_usec <= BW_QUOTA_LIMIT_USEC);
}

static bool period_ok(uint64_t period_usec) {
        return period_usec >= BW_PERIOD_MIN_USEC && period_usec <= BW_PERIOD_MAX_USEC;
}

/* format, then parse: the same pair, and the text is what the kernel prints. */
static void round_trip(uint64_t quota_usec, uint64_t period_usec) {
        char buf[64], qs[BW_QUOTA_STRING_MAX], expect[64];
        uint64_t q = 0, p = 0;
        int n;

        n = bw_cpumax_format(quota_usec, period_usec, buf, sizeof(buf));
        fuzz_check(n > 0 && (size_t) n == strlen(buf) && buf[n - 1] == '\n');
        fuzz_check(bw_cpumax_parse(buf, (size_t) n, &q, &p) == 0);
        fuzz_check(q == quota_usec && p == period_usec);

        snprintf(expect, sizeof(expect), "%s %" PRIu64 "\n", bw_quota_to_string(quota_usec, qs), period_usec);
        fuzz_check(strcmp(buf, expect) == 0);

        /* Too small a buffer: -ENOBUFS, the buffer untouched. */
        memset(buf, 'x', sizeof(buf));
        fuzz_check(bw_cpumax_format(quota_usec, period_usec, buf, (size_t) n) == -ENOBUFS);
        fuzz_check(buf[0] == 'x');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_bytes b = { data, size };
        uint64_t quota_usec = 7, period_usec = 7;
        struct bw_bandwidth bw;
        char buf[64];
        int r;

        r = bw_cpumax_parse((const char *) data, size, &quota_usec, &period_usec);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0)
                fuzz_check(quota_usec == 7 && period_usec == 7);
        else {
                fuzz_check(quota_ok(quota_usec) && period_ok(period_usec));
                round_trip(quota_usec, period_usec);
        }

        /* The bytes as numbers. */
        quota_usec = fuzz_take_u64(&b);
        period_usec = fuzz_take_u64(&b);
        r = bw_cpumax_format(quota_usec, period_usec, buf, sizeof(buf));
        fuzz_check((r > 0) == (quota_ok(quota_usec) && period_ok(period_usec)));
        if (r > 0)
                round_trip(quota_usec, period_usec);

        bw = (struct bw_bandwidth) {
                .quota_usec = quota_usec,
                .period_usec = period_usec,
                .burst_usec = fuzz_take_u64(&b),
                .has_burst = fuzz_take_u8(&b) & 1,
        };
        if (bw_bandwidth_validate(&bw) == 0) {
                fuzz_check(bw_cpumax_format(bw.quota_usec, bw.period_usec, buf, sizeof(buf)) > 0);
                fuzz_check(bw.burst_usec == 0 || (bw.has_burst && bw.burst_usec <= bw.quota_usec));
                fuzz_check(bw.burst_usec == 0 || bw.quota_usec + bw.burst_usec <= BW_QUOTA_LIMIT_USEC);
        }
        return 0;
}
