/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: the event loop and its signals, load, reload and pause (the
 * unit table, its sync with the configuration and the tree of governed
 * cgroups are manager-units.c's), the host timer (rescan of absent units,
 * metrics and the sd_notify status; its host sample and shedding plan are
 * manager-host.c's), and startup and shutdown. One unit's life is the files
 * of src/daemon/unit/, the state file store.c. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
#include "bwgov/cgroup/slice.h"
#include "bwgov/util/util.h"
#include "clock.h"
#include "kcheck-startup.h"
#include "log.h"
#include "manager.h"
#include "metrics/metrics.h"
#include "manager-claims.h"
#include "manager-units.h"
#include "manager-host.h"
#include "manager-latency.h"
#include "manager-prefix.h"
#include "manager-restore.h"
#include "manager-shared.h"
#include "manager-bpf.h"
#include "unit/unit-intent.h"
#include "unit/unit-scope.h"

/* A unit missing from the tree is looked for again this often; cheap (a
 * few openat()s), and bounded by the number of absent units. */

/* Capability bit of CAP_SYS_RESOURCE (linux/capability.h). */
#define CAP_SYS_RESOURCE_BIT 24


static bool have_cap_sys_resource(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        unsigned long long caps;

        if (!f)
                return false;
        while (fgets(line, sizeof line, f))
                if (sscanf(line, "CapEff: %llx", &caps) == 1)
                        return caps & (1ULL << CAP_SYS_RESOURCE_BIT);
        return false;
}

/* ---- what spans units (the unit_context hooks) -------------------------- */

/* d's cgroup is below u's (u's path "" is the root). */
static bool unit_is_below(const Unit *d, const Unit *u) {
        size_t len = strlen(u->cgroup_path);

        return d != u && d->cgroup_path &&
               (len == 0 || (strncmp(d->cgroup_path, u->cgroup_path, len) == 0 && d->cgroup_path[len] == '/'));
}

static void on_unit_cgroup_changed(Unit *u, void *userdata) {
        Manager *m = userdata;

        m->units_generation++;
        metrics_mark_changed(&m->metrics);
        if (!u->cg)
                latency_guard_cgroup_closed(&m->latency, u);
        if (u->place.instance && !u->cg)
                m->instances_gone = true;       /* forgotten at the next host pass */
        /* A cgroup found: its place among the others. Anything else (a
         * cgroup closed or moved) is worked out again for every unit, once,
         * when next needed (manager_update_outermost()). */
        if (!manager_outermost_add(m, u))
                m->outermost_dirty = true;
}

/* cgroup v1 refuses a quota below a child's (tg_cfs_schedulable_down()):
 * before lowering u's quota, lower the governed cgroups below it that hold
 * more (unit_apply() recurses, so the deepest go first). Their own law then
 * sees the lower ancestor at once. */
static void on_unit_lowering(Unit *u, uint64_t quota_usec, uint64_t period_usec, void *userdata) {
        Manager *m = userdata;

        if (m->outermost_dirty)
                manager_update_outermost(m);
        if (!u->place.has_governed_descendants)
                return;         /* not a pass over every unit for each restore */
        for (size_t i = 0; i < m->n_units; i++)
                if (unit_is_below(m->units[i], u)) {
                        unit_lower_to(m->units[i], u->name, quota_usec, period_usec);
                        /* Stopping: a child restored before is planned again. */
                        if (m->stopping)
                                unit_stop_restore_again(m->units[i]);
                }
}

/* u's quota changed: governed units below it read their ancestor's quota
 * again at their next tick. */
static void on_unit_quota_changed(Unit *u, void *userdata) {
        Manager *m = userdata;

        /* Who is below whom is worked out lazily: a parent adopted in the
         * same batch as its child must already know it has one. */
        if (m->outermost_dirty)
                manager_update_outermost(m);

        if (!u->place.has_governed_descendants || !u->cgroup_path)
                return;
        for (size_t i = 0; i < m->n_units; i++)
                if (unit_is_below(m->units[i], u))
                        unit_forget_ancestor(m->units[i]);
}

static void on_unit_adopted(Unit *u, void *userdata) {
        Manager *m = userdata;

        metrics_mark_changed(&m->metrics);
}

/* The counters over all units are the manager's: a unit adds its delta. */
static void on_unit_count(Unit *u, const struct unit_counters *d, void *userdata) {
        Manager *m = userdata;

        m->ticks += d->ticks;
        m->fds_held += (size_t) d->fds;         /* a close: modulo 2^64, the sum never below 0 */
        m->trigger_closes_left -= d->trigger_closes < m->trigger_closes_left ? d->trigger_closes
                                                                             : m->trigger_closes_left;
        m->fd_limit_said |= d->fd_limit_said;
        m->quota_watch_said |= d->quota_watch_said;
        m->activity_gated += d->activity_gated;
}

static const struct unit_hooks unit_hooks = {
        .claim = manager_claim,
        .cgroup_changed = on_unit_cgroup_changed,
        .adopted = on_unit_adopted,
        .lowering = on_unit_lowering,
        .quota_changed = on_unit_quota_changed,
        .count = on_unit_count,
};

/* ---- the unit table -------------------------------------------------------- */

int manager_load_config(Manager *m) {
        struct bw_config c = {0}, *old;
        struct bw_config_error err = {0};
        const char *const *dirs;
        const char *buf[2];
        struct stat st;
        int r;

        /* Of the default directories any may be missing; the one named
         * with --config-dir= must be there (a typo would otherwise run
         * with the defaults, silently). */
        if (m->config_dir && stat(m->config_dir, &st) < 0)
                return log_error_errno(errno, "Configuration not loaded: --config-dir=%s: %s", m->config_dir,
                                       STRERROR(errno));
        if (m->config_dir && !S_ISDIR(st.st_mode))
                return log_error_errno(ENOTDIR, "Configuration not loaded: --config-dir=%s is %s, not a directory",
                                       m->config_dir, bw_file_type_name(st.st_mode));

        manager_config_dirs(m, &dirs, buf);
        r = bw_config_load(dirs, &c, &err);
        bw_config_error_done(&m->config_error);
        if (r < 0) {
                _cleanup_free_ char *s = bw_config_error_to_string(&err);
                log_error("Configuration not loaded: %s", s ? s : "out of memory");
                m->config_error = err;          /* for Reload()'s reply */
                return r;
        }
        /* The units point into the old one until they are synced. */
        old = reallocarray(m->old_configs, m->n_old_configs + 1, sizeof(*old));
        if (!old) {
                bw_config_done(&c);
                return log_error_errno(ENOMEM, "Configuration not loaded: out of memory");
        }
        m->old_configs = old;
        m->old_configs[m->n_old_configs++] = m->config;
        m->config = c;
        return 0;
}

/* STATUS= for systemctl status, when what it says changed: from the
 * units as the parked check of this pass counted them (fresh), else a
 * walk of its own. */
static void manager_update_status(Manager *m, bool counted) {
        struct governor_counts c;

        if (counted)
                c = m->pass_counts;
        else
                manager_counts(m, &c);
        if (m->status_sent && c.present == m->status_said.present && c.units == m->status_said.units &&
            c.boosted == m->status_said.boosted)
                return;
        (void) sd_notifyf(false, "STATUS=Governing %zu of %zu configured cgroups, %zu boosted (spending credit)",
                          c.present, c.units, c.boosted);
        m->status_said = c;
        m->status_sent = true;
}

/* The runtime directory deleted under us takes the socket and metrics
 * with it: said at once (every Interval=, a stat()), not at the next
 * metrics file, which may be an hour away. */
static void manager_check_runtime_dir(Manager *m) {
        struct stat st;
        bool gone = stat(m->runtime_dir, &st) < 0 && errno == ENOENT;

        if (gone && !m->runtime_dir_said)
                log_warning("Runtime directory %s is gone, and the varlink socket and metrics.prom with it: "
                            "`systemctl reload bwgovd` (SIGHUP) makes it again", m->runtime_dir);
        m->runtime_dir_said = gone;
}

/* Prefix units' cgroups are looked for again this often: a watch may have
 * missed one (inotify's queue overflowed, out of watches). */
#define PREFIX_RESCAN_USEC (30 * USEC_PER_SEC)

/* Each step of a metrics file renders for at most this long (whole
 * families): ten thousand units are some 40 ms in all, which in one go
 * would hold up a varlink client or a tick as long. */
#define METRICS_STEP_USEC (5 * USEC_PER_MSEC)
/* How often the heap's free pages are given back (after a metrics file,
 * not while one is on its way): the walk over the heap's free chunks was
 * 5 % of an idle daemon's CPU when made every Interval=. */
#define TRIM_USEC (10 * USEC_PER_SEC)
/* ... and sooner, once a second at most, after what leaves many small
 * free chunks behind (Manager.trim_soon): ten thousand units adopted, a
 * state save or a metrics file of them left 0.6 MB resident until then. */
#define TRIM_SOON_USEC (1 * USEC_PER_SEC)

static int on_metrics_step(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (m->metrics_job && metrics_job_step(m->metrics_job, METRICS_STEP_USEC) == 0)
                /* Again at the next iteration, behind what became pending
                 * meanwhile (a timer due at once, as the stop's). */
                return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        m->metrics_job = metrics_job_free(m->metrics_job);
        m->trim_soon = true;
        return 0;
}

/* The file from a snapshot of now, written over the next loop iterations;
 * while one is on its way, the next due pass writes the changes since. */
static void manager_write_metrics(Manager *m, uint64_t now) {
        if (m->metrics_job || !m->governor.ops)
                return;
        metrics_mark_written(&m->metrics, now);
        if (!m->metrics_cache)
                m->metrics_cache = metrics_cache_new();         /* NULL: every file rendered whole */
        if (metrics_job_new(&m->governor, m->runtime_dir, m->metrics_cache, &m->metrics_job) < 0 ||
            metrics_job_step(m->metrics_job, METRICS_STEP_USEC) != 0) {
                m->metrics_job = metrics_job_free(m->metrics_job);
                return;
        }
        if (!m->metrics_source &&
            sd_event_add_time(m->event, &m->metrics_source, CLOCK_MONOTONIC, 1, 0, on_metrics_step, m) >= 0 &&
            sd_event_source_set_priority(m->metrics_source, TICKER_BACKLOG_PRIORITY) < 0)
                m->metrics_source = sd_event_source_disable_unref(m->metrics_source);
        if (!m->metrics_source || sd_event_source_set_enabled(m->metrics_source, SD_EVENT_ONESHOT) < 0) {
                /* Cannot step from the loop: all of it now. */
                (void) metrics_job_step(m->metrics_job, UINT64_MAX);
                m->metrics_job = metrics_job_free(m->metrics_job);
        }
}

/* At exit: the last file, whole, now. */
static void manager_write_metrics_now(Manager *m, uint64_t now) {
        m->metrics_job = metrics_job_free(m->metrics_job);
        if (!m->governor.ops)
                return;
        (void) metrics_write(&m->governor, m->runtime_dir);
        metrics_mark_written(&m->metrics, now);
}

/* ---- the host timer ------------------------------------------------------ */

/* How long until the next host pass: ActiveInterval=, or Interval= while
 * every present unit is parked (manager_check_parked()) where its first
 * run wakes bwgovd (at its baseline, or at its headroom with its activity
 * flag armed: unit-tick.c) and the host is not over its limit: the wake
 * brings the fast passes back at once (manager-bpf.c). A group parked at
 * its headroom without a wake (no run-queue telemetry, or its wake spent)
 * can run up to it at any moment, and only a check samples it: the fast
 * passes go on, and one whose pressure nears the limit checks at once
 * (host_timer_pass()). */
static uint64_t host_pass_interval(const Manager *m) {
        if (m->parked > 0 && m->parked_no_wake == 0 && m->unparked == 0 && !m->host_over_limit)
                return m->config.global.interval_usec;
        return host_interval(m);
}

/* Every ActiveInterval= (host_pass_interval()): host pressure, the brake
 * and shedding (one file each, cheap). Every Interval=: rescan for absent
 * units, status, the periodic state save, and metrics when due
 * (MetricsInterval=, or a unit came, went, was adopted, paused or
 * resumed). */
static int host_timer_pass(sd_event_source *s, uint64_t usec, Manager *m) {
        uint64_t every = host_pass_interval(m);
        uint64_t now, next;
        bool slow_due;
        int r;

        /* Stopping: no shedding, no latency levers, no metrics until the
         * last write after the loop. */
        if (m->stopping)
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);

        /* sd-event's default accuracy is 250 ms: as long as the interval
         * itself, and shedding would come a whole tick late. The next pass
         * is one interval after this one was due, not after it ran: re-armed
         * from when it fired, every firing's lateness (up to the accuracy)
         * was added to the period (265 ms for ActiveInterval=250ms). */
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        next = usec + every > now ? usec + every : now + every;
        r = sd_event_source_set_time_accuracy(s, timer_accuracy_usec(host_interval(m)));
        if (r >= 0)
                r = sd_event_source_set_time(s, next);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ON);
        if (r < 0)
                return log_error_errno(r, "Failed to re-arm host timer: %s", STRERROR(r));

        /* Each close of a PSI trigger waits for an RCU grace period. */
        m->trigger_closes_left = 2;
        manager_retry_restores(m, usec);
        manager_prune_instances(m);
        manager_sample_host(m);
        slow_due = m->last_slow_host_usec == 0 ||
                usec - m->last_slow_host_usec + host_interval(m) / 2 >= m->config.global.interval_usec;
        /* Near the limit, the groups parked without a wake are looked at
         * now, not at the next Interval= (the slow part below): one that
         * woke into a busy host counts nothing above its baseline until
         * its sample. */
        if (!slow_due && m->parked_no_wake > 0 && m->config.global.host_pressure_limit > 0 &&
            m->host_some_rate >= m->config.global.host_pressure_limit / 2)
                manager_check_parked(m, clock_now_usec(CLOCK_MONOTONIC));
        manager_plan_shedding(m, usec);
        manager_latency_pass(m, usec);

        if (!slow_due)
                return 0;
        m->last_slow_host_usec = usec;

        if (m->config.n_prefixes > 0 && usec - m->prefix_scan_usec >= PREFIX_RESCAN_USEC)
                manager_scan_prefixes(m, usec);        /* what a watch missed */
        if (m->outermost_dirty)
                manager_update_outermost(m);
        manager_check_parked(m, clock_now_usec(CLOCK_MONOTONIC));
        /* A unit woke: the fast passes again from now on. */
        if (host_pass_interval(m) < every)
                (void) sd_event_source_set_time(s, usec + host_pass_interval(m) > now ? usec + host_pass_interval(m)
                                                                                       : now + host_pass_interval(m));
        manager_plan_fds_checked(m);
        manager_check_runtime_dir(m);
        if (store_periodic(m->store, usec))
                m->trim_soon = true;
        if (metrics_due(&m->metrics, usec, m->config.global.metrics_interval_usec,
                        m->config.global.interval_usec / 2))
                manager_write_metrics(m, usec);
        manager_update_status(m, true);
        /* Give back the heap's free pages: a ListUnits reply or a state
         * save of ten thousand units leaves megabytes of small free
         * chunks that glibc keeps below live ones. */
        if (!m->metrics_job && (usec - m->last_trim_usec >= TRIM_USEC ||
                                (m->trim_soon && usec - m->last_trim_usec >= TRIM_SOON_USEC))) {
                (void) malloc_trim(0);
                m->last_trim_usec = usec;
                m->trim_soon = false;
        }
        return 0;
}

