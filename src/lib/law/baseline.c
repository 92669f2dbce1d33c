/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The baseline decisions, pure: adoption, re-base, restore, the burst
 * ownership rule, the law's parameters and the resting plan (contracts in
 * include/bwgov/law/baseline.h). bwgovd's unit.c, unit-intent.c and restore.c
 * do the I/O around them. */

#include "bwgov/law/baseline.h"
#include "bwgov/util/macro.h"
#include "bwgov/cgroup/cpumax.h"
#include "bwgov/util/util.h"

uint64_t bw_percent_to_quota(uint64_t usec_per_sec, uint64_t period_usec) {
        return usec_per_sec * period_usec / USEC_PER_SEC;
}

uint64_t bw_quantize_quota(uint64_t quota_usec) {
        uint64_t q;

        if (quota_usec == BW_QUOTA_MAX)
                return quota_usec;
        q = (quota_usec + BW_QUOTA_GRID_USEC / 2) / BW_QUOTA_GRID_USEC * BW_QUOTA_GRID_USEC;
        return q < BW_QUOTA_MIN_USEC ? BW_QUOTA_MIN_USEC : q;
}

bool bw_baseline_burst_ours(const struct bw_baseline_view *v, const struct bw_bandwidth *cur) {
        return v->has_written && cur->has_burst && cur->burst_usec == v->written.burst_usec &&
               v->written.burst_usec != v->baseline.burst_usec && cur->quota_usec != BW_QUOTA_MAX;
}

void bw_baseline_rebase(const struct bw_baseline_view *v, const struct bw_bandwidth *cur,
                        struct bw_baseline_view *ret) {
        struct bw_baseline_view n = { .baseline = *cur, .written = *cur };

        if (bw_baseline_burst_ours(v, cur))
                n.baseline.burst_usec = u64_min(v->baseline.burst_usec, cur->quota_usec);
        n.has_written = !bw_bandwidth_identical(cur, &n.baseline);
        *ret = n;
}

void bw_baseline_adopt(const struct bw_unit_config *cfg, const struct bw_state_unit *saved,
                       const struct bw_bandwidth *cur, struct bw_adopt_plan *ret) {
        struct bw_adopt_plan p = {
                .view.baseline = *cur,
                .ownership = BW_OWNERSHIP_EXTERNAL,
                .credit_usec = cfg->credit_max_usec,
        };

        if (saved) {
                const struct bw_baseline_view was = {
                        .baseline = saved->baseline,
                        .has_written = saved->has_written,
                        .written = saved->written,
                };

                p.ownership = bw_state_classify(saved, cur);
                p.paused = saved->paused;
                if (p.ownership != BW_OWNERSHIP_EXTERNAL) {
                        p.credit_usec = saved->credit_usec;
                        p.debt_usec = saved->debt_usec;
                }
                if (p.ownership == BW_OWNERSHIP_OURS) {
                        p.view.baseline = saved->baseline;
                        p.view.baseline.has_burst = cur->has_burst;
                        p.view.has_written = true;
                        p.view.written = *cur;
                } else if (p.ownership == BW_OWNERSHIP_EXTERNAL)
                        bw_baseline_rebase(&was, cur, &p.view);
        }

        if (cfg->cpu_quota > 0) {
                struct bw_bandwidth *b = &p.view.baseline;

                b->quota_usec = bw_quantize_quota(bw_percent_to_quota(cfg->cpu_quota, b->period_usec));
                if (b->has_burst && b->burst_usec > b->quota_usec)
                        b->burst_usec = b->quota_usec;
        }
        p.credit_usec = u64_min(p.credit_usec, cfg->credit_max_usec);
        p.set_quota = cfg->cpu_quota > 0 && !p.view.has_written && !bw_bandwidth_equal(cur, &p.view.baseline);
        *ret = p;
}

enum bw_restore bw_baseline_restore_plan(const struct bw_baseline_view *v, const struct bw_bandwidth *cur,
                                         struct bw_bandwidth *ret_baseline, struct bw_bandwidth *ret_target) {
        if (v->has_written && !bw_bandwidth_equal(cur, &v->written)) {
                struct bw_bandwidth b = v->baseline, t = *cur;

                if (!bw_baseline_burst_ours(v, cur))
                        return BW_RESTORE_NOT_OURS;
                t.burst_usec = u64_min(v->baseline.burst_usec, cur->quota_usec);
                b.quota_usec = cur->quota_usec;
                b.period_usec = cur->period_usec;
                b.burst_usec = t.burst_usec;
                *ret_baseline = b;
                *ret_target = t;
                return BW_RESTORE_BURST;
        }
        if (bw_bandwidth_identical(cur, &v->baseline))
                return BW_RESTORE_NOTHING;
        /* Nothing of ours is in place (has_written false: the kernel held
         * the baseline at our last look), so a different value now is
         * someone else's, written since: not ours to undo. */
        if (!v->has_written)
                return BW_RESTORE_NOT_OURS;
        *ret_baseline = v->baseline;
        *ret_target = v->baseline;
        return BW_RESTORE_BASELINE;
}

