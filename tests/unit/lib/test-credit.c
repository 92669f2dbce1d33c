/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/law/credit.h"
#include "bwgov/util/macro.h"

static void test_init(void **state) {
        struct bw_credit c;

        bw_credit_init(&c, 5000000, 7000000);
        assert_int_equal(c.credit_usec, 5000000);
        assert_int_equal(c.debt_usec, 0);
        bw_credit_init(&c, 5000000, 1000);
        assert_int_equal(c.credit_usec, 1000);
}

static void test_account(void **state) {
        static const struct {
                uint64_t credit, debt, max, earned, used;
                uint64_t want_credit, want_debt;
                const char *why;
        } cases[] = {
                { 1000, 0,    5000, 300,  100,  1200, 0,    "earn under the cap" },
                { 4900, 0,    5000, 300,  100,  5000, 0,    "capped at max, after netting" },
                { 5000, 0,    5000, 1000, 1000, 5000, 0,    "idle then busy at a full bucket: netted (the reserve "
                                                            "holds one sample's earnings for this)" },
                { 1000, 0,    5000, 100,  600,  500,  0,    "pay from the credit" },
                { 300,  0,    5000, 100,  600,  0,    200,  "pay beyond the credit: debt" },
                { 0,    200,  5000, 100,  600,  0,    700,  "more debt" },
                { 0,    700,  5000, 500,  100,  0,    300,  "earnings repay the debt first" },
                { 0,    300,  5000, 500,  100,  100,  0,    "... and the rest is credit" },
                { 8000, 0,    5000, 0,    0,    5000, 0,    "a shrunken max clamps" },
                { 0,    0,    5000, 0,    0,    0,    0,    "nothing happens" },
                { UINT64_MAX - 5, 0, UINT64_MAX, 100, 0, UINT64_MAX, 0, "saturates" },
                { 0, UINT64_MAX, 5000, 0, 10, 0, UINT64_MAX, "a debt saturates too" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_credit c = { .credit_usec = cases[i].credit, .debt_usec = cases[i].debt };

                bw_credit_account(&c, cases[i].max, cases[i].earned, cases[i].used);
                if (c.credit_usec != cases[i].want_credit || c.debt_usec != cases[i].want_debt)
                        fail_msg("case %zu (%s): credit %ju debt %ju, want %ju %ju", i, cases[i].why,
                                 (uintmax_t) c.credit_usec, (uintmax_t) c.debt_usec,
                                 (uintmax_t) cases[i].want_credit, (uintmax_t) cases[i].want_debt);
                /* Never both. */
                assert_true(c.credit_usec == 0 || c.debt_usec == 0);
        }
}

static void test_above(void **state) {
        struct bw_credit c = { .credit_usec = 1000 };

        assert_int_equal(bw_credit_above(&c, 400), 600);
        assert_int_equal(bw_credit_above(&c, 1000), 0);
        assert_int_equal(bw_credit_above(&c, 2000), 0);
        c = (struct bw_credit) { .debt_usec = 5 };
        assert_int_equal(bw_credit_above(&c, 0), 0);
}

static void test_reserve(void **state) {
        /* 2 Q + B + Qb + slack */
        assert_int_equal(bw_credit_reserve(150000, 50000, 50000, 20000), 2 * 150000 + 50000 + 50000 + 20000);
        assert_int_equal(bw_credit_reserve(UINT64_MAX / 2, 1, 1, 1), UINT64_MAX);
        /* needed = E h / P (rounded up) + R(Qb + E) */
        assert_int_equal(bw_credit_needed(100000, 100000, 50000, 50000, 20000, 1300000),
                         1300000 + bw_credit_reserve(150000, 50000, 50000, 20000));
        assert_int_equal(bw_credit_needed(1, 3, 0, 0, 0, 1), 1 + 2);    /* ceil(1/3) + 2 */
}

/* The affordable headroom is the largest E whose cost fits: E fits, E + 1
 * does not, for a sweep of balances, periods and horizons. */
static void test_affordable(void **state) {
        static const uint64_t periods[] = { 1000, 10000, 100000, 1000000 };
        static const uint64_t horizons[] = { 100000, 350000, 1300000, 5000000 };

        for (size_t pi = 0; pi < ELEMENTSOF(periods); pi++)
                for (size_t hi = 0; hi < ELEMENTSOF(horizons); hi++)
                        for (uint64_t credit = 0; credit <= 20000000; credit += 713713) {
                                uint64_t P = periods[pi], bq = P / 2, b = P / 2, slack = 20000, h = horizons[hi], e;
                                struct bw_credit c = { .credit_usec = credit };

                                e = bw_credit_affordable(&c, P, bq, b, slack, h);
                                if (e > 0)
                                        assert_true(bw_credit_needed(e, P, bq, b, slack, h) <= credit);
                                if (credit >= bw_credit_reserve(bq, b, bq, slack))
                                        assert_true(bw_credit_needed(e + 1, P, bq, b, slack, h) > credit);
                        }
        {
                struct bw_credit c = { .debt_usec = 1 };
                assert_int_equal(bw_credit_affordable(&c, 100000, 50000, 50000, 0, 1000000), 0);
        }
        /* 5 s of credit, 0.5 CPU baseline: about 1 CPU of headroom for 1.3 s */
        {
                struct bw_credit c = { .credit_usec = 5000000 };
                uint64_t e = bw_credit_affordable(&c, 100000, 50000, 50000, 20000, 1300000);

                assert_true(e >= 100000 && e < 400000);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_init),
                cmocka_unit_test(test_account),
                cmocka_unit_test(test_above),
                cmocka_unit_test(test_reserve),
                cmocka_unit_test(test_affordable),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
