/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "bwgov/discover.h"
#include "bwgov/host.h"
#include "bwgov/util.h"
#include "log.h"
#include "manager.h"
#include "kcheck.h"
#include "metrics.h"
#include "sdintent.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Where we look for service and scope units below the root: systemd nests
 * them at most a few slices deep (user.slice/user-1000.slice/session-1.scope). */
#define DISCOVER_MAX_DEPTH 6

/* A unit missing from the tree is looked for again this often; cheap (a
 * few openat()s), and bounded by the number of absent units. */
#define RESCAN_INTERVAL_USEC (5 * USEC_PER_SEC)

/* The CPU used outside the governed groups is averaged over about this
 * long: the governed groups' samples and the host's come at different
 * times, so one difference of the two is noisy. */
#define HOST_OTHER_TAU_USEC (1 * USEC_PER_SEC)

/* A sample closer than the law's 50 ms to the previous one decides nothing:
 * a shedding plan that met one is tried again this much later. */
#define TOO_SOON_RETRY_USEC (60 * USEC_PER_MSEC)

/* An ancestor's quota is read again this often (unit_ancestor_quota()). */
#define ANCESTOR_REFRESH_USEC (10 * USEC_PER_SEC)

/* PSI triggers can fire in bursts; the law needs one sample per event, not
 * dozens: a second tick closer than this to the last one is not run. */
#define TRIGGER_MIN_SPACING_USEC (100 * USEC_PER_MSEC)

/* The state file also carries the credit bucket; saving it on every tick
 * would fsync once a second per host for little gain. Writes save at once. */
#define STATE_SAVE_INTERVAL_USEC (10 * USEC_PER_SEC)
/* How long changes that need no write-ahead wait to be saved together. */
#define STATE_SAVE_DELAY_USEC (1 * USEC_PER_SEC)

#define STATE_FILE "state.json"

static void unit_restore_baseline(Unit *u, const char *why);
static int unit_apply(Unit *u, const struct bw_bandwidth *seen, const struct bw_bandwidth *target, const char *reason);
static int unit_tick(Unit *u, uint64_t now);
static int manager_save_state(Manager *m);
static void manager_mark_state(Manager *m);
static void manager_adopt_all(Manager *m);
static void manager_update_outermost(Manager *m);
static void unit_ancestor_changed(Unit *u);
static uint64_t unit_ancestor_quota(Unit *u, uint64_t now);

/* The time a counter was read. Rates are counter deltas over the time
 * between two reads; the timer's scheduled time would inflate them whenever
 * the loop runs late (a busy host is exactly when it does). */
static uint64_t now_monotonic_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* ---- unit configuration copies ---------------------------------------- */

static void unit_config_done(struct bw_unit_config *c) {
        free(c->name);
        free(c->cgroup);
        free(c->cpu_quota_source);
        *c = (struct bw_unit_config) {0};
}

