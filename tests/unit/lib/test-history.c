/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/law/history.h"

static struct bw_history_entry entry(uint64_t t) {
        return (struct bw_history_entry) {
                .realtime_usec = t,
                .rule = BW_RULE_STEADY,
                .old_bw = { .quota_usec = 50000, .period_usec = 100000 },
                .new_bw = { .quota_usec = 50000 + t, .period_usec = 100000 },
        };
}

static void test_new_invalid(void **state) {
        struct bw_history *h = NULL;

        assert_int_equal(bw_history_new(0, &h), -EINVAL);
        assert_null(h);
        assert_int_equal(bw_history_new((size_t) -1, &h), -ENOMEM);
        assert_null(h);
        bw_history_free(NULL);
        assert_int_equal(bw_history_count(NULL), 0);
        assert_null(bw_history_newest(NULL, 0));
}

static void test_empty(void **state) {
        _cleanup_history_ struct bw_history *h = NULL;

        assert_int_equal(bw_history_new(4, &h), 0);
        assert_int_equal(bw_history_count(h), 0);
        assert_int_equal(bw_history_capacity(h), 4);
        assert_null(bw_history_oldest(h, 0));
        assert_null(bw_history_newest(h, 0));
}

/* Table: capacity, pushes; after pushing 1..pushes the ring holds the last
 * min(capacity, pushes) in order. */
static void test_wrap_order(void **state) {
        static const struct { size_t capacity, pushes; } table[] = {
                { 1, 1 }, { 1, 5 }, { 3, 2 }, { 3, 3 }, { 3, 4 }, { 3, 7 }, { 256, 1000 }, { 8, 8 },
        };

        for (size_t t = 0; t < sizeof(table) / sizeof(table[0]); t++) {
                _cleanup_history_ struct bw_history *h = NULL;
                size_t held;

                assert_int_equal(bw_history_new(table[t].capacity, &h), 0);
                for (uint64_t i = 1; i <= table[t].pushes; i++) {
                        struct bw_history_entry e = entry(i);
                        bw_history_push(h, &e);
                }

                held = table[t].pushes < table[t].capacity ? table[t].pushes : table[t].capacity;
                assert_int_equal(bw_history_count(h), held);
                assert_int_equal(bw_history_pushed(h), table[t].pushes);

                for (size_t i = 0; i < held; i++) {
                        const struct bw_history_entry *o = bw_history_oldest(h, i), *n = bw_history_newest(h, i);

                        assert_non_null(o);
                        assert_non_null(n);
                        assert_int_equal(o->realtime_usec, table[t].pushes - held + 1 + i);
                        assert_int_equal(n->realtime_usec, table[t].pushes - i);
                        assert_int_equal(n->new_bw.quota_usec, 50000 + table[t].pushes - i);
                }
                assert_null(bw_history_oldest(h, held));
                assert_null(bw_history_newest(h, held));
        }
}

static void test_capacity_one(void **state) {
        _cleanup_history_ struct bw_history *h = NULL;
        struct bw_history_entry a = entry(10), b = entry(20);

        assert_int_equal(bw_history_new(1, &h), 0);
        bw_history_push(h, &a);
        assert_int_equal(bw_history_newest(h, 0)->realtime_usec, 10);
        assert_ptr_equal(bw_history_newest(h, 0), bw_history_oldest(h, 0));
        bw_history_push(h, &b);
        assert_int_equal(bw_history_count(h), 1);
        assert_int_equal(bw_history_newest(h, 0)->realtime_usec, 20);
        assert_int_equal(bw_history_oldest(h, 0)->realtime_usec, 20);
}

