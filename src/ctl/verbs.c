/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl status | show | explain | history | reload | pause | resume:
 * one or two varlink calls, then a table, key/value lines or the reply as
 * JSON. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

#include "bwgov/macro.h"
#include "bwgov/policy.h"
#include "format.h"
#include "table.h"
#include "varlink-client.h"
#include "verbs.h"

#define INTERFACE "io.bwgov.Governor"
#define DEFAULT_SOCKET BWGOV_RUNTIMEDIR "/io.bwgov.Governor"

#define ANSI_GREEN  "\033[32m"
#define ANSI_YELLOW "\033[33m"
#define ANSI_GREY   "\033[2m"
#define ANSI_BOLD   "\033[1m"
#define ANSI_RESET  "\033[0m"

enum {
        TAKES_UNIT  = 1 << 0,
        TAKES_LINES = 1 << 1,
        HAS_TABLE   = 1 << 2,           /* --no-legend means something */
        MUTATING    = 1 << 3,           /* root only */
};

struct verb_info {
        const char *name;
        unsigned flags;
        const char *summary;
};

struct options {
        const struct verb_info *verb;
        bool json;
        bool legend;
        bool colour;
        const char *socket;
        bool has_lines;
        uint64_t lines;
        const char *unit;
};

/* ---- options ------------------------------------------------------------ */

static void help(const struct verb_info *v) {
        printf("Usage: bwgovctl %s [OPTIONS]%s\n\n%s.\n\n"
               "  -h --help            Show this help\n"
               "     --json           Print the result as JSON (schema: bwgovctl(1))\n",
               v->name, v->flags & TAKES_UNIT ? " UNIT" : "", v->summary);
        if (v->flags & HAS_TABLE)
                printf("     --no-legend      No column headers and summary lines\n");
        if (v->flags & TAKES_LINES)
                printf("  -n --lines=N         Only the newest N entries (default: all held)\n");
        printf("     --socket=PATH    The daemon's socket (default: $BWGOV_SOCKET or\n"
               "                      %s)\n"
               "\n"
               "Exit status: 0 success, 1 failure, 2 usage error, 3 bwgovd not running,\n"
               "4 no such unit, 5 permission denied%s.\n",
               DEFAULT_SOCKET, v->flags & MUTATING ? " (this command needs root)" : "");
}

static bool use_colour(void) {
        const char *term = getenv("TERM");

        return isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && !(term && strcmp(term, "dumb") == 0);
}

