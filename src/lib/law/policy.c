/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The bwgov control law: credit-funded headroom
 * =============================================
 *
 * One decision per cgroup per sample, from the previous state, one sample of
 * cumulative counters and the time. Pure: no I/O, no clock, no globals.
 * Quota Q and burst B are per period P; the baseline Qb/P (the contract,
 * found at adoption or set by CPUQuota=) never changes here. Rates are µs
 * per second of wall time; credit is CPU-µs.
 *
 * The kernel's own burst (cpu.max.burst = quota) already absorbs spikes
 * shorter than one quota. What it cannot absorb are bursts, phases and
 * warm-ups longer than that: it caps the saved runtime at one quota. A law
 * that raises the quota only after it has seen throttling pays that
 * throttling first, a tick late, on every such burst. This one spends the
 * credit before the harm: the credit bucket, not the per-period quota,
 * enforces the contract on average, and the quota only bounds the rate the
 * credit pays for while it lasts (as burstable cloud instances do: no
 * throttling at all while credits last).
 *
 * bw_policy_decide() takes the sections below as named steps, in this
 * order: take_sample() (1), earn_and_pay() (2), classify_activity() (4),
 * decided_without_law() (7: mode off and an unlimited baseline; 1: a
 * sample too soon), price_headroom() (3), bring_into_range() (the clamp),
 * protect_host() (6), drain_and_refill() with choose_headroom() (5),
 * rest_burst() (7), schedule_next() (4), then finish() writes the
 * memories and the explanation.
 *
 * 1. Sample. Deltas of usage_usec, throttled_usec (own limit, cpu.stat),
 *    the local throttled time (own and ancestors' limits, cpu.stat.local,
 *    6.6+), nr_periods, nr_throttled, nr_bursts and PSI "full" total since
 *    the previous sample. A counter that went backwards (the cgroup was
 *    recreated) re-primes. Samples closer than 50 ms carry no rate
 *    information and are ignored.
 *
 * 2. Credit (credit.c). A bucket of CPU-µs, full at adoption: it earns
 *    Qb/P * dt and pays the usage, whatever made the usage possible (raised
 *    quota, burst, the refill every cpu.max write gives). It is capped at
 *    CreditMax= and never clamped from below: usage beyond the balance is a
 *    debt repaid first. A sample does not say when within it the group
 *    earned and when it used: netting the two, the bucket can stand above
 *    one kept at every instant by what the group earned at a full bucket
 *    during one sample (idle first, then busy), at most one sample's
 *    earnings, never more over many samples; the reserve holds that too.
 *    Hence over any window t
 *        usage <= Qb/P * t + CreditMax + largest debt,
 *    and the contract  usage <= Qb/P * t + CreditMax + Bc  (Bc: the largest
 *    burst the law sets, one baseline quota by default) holds as long as
 *    the debt never exceeds Bc. The reserve below is what guarantees that.
 *
 * 3. Headroom at rest (headroom.c). The quota rests at Qb + E: extra quota E on one of
 *    BW_POLICY_LEVELS levels, fractions of the largest headroom Emax (from
 *    CPUQuotaMax=, never above the host's CPUs, never above the nearest
 *    limited ancestor's quota: throttling by an ancestor is not answered by
 *    raising the child). A level is affordable for a horizon h, the time
 *    until the next sample, when
 *        E * (h + late) / P + R(Qb + E) <= credit,
 *        R(Q) = 2 Q + B + Qb + slack + Qb * (Interval= + late) / P,
 *    the reserve: from a decision to the next sample the group can use at
 *    most what the pool holds after this decision's write (Q + B), one
 *    refill more than the whole periods elapsed (Q), and per-CPU slack
 *    (tick-granular accounting; on 6.18's task-based throttle model, tasks
 *    leave the CPU only on the way back to user mode); going back to the
 *    baseline then refills at most Qb, which a balance of Qb covers
 *    without debt beyond the burst; and the bucket's own uncertainty, one
 *    idle sample's earnings (section 2). `late` allows for a timer that
 *    fires late. So at every sample the baseline is still reachable inside the
 *    contract, and a group with full credit meets its next burst, phase or
 *    warm-up already at Qb + Emax: no throttling, no reaction delay.
 *
 * 4. Two horizons. Groups are sampled every Interval= while the credit
 *    pays for their level that long, else every ActiveInterval=: only
 *    groups whose credit is near the end of what the level costs tick fast,
 *    whatever the number of governed groups. A group is active (shown as
 *    such) when it spends credit (usage above the baseline) or is throttled
 *    by its own limit beyond TargetThrottle= (TargetPressure= for PSI full
 *    while throttled), or its tasks' run-queue wait p99 (src/bpf telemetry)
 *    is over TargetWaitP99= with at least half of the wait spent throttled,
 *    for ACTIVE_LINGER after the last such sample. The decision names that
 *    p99 when it is the reason.
 *
 * 5. Drain and refill. As the group spends, the credit falls; when the
 *    current level is no longer affordable even for the short horizon, it
 *    steps down to the highest level that is (headroom-lower). When not
 *    even the first level is, the quota is exactly the baseline
 *    (credit-exhausted). Holding a level needs its cost until a sample a
 *    short horizon away; raising to one needs its cost until an Interval=
 *    away, plus a quarter (hysteresis: a raise lasts even at full
 *    spending), and waits hold_off (one PSI window) after a decrease. The
 *    headroom comes back once the credit pays for where a full bucket rests
 *    (from below half of it, half first: credit is for the next job, not
 *    the one after), in one or two writes, not a level at a time, and
 *    not within hold_off of the step down: that cost is the hysteresis
 *    against flapping, whatever CreditMax=. A group at steady load
 *    therefore writes nothing: under its baseline it rests at Emax; over
 *    it, at the baseline.
 *
 * 6. Host protection (host.c). When the governed groups harm the rest of
 *    the host (over HostPressureLimit= while they use more than their
 *    baselines, more than the host left idle, with other work there) the
 *    daemon plans how much of its headroom each group gives back (lowest
 *    Priority= first, at most half per sample); the law caps the group's
 *    headroom there and raises nobody (host-hold). Resting headroom is shed
 *    as well as headroom in use: an idle group is one wake-up away from
 *    spending it, and its own next sample may be an Interval= away, too
 *    late for the neighbour it would starve. Caps sit on levels; one comes back a
 *    level per three hold_off of continuous calm (slow return, fast
 *    retreat).
 *
 * 7. Modes. off: the baseline. observe: decide as elastic, never change.
 *    burst: quota stays at the baseline; the burst rests at
 *    min(CPUBurstMax=, quota), the kernel's own burst. elastic: headroom
 *    and the resting burst. Without a usage counter there is no credit and
 *    no headroom.
 *
 * Values sit on a 1 ms grid anchored at the baseline. Burst is always
 * <= quota (the kernel rejects anything else; the daemon lowers burst
 * before quota and raises quota before burst).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "bwgov/util/macro.h"