static void test_resize(void **state) {
        _cleanup_history_ struct bw_history *h = NULL;
        struct bw_history *before;

        assert_int_equal(bw_history_new(4, &h), 0);
        for (uint64_t i = 1; i <= 6; i++) {
                struct bw_history_entry e = entry(i);
                bw_history_push(h, &e);
        }
        /* holds 3 4 5 6 */
        before = h;
        assert_int_equal(bw_history_resize(&h, 0), -EINVAL);
        assert_ptr_equal(h, before);

        assert_int_equal(bw_history_resize(&h, 2), 0);
        assert_int_equal(bw_history_count(h), 2);
        assert_int_equal(bw_history_oldest(h, 0)->realtime_usec, 5);
        assert_int_equal(bw_history_newest(h, 0)->realtime_usec, 6);
        assert_int_equal(bw_history_pushed(h), 6);

        assert_int_equal(bw_history_resize(&h, 10), 0);
        assert_int_equal(bw_history_count(h), 2);
        assert_int_equal(bw_history_capacity(h), 10);
        {
                struct bw_history_entry e = entry(7);
                bw_history_push(h, &e);
        }
        assert_int_equal(bw_history_oldest(h, 0)->realtime_usec, 5);
        assert_int_equal(bw_history_newest(h, 0)->realtime_usec, 7);
        assert_int_equal(bw_history_count(h), 3);
}

static void test_from_decision(void **state) {
        struct bw_decision d = {
                .rule = BW_RULE_HEADROOM_RAISE,
                .target = { .quota_usec = 80000, .period_usec = 100000, .burst_usec = 5000, .has_burst = true },
                .usage_rate = 450000,
                .throttle_rate = 120000,
                .pressure_rate = 60000,
                .credit_after_usec = 29000000,
        };
        struct bw_bandwidth old = { .quota_usec = 50000, .period_usec = 100000, .has_burst = true };
        struct bw_history_entry e;

        bw_history_entry_from_decision(&d, &old, 1234, true, &e);
        assert_int_equal(e.realtime_usec, 1234);
        assert_int_equal(e.rule, BW_RULE_HEADROOM_RAISE);
        assert_true(e.applied);
        assert_int_equal(e.usage_rate, 450000);
        assert_int_equal(e.throttle_rate, 120000);
        assert_int_equal(e.pressure_rate, 60000);
        assert_int_equal(e.credit_usec, 29000000);
        assert_int_equal(e.old_bw.quota_usec, 50000);
        assert_int_equal(e.new_bw.quota_usec, 80000);
        assert_int_equal(e.new_bw.burst_usec, 5000);

        /* Rates past 32 bits saturate; they do not wrap. */
        d.usage_rate = (uint64_t) UINT32_MAX + 5;
        d.throttle_rate = UINT64_MAX;
        bw_history_entry_from_decision(&d, &old, 1234, true, &e);
        assert_int_equal(e.usage_rate, UINT32_MAX);
        assert_int_equal(e.throttle_rate, UINT32_MAX);
        assert_int_equal(e.pressure_rate, 60000);
}

/* A decision kept and given back: every field as it was; the rates and
 * counts past 32 bits saturate. */
