/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The bwgov control law
 * =====================
 *
 * One decision per cgroup per tick (Interval=) or PSI trigger, from the
 * previous state, one sample of cumulative counters and the time. Pure: no
 * I/O, no clock, no globals. Quota Q and burst B are per period P; the
 * baseline Qb/P (the contract, found at adoption or set by CPUQuota=) never
 * changes here. Rates are µs per second of wall time.
 *
 * 1. Sample. Deltas of usage_usec, throttled_usec, nr_periods, nr_throttled,
 *    nr_bursts and PSI "full" total since the previous sample. A counter that
 *    went backwards (the cgroup was recreated) re-primes: no decision. Samples
 *    closer than 50 ms are ignored.
 *
 * 2. Credit (budget neutrality). A bucket C of CPU-µs, starting full at
 *    adoption:  C += Qb/P * dt - usage,  clamped to [0, CreditMax]. Usage is
 *    what the group really ran, so every µs above the baseline, whether it
 *    came from a raised quota, from burst or from the runtime refill each
 *    cpu.max write gives, is paid from C. Extra quota E = Q - Qb is granted
 *    only while C covers it for two ticks (late ticks) plus a reserve for the
 *    refills of this write and of the write back to baseline and one burst:
 *        E * 2*Interval / P  <=  C - (Q + Qb + Bc).
 *    When a boost no longer fits, it is cut to what fits (credit-limit); when
 *    less than 1 ms fits, quota returns to exactly the baseline
 *    (credit-exhausted) and nothing is raised again until C is back to a
 *    quarter of CreditMax (hysteresis, so an exhausted group does not flap).
 *    This keeps the contract: over any window of length t,
 *        usage <= Qb/P * t + CreditMax + Bc,
 *    where Bc = max(baseline burst, min(CPUBurstMax= or Qb, CPUQuotaMax=)) is
 *    the largest burst the law ever sets.
 *
 * 3. Hot, calm, in between (hysteresis). Hot: throttled_usec grows faster
 *    than TargetThrottle=, or PSI full grows faster than TargetPressure=
 *    while the group was throttled at all (full without throttling is
 *    contention from other groups, which more quota does not cure). Calm:
 *    both under half their targets. In between: hold still.
 *
 * 4. Raise (hot; elastic). Fast and graded: f = the throttled share of wall
 *    time, max(PSI full rate, throttled rate / CPUs), capped at 1/2; a group
 *    throttled a share f of the time needs about 1/(1-f) of its quota; the
 *    law asks twice that deficit:  Q' = Q * (1 + 2f/(1-f)), at least +5 %,
 *    at most x2 per step, on a 1 ms grid from the baseline, clamped to
 *    CPUQuotaMax= (and to CPUs x P) and to the credit. The ratio of the new
 *    quota to the peak usage is remembered as the group's headroom, so the
 *    later decay stops where throttling started instead of oscillating.
 *    Burst (elastic and burst modes, kernels with burst): when throttled
 *    while mean use is under 90 % of the quota (bursty), or when quota cannot
 *    rise, or always in mode burst, burst grows by the throttled time per
 *    throttled period (at least doubling, at least 1 ms), up to
 *    min(CPUBurstMax= or Qb, Q). Nothing is raised while the host is over
 *    HostPressureLimit= (host-hold) or while the credit is exhausted.
 *
 * 5. Decay (calm for 5 s; slow, asymmetric). The floor is
 *    max(Qb, peak usage x headroom). The peak holds for 30 s, then decays
 *    with a 20 s time constant; the headroom (1.25 by default, raised to
 *    what a raise needed) returns to 1.25 with a one-hour time constant.
 *    Quota drops to the floor once the floor is 10 % under it, or when the
 *    floor is the baseline (exact return). So an idle group is back at the
 *    baseline about a minute after its load stops, in a handful of writes,
 *    while a bursty group keeps the quota its bursts needed instead of
 *    oscillating between throttled and boosted. Burst unused (nr_bursts
 *    still) for 60 s returns to the baseline burst in one write: unused
 *    burst does nothing, and it comes back within a tick when needed.
 *
 * 6. Dead band and hold-off. Values sit on a 1 ms grid anchored at the
 *    baseline; a change under 5 % is suppressed unless it returns exactly to
 *    the baseline value. After a change nothing non-urgent changes for
 *    hold_off_usec (one PSI window, 2 s): the effects of a write need that
 *    long to show. Emergencies (host shedding, credit, a value out of range)
 *    skip both. Steady load under the quota therefore writes nothing at all.
 *
 * 7. Host shedding (bw_policy_plan_shed). Over HostPressureLimit=, a share of
 *    all boosts proportional to the excess (at most half per tick) is
 *    withdrawn from the lowest Priority= first, at most half of any unit's
 *    boost per tick, so repeated ticks converge instead of resetting and
 *    re-raising everything at once.
 *
 * 8. Modes. off: target is the baseline. observe: decide as elastic, never
 *    change (the decision says what elastic would do). burst: quota stays at
 *    the baseline, only burst moves. elastic: quota and burst. Without a
 *    usage counter elastic behaves as burst (no credit, no quota boost).
 *
 * Burst is always <= quota (the kernel rejects anything else; the daemon
 * lowers burst before quota and raises quota before burst).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/macro.h"
