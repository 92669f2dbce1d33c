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

#include "bwgov/util/macro.h"
#include "bwgov/law/policy.h"


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
        uint64_t ticks;
        unsigned shed_permille;
        bool host_over_limit;
        uint64_t ancestor_quota_usec;
};

/* Adoption as the daemon does it: the resting target first, then the
 * first decision. */
static void run_init(struct run *r, const struct bw_policy_params *p, unsigned threads, uint64_t credit, uint64_t seed) {
        struct bw_bandwidth rest;

        *r = (struct run) { .p = p, .ancestor_quota_usec = BW_QUOTA_MAX };
        bw_policy_state_init(&r->st, p, credit, 0);
        sim_init(&r->sim, &p->baseline, p->ncpus, threads, seed);
        /* The simulated cgroup holds the kernel's burst 0 at adoption. */
        r->sim.bw.burst_usec = 0;
        assert_int_equal(bw_policy_rest_target(p, credit, true, &r->sim.bw, &rest), 0);
        if (rest.quota_usec != r->sim.bw.quota_usec || rest.burst_usec != r->sim.bw.burst_usec) {
                struct bw_decision d = { .target = rest };
                sim_apply(&r->sim, &d);
        }
}

static void run_decide(struct run *r);

/* ... and the first decision, which finds the resting target in place. */
static void run_init_primed(struct run *r, const struct bw_policy_params *p, unsigned threads, uint64_t credit,
                            uint64_t seed) {
        run_init(r, p, threads, credit, seed);
        run_decide(r);
        assert_true(r->d.rule == BW_RULE_PRIME || r->d.rule == BW_RULE_MODE_OFF);
        assert_false(r->d.change);
}

static void run_decide(struct run *r) {
        struct bw_policy_input in = sim_input(&r->sim);

        in.shed_permille = r->shed_permille;
        in.host_over_limit = r->host_over_limit;
        in.ancestor_quota_usec = r->ancestor_quota_usec;
        assert_int_equal(bw_policy_decide(r->p, &r->st, &in, &r->d), 0);
        assert_true(r->d.change == (r->d.would_change && r->p->mode != BW_MODE_OBSERVE));
        /* Never an identical write. */
        if (r->d.change)
                assert_true(r->d.target.quota_usec != r->sim.bw.quota_usec ||
                            r->d.target.burst_usec != r->sim.bw.burst_usec ||
                            r->d.target.period_usec != r->sim.bw.period_usec);
        if (r->d.change) {
                r->changes++;
                sim_apply(&r->sim, &r->d);
        }
        r->ticks++;
}

/* Advance to the next sample the law asked for (whole periods, at least
 * one), then decide. */
static void run_tick(struct run *r, enum demand kind, uint64_t level_rate) {
        uint64_t h = r->ticks == 0 || r->d.next_tick_usec == 0 ? r->p->interval_usec : r->d.next_tick_usec;
        uint64_t n = h / r->sim.period_usec;

        for (uint64_t i = 0; i < (n > 0 ? n : 1); i++)
                sim_period(&r->sim, demand(&r->sim, kind, level_rate));
        run_decide(r);
}

static void run_ticks(struct run *r, unsigned n, enum demand kind, uint64_t level_rate) {
        for (unsigned i = 0; i < n; i++)
                run_tick(r, kind, level_rate);
}

/* Run for about `secs` of simulated time. */
static void run_for(struct run *r, uint64_t secs, enum demand kind, uint64_t level_rate) {
        uint64_t end = r->sim.now_usec + secs * USEC_PER_SEC;

        while (r->sim.now_usec < end)
                run_tick(r, kind, level_rate);
}

/* Baseline 0.5 CPU in 100 ms periods on 2 CPUs, CPUQuotaMax= 150 %, 5 s of
 * credit, the resting burst = quota (as the daemon resolves it). */
static struct bw_policy_params default_params(enum bw_mode mode) {
        return (struct bw_policy_params) {
                .mode = mode,
                .baseline = { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true },
                .quota_max_usec = 150000,
                .burst_max_usec = 0,
                .credit_max_usec = 5 * USEC_PER_SEC,
                .target_throttle = 10000,
                .target_pressure = 50000,
                .hold_off_usec = 2 * USEC_PER_SEC,
                .interval_usec = USEC_PER_SEC,
                .active_interval_usec = 250 * USEC_PER_MSEC,
                .ncpus = 2,
                .kernel_has_burst = true,
        };
}

/* ---------------------------------------------------------------------- */

static void test_rule_names(void **state) {
        for (int i = 0; i < _BW_RULE_MAX; i++) {
                const char *s = bw_rule_to_string((enum bw_rule) i);

                assert_non_null(s);
                assert_non_null(bw_rule_description((enum bw_rule) i));
                assert_true(strlen(bw_rule_description((enum bw_rule) i)) > 0);
                assert_int_equal(bw_rule_from_string(s), i);
                for (int j = 0; j < i; j++)
                        assert_string_not_equal(s, bw_rule_to_string((enum bw_rule) j));
        }
        assert_null(bw_rule_to_string(_BW_RULE_MAX));
        assert_null(bw_rule_description(_BW_RULE_MAX));
        assert_null(bw_rule_description(_BW_RULE_INVALID));
        assert_null(bw_rule_to_string(_BW_RULE_INVALID));
        assert_int_equal(bw_rule_from_string("raise-throttle"), _BW_RULE_INVALID);
        assert_int_equal(bw_rule_from_string(NULL), _BW_RULE_INVALID);
        assert_string_equal(bw_rule_to_string(BW_RULE_HEADROOM_RAISE), "headroom-raise");
        assert_string_equal(bw_rule_to_string(BW_RULE_CREDIT_EXHAUSTED), "credit-exhausted");
}