static void test_decision_kept(void **state) {
        struct bw_decision d = {
                .target = { .quota_usec = 80000, .period_usec = 100000, .burst_usec = 5000, .has_burst = true },
                .next_tick_usec = 1, .dt_usec = 2, .usage_rate = 3, .throttle_rate = 4,
                .ancestor_throttle_rate = 5, .pressure_rate = 6, .d_nr_periods = 7, .d_nr_throttled = 8,
                .d_nr_bursts = 9, .credit_before_usec = 10, .credit_after_usec = 11, .debt_usec = 12,
                .earn_rate = 13, .spend_rate = 14, .spend_avg = 15, .time_to_empty_usec = UINT64_MAX,
                .reserve_usec = 17, .rq_wait_p99_usec = 18, .headroom_usec = 19, .headroom_max_usec = 20,
                .rule = BW_RULE_HOST_HOLD, .level = BW_POLICY_LEVELS, .rq_throttled_permille = 1000,
                .would_change = true, .change = false, .emergency = true, .active = false, .has_rq = true,
                .rq_over_target = true,
        };
        struct bw_decision_kept k;
        struct bw_decision back;

        bw_decision_keep(&d, &k);
        memset(&back, 0x5a, sizeof(back));
        bw_decision_unkeep(&k, &back);
#define SAME(f) assert_int_equal(back.f, d.f)
        SAME(target.quota_usec); SAME(target.period_usec); SAME(target.burst_usec); SAME(target.has_burst);
        SAME(next_tick_usec); SAME(dt_usec); SAME(usage_rate); SAME(throttle_rate); SAME(ancestor_throttle_rate);
        SAME(pressure_rate); SAME(d_nr_periods); SAME(d_nr_throttled); SAME(d_nr_bursts);
        SAME(credit_before_usec); SAME(credit_after_usec); SAME(debt_usec); SAME(earn_rate); SAME(spend_rate);
        SAME(spend_avg); SAME(time_to_empty_usec); SAME(reserve_usec); SAME(rq_wait_p99_usec);
        SAME(headroom_usec); SAME(headroom_max_usec); SAME(rule); SAME(level); SAME(rq_throttled_permille);
        SAME(would_change); SAME(change); SAME(emergency); SAME(active); SAME(has_rq); SAME(rq_over_target);

        d.usage_rate = d.d_nr_periods = d.spend_avg = (uint64_t) UINT32_MAX + 1;
        bw_decision_keep(&d, &k);
        bw_decision_unkeep(&k, &back);
        assert_int_equal(back.usage_rate, UINT32_MAX);
        assert_int_equal(back.d_nr_periods, UINT32_MAX);
        assert_int_equal(back.spend_avg, UINT32_MAX);
        SAME(throttle_rate);
        SAME(time_to_empty_usec);
#undef SAME
        assert_true(sizeof(struct bw_decision_kept) < sizeof(struct bw_decision));
}

/* Table: a ring (capacity, entries 1..pushes pushed; capacity 0 stands for
 * no ring at all), a query, and what GetHistory returns: the error, or how
 * many entries and the first (oldest) one's time; the rest follow by one. */
static void test_select(void **state) {
        static const struct {
                size_t capacity, pushes;
                struct bw_history_query q;
                int r;
                size_t n;
                uint64_t first;
        } table[] = {
                { 4, 0,  { false, 0 },  0,       0, 0 },       /* empty ring: nothing */
                { 0, 0,  { false, 0 },  0,       0, 0 },       /* no ring: nothing */
                { 0, 0,  { true, 3 },   0,       0, 0 },
                { 0, 0,  { true, 0 },   -EINVAL, 0, 0 },       /* the limit is checked first */
                { 4, 3,  { false, 0 },  0,       3, 1 },       /* all, oldest first */
                { 4, 6,  { false, 0 },  0,       4, 3 },       /* a wrapped ring: what it holds */
                { 4, 6,  { true, 2 },   0,       2, 5 },       /* the newest two */
                { 4, 6,  { true, 1 },   0,       1, 6 },
                { 4, 6,  { true, 4 },   0,       4, 3 },
                { 4, 6,  { true, 100 }, 0,       4, 3 },       /* a limit over the count */
                { 4, 6,  { true, 0 },   -EINVAL, 0, 0 },       /* below 1 */
                { 4, 6,  { true, -5 },  -EINVAL, 0, 0 },
                { 4, 6,  { true, INT64_MAX }, 0, 4, 3 },
                { 4, 6,  { false, -5 }, 0,       4, 3 },       /* no limit: the value is ignored */
                { 1, 9,  { true, 1 },   0,       1, 9 },
                { 256, 1000, { true, 10 }, 0,    10, 991 },
        };

        for (size_t t = 0; t < sizeof(table) / sizeof(table[0]); t++) {
                _cleanup_history_ struct bw_history *h = NULL;
                struct bw_history_entry *entries = NULL, sentinel = entry(77);
                size_t n = 77;

                if (table[t].capacity > 0)
                        assert_int_equal(bw_history_new(table[t].capacity, &h), 0);
                for (uint64_t i = 1; i <= table[t].pushes; i++) {
                        struct bw_history_entry e = entry(i);
                        bw_history_push(h, &e);
                }

                entries = &sentinel;
                assert_int_equal(bw_history_select(h, &table[t].q, &entries, &n), table[t].r);
                if (table[t].r < 0) {
                        /* Outputs untouched on failure. */
                        assert_ptr_equal(entries, &sentinel);
                        assert_int_equal(n, 77);
                        continue;
                }
                assert_int_equal(n, table[t].n);
                if (n == 0)
                        assert_null(entries);
                for (size_t i = 0; i < n; i++) {
                        assert_int_equal(entries[i].realtime_usec, table[t].first + i);
                        assert_int_equal(entries[i].new_bw.quota_usec, 50000 + table[t].first + i);
                }
                free(entries);
        }
}

