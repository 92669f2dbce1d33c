/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Unit and what it holds: the types alone, for the files of
 * src/daemon/unit/ that need its fields and none of unit.c's functions
 * (unit-scope.c), and for unit.h, which declares what unit.c defines.
 * What spans the units (struct unit_context, unit_hooks) is here too: a
 * Unit points to its context. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/config/config-types.h"
#include "bwgov/law/history.h"
#include "bwgov/law/policy.h"
#include "bwgov/telemetry/refused-abi.h"
#include "source/sdintent.h"
#include "store.h"
#include "source/cgwatch.h"
#include "source/quotawatch.h"
#include "source/ticker.h"
#include "source/usagegate.h"
#include "unit-levers.h"
#include "unit-sample.h"
#include "unit-rqstat.h"

typedef struct Unit Unit;

/* What a unit adds to the counters the manager keeps for all units: a
 * delta, handed to hooks->count the moment it happens (unit_count()), not
 * written through the context. Not once at the tick's end: the descriptors
 * held and the said-once lines are read by the next decision, maybe in the
 * same tick (unit_fd_economy() right after a sample opened files, a second
 * unit_fd_error()), and change outside ticks too (a cgroup closed by a
 * reload, unit_free(), a trigger's POLLERR). */
struct unit_counters {
        uint64_t ticks;                 /* decisions taken */
        int64_t fds;                    /* file descriptors opened (+) or closed (-) */
        unsigned trigger_closes;        /* PSI triggers closed to save descriptors */
        bool fd_limit_said;             /* the out-of-descriptors line was logged */
        bool quota_watch_said;          /* the out-of-inotify-watches line was logged */
        unsigned activity_gated;        /* samples that read nothing: its activity flag was down (BPF) */
};

/* What spans the units: implemented by the manager. */
struct unit_hooks {
        /* Claim the cgroup at path, of identity (dev, ino), for u (take),
         * or let it go (claims.h). Returns 0, or a negative errno when
         * another unit or another bwgovd governs it (logged, once per
         * unit). */
        int (*claim)(Unit *u, const char *path, dev_t dev, ino_t ino, bool take, void *userdata);
        /* u's cgroup was opened or closed. */
        void (*cgroup_changed)(Unit *u, void *userdata);
        /* u was adopted (unit_adopt()). */
        void (*adopted)(Unit *u, void *userdata);
        /* u's quota is about to go down to quota_usec per period_usec: on
         * cgroup v1 the governed cgroups below it that hold more must go
         * down first (unit_lower_to()). */
        void (*lowering)(Unit *u, uint64_t quota_usec, uint64_t period_usec, void *userdata);
        /* u's quota or period changed: the governed units below it read
         * their ancestor's quota again. */
        void (*quota_changed)(Unit *u, void *userdata);
        /* u adds delta to the manager's counters (unit_counters). */
        void (*count)(Unit *u, const struct unit_counters *delta, void *userdata);
};