/* Lines that would repeat every tick are logged once, then once every
 * LOG_REPEAT_WINDOW_USEC (log.h): a metrics file or state save that keeps
 * failing, a cgroup that cannot be opened. */
static int on_host_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        int r;

        log_repeat_begin();
        r = host_timer_pass(s, usec, userdata);
        log_repeat_end();
        return r;
}

static void on_units_due(struct bw_tick_entry *const *due, size_t n, uint64_t now, void *userdata) {
        log_repeat_begin();
        manager_units_due(due, n, now, userdata);
        log_repeat_end();
}

/* The runtime directory (metrics, the socket) was deleted under us
 * (systemd-tmpfiles, an operator): a reload creates it again, the metrics
 * are written again at the next Interval= and main.c puts the socket back
 * (Manager.reloaded). Until then each failed metrics write says so. */
static void manager_runtime_dir_again(Manager *m) {
        struct stat st;
        int r;

        if (stat(m->runtime_dir, &st) >= 0 || errno != ENOENT)
                return;
        r = mkdir_p(m->runtime_dir, 0755);
        if (r < 0) {
                log_error_errno(r, "Runtime directory %s is gone and cannot be created again: %s", m->runtime_dir,
                                STRERROR(r));
                return;
        }
        log_warning("Runtime directory %s was gone: created it again", m->runtime_dir);
        metrics_mark_changed(&m->metrics);
}

