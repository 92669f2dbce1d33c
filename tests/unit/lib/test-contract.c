/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The law's contract, checked from outside on a simulated kernel.
 *
 * bw_policy_decide() claims that, driven the way the daemon drives it, a
 * group never uses more than
 *
 *     Qb/P * t + max(CreditMax, K) + Bc,   Bc = bw_policy_contract_burst_usec(),
 *
 * over any window of length t, where K = bw_policy_slack_usec() (a slice
 * and a tick per CPU) is the kernel's own accounting slack, by which a
 * static limit with no law overruns too (test_repro_kernel_slack). This file does not look inside the law: it
 * runs it against a model of CFS bandwidth control (kernel/sched/fair.c,
 * before 6.18's task-based throttling) fed by adversarial demand, and
 * measures what the group really used.
 *
 * The model, in 1 ms steps, with runtimes in ns:
 *  - a global pool (cfs_b->runtime) refilled at every period boundary to
 *    min(pool + Q, Q + B) by a period timer that deactivates after an idle
 *    period and keeps its phase;
 *  - per-CPU local runtime (runtime_remaining): a CPU whose local runtime
 *    is <= 0 pulls "slice - local" (5 ms, sched_cfs_bandwidth_slice_us)
 *    from the pool; when the pool cannot make it positive the CPU's cfs_rq
 *    is throttled (each CPU on its own, as in the kernel);
 *  - tick-granular accounting (HZ=250: 4 ms): a running CPU is charged at
 *    its tick or when its task sleeps, so it overruns its local runtime by
 *    up to one tick; the overrun is a negative local runtime repaid by the
 *    next pull or distribution;
 *  - at a refill the throttled CPUs, oldest first, get "-local + 1 ns" from
 *    the pool and are unthrottled (distribute_cfs_runtime); cpu.stat's
 *    nr_periods counts the periods the timer ran, nr_throttled the periods
 *    that ended with throttled CPUs, throttled_usec the per-CPU throttled
 *    time, added at unthrottle;
 *  - a CPU whose last task sleeps returns its local runtime above 1 ms to
 *    the pool (uncapped), and the slack timer distributes it 5 ms later;
 *  - every write to cpu.max or cpu.max.burst: burst <= quota or EINVAL,
 *    pool = min(pool + Q, Q + B), every local runtime = 0 (debts forgiven,
 *    leftovers lost), throttled CPUs unthrottled;
 *  - cpu.stat usage_usec is the charged time (it lags what ran by up to a
 *    tick per CPU); the contract is measured on what ran.
 * Demand is n(t) runnable threads, each wanting a full CPU; the group runs
 * min(n, ncpus) CPUs minus the throttled ones, nothing else runs on the
 * host.
 *
 * The daemon, as src/daemon/manager/manager.c drives the law: params resolved as
 * unit_update_params() does (resting burst raised to min(CPUBurstMax=,
 * Qb)), state initialised with a full bucket, the rest target written at
 * adoption, then one decision per sample; a decision's target is written
 * file by file as bw_cg_write_bandwidth() does (burst down, cpu.max, burst
 * up, only what differs); the next sample comes next_tick_usec after this
 * one plus a random lateness in [0, next_tick_usec/16 + 20 ms] rounded up
 * to the 1 ms grid: the timer accuracy the daemon sets plus a busy loop,
 * well inside the h/4 + 50 ms the law budgets.
 *
 * Where the model differs from a real kernel (the first three give the
 * group a little less than a kernel would, the others about the same):
 * no migration of tasks away from throttled CPUs; a task stops the instant
 * its CPU is throttled (a real one at the IPI or the return from the
 * interrupt); no other load; ticks aligned on all CPUs; HZ=250 and no
 * nohz_full; time on a 1 ms grid (samples, demand, period boundaries);
 * a write sets local runtimes to 0 (kernels that set 1 ns differ by 1 ns);
 * nr_throttled counts periods ending throttled, as the kernel does, not
 * throttle events; nr_bursts and burst_usec are not kept (not fed to the
 * law). 6.18's task-based throttling (tasks leave only on the way back to
 * user mode) is not modelled; busy-looping threads barely enter the
 * kernel, so its extra overrun would not show here anyway.
 *
 * The properties (each test prints its cases, samples, writes and the
 * closest margins; a failure prints the case, what failed and the
 * decisions around it; the seed re-runs it):
 *  1. contract: over every window between period boundaries usage <=
 *     Qb/P t + max(CreditMax, K) + Bc; over 1 ms-aligned windows the excess
 *     is printed, and fails only beyond Bc + Qb more (period quantisation),
 *     and only where CreditMax >= K (below it the law gives no headroom);
 *  2. the same under random parameters and adversarial demand, with the
 *     bookkeeping every run checks: no write of the value in place, burst
 *     <= quota after every single write, the prime leaves what adoption
 *     wrote, targets within [Qb, limit] and bursts within Bc;
 *  3. exhaustion: a balance that cannot pay for the first level over the
 *     short horizon leaves exactly the baseline; a raise is paid for over
 *     a whole Interval= with a quarter to spare, and none comes within
 *     hold_off of a step down (the hysteresis that keeps an exhausted
 *     group from flapping); the true balance at period boundaries never
 *     under -Bc;
 *  4. steady loads write nothing; bursts the bucket absorbs (each leaves
 *     what the top level costs until a short-horizon sample, so the law
 *     never has to step down), mean well under the baseline, write at most
 *     once a minute;
 *  5. the law's balance is credit.h's bucket of the counter it read, to
 *     the µs per sample, and never above the true balance of what ran
 *     (capped continuously) by more than the counter's lag and one
 *     sample's earnings (what netting within a sample can overstate; the
 *     law holds it in reserve).
 * test_repro_* are the smallest cases of failures this test found in the
 * law as first written, kept as regression tests: each failed then.
 *
 * Seeds are fixed. BWGOV_CONTRACT_CASES=n runs n contract cases (the other
 * batches scale with it), BWGOV_CONTRACT_SEED changes the base seed,
 * BWGOV_CONTRACT_CASE=<seed> runs only that case, with a trace of its
 * decisions. Diagnostics, not properties: BWGOV_CONTRACT_CSV=1 prints one
 * line per case (and runs each on a static baseline for comparison);
 * BWGOV_CONTRACT_EXTRA_SAMPLES=1 adds a sample at every rise of the
 * demand; BWGOV_CONTRACT_HZ=100 changes the tick; BWGOV_CONTRACT_LATE_FULL=1
 * makes samples late by up to the law's whole budget, h/4 + 50 ms.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/util/macro.h"
#include "bwgov/law/policy.h"

#define NSEC_PER_MSEC          UINT64_C(1000000)
#define NSEC_PER_SEC           UINT64_C(1000000000)
#define MSEC_PER_SEC           UINT64_C(1000)
#define STEP_NS                NSEC_PER_MSEC            /* simulation step */
#define SLICE_NS               ((int64_t) (5 * NSEC_PER_MSEC))  /* sched_cfs_bandwidth_slice_us */
#define MIN_CFS_RQ_RUNTIME_NS  ((int64_t) NSEC_PER_MSEC)        /* kept by a CPU going idle */
#define SLACK_PERIOD_NS        (5 * NSEC_PER_MSEC)      /* cfs_bandwidth_slack_period */
#define MIN_BW_EXPIRATION_NS   (2 * NSEC_PER_MSEC)      /* min_bandwidth_expiration */
#define NCPUS_MAX              8U
#define NOW_BASE_USEC          (1000 * USEC_PER_SEC)    /* the daemon's monotonic clock at t = 0 */
#define DEFAULT_CASES          480U     /* the contract batch; the others scale with it */

/* ---- PRNG: splitmix64, one stream per case ------------------------------ */

struct rng {
        uint64_t s;
};