enum bw_restore bw_baseline_restore_entry(const struct bw_state_unit *saved, const struct bw_bandwidth *cur,
                                          struct bw_bandwidth *ret_target) {
        struct bw_bandwidth t = *cur;

        switch (bw_state_classify(saved, cur)) {
        case BW_OWNERSHIP_BASELINE:
                return BW_RESTORE_NOTHING;
        case BW_OWNERSHIP_OURS:
                if (bw_bandwidth_identical(cur, &saved->baseline))
                        return BW_RESTORE_NOTHING;
                *ret_target = saved->baseline;
                return BW_RESTORE_BASELINE;
        case BW_OWNERSHIP_EXTERNAL:
        default:
                break;
        }
        /* The quota is someone else's; a burst still ours goes back (the
         * kernel's order: at most the quota). */
        if (!cur->has_burst || cur->quota_usec == BW_QUOTA_MAX ||
            !((saved->has_written && saved->written.has_burst && cur->burst_usec == saved->written.burst_usec) ||
              (saved->has_pending && saved->pending.has_burst && cur->burst_usec == saved->pending.burst_usec)) ||
            cur->burst_usec == saved->baseline.burst_usec)
                return BW_RESTORE_NOT_OURS;
        t.burst_usec = u64_min(saved->baseline.burst_usec, cur->quota_usec);
        *ret_target = t;
        return BW_RESTORE_BURST;
}

void bw_baseline_params(const struct bw_config *config, const struct bw_unit_config *cfg,
                        const struct bw_bandwidth *baseline, unsigned ncpus, bool burst_supported,
                        struct bw_policy_params *ret) {
        struct bw_policy_params p = {0};
        uint64_t period = baseline->period_usec ? baseline->period_usec : BW_DEFAULT_PERIOD_USEC;

        p.mode = bw_unit_mode(config, cfg);
        p.baseline = *baseline;
        if (cfg->cpu_quota_max > 0)
                p.quota_max_usec = bw_quantize_quota(bw_percent_to_quota(cfg->cpu_quota_max, period));
        else if (baseline->quota_usec != BW_QUOTA_MAX)
                p.quota_max_usec = BW_QUOTA_MAX_DEFAULT_FACTOR * baseline->quota_usec;
        else
                p.quota_max_usec = BW_QUOTA_MAX;
        if (baseline->quota_usec != BW_QUOTA_MAX && p.quota_max_usec < baseline->quota_usec)
                p.quota_max_usec = baseline->quota_usec;
        /* On the law's 1 ms grid, like the resting burst below. */
        if (cfg->has_cpu_burst_max)
                p.burst_max_usec = cfg->cpu_burst_max_usec / BW_QUOTA_GRID_USEC * BW_QUOTA_GRID_USEC;
        p.credit_max_usec = cfg->credit_max_usec;
        p.target_throttle = cfg->target_throttle;
        p.target_pressure = cfg->target_pressure;
        p.target_wait_p99_usec = cfg->target_wait_p99_usec;
        p.hold_off_usec = config->global.pressure_window_usec;
        p.interval_usec = bw_unit_interval_usec(config, cfg);
        p.active_interval_usec = bw_unit_active_interval_usec(config, cfg);
        p.ncpus = ncpus;
        /* The burst file is the authority (the kernel check may not have
         * run, e.g. on a fixture tree); CPUBurstMax=0: not ours to move. */
        p.kernel_has_burst = burst_supported && baseline->has_burst &&
                             !(cfg->has_cpu_burst_max && cfg->cpu_burst_max_usec == 0);

        /* The resting burst. The law sees it as the baseline burst (decay
         * and shedding stop there); the true baseline is what stop and pause
         * restore. A lower CPUQuota= from systemd, which the kernel then
         * refuses, is followed through the daemon's sdintent.c. */
        if (p.kernel_has_burst && (p.mode == BW_MODE_BURST || p.mode == BW_MODE_ELASTIC) &&
            baseline->quota_usec != BW_QUOTA_MAX) {
                uint64_t floor = cfg->has_cpu_burst_max ? cfg->cpu_burst_max_usec : baseline->quota_usec;

                floor = u64_min(floor / BW_QUOTA_GRID_USEC * BW_QUOTA_GRID_USEC, baseline->quota_usec);
                p.baseline.burst_usec = u64_max(p.baseline.burst_usec, floor);
        }
        *ret = p;
}

bool bw_baseline_may_rest(const struct bw_policy_params *p, bool paused, const struct bw_bandwidth *cur) {
        return !paused && (p->mode == BW_MODE_ELASTIC || p->mode == BW_MODE_BURST) &&
               p->baseline.quota_usec != BW_QUOTA_MAX && cur->quota_usec != BW_QUOTA_MAX;
}

bool bw_baseline_rest_plan(const struct bw_policy_params *p, uint64_t credit_usec, bool has_usage, bool paused,
                           const struct bw_bandwidth *cur, uint64_t ancestor_quota_usec,
                           struct bw_bandwidth *ret_target) {
        struct bw_bandwidth t;

        if (!bw_baseline_may_rest(p, paused, cur))
                return false;
        if (bw_policy_rest_target(p, credit_usec, has_usage, cur, &t) < 0)
                return false;
        if (ancestor_quota_usec != BW_QUOTA_MAX && t.quota_usec > ancestor_quota_usec) {
                t.quota_usec = u64_max(ancestor_quota_usec, p->baseline.quota_usec);
                if (t.has_burst && t.burst_usec > t.quota_usec)
                        t.burst_usec = t.quota_usec;
        }
        if (bw_bandwidth_identical(&t, cur))
                return false;
        *ret_target = t;
        return true;
}

void bw_baseline_intent_target(const struct bw_bandwidth *cur, const struct bw_bandwidth *baseline,
                               uint64_t quota_usec, uint64_t period_usec, struct bw_bandwidth *ret) {
        struct bw_bandwidth t = *cur;

        t.quota_usec = quota_usec;
        t.period_usec = period_usec;
        if (quota_usec == BW_QUOTA_MAX)
                t.burst_usec = 0;
        else if (t.burst_usec > quota_usec)
                t.burst_usec = quota_usec;
        if (baseline->burst_usec < t.burst_usec)
                t.burst_usec = baseline->burst_usec;
        *ret = t;
}
