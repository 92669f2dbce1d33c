/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Configuration loader: the key tables of [Governor] and [Bandwidth], the
 * handler that applies each assignment of a file to its section's struct,
 * and bw_config_load(), which walks what config-dropin.c finds; plus the
 * unit config's copy and free. Value parsers live in parse-util.c, drop-in
 * scanning in config-dropin.c, the libinih front end in config-ini.c, the
 * error report in config-error.c, prefix units in config-prefix.c, the one
 * unit per cgroup rule in config-claims.c. */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "config.h" /* meson's: BWGOV_SYSCONFDIR, BWGOV_LIBDIR_CONF, BWGOV_RUNTIMEDIR */

#include "bwgov/config/config-dropin.h"
#include "bwgov/config/config-ini.h"
#include "bwgov/config/config.h"
#include "bwgov/cgroup/discover.h"
#include "bwgov/util/macro.h"
#include "config-internal.h"
#include "util/string-util.h"
#include "config-claims.h"

#define MAIN_CONFIG_NAME  "bwgov.conf"
#define MAIN_DROPIN_DIR   "bwgov.conf.d"
#define SECTION_GOVERNOR  "Governor"
#define SECTION_BANDWIDTH "Bandwidth"
/* "Section.Key" of the longest section and key name, with room to spare. */
#define KNOWN_KEY_MAX     64

/* ---- enums ---- */

static const char *const mode_table[_BW_MODE_MAX] = {
        [BW_MODE_OFF] = "off",
        [BW_MODE_OBSERVE] = "observe",
        [BW_MODE_BURST] = "burst",
        [BW_MODE_ELASTIC] = "elastic",
};

static const char *const kernel_check_table[_BW_KERNEL_CHECK_MAX] = {
        [BW_KERNEL_CHECK_OFF] = "off",
        [BW_KERNEL_CHECK_WARN] = "warn",
        [BW_KERNEL_CHECK_STRICT] = "strict",
};

static const char *const class_table[_BW_CLASS_MAX] = {
        [BW_CLASS_LATENCY] = "latency",
        [BW_CLASS_THROUGHPUT] = "throughput",
        [BW_CLASS_BEST_EFFORT] = "best-effort",
};

static const char *const contention_table[_BW_CONTENTION_MAX] = {
        [BW_CONTENTION_SHARE] = "share",
        [BW_CONTENTION_GANG] = "gang",
        [BW_CONTENTION_PIN] = "pin",
};

static const char *const park_table[_BW_PARK_MAX] = {
        [BW_PARK_NO] = "no",
        [BW_PARK_YES] = "yes",
        [BW_PARK_AUTO] = "auto",
};

BW_DEFINE_STRING_TABLE(bw_class, enum bw_class, class_table, _BW_CLASS_MAX, enum bw_class, _BW_CLASS_INVALID)
BW_DEFINE_STRING_TABLE(bw_contention, enum bw_contention, contention_table, _BW_CONTENTION_MAX, enum bw_contention,
                       _BW_CONTENTION_INVALID)
BW_DEFINE_STRING_TABLE(bw_mode, enum bw_mode, mode_table, _BW_MODE_MAX, enum bw_mode, _BW_MODE_INVALID)
BW_DEFINE_STRING_TABLE(bw_kernel_check, enum bw_kernel_check, kernel_check_table, _BW_KERNEL_CHECK_MAX,
                       enum bw_kernel_check, _BW_KERNEL_CHECK_INVALID)

BW_DEFINE_STRING_TABLE_TO_STRING(bw_park, enum bw_park, park_table, _BW_PARK_MAX)

enum bw_park bw_park_from_string(const char *s) {
        bool b;

        if (!s)
                return _BW_PARK_INVALID;
        if (streq(s, "auto"))
                return BW_PARK_AUTO;
        if (bw_parse_boolean(s, &b) < 0)
                return _BW_PARK_INVALID;
        return b ? BW_PARK_YES : BW_PARK_NO;
}

/* ---- key tables ---- */

enum value_type {
        VT_TIMESPAN,            /* uint64_t µs, [min, max] */
        VT_RATIO,               /* uint64_t µs/s, [0, 100%] */
        VT_CPU,                 /* uint64_t µs/s, (0, max] */
        VT_MODE,                /* enum bw_mode */
        VT_KERNEL_CHECK,        /* enum bw_kernel_check */
        VT_CLASS,               /* enum bw_class */
        VT_CONTENTION,          /* enum bw_contention */
        VT_PARK,                /* enum bw_park */
        VT_BOOL,                /* bool */
        VT_INT,                 /* int64_t, [imin, imax] */
        VT_UINT,                /* uint64_t, [imin, imax] */
        VT_CGROUP,              /* char *, normalized */
        _VT_MAX,
};

