/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Configuration loader: systemd-style drop-in merge over a list of search
 * directories, INI parsing with libinih, and the value parsers.
 *
 * Notes on Debian's libinih (55, built with INI_HANDLER_LINENO=0 and the
 * options exposed as process-wide globals: ini_allow_multiline,
 * ini_allow_inline_comments, ini_max_line, ...). A library must not change
 * process-wide state, so we leave the globals alone and shape the input
 * instead, through our own ini_reader:
 *   - the reader counts lines (the handler gets no line number); it hands
 *     inih exactly one line per call, so the count matches inih's and the
 *     line number it returns for syntax errors;
 *   - the reader strips leading blanks, so inih's Python-style continuation
 *     lines (an indented line continues the previous value) never happen: an
 *     indented "Key=value" is an assignment of its own, as in systemd;
 *   - inih's line buffer is a fixed 200 bytes on the stack; a longer line
 *     (a deep Cgroup= path) would be split into bogus lines. The reader hands
 *     inih only "Key=" and keeps the value, which the handler then uses;
 *   - inline comments (" ;") stay enabled, as inih does by default; no value
 *     we accept contains " ;", and it is documented in bwgov.conf(5);
 *   - the reader also checks section headers, so an unknown section is an
 *     error even when it holds no keys, and stops at the first error so the
 *     first problem in a file is the one reported. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <ini.h>

#include "config.h" /* meson's: BWGOV_SYSCONFDIR, BWGOV_LIBDIR_CONF, BWGOV_RUNTIMEDIR */

#include "bwgov/config.h"
#include "bwgov/macro.h"

#define PERCENT_UNIT      UINT64_C(10000)         /* µs/s per 1% */
#define PERCENT_100       (100 * PERCENT_UNIT)
#define MAIN_CONFIG_NAME  "bwgov.conf"
#define MAIN_DROPIN_DIR   "bwgov.conf.d"
#define SECTION_GOVERNOR  "Governor"
#define SECTION_BANDWIDTH "Bandwidth"

/* ---- small string helpers (ASCII only: no locale) ---- */

static bool ascii_isdigit(char c) {
        return c >= '0' && c <= '9';
}

static bool ascii_isalpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool ascii_isspace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static char ascii_tolower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

static bool ascii_strcaseeq(const char *a, const char *b) {
        for (; *a && *b; a++, b++)
                if (ascii_tolower(*a) != ascii_tolower(*b))
                        return false;
        return *a == *b;
}

static bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static bool isempty(const char *s) {
        return !s || !*s;
}