static void test_params_check(void **state) {
        static const struct {
                uint64_t quota, period, burst, interval, active;
                int mode;
                int r;
        } cases[] = {
                { 50000, 100000, 50000, 1000000, 250000, BW_MODE_ELASTIC, 0 },
                { BW_QUOTA_MAX, 100000, 0, 1000000, 250000, BW_MODE_ELASTIC, 0 },
                { 50000, 100000, 0, 1000000, 0, BW_MODE_ELASTIC, 0 },            /* active 0: the interval */
                { 50000, 100000, 0, 1000000, 1000000, BW_MODE_ELASTIC, 0 },      /* active = interval */
                { 50000, 100000, 0, 1000000, 1000001, BW_MODE_ELASTIC, -EINVAL },/* active above interval */
                { 50000, 100000, 60000, 1000000, 0, BW_MODE_ELASTIC, -EINVAL },  /* burst above quota */
                { 999, 100000, 0, 1000000, 0, BW_MODE_ELASTIC, -EINVAL },
                { 50000, 999, 0, 1000000, 0, BW_MODE_ELASTIC, -EINVAL },
                { 50000, 1000001, 0, 1000000, 0, BW_MODE_ELASTIC, -EINVAL },
                { 50000, 100000, 0, 0, 0, BW_MODE_ELASTIC, -EINVAL },
                { 50000, 100000, 0, 1000000, 0, _BW_MODE_MAX, -EINVAL },
                { 50000, 100000, 0, 1000000, 0, -1, -EINVAL },
        };

        assert_int_equal(bw_policy_params_check(NULL), -EINVAL);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_policy_params p = default_params(BW_MODE_ELASTIC);

                p.mode = (enum bw_mode) cases[i].mode;
                p.baseline.quota_usec = cases[i].quota;
                p.baseline.period_usec = cases[i].period;
                p.baseline.burst_usec = cases[i].burst;
                p.interval_usec = cases[i].interval;
                p.active_interval_usec = cases[i].active;
                if (bw_policy_params_check(&p) != cases[i].r)
                        fail_msg("case %zu: expected %d", i, cases[i].r);
        }
}

static void test_limits(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_bandwidth b = { .quota_usec = 80000, .period_usec = 100000, .has_burst = true };

        assert_int_equal(bw_policy_quota_limit_usec(&p), 150000);
        p.quota_max_usec = 1000000;                     /* 10 CPUs on a 2-CPU host */
        assert_int_equal(bw_policy_quota_limit_usec(&p), 200000);
        p.quota_max_usec = 10000;                       /* below the baseline means the baseline */
        assert_int_equal(bw_policy_quota_limit_usec(&p), 50000);
        p = default_params(BW_MODE_BURST);
        assert_int_equal(bw_policy_quota_limit_usec(&p), 50000);
        p = default_params(BW_MODE_OFF);
        assert_int_equal(bw_policy_quota_limit_usec(&p), 50000);

        p = default_params(BW_MODE_ELASTIC);
        assert_int_equal(bw_policy_contract_burst_usec(&p), 50000);      /* min(CPUBurstMax or Qb, Qmax) */
        p.burst_max_usec = 200000;
        assert_int_equal(bw_policy_contract_burst_usec(&p), 150000);
        p.kernel_has_burst = false;
        assert_int_equal(bw_policy_contract_burst_usec(&p), 50000);      /* the baseline's own */

        p = default_params(BW_MODE_ELASTIC);
        assert_int_equal(bw_policy_slack_usec(&p), 30000);      /* a slice and a tick at HZ=100 per CPU */
        assert_int_equal(bw_policy_boost_rate(&p, &b), 300000);
        b.quota_usec = 40000;
        assert_int_equal(bw_policy_boost_rate(&p, &b), 0);
        b.quota_usec = BW_QUOTA_MAX;
        assert_int_equal(bw_policy_boost_rate(&p, &b), 0);
}

static void test_state_init(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;

        bw_policy_state_init(&s, &p, 9 * USEC_PER_SEC, 0);
        assert_int_equal(s.credit.credit_usec, 5 * USEC_PER_SEC);       /* clamped */
        assert_false(s.exhausted);
        assert_false(s.primed);
        assert_int_equal(s.host_cap_usec, UINT64_MAX);

        /* Restored empty: as good as exhausted (its headroom comes back
         * once the credit pays for the top level); any other balance is
         * placed where it pays, as a new one. */
        bw_policy_state_init(&s, &p, 0, 0);
        assert_true(s.exhausted);
        bw_policy_state_init(&s, &p, 1, 0);
        assert_false(s.exhausted);
        bw_policy_state_init(&s, &p, USEC_PER_SEC, 0);
        assert_false(s.exhausted);
        p.credit_max_usec = 0;          /* no bucket: nothing to wait for */
        bw_policy_state_init(&s, &p, 0, 0);
        assert_false(s.exhausted);
        p.credit_max_usec = 5 * USEC_PER_SEC;

        /* A debt survives a restart. */
        bw_policy_state_init(&s, &p, 0, 30000);
        assert_int_equal(s.credit.debt_usec, 30000);
        assert_int_equal(s.credit.credit_usec, 0);
        assert_true(s.exhausted);
}

static void test_invalid_input(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;
        struct bw_policy_input in = { .now_usec = 1, .current = p.baseline };
        struct bw_decision d;

        bw_policy_state_init(&s, &p, p.credit_max_usec, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, NULL), -EINVAL);
        assert_int_equal(bw_policy_decide(&p, NULL, &in, &d), -EINVAL);
        in.current.period_usec = 0;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), -EINVAL);
        assert_false(s.primed);         /* untouched */
        in.current = p.baseline;
        p.interval_usec = 0;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), -EINVAL);
}

/* Full credit: the first decision already rests at CPUQuotaMax= with the
 * resting burst, and the next sample is a whole Interval= away. */
