/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl status and show: the daemon with a table of its units, and one
 * unit in detail. Both only render what GetStatus, ListUnits and GetUnit
 * report: the counts (configured, present, boosted, paused) are the
 * daemon's, never recounted here. */

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "format.h"
#include "reply.h"
#include "table.h"
#include "varlink-client.h"
#include "verbs.h"

/* ---- status ------------------------------------------------------------- */

static const struct verb_info info_status = {
        "status", VERB_HAS_TABLE | VERB_TAKES_ALL, "Show the daemon and its configured units",
};

/* The legend: the daemon and its counts, as GetStatus reports them. */
static void print_status_header(const struct options *o, json_t *st) {
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX], d[FMT_MAX], w[3 * FMT_MAX], outside[5 * FMT_MAX];

        printf("%sbwgovd %s%s, pid %" PRIu64 ", up %s, %" PRIu64 " ticks\n",
               o->colour ? ANSI_BOLD : "", strq(jstr(st, "version")), o->colour ? ANSI_RESET : "",
               ju64(st, "pid"), fmt_span(a, ju64(st, "uptime_usec")), ju64(st, "ticks"));
        printf("Cgroups:  %s, bandwidth in %s\n", strq(jstr(st, "layout")), strq(jstr(st, "bandwidth_root")));
        printf("Units:    %" PRIu64 " configured, %" PRIu64 " present, %" PRIu64 " boosted, %" PRIu64 " paused\n",
               ju64(st, "n_units"), ju64(st, "n_present"), ju64(st, "n_boosted"), ju64(st, "n_paused"));
        printf("Governor: interval %s, default mode %s\n", fmt_span(a, ju64(st, "interval_usec")),
               strq(jstr(st, "mode")));
        /* The work the brake protects: its CPU and, with the telemetry, how long its tasks
         * waited and how much of that behind the units (what the brake weighs). */
        if (jhas(st, "host_other_wait_rate") && jhas(st, "host_other_behind_rate"))
                snprintf(w, sizeof(w), ", waiting %s (%s behind the units)",
                         fmt_rate(b, ju64(st, "host_other_wait_rate")),
                         fmt_rate(d, ju64(st, "host_other_behind_rate")));
        else if (jhas(st, "host_other_wait_rate"))
                snprintf(w, sizeof(w), ", waiting %s", fmt_rate(b, ju64(st, "host_other_wait_rate")));
        else
                w[0] = '\0';
        snprintf(outside, sizeof(outside), "; outside the units %s%s",
                 fmt_cpus(c, ju64(st, "host_other_usage_rate")), w);
        if (ju64(st, "host_pressure_limit") > 0)
                printf("Host:     CPU pressure %s, limit %s%s%s\n", fmt_rate(a, ju64(st, "host_pressure_rate")),
                       fmt_rate(b, ju64(st, "host_pressure_limit")),
                       jbool(st, "host_over_limit") ? ": over, headroom is withdrawn" : "", outside);
        else
                printf("Host:     CPU pressure %s, no limit%s\n", fmt_rate(a, ju64(st, "host_pressure_rate")),
                       outside);
        if (jbool(st, "telemetry"))
                printf("Latency:  run-queue telemetry (BPF) of %" PRIu64 " cgroup%s\n", ju64(st, "telemetry_cgroups"),
                       ju64(st, "telemetry_cgroups") == 1 ? "" : "s");
        else if (jhas(st, "telemetry"))
                printf("Latency:  no run-queue telemetry: %s\n", strq(jstr(st, "telemetry_reason")));
        if (jbool(st, "refused_writes"))
                printf("Writes:   quota writes refused for the burst are put in place (%" PRIu64 " so far)\n",
                       ju64(st, "refused_writes_seen"));
        else if (jhas(st, "refused_writes"))
                printf("Writes:   refused quota writes not followed: %s\n", strq(jstr(st, "refused_writes_reason")));
        printf("Reloads:  %" PRIu64 ", %" PRIu64 " rejected\n", ju64(st, "reloads"), ju64(st, "reload_failures"));
        if (jhas(st, "state_error"))
                printf("%sState:    cannot be saved (%s): no unit is raised, baselines are still restored%s\n",
                       o->colour ? ANSI_YELLOW : "", strq(jstr(st, "state_error")), o->colour ? ANSI_RESET : "");
}

