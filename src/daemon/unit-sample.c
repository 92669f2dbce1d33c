/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's samples, full and light, the law's input made from one, the caps
 * others put on its headroom, and its PSI trigger (declared in unit.h, its
 * samples section). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bwgov/util.h"
#include "clock.h"
#include "log.h"
#include "psi-trigger.h"
#include "unit.h"

/* PSI triggers can fire in bursts; the law needs one sample per event, not
 * dozens: a second tick closer than this to the last one is not run. */
#define TRIGGER_MIN_SPACING_USEC (100 * USEC_PER_MSEC)

/* An ancestor's quota is read again this often (unit_ancestor_quota()). */
#define ANCESTOR_REFRESH_USEC (10 * USEC_PER_SEC)

/* ---- the PSI trigger ------------------------------------------------------ */

static int on_trigger(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Unit *u = userdata;
        uint64_t now;

        if (revents & (EPOLLERR | EPOLLHUP)) {
                /* POLLERR on a PSI trigger: the cgroup is gone. */
                unit_vanished(u);
                return 0;
        }

        (void) sd_event_now(u->ctx->event, CLOCK_MONOTONIC, &now);
        if (now - u->sampler.last_tick_usec < TRIGGER_MIN_SPACING_USEC)
                return 0;
        log_debug("%s: pressure trigger fired", u->name);
        quotawatch_drain(u->ctx->quotawatch);
        (void) unit_tick(u, now);
        return 0;
}

/* A PSI trigger (psi-trigger.h) wakes the unit when it is throttled. */
static void unit_trigger_open(Unit *u) {
        int dfd, fd, r;

        if (!u->cg || !u->cg->has_v2 || u->trigger.fd >= 0 || u->trigger.refused)
                return;
        dfd = bw_cg_dir(u->cg, BW_CG_TREE_V2);
        if (dfd < 0)
                return;         /* gone, or out of descriptors: the next sample says */
        fd = psi_trigger_open(dfd, u->name, u->cfg.target_pressure,
                              u->ctx->config->global.pressure_window_usec, u->ctx->can_trigger_any_window);
        /* Not cgroup2 (a fixture), or a kernel that refuses the trigger:
         * not asked again on every sample while the cgroup is open; out of
         * file descriptors: tried again. */
        if (fd < 0 && fd != -EMFILE && fd != -ENFILE)
                u->trigger.refused = true;
        if (fd < 0)
                return;
        r = sd_event_add_io(u->ctx->event, &u->trigger.source, fd, EPOLLPRI, on_trigger, u);
        if (r < 0) {
                close(fd);
                log_warning_errno(r, "%s: cannot watch PSI trigger: %s", u->name, STRERROR(r));
                return;
        }
        u->trigger.fd = fd;
}

void unit_trigger_close(Unit *u) {
        u->trigger.source = sd_event_source_disable_unref(u->trigger.source);
        if (u->trigger.fd >= 0)
                close(u->trigger.fd);   /* waits for an RCU grace period */
        u->trigger.fd = -1;
}

/* ---- samples ---------------------------------------------------------------- */

/* The nearest limited ancestor's quota in this unit's period, or
 * BW_QUOTA_MAX: the headroom never goes above it. Walking up is a few
 * open/read/close per ancestor, more than the whole sample costs: it is
 * read again every ANCESTOR_REFRESH_USEC, and at once for a new cgroup;
 * siblings share one walk through their parent's gate (usagegate.h). */
uint64_t unit_ancestor_quota(Unit *u, uint64_t now) {
        _cleanup_free_ char *path = NULL;
        const char *shared = NULL;
        uint64_t q, t;
        int r;

        /* A scope tied to the unit is no limit: the one above it is. */
        if (unit_scope_tied(u))
                return unit_scope_ancestor_quota(u, now);
        if (u->ancestor.has && now - u->ancestor.read_usec < ANCESTOR_REFRESH_USEC)
                return u->ancestor.quota_usec;
        if (usage_gate_ancestor_get(u->sampler.gate, u->params.baseline.period_usec, now, ANCESTOR_REFRESH_USEC, &q,
                                    &shared, &t)) {
                if (shared && (!u->ancestor.has || u->ancestor.quota_usec != q))
                        log_info("%s: nearest limited ancestor %s allows %" PRIu64 "us per %" PRIu64 "us period: "
                                 "the headroom stays under it", u->name, shared, q,
                                 u->params.baseline.period_usec);
                u->ancestor.has = true;
                u->ancestor.quota_usec = q;
                u->ancestor.read_usec = t;
                return q;
        }
        r = bw_cg_read_ancestor_quota(u->ctx->root, u->cg, u->params.baseline.period_usec, &q, &path);
        if (r < 0) {
                log_debug_errno(r, "%s: cannot read the ancestors' quotas: %s", u->name, STRERROR(r));
                return u->ancestor.has ? u->ancestor.quota_usec : BW_QUOTA_MAX;
        }
        if (r > 0 && (!u->ancestor.has || u->ancestor.quota_usec != q))
                log_info("%s: nearest limited ancestor %s allows %" PRIu64 "us per %" PRIu64 "us period: "
                         "the headroom stays under it", u->name, path, q, u->params.baseline.period_usec);
        u->ancestor.has = true;
        u->ancestor.quota_usec = r > 0 ? q : BW_QUOTA_MAX;
        u->ancestor.read_usec = now;
        usage_gate_ancestor_put(u->sampler.gate, u->params.baseline.period_usec, now, u->ancestor.quota_usec,
                                r > 0 ? path : NULL);
        return u->ancestor.quota_usec;
}

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

