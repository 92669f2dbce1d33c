/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The narrow API that IPC (governor-varlink.c) and metrics (metrics.c) see of
 * the governor: plain snapshot structs and a table of operations behind
 * `void *userdata`. They never see the Manager or a Unit; the manager
 * implements the table (manager-governor.c). A header module: it includes
 * only lib headers.
 *
 * Strings in a snapshot point into the governor: valid until control returns
 * to the event loop (the daemon is one thread). What an operation allocates
 * is freed with the *_done() helper below. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/config/config.h"
#include "bwgov/cgroup/cpumax.h"
#include "bwgov/cgroup/cpustat.h"
#include "bwgov/law/history.h"
#include "bwgov/kernel/kcheck.h"
#include "bwgov/kernel/kreport.h"
#include "bwgov/law/latency.h"
#include "bwgov/cgroup/lever.h"
#include "bwgov/law/policy.h"
#include "bwgov/telemetry/rqstat-abi.h"

/* How many units are in each condition; one definition of each. */
struct governor_counts {
        size_t units;                   /* configured */
        size_t present;                 /* cgroup found and open */
        size_t boosted;                 /* the kernel holds more than the baseline (unit_is_boosted()) */
        size_t paused;
        size_t spending;                /* state "spending": using credit with headroom in place */
};

struct governor_status {
        struct governor_counts counts;
        uint64_t realtime_usec;         /* CLOCK_REALTIME when this snapshot was taken */
        uint64_t ticks;                 /* control-loop passes over all units */
        enum bw_cg_layout layout;
        const char *bandwidth_root;     /* "" when unknown */
        uint64_t interval_usec;         /* global Interval= */
        enum bw_mode mode;              /* global Mode= */
        uint64_t reloads;
        uint64_t reload_failures;
        uint64_t state_saves;
        int state_error;                /* the last state save's (negative errno), 0 when it worked */
        uint64_t host_pressure_rate;    /* µs/s of host PSI some, last host sample */
        uint64_t host_pressure_limit;   /* HostPressureLimit=, µs/s */
        uint64_t host_other_usage_rate; /* µs/s used outside the governed groups, not below 0 */
        uint64_t host_other_wait_rate;  /* µs/s their tasks waited for a CPU; UINT64_MAX: not known */
        uint64_t host_other_behind_rate; /* ... of which µs/s of CPU ran governed work; UINT64_MAX: not known */
        uint64_t host_governed_excess_rate;     /* µs/s the governed groups use above their baselines */
        uint64_t host_idle_rate;        /* µs/s of idle CPU, over all CPUs */
        bool host_over_limit;
        bool telemetry;                 /* the run-queue BPF programs are loaded */
        const char *telemetry_reason;   /* why not, "" when they are */
        size_t telemetry_tracked;       /* cgroups they count */
        bool refused_writes;            /* quota writes refused for our burst are followed (refused.h) */
        const char *refused_writes_reason;      /* why not, "" when they are */
        uint64_t refused_writes_seen;   /* such writes told by the kernel */
        uint64_t heap_bytes;            /* the daemon's heap in use (malloc's count, not pages) */
        size_t usage_gates;             /* parents whose usage is read for their children (usagegate.h) */
        uint64_t gated_samples;         /* samples that read nothing: the parent had not run */
        uint64_t activity_gated_samples;        /* ... the unit's own tasks had not run (BPF) */
        size_t parked;                  /* units parked at the last check (unit-tick.h) */
        uint64_t parked_wakes;          /* parked units that had to tick: their parent had run */
};

/* Latency protection and contention as they stand for one unit. */
struct governor_protection {
        enum bw_class cls;              /* Class= in effect */
        uint64_t latency_target_usec;   /* LatencyTarget= in effect, 0 unless Class=latency */
        uint64_t guarantee;             /* CPUGuarantee= after overcommit scaling, µs/s */
        enum bw_lat_level level;        /* its rung (Class=latency) */
        bool has_p99;
        uint64_t p99_usec;              /* the latest window's run-queue wait p99 (interpolated) */
        uint64_t samples, missed;       /* windows seen, and those over the target */
        uint64_t changes;               /* times its rung changed */
        bool hold;                      /* headroom held at the contract for a latency unit */
        const char *note;               /* what is done to it and why, "" when nothing */
        enum bw_cg_layout layout;       /* of the values below */
        const char *levers[_BW_LEVER_MAX];      /* native values held, NULL where nothing is held */
        uint64_t slice_usec;            /* EEVDF slice its threads have from bwgovd, 0 none */
        size_t slice_threads;
};

/* One line of `bwgovctl status`: who the unit is and what the kernel holds. */
struct governor_unit_summary {
        const char *name;
        const char *cgroup;             /* the resolved path, NULL until found */
        enum bw_mode mode;              /* effective: the unit's Mode= or the global one */
        const char *state;              /* one word, see unit_state_to_string() */
        bool present;
        bool adopted;
        bool paused;
        bool boosted;
        struct bw_bandwidth baseline;   /* the contract; valid when adopted */
        struct bw_bandwidth current;    /* what we last wrote, else the baseline; valid when adopted */
        bool has_rule;
        enum bw_rule rule;              /* of the last decision */
        uint64_t ticks;
        struct governor_protection prot;
};

/* The configured values, with the intervals in effect. */
struct governor_unit_config {
        struct bw_unit_config cfg;      /* a shallow copy: its strings point into the governor */
        uint64_t interval_usec;
        uint64_t active_interval_usec;
};