enum {
        COL_UNIT, COL_STATE, COL_MODE, COL_QUOTA, COL_BASELINE, COL_BURST, COL_CREDIT, COL_RULE,
        _COL_MAX,
};

/* One row per unit of ListUnits. Returns 0 or -ENOMEM. */
static int add_unit_rows(Table *t, json_t *units) {
        size_t i;
        json_t *u;

        json_array_foreach(units, i, u) {
                char quota[FMT_MAX], base[FMT_MAX], burst[FMT_MAX], credit[FMT_MAX];
                const char *colour, *state = unit_state(u, &colour);
                const char *cells[_COL_MAX] = {
                        [COL_UNIT] = jstr(u, "name"),
                        [COL_STATE] = state,
                        [COL_MODE] = jstr(u, "mode"),
                        [COL_QUOTA] = fmt_bw_quota(quota, json_object_get(u, "current")),
                        [COL_BASELINE] = fmt_bw_quota(base, json_object_get(u, "baseline")),
                        [COL_BURST] = fmt_bw_burst(burst, json_object_get(u, "current")),
                        [COL_CREDIT] = credit,
                        [COL_RULE] = jstr(u, "rule"),
                };
                const char *colours[_COL_MAX] = { [COL_STATE] = colour };
                int r;

                fmt_credit(credit, u);
                r = table_add_row(t, cells, colours);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int print_status(const struct options *o, json_t *st, json_t *units, uint64_t total) {
        static const char *const headers[_COL_MAX] = {
                [COL_UNIT] = "UNIT", [COL_STATE] = "STATE", [COL_MODE] = "MODE", [COL_QUOTA] = "QUOTA",
                [COL_BASELINE] = "BASELINE", [COL_BURST] = "BURST", [COL_CREDIT] = "CREDIT", [COL_RULE] = "RULE",
        };
        Table *t;

        if (o->legend)
                print_status_header(o, st);

        if (json_array_size(units) == 0) {
                if (o->legend)
                        printf("\nNo units configured.\n");
                return 0;
        }

        t = table_new(ELEMENTSOF(headers), headers);
        if (!t || add_unit_rows(t, units) < 0) {
                table_free(t);
                return ctl_oom();
        }
        if (o->legend)
                printf("\n");
        table_print(t, stdout, o->legend, o->colour);
        table_free(t);
        if (o->legend && total > json_array_size(units))
                printf("\n%zu of %" PRIu64 " units listed: those doing something first, then by name; "
                       "--all lists every unit.\n", json_array_size(units), total);
        return 0;
}

/* ListUnits with a limit. A daemon from before ListUnits(limit) refuses
 * the parameter (an upgrade before its restart): then every unit. */
static int list_units(const struct options *o, VarlinkClient **client, json_t *params, json_t **ret) {
        _cleanup_free_ char *error = NULL;
        json_t *reply = NULL;
        int r;

        if (params && *client) {
                r = varlink_client_call(*client, CTL_INTERFACE ".ListUnits", params, &reply, &error);
                if (r == 0) {
                        *ret = reply;
                        return 0;
                }
                json_decref(reply);
                if (r > 0 && strcmp(error, "org.varlink.service.InvalidParameter") == 0)
                        params = NULL;
        }
        return ctl_call(o, client, CTL_INTERFACE ".ListUnits", params, ret);
}

int verb_status(int argc, char *argv[]) {
        VarlinkClient *client = NULL;
        json_t *st = NULL, *list = NULL, *params = NULL, *units;
        struct options o;
        uint64_t total;
        int r;

        r = parse_options(argc, argv, &info_status, &o);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : 0;

        if (!o.all) {
                params = json_pack("{s:i}", "limit", STATUS_ROWS);
                if (!params)
                        return ctl_oom();
        }
        r = ctl_call(&o, &client, CTL_INTERFACE ".GetStatus", NULL, &st);
        if (r == 0)
                r = list_units(&o, &client, params, &list);
        if (r != 0)
                goto finish;

        units = json_object_get(list, "units");
        /* A daemon before ListUnits(limit) sends no total, and every unit. */
        total = jhas(list, "total") ? ju64(list, "total") : json_array_size(units);
        if (!json_is_array(units)) {
                fprintf(stderr, "bwgovctl: malformed reply to ListUnits\n");
                r = CTL_EXIT_FAILURE;
        } else if (!o.json)
                r = print_status(&o, st, units, total);
        else if (json_object_set(st, "units", units) < 0 ||
                 json_object_set_new(st, "units_total", json_integer((json_int_t) total)) < 0)
                r = CTL_EXIT_FAILURE;
        else
                r = ctl_print_json(st);
finish:
        json_decref(params);
        json_decref(st);
        json_decref(list);
        varlink_client_free(client);
        return r;
}

/* ---- show --------------------------------------------------------------- */

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
               jbool(c, "exhausted") ? "; exhausted: at the baseline until it pays for the headroom again" : "");
}

