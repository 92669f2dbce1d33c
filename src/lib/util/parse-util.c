/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Value parsers and formatters: time spans, percentages, booleans, integers,
 * cgroup paths and string tables (contracts in include/bwgov/util/parse-util.h).
 * Pure: locale free, no I/O. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"
#include "string-util.h"

#define BW_PERCENT_100   (100 * BW_PERCENT_UNIT)
#define PERCENT_DECIMALS 3                      /* "12.345%": the finest step is 0.001% = 10 µs/s */

int bw_parse_digits(const char **p, uint64_t *ret) {
        const char *s = *p;
        uint64_t v = 0;

        if (!ascii_isdigit(*s))
                return -EINVAL;
        for (; ascii_isdigit(*s); s++) {
                unsigned d = (unsigned) (*s - '0');

                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *p = s;
        *ret = v;
        return 0;
}

static bool is_negative_number(const char *s) {
        return s[0] == '-' && (ascii_isdigit(s[1]) || s[1] == '.');
}

/* A decimal number "W" or "W.F" at *P, without sign (a leading '-' is
 * -ERANGE, as a negative value is out of range for every caller): the whole
 * part into *RET_WHOLE, the first fraction digit into *RET_FRAC (NULL when
 * there is none; the digits run up to the new *P). */
static int parse_decimal(const char **p, uint64_t *ret_whole, const char **ret_frac) {
        const char *s = *p, *frac = NULL;
        uint64_t whole;
        int r;

        if (is_negative_number(s))
                return -ERANGE;

        r = bw_parse_digits(&s, &whole);
        if (r < 0)
                return r;
        if (*s == '.') {
                s++;
                if (!ascii_isdigit(*s))
                        return -EINVAL;
                frac = s;
                while (ascii_isdigit(*s))
                        s++;
        }

        *p = s;
        *ret_whole = whole;
        *ret_frac = frac;
        return 0;
}

/* "N%" or "N.DDD%" (at most three decimals) -> µs/s (1% = 10000). */
static int parse_percent(const char *s, uint64_t *ret) {
        const char *p = s, *digits;
        uint64_t whole, frac = 0;
        int r;

        if (!s)
                return -EINVAL;

        r = parse_decimal(&p, &whole, &digits);
        if (r < 0)
                return r;
        if (digits && p - digits > PERCENT_DECIMALS)
                return -EINVAL;
        if (p[0] != '%' || p[1] != '\0')
                return -EINVAL;

        for (size_t i = 0; i < PERCENT_DECIMALS; i++)
                frac = frac * 10 + (digits && digits + i < p ? (uint64_t) (digits[i] - '0') : 0);
        frac *= BW_PERCENT_UNIT / 1000;         /* 1000 steps of 0.001% in 1% */

        if (whole > (UINT64_MAX - frac) / BW_PERCENT_UNIT)
                return -ERANGE;

        *ret = whole * BW_PERCENT_UNIT + frac;
        return 0;
}

/* parse_percent() with a range check: -ERANGE outside [MIN, MAX]. */
static int parse_percent_range(const char *s, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t v;
        int r;

        r = parse_percent(s, &v);
        if (r < 0)
                return r;
        if (v < min || v > max)
                return -ERANGE;

        *ret = v;
        return 0;
}

int bw_parse_percent_cpu(const char *s, uint64_t *ret) {
        return parse_percent_range(s, 1, UINT64_MAX, ret);
}

int bw_parse_percent_ratio(const char *s, uint64_t *ret) {
        return parse_percent_range(s, 0, BW_PERCENT_100, ret);
}

static const struct {
        const char *suffix;
        uint64_t usec;
} time_units[] = {
        { "us",   1 },
        { "usec", 1 },
        { "ms",   USEC_PER_MSEC },
        { "msec", USEC_PER_MSEC },
        { "s",    USEC_PER_SEC },
        { "sec",  USEC_PER_SEC },
        { "m",    60 * USEC_PER_SEC },
        { "min",  60 * USEC_PER_SEC },
        { "h",    3600 * USEC_PER_SEC },
        { "hr",   3600 * USEC_PER_SEC },
};

int bw_parse_timespan(const char *s, uint64_t *ret_usec) {
        uint64_t total = 0;
        const char *p;
        int r;

        if (!s)
                return -EINVAL;

        p = skip_space(s);
        if (!*p)
                return -EINVAL;

        do {
                uint64_t whole, v, mult = USEC_PER_SEC;
                const char *frac = NULL, *unit;
                size_t unit_len;

                r = parse_decimal(&p, &whole, &frac);
                if (r < 0)
                        return r;

                p = skip_space(p);
                unit = p;
                while (ascii_isalpha(*p))
                        p++;
                unit_len = (size_t) (p - unit);
                if (unit_len > 0) {
                        size_t i;

                        for (i = 0; i < ELEMENTSOF(time_units); i++)
                                if (strlen(time_units[i].suffix) == unit_len &&
                                    memcmp(time_units[i].suffix, unit, unit_len) == 0)
                                        break;
                        if (i >= ELEMENTSOF(time_units))
                                return -EINVAL;
                        mult = time_units[i].usec;
                }

                if (whole > UINT64_MAX / mult)
                        return -ERANGE;
                v = whole * mult;

                if (frac) {
                        /* Digits below one µs are dropped (truncation). */
                        uint64_t k = mult / 10;

                        for (; ascii_isdigit(*frac) && k > 0; frac++, k /= 10) {
                                uint64_t add = (uint64_t) (*frac - '0') * k;

                                if (v > UINT64_MAX - add)
                                        return -ERANGE;
                                v += add;
                        }
                }

                if (total > UINT64_MAX - v)
                        return -ERANGE;
                total += v;

                p = skip_space(p);
        } while (*p);

        *ret_usec = total;
        return 0;
}

int bw_parse_boolean(const char *s, bool *ret) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        if (!s)
                return -EINVAL;

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (ascii_strcaseeq(s, yes[i])) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (ascii_strcaseeq(s, no[i])) {
                        *ret = false;
                        return 0;
                }
        return -EINVAL;
}