/* One parsed value, whichever its type; every member starts at offset 0, so
 * copying value_size[type] bytes from the union copies that member. */
union value {
        uint64_t u;
        int64_t i;
        enum bw_mode mode;
        enum bw_kernel_check kernel_check;
        enum bw_class cls;
        enum bw_contention contention;
        enum bw_park park;
        bool b;
        char *s;
};

static const size_t value_size[_VT_MAX] = {
        [VT_TIMESPAN] = sizeof(uint64_t),
        [VT_RATIO] = sizeof(uint64_t),
        [VT_CPU] = sizeof(uint64_t),
        [VT_MODE] = sizeof(enum bw_mode),
        [VT_KERNEL_CHECK] = sizeof(enum bw_kernel_check),
        [VT_CLASS] = sizeof(enum bw_class),
        [VT_CONTENTION] = sizeof(enum bw_contention),
        [VT_PARK] = sizeof(enum bw_park),
        [VT_BOOL] = sizeof(bool),
        [VT_INT] = sizeof(int64_t),
        [VT_UINT] = sizeof(uint64_t),
        [VT_CGROUP] = sizeof(char *),
};

struct key_def {
        const char *name;
        enum value_type type;
        size_t offset;          /* of the value in the section's struct */
        bool has_flag;
        size_t has_offset;      /* of its bool has_*, when has_flag */
        uint64_t max;           /* VT_TIMESPAN and VT_CPU: [min, max] */
        uint64_t min;
        int64_t imin, imax;     /* VT_INT, VT_UINT */
        const char *expected;   /* "expected %s" on a malformed value */
        const char *range;      /* "value out of range, expected %s"; NULL = expected */
};

/* One table row: name, type, where the value lives, then the type's bounds
 * and the messages. Keys of the same kind share a row macro. */
#define KEY(name_, type_, config, field, ...) \
        { .name = name_, .type = type_, .offset = offsetof(config, field), __VA_ARGS__ }
#define GKEY(name_, type_, field, ...) KEY(name_, type_, struct bw_global_config, field, __VA_ARGS__)
#define BKEY(name_, type_, field, ...) KEY(name_, type_, struct bw_unit_config, field, __VA_ARGS__)
#define HAS(field) .has_flag = true, .has_offset = offsetof(struct bw_unit_config, field)

#define MODE_EXPECTED .expected = "one of off, observe, burst, elastic"
#define INTERVAL(example)                                                       \
        .min = BW_INTERVAL_MIN_USEC, .max = BW_INTERVAL_MAX_USEC,               \
        .expected = "a time span between 100ms and 1h, like " example
#define RATIO(example) .expected = "a percentage between 0% and 100%, like " example
#define CPU(example)                                                            \
        .max = BW_CPU_PERCENT_LIMIT, .expected = "a CPU percentage like " example, \
        .range = "a CPU percentage above 0% and at most 1000000%, like " example

enum {
        GK_INTERVAL,
        GK_MODE,
        GK_HOST_PRESSURE_LIMIT,
        GK_PRESSURE_WINDOW,
        GK_KERNEL_CHECK,
        GK_RESTORE_ON_EXIT,
        GK_HISTORY_SIZE,
        GK_ACTIVE_INTERVAL,
        GK_TELEMETRY,
        GK_CONTENTION,
        GK_CONTENTION_INTERVAL,
        GK_METRICS_INTERVAL,
        GK_PARK_AT_BASELINE,
        _GK_MAX,
};