/* "0.50 CPU above the baseline (level 4 of 4, the most there is now), next sample in 1s" */
static void print_headroom_line(json_t *h, uint64_t period_usec) {
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX];

        if (!json_is_object(h) || period_usec == 0)
                return;
        printf(LABEL "%s above the baseline (level %" PRIu64 " of %" PRIu64 "; up to %s now), %s, "
               "next sample in %s\n", "Headroom:",
               fmt_cpus(a, ju64(h, "headroom_usec") * USEC_PER_SEC / period_usec),
               ju64(h, "level"), ju64(h, "levels"),
               fmt_cpus(b, ju64(h, "headroom_max_usec") * USEC_PER_SEC / period_usec),
               jbool(h, "active") ? "active" : "idle", fmt_span(c, ju64(h, "next_sample_usec")));
}

/* Who the unit is and what it is doing: state, cgroup, bandwidth, credit. */
static void print_show_unit(const struct options *o, json_t *p) {
        json_t *u = json_object_get(p, "unit"), *lim = json_object_get(p, "limits");
        uint64_t period = ju64(json_object_get(u, "baseline"), "period_usec");
        char a[FMT_MAX], b[FMT_MAX];
        const char *colour, *state = unit_state(u, &colour);

        printf("%s%s%s\n", o->colour ? ANSI_BOLD : "", strq(jstr(u, "name")), o->colour ? ANSI_RESET : "");
        printf(LABEL "%s%s%s, mode %s\n", "State:", o->colour && colour ? colour : "", state,
               o->colour && colour ? ANSI_RESET : "", strq(jstr(u, "mode")));
        printf(LABEL "%s%s\n", "Cgroup:", jhas(u, "cgroup") ? jstr(u, "cgroup") : "not found",
               jhas(json_object_get(p, "config"), "cgroup") ? " (Cgroup=)" : "");
        printf(LABEL, "Baseline:");
        print_bandwidth(json_object_get(u, "baseline"));
        printf(LABEL, "Current:");
        print_bandwidth(json_object_get(u, "current"));
        if (json_is_object(lim))
                printf(LABEL "quota up to %s, burst up to %s\n", "Limits:",
                       fmt_quota(a, jquota(lim, "quota_limit_usec"), period),
                       fmt_span(b, ju64(lim, "burst_limit_usec")));
        fmt_credit(a, u);
        printf(LABEL "%s\n", "Credit:", a);
        print_credit_lines(json_object_get(p, "credit"));
        print_headroom_line(json_object_get(p, "headroom"), period);
        printf(LABEL "%s, %" PRIu64 " decisions\n", "Last rule:", jhas(u, "rule") ? jstr(u, "rule") : "none yet",
               ju64(u, "ticks"));
}

