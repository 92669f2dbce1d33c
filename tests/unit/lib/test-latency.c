/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Latency protection's pure part: the ladder, the guarantee as a weight,
 * the overcommit scaling. */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/law/latency.h"
#include "bwgov/cgroup/lever.h"
#include "bwgov/util/macro.h"

#define MS(x) ((uint64_t) (x) * 1000)

static const struct bw_lat_caps all = { .others = true, .slice = true, .best_effort = true };

static int sample(struct bw_lat_state *s, uint64_t t, uint64_t p99, const struct bw_lat_caps *c) {
        const struct bw_lat_sample x = {
                .now_usec = t * USEC_PER_SEC, .has_waits = true, .p99_usec = p99, .target_usec = MS(1),
        };

        return bw_lat_step(s, &x, c);
}

/* One rung up per missed sample, cheapest first, to the top and no further. */
static void test_climb(void **state) {
        static const enum bw_lat_level want[] = { BW_LAT_HOLD, BW_LAT_WEIGHT, BW_LAT_WEIGHT_HIGH, BW_LAT_SLICE,
                                                  BW_LAT_IDLE, BW_LAT_IDLE };
        struct bw_lat_state s = { 0 };

        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                assert_int_equal(sample(&s, i + 1, MS(3), &all), i < 5 ? 1 : 0);
                assert_int_equal(s.level, want[i]);
        }
        assert_true(s.last_missed);
        assert_int_equal(s.n_missed, 6);
        assert_int_equal(s.last_p99_usec, MS(3));
        /* More than four times the target: two rungs in one window. */
        s = (struct bw_lat_state) { 0 };
        assert_int_equal(sample(&s, 1, MS(4) + 1, &all), 1);
        assert_int_equal(s.level, BW_LAT_WEIGHT);
        assert_int_equal(sample(&s, 2, MS(4), &all), 1);
        assert_int_equal(s.level, BW_LAT_WEIGHT_HIGH);
        for (int l = 0; l < _BW_LAT_MAX; l++)
                assert_int_equal(bw_lat_level_from_string(bw_lat_level_to_string((enum bw_lat_level) l)), l);
}

/* Rungs that do not exist here are skipped both ways. */
static void test_skip(void **state) {
        const struct bw_lat_caps alone = { 0 };
        const struct bw_lat_caps no_slice = { .others = true, .best_effort = true };
        struct bw_lat_state s = { 0 };

        assert_int_equal(sample(&s, 1, MS(2), &alone), 1);
        assert_int_equal(s.level, BW_LAT_WEIGHT);       /* nobody to hold back */
        assert_int_equal(sample(&s, 2, MS(2), &alone), 1);
        assert_int_equal(s.level, BW_LAT_WEIGHT_HIGH);
        assert_int_equal(sample(&s, 3, MS(9), &alone), 0);     /* nothing above without slices or best-effort */

        s = (struct bw_lat_state) { .level = BW_LAT_WEIGHT_HIGH };
        assert_int_equal(sample(&s, 1, MS(2), &no_slice), 1);
        assert_int_equal(s.level, BW_LAT_IDLE);
        /* The best-effort unit went away: its rung too, at once. */
        assert_int_equal(sample(&s, 2, MS(2), &(struct bw_lat_caps) { .others = true }), -1);
        assert_int_equal(s.level, BW_LAT_WEIGHT_HIGH);
}

/* Down one rung after a run of samples met with margin; a sample within
 * the target but without margin (over three quarters) resets the run. */
static void test_descend_with_margin(void **state) {
        struct bw_lat_state s = { .level = BW_LAT_WEIGHT };
        uint64_t t = 1;

        for (unsigned i = 0; i < BW_LAT_HOLD_MIN - 1; i++)
                assert_int_equal(sample(&s, t++, 700, &all), 0);
        assert_int_equal(sample(&s, t++, 800, &all), 0);        /* met, no margin */
        assert_int_equal(s.met, 0);
        for (unsigned i = 0; i < BW_LAT_HOLD_MIN - 1; i++)
                assert_int_equal(sample(&s, t++, 700, &all), 0);
        assert_int_equal(sample(&s, t++, 750, &all), -1);
        assert_int_equal(s.level, BW_LAT_HOLD);
        /* No waits at all counts as met. */
        for (unsigned i = 0; i < BW_LAT_HOLD_MIN; i++)
                (void) bw_lat_step(&s, &(struct bw_lat_sample) { .now_usec = t++ * USEC_PER_SEC,
                                                                 .target_usec = MS(1) }, &all);
        assert_int_equal(s.level, BW_LAT_NONE);
        assert_int_equal(s.last_p99_usec, 0);
}