static const struct key_def governor_keys[_GK_MAX] = {
        [GK_INTERVAL] = GKEY("Interval", VT_TIMESPAN, interval_usec, INTERVAL("1s")),
        [GK_MODE] = GKEY("Mode", VT_MODE, mode, MODE_EXPECTED),
        [GK_HOST_PRESSURE_LIMIT] = GKEY("HostPressureLimit", VT_RATIO, host_pressure_limit, RATIO("40%")),
        [GK_PRESSURE_WINDOW] = GKEY("PressureWindow", VT_TIMESPAN, pressure_window_usec,
                                    .min = BW_PRESSURE_WINDOW_MIN_USEC, .max = BW_PRESSURE_WINDOW_MAX_USEC,
                                    .expected = "a time span between 500ms and 10s, like 2s"),
        [GK_KERNEL_CHECK] = GKEY("KernelCheck", VT_KERNEL_CHECK, kernel_check,
                                 .expected = "one of off, warn, strict"),
        [GK_RESTORE_ON_EXIT] = GKEY("RestoreOnExit", VT_BOOL, restore_on_exit,
                                    .expected = "a boolean like yes or no"),
        [GK_HISTORY_SIZE] = GKEY("HistorySize", VT_UINT, history_size, .imin = 1, .imax = BW_HISTORY_SIZE_MAX,
                                 .expected = "an integer between 1 and 65536"),
        [GK_ACTIVE_INTERVAL] = GKEY("ActiveInterval", VT_TIMESPAN, active_interval_usec, INTERVAL("250ms")),
        [GK_TELEMETRY] = GKEY("Telemetry", VT_BOOL, telemetry, .expected = "a boolean like yes or no"),
        [GK_CONTENTION] = GKEY("Contention", VT_CONTENTION, contention, .expected = "one of share, gang, pin"),
        [GK_CONTENTION_INTERVAL] = GKEY("ContentionInterval", VT_TIMESPAN, contention_interval_usec,
                                        .min = BW_CONTENTION_INTERVAL_MIN_USEC,
                                        .max = BW_CONTENTION_INTERVAL_MAX_USEC,
                                        .expected = "a time span between 100ms and 1min, like 1s"),
        [GK_METRICS_INTERVAL] = GKEY("MetricsInterval", VT_TIMESPAN, metrics_interval_usec,
                                     .min = BW_METRICS_INTERVAL_MIN_USEC, .max = BW_METRICS_INTERVAL_MAX_USEC,
                                     .expected = "a time span between 100ms and 1h, like 10s"),
        [GK_PARK_AT_BASELINE] = GKEY("ParkAtBaseline", VT_PARK, park_at_baseline,
                                     .expected = "auto, or a boolean like yes or no"),
};

enum {
        BK_MODE,
        BK_CPU_QUOTA,
        BK_CPU_QUOTA_MAX,
        BK_CPU_BURST_MAX,
        BK_CREDIT_MAX,
        BK_TARGET_THROTTLE,
        BK_TARGET_PRESSURE,
        BK_TARGET_WAIT_P99,
        BK_PRIORITY,
        BK_INTERVAL,
        BK_ACTIVE_INTERVAL,
        BK_CGROUP,
        BK_SUBGROUP,
        BK_CLASS,
        BK_LATENCY_TARGET,
        BK_CPU_GUARANTEE,
        _BK_MAX,
};

