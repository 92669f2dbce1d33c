/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup v2 cpu.stat: bw_cpustat_parse_v2().
 *
 * Properties: the result is 0, -EINVAL or -ENODATA; *ret is untouched on
 * failure; a parsed sample has usage_usec and complete throttling and burst
 * sets (the burst set only after the throttling set); the sample written
 * back as the kernel prints it parses to the same sample; a sample's delta
 * to itself is zero. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/cgroup/cpustat.h"
#include "bwgov/util/macro.h"
#include "fuzz-util.h"

#define THROTTLE_SET (BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED | BW_CPUSTAT_THROTTLED)
#define BURST_SET    (BW_CPUSTAT_NR_BURSTS | BW_CPUSTAT_BURST)

#define CHECKED_ONLY SIZE_MAX

static const struct {
        const char *key;
        unsigned bit;
        size_t offset;
} fields[] = {
        { "usage_usec",     BW_CPUSTAT_USAGE,        offsetof(struct bw_cpu_stat, usage_usec) },
        /* Checked, not kept (CHECKED_ONLY): formatted as 0. */
        { "user_usec",      BW_CPUSTAT_USER,         CHECKED_ONLY },
        { "system_usec",    BW_CPUSTAT_SYSTEM,       CHECKED_ONLY },
        { "nr_periods",     BW_CPUSTAT_NR_PERIODS,   offsetof(struct bw_cpu_stat, nr_periods) },
        { "nr_throttled",   BW_CPUSTAT_NR_THROTTLED, offsetof(struct bw_cpu_stat, nr_throttled) },
        { "throttled_usec", BW_CPUSTAT_THROTTLED,    offsetof(struct bw_cpu_stat, throttled_usec) },
        { "nr_bursts",      BW_CPUSTAT_NR_BURSTS,    offsetof(struct bw_cpu_stat, nr_bursts) },
        { "burst_usec",     BW_CPUSTAT_BURST,        offsetof(struct bw_cpu_stat, burst_usec) },
};

static uint64_t field(const struct bw_cpu_stat *st, size_t offset) {
        if (offset == CHECKED_ONLY)
                return 0;
        return *(const uint64_t *) ((const char *) st + offset);
}

static bool same_stat(const struct bw_cpu_stat *a, const struct bw_cpu_stat *b) {
        if (a->seen != b->seen || a->local_throttled_usec != b->local_throttled_usec)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                if (field(a, fields[i].offset) != field(b, fields[i].offset))
                        return false;
        return true;
}

static bool set_ok(unsigned seen, unsigned set) {
        return (seen & set) == 0 || (seen & set) == set;
}

/* The sample as the kernel would print it, the fields it has only. */
static size_t format_stat(const struct bw_cpu_stat *st, char *buf, size_t size) {
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                if (st->seen & fields[i].bit) {
                        int k = snprintf(buf + n, size - n, "%s %" PRIu64 "\n", fields[i].key,
                                         field(st, fields[i].offset));

                        fuzz_check(k > 0 && (size_t) k < size - n);
                        n += (size_t) k;
                }
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct bw_cpu_stat st, untouched, again, delta;
        char buf[512];
        size_t n;
        int r;

        memset(&st, 0xa5, sizeof(st));
        untouched = st;
        r = bw_cpustat_parse_v2((const char *) data, size, &st);
        fuzz_check(r == 0 || r == -EINVAL || r == -ENODATA);
        if (r < 0) {
                fuzz_check(memcmp(&st, &untouched, sizeof(st)) == 0);
                return 0;
        }

        fuzz_check((st.seen & ~(unsigned) (BW_CPUSTAT_LOCAL_THROTTLED - 1)) == 0);
        fuzz_check(st.seen & BW_CPUSTAT_USAGE);
        fuzz_check(set_ok(st.seen, THROTTLE_SET) && set_ok(st.seen, BURST_SET));
        fuzz_check(!(st.seen & BURST_SET) || (st.seen & THROTTLE_SET));
        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                fuzz_check((st.seen & fields[i].bit) || field(&st, fields[i].offset) == 0);

        n = format_stat(&st, buf, sizeof(buf));
        fuzz_check(bw_cpustat_parse_v2(buf, n, &again) == 0);
        fuzz_check(same_stat(&st, &again));

        fuzz_check(bw_cpustat_delta(&st, &again, ~0u, &delta) == 0);
        fuzz_check(delta.seen == st.seen);
        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                fuzz_check(field(&delta, fields[i].offset) == 0);
        return 0;
}
