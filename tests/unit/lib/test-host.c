/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/law/host.h"
#include "bwgov/util/macro.h"

static void test_over_limit(void **state) {
        static const struct {
                uint64_t some, other, excess, idle, limit;
                bool was_over, over;
                const char *why;
        } cases[] = {
                { 500000, 1000000, 500000, 0, 400000, false, true, "pressure over the limit, 1 CPU used by others, "
                                                                   "governed 0.5 CPU above baseline, nothing idle" },
                { 400000, 1000000, 500000, 0, 400000, false, false, "exactly at the limit is not over" },
                { 900000, 1000000, 500000, 0, 0, true, false, "limit 0: never" },
                { 900000, 10000, 500000, 0, 400000, true, false, "others use 1 % of a CPU: nobody to protect" },
                { 900000, BW_HOST_OTHER_USAGE_MIN, 500000, 0, 400000, false, true, "others use exactly the minimum" },
                { 900000, 0, 500000, 0, 400000, true, false, "nothing else runs" },
                { 100000, 2000000, 500000, 0, 400000, true, false, "pressure under the limit" },
                /* Pressure that others make among themselves, or the governed
                 * groups' own waiting, while no group is above its baseline. */
                { 900000, 1700000, 0, 0, 400000, false, false, "no governed group above its baseline" },
                { 900000, 1700000, BW_HOST_EXCESS_MIN - 1, 0, 400000, false, false, "just under the excess minimum" },
                { 900000, 1700000, BW_HOST_EXCESS_MIN, 0, 400000, false, true, "the excess minimum, nothing idle" },
                /* The headroom in use came from CPU that was idle anyway. */
                { 900000, 200000, 300000, 800000, 400000, false, false, "the excess is less than the idle CPU" },
                { 900000, 200000, 300000, 300000, 400000, false, false, "the excess equals the idle CPU" },
                { 900000, 200000, 300001, 300000, 400000, false, true, "the excess is more than the idle CPU" },
                /* Once over: the groups are back at their baselines (no
                 * excess); still over while the host stays saturated. */
                { 900000, 1000000, 0, 0, 400000, true, true, "was over, still saturated" },
                { 900000, 1000000, 0, BW_HOST_IDLE_MIN - 1, 400000, true, true, "was over, just under the idle minimum" },
                { 900000, 1000000, 0, BW_HOST_IDLE_MIN, 400000, true, false, "was over, the CPU idles now" },
                { 300000, 1000000, 0, 0, 400000, true, false, "was over, the pressure fell" },
                { 900000, 1000000, 0, 0, 400000, false, false, "not over before: saturation alone does not start it" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_host_sample hs = {
                        .some_rate = cases[i].some,
                        .other_usage_rate = cases[i].other,
                        .governed_excess_rate = cases[i].excess,
                        .idle_rate = cases[i].idle,
                };

                if (bw_host_over_limit(&hs, cases[i].was_over, cases[i].limit) != cases[i].over)
                        fail_msg("case %zu (%s): expected %s", i, cases[i].why, cases[i].over ? "over" : "not over");
        }
}

/* Where the telemetry counts how long the others wait, a brake that is off
 * needs them waiting; one that is on holds without it. */
static void test_over_limit_wait(void **state) {
        static const struct {
                uint64_t behind, excess, idle;
                bool was_over, over;
                const char *why;
        } cases[] = {
                { 800000, 500000, 0, false, true, "the groups run 0.8 s/s of CPU while others wait for it" },
                { 1500000, 500000, 0, false, true, "two CPUs, each run by the groups while others wait: above 1 s/s" },
                { 400001, 500000, 0, false, true, "the others wait behind the groups just over the limit" },
                { 400000, 500000, 0, false, false, "the others wait behind the groups exactly the limit: not over" },
                { 170000, 500000, 0, false, false, "a few daemons' wake-ups beside a build: no harm" },
                { 0, 500000, 0, false, false, "the others run at once beside a group that fills the host" },
                { 0, 500000, 0, false, false, "the others wait for each other, never for the groups' CPU" },
                { 0, 500000, 0, true, true, "on: the wait it ended does not release it" },
                { 0, 0, 0, true, true, "on, the groups at their baselines, still saturated" },
                { 0, 0, BW_HOST_IDLE_MIN, true, false, "on, and the CPU idles now" },
                { 800000, 300000, 800000, false, false, "waiting others, but the excess came from idle CPU" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_host_sample hs = {
                        .some_rate = 900000,
                        .other_usage_rate = 300000,
                        .governed_excess_rate = cases[i].excess,
                        .idle_rate = cases[i].idle,
                        .has_other_behind = true,
                        .other_behind_rate = cases[i].behind,
                };

                if (bw_host_over_limit(&hs, cases[i].was_over, 400000) != cases[i].over)
                        fail_msg("case %zu (%s): expected %s", i, cases[i].why, cases[i].over ? "over" : "not over");
                /* The usage gate still applies: nobody there, nothing to protect. */
                hs.other_usage_rate = BW_HOST_OTHER_USAGE_MIN - 1;
                if (bw_host_over_limit(&hs, cases[i].was_over, 400000))
                        fail_msg("case %zu (%s): over with others using under the minimum", i, cases[i].why);
        }
}

static void test_parse_stat(void **state) {
        /* This host's /proc/stat, first lines (USER_HZ = 100). */
        static const char real[] =
                "cpu  24915 0 6893 339230 732 0 152 25 0 0\n"
                "cpu0 11255 0 2880 171686 47 0 40 7 0 0\n";
        static const struct {
                const char *in;
                int r;
                uint64_t busy, idle;
        } cases[] = {
                { "cpu  1 2 3 4 5 6 7 8 9 10\n", 0, (1 + 2 + 3 + 6 + 7 + 8) * 10000, (4 + 5) * 10000 },
                /* no newline, no guest fields */
                { "cpu 1 2 3 4 5 6 7 8", 0, (1 + 2 + 3 + 6 + 7 + 8) * 10000, (4 + 5) * 10000 },
                { "cpu  1 2 3 4 5 6 7\n", -EINVAL, 0, 0 },                            /* steal missing */
                { "cpu0 1 2 3 4 5 6 7 8\n", -EINVAL, 0, 0 },                          /* not the aggregate line */
                { "intr 1 2 3 4 5 6 7 8\n", -EINVAL, 0, 0 },
                { "cpu  1 2 x 4 5 6 7 8\n", -EINVAL, 0, 0 },
                { "cpu  1 -2 3 4 5 6 7 8\n", -EINVAL, 0, 0 },
                { "cpu  99999999999999999999 2 3 4 5 6 7 8\n", -ERANGE, 0, 0 },
                { "cpu  1 2 3 18446744073709551615 1 6 7 8\n", -ERANGE, 0, 0 },         /* idle + iowait overflow */
                { "", -EINVAL, 0, 0 },
        };
        struct bw_host_cpu c = { 42, 43 };

        assert_int_equal(bw_host_parse_stat(real, sizeof real - 1, 100, &c), 0);
        assert_int_equal(c.busy_usec, (24915 + 0 + 6893 + 0 + 152 + 25) * UINT64_C(10000));
        assert_int_equal(c.idle_usec, (339230 + 732) * UINT64_C(10000));

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                c = (struct bw_host_cpu) { 42, 43 };
                if (bw_host_parse_stat(cases[i].in, strlen(cases[i].in), 100, &c) != cases[i].r)
                        fail_msg("case %zu \"%s\": expected %d", i, cases[i].in, cases[i].r);
                assert_int_equal(c.busy_usec, cases[i].r == 0 ? cases[i].busy : 42);
                assert_int_equal(c.idle_usec, cases[i].r == 0 ? cases[i].idle : 43);
        }
        assert_int_equal(bw_host_parse_stat(real, sizeof real - 1, 0, &c), -EINVAL);
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
                cmocka_unit_test(test_over_limit_wait),
                cmocka_unit_test(test_parse_stat),
                cmocka_unit_test(test_shed_plan),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
