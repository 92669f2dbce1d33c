/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The value parsers and formatters of parse-util.c, table-driven: every case
 * states the input, the return value and the result (or that the output was
 * left untouched). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"
#include "tap.h"

#define MSEC(x) ((uint64_t) (x) * USEC_PER_MSEC)
#define SEC(x) ((uint64_t) (x) * USEC_PER_SEC)

/* ---- value parsers ---- */

struct u64_case {
        const char *in;
        int r;
        uint64_t v;
};

static void check_u64_table(int (*parse)(const char *, uint64_t *), const struct u64_case *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                uint64_t v = 0xdeadbeef;
                int r = parse(cases[i].in, &v);
                char q[128];

                print_message("# parse(\"%s\") = %d, %" PRIu64 "\n", tap_quote(cases[i].in, q, sizeof(q)), r, v);
                assert_int_equal(r, cases[i].r);
                assert_int_equal(v, cases[i].r == 0 ? cases[i].v : 0xdeadbeef);
        }
}

static void test_parse_percent_cpu(void **state) {
        static const struct u64_case cases[] = {
                { "250%", 0, 2500000 },
                { "100%", 0, 1000000 },
                { "12.5%", 0, 125000 },
                { "0.001%", 0, 10 },
                { "1.234%", 0, 12340 },
                { "007%", 0, 70000 },
                { "1000000%", 0, 10000000000 },
                { "1844674407370955%", 0, UINT64_C(18446744073709550000) },
                { "0%", -ERANGE, 0 },
                { "0.000%", -ERANGE, 0 },
                { "-5%", -ERANGE, 0 },
                { "1844674407370956%", -ERANGE, 0 },
                { "99999999999999999999999%", -ERANGE, 0 },
                { "1.2345%", -EINVAL, 0 },
                { "250", -EINVAL, 0 },
                { "%", -EINVAL, 0 },
                { "", -EINVAL, 0 },
                { NULL, -EINVAL, 0 },
                { "1.%", -EINVAL, 0 },
                { ".5%", -EINVAL, 0 },
                { "250%x", -EINVAL, 0 },
                { "250 %", -EINVAL, 0 },
                { " 250%", -EINVAL, 0 },
                { "+250%", -EINVAL, 0 },
                { "2,5%", -EINVAL, 0 },
                { "1e3%", -EINVAL, 0 },
                { "abc", -EINVAL, 0 },
        };

        check_u64_table(bw_parse_percent_cpu, cases, ELEMENTSOF(cases));
}

static void test_parse_percent_ratio(void **state) {
        static const struct u64_case cases[] = {
                { "0%", 0, 0 },
                { "5%", 0, 50000 },
                { "0.5%", 0, 5000 },
                { "40%", 0, 400000 },
                { "100%", 0, 1000000 },
                { "100.000%", 0, 1000000 },
                { "99.999%", 0, 999990 },
                { "100.001%", -ERANGE, 0 },
                { "101%", -ERANGE, 0 },
                { "-1%", -ERANGE, 0 },
                { "5", -EINVAL, 0 },
                { "5%%", -EINVAL, 0 },
                { "0.0001%", -EINVAL, 0 },
                { "", -EINVAL, 0 },
        };

        check_u64_table(bw_parse_percent_ratio, cases, ELEMENTSOF(cases));
}