static const struct key_def bandwidth_keys[_BK_MAX] = {
        [BK_MODE] = BKEY("Mode", VT_MODE, mode, HAS(has_mode), MODE_EXPECTED),
        [BK_CPU_QUOTA] = BKEY("CPUQuota", VT_CPU, cpu_quota, CPU("250%")),
        [BK_CPU_QUOTA_MAX] = BKEY("CPUQuotaMax", VT_CPU, cpu_quota_max, CPU("400%")),
        [BK_CPU_BURST_MAX] = BKEY("CPUBurstMax", VT_TIMESPAN, cpu_burst_max_usec, HAS(has_cpu_burst_max),
                                  .min = 0, .max = UINT64_MAX, .expected = "a time span like 50ms"),
        [BK_CREDIT_MAX] = BKEY("CreditMax", VT_TIMESPAN, credit_max_usec, .min = 0, .max = BW_CREDIT_MAX_LIMIT_USEC,
                               .expected = "a CPU time span between 0 and 24h, like 30s"),
        [BK_TARGET_THROTTLE] = BKEY("TargetThrottle", VT_RATIO, target_throttle, RATIO("1%")),
        [BK_TARGET_PRESSURE] = BKEY("TargetPressure", VT_RATIO, target_pressure, RATIO("5%")),
        [BK_TARGET_WAIT_P99] = BKEY("TargetWaitP99", VT_TIMESPAN, target_wait_p99_usec, .min = 0,
                                    .max = BW_TARGET_WAIT_MAX_USEC,
                                    .expected = "a time span between 0 (off) and 10s, like 50ms"),
        [BK_PRIORITY] = BKEY("Priority", VT_INT, priority, .imin = BW_PRIORITY_MIN, .imax = BW_PRIORITY_MAX,
                             .expected = "an integer between -1000 and 1000"),
        [BK_INTERVAL] = BKEY("Interval", VT_TIMESPAN, interval_usec, INTERVAL("1s")),
        [BK_ACTIVE_INTERVAL] = BKEY("ActiveInterval", VT_TIMESPAN, active_interval_usec, INTERVAL("250ms")),
        [BK_CGROUP] = BKEY("Cgroup", VT_CGROUP, cgroup,
                           .expected = "a cgroup path like /machine.slice/foo.scope, without empty, \".\" or \"..\" "
                                       "components",
                           .range = "a cgroup path of at most 4096 characters"),
        [BK_SUBGROUP] = BKEY("Subgroup", VT_CGROUP, subgroup,
                             .expected = "a cgroup path below the unit's cgroup, like container, without empty, "
                                         "\".\" or \"..\" components",
                             .range = "a cgroup path of at most 4096 characters"),
        [BK_CLASS] = BKEY("Class", VT_CLASS, class, HAS(has_class),
                          .expected = "one of latency, throughput, best-effort"),
        [BK_LATENCY_TARGET] = BKEY("LatencyTarget", VT_TIMESPAN, latency_target_usec,
                                   .min = BW_LATENCY_TARGET_MIN_USEC, .max = BW_TARGET_WAIT_MAX_USEC,
                                   .expected = "a time span between 10us and 10s, like 1ms"),
        [BK_CPU_GUARANTEE] = BKEY("CPUGuarantee", VT_CPU, cpu_guarantee, CPU("50%")),
};

static const struct bw_global_config global_defaults = {
        .interval_usec = USEC_PER_SEC,
        .mode = BW_MODE_ELASTIC,
        .host_pressure_limit = 40 * BW_PERCENT_UNIT,
        .pressure_window_usec = 2 * USEC_PER_SEC,
        .kernel_check = BW_KERNEL_CHECK_WARN,
        .restore_on_exit = true,
        .history_size = 256,
        .active_interval_usec = 250 * USEC_PER_MSEC,
        .telemetry = true,
        .contention = BW_CONTENTION_SHARE,
        .contention_interval_usec = USEC_PER_SEC,
        .metrics_interval_usec = 10 * USEC_PER_SEC,
        .park_at_baseline = BW_PARK_AUTO,
};

static const struct bw_unit_config unit_defaults = {
        .mode = BW_MODE_ELASTIC,        /* not used: has_mode is false */
        .credit_max_usec = 30 * USEC_PER_SEC,
        .target_throttle = 1 * BW_PERCENT_UNIT,
        .target_pressure = 5 * BW_PERCENT_UNIT,
        .target_wait_p99_usec = 50 * USEC_PER_MSEC,
        .class = BW_CLASS_THROUGHPUT,   /* not used: has_class is false */
};

struct section_def {
        const char *name;
        const struct key_def *keys;
        size_t n_keys;
        const void *defaults;
};

static const struct section_def governor_section = {
        .name = SECTION_GOVERNOR,
        .keys = governor_keys,
        .n_keys = _GK_MAX,
        .defaults = &global_defaults,
};

static const struct section_def bandwidth_section = {
        .name = SECTION_BANDWIDTH,
        .keys = bandwidth_keys,
        .n_keys = _BK_MAX,
        .defaults = &unit_defaults,
};

/* ---- known keys, derived from the tables ---- */

static char known_key_names[_GK_MAX + _BK_MAX][KNOWN_KEY_MAX];
static const char *known_keys[_GK_MAX + _BK_MAX + 1];

static void known_keys_init(void) {
        static const struct section_def *const sections[] = { &governor_section, &bandwidth_section };
        size_t n = 0;

        for (size_t s = 0; s < ELEMENTSOF(sections); s++)
                for (size_t k = 0; k < sections[s]->n_keys; k++, n++) {
                        (void) snprintf(known_key_names[n], sizeof(known_key_names[n]), "%s.%s",
                                        sections[s]->name, sections[s]->keys[k].name);
                        known_keys[n] = known_key_names[n];
                }
        known_keys[n] = NULL;
}

const char *const *bw_config_known_keys(void) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;

        (void) pthread_once(&once, known_keys_init);
        return known_keys;
}