/* 1: run, 0: help shown, -EINVAL: usage error (reported). */
static int parse_options(int argc, char *argv[], const struct verb_info *v, struct options *ret) {
        enum { ARG_JSON = 0x100, ARG_NO_LEGEND, ARG_SOCKET };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h'           },
                { "json",      no_argument,       NULL, ARG_JSON      },
                { "no-legend", no_argument,       NULL, ARG_NO_LEGEND },
                { "socket",    required_argument, NULL, ARG_SOCKET    },
                { "lines",     required_argument, NULL, 'n'           },
                { NULL, 0, NULL, 0 }
        };
        const char *e = getenv("BWGOV_SOCKET");
        struct options o = {
                .verb = v,
                .legend = true,
                .socket = e && *e ? e : DEFAULT_SOCKET,
        };
        int c, n_args;

        /* getopt prints "bwgovctl: ..." for unknown options and missing
         * arguments; argv[0] is the verb, so give it the tool's name. */
        argv[0] = (char *) "bwgovctl";
        while ((c = getopt_long(argc, argv, v->flags & TAKES_LINES ? "hn:" : "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help(v);
                        return 0;
                case ARG_JSON:
                        o.json = true;
                        break;
                case ARG_NO_LEGEND:
                        o.legend = false;
                        break;
                case ARG_SOCKET:
                        if (!*optarg) {
                                fprintf(stderr, "bwgovctl: --socket= needs a path\n");
                                return -EINVAL;
                        }
                        o.socket = optarg;
                        break;
                case 'n': {
                        char *end;
                        unsigned long long n;

                        if (!(v->flags & TAKES_LINES)) {
                                fprintf(stderr, "bwgovctl: %s takes no --lines\n", v->name);
                                return -EINVAL;
                        }
                        errno = 0;
                        n = strtoull(optarg, &end, 10);
                        if (!*optarg || *end || errno != 0 || n == 0 || optarg[0] < '0' || optarg[0] > '9') {
                                fprintf(stderr, "bwgovctl: invalid number of lines \"%s\": expected a whole number from 1\n",
                                        optarg);
                                return -EINVAL;
                        }
                        o.has_lines = true;
                        o.lines = n;
                        break;
                }
                default:
                        return -EINVAL;
                }

        n_args = argc - optind;
        if (v->flags & TAKES_UNIT) {
                if (n_args < 1) {
                        fprintf(stderr, "bwgovctl: %s needs a unit name, e.g. 'bwgovctl %s app.slice'\n", v->name, v->name);
                        return -EINVAL;
                }
                if (n_args > 1) {
                        fprintf(stderr, "bwgovctl: %s takes one unit, got %d arguments\n", v->name, n_args);
                        return -EINVAL;
                }
                o.unit = argv[optind];
        } else if (n_args > 0) {
                fprintf(stderr, "bwgovctl: %s takes no arguments, got \"%s\"\n", v->name, argv[optind]);
                return -EINVAL;
        }
        o.colour = !o.json && use_colour();
        *ret = o;
        return 1;
}

/* ---- calls -------------------------------------------------------------- */

static const char *method_short(const char *method) {
        const char *dot = strrchr(method, '.');
        return dot ? dot + 1 : method;
}

/* Print why a call failed; returns the exit code. */
static int report_error(const struct options *o, const char *method, const char *error, json_t *params) {
        if (strcmp(error, INTERFACE ".UnitNotFound") == 0) {
                fprintf(stderr, "bwgovctl: no unit \"%s\" is configured (see 'bwgovctl status')\n",
                        o->unit ? o->unit : "?");
                return CTL_EXIT_NO_UNIT;
        }
        if (strcmp(error, INTERFACE ".PermissionDenied") == 0) {
                fprintf(stderr, "bwgovctl: permission denied: %s needs %s\n", o->verb->name,
                        o->verb->flags & MUTATING ? "root" : "root or membership of group bwgov");
                return CTL_EXIT_DENIED;
        }
        if (strcmp(error, INTERFACE ".ReloadFailed") == 0) {
                const char *reason = json_string_value(json_object_get(params, "reason"));
                fprintf(stderr, "bwgovctl: reload failed: %s\n", reason ? reason : "no reason given");
                return CTL_EXIT_FAILURE;
        }

        {
                _cleanup_free_ char *s = json_dumps(params, JSON_COMPACT);
                fprintf(stderr, "bwgovctl: %s failed: %s %s\n", method_short(method), error, s ? s : "");
        }
        return CTL_EXIT_FAILURE;
}

/* Call method (connecting first when *client is NULL). Returns 0 and
 * *ret, or the exit code after printing why. */
static int call(const struct options *o, VarlinkClient **client, const char *method, json_t *params, json_t **ret) {
        _cleanup_free_ char *error = NULL;
        json_t *reply = NULL;
        int r, code;

        if (!*client) {
                r = varlink_client_connect(o->socket, client);
                if (r == -EACCES || r == -EPERM) {
                        fprintf(stderr, "bwgovctl: permission denied: cannot connect to %s: %s "
                                "(%s needs root or membership of group bwgov)\n", o->socket, strerror(-r), o->verb->name);
                        return CTL_EXIT_DENIED;
                }
                if (r == -ENOMEM) {
                        fprintf(stderr, "bwgovctl: out of memory\n");
                        return CTL_EXIT_FAILURE;
                }
                if (r < 0) {
                        fprintf(stderr, "bwgovd is not running (cannot connect to %s: %s)\n", o->socket, strerror(-r));
                        return CTL_EXIT_NOT_RUNNING;
                }
        }

        r = varlink_client_call(*client, method, params, &reply, &error);
        if (r < 0) {
                switch (r) {
                case -ECONNRESET:
                        fprintf(stderr, "bwgovctl: bwgovd closed the connection during %s\n", method_short(method));
                        break;
                case -ETIMEDOUT:
                        fprintf(stderr, "bwgovctl: bwgovd did not answer %s in time\n", method_short(method));
                        break;
                case -EBADMSG:
                        fprintf(stderr, "bwgovctl: malformed reply to %s\n", method_short(method));
                        break;
                default:
                        fprintf(stderr, "bwgovctl: %s failed: %s\n", method_short(method), strerror(-r));
                }
                return CTL_EXIT_FAILURE;
        }
        if (r > 0) {
                code = report_error(o, method, error, reply);
                json_decref(reply);
                return code;
        }
        *ret = reply;
        return 0;
}

static int print_json(json_t *v) {
        _cleanup_free_ char *s = json_dumps(v, JSON_INDENT(2));

        if (!s) {
                fprintf(stderr, "bwgovctl: out of memory\n");
                return CTL_EXIT_FAILURE;
        }
        printf("%s\n", s);
        return 0;
}

static json_t *unit_params(const struct options *o) {
        return json_pack("{s:s}", "unit", o->unit);
}

/* ---- reading replies ---------------------------------------------------- */

static const char *jstr(json_t *o, const char *key) {
        return json_string_value(json_object_get(o, key));
}

static const char *strq(const char *s) {
        return s ? s : "?";
}

static bool jbool(json_t *o, const char *key) {
        return json_is_true(json_object_get(o, key));
}

static bool jhas(json_t *o, const char *key) {
        json_t *v = json_object_get(o, key);
        return v && !json_is_null(v);
}

static uint64_t ju64(json_t *o, const char *key) {
        json_int_t v = json_integer_value(json_object_get(o, key));
        return v > 0 ? (uint64_t) v : 0;
}

static char *fmt_bw_quota(char *buf, json_t *bw) {
        if (!json_is_object(bw)) {
                snprintf(buf, FMT_MAX, "-");
                return buf;
        }
        return fmt_quota(buf, jhas(bw, "quota_usec"), ju64(bw, "quota_usec"), ju64(bw, "period_usec"));
}

static char *fmt_bw_burst(char *buf, json_t *bw) {
        if (!json_is_object(bw) || !jbool(bw, "has_burst")) {
                snprintf(buf, FMT_MAX, "-");
                return buf;
        }
        return fmt_span(buf, ju64(bw, "burst_usec"));
}

/* "0.50 CPU (50%), period 100ms, burst 10ms" */
static void print_bandwidth(json_t *bw) {
        char q[FMT_MAX], p[FMT_MAX], b[FMT_MAX];

        if (!json_is_object(bw)) {
                printf("-\n");
                return;
        }
        printf("%s, period %s", fmt_bw_quota(q, bw), fmt_span(p, ju64(bw, "period_usec")));
        if (jbool(bw, "has_burst"))
                printf(", burst %s", fmt_bw_burst(b, bw));
        printf("\n");
}

/* The daemon's word for what the unit is doing (see "state" in
 * bwgovctl(1)), with a colour for tables. */
static const char *unit_state(json_t *u, const char **ret_colour) {
        static const struct {
                const char *state, *colour;
        } colours[] = {
                { "absent",    ANSI_GREY   },
                { "paused",    ANSI_YELLOW },
                { "exhausted", ANSI_YELLOW },
                { "spending",  ANSI_GREEN  },
                { "resting",   ANSI_GREEN  },
        };
        const char *state = jstr(u, "state");

        *ret_colour = NULL;
        if (!state)
                return "?";
        for (size_t i = 0; i < ELEMENTSOF(colours); i++)
                if (strcmp(colours[i].state, state) == 0)
                        *ret_colour = colours[i].colour;
        return state;
}

static void fmt_credit(char *buf, json_t *u) {
        char a[FMT_MAX], b[FMT_MAX];

        if (!jhas(u, "credit_usec"))
                snprintf(buf, FMT_MAX, "- of %s", fmt_span(b, ju64(u, "credit_max_usec")));
        else
                snprintf(buf, FMT_MAX, "%s of %s", fmt_span(a, ju64(u, "credit_usec")),
                         fmt_span(b, ju64(u, "credit_max_usec")));
}

/* ---- status ------------------------------------------------------------- */

static const struct verb_info info_status = {
        "status", HAS_TABLE, "Show the daemon and every configured unit",
};

static int print_status(const struct options *o, json_t *st, json_t *units) {
        static const char *const headers[] = { "UNIT", "STATE", "MODE", "QUOTA", "BASELINE", "BURST", "CREDIT", "RULE" };
        char a[FMT_MAX], b[FMT_MAX];
        Table *t;
        size_t i;
        json_t *u;

        if (o->legend) {
                printf("%sbwgovd %s%s, pid %" PRIu64 ", up %s, %" PRIu64 " ticks\n",
                       o->colour ? ANSI_BOLD : "", strq(jstr(st, "version")), o->colour ? ANSI_RESET : "",
                       ju64(st, "pid"), fmt_span(a, ju64(st, "uptime_usec")), ju64(st, "ticks"));
                printf("Cgroups:  %s, bandwidth in %s\n", strq(jstr(st, "layout")), strq(jstr(st, "bandwidth_root")));
                printf("Units:    %" PRIu64 " configured, %" PRIu64 " present, %" PRIu64 " boosted, %" PRIu64 " paused\n",
                       ju64(st, "n_units"), ju64(st, "n_present"), ju64(st, "n_boosted"), ju64(st, "n_paused"));
                printf("Governor: interval %s, default mode %s\n", fmt_span(a, ju64(st, "interval_usec")),
                       strq(jstr(st, "mode")));
                if (ju64(st, "host_pressure_limit") > 0)
                        printf("Host:     CPU pressure %s, limit %s%s\n", fmt_rate(a, ju64(st, "host_pressure_rate")),
                               fmt_rate(b, ju64(st, "host_pressure_limit")),
                               jbool(st, "host_over_limit") ? ": over, headroom is withdrawn" : "");
                else
                        printf("Host:     CPU pressure %s, no limit\n", fmt_rate(a, ju64(st, "host_pressure_rate")));
                printf("Reloads:  %" PRIu64 ", %" PRIu64 " rejected\n", ju64(st, "reloads"), ju64(st, "reload_failures"));
        }

        if (json_array_size(units) == 0) {
                if (o->legend)
                        printf("\nNo units configured.\n");
                return 0;
        }

        t = table_new(ELEMENTSOF(headers), headers);
        if (!t)
                goto oom;
        json_array_foreach(units, i, u) {
                char quota[FMT_MAX], base[FMT_MAX], burst[FMT_MAX], credit[FMT_MAX];
                const char *colour, *state = unit_state(u, &colour);
                const char *cells[8];
                const char *colours[ELEMENTSOF(cells)] = { NULL, colour };

                fmt_credit(credit, u);
                cells[0] = jstr(u, "name");
                cells[1] = state;
                cells[2] = jstr(u, "mode");
                cells[3] = fmt_bw_quota(quota, json_object_get(u, "current"));
                cells[4] = fmt_bw_quota(base, json_object_get(u, "baseline"));
                cells[5] = fmt_bw_burst(burst, json_object_get(u, "current"));
                cells[6] = credit;
                cells[7] = jstr(u, "rule");
                if (table_add_row(t, cells, colours) < 0) {
                        table_free(t);
                        goto oom;
                }
        }
        if (o->legend)
                printf("\n");
        table_print(t, stdout, o->legend, o->colour);
        table_free(t);
        return 0;
oom:
        fprintf(stderr, "bwgovctl: out of memory\n");
        return CTL_EXIT_FAILURE;
}

int verb_status(int argc, char *argv[]) {
        VarlinkClient *client = NULL;
        json_t *st = NULL, *list = NULL;
        struct options o;
        int r;

        r = parse_options(argc, argv, &info_status, &o);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : 0;

        r = call(&o, &client, INTERFACE ".GetStatus", NULL, &st);
        if (r == 0)
                r = call(&o, &client, INTERFACE ".ListUnits", NULL, &list);
        if (r == 0) {
                json_t *units = json_object_get(list, "units");
                if (!json_is_array(units)) {
                        fprintf(stderr, "bwgovctl: malformed reply to ListUnits\n");
                        r = CTL_EXIT_FAILURE;
                } else if (o.json) {
                        if (json_object_set(st, "units", units) < 0)
                                r = CTL_EXIT_FAILURE;
                        else
                                r = print_json(st);
                } else
                        r = print_status(&o, st, units);
        }
        json_decref(st);
        json_decref(list);
        varlink_client_free(client);
        return r;
}

/* ---- show --------------------------------------------------------------- */

static const struct verb_info info_show = {
        "show", TAKES_UNIT, "Show one unit in detail: state, bandwidth, limits, configuration, counters",
};

#define LABEL "%13s "

/* "spending 0.50 CPU (earning 0.00), empty in 8.0s at the 10 s average",
 * "debt 12ms". Nothing before the first decision. */
static void print_credit_lines(json_t *c) {
        char a[FMT_MAX], b[FMT_MAX], d[FMT_MAX];

        if (!json_is_object(c))
                return;
        if (ju64(c, "debt_usec") > 0)
                printf(LABEL "in debt by %s (repaid before any credit counts)\n", "",
                       fmt_span(a, ju64(c, "debt_usec")));
        printf(LABEL "earning %s, spending %s (%s on average)", "", fmt_cpus(a, ju64(c, "earn_rate")),
               fmt_cpus(b, ju64(c, "spend_rate")), fmt_cpus(d, ju64(c, "spend_avg")));
        if (jhas(c, "time_to_empty_usec"))
                printf(", down to its reserve in %s", fmt_span(a, ju64(c, "time_to_empty_usec")));
        printf("\n");
        printf(LABEL "%s held in reserve%s\n", "", fmt_span(a, ju64(c, "reserve_usec")),
               jbool(c, "exhausted") ? "; exhausted: at the baseline until a quarter of CreditMax= is back" : "");
}

/* "0.50 CPU above the baseline (level 4 of 4, the most there is now), next sample in 1s" */
static void print_headroom_line(json_t *h, uint64_t period_usec) {
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX];

        if (!json_is_object(h) || period_usec == 0)
                return;
        printf(LABEL "%s above the baseline (level %" PRIu64 " of %" PRIu64 "; up to %s now), %s, next sample in %s\n",
               "Headroom:",
               fmt_cpus(a, ju64(h, "headroom_usec") * USEC_PER_SEC / period_usec),
               ju64(h, "level"), ju64(h, "levels"),
               fmt_cpus(b, ju64(h, "headroom_max_usec") * USEC_PER_SEC / period_usec),
               jbool(h, "active") ? "active" : "idle", fmt_span(c, ju64(h, "next_sample_usec")));
}

