/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Manager's type, and nothing else: what the files split off manager.c
 * (manager-*.c) include to reach its fields. manager.h declares what
 * manager.c defines; manager.c includes the split files' headers and calls
 * them, none of them calls back into manager.c but manager-governor.c (the
 * commands: reload, pause), which manager.c does not use. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "bwgov/cgroup/cgtree.h"
#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/config/config-types.h"
#include "bwgov/law/history.h"
#include "bwgov/kernel/kcheck.h"
#include "bwgov/law/policy.h"
#include "bwgov/state/state.h"
#include "claims.h"
#include "guard/contention-sched.h"
#include "governor.h"
#include "source/sdintent.h"
#include "guard/latency-guard.h"
#include "metrics/metrics.h"
#include "store.h"
#include "source/rqstat-bpf.h"
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
        /* Configurations loaded before it that some unit may still point
         * into (units share their entries: manager_sync_units() frees them
         * when none does). */
        struct bw_config *old_configs;
        size_t n_old_configs;
        struct bw_config_error config_error;    /* why the last load failed (zero after a good one) */
        struct unit_context unit_ctx;   /* what every unit sees */
        Rqstat *rqstat;                 /* run-queue telemetry, NULL when there is none ... */
        char rqstat_reason[RQSTAT_REASON_MAX];          /* ... and why */
        Refused *refused;               /* quota writes refused for our burst, NULL when not followed ... */
        char refused_reason[REFUSED_REASON_MAX];        /* ... and why */

        Ticker *ticker;                 /* the units' samples, in batches (ticker.h) */
        sd_event_source *stop_source;   /* SIGTERM's restore, a batch per loop iteration */
        size_t stop_at;                 /* the next unit it restores */
        uint64_t write_usec;            /* a planned write's cost, measured (0: none yet; manager-units.c) */
        bool rest_at_baseline;          /* ParkAtBaseline= resolved (auto: by n_units × write_usec) */
        uint64_t batch_started_usec;    /* the ticker's batch of samples running since (0: none) */
        CgWatch *cgwatch;               /* new cgroups of absent units (cgwatch.h), NULL without inotify */
        QuotaWatch *quotawatch;         /* writes to quota files (quotawatch.h), NULL without inotify */
        bool quota_watch_said;          /* out of inotify watches, said */
        UsageGates *gates;              /* parents' usage for quiet units (usagegate.h), NULL: none */
        size_t parked;                  /* units parked at the last check (unit-tick.h) ... */
        size_t parked_no_wake;          /* ... of them, those whose first run wakes no one (unit-tick.c) */
        size_t unparked;                /* ... and present (a cgroup) but not parked */
        struct governor_counts pass_counts;     /* the units counted by that check (its walk) ... */
        struct manager_fd_census {
                size_t dirs, triggers;          /* ... and what manager_plan_fds() counts of them */
        } pass_census;
        struct governor_counts status_said;     /* what the last STATUS= said ... */
        bool status_sent;                       /* ... if one was sent */
        uint64_t parked_wakes;          /* ... woken by it since the start */
        uint64_t activity_gated;        /* samples that read nothing: the unit's activity flag was down */
        Unit **units;                   /* sorted by name */
        size_t n_units;
        bool any_searched;              /* a unit's cgroup is searched for by name (a service, a scope) */
        bool outermost_dirty;           /* a cgroup opened or closed: Unit.outermost to work out again */
        struct bw_cgtree cgtree;        /* the units with a cgroup path (valid while not dirty) */
        uint32_t cgtree_generation;     /* counted up by each rebuild, never 0 (Unit.place.cgtree_generation) */
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
        uint64_t host_wait_ns;          /* the others' wait (rqstat_read_others()) at the last host sample */
        uint64_t host_behind_ns;        /* ... its part behind governed work (behind_ns) */
        unsigned host_wait_loads;       /* rqstat_loads() then */
        bool has_host_wait;             /* host_wait_ns was read */
        int64_t host_wait_avg;          /* µs/s the tasks outside the governed groups waited, averaged */
        uint64_t host_other_wait;       /* ... not below 0; UINT64_MAX: not known (no telemetry) */
        int64_t host_behind_avg;        /* µs/s of CPU that ran governed work while they waited, averaged */
        uint64_t host_other_behind;     /* ... not below 0; UINT64_MAX when host_other_wait is */
        uint64_t units_generation;      /* grows whenever a unit's cgroup opens or closes */
        uint64_t host_units_generation; /* ... at the last host sample */
        bool host_over_limit;           /* bw_host_over_limit() at the last host sample */
        bool shedding;                  /* the last plan withdrew headroom from some unit */
        uint64_t last_slow_host_usec;   /* last rescan/metrics pass (every Interval=) */
        uint64_t last_trim_usec;        /* last malloc_trim() (every TRIM_USEC) */
        bool trim_soon;                 /* ... and sooner: units adopted, a state save, a metrics file */
        struct metrics_clock metrics;   /* when metrics.prom is due (MetricsInterval=, structural changes) */
        MetricsJob *metrics_job;        /* a metrics.prom on its way, a step per loop iteration */
        MetricsCache *metrics_cache;    /* the last one, open: its unchanged segments are copied */
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
        bool stop_counted;              /* units' write_failed cleared (unit_stop_begin()) */

        /* Called at the end of every reload (SIGHUP or Reload), the runtime
         * directory there again: main.c puts the varlink socket back if
         * it was deleted. NULL: nothing to do. */
        void (*reloaded)(void *userdata);
        void *reloaded_userdata;

        /* This Manager behind the governor API, as metrics.prom and the
         * varlink server see it: set by main.c (manager-governor.c's table
         * over this Manager). Its ops NULL: no metrics file is written. */
        Governor governor;
};