/* A step down that misses again soon doubles the run the next one needs. */
static void test_backoff(void **state) {
        struct bw_lat_state s = { .level = BW_LAT_WEIGHT };
        uint64_t t = 1;
        unsigned expect = BW_LAT_HOLD_MIN;

        for (int round = 0; round < 8; round++) {
                unsigned n = 0;

                while (s.level == BW_LAT_WEIGHT) {
                        (void) sample(&s, t++, 100, &all);
                        n++;
                }
                assert_int_equal(n, expect);
                assert_int_equal(s.level, BW_LAT_HOLD);
                assert_int_equal(sample(&s, t++, MS(3), &all), 1);     /* missed right after */
                expect = expect * 2 > BW_LAT_HOLD_MAX ? BW_LAT_HOLD_MAX : expect * 2;
                assert_int_equal(s.hold, expect);
        }
}

static int pressure(struct bw_lat_state *s, uint64_t t_ms, uint64_t demand, uint64_t own,
                    const struct bw_lat_caps *c) {
        const struct bw_lat_pressure p = { .now_usec = MS(t_ms), .demand_mcpu = demand, .own_mcpu = own, .ncpus = 2 };

        return bw_lat_pressure_step(s, &p, c);
}

/* Neighbours that fill the host: the top rung there is, from the first
 * sample, with no wait missed. */
static void test_floor_at_once(void **state) {
        const struct bw_lat_caps no_be = { .others = true, .slice = true };
        const struct bw_lat_caps bare = { 0 };
        struct bw_lat_state s = { 0 };

        assert_int_equal(pressure(&s, 50, 1000, 250, &all), 0);        /* 1.25 of 2 CPUs: not full */
        assert_int_equal(bw_lat_level_now(&s, &all), BW_LAT_NONE);
        assert_int_equal(pressure(&s, 100, 1600, 250, &all), 1);       /* 1.85 of 2: 92 % */
        assert_int_equal(bw_lat_level_now(&s, &all), BW_LAT_IDLE);
        assert_int_equal(s.level, BW_LAT_NONE);                         /* the ladder did not move */
        assert_int_equal(s.cause_mcpu, 1600);

        s = (struct bw_lat_state) { 0 };
        assert_int_equal(pressure(&s, 50, 40000, 100, &no_be), 1);
        assert_int_equal(bw_lat_level_now(&s, &no_be), BW_LAT_SLICE);
        s = (struct bw_lat_state) { 0 };
        assert_int_equal(pressure(&s, 50, 40000, 100, &bare), 1);
        assert_int_equal(bw_lat_level_now(&s, &bare), BW_LAT_WEIGHT_HIGH);
        /* The unit's own load alone is not a neighbour. */
        s = (struct bw_lat_state) { 0 };
        assert_int_equal(pressure(&s, 50, 50, 2000, &all), 0);
        assert_int_equal(bw_lat_level_now(&s, &all), BW_LAT_NONE);
}

/* A steady antagonist with dips (hackbench between two runs): no change,
 * however long it runs and however well the unit does meanwhile; gone for
 * BW_LAT_CALM_USEC: everything released at once. */
