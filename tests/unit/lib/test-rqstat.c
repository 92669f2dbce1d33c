/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Run-queue figures (src/lib/telemetry/rqstat.c): bucket ranges, quantiles, deltas,
 * per-CPU sums, the outside waits behind governed work on another CPU and
 * the LatencyFigures JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/util/macro.h"
#include "bwgov/telemetry/rqstat.h"

/* bw_rq_any(): every counter counts, the scratch fields do not. */
static void test_any(void **state) {
        struct bw_rq_counters c = { .pending_since_ns = 5, .pending_clock_ns = 7 };

        assert_false(bw_rq_any(&c));
        c.wait_slots[BW_RQ_SLOTS - 1] = 1;
        assert_true(bw_rq_any(&c));
        c = (struct bw_rq_counters) { .throttle_slots[3] = 1 };
        assert_true(bw_rq_any(&c));
        c = (struct bw_rq_counters) { .throttles = 1 };
        assert_true(bw_rq_any(&c));
        c = (struct bw_rq_counters) { .throttled_wait_ns = 1 };
        assert_true(bw_rq_any(&c));
}

static void test_slot_range(void **state) {
        static const struct {
                unsigned slot;
                uint64_t lo, hi;
        } cases[] = {
                { 0, 0, 2 },
                { 1, 2, 4 },
                { 2, 4, 8 },
                { 10, 1024, 2048 },
                { 25, UINT64_C(33554432), UINT64_C(67108864) },
                { 26, UINT64_C(67108864), UINT64_MAX },         /* the last: everything longer */
                { 27, UINT64_C(67108864), UINT64_MAX },         /* beyond: as the last */
                { 1000, UINT64_C(67108864), UINT64_MAX },
        };
        uint64_t lo, hi, prev_hi = 0;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                bw_rq_slot_range(cases[i].slot, &lo, &hi);
                assert_int_equal(lo, cases[i].lo);
                assert_true(hi == cases[i].hi);
        }
        /* The buckets tile [0, ∞) without gap or overlap. */
        for (unsigned s = 0; s < BW_RQ_SLOTS; s++) {
                bw_rq_slot_range(s, &lo, &hi);
                assert_int_equal(lo, prev_hi);
                assert_true(hi > lo);
                prev_hi = hi;
        }
        assert_true(prev_hi == UINT64_MAX);
}

static void test_quantile_empty_and_bounds(void **state) {
        uint64_t slots[BW_RQ_SLOTS] = {0}, r = 12345;

        assert_int_equal(bw_rq_quantile_usec(slots, 0, BW_RQ_P50, &r), -ENODATA);
        assert_int_equal(bw_rq_quantile_usec(slots, 5000, 10000, &r), -ENODATA);
        assert_int_equal(r, 12345);                     /* untouched on failure */

        slots[4] = 3;
        assert_int_equal(bw_rq_quantile_usec(slots, 0, 0, &r), -EINVAL);
        assert_int_equal(bw_rq_quantile_usec(slots, 0, 10001, &r), -EINVAL);
        assert_int_equal(bw_rq_quantile_usec(slots, 0, UINT32_MAX, &r), -EINVAL);
        assert_int_equal(r, 12345);
        slots[4] = 0;
        assert_int_equal(bw_rq_quantile_usec(slots, 0, 0, &r), -EINVAL);      /* q before emptiness */

        /* q = 1 and q = 10000 are valid: the lowest and the highest bucket. */
        slots[2] = 1;
        slots[9] = 1;
        assert_int_equal(bw_rq_quantile_usec(slots, 0, 1, &r), 0);
        assert_int_equal(r, 8);
        assert_int_equal(bw_rq_quantile_usec(slots, 0, 10000, &r), 0);
        assert_int_equal(r, 1024);
        assert_int_equal(bw_rq_quantile_usec(slots, 0, 5000, &r), 0);        /* 1 of 2 is half */
        assert_int_equal(r, 8);
        assert_int_equal(bw_rq_quantile_usec(slots, 0, 5001, &r), 0);
        assert_int_equal(r, 1024);
}

