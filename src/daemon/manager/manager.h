/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Manager: the event loop, the table of configured units, the host
 * sample and shedding, and what main.c, the varlink server, metrics and the
 * kernel check read. Units (unit.h) never see it. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "bwgov/cgroup/cgtree.h"
#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/config/config.h"
#include "bwgov/law/history.h"
#include "bwgov/kernel/kernelcheck.h"
#include "bwgov/law/policy.h"
#include "bwgov/state/state.h"
#include "claims.h"
#include "guard/contention-sched.h"
#include "governor.h"
#include "source/sdintent.h"
#include "guard/latency-guard.h"
#include "metrics/metrics.h"
#include "store.h"
#include "source/telemetry.h"
#include "source/refused.h"
#include "unit/unit.h"

typedef struct Manager Manager;

struct Manager {
        sd_event *event;
        char *config_dir;               /* --config-dir, NULL for the default search path */
        char *state_dir;
        char *runtime_dir;
        char *cgroup_root;              /* --cgroup-root, NULL for the host */
        char *host_pressure_path;       /* /proc/pressure/cpu unless overridden */
        char *host_stat_path;           /* /proc/stat unless overridden */
        char *manifest_path;            /* --manifest, NULL for the installed one */

        SdIntent *sdintent;             /* systemd's CPUQuota= over the system bus */

        Store *store;                   /* state.json and when it is saved */
        bool store_open;                /* its directory locked (store_lock()) and its state loaded */
        struct bw_cg_root *root;
        struct bw_config config;
        struct bw_config_error config_error;    /* why the last load failed (zero after a good one) */
        struct unit_context unit_ctx;   /* what every unit sees */
        Telemetry *telemetry;           /* run-queue telemetry, NULL when there is none ... */
        char telemetry_reason[TELEMETRY_REASON_MAX];    /* ... and why */
        Refused *refused;               /* quota writes refused for our burst, NULL when not followed ... */
        char refused_reason[REFUSED_REASON_MAX];        /* ... and why */

        Ticker *ticker;                 /* the units' samples, in batches (ticker.h) */
        sd_event_source *stop_source;   /* SIGTERM's restore, a batch per loop iteration */
        size_t stop_at;                 /* the next unit it restores */
        CgWatch *cgwatch;               /* new cgroups of absent units (cgwatch.h), NULL without inotify */
        QuotaWatch *quotawatch;         /* writes to quota files (quotawatch.h), NULL without inotify */
        bool quota_watch_said;          /* out of inotify watches, said */
        UsageGates *gates;              /* parents' usage for quiet units (usagegate.h), NULL: none */
        Unit **units;                   /* sorted by name */
        size_t n_units;
        bool any_searched;              /* a unit's cgroup is searched for by name (a service, a scope) */
        bool outermost_dirty;           /* a cgroup opened or closed: Unit.outermost to work out again */
        struct bw_cgtree cgtree;        /* the units with a cgroup path (valid while not dirty) */
        uint64_t cgtree_generation;     /* counted up by each rebuild (Unit.place.cgtree_generation) */
        Contention *contention;         /* Contention= over the units (contention-sched.h) */
        Claims *claims;                 /* one governor per cgroup (claims.h) ... */
        char *claims_path;              /* ... locked against other daemons there */
        bool claims_said;               /* the locks could not be taken: said once */
        bool runtime_dir_said;          /* the runtime directory is gone: said once */
        struct slice_watch *slice_watches;      /* slices watched for prefix units (manager-prefix.c) */
        size_t n_slice_watches;
        uint64_t prefix_scan_usec;      /* the last look for them */
        bool instances_gone;            /* a prefix unit's cgroup went: pruned at the next host pass */

        sd_event_source *host_timer;
        struct latency_guard latency;   /* latency protection (latency-guard.h) */
        uint64_t latency_generation;    /* units_generation at its last pass */
        sd_event_source *latency_timer; /* its fast passes (LATENCY_FAST_USEC), off while it is idle */
        sd_event_source *sigterm, *sigint, *sighup;