#include "bwgov/policy.h"

#define QUANTUM_USEC            UINT64_C(1000)           /* 1 ms grid for quota and burst */
#define DEADBAND_PERMILLE       UINT64_C(50)             /* changes under 5 % are noise */
#define MIN_DT_USEC             (50 * USEC_PER_MSEC)     /* closer samples carry no rate information */
#define LOWER_DELAY_USEC        (5 * USEC_PER_SEC)       /* calm this long before lowering */
#define BURST_IDLE_USEC         (60 * USEC_PER_SEC)      /* burst unused this long before it decays */
#define PEAK_HOLD_USEC          (30 * USEC_PER_SEC)      /* usage peak holds this long, */
#define PEAK_TAU_USEC           (20 * USEC_PER_SEC)      /* then forgets with this time constant */
#define HEADROOM_TAU_USEC       (3600 * USEC_PER_SEC)    /* learned headroom forgets with this time constant */
#define HEADROOM_DEFAULT        UINT32_C(1250)           /* floor = peak usage x 1.25 */
#define HEADROOM_MAX            UINT32_C(8000)
#define RAISE_MIN_PERMILLE      UINT64_C(1050)           /* at least +5 % per raise */
#define RAISE_MAX_PERMILLE      UINT64_C(2000)           /* at most x2 per raise */
#define LOWER_SLACK_PERMILLE    UINT64_C(100)            /* lower only when the floor is 10 % under the quota */
#define BURSTY_PERMILLE         UINT64_C(900)            /* throttled while using < 90 % of quota: bursty */
#define SHED_MAX_PERMILLE       UINT64_C(500)            /* never withdraw more than half per tick */

static const char *const rule_table[_BW_RULE_MAX] = {
        [BW_RULE_PRIME]            = "prime",
        [BW_RULE_RESET]            = "reset",
        [BW_RULE_TOO_SOON]         = "too-soon",
        [BW_RULE_MODE_OFF]         = "mode-off",
        [BW_RULE_UNLIMITED]        = "unlimited",
        [BW_RULE_CLAMP]            = "clamp",
        [BW_RULE_HOLD]             = "hold-off",
        [BW_RULE_STEADY]           = "steady",
        [BW_RULE_DEADBAND]         = "dead-band",
        [BW_RULE_RAISE_THROTTLE]   = "raise-throttle",
        [BW_RULE_RAISE_PRESSURE]   = "raise-pressure",
        [BW_RULE_RAISE_BURST]      = "raise-burst",
        [BW_RULE_AT_LIMIT]         = "at-limit",
        [BW_RULE_DECAY]            = "decay",
        [BW_RULE_CREDIT_LIMIT]     = "credit-limit",
        [BW_RULE_CREDIT_EXHAUSTED] = "credit-exhausted",
        [BW_RULE_HOST_SHED]        = "host-shed",
        [BW_RULE_HOST_HOLD]        = "host-hold",
};

const char *bw_rule_to_string(enum bw_rule r) {
        if (r < 0 || r >= _BW_RULE_MAX)
                return NULL;
        return rule_table[r];
}

enum bw_rule bw_rule_from_string(const char *s) {
        if (!s)
                return _BW_RULE_INVALID;
        for (int i = 0; i < _BW_RULE_MAX; i++)
                if (strcmp(rule_table[i], s) == 0)
                        return (enum bw_rule) i;
        return _BW_RULE_INVALID;
}