/* Interpolated inside the bucket: for a target between a bucket's ends. */
static void test_quantile_interp(void **state) {
        uint64_t slots[BW_RQ_SLOTS] = {0}, r = 7;

        assert_int_equal(bw_rq_quantile_interp_usec(slots, 0, BW_RQ_P99, &r), -ENODATA);
        assert_int_equal(r, 7);
        slots[9] = 100;                                 /* [512, 1024) µs */
        assert_int_equal(bw_rq_quantile_interp_usec(slots, 0, BW_RQ_P50, &r), 0);
        assert_int_equal(r, 768);
        assert_int_equal(bw_rq_quantile_interp_usec(slots, 0, BW_RQ_P99, &r), 0);
        assert_int_equal(r, 1018);                      /* 512 + 512 x 0.99, rounded down */
        assert_int_equal(bw_rq_quantile_interp_usec(slots, 700000, BW_RQ_P99, &r), 0);
        assert_int_equal(r, 700);                       /* never above the max */
        /* 990 waits of [0, 2) µs and 10 of [512, 1024): p99 is the top of
         * the first bucket, p99.9 90 % into the other. */
        slots[0] = 990;
        slots[9] = 10;
        assert_int_equal(bw_rq_quantile_interp_usec(slots, 0, BW_RQ_P99, &r), 0);
        assert_int_equal(r, 2);
        assert_int_equal(bw_rq_quantile_interp_usec(slots, 0, BW_RQ_P999, &r), 0);
        assert_int_equal(r, 972);
        /* The upper bound would say 1024: the interpolation never exceeds it. */
        assert_int_equal(bw_rq_quantile_usec(slots, 0, BW_RQ_P999, &r), 0);
        assert_int_equal(r, 1024);
}

static void test_quantile_single_bucket(void **state) {
        static const unsigned qs[] = { 1, BW_RQ_P50, BW_RQ_P90, BW_RQ_P99, BW_RQ_P999, 10000 };
        uint64_t slots[BW_RQ_SLOTS] = {0}, r;

        slots[5] = 10;                                  /* [32, 64) µs */
        for (size_t i = 0; i < ELEMENTSOF(qs); i++) {
                assert_int_equal(bw_rq_quantile_usec(slots, 0, qs[i], &r), 0);
                assert_int_equal(r, 64);
                /* A max inside the bucket caps every quantile, in whole µs. */
                assert_int_equal(bw_rq_quantile_usec(slots, 40999, qs[i], &r), 0);
                assert_int_equal(r, 40);
                /* A max above the bucket (inconsistent counters) does not raise it. */
                assert_int_equal(bw_rq_quantile_usec(slots, 100000, qs[i], &r), 0);
                assert_int_equal(r, 64);
        }
        /* Slot 0: [0, 2) µs. */
        memset(slots, 0, sizeof slots);
        slots[0] = 7;
        assert_int_equal(bw_rq_quantile_usec(slots, 0, BW_RQ_P99, &r), 0);
        assert_int_equal(r, 2);
        assert_int_equal(bw_rq_quantile_usec(slots, 1500, BW_RQ_P99, &r), 0);
        assert_int_equal(r, 1);
}

static void test_quantile_last_bucket(void **state) {
        uint64_t slots[BW_RQ_SLOTS] = {0}, r;

        slots[BW_RQ_SLOTS - 1] = 1;
        /* No max: the bucket has no upper end. */
        assert_int_equal(bw_rq_quantile_usec(slots, 0, BW_RQ_P50, &r), 0);
        assert_true(r == UINT64_MAX);
        /* 100 s: the max is the bound. */
        assert_int_equal(bw_rq_quantile_usec(slots, UINT64_C(100000000000), BW_RQ_P50, &r), 0);
        assert_int_equal(r, UINT64_C(100000000));
}

