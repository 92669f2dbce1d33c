/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/law/contention.h"
#include "bwgov/util/macro.h"

#define SEC   UINT64_C(1000000)
#define CPU   UINT64_C(1000000)         /* one CPU, µs/s */

/* Units with a known demand (µs/s) and weight. */
static void set_units(struct bw_contention_unit *u, size_t n, const uint64_t *demand, const uint64_t *weight) {
        memset(u, 0, n * sizeof(*u));
        for (size_t i = 0; i < n; i++) {
                u[i].has_sample = true;
                u[i].has_demand = true;
                u[i].demand_rate = demand[i];
                u[i].weight = weight ? weight[i] : 100;
        }
}

static void assert_released(const struct bw_contention_unit *u, size_t n) {
        for (size_t i = 0; i < n; i++) {
                assert_false(u[i].frozen);
                assert_int_equal(u[i].cpu_count, 0);
        }
}

static void test_observe(void **state) {
        struct bw_contention_unit u = {0};

        bw_contention_observe(&u, 1000, 0, 10 * SEC);
        assert_false(u.has_demand);
        /* 2 CPUs for 0.5 s, waiting 1 % of the time: not starved. */
        bw_contention_observe(&u, 1000 + 2 * CPU / 2, SEC / 200, 10 * SEC + SEC / 2);
        assert_true(u.has_demand);
        assert_int_equal(u.demand_rate, 2 * CPU);
        assert_false(u.starved);

        /* Frozen over the window: the demand it had stays. */
        u.frozen = true;
        bw_contention_observe(&u, 1000 + CPU + 10, SEC, 11 * SEC);
        assert_int_equal(u.demand_rate, 2 * CPU);
        assert_false(u.starved);
        u.frozen = false;
        /* A quarter of a CPU, waiting 10 % of the time: starved. */
        bw_contention_observe(&u, 1000 + CPU + 10 + CPU / 4, SEC + SEC / 10, 12 * SEC);
        assert_int_equal(u.demand_rate, CPU / 4);
        assert_true(u.starved);

        /* No time passed: nothing changes. */
        bw_contention_observe(&u, 1000 + 2 * CPU, 2 * SEC, 12 * SEC);
        assert_int_equal(u.demand_rate, CPU / 4);
        assert_true(u.starved);

        /* No pressure file: starved (wants the host). */
        bw_contention_observe(&u, 1000 + 2 * CPU, BW_CONTENTION_NO_PSI, 13 * SEC);
        assert_true(u.starved);
        bw_contention_observe(&u, 1000 + 3 * CPU, 0, 14 * SEC);
        assert_true(u.starved);         /* from unknown to known: not a rate yet */
        bw_contention_observe(&u, 1000 + 4 * CPU, 0, 15 * SEC);
        assert_false(u.starved);

        /* Usage went back (a new cgroup): no demand until the next window. */
        bw_contention_observe(&u, 5, 0, 16 * SEC);
        assert_false(u.has_demand);
        bw_contention_observe(&u, 5 + CPU, 0, 17 * SEC);
        assert_int_equal(u.demand_rate, CPU);

        bw_contention_forget(&u);
        assert_false(u.has_sample);
        assert_false(u.has_demand);
}