/* What a unit sees. Owned by the manager; the pointers outlive the units. */
struct unit_context {
        sd_event *event;
        Ticker *ticker;                 /* every unit's next sample */
        CgWatch *cgwatch;               /* new cgroups (NULL: looked for each Interval= only) */
        QuotaWatch *quotawatch;         /* writes to quota files (NULL: light samples read them) */
        UsageGates *gates;              /* parents' usage (NULL: every light sample reads its own) */
        const struct bw_config *config;
        struct bw_cg_root *root;
        Store *store;
        SdIntent *sdintent;
        unsigned ncpus;
        bool can_trigger_any_window;    /* CAP_SYS_RESOURCE: PSI window need not be a 2 s multiple */
        bool burst_supported;           /* false when the kernel check found no burst file */
        const bool *host_over_limit;    /* the last host sample's verdict (the manager's) */
        const bool *stopping;           /* SIGTERM: baselines going back, no more samples */
        bool park;                      /* a still unit may park: the manager checks it every Interval= */
        const uint64_t *batch_started_usec; /* the ticker's batch running since (0: none): parking's writes */
        const bool *rest_at_baseline;   /* ParkAtBaseline= as the manager resolved it (NULL: no) */
        Rqstat *const *rqstat;          /* the run-queue telemetry, NULL when there is none (the manager's) */
        /* The manager's counters, read only: a unit adds to them through
         * hooks->count (unit_counters). */
        const bool *fd_limit_said;      /* the one log line for running out of file descriptors */
        const bool *quota_watch_said;   /* the one log line for running out of inotify watches */
        const size_t *fds_held;         /* by all units' cgroups and triggers */
        size_t fd_budget;               /* what they may hold: RLIMIT_NOFILE less the daemon's own */
        const unsigned *fd_keep;        /* BW_CG_FILE_* a unit keeps open after its sample ... */
        const unsigned *fd_share;       /* ... if its fds.rank is below this (permille), else none */
        const unsigned *trigger_closes_left; /* PSI trigger closes allowed until the next host pass (samples) */
        const struct unit_hooks *hooks;
        void *userdata;                 /* for the hooks */
};

/* The nearest limited ancestor's quota, read at most once per Interval=. */
struct unit_ancestor {
        bool has;                       /* quota_usec was read */
        uint64_t quota_usec;            /* in our period, BW_QUOTA_MAX if none */
        uint64_t read_usec;
};

/* A Subgroup= unit's own cgroup, governed with the subgroup while it holds
 * the same quota (podman 5: unit-scope.c). */
struct unit_scope {
        struct bw_cg *cg;               /* open while the unit's cgroup is */
        uint64_t ours_quota_usec;       /* its quota when last found tied or written by us, in its period (has_ours) */
        uint64_t foreign_quota_usec;    /* someone else's limit found there, while it stays (has_foreign) */
        struct unit_ancestor ancestor;  /* the nearest limited ancestor above it, in the unit's period */
        bool tied;                      /* its quota follows the unit's */
        bool has_ours;
        bool has_foreign;
};

/* Where the unit's cgroup is among the governed ones: the manager's
 * cgtree pass works it out, unit_set_place() and its siblings write it. */
struct unit_place {
        uint32_t cgtree_generation;     /* in the manager's cgtree of this generation (0: never) */
        bool instance;                  /* made from prefix directories for a cgroup found (manager-prefix.c) */
        bool outermost;                 /* no governed unit's cgroup contains this one (host usage sum) */
        bool has_governed_descendants;  /* some governed unit's cgroup is below this one */
};

/* Its PSI trigger on cpu.pressure (psi-trigger.h). */
struct unit_trigger {
        sd_event_source *source;
        int fd;                         /* -1 if none */
        bool refused;                   /* the open cgroup cannot have one (not asked again) */
        uint64_t near_usec;             /* when a sample last found it near its quota */
};

/* What systemd intends for cpu.max (CPUQuota=), see sdintent.h. */
struct unit_sd_intent {
        uint64_t quota_usec;
        uint64_t asked_usec;            /* asked at most once per Interval= */
        uint32_t period_usec;           /* saturated: the kernel takes 1 s at most */
        bool has;
};

/* The last decision and what came of it. */
struct unit_prev {
        struct bw_decision_kept decision; /* if has (history.h: 48 bytes less than a bw_decision) */
        struct bw_bandwidth current;    /* what the kernel held before `decision` */
        uint64_t realtime_usec;         /* CLOCK_REALTIME of `decision` */
        bool has;
        bool applied;                   /* `decision` was written */
        /* The rule of the history's newest entry (here, not in unit_hist:
         * this struct's padding holds it). */
        bool has_hist_rule;
        uint8_t hist_rule;              /* enum bw_rule */
};

/* The unit's history ring (the rule of its newest entry: unit_prev). */
struct unit_hist {
        struct bw_history log;          /* its entries allocated as they come */
};

