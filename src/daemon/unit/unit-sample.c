/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's samples, full and light, the law's input made from one and the
 * caps others put on its headroom (declared in unit-sample.h, with the
 * samples essay); what comes after the decision is unit-tick.c's. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bwgov/util/util.h"
#include "clock.h"
#include "log.h"
#include "source/psi-trigger.h"
#include "source/rqstat-bpf.h"
#include "unit.h"
#include "unit-sample.h"
#include "unit-scope.h"

/* ---- samples ---------------------------------------------------------------- */

void unit_set_headroom_cap(Unit *u, enum unit_cap cap, unsigned permille, uint64_t now) {
        switch (cap) {
        case UNIT_CAP_HOST_SHED:
                u->caps.shed_permille = permille;
                if (permille == 0)
                        return;
                /* Within this short tick, not at the unit's next one. */
                u->caps.shed_pending = permille;
                break;
        case UNIT_CAP_LATENCY_HOLD:
        default:
                if (permille == 0 || u->caps.latency_hold) {
                        u->caps.latency_hold = permille > 0;
                        return;
                }
                u->caps.latency_hold = true;
                /* Withdraw now, not at the unit's next sample. */
                u->caps.shed_pending = 1000;
                break;
        }
        (void) unit_schedule(u, now, 0);
}

/* What full and light samples share. */
static void unit_sample_common(Unit *u, struct bw_policy_input *in) {
        /* A shedding plan applies once: the law keeps the cap it leaves. */
        in->shed_permille = u->caps.shed_pending;
        u->caps.shed_pending = 0;
        /* Latency protection holds the headroom like host pressure does. */
        in->host_over_limit = *u->ctx->host_over_limit || u->caps.latency_hold;
}

bool unit_activity_gated(const Unit *u) {
        return u->rq.act_watched && *u->ctx->rqstat && !u->place.has_governed_descendants;
}

/* Before the unit's own usage is read at NOW: its activity flag armed
 * (rqstat-bpf.h), or else its parent's usage then (usagegate.h), for the next
 * light sample to compare with. A unit with governed descendants is not
 * gated by its flag: their tasks flag theirs. */
static void unit_gate_note(Unit *u, uint64_t now) {
        uint64_t t;

        u->sampler.gate_after_usec = now;
        if (unit_activity_gated(u)) {
                if (u->sampler.at_baseline)
                        rqstat_arm_wake(*u->ctx->rqstat, u->rq.act_slot);
                else
                        rqstat_arm(*u->ctx->rqstat, u->rq.act_slot);
                u->sampler.gate_valid = true;
                return;
        }
        u->sampler.gate_valid = usage_gate_read(u->sampler.gate, now, 0, &u->sampler.gate_usage_usec, &t) >= 0;
}

bool unit_gate_unmoved(Unit *u, uint64_t now, uint64_t *ret_usec) {
        uint64_t usage;

        if (!u->sampler.gate_valid)
                return false;
        if (unit_activity_gated(u)) {
                if (rqstat_ran(*u->ctx->rqstat, u->rq.act_slot))
                        return false;
                *ret_usec = now;
                return true;
        }
        return usage_gate_read(u->sampler.gate, now, u->sampler.gate_after_usec, &usage, ret_usec) >= 0 &&
                usage == u->sampler.gate_usage_usec;
}

static int unit_usage_read(Unit *u, uint64_t *ret_usec) {
        struct bw_cpu_stat st = { 0 };
        int r;

        if (!u->sampler.has_last_stat || !(u->sampler.last_stat.seen & BW_CPUSTAT_USAGE))
                return -ENODATA;
        if (unit_activity_gated(u) && u->sampler.gate_valid && !rqstat_ran(*u->ctx->rqstat, u->rq.act_slot)) {
                *ret_usec = u->sampler.last_stat.usage_usec;
                return 0;
        }
        r = bw_cg_read_usage_any(u->cg, &st);
        if (r < 0)
                return r;
        if (!(st.seen & BW_CPUSTAT_USAGE))
                return -ENODATA;
        *ret_usec = st.usage_usec;
        return 0;
}

