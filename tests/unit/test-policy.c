/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/macro.h"
#include "bwgov/policy.h"

/*
 * A tiny deterministic model of one CFS-bandwidth group, advanced one period
 * at a time: work arrives into a backlog, the group runs min(backlog, the
 * global pool, parallelism x period), and when the pool runs dry with work
 * left it is throttled for the rest of the period. The pool refills by one
 * quota per period up to quota + burst, and, as on the real kernel, by one
 * quota on every write to cpu.max or cpu.max.burst. The cumulative counters
 * it keeps are what cpu.stat and cpu.pressure would show.
 */
struct sim {
        uint64_t period_usec;
        unsigned ncpus;
        unsigned threads;
        struct bw_bandwidth bw;
        uint64_t runtime;
        uint64_t backlog;
        struct bw_cpu_stat stat;
        uint64_t full_usec;
        uint64_t now_usec;
        uint64_t periods;
        uint64_t throttled_periods;
        uint64_t writes;
        uint64_t identical_writes;
        uint64_t rng;
        bool has_psi;
};

static uint64_t rnd(uint64_t *state) {
        /* xorshift64*, fixed seeds: every run is the same run */
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        return *state * UINT64_C(2685821657736338717);
}

static uint64_t rnd_below(uint64_t *state, uint64_t n) {
        return n == 0 ? 0 : (rnd(state) >> 11) % n;
}

static void sim_init(struct sim *s, const struct bw_bandwidth *bw, unsigned ncpus, unsigned threads, uint64_t seed) {
        *s = (struct sim) {
                .period_usec = bw->period_usec,
                .ncpus = ncpus,
                .threads = threads,
                .bw = *bw,
                .stat.seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED |
                             BW_CPUSTAT_THROTTLED |
                             (bw->has_burst ? BW_CPUSTAT_NR_BURSTS | BW_CPUSTAT_BURST : 0),
                .now_usec = 1000 * USEC_PER_SEC,
                .rng = seed ? seed : 1,
                .has_psi = true,
        };
        s->runtime = bw->quota_usec + (bw->has_burst ? bw->burst_usec : 0);
}

static void sim_refill(struct sim *s) {
        uint64_t cap = s->bw.quota_usec + (s->bw.has_burst ? s->bw.burst_usec : 0);

        s->runtime += s->bw.quota_usec;
        if (s->runtime > cap)
                s->runtime = cap;
}

static void sim_period(struct sim *s, uint64_t arrival_usec) {
        unsigned par = s->threads < s->ncpus ? s->threads : s->ncpus;
        uint64_t cap = par * s->period_usec, run;

        s->backlog += arrival_usec;
        sim_refill(s);
        run = s->backlog < cap ? s->backlog : cap;
        if (run > s->runtime)
                run = s->runtime;
        if (s->backlog > 0) {
                s->stat.nr_periods++;
                s->periods++;
        }
        if (run == s->runtime && run < cap && s->backlog > run) {
                uint64_t thr = s->period_usec - run / par;

                s->stat.throttled_usec += thr * par;
                s->stat.nr_throttled++;
                s->throttled_periods++;
                s->full_usec += thr;
        }
        if (s->bw.has_burst && run > s->bw.quota_usec) {
                s->stat.nr_bursts++;
                s->stat.burst_usec += run - s->bw.quota_usec;
        }
        s->stat.usage_usec += run;
        s->backlog -= run;
        s->runtime -= run;
        s->now_usec += s->period_usec;
}

/* What the daemon does with a decision: write what changed, in kernel order. */
static void sim_apply(struct sim *s, const struct bw_decision *d) {
        bool q = d->target.quota_usec != s->bw.quota_usec;
        bool b = s->bw.has_burst && d->target.burst_usec != s->bw.burst_usec;

        assert_true(d->target.burst_usec <= d->target.quota_usec || !s->bw.has_burst);
        if (!q && !b)
                s->identical_writes++;
        s->bw.quota_usec = d->target.quota_usec;
        if (s->bw.has_burst)
                s->bw.burst_usec = d->target.burst_usec;
        if (q) {
                s->writes++;
                sim_refill(s);
        }
        if (b) {
                s->writes++;
                sim_refill(s);
        }
}

static struct bw_policy_input sim_input(const struct sim *s) {
        return (struct bw_policy_input) {
                .now_usec = s->now_usec,
                .stat = s->stat,
                .has_psi = s->has_psi,
                .psi = { .has_full = s->has_psi, .full.total_usec = s->full_usec },
                .current = s->bw,
        };
}

/* Demand models: CPU-µs arriving in one period. */
enum demand {
        DEMAND_IDLE,
        DEMAND_CONST,           /* level per second */
        DEMAND_JITTER,          /* uniform [0, 2 x level] */
        DEMAND_BURSTY,          /* Binomial(9, 1/2) bursts of level/4.5 per second's share: mean = level */
        DEMAND_OVERLOAD,        /* constant, meant for 3 x baseline */
};

static uint64_t demand(struct sim *s, enum demand kind, uint64_t level_rate) {
        uint64_t per = level_rate * s->period_usec / USEC_PER_SEC, k = 0;

        switch (kind) {
        case DEMAND_IDLE:
                return 0;
        case DEMAND_CONST:
        case DEMAND_OVERLOAD:
                return per;
        case DEMAND_JITTER:
                return rnd_below(&s->rng, 2 * per + 1);
        case DEMAND_BURSTY:
                for (int i = 0; i < 9; i++)
                        k += rnd(&s->rng) >> 63;
                return k * per * 2 / 9;
        }
        return 0;
}

struct run {
        const struct bw_policy_params *p;
        struct bw_policy_state st;
        struct sim sim;
        struct bw_decision d;
        uint64_t changes;
        uint64_t would_changes;
        uint64_t *usage_at;     /* cumulative usage at each period boundary, optional */
        size_t n_usage;
        size_t cap_usage;
        unsigned shed_permille;
        bool host_over_limit;
};