static void test_parse_timespan(void **state) {
        static const struct u64_case cases[] = {
                { "1", 0, SEC(1) },
                { "0", 0, 0 },
                { "0.5", 0, MSEC(500) },
                { "1s", 0, SEC(1) },
                { "1sec", 0, SEC(1) },
                { "1.5s", 0, MSEC(1500) },
                { "1s 500ms", 0, MSEC(1500) },
                { "1s500ms", 0, MSEC(1500) },
                { "  2s  ", 0, SEC(2) },
                { "5 s", 0, SEC(5) },
                { "100ms", 0, MSEC(100) },
                { "100msec", 0, MSEC(100) },
                { "5000us", 0, 5000 },
                { "7usec", 0, 7 },
                { "2min", 0, SEC(120) },
                { "2m", 0, SEC(120) },
                { "1min 30s", 0, SEC(90) },
                { "1min30s", 0, SEC(90) },
                { "1h", 0, SEC(3600) },
                { "1hr", 0, SEC(3600) },
                { "1.25h", 0, SEC(4500) },
                { "0.0000015s", 0, 1 },  /* below 1 µs is truncated */
                { "1.9us", 0, 1 },
                { "1s 1", 0, SEC(2) },
                { "18446744073709551615us", 0, UINT64_MAX },
                { "18446744073709551616us", -ERANGE, 0 },
                { "18446744073709551615us 1us", -ERANGE, 0 },
                { "18446744073710s", -ERANGE, 0 },
                { "5124095576h", 0, UINT64_C(18446744073600000000) },
                { "5124095577h", -ERANGE, 0 },
                { "-1s", -ERANGE, 0 },
                { "1s -5ms", -ERANGE, 0 },
                { "", -EINVAL, 0 },
                { "   ", -EINVAL, 0 },
                { NULL, -EINVAL, 0 },
                { "s", -EINVAL, 0 },
                { "1x", -EINVAL, 0 },
                { "1ss", -EINVAL, 0 },
                { "1s;", -EINVAL, 0 },
                { "1s garbage", -EINVAL, 0 },
                { "1.s", -EINVAL, 0 },
                { ".5s", -EINVAL, 0 },
                { "1.5.2s", -EINVAL, 0 },
                { "1,5s", -EINVAL, 0 },
                { "1d", -EINVAL, 0 },
                { "1S", -EINVAL, 0 },
                { "+1s", -EINVAL, 0 },
                { "infinity", -EINVAL, 0 },
        };

        check_u64_table(bw_parse_timespan, cases, ELEMENTSOF(cases));
}

