/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The baseline: the contract a governed cgroup is held to, and what bwgov
 * decides about it without I/O. Which value becomes the baseline when a unit
 * is adopted, re-based on someone else's write, or restored; which part of
 * cpu.max is still ours when someone else rewrote the other (the burst
 * ownership rule); the law's parameters from configuration and baseline; and
 * where a unit rests with its credit. The daemon reads and writes cgroups,
 * logs and persists; every decision here is a pure function. */

#include <stdbool.h>
#include <stdint.h>

#include "bwgov/config/config.h"
#include "bwgov/cgroup/cpumax.h"
#include "bwgov/law/policy.h"
#include "bwgov/state/state.h"

/* The kernel's default cpu.max period (kernel/sched/core.c
 * default_cfs_period(), 100 ms), also systemd's CPUQuotaPeriodSec= default:
 * the period assumed when none is known. */
#define BW_DEFAULT_PERIOD_USEC UINT64_C(100000)

/* Quotas are set on the law's 1 ms grid. */
#define BW_QUOTA_GRID_USEC UINT64_C(1000)

/* A rate in µs/s (CPUQuota=, CPUQuotaMax=) as a quota per period_usec. */
uint64_t bw_percent_to_quota(uint64_t usec_per_sec, uint64_t period_usec);

/* A quota rounded to the nearest 1 ms, at least BW_QUOTA_MIN_USEC;
 * BW_QUOTA_MAX stays. */
uint64_t bw_quantize_quota(uint64_t quota_usec);

/* What bwgov holds for one cgroup: the contract, and the value it last
 * wrote (has_written false when the kernel holds the baseline). */
struct bw_baseline_view {
        struct bw_bandwidth baseline;
        bool has_written;
        struct bw_bandwidth written;
};

/* The burst ownership rule. Quota and burst are separate files with
 * separate owners: systemd (on unit start and daemon-reload) and most
 * operators rewrite cpu.max only. Returns true when cur's quota is someone
 * else's (the caller has seen cur differ from what we wrote) but its burst is
 * still the one we wrote, so that the burst is still ours to bring back to
 * the baseline's. All of these must hold:
 *   - we wrote something (has_written) and the kernel has a burst file;
 *   - cur's burst is the one we wrote;
 *   - that burst differs from the baseline's (otherwise nothing of ours is
 *     left in place);
 *   - cur's quota is not max: without a quota the kernel ignores the burst
 *     (nothing is throttled) and there is no quota to cap the baseline's
 *     burst by, so it is left to whoever lifted the limit. */
bool bw_baseline_burst_ours(const struct bw_baseline_view *v, const struct bw_bandwidth *cur);

/* Someone else wrote cur: it becomes the contract, except a burst that is
 * still ours (bw_baseline_burst_ours()), where the baseline keeps its own
 * burst, capped at cur's quota. ret->has_written tells whether the kernel
 * then holds something other than the new baseline; ret->written = cur. */
void bw_baseline_rebase(const struct bw_baseline_view *v, const struct bw_bandwidth *cur, struct bw_baseline_view *ret);

/* Where a unit starts, from the kernel's value cur and the entry saved for
 * it (NULL when none, or when it was for another cgroup). */
struct bw_adopt_plan {
        struct bw_baseline_view view;
        enum bw_ownership ownership;    /* cur against the saved entry; meaningless without one */
        uint64_t credit_usec;           /* a fresh bucket starts full; at most CreditMax= */
        uint64_t debt_usec;
        bool paused;
        bool set_quota;                 /* CPUQuota= names a baseline the kernel does not hold: write it */
};

/* The baseline is cur, unless the saved entry shows cur is a value we
 * wrote (BW_OWNERSHIP_OURS: the saved baseline stands, even after a crash),
 * or someone else rewrote the quota while we were away (bw_baseline_rebase()
 * on the saved view); CPUQuota= (cfg->cpu_quota) then replaces its quota. */
void bw_baseline_adopt(const struct bw_unit_config *cfg, const struct bw_state_unit *saved,
                       const struct bw_bandwidth *cur, struct bw_adopt_plan *ret);

enum bw_restore {
        BW_RESTORE_NOTHING,             /* the kernel holds the baseline (or nothing is known) */
        BW_RESTORE_BASELINE,            /* write the baseline */
        BW_RESTORE_BURST,               /* the quota is someone else's: keep it, bring back only the burst */
        BW_RESTORE_NOT_OURS,            /* someone else rewrote quota and burst: leave them */
};

