/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bandwidth triple: kernel ranges, validation, and the locale-free
 * parsers and formatters of the cpu.max family of files (contracts in
 * include/bwgov/cgroup/cpumax.h). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/cgroup/cpumax.h"

/* Strip the one trailing newline the kernel prints after a value. */
static size_t strip_newline(const char *buf, size_t len) {
        if (len > 0 && buf[len - 1] == '\n')
                return len - 1;
        return len;
}

/* Digits only, at least one: no sign, no blanks, no newline. Garbage is
 * reported before overflow, so the result does not depend on where the
 * garbage sits. */
static int parse_digits(const char *buf, size_t len, uint64_t *ret) {
        uint64_t v = 0;

        if (len == 0)
                return -EINVAL;

        /* Up to 19 digits cannot overflow: one pass (every counter of
         * every sample comes this way). */
        if (len <= 19) {
                for (size_t i = 0; i < len; i++) {
                        unsigned d = (unsigned) (buf[i] - '0');

                        if (d > 9)
                                return -EINVAL;
                        v = v * 10 + d;
                }
                *ret = v;
                return 0;
        }

        for (size_t i = 0; i < len; i++)
                if (buf[i] < '0' || buf[i] > '9')
                        return -EINVAL;

        for (size_t i = 0; i < len; i++) {
                unsigned d = (unsigned) (buf[i] - '0');

                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }

        *ret = v;
        return 0;
}

/* A quota written as a number; UINT64_MAX spelled out is not "max". */
static bool quota_number_in_range(uint64_t quota_usec) {
        return quota_usec >= BW_QUOTA_MIN_USEC && quota_usec <= BW_QUOTA_LIMIT_USEC;
}

static bool quota_in_range(uint64_t quota_usec) {
        return quota_usec == BW_QUOTA_MAX || quota_number_in_range(quota_usec);
}

static bool period_in_range(uint64_t period_usec) {
        return period_usec >= BW_PERIOD_MIN_USEC && period_usec <= BW_PERIOD_MAX_USEC;
}

int bw_bandwidth_validate(const struct bw_bandwidth *bw) {
        if (!bw)
                return -EINVAL;

        if (!period_in_range(bw->period_usec) || !quota_in_range(bw->quota_usec))
                return -EINVAL;

        if (!bw->has_burst)
                return bw->burst_usec == 0 ? 0 : -EINVAL;

        if (bw->burst_usec == 0)
                return 0;

        /* Burst only means something under a finite quota; the kernel
         * bounds it by the quota and the sum by the overflow limit. */
        if (bw->quota_usec == BW_QUOTA_MAX)
                return -EINVAL;
        if (bw->burst_usec > bw->quota_usec)
                return -EINVAL;
        if (bw->burst_usec > BW_QUOTA_LIMIT_USEC - bw->quota_usec)
                return -EINVAL;

        return 0;
}

bool bw_bandwidth_identical(const struct bw_bandwidth *a, const struct bw_bandwidth *b) {
        return a->quota_usec == b->quota_usec && a->period_usec == b->period_usec &&
                a->burst_usec == b->burst_usec;
}

int bw_u64_parse(const char *buf, size_t len, uint64_t *ret) {
        if (!buf && len > 0)
                return -EINVAL;

        return parse_digits(buf, strip_newline(buf, len), ret);
}

int bw_cpumax_parse(const char *buf, size_t len, uint64_t *ret_quota_usec, uint64_t *ret_period_usec) {
        const char *sp;
        uint64_t quota_usec = BW_QUOTA_MAX, period_usec = 0;
        size_t qlen;
        bool is_max;
        int rq = 0, rp;

        if (!buf && len > 0)
                return -EINVAL;

        len = strip_newline(buf, len);
        sp = len > 0 ? memchr(buf, ' ', len) : NULL;
        if (!sp)
                return -EINVAL;
        qlen = (size_t) (sp - buf);

        is_max = qlen == 3 && memcmp(buf, "max", 3) == 0;
        if (!is_max)
                rq = parse_digits(buf, qlen, &quota_usec);
        rp = parse_digits(sp + 1, len - qlen - 1, &period_usec);

        /* Garbage anywhere wins over a number out of range. */
        if (rq == -EINVAL || rp == -EINVAL)
                return -EINVAL;
        if (rq < 0 || rp < 0)
                return -ERANGE;

        if (!is_max && !quota_number_in_range(quota_usec))
                return -ERANGE;
        if (!period_in_range(period_usec))
                return -ERANGE;

        *ret_quota_usec = quota_usec;
        *ret_period_usec = period_usec;
        return 0;
}

int bw_cfs_quota_parse(const char *buf, size_t len, uint64_t *ret_quota_usec) {
        uint64_t quota_usec;
        int r;

        if (!buf && len > 0)
                return -EINVAL;

        len = strip_newline(buf, len);

        /* The kernel prints -1 for "no limit"; it never prints another
         * negative number. */
        if (len == 2 && memcmp(buf, "-1", 2) == 0) {
                *ret_quota_usec = BW_QUOTA_MAX;
                return 0;
        }

        r = parse_digits(buf, len, &quota_usec);
        if (r < 0)
                return r;

        if (!quota_number_in_range(quota_usec))
                return -ERANGE;

        *ret_quota_usec = quota_usec;
        return 0;
}

/* Format into a scratch buffer first so that buf is untouched on failure. */
static int copy_out(const char *s, int n, char *buf, size_t size) {
        if (n < 0)
                return -EINVAL;
        if (!buf || (size_t) n >= size)
                return -ENOBUFS;

        memcpy(buf, s, (size_t) n + 1);
        return n;
}

int bw_cpumax_format(uint64_t quota_usec, uint64_t period_usec, char *buf, size_t size) {
        char tmp[64];
        int n;

        if (!quota_in_range(quota_usec) || !period_in_range(period_usec))
                return -EINVAL;

        if (quota_usec == BW_QUOTA_MAX)
                n = snprintf(tmp, sizeof(tmp), "max %" PRIu64 "\n", period_usec);
        else
                n = snprintf(tmp, sizeof(tmp), "%" PRIu64 " %" PRIu64 "\n", quota_usec, period_usec);

        return copy_out(tmp, n, buf, size);
}

const char *bw_quota_to_string(uint64_t quota_usec, char buf[static BW_QUOTA_STRING_MAX]) {
        if (quota_usec == BW_QUOTA_MAX)
                snprintf(buf, BW_QUOTA_STRING_MAX, "max");
        else
                snprintf(buf, BW_QUOTA_STRING_MAX, "%" PRIu64, quota_usec);
        return buf;
}

int bw_u64_format(uint64_t v, char *buf, size_t size) {
        char tmp[32];
        int n;

        n = snprintf(tmp, sizeof(tmp), "%" PRIu64 "\n", v);
        return copy_out(tmp, n, buf, size);
}

int bw_cfs_quota_format(uint64_t quota_usec, char *buf, size_t size) {
        char tmp[32];
        int n;

        if (!quota_in_range(quota_usec))
                return -EINVAL;

        if (quota_usec == BW_QUOTA_MAX)
                n = snprintf(tmp, sizeof(tmp), "-1\n");
        else
                n = snprintf(tmp, sizeof(tmp), "%" PRIu64 "\n", quota_usec);

        return copy_out(tmp, n, buf, size);
}
