/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The control law: a pure function of (parameters, previous state, one
 * sample, now) -> decision. No I/O, no clock reads, no globals: the daemon
 * samples, calls bw_policy_decide(), writes what the decision says (when
 * `change` is true) and records it. The law itself is described in the block
 * comment at the top of src/lib/policy.c.
 *
 * Units: quota, period and burst in µs per period (struct bw_bandwidth);
 * rates in µs per second of wall time ("µs/s": 1000000 = one CPU fully busy);
 * credit in CPU-µs; times in µs of CLOCK_MONOTONIC (or any clock that never
 * goes backwards; the daemon's choice, used consistently). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bwgov/config.h"       /* enum bw_mode only */
#include "bwgov/cpumax.h"
#include "bwgov/cpustat.h"
#include "bwgov/psi.h"

/* Per unit parameters, resolved by the daemon from the configuration and the
 * values found at adoption. */
struct bw_policy_params {
        enum bw_mode mode;
        struct bw_bandwidth baseline;   /* the contract: quota/period (+burst) at adoption or CPUQuota= */
        uint64_t quota_max_usec;        /* per period, CPUQuotaMax= (daemon default: 2 x baseline quota);
                                         * values below the baseline quota mean "baseline" */
        uint64_t burst_max_usec;        /* CPUBurstMax=, µs; 0 = up to the baseline quota */
        uint64_t credit_max_usec;       /* CreditMax=, CPU-µs */
        uint64_t target_throttle;       /* TargetThrottle=, µs/s of throttled_usec growth tolerated */
        uint64_t target_pressure;       /* TargetPressure=, µs/s of cpu.pressure "full" growth tolerated */
        uint64_t hold_off_usec;         /* after a change, no non-emergency change for this long (one PSI window) */
        uint64_t interval_usec;         /* the tick (Interval=); credit is reserved for 2 ticks */
        unsigned ncpus;                 /* host CPUs: quota never above ncpus x period unless the baseline is */
        bool kernel_has_burst;          /* cpu.max.burst / cpu.cfs_burst_us exist */
};

/* Returns 0, or -EINVAL when the parameters cannot be used: baseline period
 * outside [1 ms, 1 s], baseline quota below 1 ms (BW_QUOTA_MAX is allowed:
 * the law then leaves the group alone), baseline burst above its quota,
 * interval 0, mode out of range. */
int bw_policy_params_check(const struct bw_policy_params *p);

/* The largest burst the law may ever set for these parameters: the "+ burst"
 * term of the contract  usage(t) <= baseline_rate * t + CreditMax + burst. */
uint64_t bw_policy_contract_burst_usec(const struct bw_policy_params *p);

/* The largest quota per period the law may set (CPUQuotaMax= clamped to
 * [baseline, max(baseline, ncpus x period)]); the baseline in mode burst. */
uint64_t bw_policy_quota_limit_usec(const struct bw_policy_params *p);

/* Boost of `current` above the baseline, in µs/s (0 when at or below it or
 * when either quota is max). Input to the host shedding planner. */
uint64_t bw_policy_boost_rate(const struct bw_policy_params *p, const struct bw_bandwidth *current);

/* Opaque in spirit: the daemon may read credit_usec (to persist it) and the
 * counters, and must not write anything else. */
struct bw_policy_state {
        bool primed;                    /* prev_* hold a sample */
        uint64_t prev_now_usec;
        struct bw_cpu_stat prev_stat;
        bool prev_has_full;
        uint64_t prev_full_usec;        /* cpu.pressure full total */

        uint64_t credit_usec;           /* the bucket, [0, credit_max_usec] */
        bool credit_exhausted;          /* dropped to baseline for want of credit; no raise until refilled */

        bool has_changed;
        uint64_t last_change_usec;      /* time of the last decision with change = true */
        uint64_t last_hot_usec;         /* last sample not calm (throttling above half the target) */
        uint64_t burst_used_usec;       /* last sample with burst in use, or last burst raise */
        uint64_t usage_peak;            /* µs/s, peak of recent usage rates: held 30 s, then decays with ~20 s */
        uint64_t usage_peak_usec;       /* when usage_peak was last set */
        uint32_t headroom_permille;     /* learned needed quota / usage, decays to 1250 with ~600 s */

        uint64_t n_decisions;
        uint64_t n_changes;
};

/* Initialise: unprimed, credit = credit_usec clamped to [0, credit_max_usec]
 * (the daemon passes credit_max_usec at first adoption, the persisted credit
 * after a restart). Never fails. */
void bw_policy_state_init(struct bw_policy_state *s, const struct bw_policy_params *p, uint64_t credit_usec);

struct bw_policy_input {
        uint64_t now_usec;              /* monotonic time of the sample */
        struct bw_cpu_stat stat;        /* cumulative counters; usage_usec must be present for credit */
        bool has_psi;
        struct bw_psi psi;              /* the cgroup's cpu.pressure, cumulative totals */
        struct bw_bandwidth current;    /* what the kernel holds now (read back, not what we wrote) */
        unsigned shed_permille;         /* 0..1000: share of the boost to withdraw now (bw_policy_plan_shed) */
        bool host_over_limit;           /* host pressure above HostPressureLimit=: no raise for anyone */
};

enum bw_rule {
        BW_RULE_PRIME,                  /* first sample: nothing to compare with */
        BW_RULE_RESET,                  /* counters went backwards (cgroup recreated): re-primed */
        BW_RULE_TOO_SOON,               /* samples closer than 50 ms: ignored, state untouched */
        BW_RULE_MODE_OFF,               /* mode off: target is the baseline */
        BW_RULE_UNLIMITED,              /* baseline quota is "max": nothing to govern */
        BW_RULE_CLAMP,                  /* current value outside what the mode and limits allow */
        BW_RULE_HOLD,                   /* within hold-off after a change */
        BW_RULE_STEADY,                 /* nothing to do */
        BW_RULE_DEADBAND,               /* a change smaller than 5 % was suppressed */
        BW_RULE_RAISE_THROTTLE,         /* throttled time above target: quota raised */
        BW_RULE_RAISE_PRESSURE,         /* PSI full above target while throttled: quota raised */
        BW_RULE_RAISE_BURST,            /* throttled: burst raised (quota could not or may not be) */
        BW_RULE_AT_LIMIT,               /* throttled, but quota and burst are at their limits */
        BW_RULE_DECAY,                  /* calm: quota and/or burst lowered toward the baseline */
        BW_RULE_CREDIT_LIMIT,           /* boost reduced to what the credit can pay for */
        BW_RULE_CREDIT_EXHAUSTED,       /* credit spent: back to the baseline quota, no raise until refilled */
        BW_RULE_HOST_SHED,              /* host pressure: part of the boost withdrawn */
        BW_RULE_HOST_HOLD,              /* throttled, but the host is over its pressure limit: no raise */
        _BW_RULE_MAX,
        _BW_RULE_INVALID = -1,
};

/* Stable machine-readable names ("raise-throttle", ...); NULL when out of range. */
const char *bw_rule_to_string(enum bw_rule r);
enum bw_rule bw_rule_from_string(const char *s);

struct bw_decision {
        enum bw_rule rule;
        struct bw_bandwidth target;     /* what the kernel should hold; period is always the baseline's */
        bool would_change;              /* target differs from input->current */
        bool change;                    /* write it: would_change, and mode is not observe */
        bool emergency;                 /* a decrease that skipped hold-off and dead band (shed, credit, clamp) */

        /* The inputs the decision used, for logs, history and `bwgovctl explain`. */
        uint64_t dt_usec;               /* time since the previous sample (0 when priming) */
        uint64_t usage_rate;            /* µs/s */
        uint64_t throttle_rate;         /* µs/s of throttled_usec growth */
        uint64_t pressure_rate;         /* µs/s of PSI full growth (0 without PSI) */
        uint64_t d_nr_periods;
        uint64_t d_nr_throttled;
        uint64_t d_nr_bursts;
        uint64_t credit_before_usec;
        uint64_t credit_after_usec;
        uint64_t floor_usec;            /* quota the law would decay to (per period) */
        char explain[256];              /* short human sentence, NUL-terminated */
};

/* Decide. Updates *s (sample, credit, memories; last change time when
 * ret->change is true, i.e. it assumes the daemon writes what it is told; the
 * next input->current tells the truth either way). Always steps from
 * input->current: if the daemon saw an external change it must re-base
 * (new params.baseline, same state: the credit carries over) before calling;
 * the law itself only clamps into range and would otherwise undo it.
 * Writing the target: only the files whose value differs; when the quota
 * goes down write the burst first, when it goes up write the quota first
 * (the kernel rejects burst > quota at every step).
 * A CreditMax= below 2 x baseline quota + contract burst leaves no room for
 * any boost (quota or burst): see the reserve in policy.c.
 * Returns 0; -EINVAL for unusable params (see bw_policy_params_check) or a
 * current period of 0, leaving *s and *ret untouched. */
int bw_policy_decide(
                const struct bw_policy_params *p,
                struct bw_policy_state *s,
                const struct bw_policy_input *in,
                struct bw_decision *ret);

/* Host shedding planner (pure). When the host's CPU pressure (PSI some,
 * µs/s) is above the limit, withdraw part of the boosts: a share of the total
 * boost proportional to the excess (excess / limit, at most one half per
 * call), taken from the lowest Priority= first, at most half of any unit's
 * boost per call, equal priorities sharing in proportion to their boosts.
 * Monotone: a larger excess never sheds less from any unit. Never all at
 * once: repeated calls converge geometrically instead of resetting (and then
 * re-raising) everything, which oscillates.
 * ret_shed_permille[i] receives the unit's shed (0..500) for
 * bw_policy_input.shed_permille. limit 0 disables shedding (all 0).
 * Returns 0, -EINVAL (n > 0 with a NULL array), -ENOMEM. */
struct bw_shed_unit {
        int64_t priority;               /* Priority=; lower is shed first */
        uint64_t boost_rate;            /* µs/s above baseline now (bw_policy_boost_rate) */
};
int bw_policy_plan_shed(
                const struct bw_shed_unit *units,
                size_t n,
                uint64_t host_pressure_rate,
                uint64_t host_pressure_limit,
                unsigned *ret_shed_permille);