/* Memory follows what is recorded: nothing before the first push, growth
 * in steps up to the capacity, order kept across every step and wrap. */
static void test_lazy_growth(void **state) {
        struct bw_history *h = NULL;
        size_t last = 0;

        assert_int_equal(bw_history_new(100, &h), 0);
        assert_int_equal(bw_history_capacity(h), 100);
        assert_true(bw_history_allocated_bytes(h) < sizeof(struct bw_history_entry));
        for (uint64_t i = 1; i <= 250; i++) {
                struct bw_history_entry e = entry(i);
                size_t now;

                bw_history_push(h, &e);
                now = bw_history_allocated_bytes(h);
                assert_true(now >= last);
                assert_true(now <= 100 * sizeof(struct bw_history_entry) + 64);
                last = now;
                assert_int_equal(bw_history_count(h), i < 100 ? i : 100);
                assert_int_equal(bw_history_newest(h, 0)->realtime_usec, i);
                assert_int_equal(bw_history_oldest(h, 0)->realtime_usec, i <= 100 ? 1 : i - 99);
                if (i == 3)     /* still the first step */
                        assert_true(now < 8 * sizeof(struct bw_history_entry));
        }
        assert_int_equal(bw_history_pushed(h), 250);
        /* Shrink after growth: the newest kept, in order. */
        assert_int_equal(bw_history_resize(&h, 10), 0);
        assert_int_equal(bw_history_count(h), 10);
        for (size_t i = 0; i < 10; i++)
                assert_int_equal(bw_history_oldest(h, i)->realtime_usec, 241 + i);
        assert_int_equal(bw_history_pushed(h), 250);
        bw_history_clear(h);
        assert_int_equal(bw_history_count(h), 0);
        assert_null(bw_history_newest(h, 0));
        assert_true(bw_history_allocated_bytes(h) < sizeof(struct bw_history_entry));
        {
                struct bw_history_entry e = entry(999);

                bw_history_push(h, &e);
                assert_int_equal(bw_history_oldest(h, 0)->realtime_usec, 999);
        }
        bw_history_free(h);
}

static void test_select_invalid(void **state) {
        const struct bw_history_query q = { false, 0 };
        struct bw_history_entry *entries;
        size_t n;

        assert_int_equal(bw_history_select(NULL, NULL, &entries, &n), -EINVAL);
        assert_int_equal(bw_history_select(NULL, &q, NULL, &n), -EINVAL);
        assert_int_equal(bw_history_select(NULL, &q, &entries, NULL), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_new_invalid),
                cmocka_unit_test(test_empty),
                cmocka_unit_test(test_wrap_order),
                cmocka_unit_test(test_capacity_one),
                cmocka_unit_test(test_resize),
                cmocka_unit_test(test_lazy_growth),
                cmocka_unit_test(test_from_decision),
                cmocka_unit_test(test_decision_kept),
                cmocka_unit_test(test_select),
                cmocka_unit_test(test_select_invalid),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