/* Where the winning assignment of a key came from. file is borrowed from the
 * drop-in list, valid while the unit is being loaded. */
struct source {
        const char *file;
        unsigned line;
};

/* ---- applying one file ---- */

/* What the assignments of one file go into. */
struct section_data {
        const struct section_def *section;
        void *data;                     /* struct bw_global_config or bw_unit_config */
        struct source *sources;         /* section->n_keys entries, or NULL */
};

static void *field_ptr(const struct section_data *sd, size_t offset) {
        return (uint8_t *) sd->data + offset;
}

/* Replace the value of a field of type T by the one at SRC (freeing the
 * string a VT_CGROUP field held). */
static void field_store(void *field, const void *src, enum value_type t) {
        if (t == VT_CGROUP)
                free(*(char **) field);
        memcpy(field, src, value_size[t]);
}

/* VALUE (not empty) for key K into *RET. Returns 0, -EINVAL, -ERANGE or
 * -ENOMEM. */
static int parse_value(const struct key_def *k, const char *value, union value *ret) {
        int r;

        switch (k->type) {
        case VT_TIMESPAN:
        case VT_CPU:
                r = (k->type == VT_CPU ? bw_parse_percent_cpu : bw_parse_timespan)(value, &ret->u);
                if (r >= 0 && (ret->u < k->min || ret->u > k->max))
                        return -ERANGE;
                return r;
        case VT_RATIO:
                return bw_parse_percent_ratio(value, &ret->u);
        case VT_MODE:
                ret->mode = bw_mode_from_string(value);
                return ret->mode < 0 ? -EINVAL : 0;
        case VT_KERNEL_CHECK:
                ret->kernel_check = bw_kernel_check_from_string(value);
                return ret->kernel_check < 0 ? -EINVAL : 0;
        case VT_CLASS:
                ret->cls = bw_class_from_string(value);
                return ret->cls < 0 ? -EINVAL : 0;
        case VT_CONTENTION:
                ret->contention = bw_contention_from_string(value);
                return ret->contention < 0 ? -EINVAL : 0;
        case VT_PARK:
                ret->park = bw_park_from_string(value);
                return ret->park < 0 ? -EINVAL : 0;
        case VT_BOOL:
                return bw_parse_boolean(value, &ret->b);
        case VT_INT:
        case VT_UINT:
                r = bw_parse_int_range(value, k->imin, k->imax, &ret->i);
                if (r >= 0 && k->type == VT_UINT)
                        ret->u = (uint64_t) ret->i;     /* imin >= 0 */
                return r;
        case VT_CGROUP:
                return bw_parse_cgroup_path(value, &ret->s);
        case _VT_MAX:
        default:
                break;
        }
        return -EINVAL;
}

/* bw_ini_assign_fn: one KEY=VALUE into the section's struct. */
static int apply_key(const char *path, unsigned line, const char *key, const char *value, void *userdata,
                     struct bw_config_error *error) {
        struct section_data *sd = userdata;
        const struct key_def *k = NULL;
        union value v = { 0 };
        size_t idx;
        void *field;
        int r;

        for (idx = 0; idx < sd->section->n_keys; idx++)
                if (streq(key, sd->section->keys[idx].name)) {
                        k = &sd->section->keys[idx];
                        break;
                }
        if (!k)
                return bw_config_error_set(error, -EINVAL, path, line, key, "unknown key in section [%s]",
                                           sd->section->name);
        field = field_ptr(sd, k->offset);

        if (isempty(value)) {
                /* systemd semantics: "Key=" resets to the default. */
                field_store(field, (const uint8_t *) sd->section->defaults + k->offset, k->type);
                if (k->has_flag)
                        *(bool *) field_ptr(sd, k->has_offset) = false;
                if (sd->sources)
                        sd->sources[idx] = (struct source) { 0 };
                return 0;
        }

        r = parse_value(k, value, &v);
        if (r == -ENOMEM)
                return r;
        if (r == -ERANGE)
                return bw_config_error_set(error, -EINVAL, path, line, k->name, "value out of range, expected %s",
                                           k->range ? k->range : k->expected);
        if (r < 0)
                return bw_config_error_set(error, -EINVAL, path, line, k->name, "expected %s", k->expected);

        field_store(field, &v, k->type);
        if (k->has_flag)
                *(bool *) field_ptr(sd, k->has_offset) = true;
        if (sd->sources)
                sd->sources[idx] = (struct source) { .file = path, .line = line };
        return 0;
}