static void print_show(const struct options *o, json_t *p) {
        json_t *u = json_object_get(p, "unit"), *cfg = json_object_get(p, "config"), *lim = json_object_get(p, "limits");
        json_t *cnt = json_object_get(p, "counters"), *stat = json_object_get(p, "stat");
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX], d[FMT_MAX];
        const char *colour, *state = unit_state(u, &colour);

        printf("%s%s%s\n", o->colour ? ANSI_BOLD : "", strq(jstr(u, "name")), o->colour ? ANSI_RESET : "");
        printf(LABEL "%s%s%s, mode %s\n", "State:", o->colour && colour ? colour : "", state,
               o->colour && colour ? ANSI_RESET : "", strq(jstr(u, "mode")));
        printf(LABEL "%s%s\n", "Cgroup:", jhas(u, "cgroup") ? jstr(u, "cgroup") : "not found",
               jhas(cfg, "cgroup") ? " (Cgroup=)" : "");
        printf(LABEL, "Baseline:");
        print_bandwidth(json_object_get(u, "baseline"));
        printf(LABEL, "Current:");
        print_bandwidth(json_object_get(u, "current"));
        if (json_is_object(lim))
                printf(LABEL "quota up to %s, burst up to %s\n", "Limits:",
                       fmt_quota(a, jhas(lim, "quota_limit_usec"), ju64(lim, "quota_limit_usec"),
                                 ju64(json_object_get(u, "baseline"), "period_usec")),
                       fmt_span(b, ju64(lim, "burst_limit_usec")));
        fmt_credit(a, u);
        printf(LABEL "%s\n", "Credit:", a);
        print_credit_lines(json_object_get(p, "credit"));
        print_headroom_line(json_object_get(p, "headroom"), ju64(json_object_get(u, "baseline"), "period_usec"));
        printf(LABEL "%s, %" PRIu64 " decisions\n", "Last rule:", jhas(u, "rule") ? jstr(u, "rule") : "none yet",
               ju64(u, "ticks"));

        printf(LABEL "CPUQuota=%s CPUQuotaMax=%s CPUBurstMax=%s CreditMax=%s\n", "Config:",
               jhas(cfg, "cpu_quota") ? fmt_percent(a, ju64(cfg, "cpu_quota")) : "(the kernel's)",
               jhas(cfg, "cpu_quota_max") ? fmt_percent(b, ju64(cfg, "cpu_quota_max")) : "(2 x baseline)",
               jhas(cfg, "cpu_burst_max_usec") ? fmt_span(c, ju64(cfg, "cpu_burst_max_usec")) : "(the quota)",
               fmt_span(d, ju64(cfg, "credit_max_usec")));
        printf(LABEL "TargetThrottle=%s TargetPressure=%s Priority=%" PRIi64 "\n", "",
               fmt_percent(a, ju64(cfg, "target_throttle")), fmt_percent(b, ju64(cfg, "target_pressure")),
               (int64_t) json_integer_value(json_object_get(cfg, "priority")));
        printf(LABEL "Interval=%s ActiveInterval=%s\n", "", fmt_span(a, ju64(cfg, "interval_usec")),
               fmt_span(b, ju64(cfg, "active_interval_usec")));

        if (json_is_object(stat)) {
                printf(LABEL, "CPU:");
                if (jhas(stat, "usage_usec"))
                        printf("%s used, ", fmt_span(a, ju64(stat, "usage_usec")));
                printf("throttled %s in %" PRIu64 " of %" PRIu64 " periods", fmt_span(b, ju64(stat, "throttled_usec")),
                       ju64(stat, "nr_throttled"), ju64(stat, "nr_periods"));
                if (jhas(stat, "local_throttled_usec") &&
                    ju64(stat, "local_throttled_usec") > ju64(stat, "throttled_usec"))
                        printf(", %s more by an ancestor's limit",
                               fmt_span(c, ju64(stat, "local_throttled_usec") - ju64(stat, "throttled_usec")));
                if (jhas(stat, "nr_bursts"))
                        printf(", %" PRIu64 " bursts", ju64(stat, "nr_bursts"));
                printf("\n");
        }
        printf(LABEL "%" PRIu64 " written, %" PRIu64 " skipped as already there, %" PRIu64 " burst repairs, "
               "%" PRIu64 " failed\n", "Writes:",
               ju64(cnt, "writes"), ju64(cnt, "skipped_writes"), ju64(cnt, "burst_repairs"), ju64(cnt, "write_errors"));
        printf(LABEL "%" PRIu64 " applied, %" PRIu64 " external changes adopted\n", "Decisions:",
               ju64(cnt, "decisions_applied"), ju64(cnt, "external_changes"));
        if (ju64(p, "shed_permille") > 0)
                printf(LABEL "%" PRIu64 ".%" PRIu64 "%% of the headroom withdrawn for host pressure\n", "Shed:",
                       ju64(p, "shed_permille") / 10, ju64(p, "shed_permille") % 10);
        printf(LABEL "%" PRIu64 " of %" PRIu64 " entries\n", "History:", ju64(p, "history_entries"),
               ju64(p, "history_capacity"));
}