static void test_rest_at_full_credit(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;
        struct bw_policy_input in = {
                .now_usec = 1000000,
                .stat.seen = BW_CPUSTAT_USAGE,
                .current = { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = true },
                .ancestor_quota_usec = BW_QUOTA_MAX,
        };
        struct bw_bandwidth rest;
        struct bw_decision d;

        bw_policy_state_init(&s, &p, p.credit_max_usec, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_PRIME);
        assert_true(d.change);
        assert_int_equal(d.target.quota_usec, 150000);
        assert_int_equal(d.target.burst_usec, 50000);
        assert_int_equal(d.target.period_usec, 100000);
        assert_int_equal(d.level, BW_POLICY_LEVELS);
        assert_int_equal(d.headroom_usec, 100000);
        assert_int_equal(d.headroom_max_usec, 100000);
        assert_int_equal(d.next_tick_usec, USEC_PER_SEC);
        assert_false(d.active);

        /* bw_policy_rest_target() is that first decision. */
        assert_int_equal(bw_policy_rest_target(&p, p.credit_max_usec, true, &in.current, &rest), 0);
        assert_int_equal(rest.quota_usec, d.target.quota_usec);
        assert_int_equal(rest.burst_usec, d.target.burst_usec);
        /* Without a usage counter: no credit, no headroom, the burst only. */
        assert_int_equal(bw_policy_rest_target(&p, p.credit_max_usec, false, &in.current, &rest), 0);
        assert_int_equal(rest.quota_usec, 50000);
        assert_int_equal(rest.burst_usec, 50000);
        /* Mode burst: the baseline quota, the resting burst. */
        p.mode = BW_MODE_BURST;
        assert_int_equal(bw_policy_rest_target(&p, p.credit_max_usec, true, &in.current, &rest), 0);
        assert_int_equal(rest.quota_usec, 50000);
        assert_int_equal(rest.burst_usec, 50000);
}

/* How much headroom an idle group rests at, by credit. Interval=1s: a
 * level costs E * 1.3 s / P + R(Qb + E), R(Q) = 2 Q + B + Qb + 30 ms of
 * slack + 0.65 s (one idle sample's earnings), and a raise needs 5/4 of
 * that: level 4 (1 CPU) 2.98 s, level 3 2.51 s, level 2 2.04 s, level 1
 * 1.57 s. */
static void test_rest_levels(void **state) {
        static const struct {
                uint64_t credit;
                unsigned level;
        } cases[] = {
                { 5000000, 4 },
                { 3000000, 4 },
                { 2950000, 3 },
                { 2550000, 3 },
                { 2500000, 2 },
                { 2050000, 2 },
                { 2000000, 1 },
                { 1600000, 1 },
                { 1550000, 0 },
                { 1250000, 0 },         /* nothing pays yet */
        };
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_bandwidth cur = { .quota_usec = 50000, .period_usec = 100000, .has_burst = true }, rest;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                assert_int_equal(bw_policy_rest_target(&p, cases[i].credit, true, &cur, &rest), 0);
                if (rest.quota_usec != 50000 + cases[i].level * 25000)
                        fail_msg("case %zu: credit %" PRIu64 " rests at %" PRIu64 ", want level %u", i,
                                 cases[i].credit, rest.quota_usec, cases[i].level);
        }
        /* Empty: exhausted, the baseline, whatever was in place. */
        cur.quota_usec = 100000;
        assert_int_equal(bw_policy_rest_target(&p, 0, true, &cur, &rest), 0);
        assert_int_equal(rest.quota_usec, 50000);
}

/* Sustained overload: full speed while the credit lasts, stepping down
 * only near its end, exactly the baseline at exhaustion, fast samples only
 * near the end, and no raise again while the overload lasts. */
static void test_drain_to_exhaustion(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        uint64_t last_quota = 150000, fast_ticks = 0, t_exhausted = 0, t0;
        bool lowered = false;
        struct run r;

        run_init_primed(&r, &p, 2, p.credit_max_usec, 1);
        assert_int_equal(r.sim.bw.quota_usec, 150000);
        t0 = r.sim.now_usec;
        while (r.sim.now_usec - t0 < 20 * USEC_PER_SEC) {
                run_tick(&r, DEMAND_OVERLOAD, 1500000);
                /* Monotone: down only. */
                assert_true(r.sim.bw.quota_usec <= last_quota);
                if (r.sim.bw.quota_usec < last_quota) {
                        assert_true(r.d.emergency);
                        assert_true(r.d.rule == BW_RULE_HEADROOM_LOWER || r.d.rule == BW_RULE_CREDIT_EXHAUSTED);
                        lowered = true;
                }
                last_quota = r.sim.bw.quota_usec;
                if (r.d.next_tick_usec == p.active_interval_usec)
                        fast_ticks++;
                if (r.d.rule == BW_RULE_CREDIT_EXHAUSTED && t_exhausted == 0) {
                        assert_int_equal(r.sim.bw.quota_usec, p.baseline.quota_usec);
                        t_exhausted = r.sim.now_usec;
                }
        }
        assert_true(lowered);
        assert_true(t_exhausted > 0);
        /* 5 s of credit at 1 CPU above the baseline: at full speed for most
         * of it (the reserve and the last levels take the rest). */
        assert_true(t_exhausted - t0 >= 3500000);
        assert_true(t_exhausted - t0 <= 5500000);
        assert_true(fast_ticks > 0);
        assert_true(r.st.exhausted);
        assert_int_equal(r.sim.bw.quota_usec, 50000);
        assert_int_equal(r.sim.bw.burst_usec, 50000);
        /* At the baseline under overload: nothing more to write, slow samples. */
        {
                uint64_t before = r.changes;

                run_for(&r, 30, DEMAND_OVERLOAD, 1500000);
                assert_int_equal(r.changes, before);
                assert_int_equal(r.d.next_tick_usec, p.interval_usec);
                assert_int_equal(r.d.rule, BW_RULE_STEADY);
        }
}