/* Parse path into data (already holding defaults or earlier files' values).
 * On failure data may be partially updated (callers work on a scratch copy)
 * and *ret_error is filled. */
static int parse_file(const char *path, const struct section_def *section, void *data, struct source *sources,
                      struct bw_config_error *ret_error) {
        struct section_data sd = { .section = section, .data = data, .sources = sources };

        return bw_ini_parse_file(path, section->name, apply_key, &sd, ret_error);
}

/* ---- loading ---- */

static int apply_dropins(const struct bw_dropin_list *l, const struct section_def *section, void *data,
                         struct source *sources, struct bw_config_error *error) {
        int r;

        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].masked)
                        continue;
                r = parse_file(l->items[i].path, section, data, sources, error);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Collect the drop-ins of SUBDIR and apply them to DATA. */
static int load_dropins(const char *const *dirs, const char *subdir, const struct section_def *section, void *data,
                        struct source *sources, struct bw_config_error *error) {
        _cleanup_(bw_dropin_list_done) struct bw_dropin_list l = { 0 };
        int r;

        r = bw_dropin_list_collect(dirs, subdir, &l, error);
        if (r < 0)
                return r;
        return apply_dropins(&l, section, data, sources, error);
}

static int load_global(const char *const *dirs, struct bw_global_config *ret, struct bw_config_error *error) {
        struct bw_global_config g = global_defaults;
        _cleanup_free_ char *main_path = NULL;
        int r;

        r = bw_config_find_main(dirs, MAIN_CONFIG_NAME, &main_path, error);
        if (r < 0)
                return r;
        if (r > 0) {
                r = parse_file(main_path, &governor_section, &g, NULL, error);
                if (r < 0)
                        return r;
        }

        r = load_dropins(dirs, MAIN_DROPIN_DIR, &governor_section, &g, NULL, error);
        if (r < 0)
                return r;

        *ret = g;
        return 0;
}

/* A key that only Class=latency takes, set on a unit of another class. */
static int latency_only(const struct bw_unit_config *u, const struct source *src, size_t key,
                        struct bw_config_error *error) {
        enum bw_class c = bw_unit_class(u);

        if (c == BW_CLASS_LATENCY || !src[key].file)
                return 0;
        if (!src[BK_CLASS].file)
                return bw_config_error_set(error, -EINVAL, src[key].file, src[key].line, bandwidth_keys[key].name,
                                           "only Class=latency takes it (set Class=latency or LatencyTarget=)");
        return bw_config_error_set(error, -EINVAL, src[key].file, src[key].line, bandwidth_keys[key].name,
                                   "only Class=latency takes it, but the unit is Class=%s (set at %s:%u)",
                                   bw_class_to_string(c), src[BK_CLASS].file, src[BK_CLASS].line);
}

static int unit_validate(const struct bw_unit_config *u, const struct source *src, struct bw_config_error *error) {
        int r;

        r = latency_only(u, src, BK_LATENCY_TARGET, error);
        if (r >= 0)
                r = latency_only(u, src, BK_CPU_GUARANTEE, error);
        if (r < 0)
                return r;
        if (u->cpu_quota > 0 && u->cpu_quota_max > 0 && u->cpu_quota_max < u->cpu_quota) {
                char quota[32];

                if (bw_format_percent(u->cpu_quota, quota, sizeof(quota)) < 0)
                        return -EINVAL;

                return bw_config_error_set(error, -EINVAL, src[BK_CPU_QUOTA_MAX].file, src[BK_CPU_QUOTA_MAX].line,
                                           bandwidth_keys[BK_CPU_QUOTA_MAX].name,
                                           "expected a CPU percentage not below CPUQuota=%s (set at %s:%u)",
                                           quota, src[BK_CPU_QUOTA].file, src[BK_CPU_QUOTA].line);
        }
        return 0;
}

/* Load one unit. Returns 1 and fills *ret (and *ret_cgroup_at, "file:line"
 * of its Cgroup=, NULL without), 0 when all its drop-ins are masked (not
 * configured), or a negative errno. */