int unit_usage_now(Unit *u, uint64_t now, uint64_t host_last_usec, uint64_t *ret_usec, uint64_t *ret_rate) {
        uint64_t f, ref, ref_t;
        int r;

        r = unit_usage_read(u, &f);
        if (r < 0)
                return r;
        if (f < u->sampler.last_stat.usage_usec)
                return -ERANGE;
        if (host_last_usec > 0 && u->sampler.host_read_usec == host_last_usec && f >= u->sampler.host_usage_usec) {
                ref = u->sampler.host_usage_usec;
                ref_t = u->sampler.host_read_usec;
        } else if (u->pstate.primed && f >= u->pstate.prev_stat.usage_usec) {
                ref = u->pstate.prev_stat.usage_usec;
                ref_t = u->pstate.prev_now_usec;
        } else {
                ref = f;
                ref_t = now;
        }
        *ret_rate = now > ref_t ? u64_muldiv(f - ref, USEC_PER_SEC, now - ref_t) : 0;
        u->sampler.host_usage_usec = f;
        u->sampler.host_read_usec = now;
        *ret_usec = f;
        return 0;
}

/* Whether no task of the unit (by its activity flag), or else none below
 * its parent, ran since the unit's own usage was last read (then nothing
 * of its own needs reading). When it cannot be told, or something ran, the
 * gate is noted again for the unit's read that follows. */
static bool unit_gate_still(Unit *u, uint64_t now) {
        uint64_t usage, t;

        /* Unwatched, a removed cgroup would go unseen until a full sample:
         * the reads of its own tell it (a watched one sets its flag). */
        if (u->quota_watch.wd < 0)
                return false;
        if (unit_activity_gated(u)) {
                if (unit_gate_unmoved(u, now, &t)) {
                        unit_count(u, &(struct unit_counters) { .activity_gated = 1 });
                        u->sampler.gated = true;
                        return true;
                }
                unit_gate_note(u, now);
                return false;
        }
        if (!u->sampler.gate_valid ||
            usage_gate_read(u->sampler.gate, now, u->sampler.gate_after_usec, &usage, &t) < 0) {
                unit_gate_note(u, now);
                return false;
        }
        if (usage == u->sampler.gate_usage_usec) {
                usage_gate_skipped(u->sampler.gate);
                u->sampler.gated = true;
                return true;
        }
        u->sampler.gate_usage_usec = usage;     /* read before the unit's own read that follows */
        u->sampler.gate_after_usec = now;
        return false;
}

int unit_sample(Unit *u, struct bw_policy_input *in) {
        int r;

        *in = (struct bw_policy_input) { .now_usec = clock_now_usec(CLOCK_MONOTONIC) };
        unit_gate_note(u, in->now_usec);
        u->sampler.full_due = false;
        u->sampler.last_full_usec = in->now_usec;
        r = bw_cg_read_stat(u->cg, &in->stat);
        if (bw_cg_error_is_vanished(r)) {
                unit_vanished(u);
                return -ENODEV;
        }
        if (r < 0)
                return unit_fd_error(u, r, "cpu.stat");
        u->sampler.last_stat = in->stat;
        u->sampler.has_last_stat = true;

        if (bw_cg_has(u->cg, BW_CG_FILE_PRESSURE) && bw_cg_read_pressure(u->cg, &in->psi) >= 0)
                in->has_psi = true;
        /* What the law reads of it (bw_policy_decide()): its full line's
         * total, for the light samples to come. */
        u->sampler.has_last_psi = in->has_psi;
        u->sampler.last_psi_has_full = in->has_psi && in->psi.has_full;
        u->sampler.last_psi_full_usec = in->psi.full.total_usec;
        return 1;
}

void unit_sample_input(Unit *u, const struct bw_bandwidth *cur, bool full, struct bw_policy_input *in) {
        int r;

        in->current = *cur;
        in->ancestor_quota_usec = full ? unit_ancestor_quota(u, in->now_usec) : u->ancestor.quota_usec;
        unit_sample_common(u, in);
        if (!full)
                return;
        r = unit_rqstat_sample(&u->rq, *u->ctx->rqstat, in->now_usec, in);
        if (r < 0)
                log_debug_errno(r, "%s: cannot read the run-queue telemetry: %s", u->name, STRERROR(r));
}

/* The kernel hands out runtime to each CPU in slices of 5 ms
 * (sched_cfs_bandwidth_slice_us). */