static bool endswith(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

static bool has_control_chars(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

static char *skip_space(char *s) {
        while (ascii_isspace(*s))
                s++;
        return s;
}

static const char *skip_space_const(const char *s) {
        while (ascii_isspace(*s))
                s++;
        return s;
}

static void strip_trailing_space(char *s) {
        size_t n = strlen(s);

        while (n > 0 && ascii_isspace(s[n - 1]))
                s[--n] = '\0';
}

static void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

static int cmp_strp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

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

const char *bw_mode_to_string(enum bw_mode m) {
        if (m < 0 || m >= _BW_MODE_MAX)
                return NULL;
        return mode_table[m];
}

enum bw_mode bw_mode_from_string(const char *s) {
        if (!s)
                return _BW_MODE_INVALID;
        for (int i = 0; i < _BW_MODE_MAX; i++)
                if (streq(s, mode_table[i]))
                        return (enum bw_mode) i;
        return _BW_MODE_INVALID;
}

const char *bw_kernel_check_to_string(enum bw_kernel_check k) {
        if (k < 0 || k >= _BW_KERNEL_CHECK_MAX)
                return NULL;
        return kernel_check_table[k];
}

enum bw_kernel_check bw_kernel_check_from_string(const char *s) {
        if (!s)
                return _BW_KERNEL_CHECK_INVALID;
        for (int i = 0; i < _BW_KERNEL_CHECK_MAX; i++)
                if (streq(s, kernel_check_table[i]))
                        return (enum bw_kernel_check) i;
        return _BW_KERNEL_CHECK_INVALID;
}

/* ---- value parsers ---- */

/* Decimal digits at *p into *ret, advancing *p. -EINVAL when there is no
 * digit, -ERANGE on overflow. */
static int parse_digits(const char **p, uint64_t *ret) {
        const char *s = *p;
        uint64_t v = 0;

        if (!ascii_isdigit(*s))
                return -EINVAL;
        for (; ascii_isdigit(*s); s++) {
                unsigned d = (unsigned) (*s - '0');

                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *p = s;
        *ret = v;
        return 0;
}

static bool is_negative_number(const char *s) {
        return s[0] == '-' && (ascii_isdigit(s[1]) || s[1] == '.');
}

/* "N%" or "N.DDD%" (at most three decimals) -> µs/s (1% = 10000). */
static int parse_percent(const char *s, uint64_t *ret) {
        const char *p = s;
        uint64_t whole, frac = 0;
        unsigned n_frac = 0;
        int r;

        if (!s)
                return -EINVAL;
        if (is_negative_number(s))
                return -ERANGE;

        r = parse_digits(&p, &whole);
        if (r < 0)
                return r;
        if (*p == '.') {
                p++;
                if (!ascii_isdigit(*p))
                        return -EINVAL;
                for (; ascii_isdigit(*p); p++) {
                        if (n_frac >= 3)
                                return -EINVAL;
                        frac = frac * 10 + (uint64_t) (*p - '0');
                        n_frac++;
                }
        }
        if (p[0] != '%' || p[1] != '\0')
                return -EINVAL;

        for (; n_frac < 3; n_frac++)
                frac *= 10;
        frac *= PERCENT_UNIT / 1000;

        if (whole > (UINT64_MAX - frac) / PERCENT_UNIT)
                return -ERANGE;

        *ret = whole * PERCENT_UNIT + frac;
        return 0;
}

int bw_parse_percent_cpu(const char *s, uint64_t *ret) {
        uint64_t v;
        int r;

        r = parse_percent(s, &v);
        if (r < 0)
                return r;
        if (v == 0)
                return -ERANGE;

        *ret = v;
        return 0;
}

int bw_parse_percent_ratio(const char *s, uint64_t *ret) {
        uint64_t v;
        int r;

        r = parse_percent(s, &v);
        if (r < 0)
                return r;
        if (v > PERCENT_100)
                return -ERANGE;

        *ret = v;
        return 0;
}

static const struct {
        const char *suffix;
        uint64_t usec;
} time_units[] = {
        { "us",   1 },
        { "usec", 1 },
        { "ms",   USEC_PER_MSEC },
        { "msec", USEC_PER_MSEC },
        { "s",    USEC_PER_SEC },
        { "sec",  USEC_PER_SEC },
        { "m",    60 * USEC_PER_SEC },
        { "min",  60 * USEC_PER_SEC },
        { "h",    3600 * USEC_PER_SEC },
        { "hr",   3600 * USEC_PER_SEC },
};

int bw_parse_timespan(const char *s, uint64_t *ret_usec) {
        uint64_t total = 0;
        const char *p;
        int r;

        if (!s)
                return -EINVAL;

        p = skip_space_const(s);
        if (!*p)
                return -EINVAL;

        do {
                uint64_t whole, v, mult = USEC_PER_SEC;
                const char *frac = NULL, *unit;
                size_t unit_len;

                if (is_negative_number(p))
                        return -ERANGE;

                r = parse_digits(&p, &whole);
                if (r < 0)
                        return r;
                if (*p == '.') {
                        p++;
                        if (!ascii_isdigit(*p))
                                return -EINVAL;
                        frac = p;
                        while (ascii_isdigit(*p))
                                p++;
                }

                p = skip_space_const(p);
                unit = p;
                while (ascii_isalpha(*p))
                        p++;
                unit_len = (size_t) (p - unit);
                if (unit_len > 0) {
                        size_t i;

                        for (i = 0; i < ELEMENTSOF(time_units); i++)
                                if (strlen(time_units[i].suffix) == unit_len &&
                                    memcmp(time_units[i].suffix, unit, unit_len) == 0)
                                        break;
                        if (i >= ELEMENTSOF(time_units))
                                return -EINVAL;
                        mult = time_units[i].usec;
                }

                if (whole > UINT64_MAX / mult)
                        return -ERANGE;
                v = whole * mult;

                if (frac) {
                        /* Digits below one µs are dropped (truncation). */
                        uint64_t k = mult / 10;

                        for (; ascii_isdigit(*frac) && k > 0; frac++, k /= 10) {
                                uint64_t add = (uint64_t) (*frac - '0') * k;

                                if (v > UINT64_MAX - add)
                                        return -ERANGE;
                                v += add;
                        }
                }

                if (total > UINT64_MAX - v)
                        return -ERANGE;
                total += v;

                p = skip_space_const(p);
        } while (*p);

        *ret_usec = total;
        return 0;
}

int bw_parse_boolean(const char *s, bool *ret) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        if (!s)
                return -EINVAL;

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (ascii_strcaseeq(s, yes[i])) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (ascii_strcaseeq(s, no[i])) {
                        *ret = false;
                        return 0;
                }
        return -EINVAL;
}

int bw_parse_int_range(const char *s, int64_t min, int64_t max, int64_t *ret) {
        const char *p = s;
        bool negative = false;
        uint64_t u;
        int64_t v;
        int r;

        if (!s)
                return -EINVAL;

        if (*p == '-') {
                negative = true;
                p++;
        }
        r = parse_digits(&p, &u);
        if (r < 0)
                return r;
        if (*p)
                return -EINVAL;

        if (negative) {
                if (u > (uint64_t) INT64_MAX + 1)
                        return -ERANGE;
                v = u == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) u;
        } else {
                if (u > (uint64_t) INT64_MAX)
                        return -ERANGE;
                v = (int64_t) u;
        }
        if (v < min || v > max)
                return -ERANGE;

        *ret = v;
        return 0;
}

int bw_format_percent(uint64_t usec_per_sec, char *buf, size_t size) {
        uint64_t whole = usec_per_sec / PERCENT_UNIT, frac = usec_per_sec % PERCENT_UNIT;
        char tmp[64];
        int n;

        if (!buf)
                return -EINVAL;

        if (frac == 0)
                n = snprintf(tmp, sizeof(tmp), "%" PRIu64 "%%", whole);
        else {
                char digits[8];
                size_t l;

                l = (size_t) snprintf(digits, sizeof(digits), "%04" PRIu64, frac);
                while (l > 0 && digits[l - 1] == '0')
                        digits[--l] = '\0';
                n = snprintf(tmp, sizeof(tmp), "%" PRIu64 ".%s%%", whole, digits);
        }
        if (n < 0)
                return -EINVAL;
        if ((size_t) n >= size)
                return -ENOBUFS;

        memcpy(buf, tmp, (size_t) n + 1);
        return n;
}

/* Cgroup= "/machine.slice/foo.scope" or "machine.slice/foo.scope" ->
 * "machine.slice/foo.scope": one optional leading and one optional trailing
 * '/', no empty, "." or ".." components, no control characters. */
static int normalize_cgroup(const char *s, char **ret) {
        const char *p, *c;
        size_t n;
        char *t;

        if (strlen(s) > BW_CGROUP_PATH_MAX)
                return -ERANGE;
        if (has_control_chars(s))
                return -EINVAL;

        p = s[0] == '/' ? s + 1 : s;
        n = strlen(p);
        if (n > 0 && p[n - 1] == '/')
                n--;
        if (n == 0 || p[n - 1] == '/')
                return -EINVAL;

        for (c = p; c < p + n;) {
                const char *slash = memchr(c, '/', (size_t) (p + n - c));
                size_t l = slash ? (size_t) (slash - c) : (size_t) (p + n - c);

                if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
                        return -EINVAL;
                c += l + 1;
        }

        t = strndup(p, n);
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

/* ---- errors ---- */

void bw_config_error_done(struct bw_config_error *e) {
        if (!e)
                return;
        free(e->file);
        free(e->key);
        free(e->message);
        *e = (struct bw_config_error) { 0 };
}

char *bw_config_error_to_string(const struct bw_config_error *e) {
        const char *msg, *key, *sep;
        char *s;
        int n;

        if (!e)
                return NULL;

        msg = e->message ? e->message : "out of memory";
        key = e->key ? e->key : "";
        sep = e->key ? ": " : "";
        if (e->file && e->line > 0)
                n = asprintf(&s, "%s:%u: %s%s%s", e->file, e->line, key, sep, msg);
        else if (e->file)
                n = asprintf(&s, "%s: %s%s%s", e->file, key, sep, msg);
        else
                n = asprintf(&s, "%s%s%s", key, sep, msg);
        if (n < 0)
                return NULL;
        return s;
}

/* Fill *e (which must be empty) and return r, or -ENOMEM (with *e empty) when
 * the strings cannot be allocated. */
_printf_(6, 0)
static int error_setv(struct bw_config_error *e, int r, const char *file, unsigned line, const char *key,
                      const char *fmt, va_list ap) {
        struct bw_config_error n = { .line = line };

        if (file) {
                n.file = strdup(file);
                if (!n.file)
                        goto oom;
        }
        if (key) {
                n.key = strdup(key);
                if (!n.key)
                        goto oom;
        }
        if (vasprintf(&n.message, fmt, ap) < 0) {
                n.message = NULL;
                goto oom;
        }

        *e = n;
        return r;

oom:
        bw_config_error_done(&n);
        return -ENOMEM;
}

_printf_(6, 7)
static int error_set(struct bw_config_error *e, int r, const char *file, unsigned line, const char *key,
                     const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = error_setv(e, r, file, line, key, fmt, ap);
        va_end(ap);
        return r;
}

static int error_set_errno(struct bw_config_error *e, int r, const char *file, const char *what) {
        char buf[128];

        return error_set(e, r, file, 0, NULL, "%s: %s", what, strerror_r(-r, buf, sizeof(buf)));
}

/* ---- key tables ---- */

enum value_type {
        VT_TIMESPAN,            /* uint64_t µs, [min, max] */
        VT_RATIO,               /* uint64_t µs/s, [0, 100%] */
        VT_CPU,                 /* uint64_t µs/s, (0, max] */
        VT_MODE,                /* enum bw_mode */
        VT_KERNEL_CHECK,        /* enum bw_kernel_check */
        VT_BOOL,                /* bool */
        VT_INT,                 /* int64_t, [imin, imax] */
        VT_UINT,                /* uint64_t, [imin, imax] */
        VT_CGROUP,              /* char *, normalized */
};

struct key_def {
        const char *name;
        enum value_type type;
        size_t offset;          /* of the value in the section's struct */
        bool has_flag;
        size_t has_offset;      /* of its bool has_*, when has_flag */
        uint64_t max;           /* VT_TIMESPAN (with min), VT_CPU */
        uint64_t min;
        int64_t imin, imax;     /* VT_INT, VT_UINT */
        const char *expected;   /* "expected %s" on a malformed value */
        const char *range;      /* "value out of range, expected %s"; NULL = expected */
};

#define MODE_EXPECTED "one of off, observe, burst, elastic"

enum {
        GK_INTERVAL,
        GK_MODE,
        GK_HOST_PRESSURE_LIMIT,
        GK_PRESSURE_WINDOW,
        GK_KERNEL_CHECK,
        GK_RESTORE_ON_EXIT,
        GK_HISTORY_SIZE,
        GK_ACTIVE_INTERVAL,
        _GK_MAX,
};

static const struct key_def governor_keys[_GK_MAX] = {
        [GK_INTERVAL] = {
                .name = "Interval", .type = VT_TIMESPAN,
                .offset = offsetof(struct bw_global_config, interval_usec),
                .min = BW_INTERVAL_MIN_USEC, .max = BW_INTERVAL_MAX_USEC,
                .expected = "a time span between 100ms and 1h, like 1s",
        },
        [GK_MODE] = {
                .name = "Mode", .type = VT_MODE,
                .offset = offsetof(struct bw_global_config, mode),
                .expected = MODE_EXPECTED,
        },
        [GK_HOST_PRESSURE_LIMIT] = {
                .name = "HostPressureLimit", .type = VT_RATIO,
                .offset = offsetof(struct bw_global_config, host_pressure_limit),
                .expected = "a percentage between 0% and 100%, like 40%",
        },
        [GK_PRESSURE_WINDOW] = {
                .name = "PressureWindow", .type = VT_TIMESPAN,
                .offset = offsetof(struct bw_global_config, pressure_window_usec),
                .min = BW_PRESSURE_WINDOW_MIN_USEC, .max = BW_PRESSURE_WINDOW_MAX_USEC,
                .expected = "a time span between 500ms and 10s, like 2s",
        },
        [GK_KERNEL_CHECK] = {
                .name = "KernelCheck", .type = VT_KERNEL_CHECK,
                .offset = offsetof(struct bw_global_config, kernel_check),
                .expected = "one of off, warn, strict",
        },
        [GK_RESTORE_ON_EXIT] = {
                .name = "RestoreOnExit", .type = VT_BOOL,
                .offset = offsetof(struct bw_global_config, restore_on_exit),
                .expected = "a boolean like yes or no",
        },
        [GK_HISTORY_SIZE] = {
                .name = "HistorySize", .type = VT_UINT,
                .offset = offsetof(struct bw_global_config, history_size),
                .imin = 1, .imax = BW_HISTORY_SIZE_MAX,
                .expected = "an integer between 1 and 65536",
        },
        [GK_ACTIVE_INTERVAL] = {
                .name = "ActiveInterval", .type = VT_TIMESPAN,
                .offset = offsetof(struct bw_global_config, active_interval_usec),
                .min = BW_INTERVAL_MIN_USEC, .max = BW_INTERVAL_MAX_USEC,
                .expected = "a time span between 100ms and 1h, like 250ms",
        },
};

enum {
        BK_MODE,
        BK_CPU_QUOTA,
        BK_CPU_QUOTA_MAX,
        BK_CPU_BURST_MAX,
        BK_CREDIT_MAX,
        BK_TARGET_THROTTLE,
        BK_TARGET_PRESSURE,
        BK_PRIORITY,
        BK_INTERVAL,
        BK_ACTIVE_INTERVAL,
        BK_CGROUP,
        _BK_MAX,
};

static const struct key_def bandwidth_keys[_BK_MAX] = {
        [BK_MODE] = {
                .name = "Mode", .type = VT_MODE,
                .offset = offsetof(struct bw_unit_config, mode),
                .has_flag = true, .has_offset = offsetof(struct bw_unit_config, has_mode),
                .expected = MODE_EXPECTED,
        },
        [BK_CPU_QUOTA] = {
                .name = "CPUQuota", .type = VT_CPU,
                .offset = offsetof(struct bw_unit_config, cpu_quota),
                .max = BW_CPU_PERCENT_LIMIT,
                .expected = "a CPU percentage like 250%",
                .range = "a CPU percentage above 0% and at most 1000000%, like 250%",
        },
        [BK_CPU_QUOTA_MAX] = {
                .name = "CPUQuotaMax", .type = VT_CPU,
                .offset = offsetof(struct bw_unit_config, cpu_quota_max),
                .max = BW_CPU_PERCENT_LIMIT,
                .expected = "a CPU percentage like 400%",
                .range = "a CPU percentage above 0% and at most 1000000%, like 400%",
        },
        [BK_CPU_BURST_MAX] = {
                .name = "CPUBurstMax", .type = VT_TIMESPAN,
                .offset = offsetof(struct bw_unit_config, cpu_burst_max_usec),
                .has_flag = true, .has_offset = offsetof(struct bw_unit_config, has_cpu_burst_max),
                .min = 0, .max = UINT64_MAX,
                .expected = "a time span like 50ms",
        },
        [BK_CREDIT_MAX] = {
                .name = "CreditMax", .type = VT_TIMESPAN,
                .offset = offsetof(struct bw_unit_config, credit_max_usec),
                .min = 0, .max = BW_CREDIT_MAX_LIMIT_USEC,
                .expected = "a CPU time span between 0 and 24h, like 30s",
        },
        [BK_TARGET_THROTTLE] = {
                .name = "TargetThrottle", .type = VT_RATIO,
                .offset = offsetof(struct bw_unit_config, target_throttle),
                .expected = "a percentage between 0% and 100%, like 1%",
        },
        [BK_TARGET_PRESSURE] = {
                .name = "TargetPressure", .type = VT_RATIO,
                .offset = offsetof(struct bw_unit_config, target_pressure),
                .expected = "a percentage between 0% and 100%, like 5%",
        },
        [BK_PRIORITY] = {
                .name = "Priority", .type = VT_INT,
                .offset = offsetof(struct bw_unit_config, priority),
                .imin = BW_PRIORITY_MIN, .imax = BW_PRIORITY_MAX,
                .expected = "an integer between -1000 and 1000",
        },
        [BK_INTERVAL] = {
                .name = "Interval", .type = VT_TIMESPAN,
                .offset = offsetof(struct bw_unit_config, interval_usec),
                .min = BW_INTERVAL_MIN_USEC, .max = BW_INTERVAL_MAX_USEC,
                .expected = "a time span between 100ms and 1h, like 1s",
        },
        [BK_ACTIVE_INTERVAL] = {
                .name = "ActiveInterval", .type = VT_TIMESPAN,
                .offset = offsetof(struct bw_unit_config, active_interval_usec),
                .min = BW_INTERVAL_MIN_USEC, .max = BW_INTERVAL_MAX_USEC,
                .expected = "a time span between 100ms and 1h, like 250ms",
        },
        [BK_CGROUP] = {
                .name = "Cgroup", .type = VT_CGROUP,
                .offset = offsetof(struct bw_unit_config, cgroup),
                .expected = "a cgroup path like /machine.slice/foo.scope, without empty, \".\" or \"..\" components",
                .range = "a cgroup path of at most 4096 characters",
        },
};

static const char *const known_keys[] = {
        SECTION_GOVERNOR ".Interval",
        SECTION_GOVERNOR ".Mode",
        SECTION_GOVERNOR ".HostPressureLimit",
        SECTION_GOVERNOR ".PressureWindow",
        SECTION_GOVERNOR ".KernelCheck",
        SECTION_GOVERNOR ".RestoreOnExit",
        SECTION_GOVERNOR ".HistorySize",
        SECTION_GOVERNOR ".ActiveInterval",
        SECTION_BANDWIDTH ".Mode",
        SECTION_BANDWIDTH ".CPUQuota",
        SECTION_BANDWIDTH ".CPUQuotaMax",
        SECTION_BANDWIDTH ".CPUBurstMax",
        SECTION_BANDWIDTH ".CreditMax",
        SECTION_BANDWIDTH ".TargetThrottle",
        SECTION_BANDWIDTH ".TargetPressure",
        SECTION_BANDWIDTH ".Priority",
        SECTION_BANDWIDTH ".Interval",
        SECTION_BANDWIDTH ".ActiveInterval",
        SECTION_BANDWIDTH ".Cgroup",
        NULL,
};

const char *const *bw_config_known_keys(void) {
        return known_keys;
}

static const struct bw_global_config global_defaults = {
        .interval_usec = USEC_PER_SEC,
        .mode = BW_MODE_ELASTIC,
        .host_pressure_limit = 40 * PERCENT_UNIT,
        .pressure_window_usec = 2 * USEC_PER_SEC,
        .kernel_check = BW_KERNEL_CHECK_WARN,
        .restore_on_exit = true,
        .history_size = 256,
        .active_interval_usec = 250 * USEC_PER_MSEC,
};

static const struct bw_unit_config unit_defaults = {
        .mode = BW_MODE_ELASTIC,        /* not used: has_mode is false */
        .credit_max_usec = 30 * USEC_PER_SEC,
        .target_throttle = 1 * PERCENT_UNIT,
        .target_pressure = 5 * PERCENT_UNIT,
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

/* Where the winning assignment of a key came from. file is borrowed from the
 * drop-in list, valid while the unit is being loaded. */
struct source {
        const char *file;
        unsigned line;
};

/* ---- parsing one file ---- */

struct parse_ctx {
        FILE *f;
        const char *path;
        const struct section_def *section;
        void *data;                     /* struct bw_global_config or bw_unit_config */
        struct source *sources;         /* section->n_keys entries */

        unsigned line;
        char *buf;
        size_t buf_size;
        char *long_value;               /* value of the current line, when too long for inih */

        int r;                          /* first error, < 0 once set */
        struct bw_config_error error;
};

_printf_(4, 5)
static void ctx_fail(struct parse_ctx *ctx, int r, const char *key, const char *fmt, ...) {
        va_list ap;

        if (ctx->r < 0)
                return;

        va_start(ap, fmt);
        ctx->r = error_setv(&ctx->error, r, ctx->path, ctx->line, key, fmt, ap);
        va_end(ap);
}

static void *field_ptr(const struct parse_ctx *ctx, size_t offset) {
        return (uint8_t *) ctx->data + offset;
}

static void reset_key(struct parse_ctx *ctx, const struct key_def *k) {
        const uint8_t *def = (const uint8_t *) ctx->section->defaults + k->offset;
        void *field = field_ptr(ctx, k->offset);

        switch (k->type) {
        case VT_TIMESPAN:
        case VT_RATIO:
        case VT_CPU:
        case VT_UINT:
                memcpy(field, def, sizeof(uint64_t));
                break;
        case VT_INT:
                memcpy(field, def, sizeof(int64_t));
                break;
        case VT_MODE:
                memcpy(field, def, sizeof(enum bw_mode));
                break;
        case VT_KERNEL_CHECK:
                memcpy(field, def, sizeof(enum bw_kernel_check));
                break;
        case VT_BOOL:
                memcpy(field, def, sizeof(bool));
                break;
        case VT_CGROUP: {
                char **s = field;

                free(*s);
                *s = NULL;
                break;
        }
        }

        if (k->has_flag)
                *(bool *) field_ptr(ctx, k->has_offset) = false;
}

static void apply_key(struct parse_ctx *ctx, size_t idx, const char *value) {
        const struct key_def *k = &ctx->section->keys[idx];
        void *field = field_ptr(ctx, k->offset);
        int r = 0;

        if (isempty(value)) {
                /* systemd semantics: "Key=" resets to the default. */
                reset_key(ctx, k);
                if (ctx->sources)
                        ctx->sources[idx] = (struct source) { 0 };
                return;
        }

        switch (k->type) {
        case VT_TIMESPAN: {
                uint64_t u;

                r = bw_parse_timespan(value, &u);
                if (r >= 0 && (u < k->min || u > k->max))
                        r = -ERANGE;
                if (r >= 0)
                        *(uint64_t *) field = u;
                break;
        }
        case VT_RATIO: {
                uint64_t u;

                r = bw_parse_percent_ratio(value, &u);
                if (r >= 0)
                        *(uint64_t *) field = u;
                break;
        }
        case VT_CPU: {
                uint64_t u;

                r = bw_parse_percent_cpu(value, &u);
                if (r >= 0 && u > k->max)
                        r = -ERANGE;
                if (r >= 0)
                        *(uint64_t *) field = u;
                break;
        }
        case VT_MODE: {
                enum bw_mode m = bw_mode_from_string(value);

                if (m < 0)
                        r = -EINVAL;
                else
                        *(enum bw_mode *) field = m;
                break;
        }
        case VT_KERNEL_CHECK: {
                enum bw_kernel_check kc = bw_kernel_check_from_string(value);

                if (kc < 0)
                        r = -EINVAL;
                else
                        *(enum bw_kernel_check *) field = kc;
                break;
        }
        case VT_BOOL: {
                bool b;

                r = bw_parse_boolean(value, &b);
                if (r >= 0)
                        *(bool *) field = b;
                break;
        }
        case VT_INT: {
                int64_t i;

                r = bw_parse_int_range(value, k->imin, k->imax, &i);
                if (r >= 0)
                        *(int64_t *) field = i;
                break;
        }
        case VT_UINT: {
                int64_t i;

                r = bw_parse_int_range(value, k->imin, k->imax, &i);
                if (r >= 0)
                        *(uint64_t *) field = (uint64_t) i;
                break;
        }
        case VT_CGROUP: {
                char **s = field, *t = NULL;

                r = normalize_cgroup(value, &t);
                if (r >= 0) {
                        free(*s);
                        *s = t;
                }
                break;
        }
        }

        if (r == -ENOMEM) {
                ctx->r = -ENOMEM;
                return;
        }
        if (r == -ERANGE) {
                ctx_fail(ctx, -EINVAL, k->name, "value out of range, expected %s",
                         k->range ? k->range : k->expected);
                return;
        }
        if (r < 0) {
                ctx_fail(ctx, -EINVAL, k->name, "expected %s", k->expected);
                return;
        }

        if (k->has_flag)
                *(bool *) field_ptr(ctx, k->has_offset) = true;
        if (ctx->sources)
                ctx->sources[idx] = (struct source) { .file = ctx->path, .line = ctx->line };
}

/* inih's line buffer is too small for this line: give inih "Key=" and keep
 * the value (after '=' or ':', inline comment removed, blanks stripped, the
 * way inih would) for the handler. */
static char *reader_long_line(struct parse_ctx *ctx, char *p, char *str, size_t num) {
        size_t key_len;
        bool was_space = false;
        char *value, *q;

        if (*p == '#' || *p == ';') {
                strcpy(str, "\n");
                return str;
        }

        key_len = strcspn(p, "=:");
        if (!p[key_len] || key_len + 3 > num) {
                ctx_fail(ctx, -EINVAL, NULL, "line too long");
                return NULL;
        }

        value = p + key_len + 1;
        for (q = value; *q; q++) {
                if (was_space && *q == ';') {
                        *q = '\0';
                        break;
                }
                was_space = ascii_isspace(*q);
        }
        value = skip_space(value);
        strip_trailing_space(value);

        ctx->long_value = strdup(value);
        if (!ctx->long_value) {
                ctx->r = -ENOMEM;
                return NULL;
        }

        memcpy(str, p, key_len + 1);
        str[key_len + 1] = '\n';
        str[key_len + 2] = '\0';
        return str;
}

static char *reader_cb(char *str, int num, void *stream) {
        struct parse_ctx *ctx = stream;
        ssize_t n;
        size_t len;
        char *p;

        if (ctx->r < 0)
                return NULL; /* stop at the first error */
        if (num < 4) {
                ctx_fail(ctx, -ENOBUFS, NULL, "libinih line buffer too small");
                return NULL;
        }

        free(ctx->long_value);
        ctx->long_value = NULL;

        errno = 0;
        n = getline(&ctx->buf, &ctx->buf_size, ctx->f);
        if (n < 0) {
                if (ferror(ctx->f)) {
                        char buf[128];
                        int r = errno > 0 ? -errno : -EIO;

                        ctx_fail(ctx, r, NULL, "read error: %s", strerror_r(-r, buf, sizeof(buf)));
                }
                return NULL;
        }
        ctx->line++;

        if (memchr(ctx->buf, '\0', (size_t) n)) {
                ctx_fail(ctx, -EINVAL, NULL, "line contains a NUL byte");
                return NULL;
        }

        p = ctx->buf;
        if (ctx->line == 1 && strncmp(p, "\xEF\xBB\xBF", 3) == 0)
                p += 3; /* UTF-8 BOM */
        p = skip_space(p);
        strip_trailing_space(p);
        len = strlen(p);

        if (*p == '[') {
                const char *end = strchr(p, ']');

                /* Without ']' inih reports a syntax error on this line. */
                if (end) {
                        size_t l = (size_t) (end - p - 1);

                        if (l != strlen(ctx->section->name) || memcmp(p + 1, ctx->section->name, l) != 0) {
                                ctx_fail(ctx, -EINVAL, NULL, "unknown section [%.*s], expected [%s]",
                                         (int) l, p + 1, ctx->section->name);
                                return NULL;
                        }
                }
        }

        if (len + 2 > (size_t) num)
                return reader_long_line(ctx, p, str, (size_t) num);

        memcpy(str, p, len);
        str[len] = '\n';
        str[len + 1] = '\0';
        return str;
}

static int handler_cb(void *user, const char *section, const char *name, const char *value) {
        struct parse_ctx *ctx = user;

        if (ctx->r < 0)
                return 0;
        if (ctx->long_value)
                value = ctx->long_value;

        if (isempty(section)) {
                ctx_fail(ctx, -EINVAL, name, "assignment outside of a section, expected [%s] first",
                         ctx->section->name);
                return 0;
        }
        if (!streq(section, ctx->section->name)) {
                /* Normally caught by the reader already. */
                ctx_fail(ctx, -EINVAL, NULL, "unknown section [%s], expected [%s]", section, ctx->section->name);
                return 0;
        }

        for (size_t i = 0; i < ctx->section->n_keys; i++)
                if (streq(name, ctx->section->keys[i].name)) {
                        apply_key(ctx, i, value);
                        return ctx->r >= 0;
                }

        ctx_fail(ctx, -EINVAL, name, "unknown key in section [%s]", section);
        return 0;
}

/* Parse path into data (already holding defaults or earlier files' values).
 * On failure data may be partially updated (callers work on a scratch copy)
 * and *ret_error is filled. */
static int parse_file(const char *path, const struct section_def *section, void *data, struct source *sources,
                      struct bw_config_error *ret_error) {
        _cleanup_fclose_ FILE *f = NULL;
        struct parse_ctx ctx = {
                .path = path,
                .section = section,
                .data = data,
                .sources = sources,
        };
        int k;

        f = fopen(path, "re");
        if (!f)
                return error_set_errno(ret_error, -errno, path, "cannot open");
        ctx.f = f;

        k = ini_parse_stream(reader_cb, &ctx, handler_cb, &ctx);

        free(ctx.buf);
        free(ctx.long_value);

        if (ctx.r == -ENOMEM || k == -2) {
                bw_config_error_done(&ctx.error);
                return -ENOMEM;
        }
        if (k > 0 && (ctx.r >= 0 || (unsigned) k < ctx.error.line)) {
                /* inih found a syntax error before any error of ours. */
                bw_config_error_done(&ctx.error);
                return error_set(ret_error, -EINVAL, path, (unsigned) k, NULL,
                                 "syntax error, expected [Section], Key=value or a comment");
        }
        if (ctx.r < 0) {
                *ret_error = ctx.error;
                return ctx.r;
        }
        if (k < 0)
                return error_set(ret_error, -EIO, path, 0, NULL, "cannot parse");
        return 0;
}

/* ---- directory scanning ---- */

/* Is name in dfd a configuration file? Returns 1 (with *ret_masked), 0 when
 * it is absent or not a file (directory, FIFO, ...), or a negative errno
 * (e.g. -ENOENT for a dangling symlink). Masked: a symlink to /dev/null, the
 * null device itself, or an empty regular file (systemd's null_or_empty()). */
static int check_file(int dfd, const char *name, bool *ret_masked) {
        static const char devnull[] = "/dev/null";
        struct stat st;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;

        if (S_ISLNK(st.st_mode)) {
                char target[sizeof(devnull)];
                ssize_t n;

                n = readlinkat(dfd, name, target, sizeof(target));
                if (n == (ssize_t) strlen(devnull) && memcmp(target, devnull, (size_t) n) == 0) {
                        *ret_masked = true;
                        return 1;
                }
                if (fstatat(dfd, name, &st, 0) < 0)
                        return -errno;
        }

        if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) {
                *ret_masked = true;
                return 1;
        }
        if (S_ISREG(st.st_mode)) {
                *ret_masked = st.st_size == 0;
                return 1;
        }
        return 0;
}

struct dropin {
        char *name;
        char *path;
        bool masked;
};

struct dropin_list {
        struct dropin *items;
        size_t n;
};

static void dropin_list_done(struct dropin_list *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].name);
                free(l->items[i].path);
        }
        free(l->items);
        *l = (struct dropin_list) { 0 };
}