        /* Host pressure and CPU time: last cumulative totals and their time. */
        bool has_host;
        int host_pressure_fd, host_stat_fd;     /* held open (manager-host.c), -1 until read */
        uint64_t host_total_usec;       /* /proc/pressure/cpu some total */
        uint64_t host_busy_usec;        /* /proc/stat busy CPU time */
        uint64_t host_idle_usec;        /* /proc/stat idle (and iowait) CPU time */
        bool has_host_busy;
        uint64_t host_time_usec;
        uint64_t host_busy_time_usec;   /* when host_busy_usec and host_governed_usec were taken */
        uint64_t host_some_rate;        /* µs/s of the last host sample */
        uint64_t host_busy_rate;        /* µs/s of CPU busy over all CPUs */
        uint64_t host_governed_usec;    /* the governed groups' usage at the last host sample */
        int64_t host_other_avg;         /* µs/s used outside the governed groups, averaged (signed) */
        uint64_t host_other_usage;      /* ... not below 0 */
        int64_t host_excess_avg;        /* µs/s the governed groups use above their baselines, averaged */
        uint64_t host_governed_excess;  /* ... not below 0 */
        int64_t host_idle_avg;          /* µs/s of idle CPU over all CPUs, averaged */
        uint64_t host_idle;             /* ... not below 0 */
        bool host_averaged;             /* the averages above have a first value */
        uint64_t units_generation;      /* grows whenever a unit's cgroup opens or closes */
        uint64_t host_units_generation; /* ... at the last host sample */
        bool host_over_limit;           /* bw_host_over_limit() at the last host sample */
        bool shedding;                  /* the last plan withdrew headroom from some unit */
        uint64_t last_slow_host_usec;   /* last rescan/metrics pass (every Interval=) */
        struct metrics_clock metrics;   /* when metrics.prom is due (MetricsInterval=, structural changes) */
        MetricsJob *metrics_job;        /* a metrics.prom on its way, a step per loop iteration */
        sd_event_source *metrics_source; /* its steps */

        uint64_t ticks;
        bool fd_limit_said;
        size_t fds_held;                /* by the units (unit.h) */
        unsigned fd_keep;               /* the plan (manager_plan_fds()) */
        unsigned fd_share;
        unsigned trigger_closes_left;   /* per host pass (unit.h, samples) */
        uint64_t reloads;
        uint64_t reload_failures;
        uint64_t state_saves;           /* counted by the store */
        unsigned ncpus;
        bool stopping;
        bool stop_counted;              /* units' stop.write_errors_at taken (unit_stop_begin()) */

        /* Called at the end of every reload (SIGHUP or Reload), the runtime
         * directory there again: main.c puts the varlink socket back if
         * it was deleted. NULL: nothing to do. */
        void (*reloaded)(void *userdata);
        void *reloaded_userdata;
};

/* How long a stop goes on trying to put back what failed to go back (the
 * records stay for `bwgovd --restore` and the next start). */
#define STOP_RESTORE_BUDGET_USEC (2 * USEC_PER_SEC)

int manager_new(Manager **ret);
/* Load or unload the run-queue telemetry as Telemetry= says (only on the
 * host's own cgroup tree), and count every open unit cgroup in it. A
 * failure to load is logged with its reason and leaves the daemon without
 * telemetry (manager-telemetry.c). */
void manager_apply_telemetry(Manager *m);
/* Follow quota writes the kernel refuses for our burst (refused.h), once,
 * at startup: not needed where the kernel has the write-order patch
 * (write_order_free), nor on a cgroup tree other than the host's. */
void manager_follow_refused(Manager *m, bool write_order_free);
Manager *manager_free(Manager *m);
int manager_load_config(Manager *m);
/* The cgroup tree (--cgroup-root or the host's). Returns 0 or a negative
 * errno (logged). */
int manager_open_root(Manager *m);
/* Lock the state directory (made when create) and load its state. Returns
 * 1, 0 when !create and there is no state directory, a negative errno
 * (logged; -EBUSY: another bwgovd holds it). */
int manager_open_store(Manager *m, bool create);
int manager_startup(Manager *m);
int manager_run(Manager *m);
/* SIGHUP: create the runtime directory again if it was deleted, reload the
 * configuration (a broken one is logged and the old one kept: returns the
 * error; so is a --config-dir= that is gone), then Manager.reloaded. */
int manager_reload(Manager *m);
/* Look up a configured unit; NULL when unknown. */
Unit *manager_get_unit(Manager *m, const char *name);
/* Pause (restore the baseline, stop writing) or resume a unit. Returns 1
 * when changed, 0 when it already was so, -ENOENT for an unknown unit. */
int manager_set_paused(Manager *m, const char *name, bool paused);
/* The status counts (units, present, boosted, paused, spending): the one
 * count for the sd_notify STATUS line, GetStatus and metrics. */