/* The credit a raise to level k needs (default_params(): 2 CPUs, baseline
 * 50/100 ms, levels of 25 ms): its cost until an idle sample, with the
 * reserve's slack (30 ms per 2 CPUs and one idle sample's earnings, 0.5 CPU
 * x 1.3 s) and the quarter to spare. */
static uint64_t raise_cost(unsigned k) {
        const uint64_t slack = 30000 + 650000, slow = 1000000 + 250000 + 50000;

        return bw_credit_needed(k * 25000, 100000, 50000, 50000, slack, slow) * 5 / 4;
}

/* The way back at 0.45 CPU for 60 s from now (it earns 0.05 CPU-s/s at the
 * baseline and on the first level alike): every change a raise, the first
 * to half the headroom, the second to the top, no third. */
struct way_back {
        uint64_t t0, t_half, t_top, credit_half;
};

static struct way_back run_way_back(struct run *r) {
        struct way_back w = { .t0 = r->sim.now_usec };

        while (r->sim.now_usec - w.t0 < 60 * USEC_PER_SEC) {
                uint64_t before = r->sim.bw.quota_usec;

                run_tick(r, DEMAND_CONST, 450000);
                if (r->sim.bw.quota_usec == before)
                        continue;
                assert_int_equal(r->d.rule, BW_RULE_HEADROOM_RAISE);
                if (w.t_half == 0) {
                        assert_int_equal(r->sim.bw.quota_usec, 100000);
                        assert_true(r->st.credit.credit_usec >= raise_cost(2));
                        assert_false(r->st.exhausted);
                        w.credit_half = r->st.credit.credit_usec;
                        w.t_half = r->sim.now_usec;
                } else {
                        assert_int_equal(w.t_top, 0);
                        assert_int_equal(r->sim.bw.quota_usec, 150000);
                        assert_true(r->st.credit.credit_usec >= raise_cost(4));
                        w.t_top = r->sim.now_usec;
                }
        }
        assert_true(w.t_half > w.t0 && w.t_top > w.t_half);
        return w;
}

/* After exhaustion the headroom comes back in two writes, not a level at a
 * time: half of where a full bucket rests once the credit pays for that,
 * the rest once it pays for the top level. */
static void test_refill_hysteresis(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct way_back w;
        uint64_t writes;
        struct run r;

        run_init_primed(&r, &p, 2, p.credit_max_usec, 1);
        run_for(&r, 10, DEMAND_OVERLOAD, 1500000);
        assert_true(r.st.exhausted);
        r.sim.backlog = 0;
        writes = r.changes;
        assert_true(raise_cost(2) < raise_cost(4));

        /* Level 2 is paid for after about 28 s, the top level (2.16 s)
         * after about 43. */
        w = run_way_back(&r);
        assert_true(w.credit_half < raise_cost(3));
        assert_true(w.t_half - w.t0 >= 20 * USEC_PER_SEC && w.t_half - w.t0 <= 35 * USEC_PER_SEC);
        assert_true(w.t_top - w.t0 >= 35 * USEC_PER_SEC);
        assert_int_equal(r.changes, writes + 2);
}

/* Stepped down to a level below half on the way to exhaustion, the way
 * back is the same: half first once the credit pays for it, not the top
 * level's price because the unit still held a quarter. */
static void test_refill_from_low_level(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct way_back w;
        uint64_t writes;
        struct run r;

        run_init_primed(&r, &p, 2, p.credit_max_usec, 1);
        while (r.sim.bw.quota_usec != 75000 && !r.st.exhausted)
                run_tick(&r, DEMAND_OVERLOAD, 1500000);
        assert_int_equal(r.sim.bw.quota_usec, 75000);
        assert_int_equal(r.d.rule, BW_RULE_HEADROOM_LOWER);
        r.sim.backlog = 0;
        writes = r.changes;

        w = run_way_back(&r);
        assert_true(w.credit_half < raise_cost(4));
        assert_int_equal(r.sim.bw.quota_usec, 150000);
        assert_int_equal(r.changes, writes + 2);
}

/* Overload until the law is at the baseline for want of credit (at most
 * max_secs); then no backlog left. Returns the time it got there. */
static uint64_t run_until_exhausted(struct run *r, uint64_t max_secs) {
        uint64_t t0 = r->sim.now_usec;

        while (!r->st.exhausted && r->sim.now_usec - t0 < max_secs * USEC_PER_SEC)
                run_tick(r, DEMAND_OVERLOAD, 1500000);
        assert_true(r->st.exhausted);
        r->sim.backlog = 0;
        return r->sim.now_usec;
}

/* Run until the quota is above the baseline (at most max_secs). Returns
 * the time it rose, 0 if it did not. */
static uint64_t run_until_raised(struct run *r, uint64_t max_secs, enum demand kind, uint64_t level_rate) {
        uint64_t t0 = r->sim.now_usec;

        while (r->sim.now_usec - t0 < max_secs * USEC_PER_SEC) {
                run_tick(r, kind, level_rate);
                if (r->sim.bw.quota_usec > r->p->baseline.quota_usec)
                        return r->sim.now_usec;
        }
        return 0;
}

/* The way back from exhaustion does not depend on CreditMax=: with 30 s
 * of it, as with 5, the headroom returns once the credit pays for half the
 * top level, then for the top level (2.16 s, as above), not after a
 * quarter of the bucket (7.5 s, a rule this replaced: 150 s at this
 * group's earnings); and never within hold_off of the step down. */