/* Add name, or replace the entry of the same name from a lower-priority
 * directory. Takes ownership of path (freed on failure). */
static int dropin_list_put(struct dropin_list *l, const char *name, char *path, bool masked) {
        struct dropin *items;
        char *n;

        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i].name, name)) {
                        free(l->items[i].path);
                        l->items[i].path = path;
                        l->items[i].masked = masked;
                        return 0;
                }

        n = strdup(name);
        if (!n) {
                free(path);
                return -ENOMEM;
        }
        items = reallocarray(l->items, l->n + 1, sizeof(*items));
        if (!items) {
                free(n);
                free(path);
                return -ENOMEM;
        }
        l->items = items;
        l->items[l->n++] = (struct dropin) { .name = n, .path = path, .masked = masked };
        return 0;
}

static int cmp_dropin(const void *a, const void *b) {
        return strcmp(((const struct dropin *) a)->name, ((const struct dropin *) b)->name);
}

/* Collect the *.conf files of <dir>/<subdir> over all dirs. */
static int collect_dropins(const char *const *dirs, const char *subdir, struct dropin_list *ret,
                           struct bw_config_error *error) {
        struct dropin_list l = { 0 };
        int r;

        for (size_t i = 0; dirs[i]; i++) {
                _cleanup_(closedirp) DIR *d = NULL;
                _cleanup_free_ char *dpath = NULL;

                if (asprintf(&dpath, "%s/%s", dirs[i], subdir) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }

                d = opendir(dpath);
                if (!d) {
                        if (errno == ENOENT || errno == ENOTDIR)
                                continue;
                        r = error_set_errno(error, -errno, dpath, "cannot open directory");
                        goto fail;
                }

                for (;;) {
                        struct dirent *de;
                        char *path;
                        bool masked = false;

                        errno = 0;
                        de = readdir(d);
                        if (!de) {
                                if (errno != 0) {
                                        r = error_set_errno(error, -errno, dpath, "cannot read directory");
                                        goto fail;
                                }
                                break;
                        }

                        if (de->d_name[0] == '.' || !endswith(de->d_name, ".conf"))
                                continue;

                        if (asprintf(&path, "%s/%s", dpath, de->d_name) < 0) {
                                r = -ENOMEM;
                                goto fail;
                        }

                        r = check_file(dirfd(d), de->d_name, &masked);
                        if (r < 0) {
                                r = error_set_errno(error, r, path, "cannot access");
                                free(path);
                                goto fail;
                        }
                        if (r == 0) {
                                free(path);
                                continue;
                        }

                        r = dropin_list_put(&l, de->d_name, path, masked);
                        if (r < 0)
                                goto fail;
                }
        }

        if (l.n > 0)
                qsort(l.items, l.n, sizeof(*l.items), cmp_dropin);
        *ret = l;
        return 0;

fail:
        dropin_list_done(&l);
        return r;
}