static int unit_config_copy(const struct bw_unit_config *src, struct bw_unit_config *ret) {
        struct bw_unit_config c = *src;

        c.name = strdup(src->name);
        c.cgroup = src->cgroup ? strdup(src->cgroup) : NULL;
        c.cpu_quota_source = src->cpu_quota_source ? strdup(src->cpu_quota_source) : NULL;
        if (!c.name || (src->cgroup && !c.cgroup) || (src->cpu_quota_source && !c.cpu_quota_source)) {
                unit_config_done(&c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

/* ---- units ------------------------------------------------------------- */

static void unit_close_cgroup(Unit *u) {
        u->trigger_source = sd_event_source_disable_unref(u->trigger_source);
        if (u->trigger_fd >= 0) {
                close(u->trigger_fd);
                u->trigger_fd = -1;
        }
        if (u->cg)
                u->manager->units_generation++;
        bw_cg_free(u->cg);
        u->cg = NULL;
        u->has_last_stat = false;
        u->has_ancestor = false;
}

static Unit *unit_free(Unit *u) {
        if (!u)
                return NULL;
        unit_close_cgroup(u);
        u->timer = sd_event_source_disable_unref(u->timer);
        bw_history_free(u->history);
        unit_config_done(&u->cfg);
        free(u->cgroup_path);
        free(u->name);
        free(u);
        return NULL;
}

static enum bw_mode unit_mode(Unit *u) {
        return bw_unit_mode(&u->manager->config, &u->cfg);
}

static uint64_t unit_interval(Unit *u) {
        return bw_unit_interval_usec(&u->manager->config, &u->cfg);
}

static uint64_t unit_active_interval(Unit *u) {
        return bw_unit_active_interval_usec(&u->manager->config, &u->cfg);
}

/* The next sample `delay` after `from`. The law sized the headroom for
 * that horizon, so the timer may be late by 1/16 of it at most (sd-event's
 * default accuracy would be 250 ms). */
static int unit_schedule(Unit *u, uint64_t from, uint64_t delay) {
        int r;

        r = sd_event_source_set_time_accuracy(u->timer, delay / 16 > 0 ? delay / 16 : 1);
        if (r >= 0)
                r = sd_event_source_set_time(u->timer, from + delay);
        if (r >= 0)
                r = sd_event_source_set_enabled(u->timer, SD_EVENT_ON);
        if (r < 0)
                return log_error_errno(r, "%s: failed to arm timer: %s", u->name, STRERROR(r));
        return 0;
}

static int on_unit_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Unit *u = userdata;
        int r;

        /* Re-arm first, so a pass that fails early never stops the
         * schedule; the decision then sets its own horizon. */
        r = unit_schedule(u, usec, unit_interval(u));
        if (r < 0)
                return r;
        (void) unit_tick(u, usec);
        return 0;
}

static int on_trigger(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Unit *u = userdata;
        uint64_t now;

        if (revents & (EPOLLERR | EPOLLHUP)) {
                /* POLLERR on a PSI trigger: the cgroup is gone. */
                log_info("%s: cgroup %s went away", u->name, u->cgroup_path ? u->cgroup_path : "?");
                unit_close_cgroup(u);
                return 0;
        }

        (void) sd_event_now(u->manager->event, CLOCK_MONOTONIC, &now);
        if (now - u->last_tick_usec < TRIGGER_MIN_SPACING_USEC)
                return 0;
        log_debug("%s: pressure trigger fired", u->name);
        (void) unit_tick(u, now);
        return 0;
}

static bool have_cap_sys_resource(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        unsigned long long caps;

        if (!f)
                return false;
        while (fgets(line, sizeof line, f))
                if (sscanf(line, "CapEff: %llx", &caps) == 1)
                        return caps & (1ULL << 24);
        return false;
}

/* A PSI trigger on the unit's cpu.pressure "full" line, which grows by the
 * wall time the group is throttled (DESIGN §2). Only on a real cgroup2
 * file: writing a trigger into a fixture's regular file would corrupt it. */
static void unit_setup_trigger(Unit *u) {
        Manager *m = u->manager;
        _cleanup_close_ int fd = -1;
        uint64_t window, threshold;
        struct statfs sfs;
        char buf[64];
        int r, n;

        if (!u->cg || u->cg->v2_dirfd < 0 || u->trigger_fd >= 0)
                return;

        fd = openat(u->cg->v2_dirfd, "cpu.pressure", O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
                log_debug_errno(errno, "%s: no cpu.pressure for a trigger: %s", u->name, STRERROR(errno));
                return;
        }
        if (fstatfs(fd, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
                log_debug("%s: cpu.pressure is not on cgroup2, no trigger", u->name);
                return;
        }

        window = m->config.global.pressure_window_usec;
        if (!m->can_trigger_any_window) {
                /* Unprivileged triggers need a multiple of 2 s. */
                window = (window + 2 * USEC_PER_SEC - 1) / (2 * USEC_PER_SEC) * (2 * USEC_PER_SEC);
        }
        threshold = u->cfg.target_pressure * window / USEC_PER_SEC;
        if (threshold < USEC_PER_MSEC)
                threshold = USEC_PER_MSEC;
        if (threshold > window)
                threshold = window;

        n = snprintf(buf, sizeof buf, "full %" PRIu64 " %" PRIu64, threshold, window);
        if (write(fd, buf, (size_t) n + 1) < 0) {
                log_debug_errno(errno, "%s: PSI trigger \"%s\" refused: %s", u->name, buf, STRERROR(errno));
                return;
        }

        r = sd_event_add_io(m->event, &u->trigger_source, fd, EPOLLPRI, on_trigger, u);
        if (r < 0) {
                log_warning_errno(r, "%s: cannot watch PSI trigger: %s", u->name, STRERROR(r));
                return;
        }
        u->trigger_fd = TAKE_FD(fd);
        log_debug("%s: PSI trigger full %" PRIu64 "us per %" PRIu64 "us", u->name, threshold, window);
}

/* Find the unit's cgroup and open it. Returns 1 when open, 0 when absent. */
static int unit_resolve(Unit *u) {
        Manager *m = u->manager;
        _cleanup_free_ char *path = NULL;
        int r;

        if (u->cg)
                return 1;

        if (u->cfg.cgroup)
                path = strdup(u->cfg.cgroup);
        else {
                r = bw_unit_cgroup_path(u->name, &path);
                if (r == -EAGAIN)
                        r = bw_discover_find(m->root->bw_fd, u->name, DISCOVER_MAX_DEPTH, &path);
                if (r == -ENOENT)
                        return 0;
                if (r < 0)
                        return log_warning_errno(r, "%s: cannot map unit to a cgroup: %s", u->name, STRERROR(r));
        }
        if (!path)
                return log_oom();

        r = bw_cg_open(m->root, path, &u->cg);
        if (bw_cg_error_is_vanished(r))
                return 0;
        if (r < 0)
                return log_warning_errno(r, "%s: cannot open cgroup %s: %s", u->name, path, STRERROR(r));

        free(u->cgroup_path);
        u->cgroup_path = TAKE_PTR(path);
        log_info("%s: governing cgroup %s (%s)", u->name, u->cgroup_path[0] ? u->cgroup_path : "/",
                 bw_cg_layout_to_string(u->cg->layout));
        unit_setup_trigger(u);
        m->units_generation++;
        if (u->adopted)
                manager_update_outermost(m);
        return 1;
}

static uint64_t percent_to_quota(uint64_t usec_per_sec, uint64_t period_usec) {
        return usec_per_sec * period_usec / USEC_PER_SEC;
}

static uint64_t quantize_quota(uint64_t q) {
        if (q == BW_QUOTA_MAX)
                return q;
        q = (q + 500) / 1000 * 1000;
        return q < BW_QUOTA_MIN_USEC ? BW_QUOTA_MIN_USEC : q;
}

/* Resolve configuration + the adopted baseline into the law's parameters. */
static void unit_update_params(Unit *u) {
        Manager *m = u->manager;
        struct bw_policy_params *p = &u->params;
        uint64_t period = u->baseline.period_usec ? u->baseline.period_usec : 100000;

        *p = (struct bw_policy_params) {0};
        p->mode = unit_mode(u);
        p->baseline = u->baseline;
        if (u->cfg.cpu_quota_max > 0)
                p->quota_max_usec = quantize_quota(percent_to_quota(u->cfg.cpu_quota_max, period));
        else if (u->baseline.quota_usec != BW_QUOTA_MAX)
                p->quota_max_usec = 2 * u->baseline.quota_usec;
        else
                p->quota_max_usec = BW_QUOTA_MAX;
        if (u->baseline.quota_usec != BW_QUOTA_MAX && p->quota_max_usec < u->baseline.quota_usec)
                p->quota_max_usec = u->baseline.quota_usec;
        /* On the law's 1 ms grid, like the resting burst below. */
        p->burst_max_usec = u->cfg.has_cpu_burst_max ? u->cfg.cpu_burst_max_usec / 1000 * 1000 : 0;
        p->credit_max_usec = u->cfg.credit_max_usec;
        p->target_throttle = u->cfg.target_throttle;
        p->target_pressure = u->cfg.target_pressure;
        p->hold_off_usec = m->config.global.pressure_window_usec;
        p->interval_usec = unit_interval(u);
        p->active_interval_usec = unit_active_interval(u);
        p->ncpus = m->ncpus;
        /* The burst file is the authority (the kernel check may not have run,
         * e.g. on a fixture tree). */
        p->kernel_has_burst = u->baseline.has_burst;
        /* CPUBurstMax=0: the burst is not ours to move. */
        if (u->cfg.has_cpu_burst_max && u->cfg.cpu_burst_max_usec == 0)
                p->kernel_has_burst = false;

        /* The resting burst. In burst and elastic modes the burst never rests
         * below what the kernel's own burst = quota gives (capped by
         * CPUBurstMax=): it absorbs most spikes shorter than one quota, costs
         * nothing against the contract (whose "+ burst" term counts it), and
         * so bwgov never does worse than a static limit with burst. The law
         * sees it as the baseline burst (decay and shedding stop there); the
         * true baseline is what stop and pause restore. A lower CPUQuota=
         * from systemd, which the kernel then refuses, is followed through
         * sdintent.c. */
        if (p->kernel_has_burst && (p->mode == BW_MODE_BURST || p->mode == BW_MODE_ELASTIC) &&
            u->baseline.quota_usec != BW_QUOTA_MAX) {
                uint64_t floor = u->cfg.has_cpu_burst_max ? u->cfg.cpu_burst_max_usec : u->baseline.quota_usec;

                floor = floor / 1000 * 1000;
                if (floor > u->baseline.quota_usec)
                        floor = u->baseline.quota_usec;
                if (floor > p->baseline.burst_usec)
                        p->baseline.burst_usec = floor;
        }
}

/* The baseline a unit starts from: the kernel's current value, unless
 * CPUQuota= names the contract, or the state file knows the current value
 * is one we wrote (then the stored baseline stands, even after a crash). */
static int unit_adopt(Unit *u, const struct bw_bandwidth *cur) {
        Manager *m = u->manager;
        struct bw_state_unit *su;
        uint64_t credit, debt = 0;

        su = bw_state_find(&m->state, u->name);
        if (su && strcmp(su->cgroup, u->cgroup_path) != 0) {
                log_info("%s: cgroup moved from %s to %s, forgetting old state", u->name, su->cgroup, u->cgroup_path);
                bw_state_remove(&m->state, u->name);
                su = NULL;
        }

        u->baseline = *cur;
        u->has_written = false;
        credit = u->cfg.credit_max_usec;        /* a token bucket starts full */

        if (su) {
                switch (bw_state_classify(su, cur)) {
                case BW_OWNERSHIP_OURS:
                        u->baseline = su->baseline;
                        u->baseline.has_burst = cur->has_burst;
                        u->has_written = true;
                        u->written = *cur;
                        log_info("%s: kernel holds the value we last wrote; keeping baseline quota %s%" PRIu64,
                                 u->name, su->baseline.quota_usec == BW_QUOTA_MAX ? "max/" : "",
                                 su->baseline.quota_usec == BW_QUOTA_MAX ? 0 : su->baseline.quota_usec);
                        credit = su->credit_usec;
                        debt = su->debt_usec;
                        break;
                case BW_OWNERSHIP_BASELINE:
                        credit = su->credit_usec;
                        debt = su->debt_usec;
                        break;
                case BW_OWNERSHIP_EXTERNAL:
                        u->external_changes++;
                        log_unit_change(LOG_NOTICE, u->name, &su->baseline, cur, "external-change",
                                        "%s: value changed while we were away, adopting it as the new baseline", u->name);
                        /* cpu.max was rewritten (systemd does on unit start and
                         * daemon-reload) but the burst is still the one we
                         * wrote: that part stays ours, its baseline is kept. */
                        if (su->has_written && cur->has_burst && cur->burst_usec == su->written.burst_usec &&
                            su->written.burst_usec != su->baseline.burst_usec && cur->quota_usec != BW_QUOTA_MAX) {
                                u->baseline.burst_usec = su->baseline.burst_usec <= cur->quota_usec ?
                                                         su->baseline.burst_usec : cur->quota_usec;
                                u->has_written = true;
                                u->written = *cur;
                        }
                        break;
                }
                u->paused = su->paused;
        }

        if (u->cfg.cpu_quota > 0) {
                u->baseline.quota_usec = quantize_quota(percent_to_quota(u->cfg.cpu_quota, u->baseline.period_usec));
                if (u->baseline.has_burst && u->baseline.burst_usec > u->baseline.quota_usec)
                        u->baseline.burst_usec = u->baseline.quota_usec;
        }
        if (credit > u->cfg.credit_max_usec)
                credit = u->cfg.credit_max_usec;

        su = bw_state_add(&m->state, u->name, u->cgroup_path);
        if (!su)
                return log_oom();
        su->baseline = u->baseline;
        su->has_written = u->has_written;
        su->written = u->written;
        su->has_pending = false;
        su->credit_usec = credit;
        su->debt_usec = debt;
        su->paused = u->paused;

        unit_update_params(u);
        bw_policy_state_init(&u->pstate, &u->params, credit, debt);
        u->adopted = true;
        /* Nothing written yet: a crash before the save re-adopts the same
         * kernel value. Saved together with the others, not once per unit. */
        manager_mark_state(m);

        /* CPUQuota= names the contract: put it in place unless the kernel
         * already holds it (or a boost of ours above it). */
        if (u->cfg.cpu_quota > 0 && !u->has_written && !bw_bandwidth_equal(cur, &u->baseline)) {
                log_info("%s: setting the configured baseline CPUQuota= (%s)", u->name,
                         u->cfg.cpu_quota_source ? u->cfg.cpu_quota_source : "configuration");
                (void) unit_apply(u, cur, &u->baseline, "configured-baseline");
        }
        return 0;
}

/* Someone else (systemd on daemon-reload or set-property, an operator)
 * wrote cpu.max: their value is the new contract. Never write back. */
static void unit_rebase(Unit *u, const struct bw_bandwidth *cur) {
        Manager *m = u->manager;
        struct bw_state_unit *su;
        struct bw_bandwidth expected = u->has_written ? u->written : u->baseline;

        u->external_changes++;
        log_unit_change(LOG_NOTICE, u->name, &expected, cur, "external-change",
                        "%s: cpu.max changed by someone else, adopting it as the new baseline", u->name);

        /* systemd and most operators rewrite cpu.max only: a burst that is
         * still the one we wrote stays ours, and the baseline keeps its own. */
        {
                uint64_t burst = u->baseline.burst_usec;
                bool ours = u->has_written && cur->has_burst && cur->burst_usec == u->written.burst_usec;

                u->baseline = *cur;
                if (ours)
                        u->baseline.burst_usec = burst <= cur->quota_usec ? burst : cur->quota_usec;
        }
        u->has_written = !bw_bandwidth_equal(cur, &u->baseline) || cur->burst_usec != u->baseline.burst_usec;
        u->written = *cur;
        unit_update_params(u);
        bw_policy_state_init(&u->pstate, &u->params, u->pstate.credit.credit_usec, u->pstate.credit.debt_usec);

        su = bw_state_find(&m->state, u->name);
        if (su) {
                su->baseline = u->baseline;
                su->has_written = u->has_written;
                su->written = u->written;
                su->has_pending = false;
        }
        /* A crash before the save sees the same external change again. */
        manager_mark_state(m);
}

/* cgroup v1 refuses a quota below a child's (tg_cfs_schedulable_down()):
 * before lowering u's quota to quota_usec, lower the governed cgroups below
 * it that hold more, deepest first (unit_apply() recurses). Their own law
 * then sees the lower ancestor at once. Lowering keeps every contract. v2
 * needs none of this: there a child's quota may exceed its parent's. */
static void unit_lower_descendants(Unit *u, uint64_t quota_usec, uint64_t period_usec) {
        Manager *m = u->manager;
        size_t len;

        if (!u->cg || u->cg->layout == BW_CG_LAYOUT_V2 || !u->cgroup_path)
                return;
        len = strlen(u->cgroup_path);
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *d = m->units[i];
                struct bw_bandwidth cur, t;
                uint64_t q;

                if (d == u || !d->cg || !d->adopted || !d->cgroup_path ||
                    (len > 0 && (strncmp(d->cgroup_path, u->cgroup_path, len) != 0 || d->cgroup_path[len] != '/')))
                        continue;
                if (bw_cg_read_bandwidth(d->cg, &cur) < 0 || cur.quota_usec == BW_QUOTA_MAX)
                        continue;
                /* In the child's own period. */
                q = u64_muldiv(quota_usec, cur.period_usec, period_usec);
                if (cur.quota_usec <= q)
                        continue;
                t = cur;
                t.quota_usec = q < BW_QUOTA_MIN_USEC ? BW_QUOTA_MIN_USEC : q;
                if (t.has_burst && t.burst_usec > t.quota_usec)
                        t.burst_usec = t.quota_usec;
                log_info("%s: its ancestor %s goes down to %" PRIu64 "us per %" PRIu64 "us: lowering it first",
                         d->name, u->name, quota_usec, period_usec);
                (void) unit_apply(d, &cur, &t, "ancestor-limit");
                d->has_ancestor = false;        /* read the new ancestor at the next tick */
        }
}

/* Write target. seen is the value the decision was based on: if the kernel
 * no longer holds it when we are about to write (systemd rewrote cpu.max
 * meanwhile; the write-ahead fsync widens that window), nothing is written
 * and the next tick re-bases on the new value (-EAGAIN). */
static int unit_apply(Unit *u, const struct bw_bandwidth *seen, const struct bw_bandwidth *target, const char *reason) {
        Manager *m = u->manager;
        struct bw_bandwidth before = u->has_written ? u->written : u->baseline, now;
        struct bw_state_unit *su;
        int r;

        if (seen && target->quota_usec != BW_QUOTA_MAX &&
            (seen->quota_usec == BW_QUOTA_MAX || target->quota_usec < seen->quota_usec))
                unit_lower_descendants(u, target->quota_usec, target->period_usec);

        /* Write-ahead: a crash between the write and the next save must still
         * recognise the kernel's value as ours. */
        su = bw_state_find(&m->state, u->name);
        if (su && !(su->has_pending && su->pending_saved && bw_bandwidth_equal(&su->pending, target) &&
                    su->pending.burst_usec == target->burst_usec)) {
                su->has_pending = true;
                su->pending = *target;
                su->pending_saved = false;
                r = manager_save_state(m);
                if (r < 0)
                        return log_error_errno(r, "%s: not writing: cannot record intent in state: %s", u->name, STRERROR(r));
        }

        if (seen) {
                r = bw_cg_read_bandwidth(u->cg, &now);
                if (r >= 0 && (!bw_bandwidth_equal(&now, seen) || now.burst_usec != seen->burst_usec)) {
                        log_info("%s: cpu.max changed while deciding, not writing", u->name);
                        return -EAGAIN;
                }
        }

        r = bw_cg_write_bandwidth(u->cg, target, &now);
        if (bw_cg_error_is_vanished(r)) {
                log_info("%s: cgroup vanished", u->name);
                unit_close_cgroup(u);
                return r;
        }
        if (r < 0) {
                u->write_errors++;
                return log_warning_errno(r, "%s: writing bandwidth failed: %s", u->name, STRERROR(r));
        }

        if (bw_bandwidth_equal(&now, &u->baseline))
                u->has_written = false;
        else {
                u->has_written = true;
                u->written = now;
        }
        if (now.quota_usec != before.quota_usec || now.period_usec != before.period_usec)
                unit_ancestor_changed(u);
        if (r > 0) {
                u->decisions_applied++;
                log_unit_change(LOG_INFO, u->name, &before, &now, reason,
                                "%s: quota %s%" PRIu64 " -> %" PRIu64 "us/%" PRIu64 "us, burst %" PRIu64 " -> %" PRIu64 "us (%s)",
                                u->name, before.quota_usec == BW_QUOTA_MAX ? "max " : "",
                                before.quota_usec == BW_QUOTA_MAX ? 0 : before.quota_usec,
                                now.quota_usec, now.period_usec, before.burst_usec, now.burst_usec, reason);
        }
        if (su) {
                /* The pending intent in the file already names what the
                 * kernel now holds: the save can wait (manager_mark_state()). */
                su->has_pending = false;
                su->pending_saved = false;
                su->has_written = u->has_written;
                su->written = u->written;
                su->credit_usec = u->pstate.credit.credit_usec;
                su->debt_usec = u->pstate.credit.debt_usec;
                manager_mark_state(m);
        }
        return r;
}

/* What restoring the baseline means now. Returns 1 with the current value
 * and the one to write, 0 when there is nothing to write. */
static int unit_restore_plan(Unit *u, struct bw_bandwidth *ret_cur, struct bw_bandwidth *ret_target) {
        struct bw_bandwidth cur;
        int r;

        if (!u->cg || !u->adopted)
                return 0;
        r = bw_cg_read_bandwidth(u->cg, &cur);
        if (r < 0)
                return 0;
        if (u->has_written && !bw_bandwidth_equal(&cur, &u->written)) {
                /* Someone else rewrote cpu.max since our last write (systemd
                 * does on every unit start or daemon-reload): their quota
                 * stays. Quota and burst are separate files and owners,
                 * though: a burst that is still ours goes back. */
                if (cur.has_burst && cur.burst_usec == u->written.burst_usec &&
                    cur.burst_usec != u->baseline.burst_usec && cur.quota_usec != BW_QUOTA_MAX) {
                        struct bw_bandwidth t = cur;

                        t.burst_usec = u->baseline.burst_usec <= cur.quota_usec ? u->baseline.burst_usec : cur.quota_usec;
                        log_info("%s: the quota is someone else's now, restoring only the burst", u->name);
                        u->baseline.quota_usec = cur.quota_usec;
                        u->baseline.period_usec = cur.period_usec;
                        u->baseline.burst_usec = t.burst_usec;
                        *ret_cur = cur;
                        *ret_target = t;
                        return 1;
                }
                log_info("%s: not restoring, the current value is not ours", u->name);
                return 0;
        }
        if (bw_bandwidth_equal(&cur, &u->baseline) && cur.burst_usec == u->baseline.burst_usec)
                return 0;
        *ret_cur = cur;
        *ret_target = u->baseline;
        return 1;
}

static void unit_restore_baseline(Unit *u, const char *why) {
        struct bw_bandwidth cur, target;

        if (unit_restore_plan(u, &cur, &target) > 0)
                (void) unit_apply(u, &cur, &target, why);
}

static bool unit_has_usage(const Unit *u) {
        return u->cg && (u->cg->layout == BW_CG_LAYOUT_V2 || u->cg->usage_fd >= 0);
}

/* Where the unit rests with its credit (the law's first decision, see
 * bw_policy_rest_target()) when the kernel does not hold it yet: true and
 * the value to write. Paused, observed and unlimited units rest where they
 * are. */
static bool unit_rest_plan(Unit *u, const struct bw_bandwidth *cur, struct bw_bandwidth *ret_target) {
        struct bw_bandwidth t;

        if (u->paused || (u->params.mode != BW_MODE_ELASTIC && u->params.mode != BW_MODE_BURST) ||
            u->params.baseline.quota_usec == BW_QUOTA_MAX || cur->quota_usec == BW_QUOTA_MAX)
                return false;
        if (bw_policy_rest_target(&u->params, u->pstate.credit.credit_usec, unit_has_usage(u), cur, &t) < 0)
                return false;
        /* Never above the nearest limited ancestor (cgroup v1 would refuse it). */
        {
                uint64_t anc = unit_ancestor_quota(u, now_monotonic_usec());

                if (anc != BW_QUOTA_MAX && t.quota_usec > anc) {
                        t.quota_usec = u64_max(anc, u->params.baseline.quota_usec);
                        if (t.has_burst && t.burst_usec > t.quota_usec)
                                t.burst_usec = t.quota_usec;
                }
        }
        if (bw_bandwidth_equal(&t, cur) && t.burst_usec == cur->burst_usec)
                return false;
        *ret_target = t;
        return true;
}

/* systemd's intended CPUQuota= is two D-Bus round trips to PID 1: asked
 * on the Interval= rhythm, not on every short-horizon sample. */
static bool unit_sdintent_due(Unit *u, uint64_t now) {
        if (u->last_sdintent_usec != 0 && now - u->last_sdintent_usec < unit_interval(u))
                return false;
        u->last_sdintent_usec = now;
        return true;
}

/* The nearest limited ancestor's quota in this unit's period, or
 * BW_QUOTA_MAX: the headroom never goes above it. Walking up is a few
 * open/read/close per ancestor, more than the whole sample costs: it is
 * read again every ANCESTOR_REFRESH_USEC, and at once for a new cgroup. */
static uint64_t unit_ancestor_quota(Unit *u, uint64_t now) {
        _cleanup_free_ char *path = NULL;
        uint64_t q;
        int r;

        if (u->has_ancestor && now - u->ancestor_read_usec < ANCESTOR_REFRESH_USEC)
                return u->ancestor_quota_usec;
        r = bw_cg_read_ancestor_quota(u->manager->root, u->cg, u->params.baseline.period_usec, &q, &path);
        if (r < 0) {
                log_debug_errno(r, "%s: cannot read the ancestors' quotas: %s", u->name, STRERROR(r));
                return u->has_ancestor ? u->ancestor_quota_usec : BW_QUOTA_MAX;
        }
        if (r > 0 && (!u->has_ancestor || u->ancestor_quota_usec != q))
                log_info("%s: nearest limited ancestor %s allows %" PRIu64 "us per %" PRIu64 "us period: "
                         "the headroom stays under it", u->name, path, q, u->params.baseline.period_usec);
        u->has_ancestor = true;
        u->ancestor_quota_usec = r > 0 ? q : BW_QUOTA_MAX;
        u->ancestor_read_usec = now;
        return u->ancestor_quota_usec;
}

static int unit_tick(Unit *u, uint64_t now) {
        Manager *m = u->manager;
        struct bw_policy_input in = {0};
        struct bw_decision d;
        struct bw_bandwidth cur;
        enum bw_mode mode;
        int r;

        u->last_tick_usec = now;
        m->ticks++;

        r = unit_resolve(u);
        if (r <= 0)
                return r;

        r = bw_cg_read_bandwidth(u->cg, &cur);
        if (bw_cg_error_is_vanished(r)) {
                log_info("%s: cgroup vanished", u->name);
                unit_close_cgroup(u);
                return 0;
        }
        if (r < 0)
                return log_warning_errno(r, "%s: cannot read bandwidth: %s", u->name, STRERROR(r));

        if (!u->adopted) {
                r = unit_adopt(u, &cur);
                if (r < 0)
                        return r;
        } else {
                struct bw_bandwidth expected = u->has_written ? u->written : u->baseline;
                uint64_t sq, sp;

                if (!bw_bandwidth_equal(&cur, &expected))
                        unit_rebase(u, &cur);
                else if (unit_sdintent_due(u, now) && sdintent_poll(m, u, &sq, &sp) > 0 &&
                         (cur.quota_usec != sq || cur.period_usec != sp)) {
                        /* systemd wants another quota and the kernel does
                         * not hold it: its write failed (our burst was above
                         * it) or is still to come. Put it in place ourselves,
                         * burst lowered first, and make it the baseline. */
                        struct bw_bandwidth t = cur;

                        t.quota_usec = sq;
                        t.period_usec = sp;
                        if (sq == BW_QUOTA_MAX)
                                t.burst_usec = 0;
                        else if (t.burst_usec > sq)
                                t.burst_usec = sq;
                        if (u->baseline.burst_usec < t.burst_usec)
                                t.burst_usec = u->baseline.burst_usec;
                        log_notice("%s: systemd's CPUQuota= now means %s%" PRIu64 "us/%" PRIu64 "us, not in the kernel; applying it",
                                   u->name, sq == BW_QUOTA_MAX ? "max " : "", sq == BW_QUOTA_MAX ? 0 : sq, sp);
                        r = unit_apply(u, &cur, &t, "systemd-intent");
                        if (r < 0)
                                return r;
                        r = bw_cg_read_bandwidth(u->cg, &cur);
                        if (r < 0)
                                return r;
                        unit_rebase(u, &cur);
                }
        }

        mode = unit_mode(u);
        if (u->params.mode != mode)
                unit_update_params(u);

        in.now_usec = now_monotonic_usec();
        r = bw_cg_read_stat(u->cg, &in.stat);
        if (bw_cg_error_is_vanished(r)) {
                unit_close_cgroup(u);
                return 0;
        }
        if (r < 0)
                return log_warning_errno(r, "%s: cannot read cpu.stat: %s", u->name, STRERROR(r));
        u->last_stat = in.stat;
        u->has_last_stat = true;

        if (u->cg->pressure_fd >= 0 && bw_cg_read_pressure(u->cg, &in.psi) >= 0)
                in.has_psi = true;

        in.current = cur;
        in.ancestor_quota_usec = unit_ancestor_quota(u, in.now_usec);
        /* A shedding plan applies once: the law keeps the cap it leaves. */
        in.shed_permille = u->shed_pending;
        u->shed_pending = 0;
        in.host_over_limit = m->host_over_limit;

        {
                /* A paused unit is still observed (explain/history keep
                 * working), but nothing is written and no hold-off starts. */
                struct bw_policy_params p = u->params;
                if (u->paused && p.mode != BW_MODE_OFF)
                        p.mode = BW_MODE_OBSERVE;
                r = bw_policy_decide(&p, &u->pstate, &in, &d);
        }
        if (r < 0)
                return log_warning_errno(r, "%s: policy failed: %s", u->name, STRERROR(r));

        u->ticks++;
        u->last = d;
        u->has_last = true;

        {
                struct bw_history_entry e;
                struct timespec ts;
                bool applied = false;

                if (d.change && !u->paused) {
                        r = unit_apply(u, &cur, &d.target, bw_rule_to_string(d.rule));
                        applied = r > 0;
                }
                /* The law sized the headroom for its horizon: sample again
                 * within it. A too-soon sample commits to nothing new: the
                 * last deadline stands (the timer was re-armed for a whole
                 * Interval= before this tick, which may be later). */
                if (d.next_tick_usec > 0) {
                        u->deadline_usec = in.now_usec + d.next_tick_usec;
                        if (u->cg)
                                (void) unit_schedule(u, in.now_usec, d.next_tick_usec);
                } else if (u->cg && u->deadline_usec > 0)
                        (void) unit_schedule(u, in.now_usec,
                                             u->deadline_usec > in.now_usec ? u->deadline_usec - in.now_usec : 0);
                /* A shedding plan that met a sample too close to the last
                 * one is not lost: it applies as soon as a sample counts. */
                if (d.rule == BW_RULE_TOO_SOON && in.shed_permille > 0 && u->cg) {
                        u->shed_pending = in.shed_permille > u->shed_pending ? in.shed_permille : u->shed_pending;
                        (void) unit_schedule(u, in.now_usec, TOO_SOON_RETRY_USEC);
                }
                clock_gettime(CLOCK_REALTIME, &ts);
                bw_history_entry_from_decision(&d, &cur,
                                               (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000,
                                               applied, &e);
                u->last_current = cur;
                u->last_applied = applied;
                u->last_realtime_usec = e.realtime_usec;
                /* Keep transitions, not a copy of every quiet tick: a steady
                 * tick that repeats the last entry's rule is not recorded, so
                 * HistorySize= entries span hours, not minutes; a sample
                 * too close to the last one decided nothing and is dropped. */
                if (d.rule != BW_RULE_TOO_SOON &&
                    (applied || !u->has_history_rule || u->history_rule != d.rule ||
                     (d.rule != BW_RULE_STEADY && d.rule != BW_RULE_HOLD))) {
                        bw_history_push(u->history, &e);
                        u->history_rule = d.rule;
                        u->has_history_rule = true;
                }
        }

        {
                struct bw_state_unit *su = bw_state_find(&m->state, u->name);
                if (su) {
                        su->credit_usec = u->pstate.credit.credit_usec;
                        su->debt_usec = u->pstate.credit.debt_usec;
                }
        }
        return 0;
}

static int unit_new(Manager *m, const struct bw_unit_config *cfg, Unit **ret) {
        Unit *u;
        int r;

        u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        u->manager = m;
        u->trigger_fd = -1;
        u->name = strdup(cfg->name);
        if (!u->name) {
                unit_free(u);
                return -ENOMEM;
        }
        r = unit_config_copy(cfg, &u->cfg);
        if (r < 0) {
                unit_free(u);
                return r;
        }
        r = bw_history_new(m->config.global.history_size, &u->history);
        if (r < 0) {
                unit_free(u);
                return r;
        }

        r = sd_event_add_time_relative(m->event, &u->timer, CLOCK_MONOTONIC, 0, 0, on_unit_timer, u);
        if (r < 0) {
                unit_free(u);
                return r;
        }
        *ret = u;
        return 0;
}

/* ---- manager ------------------------------------------------------------ */

static int manager_save_state(Manager *m) {
        int r;

        if (m->state_dir_fd < 0)
                return 0;
        r = bw_state_save(m->state_dir_fd, STATE_FILE, &m->state);
        if (r < 0)
                return log_error_errno(r, "Failed to save %s/%s: %s", m->state_dir, STATE_FILE, STRERROR(r));
        m->state_saves++;
        m->state_dirty = false;
        for (size_t i = 0; i < m->state.n_units; i++)
                m->state.units[i].pending_saved = m->state.units[i].has_pending;
        return 0;
}

/* Changes that need no write-ahead (adoption, re-base, the outcome of a
 * write whose intent is saved) are saved together a little later: with many
 * units one save instead of one per unit, each of which rewrites and fsyncs
 * the whole file (a thousand units made adoption quadratic and a stop
 * outlast systemd's timeout). Any write's intent save takes them along. */
static int on_save_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (m->state_dirty)
                (void) manager_save_state(m);
        return 0;
}

static void manager_mark_state(Manager *m) {
        int enabled = SD_EVENT_OFF;

        m->state_dirty = true;
        /* Stopping: the loop is done and manager_shutdown() saves last. */
        if (m->stopping)
                return;
        if (!m->save_source) {
                if (sd_event_add_time_relative(m->event, &m->save_source, CLOCK_MONOTONIC, STATE_SAVE_DELAY_USEC,
                                               0, on_save_timer, m) < 0) {
                        (void) manager_save_state(m);   /* cannot defer: save now */
                        return;
                }
                (void) sd_event_source_set_enabled(m->save_source, SD_EVENT_ONESHOT);
                return;
        }
        if (sd_event_source_get_enabled(m->save_source, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;         /* a save is already on its way */
        if (sd_event_source_set_time_relative(m->save_source, STATE_SAVE_DELAY_USEC) < 0 ||
            sd_event_source_set_enabled(m->save_source, SD_EVENT_ONESHOT) < 0)
                (void) manager_save_state(m);
}

static Unit *manager_find_unit(Manager *m, const char *name) {
        for (size_t i = 0; i < m->n_units; i++)
                if (strcmp(m->units[i]->name, name) == 0)
                        return m->units[i];
        return NULL;
}

static int manager_config_dirs(Manager *m, const char *const **ret, const char *buf[2]) {
        if (m->config_dir) {
                buf[0] = m->config_dir;
                buf[1] = NULL;
                *ret = buf;
        } else
                *ret = bw_config_default_dirs();
        return 0;
}

int manager_load_config(Manager *m) {
        struct bw_config_error err = {0};
        struct bw_config c = {0};
        const char *const *dirs;
        const char *buf[2];
        int r;

        manager_config_dirs(m, &dirs, buf);
        r = bw_config_load(dirs, &c, &err);
        if (r < 0) {
                _cleanup_free_ char *s = bw_config_error_to_string(&err);
                log_error("Configuration not loaded: %s", s ? s : "out of memory");
                bw_config_error_done(&err);
                return r;
        }
        bw_config_done(&m->config);
        m->config = c;
        return 0;
}

/* Bring the unit table in line with the configuration: new units are
 * created, dropped ones restored to their baseline and forgotten. */
static int manager_sync_units(Manager *m) {
        size_t i = 0;
        int r;

        while (i < m->n_units) {
                Unit *u = m->units[i];
                const struct bw_unit_config *c = bw_config_find_unit(&m->config, u->name);

                if (!c) {
                        log_info("%s: no longer configured, restoring its baseline", u->name);
                        unit_restore_baseline(u, "unconfigured");
                        bw_state_remove(&m->state, u->name);
                        manager_mark_state(m);
                        unit_free(u);
                        memmove(&m->units[i], &m->units[i + 1], (m->n_units - i - 1) * sizeof(Unit *));
                        m->n_units--;
                        continue;
                }

                struct bw_unit_config copy;
                r = unit_config_copy(c, &copy);
                if (r < 0)
                        return r;
                bool moved = (c->cgroup || u->cfg.cgroup) &&
                             (!c->cgroup || !u->cfg.cgroup || strcmp(c->cgroup, u->cfg.cgroup) != 0);
                unit_config_done(&u->cfg);
                u->cfg = copy;
                if (moved) {
                        unit_restore_baseline(u, "cgroup-moved");
                        unit_close_cgroup(u);
                        u->adopted = false;
                }
                if (u->adopted) {
                        unit_update_params(u);
                        if (u->pstate.credit.credit_usec > u->params.credit_max_usec)
                                u->pstate.credit.credit_usec = u->params.credit_max_usec;
                }
                if (bw_history_capacity(u->history) != m->config.global.history_size) {
                        r = bw_history_resize(&u->history, m->config.global.history_size);
                        if (r < 0)
                                return r;
                }
                /* Keep the rhythm: the next tick comes one (possibly new)
                 * interval after the last one, not at once. */
                {
                        uint64_t now, next = u->last_tick_usec + unit_interval(u);

                        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
                        if (u->last_tick_usec == 0 || next <= now)
                                (void) sd_event_source_set_time_relative(u->timer, 0);
                        else
                                (void) sd_event_source_set_time(u->timer, next);
                }
                i++;
        }

        for (size_t k = 0; k < m->config.n_units; k++) {
                const struct bw_unit_config *c = &m->config.units[k];
                Unit *u, **n;

                if (manager_find_unit(m, c->name))
                        continue;
                r = unit_new(m, c, &u);
                if (r < 0)
                        return r;
                n = realloc(m->units, (m->n_units + 1) * sizeof(Unit *));
                if (!n) {
                        unit_free(u);
                        return -ENOMEM;
                }
                m->units = n;
                m->units[m->n_units++] = u;
        }
        return 0;
}

bool unit_is_boosted(const Unit *u) {
        return u->adopted && u->has_written;
}

const char *unit_state_to_string(const Unit *u) {
        if (!u->cg)
                return "absent";
        if (!u->adopted)
                return "new";
        if (u->paused)
                return "paused";
        if (u->pstate.exhausted && u->params.mode == BW_MODE_ELASTIC)
                return "exhausted";
        if (!u->has_last || u->last.headroom_usec == 0)
                return "baseline";
        if (u->last.spend_rate > 0)
                return "spending";
        return "resting";
}

static void manager_update_status(Manager *m) {
        struct governor_counts c;

        manager_counts(m, &c);
        (void) sd_notifyf(false, "STATUS=Governing %zu of %zu configured cgroups, %zu boosted, %zu spending credit",
                          c.present, c.units, c.boosted, c.spending);
}

static void manager_write_metrics(Manager *m) {
        const Governor g = { &manager_governor_ops, m };

        (void) metrics_write(&g, m->runtime_dir);
}

/* Read a small /proc file (or a test's stand-in) into buf. */
static ssize_t read_small_file(const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = -1;
        ssize_t n;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size);
        return n < 0 ? -errno : n;
}

/* CPU time the outermost governed groups have used by `now`: each one's
 * counter at its last sample, carried forward at its last rate (their
 * samples come at their own times, the host's at its own). */
static uint64_t manager_governed_usage(Manager *m, uint64_t now) {
        uint64_t sum = 0;

        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];
                uint64_t v;

                if (!u->cg || !u->outermost || !u->has_last || !u->has_last_stat ||
                    !(u->last_stat.seen & BW_CPUSTAT_USAGE))
                        continue;
                v = u->last_stat.usage_usec;
                if (now > u->pstate.prev_now_usec)
                        v += u64_muldiv(u->last.usage_rate, now - u->pstate.prev_now_usec, USEC_PER_SEC);
                sum = u64_sat_add(sum, v);
        }
        return sum;
}

/* Host CPU pressure and the CPU used outside the governed groups since the
 * last host sample, and whether the host is over HostPressureLimit=
 * (bw_host_over_limit()). The outside use is averaged over about
 * HOST_OTHER_TAU_USEC: governed samples and host samples come at different
 * times, and a single difference of the two is noisy. */
static void manager_sample_host(Manager *m) {
        uint64_t now, busy = 0, dt, governed;
        bool has_busy = false;
        struct bw_psi psi;
        char buf[1024];
        ssize_t n;

        n = read_small_file(m->host_pressure_path, buf, sizeof buf);
        if (n <= 0 || bw_psi_parse(buf, (size_t) n, &psi) < 0)
                return;
        /* Only the aggregate "cpu" line, the first one. */
        n = read_small_file(m->host_stat_path, buf, sizeof buf);
        if (n > 0 && bw_host_parse_stat(buf, (size_t) n, (uint64_t) sysconf(_SC_CLK_TCK), &busy) >= 0)
                has_busy = true;

        now = now_monotonic_usec();
        governed = manager_governed_usage(m, now);
        dt = m->has_host && now > m->host_time_usec ? now - m->host_time_usec : 0;
        if (dt > 0 && psi.some.total_usec >= m->host_total_usec)
                /* Stall time cannot exceed wall time. */
                m->host_some_rate = u64_min((psi.some.total_usec - m->host_total_usec) * USEC_PER_SEC / dt, USEC_PER_SEC);
        if (dt > 0 && has_busy && m->has_host_busy && busy >= m->host_busy_usec &&
            m->host_units_generation == m->units_generation) {
                int64_t other = ((int64_t) (busy - m->host_busy_usec) - ((int64_t) governed - (int64_t) m->host_governed_usec)) *
                                (int64_t) USEC_PER_SEC / (int64_t) dt;
                int64_t w = (int64_t) u64_min(dt, HOST_OTHER_TAU_USEC);

                m->host_busy_rate = (busy - m->host_busy_usec) * USEC_PER_SEC / dt;
                m->host_other_avg += (other - m->host_other_avg) * w / (int64_t) HOST_OTHER_TAU_USEC;
        }
        m->has_host = true;
        m->host_total_usec = psi.some.total_usec;
        m->has_host_busy = has_busy;
        m->host_busy_usec = busy;
        m->host_governed_usec = governed;
        m->host_units_generation = m->units_generation;
        m->host_time_usec = now;
        m->host_other_usage = m->host_other_avg > 0 ? (uint64_t) m->host_other_avg : 0;

        /* Without /proc/stat there is no telling whether anyone else wants
         * the CPU: the pressure alone decides. */
        m->host_over_limit = bw_host_over_limit(m->host_some_rate, has_busy ? m->host_other_usage : UINT64_MAX,
                                                m->config.global.host_pressure_limit);
}

/* Headroom a unit holds, µs/s: its quota above the baseline, resting or in
 * use. Resting headroom counts: a group idle now is one wake-up away from
 * spending it, and a sample of its own may be a whole Interval= away; host
 * protection has to hold before that, not after. */
static uint64_t unit_headroom(const Unit *u) {
        if (!u->adopted || !u->has_written || u->params.baseline.quota_usec == BW_QUOTA_MAX)
                return 0;
        return bw_policy_boost_rate(&u->params, &u->written);
}

static void manager_plan_shedding(Manager *m, uint64_t now) {
        uint64_t limit = m->config.global.host_pressure_limit;
        _cleanup_free_ struct bw_shed_unit *units = NULL;
        _cleanup_free_ unsigned *shed = NULL;
        size_t n_shed = 0, n_new = 0;
        int r;

        if (m->n_units == 0)
                return;

        units = calloc(m->n_units, sizeof(*units));
        shed = calloc(m->n_units, sizeof(*shed));
        if (!units || !shed) {
                log_oom();
                return;
        }
        for (size_t i = 0; i < m->n_units; i++) {
                units[i].priority = m->units[i]->cfg.priority;
                units[i].boost_rate = unit_headroom(m->units[i]);
        }
        r = bw_host_plan_shed(units, m->n_units, m->host_over_limit ? m->host_some_rate : 0, limit, shed);
        if (r < 0) {
                log_warning_errno(r, "Shedding plan failed: %s", STRERROR(r));
                return;
        }
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];

                if (shed[i] > 0) {
                        n_shed++;
                        if (u->shed_permille == 0)
                                n_new++;
                }
                u->shed_permille = shed[i];
                if (shed[i] > 0) {
                        /* Within this short tick, not at the unit's next one. */
                        u->shed_pending = shed[i];
                        (void) unit_schedule(u, now, 0);
                }
        }
        /* One line per plan that reaches new units, not one per unit: with
         * thousands of units each write says "host-shed" anyway. */
        if (n_new > 0)
                log_notice("Host CPU pressure %" PRIu64 "us/s over limit %" PRIu64 "us/s while %" PRIu64
                           "us/s of CPU is used outside the governed groups: withdrawing headroom from %zu unit%s, "
                           "lowest Priority= first",
                           m->host_some_rate, limit, m->host_other_usage, n_shed, n_shed == 1 ? "" : "s");
}