int verb_show(int argc, char *argv[]) {
        VarlinkClient *client = NULL;
        json_t *p = NULL, *params;
        struct options o;
        int r;

        r = parse_options(argc, argv, &info_show, &o);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : 0;

        params = unit_params(&o);
        r = call(&o, &client, INTERFACE ".GetUnit", params, &p);
        json_decref(params);
        if (r == 0) {
                if (o.json)
                        r = print_json(p);
                else
                        print_show(&o, p);
        }
        json_decref(p);
        varlink_client_free(client);
        return r;
}

/* ---- explain ------------------------------------------------------------ */

static const struct verb_info info_explain = {
        "explain", TAKES_UNIT, "Explain the latest decision for a unit: what it saw, the rule, what it did",
};

/* The daemon says what its rule means; an older daemon may not, then the
 * library's table does. */
static const char *rule_words(json_t *d, const char *rule) {
        const char *w = jstr(d, "description");

        if (w)
                return w;
        w = bw_rule_description(bw_rule_from_string(rule));
        return w ? w : "no description for this rule";
}

static uint64_t now_realtime_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

static bool bw_equal(json_t *a, json_t *b) {
        return json_equal(json_object_get(a, "quota_usec"), json_object_get(b, "quota_usec")) &&
               ju64(a, "period_usec") == ju64(b, "period_usec") && ju64(a, "burst_usec") == ju64(b, "burst_usec");
}