#include "bwgov/law/policy.h"
#include "bwgov/util/util.h"

#define MIN_DT_USEC        (50 * USEC_PER_MSEC)         /* closer samples carry no rate information */
#define ACTIVE_LINGER_USEC (10 * USEC_PER_SEC)          /* active this long after the last spending sample */
#define RQ_THROTTLED_MOSTLY_PERMILLE 500                /* TargetWaitP99= counts when this share was throttled */
#define SPEND_TAU_USEC     (10 * USEC_PER_SEC)          /* time constant of the spending average */
#define HOST_RECOVER_HOLDS UINT64_C(3)                  /* the host cap comes back a level per 3 hold-offs of calm */
#define PERMILLE           UINT64_C(1000)               /* shed_permille's whole */
/* Per-CPU slack in the reserve: a runtime slice a CPU already holds
 * (sched_cfs_bandwidth_slice_us, 5 ms) and one tick by which it can overrun
 * it before the accounting notices (10 ms at HZ=100, 4 ms at HZ=250), which
 * also covers a task finishing a short system call before 6.18's task-based
 * throttling takes it off the CPU. Measured on a simulated kernel at
 * HZ=100 (tests/unit/lib/test-contract.c): 10 ms per CPU fell short by up to
 * 42 ms; slice + tick did not. */
#define SLACK_PER_CPU_USEC (15 * USEC_PER_MSEC)
/* How late a sample may come after the horizon: the daemon sets the timer
 * accuracy to horizon/16; the rest is a busy event loop. */
#define LATE_BASE_USEC     (50 * USEC_PER_MSEC)
#define LATE_DIV           UINT64_C(4)

/* Time since `then`; 0 if the clock went backwards. */
static uint64_t elapsed(uint64_t now, uint64_t then) {
        return now > then ? now - then : 0;
}

/* µs per period -> µs/s. */
static uint64_t rate_of(uint64_t per_period, uint64_t period_usec) {
        return u64_muldiv(per_period, USEC_PER_SEC, period_usec);
}