static uint64_t host_interval(Manager *m) {
        return m->config.global.active_interval_usec < m->config.global.interval_usec ?
               m->config.global.active_interval_usec : m->config.global.interval_usec;
}

/* Every ActiveInterval=: host pressure, the brake and shedding (one file
 * each, cheap). Every Interval=: rescan for absent units, metrics, status,
 * the periodic state save. */
static int on_host_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        /* sd-event's default accuracy is 250 ms: as long as the interval
         * itself, and shedding would come a whole tick late. */
        r = sd_event_source_set_time_accuracy(s, host_interval(m) / 16 > 0 ? host_interval(m) / 16 : 1);
        if (r >= 0)
                r = sd_event_source_set_time_relative(s, host_interval(m));
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ON);
        if (r < 0)
                return log_error_errno(r, "Failed to re-arm host timer: %s", STRERROR(r));

        manager_sample_host(m);
        manager_plan_shedding(m, usec);

        if (m->last_slow_host_usec != 0 && usec - m->last_slow_host_usec + host_interval(m) / 2 <
            m->config.global.interval_usec)
                return 0;
        m->last_slow_host_usec = usec;

        /* Units that are not present yet are looked for here, not on every
         * unit tick: a cheap rescan instead of inotify on the whole tree. */
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];
                if (!u->cg && usec - u->last_tick_usec >= RESCAN_INTERVAL_USEC)
                        (void) unit_tick(u, usec);
        }

        if (usec - m->last_state_save_usec >= STATE_SAVE_INTERVAL_USEC) {
                (void) manager_save_state(m);
                m->last_state_save_usec = usec;
        }
        manager_write_metrics(m);
        manager_update_status(m);
        return 0;
}