static void run_init(struct run *r, const struct bw_policy_params *p, unsigned threads, uint64_t seed) {
        *r = (struct run) { .p = p };
        bw_policy_state_init(&r->st, p, p->credit_max_usec);
        sim_init(&r->sim, &p->baseline, p->ncpus, threads, seed);
}

/* One tick: interval worth of periods, then one decision, applied unless
 * the mode is observe (change is false then anyway). */
static void run_tick(struct run *r, enum demand kind, uint64_t level_rate) {
        uint64_t n = r->p->interval_usec / r->sim.period_usec;
        struct bw_policy_input in;

        for (uint64_t i = 0; i < n; i++) {
                sim_period(&r->sim, demand(&r->sim, kind, level_rate));
                if (r->usage_at && r->n_usage < r->cap_usage)
                        r->usage_at[r->n_usage++] = r->sim.stat.usage_usec;
        }
        in = sim_input(&r->sim);
        in.shed_permille = r->shed_permille;
        in.host_over_limit = r->host_over_limit;
        assert_int_equal(bw_policy_decide(r->p, &r->st, &in, &r->d), 0);
        assert_true(r->d.change == (r->d.would_change && r->p->mode != BW_MODE_OBSERVE));
        if (r->d.would_change)
                r->would_changes++;
        if (r->d.change) {
                r->changes++;
                sim_apply(&r->sim, &r->d);
        }
}

static void run_ticks(struct run *r, unsigned n, enum demand kind, uint64_t level_rate) {
        for (unsigned i = 0; i < n; i++)
                run_tick(r, kind, level_rate);
}

/* Baseline 0.5 CPU in 100 ms periods on 2 CPUs, the default targets. */
static struct bw_policy_params default_params(enum bw_mode mode) {
        return (struct bw_policy_params) {
                .mode = mode,
                .baseline = { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = true },
                .quota_max_usec = 100000,
                .burst_max_usec = 0,
                .credit_max_usec = 30 * USEC_PER_SEC,
                .target_throttle = 10000,
                .target_pressure = 50000,
                .hold_off_usec = 2 * USEC_PER_SEC,
                .interval_usec = USEC_PER_SEC,
                .ncpus = 2,
                .kernel_has_burst = true,
        };
}

static bool is_baseline(const struct bw_policy_params *p, const struct bw_bandwidth *bw) {
        return bw->quota_usec == p->baseline.quota_usec &&
                bw->period_usec == p->baseline.period_usec &&
                (!bw->has_burst || bw->burst_usec == p->baseline.burst_usec);
}

/* ---------------------------------------------------------------------- */

static void test_rule_names(void **state) {
        for (int i = 0; i < _BW_RULE_MAX; i++) {
                const char *s = bw_rule_to_string((enum bw_rule) i);

                assert_non_null(s);
                assert_int_equal(bw_rule_from_string(s), i);
                for (int j = 0; j < i; j++)
                        assert_string_not_equal(s, bw_rule_to_string((enum bw_rule) j));
        }
        assert_null(bw_rule_to_string(_BW_RULE_MAX));
        assert_null(bw_rule_to_string(_BW_RULE_INVALID));
        assert_int_equal(bw_rule_from_string("nope"), _BW_RULE_INVALID);
        assert_int_equal(bw_rule_from_string(NULL), _BW_RULE_INVALID);
        assert_string_equal(bw_rule_to_string(BW_RULE_RAISE_THROTTLE), "raise-throttle");
        assert_string_equal(bw_rule_to_string(BW_RULE_CREDIT_EXHAUSTED), "credit-exhausted");
}

static void test_params_check(void **state) {
        static const struct {
                uint64_t quota, period, burst;
                bool has_burst;
                uint64_t interval;
                int mode;
                int ret;
        } table[] = {
                { 50000, 100000, 0, true, USEC_PER_SEC, BW_MODE_ELASTIC, 0 },
                { BW_QUOTA_MAX, 100000, 0, false, USEC_PER_SEC, BW_MODE_ELASTIC, 0 },
                { 999, 100000, 0, false, USEC_PER_SEC, BW_MODE_ELASTIC, -EINVAL },
                { 50000, 999, 0, false, USEC_PER_SEC, BW_MODE_ELASTIC, -EINVAL },
                { 50000, 1000001, 0, false, USEC_PER_SEC, BW_MODE_ELASTIC, -EINVAL },
                { 50000, 100000, 50001, true, USEC_PER_SEC, BW_MODE_ELASTIC, -EINVAL },
                { 50000, 100000, 0, true, 0, BW_MODE_ELASTIC, -EINVAL },
                { 50000, 100000, 0, true, USEC_PER_SEC, _BW_MODE_MAX, -EINVAL },
                { 50000, 100000, 0, true, USEC_PER_SEC, -1, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                struct bw_policy_params p = default_params(BW_MODE_ELASTIC);

                p.baseline = (struct bw_bandwidth) {
                        .quota_usec = table[i].quota, .period_usec = table[i].period,
                        .burst_usec = table[i].burst, .has_burst = table[i].has_burst,
                };
                p.interval_usec = table[i].interval;
                p.mode = (enum bw_mode) table[i].mode;
                assert_int_equal(bw_policy_params_check(&p), table[i].ret);
        }
        assert_int_equal(bw_policy_params_check(NULL), -EINVAL);
}

static void test_limits(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_bandwidth cur = p.baseline;

        assert_int_equal(bw_policy_quota_limit_usec(&p), 100000);
        assert_int_equal(bw_policy_contract_burst_usec(&p), 50000);     /* default: up to the baseline quota */

        p.quota_max_usec = 1000000;                                     /* capped at 2 CPUs x 100 ms */
        assert_int_equal(bw_policy_quota_limit_usec(&p), 200000);
        p.quota_max_usec = 10000;                                       /* below baseline: baseline */
        assert_int_equal(bw_policy_quota_limit_usec(&p), 50000);

        p = default_params(BW_MODE_BURST);
        assert_int_equal(bw_policy_quota_limit_usec(&p), 50000);
        p.burst_max_usec = 20000;
        assert_int_equal(bw_policy_contract_burst_usec(&p), 20000);
        p.kernel_has_burst = false;
        assert_int_equal(bw_policy_contract_burst_usec(&p), 0);

        p = default_params(BW_MODE_ELASTIC);
        p.burst_max_usec = 80000;                                       /* explicit: may exceed the baseline quota */
        assert_int_equal(bw_policy_contract_burst_usec(&p), 80000);

        cur.quota_usec = 75000;
        assert_int_equal(bw_policy_boost_rate(&p, &cur), 250000);
        cur.quota_usec = 40000;
        assert_int_equal(bw_policy_boost_rate(&p, &cur), 0);
        cur.quota_usec = BW_QUOTA_MAX;
        assert_int_equal(bw_policy_boost_rate(&p, &cur), 0);
}

static void test_state_init(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;

        bw_policy_state_init(&s, &p, 5 * USEC_PER_SEC);
        assert_int_equal(s.credit_usec, 5 * USEC_PER_SEC);
        assert_false(s.primed);
        bw_policy_state_init(&s, &p, 100 * USEC_PER_SEC);
        assert_int_equal(s.credit_usec, p.credit_max_usec);
}

static void test_invalid_input(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s, copy;
        struct bw_policy_input in = { .now_usec = 1, .current = p.baseline };
        struct bw_decision d = { .rule = BW_RULE_DECAY };

        bw_policy_state_init(&s, &p, 0);
        copy = s;
        in.current.period_usec = 0;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), -EINVAL);
        p.interval_usec = 0;
        in.current.period_usec = 100000;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), -EINVAL);
        assert_memory_equal(&s, &copy, sizeof(s));
        assert_int_equal(d.rule, BW_RULE_DECAY);
}

