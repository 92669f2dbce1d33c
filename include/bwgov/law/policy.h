/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The control law: a pure function of (parameters, previous state, one
 * sample, now) -> decision. No I/O, no clock reads, no globals: the daemon
 * samples, calls bw_policy_decide(), writes what the decision says (when
 * `change` is true), records it, and samples again within the decision's
 * `next_tick_usec`. The law itself is described in the block comment at the
 * top of src/lib/law/policy.c.
 *
 * Units: quota, period and burst in µs per period (struct bw_bandwidth);
 * rates in µs per second of wall time ("µs/s": 1000000 = one CPU fully busy);
 * credit in CPU-µs; times in µs of CLOCK_MONOTONIC (or any clock that never
 * goes backwards; the daemon's choice, used consistently). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bwgov/config/config-types.h" /* enum bw_mode only */
#include "bwgov/cgroup/cpumax.h"
#include "bwgov/cgroup/cpustat.h"
#include "bwgov/law/credit.h"
#include "bwgov/law/headroom.h"
#include "bwgov/cgroup/psi.h"
#include "bwgov/law/rule.h"

/* The number of headroom levels (bwgov/law/headroom.h). */
#define BW_POLICY_LEVELS BW_HEADROOM_LEVELS

/* Per unit parameters, resolved by the daemon from the configuration and the
 * values found at adoption. */
struct bw_policy_params {
        enum bw_mode mode;
        struct bw_bandwidth baseline;   /* the contract: quota/period at adoption or CPUQuota=; burst = the
                                         * resting burst (the daemon raises it to min(CPUBurstMax=, quota)
                                         * in burst and elastic modes) */
        uint64_t quota_max_usec;        /* per period, CPUQuotaMax= (daemon default: 4 x baseline quota);
                                         * values below the baseline quota mean "baseline" */
        uint64_t burst_max_usec;        /* CPUBurstMax=, µs; 0 = up to the baseline quota */
        uint64_t credit_max_usec;       /* CreditMax=, CPU-µs */
        uint64_t target_throttle;       /* TargetThrottle=, µs/s: own throttling above this marks the group active */
        uint64_t target_pressure;       /* TargetPressure=, µs/s of PSI full (while throttled): likewise */
        uint64_t target_wait_p99_usec;  /* TargetWaitP99=: a run-queue wait p99 above this, mostly spent
                                         * throttled, likewise; 0 = off */
        uint64_t hold_off_usec;         /* no raise within this long of a decrease (one PSI window) */
        uint64_t interval_usec;         /* Interval=: idle groups are sampled this often */
        uint64_t active_interval_usec;  /* ActiveInterval=: groups spending credit are sampled this often
                                         * (0 = interval_usec) */
        unsigned ncpus;                 /* host CPUs: quota never above ncpus x period unless the baseline is */
        bool kernel_has_burst;          /* cpu.max.burst / cpu.cfs_burst_us exist and are ours to set */
};

/* Returns 0, or -EINVAL when the parameters cannot be used: baseline period
 * outside [1 ms, 1 s], baseline quota below 1 ms (BW_QUOTA_MAX is allowed:
 * the law then leaves the group alone), baseline burst above its quota,
 * interval 0, active interval above the interval, mode out of range. */
int bw_policy_params_check(const struct bw_policy_params *p);

/* The largest burst the law may ever set for these parameters: the "+ burst"
 * term of the contract  usage(t) <= baseline_rate * t + CreditMax + burst. */
uint64_t bw_policy_contract_burst_usec(const struct bw_policy_params *p);

/* The largest quota per period the law may set (CPUQuotaMax= clamped to
 * [baseline, max(baseline, ncpus x period)]); the baseline in modes burst
 * and off. */
uint64_t bw_policy_quota_limit_usec(const struct bw_policy_params *p);

/* Per-CPU slack the reserve allows for (bw_credit_reserve()), CPU-µs: one
 * runtime slice (5 ms) and one tick (10 ms at HZ=100) per CPU, which also
 * covers a short kernel-mode overrun under 6.18's task-based throttling. */
uint64_t bw_policy_slack_usec(const struct bw_policy_params *p);

/* Headroom of `current` above the baseline, in µs/s (0 when at or below it
 * or when either quota is max). */
uint64_t bw_policy_boost_rate(const struct bw_policy_params *p, const struct bw_bandwidth *current);

/* Where an idle group with this credit rests: baseline + the highest
 * headroom level the credit pays for until the next sample one Interval=
 * away (none without a usage counter, or in a mode other than elastic and
 * observe), and the resting burst: exactly what the first decision of a
 * fresh state targets, so that the daemon can write it for many units at
 * once at adoption. `current` supplies has_burst and the value to keep
 * when nothing is to change. Returns 0, -EINVAL as bw_policy_decide(). */
int bw_policy_rest_target(
                const struct bw_policy_params *p,
                uint64_t credit_usec,
                bool has_usage,
                const struct bw_bandwidth *current,
                struct bw_bandwidth *ret);

/* Opaque in spirit: the daemon may read credit (to persist it), the
 * counters and the rates, and must not write anything else. */
struct bw_policy_state {
        uint64_t prev_now_usec;         /* prev_* hold a sample if primed */
        struct bw_cpu_stat prev_stat;
        uint64_t prev_full_usec;        /* cpu.pressure full total, if prev_has_full */

        struct bw_credit credit;        /* the bucket, [0, credit_max_usec], and any debt */

        uint64_t active_usec;           /* last sample that found the group active */
        uint64_t host_cap_usec;         /* headroom cap left by host shedding; UINT64_MAX = none */
        uint64_t host_calm_usec;        /* since when the host has been under its limit (cap recovery) */

        uint64_t last_change_usec;      /* time of the last decision with change = true (if has_changed) */
        uint64_t last_decrease_usec;    /* ... that lowered the quota (raises wait hold_off_usec after it) */
        uint64_t spend_avg;             /* µs/s above the baseline, averaged over about 10 s */

        uint64_t n_decisions;
        uint64_t n_changes;

        /* The flags together (no padding after each). */
        bool primed;
        bool prev_has_full;
        bool exhausted;                 /* at the baseline for want of credit, until it pays for half the top level */
        bool active;                    /* spending credit or throttled: sampled on the short horizon */
        bool has_changed;
};

/* Initialise: unprimed, credit = credit_usec clamped to [0, credit_max_usec],
 * or a debt of debt_usec when that is not 0 (the daemon passes
 * credit_max_usec at first adoption, the persisted balance after a restart).
 * An empty bucket or a debt starts exhausted (CreditMax=0 never does). Never
 * fails. */
void bw_policy_state_init(struct bw_policy_state *s, const struct bw_policy_params *p,
                          uint64_t credit_usec, uint64_t debt_usec);

struct bw_policy_input {
        uint64_t now_usec;              /* monotonic time of the sample */
        struct bw_cpu_stat stat;        /* cumulative counters; usage_usec must be present for credit */
        bool has_psi;
        struct bw_psi psi;              /* the cgroup's cpu.pressure, cumulative totals */
        struct bw_bandwidth current;    /* what the kernel holds now (read back, not what we wrote) */
        uint64_t ancestor_quota_usec;   /* the nearest limited ancestor's quota scaled to this group's
                                         * period; BW_QUOTA_MAX (or 0) when no ancestor is limited */
        unsigned shed_permille;         /* 0..1000: share of the headroom to withdraw now (bw_host_plan_shed) */
        bool host_over_limit;           /* host pressure above HostPressureLimit=: no raise for anyone */
        /* Run-queue telemetry over the sample (src/bpf), when there is some
         * and the sample saw waits. */
        bool has_rq;
        uint64_t rq_wait_p99_usec;      /* upper bound at bucket resolution (bw_rq_quantile_usec()) */
        unsigned rq_throttled_permille; /* share of the wait time spent throttled, 0..1000 */
};

struct bw_decision {
        struct bw_bandwidth target;     /* what the kernel should hold; period is always the baseline's */
        uint64_t next_tick_usec;        /* sample again within this long (the horizon the credit was sized for) */

        /* The inputs the decision used, for logs, history and `bwgovctl explain`. */
        uint64_t dt_usec;               /* time since the previous sample (0 when priming) */
        uint64_t usage_rate;            /* µs/s */
        uint64_t throttle_rate;         /* µs/s of throttled_usec growth (the group's own limit) */
        uint64_t ancestor_throttle_rate;/* µs/s throttled by an ancestor's limit (cpu.stat.local less own) */
        uint64_t pressure_rate;         /* µs/s of PSI full growth (0 without PSI) */
        uint64_t d_nr_periods;
        uint64_t d_nr_throttled;
        uint64_t d_nr_bursts;
        uint64_t credit_before_usec;
        uint64_t credit_after_usec;
        uint64_t debt_usec;             /* after the decision */
        uint64_t earn_rate;             /* µs/s the bucket gained over the sample (baseline - usage, >= 0) */
        uint64_t spend_rate;            /* µs/s it lost (usage - baseline, >= 0) */
        uint64_t spend_avg;             /* spending averaged over about 10 s */
        uint64_t time_to_empty_usec;    /* at spend_avg, until the reserve; UINT64_MAX when not spending */
        uint64_t reserve_usec;          /* credit held back for the target (bw_credit_reserve()) */
        uint64_t rq_wait_p99_usec;      /* the run-queue figures, if has_rq */

        uint64_t headroom_usec;         /* target quota above the baseline, per period */
        uint64_t headroom_max_usec;     /* the largest headroom now: CPUQuotaMax=, the ancestor, the host cap */

        /* The small ones together (no padding after each). */
        enum bw_rule rule;
        unsigned level;                 /* 0..BW_POLICY_LEVELS: which fraction of headroom_max_usec */
        unsigned rq_throttled_permille;
        bool would_change;              /* target differs from input->current */
        bool change;                    /* write it: would_change, and mode is not observe */
        bool emergency;                 /* a decrease for safety (credit, host, clamp, ancestor) */
        bool active;                    /* spending or throttled: the short horizon applies */
        bool has_rq;                    /* the run-queue figures were there */
        bool rq_over_target;            /* active because the p99 was over TargetWaitP99=, mostly throttled */
};

#define BW_DECISION_EXPLAIN_MAX 256

/* The decision as a short human sentence, for explain and the journal:
 * written only when someone asks (formatting it on every tick of ten
 * thousand units cost more than deciding). cur is what the kernel held
 * when d was taken (its input's current). Returns buf. */
const char *bw_decision_explain(const struct bw_decision *d, const struct bw_bandwidth *cur,
                                char buf[static BW_DECISION_EXPLAIN_MAX]);

/* Decide. Updates *s (sample, credit, memories; last change time when
 * ret->change is true, i.e. it assumes the daemon writes what it is told; the
 * next input->current tells the truth either way). Always steps from
 * input->current: if the daemon saw an external change it must re-base
 * (new params.baseline, same state: the credit carries over) before calling;
 * the law itself only clamps into range and would otherwise undo it.
 * Writing the target: only the files whose value differs; when the quota
 * goes down write the burst first, when it goes up write the quota first
 * (the kernel rejects burst > quota at every step).
 * The daemon must sample again within ret->next_tick_usec: the headroom is
 * sized so that the credit pays for it only that long (a late sample eats
 * into the reserve).
 * Returns 0; -EINVAL for unusable params (see bw_policy_params_check) or a
 * current period of 0, leaving *s and *ret untouched. */
int bw_policy_decide(
                const struct bw_policy_params *p,
                struct bw_policy_state *s,
                const struct bw_policy_input *in,
                struct bw_decision *ret);