static void test_refill_not_by_credit_max(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        uint64_t t_exhausted, t_raised, writes;
        struct run r;

        p.credit_max_usec = 30 * USEC_PER_SEC;
        p.hold_off_usec = 10 * USEC_PER_SEC;
        run_init_primed(&r, &p, 2, p.credit_max_usec, 5);
        t_exhausted = run_until_exhausted(&r, 120);
        assert_int_equal(r.d.rule, BW_RULE_CREDIT_EXHAUSTED);
        assert_int_equal(r.sim.bw.quota_usec, 50000);
        writes = r.changes;

        /* Idle earns 0.5 CPU-s/s: the top level is paid for after about
         * 4.3 s, the raise waits for hold_off (10 s) and goes there in one
         * write: the credit pays for more than half by then. */
        t_raised = run_until_raised(&r, 30, DEMAND_IDLE, 0);
        assert_true(t_raised > 0);
        assert_true(t_raised - t_exhausted >= p.hold_off_usec);
        assert_true(t_raised - t_exhausted <= p.hold_off_usec + 2 * p.interval_usec);
        assert_int_equal(r.d.rule, BW_RULE_HEADROOM_RAISE);
        assert_int_equal(r.sim.bw.quota_usec, 150000);
        assert_int_equal(r.changes, writes + 1);
        assert_true(r.st.credit.credit_usec < p.credit_max_usec / 4);

        /* Again at 0.45 CPU (0.05 CPU-s/s): half the top level after about
         * 28 s, all of it after about 43, where a quarter of 30 s would
         * have taken 150. */
        t_exhausted = run_until_exhausted(&r, 120);
        writes = r.changes;
        t_raised = run_until_raised(&r, 120, DEMAND_CONST, 450000);
        assert_true(t_raised > 0);
        assert_true(t_raised - t_exhausted >= 20 * USEC_PER_SEC);
        assert_true(t_raised - t_exhausted <= 40 * USEC_PER_SEC);
        assert_int_equal(r.sim.bw.quota_usec, 100000);
        assert_int_equal(r.changes, writes + 1);
        run_for(&r, 30, DEMAND_CONST, 450000);
        assert_int_equal(r.sim.bw.quota_usec, 150000);
        assert_int_equal(r.changes, writes + 2);
}

/* Idle and under the baseline: rests at the top level, no writes, slow
 * samples. Steady overload: the baseline, no writes. */
static void test_steady_writes_nothing(void **state) {
        static const struct {
                enum demand kind;
                uint64_t level;
        } loads[] = {
                { DEMAND_IDLE, 0 },
                { DEMAND_CONST, 300000 },
                { DEMAND_CONST, 490000 },
                { DEMAND_JITTER, 400000 },
                { DEMAND_BURSTY, 400000 },
        };

        for (size_t i = 0; i < ELEMENTSOF(loads); i++) {
                struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
                uint64_t before;
                struct run r;

                p.credit_max_usec = 30 * USEC_PER_SEC;
                run_init_primed(&r, &p, 4, p.credit_max_usec, 7 + i);
                run_for(&r, 10, loads[i].kind, loads[i].level);
                before = r.changes;
                run_for(&r, 600, loads[i].kind, loads[i].level);
                if (r.changes != before)
                        fail_msg("load %zu: %" PRIu64 " writes in 10 minutes", i, r.changes - before);
                assert_int_equal(r.sim.bw.quota_usec, 150000);
                assert_int_equal(r.d.next_tick_usec, p.interval_usec);
        }
}

/* The bursty workload of the benchmark, on the period model: with the
 * headroom in place nothing is throttled, where the static quota with the
 * kernel's burst still is. */
static void test_bursty_benefit(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct run r, st;

        run_init_primed(&r, &p, 4, p.credit_max_usec, 3);
        run_for(&r, 120, DEMAND_BURSTY, 450000);

        p.mode = BW_MODE_OFF;           /* static, with the burst = quota */
        run_init_primed(&st, &p, 4, p.credit_max_usec, 3);
        st.sim.bw.burst_usec = 50000;
        run_for(&st, 120, DEMAND_BURSTY, 450000);

        assert_true(st.sim.throttled_periods > 0);
        assert_int_equal(r.sim.throttled_periods, 0);
        assert_true(r.changes <= 1);
}

/* Hysteresis between holding and raising: a level is held down to what
 * pays for it until a short-horizon sample (sampled that often then), and
 * raised to only when the credit pays for it until an Interval= away with a
 * quarter to spare; and back up only to where a full bucket rests, in one
 * write. */
static void test_hold_raise_band(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        /* The reserve's slack: 30 ms per 2 CPUs and one idle sample's
         * earnings (0.5 CPU x 1.3 s). */
        const uint64_t slack = 30000 + 650000, fast = 250000 + 62500 + 50000;
        uint64_t hold4 = bw_credit_needed(100000, 100000, 50000, 50000, slack, fast);
        uint64_t raise4 = raise_cost(4);
        struct bw_policy_state s;
        struct bw_policy_input in = {
                .now_usec = USEC_PER_SEC,
                .stat = { .seen = BW_CPUSTAT_USAGE },
                .current = { .quota_usec = 150000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true },
                .ancestor_quota_usec = BW_QUOTA_MAX,
        };
        struct bw_decision d;
        unsigned n;

        bw_policy_state_init(&s, &p, 2000000, 0);
        assert_true(hold4 < 2000000 && 2000000 < raise4);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);   /* prime */
        assert_int_equal(d.target.quota_usec, 150000);             /* held: 2 s pays for the short horizon */
        assert_int_equal(d.next_tick_usec, p.active_interval_usec); /* ... and only for it */
        assert_false(d.change);

        /* Spend down to under what the short horizon costs: a step down. */
        in.now_usec += 600000;
        in.stat.usage_usec += 900000;                   /* 1.5 CPU for 0.6 s: 0.6 s above the baseline */
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_true(s.credit.credit_usec < hold4);
        assert_int_equal(d.rule, BW_RULE_HEADROOM_LOWER);
        assert_true(d.target.quota_usec < 150000 && d.target.quota_usec > 50000);
        assert_true(d.emergency);
        in.current = d.target;

        /* Idle: earning 0.5 s a second; nothing until the credit pays for
         * the top level at the idle horizon with a quarter to spare, then
         * straight there. */
        for (n = 0; n < 10; n++) {
                in.now_usec += USEC_PER_SEC;
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                if (d.change)
                        break;
                assert_true(s.credit.credit_usec < raise4);
        }
        assert_true(d.change);
        assert_int_equal(d.rule, BW_RULE_HEADROOM_RAISE);
        assert_int_equal(d.target.quota_usec, 150000);
        assert_true(s.credit.credit_usec >= raise4);
}