/* First sample primes, a sample 10 ms later is too soon, counters going
 * backwards re-prime: none of them decides anything. */
static void test_prime_reset(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct run r;
        struct bw_policy_input in;

        run_init(&r, &p, 4, 1);
        run_tick(&r, DEMAND_OVERLOAD, 1500000);
        assert_int_equal(r.d.rule, BW_RULE_PRIME);
        assert_false(r.d.would_change);

        /* too soon */
        in = sim_input(&r.sim);
        in.now_usec += 10 * USEC_PER_MSEC;
        in.stat.throttled_usec += 5000;
        assert_int_equal(bw_policy_decide(&p, &r.st, &in, &r.d), 0);
        assert_int_equal(r.d.rule, BW_RULE_TOO_SOON);
        assert_false(r.d.change);

        /* heavy throttling, but the cgroup was recreated: counters restart */
        run_ticks(&r, 1, DEMAND_OVERLOAD, 1500000);
        assert_true(r.d.change);                /* sanity: this load does raise */
        r.sim.stat.usage_usec = 0;
        r.sim.stat.throttled_usec = 0;
        r.sim.stat.nr_periods = 0;
        r.sim.stat.nr_throttled = 0;
        r.sim.full_usec = 0;
        r.st.has_changed = false;               /* take hold-off out of the picture */
        run_tick(&r, DEMAND_OVERLOAD, 1500000);
        assert_int_equal(r.d.rule, BW_RULE_RESET);
        assert_false(r.d.would_change);
        assert_int_equal(r.d.dt_usec, 0);

        /* only PSI going backwards is a reset too */
        run_tick(&r, DEMAND_OVERLOAD, 1500000);
        assert_int_not_equal(r.d.rule, BW_RULE_RESET);
        r.sim.full_usec = 0;
        run_tick(&r, DEMAND_OVERLOAD, 1500000);
        assert_int_equal(r.d.rule, BW_RULE_RESET);

        /* time not moving forward */
        in = sim_input(&r.sim);
        assert_int_equal(bw_policy_decide(&p, &r.st, &in, &r.d), 0);
        assert_int_equal(r.d.rule, BW_RULE_RESET);
}

/* Throttling raises quota or burst at the first tick that sees it. */
static void test_raise_within_one_tick(void **state) {
        static const struct {
                enum bw_mode mode;
                bool kernel_burst;
                enum demand kind;
                uint64_t level;
                enum bw_rule rule;
                bool quota_up, burst_up;
        } table[] = {
                { BW_MODE_ELASTIC, true,  DEMAND_OVERLOAD, 1500000, BW_RULE_RAISE_THROTTLE, true,  false },
                { BW_MODE_ELASTIC, false, DEMAND_OVERLOAD, 1500000, BW_RULE_RAISE_THROTTLE, true,  false },
                { BW_MODE_ELASTIC, true,  DEMAND_BURSTY,    400000, BW_RULE_RAISE_THROTTLE, true,  true  },
                { BW_MODE_BURST,   true,  DEMAND_BURSTY,    450000, BW_RULE_RAISE_BURST,    false, true  },
                { BW_MODE_BURST,   true,  DEMAND_OVERLOAD, 1500000, BW_RULE_RAISE_BURST,    false, true  },
                { BW_MODE_BURST,   false, DEMAND_OVERLOAD, 1500000, BW_RULE_AT_LIMIT,       false, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                struct bw_policy_params p = default_params(table[i].mode);
                struct run r;

                p.kernel_has_burst = table[i].kernel_burst;
                p.baseline.has_burst = table[i].kernel_burst;
                run_init(&r, &p, 4, 7);
                run_tick(&r, table[i].kind, table[i].level);    /* prime */
                run_tick(&r, table[i].kind, table[i].level);
                assert_true(r.d.throttle_rate > p.target_throttle);
                assert_int_equal(r.d.rule, table[i].rule);
                assert_int_equal(r.d.target.quota_usec > p.baseline.quota_usec, table[i].quota_up);
                assert_int_equal(r.d.target.burst_usec > p.baseline.burst_usec, table[i].burst_up);
                assert_int_equal(r.d.change, table[i].quota_up || table[i].burst_up);
                assert_true(r.d.target.quota_usec <= bw_policy_quota_limit_usec(&p));
                assert_true(r.d.target.burst_usec <= r.d.target.quota_usec);
        }
}

/* 3 x baseline throttles ~2/3 of wall time: the first step goes straight to
 * the x2 cap; a mild throttle takes a graded step, at least +5 %. */
static void test_graded_steps(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;
        struct bw_policy_input in = {
                .now_usec = 10 * USEC_PER_SEC,
                .stat = { .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED | BW_CPUSTAT_THROTTLED },
                .current = p.baseline,
        };
        struct bw_decision d;
        static const struct { uint64_t throttled, quota; } table[] = {
                { 15000,   53000 },     /* 1.5 % of wall time on 2 CPUs: +5 % floor (52.5 ms -> grid) */
                { 200000,  62000 },     /* f = 10 %: x(1 + 2 * 0.1/0.9) = 1.222 -> 61.1 ms, grid up */
                { 800000, 100000 },     /* f = 40 %: x2.33 capped at x2 */
                { 2000000, 100000 },
        };

        p.quota_max_usec = 200000;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                struct bw_policy_input in2 = in;

                bw_policy_state_init(&s, &p, p.credit_max_usec);
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                in2.now_usec += USEC_PER_SEC;
                in2.stat.usage_usec += 500000;
                in2.stat.nr_periods += 10;
                in2.stat.nr_throttled += 10;
                in2.stat.throttled_usec += table[i].throttled;
                assert_int_equal(bw_policy_decide(&p, &s, &in2, &d), 0);
                assert_int_equal(d.rule, BW_RULE_RAISE_THROTTLE);
                assert_int_equal(d.target.quota_usec, table[i].quota);
                assert_true(d.change);
        }
}