int bw_policy_params_check(const struct bw_policy_params *p) {
        const struct bw_bandwidth *b;

        if (!p)
                return -EINVAL;
        b = &p->baseline;
        if (p->mode < 0 || p->mode >= _BW_MODE_MAX)
                return -EINVAL;
        if (b->period_usec < BW_PERIOD_MIN_USEC || b->period_usec > BW_PERIOD_MAX_USEC)
                return -EINVAL;
        if (b->quota_usec < BW_QUOTA_MIN_USEC)
                return -EINVAL;
        if (b->quota_usec != BW_QUOTA_MAX && b->quota_usec > BW_QUOTA_LIMIT_USEC)
                return -EINVAL;
        if (b->has_burst && b->burst_usec > b->quota_usec)
                return -EINVAL;
        if (p->interval_usec == 0 || p->active_interval_usec > p->interval_usec)
                return -EINVAL;
        return 0;
}

static bool elastic_mode(enum bw_mode m) {
        return m == BW_MODE_ELASTIC || m == BW_MODE_OBSERVE;
}

static uint64_t baseline_burst(const struct bw_policy_params *p) {
        return p->baseline.has_burst ? p->baseline.burst_usec : 0;
}

static uint64_t active_interval(const struct bw_policy_params *p) {
        return p->active_interval_usec > 0 ? p->active_interval_usec : p->interval_usec;
}

static uint64_t quota_limit(const struct bw_policy_params *p, bool elastic) {
        uint64_t bq = p->baseline.quota_usec, lim, cpu_cap;

        if (bq == BW_QUOTA_MAX || !elastic)
                return bq;

        lim = u64_max(p->quota_max_usec, bq);
        cpu_cap = u64_muldiv(p->ncpus > 0 ? p->ncpus : 1, p->baseline.period_usec, 1);
        lim = u64_min(lim, u64_max(bq, cpu_cap));
        lim = u64_min(lim, u64_max(bq, BW_QUOTA_LIMIT_USEC));
        return lim;
}

uint64_t bw_policy_quota_limit_usec(const struct bw_policy_params *p) {
        return quota_limit(p, elastic_mode(p->mode));
}

/* The largest burst allowed next to a quota q. */
static uint64_t burst_cap(const struct bw_policy_params *p, uint64_t q) {
        uint64_t bm = p->burst_max_usec > 0 ? p->burst_max_usec : p->baseline.quota_usec;

        return u64_min(u64_max(baseline_burst(p), bm), q);
}

uint64_t bw_policy_contract_burst_usec(const struct bw_policy_params *p) {
        if (!p->kernel_has_burst)
                return baseline_burst(p);
        return burst_cap(p, bw_policy_quota_limit_usec(p));
}

uint64_t bw_policy_slack_usec(const struct bw_policy_params *p) {
        return u64_muldiv(p->ncpus > 0 ? p->ncpus : 1, SLACK_PER_CPU_USEC, 1);
}

uint64_t bw_policy_boost_rate(const struct bw_policy_params *p, const struct bw_bandwidth *current) {
        uint64_t bq = p->baseline.quota_usec;

        if (bq == BW_QUOTA_MAX || current->quota_usec == BW_QUOTA_MAX)
                return 0;
        if (current->quota_usec <= bq || p->baseline.period_usec == 0)
                return 0;
        return rate_of(current->quota_usec - bq, p->baseline.period_usec);
}

void bw_policy_state_init(struct bw_policy_state *s, const struct bw_policy_params *p,
                          uint64_t credit_usec, uint64_t debt_usec) {
        *s = (struct bw_policy_state) {
                .host_cap_usec = UINT64_MAX,
        };
        bw_credit_init(&s->credit, p->credit_max_usec, credit_usec);
        if (debt_usec > 0) {
                s->credit.credit_usec = 0;
                s->credit.debt_usec = debt_usec;
        }
        /* A bucket restored empty or in debt is as good as exhausted: its
         * headroom comes back as after exhaustion, once the credit pays
         * for half of where a full bucket rests. Any other balance is
         * placed where it pays at the first decision, as a new one. */
        s->exhausted = p->credit_max_usec > 0 && (s->credit.debt_usec > 0 || s->credit.credit_usec == 0);
}

/* ---- one decision in the making ------------------------------------------ */

/* The counters a sample looks at; a missing one is a delta of 0. */
#define SAMPLE_FIELDS (BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED | BW_CPUSTAT_THROTTLED | \
                       BW_CPUSTAT_LOCAL_THROTTLED | BW_CPUSTAT_NR_BURSTS)

struct sample {
        uint64_t dt;
        struct bw_cpu_stat delta;       /* seen: the counters both samples have */
        uint64_t d_full;
        bool has_full;
};

enum sample_result {
        SAMPLE_OK,
        SAMPLE_PRIMED,
        SAMPLE_RESET,
        SAMPLE_TOO_SOON,
};

/* What the steps of bw_policy_decide() share: its inputs, what each step
 * found, and the decision so far. Each step reads what the ones before it
 * filled in. */
struct decision {
        const struct bw_policy_params *p;
        struct bw_policy_state *s;
        const struct bw_policy_input *in;
        bool burst_ok;                  /* the burst is ours to set */