/* Headroom caps others ask for (unit_set_headroom_cap()). */
struct unit_caps {
        unsigned shed_permille;         /* the last shedding plan's share for this unit (shown) */
        unsigned shed_pending;          /* ... not yet applied by a tick (applied once) */
        bool latency_hold;              /* throughput/best-effort: headroom held for a latency unit */
};

/* Counters for metrics and the CLI. */
struct unit_stats {
        uint64_t ticks;
        uint64_t external_changes;
        uint64_t write_errors;
        uint64_t decisions_applied;
        uint64_t light_samples;         /* light samples taken */
};

/* A quota write the kernel refused for our burst (refused.h), to be put
 * in place at the unit's next tick. */
struct unit_refused {
        uint64_t quota_usec, period_usec, burst_usec;
        uint32_t tgid;
        char comm[BW_REFUSED_COMM_MAX];
};

/* What the store holds of it (store.h), if Unit.mirror_recorded (mirrored
 * into the store since adoption): its credit and debt then. */
struct unit_mirror {
        uint64_t credit_usec;
        uint64_t debt_usec;
};

/* One configured unit, present in the cgroup tree or not (yet). Only the
 * unit module (src/daemon/unit/) assigns its fields (scripts/check-layout). */
struct Unit {
        const struct unit_context *ctx;
        char *name;
        /* Resolved, NULL until found: while its cgroup is open, the open
         * cgroup's own path (cg->path, not a copy: ten thousand paths
         * were 0.6 MB), else a copy of its own (unit_cgroup_path_owned()). */
        const char *cgroup_path;
        struct bw_cg *cg;               /* open handle, NULL while absent */
        /* The configured values: the configuration's entry (ctx->config),
         * or own_cfg, a copy, for a unit that has none there. */
        const struct bw_unit_config *cfg;
        struct bw_unit_config *own_cfg;
        struct unit_scope *scope;       /* Subgroup=: the cgroup above, tied or not, while open (unit-scope.c) */
        struct unit_ancestor ancestor;
        int watch_wd;                   /* its parent directory's cgwatch while absent, or -1 */
        struct {
                bool owner;             /* "governed by unit X" logged (unit_resolve()) */
                bool absent;            /* "its cgroup is not there" logged */
        } said;
        bool adopted;
        bool has_written;               /* written holds a value */
        bool paused;
        /* The flags of the structs below, and the small ones, here: ten
         * thousand units, no padding after each. */
        bool restore_again;             /* the stop: its restore was not done, or an ancestor lowered it since */
        bool mirror_recorded;           /* mirror holds what the store has */
        bool write_failed;              /* a bandwidth write failed since the stop began (unit_stop_begin()) */
        struct unit_place place;
        struct {
                uint16_t held;          /* file descriptors held, as in the manager's count */
                uint16_t rank;          /* 0..999, fixed: which units keep files when only some can */
        } fds;

        struct bw_tick_entry tick;      /* its next sample (unit_of_tick()) */
        struct unit_sampler sampler;
        struct unit_trigger trigger;
        struct quota_watch quota_watch; /* writes to its quota file, seen without reading it */

        struct bw_bandwidth baseline;   /* the contract, restored on stop */
        struct bw_bandwidth written;    /* what we last wrote and read back (has_written) */
        struct unit_sd_intent sd;

        struct bw_policy_state pstate;
        struct unit_prev prev;
        struct unit_hist hist;
        struct unit_caps caps;
        enum bw_mode params_mode;       /* the mode the law last had (unit_update_params()) */

        /* The last quota write the kernel refused for our burst (refused.h),
         * put in place at the next tick (unit-intent.c); NULL: none. */
        struct unit_refused *refused;

        struct unit_stats stats;
        struct unit_mirror mirror;
        struct unit_rqstat rq;       /* run-queue telemetry of the cgroup, while open */
        struct unit_levers lv;          /* weight, idle, freezer, cpuset, slices (unit-levers.h) */
        /* The latency guard keeps its own state of the unit (latency-guard.h). */
};