int manager_reload(Manager *m) {
        uint64_t now;
        int r;

        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        (void) sd_notifyf(false, "RELOADING=1\nSTATUS=Reloading configuration\nMONOTONIC_USEC=%" PRIu64, now);

        m->reloads++;
        m->latency.idle = false;        /* a class may have changed */
        /* Every drop-in read again and every unit matched is bulk work: not
         * within bwgovd's own budget (ten thousand units: 2.0 s instead of
         * 0.19, no sample taken meanwhile). main.c takes it again after
         * (Manager.reloaded). */
        if (bw_sched_policy(0) == BW_SCHED_DEADLINE)
                (void) bw_sched_fair_self();
        manager_runtime_dir_again(m);
        r = manager_load_config(m);
        if (r < 0) {
                m->reload_failures++;
                log_error("Reload failed, keeping the previous configuration");
        } else {
                store_set_keep_quotas(m->store, !m->config.global.restore_on_exit);
                r = manager_sync_units(m);
                manager_scan_prefixes(m, now);
                if (r < 0)
                        log_error_errno(r, "Failed to apply the new configuration: %s", STRERROR(r));
                else {
                        manager_apply_rqstat(m);
                        contention_sync(m->contention);
                        log_info("Configuration reloaded: %zu units", m->n_units);
                }
                (void) sd_event_source_set_time_relative(m->host_timer, 0);
        }
        if (m->reloaded)
                m->reloaded(m->reloaded_userdata);
        (void) sd_notify(false, "READY=1");
        manager_update_status(m, false);
        return r;
}