/* 1000 samples: the p99.9 is the 999th, p99 the 990th, p50 the 500th. */
static void test_quantile_1000(void **state) {
        static const struct {
                unsigned slot[3];
                uint64_t count[3];
                uint64_t max_ns;
                uint64_t p50, p90, p99, p999, p100;
        } cases[] = {
                /* 998 in [8, 16), one in [32, 64), one in [4096, 8192): p99.9 in the middle one. */
                { { 3, 5, 12 }, { 998, 1, 1 }, 5000000, 16, 16, 16, 64, 5000 },
                /* 999 in [8, 16): the 999th is still there. */
                { { 3, 12, 12 }, { 999, 1, 0 }, 5000000, 16, 16, 16, 16, 5000 },
                /* 990 in [4, 8), 9 in [16, 32), one at 1.5 s. */
                { { 2, 4, 20 }, { 990, 9, 1 }, 1500000000, 8, 8, 8, 32, 1500000 },
                /* 500 / 400 / 100: p50 in the first, p90 in the second, p99 in the third. */
                { { 0, 1, 6 }, { 500, 400, 100 }, 0, 2, 4, 128, 128, 128 },
                /* 499 in the first: p50 moves to the second. */
                { { 0, 1, 6 }, { 499, 401, 100 }, 0, 4, 4, 128, 128, 128 },
        };

        for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
                uint64_t slots[BW_RQ_SLOTS] = {0}, r;

                for (size_t k = 0; k < 3; k++)
                        slots[cases[c].slot[k]] += cases[c].count[k];
                assert_int_equal(bw_rq_quantile_usec(slots, cases[c].max_ns, BW_RQ_P50, &r), 0);
                assert_int_equal(r, cases[c].p50);
                assert_int_equal(bw_rq_quantile_usec(slots, cases[c].max_ns, BW_RQ_P90, &r), 0);
                assert_int_equal(r, cases[c].p90);
                assert_int_equal(bw_rq_quantile_usec(slots, cases[c].max_ns, BW_RQ_P99, &r), 0);
                assert_int_equal(r, cases[c].p99);
                assert_int_equal(bw_rq_quantile_usec(slots, cases[c].max_ns, BW_RQ_P999, &r), 0);
                assert_int_equal(r, cases[c].p999);
                assert_int_equal(bw_rq_quantile_usec(slots, cases[c].max_ns, 10000, &r), 0);
                assert_int_equal(r, cases[c].p100);
        }
}

/* Counters with every field set to something distinct from `base`. */
static struct bw_rq_counters sample(uint64_t base) {
        struct bw_rq_counters c = {
                .wakeups = base + 1,
                .preemptions = base + 2,
                .wait_ns = base + 3,
                .wait_max_ns = base + 4,
                .throttled_wait_ns = base + 5,
                .throttled_waits = base + 6,
                .migrated_waits = base + 7,
                .throttles = base + 8,
                .throttle_ns = base + 9,
                .pending_since_ns = base + 10,
                .pending_clock_ns = base + 11,
        };

        for (unsigned i = 0; i < BW_RQ_SLOTS; i++) {
                c.wait_slots[i] = base + 100 + i;
                c.throttle_slots[i] = base + 200 + i;
        }
        return c;
}

static void test_add(void **state) {
        struct bw_rq_counters acc = {0}, a = sample(1000), b = sample(50000);

        b.wait_max_ns = 7;                              /* below a's: the max stays a's */
        bw_rq_add(&acc, &a);
        bw_rq_add(&acc, &b);
        assert_int_equal(acc.wakeups, 1001 + 50001);
        assert_int_equal(acc.preemptions, 1002 + 50002);
        assert_int_equal(acc.wait_ns, 1003 + 50003);
        assert_int_equal(acc.wait_max_ns, 1004);
        assert_int_equal(acc.throttled_wait_ns, 1005 + 50005);
        assert_int_equal(acc.throttled_waits, 1006 + 50006);
        assert_int_equal(acc.migrated_waits, 1007 + 50007);
        assert_int_equal(acc.throttles, 1008 + 50008);
        assert_int_equal(acc.throttle_ns, 1009 + 50009);
        assert_int_equal(acc.pending_since_ns, 0);      /* scratch, not data */
        assert_int_equal(acc.pending_clock_ns, 0);
        for (unsigned i = 0; i < BW_RQ_SLOTS; i++) {
                assert_int_equal(acc.wait_slots[i], 1100 + 50100 + 2 * i);
                assert_int_equal(acc.throttle_slots[i], 1200 + 50200 + 2 * i);
        }
        assert_int_equal(bw_rq_waits(&acc), (1100 + 50100) * BW_RQ_SLOTS + BW_RQ_SLOTS * (BW_RQ_SLOTS - 1));

        /* A larger max wins; an accumulator with scratch in it is cleaned. */
        b.wait_max_ns = 999999;
        acc.pending_since_ns = 5;
        bw_rq_add(&acc, &b);
        assert_int_equal(acc.wait_max_ns, 999999);
        assert_int_equal(acc.pending_since_ns, 0);
}