/* floor(a * b / c), saturating at UINT64_MAX; c == 0 saturates too. */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c) {
        __extension__ typedef unsigned __int128 u128;
        u128 v;

        if (c == 0)
                return UINT64_MAX;
        v = (u128) a * b / c;
        return v > UINT64_MAX ? UINT64_MAX : (uint64_t) v;
}

static uint64_t muldiv_up(uint64_t a, uint64_t b, uint64_t c) {
        __extension__ typedef unsigned __int128 u128;
        u128 v;

        if (c == 0)
                return UINT64_MAX;
        v = ((u128) a * b + c - 1) / c;
        return v > UINT64_MAX ? UINT64_MAX : (uint64_t) v;
}

static uint64_t sat_add(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_sub(uint64_t a, uint64_t b) {
        return a > b ? a - b : 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b) {
        return a > b ? a : b;
}

/* Time since `then`; 0 if the clock went backwards. */
static uint64_t elapsed(uint64_t now, uint64_t then) {
        return now > then ? now - then : 0;
}

static uint64_t quant_down(uint64_t v) {
        return v / QUANTUM_USEC * QUANTUM_USEC;
}

static uint64_t quant_up(uint64_t v) {
        if (v > UINT64_MAX - QUANTUM_USEC)
                return quant_down(v);
        return quant_down(v + QUANTUM_USEC - 1);
}

/* µs per period -> µs/s and back. */
static uint64_t rate_of(uint64_t per_period, uint64_t period_usec) {
        return muldiv(per_period, USEC_PER_SEC, period_usec);
}

static uint64_t per_period_of(uint64_t rate, uint64_t period_usec) {
        return muldiv(rate, period_usec, USEC_PER_SEC);
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
        if (p->interval_usec == 0)
                return -EINVAL;
        return 0;
}

static bool elastic_mode(enum bw_mode m) {
        return m == BW_MODE_ELASTIC || m == BW_MODE_OBSERVE;
}

static uint64_t baseline_burst(const struct bw_policy_params *p) {
        return p->baseline.has_burst ? p->baseline.burst_usec : 0;
}

static uint64_t quota_limit(const struct bw_policy_params *p, bool elastic) {
        uint64_t bq = p->baseline.quota_usec, lim, cpu_cap;

        if (bq == BW_QUOTA_MAX || !elastic)
                return bq;

        lim = max_u64(p->quota_max_usec, bq);
        cpu_cap = muldiv(p->ncpus > 0 ? p->ncpus : 1, p->baseline.period_usec, 1);
        lim = min_u64(lim, max_u64(bq, cpu_cap));
        lim = min_u64(lim, max_u64(bq, BW_QUOTA_LIMIT_USEC));
        return lim;
}

uint64_t bw_policy_quota_limit_usec(const struct bw_policy_params *p) {
        return quota_limit(p, elastic_mode(p->mode));
}

/* The largest burst allowed next to a quota q. */
static uint64_t burst_cap(const struct bw_policy_params *p, uint64_t q) {
        uint64_t bm = p->burst_max_usec > 0 ? p->burst_max_usec : p->baseline.quota_usec;

        return min_u64(max_u64(baseline_burst(p), bm), q);
}

uint64_t bw_policy_contract_burst_usec(const struct bw_policy_params *p) {
        if (!p->kernel_has_burst)
                return baseline_burst(p);
        return burst_cap(p, bw_policy_quota_limit_usec(p));
}

uint64_t bw_policy_boost_rate(const struct bw_policy_params *p, const struct bw_bandwidth *current) {
        uint64_t bq = p->baseline.quota_usec;

        if (bq == BW_QUOTA_MAX || current->quota_usec == BW_QUOTA_MAX)
                return 0;
        if (current->quota_usec <= bq || p->baseline.period_usec == 0)
                return 0;
        return rate_of(current->quota_usec - bq, p->baseline.period_usec);
}

void bw_policy_state_init(struct bw_policy_state *s, const struct bw_policy_params *p, uint64_t credit_usec) {
        *s = (struct bw_policy_state) {
                .credit_usec = min_u64(credit_usec, p->credit_max_usec),
                .headroom_permille = HEADROOM_DEFAULT,
        };
}

struct sample {
        uint64_t dt;
        uint64_t d_usage;
        uint64_t d_throttled;
        uint64_t d_nr_periods;
        uint64_t d_nr_throttled;
        uint64_t d_nr_bursts;
        uint64_t d_burst;
        uint64_t d_full;
        bool has_usage;
        bool has_throttle;      /* the throttling counters exist */
        bool has_bursts;        /* nr_bursts exists */
        bool has_full;
};

enum sample_result {
        SAMPLE_OK,
        SAMPLE_PRIMED,
        SAMPLE_RESET,
        SAMPLE_TOO_SOON,
};

static bool counter_delta(
                const struct bw_cpu_stat *prev, const struct bw_cpu_stat *cur,
                unsigned bit, uint64_t a, uint64_t b, uint64_t *ret) {
        /* false: went backwards */
        if (!(prev->seen & cur->seen & bit)) {
                *ret = 0;
                return true;
        }
        if (b < a)
                return false;
        *ret = b - a;
        return true;
}

static void store_sample(struct bw_policy_state *s, const struct bw_policy_input *in) {
        s->prev_now_usec = in->now_usec;
        s->prev_stat = in->stat;
        s->prev_has_full = in->has_psi && in->psi.has_full;
        s->prev_full_usec = s->prev_has_full ? in->psi.full.total_usec : 0;
}

static enum sample_result take_sample(
                struct bw_policy_state *s,
                const struct bw_policy_input *in,
                struct sample *ret) {
        const struct bw_cpu_stat *a = &s->prev_stat, *b = &in->stat;
        struct sample sm = { 0 };
        bool ok = true, has_full;

        if (!s->primed) {
                store_sample(s, in);
                s->primed = true;
                s->last_hot_usec = in->now_usec;
                s->burst_used_usec = in->now_usec;
                return SAMPLE_PRIMED;
        }

        has_full = in->has_psi && in->psi.has_full && s->prev_has_full;

        ok = ok && counter_delta(a, b, BW_CPUSTAT_USAGE, a->usage_usec, b->usage_usec, &sm.d_usage);
        ok = ok && counter_delta(a, b, BW_CPUSTAT_NR_PERIODS, a->nr_periods, b->nr_periods, &sm.d_nr_periods);
        ok = ok && counter_delta(a, b, BW_CPUSTAT_NR_THROTTLED, a->nr_throttled, b->nr_throttled, &sm.d_nr_throttled);
        ok = ok && counter_delta(a, b, BW_CPUSTAT_THROTTLED, a->throttled_usec, b->throttled_usec, &sm.d_throttled);
        ok = ok && counter_delta(a, b, BW_CPUSTAT_NR_BURSTS, a->nr_bursts, b->nr_bursts, &sm.d_nr_bursts);
        ok = ok && counter_delta(a, b, BW_CPUSTAT_BURST, a->burst_usec, b->burst_usec, &sm.d_burst);
        if (has_full && in->psi.full.total_usec < s->prev_full_usec)
                ok = false;
        if (in->now_usec <= s->prev_now_usec)
                ok = false;

        if (!ok) {
                store_sample(s, in);
                s->last_hot_usec = in->now_usec;
                s->burst_used_usec = in->now_usec;
                return SAMPLE_RESET;
        }

        sm.dt = in->now_usec - s->prev_now_usec;
        if (sm.dt < MIN_DT_USEC)
                return SAMPLE_TOO_SOON;

        sm.has_usage = a->seen & b->seen & BW_CPUSTAT_USAGE;
        sm.has_throttle = a->seen & b->seen & BW_CPUSTAT_THROTTLED;
        sm.has_bursts = a->seen & b->seen & BW_CPUSTAT_NR_BURSTS;
        sm.has_full = has_full;
        if (has_full)
                sm.d_full = in->psi.full.total_usec - s->prev_full_usec;

        store_sample(s, in);
        *ret = sm;
        return SAMPLE_OK;
}

/* Credit needed in reserve to hold a quota q: the runtime refill of this
 * write (up to q), of the write back to baseline (up to Qb) and one burst. */
static uint64_t credit_reserve(const struct bw_policy_params *p, uint64_t q) {
        return sat_add(sat_add(q, p->baseline.quota_usec), bw_policy_contract_burst_usec(p));
}

/* Extra quota per period (above the baseline) the credit can pay for while
 * holding quota q. */
static uint64_t credit_affords(const struct bw_policy_params *p, uint64_t credit, uint64_t q) {
        uint64_t reserve = credit_reserve(p, q);

        if (credit <= reserve)
                return 0;
        return muldiv(credit - reserve, p->baseline.period_usec, sat_add(p->interval_usec, p->interval_usec));
}

static void explain(struct bw_decision *d, const struct bw_bandwidth *cur, const struct bw_policy_params *p) {
        const char *what;

        switch (d->rule) {
        case BW_RULE_PRIME:            what = "first sample"; break;
        case BW_RULE_RESET:            what = "counters went backwards, re-primed"; break;
        case BW_RULE_TOO_SOON:         what = "sample too close to the previous one"; break;
        case BW_RULE_MODE_OFF:         what = "mode off, baseline"; break;
        case BW_RULE_UNLIMITED:        what = "baseline unlimited"; break;
        case BW_RULE_CLAMP:            what = "current value out of range"; break;
        case BW_RULE_HOLD:             what = "holding off after a change"; break;
        case BW_RULE_STEADY:           what = "steady"; break;
        case BW_RULE_DEADBAND:         what = "change under 5% suppressed"; break;
        case BW_RULE_RAISE_THROTTLE:   what = "throttled above target"; break;
        case BW_RULE_RAISE_PRESSURE:   what = "pressure above target"; break;
        case BW_RULE_RAISE_BURST:      what = "throttled, burst raised"; break;
        case BW_RULE_AT_LIMIT:         what = "throttled at the limits"; break;
        case BW_RULE_DECAY:            what = "calm, decaying"; break;
        case BW_RULE_CREDIT_LIMIT:     what = "boost cut to credit"; break;
        case BW_RULE_CREDIT_EXHAUSTED: what = "credit exhausted"; break;
        case BW_RULE_HOST_SHED:        what = "host pressure, shedding"; break;
        case BW_RULE_HOST_HOLD:        what = "host pressure, no raise"; break;
        default:                       what = "?"; break;
        }

        char qa[24], qb[24];

        /* "max" for an unlimited quota, not UINT64_MAX. */
        if (cur->quota_usec == BW_QUOTA_MAX)
                snprintf(qa, sizeof qa, "max");
        else
                snprintf(qa, sizeof qa, "%" PRIu64, cur->quota_usec);
        if (d->target.quota_usec == BW_QUOTA_MAX)
                snprintf(qb, sizeof qb, "max");
        else
                snprintf(qb, sizeof qb, "%" PRIu64, d->target.quota_usec);

        snprintf(d->explain, sizeof(d->explain),
                 "%s%s: use %" PRIu64 "us/s thr %" PRIu64 "us/s full %" PRIu64 "us/s credit %" PRIu64
                 "ms; quota %s->%s burst %" PRIu64 "->%" PRIu64,
                 p->mode == BW_MODE_OBSERVE && d->would_change ? "would act, " : "", what, d->usage_rate, d->throttle_rate, d->pressure_rate, d->credit_after_usec / USEC_PER_MSEC,
                 qa, qb, cur->burst_usec, d->target.burst_usec);
}

static void finish(
                const struct bw_policy_params *p,
                struct bw_policy_state *s,
                const struct bw_policy_input *in,
                struct bw_decision *d,
                struct bw_decision *ret) {
        const struct bw_bandwidth *cur = &in->current;
        bool burst_ok = p->kernel_has_burst && cur->has_burst;

        d->would_change = d->target.quota_usec != cur->quota_usec ||
                d->target.period_usec != cur->period_usec ||
                (burst_ok && d->target.burst_usec != cur->burst_usec);
        d->change = d->would_change && p->mode != BW_MODE_OBSERVE;
        d->credit_after_usec = s->credit_usec;
        if (d->change) {
                s->has_changed = true;
                s->last_change_usec = in->now_usec;
                s->n_changes++;
        }
        s->n_decisions++;
        explain(d, cur, p);
        *ret = *d;
}

int bw_policy_decide(
                const struct bw_policy_params *p,
                struct bw_policy_state *s,
                const struct bw_policy_input *in,
                struct bw_decision *ret) {

        const struct bw_bandwidth *cur;
        struct bw_decision d = { 0 };
        struct sample sm = { 0 };
        enum sample_result sr;
        uint64_t P, bq, bb, qlim, q, b, nq, nb, now, tt, tp, peak_q, floor_q;
        bool elastic, burst_ok, emergency = false, hot, calm, evidence, raise_ok;
        int r;

        r = bw_policy_params_check(p);
        if (r < 0)
                return r;
        if (!s || !in || !ret || in->current.period_usec == 0)
                return -EINVAL;

        cur = &in->current;
        now = in->now_usec;
        P = p->baseline.period_usec;
        bq = p->baseline.quota_usec;
        bb = baseline_burst(p);
        burst_ok = p->kernel_has_burst && cur->has_burst;

        d.rule = BW_RULE_STEADY;
        d.target = *cur;
        d.credit_before_usec = s->credit_usec;

        sr = take_sample(s, in, &sm);
        if (sr == SAMPLE_OK) {
                uint64_t gain = bq == BW_QUOTA_MAX ? 0 : muldiv(bq, sm.dt, P), decay;

                d.dt_usec = sm.dt;
                d.usage_rate = muldiv(sm.d_usage, USEC_PER_SEC, sm.dt);
                d.throttle_rate = muldiv(sm.d_throttled, USEC_PER_SEC, sm.dt);
                d.pressure_rate = muldiv(sm.d_full, USEC_PER_SEC, sm.dt);
                d.d_nr_periods = sm.d_nr_periods;
                d.d_nr_throttled = sm.d_nr_throttled;
                d.d_nr_bursts = sm.d_nr_bursts;

                /* The credit bucket: earn the baseline, pay what was used
                 * (CreditMax= may have shrunk on reload: clamp first). */
                s->credit_usec = min_u64(s->credit_usec, p->credit_max_usec);
                if (sm.has_usage && bq != BW_QUOTA_MAX) {
                        if (gain >= sm.d_usage)
                                s->credit_usec = min_u64(sat_add(s->credit_usec, gain - sm.d_usage), p->credit_max_usec);
                        else
                                s->credit_usec = sat_sub(s->credit_usec, sm.d_usage - gain);
                }
                if (s->credit_exhausted &&
                    p->credit_max_usec > 0 &&
                    s->credit_usec >= p->credit_max_usec / 4 &&
                    s->credit_usec > credit_reserve(p, bq))
                        s->credit_exhausted = false;

                /* Memories: peak usage (fast) and learned headroom (slow). */
                if (d.usage_rate >= s->usage_peak) {
                        s->usage_peak = d.usage_rate;
                        s->usage_peak_usec = in->now_usec;
                } else if (elapsed(in->now_usec, s->usage_peak_usec) >= PEAK_HOLD_USEC) {
                        decay = muldiv(s->usage_peak, min_u64(sm.dt, PEAK_TAU_USEC), PEAK_TAU_USEC);
                        s->usage_peak = max_u64(d.usage_rate, s->usage_peak - decay);
                }
                if (s->headroom_permille > HEADROOM_DEFAULT)
                        s->headroom_permille -= (uint32_t) muldiv(s->headroom_permille - HEADROOM_DEFAULT,
                                                                  min_u64(sm.dt, HEADROOM_TAU_USEC), HEADROOM_TAU_USEC);
                else
                        s->headroom_permille = HEADROOM_DEFAULT;
        }

        if (p->mode == BW_MODE_OFF) {
                d.rule = BW_RULE_MODE_OFF;
                d.target = p->baseline;
                d.target.has_burst = cur->has_burst;
                d.target.burst_usec = burst_ok ? bb : cur->burst_usec;
                finish(p, s, in, &d, ret);
                return 0;
        }
        if (bq == BW_QUOTA_MAX) {
                d.rule = BW_RULE_UNLIMITED;
                finish(p, s, in, &d, ret);
                return 0;
        }
        if (sr != SAMPLE_OK) {
                d.rule = sr == SAMPLE_PRIMED ? BW_RULE_PRIME :
                         sr == SAMPLE_RESET ? BW_RULE_RESET : BW_RULE_TOO_SOON;
                finish(p, s, in, &d, ret);
                return 0;
        }

        elastic = elastic_mode(p->mode) && sm.has_usage;
        qlim = quota_limit(p, elastic);

        /* Step 0: bring the current value into range. */
        if (cur->period_usec != P || cur->quota_usec == BW_QUOTA_MAX) {
                q = bq;
                b = burst_ok ? min_u64(cur->burst_usec, burst_cap(p, bq)) : cur->burst_usec;
        } else {
                q = cur->quota_usec < bq ? bq : min_u64(cur->quota_usec, qlim);
                b = burst_ok ? min_u64(cur->burst_usec, burst_cap(p, q)) : cur->burst_usec;
        }
        if (q != cur->quota_usec || P != cur->period_usec || b != cur->burst_usec) {
                d.rule = BW_RULE_CLAMP;
                emergency = true;
        }
        nq = q;
        nb = b;

        /* Signals, with hysteresis. */
        tt = p->target_throttle;
        tp = p->target_pressure;
        evidence = !sm.has_throttle || sm.d_throttled > 0 || sm.d_nr_throttled > 0;
        hot = d.throttle_rate > tt || (evidence && d.pressure_rate > tp);
        calm = d.throttle_rate <= tt / 2 && !(evidence && d.pressure_rate > tp / 2);
        if (!calm)
                s->last_hot_usec = now;
        if (sm.has_bursts ? sm.d_nr_bursts > 0 : d.usage_rate * 2 >= rate_of(q, P))
                s->burst_used_usec = now;

        peak_q = per_period_of(s->usage_peak, P);
        floor_q = muldiv(peak_q, s->headroom_permille, 1000);
        floor_q = floor_q > bq ? min_u64(bq + quant_up(floor_q - bq), q) : bq;
        d.floor_usec = floor_q;

        /* Emergency 1: host shedding withdraws part of the boost. */
        if (in->shed_permille > 0 && (nq > bq || (burst_ok && nb > bb))) {
                uint64_t keep = 1000 - min_u64(in->shed_permille, 1000);

                if (nq > bq)
                        nq = bq + quant_down(muldiv(nq - bq, keep, 1000));
                if (burst_ok && nb > bb)
                        nb = bb + quant_down(muldiv(nb - bb, keep, 1000));
                d.rule = BW_RULE_HOST_SHED;
                emergency = true;
        }

        /* Emergency 2: the boost must be paid for. */
        if (nq > bq) {
                uint64_t e = quant_down(credit_affords(p, s->credit_usec, nq));

                if (s->credit_exhausted || e < QUANTUM_USEC) {
                        nq = bq;
                        s->credit_exhausted = true;
                        d.rule = BW_RULE_CREDIT_EXHAUSTED;
                        emergency = true;
                } else if (nq - bq > e) {
                        nq = bq + e;
                        d.rule = BW_RULE_CREDIT_LIMIT;
                        emergency = true;
                }
        }

        raise_ok = !s->credit_exhausted && s->credit_usec > credit_reserve(p, bq);

        if (emergency)
                ;
        else if (s->has_changed && elapsed(now, s->last_change_usec) < p->hold_off_usec)
                d.rule = BW_RULE_HOLD;
        else if (hot) {
                if (in->host_over_limit)
                        d.rule = BW_RULE_HOST_HOLD;
                else if (!raise_ok)
                        d.rule = BW_RULE_CREDIT_EXHAUSTED;
                else {
                        bool bursty = muldiv(d.usage_rate, 1000, 1) < muldiv(rate_of(q, P), BURSTY_PERMILLE, 1);

                        if (elastic && q < qlim) {
                                uint64_t f, factor, want, e;

                                f = max_u64(evidence ? d.pressure_rate : 0, d.throttle_rate / (p->ncpus > 0 ? p->ncpus : 1));
                                f = min_u64(f / 1000, 500);          /* share of wall time, permille */
                                factor = 1000 + muldiv(2000, f, 1000 - f);
                                factor = min_u64(max_u64(factor, RAISE_MIN_PERMILLE), RAISE_MAX_PERMILLE);
                                want = muldiv_up(q, factor, 1000);
                                want = bq + quant_up(want - bq);
                                want = min_u64(want, qlim);
                                e = quant_down(credit_affords(p, s->credit_usec, want));
                                want = min_u64(want, bq + e);
                                if (want > q) {
                                        /* Remember the need relative to peak usage, so the
                                         * floor right after this raise is the raised quota. */
                                        nq = want;
                                        s->usage_peak_usec = now;
                                        if (peak_q > 0)
                                                s->headroom_permille = (uint32_t) max_u64(s->headroom_permille,
                                                        min_u64(muldiv_up(nq, 1000, peak_q), HEADROOM_MAX));
                                }
                        }

                        if (burst_ok && (bursty || p->mode == BW_MODE_BURST || nq == q)) {
                                uint64_t per_event = sm.d_throttled / (sm.d_nr_throttled > 0 ? sm.d_nr_throttled : 1);
                                uint64_t want = max_u64(max_u64(sat_add(b, per_event), sat_add(b, b)), bb + QUANTUM_USEC);

                                want = bb + quant_up(want - bb);
                                want = min_u64(want, burst_cap(p, nq));
                                if (want > b) {
                                        nb = want;
                                        s->burst_used_usec = now;
                                }
                        }

                        if (nq > q)
                                d.rule = d.throttle_rate > tt ? BW_RULE_RAISE_THROTTLE : BW_RULE_RAISE_PRESSURE;
                        else if (nb > b)
                                d.rule = BW_RULE_RAISE_BURST;
                        else
                                d.rule = BW_RULE_AT_LIMIT;
                }
        } else if (calm && elapsed(now, s->last_hot_usec) >= LOWER_DELAY_USEC) {
                /* Lower to the floor once it is 10 % under the quota, or
                 * when it is the baseline (exact return). The floor itself
                 * moves slowly: that is what makes the decrease slow. */
                if (floor_q < q &&
                    (floor_q == bq || muldiv(floor_q, 1000, 1) <= muldiv(q, 1000 - LOWER_SLACK_PERMILLE, 1)))
                        nq = floor_q;
                if (burst_ok && b > bb && elapsed(now, s->burst_used_usec) >= BURST_IDLE_USEC)
                        nb = bb;        /* unused burst does nothing: drop it in one write */
                if (nq < q || nb < b)
                        d.rule = BW_RULE_DECAY;
        }

        /* Dead band: small changes are noise, except exact returns to the
         * baseline and emergencies. */
        if (!emergency) {
                bool suppressed = false;

                if (nq != q && nq != bq &&
                    muldiv(nq > q ? nq - q : q - nq, 1000, 1) < muldiv(q, DEADBAND_PERMILLE, 1)) {
                        nq = q;
                        suppressed = true;
                }
                if (nb != b && nb != bb &&
                    muldiv(nb > b ? nb - b : b - nb, 1000, 1) < muldiv(b, DEADBAND_PERMILLE, 1)) {
                        nb = b;
                        suppressed = true;
                }
                if (suppressed && nq == q && nb == b)
                        d.rule = BW_RULE_DEADBAND;
        }

        if (burst_ok)
                nb = min_u64(nb, burst_cap(p, nq));

        d.target.quota_usec = nq;
        d.target.period_usec = P;
        d.target.burst_usec = nb;
        d.target.has_burst = cur->has_burst;
        d.emergency = emergency;
        finish(p, s, in, &d, ret);
        return 0;
}

struct shed_order {
        int64_t priority;
        size_t index;
};

static int shed_order_cmp(const void *a, const void *b) {
        const struct shed_order *x = a, *y = b;

        if (x->priority != y->priority)
                return x->priority < y->priority ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

int bw_policy_plan_shed(
                const struct bw_shed_unit *units,
                size_t n,
                uint64_t host_pressure_rate,
                uint64_t host_pressure_limit,
                unsigned *ret_shed_permille) {

        _cleanup_free_ struct shed_order *order = NULL;
        uint64_t total = 0, want, frac;

        if (n == 0)
                return 0;
        if (!units || !ret_shed_permille)
                return -EINVAL;

        order = calloc(n, sizeof(*order));
        if (!order)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                ret_shed_permille[i] = 0;
                order[i] = (struct shed_order) { units[i].priority, i };
                total = sat_add(total, units[i].boost_rate);
        }

        if (host_pressure_limit == 0 || host_pressure_rate <= host_pressure_limit || total == 0)
                return 0;

        /* Share of all boosts to withdraw now: proportional to the excess,
         * at most one half. */
        frac = min_u64(muldiv_up(host_pressure_rate - host_pressure_limit, 1000, host_pressure_limit), SHED_MAX_PERMILLE);
        want = muldiv_up(total, frac, 1000);

        qsort(order, n, sizeof(*order), shed_order_cmp);

        /* Fill from the lowest priority up, at most half of each unit. */
        for (size_t i = 0; i < n && want > 0;) {
                uint64_t level = 0, cap;
                unsigned permille;
                size_t j;

                for (j = i; j < n && order[j].priority == order[i].priority; j++)
                        level = sat_add(level, units[order[j].index].boost_rate);

                cap = muldiv(level, SHED_MAX_PERMILLE, 1000);
                if (level == 0)
                        permille = 0;
                else if (want >= cap) {
                        permille = (unsigned) SHED_MAX_PERMILLE;
                        want -= cap;
                } else {
                        permille = (unsigned) min_u64(muldiv_up(want, 1000, level), SHED_MAX_PERMILLE);
                        want = 0;
                }

                for (size_t k = i; k < j; k++)
                        if (units[order[k].index].boost_rate > 0)
                                ret_shed_permille[order[k].index] = permille;
                i = j;
        }

        return 0;
}