void manager_counts(const Manager *m, struct governor_counts *ret);
/* The governor API (governor.h) over a Manager: userdata is the Manager. */
extern const struct governor_ops manager_governor_ops;
/* The units' table (manager-units.c). Take the configuration's units:
 * reconfigure kept ones, create new ones (due at once), unconfigure and
 * free dropped ones; m->units stays sorted by name. Returns 0 or a negative
 * errno (every unit kept). */
int manager_sync_units(Manager *m);
/* Units made from prefix directories (manager-prefix.c): look for their
 * cgroups below the root and every slice, and watch the slices; a new
 * directory in a watched one (returns false when wd is not one); the
 * units whose cgroup went, freed (not while stopping); the configurations
 * of the ones a reload keeps (*ret malloc'd, its items too). */
void manager_scan_prefixes(Manager *m, uint64_t now);
bool manager_prefix_dir_event(Manager *m, int wd, const char *name, bool made);
void manager_prune_instances(Manager *m);
int manager_instance_configs(Manager *m, struct bw_unit_config **ret, size_t *ret_n);
void manager_prefix_done(Manager *m);
/* The configuration's search directories (buf: room for --config-dir=). */
void manager_config_dirs(Manager *m, const char *const **ret, const char *buf[2]);
/* One governor per cgroup (manager-claims.c, claims.h): the claims and
 * where their locks live (0 or -ENOMEM, logged); the units' claim hook
 * (unit_hooks.claim). */
int manager_claims_new(Manager *m);
int manager_claim(Unit *u, const char *path, dev_t dev, ino_t ino, bool take, void *userdata);
/* Which units have no governed unit above them, which have some below. */
void manager_update_outermost(Manager *m);
bool manager_outermost_add(Manager *m, Unit *u);
/* Which cgroup files the units keep open between samples, so that they
 * stay within the file descriptor budget (every Interval=). */
void manager_plan_fds(Manager *m);
/* The host timer's period: ActiveInterval=, at most Interval=. */
uint64_t host_interval(const Manager *m);
/* mkdir -p: each missing directory of path made with mode. Returns 0 or a
 * negative errno. */
int mkdir_p(const char *path, mode_t mode);
/* The host sample and the shedding plan (manager-host.c), every
 * host_interval(). */
void manager_sample_host(Manager *m);
void manager_plan_shedding(Manager *m, uint64_t now);
/* The latency guard's pass from the host timer at usec, when it is idle
 * and something changed, starting its own fast timer once it has work
 * (manager-latency.c). */
void manager_latency_pass(Manager *m, uint64_t usec);
/* SIGTERM: restore every unit's baseline from the loop, TICKER_BATCH
 * units per iteration, then exit the loop. Returns 0 or a negative errno
 * (then nothing was started). */
int manager_stop_begin(Manager *m);
/* Note each unit's write errors as the stop begins (once; the stop and
 * manager_shutdown() call it). */
void manager_count_stop(Manager *m);
/* Restore every adopted unit's baseline, the intents saved together. */
void manager_restore_all(Manager *m, const char *why);
/* The ticker's callback (ticker.h): adopt a batch's new units together,
 * then sample each. */
void manager_units_due(struct bw_tick_entry *const *due, size_t n, uint64_t now, void *userdata);
/* cgwatch's callback (cgwatch.h): an absent unit's cgroup was made. */
void manager_cgroup_made(int wd, const char *name, bool made, void *userdata);
/* What the manager puts back itself (manager-restore.c, restore.h): at
 * start, before any unit is made, every lever and slice recorded and the
 * baselines of units the configuration no longer names; while running, the
 * undos due after their back-off; at an exit, what is left, for up to
 * budget_usec (returns how many units still hold something; each logged).
 * manager_restore_only(): with no configuration (it cannot be loaded, or
 * `bwgovd --restore`), everything the state directory records, the
 * baselines too unless RestoreOnExit=no was saved; 0 when all is back (or
 * nothing was recorded), -EAGAIN when something is left (logged), another
 * negative errno (-EBUSY: another bwgovd holds the state directory). */
void manager_reconcile_start(Manager *m);
void manager_retry_restores(Manager *m, uint64_t now);
size_t manager_restore_left(Manager *m, uint64_t budget_usec, const char *why);
int manager_restore_only(Manager *m, const char *why);
/* The same with the root and the state open already (a start that fails). */
int manager_restore_exit(Manager *m, const char *why);
/* Restore every baseline that we changed; save the state. Returns the
 * number of units whose baseline a write error kept from being put back
 * (each logged; their records stay in state.json for the next start). */
size_t manager_shutdown(Manager *m);
