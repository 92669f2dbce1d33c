/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The baseline decisions of include/bwgov/law/baseline.h, table by table: the
 * burst ownership rule, re-base, adoption, restore, the law's parameters and
 * the resting plan. Each row says why it holds. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "bwgov/law/baseline.h"
#include "bwgov/util/macro.h"

#define MAXQ BW_QUOTA_MAX
#define BW(q, p, b) { .quota_usec = (q), .period_usec = (p), .burst_usec = (b), .has_burst = true }
#define BW_NOBURST(q, p) { .quota_usec = (q), .period_usec = (p), .burst_usec = 0, .has_burst = false }

static void assert_bw(const struct bw_bandwidth *got, const struct bw_bandwidth *want, const char *why) {
        if (got->quota_usec != want->quota_usec || got->period_usec != want->period_usec ||
            got->burst_usec != want->burst_usec || got->has_burst != want->has_burst) {
                print_error("%s: got %llu/%llu burst %llu%s, want %llu/%llu burst %llu%s\n", why,
                            (unsigned long long) got->quota_usec, (unsigned long long) got->period_usec,
                            (unsigned long long) got->burst_usec, got->has_burst ? "" : " (no file)",
                            (unsigned long long) want->quota_usec, (unsigned long long) want->period_usec,
                            (unsigned long long) want->burst_usec, want->has_burst ? "" : " (no file)");
                fail();
        }
}

static void assert_bool(bool got, bool want, const char *what, const char *why) {
        if (got != want) {
                print_error("%s: %s is %s, want %s\n", why, what, got ? "true" : "false", want ? "true" : "false");
                fail();
        }
}

static void test_quota_arithmetic(void **unused) {
        static const struct {
                uint64_t rate, period, want_quota, want_quantized;
        } cases[] = {
                { 500000,  100000, 50000,  50000 },     /* 50% of 100 ms */
                { 1234567, 100000, 123456, 123000 },    /* rounds to the nearest ms, down */
                { 1235000, 100000, 123500, 124000 },    /* ... half up */
                { 5000,    100000, 500,    1000 },      /* never below the kernel's 1 ms */
                { 0,       100000, 0,      1000 },
                { 2500000, 50000,  125000, 125000 },    /* another period */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t q = bw_percent_to_quota(cases[i].rate, cases[i].period);

                assert_int_equal(q, cases[i].want_quota);
                assert_int_equal(bw_quantize_quota(q), cases[i].want_quantized);
        }
        assert_true(bw_quantize_quota(MAXQ) == MAXQ);
}

/* The one rule: "the quota is someone else's, the burst is still ours". */
static const struct ownership_case {
        struct bw_baseline_view view;
        struct bw_bandwidth cur;
        bool ours;
        const char *why;
} ownership_cases[] = {
        { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(60000, 100000, 30000), true,
          "systemd rewrote cpu.max only: our raised burst is still there" },
        { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(60000, 100000, 20000), false,
          "the burst was rewritten too" },
        { { BW(50000, 100000, 0), false, BW(80000, 100000, 30000) }, BW(60000, 100000, 30000), false,
          "nothing of ours in place (has_written false): a stale written value means nothing" },
        { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW_NOBURST(60000, 100000), false,
          "no burst file" },
        { { BW(50000, 100000, 30000), true, BW(80000, 100000, 30000) }, BW(60000, 100000, 30000), false,
          "we wrote the baseline's burst: nothing of ours to bring back" },
        { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(MAXQ, 100000, 30000), false,
          "quota lifted to max: the kernel ignores the burst, and no quota caps the baseline's" },
        { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(40000, 50000, 30000), true,
          "another period: the burst is still ours" },
};

static void test_burst_ours(void **unused) {
        for (size_t i = 0; i < ELEMENTSOF(ownership_cases); i++) {
                const struct ownership_case *c = &ownership_cases[i];

                assert_bool(bw_baseline_burst_ours(&c->view, &c->cur), c->ours, "ours", c->why);
        }
}

