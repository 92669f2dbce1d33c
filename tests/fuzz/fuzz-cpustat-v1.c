/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup v1 cpu.stat and cpuacct.usage: bw_cpustat_parse_v1() and
 * bw_cpuacct_usage_parse(), both on every input.
 *
 * Properties: the results are 0, -EINVAL or -ENODATA (cpu.stat) and 0 or
 * -EINVAL (cpuacct.usage); outputs are untouched on failure; a parsed
 * cpu.stat has the three throttling keys, no usage, and a complete burst set
 * or none; the sample written back as the kernel prints it (times in ns)
 * parses to the same sample, and so does the usage. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/cgroup/cpustat.h"
#include "bwgov/util/macro.h"
#include "fuzz-util.h"

#define THROTTLE_SET (BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED | BW_CPUSTAT_THROTTLED)
#define BURST_SET    (BW_CPUSTAT_NR_BURSTS | BW_CPUSTAT_BURST)

static const struct {
        const char *key;
        unsigned bit;
        size_t offset;
        uint64_t multiplier;            /* the file's unit per µs */
} fields[] = {
        { "nr_periods",     BW_CPUSTAT_NR_PERIODS,   offsetof(struct bw_cpu_stat, nr_periods),     1 },
        { "nr_throttled",   BW_CPUSTAT_NR_THROTTLED, offsetof(struct bw_cpu_stat, nr_throttled),   1 },
        { "throttled_time", BW_CPUSTAT_THROTTLED,    offsetof(struct bw_cpu_stat, throttled_usec), 1000 },
        { "nr_bursts",      BW_CPUSTAT_NR_BURSTS,    offsetof(struct bw_cpu_stat, nr_bursts),      1 },
        { "burst_time",     BW_CPUSTAT_BURST,        offsetof(struct bw_cpu_stat, burst_usec),     1000 },
};

static uint64_t field(const struct bw_cpu_stat *st, size_t offset) {
        return *(const uint64_t *) ((const char *) st + offset);
}

static bool same_stat(const struct bw_cpu_stat *a, const struct bw_cpu_stat *b) {
        if (a->seen != b->seen || a->usage_usec != b->usage_usec ||
            a->local_throttled_usec != b->local_throttled_usec)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                if (field(a, fields[i].offset) != field(b, fields[i].offset))
                        return false;
        return true;
}

static void check_stat(const uint8_t *data, size_t size) {
        struct bw_cpu_stat st, untouched, again;
        char buf[512];
        size_t n = 0;
        int r;

        memset(&st, 0xa5, sizeof(st));
        untouched = st;
        r = bw_cpustat_parse_v1((const char *) data, size, &st);
        fuzz_check(r == 0 || r == -EINVAL || r == -ENODATA);
        if (r < 0) {
                fuzz_check(memcmp(&st, &untouched, sizeof(st)) == 0);
                return;
        }

        fuzz_check((st.seen & THROTTLE_SET) == THROTTLE_SET);
        fuzz_check((st.seen & ~(unsigned) (THROTTLE_SET | BURST_SET)) == 0);
        fuzz_check((st.seen & BURST_SET) == 0 || (st.seen & BURST_SET) == BURST_SET);
        fuzz_check(st.usage_usec == 0);

        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                if (st.seen & fields[i].bit) {
                        int k = snprintf(buf + n, sizeof(buf) - n, "%s %" PRIu64 "\n", fields[i].key,
                                         field(&st, fields[i].offset) * fields[i].multiplier);

                        fuzz_check(k > 0 && (size_t) k < sizeof(buf) - n);
                        n += (size_t) k;
                }
        fuzz_check(bw_cpustat_parse_v1(buf, n, &again) == 0);
        fuzz_check(same_stat(&st, &again));
}

static void check_usage(const uint8_t *data, size_t size) {
        uint64_t usec = 0xa5a5, again;
        char buf[32];
        int r, n;

        r = bw_cpuacct_usage_parse((const char *) data, size, &usec);
        fuzz_check(r == 0 || r == -EINVAL);
        if (r < 0) {
                fuzz_check(usec == 0xa5a5);
                return;
        }
        n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", usec * 1000);
        fuzz_check(bw_cpuacct_usage_parse(buf, (size_t) n, &again) == 0 && again == usec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        check_stat(data, size);
        check_usage(data, size);
        return 0;
}