/* PSI full above target raises only together with some throttling: full
 * pressure alone is contention with other groups. */
static void test_pressure(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        static const struct { uint64_t full, throttled; enum bw_rule rule; } table[] = {
                { 300000, 0,    BW_RULE_STEADY },
                { 300000, 2000, BW_RULE_RAISE_PRESSURE },       /* throttled 2 ms/s: under target, but evidence */
                { 40000,  2000, BW_RULE_STEADY },               /* both under target */
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                struct bw_policy_state s;
                struct bw_decision d;
                struct bw_policy_input in = {
                        .now_usec = 10 * USEC_PER_SEC,
                        .stat = { .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED | BW_CPUSTAT_THROTTLED },
                        .has_psi = true,
                        .psi = { .has_full = true },
                        .current = p.baseline,
                };

                bw_policy_state_init(&s, &p, p.credit_max_usec);
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                in.now_usec += USEC_PER_SEC;
                in.stat.usage_usec += 400000;
                in.stat.throttled_usec += table[i].throttled;
                in.psi.full.total_usec += table[i].full;
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                assert_int_equal(d.rule, table[i].rule);
                assert_int_equal(d.pressure_rate, table[i].full);
                assert_int_equal(d.change, table[i].rule == BW_RULE_RAISE_PRESSURE);
                if (d.change)
                        assert_true(d.target.quota_usec > p.baseline.quota_usec);
        }
}

/* Overload boosts quota and burst; idle brings both back to exactly the
 * baseline within two minutes, then nothing more is written. */
static void test_idle_decays_to_baseline(void **state) {
        static const enum bw_mode modes[] = { BW_MODE_ELASTIC, BW_MODE_BURST };

        for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                struct bw_policy_params p = default_params(modes[m]);
                struct run r;
                unsigned t;
                uint64_t changes;

                p.baseline.burst_usec = 3000;           /* an odd baseline burst must come back exactly */
                p.baseline.quota_usec = 50500;          /* and an off-grid quota */
                run_init(&r, &p, 4, 3);
                run_ticks(&r, 20, DEMAND_OVERLOAD, 1500000);
                assert_false(is_baseline(&p, &r.sim.bw));
                if (modes[m] == BW_MODE_ELASTIC)
                        assert_int_equal(r.sim.bw.quota_usec, 100000);
                assert_true(r.sim.bw.burst_usec > 3000);
                r.sim.backlog = 0;              /* the overload's queued work is dropped: now idle */

                for (t = 0; t < 120 && !is_baseline(&p, &r.sim.bw); t++)
                        run_tick(&r, DEMAND_IDLE, 0);
                assert_true(is_baseline(&p, &r.sim.bw));
                assert_int_equal(r.sim.bw.quota_usec, 50500);
                assert_int_equal(r.sim.bw.burst_usec, 3000);
                assert_int_equal(r.d.rule, BW_RULE_DECAY);

                changes = r.changes;
                run_ticks(&r, 300, DEMAND_IDLE, 0);
                assert_int_equal(r.changes, changes);
                assert_int_equal(r.sim.identical_writes, 0);
        }
}

/* Sustained overload spends the credit and lands on exactly the baseline
 * (credit-exhausted); no raise until a quarter of CreditMax is back. */
static void test_credit_exhausted(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct run r;
        bool exhausted = false, limited = false;
        unsigned t;

        p.credit_max_usec = 5 * USEC_PER_SEC;
        run_init(&r, &p, 4, 5);
        for (t = 0; t < 60; t++) {
                run_tick(&r, DEMAND_OVERLOAD, 1500000);
                if (r.d.rule == BW_RULE_CREDIT_LIMIT) {
                        limited = true;
                        assert_true(r.d.emergency);
                        assert_true(r.d.change);
                }
                if (r.d.rule == BW_RULE_CREDIT_EXHAUSTED && r.d.change) {
                        exhausted = true;
                        assert_true(r.d.emergency);
                        assert_int_equal(r.d.target.quota_usec, p.baseline.quota_usec);
                }
        }
        assert_true(limited);
        assert_true(exhausted);
        assert_true(r.st.credit_exhausted);
        assert_int_equal(r.sim.bw.quota_usec, p.baseline.quota_usec);
        assert_int_equal(r.d.rule, BW_RULE_CREDIT_EXHAUSTED);
        assert_false(r.d.change);

        /* A little slack refills a little credit: still no raise. */
        r.sim.backlog = 0;
        run_ticks(&r, 5, DEMAND_CONST, 400000);        /* +0.1 CPU-s/s -> 0.5 s < 1.25 s */
        run_ticks(&r, 3, DEMAND_OVERLOAD, 1500000);
        assert_int_equal(r.sim.bw.quota_usec, p.baseline.quota_usec);
        assert_int_equal(r.d.rule, BW_RULE_CREDIT_EXHAUSTED);

        /* Idle refills; throttling raises again. */
        r.sim.backlog = 0;
        run_ticks(&r, 10, DEMAND_IDLE, 0);
        assert_false(r.st.credit_exhausted);
        run_ticks(&r, 2, DEMAND_OVERLOAD, 1500000);
        assert_true(r.sim.bw.quota_usec > p.baseline.quota_usec);
}