/* TargetWaitP99=: "50ms", "0 (off)", or "-" from a daemon without it. */
static const char *fmt_wait_target(char *buf, json_t *cfg) {
        if (!jhas(cfg, "target_wait_p99_usec"))
                return "-";
        if (ju64(cfg, "target_wait_p99_usec") == 0)
                return "0 (off)";
        return fmt_span_fine(buf, ju64(cfg, "target_wait_p99_usec"));
}

/* The unit's settings; a default in parentheses where the key is unset. */
static void print_show_config(json_t *cfg) {
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX], d[FMT_MAX];

        printf(LABEL "CPUQuota=%s CPUQuotaMax=%s CPUBurstMax=%s CreditMax=%s\n", "Config:",
               jhas(cfg, "cpu_quota") ? fmt_percent(a, ju64(cfg, "cpu_quota")) : "(the kernel's)",
               jhas(cfg, "cpu_quota_max") ? fmt_percent(b, ju64(cfg, "cpu_quota_max")) : "(4 x baseline)",
               jhas(cfg, "cpu_burst_max_usec") ? fmt_span(c, ju64(cfg, "cpu_burst_max_usec")) : "(the quota)",
               fmt_span(d, ju64(cfg, "credit_max_usec")));
        printf(LABEL "TargetThrottle=%s TargetPressure=%s TargetWaitP99=%s Priority=%" PRIi64 "\n", "",
               fmt_percent(a, ju64(cfg, "target_throttle")), fmt_percent(b, ju64(cfg, "target_pressure")),
               fmt_wait_target(c, cfg),
               (int64_t) json_integer_value(json_object_get(cfg, "priority")));
        printf(LABEL "Interval=%s ActiveInterval=%s\n", "", fmt_span(a, ju64(cfg, "interval_usec")),
               fmt_span(b, ju64(cfg, "active_interval_usec")));
        if (!jhas(cfg, "class"))
                return;         /* a daemon without latency protection */
        printf(LABEL "Class=%s LatencyTarget=%s CPUGuarantee=%s\n", "", jstr(cfg, "class"),
               jhas(cfg, "latency_target_usec") ? fmt_span_fine(a, ju64(cfg, "latency_target_usec")) : "-",
               jhas(cfg, "cpu_guarantee") ? fmt_percent(b, ju64(cfg, "cpu_guarantee")) : "-");
}

/* The cgroup's cpu.stat, as the daemon last read it. */
static void print_show_stat(json_t *stat) {
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX];

        if (!json_is_object(stat))
                return;
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

/* shed_permille is tenths of a percent. */
#define PERMILLE_PER_PERCENT 10

static void print_show_counters(json_t *p) {
        json_t *cnt = json_object_get(p, "counters");
        uint64_t shed = ju64(p, "shed_permille");

        printf(LABEL "%" PRIu64 " written, %" PRIu64 " skipped as already there, %" PRIu64 " burst repairs, "
               "%" PRIu64 " failed\n", "Writes:",
               ju64(cnt, "writes"), ju64(cnt, "skipped_writes"), ju64(cnt, "burst_repairs"), ju64(cnt, "write_errors"));
        printf(LABEL "%" PRIu64 " applied, %" PRIu64 " external changes adopted\n", "Decisions:",
               ju64(cnt, "decisions_applied"), ju64(cnt, "external_changes"));
        if (shed > 0)
                printf(LABEL "%" PRIu64 ".%" PRIu64 "%% of the headroom withdrawn for host pressure\n", "Shed:",
                       shed / PERMILLE_PER_PERCENT, shed % PERMILLE_PER_PERCENT);
        printf(LABEL "%" PRIu64 " of %" PRIu64 " entries\n", "History:", ju64(p, "history_entries"),
               ju64(p, "history_capacity"));
}

static int print_show(const struct options *o, json_t *p) {
        print_show_unit(o, p);
        print_show_config(json_object_get(p, "config"));
        print_show_stat(json_object_get(p, "stat"));
        print_show_counters(p);
        return 0;
}

DEFINE_VERB_CALL(show, VERB_TAKES_UNIT,
                 "Show one unit in detail: state, bandwidth, limits, configuration, counters",
                 "GetUnit", ctl_unit_params, print_show);
