/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bwgov/config/config-error.h"
#include "bwgov/util/parse-util.h"

/* Configuration: bwgov.conf plus the *.conf files in bwgov.conf.d (section
 * [Governor]) and per-unit drop-ins, the *.conf files in <dir>/<unit>.d
 * (section [Bandwidth]), searched in
 * /usr/lib/bwgov, /run/bwgov, /etc/bwgov (lowest priority first).
 *
 * Merge rules (systemd's drop-in rules):
 *   - bwgov.conf: the copy in the highest-priority directory that has one is
 *     the only one read; then the bwgov.conf.d drop-ins apply on top.
 *   - Drop-ins (bwgov.conf.d and every <unit>.d): *.conf names are collected
 *     over all directories; the same name in a later directory replaces the
 *     earlier file; the survivors apply in lexical (strcmp) order of their
 *     names, later assignments overriding earlier ones key by key. Hidden
 *     files (".x.conf") and names not ending in ".conf" are ignored.
 *   - Masking: a drop-in that is /dev/null (a symlink to it, or the device
 *     itself) or an empty regular file masks that name; a masked bwgov.conf
 *     means "no main file".
 *   - A unit directory is any subdirectory (or symlink to one) of a search
 *     directory whose name ends in ".d", except bwgov.conf.d. The unit name is
 *     the directory name minus ".d" ("web.slice", "app.service",
 *     "mycontainer"); "", ".", ".." and names with control characters are
 *     errors. A unit whose drop-ins are all masked (or that has none) is not
 *     configured.
 *   - "Key=" (empty value) resets the key to its default.
 *   - Syntax (libinih): "#" or ";" starts a comment line; " ;" (blank, then
 *     semicolon) starts an inline comment; leading blanks are insignificant
 *     (no continuation lines); "Key: value" is accepted like "Key=value".
 *
 * Units of stored values:
 *   CPU amounts ("250%" of one CPU)  -> µs of CPU per second of wall time
 *                                       (250% = 2500000), like systemd's
 *                                       CPUQuotaPerSecUSec.
 *   Ratios of wall time ("5%")        -> µs per second as well (5% = 50000).
 *   Time spans ("100ms", "1.5s")      -> µs.
 *   CPU-time spans (CreditMax=30s)    -> µs of CPU time. */

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

const char *bw_mode_to_string(enum bw_mode m);
enum bw_mode bw_mode_from_string(const char *s);
const char *bw_kernel_check_to_string(enum bw_kernel_check k);
enum bw_kernel_check bw_kernel_check_from_string(const char *s);
const char *bw_class_to_string(enum bw_class c);
enum bw_class bw_class_from_string(const char *s);
const char *bw_contention_to_string(enum bw_contention c);
enum bw_contention bw_contention_from_string(const char *s);
const char *bw_park_to_string(enum bw_park p);
/* "auto", or a boolean (yes/no, true/false, on/off, 1/0). */
enum bw_park bw_park_from_string(const char *s);

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

/* Search path for configuration. NULL-terminated list of directories, lowest
 * priority first. bw_config_default_dirs() returns the built-in list
 * { "/usr/lib/bwgov", "/run/bwgov", "/etc/bwgov", NULL } (the first and last
 * follow meson's prefix and sysconfdir). */
const char *const *bw_config_default_dirs(void);

/* Load the whole configuration from dirs (lowest priority first; NULL means
 * bw_config_default_dirs()). Missing directories are fine. Unknown sections
 * and keys are errors (a typo must not pass silently).
 *
 * On success returns 0 and overwrites *ret (its previous contents are NOT
 * freed: load into a fresh struct, or bw_config_done() the old one; a reload
 * loads into a new struct and swaps, so a failed reload keeps the old one).
 * On failure returns -EINVAL (content, including invalid unit directory
 * names), -ENOMEM, or another negative errno (I/O, e.g. -ENOENT for a dangling
 * drop-in symlink, -EACCES), overwrites *ret_error when not NULL (without
 * freeing it first) with the first error found, and leaves *ret untouched: a
 * broken file never yields a half-applied configuration.
 *
 * Thread-safe as long as nobody changes libinih's process-wide option
 * globals (ini_allow_multiline etc.); this library never touches them. */
int bw_config_load(const char *const *dirs, struct bw_config *ret, struct bw_config_error *ret_error);

/* Frees everything and zeroes *c. Accepts NULL. */
void bw_config_done(struct bw_config *c);

/* Frees the strings of *u (name, cgroup, subgroup, cpu_quota_source) and zeroes it.
 * Accepts NULL. */
void bw_unit_config_done(struct bw_unit_config *u);

/* Deep copy of *src into *ret: the strings are duplicated, the rest copied.
 * Returns 0, -EINVAL for NULL arguments, or -ENOMEM; *ret is overwritten
 * without being freed first, and left untouched on failure. */
int bw_unit_config_copy(const struct bw_unit_config *src, struct bw_unit_config *ret);

/* Look up a unit by name; NULL when absent. */
const struct bw_unit_config *bw_config_find_unit(const struct bw_config *c, const char *name);

/* Effective per-unit values after defaults (global Mode=, Interval=). */
enum bw_mode bw_unit_mode(const struct bw_config *c, const struct bw_unit_config *u);
uint64_t bw_unit_interval_usec(const struct bw_config *c, const struct bw_unit_config *u);
/* ActiveInterval= of the unit, else the global one, never above the unit's
 * Interval=. */
uint64_t bw_unit_active_interval_usec(const struct bw_config *c, const struct bw_unit_config *u);

/* Class= of the unit: as set, else latency when LatencyTarget= is set, else
 * throughput. */
enum bw_class bw_unit_class(const struct bw_unit_config *u);
/* LatencyTarget= of a Class=latency unit (its default when unset); 0 for
 * the other classes. */
uint64_t bw_unit_latency_target_usec(const struct bw_unit_config *u);

/* Every key the parser accepts, as "Section.Key", NULL-terminated; used by the
 * test that checks the man page documents them all. */
const char *const *bw_config_known_keys(void);