static void test_parse_boolean(void **state) {
        static const struct {
                const char *in;
                int r;
                bool v;
        } cases[] = {
                { "yes", 0, true }, { "YES", 0, true }, { "y", 0, true }, { "true", 0, true },
                { "True", 0, true }, { "t", 0, true }, { "on", 0, true }, { "1", 0, true },
                { "no", 0, false }, { "No", 0, false }, { "n", 0, false }, { "false", 0, false },
                { "f", 0, false }, { "off", 0, false }, { "OFF", 0, false }, { "0", 0, false },
                { "", -EINVAL, false }, { "2", -EINVAL, false }, { "yess", -EINVAL, false },
                { "ye", -EINVAL, false }, { " yes", -EINVAL, false }, { NULL, -EINVAL, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                bool v = !cases[i].v;
                int r = bw_parse_boolean(cases[i].in, &v);

                assert_int_equal(r, cases[i].r);
                if (r == 0)
                        assert_int_equal(v, cases[i].v);
                else
                        assert_int_equal(v, !cases[i].v); /* untouched */
        }
}

static void test_parse_int_range(void **state) {
        static const struct {
                const char *in;
                int64_t min, max;
                int r;
                int64_t v;
        } cases[] = {
                { "0", -1000, 1000, 0, 0 },
                { "-0", -1000, 1000, 0, 0 },
                { "1000", -1000, 1000, 0, 1000 },
                { "-1000", -1000, 1000, 0, -1000 },
                { "007", 0, 10, 0, 7 },
                { "1001", -1000, 1000, -ERANGE, 0 },
                { "-1001", -1000, 1000, -ERANGE, 0 },
                { "9223372036854775807", INT64_MIN, INT64_MAX, 0, INT64_MAX },
                { "-9223372036854775808", INT64_MIN, INT64_MAX, 0, INT64_MIN },
                { "9223372036854775808", INT64_MIN, INT64_MAX, -ERANGE, 0 },
                { "-9223372036854775809", INT64_MIN, INT64_MAX, -ERANGE, 0 },
                { "99999999999999999999999", INT64_MIN, INT64_MAX, -ERANGE, 0 },
                { "", 0, 10, -EINVAL, 0 },
                { "-", 0, 10, -EINVAL, 0 },
                { "+1", 0, 10, -EINVAL, 0 },
                { " 1", 0, 10, -EINVAL, 0 },
                { "1 ", 0, 10, -EINVAL, 0 },
                { "1x", 0, 10, -EINVAL, 0 },
                { "0x10", 0, 100, -EINVAL, 0 },
                { "1.0", 0, 10, -EINVAL, 0 },
                { NULL, 0, 10, -EINVAL, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int64_t v = 4242;
                int r = bw_parse_int_range(cases[i].in, cases[i].min, cases[i].max, &v);
                char q[128];

                print_message("# int(\"%s\") = %d\n", tap_quote(cases[i].in, q, sizeof(q)), r);
                assert_int_equal(r, cases[i].r);
                assert_true(v == (r == 0 ? cases[i].v : 4242));
        }
}

static void test_format_percent(void **state) {
        static const struct {
                uint64_t v;
                const char *out;
        } cases[] = {
                { 2500000, "250%" }, { 125000, "12.5%" }, { 10, "0.001%" }, { 1, "0.0001%" },
                { 0, "0%" }, { 12340, "1.234%" }, { 10000000000, "1000000%" },
        };
        char buf[32];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                assert_int_equal(bw_format_percent(cases[i].v, buf, sizeof(buf)), (int) strlen(cases[i].out));
                assert_string_equal(buf, cases[i].out);
        }

        strcpy(buf, "keep");
        assert_int_equal(bw_format_percent(2500000, buf, 4), -ENOBUFS);
        assert_string_equal(buf, "keep");
        assert_int_equal(bw_format_percent(2500000, buf, 5), 4);
}

static void test_parse_digits(void **state) {
        static const struct {
                const char *in;
                int r;
                uint64_t v;
                size_t consumed;
        } cases[] = {
                { "0", 0, 0, 1 },
                { "123abc", 0, 123, 3 },
                { "007.5", 0, 7, 3 },
                { "18446744073709551615", 0, UINT64_MAX, 20 },
                { "18446744073709551616", -ERANGE, 0, 0 },
                { "99999999999999999999", -ERANGE, 0, 0 },
                { "", -EINVAL, 0, 0 },
                { "abc", -EINVAL, 0, 0 },
                { "-1", -EINVAL, 0, 0 },
                { "+1", -EINVAL, 0, 0 },
                { " 1", -EINVAL, 0, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *p = cases[i].in;
                uint64_t v = 4242;
                int r = bw_parse_digits(&p, &v);
                char q[128];

                print_message("# digits(\"%s\") = %d\n", tap_quote(cases[i].in, q, sizeof(q)), r);
                assert_int_equal(r, cases[i].r);
                assert_true(v == (r == 0 ? cases[i].v : 4242));
                assert_ptr_equal(p, cases[i].in + cases[i].consumed);
        }
}

static void test_parse_cgroup_path(void **state) {
        static const struct {
                const char *in;
                int r;
                const char *out;
        } cases[] = {
                { "machine.slice/foo.scope", 0, "machine.slice/foo.scope" },
                { "/machine.slice/foo.scope", 0, "machine.slice/foo.scope" },
                { "/machine.slice/foo.scope/", 0, "machine.slice/foo.scope" },
                { "a", 0, "a" },
                { "...", 0, "..." },
                { ".a/b.", 0, ".a/b." },
                { "", -EINVAL, NULL },
                { "/", -EINVAL, NULL },
                { "//", -EINVAL, NULL },
                { "//a", -EINVAL, NULL },
                { "a//", -EINVAL, NULL },
                { "a//b", -EINVAL, NULL },
                { "a/./b", -EINVAL, NULL },
                { "a/../b", -EINVAL, NULL },
                { "..", -EINVAL, NULL },
                { "a\nb", -EINVAL, NULL },
                { "a\x7f", -EINVAL, NULL },
                { NULL, -EINVAL, NULL },
        };
        char long_path[BW_CGROUP_PATH_MAX + 2];
        char *out;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char q[128];
                int r;

                out = (char *) "untouched";
                r = bw_parse_cgroup_path(cases[i].in, &out);
                print_message("# cgroup(\"%s\") = %d\n", tap_quote(cases[i].in, q, sizeof(q)), r);
                assert_int_equal(r, cases[i].r);
                if (r == 0) {
                        assert_string_equal(out, cases[i].out);
                        free(out);
                } else
                        assert_string_equal(out, "untouched");
        }

        /* BW_CGROUP_PATH_MAX characters are fine, one more is out of range. */
        memset(long_path, 'a', sizeof(long_path) - 1);
        long_path[BW_CGROUP_PATH_MAX] = '\0';
        assert_int_equal(bw_parse_cgroup_path(long_path, &out), 0);
        assert_int_equal(strlen(out), BW_CGROUP_PATH_MAX);
        free(out);
        long_path[BW_CGROUP_PATH_MAX] = 'a';
        long_path[BW_CGROUP_PATH_MAX + 1] = '\0';
        assert_int_equal(bw_parse_cgroup_path(long_path, &out), -ERANGE);
}

static void test_string_table_lookup(void **state) {
        static const char *const table[] = { "off", NULL, "warn", "strict" };

        assert_int_equal(bw_string_table_lookup(table, ELEMENTSOF(table), "off"), 0);
        assert_int_equal(bw_string_table_lookup(table, ELEMENTSOF(table), "warn"), 2);
        assert_int_equal(bw_string_table_lookup(table, ELEMENTSOF(table), "strict"), 3);
        assert_int_equal(bw_string_table_lookup(table, 3, "strict"), -EINVAL);  /* past N */
        assert_int_equal(bw_string_table_lookup(table, ELEMENTSOF(table), "Warn"), -EINVAL);
        assert_int_equal(bw_string_table_lookup(table, ELEMENTSOF(table), ""), -EINVAL);
        assert_int_equal(bw_string_table_lookup(table, ELEMENTSOF(table), NULL), -EINVAL);
}

/* BW_DEFINE_STRING_TABLE() over a table with a hole, as config.c and
 * kmanifest.c use it. */
enum color {
        COLOR_RED,
        COLOR_UNNAMED,
        COLOR_BLUE,
        _COLOR_MAX,
        _COLOR_INVALID = -1,
};

static const char *const color_table[_COLOR_MAX] = {
        [COLOR_RED] = "red",
        [COLOR_BLUE] = "blue",
};

const char *color_to_string(enum color c);
enum color color_from_string(const char *s);
BW_DEFINE_STRING_TABLE(color, enum color, color_table, _COLOR_MAX, enum color, _COLOR_INVALID)

static void test_define_string_table(void **state) {
        assert_string_equal(color_to_string(COLOR_RED), "red");
        assert_string_equal(color_to_string(COLOR_BLUE), "blue");
        assert_null(color_to_string(COLOR_UNNAMED));
        assert_null(color_to_string(_COLOR_MAX));
        assert_null(color_to_string(_COLOR_INVALID));
        assert_int_equal(color_from_string("red"), COLOR_RED);
        assert_int_equal(color_from_string("blue"), COLOR_BLUE);
        assert_int_equal(color_from_string("Blue"), _COLOR_INVALID);
        assert_int_equal(color_from_string(""), _COLOR_INVALID);
        assert_int_equal(color_from_string(NULL), _COLOR_INVALID);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_percent_cpu),
                cmocka_unit_test(test_parse_percent_ratio),
                cmocka_unit_test(test_parse_timespan),
                cmocka_unit_test(test_parse_boolean),
                cmocka_unit_test(test_parse_int_range),
                cmocka_unit_test(test_parse_digits),
                cmocka_unit_test(test_parse_cgroup_path),
                cmocka_unit_test(test_string_table_lookup),
                cmocka_unit_test(test_define_string_table),
                cmocka_unit_test(test_format_percent),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
