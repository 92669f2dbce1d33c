/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The configuration's types alone: its bounds, enums and structs, for the
 * files that read its fields and call none of config.c's functions
 * (config-claims.c); config.h includes it and declares what config.c
 * defines (loading, the defaults, the enums' names). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds enforced by the loader. */
#define BW_INTERVAL_MIN_USEC        UINT64_C(100000)        /* Interval= 100ms */
#define BW_INTERVAL_MAX_USEC        UINT64_C(3600000000)    /* Interval= 1h */
#define BW_TARGET_WAIT_MAX_USEC     UINT64_C(10000000)      /* TargetWaitP99= 10s */
#define BW_PRESSURE_WINDOW_MIN_USEC UINT64_C(500000)        /* PressureWindow= 500ms (kernel PSI trigger minimum) */
#define BW_PRESSURE_WINDOW_MAX_USEC UINT64_C(10000000)      /* PressureWindow= 10s (kernel PSI trigger maximum) */
#define BW_CREDIT_MAX_LIMIT_USEC    UINT64_C(86400000000)   /* CreditMax= 24h */
#define BW_CPU_PERCENT_LIMIT        UINT64_C(10000000000)   /* CPUQuota(Max)= 1000000% (10000 CPUs), µs/s */
#define BW_HISTORY_SIZE_MAX         65536
#define BW_CONTENTION_INTERVAL_MIN_USEC UINT64_C(100000)    /* ContentionInterval= 100ms */
#define BW_CONTENTION_INTERVAL_MAX_USEC UINT64_C(60000000)  /* ContentionInterval= 1min */
#define BW_METRICS_INTERVAL_MIN_USEC UINT64_C(100000)       /* MetricsInterval= 100ms, as Interval= */
#define BW_METRICS_INTERVAL_MAX_USEC UINT64_C(3600000000)   /* MetricsInterval= 1h */
#define BW_LATENCY_TARGET_MIN_USEC  UINT64_C(10)            /* LatencyTarget= 10us */
#define BW_LATENCY_TARGET_DEFAULT_USEC UINT64_C(5000)       /* LatencyTarget= of Class=latency when unset */
#define BW_PRIORITY_MIN             (-1000)
#define BW_PRIORITY_MAX             1000

enum bw_mode {
        BW_MODE_OFF = 0,
        BW_MODE_OBSERVE,
        BW_MODE_BURST,
        BW_MODE_ELASTIC,
        _BW_MODE_MAX,
        _BW_MODE_INVALID = -1,
};

enum bw_kernel_check {
        BW_KERNEL_CHECK_OFF = 0,
        BW_KERNEL_CHECK_WARN,
        BW_KERNEL_CHECK_STRICT,
        _BW_KERNEL_CHECK_MAX,
        _BW_KERNEL_CHECK_INVALID = -1,
};

/* Class= of a unit: what bwgov may do to it for other units' sake.
 *   latency      has a LatencyTarget=; bwgov raises its weight, shortens its
 *                threads' slices and holds the others back while it misses it;
 *   throughput   the default: keeps its contract, its boosts may be
 *                withdrawn for a latency group; takes part in Contention=;
 *   best-effort  may also be put below its contract: cpu.idle while a
 *                latency group misses its target. */
enum bw_class {
        BW_CLASS_THROUGHPUT = 0,
        BW_CLASS_LATENCY,
        BW_CLASS_BEST_EFFORT,
        _BW_CLASS_MAX,
        _BW_CLASS_INVALID = -1,
};

/* Contention= among throughput-class units that together want more CPU than
 * the host has: the kernel's sharing (share), freezer gang scheduling
 * (gang: one group runs at a time, ContentionInterval= each), or disjoint
 * cpusets sized by weight (pin). */
enum bw_contention {
        BW_CONTENTION_SHARE = 0,
        BW_CONTENTION_GANG,
        BW_CONTENTION_PIN,
        _BW_CONTENTION_MAX,
        _BW_CONTENTION_INVALID = -1,
};

/* ParkAtBaseline=: whether an idle unit rests at its baseline (auto: when
 * restoring every governed cgroup would take the stop more than a second,
 * at the cost the daemon measured for its writes). */
enum bw_park {
        BW_PARK_NO = 0,
        BW_PARK_YES,
        BW_PARK_AUTO,
        _BW_PARK_MAX,
        _BW_PARK_INVALID = -1,
};


/* [Governor] in bwgov.conf */
struct bw_global_config {
        uint64_t interval_usec;              /* Interval=, default 1s, [100ms, 1h] */
        enum bw_mode mode;                   /* Mode=, default for units, default elastic */
        uint64_t host_pressure_limit;        /* HostPressureLimit=, µs/s of host PSI some, default 40% */
        uint64_t pressure_window_usec;       /* PressureWindow=, PSI trigger window, default 2s, [500ms, 10s] */
        enum bw_kernel_check kernel_check;   /* KernelCheck=, default warn */
        bool restore_on_exit;                /* RestoreOnExit=, default yes */
        uint64_t history_size;               /* HistorySize=, decisions kept per unit, default 256, [1, 65536] */
        bool telemetry;                      /* Telemetry=, default yes: load the run-queue BPF programs */
        uint64_t active_interval_usec;       /* ActiveInterval=, sampling of groups spending credit,
                                              * default 250ms, [100ms, 1h] */
        enum bw_contention contention;       /* Contention=, default share */
        uint64_t contention_interval_usec;   /* ContentionInterval=, gang slot, default 1s, [100ms, 1min] */
        uint64_t metrics_interval_usec;      /* MetricsInterval=, metrics.prom rewritten, default 10s, [100ms, 1h] */
        enum bw_park park_at_baseline;       /* ParkAtBaseline=, default auto: a parked unit holds its baseline,
                                              * raised at its first run (needs the run-queue telemetry) */
};

/* [Bandwidth] in <unit>.d drop-ins. has_* tells whether a key was set. */
struct bw_unit_config {
        char *name;                          /* unit name, e.g. "web.slice" (the .d directory name minus ".d") */
        char *cgroup;                        /* Cgroup=, normalized without leading or trailing '/'
                                              * ("machine.slice/foo.scope"); NULL to derive from the unit name */
        char *subgroup;                      /* Subgroup=, the cgroup below that one to govern, normalized
                                              * ("container"); NULL: the unit's cgroup itself */
        enum bw_mode mode;                   /* Mode=, valid when has_mode; see bw_unit_mode() */
        bool has_mode;
        bool has_cpu_burst_max;              /* CPUBurstMax= set (below) */
        uint64_t cpu_quota;                  /* CPUQuota=, µs/s, baseline; 0 = unset: adopt from cpu.max */
        uint64_t cpu_quota_max;              /* CPUQuotaMax=, µs/s; 0 = unset: 4 x baseline at run time */
        uint64_t cpu_burst_max_usec;         /* CPUBurstMax=, µs, valid when has_cpu_burst_max
                                              * (0 = bwgov never changes the burst: it stays
                                              * as found at adoption); unset = up to the quota */
        uint64_t credit_max_usec;            /* CreditMax=, CPU-µs, default 30s, [0, 24h] */
        uint64_t target_throttle;            /* TargetThrottle=, µs/s throttled wall time tolerated, default 1% */
        uint64_t target_pressure;            /* TargetPressure=, µs/s PSI full tolerated, default 5% */
        uint64_t target_wait_p99_usec;       /* TargetWaitP99=, run-queue wait p99 tolerated while mostly
                                              * throttled, default 50ms, [0 (off), 10s] */
        int64_t priority;                    /* Priority=, [-1000, 1000], default 0; lower is shed first */
        uint64_t interval_usec;              /* Interval=, [100ms, 1h]; 0 = unset: global Interval= */
        uint64_t active_interval_usec;       /* ActiveInterval=, [100ms, 1h]; 0 = unset: global ActiveInterval= */
        enum bw_class class;                 /* Class=, valid when has_class; see bw_unit_class() */
        bool has_class;
        uint64_t latency_target_usec;        /* LatencyTarget=, run-queue wait p99, [10us, 10s]; 0 = unset
                                              * (5ms for Class=latency, see bw_unit_latency_target_usec()) */
        uint64_t cpu_guarantee;              /* CPUGuarantee=, µs/s of CPU the group gets whenever it wants
                                              * it (Class=latency only); 0 = none */
        /* Where CPUQuota= came from, for messages: "file:line" of the winning
         * assignment (NULL when unset). */
        char *cpu_quota_source;
};

struct bw_config {
        struct bw_global_config global;
        struct bw_unit_config *units;        /* sorted by name (strcmp) */
        size_t n_units;
        /* Prefix directories ("libpod-.scope"): each governs every cgroup
         * named like a unit of its type whose name starts with the part
         * before the dot, as bwgovd finds them (bw_config_load_instance()). */
        char **prefixes;                     /* sorted */
        size_t n_prefixes;
};