int manager_reload(Manager *m) {
        uint64_t now;
        int r;

        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        (void) sd_notifyf(false, "RELOADING=1\nSTATUS=Reloading configuration\nMONOTONIC_USEC=%" PRIu64, now);

        m->reloads++;
        r = manager_load_config(m);
        if (r < 0) {
                m->reload_failures++;
                log_error("Reload failed, keeping the previous configuration");
        } else {
                r = manager_sync_units(m);
                if (r < 0)
                        log_error_errno(r, "Failed to apply the new configuration: %s", STRERROR(r));
                else {
                        manager_adopt_all(m);
                        log_info("Configuration reloaded: %zu units", m->n_units);
                }
                (void) sd_event_source_set_time_relative(m->host_timer, 0);
        }
        (void) sd_notify(false, "READY=1");
        manager_update_status(m);
        return r;
}

static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload(userdata);
        return 0;
}

Unit *manager_get_unit(Manager *m, const char *name) {
        return manager_find_unit(m, name);
}

int manager_set_paused(Manager *m, const char *name, bool paused) {
        Unit *u = manager_find_unit(m, name);
        struct bw_state_unit *su;

        if (!u)
                return -ENOENT;
        if (u->paused == paused)
                return 0;
        u->paused = paused;
        log_info("%s: governing %s", u->name, paused ? "paused, restoring the baseline" : "resumed");
        /* A paused unit holds its baseline: the operator asked bwgov to stand
         * back, not to freeze a boost in place. */
        if (paused)
                unit_restore_baseline(u, "paused");
        su = bw_state_find(&m->state, u->name);
        if (su)
                su->paused = paused;
        (void) manager_save_state(m);
        return 1;
}