static void test_release_when_gone(void **state) {
        struct bw_lat_state s = { 0 };
        uint64_t t = 50;
        int changes = 0;

        assert_int_equal(pressure(&s, t, 30000, 250, &all), 1);
        for (unsigned i = 0; i < 2400; i++) {             /* two minutes of 50 ms samples */
                t += 50;
                /* Every second a 200 ms dip to nothing. */
                changes += pressure(&s, t, i % 20 < 4 ? 0 : 30000 + i % 7 * 1000, 250, &all) != 0;
                if (i % 20 == 19)
                        changes += sample(&s, t / 1000, 10, &all) != 0;  /* met with margin */
        }
        assert_int_equal(changes, 0);
        assert_int_equal(bw_lat_level_now(&s, &all), BW_LAT_IDLE);
        /* A tenth of the demand, but the host still 72 % busy: not gone. */
        for (unsigned i = 0; i < 200; i++)
                assert_int_equal(pressure(&s, t += 50, 1200, 250, &all), 0);
        /* Gone: released after BW_LAT_CALM_USEC, not before. */
        for (unsigned i = 0; MS(i * 50) < BW_LAT_CALM_USEC; i++)
                assert_int_equal(pressure(&s, t += 50, 100, 250, &all), 0);
        assert_int_equal(pressure(&s, t += 50, 100, 250, &all), -1);
        assert_int_equal(bw_lat_level_now(&s, &all), BW_LAT_NONE);
        assert_int_equal(s.cause_mcpu, 0);
}

/* The unit's own load keeps the host busy after the neighbour went (a
 * waking service under emulation: 1.3 of 2 CPUs with its wait): gone all
 * the same once the neighbours are down to noise; not while they are more. */
static void test_release_own_load(void **state) {
        struct bw_lat_state s = { 0 };
        uint64_t t = 50;

        assert_int_equal(pressure(&s, t, 2000, 1300, &all), 1);
        /* 0.3 CPU of neighbours and the host 80 % busy: held. */
        for (unsigned i = 0; MS(i * 50) <= 2 * BW_LAT_CALM_USEC; i++)
                assert_int_equal(pressure(&s, t += 50, 300, 1300, &all), 0);
        assert_int_equal(bw_lat_level_now(&s, &all), BW_LAT_IDLE);
        /* Neighbours at 0.05 CPU, the host still 67 % busy: released after
         * BW_LAT_CALM_USEC, not before. */
        for (unsigned i = 0; MS(i * 50) < BW_LAT_CALM_USEC; i++)
                assert_int_equal(pressure(&s, t += 50, 50, 1300, &all), 0);
        assert_int_equal(pressure(&s, t += 50, 50, 1300, &all), -1);
        assert_int_equal(bw_lat_level_now(&s, &all), BW_LAT_NONE);
        /* A busy unit on its own takes nothing. */
        for (unsigned i = 0; i < 100; i++)
                assert_int_equal(pressure(&s, t += 50, 0, 1900, &all), 0);
        assert_int_equal(bw_lat_level_now(&s, &all), BW_LAT_NONE);
}

/* A rung the ladder climbed while a neighbour ran stays while it runs (met
 * samples are met because of it) and goes with it; a rung climbed on the
 * unit's own load comes down on met samples as before. */
static void test_ladder_cause(void **state) {
        struct bw_lat_state s = { 0 };
        uint64_t t = 1;

        (void) pressure(&s, MS(1), 800, 250, &all);     /* 1.05 of 2 CPUs: no floor */
        assert_int_equal(sample(&s, t++, MS(3), &all), 1);
        assert_int_equal(sample(&s, t++, MS(3), &all), 1);
        assert_int_equal(s.level, BW_LAT_WEIGHT);
        assert_int_equal(s.cause_mcpu, 800);
        for (unsigned i = 0; i < 4 * BW_LAT_HOLD_MAX; i++) {
                assert_int_equal(pressure(&s, t * 1000, 700, 250, &all), 0);
                assert_int_equal(sample(&s, t++, 10, &all), 0);
        }
        for (unsigned i = 0; i <= BW_LAT_CALM_USEC / USEC_PER_SEC; i++)
                (void) pressure(&s, t++ * 1000, 0, 250, &all);
        assert_int_equal(bw_lat_level_now(&s, &all), BW_LAT_NONE);

        s = (struct bw_lat_state) { 0 };
        (void) pressure(&s, MS(1), 20, 900, &all);
        assert_int_equal(sample(&s, t++, MS(3), &all), 1);
        assert_int_equal(s.cause_mcpu, 0);
        for (unsigned i = 0; i < BW_LAT_HOLD_MIN; i++)
                (void) sample(&s, t++, 10, &all);
        assert_int_equal(s.level, BW_LAT_NONE);
}