static void test_rebase(void **unused) {
        static const struct {
                struct bw_baseline_view view;
                struct bw_bandwidth cur;
                struct bw_bandwidth want_baseline;
                bool want_written;
                const char *why;
        } cases[] = {
                { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(60000, 100000, 30000),
                  BW(60000, 100000, 0), true,
                  "burst still ours: new quota, our baseline burst; the kernel holds our burst" },
                { { BW(50000, 100000, 10000), true, BW(80000, 100000, 30000) }, BW(5000, 100000, 30000),
                  BW(5000, 100000, 5000), true,
                  "burst still ours: the baseline burst is capped at the new quota" },
                { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(60000, 100000, 20000),
                  BW(60000, 100000, 20000), false,
                  "quota and burst rewritten: all of it is the new contract" },
                { { BW(50000, 100000, 0), false, BW(0, 0, 0) }, BW(70000, 100000, 0),
                  BW(70000, 100000, 0), false,
                  "at the baseline, someone raised the quota" },
                { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(MAXQ, 100000, 30000),
                  BW(MAXQ, 100000, 30000), false,
                  "quota lifted to max: not boosted, nothing to restore (was: a burst-only boost)" },
                { { BW_NOBURST(50000, 100000), true, BW_NOBURST(80000, 100000) }, BW_NOBURST(60000, 100000),
                  BW_NOBURST(60000, 100000), false,
                  "v1 without burst" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_baseline_view n;

                bw_baseline_rebase(&cases[i].view, &cases[i].cur, &n);
                assert_bw(&n.baseline, &cases[i].want_baseline, cases[i].why);
                assert_bool(n.has_written, cases[i].want_written, "has_written", cases[i].why);
                assert_bw(&n.written, &cases[i].cur, cases[i].why);
        }
}

static void test_adopt(void **unused) {
        static const struct bw_state_unit saved = {
                .baseline = BW(50000, 100000, 0),
                .has_written = true,
                .written = BW(80000, 100000, 30000),
                .has_pending = true,
                .pending = BW(90000, 100000, 40000),
                .credit_usec = 7000000,
                .debt_usec = 1000,
                .paused = true,
        };
        static const struct {
                bool has_saved;
                uint64_t cpu_quota;             /* CPUQuota=, µs/s */
                struct bw_bandwidth cur;
                enum bw_ownership want_ownership;
                struct bw_bandwidth want_baseline;
                bool want_written;
                uint64_t want_credit, want_debt;
                bool want_set_quota;
                const char *why;
        } cases[] = {
                { false, 0, BW(60000, 100000, 0), BW_OWNERSHIP_EXTERNAL, BW(60000, 100000, 0), false,
                  30000000, 0, false, "nothing saved: the kernel's value is the contract, the bucket starts full" },
                { true, 0, BW(50000, 100000, 0), BW_OWNERSHIP_BASELINE, BW(50000, 100000, 0), false,
                  7000000, 1000, false, "the kernel holds the saved baseline: credit and debt carry over" },
                { true, 0, BW(80000, 100000, 30000), BW_OWNERSHIP_OURS, BW(50000, 100000, 0), true,
                  7000000, 1000, false, "the kernel holds what we wrote: the saved baseline stands" },
                { true, 0, BW(90000, 100000, 40000), BW_OWNERSHIP_OURS, BW(50000, 100000, 0), true,
                  7000000, 1000, false, "a crash after the write-ahead: the pending value is ours too" },
                { true, 0, BW(80000, 100000, 0), BW_OWNERSHIP_OURS, BW(50000, 100000, 0), true,
                  7000000, 1000, false, "a crash between quota and burst writes: each part is ours" },
                { true, 0, BW(60000, 100000, 30000), BW_OWNERSHIP_EXTERNAL, BW(60000, 100000, 0), true,
                  30000000, 0, false, "cpu.max rewritten while away, burst still ours (the rule)" },
                { true, 0, BW(60000, 100000, 20000), BW_OWNERSHIP_EXTERNAL, BW(60000, 100000, 20000), false,
                  30000000, 0, false, "all rewritten while away: a new contract, a fresh bucket" },
                { true, 0, BW(MAXQ, 100000, 30000), BW_OWNERSHIP_EXTERNAL, BW(MAXQ, 100000, 30000), false,
                  30000000, 0, false, "quota lifted while away: the burst is not ours (the rule)" },
                { false, 250000, BW(60000, 100000, 40000), BW_OWNERSHIP_EXTERNAL, BW(25000, 100000, 25000), false,
                  30000000, 0, true, "CPUQuota=25% names the contract; the burst is capped at it" },
                { true, 500000, BW(50000, 100000, 0), BW_OWNERSHIP_BASELINE, BW(50000, 100000, 0), false,
                  7000000, 1000, false, "CPUQuota= already in place: nothing to write" },
                { true, 250000, BW(80000, 100000, 30000), BW_OWNERSHIP_OURS, BW(25000, 100000, 0), true,
                  7000000, 1000, false, "a boost of ours above CPUQuota=: left to the law, not written now" },
        };
        struct bw_unit_config cfg = { .name = (char *) "u.slice", .credit_max_usec = 30000000 };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_adopt_plan p;

                cfg.cpu_quota = cases[i].cpu_quota;
                bw_baseline_adopt(&cfg, cases[i].has_saved ? &saved : NULL, &cases[i].cur, &p);
                if (cases[i].has_saved) {
                        assert_int_equal(p.ownership, cases[i].want_ownership);
                        assert_true(p.paused);
                } else
                        assert_false(p.paused);
                assert_bw(&p.view.baseline, &cases[i].want_baseline, cases[i].why);
                assert_bool(p.view.has_written, cases[i].want_written, "has_written", cases[i].why);
                if (p.view.has_written)
                        assert_bw(&p.view.written, &cases[i].cur, cases[i].why);
                assert_int_equal(p.credit_usec, cases[i].want_credit);
                assert_int_equal(p.debt_usec, cases[i].want_debt);
                assert_bool(p.set_quota, cases[i].want_set_quota, "set_quota", cases[i].why);
        }

        /* A smaller CreditMax= caps the saved credit. */
        cfg.cpu_quota = 0;
        cfg.credit_max_usec = 1000000;
        {
                const struct bw_bandwidth cur = BW(50000, 100000, 0);
                struct bw_adopt_plan p;

                bw_baseline_adopt(&cfg, &saved, &cur, &p);
                assert_int_equal(p.credit_usec, 1000000);
        }
}