/* max over windows [i, j) of usage - baseline * t, from cumulative usage at
 * each period boundary (index 0 = start). */
static uint64_t max_excess(const uint64_t *usage_at, size_t n, uint64_t quota, uint64_t period) {
        int64_t best = 0, min_v = 0;

        for (size_t j = 1; j <= n; j++) {
                int64_t v = (int64_t) usage_at[j - 1] - (int64_t) (quota * j);

                if (v - min_v > best)
                        best = v - min_v;
                if (v < min_v)
                        min_v = v;
        }
        (void) period;
        return (uint64_t) best;
}

/* The contract: over every window of t,
 *   usage <= baseline * t + CreditMax + burst,
 * under 3 x overload for 120 s and other hostile loads, for several shapes. */
static void test_contract(void **state) {
        static const struct {
                uint64_t quota, period, quota_max, burst_max, credit_max;
                bool kernel_burst;
                unsigned ncpus, threads;
                enum demand kind;
                uint64_t level;         /* in units of the baseline rate, x1000 */
                enum bw_mode mode;
        } table[] = {
                { 50000, 100000, 100000, 0, 10000000, true, 2, 4, DEMAND_OVERLOAD, 3000, BW_MODE_ELASTIC },
                { 50000, 100000, 100000, 0, 30000000, true, 2, 4, DEMAND_OVERLOAD, 3000, BW_MODE_ELASTIC },
                { 50000, 100000, 200000, 0, 2000000,  true, 2, 4, DEMAND_OVERLOAD, 3000, BW_MODE_ELASTIC },
                { 10000, 20000,  40000,  0, 5000000,  true, 4, 8, DEMAND_OVERLOAD, 3000, BW_MODE_ELASTIC },
                { 50000, 100000, 100000, 0, 10000000, false, 2, 4, DEMAND_OVERLOAD, 3000, BW_MODE_ELASTIC },
                { 50000, 100000, 100000, 0, 0,        true, 2, 4, DEMAND_OVERLOAD, 3000, BW_MODE_ELASTIC },
                { 50000, 100000, 100000, 0, 10000000, true, 2, 4, DEMAND_OVERLOAD, 3000, BW_MODE_BURST },
                { 50000, 100000, 100000, 0, 3000000,  true, 2, 4, DEMAND_BURSTY,   1800, BW_MODE_ELASTIC },
                { 50000, 100000, 100000, 0, 3000000,  true, 2, 4, DEMAND_JITTER,   1500, BW_MODE_ELASTIC },
                { 250000, 250000, 500000, 100000, 4000000, true, 2, 2, DEMAND_OVERLOAD, 3000, BW_MODE_ELASTIC },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                struct bw_policy_params p = default_params(table[i].mode);
                uint64_t usage_at[120 * 50 + 1], bound, excess, rate;
                struct run r;

                p.baseline = (struct bw_bandwidth) {
                        .quota_usec = table[i].quota, .period_usec = table[i].period,
                        .has_burst = table[i].kernel_burst,
                };
                p.quota_max_usec = table[i].quota_max;
                p.burst_max_usec = table[i].burst_max;
                p.credit_max_usec = table[i].credit_max;
                p.kernel_has_burst = table[i].kernel_burst;
                p.ncpus = table[i].ncpus;
                assert_int_equal(bw_policy_params_check(&p), 0);

                run_init(&r, &p, table[i].threads, 11 + i);
                r.usage_at = usage_at;
                r.cap_usage = ELEMENTSOF(usage_at);
                rate = table[i].quota * USEC_PER_SEC / table[i].period * table[i].level / 1000;
                run_ticks(&r, 120, table[i].kind, rate);

                bound = p.credit_max_usec + bw_policy_contract_burst_usec(&p);
                excess = max_excess(usage_at, r.n_usage, table[i].quota, table[i].period);
                print_message("# contract case %zu: max excess %" PRIu64 " us <= bound %" PRIu64 " us, %" PRIu64 " writes\n",
                              i, excess, bound, r.sim.writes);
                if (excess > bound)
                        fail_msg("case %zu: usage exceeded baseline * t by %" PRIu64 " > %" PRIu64,
                                 i, excess, bound);
                /* and the boost was actually used: it is not vacuous */
                if (table[i].mode == BW_MODE_ELASTIC && table[i].credit_max >= 2000000)
                        assert_true(excess > table[i].credit_max / 2);
                assert_int_equal(r.sim.identical_writes, 0);
        }
}

/* Property: over random loads, modes, shedding and host pressure, every
 * decision keeps burst <= quota, quota within [baseline, limit], burst within
 * the contract, a 1 ms grid, and change == (target != current). */