static void print_explain(const struct options *o, json_t *p) {
        json_t *d = json_object_get(p, "decision"), *in, *old, *target;
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX], e[FMT_MAX], f[FMT_MAX];
        uint64_t now = now_realtime_usec(), t;
        const char *rule;

        printf("%s%s%s (mode %s%s)\n", o->colour ? ANSI_BOLD : "", strq(jstr(p, "unit")), o->colour ? ANSI_RESET : "",
               strq(jstr(p, "mode")), jbool(p, "paused") ? ", paused" : "");
        if (!json_is_object(d)) {
                printf("No decision yet: the unit's cgroup has not been found or read.\n");
                return;
        }
        in = json_object_get(d, "inputs");
        old = json_object_get(d, "old");
        target = json_object_get(d, "target");
        rule = jstr(d, "rule");
        t = ju64(d, "realtime_usec");

        printf(LABEL "%s%s%s, %s ago\n", "Decision:", o->colour ? ANSI_BOLD : "", strq(rule),
               o->colour ? ANSI_RESET : "", fmt_span(a, now > t ? now - t : 0));
        printf(LABEL "%s\n", "Because:", rule_words(d, rule));

        printf(LABEL, "Outcome:");
        if (!jbool(d, "would_change"))
                printf("unchanged at %s, burst %s\n", fmt_bw_quota(a, old), fmt_bw_burst(b, old));
        else {
                printf("%s, burst %s -> %s, burst %s", fmt_bw_quota(a, old), fmt_bw_burst(b, old),
                       fmt_bw_quota(c, target), fmt_bw_burst(e, target));
                if (jbool(d, "applied"))
                        printf(" (written)\n");
                else if (!jbool(d, "change"))
                        printf(" (not written: %s)\n", jbool(p, "paused") ? "paused" : "mode observe");
                else if (bw_equal(old, target))
                        printf("\n");
                else
                        printf(" (not written: the write failed or was not needed)\n");
        }
        if (jbool(d, "emergency"))
                printf(LABEL "a decrease for safety: no hold-off\n", "");

        printf(LABEL "over the last %s:\n", "Inputs:", fmt_span(a, ju64(in, "dt_usec")));
        printf(LABEL "usage %s\n", "", fmt_cpus(a, ju64(in, "usage_rate")));
        printf(LABEL "throttled %s (target %s), in %" PRIu64 " of %" PRIu64 " periods\n", "",
               fmt_rate(a, ju64(in, "throttle_rate")), fmt_rate(b, ju64(d, "target_throttle")),
               ju64(in, "d_nr_throttled"), ju64(in, "d_nr_periods"));
        if (ju64(in, "ancestor_throttle_rate") > 0)
                printf(LABEL "throttled %s more by an ancestor's limit (more quota here would not help)\n", "",
                       fmt_rate(a, ju64(in, "ancestor_throttle_rate")));
        printf(LABEL "pressure (full) %s (target %s)\n", "", fmt_rate(a, ju64(in, "pressure_rate")),
               fmt_rate(b, ju64(d, "target_pressure")));
        printf(LABEL "%" PRIu64 " bursts\n", "", ju64(in, "d_nr_bursts"));
        printf(LABEL "credit %s -> %s of %s, earning %s, spending %s%s\n", "",
               fmt_span(a, ju64(in, "credit_before_usec")), fmt_span(b, ju64(in, "credit_after_usec")),
               fmt_span(c, ju64(d, "credit_max_usec")), fmt_cpus(e, ju64(in, "earn_rate")),
               fmt_cpus(f, ju64(in, "spend_rate")), jbool(in, "active") ? " (active)" : "");
        if (ju64(in, "debt_usec") > 0)
                printf(LABEL "in debt by %s\n", "", fmt_span(a, ju64(in, "debt_usec")));
        if (!jhas(old, "quota_usec"))
                printf(LABEL "none: the quota is max\n", "Limits:");
        else {
                json_t *h = json_object_get(d, "headroom");
                uint64_t period = ju64(old, "period_usec");

                printf(LABEL "quota up to %s\n", "Limits:",
                       fmt_quota(a, jhas(d, "quota_limit_usec"), ju64(d, "quota_limit_usec"), period));
                if (json_is_object(h) && period > 0) {
                        printf(LABEL "%s above the baseline, level %" PRIu64 " of %" PRIu64 " (up to %s now); "
                               "%s held in reserve\n", "Headroom:",
                               fmt_cpus(a, ju64(h, "headroom_usec") * USEC_PER_SEC / period), ju64(h, "level"),
                               ju64(h, "levels"), fmt_cpus(b, ju64(h, "headroom_max_usec") * USEC_PER_SEC / period),
                               fmt_span(c, ju64(h, "reserve_usec")));
                        if (jhas(h, "time_to_empty_usec"))
                                printf(LABEL "at the average spending, down to the reserve in %s\n", "",
                                       fmt_span(a, ju64(h, "time_to_empty_usec")));
                }
                printf(LABEL "next sample in %s\n", "", fmt_span(a, ju64(d, "next_sample_usec")));
        }
        printf(LABEL "%s\n", "Law:", strq(jstr(d, "explain")));
}