static int apply_dropins(const struct dropin_list *l, const struct section_def *section, void *data,
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

static int load_global(const char *const *dirs, struct bw_global_config *ret, struct bw_config_error *error) {
        struct bw_global_config g = global_defaults;
        struct dropin_list l = { 0 };
        size_t n_dirs = 0;
        int r;

        while (dirs[n_dirs])
                n_dirs++;

        /* The main file: only the highest-priority copy is read. */
        for (size_t i = n_dirs; i > 0; i--) {
                _cleanup_free_ char *path = NULL;
                bool masked = false;

                if (asprintf(&path, "%s/%s", dirs[i - 1], MAIN_CONFIG_NAME) < 0)
                        return -ENOMEM;

                r = check_file(AT_FDCWD, path, &masked);
                if (r == -ENOTDIR)
                        continue; /* the search directory is not a directory: missing */
                if (r < 0)
                        return error_set_errno(error, r, path, "cannot access");
                if (r == 0)
                        continue;

                if (!masked) {
                        r = parse_file(path, &governor_section, &g, NULL, error);
                        if (r < 0)
                                return r;
                }
                break;
        }

        r = collect_dropins(dirs, MAIN_DROPIN_DIR, &l, error);
        if (r < 0)
                return r;
        r = apply_dropins(&l, &governor_section, &g, NULL, error);
        dropin_list_done(&l);
        if (r < 0)
                return r;

        *ret = g;
        return 0;
}

static bool unit_name_is_valid(const char *name) {
        return !isempty(name) && !streq(name, ".") && !streq(name, "..") && !strchr(name, '/') &&
                !has_control_chars(name);
}

struct strv {
        char **items;
        size_t n;
};

static void strv_done(struct strv *v) {
        for (size_t i = 0; i < v->n; i++)
                free(v->items[i]);
        free(v->items);
        *v = (struct strv) { 0 };
}

/* Names of the unit directories over all dirs, sorted, without duplicates. */
static int collect_unit_names(const char *const *dirs, struct strv *ret, struct bw_config_error *error) {
        struct strv v = { 0 };
        int r;

        for (size_t i = 0; dirs[i]; i++) {
                _cleanup_(closedirp) DIR *d = NULL;

                d = opendir(dirs[i]);
                if (!d) {
                        if (errno == ENOENT || errno == ENOTDIR)
                                continue;
                        r = error_set_errno(error, -errno, dirs[i], "cannot open directory");
                        goto fail;
                }

                for (;;) {
                        struct dirent *de;
                        struct stat st;
                        char *name, **items;
                        size_t len;

                        errno = 0;
                        de = readdir(d);
                        if (!de) {
                                if (errno != 0) {
                                        r = error_set_errno(error, -errno, dirs[i], "cannot read directory");
                                        goto fail;
                                }
                                break;
                        }

                        if (!endswith(de->d_name, ".d") || streq(de->d_name, MAIN_DROPIN_DIR))
                                continue;

                        if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISDIR(st.st_mode))
                                continue; /* not a directory, or a dangling symlink: not a unit */

                        len = strlen(de->d_name);
                        name = strndup(de->d_name, len - 2);
                        if (!name) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        if (!unit_name_is_valid(name)) {
                                _cleanup_free_ char *path = NULL;

                                free(name);
                                if (asprintf(&path, "%s/%s", dirs[i], de->d_name) < 0) {
                                        r = -ENOMEM;
                                        goto fail;
                                }
                                r = error_set(error, -EINVAL, path, 0, NULL,
                                              "invalid unit name, expected <unit>.d with a unit name that is not "
                                              "empty, \".\" or \"..\" and has no control characters");
                                goto fail;
                        }

                        items = reallocarray(v.items, v.n + 1, sizeof(*items));
                        if (!items) {
                                free(name);
                                r = -ENOMEM;
                                goto fail;
                        }
                        v.items = items;
                        v.items[v.n++] = name;
                }
        }

        if (v.n > 0) {
                size_t j = 0;

                qsort(v.items, v.n, sizeof(*v.items), cmp_strp);
                for (size_t i = 0; i < v.n; i++) {
                        if (j > 0 && streq(v.items[j - 1], v.items[i]))
                                free(v.items[i]);
                        else
                                v.items[j++] = v.items[i];
                }
                v.n = j;
        }

        *ret = v;
        return 0;

fail:
        strv_done(&v);
        return r;
}