static void test_random_invariants(void **state) {
        static const uint64_t periods[] = { 10000, 20000, 100000, 250000 };
        uint64_t seed = 0x5eed;

        for (unsigned round = 0; round < 40; round++) {
                struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
                struct run r;
                uint64_t period = periods[rnd_below(&seed, ELEMENTSOF(periods))];
                uint64_t qlim, bc;

                p.mode = rnd_below(&seed, 4) == 0 ? BW_MODE_BURST : BW_MODE_ELASTIC;
                p.baseline.period_usec = period;
                p.baseline.quota_usec = 1000 + rnd_below(&seed, period * 2);
                p.kernel_has_burst = rnd_below(&seed, 5) != 0;
                p.baseline.has_burst = p.kernel_has_burst;
                p.baseline.burst_usec = p.kernel_has_burst ? rnd_below(&seed, p.baseline.quota_usec / 2) : 0;
                p.quota_max_usec = p.baseline.quota_usec + rnd_below(&seed, p.baseline.quota_usec * 3);
                p.burst_max_usec = rnd_below(&seed, 2) ? 0 : rnd_below(&seed, p.baseline.quota_usec * 2) + 1;
                p.credit_max_usec = rnd_below(&seed, 20 * USEC_PER_SEC);
                p.hold_off_usec = rnd_below(&seed, 4) * USEC_PER_SEC;
                p.target_throttle = rnd_below(&seed, 50000);
                assert_int_equal(bw_policy_params_check(&p), 0);
                qlim = bw_policy_quota_limit_usec(&p);
                bc = bw_policy_contract_burst_usec(&p);

                run_init(&r, &p, 1 + (unsigned) rnd_below(&seed, 6), rnd(&seed));
                r.sim.has_psi = rnd_below(&seed, 3) != 0;
                for (unsigned step = 0; step < 150; step++) {
                        enum demand kind = (enum demand) rnd_below(&seed, 5);
                        uint64_t level = rnd_below(&seed, 3 * p.baseline.quota_usec * USEC_PER_SEC / period);
                        struct bw_bandwidth before = r.sim.bw;
                        const struct bw_decision *d = &r.d;

                        r.shed_permille = rnd_below(&seed, 8) == 0 ? (unsigned) rnd_below(&seed, 501) : 0;
                        r.host_over_limit = r.shed_permille > 0 || rnd_below(&seed, 10) == 0;
                        run_tick(&r, kind, level);

                        assert_true(d->target.period_usec == period);
                        assert_true(d->target.quota_usec >= p.baseline.quota_usec);
                        assert_true(d->target.quota_usec <= qlim);
                        assert_true(d->target.quota_usec == p.baseline.quota_usec ||
                                    d->target.quota_usec == qlim ||
                                    (d->target.quota_usec - p.baseline.quota_usec) % 1000 == 0);
                        if (p.kernel_has_burst) {
                                assert_true(d->target.burst_usec <= d->target.quota_usec);
                                assert_true(d->target.burst_usec <= bc || d->target.burst_usec == p.baseline.burst_usec);
                        }
                        assert_int_equal(d->would_change,
                                         d->target.quota_usec != before.quota_usec ||
                                         (p.kernel_has_burst && d->target.burst_usec != before.burst_usec));
                        if (d->change && d->target.quota_usec > before.quota_usec)
                                assert_false(r.host_over_limit);
                        if (r.shed_permille > 0 && before.quota_usec > p.baseline.quota_usec && d->rule != BW_RULE_PRIME &&
                            d->rule != BW_RULE_TOO_SOON && d->rule != BW_RULE_RESET)
                                assert_true(d->target.quota_usec < before.quota_usec);
                        assert_true(r.st.credit_usec <= p.credit_max_usec);
                        assert_true(strlen(d->explain) > 0);
                        if (p.mode == BW_MODE_BURST)
                                assert_int_equal(d->target.quota_usec, p.baseline.quota_usec);
                }
                assert_int_equal(r.sim.identical_writes, 0);
        }
}

/* Steady load under the quota: nothing is ever written. A jittery one that
 * sometimes exceeds the quota settles, then stays put. */
static void test_steady(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct run r;
        uint64_t settled;

        run_init(&r, &p, 4, 21);
        run_ticks(&r, 600, DEMAND_CONST, 400000);
        assert_int_equal(r.changes, 0);
        assert_int_equal(r.sim.throttled_periods, 0);

        run_init(&r, &p, 4, 22);
        run_ticks(&r, 120, DEMAND_JITTER, 300000);
        settled = r.changes;
        run_ticks(&r, 60, DEMAND_JITTER, 300000);
        assert_int_equal(r.changes, settled);
        run_ticks(&r, 600, DEMAND_JITTER, 300000);
        assert_true(r.changes - settled <= 10);          /* <= 1 per minute */

        /* bursty at 90 % of the quota: throttling nearly gone, few writes */
        run_init(&r, &p, 4, 23);
        run_ticks(&r, 120, DEMAND_BURSTY, 450000);
        settled = r.changes;
        assert_true(settled <= 4);
        run_ticks(&r, 600, DEMAND_BURSTY, 450000);
        assert_true(r.changes - settled <= 10);
        assert_int_equal(r.sim.identical_writes, 0);
}

/* The point of it all: a bursty load averaging 90 % of its quota. Static
 * throttles several % of periods; static + burst = quota still some;
 * elastic at least ten times less than static and less than burst. */
static void test_bursty_benefit(void **state) {
        static const enum bw_mode modes[] = { BW_MODE_OFF, BW_MODE_OFF, BW_MODE_BURST, BW_MODE_ELASTIC };
        uint64_t share[ELEMENTSOF(modes)];

        for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                struct bw_policy_params p = default_params(modes[m]);
                struct run r;

                if (m == 1) {
                        p.baseline.burst_usec = p.baseline.quota_usec;  /* static + burst = quota */
                }
                run_init(&r, &p, 4, 99);
                run_ticks(&r, 600, DEMAND_BURSTY, 450000);
                share[m] = r.sim.throttled_periods * 100000 / r.sim.periods;   /* per 100000 */
                assert_int_equal(r.sim.identical_writes, 0);
                if (modes[m] == BW_MODE_OFF)
                        assert_int_equal(r.changes, 0);
                print_message("# mode %zu: throttled %" PRIu64 "/100000 periods, %" PRIu64 " writes\n",
                              m, share[m], r.sim.writes);
        }
        assert_true(share[0] > 0);
        assert_true(share[3] * 10 <= share[0]);
        assert_true(share[3] < share[1]);
        assert_true(share[3] < share[2]);
        assert_true(share[3] < 1000);                   /* < 1 % */
}