int config_load_unit(const char *const *dirs, const char *name, struct bw_unit_config *ret, char **ret_cgroup_at,
                     char **ret_named_at, struct bw_config_error *error) {
        _cleanup_(bw_unit_config_done) struct bw_unit_config u = unit_defaults;
        _cleanup_(bw_dropin_list_done) struct bw_dropin_list l = { 0 };
        struct source sources[_BK_MAX] = { 0 };
        int r;

        r = bw_dropin_list_collect_unit(dirs, name, &l, error);
        if (r < 0)
                return r;
        if (bw_dropin_list_n_active(&l) == 0)
                return 0;

        u.name = strdup(name);
        if (!u.name)
                return -ENOMEM;

        r = apply_dropins(&l, &bandwidth_section, &u, sources, error);
        if (r < 0)
                return r;

        r = unit_validate(&u, sources, error);
        if (r < 0)
                return r;

        if (u.cpu_quota > 0 &&
            asprintf(&u.cpu_quota_source, "%s:%u", sources[BK_CPU_QUOTA].file, sources[BK_CPU_QUOTA].line) < 0) {
                u.cpu_quota_source = NULL;
                return -ENOMEM;
        }
        *ret_cgroup_at = NULL;
        if (u.cgroup && asprintf(ret_cgroup_at, "%s:%u", sources[BK_CGROUP].file, sources[BK_CGROUP].line) < 0) {
                *ret_cgroup_at = NULL;
                return -ENOMEM;
        }
        /* Where its cgroup is named: Subgroup=, else Cgroup=. Not kept in
         * the unit: ten thousand units kept 0.9 MB of "file:line" for a
         * message that may never come (bw_config_cgroup_named_at()). */
        if (ret_named_at) {
                r = config_cgroup_source(&u, sources[BK_CGROUP].file, sources[BK_CGROUP].line,
                                         sources[BK_SUBGROUP].file, sources[BK_SUBGROUP].line, ret_named_at);
                if (r < 0) {
                        *ret_cgroup_at = mfree(*ret_cgroup_at);
                        return r;
                }
        }

        *ret = u;
        u = (struct bw_unit_config) { 0 };
        return 1;
}

/* Keep u (a prefix directory's unit, checked) in c->prefixes: it governs
 * many cgroups, so one that sets Cgroup= (at CGROUP_AT) is refused. */