static void test_guarantee_weight(void **state) {
        /* Half a CPU of a 2-CPU host against siblings of weight 100:
         * w / (w + 100) = 0.25 -> w = 34 (rounded up), never below own. */
        assert_int_equal(bw_lat_guarantee_weight(500000, 2, 100, 10), 34);
        assert_int_equal(bw_lat_guarantee_weight(500000, 2, 100, 100), 100);
        /* 1.5 of 2 CPUs against 300: 0.75 -> 900. */
        assert_int_equal(bw_lat_guarantee_weight(1500000, 2, 300, 100), 900);
        /* Bounded, and sensible at the edges. */
        assert_int_equal(bw_lat_guarantee_weight(1999999, 2, 10000, 100), BW_WEIGHT_MAX);
        assert_int_equal(bw_lat_guarantee_weight(3000000, 2, 100, 100), BW_WEIGHT_MAX);
        assert_int_equal(bw_lat_guarantee_weight(0, 2, 100, 100), 100);
        assert_int_equal(bw_lat_guarantee_weight(500000, 2, 0, 100), 100);

        assert_int_equal(bw_lat_level_weight(BW_LAT_HOLD, 100, 900), 100);
        assert_int_equal(bw_lat_level_weight(BW_LAT_WEIGHT, 100, 900), 900);
        assert_int_equal(bw_lat_level_weight(BW_LAT_WEIGHT, 100, 0), 400);
        assert_int_equal(bw_lat_level_weight(BW_LAT_WEIGHT, 5000, 0), BW_WEIGHT_MAX);
        assert_int_equal(bw_lat_level_weight(BW_LAT_WEIGHT_HIGH, 100, 900), 1600);
        assert_int_equal(bw_lat_level_weight(BW_LAT_WEIGHT_HIGH, 100, 2500), 2500);
        assert_int_equal(bw_lat_level_weight(BW_LAT_WEIGHT_HIGH, 1000, 0), BW_WEIGHT_MAX);
        assert_int_equal(bw_lat_level_weight(BW_LAT_IDLE, 100, 0), 1600);

        assert_int_equal(bw_lat_slice_usec(MS(1)), 125);
        assert_int_equal(bw_lat_slice_usec(200), 100);
        assert_int_equal(bw_lat_slice_usec(MS(100)), 3000);
}

static void test_scale(void **state) {
        const struct bw_lat_guarantee fit[] = { { 500000, 0 }, { 1000000, 0 } };
        const struct bw_lat_guarantee over[] = { { 1000000, 10 }, { 1000000, 0 }, { 400000, 5 } };
        const struct bw_lat_guarantee way_over[] = { { 4000000, 0 }, { 4000000, 0 } };
        uint64_t out[3];

        /* 1.5 CPUs of 2: within 80 %. */
        assert_int_equal(bw_lat_scale_guarantees(fit, 2, 2, out), 0);
        assert_int_equal(out[0], 500000);
        assert_int_equal(out[1], 1000000);
        /* 2.4 CPUs of 2 (cap 1.6): the lowest priority (0) to half (-0.5),
         * then priority 5 to half (-0.2), then priority 10 by the last 0.1. */
        assert_int_equal(bw_lat_scale_guarantees(over, 3, 2, out), 1);
        assert_int_equal(out[0], 900000);
        assert_int_equal(out[1], 500000);
        assert_int_equal(out[2], 200000);
        /* Halving all is not enough: then all in proportion, nobody at 0. */
        assert_int_equal(bw_lat_scale_guarantees(way_over, 2, 2, out), 1);
        assert_int_equal(out[0], 800000);
        assert_int_equal(out[1], 800000);
        assert_int_equal(bw_lat_scale_guarantees(NULL, 0, 2, NULL), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_climb),
                cmocka_unit_test(test_skip),
                cmocka_unit_test(test_descend_with_margin),
                cmocka_unit_test(test_backoff),
                cmocka_unit_test(test_floor_at_once),
                cmocka_unit_test(test_release_when_gone),
                cmocka_unit_test(test_release_own_load),
                cmocka_unit_test(test_ladder_cause),
                cmocka_unit_test(test_guarantee_weight),
                cmocka_unit_test(test_scale),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