        enum sample_result sr;          /* 1. */
        struct sample sm;
        struct bw_headroom h;           /* 3. the levels and their prices */
        bool ancestor_limited;
        uint64_t ecur;                  /* the current headroom; 0 when out of range */
        bool clamped;                   /* the current value was out of range */
        bool host_cut;                  /* 6. host shedding lowered the cap now */

        struct bw_decision d;
};

static void decision_begin(
                struct decision *x,
                const struct bw_policy_params *p,
                struct bw_policy_state *s,
                const struct bw_policy_input *in) {

        *x = (struct decision) {
                .p = p,
                .s = s,
                .in = in,
                .burst_ok = p->kernel_has_burst && in->current.has_burst,
                .d = {
                        .rule = BW_RULE_STEADY,
                        .target = in->current,
                        .credit_before_usec = s->credit.credit_usec,
                        .time_to_empty_usec = UINT64_MAX,
                        .next_tick_usec = p->interval_usec,
                },
        };
}

/* ---- 1. sample ------------------------------------------------------------- */

static void store_sample(struct bw_policy_state *s, const struct bw_policy_input *in) {
        s->prev_now_usec = in->now_usec;
        s->prev_stat = in->stat;
        s->prev_has_full = in->has_psi && in->psi.has_full;
        s->prev_full_usec = s->prev_has_full ? in->psi.full.total_usec : 0;
}

static enum sample_result take_deltas(
                struct bw_policy_state *s,
                const struct bw_policy_input *in,
                struct sample *ret) {
        struct sample sm = { 0 };
        bool has_full;

        if (!s->primed) {
                store_sample(s, in);
                s->primed = true;
                return SAMPLE_PRIMED;
        }

        has_full = in->has_psi && in->psi.has_full && s->prev_has_full;
        if (bw_cpustat_delta(&s->prev_stat, &in->stat, SAMPLE_FIELDS, &sm.delta) < 0 ||
            (has_full && in->psi.full.total_usec < s->prev_full_usec) || in->now_usec <= s->prev_now_usec) {
                store_sample(s, in);
                return SAMPLE_RESET;
        }

        sm.dt = in->now_usec - s->prev_now_usec;
        if (sm.dt < MIN_DT_USEC)
                return SAMPLE_TOO_SOON;

        sm.has_full = has_full;
        if (has_full)
                sm.d_full = in->psi.full.total_usec - s->prev_full_usec;

        store_sample(s, in);
        *ret = sm;
        return SAMPLE_OK;
}

static void sample_rates(const struct sample *sm, struct bw_decision *d) {
        const struct bw_cpu_stat *delta = &sm->delta;

        d->dt_usec = sm->dt;
        d->usage_rate = u64_muldiv(delta->usage_usec, USEC_PER_SEC, sm->dt);
        d->throttle_rate = u64_muldiv(delta->throttled_usec, USEC_PER_SEC, sm->dt);
        /* cpu.stat.local counts throttling by the group's own limit and by
         * its ancestors'; what is beyond the own is an ancestor's. */
        if (delta->seen & BW_CPUSTAT_LOCAL_THROTTLED)
                d->ancestor_throttle_rate = u64_muldiv(u64_sat_sub(delta->local_throttled_usec, delta->throttled_usec),
                                                       USEC_PER_SEC, sm->dt);
        d->pressure_rate = u64_muldiv(sm->d_full, USEC_PER_SEC, sm->dt);
        d->d_nr_periods = delta->nr_periods;
        d->d_nr_throttled = delta->nr_throttled;
        d->d_nr_bursts = delta->nr_bursts;
}

/* Deltas and rates since the previous sample. Returns true when there is a
 * sample to account (neither the first, nor a reset, nor too soon). */
static bool take_sample(struct decision *x) {
        x->sr = take_deltas(x->s, x->in, &x->sm);
        if (x->sr == SAMPLE_RESET)
                x->s->active = false;
        if (x->sr != SAMPLE_OK)
                return false;
        sample_rates(&x->sm, &x->d);
        return true;
}

/* ---- 2. credit ------------------------------------------------------------- */

/* The bucket earns the baseline and pays the usage; the spending average
 * feeds the time to empty. */