static void unit_config_done(struct bw_unit_config *u) {
        if (!u)
                return;
        free(u->name);
        free(u->cgroup);
        free(u->cpu_quota_source);
        *u = (struct bw_unit_config) { 0 };
}

static int unit_validate(const struct bw_unit_config *u, const struct source *src, struct bw_config_error *error) {
        if (u->cpu_quota > 0 && u->cpu_quota_max > 0 && u->cpu_quota_max < u->cpu_quota) {
                char quota[32];

                if (bw_format_percent(u->cpu_quota, quota, sizeof(quota)) < 0)
                        return -EINVAL;

                return error_set(error, -EINVAL, src[BK_CPU_QUOTA_MAX].file, src[BK_CPU_QUOTA_MAX].line,
                                 bandwidth_keys[BK_CPU_QUOTA_MAX].name,
                                 "expected a CPU percentage not below CPUQuota=%s (set at %s:%u)",
                                 quota, src[BK_CPU_QUOTA].file, src[BK_CPU_QUOTA].line);
        }
        return 0;
}

/* Load one unit. Returns 1 and fills *ret, 0 when all its drop-ins are
 * masked (not configured), or a negative errno. */
static int load_unit(const char *const *dirs, const char *name, struct bw_unit_config *ret,
                     struct bw_config_error *error) {
        _cleanup_(unit_config_done) struct bw_unit_config u = unit_defaults;
        struct source sources[_BK_MAX] = { 0 };
        _cleanup_free_ char *subdir = NULL;
        struct dropin_list l = { 0 };
        size_t n_active = 0;
        int r;

        if (asprintf(&subdir, "%s.d", name) < 0)
                return -ENOMEM;

        r = collect_dropins(dirs, subdir, &l, error);
        if (r < 0)
                return r;

        for (size_t i = 0; i < l.n; i++)
                if (!l.items[i].masked)
                        n_active++;
        if (n_active == 0) {
                dropin_list_done(&l);
                return 0;
        }

        u.name = strdup(name);
        if (!u.name) {
                r = -ENOMEM;
                goto finish;
        }

        r = apply_dropins(&l, &bandwidth_section, &u, sources, error);
        if (r < 0)
                goto finish;

        r = unit_validate(&u, sources, error);
        if (r < 0)
                goto finish;

        if (u.cpu_quota > 0 &&
            asprintf(&u.cpu_quota_source, "%s:%u", sources[BK_CPU_QUOTA].file, sources[BK_CPU_QUOTA].line) < 0) {
                u.cpu_quota_source = NULL;
                r = -ENOMEM;
                goto finish;
        }

        *ret = u;
        u = (struct bw_unit_config) { 0 };
        r = 1;

finish:
        dropin_list_done(&l);
        return r;
}