static int on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, stopping", si->ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
        (void) sd_notify(false, "STOPPING=1\nSTATUS=Restoring baselines");
        m->stopping = true;
        return sd_event_exit(m->event, 0);
}

int manager_new(Manager **ret) {
        Manager *m;
        long n;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->state_dir_fd = -1;

        r = sd_event_default(&m->event);
        if (r < 0)
                goto fail;
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                goto fail;

        /* sd_event_add_signal requires the signals blocked. */
        {
                sigset_t ss;
                sigemptyset(&ss);
                sigaddset(&ss, SIGTERM);
                sigaddset(&ss, SIGINT);
                sigaddset(&ss, SIGHUP);
                sigprocmask(SIG_BLOCK, &ss, NULL);
        }
        r = sd_event_add_signal(m->event, &m->sigterm, SIGTERM, on_terminate, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &m->sigint, SIGINT, on_terminate, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &m->sighup, SIGHUP, on_reload, m);
        if (r < 0)
                goto fail;
        /* A stop must not wait behind thousands of due unit timers. */
        (void) sd_event_source_set_priority(m->sigterm, SD_EVENT_PRIORITY_IMPORTANT);
        (void) sd_event_source_set_priority(m->sigint, SD_EVENT_PRIORITY_IMPORTANT);

        /* Four to six files stay open per governed cgroup: the soft limit
         * of 1024 would stop at a few hundred. */
        {
                struct rlimit rl;
                if (getrlimit(RLIMIT_NOFILE, &rl) >= 0 && rl.rlim_cur < rl.rlim_max) {
                        rl.rlim_cur = rl.rlim_max;
                        (void) setrlimit(RLIMIT_NOFILE, &rl);
                }
        }

        n = sysconf(_SC_NPROCESSORS_ONLN);
        m->ncpus = n > 0 ? (unsigned) n : 1;
        m->can_trigger_any_window = have_cap_sys_resource();
        *ret = m;
        return 0;
fail:
        manager_free(m);
        return r;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_units; i++)
                unit_free(m->units[i]);
        free(m->units);
        sd_event_source_disable_unref(m->host_timer);
        sd_event_source_disable_unref(m->save_source);
        sd_event_source_disable_unref(m->sigterm);
        sd_event_source_disable_unref(m->sigint);
        sd_event_source_disable_unref(m->sighup);
        sd_event_unref(m->event);
        sdintent_close(m);
        bw_cg_root_free(m->root);
        bw_config_done(&m->config);
        bw_state_done(&m->state);
        if (m->state_dir_fd >= 0)
                close(m->state_dir_fd);
        free(m->config_dir);
        free(m->state_dir);
        free(m->runtime_dir);
        free(m->cgroup_root);
        free(m->host_pressure_path);
        free(m->host_stat_path);
        free(m->manifest_path);
        free(m);
        return NULL;
}