/* Before the unit's own usage is read at NOW: its parent's usage then
 * (usagegate.h), for the next light sample to compare with. */
static void unit_gate_note(Unit *u, uint64_t now) {
        uint64_t t;

        u->sampler.gate_valid = usage_gate_read(u->sampler.gate, now, 0, &u->sampler.gate_usage_usec, &t) >= 0;
        u->sampler.gate_after_usec = now;
}

/* Whether no task below the unit's parent ran since the unit's own usage
 * was last read (then nothing of its own needs reading). When it cannot be
 * told, or something ran, the parent's reading taken now is noted for the
 * unit's read that follows. */
static bool unit_gate_still(Unit *u, uint64_t now) {
        uint64_t usage, t;

        /* Unwatched, a removed cgroup would go unseen until a full sample:
         * the reads of its own tell it (a watched one sets its flag). */
        if (u->quota_watch.wd < 0)
                return false;
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
        u->sampler.last_psi = in->psi;
        u->sampler.has_last_psi = in->has_psi;
        return 1;
}

void unit_sample_input(Unit *u, const struct bw_bandwidth *cur, bool full, struct bw_policy_input *in) {
        int r;

        in->current = *cur;
        in->ancestor_quota_usec = full ? unit_ancestor_quota(u, in->now_usec) : u->ancestor.quota_usec;
        unit_sample_common(u, in);
        if (!full)
                return;
        r = unit_telemetry_sample(&u->rq, *u->ctx->telemetry, in->now_usec, in);
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
        ret->user_usec = st.user_usec;
        ret->system_usec = st.system_usec;
        return 0;
}

int unit_sample_light(Unit *u, struct bw_bandwidth *cur, struct bw_policy_input *in) {
        struct bw_cpu_stat st;
        uint64_t quota, period;
        int r;

        /* Without a known ancestor quota (a governed ancestor's changed),
         * the full sample reads it. */
        if (!u->sampler.quiet || u->sampler.quiet_samples % UNIT_QUIET_FULL_EVERY == 0 || !u->sampler.has_last_stat ||
            !u->prev.has || u->caps.shed_pending > 0 || unit_mode(u) != u->params.mode || !u->ancestor.has)
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
                if (bw_cg_read_quota(u->cg, &quota, &period) < 0 || quota != cur->quota_usec ||
                    (period != 0 && period != cur->period_usec))
                        return 0;
        }
        st.seen |= u->sampler.last_stat.seen & BW_CPUSTAT_LOCAL_THROTTLED;
        st.local_throttled_usec = u->sampler.last_stat.local_throttled_usec;
        in->stat = st;
        u->sampler.last_stat = st;
        in->psi = u->sampler.last_psi;
        in->has_psi = u->sampler.has_last_psi;
        u->stats.light_samples++;
        return 1;
}

/* ---- after the decision ------------------------------------------------------ */

static bool unit_quiet(Unit *u, const struct bw_decision *d) {
        return u->adopted && u->cg && !d->change && !d->active && d->spend_rate == 0 && d->throttle_rate == 0 &&
                d->rule != BW_RULE_TOO_SOON && bw_unit_class(&u->cfg) != BW_CLASS_LATENCY && !u->caps.latency_hold &&
                !unit_levers_any(u) && u->caps.shed_pending == 0;
}

/* Near its quota: spending, throttled, or using half its baseline. */
static bool unit_near(const Unit *u, const struct bw_decision *d) {
        const struct bw_bandwidth *b = &u->params.baseline;

        return d->active || d->spend_rate > 0 || d->throttle_rate > 0 ||
                (b->quota_usec != BW_QUOTA_MAX && b->period_usec > 0 &&
                 d->usage_rate * 2 >= u64_muldiv(b->quota_usec, USEC_PER_SEC, b->period_usec));
}

void unit_sample_after(Unit *u, const struct bw_policy_input *in, const struct bw_decision *d) {
        if (d->rule == BW_RULE_TOO_SOON || !u->cg)
                return;
        if (unit_quiet(u, d)) {
                u->sampler.quiet = true;
                u->sampler.quiet_samples++;
        } else {
                u->sampler.quiet = false;
                u->sampler.quiet_samples = 0;
        }
        if (unit_near(u, d)) {
                u->trigger.near_usec = in->now_usec;
                unit_trigger_open(u);
        } else if (u->trigger.fd >= 0 && in->now_usec - u->trigger.near_usec >= UNIT_TRIGGER_LINGER_USEC &&
                   *u->ctx->trigger_closes_left > 0) {
                unit_count(u, &(struct unit_counters) { .trigger_closes = 1 });
                log_debug("%s: far from its quota for %" PRIu64 "s, closing its PSI trigger", u->name,
                          UNIT_TRIGGER_LINGER_USEC / USEC_PER_SEC);
                unit_trigger_close(u);
        }
}