int verb_explain(int argc, char *argv[]) {
        VarlinkClient *client = NULL;
        json_t *p = NULL, *params;
        struct options o;
        int r;

        r = parse_options(argc, argv, &info_explain, &o);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : 0;

        params = unit_params(&o);
        r = call(&o, &client, INTERFACE ".Explain", params, &p);
        json_decref(params);
        if (r == 0) {
                if (o.json)
                        r = print_json(p);
                else
                        print_explain(&o, p);
        }
        json_decref(p);
        varlink_client_free(client);
        return r;
}

/* ---- history ------------------------------------------------------------ */

static const struct verb_info info_history = {
        "history", TAKES_UNIT | TAKES_LINES | HAS_TABLE, "Show the decisions recorded for a unit, oldest first",
};

static void fmt_change(char *buf, const char *old, const char *new) {
        if (strcmp(old, new) == 0)
                snprintf(buf, 2 * FMT_MAX, "%s", new);
        else
                snprintf(buf, 2 * FMT_MAX, "%s -> %s", old, new);
}

static int print_history(const struct options *o, json_t *p) {
        static const char *const headers[] = {
                "TIME", "RULE", "QUOTA", "BURST", "USAGE", "THROTTLED", "PRESSURE", "CREDIT", "WRITTEN",
        };
        json_t *entries = json_object_get(p, "entries"), *e;
        size_t i, rows;
        Table *t;

        t = table_new(ELEMENTSOF(headers), headers);
        if (!t)
                goto oom;
        for (size_t k = 4; k <= 7; k++)
                table_set_right(t, k);

        json_array_foreach(entries, i, e) {
                char when[64] = "?", qo[FMT_MAX], qn[FMT_MAX], bo[FMT_MAX], bn[FMT_MAX];
                char quota[2 * FMT_MAX], burst[2 * FMT_MAX], use[FMT_MAX], thr[FMT_MAX], prs[FMT_MAX], cr[FMT_MAX];
                time_t sec = (time_t) (ju64(e, "realtime_usec") / USEC_PER_SEC);
                struct tm tm;
                json_t *old = json_object_get(e, "old"), *new = json_object_get(e, "new");

                if (localtime_r(&sec, &tm))
                        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
                fmt_change(quota, fmt_bw_quota(qo, old), fmt_bw_quota(qn, new));
                fmt_change(burst, fmt_bw_burst(bo, old), fmt_bw_burst(bn, new));

                const char *cells[] = {
                        when, jstr(e, "rule"), quota, burst,
                        fmt_cpus(use, ju64(e, "usage_rate")), fmt_rate(thr, ju64(e, "throttle_rate")),
                        fmt_rate(prs, ju64(e, "pressure_rate")), fmt_span(cr, ju64(e, "credit_usec")),
                        jbool(e, "applied") ? "yes" : "no",
                };
                const char *colours[ELEMENTSOF(cells)] = { [8] = jbool(e, "applied") ? ANSI_GREEN : NULL };
                if (table_add_row(t, cells, colours) < 0) {
                        table_free(t);
                        goto oom;
                }
        }
        rows = table_rows(t);
        if (rows > 0)
                table_print(t, stdout, o->legend, o->colour);
        table_free(t);
        if (o->legend) {
                uint64_t held = ju64(p, "recorded") < ju64(p, "capacity") ? ju64(p, "recorded") : ju64(p, "capacity");
                printf("%s%zu shown; %" PRIu64 " held (room for %" PRIu64 "), %" PRIu64 " recorded since start.\n",
                       rows > 0 ? "\n" : "", rows, held, ju64(p, "capacity"), ju64(p, "recorded"));
        }
        return 0;
oom:
        fprintf(stderr, "bwgovctl: out of memory\n");
        return CTL_EXIT_FAILURE;
}