/* A raise waits hold_off after a decrease. */
static void test_hold_after_decrease(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct run r;

        run_init_primed(&r, &p, 2, p.credit_max_usec, 1);
        r.host_over_limit = true;
        run_tick(&r, DEMAND_CONST, 900000);             /* spending while the host is over: nothing without a plan */
        assert_int_equal(r.sim.bw.quota_usec, 150000);
        r.shed_permille = 500;
        run_tick(&r, DEMAND_CONST, 900000);
        assert_int_equal(r.d.rule, BW_RULE_HOST_SHED);
        assert_int_equal(r.sim.bw.quota_usec, 100000);
        r.shed_permille = 0;
        r.host_over_limit = false;
        /* The cap comes back a level per 3 hold-offs; before that, nothing. */
        run_tick(&r, DEMAND_IDLE, 0);
        assert_true(r.d.rule == BW_RULE_STEADY || r.d.rule == BW_RULE_HOLD);
        assert_int_equal(r.sim.bw.quota_usec, 100000);
}

/* Host shedding: a plan's share is taken from the headroom and stays
 * (a cap), nobody is raised over the limit, the cap comes back a level at
 * a time once the host is calm. */
static void test_host_shed_and_recover(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        uint64_t t_calm;
        struct run r;

        p.credit_max_usec = 60 * USEC_PER_SEC;
        run_init_primed(&r, &p, 2, p.credit_max_usec, 1);
        run_tick(&r, DEMAND_CONST, 1000000);
        assert_int_equal(r.sim.bw.quota_usec, 150000);

        r.shed_permille = 500;
        r.host_over_limit = true;
        run_tick(&r, DEMAND_CONST, 1000000);
        assert_int_equal(r.d.rule, BW_RULE_HOST_SHED);
        assert_true(r.d.emergency);
        assert_int_equal(r.sim.bw.quota_usec, 100000);          /* half of 100 ms, on a level */
        assert_int_equal(r.d.headroom_max_usec, 50000);
        /* Applied once: the daemon clears the plan; the cap stays. */
        r.shed_permille = 0;
        run_ticks(&r, 3, DEMAND_CONST, 1000000);
        assert_int_equal(r.sim.bw.quota_usec, 100000);
        assert_int_equal(r.d.rule, BW_RULE_STEADY);
        /* Another plan: down again. */
        r.shed_permille = 500;
        run_tick(&r, DEMAND_CONST, 1000000);
        assert_int_equal(r.sim.bw.quota_usec, 75000);
        r.shed_permille = 0;

        /* Calm again: back one level per 3 hold-offs, never all at once. */
        r.host_over_limit = false;
        t_calm = r.sim.now_usec;
        run_tick(&r, DEMAND_CONST, 1000000);
        assert_int_equal(r.sim.bw.quota_usec, 75000);
        while (r.sim.bw.quota_usec < 150000) {
                uint64_t q = r.sim.bw.quota_usec;

                run_tick(&r, DEMAND_CONST, 1000000);
                assert_true(r.sim.bw.quota_usec - q <= 25000);
                assert_true(r.sim.now_usec - t_calm < 60 * USEC_PER_SEC);
        }
        assert_true(r.sim.now_usec - t_calm >= 3 * 3 * p.hold_off_usec);
        assert_int_equal(r.st.host_cap_usec, UINT64_MAX);
}

/* Over the limit nobody is raised: an idle group that could rise holds. */
static void test_host_hold(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct run r;

        run_init_primed(&r, &p, 2, 2200000, 1);
        assert_int_equal(r.sim.bw.quota_usec, 100000);  /* level 2 for 2.2 s */
        r.host_over_limit = true;
        run_for(&r, 20, DEMAND_IDLE, 0);
        assert_int_equal(r.d.rule, BW_RULE_HOST_HOLD);
        assert_int_equal(r.sim.bw.quota_usec, 100000);
        r.host_over_limit = false;
        run_tick(&r, DEMAND_IDLE, 0);
        assert_int_equal(r.sim.bw.quota_usec, 150000);
}

/* The nearest limited ancestor caps the headroom; an ancestor above
 * Qb + Emax changes nothing; throttling by an ancestor shows as such. */