static uint64_t rng_next(struct rng *g) {
        uint64_t z = (g->s += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static uint64_t rng_below(struct rng *g, uint64_t n) {
        return n == 0 ? 0 : rng_next(g) % n;
}

/* Uniform in [lo, hi]. */
static uint64_t rng_range(struct rng *g, uint64_t lo, uint64_t hi) {
        return hi <= lo ? lo : lo + rng_below(g, hi - lo + 1);
}

/* Spread over the orders of magnitude of [lo, hi]: halve the top a random
 * number of times, then uniform in the octave. */
static uint64_t rng_spread(struct rng *g, uint64_t lo, uint64_t hi) {
        uint64_t v = hi;

        for (uint64_t k = rng_below(g, 12); k > 0 && v / 2 >= lo; k--)
                v /= 2;
        return rng_range(g, v / 2 > lo ? v / 2 : lo, v);
}

static bool rng_chance(struct rng *g, unsigned permille) {
        return rng_below(g, 1000) < permille;
}

static uint64_t ceil_to(uint64_t v, uint64_t q) {
        return (v + q - 1) / q * q;
}

/* ---- the simulated kernel ------------------------------------------------ */

struct kcpu {
        int64_t runtime_ns;     /* cfs_rq->runtime_remaining */
        int64_t unacct_ns;      /* ran since the last update_curr() */
        bool queued;            /* a task of the group is runnable here */
        bool throttled;
        uint64_t throttled_at_ns;
        uint64_t throttle_seq;  /* position on the throttled list */
};

struct kernel {
        unsigned ncpus;
        uint64_t tick_ns, tick_phase_ns;
        uint64_t period_ns;
        uint64_t quota_ns, burst_ns;    /* what cpu.max and cpu.max.burst hold */
        int64_t pool_ns;                /* cfs_b->runtime */
        struct kcpu cpu[NCPUS_MAX];
        uint64_t now_ns;
        uint64_t next_period_ns;
        bool timer_active, idle;
        bool slack_started;
        uint64_t slack_at_ns;
        uint64_t seq;

        uint64_t usage_ns;              /* charged: cpu.stat usage_usec */
        uint64_t ran_ns;                /* what really ran */
        uint64_t nr_periods, nr_throttled, throttled_ns;

        uint64_t file_writes;
        uint64_t einval;                /* writes the kernel would have refused (burst > quota) */
};

static bool k_any_throttled(const struct kernel *k) {
        for (unsigned i = 0; i < k->ncpus; i++)
                if (k->cpu[i].throttled)
                        return true;
        return false;
}

static void k_refill(struct kernel *k) {
        int64_t q = (int64_t) k->quota_ns, cap = (int64_t) (k->quota_ns + k->burst_ns);

        /* __refill_cfs_bandwidth_runtime() */
        k->pool_ns = k->pool_ns + q < cap ? k->pool_ns + q : cap;
}

/* __assign_cfs_rq_runtime(): top the local runtime up to one slice. */
static void k_pull(struct kernel *k, struct kcpu *c) {
        int64_t amount = SLICE_NS - c->runtime_ns;

        k->timer_active = true;
        if (k->pool_ns <= 0)
                return;
        if (amount > k->pool_ns)
                amount = k->pool_ns;
        k->pool_ns -= amount;
        c->runtime_ns += amount;
        k->idle = false;
}

static void k_throttle(struct kernel *k, struct kcpu *c) {
        c->throttled = true;
        c->throttled_at_ns = k->now_ns;
        c->throttle_seq = ++k->seq;
}

static void k_unthrottle(struct kernel *k, struct kcpu *c) {
        c->throttled = false;
        k->throttled_ns += k->now_ns - c->throttled_at_ns;
}

/* update_curr() -> account_cfs_rq_runtime(), and the throttle that follows
 * a failed pull at the next schedule. */
static void k_account(struct kernel *k, struct kcpu *c) {
        c->runtime_ns -= c->unacct_ns;
        k->usage_ns += (uint64_t) c->unacct_ns;
        c->unacct_ns = 0;
        if (c->runtime_ns > 0 || c->throttled)
                return;
        k_pull(k, c);
        if (c->runtime_ns <= 0)
                k_throttle(k, c);
}

/* distribute_cfs_runtime(): oldest throttled first. */
static void k_distribute(struct kernel *k) {
        for (;;) {
                struct kcpu *c = NULL;
                int64_t amount;

                if (k->pool_ns <= 0)
                        return;
                for (unsigned i = 0; i < k->ncpus; i++)
                        if (k->cpu[i].throttled && (!c || k->cpu[i].throttle_seq < c->throttle_seq))
                                c = &k->cpu[i];
                if (!c)
                        return;
                amount = -c->runtime_ns + 1;
                if (amount > k->pool_ns)
                        amount = k->pool_ns;
                k->pool_ns -= amount;
                c->runtime_ns += amount;
                if (c->runtime_ns > 0)
                        k_unthrottle(k, c);
                else
                        return;         /* the pool is empty */
        }
}

/* do_sched_cfs_period_timer() */
static void k_period(struct kernel *k) {
        bool throttled;

        k->next_period_ns += k->period_ns;
        if (!k->timer_active)
                return;
        throttled = k_any_throttled(k);
        k->nr_periods++;
        k_refill(k);
        if (k->idle && !throttled) {
                k->timer_active = false;
                return;
        }
        if (!throttled) {
                k->idle = true;
                return;
        }
        k->nr_throttled++;
        k_distribute(k);
        k->idle = false;
}

/* do_sched_cfs_slack_timer() */
static void k_slack_timer(struct kernel *k) {
        k->slack_started = false;
        if (k->next_period_ns - k->now_ns < MIN_BW_EXPIRATION_NS)
                return;
        if (k->pool_ns > SLICE_NS)
                k_distribute(k);
}

/* return_cfs_rq_runtime(): the last task of the group on this CPU slept. */
static void k_return(struct kernel *k, struct kcpu *c) {
        int64_t slack = c->runtime_ns - MIN_CFS_RQ_RUNTIME_NS;

        if (slack <= 0)
                return;
        k->pool_ns += slack;
        c->runtime_ns -= slack;
        if (k->pool_ns > SLICE_NS && k_any_throttled(k) && !k->slack_started &&
            k->next_period_ns - k->now_ns >= SLACK_PERIOD_NS + MIN_BW_EXPIRATION_NS) {
                k->slack_started = true;
                k->slack_at_ns = k->now_ns + SLACK_PERIOD_NS;
        }
}

/* tg_set_cfs_bandwidth(), for a write of either file. */
static int k_write(struct kernel *k, uint64_t quota_usec, uint64_t burst_usec) {
        if (burst_usec > quota_usec) {
                k->einval++;
                return -EINVAL;
        }
        k->quota_ns = quota_usec * 1000;
        k->burst_ns = burst_usec * 1000;
        k->file_writes++;
        k_refill(k);
        k->timer_active = true;
        for (unsigned i = 0; i < k->ncpus; i++) {
                struct kcpu *c = &k->cpu[i];

                c->runtime_ns = 0;
                if (c->throttled)
                        k_unthrottle(k, c);
        }
        return 0;
}

static void k_set_threads(struct kernel *k, unsigned n) {
        unsigned want = n < k->ncpus ? n : k->ncpus;

        for (unsigned i = 0; i < k->ncpus; i++) {
                struct kcpu *c = &k->cpu[i];
                bool q = i < want;

                if (q && !c->queued) {
                        /* check_enqueue_throttle() */
                        c->queued = true;
                        if (!c->throttled && c->runtime_ns <= 0) {
                                k_pull(k, c);
                                if (c->runtime_ns <= 0)
                                        k_throttle(k, c);
                        }
                } else if (!q && c->queued) {
                        if (!c->throttled)
                                k_account(k, c);
                        c->queued = false;
                        k_return(k, c);
                }
        }
}

static void k_tick(struct kernel *k) {
        for (unsigned i = 0; i < k->ncpus; i++) {
                struct kcpu *c = &k->cpu[i];

                if (c->queued && !c->throttled)
                        k_account(k, c);
        }
}

static void k_step(struct kernel *k) {
        for (unsigned i = 0; i < k->ncpus; i++) {
                struct kcpu *c = &k->cpu[i];

                if (c->queued && !c->throttled) {
                        c->unacct_ns += (int64_t) STEP_NS;
                        k->ran_ns += STEP_NS;
                }
        }
        k->now_ns += STEP_NS;
}

/* ---- cases --------------------------------------------------------------- */

static uint64_t env_u64(const char *name, uint64_t def) {
        const char *e = getenv(name);

        return e && *e ? strtoull(e, NULL, 0) : def;
}

enum demand_kind {
        DEMAND_ONOFF,           /* random thread counts for random durations */
        DEMAND_SQUARE,          /* square wave near multiples of P and of the horizons */
        DEMAND_WORST_TIMING,    /* on right after each sample, off right before the next */
        DEMAND_OVERLOAD,        /* every CPU, longer than CreditMax= lasts */
        DEMAND_IDLE_OVERLOAD,   /* long idle, then every CPU */
        DEMAND_CREEP,           /* a rate creeping just above the baseline */
        DEMAND_DRAIN_REFILL,    /* drain to exhaustion, refill to a quarter of CreditMax=, again */
        _DEMAND_RANDOM_MAX,
        DEMAND_STEADY = _DEMAND_RANDOM_MAX,     /* a constant rate */
        DEMAND_BURSTY,          /* bursts on every CPU, around a_ns long, gaps around b_ns */
        DEMAND_OVERLOAD_AFTER,  /* every CPU from just after sample number `variant` on */
        _DEMAND_MAX,
};

static const char *const demand_names[_DEMAND_MAX] = {
        [DEMAND_ONOFF]          = "on-off",
        [DEMAND_SQUARE]         = "square",
        [DEMAND_WORST_TIMING]   = "worst-timing",
        [DEMAND_OVERLOAD]       = "overload",
        [DEMAND_IDLE_OVERLOAD]  = "idle-overload",
        [DEMAND_CREEP]          = "creep",
        [DEMAND_DRAIN_REFILL]   = "drain-refill",
        [DEMAND_STEADY]         = "steady",
        [DEMAND_BURSTY]         = "bursty",
        [DEMAND_OVERLOAD_AFTER] = "overload-after",
};

enum burst_max_kind {
        BURST_MAX_UNSET,        /* CPUBurstMax= unset: up to the baseline quota */
        BURST_MAX_ZERO,         /* CPUBurstMax=0: the burst is not ours */
        BURST_MAX_VALUE,
        _BURST_MAX_KIND_MAX,
};

struct demand_spec {
        enum demand_kind kind;
        unsigned threads;               /* the most runnable threads */
        uint64_t a_ns, b_ns;            /* kind-specific times */
        uint64_t rate0, rate1;          /* µs/s, rates for steady, creep and bursty */
        unsigned variant;
};

struct case_params {
        uint64_t seed;
        unsigned ncpus;
        unsigned hz;
        uint64_t period_usec;
        uint64_t quota_usec;            /* the baseline */
        uint64_t kernel_burst_usec;     /* what cpu.max.burst holds at adoption */
        uint64_t quota_max_usec;        /* CPUQuotaMax=, per period */
        enum burst_max_kind burst_max_kind;
        uint64_t burst_max_usec;
        uint64_t credit_max_usec;
        uint64_t interval_usec, active_interval_usec, hold_off_usec;
        uint64_t tick_phase_ms, period_phase_ms;
        uint64_t duration_usec;
        struct demand_spec demand;
        uint64_t count_writes_from_ms;  /* count writes from then on; 0: not at all */
        bool count_writes_at_baseline;  /* ... from the first credit-exhausted decision under overload
                                         * (from the start if there is none) */
};

static const char *burst_max_str(const struct case_params *cp, char *buf, size_t size) {
        switch (cp->burst_max_kind) {
        case BURST_MAX_UNSET:
                return "unset";
        case BURST_MAX_ZERO:
                return "0";
        default:
                snprintf(buf, size, "%" PRIu64 "us", cp->burst_max_usec);
                return buf;
        }
}

/* One line that names the whole case. */
static void case_describe(const struct case_params *cp, char *buf, size_t size) {
        char bm[32];

        snprintf(buf, size,
                 "seed=0x%016" PRIx64 " ncpus=%u hz=%u P=%" PRIu64 "us Qb=%" PRIu64 "us (%.3f CPU) kburst=%" PRIu64
                 "us qmax=%" PRIu64 "us burstmax=%s CreditMax=%.3fs I=%" PRIu64 "ms AI=%" PRIu64 "ms hold=%" PRIu64
                 "ms demand=%s/%u T=%u a=%" PRIu64 "ms b=%" PRIu64 "ms rates=%" PRIu64 "..%" PRIu64
                 " dur=%" PRIu64 "s phases=%" PRIu64 "/%" PRIu64 "ms",
                 cp->seed, cp->ncpus, cp->hz, cp->period_usec, cp->quota_usec,
                 (double) cp->quota_usec / (double) cp->period_usec, cp->kernel_burst_usec, cp->quota_max_usec,
                 burst_max_str(cp, bm, sizeof bm), (double) cp->credit_max_usec / 1e6,
                 cp->interval_usec / USEC_PER_MSEC, cp->active_interval_usec / USEC_PER_MSEC,
                 cp->hold_off_usec / USEC_PER_MSEC, demand_names[cp->demand.kind], cp->demand.variant,
                 cp->demand.threads, cp->demand.a_ns / NSEC_PER_MSEC, cp->demand.b_ns / NSEC_PER_MSEC,
                 cp->demand.rate0, cp->demand.rate1, cp->duration_usec / USEC_PER_SEC, cp->tick_phase_ms,
                 cp->period_phase_ms);
}

/* The parameters the daemon resolves for this case (unit_update_params()). */
static struct bw_policy_params case_policy_params(const struct case_params *cp) {
        struct bw_policy_params p = {
                .mode = BW_MODE_ELASTIC,
                .baseline = {
                        .quota_usec = cp->quota_usec,
                        .period_usec = cp->period_usec,
                        .burst_usec = cp->kernel_burst_usec,
                        .has_burst = true,
                },
                .quota_max_usec = cp->quota_max_usec > cp->quota_usec ? cp->quota_max_usec : cp->quota_usec,
                .burst_max_usec = cp->burst_max_kind == BURST_MAX_VALUE ? cp->burst_max_usec / 1000 * 1000 : 0,
                .credit_max_usec = cp->credit_max_usec,
                .target_throttle = 10000,
                .target_pressure = 50000,
                .hold_off_usec = cp->hold_off_usec,
                .interval_usec = cp->interval_usec,
                .active_interval_usec = cp->active_interval_usec,
                .ncpus = cp->ncpus,
                .kernel_has_burst = cp->burst_max_kind != BURST_MAX_ZERO,
        };

        if (p.kernel_has_burst) {
                uint64_t floor = cp->burst_max_kind == BURST_MAX_VALUE ? cp->burst_max_usec : cp->quota_usec;

                floor = floor / 1000 * 1000;
                if (floor > cp->quota_usec)
                        floor = cp->quota_usec;
                if (floor > p.baseline.burst_usec)
                        p.baseline.burst_usec = floor;
        }
        return p;
}

/* Random parameters in the ranges of the brief: period 10 ms..1 s,
 * baseline 0.1..4 CPUs (at most ncpus), CPUQuotaMax= 1..4 x baseline,
 * CreditMax= 0..60 CPU-s, CPUBurstMax= unset, 0 or a value, Interval=
 * 0.1..5 s, ActiveInterval= 0.1 s..Interval=. */
static void case_random_params(struct rng *g, struct case_params *cp) {
        uint64_t rate, cpus_max;

        cp->ncpus = (unsigned) rng_range(g, 1, NCPUS_MAX);
        cp->hz = (unsigned) env_u64("BWGOV_CONTRACT_HZ", 250);
        cp->period_usec = rng_spread(g, 10, 1000) * USEC_PER_MSEC;
        cpus_max = cp->ncpus < 4 ? cp->ncpus * 1000 : 4000;
        rate = rng_spread(g, 100, cpus_max);                    /* milli-CPUs */
        cp->quota_usec = cp->period_usec * rate / 1000;
        if (rng_chance(g, 500))
                cp->quota_usec = cp->quota_usec / 1000 * 1000;  /* CPUQuota= lands on the 1 ms grid */
        if (cp->quota_usec < BW_QUOTA_MIN_USEC)
                cp->quota_usec = BW_QUOTA_MIN_USEC;
        cp->quota_max_usec = (cp->quota_usec * rng_range(g, 1000, 4000) / 1000 + 500) / 1000 * 1000;
        cp->burst_max_kind = (enum burst_max_kind) rng_below(g, _BURST_MAX_KIND_MAX);
        cp->burst_max_usec = rng_range(g, 1000, 2 * cp->quota_usec);
        cp->kernel_burst_usec = rng_chance(g, 250) ? rng_range(g, 0, cp->quota_usec) : 0;
        if (rng_chance(g, 80))
                cp->credit_max_usec = 0;
        else
                cp->credit_max_usec = rng_spread(g, 10 * USEC_PER_MSEC, 60 * USEC_PER_SEC);
        cp->interval_usec = rng_range(g, 100, 5000) * USEC_PER_MSEC;
        cp->active_interval_usec = rng_range(g, 100, cp->interval_usec / USEC_PER_MSEC) * USEC_PER_MSEC;
        cp->hold_off_usec = rng_range(g, 500, 10000) * USEC_PER_MSEC;
        cp->tick_phase_ms = rng_below(g, 1000 / cp->hz);
        cp->period_phase_ms = rng_range(g, 1, cp->period_usec / USEC_PER_MSEC);
        cp->duration_usec = rng_range(g, 60, 300) * USEC_PER_SEC;
}

/* Time the credit lasts at full overload, µs (rough: every CPU, no quota). */
static uint64_t credit_lasts_usec(const struct case_params *cp) {
        uint64_t over = cp->ncpus * USEC_PER_SEC - cp->quota_usec * USEC_PER_SEC / cp->period_usec;

        return over == 0 ? UINT64_MAX : cp->credit_max_usec * USEC_PER_SEC / over;
}

static void case_random_demand(struct rng *g, struct case_params *cp, enum demand_kind kind) {
        struct demand_spec *d = &cp->demand;
        uint64_t b_rate = cp->quota_usec * USEC_PER_SEC / cp->period_usec;

        *d = (struct demand_spec) {
                .kind = kind,
                .threads = (unsigned) rng_range(g, 1, cp->ncpus + 2),
                .variant = (unsigned) rng_below(g, 4),
        };
        switch (kind) {
        case DEMAND_SQUARE: {
                /* Resonance: near a multiple of P, of a horizon, or of a
                 * horizon with the average lateness. */
                uint64_t bases[] = {
                        cp->period_usec,
                        cp->active_interval_usec,
                        cp->interval_usec,
                        cp->active_interval_usec + cp->active_interval_usec / 32 + 10 * USEC_PER_MSEC,
                        cp->interval_usec + cp->interval_usec / 32 + 10 * USEC_PER_MSEC,
                };
                uint64_t w = bases[rng_below(g, ELEMENTSOF(bases))] * rng_range(g, 1, 4);

                if (rng_chance(g, 250))
                        w /= 2;
                w = w * rng_range(g, 970, 1030) / 1000;
                if (w < 4 * USEC_PER_MSEC)
                        w = 4 * USEC_PER_MSEC;
                d->a_ns = ceil_to(w * 1000, NSEC_PER_MSEC);                     /* wave period */
                d->b_ns = ceil_to(d->a_ns * rng_range(g, 100, 900) / 1000, NSEC_PER_MSEC);   /* on time */
                d->threads = (unsigned) rng_range(g, cp->ncpus > 1 ? cp->ncpus - 1 : 1, cp->ncpus + 2);
                break;
        }
        case DEMAND_OVERLOAD:
        case DEMAND_IDLE_OVERLOAD: {
                uint64_t lasts = credit_lasts_usec(cp);

                d->threads = (unsigned) rng_range(g, cp->ncpus, cp->ncpus + 2);
                if (kind == DEMAND_OVERLOAD)
                        d->a_ns = rng_range(g, 0, 10000) * NSEC_PER_MSEC;      /* start */
                else
                        d->a_ns = rng_range(g, 20000, 120000) * NSEC_PER_MSEC;
                /* Longer than the credit lasts, then (variant 0) idle. */
                if (lasts < UINT64_MAX / 4)
                        d->b_ns = d->a_ns + (lasts * 3 / 2 + 30 * USEC_PER_SEC) * 1000;
                else
                        d->b_ns = UINT64_MAX;
                if (d->variant != 0)
                        d->b_ns = UINT64_MAX;
                if (cp->duration_usec * 1000 < d->a_ns + 60 * USEC_PER_SEC * 1000)
                        cp->duration_usec = (d->a_ns / 1000 + 60 * USEC_PER_SEC);
                break;
        }
        case DEMAND_CREEP: {
                uint64_t top = cp->ncpus * USEC_PER_SEC;

                d->rate0 = b_rate * rng_range(g, 950, 1000) / 1000;
                d->rate1 = b_rate * rng_range(g, 1005, 1150) / 1000;
                if (d->rate1 > top)
                        d->rate1 = top;
                if (d->rate0 > d->rate1)
                        d->rate0 = d->rate1;
                break;
        }
        case DEMAND_DRAIN_REFILL:
        case DEMAND_WORST_TIMING:
                d->threads = (unsigned) rng_range(g, cp->ncpus, cp->ncpus + 2);
                break;
        default:
                break;
        }
}

/* ---- one run: the kernel, the daemon, the law, and what we measure ------- */

enum prop {
        PROP_CONTRACT,          /* 1: windows between period boundaries */
        PROP_CONTRACT_MS,       /* 1: 1 ms windows beyond Bc + one baseline quota */
        PROP_WRITES,            /* identical writes, burst > quota, the prime changing what adoption wrote */
        PROP_RANGE,             /* target outside [Qb, limit], burst above Bc, another period */
        PROP_EXHAUST,           /* 3: credit that pays for nothing yet headroom, or flapping */
        PROP_CREDIT,            /* 5: the law's balance against the same bucket computed here */
        PROP_SOUND,             /* 5: the law's balance above the true one (what ran, continuously) */
        PROP_RESERVE,           /* the law's own debt above Bc + Qb (credit.h: the reserve keeps it within Bc) */
        PROP_STEADY,            /* 4: writes under steady or bursty load */
        _PROP_MAX,
};

static const char *const prop_names[_PROP_MAX] = {
        [PROP_CONTRACT]    = "contract",
        [PROP_CONTRACT_MS] = "contract-1ms",
        [PROP_WRITES]      = "writes",
        [PROP_RANGE]       = "range",
        [PROP_EXHAUST]     = "exhaustion",
        [PROP_CREDIT]      = "credit",
        [PROP_SOUND]       = "credit-sound",
        [PROP_RESERVE]     = "reserve",
        [PROP_STEADY]      = "steady",
};

struct trace {
        uint64_t t_ms;
        enum bw_rule rule;
        uint64_t quota_before, quota, burst;
        uint64_t credit, debt, next_tick;
        uint64_t usage_rate;
        bool change;
};

/* Largest excess of a window over the baseline rate: X(t) = U(t) P - Qb t,
 * excess(t1, t2) = (X(t2) - X(t1)) / P; O(1) per point. */
struct window_max {
        bool primed;
        int64_t min_x;
        uint64_t min_t_ms;
        int64_t max_excess_x;           /* x P */
        uint64_t t1_ms, t2_ms;
};

static void window_add(struct window_max *w, int64_t x, uint64_t t_ms) {
        if (!w->primed || x < w->min_x) {
                w->min_x = x;
                w->min_t_ms = t_ms;
        }
        if (!w->primed || x - w->min_x > w->max_excess_x) {
                w->max_excess_x = x - w->min_x;
                w->t1_ms = w->min_t_ms;
                w->t2_ms = t_ms;
        }
        w->primed = true;
}

struct run {
        struct case_params cp;
        struct bw_policy_params p;
        struct bw_policy_state st;
        struct kernel k;
        struct rng g_demand, g_late;    /* separate streams: the demand does not move with the samples */
        bool late_full;                 /* BWGOV_CONTRACT_LATE_FULL: lateness up to the law's whole budget */
        uint64_t bc;                    /* contract burst */
        uint64_t slack;                 /* the kernel's own accounting slack, bw_policy_slack_usec() */
        uint64_t qlimit;
        uint64_t level1;                /* the first headroom level, µs per period */
        uint64_t need1;                 /* a lower bound of what it costs: the active horizon, no lateness */

        /* the daemon */
        uint64_t next_sample_ns, deadline_ns, last_sample_ns;
        struct bw_decision d;
        bool has_d;
        uint64_t n_samples, n_changes;
        uint64_t first_change_ms;       /* first change after the prime; UINT64_MAX = none */
        uint64_t changes_after_ms;      /* count changes at or after this time (steady checks) */
        uint64_t changes_after;

        /* demand state */
        uint64_t seg_end_ns;
        unsigned seg_n;
        uint64_t pwm_acc;
        bool draining;

        /* credit agreement (property 5), exact: bucket x P */
        int64_t bx;
        uint64_t prev_usage_us, prev_now_us;
        uint64_t since_cap;
        int64_t optimism_max;           /* law - (bucket of what ran + counter lag), the largest */
        int64_t pessimism_max;          /* the true balance - the law's, the largest (informational) */
        int64_t longest_sample_us;      /* the longest sample so far (the netting's bound) */
        int64_t cons_x;                 /* a bucket that caps the earnings before paying, x P */
        int64_t cons_optimism_max;      /* ... above the true one, the largest (informational) */
        int64_t law_min_balance;        /* the law's credit - debt, the lowest at a sample */

        /* exhaustion */
        uint64_t exhausted_at_ms;       /* first decision the credit could not pay for level 1; UINT64_MAX = none */
        uint64_t decreased_at_ms;       /* the last decision that lowered the quota; UINT64_MAX = none */

        /* contract */
        struct window_max win_period, win_ms;
        int64_t min_bucket_period_x;    /* the true balance at period boundaries, x P */

        struct trace *tr;
        size_t n_tr, cap_tr;

        unsigned nfail[_PROP_MAX];
        char msg[_PROP_MAX][384];
        bool verbose;
        bool control;                   /* no law: the baseline stays, for comparison */
        bool extra_samples;             /* BWGOV_CONTRACT_EXTRA_SAMPLES: diagnostics */
        unsigned last_n;
        int64_t control_excess;         /* the same demand on a static baseline, beyond the contract */
};

_printf_(3, 4)
static void run_fail(struct run *r, enum prop prop, const char *fmt, ...) {
        va_list ap;

        if (r->control || r->nfail[prop]++ > 0)
                return;
        va_start(ap, fmt);
        vsnprintf(r->msg[prop], sizeof r->msg[prop], fmt, ap);
        va_end(ap);
}

static uint64_t ms_of(uint64_t ns) {
        return ns / NSEC_PER_MSEC;
}

/* ---- demand ---------------------------------------------------------------- */

/* Threads for a rate in µs/s: whole CPUs plus one thread for the fraction,
 * by error diffusion on the 1 ms grid. */
static unsigned demand_rate(struct run *r, uint64_t rate) {
        unsigned n = (unsigned) (rate / USEC_PER_SEC);

        r->pwm_acc += rate % USEC_PER_SEC;
        if (r->pwm_acc >= USEC_PER_SEC) {
                r->pwm_acc -= USEC_PER_SEC;
                n++;
        }
        return n;
}

static unsigned demand_threads(struct run *r, uint64_t t) {
        const struct demand_spec *d = &r->cp.demand;
        uint64_t dur = r->cp.duration_usec * 1000;

        switch (d->kind) {
        case DEMAND_ONOFF:
                if (t >= r->seg_end_ns) {
                        r->seg_end_ns = t + ceil_to(rng_spread(&r->g_demand, 5, 30000) * NSEC_PER_MSEC, NSEC_PER_MSEC);
                        r->seg_n = rng_chance(&r->g_demand, 300) ? 0 :
                                (unsigned) rng_range(&r->g_demand, 1, d->threads);
                }
                return r->seg_n;

        case DEMAND_SQUARE:
                return (t + r->cp.period_phase_ms * NSEC_PER_MSEC) % d->a_ns < d->b_ns ? d->threads : 0;

        case DEMAND_WORST_TIMING: {
                /* Variant 0, 1: off from just before the deadline (the
                 * expected sample) to just after the real one; 2, 3: off
                 * only around the real sample, which the adversary knows. */
                uint64_t off = d->variant < 2 ? r->deadline_ns : r->next_sample_ns;

                if (t > r->last_sample_ns && t + NSEC_PER_MSEC < off)
                        return d->threads;
                return 0;
        }

        case DEMAND_OVERLOAD:
        case DEMAND_IDLE_OVERLOAD:
                return t >= d->a_ns && t < d->b_ns ? d->threads : 0;

        case DEMAND_CREEP:
                return demand_rate(r, d->rate0 + (d->rate1 - d->rate0) * (t / NSEC_PER_MSEC) / (dur / NSEC_PER_MSEC));

        case DEMAND_DRAIN_REFILL:
                /* Drain on every CPU until the law is at the baseline for
                 * want of credit (variant 0, 1), or until it is about to be
                 * (2, 3: the credit near what the first level costs), then
                 * idle until a quarter of CreditMax= is back. */
                if (r->has_d) {
                        uint64_t mark = r->cp.credit_max_usec / 4;
                        bool edge = d->variant >= 2 && r->need1 != UINT64_MAX &&
                                r->d.credit_after_usec < r->need1 + r->need1 / 4 + r->cp.quota_usec;

                        if (r->draining && (r->d.rule == BW_RULE_CREDIT_EXHAUSTED || edge))
                                r->draining = false;
                        else if (!r->draining && r->d.debt_usec == 0 && r->d.credit_after_usec > mark)
                                r->draining = true;
                }
                return r->draining ? d->threads : 0;

        case DEMAND_STEADY:
                return demand_rate(r, d->rate0);

        case DEMAND_OVERLOAD_AFTER:
                return r->n_samples > d->variant ? d->threads : 0;

        case DEMAND_BURSTY:
                /* Bursts of `threads` around a_ns long, gaps around b_ns. */
                if (t >= r->seg_end_ns) {
                        uint64_t mean_ms = (r->seg_n == 0 ? d->a_ns : d->b_ns) / NSEC_PER_MSEC;
                        uint64_t len = rng_range(&r->g_demand, mean_ms / 2, mean_ms * 3 / 2);

                        r->seg_n = r->seg_n == 0 ? d->threads : 0;
                        r->seg_end_ns = t + (len > 0 ? len : 1) * NSEC_PER_MSEC;
                }
                return r->seg_n;

        default:
                return 0;
        }
}

static bool demand_overloaded(const struct run *r, uint64_t t) {
        const struct demand_spec *d = &r->cp.demand;

        if (d->kind == DEMAND_OVERLOAD_AFTER)
                return r->n_samples > d->variant;
        return (d->kind == DEMAND_OVERLOAD || d->kind == DEMAND_IDLE_OVERLOAD) && t >= d->a_ns && t < d->b_ns;
}

/* ---- the daemon -------------------------------------------------------------- */

static void trace_push(struct run *r, const struct bw_decision *d, uint64_t quota_before) {
        if (r->n_tr == r->cap_tr) {
                size_t cap = r->cap_tr ? 2 * r->cap_tr : 1024;
                struct trace *t = realloc(r->tr, cap * sizeof *t);

                assert_non_null(t);
                r->tr = t;
                r->cap_tr = cap;
        }
        r->tr[r->n_tr++] = (struct trace) {
                .t_ms = ms_of(r->k.now_ns),
                .rule = d->rule,
                .quota_before = quota_before,
                .quota = d->target.quota_usec,
                .burst = d->target.burst_usec,
                .credit = d->credit_after_usec,
                .debt = d->debt_usec,
                .next_tick = d->next_tick_usec,
                .usage_rate = d->usage_rate,
                .change = d->change,
        };
}

static void trace_print(const struct run *r, uint64_t from_ms, uint64_t to_ms, unsigned max_lines) {
        unsigned n = 0;

        for (size_t i = 0; i < r->n_tr && n < max_lines; i++) {
                const struct trace *t = &r->tr[i];

                if (t->t_ms < from_ms || t->t_ms > to_ms)
                        continue;
                printf("#     t=%8.3fs %-16s quota %" PRIu64 "->%" PRIu64 " burst %" PRIu64 " credit %" PRIu64
                       " debt %" PRIu64 " use %" PRIu64 "us/s next %" PRIu64 "ms%s\n",
                       (double) t->t_ms / 1000, bw_rule_to_string(t->rule), t->quota_before, t->quota, t->burst,
                       t->credit, t->debt, t->usage_rate, t->next_tick / USEC_PER_MSEC, t->change ? " WRITE" : "");
                n++;
        }
}

/* Write a target as bw_cg_write_bandwidth() does: burst down first, then
 * cpu.max, then burst up; only the files whose value differs. Returns the
 * number of files written. */
static unsigned daemon_write(struct run *r, const struct bw_bandwidth *t) {
        struct kernel *k = &r->k;
        uint64_t quota = k->quota_ns / 1000, burst = k->burst_ns / 1000;
        unsigned n = 0;

        if (t->period_usec != k->period_ns / 1000)
                run_fail(r, PROP_RANGE, "t=%.3fs: target period %" PRIu32 "us, the kernel's is %" PRIu64 "us",
                         (double) k->now_ns / 1e9, t->period_usec, k->period_ns / 1000);
        if (t->burst_usec < burst) {
                if (k_write(k, quota, t->burst_usec) < 0)
                        run_fail(r, PROP_WRITES, "t=%.3fs: burst %" PRIu64 " written above quota %" PRIu64,
                                 (double) k->now_ns / 1e9, t->burst_usec, quota);
                n++;
        }
        burst = k->burst_ns / 1000;
        if (t->quota_usec != quota) {
                if (k_write(k, t->quota_usec, burst) < 0)
                        run_fail(r, PROP_WRITES, "t=%.3fs: quota %" PRIu64 " written under burst %" PRIu64,
                                 (double) k->now_ns / 1e9, t->quota_usec, burst);
                n++;
        }
        quota = k->quota_ns / 1000;
        if (t->burst_usec > burst) {
                if (k_write(k, quota, t->burst_usec) < 0)
                        run_fail(r, PROP_WRITES, "t=%.3fs: burst %" PRIu64 " written above quota %" PRIu64,
                                 (double) k->now_ns / 1e9, t->burst_usec, quota);
                n++;
        }
        return n;
}

static struct bw_bandwidth kernel_bandwidth(const struct kernel *k) {
        return (struct bw_bandwidth) {
                .quota_usec = k->quota_ns / 1000,
                .period_usec = k->period_ns / 1000,
                .burst_usec = k->burst_ns / 1000,
                .has_burst = true,
        };
}

/* floor(a / b) for b > 0 */
static int64_t div_floor(int64_t a, int64_t b) {
        return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Property 5 and the reserve, at every sample after the prime. */
static void check_credit(struct run *r, const struct bw_policy_input *in, const struct bw_decision *d) {
        int64_t P = (int64_t) r->cp.period_usec, cap = (int64_t) r->cp.credit_max_usec * P;
        int64_t law = (int64_t) d->credit_after_usec - (int64_t) d->debt_usec, ours, tol, diff;
        int64_t x, min_x, truth, lag;
        uint64_t du = in->stat.usage_usec - r->prev_usage_us, dt = in->now_usec - r->prev_now_us;
        int64_t earned_x = (int64_t) (r->cp.quota_usec * dt), used_x = (int64_t) du * P;

        /* 5a: the bucket of credit.h from the counter the law read, exact
         * (x P): earn Qb/P dt, pay the usage, cap at CreditMax=. */
        r->bx += earned_x - used_x;
        if (r->bx > cap)
                r->bx = cap;
        ours = div_floor(r->bx, P);
        if (law == (int64_t) r->cp.credit_max_usec)
                r->since_cap = 0;
        else
                r->since_cap++;
        /* The law floors each sample's earnings: it may trail by a µs per
         * sample since it was last full, never lead. */
        tol = (int64_t) r->since_cap + 1;
        diff = law - ours;
        if (diff > 1 || diff < -tol)
                run_fail(r, PROP_CREDIT, "t=%.3fs: the law's balance %" PRId64 "us, ours %" PRId64
                         "us (tolerance %" PRId64 "us)", (double) r->k.now_ns / 1e9, law, ours, tol);
        /* Netting a sample's earnings and usage overstates the balance by
         * what the group earned at a full bucket within one sample, never
         * by more than one sample's earnings (credit.h); the law holds
         * that in its reserve. */
        if ((int64_t) dt > r->longest_sample_us)
                r->longest_sample_us = (int64_t) dt;

        /* 5b: against the true balance, CreditMax= less the worst window
         * of what really ran ending now (capped continuously, not at the
         * samples). The law cannot see within a sample; it may be above it
         * by the counter's lag (what ran but is not yet charged) and its
         * rounding, no more: the contract rests on it. */
        x = (int64_t) (r->k.ran_ns / 1000) * P - (int64_t) r->cp.quota_usec * (int64_t) (r->k.now_ns / 1000);
        min_x = r->win_ms.primed && r->win_ms.min_x < x ? r->win_ms.min_x : x;
        truth = (int64_t) r->cp.credit_max_usec - div_floor(x - min_x, P);
        lag = (int64_t) ((r->k.ran_ns - r->k.usage_ns) / 1000);
        if (law - truth - lag > r->optimism_max)
                r->optimism_max = law - truth - lag;
        if (law - truth - lag > tol + 1 + (int64_t) r->cp.quota_usec * r->longest_sample_us / P)
                run_fail(r, PROP_SOUND, "t=%.3fs: the law's balance %" PRId64 "us, the true one %" PRId64
                         "us (+%" PRId64 "us not yet charged), more than one sample's earnings (%" PRId64 "us) above",
                         (double) r->k.now_ns / 1e9, law, truth, lag,
                         (int64_t) r->cp.quota_usec * r->longest_sample_us / P);
        /* Informational: a bucket that caps the earnings before it pays
         * the usage, min(C + earned, CreditMax) - used, is a lower bound
         * of the true one whatever the timing inside the sample. */
        r->cons_x = (r->cons_x + earned_x < cap ? r->cons_x + earned_x : cap) - used_x;
        if (div_floor(r->cons_x, P) - truth - lag > r->cons_optimism_max)
                r->cons_optimism_max = div_floor(r->cons_x, P) - truth - lag;
        /* How far below the truth the law stays (informational). */
        if (truth - law > r->pessimism_max)
                r->pessimism_max = truth - law;

        /* The reserve: credit.h promises the debt stays within Bc. The law
         * samples at any phase of the period, so allow one baseline quota
         * of period quantisation on top, as for 1 ms windows. */
        if (law < r->law_min_balance)
                r->law_min_balance = law;
        if (d->debt_usec > r->bc + r->cp.quota_usec)
                run_fail(r, PROP_RESERVE, "t=%.3fs: the law's own debt %" PRIu64 "us is above Bc + Qb = %" PRIu64
                         "us (%s)", (double) r->k.now_ns / 1e9, d->debt_usec, r->bc + r->cp.quota_usec,
                         bw_rule_to_string(d->rule));

        r->prev_usage_us = in->stat.usage_usec;
        r->prev_now_us = in->now_usec;
}

static void daemon_sample(struct run *r) {
        struct kernel *k = &r->k;
        struct bw_policy_input in = {
                .now_usec = NOW_BASE_USEC + k->now_ns / 1000,
                .stat = {
                        .usage_usec = k->usage_ns / 1000,
                        .nr_periods = k->nr_periods,
                        .nr_throttled = k->nr_throttled,
                        .throttled_usec = k->throttled_ns / 1000,
                        .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED |
                                BW_CPUSTAT_THROTTLED,
                },
                .current = kernel_bandwidth(k),
                .ancestor_quota_usec = BW_QUOTA_MAX,
        };
        struct bw_decision d;
        uint64_t now_ms = ms_of(k->now_ns), late, h;
        bool first = !r->has_d;

        assert_int_equal(bw_policy_decide(&r->p, &r->st, &in, &d), 0);
        r->n_samples++;
        trace_push(r, &d, in.current.quota_usec);
        if (r->verbose) {
                trace_print(r, now_ms, now_ms, 1);
                printf("#       ran %" PRIu64 "us charged %" PRIu64 "us pool %" PRId64 "us thr %" PRIu64 "\n",
                       k->ran_ns / 1000, k->usage_ns / 1000, k->pool_ns / 1000, k->nr_throttled);
        }

        /* Writes: change is would_change in elastic mode, and a change
         * always names a value the kernel does not hold. */
        if (d.change != d.would_change)
                run_fail(r, PROP_WRITES, "t=%.3fs: change %d, would_change %d in elastic mode",
                         (double) now_ms / 1000, d.change, d.would_change);
        if (d.change && d.target.quota_usec == in.current.quota_usec && d.target.burst_usec == in.current.burst_usec &&
            d.target.period_usec == in.current.period_usec) {
                run_fail(r, PROP_WRITES, "t=%.3fs: %s targets the current value with change=true",
                         (double) now_ms / 1000, bw_rule_to_string(d.rule));
        }
        if (first && d.would_change)
                run_fail(r, PROP_WRITES, "the first decision (%s) differs from the rest target written at adoption: "
                         "quota %" PRIu64 "->%" PRIu64 " burst %" PRIu64 "->%" PRIu64, bw_rule_to_string(d.rule),
                         in.current.quota_usec, d.target.quota_usec, in.current.burst_usec, d.target.burst_usec);

        /* Range. */
        if (d.target.quota_usec < r->cp.quota_usec || d.target.quota_usec > r->qlimit)
                run_fail(r, PROP_RANGE, "t=%.3fs: target quota %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]",
                         (double) now_ms / 1000, d.target.quota_usec, r->cp.quota_usec, r->qlimit);
        if (d.target.burst_usec > r->bc)
                run_fail(r, PROP_RANGE, "t=%.3fs: target burst %" PRIu64 " above the contract burst %" PRIu64,
                         (double) now_ms / 1000, d.target.burst_usec, r->bc);

        if (!first)
                check_credit(r, &in, &d);
        else {
                r->prev_usage_us = in.stat.usage_usec;
                r->prev_now_us = in.now_usec;
        }

        /* Exhaustion: a balance that cannot pay for the first level even
         * over the short horizon without lateness leaves exactly the
         * baseline, now; a raise after the prime needs what the level it
         * raises to costs over a whole Interval= (without the allowance
         * for a late timer: a lower bound), and a quarter more; none comes
         * within hold_off of a step down. */
        if (!first && (d.debt_usec > 0 || d.credit_after_usec < r->need1 || r->level1 == 0) &&
            d.target.quota_usec != r->cp.quota_usec)
                run_fail(r, PROP_EXHAUST, "t=%.3fs: credit %" PRIu64 " debt %" PRIu64 " cannot pay for the first "
                         "level (%" PRIu64 "us needs at least %" PRIu64 "), yet %s targets quota %" PRIu64,
                         (double) now_ms / 1000, d.credit_after_usec, d.debt_usec, r->level1, r->need1,
                         bw_rule_to_string(d.rule), d.target.quota_usec);
        if (!first && r->exhausted_at_ms == UINT64_MAX &&
            (d.debt_usec > 0 || d.credit_after_usec < r->need1 || d.rule == BW_RULE_CREDIT_EXHAUSTED))
                r->exhausted_at_ms = now_ms;
        if (!first && d.change && d.target.quota_usec > in.current.quota_usec) {
                uint64_t e = d.target.quota_usec - r->cp.quota_usec, need, b, slack;

                /* The burst in the pool (the law's, or one in place that is
                 * not) and the idle sample's earnings, as the law counts
                 * them, less its allowance for a late timer. */
                b = in.current.has_burst ? (in.current.burst_usec < r->bc ? in.current.burst_usec : r->bc) : 0;
                slack = r->slack + r->cp.quota_usec * r->cp.interval_usec / r->cp.period_usec;
                need = bw_credit_needed(e, r->cp.period_usec, r->cp.quota_usec, b, slack, r->cp.interval_usec);
                need = (need * 5 + 3) / 4;      /* 5/4, rounded up as the law does */
                if (d.debt_usec > 0 || d.credit_after_usec < need)
                        run_fail(r, PROP_EXHAUST, "t=%.3fs: raised to %" PRIu64 " (%s) with credit %" PRIu64 " debt %"
                                 PRIu64 ", short of %" PRIu64 " it costs over Interval= and a quarter",
                                 (double) now_ms / 1000, d.target.quota_usec, bw_rule_to_string(d.rule),
                                 d.credit_after_usec, d.debt_usec, need);
                if (r->decreased_at_ms != UINT64_MAX &&
                    (now_ms - r->decreased_at_ms) * USEC_PER_MSEC + USEC_PER_MSEC < r->cp.hold_off_usec)
                        run_fail(r, PROP_EXHAUST, "t=%.3fs: raised to %" PRIu64 " %.3fs after the step down at "
                                 "%.3fs, within hold_off", (double) now_ms / 1000, d.target.quota_usec,
                                 (double) (now_ms - r->decreased_at_ms) / 1000, (double) r->decreased_at_ms / 1000);
        }
        if (d.change && d.target.quota_usec < in.current.quota_usec)
                r->decreased_at_ms = now_ms;

        if (d.change && !r->control) {
                daemon_write(r, &d.target);
                r->n_changes++;
                if (now_ms >= r->changes_after_ms && r->changes_after++ == 0)
                        r->first_change_ms = now_ms;
        }
        if (r->cp.count_writes_at_baseline && !first && demand_overloaded(r, k->now_ns) &&
            d.rule == BW_RULE_CREDIT_EXHAUSTED && r->changes_after_ms == UINT64_MAX)
                r->changes_after_ms = now_ms + 1;

        /* The next sample: within next_tick_usec of this one, late by the
         * timer's accuracy plus a busy loop. A too-soon sample (0) keeps
         * the schedule the timer re-armed: one Interval= on. */
        h = d.next_tick_usec > 0 ? d.next_tick_usec : r->cp.interval_usec;
        r->deadline_ns = k->now_ns + h * 1000;
        late = rng_range(&r->g_late, 0, r->late_full ? h / 4 + 50 * USEC_PER_MSEC : h / 16 + 20 * USEC_PER_MSEC) * 1000;
        r->next_sample_ns = ceil_to(r->deadline_ns + late, NSEC_PER_MSEC);
        r->last_sample_ns = k->now_ns;
        r->d = d;
        r->has_d = true;
}

/* ---- a whole case -------------------------------------------------------------- */

static bool env_verbose_case(uint64_t seed) {
        const char *e = getenv("BWGOV_CONTRACT_CASE");

        return e && strtoull(e, NULL, 0) == seed;
}

static void run_init(struct run *r, const struct case_params *cp, bool extra_samples, bool control) {
        struct bw_bandwidth cur, rest;
        uint64_t emax;

        *r = (struct run) {
                .cp = *cp,
                .g_demand.s = cp->seed ^ UINT64_C(0xde3a4d),
                .g_late.s = cp->seed ^ UINT64_C(0x1a7e),
                .late_full = getenv("BWGOV_CONTRACT_LATE_FULL") != NULL,
                .first_change_ms = UINT64_MAX,
                .changes_after_ms = cp->count_writes_from_ms > 0 ? cp->count_writes_from_ms : UINT64_MAX,
                .exhausted_at_ms = UINT64_MAX,
                .decreased_at_ms = UINT64_MAX,
                .verbose = env_verbose_case(cp->seed) && (!control || getenv("BWGOV_CONTRACT_CTLV")),
                .control = control,
                .extra_samples = extra_samples,
        };
        r->p = case_policy_params(cp);
        assert_int_equal(bw_policy_params_check(&r->p), 0);
        r->bc = bw_policy_contract_burst_usec(&r->p);
        r->slack = bw_policy_slack_usec(&r->p);
        r->qlimit = bw_policy_quota_limit_usec(&r->p);
        /* The smallest non-zero headroom level: levels are fractions k/4
         * of Emax on the 1 ms grid, so the first ones may be 0. */
        emax = r->qlimit - cp->quota_usec;
        for (unsigned k = 1; k <= BW_POLICY_LEVELS && r->level1 == 0; k++)
                r->level1 = emax * k / BW_POLICY_LEVELS / 1000 * 1000;
        r->need1 = r->level1 == 0 ? UINT64_MAX :
                bw_credit_needed(r->level1, cp->period_usec, cp->quota_usec, r->bc, bw_policy_slack_usec(&r->p),
                                 cp->active_interval_usec);

        r->k = (struct kernel) {
                .ncpus = cp->ncpus,
                .tick_ns = USEC_PER_SEC / cp->hz * 1000,
                .tick_phase_ns = cp->tick_phase_ms * NSEC_PER_MSEC,
                .period_ns = cp->period_usec * 1000,
                .quota_ns = cp->quota_usec * 1000,
                .burst_ns = cp->kernel_burst_usec * 1000,
                .pool_ns = (int64_t) ((cp->quota_usec + cp->kernel_burst_usec) * 1000),
                .next_period_ns = cp->period_phase_ms * NSEC_PER_MSEC,
        };

        bw_policy_state_init(&r->st, &r->p, r->p.credit_max_usec, 0);
        r->bx = (int64_t) cp->credit_max_usec * (int64_t) cp->period_usec;
        r->cons_x = r->bx;

        /* Adoption: the rest target first, when it differs; the prime
         * decision follows at the same instant. */
        cur = kernel_bandwidth(&r->k);
        assert_int_equal(bw_policy_rest_target(&r->p, r->p.credit_max_usec, true, &cur, &rest), 0);
        if (control)
                /* A static limit: the baseline quota with the law's resting
                 * burst (its rest target with no credit). */
                assert_int_equal(bw_policy_rest_target(&r->p, 0, true, &cur, &rest), 0);
        if (rest.quota_usec != cur.quota_usec || rest.burst_usec != cur.burst_usec)
                daemon_write(r, &rest);
        r->next_sample_ns = 0;
        r->draining = true;

        if (r->verbose) {
                char buf[512];

                case_describe(cp, buf, sizeof buf);
                printf("# case %s\n#   Bc=%" PRIu64 " qlimit=%" PRIu64 " level1=%" PRIu64 " need1=%" PRIu64
                       " rest quota %" PRIu64 " burst %" PRIu64 "\n",
                       buf, r->bc, r->qlimit, r->level1, r->need1, rest.quota_usec, rest.burst_usec);
        }
}

static void run_track(struct run *r, bool boundary) {
        const struct kernel *k = &r->k;
        uint64_t t_us = k->now_ns / 1000;
        int64_t x = (int64_t) (k->ran_ns / 1000) * (int64_t) r->cp.period_usec -
                (int64_t) r->cp.quota_usec * (int64_t) t_us;

        window_add(&r->win_ms, x, ms_of(k->now_ns));
        if (boundary) {
                int64_t bal;

                window_add(&r->win_period, x, ms_of(k->now_ns));
                /* The true balance at this boundary: CreditMax= less the
                 * worst window ending here. */
                bal = (int64_t) r->cp.credit_max_usec * (int64_t) r->cp.period_usec - (x - r->win_period.min_x);
                if (bal < r->min_bucket_period_x)
                        r->min_bucket_period_x = bal;
        }
}

static void run_case(struct run *r) {
        struct kernel *k = &r->k;
        uint64_t end = r->cp.duration_usec * 1000;

        r->min_bucket_period_x = INT64_MAX;
        r->law_min_balance = INT64_MAX;
        r->optimism_max = INT64_MIN;
        r->cons_optimism_max = INT64_MIN;
        r->pessimism_max = INT64_MIN;
        for (;;) {
                uint64_t t = k->now_ns;
                bool boundary = false;

                if (t == k->next_period_ns) {
                        k_period(k);
                        boundary = true;
                }
                if (k->slack_started && t >= k->slack_at_ns)
                        k_slack_timer(k);
                {
                        unsigned n = demand_threads(r, t);

                        /* Diagnostic only: an extra sample at every rise of
                         * the demand (the law takes any sample 50 ms apart). */
                        if (r->extra_samples && n > r->last_n && t >= r->last_sample_ns + 50 * NSEC_PER_MSEC &&
                            r->has_d)
                                r->next_sample_ns = t;
                        r->last_n = n;
                        k_set_threads(k, n);
                }
                if ((t + k->tick_ns - k->tick_phase_ns) % k->tick_ns == 0)
                        k_tick(k);
                if (t >= r->next_sample_ns)
                        daemon_sample(r);
                run_track(r, boundary);
                if (t >= end)
                        break;
                k_step(k);
        }
}

/* Judge the contract once the case has run. */
/* The credit term of the contract: CreditMax=, but never less than the
 * kernel's own accounting slack (a slice and a tick per CPU,
 * bw_policy_slack_usec()), by which a static limit with no law overruns too
 * (test_repro_kernel_slack). */
static int64_t credit_term(const struct run *r) {
        return (int64_t) (r->cp.credit_max_usec > r->slack ? r->cp.credit_max_usec : r->slack);
}

static void run_judge_contract(struct run *r) {
        int64_t P = (int64_t) r->cp.period_usec;
        int64_t bound = (credit_term(r) + (int64_t) r->bc) * P;
        int64_t bound_ms = bound + ((int64_t) r->bc + (int64_t) r->cp.quota_usec) * P;

        if (r->win_period.max_excess_x > bound)
                run_fail(r, PROP_CONTRACT, "usage over [%.3fs, %.3fs] exceeds Qb/P t + max(CreditMax, slack) + Bc by %" PRId64
                         "us (CreditMax %" PRIu64 " Bc %" PRIu64 "; Qb %" PRIu64 ")",
                         (double) r->win_period.t1_ms / 1000, (double) r->win_period.t2_ms / 1000,
                         (r->win_period.max_excess_x - bound) / P, r->cp.credit_max_usec, r->bc, r->cp.quota_usec);
        /* Where the law gives no headroom (below the kernel's own slack, or
         * when it never changed anything), what 1 ms windows show is the
         * kernel's quantisation alone. */
        if (r->cp.credit_max_usec >= r->slack && r->n_changes > 0 && r->win_ms.max_excess_x > bound_ms)
                run_fail(r, PROP_CONTRACT_MS, "usage over the 1 ms window [%.3fs, %.3fs] exceeds the contract by %"
                         PRId64 "us, more than Bc + Qb = %" PRIu64 "us",
                         (double) r->win_ms.t1_ms / 1000, (double) r->win_ms.t2_ms / 1000,
                         (r->win_ms.max_excess_x - bound) / P, r->bc + r->cp.quota_usec);
}

/* Excess beyond the contract, µs (negative: margin). */
static int64_t run_excess(const struct run *r, const struct window_max *w) {
        int64_t P = (int64_t) r->cp.period_usec;

        return (w->max_excess_x - (credit_term(r) + (int64_t) r->bc) * P) / P;
}

static void run_done(struct run *r) {
        free(r->tr);
        r->tr = NULL;
}

/* The same case on a static baseline (no law): how far the kernel alone
 * goes beyond the contract, µs over windows between period boundaries. */
static int64_t control_excess(const struct case_params *cp) {
        struct run *c = malloc(sizeof *c);
        int64_t e;

        assert_non_null(c);
        run_init(c, cp, false, true);
        run_case(c);
        e = run_excess(c, &c->win_period);
        run_done(c);
        free(c);
        return e;
}

/* Print a failing case: its parameters, what failed, and the decisions
 * around the worst window. */
static void run_report(const struct run *r) {
        char buf[512];

        case_describe(&r->cp, buf, sizeof buf);
        printf("# FAIL %s\n#   Bc=%" PRIu64 " qlimit=%" PRIu64 " level1=%" PRIu64 " need1=%" PRIu64
               " samples=%" PRIu64 " changes=%" PRIu64 " (%" PRIu64 " counted) period-window excess %+" PRId64
               "us, 1 ms %+" PRId64 "us\n",
               buf, r->bc, r->qlimit, r->level1, r->need1 == UINT64_MAX ? 0 : r->need1, r->n_samples,
               r->n_changes, r->changes_after, run_excess(r, &r->win_period), run_excess(r, &r->win_ms));
        printf("#   the law's balance: lowest %" PRId64 "us, above the true one by up to %" PRId64
               "us (a cap-then-pay bucket: %" PRId64 "us); a static baseline, no law: %+" PRId64
               "us beyond the contract\n", r->law_min_balance, r->optimism_max, r->cons_optimism_max,
               r->control_excess);
        for (unsigned i = 0; i < _PROP_MAX; i++)
                if (r->nfail[i] > 0)
                        printf("#   %s (%u): %s\n", prop_names[i], r->nfail[i], r->msg[i]);
        if (r->nfail[PROP_CONTRACT] > 0) {
                uint64_t from = r->win_period.t1_ms > 3000 ? r->win_period.t1_ms - 3000 : 0;

                printf("#   decisions from %.3fs to the end of the worst window:\n", (double) from / 1000);
                trace_print(r, from, r->win_period.t2_ms, 24);
        }
}

/* ---- batches ------------------------------------------------------------------- */

static uint64_t case_seed(uint64_t base, uint64_t salt, uint64_t i) {
        struct rng g = { .s = base ^ (salt * UINT64_C(0x100000001b3)) ^ (i * UINT64_C(0x9e3779b97f4a7c15)) };

        return rng_next(&g);
}

/* BWGOV_CONTRACT_CASE: only that seed runs. */
static bool case_selected(uint64_t seed) {
        const char *e = getenv("BWGOV_CONTRACT_CASE");

        return !e || !*e || strtoull(e, NULL, 0) == seed;
}

static double elapsed_s(const struct timespec *a) {
        struct timespec b;

        clock_gettime(CLOCK_MONOTONIC, &b);
        return (double) (b.tv_sec - a->tv_sec) + (double) (b.tv_nsec - a->tv_nsec) / 1e9;
}

struct batch {
        const char *name;
        unsigned salt;
        unsigned n_default;             /* cases; BWGOV_CONTRACT_CASES scales them (contract: exactly) */
        void (*gen)(struct rng *g, struct case_params *cp, unsigned i);
        void (*judge)(struct run *r);
        unsigned props;                 /* bitmask of enum prop that fail the test */

        unsigned n_cases, n_failed, n_reported;
        unsigned fails[_PROP_MAX];
        unsigned info[_PROP_MAX];       /* cases where a property outside `props` did not hold */
        unsigned kernel_only;           /* contract failures a static baseline (no law) fails too */
        uint64_t sim_seconds, samples, changes;
        int64_t worst_period_excess, worst_ms_excess;   /* beyond the contract, µs */
        double worst_period_ratio, worst_ms_ratio;      /* ... / Qb */
        char worst_period_case[512], worst_ms_case[512];
        int64_t worst_optimism, worst_cons_optimism, worst_pessimism;
};

static void batch_add(struct batch *b, struct run *r) {
        int64_t ep = run_excess(r, &r->win_period), em = run_excess(r, &r->win_ms);
        double rp = (double) ep / (double) r->cp.quota_usec, rm = (double) em / (double) r->cp.quota_usec;
        bool failed = false;

        b->n_cases++;
        b->sim_seconds += r->cp.duration_usec / USEC_PER_SEC;
        b->samples += r->n_samples;
        b->changes += r->n_changes;
        if (b->n_cases == 1 || rp > b->worst_period_ratio) {
                b->worst_period_ratio = rp;
                b->worst_period_excess = ep;
                case_describe(&r->cp, b->worst_period_case, sizeof b->worst_period_case);
        }
        if (b->n_cases == 1 || rm > b->worst_ms_ratio) {
                b->worst_ms_ratio = rm;
                b->worst_ms_excess = em;
                case_describe(&r->cp, b->worst_ms_case, sizeof b->worst_ms_case);
        }
        if (b->n_cases == 1 || r->optimism_max > b->worst_optimism)
                b->worst_optimism = r->optimism_max;
        if (b->n_cases == 1 || r->cons_optimism_max > b->worst_cons_optimism)
                b->worst_cons_optimism = r->cons_optimism_max;
        if (b->n_cases == 1 || r->pessimism_max > b->worst_pessimism)
                b->worst_pessimism = r->pessimism_max;
        for (unsigned i = 0; i < _PROP_MAX; i++)
                if ((b->props & (1U << i)) && r->nfail[i] > 0) {
                        b->fails[i]++;
                        failed = true;
                } else if (r->nfail[i] > 0)
                        b->info[i]++;
        if (r->nfail[PROP_CONTRACT] > 0 && r->control_excess > 0)
                b->kernel_only++;
        if (getenv("BWGOV_CONTRACT_CSV")) {
                unsigned mask = 0;

                for (unsigned i = 0; i < _PROP_MAX; i++)
                        if (r->nfail[i] > 0)
                                mask |= 1U << i;
                printf("#CSV %s 0x%016" PRIx64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %s %" PRId64
                       " %" PRId64 " %" PRId64 " %" PRId64 " %x %" PRIu64 " %" PRIu64 " %d %" PRId64 "\n",
                       b->name, r->cp.seed, r->cp.ncpus, r->cp.period_usec, r->cp.quota_usec,
                       r->cp.credit_max_usec, r->bc, demand_names[r->cp.demand.kind], ep, r->control_excess,
                       r->optimism_max, r->law_min_balance, mask, r->cp.interval_usec / 1000,
                       r->cp.active_interval_usec / 1000, r->cp.burst_max_kind, r->cons_optimism_max);
        }
        if (failed) {
                b->n_failed++;
                if (b->n_reported++ < 8 || r->verbose)
                        run_report(r);
        }
}

static void batch_print(const struct batch *b, const struct timespec *t0) {
        printf("# %s: %u cases, %" PRIu64 " simulated s, %" PRIu64 " samples, %" PRIu64 " writes, %.2f s; %u failed",
               b->name, b->n_cases, b->sim_seconds, b->samples, b->changes, elapsed_s(t0), b->n_failed);
        for (unsigned i = 0; i < _PROP_MAX; i++)
                if (b->fails[i] > 0)
                        printf(", %s %u", prop_names[i], b->fails[i]);
        for (unsigned i = 0; i < _PROP_MAX; i++)
                if (b->info[i] > 0)
                        printf(", (informational) %s %u", prop_names[i], b->info[i]);
        printf("\n");
        if (b->fails[PROP_CONTRACT] > 0)
                printf("#   contract failures a static baseline with no law fails too (the kernel's own overrun): %u "
                       "of %u\n", b->kernel_only, b->fails[PROP_CONTRACT]);
        if (b->n_cases == 0)
                return;
        printf("#   closest period-aligned window: %+" PRId64 "us beyond the contract (%+.3f Qb): %s\n",
               b->worst_period_excess, b->worst_period_ratio, b->worst_period_case);
        printf("#   largest excess over 1 ms-aligned windows (informational): %+" PRId64 "us (%+.3f Qb): %s\n",
               b->worst_ms_excess, b->worst_ms_ratio, b->worst_ms_case);
        printf("#   the law's balance above the true one by up to %" PRId64 "us, below it by up to %" PRId64
               "us; a cap-then-pay bucket from the same samples: above by up to %" PRId64 "us\n",
               b->worst_optimism, b->worst_pessimism, b->worst_cons_optimism);
}

static void batch_run(struct batch *b) {
        uint64_t base = env_u64("BWGOV_CONTRACT_SEED", UINT64_C(0xb09e0c0de));
        unsigned n = (unsigned) env_u64("BWGOV_CONTRACT_CASES", DEFAULT_CASES);
        struct timespec t0;

        /* The other batches keep their share of the default. */
        n = (unsigned) ((uint64_t) n * b->n_default / DEFAULT_CASES);
        if (n == 0)
                n = 1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (unsigned i = 0; i < n; i++) {
                struct case_params cp = { .seed = case_seed(base, b->salt, i) };
                struct rng g = { .s = cp.seed };
                struct run r;

                if (!case_selected(cp.seed))
                        continue;
                b->gen(&g, &cp, i);
                run_init(&r, &cp, getenv("BWGOV_CONTRACT_EXTRA_SAMPLES") != NULL, false);
                run_case(&r);
                b->judge(&r);
                if (r.nfail[PROP_CONTRACT] > 0 || r.nfail[PROP_CONTRACT_MS] > 0 || getenv("BWGOV_CONTRACT_CSV"))
                        r.control_excess = control_excess(&cp);
                batch_add(b, &r);
                run_done(&r);
        }
        batch_print(b, &t0);
        for (unsigned i = 0; i < _PROP_MAX; i++)
                if (b->props & (1U << i))
                        assert_int_equal(b->fails[i], 0);
}

#define PROPS(...) prop_mask((const unsigned[]) { __VA_ARGS__ },                              \
                             sizeof((const unsigned[]) { __VA_ARGS__ }) / sizeof(unsigned))

static unsigned prop_mask(const unsigned *p, size_t n) {
        unsigned m = 0;

        for (size_t i = 0; i < n; i++)
                m |= 1U << p[i];
        return m;
}

/* ---- generators and judges ------------------------------------------------------- */

/* Properties 1 and 2: random parameters, every adversarial demand in turn. */
static void gen_contract(struct rng *g, struct case_params *cp, unsigned i) {
        case_random_params(g, cp);
        case_random_demand(g, cp, (enum demand_kind) (i % _DEMAND_RANDOM_MAX));
}

/* Parameters with headroom to spend: a baseline at least one CPU under
 * ncpus, CPUQuotaMax= 1.5..4 x, and a CreditMax= sustained overload
 * drains within two minutes at the first level. */
static void gen_headroom_params(struct rng *g, struct case_params *cp) {
        uint64_t rate, qmax_rate, level_rate, cm_max;

        case_random_params(g, cp);
        cp->ncpus = (unsigned) rng_range(g, 2, NCPUS_MAX);
        rate = rng_spread(g, 100, (cp->ncpus - 1) * 1000 < 4000 ? (cp->ncpus - 1) * 1000 : 4000);
        cp->quota_usec = cp->period_usec * rate / 1000;
        if (cp->quota_usec < BW_QUOTA_MIN_USEC)
                cp->quota_usec = BW_QUOTA_MIN_USEC;
        cp->quota_max_usec = (cp->quota_usec * rng_range(g, 1500, 4000) / 1000 + 500) / 1000 * 1000;
        cp->burst_max_usec = rng_range(g, 1000, 2 * cp->quota_usec);
        if (cp->kernel_burst_usec > cp->quota_usec)
                cp->kernel_burst_usec = rng_range(g, 0, cp->quota_usec);
        cp->tick_phase_ms = rng_below(g, 1000 / cp->hz);
        cp->period_phase_ms = rng_range(g, 1, cp->period_usec / USEC_PER_MSEC);
        qmax_rate = cp->quota_max_usec * 1000 / cp->period_usec;               /* milli-CPUs */
        if (qmax_rate > cp->ncpus * 1000)
                qmax_rate = cp->ncpus * 1000;
        level_rate = qmax_rate > rate ? (qmax_rate - rate) / 4 : 0;
        cm_max = level_rate * 120 * USEC_PER_MSEC;                             /* CPU-µs drained in 120 s */
        if (cm_max < 200 * USEC_PER_MSEC)
                cm_max = 200 * USEC_PER_MSEC;
        if (cm_max > 60 * USEC_PER_SEC)
                cm_max = 60 * USEC_PER_SEC;
        cp->credit_max_usec = rng_spread(g, 100 * USEC_PER_MSEC, cm_max);
}

/* Property 3: sustained overload on every CPU from just after one of the
 * first samples (then no idle time at a full bucket shares a sample with
 * the spending; arbitrary starts are in the contract batch). */
static void gen_exhaustion(struct rng *g, struct case_params *cp, unsigned i) {
        gen_headroom_params(g, cp);
        cp->demand = (struct demand_spec) {
                .kind = DEMAND_OVERLOAD_AFTER,
                .threads = (unsigned) rng_range(g, cp->ncpus, cp->ncpus + 2),
                .variant = (unsigned) rng_below(g, 4),
        };
        cp->duration_usec = 300 * USEC_PER_SEC;
}

static void judge_exhaustion(struct run *r) {
        int64_t floor_x = -(int64_t) r->bc * (int64_t) r->cp.period_usec;

        /* CreditMax= is sized to drain within two minutes at the first
         * level: headroom at the end of five is credit that never ran out. */
        if (r->has_d && r->d.target.quota_usec != r->cp.quota_usec)
                run_fail(r, PROP_EXHAUST, "quota %" PRIu64 " still above the baseline after %" PRIu64
                         "s of overload (credit %" PRIu64 ")", r->d.target.quota_usec,
                         r->cp.duration_usec / USEC_PER_SEC, r->d.credit_after_usec);
        if (r->min_bucket_period_x < floor_x)
                run_fail(r, PROP_EXHAUST, "the true balance went down to %" PRId64 "us at a period boundary, "
                         "below -Bc = -%" PRIu64 "us", div_floor(r->min_bucket_period_x, (int64_t) r->cp.period_usec),
                         r->bc);
}

/* Property 4a: a constant demand under the baseline (idle included). */
static void gen_steady_below(struct rng *g, struct case_params *cp, unsigned i) {
        uint64_t b_rate;

        case_random_params(g, cp);
        b_rate = cp->quota_usec * USEC_PER_SEC / cp->period_usec;
        cp->demand = (struct demand_spec) {
                .kind = DEMAND_STEADY,
                .rate0 = i % 4 == 0 ? 0 : b_rate * rng_range(g, 50, 900) / 1000,
        };
        cp->duration_usec = 610 * USEC_PER_SEC;
        cp->count_writes_from_ms = 1;           /* after the first decision */
}

static void judge_no_writes(struct run *r) {
        if (r->changes_after > 0)
                run_fail(r, PROP_STEADY, "%" PRIu64 " writes under a steady load (first at %.3fs)", r->changes_after,
                         (double) r->first_change_ms / 1000);
}

/* Property 4b: constant overload on every CPU; after exhaustion, nothing. */
static void gen_steady_overload(struct rng *g, struct case_params *cp, unsigned i) {
        gen_headroom_params(g, cp);
        cp->demand = (struct demand_spec) {
                .kind = DEMAND_OVERLOAD_AFTER,
                .threads = (unsigned) rng_range(g, cp->ncpus, cp->ncpus + 2),
        };
        cp->duration_usec = 900 * USEC_PER_SEC;
        cp->count_writes_at_baseline = true;
}

static void judge_steady_overload(struct run *r) {
        if (r->changes_after_ms == UINT64_MAX) {
                /* Never exhausted: then nothing may have been written
                 * after the prime, and the quota is the baseline. */
                r->changes_after = r->n_changes;
                if (r->has_d && r->d.target.quota_usec != r->cp.quota_usec)
                        run_fail(r, PROP_STEADY, "still above the baseline after %" PRIu64 " s of overload",
                                 r->cp.duration_usec / USEC_PER_SEC);
        } else if (r->changes_after_ms > 300 * MSEC_PER_SEC)
                run_fail(r, PROP_STEADY, "exhausted only at %.3fs", (double) r->changes_after_ms / 1000);
        judge_no_writes(r);
}

/* Property 4c: bursts on every CPU with a mean well under the baseline,
 * CreditMax= at least 10 s. A burst spends 10..80 % of CreditMax= above
 * the baseline at the highest quota (bursts the bucket absorbs, some deep
 * enough to cross a level; one that drains it must be written down); the
 * gaps make the mean 10..50 % of the baseline. */
/* Property 4c: bursty load whose bursts each spend less than the bucket
 * holds beyond what pays for the top level over a short horizon (so the
 * law never has to step down: "no throttling and no writes while the credit
 * lasts"), mean 10-50 % of the baseline, CreditMax= 10-60 s. A burst that
 * drains the bucket further must step the headroom down, by the contract,
 * and back up after the refill: two writes a burst, which is no defect. */
static void gen_bursty(struct rng *g, struct case_params *cp, unsigned i) {
        uint64_t b_rate, q_rate, qmax, burst_us, gap_us, mean, spare, emax;
        struct bw_policy_params p;

        case_random_params(g, cp);
        cp->credit_max_usec = rng_range(g, 10, 60) * USEC_PER_SEC;
        p = case_policy_params(cp);
        qmax = bw_policy_quota_limit_usec(&p);
        emax = qmax - cp->quota_usec;
        /* What the top level costs until a short-horizon sample (the law's
         * lateness budget: h/4 + 50 ms), raise margin and all. */
        spare = cp->credit_max_usec;
        {
                uint64_t h = cp->active_interval_usec, need;

                h += h / 4 + 50 * USEC_PER_MSEC;
                need = bw_credit_needed(emax / 1000 * 1000, cp->period_usec, cp->quota_usec,
                                        bw_policy_contract_burst_usec(&p), bw_policy_slack_usec(&p), h);
                spare = spare > need ? spare - need : 0;
        }
        b_rate = cp->quota_usec * USEC_PER_SEC / cp->period_usec;
        q_rate = qmax * USEC_PER_SEC / cp->period_usec;
        if (q_rate > b_rate)
                /* Bursts last 0.5-1.5 x their mean: at most 3/4 of the spare. */
                burst_us = spare * rng_range(g, 100, 500) / 1000 * USEC_PER_SEC / (q_rate - b_rate);
        else
                burst_us = rng_range(g, 100, 5000) * USEC_PER_MSEC;
        if (burst_us > 60 * USEC_PER_SEC)
                burst_us = 60 * USEC_PER_SEC;
        if (burst_us < 10 * USEC_PER_MSEC)
                burst_us = 10 * USEC_PER_MSEC;
        mean = b_rate * rng_range(g, 100, 500) / 1000;
        gap_us = burst_us * (q_rate > mean ? q_rate - mean : 0) / (mean > 0 ? mean : 1);
        cp->demand = (struct demand_spec) {
                .kind = DEMAND_BURSTY,
                .threads = cp->ncpus,
                .a_ns = burst_us * 1000,
                .b_ns = gap_us * 1000,
                .rate0 = mean,
        };
        cp->duration_usec = 660 * USEC_PER_SEC;
        cp->count_writes_from_ms = 60 * MSEC_PER_SEC;
}

static void judge_bursty(struct run *r) {
        uint64_t minutes = (r->cp.duration_usec / USEC_PER_SEC - 60) / 60;

        if (r->changes_after > minutes)
                run_fail(r, PROP_STEADY, "%" PRIu64 " writes in the %" PRIu64 " minutes after the first, more than "
                         "one a minute", r->changes_after, minutes);
}

/* Property 5: every demand, the balance checked at every sample. */
static void gen_credit(struct rng *g, struct case_params *cp, unsigned i) {
        case_random_params(g, cp);
        case_random_demand(g, cp, (enum demand_kind) rng_below(g, _DEMAND_RANDOM_MAX));
}

static void judge_nothing(struct run *r) {
}

/* ---- tests --------------------------------------------------------------------- */

/* Properties 1 and 2: the contract over every window between period
 * boundaries, random parameters, adversarial demand; with it the
 * bookkeeping every run checks (writes, range, exhaustion rules, reserve). */
static void test_contract_random(void **state) {
        struct batch b = {
                .name = "contract", .salt = 1, .n_default = DEFAULT_CASES,
                .gen = gen_contract, .judge = run_judge_contract,
                .props = PROPS(PROP_CONTRACT, PROP_CONTRACT_MS, PROP_WRITES, PROP_RANGE, PROP_EXHAUST),
        };

        batch_run(&b);
}

/* Property 3: exhaustion under sustained overload. */
static void test_exhaustion(void **state) {
        struct batch b = {
                .name = "exhaustion", .salt = 3, .n_default = 96,
                .gen = gen_exhaustion, .judge = judge_exhaustion,
                .props = PROPS(PROP_EXHAUST, PROP_WRITES, PROP_RANGE),
        };

        batch_run(&b);
}

/* Property 4: steady loads write nothing. */
static void test_steady_below(void **state) {
        struct batch b = {
                .name = "steady-below", .salt = 4, .n_default = 32,
                .gen = gen_steady_below, .judge = judge_no_writes,
                .props = PROPS(PROP_STEADY, PROP_WRITES),
        };

        batch_run(&b);
}

static void test_steady_overload(void **state) {
        struct batch b = {
                .name = "steady-overload", .salt = 5, .n_default = 32,
                .gen = gen_steady_overload, .judge = judge_steady_overload,
                .props = PROPS(PROP_STEADY, PROP_WRITES),
        };

        batch_run(&b);
}

static void test_bursty(void **state) {
        struct batch b = {
                .name = "bursty", .salt = 6, .n_default = 96,
                .gen = gen_bursty, .judge = judge_bursty,
                .props = PROPS(PROP_STEADY, PROP_WRITES),
        };

        batch_run(&b);
}

/* Property 5: the law's balance is the bucket of credit.h computed from
 * the counter it read (5a), and never above the true balance (5b). */
static void test_credit(void **state) {
        struct batch b = {
                .name = "credit", .salt = 7, .n_default = 120,
                .gen = gen_credit, .judge = judge_nothing,
                .props = PROPS(PROP_CREDIT, PROP_SOUND),
        };

        batch_run(&b);
}

/* ---- minimal reproductions --------------------------------------------------------- */

static void run_fixed(const struct case_params *cp, void (*judge)(struct run *r), unsigned props) {
        struct batch b = {
                .name = "repro", .n_default = DEFAULT_CASES, .judge = judge, .props = props,
        };
        struct timespec t0;
        struct run r;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        run_init(&r, cp, false, false);
        run_case(&r);
        judge(&r);
        r.control_excess = control_excess(cp);
        b.n_reported = 0;
        batch_add(&b, &r);
        if (b.n_failed == 0)
                run_report(&r);         /* the numbers, even when it passes */
        run_done(&r);
        batch_print(&b, &t0);
        for (unsigned i = 0; i < _PROP_MAX; i++)
                if (props & (1U << i))
                        assert_int_equal(b.fails[i], 0);
}

/* The balance is capped per sample, after netting the sample's earnings
 * against its usage (bw_credit_account()): idle time at a full bucket
 * early in a sample pays for spending later in the same sample, credit the
 * true bucket never had. One CPU, baseline half of it, CreditMax= and
 * Interval= 2 s: idle for the first second after adoption, then busy for
 * good. The law sees 1 s earned and 1 s used at its first sample and stays
 * full; the true balance is 0.5 s lower. Before the reserve held one idle
 * sample's earnings, the law spent down to its reserve as if it were not:
 * 260 ms (5 Qb) beyond the contract when it reached the baseline. */
static void test_repro_cap_per_sample(void **state) {
        const struct case_params cp = {
                .seed = 1, .ncpus = 1, .hz = 250,
                .period_usec = 100000, .quota_usec = 50000, .quota_max_usec = 100000,
                .burst_max_kind = BURST_MAX_UNSET, .credit_max_usec = 2 * USEC_PER_SEC,
                .interval_usec = 2 * USEC_PER_SEC, .active_interval_usec = 250 * USEC_PER_MSEC,
                .hold_off_usec = 2 * USEC_PER_SEC, .period_phase_ms = 100,
                .duration_usec = 15 * USEC_PER_SEC,
                .demand = {
                        .kind = DEMAND_IDLE_OVERLOAD, .threads = 1,
                        .a_ns = 1000 * NSEC_PER_MSEC, .b_ns = UINT64_MAX,
                },
        };

        run_fixed(&cp, run_judge_contract, PROPS(PROP_CONTRACT, PROP_SOUND));
}

/* The kernel alone: a CPU is charged at its tick, so it runs up to a tick
 * past the runtime it holds before it is throttled (and each CPU keeps up
 * to a slice across refills). Nothing but CreditMax= absorbs that: the
 * contract's credit term is never less than that slack, K. One CPU, 1 ms
 * per 10 ms, burst 1 ms, CreditMax=0: a thread wakes at 3 ms with 2 ms in
 * the pool, is charged 1 ms at the 4 ms tick and 4 ms at the 8 ms one, and
 * is throttled having used 5 ms in the period [1 ms, 11 ms], against
 * 1 ms + Bc = 2 ms, within K = 15 ms. */
static void test_repro_kernel_slack(void **state) {
        const struct case_params cp = {
                .seed = 2, .ncpus = 1, .hz = 250,
                .period_usec = 10000, .quota_usec = 1000, .quota_max_usec = 2000,
                .burst_max_kind = BURST_MAX_UNSET, .credit_max_usec = 0,
                .interval_usec = USEC_PER_SEC, .active_interval_usec = 250 * USEC_PER_MSEC,
                .hold_off_usec = 2 * USEC_PER_SEC, .tick_phase_ms = 0, .period_phase_ms = 1,
                .duration_usec = 20 * USEC_PER_MSEC,
                .demand = { .kind = DEMAND_OVERLOAD, .threads = 1, .a_ns = 3 * NSEC_PER_MSEC, .b_ns = UINT64_MAX },
        };

        run_fixed(&cp, run_judge_contract, PROPS(PROP_CONTRACT));
}

/* Shallow bursts, mean a third of the baseline. The law used to rest at
 * the highest level whose cost (with the 5/4 raise margin) fitted
 * CreditMax=, raise an active group further on the short horizon, and
 * climb back a level per sample: two to four writes a burst. Now a level is
 * held down to its short-horizon cost and raised to only at its
 * idle-horizon cost, straight to where a full bucket rests. Two CPUs,
 * baseline half a CPU, CPUQuotaMax= two CPUs, Interval= = ActiveInterval=
 * = 5 s, CreditMax= 13 s; both CPUs busy 4 s of every 40 s, mean 40 % of
 * the baseline: 6 CPU-s spent above the baseline, under half the bucket. */
static void test_repro_bursty_writes(void **state) {
        const struct case_params cp = {
                .seed = 3, .ncpus = 2, .hz = 250,
                .period_usec = 100000, .quota_usec = 50000, .quota_max_usec = 200000,
                .burst_max_kind = BURST_MAX_UNSET, .credit_max_usec = 13 * USEC_PER_SEC,
                .interval_usec = 5 * USEC_PER_SEC, .active_interval_usec = 5 * USEC_PER_SEC,
                .hold_off_usec = 2 * USEC_PER_SEC, .period_phase_ms = 100,
                .duration_usec = 660 * USEC_PER_SEC,
                .demand = { .kind = DEMAND_SQUARE, .threads = 2, .a_ns = 40 * NSEC_PER_SEC, .b_ns = 4 * NSEC_PER_SEC },
                .count_writes_from_ms = 60 * MSEC_PER_SEC,
        };

        run_fixed(&cp, judge_bursty, PROPS(PROP_STEADY));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_contract_random),
                cmocka_unit_test(test_exhaustion),
                cmocka_unit_test(test_steady_below),
                cmocka_unit_test(test_steady_overload),
                cmocka_unit_test(test_bursty),
                cmocka_unit_test(test_credit),
                cmocka_unit_test(test_repro_cap_per_sample),
                cmocka_unit_test(test_repro_kernel_slack),
                cmocka_unit_test(test_repro_bursty_writes),
        };

        setvbuf(stdout, NULL, _IOLBF, 0);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