static void earn_and_pay(struct decision *x) {
        const struct bw_policy_params *p = x->p;
        struct bw_policy_state *s = x->s;
        struct bw_decision *d = &x->d;
        uint64_t P = p->baseline.period_usec, bq = p->baseline.quota_usec;
        uint64_t b_rate = rate_of(bq, P), spend, w;

        if (!(x->sm.delta.seen & BW_CPUSTAT_USAGE) || bq == BW_QUOTA_MAX)
                return;

        bw_credit_account(&s->credit, p->credit_max_usec, u64_muldiv(bq, x->sm.dt, P), x->sm.delta.usage_usec);

        d->earn_rate = u64_sat_sub(b_rate, d->usage_rate);
        d->spend_rate = spend = u64_sat_sub(d->usage_rate, b_rate);
        /* An exponential average over about SPEND_TAU_USEC, for the time to
         * empty: one sample says little about a bursty group. */
        w = u64_min(x->sm.dt, SPEND_TAU_USEC);
        if (spend >= s->spend_avg)
                s->spend_avg += u64_muldiv(spend - s->spend_avg, w, SPEND_TAU_USEC);
        else
                s->spend_avg -= u64_muldiv_up(s->spend_avg - spend, w, SPEND_TAU_USEC);
}

/* ---- 4. activity --------------------------------------------------------- */

static void classify_activity(struct decision *x) {
        const struct bw_policy_params *p = x->p;
        const struct bw_decision *d = &x->d;
        uint64_t b_rate = rate_of(p->baseline.quota_usec, p->baseline.period_usec), now = x->in->now_usec;
        /* PSI full without any throttling is contention from other groups,
         * which more quota does not cure. */
        const struct bw_cpu_stat *delta = &x->sm.delta;
        bool evidence = !(delta->seen & BW_CPUSTAT_THROTTLED) || delta->throttled_usec > 0 || delta->nr_throttled > 0;
        bool spending = (delta->seen & BW_CPUSTAT_USAGE) && d->usage_rate > b_rate;
        bool throttled = d->throttle_rate > p->target_throttle || (evidence && d->pressure_rate > p->target_pressure);
        /* The run-queue wait names the harm itself: a p99 over the target,
         * mostly spent throttled (contention is not the limit's doing). */
        bool waiting = x->in->has_rq && p->target_wait_p99_usec > 0 &&
                x->in->rq_wait_p99_usec > p->target_wait_p99_usec &&
                x->in->rq_throttled_permille >= RQ_THROTTLED_MOSTLY_PERMILLE;

        x->d.has_rq = x->in->has_rq;
        x->d.rq_wait_p99_usec = x->in->has_rq ? x->in->rq_wait_p99_usec : 0;
        x->d.rq_throttled_permille = x->in->has_rq ? x->in->rq_throttled_permille : 0;
        x->d.rq_over_target = waiting;
        if (spending || throttled || waiting) {
                x->s->active = true;
                x->s->active_usec = now;
        } else if (elapsed(now, x->s->active_usec) >= ACTIVE_LINGER_USEC)
                x->s->active = false;
}

/* ---- 7. modes (and the decisions that need no law) ------------------------ */

/* Mode off, an unlimited baseline, a sample too soon: the decision needs
 * no headroom. Returns true when it is made. */
static bool decided_without_law(struct decision *x) {
        const struct bw_policy_params *p = x->p;
        struct bw_decision *d = &x->d;

        if (p->mode == BW_MODE_OFF) {
                d->rule = BW_RULE_MODE_OFF;
                d->target = p->baseline;
                d->target.has_burst = x->in->current.has_burst;
                d->target.burst_usec = x->burst_ok ? baseline_burst(p) : x->in->current.burst_usec;
                return true;
        }
        if (p->baseline.quota_usec == BW_QUOTA_MAX) {
                d->rule = BW_RULE_UNLIMITED;
                return true;
        }
        if (x->sr == SAMPLE_TOO_SOON) {
                d->rule = BW_RULE_TOO_SOON;
                d->next_tick_usec = 0;          /* no new commitment: the last one stands */
                return true;
        }
        return false;
}

/* ---- 3. headroom levels and what they cost ---------------------------------- */

static uint64_t late_horizon(uint64_t h) {
        return u64_sat_add(h, u64_sat_add(h / LATE_DIV, LATE_BASE_USEC));
}

/* The largest headroom (mode, CPUQuotaMax=, CPUs, the nearest limited
 * ancestor), the burst, the slack and the two horizons. No usage counter,
 * no credit: no headroom. */