static void test_delta(void **state) {
        struct bw_rq_counters before = sample(1000), now = sample(1000), d;

        /* 3 waits in [16, 32) µs, the max grew to 30 µs. */
        now.wait_slots[4] += 3;
        now.wakeups += 2;
        now.preemptions += 1;
        now.wait_ns += 70000;
        now.wait_max_ns = 30000;
        now.throttled_wait_ns += 20000;
        now.throttled_waits += 1;
        now.migrated_waits += 1;
        now.throttle_slots[7] += 2;
        now.throttles += 2;
        now.throttle_ns += 300000;
        now.pending_since_ns = 424242;

        assert_int_equal(bw_rq_delta(&now, &before, &d), 0);
        assert_int_equal(bw_rq_waits(&d), 3);
        assert_int_equal(d.wait_slots[4], 3);
        assert_int_equal(d.wakeups, 2);
        assert_int_equal(d.preemptions, 1);
        assert_int_equal(d.wait_ns, 70000);
        assert_int_equal(d.wait_max_ns, 30000);         /* grew: now's */
        assert_int_equal(d.throttled_wait_ns, 20000);
        assert_int_equal(d.throttled_waits, 1);
        assert_int_equal(d.migrated_waits, 1);
        assert_int_equal(d.throttle_slots[7], 2);
        assert_int_equal(d.throttles, 2);
        assert_int_equal(d.throttle_ns, 300000);
        assert_int_equal(d.pending_since_ns, 0);
        assert_int_equal(d.pending_clock_ns, 0);
        for (unsigned i = 0; i < BW_RQ_SLOTS; i++) {
                assert_int_equal(d.wait_slots[i], i == 4 ? 3 : 0);
                assert_int_equal(d.throttle_slots[i], i == 7 ? 2 : 0);
        }

        /* The max did not grow: the end of the highest bucket, 32 µs... */
        before = now;
        now.wait_max_ns = before.wait_max_ns = 5000000;
        now.wait_slots[4] += 1;
        now.wait_slots[2] += 1;
        assert_int_equal(bw_rq_delta(&now, &before, &d), 0);
        assert_int_equal(d.wait_max_ns, 32000);
        /* ...but not above the max of all time. */
        now.wait_max_ns = before.wait_max_ns = 20000;
        assert_int_equal(bw_rq_delta(&now, &before, &d), 0);
        assert_int_equal(d.wait_max_ns, 20000);
        /* The last bucket has no end: the max of all time. */
        now.wait_slots[BW_RQ_SLOTS - 1] += 1;
        now.wait_max_ns = before.wait_max_ns = UINT64_C(90000000000);
        assert_int_equal(bw_rq_delta(&now, &before, &d), 0);
        assert_true(d.wait_max_ns == UINT64_C(90000000000));
        /* No wait in the interval: 0. */
        assert_int_equal(bw_rq_delta(&before, &before, &d), 0);
        assert_int_equal(bw_rq_waits(&d), 0);
        assert_int_equal(d.wait_max_ns, 0);
        assert_int_equal(d.wakeups, 0);
}

static void test_delta_reset(void **state) {
        static const size_t fields[] = {
                offsetof(struct bw_rq_counters, wakeups),
                offsetof(struct bw_rq_counters, preemptions),
                offsetof(struct bw_rq_counters, wait_ns),
                offsetof(struct bw_rq_counters, wait_max_ns),
                offsetof(struct bw_rq_counters, throttled_wait_ns),
                offsetof(struct bw_rq_counters, throttled_waits),
                offsetof(struct bw_rq_counters, migrated_waits),
                offsetof(struct bw_rq_counters, throttles),
                offsetof(struct bw_rq_counters, throttle_ns),
                offsetof(struct bw_rq_counters, wait_slots[0]),
                offsetof(struct bw_rq_counters, wait_slots[BW_RQ_SLOTS - 1]),
                offsetof(struct bw_rq_counters, throttle_slots[13]),
        };
        const struct bw_rq_counters before = sample(1000);

        /* Any one counter that went down is a reset: the delta is now. */
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                struct bw_rq_counters now = sample(5000), d;

                *(uint64_t *) ((char *) &now + fields[i]) = 3;
                assert_int_equal(bw_rq_delta(&now, &before, &d), 1);
                now.pending_since_ns = now.pending_clock_ns = 0;
                assert_memory_equal(&d, &now, sizeof d);
        }

        /* The scratch fields going down is no reset. */
        {
                struct bw_rq_counters now = before, d;

                now.pending_since_ns = 0;
                now.pending_clock_ns = 0;
                assert_int_equal(bw_rq_delta(&now, &before, &d), 0);
                assert_int_equal(bw_rq_waits(&d), 0);
        }
}