int verb_history(int argc, char *argv[]) {
        VarlinkClient *client = NULL;
        json_t *p = NULL, *params;
        struct options o;
        int r;

        r = parse_options(argc, argv, &info_history, &o);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : 0;

        if (o.has_lines)
                params = json_pack("{s:s, s:I}", "unit", o.unit, "limit",
                                   (json_int_t) (o.lines > INT64_MAX ? INT64_MAX : o.lines));
        else
                params = unit_params(&o);
        r = call(&o, &client, INTERFACE ".GetHistory", params, &p);
        json_decref(params);
        if (r == 0) {
                if (o.json)
                        r = print_json(p);
                else
                        r = print_history(&o, p);
        }
        json_decref(p);
        varlink_client_free(client);
        return r;
}

/* ---- reload, pause, resume ---------------------------------------------- */

static const struct verb_info info_reload = {
        "reload", MUTATING, "Reload the configuration; a broken one is rejected and the old one kept",
};
static const struct verb_info info_pause = {
        "pause", TAKES_UNIT | MUTATING, "Stop governing a unit: restore its baseline, write nothing until resumed",
};
static const struct verb_info info_resume = {
        "resume", TAKES_UNIT | MUTATING, "Govern a paused unit again",
};

int verb_reload(int argc, char *argv[]) {
        VarlinkClient *client = NULL;
        json_t *p = NULL;
        struct options o;
        int r;

        r = parse_options(argc, argv, &info_reload, &o);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : 0;

        r = call(&o, &client, INTERFACE ".Reload", NULL, &p);
        if (r == 0) {
                if (o.json)
                        r = print_json(p);
                else
                        printf("Configuration reloaded: %" PRIu64 " units configured.\n", ju64(p, "units"));
        }
        json_decref(p);
        varlink_client_free(client);
        return r;
}

static int pause_resume(int argc, char *argv[], const struct verb_info *v, bool pause) {
        VarlinkClient *client = NULL;
        json_t *p = NULL, *params;
        struct options o;
        int r;

        r = parse_options(argc, argv, v, &o);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : 0;

        params = unit_params(&o);
        r = call(&o, &client, pause ? INTERFACE ".Pause" : INTERFACE ".Resume", params, &p);
        json_decref(params);
        if (r == 0) {
                if (o.json)
                        r = print_json(p);
                else if (!jbool(p, "changed"))
                        printf("%s was %s.\n", o.unit, pause ? "already paused" : "not paused");
                else if (pause)
                        printf("%s: paused; its baseline is restored and nothing is written until "
                               "'bwgovctl resume %s'.\n", o.unit, o.unit);
                else
                        printf("%s: governing resumed.\n", o.unit);
        }
        json_decref(p);
        varlink_client_free(client);
        return r;
}

int verb_pause(int argc, char *argv[]) {
        return pause_resume(argc, argv, &info_pause, true);
}

int verb_resume(int argc, char *argv[]) {
        return pause_resume(argc, argv, &info_resume, false);
}