/* After a change, nothing but an emergency changes for hold_off_usec. */
static void test_hold_off(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct run r;
        uint64_t t_change;

        p.quota_max_usec = 200000;
        p.hold_off_usec = 3 * USEC_PER_SEC;
        run_init(&r, &p, 2, 31);
        run_tick(&r, DEMAND_OVERLOAD, 1900000);
        run_tick(&r, DEMAND_OVERLOAD, 1900000);
        assert_true(r.d.change);
        assert_int_equal(r.sim.bw.quota_usec, 100000);
        t_change = r.sim.now_usec;

        /* still throttled (1.9 CPU demand vs 1 CPU quota), but held */
        run_tick(&r, DEMAND_OVERLOAD, 1900000);
        assert_int_equal(r.d.rule, BW_RULE_HOLD);
        assert_false(r.d.would_change);
        run_tick(&r, DEMAND_OVERLOAD, 1900000);
        assert_int_equal(r.d.rule, BW_RULE_HOLD);
        assert_true(r.sim.now_usec - t_change < p.hold_off_usec);

        /* shedding is an emergency: applied inside the hold-off */
        run_tick(&r, DEMAND_OVERLOAD, 1900000);
        assert_true(r.sim.now_usec - t_change >= p.hold_off_usec);
        assert_true(r.d.change);                        /* hold-off over: raised again */
        assert_true(r.sim.bw.quota_usec > 100000);
        t_change = r.sim.now_usec;
        r.shed_permille = 500;
        r.host_over_limit = true;
        run_tick(&r, DEMAND_OVERLOAD, 1900000);
        assert_true(r.sim.now_usec - t_change < p.hold_off_usec);
        assert_int_equal(r.d.rule, BW_RULE_HOST_SHED);
        assert_true(r.d.emergency);
        assert_true(r.d.change);
}

static struct bw_policy_input synthetic(const struct bw_policy_params *p, uint64_t t_sec, uint64_t quota, uint64_t burst,
                                        uint64_t usage, uint64_t throttled) {
        return (struct bw_policy_input) {
                .now_usec = t_sec * USEC_PER_SEC,
                .stat = {
                        .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED |
                                BW_CPUSTAT_THROTTLED | BW_CPUSTAT_NR_BURSTS | BW_CPUSTAT_BURST,
                        .usage_usec = usage,
                        .throttled_usec = throttled,
                        .nr_throttled = throttled / 1000,
                },
                .current = { .quota_usec = quota, .period_usec = p->baseline.period_usec,
                             .burst_usec = burst, .has_burst = true },
        };
}

/* Changes under 5 % are suppressed, except an exact return to baseline. */
static void test_dead_band(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;
        struct bw_policy_input in;
        struct bw_decision d;
        uint64_t t, usage = 0;

        /* throttled 2 ms below the limit: the raise to the limit is 2 %. */
        bw_policy_state_init(&s, &p, p.credit_max_usec);
        in = synthetic(&p, 100, 98000, 0, 0, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        in = synthetic(&p, 101, 98000, 50000, 980000, 400000);
        in.current.burst_usec = 98000;                  /* and burst at its cap (98 > 50: clamp) */
        p.burst_max_usec = 98000;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_DEADBAND);
        assert_false(d.would_change);
        p.burst_max_usec = 0;

        /* idle at 1 ms above an off-grid baseline: returns exactly. */
        p.baseline.quota_usec = 50500;
        bw_policy_state_init(&s, &p, p.credit_max_usec);
        for (t = 200; t < 320; t++) {
                in = synthetic(&p, t, 51500, 0, usage, 0);
                usage += 1000;
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                if (d.change)
                        break;
        }
        assert_true(d.change);
        assert_int_equal(d.rule, BW_RULE_DECAY);
        assert_int_equal(d.target.quota_usec, 50500);

        /* a floor 4 % under the quota does not lower it */
        p.baseline.quota_usec = 50000;
        p.credit_max_usec = 1000 * USEC_PER_SEC;
        bw_policy_state_init(&s, &p, p.credit_max_usec);
        usage = 0;
        for (t = 400; t < 600; t++) {
                in = synthetic(&p, t, 80000, 0, usage, 0);
                usage += 614400;                        /* x1.25 = 76.8 ms: 4 % under the quota */
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                assert_false(d.would_change);
        }
}

/* Observe computes what elastic would do, and never changes anything. */
static void test_observe(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_OBSERVE);
        struct run r;
        bool raised = false;

        run_init(&r, &p, 4, 41);
        for (unsigned t = 0; t < 200; t++) {
                run_tick(&r, t < 100 ? DEMAND_OVERLOAD : DEMAND_BURSTY, t < 100 ? 1500000 : 450000);
                assert_false(r.d.change);
                if (r.d.rule == BW_RULE_RAISE_THROTTLE) {
                        raised = true;
                        assert_true(r.d.would_change);
                        assert_true(r.d.target.quota_usec > p.baseline.quota_usec);
                }
        }
        assert_true(raised);
        assert_true(r.would_changes > 0);
        assert_int_equal(r.changes, 0);
        assert_int_equal(r.sim.writes, 0);
        assert_true(is_baseline(&p, &r.sim.bw));
}

/* Off restores the baseline; an unlimited baseline is left alone; a value
 * outside the limits is clamped at once. */