/* The outside waits behind governed work on another CPU: per CPU what
 * ran or waited apart from the other (not behind), the smaller sum. */
static void test_others_cross(void **state) {
        /* ns over one reading interval, per CPU: governed, waiting, behind. */
        static const struct {
                uint64_t g[2], w[2], b[2], cross;
                const char *why;
        } cases[] = {
                { { 250, 0 }, { 0, 250 }, { 0, 0 }, 250,
                  "the group's threads on CPU 0, the outside tasks queued on CPU 1" },
                { { 250, 250 }, { 250, 250 }, { 250, 250 }, 0, "every wait behind the group on its own CPU" },
                { { 0, 0 }, { 250, 250 }, { 0, 0 }, 0, "outside tasks wait for each other, nothing governed ran" },
                { { 250, 250 }, { 0, 0 }, { 0, 0 }, 0, "the group ran, nobody waited" },
                { { 200, 50 }, { 20, 250 }, { 20, 50 }, 180, "mixed: 180 governed apart, 200 waiting apart" },
                { { 100, 0 }, { 0, 250 }, { 0, 0 }, 100, "the group ran less than the others waited" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_rq_others before[2], now[2];

                for (size_t c = 0; c < 2; c++) {
                        before[c] = (struct bw_rq_others) {
                                .governed_ns = 1000 + c, .waiting_ns = 2000 + c, .behind_ns = 500 + c,
                                .wait_ns = 7, .counted_clock = 99,
                        };
                        now[c] = before[c];
                        now[c].governed_ns += cases[i].g[c];
                        now[c].waiting_ns += cases[i].w[c];
                        now[c].behind_ns += cases[i].b[c];
                        now[c].wait_ns += 12345;        /* the summed wait is not what pairs */
                        now[c].counted_clock = 5;       /* scratch: ignored */
                }
                if (bw_rq_others_cross(now, before, 2) != cases[i].cross)
                        fail_msg("case %zu (%s): %" PRIu64 ", expected %" PRIu64, i, cases[i].why,
                                 bw_rq_others_cross(now, before, 2), cases[i].cross);
        }

        /* Loaded again: counters below the last reading count 0 there. */
        {
                struct bw_rq_others before[2] = { { .governed_ns = 900, .waiting_ns = 900 },
                                                  { .governed_ns = 900, .waiting_ns = 900 } };
                struct bw_rq_others now[2] = { { .governed_ns = 100 }, { .waiting_ns = 100 } };

                assert_int_equal(bw_rq_others_cross(now, before, 2), 0);
        }
        assert_int_equal(bw_rq_others_cross(NULL, NULL, 2), 0);
}

/* Integer member key of o. */
static json_int_t jint_of(json_t *o, const char *key) {
        json_t *v = json_object_get(o, key);

        assert_true(json_is_integer(v));
        return json_integer_value(v);
}

static void check_buckets(json_t *arr, const uint64_t slots[static BW_RQ_SLOTS]) {
        assert_true(json_is_array(arr));
        assert_int_equal(json_array_size(arr), BW_RQ_SLOTS);
        for (unsigned i = 0; i < BW_RQ_SLOTS; i++) {
                json_t *b = json_array_get(arr, i);

                assert_int_equal(json_object_size(b), 3);
                assert_int_equal(jint_of(b, "lower_usec"), i == 0 ? 0 : INT64_C(1) << i);
                if (i == BW_RQ_SLOTS - 1)
                        assert_true(json_is_null(json_object_get(b, "upper_usec")));
                else
                        assert_int_equal(jint_of(b, "upper_usec"), INT64_C(2) << i);
                assert_int_equal(jint_of(b, "count"), slots[i]);
        }
}

static json_t *round_trip(json_t *j) {
        _cleanup_free_ char *s = NULL;
        json_t *back;

        assert_non_null(j);
        s = json_dumps(j, JSON_COMPACT);
        assert_non_null(s);
        back = json_loads(s, 0, NULL);
        assert_non_null(back);
        assert_true(json_equal(j, back));
        json_decref(j);
        return back;
}

static void test_json(void **state) {
        struct bw_rq_counters c = {0};
        json_t *j;

        /* 1000 waits: 990 in [4, 8) µs, 9 in [16, 32), one of 1.5 s. */
        c.wait_slots[2] = 990;
        c.wait_slots[4] = 9;
        c.wait_slots[20] = 1;
        c.wakeups = 900;
        c.preemptions = 100;
        c.wait_ns = 1509999999;                         /* 1509999.999 µs: 1509999 */
        c.wait_max_ns = 1500000000;
        c.throttled_wait_ns = 377499999;                /* 25 % less 1 ns */
        c.throttled_waits = 12;
        c.migrated_waits = 3;
        c.throttle_slots[9] = 4;
        c.throttle_slots[BW_RQ_SLOTS - 1] = 1;
        c.throttles = 5;
        c.throttle_ns = 70000002999;
        c.pending_since_ns = 777;

        j = round_trip(bw_rq_figures_to_json(&c));
        assert_int_equal(json_object_size(j), 17);
        assert_int_equal(jint_of(j, "waits"), 1000);
        assert_int_equal(jint_of(j, "wakeups"), 900);
        assert_int_equal(jint_of(j, "preemptions"), 100);
        assert_int_equal(jint_of(j, "wait_usec"), 1509999);
        assert_int_equal(jint_of(j, "wait_max_usec"), 1500000);
        assert_int_equal(jint_of(j, "p50_usec"), 8);
        assert_int_equal(jint_of(j, "p90_usec"), 8);
        assert_int_equal(jint_of(j, "p99_usec"), 8);
        assert_int_equal(jint_of(j, "p999_usec"), 32);
        assert_int_equal(jint_of(j, "throttled_wait_usec"), 377499);
        assert_int_equal(jint_of(j, "throttled_waits"), 12);
        assert_int_equal(jint_of(j, "migrated_waits"), 3);
        assert_true(json_is_real(json_object_get(j, "throttled_share")));
        assert_float_equal(json_real_value(json_object_get(j, "throttled_share")), 0.25, 1e-9);
        check_buckets(json_object_get(j, "buckets"), c.wait_slots);
        assert_int_equal(jint_of(j, "throttles"), 5);
        assert_int_equal(jint_of(j, "throttle_usec"), 70000002);
        check_buckets(json_object_get(j, "throttle_buckets"), c.throttle_slots);
        json_decref(j);

        /* No wait: null percentiles, a share of 0, every bucket at 0. */
        memset(&c, 0, sizeof c);
        j = round_trip(bw_rq_figures_to_json(&c));
        assert_int_equal(json_object_size(j), 17);
        assert_int_equal(jint_of(j, "waits"), 0);
        assert_int_equal(jint_of(j, "wait_max_usec"), 0);
        assert_true(json_is_null(json_object_get(j, "p50_usec")));
        assert_true(json_is_null(json_object_get(j, "p90_usec")));
        assert_true(json_is_null(json_object_get(j, "p99_usec")));
        assert_true(json_is_null(json_object_get(j, "p999_usec")));
        assert_true(json_is_real(json_object_get(j, "throttled_share")));
        assert_float_equal(json_real_value(json_object_get(j, "throttled_share")), 0.0, 0);
        check_buckets(json_object_get(j, "buckets"), c.wait_slots);
        check_buckets(json_object_get(j, "throttle_buckets"), c.throttle_slots);
        json_decref(j);

        /* A throttled part above the whole (counters read while they move) is all of it. */
        c.wait_slots[3] = 1;
        c.wait_ns = 100;
        c.throttled_wait_ns = 150;
        j = round_trip(bw_rq_figures_to_json(&c));
        assert_float_equal(json_real_value(json_object_get(j, "throttled_share")), 1.0, 0);
        /* A count beyond a JSON integer is clamped, not negative. */
        json_decref(j);
        c.wakeups = UINT64_MAX;
        j = round_trip(bw_rq_figures_to_json(&c));
        assert_int_equal(jint_of(j, "wakeups"), INT64_MAX);
        json_decref(j);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_any),
                cmocka_unit_test(test_slot_range),
                cmocka_unit_test(test_quantile_empty_and_bounds),
                cmocka_unit_test(test_quantile_single_bucket),
                cmocka_unit_test(test_quantile_interp),
                cmocka_unit_test(test_quantile_last_bucket),
                cmocka_unit_test(test_quantile_1000),
                cmocka_unit_test(test_add),
                cmocka_unit_test(test_delta),
                cmocka_unit_test(test_delta_reset),
                cmocka_unit_test(test_others_cross),
                cmocka_unit_test(test_json),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