static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload(userdata);
        return 0;
}

/* ---- commands ---------------------------------------------------------------- */

int manager_set_paused(Manager *m, const char *name, bool paused) {
        Unit *u = manager_get_unit(m, name);

        if (!u)
                return -ENOENT;
        if (u->paused == paused)
                return 0;
        unit_set_paused(u, paused);
        metrics_mark_changed(&m->metrics);
        m->latency.idle = false;        /* a paused latency unit is back */
        contention_sync(m->contention);
        return 1;
}

/* ---- startup and shutdown ------------------------------------------------ */

static int on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        if (m->stopping)
                return 0;
        log_info("Received %s, stopping", si->ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
        (void) sd_notify(false, "STOPPING=1\nSTATUS=Restoring baselines");
        m->stopping = true;
        store_stop(m->store);
        /* The restore is bulk work: not within bwgovd's own budget
         * (main.c), which made ten thousand take 7.7 s instead of 0.8. */
        (void) bw_sched_fair_self();
        /* The baselines go back from the loop, a batch per iteration,
         * varlink and the watchdog served in between; it exits when done.
         * Without it (or failing to start it) the restore after the loop
         * does it all. */
        if (!m->config.global.restore_on_exit || manager_stop_begin(m) < 0)
                return sd_event_exit(m->event, 0);
        return 0;
}

