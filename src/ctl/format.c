/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl's numbers as text: CPUs, durations, rates and percentages in
 * fixed-point integer arithmetic, rounded half up. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/util/macro.h"
#include "format.h"

#define USEC_PER_MINUTE   (60 * USEC_PER_SEC)
#define USEC_PER_HOUR     (60 * USEC_PER_MINUTE)
#define SEC_PER_MINUTE    60
#define MINUTE_PER_HOUR   60
/* A µs/s amount as percent: 1% of a second is 10000 µs. */
#define USEC_PER_PERCENT  (USEC_PER_SEC / 100)

/* a / b rounded half up to `decimals` decimals (0..3), as "I[.F]"; trailing
 * zeros of the fraction dropped when trim. */
static char *fixed(char *buf, size_t size, uint64_t a, uint64_t b, unsigned decimals, bool trim, const char *suffix) {
        __extension__ typedef unsigned __int128 u128;  /* a * 1000 must not overflow */
        uint64_t scale = 1, ip, fp;
        u128 v;

        for (unsigned i = 0; i < decimals; i++)
                scale *= 10;
        if (b == 0) {
                snprintf(buf, size, "?%s", suffix);
                return buf;
        }
        v = ((u128) a * scale + b / 2) / b;
        ip = (uint64_t) (v / scale);
        fp = (uint64_t) (v % scale);
        if (trim)
                while (decimals > 0 && fp % 10 == 0) {
                        fp /= 10;
                        decimals--;
                }
        if (decimals == 0)
                snprintf(buf, size, "%" PRIu64 "%s", ip, suffix);
        else
                snprintf(buf, size, "%" PRIu64 ".%0*" PRIu64 "%s", ip, (int) decimals, fp, suffix);
        return buf;
}

char *fmt_quota(char *buf, uint64_t quota_usec, uint64_t period_usec) {
        char cpus[32], pct[32];        /* 20 digits, a fraction, a suffix */

        if (quota_usec == BW_QUOTA_MAX) {
                snprintf(buf, FMT_MAX, "max");
                return buf;
        }
        fixed(cpus, sizeof cpus, quota_usec, period_usec, 2, false, " CPU");
        /* Percent of one CPU: quota / period * 100 (quotas stay far below
         * UINT64_MAX / 100: the kernel's limit is BW_QUOTA_LIMIT_USEC). */
        fixed(pct, sizeof pct, quota_usec > UINT64_MAX / 100 ? UINT64_MAX : quota_usec * 100, period_usec,
              1, true, "%");
        snprintf(buf, FMT_MAX, "%s (%s)", cpus, pct);
        return buf;
}

char *fmt_cpus(char *buf, uint64_t usec_per_sec) {
        return fixed(buf, FMT_MAX, usec_per_sec, USEC_PER_SEC, 2, false, " CPU");
}

char *fmt_span(char *buf, uint64_t usec) {
        if (usec == 0)
                snprintf(buf, FMT_MAX, "0ms");
        else if (usec < USEC_PER_SEC)
                fixed(buf, FMT_MAX, usec, USEC_PER_MSEC, 1, true, "ms");
        else if (usec < USEC_PER_MINUTE)
                fixed(buf, FMT_MAX, usec, USEC_PER_SEC, 1, true, "s");
        else if (usec < USEC_PER_HOUR && usec / USEC_PER_SEC % SEC_PER_MINUTE == 0)
                snprintf(buf, FMT_MAX, "%" PRIu64 "min", usec / USEC_PER_MINUTE);
        else if (usec < USEC_PER_HOUR)
                snprintf(buf, FMT_MAX, "%" PRIu64 "min %" PRIu64 "s", usec / USEC_PER_MINUTE,
                         usec / USEC_PER_SEC % SEC_PER_MINUTE);
        else if (usec / USEC_PER_MINUTE % MINUTE_PER_HOUR == 0)
                snprintf(buf, FMT_MAX, "%" PRIu64 "h", usec / USEC_PER_HOUR);
        else
                snprintf(buf, FMT_MAX, "%" PRIu64 "h %" PRIu64 "min", usec / USEC_PER_HOUR,
                         usec / USEC_PER_MINUTE % MINUTE_PER_HOUR);
        return buf;
}

char *fmt_span_fine(char *buf, uint64_t usec) {
        if (usec < USEC_PER_MSEC) {
                snprintf(buf, FMT_MAX, "%" PRIu64 "us", usec);
                return buf;
        }
        return fmt_span(buf, usec);
}

char *fmt_rate(char *buf, uint64_t usec_per_sec) {
        return fixed(buf, FMT_MAX, usec_per_sec, USEC_PER_MSEC, 1, true, "ms/s");
}

char *fmt_percent(char *buf, uint64_t usec_per_sec) {
        return fixed(buf, FMT_MAX, usec_per_sec, USEC_PER_PERCENT, 3, true, "%");
}

char *fmt_share(char *buf, uint64_t part, uint64_t whole) {
        if (whole == 0) {
                snprintf(buf, FMT_MAX, "0%%");
                return buf;
        }
        return fixed(buf, FMT_MAX, part > UINT64_MAX / 100 ? UINT64_MAX : part * 100, whole, 1, true, "%");
}
