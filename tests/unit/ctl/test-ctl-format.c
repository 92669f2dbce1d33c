/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl's human renderings (src/ctl/format.c) and aligned tables
 * (src/ctl/table.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/util/macro.h"
#include "format.h"
#include "table.h"

static void test_quota(void **state) {
        static const struct {
                uint64_t quota, period;
                const char *want;
        } cases[] = {
                { 50000,   100000, "0.50 CPU (50%)" },
                { 200000,  100000, "2.00 CPU (200%)" },
                { 33333,   100000, "0.33 CPU (33.3%)" },
                { 125000,  100000, "1.25 CPU (125%)" },
                { 1000,    100000, "0.01 CPU (1%)" },
                { 1000,    1000000, "0.00 CPU (0.1%)" },        /* rounds half up */
                { 5000,    1000000, "0.01 CPU (0.5%)" },
                { 99999,   100000, "1.00 CPU (100%)" },
                { 66666,   200000, "0.33 CPU (33.3%)" },
                { BW_QUOTA_MAX, 100000, "max" },
                { BW_QUOTA_MAX, 0, "max" },
                { BW_QUOTA_LIMIT_USEC, 1000000, "17592186.04 CPU (1759218604.4%)" },
        };
        char buf[FMT_MAX];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_string_equal(fmt_quota(buf, cases[i].quota, cases[i].period), cases[i].want);
        /* A period of 0 (a broken reply) must not divide by zero. */
        assert_string_equal(fmt_quota(buf, 50000, 0), "? CPU (?%)");
}

static void test_cpus(void **state) {
        char buf[FMT_MAX];

        assert_string_equal(fmt_cpus(buf, 0), "0.00 CPU");
        assert_string_equal(fmt_cpus(buf, 480000), "0.48 CPU");
        assert_string_equal(fmt_cpus(buf, 1080056), "1.08 CPU");
        assert_string_equal(fmt_cpus(buf, 4995), "0.00 CPU");
        assert_string_equal(fmt_cpus(buf, 5000), "0.01 CPU");
        assert_string_equal(fmt_cpus(buf, UINT64_MAX), "18446744073709.55 CPU");
}

static void test_span(void **state) {
        static const struct {
                uint64_t usec;
                const char *want;
        } cases[] = {
                { 0, "0ms" },
                { 1, "0ms" },                   /* 0.001 ms rounds to 0.0 */
                { 50, "0.1ms" },
                { 900, "0.9ms" },
                { 1000, "1ms" },
                { 12500, "12.5ms" },
                { 50000, "50ms" },
                { 247800, "247.8ms" },
                { 999949, "999.9ms" },
                { 999950, "1000ms" },           /* rounding may reach the next unit's size */
                { 1000000, "1s" },
                { 29900000, "29.9s" },
                { 59960000, "60s" },
                { 60000000, "1min" },
                { 125000000, "2min 5s" },
                { 3599999999, "59min 59s" },
                { 3600000000, "1h" },
                { 3780000000, "1h 3min" },
                { UINT64_C(86400000000), "24h" },
        };
        char buf[FMT_MAX];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_string_equal(fmt_span(buf, cases[i].usec), cases[i].want);
}

static void test_rate_percent(void **state) {
        char buf[FMT_MAX];

        assert_string_equal(fmt_rate(buf, 0), "0ms/s");
        assert_string_equal(fmt_rate(buf, 500), "0.5ms/s");
        assert_string_equal(fmt_rate(buf, 535506), "535.5ms/s");
        assert_string_equal(fmt_rate(buf, 10000), "10ms/s");
        assert_string_equal(fmt_percent(buf, 10000), "1%");
        assert_string_equal(fmt_percent(buf, 50000), "5%");
        assert_string_equal(fmt_percent(buf, 3000000), "300%");
        assert_string_equal(fmt_percent(buf, 10), "0.001%");
        assert_string_equal(fmt_percent(buf, 12345), "1.235%");  /* 1.2345 rounds half up */
}

static void test_span_fine_share(void **state) {
        char buf[FMT_MAX];

        assert_string_equal(fmt_span_fine(buf, 0), "0us");
        assert_string_equal(fmt_span_fine(buf, 1), "1us");
        assert_string_equal(fmt_span_fine(buf, 48), "48us");
        assert_string_equal(fmt_span_fine(buf, 999), "999us");
        assert_string_equal(fmt_span_fine(buf, 1000), "1ms");           /* from here as fmt_span() */
        assert_string_equal(fmt_span_fine(buf, 1024), "1ms");
        assert_string_equal(fmt_span_fine(buf, 4096), "4.1ms");
        assert_string_equal(fmt_span_fine(buf, 1500000), "1.5s");
        assert_string_equal(fmt_span_fine(buf, 67108864), "1min 7s");

        assert_string_equal(fmt_share(buf, 0, 0), "0%");
        assert_string_equal(fmt_share(buf, 5, 0), "0%");
        assert_string_equal(fmt_share(buf, 0, 900), "0%");
        assert_string_equal(fmt_share(buf, 123, 1000), "12.3%");
        assert_string_equal(fmt_share(buf, 250, 1000), "25%");
        assert_string_equal(fmt_share(buf, 1, 3), "33.3%");
        assert_string_equal(fmt_share(buf, 2, 3), "66.7%");           /* rounds half up */
        assert_string_equal(fmt_share(buf, 1, 2000), "0.1%");
        assert_string_equal(fmt_share(buf, 1, 2001), "0%");
        assert_string_equal(fmt_share(buf, 7, 7), "100%");
}

static char *print_table(Table *t, bool legend, bool colour) {
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);

        assert_non_null(f);
        table_print(t, f, legend, colour);
        fclose(f);
        return s;
}

static void test_table(void **state) {
        static const char *const headers[] = { "UNIT", "STATE", "N" };
        static const char *const r1[] = { "app.slice", "boosted", "5" };
        static const char *const r2[] = { "wäre.slice", NULL, "12345" };   /* UTF-8 counts as one column */
        static const char *const c1[] = { NULL, "\033[32m", NULL };
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;
        Table *t = table_new(3, headers);

        assert_non_null(t);
        table_set_right(t, 2);
        table_set_right(t, 7);          /* out of range: ignored */
        assert_int_equal(table_add_row(t, r1, c1), 0);
        assert_int_equal(table_add_row(t, r2, NULL), 0);
        assert_int_equal(table_rows(t), 2);

        a = print_table(t, true, false);
        assert_string_equal(a,
                            "UNIT        STATE        N\n"
                            "app.slice   boosted      5\n"
                            "wäre.slice  -        12345\n");
        b = print_table(t, false, false);
        assert_string_equal(b,
                            "app.slice   boosted      5\n"
                            "wäre.slice  -        12345\n");
        c = print_table(t, true, true);
        assert_string_equal(c,
                            "\033[1mUNIT\033[0m        \033[1mSTATE\033[0m        \033[1mN\033[0m\n"
                            "app.slice   \033[32mboosted\033[0m      5\n"
                            "wäre.slice  -        12345\n");
        table_free(t);
        table_free(NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_quota),
                cmocka_unit_test(test_cpus),
                cmocka_unit_test(test_span),
                cmocka_unit_test(test_rate_percent),
                cmocka_unit_test(test_span_fine_share),
                cmocka_unit_test(test_table),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