static void test_not_contended(void **state) {
        static const struct {
                size_t n, ncpus;
                uint64_t demand[3];
                const char *why;
        } cases[] = {
                { 1, 2, { 2 * CPU }, "one busy unit" },
                { 2, 2, { 2 * CPU, 50000 }, "the other uses 5 % of a CPU: idle" },
                { 2, 2, { CPU / 2, CPU / 2 + CPU / 5 }, "1.2 CPUs of 2: fits" },
                { 3, 4, { CPU, CPU, CPU / 2 }, "2.5 CPUs of 4: under 75 %" },
                { 0, 2, { 0 }, "no units" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                for (enum bw_contention m = 0; m < _BW_CONTENTION_MAX; m++) {
                        struct bw_contention_unit u[3];
                        struct bw_contention_state st = {0};
                        uint64_t next = 0;

                        set_units(u, cases[i].n, cases[i].demand, NULL);
                        u[0].frozen = true;             /* left over from an earlier plan */
                        u[0].cpu_count = 1;
                        assert_int_equal(bw_contention_plan(m, u, cases[i].n, cases[i].ncpus, SEC, 5 * SEC, &st,
                                                            &next), 0);
                        if (st.contended)
                                fail_msg("case %zu (%s), mode %d: contended", i, cases[i].why, m);
                        assert_released(u, cases[i].n);
                        assert_int_equal(next, 6 * SEC);
                }
}

static void test_hysteresis(void **state) {
        /* 1.2 CPUs of 2 (60 %): between the thresholds. */
        static const uint64_t d[] = { CPU, CPU / 5 };
        struct bw_contention_unit u[2];
        struct bw_contention_state st = {0};
        uint64_t next;

        set_units(u, 2, d, NULL);
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 2, 2, SEC, 0, &st, &next), 0);
        assert_false(st.contended);
        st.contended = true;
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 2, 2, SEC, 0, &st, &next), 0);
        assert_true(st.contended);
        u[0].demand_rate = 4 * CPU / 5 - 1;     /* 1 CPU less a µs: under 50 % */
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 2, 2, SEC, 0, &st, &next), 0);
        assert_false(st.contended);
        assert_released(u, 2);

        /* Two starved units contend however little they get (a host full of
         * other work); one starved unit does not. */
        u[0].starved = true;
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 2, 2, SEC, 0, &st, &next), 0);
        assert_false(st.contended);
        u[1].starved = true;
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 2, 2, SEC, 0, &st, &next), 0);
        assert_true(st.contended);
        u[1].demand_rate = BW_CONTENTION_BUSY_MIN - 1;  /* idle: one busy unit left */
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 2, 2, SEC, 0, &st, &next), 0);
        assert_false(st.contended);
}

static void test_gang_rotation(void **state) {
        /* Three units that each fill the host, and an idle one. */
        static const uint64_t d[] = { 2 * CPU, 0, 2 * CPU, 2 * CPU };
        struct bw_contention_unit u[4];
        struct bw_contention_state st = {0};
        uint64_t next, now = 100 * SEC;
        static const size_t leaders[] = { 0, 2, 3, 0, 2 };

        set_units(u, 4, d, NULL);
        u[1].has_demand = false;        /* never sampled */
        for (size_t k = 0; k < ELEMENTSOF(leaders); k++) {
                assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 4, 2, SEC / 2, now, &st, &next), 0);
                assert_true(st.contended);
                assert_int_equal(st.leader, leaders[k]);
                assert_int_equal(next, now + BW_CONTENTION_GANG_CHECK_USEC);
                for (size_t i = 0; i < 4; i++) {
                        assert_int_equal(u[i].frozen, i != leaders[k] && i != 1);
                        assert_int_equal(u[i].cpu_count, 0);
                }
                /* Planned again within the slot: the same leader. */
                assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 4, 2, SEC / 2, now + 3 * SEC / 8, &st,
                                                    &next), 0);
                assert_int_equal(st.leader, leaders[k]);
                assert_int_equal(next, now + SEC / 2);  /* the slot's end is nearer than the check */
                now += SEC / 2;
        }
}

static void test_gang_packing(void **state) {
        /* 4 CPUs: the leader wants 1, the next 4 (does not fit), the third 2
         * (fits beside the leader), the fourth 1 (fits too). */
        static const uint64_t d[] = { CPU, 4 * CPU, 2 * CPU, CPU };
        struct bw_contention_unit u[4];
        struct bw_contention_state st = {0};
        uint64_t next;

        set_units(u, 4, d, NULL);
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 4, 4, SEC, 0, &st, &next), 0);
        assert_int_equal(st.leader, 0);
        assert_false(u[0].frozen);
        assert_true(u[1].frozen);
        assert_false(u[2].frozen);
        assert_false(u[3].frozen);
        /* The second slot: unit 1 fills the host alone. */
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 4, 4, SEC, SEC, &st, &next), 0);
        assert_int_equal(st.leader, 1);
        assert_false(u[1].frozen);
        assert_true(u[0].frozen && u[2].frozen && u[3].frozen);

        /* Starved units used less than they wanted: a starved leader runs
         * alone, a starved unit fits nowhere beside another. */
        u[2].starved = true;
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 4, 4, SEC, 2 * SEC, &st, &next), 0);
        assert_int_equal(st.leader, 2);
        assert_false(u[2].frozen);
        assert_true(u[0].frozen && u[1].frozen && u[3].frozen);
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 4, 4, SEC, 3 * SEC, &st, &next), 0);
        assert_int_equal(st.leader, 3);
        assert_false(u[3].frozen);
        assert_false(u[0].frozen);      /* 1 + 1 of 4 */
        assert_true(u[1].frozen && u[2].frozen);
}