/* File descriptors the daemon keeps for itself: a varlink connection
 * each (at most 256), BPF maps and programs, state and metrics files. */
#define FDS_RESERVED 512

int manager_new(Manager **ret) {
        size_t fd_budget;
        Manager *m;
        long n;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->host_pressure_fd = m->host_stat_fd = -1;
        m->host_other_wait = UINT64_MAX;   /* not known until the telemetry counts it */
        m->host_other_behind = UINT64_MAX;

        r = sd_event_default(&m->event);
        if (r < 0)
                goto fail;
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                goto fail;
        r = store_new(m->event, &m->state_saves, &m->store);
        if (r < 0)
                goto fail;
        m->fd_keep = UNIT_FILES_ALL;
        m->fd_share = 1000;
        r = ticker_new(m->event, on_units_due, m, &m->ticker);
        if (r < 0)
                goto fail;
        /* Without inotify the units are looked for once per Interval=. */
        r = cgwatch_new(m->event, manager_cgroup_made, m, &m->cgwatch);
        if (r < 0)
                log_warning_errno(r, "Cannot watch for new cgroups, looking for them once per interval: %s",
                                  STRERROR(r));
        if (quotawatch_new(&m->quotawatch) < 0)
                log_warning("Cannot watch quota files, reading them at every sample");
        (void) usage_gates_new(true, &m->gates);

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
                /* What the units may hold: the rest is the daemon's own
                 * (varlink clients, BPF maps, the state and metrics files). */
                if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
                        rl.rlim_cur = 1024;
                fd_budget = rl.rlim_cur > 2 * FDS_RESERVED ? rl.rlim_cur - FDS_RESERVED : rl.rlim_cur / 2;
        }

        n = sysconf(_SC_NPROCESSORS_ONLN);
        m->ncpus = n > 0 ? (unsigned) n : 1;
        m->unit_ctx = (struct unit_context) {
                .event = m->event,
                .ticker = m->ticker,
                .cgwatch = m->cgwatch,
                .quotawatch = m->quotawatch,
                .gates = m->gates,
                .quota_watch_said = &m->quota_watch_said,
                .config = &m->config,
                .store = m->store,
                .ncpus = m->ncpus,
                .can_trigger_any_window = have_cap_sys_resource(),
                .burst_supported = true,
                .host_over_limit = &m->host_over_limit,
                .stopping = &m->stopping,
                .park = true,
                .batch_started_usec = &m->batch_started_usec,
                .rest_at_baseline = &m->rest_at_baseline,
                .rqstat = &m->rqstat,
                .trigger_closes_left = &m->trigger_closes_left,
                .fd_limit_said = &m->fd_limit_said,
                .fds_held = &m->fds_held,
                .fd_keep = &m->fd_keep,
                .fd_share = &m->fd_share,
                .fd_budget = fd_budget,
                .hooks = &unit_hooks,
                .userdata = m,
        };
        m->latency.ctx = (struct latency_guard_context) {
                .ncpus = m->ncpus,
                .slice_supported = bw_slice_supported(),
                .rqstat = &m->rqstat,
        };
        *ret = m;
        return 0;