static void price_headroom(struct decision *x) {
        const struct bw_policy_params *p = x->p;
        const struct bw_bandwidth *cur = &x->in->current;
        uint64_t bq = p->baseline.quota_usec, emax, anc = x->in->ancestor_quota_usec;
        bool elastic = elastic_mode(p->mode) && (x->in->stat.seen & BW_CPUSTAT_USAGE);

        emax = quota_limit(p, elastic) - bq;
        if (anc > 0 && anc != BW_QUOTA_MAX && anc < bq + emax) {
                emax = anc > bq ? bw_headroom_quant_down(anc - bq) : 0;
                x->ancestor_limited = true;
        }
        x->h = (struct bw_headroom) {
                .period_usec = p->baseline.period_usec,
                .baseline_quota_usec = bq,
                /* Whatever the kernel holds next to the quota fills the
                 * pool: the largest burst the law sets next to any level,
                 * or a burst that is not ours. */
                .burst_usec = x->burst_ok ? burst_cap(p, bq + emax) : (cur->has_burst ? cur->burst_usec : 0),
                /* The kernel's per-CPU slack, and what the credit may
                 * overstate: one idle sample's earnings (section 2). */
                .slack_usec = u64_sat_add(bw_policy_slack_usec(p),
                                          u64_muldiv(bq, late_horizon(p->interval_usec), p->baseline.period_usec)),
                .fast_usec = late_horizon(active_interval(p)),
                .slow_usec = late_horizon(p->interval_usec),
                .max_usec = emax,
        };
}

/* Bring the current value into range: another period, "max" or a quota
 * under the baseline is not ours to keep. */
static void bring_into_range(struct decision *x) {
        const struct bw_bandwidth *cur = &x->in->current;
        uint64_t bq = x->p->baseline.quota_usec;

        x->clamped = cur->period_usec != x->p->baseline.period_usec || cur->quota_usec == BW_QUOTA_MAX ||
                cur->quota_usec < bq;
        x->ecur = x->clamped ? 0 : cur->quota_usec - bq;
}

/* ---- 6. host protection ------------------------------------------------------ */

/* The headroom cap host shedding leaves, updated from this sample; notes
 * whether it lowered the cap now. */
static void protect_host(struct decision *x) {
        const struct bw_headroom *h = &x->h;
        struct bw_policy_state *s = x->s;
        uint64_t now = x->in->now_usec, step = u64_max(bw_headroom_level(h, 1), BW_HEADROOM_QUANTUM_USEC);
        unsigned shed = x->in->shed_permille;

        if (x->in->host_over_limit)
                s->host_calm_usec = 0;
        else if (s->host_cap_usec != UINT64_MAX) {
                /* Calm: the cap comes back a level per HOST_RECOVER_HOLDS hold_off. */
                if (s->host_calm_usec == 0)
                        s->host_calm_usec = now;
                else if (elapsed(now, s->host_calm_usec) >= HOST_RECOVER_HOLDS * x->p->hold_off_usec) {
                        s->host_cap_usec = u64_sat_add(s->host_cap_usec, step);
                        s->host_calm_usec = now;
                        if (s->host_cap_usec >= h->max_usec)
                                s->host_cap_usec = UINT64_MAX;
                }
        }

        if (shed > 0 && x->ecur > 0) {
                /* On a level: a cap between levels would only make the
                 * next raise a write to an odd value. */
                uint64_t keep = u64_muldiv(u64_min(x->ecur, s->host_cap_usec), PERMILLE - u64_min(shed, PERMILLE),
                                           PERMILLE);

                keep = bw_headroom_level(h, bw_headroom_level_at_or_below(h, keep));

                if (keep < s->host_cap_usec) {
                        s->host_cap_usec = keep;
                        s->host_calm_usec = 0;
                        x->host_cut = true;
                }
        }
}

/* ---- 5. drain and refill ------------------------------------------------------ */

/* Choose the headroom for this sample: stay, step down, exhaust, raise,
 * hold. Fills rule, level and the target quota; returns whether the
 * change is an emergency (a decrease for safety). */