static int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);
        char *s;

        if (!p)
                return -ENOMEM;
        for (s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int manager_startup(Manager *m) {
        int r;

        if (m->cgroup_root)
                r = bw_cg_root_open_dir(m->cgroup_root, &m->root);
        else
                r = bw_cg_root_open_host(&m->root);
        if (r == -EOPNOTSUPP)
                return log_error_errno(r, "No cgroup CPU bandwidth controller is mounted on this host (need cgroup v2 with "
                                       "the cpu controller, or a v1 cpu hierarchy): not supported");
        if (r < 0)
                return log_error_errno(r, "Failed to open the cgroup tree %s: %s", m->cgroup_root ? m->cgroup_root : "", STRERROR(r));
        log_info("cgroup layout: %s (bandwidth in %s)", bw_cg_layout_to_string(m->root->layout), m->root->bw_path);

        /* Only on the host: a fixture tree says nothing about the kernel. */
        if (!m->cgroup_root) {
                r = manager_check_kernel(m);
                if (r < 0)
                        return r;
        }

        r = mkdir_p(m->state_dir, 0755);
        if (r < 0)
                return log_error_errno(r, "Failed to create state directory %s: %s", m->state_dir, STRERROR(r));
        m->state_dir_fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (m->state_dir_fd < 0)
                return log_error_errno(errno, "Failed to open state directory %s: %s", m->state_dir, STRERROR(errno));
        r = mkdir_p(m->runtime_dir, 0755);
        if (r < 0)
                return log_error_errno(r, "Failed to create runtime directory %s: %s", m->runtime_dir, STRERROR(r));

        r = bw_state_load(m->state_dir_fd, STATE_FILE, &m->state);
        if (r == -ENOENT)
                log_debug("No saved state, starting fresh");
        else if (r < 0) {
                /* Keep the broken file for inspection; starting fresh adopts
                 * whatever the kernel holds, which may be a boost. Say so. */
                char bak[64];
                snprintf(bak, sizeof bak, "%s.broken", STATE_FILE);
                (void) renameat(m->state_dir_fd, STATE_FILE, m->state_dir_fd, bak);
                log_warning_errno(r, "Saved state %s/%s unreadable (kept as %s), adopting current values as baselines: %s",
                                  m->state_dir, STATE_FILE, bak, STRERROR(r));
        }

        r = manager_sync_units(m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up units: %s", STRERROR(r));
        manager_adopt_all(m);

        r = sd_event_add_time_relative(m->event, &m->host_timer, CLOCK_MONOTONIC, 0, 0, on_host_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add host timer: %s", STRERROR(r));

        return 0;
}

int manager_run(Manager *m) {
        (void) sd_notify(false, "READY=1");
        manager_update_status(m);
        return sd_event_loop(m->event);
}

struct planned_write {
        Unit *u;
        struct bw_bandwidth cur, target;
};

/* Parents before their children (cgroup v1 refuses a child's quota above
 * its parent's): by cgroup path, a prefix sorts first. */
static int planned_write_cmp(const void *a, const void *b) {
        const struct planned_write *x = a, *y = b;

        return strcmp(x->u->cgroup_path, y->u->cgroup_path);
}

/* Write many units at once: the intents of all the writes are saved in one
 * go before the first write, not in one whole-file save per unit, which
 * with a thousand units made adoption quadratic and a stop outlast
 * systemd's timeout. unit_apply() then finds each intent saved. */
static void manager_apply_planned(Manager *m, struct planned_write *plan, size_t n, const char *why) {
        for (size_t i = 0; i < n; i++) {
                struct bw_state_unit *su = bw_state_find(&m->state, plan[i].u->name);

                if (su) {
                        su->has_pending = true;
                        su->pending = plan[i].target;
                        su->pending_saved = false;
                }
        }
        if (n > 1 && manager_save_state(m) < 0)
                log_warning("Writing %zu unit(s) without their intents saved together", n);
        for (size_t i = 0; i < n; i++)
                (void) unit_apply(plan[i].u, &plan[i].cur, &plan[i].target, why);
}

static void manager_restore_all(Manager *m, const char *why) {
        _cleanup_free_ struct planned_write *plan = NULL;
        size_t n = 0;

        plan = calloc(m->n_units > 0 ? m->n_units : 1, sizeof(*plan));
        if (!plan) {
                for (size_t i = 0; i < m->n_units; i++)
                        unit_restore_baseline(m->units[i], why);
                return;
        }
        for (size_t i = 0; i < m->n_units; i++) {
                plan[n].u = m->units[i];
                if (unit_restore_plan(plan[n].u, &plan[n].cur, &plan[n].target) > 0)
                        n++;
        }
        manager_apply_planned(m, plan, n, why);
}

static int unit_path_cmp(const void *a, const void *b) {
        return strcmp((*(Unit *const *) a)->cgroup_path, (*(Unit *const *) b)->cgroup_path);
}

/* Which units have no governed unit above them (the host brake sums their
 * usage: a slice's includes its services'), and which have governed units
 * below them (their quota caps those). Units sorted by path and a lookup
 * of each ancestor: n log n, not n^2. */
static void manager_update_outermost(Manager *m) {
        _cleanup_free_ Unit **byp = NULL;
        size_t n = 0;

        byp = calloc(m->n_units > 0 ? m->n_units : 1, sizeof(*byp));
        if (!byp)
                return;
        for (size_t i = 0; i < m->n_units; i++) {
                m->units[i]->has_governed_descendants = false;
                if (m->units[i]->cgroup_path)
                        byp[n++] = m->units[i];
        }
        qsort(byp, n, sizeof(*byp), unit_path_cmp);

        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];
                _cleanup_free_ char *up = NULL;
                char *slash;

                u->outermost = true;
                if (!u->cgroup_path || !(up = strdup(u->cgroup_path)))
                        continue;
                while ((slash = strrchr(up, '/'))) {
                        Unit key = { .cgroup_path = up }, *kp = &key, **found;

                        *slash = '\0';
                        found = bsearch(&kp, byp, n, sizeof(*byp), unit_path_cmp);
                        if (found) {
                                u->outermost = false;
                                (*found)->has_governed_descendants = true;
                        }
                }
        }
}

/* u's quota changed: governed units below it read their ancestor's quota
 * again at their next tick. */
static void unit_ancestor_changed(Unit *u) {
        Manager *m = u->manager;
        size_t len;

        if (!u->has_governed_descendants || !u->cgroup_path)
                return;
        len = strlen(u->cgroup_path);
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *d = m->units[i];

                if (d != u && d->cgroup_path && (len == 0 || (strncmp(d->cgroup_path, u->cgroup_path, len) == 0 &&
                                                             d->cgroup_path[len] == '/')))
                        d->has_ancestor = false;
        }
}