fail:
        manager_free(m);
        return r;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        m->outermost_dirty = true;      /* m->cgtree is about to hold freed units */
        for (size_t i = 0; i < m->n_units; i++)
                unit_free(m->units[i]);
        free(m->units);
        latency_guard_done(&m->latency);
        bw_cgtree_done(&m->cgtree);
        sd_event_source_disable_unref(m->metrics_source);
        metrics_job_free(m->metrics_job);
        metrics_cache_free(m->metrics_cache);
        sd_event_source_disable_unref(m->stop_source);
        ticker_free(m->ticker);
        manager_prefix_done(m);
        cgwatch_free(m->cgwatch);
        quotawatch_free(m->quotawatch);
        if (m->host_pressure_fd >= 0)
                close(m->host_pressure_fd);
        if (m->host_stat_fd >= 0)
                close(m->host_stat_fd);
        usage_gates_free(m->gates);
        contention_free(m->contention);
        claims_free(m->claims);
        free(m->claims_path);
        rqstat_free(m->rqstat);
        refused_free(m->refused);
        sd_event_source_disable_unref(m->host_timer);
        sd_event_source_disable_unref(m->latency_timer);
        sd_event_source_disable_unref(m->sigterm);
        sd_event_source_disable_unref(m->sigint);
        sd_event_source_disable_unref(m->sighup);
        sd_event_unref(m->event);
        sdintent_free(m->sdintent);
        store_free(m->store);
        bw_cg_root_free(m->root);
        bw_config_done(&m->config);
        array_done_and_free(m->old_configs, m->n_old_configs, bw_config_done);
        bw_config_error_done(&m->config_error);
        free_many(m->config_dir, m->state_dir, m->runtime_dir, m->cgroup_root,
                  m->host_pressure_path, m->host_stat_path, m->manifest_path);
        free(m);
        return NULL;
}

