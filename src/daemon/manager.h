/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bwgov/cgroupfs.h"
#include "bwgov/config.h"
#include "bwgov/history.h"
#include "bwgov/kernelcheck.h"
#include "bwgov/policy.h"
#include "bwgov/state.h"
#include "governor.h"

typedef struct Manager Manager;

/* One configured unit, present in the cgroup tree or not (yet). */
typedef struct Unit {
        Manager *manager;
        char *name;
        char *cgroup_path;              /* resolved, NULL until found */
        struct bw_cg *cg;               /* open handle, NULL while absent */
        struct bw_unit_config cfg;      /* deep copy of the configured values */

        sd_event_source *timer;
        sd_event_source *trigger_source;
        int trigger_fd;                 /* PSI trigger on cpu.pressure, -1 if none */
        uint64_t last_tick_usec;
        uint64_t deadline_usec;         /* the latest sample the last decision's horizon allows */
        uint64_t last_sdintent_usec;    /* systemd's CPUQuota= is asked at most once per Interval= */
        bool outermost;                 /* no governed unit's cgroup contains this one (host usage sum) */
        bool has_governed_descendants;  /* some governed unit's cgroup is below this one */
        bool has_ancestor;              /* ancestor_quota_usec was read */
        uint64_t ancestor_quota_usec;   /* nearest limited ancestor's quota in our period, BW_QUOTA_MAX if none */
        uint64_t ancestor_read_usec;

        bool adopted;
        struct bw_bandwidth baseline;   /* the contract, restored on stop */
        bool has_written;
        struct bw_bandwidth written;    /* what we last wrote and read back */

        struct bw_policy_params params;
        struct bw_policy_state pstate;
        struct bw_history *history;
        bool has_history_rule;
        enum bw_rule history_rule;      /* rule of the newest history entry */
        bool has_last;
        struct bw_decision last;
        struct bw_bandwidth last_current;       /* what the kernel held before `last` */
        bool last_applied;                      /* `last` was written */
        uint64_t last_realtime_usec;            /* CLOCK_REALTIME of `last` */
        unsigned shed_permille;                 /* the last shedding plan's share for this unit (shown) */
        unsigned shed_pending;                  /* ... not yet applied by a tick (applied once) */

        bool paused;

        /* What systemd intends for cpu.max (CPUQuota=), see sdintent.h. */
        bool has_sd_intent;
        uint64_t sd_quota_usec;
        uint64_t sd_period_usec;

        /* Counters for metrics and the CLI. */
        uint64_t ticks;
        uint64_t external_changes;
        uint64_t write_errors;
        uint64_t decisions_applied;
        struct bw_cpu_stat last_stat;
        bool has_last_stat;
} Unit;

struct Manager {
        sd_event *event;
        char *config_dir;               /* --config-dir, NULL for the default search path */
        char *state_dir;
        char *runtime_dir;
        char *cgroup_root;              /* --cgroup-root, NULL for the host */
        char *host_pressure_path;       /* /proc/pressure/cpu unless overridden */
        char *host_stat_path;           /* /proc/stat unless overridden */
        char *manifest_path;            /* --manifest, NULL for the installed one */

        sd_bus *bus;                    /* system bus, to follow systemd's CPUQuota= */
        bool bus_failed;

        struct bw_kcaps kcaps;          /* what the kernel can do (conservative until checked) */
        bool kcaps_known;

        int state_dir_fd;
        struct bw_cg_root *root;
        struct bw_config config;
        struct bw_state state;

        Unit **units;
        size_t n_units;

        sd_event_source *host_timer;
        sd_event_source *sigterm, *sigint, *sighup;
        sd_event_source *save_source;   /* one-shot timer: saves a dirty state (manager_mark_state()) */
        bool state_dirty;               /* memory differs from the state file in a way that
                                         * needs no write-ahead (see manager_mark_state()) */

        /* Host pressure and CPU time: last cumulative totals and their time. */
        bool has_host;
        uint64_t host_total_usec;       /* /proc/pressure/cpu some total */
        uint64_t host_busy_usec;        /* /proc/stat busy CPU time */
        bool has_host_busy;
        uint64_t host_time_usec;
        uint64_t host_some_rate;        /* µs/s of the last host sample */
        uint64_t host_busy_rate;        /* µs/s of CPU busy over all CPUs */
        uint64_t host_governed_usec;    /* the governed groups' usage at the last host sample */
        int64_t host_other_avg;         /* µs/s used outside the governed groups, averaged (signed) */
        uint64_t host_other_usage;      /* ... not below 0 */
        uint64_t units_generation;      /* grows whenever a unit's cgroup opens or closes */
        uint64_t host_units_generation; /* ... at the last host sample */
        bool host_over_limit;           /* bw_host_over_limit() at the last host sample */
        uint64_t last_slow_host_usec;   /* last rescan/metrics pass (every Interval=) */

        bool can_trigger_any_window;    /* CAP_SYS_RESOURCE: window need not be 2 s multiple */
        uint64_t last_state_save_usec;
        uint64_t ticks;
        uint64_t reloads;
        uint64_t reload_failures;
        uint64_t state_saves;
        unsigned ncpus;
        bool stopping;
};

int manager_new(Manager **ret);
Manager *manager_free(Manager *m);
int manager_load_config(Manager *m);
int manager_startup(Manager *m);
int manager_run(Manager *m);
/* SIGHUP: reload the configuration; a broken one is logged and the old one
 * kept (returns the error). */
int manager_reload(Manager *m);
/* What a unit is doing, one word for tables and JSON: "absent" (no
 * cgroup), "new" (not adopted yet), "paused", "exhausted" (at the baseline
 * for want of credit), "spending" (using credit with headroom in place),
 * "resting" (headroom in place, not spending), "baseline" (no headroom:
 * mode, CPUQuotaMax= or an ancestor leaves none). */
const char *unit_state_to_string(const Unit *u);
/* The kernel holds something other than the baseline (headroom, the
 * resting burst): the one definition of "boosted". */
bool unit_is_boosted(const Unit *u);
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
/* Restore every baseline that we changed; save the state. */
void manager_shutdown(Manager *m);