static int load_units(const char *const *dirs, struct bw_config *c, struct bw_config_error *error) {
        struct strv names = { 0 };
        int r = 0;

        r = collect_unit_names(dirs, &names, error);
        if (r < 0)
                return r;

        for (size_t i = 0; i < names.n; i++) {
                struct bw_unit_config u = { 0 }, *units;

                r = load_unit(dirs, names.items[i], &u, error);
                if (r < 0)
                        break;
                if (r == 0)
                        continue;

                units = reallocarray(c->units, c->n_units + 1, sizeof(*units));
                if (!units) {
                        unit_config_done(&u);
                        r = -ENOMEM;
                        break;
                }
                c->units = units;
                c->units[c->n_units++] = u;
        }

        strv_done(&names);
        return r < 0 ? r : 0;
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

void bw_config_done(struct bw_config *c) {
        if (!c)
                return;
        for (size_t i = 0; i < c->n_units; i++)
                unit_config_done(&c->units[i]);
        free(c->units);
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

uint64_t bw_unit_active_interval_usec(const struct bw_config *c, const struct bw_unit_config *u) {
        uint64_t a;

        if (u && u->active_interval_usec > 0)
                a = u->active_interval_usec;
        else
                a = c ? c->global.active_interval_usec : global_defaults.active_interval_usec;
        return a < bw_unit_interval_usec(c, u) ? a : bw_unit_interval_usec(c, u);
}