static void test_restore(void **unused) {
        static const struct {
                struct bw_baseline_view view;
                struct bw_bandwidth cur;
                enum bw_restore want;
                struct bw_bandwidth want_target, want_baseline;
                const char *why;
        } cases[] = {
                { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(80000, 100000, 30000),
                  BW_RESTORE_BASELINE, BW(50000, 100000, 0), BW(50000, 100000, 0),
                  "the kernel holds our boost: the baseline goes back" },
                { { BW(50000, 100000, 0), false, BW(0, 0, 0) }, BW(50000, 100000, 0),
                  BW_RESTORE_NOTHING, {0}, {0}, "already at the baseline" },
                { { BW(50000, 100000, 0), false, BW(0, 0, 0) }, BW(50000, 100000, 20000),
                  BW_RESTORE_NOT_OURS, {0}, {0},
                  "only the burst differs, and we wrote nothing: someone else's burst, left" },
                { { BW(120000, 100000, 0), false, BW(0, 0, 0) }, BW(100000, 100000, 0),
                  BW_RESTORE_NOT_OURS, {0}, {0},
                  "observe mode, rewritten since the last sample: not ours to undo on stop" },
                { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(60000, 100000, 30000),
                  BW_RESTORE_BURST, BW(60000, 100000, 0), BW(60000, 100000, 0),
                  "quota someone else's, burst ours (the rule): only the burst goes back" },
                { { BW(50000, 100000, 10000), true, BW(80000, 100000, 30000) }, BW(5000, 100000, 30000),
                  BW_RESTORE_BURST, BW(5000, 100000, 5000), BW(5000, 100000, 5000),
                  "... capped at the new quota" },
                { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(60000, 100000, 20000),
                  BW_RESTORE_NOT_OURS, {0}, {0}, "both rewritten: not ours" },
                { { BW(50000, 100000, 0), true, BW(80000, 100000, 30000) }, BW(MAXQ, 100000, 30000),
                  BW_RESTORE_NOT_OURS, {0}, {0}, "quota lifted to max: the burst is not ours (the rule)" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_bandwidth b = {0}, t = {0};
                enum bw_restore r = bw_baseline_restore_plan(&cases[i].view, &cases[i].cur, &b, &t);

                if (r != cases[i].want) {
                        print_error("%s: plan %d, want %d\n", cases[i].why, r, cases[i].want);
                        fail();
                }
                assert_bw(&t, &cases[i].want_target, cases[i].why);
                assert_bw(&b, &cases[i].want_baseline, cases[i].why);
        }
}

/* An entry put back with no unit governing it (issue 30): the kernel's
 * value against the entry's baseline, written and pending values. */
static void test_restore_entry(void **unused) {
        static const struct {
                bool has_written, has_pending;
                struct bw_bandwidth written, pending, cur;
                enum bw_restore want;
                struct bw_bandwidth want_target;
                const char *why;
        } cases[] = {
                { true, false, BW(100000, 100000, 50000), {0}, BW(100000, 100000, 50000),
                  BW_RESTORE_BASELINE, BW(50000, 100000, 0), "the raised quota of a unit no longer configured" },
                { false, true, {0}, BW(100000, 100000, 50000), BW(100000, 100000, 50000),
                  BW_RESTORE_BASELINE, BW(50000, 100000, 0), "killed between the intent and the save: pending" },
                { true, false, BW(100000, 100000, 50000), {0}, BW(100000, 100000, 0),
                  BW_RESTORE_BASELINE, BW(50000, 100000, 0), "killed between the quota and the burst write" },
                { true, false, BW(100000, 100000, 50000), {0}, BW(50000, 100000, 0),
                  BW_RESTORE_NOTHING, {0}, "the baseline in place" },
                { true, false, BW(100000, 100000, 50000), {0}, BW(70000, 100000, 50000),
                  BW_RESTORE_BURST, BW(70000, 100000, 0), "quota someone else's, burst ours: the burst back" },
                { true, false, BW(100000, 100000, 50000), {0}, BW(70000, 100000, 10000),
                  BW_RESTORE_NOT_OURS, {0}, "both someone else's" },
                { false, false, {0}, {0}, BW(100000, 100000, 50000),
                  BW_RESTORE_NOT_OURS, {0}, "nothing of bwgov's recorded (another boot's cleared): left" },
                { true, false, BW(40000, 100000, 0), {0}, BW(40000, 100000, 0),
                  BW_RESTORE_NOT_OURS, {0}, "a written value below the baseline bwgov could not have made" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_state_unit u = {
                        .baseline = BW(50000, 100000, 0),
                        .has_written = cases[i].has_written, .written = cases[i].written,
                        .has_pending = cases[i].has_pending, .pending = cases[i].pending,
                };
                struct bw_bandwidth t = {0};
                enum bw_restore r = bw_baseline_restore_entry(&u, &cases[i].cur, &t);

                if (r != cases[i].want) {
                        print_error("%s: plan %d, want %d\n", cases[i].why, r, cases[i].want);
                        fail();
                }
                assert_bw(&t, &cases[i].want_target, cases[i].why);
        }
}

static const struct bw_config test_config = {
        .global = {
                .interval_usec = 1000000,
                .mode = BW_MODE_ELASTIC,
                .pressure_window_usec = 2000000,
                .active_interval_usec = 250000,
                .history_size = 16,
        },
};

static void test_params(void **unused) {
        static const struct {
                enum bw_mode mode;
                uint64_t cpu_quota_max;
                bool has_burst_max;
                uint64_t burst_max;
                bool burst_supported;
                struct bw_bandwidth baseline;
                uint64_t want_quota_max, want_burst_max, want_rest_burst;
                bool want_kernel_burst;
                const char *why;
        } cases[] = {
                { BW_MODE_ELASTIC, 0, false, 0, true, BW(50000, 100000, 0), 200000, 0, 50000, true,
                  "defaults: four times the baseline; the burst rests at the quota" },
                { BW_MODE_BURST, 0, true, 20400, true, BW(50000, 100000, 0), 200000, 20000, 20000, true,
                  "CPUBurstMax= on the 1 ms grid, and the resting burst with it" },
                { BW_MODE_BURST, 0, true, 90000, true, BW(50000, 100000, 0), 200000, 90000, 50000, true,
                  "the resting burst never above the quota" },
                { BW_MODE_ELASTIC, 0, true, 0, true, BW(50000, 100000, 5000), 200000, 0, 5000, false,
                  "CPUBurstMax=0: the burst is not ours, it rests where found" },
                { BW_MODE_OBSERVE, 0, false, 0, true, BW(50000, 100000, 0), 200000, 0, 0, true,
                  "observe: no resting burst" },
                { BW_MODE_ELASTIC, 0, false, 0, false, BW(50000, 100000, 0), 200000, 0, 0, false,
                  "the kernel check found no burst support" },
                { BW_MODE_ELASTIC, 0, false, 0, true, BW_NOBURST(50000, 100000), 200000, 0, 0, false,
                  "no burst file" },
                { BW_MODE_ELASTIC, 0, false, 0, true, BW(MAXQ, 100000, 0), MAXQ, 0, 0, true,
                  "unlimited baseline" },
                { BW_MODE_ELASTIC, 3000000, false, 0, true, BW(50000, 100000, 0), 300000, 0, 50000, true,
                  "CPUQuotaMax=300%" },
                { BW_MODE_ELASTIC, 200000, false, 0, true, BW(50000, 100000, 0), 50000, 0, 50000, true,
                  "CPUQuotaMax= below the baseline means the baseline" },
                { BW_MODE_ELASTIC, 1000000, false, 0, true, BW(25000, 0, 0), 100000, 0, 25000, true,
                  "no period known: the kernel's default 100 ms" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_unit_config cfg = {
                        .name = (char *) "u.slice",
                        .mode = cases[i].mode,
                        .has_mode = true,
                        .cpu_quota_max = cases[i].cpu_quota_max,
                        .has_cpu_burst_max = cases[i].has_burst_max,
                        .cpu_burst_max_usec = cases[i].burst_max,
                        .credit_max_usec = 30000000,
                        .target_throttle = 10000,
                        .target_pressure = 50000,
                        .interval_usec = 2000000,
                };
                struct bw_policy_params p;

                bw_baseline_params(&test_config, &cfg, &cases[i].baseline, 4, cases[i].burst_supported, &p);
                assert_int_equal(p.mode, cases[i].mode);
                assert_true(p.quota_max_usec == cases[i].want_quota_max);
                assert_int_equal(p.burst_max_usec, cases[i].want_burst_max);
                assert_int_equal(p.baseline.burst_usec, cases[i].want_rest_burst);
                assert_bool(p.kernel_has_burst, cases[i].want_kernel_burst, "kernel_has_burst", cases[i].why);
                assert_int_equal(p.baseline.quota_usec, cases[i].baseline.quota_usec);
                assert_int_equal(p.hold_off_usec, 2000000);
                assert_int_equal(p.interval_usec, 2000000);
                assert_int_equal(p.active_interval_usec, 250000);
                assert_int_equal(p.ncpus, 4);
                assert_int_equal(p.credit_max_usec, 30000000);
        }
}

/* The resting plan: where a unit sits with its credit when it is idle. */
static void test_rest_plan(void **unused) {
        static const struct {
                enum bw_mode mode;
                bool paused, has_usage;
                uint64_t credit, ancestor;
                struct bw_bandwidth cur;
                bool want;
                struct bw_bandwidth want_target;        /* quota 0: only "above the baseline" is checked */
                const char *why;
        } cases[] = {
                { BW_MODE_BURST, false, false, 0, MAXQ, BW(50000, 100000, 0), true, BW(50000, 100000, 50000),
                  "burst mode: the resting burst = quota goes in place" },
                { BW_MODE_BURST, false, false, 0, MAXQ, BW(50000, 100000, 50000), false, {0},
                  "already resting: nothing to write" },
                { BW_MODE_BURST, true, false, 0, MAXQ, BW(50000, 100000, 0), false, {0},
                  "paused units rest where they are" },
                { BW_MODE_OBSERVE, false, false, 0, MAXQ, BW(50000, 100000, 0), false, {0},
                  "observed units too" },
                { BW_MODE_BURST, false, false, 0, MAXQ, BW(MAXQ, 100000, 0), false, {0},
                  "unlimited in the kernel" },
                { BW_MODE_ELASTIC, false, true, 30000000, MAXQ, BW(50000, 100000, 0), true, BW(0, 100000, 50000),
                  "elastic with a full bucket: headroom above the baseline" },
                { BW_MODE_ELASTIC, false, true, 30000000, 60000, BW(50000, 100000, 0), true, BW(60000, 100000, 50000),
                  "... but never above the nearest limited ancestor" },
                { BW_MODE_ELASTIC, false, true, 30000000, 20000, BW(50000, 100000, 0), true, BW(50000, 100000, 50000),
                  "... and never below the baseline either" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_unit_config cfg = {
                        .name = (char *) "u.slice",
                        .mode = cases[i].mode,
                        .has_mode = true,
                        .credit_max_usec = 30000000,
                        .target_throttle = 10000,
                        .target_pressure = 50000,
                };
                struct bw_bandwidth base = BW(50000, 100000, 0), t = {0};
                struct bw_policy_params p;
                bool r;

                bw_baseline_params(&test_config, &cfg, &base, 4, true, &p);
                r = bw_baseline_rest_plan(&p, cases[i].credit, cases[i].has_usage, cases[i].paused, &cases[i].cur,
                                          cases[i].ancestor, &t);
                assert_bool(r, cases[i].want, "rest", cases[i].why);
                if (!r)
                        continue;
                if (cases[i].want_target.quota_usec == 0) {
                        struct bw_bandwidth w = cases[i].want_target;

                        assert_true(t.quota_usec > base.quota_usec);
                        w.quota_usec = t.quota_usec;
                        assert_bw(&t, &w, cases[i].why);
                } else
                        assert_bw(&t, &cases[i].want_target, cases[i].why);
        }
}

static void test_intent_target(void **unused) {
        static const struct {
                struct bw_bandwidth cur, baseline;
                uint64_t quota, period;
                struct bw_bandwidth want;
                const char *why;
        } cases[] = {
                { BW(80000, 100000, 50000), BW(50000, 100000, 50000), 30000, 100000, BW(30000, 100000, 30000),
                  "the burst goes under systemd's quota" },
                { BW(80000, 100000, 50000), BW(50000, 100000, 10000), 30000, 100000, BW(30000, 100000, 10000),
                  "... and under the baseline's burst" },
                { BW(80000, 100000, 50000), BW(50000, 100000, 50000), MAXQ, 100000, BW(MAXQ, 100000, 0),
                  "no quota: no burst" },
                { BW(80000, 100000, 5000), BW(50000, 100000, 50000), 40000, 50000, BW(40000, 50000, 5000),
                  "a lower burst stays, the period follows systemd" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_bandwidth t;

                bw_baseline_intent_target(&cases[i].cur, &cases[i].baseline, cases[i].quota, cases[i].period, &t);
                assert_bw(&t, &cases[i].want, cases[i].why);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_quota_arithmetic),
                cmocka_unit_test(test_burst_ours),
                cmocka_unit_test(test_rebase),
                cmocka_unit_test(test_adopt),
                cmocka_unit_test(test_restore),
                cmocka_unit_test(test_restore_entry),
                cmocka_unit_test(test_params),
                cmocka_unit_test(test_rest_plan),
                cmocka_unit_test(test_intent_target),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
