/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/host.h"
#include "bwgov/macro.h"

static void test_over_limit(void **state) {
        static const struct {
                uint64_t some, other, limit;
                bool over;
                const char *why;
        } cases[] = {
                { 500000, 1000000, 400000, true,  "pressure over the limit, 1 CPU used by others" },
                { 400000, 1000000, 400000, false, "exactly at the limit is not over" },
                { 900000, 1000000, 0,      false, "limit 0: never" },
                { 900000, 10000,   400000, false, "others use 1 % of a CPU: nobody to protect" },
                { 900000, BW_HOST_OTHER_USAGE_MIN, 400000, true, "others use exactly the minimum" },
                { 900000, 0,       400000, false, "nothing else runs" },
                { 100000, 2000000, 400000, false, "pressure under the limit" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (bw_host_over_limit(cases[i].some, cases[i].other, cases[i].limit) != cases[i].over)
                        fail_msg("case %zu (%s): expected %s", i, cases[i].why, cases[i].over ? "over" : "not over");
}

static void test_parse_stat(void **state) {
        /* This host's /proc/stat, first lines (USER_HZ = 100). */
        static const char real[] =
                "cpu  24915 0 6893 339230 732 0 152 25 0 0\n"
                "cpu0 11255 0 2880 171686 47 0 40 7 0 0\n";
        static const struct {
                const char *in;
                int r;
                uint64_t busy;
        } cases[] = {
                { "cpu  1 2 3 4 5 6 7 8 9 10\n", 0, (1 + 2 + 3 + 6 + 7 + 8) * 10000 },
                { "cpu 1 2 3 4 5 6 7 8", 0, (1 + 2 + 3 + 6 + 7 + 8) * 10000 },      /* no newline, no guest fields */
                { "cpu  1 2 3 4 5 6 7\n", -EINVAL, 0 },                               /* steal missing */
                { "cpu0 1 2 3 4 5 6 7 8\n", -EINVAL, 0 },                             /* not the aggregate line */
                { "intr 1 2 3 4 5 6 7 8\n", -EINVAL, 0 },
                { "cpu  1 2 x 4 5 6 7 8\n", -EINVAL, 0 },
                { "cpu  1 -2 3 4 5 6 7 8\n", -EINVAL, 0 },
                { "cpu  99999999999999999999 2 3 4 5 6 7 8\n", -ERANGE, 0 },
                { "", -EINVAL, 0 },
        };
        uint64_t busy = 42;

        assert_int_equal(bw_host_parse_stat(real, sizeof real - 1, 100, &busy), 0);
        assert_int_equal(busy, (24915 + 0 + 6893 + 0 + 152 + 25) * UINT64_C(10000));

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                busy = 42;
                if (bw_host_parse_stat(cases[i].in, strlen(cases[i].in), 100, &busy) != cases[i].r)
                        fail_msg("case %zu \"%s\": expected %d", i, cases[i].in, cases[i].r);
                assert_int_equal(busy, cases[i].r == 0 ? cases[i].busy : 42);
        }
        assert_int_equal(bw_host_parse_stat(real, sizeof real - 1, 0, &busy), -EINVAL);
}

static void test_shed_plan(void **state) {
        struct bw_shed_unit units[] = {
                { .priority = 10,  .boost_rate = 400000 },
                { .priority = -5,  .boost_rate = 200000 },
                { .priority = 0,   .boost_rate = 200000 },
                { .priority = -5,  .boost_rate = 600000 },
                { .priority = -50, .boost_rate = 0 },
        };
        unsigned shed[ELEMENTSOF(units)], prev[ELEMENTSOF(units)] = { 0 };
        const uint64_t limit = 400000;

        assert_int_equal(bw_host_plan_shed(NULL, 0, 0, 0, NULL), 0);
        assert_int_equal(bw_host_plan_shed(NULL, 1, 0, 0, shed), -EINVAL);

        /* under the limit, or limit 0: nothing */
        assert_int_equal(bw_host_plan_shed(units, ELEMENTSOF(units), limit, limit, shed), 0);
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                assert_int_equal(shed[i], 0);
        assert_int_equal(bw_host_plan_shed(units, ELEMENTSOF(units), 900000, 0, shed), 0);
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                assert_int_equal(shed[i], 0);

        /* a small excess: 5 % of 1.4 CPU of boosts = 70000, from priority -5 only,
         * shared in proportion: 70000 / 800000 -> 88 permille each */
        assert_int_equal(bw_host_plan_shed(units, ELEMENTSOF(units), 420000, limit, shed), 0);
        assert_int_equal(shed[1], 88);
        assert_int_equal(shed[3], 88);
        assert_int_equal(shed[0], 0);
        assert_int_equal(shed[2], 0);
        assert_int_equal(shed[4], 0);

        /* a large excess: at most half of everything, lowest first */
        assert_int_equal(bw_host_plan_shed(units, ELEMENTSOF(units), 4000000, limit, shed), 0);
        assert_int_equal(shed[1], 500);
        assert_int_equal(shed[3], 500);
        assert_int_equal(shed[2], 500);
        assert_int_equal(shed[0], 500);
        assert_int_equal(shed[4], 0);

        /* monotone in the excess, lowest priority never behind a higher one, partial */
        for (uint64_t p = limit; p <= 1200000; p += 5000) {
                assert_int_equal(bw_host_plan_shed(units, ELEMENTSOF(units), p, limit, shed), 0);
                for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                        assert_true(shed[i] >= prev[i]);
                        assert_true(shed[i] <= 500);
                        prev[i] = shed[i];
                }
                assert_true(shed[1] >= shed[2] && shed[2] >= shed[0]);
                assert_int_equal(shed[1], shed[3]);
                assert_int_equal(shed[4], 0);
        }
        /* at 1.2 CPU pressure vs 0.4 limit the lower levels are at half, the top partly */
        assert_int_equal(shed[1], 500);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_over_limit),
                cmocka_unit_test(test_parse_stat),
                cmocka_unit_test(test_shed_plan),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
