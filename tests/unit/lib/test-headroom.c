/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The headroom levels and their prices: levels on the 1 ms grid, the level
 * at or below a headroom, what the credit affords with and without the
 * raise margin, where a full bucket rests and the way back to it. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/law/headroom.h"
#include "bwgov/util/macro.h"

/* Qb = 50 ms per 100 ms period, headroom up to 100 ms, burst 50 ms, slack
 * 30 ms, horizons 300 ms and 1.3 s. */
static struct bw_headroom prices(uint64_t max_usec) {
        return (struct bw_headroom) {
                .period_usec = 100000,
                .baseline_quota_usec = 50000,
                .burst_usec = 50000,
                .slack_usec = 30000,
                .fast_usec = 300000,
                .slow_usec = 1300000,
                .max_usec = max_usec,
        };
}

static void test_levels(void **state) {
        static const struct {
                uint64_t max;
                uint64_t levels[BW_HEADROOM_LEVELS + 1];
        } cases[] = {
                { 100000, { 0, 25000, 50000, 75000, 100000 } },
                { 10500,  { 0, 2000, 5000, 7000, 10000 } },     /* rounded down to the 1 ms grid */
                { 3000,   { 0, 0, 1000, 2000, 3000 } },         /* level 1 is below the grid: 0 */
                { 0,      { 0, 0, 0, 0, 0 } },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_headroom h = prices(cases[i].max);

                for (unsigned k = 0; k <= BW_HEADROOM_LEVELS; k++)
                        assert_int_equal(bw_headroom_level(&h, k), cases[i].levels[k]);
        }
        assert_int_equal(bw_headroom_quant_down(1999), 1000);
        assert_int_equal(bw_headroom_quant_down(2000), 2000);
        assert_int_equal(bw_headroom_quant_down(999), 0);
}

static void test_level_at_or_below(void **state) {
        static const struct {
                uint64_t max, extra;
                unsigned level;
        } cases[] = {
                { 100000, 0,      0 },
                { 100000, 24999,  0 },
                { 100000, 25000,  1 },
                { 100000, 74999,  2 },
                { 100000, 100000, 4 },
                { 100000, 500000, 4 },
                { 3000,   500,    0 },          /* level 1 is 0: never "at or below" */
                { 3000,   1000,   2 },
                { 0,      1000,   0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_headroom h = prices(cases[i].max);

                assert_int_equal(bw_headroom_level_at_or_below(&h, cases[i].extra), cases[i].level);
        }
}

static void test_affordable(void **state) {
        struct bw_headroom h = prices(100000);
        uint64_t need2 = bw_headroom_cost(&h, 50000, h.fast_usec);
        uint64_t need2_slow = bw_headroom_cost(&h, 50000, h.slow_usec);
        uint64_t need4_slow = bw_headroom_cost(&h, 100000, h.slow_usec);
        struct bw_credit c;

        /* The cost is bw_credit_needed() with these prices. */
        assert_int_equal(need2, bw_credit_needed(50000, 100000, 50000, 50000, 30000, 300000));
        assert_true(need2 < need2_slow);

        c = (struct bw_credit) { .credit_usec = need2 };
        assert_int_equal(bw_headroom_affordable(&h, &c, h.fast_usec, false), 2);
        c.credit_usec = need2 - 1;
        assert_int_equal(bw_headroom_affordable(&h, &c, h.fast_usec, false), 1);

        /* The raise margin asks for 5/4 of the cost. */
        c.credit_usec = need2_slow;
        assert_int_equal(bw_headroom_affordable(&h, &c, h.slow_usec, false), 2);
        assert_true(bw_headroom_affordable(&h, &c, h.slow_usec, true) < 2);
        c.credit_usec = need2_slow * 5 / 4 + 1;
        assert_true(bw_headroom_affordable(&h, &c, h.slow_usec, true) >= 2);

        /* In debt: nothing, whatever the credit would say. */
        c = (struct bw_credit) { .debt_usec = 1 };
        assert_int_equal(bw_headroom_affordable(&h, &c, h.fast_usec, false), 0);

        /* No headroom to be had: no level. */
        h = prices(0);
        c = (struct bw_credit) { .credit_usec = UINT64_MAX };
        assert_int_equal(bw_headroom_affordable(&h, &c, h.fast_usec, false), 0);

        /* Where a full bucket rests: the idle horizon with the margin. */
        h = prices(100000);
        assert_int_equal(bw_headroom_reachable(&h, need4_slow * 5 / 4 + 1), 4);
        assert_int_equal(bw_headroom_reachable(&h, need4_slow), 3);
        assert_int_equal(bw_headroom_reachable(&h, 0), 0);

        /* The way back: there, or from a level below half of it (the
         * baseline included) half of it, rounded up. */
        assert_int_equal(bw_headroom_way_back(&h, need4_slow * 5 / 4 + 1, 50000), 4);
        assert_int_equal(bw_headroom_way_back(&h, need4_slow * 5 / 4 + 1, 74999), 4);
        assert_int_equal(bw_headroom_way_back(&h, need4_slow * 5 / 4 + 1, 25000), 2);
        assert_int_equal(bw_headroom_way_back(&h, need4_slow * 5 / 4 + 1, 0), 2);
        assert_int_equal(bw_headroom_way_back(&h, need4_slow, 50000), 3);
        assert_int_equal(bw_headroom_way_back(&h, need4_slow, 25000), 2);
        assert_int_equal(bw_headroom_way_back(&h, need4_slow, 0), 2);
        assert_int_equal(bw_headroom_way_back(&h, 0, 0), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_levels),
                cmocka_unit_test(test_level_at_or_below),
                cmocka_unit_test(test_affordable),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