static void test_gang_leader_goes_idle(void **state) {
        static const uint64_t d[] = { 2 * CPU, 2 * CPU, 2 * CPU };
        struct bw_contention_unit u[3];
        struct bw_contention_state st = {0};
        uint64_t next;

        set_units(u, 3, d, NULL);
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 3, 2, 2 * SEC, 0, &st, &next), 0);
        assert_int_equal(st.leader, 0);
        /* The leader finished its work half-way through its slot: the next one leads at once. */
        u[0].demand_rate = 1000;
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 3, 2, 2 * SEC, SEC, &st, &next), 0);
        assert_int_equal(st.leader, 1);
        assert_int_equal(next, SEC + BW_CONTENTION_GANG_CHECK_USEC);
        assert_false(u[0].frozen);      /* idle: never frozen */
        assert_false(u[1].frozen);
        assert_true(u[2].frozen);
        /* The second one finishes too: one busy unit left, everything thawed. */
        u[1].demand_rate = 0;
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 3, 2, 2 * SEC, SEC + 1, &st, &next), 0);
        assert_false(st.contended);
        assert_released(u, 3);
        assert_int_equal(next, SEC + 1 + SEC);  /* re-planned within a second without a slot */
}

static void test_pin(void **state) {
        static const struct {
                size_t n, ncpus;
                uint64_t demand[4], weight[4];
                size_t first[4], count[4];      /* count 0: not pinned */
                const char *why;
        } cases[] = {
                { 2, 4, { 4 * CPU, 4 * CPU }, { 100, 300 }, { 0, 1 }, { 1, 3 }, "a quarter and three quarters" },
                { 2, 2, { 2 * CPU, 2 * CPU }, { 1, 10000 }, { 0, 1 }, { 1, 1 }, "at least one each" },
                { 3, 8, { CPU, 4 * CPU, 4 * CPU }, { 100, 100, 100 }, { 0, 3, 6 }, { 3, 3, 2 },
                  "8 by 3: the first remainders get the rest" },
                { 3, 4, { 2 * CPU, 0, 4 * CPU }, { 100, 100, 100 }, { 0, 0, 2 }, { 2, 0, 2 }, "the idle one is not pinned" },
                { 3, 4, { CPU, CPU, 4 * CPU }, { 1, 1, 10000 }, { 0, 1, 2 }, { 1, 1, 2 },
                  "minimums taken back from the largest" },
                /* More busy units than CPUs: heaviest first, each to the least loaded CPU. */
                { 4, 2, { CPU, CPU, CPU, CPU }, { 100, 400, 200, 100 }, { 1, 0, 1, 1 }, { 1, 1, 1, 1 },
                  "4 units on 2 CPUs" },
                { 3, 2, { CPU, CPU, CPU }, { 100, 100, 100 }, { 0, 1, 0 }, { 1, 1, 1 }, "3 equal units on 2 CPUs" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_contention_unit u[4];
                struct bw_contention_state st = {0};
                uint64_t next;

                set_units(u, cases[i].n, cases[i].demand, cases[i].weight);
                assert_int_equal(bw_contention_plan(BW_CONTENTION_PIN, u, cases[i].n, cases[i].ncpus, SEC, 0, &st,
                                                    &next), 0);
                assert_true(st.contended);
                assert_int_equal(next, SEC);
                for (size_t k = 0; k < cases[i].n; k++) {
                        assert_false(u[k].frozen);
                        if (u[k].cpu_count != cases[i].count[k] ||
                            (cases[i].count[k] > 0 && u[k].cpu_first != cases[i].first[k]))
                                fail_msg("case %zu (%s), unit %zu: CPUs %zu+%zu, expected %zu+%zu", i, cases[i].why,
                                         k, u[k].cpu_first, u[k].cpu_count, cases[i].first[k], cases[i].count[k]);
                }
        }
}

static void test_invalid(void **state) {
        struct bw_contention_unit u[1] = {{0}};
        struct bw_contention_state st = {0};
        uint64_t next;

        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 1, 0, SEC, 0, &st, &next), -EINVAL);
        assert_int_equal(bw_contention_plan(BW_CONTENTION_GANG, u, 1, 2, 0, 0, &st, &next), -EINVAL);
        assert_int_equal(bw_contention_plan(_BW_CONTENTION_MAX, u, 1, 2, SEC, 0, &st, &next), -EINVAL);
        assert_int_equal(bw_contention_plan(_BW_CONTENTION_INVALID, u, 1, 2, SEC, 0, &st, &next), -EINVAL);
        assert_int_equal(bw_contention_plan(BW_CONTENTION_PIN, NULL, 1, 2, SEC, 0, &st, &next), -EINVAL);
        assert_int_equal(bw_contention_plan(BW_CONTENTION_PIN, NULL, 0, 2, SEC, 0, &st, &next), 0);
}