/* What restoring the baseline (stop, pause, unconfigure) means with cur in
 * the kernel. Only what we wrote is undone: when we hold nothing
 * (!v->has_written), a value other than the baseline is someone else's
 * (BW_RESTORE_NOT_OURS), whatever the mode. For BW_RESTORE_BASELINE and BW_RESTORE_BURST, *ret_target is
 * the value to write and *ret_baseline the baseline after it (for
 * BW_RESTORE_BURST, cur's quota and period with the restored burst);
 * otherwise both are untouched. */
enum bw_restore bw_baseline_restore_plan(const struct bw_baseline_view *v, const struct bw_bandwidth *cur,
                                         struct bw_bandwidth *ret_baseline, struct bw_bandwidth *ret_target);

/* What putting back a saved entry means when no unit governs it (a unit no
 * longer configured, a configuration that cannot be loaded, `bwgovd
 * --restore`), with cur in the kernel: BW_RESTORE_NOTHING when cur is the
 * baseline; BW_RESTORE_BASELINE when cur is bwgov's (bw_state_classify():
 * its written or pending values, each part), *ret_target the baseline;
 * BW_RESTORE_BURST when only the burst is still bwgov's, *ret_target cur
 * with the baseline's burst (under cur's quota); BW_RESTORE_NOT_OURS
 * otherwise. */
enum bw_restore bw_baseline_restore_entry(const struct bw_state_unit *saved, const struct bw_bandwidth *cur,
                                          struct bw_bandwidth *ret_target);

/* The headroom of a unit without CPUQuotaMax=: the quota may rest at this
 * many times the baseline (then capped by the host's CPUs and the nearest
 * limited ancestor). Real servers burst wider than twice their limit (a web
 * server's concurrent requests, a JVM's start-up with its compiler and
 * collector threads: tests/bench/apps, issue 29), and the credit, not this
 * ceiling, is what keeps the contract; Koordinator's CPU Burst allows 3x. */
#define BW_QUOTA_MAX_DEFAULT_FACTOR 4

/* The law's parameters for a unit: CPUQuotaMax= (default
 * BW_QUOTA_MAX_DEFAULT_FACTOR times the baseline quota, never below it) and
 * CPUBurstMax= on the 1 ms grid, the targets and intervals of config and
 * cfg, and the resting burst: in burst and elastic
 * modes the burst rests at no less than min(CPUBurstMax= or the quota, the
 * quota), which costs nothing against the contract (its "+ burst" term counts
 * it). burst_supported is false when the kernel check found no burst file;
 * otherwise the baseline's has_burst decides, and CPUBurstMax=0 hands the
 * burst to nobody. */
void bw_baseline_params(const struct bw_config *config, const struct bw_unit_config *cfg,
                        const struct bw_bandwidth *baseline, unsigned ncpus, bool burst_supported,
                        struct bw_policy_params *ret);

/* Whether a unit may rest above its baseline at all: not paused, mode burst
 * or elastic, and neither its baseline nor cur unlimited. */
bool bw_baseline_may_rest(const struct bw_policy_params *p, bool paused, const struct bw_bandwidth *cur);

/* Where a unit rests with credit_usec (bw_policy_rest_target()) capped at
 * the nearest limited ancestor's quota (BW_QUOTA_MAX for none; cgroup v1
 * refuses a child above it), but never below the baseline. Returns true and
 * the value to write when the kernel does not hold it already, false when
 * nothing is to be written (also when bw_baseline_may_rest() says no). */
bool bw_baseline_rest_plan(const struct bw_policy_params *p, uint64_t credit_usec, bool has_usage, bool paused,
                           const struct bw_bandwidth *cur, uint64_t ancestor_quota_usec,
                           struct bw_bandwidth *ret_target);

/* systemd intends quota_usec/period_usec (CPUQuota=) and the kernel does
 * not hold it: its write failed because our burst was above it, or is still
 * to come. The value to write: cur with systemd's quota and period and the
 * burst lowered under both the new quota and the baseline's burst. */
void bw_baseline_intent_target(const struct bw_bandwidth *cur, const struct bw_bandwidth *baseline,
                               uint64_t quota_usec, uint64_t period_usec, struct bw_bandwidth *ret);