static bool choose_headroom(struct decision *x) {
        const struct bw_policy_params *p = x->p;
        const struct bw_headroom *h = &x->h;
        struct bw_policy_state *s = x->s;
        const struct bw_credit *cr = &s->credit;
        struct bw_decision *d = &x->d;
        uint64_t now = x->in->now_usec, cap = u64_min(h->max_usec, s->host_cap_usec), etarget;
        /* Hysteresis between holding and raising: a level is held while the
         * credit pays for it until a sample a short horizon away; it is
         * raised to only when the credit pays for it, with a quarter to
         * spare, until a sample a whole Interval= away. A raise therefore
         * lasts, even at full spending, and a group whose credit moves a
         * little does not flap between levels. */
        unsigned kfast = bw_headroom_affordable(h, cr, h->fast_usec, false);
        unsigned kraise = bw_headroom_affordable(h, cr, h->slow_usec, true);
        bool initial = x->sr != SAMPLE_OK, emergency = false;

        /* No headroom to be had (mode, CPUQuotaMax=, an ancestor): nothing
         * to exhaust either. */
        if (h->max_usec == 0)
                s->exhausted = false;

        /* Exhausted: the baseline until the credit pays for half the
         * headroom a full bucket rests at (not within hold_off, below): back
         * in at most two writes, not level by level as the credit grows. */
        if (s->exhausted && kraise > 0 && !x->in->host_over_limit &&
            kraise >= bw_headroom_way_back(h, p->credit_max_usec, 0))
                s->exhausted = false;

        etarget = x->ecur;
        if (x->ecur > cap) {
                /* Over what the configuration, an ancestor or the host now allow. */
                etarget = bw_headroom_level(h, bw_headroom_level_at_or_below(h, cap));
                if (etarget > cap)
                        etarget = bw_headroom_quant_down(cap);
                d->rule = x->host_cut ? BW_RULE_HOST_SHED :
                        x->ancestor_limited ? BW_RULE_ANCESTOR_LIMIT : BW_RULE_CLAMP;
                emergency = true;
        }
        if (s->exhausted && etarget > 0) {
                etarget = 0;
                d->rule = BW_RULE_CREDIT_EXHAUSTED;
                emergency = true;
        } else if (etarget > bw_headroom_level(h, kfast) && etarget > 0) {
                /* The credit no longer pays for this much even with the
                 * next sample a short horizon away: step down. */
                etarget = bw_headroom_level(h, kfast);
                if (kfast == 0) {
                        s->exhausted = true;
                        d->rule = BW_RULE_CREDIT_EXHAUSTED;
                } else
                        d->rule = BW_RULE_HEADROOM_LOWER;
                emergency = true;
        } else if (!emergency && !s->exhausted && bw_headroom_level(h, kraise) > etarget &&
                   (initial || kraise >= bw_headroom_way_back(h, p->credit_max_usec, etarget))) {
                /* Back up only once the credit pays for where a full bucket
                 * rests, or from below half of that for half: not a level
                 * at a time as it grows (the first decision places the unit
                 * wherever it can). */
                uint64_t want = u64_min(bw_headroom_level(h, kraise), cap);

                if (want <= etarget)
                        ;       /* capped by the host: nothing to raise */
                else if (x->in->host_over_limit)
                        d->rule = BW_RULE_HOST_HOLD;
                else if (s->last_decrease_usec > 0 && elapsed(now, s->last_decrease_usec) < p->hold_off_usec)
                        d->rule = BW_RULE_HOLD;
                else {
                        etarget = want;
                        d->rule = BW_RULE_HEADROOM_RAISE;
                }
        }

        d->target.quota_usec = h->baseline_quota_usec + etarget;
        d->headroom_usec = etarget;
        d->headroom_max_usec = cap;
        d->level = bw_headroom_level_at_or_below(h, etarget);
        return emergency;
}

/* The headroom (choose_headroom()), then the rule that names it: a value
 * brought into range and neither lowered for a reason of its own nor
 * raised in the same decision says "clamp"; the first sample and a reset
 * say so whatever happened. */
static void drain_and_refill(struct decision *x) {
        struct bw_decision *d = &x->d;
        bool emergency = choose_headroom(x);

        if (x->clamped && !emergency && d->rule != BW_RULE_HEADROOM_RAISE)
                d->rule = BW_RULE_CLAMP;
        d->emergency = emergency || x->clamped;
        if (x->sr == SAMPLE_PRIMED)
                d->rule = BW_RULE_PRIME;
        else if (x->sr == SAMPLE_RESET)
                d->rule = BW_RULE_RESET;
}

/* ---- 7. modes: the resting burst ---------------------------------------------- */

static void rest_burst(struct decision *x) {
        struct bw_decision *d = &x->d;

        d->target.period_usec = x->p->baseline.period_usec;
        d->target.has_burst = x->in->current.has_burst;
        if (x->burst_ok)
                d->target.burst_usec = burst_cap(x->p, d->target.quota_usec);
}

/* ---- 4. two horizons ----------------------------------------------------------- */

/* The reserve the target holds back, how long the credit above it lasts at
 * the current spending, and when the next sample is due: the idle horizon
 * when the target's headroom is affordable for it, else the short one. */
static void schedule_next(struct decision *x) {
        const struct bw_policy_state *s = x->s;
        struct bw_decision *d = &x->d;
        uint64_t etarget = d->headroom_usec;

        d->reserve_usec = bw_credit_reserve(d->target.quota_usec, x->h.burst_usec, x->h.baseline_quota_usec,
                                            x->h.slack_usec);
        /* "At the current rate": while the group is spending, not while an
         * old average fades out. */
        if (s->active && d->spend_rate > 0 && s->spend_avg > 0)
                d->time_to_empty_usec = u64_muldiv(bw_credit_above(&s->credit, d->reserve_usec), USEC_PER_SEC,
                                                   s->spend_avg);
        if (etarget == 0 || s->credit.credit_usec >= bw_headroom_cost(&x->h, etarget, x->h.slow_usec))
                d->next_tick_usec = x->p->interval_usec;
        else
                d->next_tick_usec = active_interval(x->p);
}