/* Adopt every unit whose cgroup is there and put the resting headroom and
 * burst in place as one batch (at start, and for units a reload adds),
 * before their timers take over; units not found yet are adopted by their
 * first tick. */
static void manager_adopt_all(Manager *m) {
        _cleanup_free_ struct planned_write *plan = NULL;
        size_t n = 0;

        plan = calloc(m->n_units > 0 ? m->n_units : 1, sizeof(*plan));
        if (!plan)
                return;         /* the ticks adopt one by one */
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];
                struct bw_bandwidth cur;

                if (u->adopted || unit_resolve(u) <= 0)
                        continue;
                if (bw_cg_read_bandwidth(u->cg, &cur) < 0 || unit_adopt(u, &cur) < 0)
                        continue;
                if (u->params.mode != unit_mode(u))
                        unit_update_params(u);
                /* unit_adopt() may have put CPUQuota= in place. */
                if (bw_cg_read_bandwidth(u->cg, &cur) < 0)
                        continue;
                if (unit_rest_plan(u, &cur, &plan[n].target)) {
                        plan[n].u = u;
                        plan[n].cur = cur;
                        n++;
                }
        }
        manager_update_outermost(m);
        qsort(plan, n, sizeof(*plan), planned_write_cmp);
        manager_apply_planned(m, plan, n, "resting-headroom");
}

void manager_shutdown(Manager *m) {
        m->stopping = true;     /* saves below, not deferred to a loop that is over */
        if (m->config.global.restore_on_exit)
                manager_restore_all(m, "stop");
        (void) manager_save_state(m);
        manager_write_metrics(m);
}
