/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration's value parsers, each on the input up to its first
 * NUL: bw_parse_timespan(), bw_parse_percent_cpu(), bw_parse_percent_ratio()
 * with bw_format_percent(), bw_parse_boolean(), bw_parse_int_range(),
 * bw_parse_digits(), and the string tables of config.h, lever.h, rule.h
 * and latency.h.
 *
 * Properties: results are 0, -EINVAL or -ERANGE, outputs untouched on
 * failure; a time span is the same when written back in µs ("Nus") or in
 * seconds with six decimals; a percentage is a multiple of 0.001 %
 * (10 µs/s), in range, and parse(format(x)) == x, also for the input's
 * first 8 bytes as a number of µs/s rounded to that step; an integer and a
 * run of digits print back as the input without leading zeros; a name a
 * table knows is that table's spelling of the value. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/config/config.h"
#include "bwgov/law/latency.h"
#include "bwgov/cgroup/lever.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"
#include "bwgov/law/rule.h"
#include "fuzz-util.h"

#define UNTOUCHED UINT64_C(0xa5a5a5a5)

static void check_timespan(const char *s) {
        uint64_t usec = UNTOUCHED, again = 0;
        char buf[64];
        int r;

        r = bw_parse_timespan(s, &usec);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0) {
                fuzz_check(usec == UNTOUCHED);
                return;
        }
        snprintf(buf, sizeof(buf), "%" PRIu64 "us", usec);
        fuzz_check(bw_parse_timespan(buf, &again) == 0 && again == usec);
        snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64 "s", usec / 1000000, usec % 1000000);
        fuzz_check(bw_parse_timespan(buf, &again) == 0 && again == usec);
}

/* parse(format(v)) == v for a percentage. */
static void percent_round_trip(uint64_t v) {
        char buf[64];
        uint64_t again = 0;
        int n;

        n = bw_format_percent(v, buf, sizeof(buf));
        fuzz_check(n > 0 && (size_t) n == strlen(buf) && buf[n - 1] == '%');
        if (v > 0)
                fuzz_check(bw_parse_percent_cpu(buf, &again) == 0 && again == v);
        if (v <= 100 * BW_PERCENT_UNIT)
                fuzz_check(bw_parse_percent_ratio(buf, &again) == 0 && again == v);
        fuzz_check(bw_format_percent(v, buf, (size_t) n) == -ENOBUFS);
}

static void check_percent(const char *s, struct fuzz_bytes *b) {
        uint64_t v = UNTOUCHED;
        int r;

        r = bw_parse_percent_cpu(s, &v);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0)
                fuzz_check(v == UNTOUCHED);
        else {
                fuzz_check(v > 0 && v % 10 == 0);
                percent_round_trip(v);
        }

        v = UNTOUCHED;
        r = bw_parse_percent_ratio(s, &v);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0)
                fuzz_check(v == UNTOUCHED);
        else {
                fuzz_check(v <= 100 * BW_PERCENT_UNIT && v % 10 == 0);
                percent_round_trip(v);
        }

        v = fuzz_take_u64(b);
        percent_round_trip(v - v % 10);
}

static void check_integers(const char *s) {
        int64_t i = 7, again = 0;
        uint64_t u = 7;
        const char *p = s;
        char buf[32];
        int r;

        r = bw_parse_int_range(s, BW_PRIORITY_MIN, BW_PRIORITY_MAX, &i);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        fuzz_check(r == 0 ? i >= BW_PRIORITY_MIN && i <= BW_PRIORITY_MAX : i == 7);

        r = bw_parse_int_range(s, INT64_MIN, INT64_MAX, &i);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r == 0) {
                snprintf(buf, sizeof(buf), "%" PRIi64, i);
                fuzz_check(bw_parse_int_range(buf, INT64_MIN, INT64_MAX, &again) == 0 && again == i);
        }

        r = bw_parse_digits(&p, &u);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0) {
                fuzz_check(p == s && u == 7);
                return;
        }
        fuzz_check(p > s && strspn(s, "0123456789") == (size_t) (p - s));
        snprintf(buf, sizeof(buf), "%" PRIu64, u);
        s += strspn(s, "0");
        fuzz_check(s == p ? u == 0 : strlen(buf) == (size_t) (p - s) && memcmp(buf, s, (size_t) (p - s)) == 0);
}

static void check_boolean(const char *s) {
        bool v = false;
        int r;

        r = bw_parse_boolean(s, &v);
        fuzz_check(r == 0 || r == -EINVAL);
        if (r == 0)
                fuzz_check(strlen(s) >= 1 && strlen(s) <= 5);
}

/* A name the table knows is the table's spelling of that value. */
#define CHECK_TABLE(prefix, s)                                                  \
        do {                                                                    \
                int _v = (int) prefix##_from_string(s);                         \
                                                                                \
                if (_v >= 0)                                                    \
                        fuzz_check(strcmp(prefix##_to_string(_v), (s)) == 0);   \
        } while (0)

static void check_tables(const char *s) {
        CHECK_TABLE(bw_mode, s);
        CHECK_TABLE(bw_kernel_check, s);
        CHECK_TABLE(bw_class, s);
        CHECK_TABLE(bw_contention, s);
        CHECK_TABLE(bw_lever, s);
        CHECK_TABLE(bw_rule, s);
        CHECK_TABLE(bw_lat_level, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = fuzz_strndup(data, size);
        struct fuzz_bytes b = { data, size };

        check_timespan(s);
        check_percent(s, &b);
        check_integers(s);
        check_boolean(s);
        check_tables(s);
        return 0;
}