static void test_ancestor(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct run r;

        run_init_primed(&r, &p, 2, p.credit_max_usec, 1);
        assert_int_equal(r.sim.bw.quota_usec, 150000);
        r.ancestor_quota_usec = 300000;
        run_tick(&r, DEMAND_IDLE, 0);
        assert_int_equal(r.sim.bw.quota_usec, 150000);
        assert_int_equal(r.d.rule, BW_RULE_STEADY);

        r.ancestor_quota_usec = 80000;
        run_tick(&r, DEMAND_IDLE, 0);
        assert_int_equal(r.d.rule, BW_RULE_ANCESTOR_LIMIT);
        assert_true(r.d.emergency);
        assert_true(r.sim.bw.quota_usec <= 80000);
        assert_true(r.sim.bw.quota_usec >= 50000);
        assert_int_equal(r.d.headroom_max_usec, 30000);
        /* An ancestor at or below the baseline leaves no headroom. */
        r.ancestor_quota_usec = 40000;
        run_tick(&r, DEMAND_IDLE, 0);
        assert_int_equal(r.sim.bw.quota_usec, 50000);
        run_ticks(&r, 5, DEMAND_IDLE, 0);
        assert_int_equal(r.sim.bw.quota_usec, 50000);
        /* No headroom to be had is not exhaustion: the credit is intact. */
        assert_false(r.st.exhausted);
        assert_int_equal(r.d.rule, BW_RULE_STEADY);
        /* The ancestor lifted: back to the top. */
        r.ancestor_quota_usec = BW_QUOTA_MAX;
        run_tick(&r, DEMAND_IDLE, 0);
        assert_int_equal(r.sim.bw.quota_usec, 150000);

        /* Exhausted, then an ancestor takes all the headroom: with none to
         * be had there is nothing to exhaust, and the state says so once
         * the credit is back (not "exhausted" for as long as it lasts). */
        run_for(&r, 10, DEMAND_OVERLOAD, 1500000);
        assert_true(r.st.exhausted);
        r.sim.backlog = 0;
        r.ancestor_quota_usec = 40000;
        run_for(&r, 5, DEMAND_IDLE, 0);
        assert_false(r.st.exhausted);
        assert_int_equal(r.sim.bw.quota_usec, 50000);

        /* cpu.stat.local beyond cpu.stat is an ancestor's throttling; it
         * does not make the group active (more quota would not help). */
        {
                struct bw_policy_state s;
                struct bw_policy_input in = {
                        .now_usec = USEC_PER_SEC,
                        .stat = { .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_THROTTLED | BW_CPUSTAT_LOCAL_THROTTLED },
                        .current = { .quota_usec = 150000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true },
                };
                struct bw_decision d;

                bw_policy_state_init(&s, &p, p.credit_max_usec, 0);
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                in.now_usec += USEC_PER_SEC;
                in.stat.usage_usec = 300000;                    /* 0.3 CPU, under the baseline */
                in.stat.throttled_usec = 0;
                in.stat.local_throttled_usec = 400000;          /* 0.4 s of a second */
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                assert_int_equal(d.ancestor_throttle_rate, 400000);
                assert_int_equal(d.throttle_rate, 0);
                assert_false(d.active);
                assert_false(d.change);
        }
}

/* Usage beyond the credit is a debt, repaid before any credit counts. */
static void test_debt(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;
        struct bw_policy_input in = {
                .now_usec = USEC_PER_SEC,
                .stat = { .seen = BW_CPUSTAT_USAGE },
                .current = { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true },
        };
        struct bw_decision d;

        bw_policy_state_init(&s, &p, 100000, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        in.now_usec += USEC_PER_SEC;
        in.stat.usage_usec += 700000;           /* earned 0.5 s, used 0.7 s, had 0.1 s */
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.credit_after_usec, 0);
        assert_int_equal(d.debt_usec, 100000);
        assert_int_equal(d.spend_rate, 200000);
        assert_int_equal(d.target.quota_usec, 50000);
        in.now_usec += USEC_PER_SEC;
        in.stat.usage_usec += 350000;           /* earned 0.5, used 0.35: 0.15 repays 0.1 */
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.debt_usec, 0);
        assert_int_equal(d.credit_after_usec, 50000);
        assert_int_equal(d.earn_rate, 150000);
}

/* The time to empty follows the average spending. */
static void test_time_to_empty(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct run r;

        p.credit_max_usec = 60 * USEC_PER_SEC;
        run_init_primed(&r, &p, 2, p.credit_max_usec, 1);
        run_tick(&r, DEMAND_IDLE, 0);
        assert_int_equal(r.d.time_to_empty_usec, UINT64_MAX);
        run_for(&r, 30, DEMAND_CONST, 1000000);         /* 0.5 CPU above the baseline */
        assert_true(r.d.spend_avg > 400000 && r.d.spend_avg <= 500000);
        /* about (credit - reserve) / 0.5 */
        assert_true(r.d.time_to_empty_usec > 2 * (r.d.credit_after_usec - r.d.reserve_usec) * 9 / 10);
        assert_true(r.d.time_to_empty_usec < 2 * (r.d.credit_after_usec - r.d.reserve_usec) * 12 / 10);
}

/* Mode burst: the baseline quota, the resting burst, nothing else ever. */
static void test_mode_burst(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_BURST);
        struct run r;

        run_init_primed(&r, &p, 4, p.credit_max_usec, 1);
        assert_int_equal(r.sim.bw.quota_usec, 50000);
        assert_int_equal(r.sim.bw.burst_usec, 50000);
        assert_int_equal(r.sim.writes, 1);
        run_for(&r, 60, DEMAND_BURSTY, 450000);
        run_for(&r, 60, DEMAND_OVERLOAD, 1500000);
        assert_int_equal(r.changes, 0);
        assert_int_equal(r.sim.bw.quota_usec, 50000);
        /* A quota above the baseline (from elastic before a reload): clamped. */
        r.sim.bw.quota_usec = 150000;
        run_tick(&r, DEMAND_IDLE, 0);
        assert_int_equal(r.d.rule, BW_RULE_CLAMP);
        assert_int_equal(r.sim.bw.quota_usec, 50000);
}