/* ---- explain and finish -------------------------------------------------------- */

const char *bw_decision_explain(const struct bw_decision *d, const struct bw_bandwidth *cur,
                                char buf[static BW_DECISION_EXPLAIN_MAX]) {
        char qa[BW_QUOTA_STRING_MAX], qb[BW_QUOTA_STRING_MAX], rq[64] = "";

        /* The run-queue p99 is named when it made the group active. */
        if (d->rq_over_target)
                snprintf(rq, sizeof(rq), ", run-queue p99 %" PRIu64 "ms %u%% throttled",
                         d->rq_wait_p99_usec / USEC_PER_MSEC, d->rq_throttled_permille / 10);
        snprintf(buf, BW_DECISION_EXPLAIN_MAX,
                 "%s%s: use %" PRIu64 "us/s thr %" PRIu64 "us/s credit %" PRIu64 "ms%s; level %u/%u%s%s; "
                 "quota %s->%s burst %" PRIu64 "->%" PRIu64 "; next sample in %" PRIu64 "ms",
                 d->would_change && !d->change ? "would act, " : "",
                 bw_rule_to_string(d->rule), d->usage_rate, d->throttle_rate,
                 d->credit_after_usec / USEC_PER_MSEC, d->debt_usec > 0 ? " (in debt)" : "",
                 d->level, BW_POLICY_LEVELS, d->active ? ", active" : "", rq,
                 bw_quota_to_string(cur->quota_usec, qa), bw_quota_to_string(d->target.quota_usec, qb),
                 cur->burst_usec, d->target.burst_usec, d->next_tick_usec / USEC_PER_MSEC);
        return buf;
}

/* Whether to write, the memories of this decision, the explanation. */
static void finish(struct decision *x, struct bw_decision *ret) {
        const struct bw_bandwidth *cur = &x->in->current;
        struct bw_policy_state *s = x->s;
        struct bw_decision *d = &x->d;

        d->would_change = d->target.quota_usec != cur->quota_usec ||
                d->target.period_usec != cur->period_usec ||
                (x->burst_ok && d->target.burst_usec != cur->burst_usec);
        d->change = d->would_change && x->p->mode != BW_MODE_OBSERVE;
        d->credit_after_usec = s->credit.credit_usec;
        d->debt_usec = s->credit.debt_usec;
        d->spend_avg = s->spend_avg;
        d->active = s->active;
        if (d->change) {
                s->has_changed = true;
                s->last_change_usec = x->in->now_usec;
                if (d->target.quota_usec < cur->quota_usec)
                        s->last_decrease_usec = x->in->now_usec;
                s->n_changes++;
        }
        s->n_decisions++;
        *ret = *d;
}

/* ---- the law, step by step ------------------------------------------------------ */

int bw_policy_rest_target(
                const struct bw_policy_params *p,
                uint64_t credit_usec,
                bool has_usage,
                const struct bw_bandwidth *current,
                struct bw_bandwidth *ret) {

        struct bw_policy_input in = {
                .now_usec = 1,
                .stat.seen = has_usage ? BW_CPUSTAT_USAGE : 0,
                .current = *current,
                .ancestor_quota_usec = BW_QUOTA_MAX,
        };
        struct bw_policy_state s;
        struct bw_decision d;
        int r;

        if (!p || !current || !ret)
                return -EINVAL;
        /* The first decision of a fresh state, so that the two never differ. */
        bw_policy_state_init(&s, p, credit_usec, 0);
        r = bw_policy_decide(p, &s, &in, &d);
        if (r < 0)
                return r;
        *ret = d.target;
        return 0;
}

int bw_policy_decide(
                const struct bw_policy_params *p,
                struct bw_policy_state *s,
                const struct bw_policy_input *in,
                struct bw_decision *ret) {

        struct decision x;
        int r;

        r = bw_policy_params_check(p);
        if (r < 0)
                return r;
        if (!s || !in || !ret || in->current.period_usec == 0)
                return -EINVAL;

        decision_begin(&x, p, s, in);
        if (take_sample(&x)) {                  /* 1. */
                earn_and_pay(&x);               /* 2. */
                classify_activity(&x);          /* 4. */
        }
        if (!decided_without_law(&x)) {         /* 7. off, unlimited; 1. too soon */
                price_headroom(&x);             /* 3. */
                bring_into_range(&x);
                protect_host(&x);               /* 6. */
                drain_and_refill(&x);           /* 5. */
                rest_burst(&x);                 /* 7. */
                schedule_next(&x);              /* 4. */
        }
        finish(&x, ret);
        return 0;
}