int bw_parse_int_range(const char *s, int64_t min, int64_t max, int64_t *ret) {
        const char *p = s;
        bool negative = false;
        uint64_t u;
        int64_t v;
        int r;

        if (!s)
                return -EINVAL;

        if (*p == '-') {
                negative = true;
                p++;
        }
        r = bw_parse_digits(&p, &u);
        if (r < 0)
                return r;
        if (*p)
                return -EINVAL;

        if (negative) {
                if (u > (uint64_t) INT64_MAX + 1)
                        return -ERANGE;
                v = u == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) u;
        } else {
                if (u > (uint64_t) INT64_MAX)
                        return -ERANGE;
                v = (int64_t) u;
        }
        if (v < min || v > max)
                return -ERANGE;

        *ret = v;
        return 0;
}

int bw_format_percent(uint64_t usec_per_sec, char *buf, size_t size) {
        uint64_t whole = usec_per_sec / BW_PERCENT_UNIT, frac = usec_per_sec % BW_PERCENT_UNIT;
        char tmp[64];
        int n;

        if (!buf)
                return -EINVAL;

        if (frac == 0)
                n = snprintf(tmp, sizeof(tmp), "%" PRIu64 "%%", whole);
        else {
                char digits[8];
                size_t l;

                l = (size_t) snprintf(digits, sizeof(digits), "%04" PRIu64, frac);
                while (l > 0 && digits[l - 1] == '0')
                        digits[--l] = '\0';
                n = snprintf(tmp, sizeof(tmp), "%" PRIu64 ".%s%%", whole, digits);
        }
        if (n < 0)
                return -EINVAL;
        if ((size_t) n >= size)
                return -ENOBUFS;

        memcpy(buf, tmp, (size_t) n + 1);
        return n;
}

int bw_parse_cgroup_path(const char *s, char **ret) {
        const char *p, *c;
        size_t n;
        char *t;

        if (!s)
                return -EINVAL;
        if (strlen(s) > BW_CGROUP_PATH_MAX)
                return -ERANGE;
        if (string_has_cc(s))
                return -EINVAL;

        p = s[0] == '/' ? s + 1 : s;
        n = strlen(p);
        if (n > 0 && p[n - 1] == '/')
                n--;
        if (n == 0 || p[n - 1] == '/')
                return -EINVAL;

        for (c = p; c < p + n;) {
                const char *slash = memchr(c, '/', (size_t) (p + n - c));
                size_t l = slash ? (size_t) (slash - c) : (size_t) (p + n - c);

                if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
                        return -EINVAL;
                c += l + 1;
        }

        t = strndup(p, n);
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

int bw_string_table_lookup(const char *const *table, size_t n, const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && streq(table[i], s))
                        return (int) i;
        return -EINVAL;
}