/* The credit bucket as it stands; valid when the unit is adopted. */
struct governor_unit_credit {
        uint64_t credit_usec;
        uint64_t debt_usec;
        uint64_t credit_max_usec;       /* in effect (policy parameters), not as configured */
        bool exhausted;
};

/* The last decision and what it was taken against. */
struct governor_decision {
        struct bw_decision d;           /* rule, target, inputs, credit and headroom, the sentence */
        uint64_t realtime_usec;         /* CLOCK_REALTIME of the decision */
        struct bw_bandwidth old;        /* what the kernel held before it */
        bool applied;                   /* written */
        uint64_t target_throttle;       /* policy parameters in effect */
        uint64_t target_pressure;
        uint64_t target_wait_p99_usec;
        uint64_t credit_max_usec;
        uint64_t quota_limit_usec;      /* BW_QUOTA_MAX for none */
};

struct governor_unit_counters {
        struct bw_cg_write_stats io;    /* cgroup file writes; valid when the unit is present */
        uint64_t external_changes;
        uint64_t write_errors;
        uint64_t decisions_applied;
};

struct governor_unit {
        struct governor_unit_summary summary;
        struct governor_unit_config config;
        uint64_t quota_limit_usec;      /* the largest quota and the contract's burst; valid when adopted */
        uint64_t burst_limit_usec;
        struct governor_unit_credit credit;
        bool has_decision;
        struct governor_decision decision;
        struct governor_unit_counters counters;
        bool has_stat;
        struct bw_cpu_stat stat;        /* the last cpu.stat sample */
        unsigned shed_permille;         /* the last host shedding plan's share of the headroom */
        bool has_rq;
        struct bw_rq_counters rq;       /* run-queue telemetry, cumulative as of the unit's last sample */
        size_t history_entries;
        size_t history_capacity;
};

struct governor_history {
        const char *unit;
        size_t capacity;
        uint64_t recorded;              /* decisions ever recorded; minus capacity = dropped */
        struct bw_history_entry *entries;       /* bw_history_select(): oldest first */
        size_t n_entries;
};

static inline void governor_history_done(struct governor_history *h) {
        free(h->entries);
        h->entries = NULL;
        h->n_entries = 0;
}

/* A unit's run-queue telemetry (GetLatency). */
struct governor_latency {
        const char *unit;
        bool available;
        const char *reason;             /* why not, when !available */
        uint64_t since_realtime_usec;   /* when its cgroup was first counted */
        struct bw_rq_counters total;    /* since then, read now */
        bool has_window;
        struct bw_rq_counters window;   /* over the unit's latest sample interval */
        uint64_t window_usec;
};

/* Why a reload was rejected (bw_config_error's, borrowed). */
struct governor_reload_error {
        const char *file;
        unsigned line;
        const char *key;
        const char *message;
};

/* Every operation returns 0 (or what it says) or a negative errno; a unit
 * name that is not configured gives -ENOENT. Outputs are untouched on
 * failure. */
struct governor_ops {
        int (*get_status)(void *userdata, struct governor_status *ret);
        /* At most `limit` configured units (SIZE_MAX: all), sorted by name;
         * over the limit, the units doing something (any state but resting
         * and baseline) are chosen first. *ret is to free(); *ret_total (if
         * not NULL) is the number of configured units. */
        int (*list_units)(void *userdata, size_t limit, struct governor_unit **ret, size_t *ret_n,
                          size_t *ret_total);
        int (*get_unit)(void *userdata, const char *name, struct governor_unit *ret);
        /* At most max units whose names sort after AFTER (NULL: from the
         * first), in name order, into out[]: *ret_n of them (0 past the
         * end), of *ret_total units in all. A caller taking them in pieces
         * goes on after the last name it got: units made or gone meanwhile
         * (containers, a reload) need no start over. */
        int (*snapshot_units)(void *userdata, const char *after, size_t max, struct governor_unit *out,
                              size_t *ret_n, size_t *ret_total);
        /* -ENOENT for an unknown unit (checked first), -EINVAL for a limit
         * below 1 (see bw_history_select()), -ENOMEM. */
        int (*get_history)(void *userdata, const char *name, const struct bw_history_query *q,
                           struct governor_history *ret);
        /* The unit's summary and its last decision (*ret_has_decision false
         * before the first one). */
        int (*explain)(void *userdata, const char *name, struct governor_unit_summary *ret_summary,
                       bool *ret_has_decision, struct governor_decision *ret_decision);
        /* A unit's run-queue telemetry; available false (with the reason)
         * when there is none for it. */
        int (*get_latency)(void *userdata, const char *name, struct governor_latency *ret);
        /* The kernel check (bw_kreport_run(), no behaviour probes): reads the
         * manifest, hashes its files, parses BTF: tens of ms. *ret is to
         * bw_kreport_free(). -ENOMEM. */
        int (*check_kernel)(void *userdata, struct bw_kreport **ret);
        /* Reload the configuration; a rejected one leaves the old in place and
         * returns its error, with *ret_error saying where (strings valid
         * until the next reload; file, key NULL when not known, line 0). */
        int (*reload)(void *userdata, struct governor_reload_error *ret_error);
        /* Returns 1 when changed, 0 when it already was so, -ENOENT. */
        int (*set_paused)(void *userdata, const char *name, bool paused);
};

typedef struct Governor {
        const struct governor_ops *ops;
        void *userdata;
} Governor;