static void test_off_unlimited_clamp(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_OFF);
        struct bw_policy_state s;
        struct bw_policy_input in;
        struct bw_decision d;

        p.baseline.burst_usec = 7000;
        bw_policy_state_init(&s, &p, 0);
        in = synthetic(&p, 1, 90000, 20000, 0, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_MODE_OFF);
        assert_true(d.change);
        assert_int_equal(d.target.quota_usec, 50000);
        assert_int_equal(d.target.burst_usec, 7000);
        in = synthetic(&p, 2, 50000, 7000, 0, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_false(d.change);

        p = default_params(BW_MODE_ELASTIC);
        p.baseline.quota_usec = BW_QUOTA_MAX;
        bw_policy_state_init(&s, &p, 0);
        for (uint64_t t = 1; t < 4; t++) {
                in = synthetic(&p, t, BW_QUOTA_MAX, 0, t * 2000000, t * 1000000);
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                assert_int_equal(d.rule, BW_RULE_UNLIMITED);
                assert_false(d.change);
        }

        p = default_params(BW_MODE_ELASTIC);
        bw_policy_state_init(&s, &p, p.credit_max_usec);
        in = synthetic(&p, 1, 150000, 120000, 0, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_PRIME);                /* no decision without a rate */
        in = synthetic(&p, 2, 150000, 120000, 100000, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_CLAMP);
        assert_true(d.emergency);
        assert_int_equal(d.target.quota_usec, 100000);
        assert_int_equal(d.target.burst_usec, 50000);

        p = default_params(BW_MODE_BURST);                      /* mode burst: quota back to baseline */
        bw_policy_state_init(&s, &p, p.credit_max_usec);
        in = synthetic(&p, 1, 80000, 60000, 0, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        in = synthetic(&p, 2, 80000, 60000, 100000, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_CLAMP);
        assert_int_equal(d.target.quota_usec, 50000);
        assert_int_equal(d.target.burst_usec, 50000);
}

/* A boosted unit sheds the requested share of its boost at once; a throttled
 * unit does not raise while the host is over its limit. */
static void test_host(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;
        struct bw_policy_input in;
        struct bw_decision d;

        bw_policy_state_init(&s, &p, p.credit_max_usec);
        in = synthetic(&p, 1, 90000, 40000, 0, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        in = synthetic(&p, 2, 90000, 40000, 900000, 0);
        in.shed_permille = 500;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_HOST_SHED);
        assert_int_equal(d.target.quota_usec, 70000);           /* half of 40 ms boost */
        assert_int_equal(d.target.burst_usec, 20000);           /* half of the burst above baseline 0 */
        assert_true(d.emergency);

        bw_policy_state_init(&s, &p, p.credit_max_usec);
        in = synthetic(&p, 1, 50000, 0, 0, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        in = synthetic(&p, 2, 50000, 0, 500000, 500000);
        in.host_over_limit = true;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_HOST_HOLD);
        assert_false(d.would_change);
        in = synthetic(&p, 3, 50000, 0, 1000000, 1000000);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_RAISE_THROTTLE);
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

        assert_int_equal(bw_policy_plan_shed(NULL, 0, 0, 0, NULL), 0);
        assert_int_equal(bw_policy_plan_shed(NULL, 1, 0, 0, shed), -EINVAL);

        /* under the limit, or limit 0: nothing */
        assert_int_equal(bw_policy_plan_shed(units, ELEMENTSOF(units), limit, limit, shed), 0);
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                assert_int_equal(shed[i], 0);
        assert_int_equal(bw_policy_plan_shed(units, ELEMENTSOF(units), 900000, 0, shed), 0);
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                assert_int_equal(shed[i], 0);

        /* a small excess: 5 % of 1.4 CPU of boosts = 70000, from priority -5 only,
         * shared in proportion: 70000 / 800000 -> 88 permille each */
        assert_int_equal(bw_policy_plan_shed(units, ELEMENTSOF(units), 420000, limit, shed), 0);
        assert_int_equal(shed[1], 88);
        assert_int_equal(shed[3], 88);
        assert_int_equal(shed[0], 0);
        assert_int_equal(shed[2], 0);
        assert_int_equal(shed[4], 0);

        /* a large excess: at most half of everything, lowest first */
        assert_int_equal(bw_policy_plan_shed(units, ELEMENTSOF(units), 4000000, limit, shed), 0);
        assert_int_equal(shed[1], 500);
        assert_int_equal(shed[3], 500);
        assert_int_equal(shed[2], 500);
        assert_int_equal(shed[0], 500);
        assert_int_equal(shed[4], 0);

        /* monotone in the excess, lowest priority never behind a higher one, partial */
        for (uint64_t p = limit; p <= 1200000; p += 5000) {
                assert_int_equal(bw_policy_plan_shed(units, ELEMENTSOF(units), p, limit, shed), 0);
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

/* Without a usage counter there is no credit: elastic acts as burst. */
static void test_no_usage(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;
        struct bw_policy_input in;
        struct bw_decision d;

        bw_policy_state_init(&s, &p, p.credit_max_usec);
        in = synthetic(&p, 1, 50000, 0, 0, 0);
        in.stat.seen &= ~BW_CPUSTAT_USAGE;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        in = synthetic(&p, 2, 50000, 0, 0, 600000);
        in.stat.seen &= ~BW_CPUSTAT_USAGE;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_RAISE_BURST);
        assert_int_equal(d.target.quota_usec, 50000);
        assert_true(d.target.burst_usec > 0);
        assert_int_equal(s.credit_usec, p.credit_max_usec);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rule_names),
                cmocka_unit_test(test_params_check),
                cmocka_unit_test(test_limits),
                cmocka_unit_test(test_state_init),
                cmocka_unit_test(test_invalid_input),
                cmocka_unit_test(test_prime_reset),
                cmocka_unit_test(test_raise_within_one_tick),
                cmocka_unit_test(test_graded_steps),
                cmocka_unit_test(test_pressure),
                cmocka_unit_test(test_idle_decays_to_baseline),
                cmocka_unit_test(test_credit_exhausted),
                cmocka_unit_test(test_contract),
                cmocka_unit_test(test_random_invariants),
                cmocka_unit_test(test_steady),
                cmocka_unit_test(test_bursty_benefit),
                cmocka_unit_test(test_hold_off),
                cmocka_unit_test(test_dead_band),
                cmocka_unit_test(test_observe),
                cmocka_unit_test(test_off_unlimited_clamp),
                cmocka_unit_test(test_host),
                cmocka_unit_test(test_shed_plan),
                cmocka_unit_test(test_no_usage),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