static int config_add_prefix(struct bw_config *c, const struct bw_unit_config *u, const char *cgroup_at,
                             struct bw_config_error *error) {
        char **p;

        if (u->cgroup) {
                _cleanup_free_ char *file = NULL;
                const char *colon = cgroup_at ? strrchr(cgroup_at, ':') : NULL;

                file = colon ? strndup(cgroup_at, (size_t) (colon - cgroup_at)) : NULL;
                return bw_config_error_set(error, -EINVAL, file, colon ? (unsigned) strtoul(colon + 1, NULL, 10) : 0,
                                           "Cgroup", "%s is a prefix directory, for every unit whose name starts "
                                           "with its prefix: it cannot name one cgroup", u->name);
        }
        p = reallocarray(c->prefixes, c->n_prefixes + 1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        c->prefixes = p;
        c->prefixes[c->n_prefixes] = strdup(u->name);
        if (!c->prefixes[c->n_prefixes])
                return -ENOMEM;
        c->n_prefixes++;
        return 0;
}

static int load_units(const char *const *dirs, struct bw_config *c, struct bw_config_error *error) {
        _cleanup_(bw_strv_done) struct bw_strv names = { 0 };
        struct config_claims claims = { 0 };
        int r;

        r = bw_config_unit_names(dirs, MAIN_DROPIN_DIR, &names, error);
        if (r < 0)
                return r;

        for (size_t i = 0; i < names.n; i++) {
                _cleanup_(bw_unit_config_done) struct bw_unit_config u = { 0 };
                _cleanup_free_ char *at = NULL, *named_at = NULL;
                struct bw_unit_config *units;

                r = config_load_unit(dirs, names.items[i], &u, &at, &named_at, error);
                if (r < 0)
                        goto finish;
                if (r == 0)
                        continue;
                if (bw_config_unit_name_is_prefix(u.name)) {
                        r = config_add_prefix(c, &u, at, error);
                        if (r < 0)
                                goto finish;
                        continue;
                }
                r = config_claims_add(&claims, &u, named_at);
                if (r < 0)
                        goto finish;

                units = reallocarray(c->units, c->n_units + 1, sizeof(*units));
                if (!units) {
                        r = -ENOMEM;
                        goto finish;
                }
                c->units = units;
                c->units[c->n_units++] = u;
                u = (struct bw_unit_config) { 0 };
        }
        r = config_claims_check(&claims, error);
finish:
        config_claims_done(&claims);
        return r;
}

/* ---- public entry points ---- */

const char *const *bw_config_default_dirs(void) {
        static const char *const dirs[] = {
                BWGOV_LIBDIR_CONF,
                BWGOV_RUNTIMEDIR,
                BWGOV_SYSCONFDIR,
                NULL,
        };

        return dirs;
}

void bw_unit_config_done(struct bw_unit_config *u) {
        if (!u)
                return;
        free_many(u->name, u->cgroup, u->subgroup, u->cpu_quota_source);
        *u = (struct bw_unit_config) { 0 };
}

int bw_unit_config_copy(const struct bw_unit_config *src, struct bw_unit_config *ret) {
        _cleanup_(bw_unit_config_done) struct bw_unit_config c = { 0 };

        if (!src || !ret)
                return -EINVAL;

        c = *src;
        c.name = c.cgroup = c.subgroup = c.cpu_quota_source = NULL;
        if (!strdup_or_null(src->name, &c.name) || !strdup_or_null(src->cgroup, &c.cgroup) ||
            !strdup_or_null(src->subgroup, &c.subgroup) ||
            !strdup_or_null(src->cpu_quota_source, &c.cpu_quota_source))
                return -ENOMEM;

        *ret = c;
        c = (struct bw_unit_config) { 0 };
        return 0;
}

void bw_config_done(struct bw_config *c) {
        if (!c)
                return;
        array_done_and_free(c->units, c->n_units, bw_unit_config_done);
        for (size_t i = 0; i < c->n_prefixes; i++)
                free(c->prefixes[i]);
        free(c->prefixes);
        *c = (struct bw_config) { 0 };
}

int bw_config_load(const char *const *dirs, struct bw_config *ret, struct bw_config_error *ret_error) {
        _cleanup_(bw_config_done) struct bw_config c = { 0 };
        struct bw_config_error error = { 0 };
        int r;

        if (!ret)
                return -EINVAL;
        if (!dirs)
                dirs = bw_config_default_dirs();

        r = load_global(dirs, &c.global, &error);
        if (r >= 0)
                r = load_units(dirs, &c, &error);
        if (r < 0) {
                if (ret_error)
                        *ret_error = error;
                else
                        bw_config_error_done(&error);
                return r;
        }

        *ret = c;
        c = (struct bw_config) { 0 };
        return 0;
}

static int cmp_unit_name(const void *key, const void *elem) {
        return strcmp(key, ((const struct bw_unit_config *) elem)->name);
}

const struct bw_unit_config *bw_config_find_unit(const struct bw_config *c, const char *name) {
        if (!c || !name || c->n_units == 0)
                return NULL;
        return bsearch(name, c->units, c->n_units, sizeof(*c->units), cmp_unit_name);
}

enum bw_mode bw_unit_mode(const struct bw_config *c, const struct bw_unit_config *u) {
        if (u && u->has_mode)
                return u->mode;
        return c ? c->global.mode : global_defaults.mode;
}

uint64_t bw_unit_interval_usec(const struct bw_config *c, const struct bw_unit_config *u) {
        if (u && u->interval_usec > 0)
                return u->interval_usec;
        return c ? c->global.interval_usec : global_defaults.interval_usec;
}

enum bw_class bw_unit_class(const struct bw_unit_config *u) {
        if (!u)
                return BW_CLASS_THROUGHPUT;
        if (u->has_class)
                return u->class;
        return u->latency_target_usec > 0 ? BW_CLASS_LATENCY : BW_CLASS_THROUGHPUT;
}

uint64_t bw_unit_latency_target_usec(const struct bw_unit_config *u) {
        if (bw_unit_class(u) != BW_CLASS_LATENCY)
                return 0;
        return u->latency_target_usec > 0 ? u->latency_target_usec : BW_LATENCY_TARGET_DEFAULT_USEC;
}

uint64_t bw_unit_active_interval_usec(const struct bw_config *c, const struct bw_unit_config *u) {
        uint64_t a;

        if (u && u->active_interval_usec > 0)
                a = u->active_interval_usec;
        else
                a = c ? c->global.active_interval_usec : global_defaults.active_interval_usec;
        return a < bw_unit_interval_usec(c, u) ? a : bw_unit_interval_usec(c, u);
}