#define RUNTIME_SLICE_USEC (5 * USEC_PER_MSEC)

/* Throttling and usage for a light sample. Where the usage is a file of
 * its own (a hybrid or v1 host), the throttling file is skipped when the
 * usage since the last sample could not have run a period dry: not even
 * all of it within one period, with every CPU's slice handed out on top
 * (an idle group, the common case, reads one file instead of two). */
static int unit_read_light(Unit *u, uint64_t now, struct bw_cpu_stat *ret) {
        uint64_t quota = u->prev.current.quota_usec;
        struct bw_cpu_stat st;
        int r;

        if (unit_gate_still(u, now)) {
                *ret = u->sampler.last_stat;
                ret->seen &= ~BW_CPUSTAT_LOCAL_THROTTLED;
                return 0;
        }
        r = bw_cg_read_usage(u->cg, &st);
        if (r == -EOPNOTSUPP)
                return bw_cg_read_stat_light(u->cg, ret);
        if (r < 0)
                return r;
        if (!(st.seen & BW_CPUSTAT_USAGE) || st.usage_usec < u->sampler.last_stat.usage_usec ||
            (quota != BW_QUOTA_MAX &&
             st.usage_usec - u->sampler.last_stat.usage_usec + (uint64_t) u->ctx->ncpus * RUNTIME_SLICE_USEC >= quota))
                return bw_cg_read_stat_light(u->cg, ret);
        *ret = u->sampler.last_stat;
        ret->seen &= ~BW_CPUSTAT_LOCAL_THROTTLED;
        ret->usage_usec = st.usage_usec;
        return 0;
}

int unit_sample_light(Unit *u, struct bw_bandwidth *cur, struct bw_policy_input *in) {
        struct bw_cpu_stat st;
        uint64_t quota, period;
        int r;

        /* Without a known ancestor quota (a governed ancestor's changed),
         * the full sample reads it. */
        if (!u->sampler.quiet || u->sampler.quiet_samples % UNIT_QUIET_FULL_EVERY == 0 || u->sampler.full_due ||
            !u->sampler.has_last_stat ||
            !u->prev.has || u->caps.shed_pending > 0 || unit_mode(u) != u->params_mode || !u->ancestor.has)
                return 0;
        *in = (struct bw_policy_input) { .now_usec = clock_now_usec(CLOCK_MONOTONIC) };
        r = unit_read_light(u, in->now_usec, &st);
        if (bw_cg_error_is_vanished(r)) {
                unit_vanished(u);
                return -ENODEV;
        }
        /* Throttled since: the full sample reads cpu.stat.local and PSI. */
        if (r < 0 || st.seen != (u->sampler.last_stat.seen & ~BW_CPUSTAT_LOCAL_THROTTLED) ||
            st.nr_throttled != u->sampler.last_stat.nr_throttled ||
            st.throttled_usec != u->sampler.last_stat.throttled_usec)
                return 0;
        /* Someone wrote cpu.max: a full sample re-bases. Watched, the file
         * is read only after a write (ours too) was seen; unwatched and
         * short of file descriptors, it is not held: the full samples see it. */
        *cur = u->prev.current;
        if (u->quota_watch.wd >= 0 ? u->quota_watch.written : bw_cg_holds(u->cg, BW_CG_FILE_QUOTA)) {
                u->quota_watch.written = false;
                /* A file of its own opened: the tick counts it (gated says
                 * none was; at ten thousand cgroups, 1 770 units held such
                 * files uncounted, until accept() found no descriptor). */
                u->sampler.gated = false;
                if (bw_cg_read_quota(u->cg, &quota, &period) < 0 || quota != cur->quota_usec ||
                    (period != 0 && period != cur->period_usec))
                        return 0;
        }
        st.seen |= u->sampler.last_stat.seen & BW_CPUSTAT_LOCAL_THROTTLED;
        st.local_throttled_usec = u->sampler.last_stat.local_throttled_usec;
        in->stat = st;
        u->sampler.last_stat = st;
        in->psi = (struct bw_psi) {
                .full.total_usec = u->sampler.last_psi_full_usec,
                .has_full = u->sampler.last_psi_has_full,
        };
        in->has_psi = u->sampler.has_last_psi;
        u->stats.light_samples++;
        return 1;
}