static void test_modes_off_observe_unlimited(void **state) {
        char buf[BW_DECISION_EXPLAIN_MAX];
        struct bw_policy_params p = default_params(BW_MODE_OBSERVE);
        struct run r;

        /* observe: decides as elastic, changes nothing */
        run_init_primed(&r, &p, 2, p.credit_max_usec, 1);
        r.sim.bw.quota_usec = 50000;
        r.sim.bw.burst_usec = 0;
        run_for(&r, 5, DEMAND_CONST, 900000);
        assert_true(r.d.would_change);
        assert_false(r.d.change);
        assert_int_equal(r.changes, 0);
        assert_int_equal(r.sim.bw.quota_usec, 50000);
        assert_non_null(strstr(bw_decision_explain(&r.d, &r.sim.bw, buf), "would act"));

        /* off: the baseline exactly */
        p = default_params(BW_MODE_OFF);
        p.baseline.burst_usec = 0;
        run_init_primed(&r, &p, 2, p.credit_max_usec, 1);
        r.sim.bw.quota_usec = 150000;
        r.sim.bw.burst_usec = 50000;
        run_tick(&r, DEMAND_IDLE, 0);
        assert_int_equal(r.d.rule, BW_RULE_MODE_OFF);
        assert_int_equal(r.sim.bw.quota_usec, 50000);
        assert_int_equal(r.sim.bw.burst_usec, 0);

        /* unlimited baseline: nothing to govern */
        p = default_params(BW_MODE_ELASTIC);
        p.baseline.quota_usec = BW_QUOTA_MAX;
        p.baseline.burst_usec = 0;
        {
                struct bw_policy_state s;
                struct bw_policy_input in = { .now_usec = 1, .current = p.baseline };
                struct bw_decision d;

                bw_policy_state_init(&s, &p, p.credit_max_usec, 0);
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                assert_int_equal(d.rule, BW_RULE_UNLIMITED);
                assert_false(d.would_change);
                assert_non_null(strstr(bw_decision_explain(&d, &in.current, buf), "quota max->max"));
        }
}

/* A value from elsewhere outside what the law allows is brought into range. */
static void test_clamp(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct run r;

        run_init_primed(&r, &p, 2, p.credit_max_usec, 1);
        r.sim.bw.quota_usec = 400000;                   /* above CPUQuotaMax= */
        run_tick(&r, DEMAND_IDLE, 0);
        assert_int_equal(r.d.rule, BW_RULE_CLAMP);
        assert_true(r.d.emergency);
        assert_int_equal(r.sim.bw.quota_usec, 150000);
        r.sim.bw.quota_usec = 20000;                    /* below the baseline */
        r.sim.bw.burst_usec = 20000;
        run_tick(&r, DEMAND_IDLE, 0);
        assert_int_equal(r.d.rule, BW_RULE_CLAMP);
        assert_int_equal(r.sim.bw.quota_usec, 50000);   /* the raise waits for the hold-off */
        assert_int_equal(r.sim.bw.burst_usec, 50000);
        run_ticks(&r, 3, DEMAND_IDLE, 0);
        assert_int_equal(r.sim.bw.quota_usec, 150000);
}

/* No usage counter (v1 without cpuacct): no credit, no headroom. */
static void test_no_usage(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;
        struct bw_policy_input in = {
                .now_usec = USEC_PER_SEC,
                .stat = { .seen = BW_CPUSTAT_THROTTLED | BW_CPUSTAT_NR_THROTTLED | BW_CPUSTAT_NR_PERIODS },
                .current = { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true },
        };
        struct bw_decision d;

        bw_policy_state_init(&s, &p, p.credit_max_usec, 0);
        for (int i = 0; i < 5; i++) {
                assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
                assert_int_equal(d.target.quota_usec, 50000);
                in.now_usec += USEC_PER_SEC;
                in.stat.throttled_usec += 300000;
        }
        assert_int_equal(s.credit.credit_usec, p.credit_max_usec);
}

/* Samples closer than 50 ms are ignored and make no new commitment. */
static void test_too_soon_and_reset(void **state) {
        struct bw_policy_params p = default_params(BW_MODE_ELASTIC);
        struct bw_policy_state s;
        struct bw_policy_input in = {
                .now_usec = USEC_PER_SEC,
                .stat = { .seen = BW_CPUSTAT_USAGE, .usage_usec = 5000000 },
                .current = { .quota_usec = 150000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true },
        };
        struct bw_decision d;

        bw_policy_state_init(&s, &p, p.credit_max_usec, 0);
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_PRIME);
        in.now_usec += 10000;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_TOO_SOON);
        assert_int_equal(d.next_tick_usec, 0);
        assert_false(d.change);
        /* Counters went backwards: the cgroup was recreated. */
        in.now_usec += USEC_PER_SEC;
        in.stat.usage_usec = 10;
        assert_int_equal(bw_policy_decide(&p, &s, &in, &d), 0);
        assert_int_equal(d.rule, BW_RULE_RESET);
        assert_int_equal(s.credit.credit_usec, p.credit_max_usec);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rule_names),
                cmocka_unit_test(test_params_check),
                cmocka_unit_test(test_limits),
                cmocka_unit_test(test_state_init),
                cmocka_unit_test(test_invalid_input),
                cmocka_unit_test(test_rest_at_full_credit),
                cmocka_unit_test(test_rest_levels),
                cmocka_unit_test(test_drain_to_exhaustion),
                cmocka_unit_test(test_refill_hysteresis),
                cmocka_unit_test(test_refill_from_low_level),
                cmocka_unit_test(test_refill_not_by_credit_max),
                cmocka_unit_test(test_steady_writes_nothing),
                cmocka_unit_test(test_bursty_benefit),
                cmocka_unit_test(test_hold_raise_band),
                cmocka_unit_test(test_hold_after_decrease),
                cmocka_unit_test(test_host_shed_and_recover),
                cmocka_unit_test(test_host_hold),
                cmocka_unit_test(test_ancestor),
                cmocka_unit_test(test_debt),
                cmocka_unit_test(test_time_to_empty),
                cmocka_unit_test(test_mode_burst),
                cmocka_unit_test(test_modes_off_observe_unlimited),
                cmocka_unit_test(test_clamp),
                cmocka_unit_test(test_no_usage),
                cmocka_unit_test(test_too_soon_and_reset),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