int manager_startup(Manager *m) {
        bool write_order_free = false;
        int r;

        r = manager_open_root(m);
        if (r < 0)
                return r;
        /* Before anything else: what a previous bwgovd left (levers, and
         * the baselines of units no longer configured) goes back. */
        r = manager_open_store(m, true);
        if (r < 0)
                return r;
        manager_reconcile_start(m);

        /* Only on the host: a fixture tree says nothing about the kernel. */
        if (!m->cgroup_root) {
                struct bw_kcaps caps = { 0 };

                r = kcheck_startup_run(&(struct kcheck_startup_args) {
                                        .mode = m->config.global.kernel_check,
                                        .manifest_path = m->manifest_path,
                                        .root = m->root,
                               }, &caps, NULL);
                if (r < 0)
                        return r;
                /* Unchecked (0): assume burst support, as before the check. */
                if (r > 0) {
                        m->unit_ctx.burst_supported = caps.has_burst;
                        write_order_free = caps.write_order_free;
                }
        }

        r = sdintent_new(!m->cgroup_root, &m->sdintent);
        if (r < 0)
                return log_oom();
        m->unit_ctx.sdintent = m->sdintent;

        r = mkdir_p(m->runtime_dir, 0755);
        if (r < 0)
                return log_error_errno(r, "Failed to create runtime directory %s: %s", m->runtime_dir, STRERROR(r));

        r = manager_claims_new(m);
        if (r < 0)
                return r;
        manager_apply_rqstat(m);
        manager_follow_refused(m, write_order_free);
        r = manager_sync_units(m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up units: %s", STRERROR(r));
        manager_scan_prefixes(m, clock_now_usec(CLOCK_MONOTONIC));
        r = contention_new(m->event, &m->config, (Unit *const *const *) &m->units, &m->n_units, m->ncpus,
                           m->store, &m->contention);
        if (r < 0)
                return log_oom();
        contention_sync(m->contention);

        r = sd_event_add_time_relative(m->event, &m->host_timer, CLOCK_MONOTONIC, 0,
                                       timer_accuracy_usec(host_interval(m)), on_host_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add host timer: %s", STRERROR(r));

        return 0;
}

int manager_run(Manager *m) {
        (void) sd_notify(false, "READY=1");
        manager_update_status(m, false);
        return sd_event_loop(m->event);
}

static size_t unrestored(Manager *m) {
        size_t n = 0;

        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];

                if (!u->cg || !u->adopted || !u->has_written || !unit_stop_write_failed(u))
                        continue;
                log_error("%s: baseline not restored (the write failed): its record stays in state.json, "
                          "the next bwgovd puts it back", u->name);
                n++;
        }
        return n;
}

size_t manager_shutdown(Manager *m) {
        size_t n;

        manager_count_stop(m);
        m->stopping = true;     /* saves below, not deferred to a loop that is over */
        (void) bw_sched_fair_self();
        store_stop(m->store);
        /* Room for the restore's opens and saves: the samples are over, so
         * the cgroups keep only their directories. */
        for (size_t i = 0; i < m->n_units; i++)
                if (m->units[i]->cg)
                        (void) bw_cg_release(m->units[i]->cg, _BW_CG_FILE_ALL - 1);
        contention_restore_all(m->contention, "stop");
        /* Levers are put back whatever RestoreOnExit= says: nothing stays
         * frozen, idle or pinned behind a daemon that is gone. */
        for (size_t i = 0; i < m->n_units; i++)
                unit_levers_restore(m->units[i], "stop");
        if (m->config.global.restore_on_exit) {
                manager_restore_all(m, "stop");
                /* A unit not adopted (yet) still has what a previous
                 * bwgovd wrote in place: its entry says what goes back. */
                for (size_t i = 0; i < m->n_units; i++)
                        if (!m->units[i]->adopted)
                                store_undo_quota(m->store, m->units[i]->name, clock_now_usec(CLOCK_MONOTONIC));
        }
        n = m->config.global.restore_on_exit ? unrestored(m) : 0;
        /* Undos that failed (and units no longer configured not put back
         * yet): tried again for a while; what is left stays recorded, for
         * `bwgovd --restore` (ExecStopPost=) and the next start. */
        n += manager_restore_left(m, STOP_RESTORE_BUDGET_USEC, "stop");
        (void) store_save(m->store);
        manager_write_metrics_now(m, clock_now_usec(CLOCK_MONOTONIC));
        return n;
}