/* Invariants over random demands, weights, host sizes and times: idle units
 * are never frozen or pinned; without contention nothing is; a gang slot
 * runs at least one busy unit and every busy unit runs within (busy - 1)
 * slots; pinned runs are disjoint and cover the host when they can, and
 * never leave a busy unit without a CPU. */
static void test_invariants(void **state) {
        unsigned seed = 12345;

        for (unsigned iter = 0; iter < 3000; iter++) {
                struct bw_contention_unit u[8];
                struct bw_contention_state st = {0};
                size_t n = (size_t) rand_r(&seed) % 9, ncpus = 1 + (size_t) rand_r(&seed) % 8, busy = 0;
                enum bw_contention mode = (enum bw_contention) (rand_r(&seed) % _BW_CONTENTION_MAX);
                uint64_t next, now = (uint64_t) rand_r(&seed);
                uint64_t frozen_since[8];
                bool was_frozen[8] = {false};

                memset(u, 0, sizeof u);
                for (size_t i = 0; i < n; i++) {
                        u[i].has_sample = true;
                        u[i].has_demand = rand_r(&seed) % 8 != 0;
                        u[i].demand_rate = (uint64_t) (rand_r(&seed) % 5) * CPU / 2 + (uint64_t) (rand_r(&seed) % 3);
                        u[i].weight = (uint64_t) (rand_r(&seed) % 4) * 100;
                        u[i].starved = rand_r(&seed) % 2;
                }
                for (unsigned pass = 0; pass < 40; pass++) {
                        bool cpu_used[8] = {false};
                        size_t running = 0, pinned = 0;

                        assert_int_equal(bw_contention_plan(mode, u, n, ncpus, SEC, now, &st, &next), 0);
                        assert_true(next > now);
                        busy = 0;
                        for (size_t i = 0; i < n; i++)
                                busy += u[i].busy;
                        for (size_t i = 0; i < n; i++) {
                                if (!u[i].busy)
                                        assert_false(u[i].frozen || u[i].cpu_count > 0);
                                if (!st.contended || mode == BW_CONTENTION_SHARE)
                                        assert_false(u[i].frozen || u[i].cpu_count > 0);
                                if (u[i].busy && !u[i].frozen)
                                        running++;
                                if (u[i].busy && u[i].frozen) {
                                        if (!was_frozen[i])
                                                frozen_since[i] = now;
                                        assert_true(now - frozen_since[i] < (busy - 1) * SEC);
                                }
                                was_frozen[i] = u[i].busy && u[i].frozen;
                                if (u[i].cpu_count > 0) {
                                        assert_true(u[i].cpu_first + u[i].cpu_count <= ncpus);
                                        pinned += u[i].cpu_count;
                                        for (size_t c = u[i].cpu_first; c < u[i].cpu_first + u[i].cpu_count; c++) {
                                                if (busy <= ncpus)
                                                        assert_false(cpu_used[c]);
                                                cpu_used[c] = true;
                                        }
                                }
                        }
                        if (st.contended && busy > 0)
                                assert_true(running > 0);
                        if (st.contended && mode == BW_CONTENTION_PIN)
                                assert_int_equal(pinned, busy <= ncpus ? ncpus : busy);
                        now = next;
                }
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_observe),
                cmocka_unit_test(test_not_contended),
                cmocka_unit_test(test_hysteresis),
                cmocka_unit_test(test_gang_rotation),
                cmocka_unit_test(test_gang_packing),
                cmocka_unit_test(test_gang_leader_goes_idle),
                cmocka_unit_test(test_pin),
                cmocka_unit_test(test_invalid),
                cmocka_unit_test(test_invariants),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
