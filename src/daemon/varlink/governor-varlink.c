/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* io.bwgov.Governor (see governor-varlink.h): the method table, and JSON
 * views over the governor's snapshots. It sees the governor only through
 * governor.h and the transport only through varlink-server.h and
 * varlink-dispatch.h (the method table, replies and errors). */

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "bwgov/telemetry/rqstat.h"
#include "config.h"
#include "governor-varlink.h"
#include "varlink/io.bwgov.Governor.varlink.h"
#include "log.h"
#include "varlink-server.h"
#include "varlink-dispatch.h"

#define INTERFACE "io.bwgov.Governor"

/* The socket's group unless BWGOV_SOCKET_GROUP names another. */
#define SOCKET_GROUP_DEFAULT "bwgov"

#define UID_FMT "%" PRIu32
#define PID_FMT "%" PRIi32

struct GovernorVarlink {
        Governor governor;
        sd_event *event;
        VarlinkServer *server;
        uint64_t start_usec;            /* CLOCK_MONOTONIC when serving began, for uptime_usec */

        /* CheckKernel's reply, and the governor's reload count when it was computed. */
        json_t *kernel_check;
        uint64_t kernel_check_reloads;
};

/* ---- JSON helpers ------------------------------------------------------- */

static json_t *jint(uint64_t v) {
        return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t) v);
}

static json_t *jquota(uint64_t quota_usec) {
        return quota_usec == BW_QUOTA_MAX ? json_null() : jint(quota_usec);
}

static json_t *jstring_or_null(const char *s) {
        return s ? json_string(s) : json_null();
}

static json_t *jtime_or_null(uint64_t usec) {
        return usec == UINT64_MAX ? json_null() : jint(usec);
}

static const char *strna(const char *s) {
        return s ? s : "unknown";
}

static json_t *bandwidth_json(const struct bw_bandwidth *b) {
        return json_pack("{s:o, s:o, s:o, s:b}",
                         "quota_usec", jquota(b->quota_usec),
                         "period_usec", jint(b->period_usec),
                         "burst_usec", jint(b->has_burst ? b->burst_usec : 0),
                         "has_burst", (int) b->has_burst);
}

static json_t *reply_unit_not_found(const char *name) {
        return varlink_reply_error(INTERFACE ".UnitNotFound", json_pack("{s:s}", "unit", name));
}

/* ---- views -------------------------------------------------------------- */

/* {"weight": "10000", "idle": "1", ...}: the levers held, in v2 syntax. */
static json_t *levers_json(const struct governor_protection *p) {
        json_t *o = json_object();
        char v2[BW_LEVER_VALUE_MAX];

        for (size_t l = 0; o && l < _BW_LEVER_MAX; l++) {
                if (!p->levers[l] ||
                    bw_lever_from_native(p->layout, (enum bw_lever) l, p->levers[l], v2, sizeof(v2)) < 0)
                        continue;
                if (json_object_set_new(o, bw_lever_to_string((enum bw_lever) l), json_string(v2)) < 0) {
                        json_decref(o);
                        return NULL;
                }
        }
        return o;
}

static json_t *protection_json(const struct governor_protection *p) {
        return json_pack("{s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:b, s:s, s:o, s:o, s:o}",
                         "class", strna(bw_class_to_string(p->cls)),
                         "latency_target_usec",
                         p->latency_target_usec > 0 ? jint(p->latency_target_usec) : json_null(),
                         "guarantee", p->guarantee > 0 ? jint(p->guarantee) : json_null(),
                         "level", strna(bw_lat_level_to_string(p->level)),
                         "p99_usec", p->has_p99 ? jint(p->p99_usec) : json_null(),
                         "samples", jint(p->samples),
                         "missed", jint(p->missed),
                         "held", (int) p->hold,
                         "note", p->note ? p->note : "",
                         "levers", levers_json(p),
                         "slice_usec", p->slice_usec > 0 ? jint(p->slice_usec) : json_null(),
                         "slice_threads", jint(p->slice_threads));
}

/* What the unit did over the sample of its latest decision (for bwgovctl
 * top: no GetUnit per unit); null before the first one. */
static json_t *unit_activity_json(const struct governor_unit *u) {
        const struct bw_decision *d = &u->decision.d;

        if (!u->summary.adopted || !u->has_decision)
                return json_null();
        return json_pack("{s:o, s:o, s:o, s:o, s:I, s:I, s:b, s:o, s:o, s:o}",
                         "dt_usec", jint(d->dt_usec),
                         "usage_rate", jint(d->usage_rate),
                         "throttle_rate", jint(d->throttle_rate),
                         "ancestor_throttle_rate", jint(d->ancestor_throttle_rate),
                         "level", (json_int_t) d->level,
                         "levels", (json_int_t) BW_POLICY_LEVELS,
                         "active", (int) d->active,
                         "time_to_empty_usec", jtime_or_null(d->time_to_empty_usec),
                         "rq_wait_p99_usec", d->has_rq ? jint(d->rq_wait_p99_usec) : json_null(),
                         "rq_throttled_permille", d->has_rq ? jint(d->rq_throttled_permille) : json_null());
}

static json_t *unit_summary_json(const struct governor_unit *u) {
        const struct governor_unit_summary *s = &u->summary;

        return json_pack("{s:s, s:o, s:s, s:s, s:b, s:b, s:b, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                         "name", s->name,
                         "cgroup", jstring_or_null(s->cgroup),
                         "mode", bw_mode_to_string(s->mode),
                         "state", s->state,
                         "present", (int) s->present,
                         "adopted", (int) s->adopted,
                         "paused", (int) s->paused,
                         "boosted", (int) s->boosted,
                         "baseline", s->adopted ? bandwidth_json(&s->baseline) : json_null(),
                         "current", s->adopted ? bandwidth_json(&s->current) : json_null(),
                         "credit_usec", s->adopted ? jint(u->credit.credit_usec) : json_null(),
                         "credit_max_usec", jint(u->config.cfg.credit_max_usec),
                         "rule", jstring_or_null(s->has_rule ? bw_rule_to_string(s->rule) : NULL),
                         "ticks", jint(s->ticks),
                         "protection", protection_json(&s->prot),
                         "activity", unit_activity_json(u));
}

/* The credit bucket and the headroom it pays for, from the last decision;
 * null before the first one. */
static json_t *unit_credit_json(const struct governor_unit *u) {
        const struct bw_decision *d = &u->decision.d;

        if (!u->summary.adopted || !u->has_decision)
                return json_null();
        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
                         "credit_usec", jint(u->credit.credit_usec),
                         "debt_usec", jint(u->credit.debt_usec),
                         "credit_max_usec", jint(u->credit.credit_max_usec),
                         "reserve_usec", jint(d->reserve_usec),
                         "earn_rate", jint(d->earn_rate),
                         "spend_rate", jint(d->spend_rate),
                         "spend_avg", jint(d->spend_avg),
                         "time_to_empty_usec", jtime_or_null(d->time_to_empty_usec),
                         "exhausted", (int) u->credit.exhausted);
}

static json_t *unit_headroom_json(const struct governor_unit *u) {
        const struct bw_decision *d = &u->decision.d;

        if (!u->summary.adopted || !u->has_decision)
                return json_null();
        return json_pack("{s:o, s:o, s:I, s:I, s:b, s:o}",
                         "headroom_usec", jint(d->headroom_usec),
                         "headroom_max_usec", jint(d->headroom_max_usec),
                         "level", (json_int_t) d->level,
                         "levels", (json_int_t) BW_POLICY_LEVELS,
                         "active", (int) d->active,
                         "next_sample_usec", jint(d->next_tick_usec));
}

static json_t *unit_config_json(const struct governor_unit *u) {
        const struct bw_unit_config *cfg = &u->config.cfg;

        return json_pack("{s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:s, s:o, s:o}",
                         "cgroup", jstring_or_null(cfg->cgroup),
                         "mode", bw_mode_to_string(u->summary.mode),
                         "cpu_quota", cfg->cpu_quota > 0 ? jint(cfg->cpu_quota) : json_null(),
                         "cpu_quota_max", cfg->cpu_quota_max > 0 ? jint(cfg->cpu_quota_max) : json_null(),
                         "cpu_burst_max_usec", cfg->has_cpu_burst_max ? jint(cfg->cpu_burst_max_usec) : json_null(),
                         "credit_max_usec", jint(cfg->credit_max_usec),
                         "target_throttle", jint(cfg->target_throttle),
                         "target_pressure", jint(cfg->target_pressure),
                         "target_wait_p99_usec", jint(cfg->target_wait_p99_usec),
                         "priority", (json_int_t) cfg->priority,
                         "interval_usec", jint(u->config.interval_usec),
                         "active_interval_usec", jint(u->config.active_interval_usec),
                         "class", strna(bw_class_to_string(bw_unit_class(cfg))),
                         "latency_target_usec", bw_unit_latency_target_usec(cfg) > 0 ?
                                 jint(bw_unit_latency_target_usec(cfg)) : json_null(),
                         "cpu_guarantee", cfg->cpu_guarantee > 0 ? jint(cfg->cpu_guarantee) : json_null());
}

static json_t *unit_stat_json(const struct governor_unit *u) {
        const struct bw_cpu_stat *s = &u->stat;

        if (!u->has_stat)
                return json_null();
        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                         "usage_usec", s->seen & BW_CPUSTAT_USAGE ? jint(s->usage_usec) : json_null(),
                         "nr_periods", jint(s->nr_periods),
                         "nr_throttled", jint(s->nr_throttled),
                         "throttled_usec", jint(s->throttled_usec),
                         "local_throttled_usec",
                         s->seen & BW_CPUSTAT_LOCAL_THROTTLED ? jint(s->local_throttled_usec) : json_null(),
                         "nr_bursts", s->seen & BW_CPUSTAT_NR_BURSTS ? jint(s->nr_bursts) : json_null(),
                         "burst_usec", s->seen & BW_CPUSTAT_BURST ? jint(s->burst_usec) : json_null());
}

static json_t *unit_json(const struct governor_unit *u) {
        const struct governor_unit_counters *n = &u->counters;
        bool present = u->summary.present;
        json_t *limits;

        limits = u->summary.adopted ? json_pack("{s:o, s:o}",
                                                "quota_limit_usec", jquota(u->quota_limit_usec),
                                                "burst_limit_usec", jint(u->burst_limit_usec))
                                    : json_null();

        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o}, s:o, s:I, s:o, s:o}",
                         "unit", unit_summary_json(u),
                         "config", unit_config_json(u),
                         "limits", limits,
                         "credit", unit_credit_json(u),
                         "headroom", unit_headroom_json(u),
                         "counters",
                                 "ticks", jint(u->summary.ticks),
                                 "writes", jint(present ? n->io.writes : 0),
                                 "skipped_writes", jint(present ? n->io.skipped : 0),
                                 "burst_repairs", jint(present ? n->io.burst_repairs : 0),
                                 "external_changes", jint(n->external_changes),
                                 "write_errors", jint(n->write_errors),
                                 "decisions_applied", jint(n->decisions_applied),
                         "stat", unit_stat_json(u),
                         "shed_permille", (json_int_t) u->shed_permille,
                         "history_entries", jint(u->history_entries),
                         "history_capacity", jint(u->history_capacity));
}

static json_t *decision_inputs_json(const struct bw_decision *d) {
        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b,"
                         " s:o, s:o, s:b}",
                         "dt_usec", jint(d->dt_usec),
                         "usage_rate", jint(d->usage_rate),
                         "throttle_rate", jint(d->throttle_rate),
                         "ancestor_throttle_rate", jint(d->ancestor_throttle_rate),
                         "pressure_rate", jint(d->pressure_rate),
                         "d_nr_periods", jint(d->d_nr_periods),
                         "d_nr_throttled", jint(d->d_nr_throttled),
                         "d_nr_bursts", jint(d->d_nr_bursts),
                         "credit_before_usec", jint(d->credit_before_usec),
                         "credit_after_usec", jint(d->credit_after_usec),
                         "debt_usec", jint(d->debt_usec),
                         "earn_rate", jint(d->earn_rate),
                         "spend_rate", jint(d->spend_rate),
                         "spend_avg", jint(d->spend_avg),
                         "active", (int) d->active,
                         "rq_wait_p99_usec", d->has_rq ? jint(d->rq_wait_p99_usec) : json_null(),
                         "rq_throttled_permille", d->has_rq ? jint(d->rq_throttled_permille) : json_null(),
                         "rq_over_target", (int) d->rq_over_target);
}

static json_t *decision_json(const struct governor_decision *g) {
        const struct bw_decision *d = &g->d;
        char explain[BW_DECISION_EXPLAIN_MAX];

        return json_pack("{s:o, s:s, s:s, s:s, s:o, s:o, s:b, s:b, s:b, s:b, s:o, s:o,"
                         " s:{s:o, s:o, s:I, s:I, s:o, s:o},"
                         " s:o, s:o, s:o, s:o, s:o}",
                         "realtime_usec", jint(g->realtime_usec),
                         "rule", strna(bw_rule_to_string(d->rule)),
                         "description", strna(bw_rule_description(d->rule)),
                         "explain", bw_decision_explain(d, &g->old, explain),
                         "old", bandwidth_json(&g->old),
                         "target", bandwidth_json(&d->target),
                         "would_change", (int) d->would_change,
                         "change", (int) d->change,
                         "applied", (int) g->applied,
                         "emergency", (int) d->emergency,
                         "next_sample_usec", jint(d->next_tick_usec),
                         "inputs", decision_inputs_json(d),
                         "headroom",
                                 "headroom_usec", jint(d->headroom_usec),
                                 "headroom_max_usec", jint(d->headroom_max_usec),
                                 "level", (json_int_t) d->level,
                                 "levels", (json_int_t) BW_POLICY_LEVELS,
                                 "reserve_usec", jint(d->reserve_usec),
                                 "time_to_empty_usec", jtime_or_null(d->time_to_empty_usec),
                         "target_throttle", jint(g->target_throttle),
                         "target_pressure", jint(g->target_pressure),
                         "target_wait_p99_usec", jint(g->target_wait_p99_usec),
                         "credit_max_usec", jint(g->credit_max_usec),
                         "quota_limit_usec", jquota(g->quota_limit_usec));
}

static json_t *history_entry_json(const struct bw_history_entry *e) {
        return json_pack("{s:o, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o}",
                         "realtime_usec", jint(e->realtime_usec),
                         "rule", strna(bw_rule_to_string(e->rule)),
                         "applied", (int) e->applied,
                         "usage_rate", jint(e->usage_rate),
                         "throttle_rate", jint(e->throttle_rate),
                         "pressure_rate", jint(e->pressure_rate),
                         "credit_usec", jint(e->credit_usec),
                         "old", bandwidth_json(&e->old_bw),
                         "new", bandwidth_json(&e->new_bw));
}

/* Why the check is incomplete, in the words of the CheckKernel reply; NULL
 * when it is complete. */
static char *kernel_check_error(const struct bw_kreport *r) {
        char *e;

        if (r->manifest)
                return bw_kreport_problem(r) ? strdup(bw_kreport_problem(r)) : NULL;
        if (asprintf(&e, "manifest %s: %s", r->manifest_path,
                     r->errors.n_errors > 0 ? r->errors.errors[0].message : strerror(-r->manifest_error)) < 0)
                return NULL;
        return e;
}

/* The CheckKernel reply: the report's verdict and items in the one shape of
 * include/bwgov/kernel/kreport.h (bwgovctl check-kernel --json has the same items). */
static json_t *kernel_check_json(const struct bw_kreport *r) {
        _cleanup_free_ char *error = kernel_check_error(r);
        char vbuf[BW_KRELEASE_MAX];

        if (!error && (!r->manifest || bw_kreport_problem(r)))
                return NULL;
        return json_pack("{s:s, s:o, s:o, s:s, s:o, s:b, s:o, s:o, s:o}",
                         "verdict", strna(bw_kverdict_to_string(r->verdict)),
                         "release", jstring_or_null(r->version_ok ? r->version.release : NULL),
                         "version", jstring_or_null(r->version_ok ?
                                                    bw_kversion_format(&r->version, vbuf, sizeof vbuf) : NULL),
                         "manifest", r->manifest_path,
                         "patchset_version", jstring_or_null(r->manifest ? r->manifest->patchset_version : NULL),
                         "files_verified", (int) r->files_ok,
                         "capabilities", bw_kreport_caps_to_json(r),
                         "items", bw_kreport_items_to_json(r),
                         "error", jstring_or_null(error));
}

/* ---- read methods ------------------------------------------------------- */

static json_t *method_get_status(VarlinkCall *call, json_t *params, void *userdata) {
        GovernorVarlink *gv = userdata;
        struct governor_status s;
        uint64_t now = 0;

        if (gv->governor.ops->get_status(gv->governor.userdata, &s) < 0)
                return NULL;
        (void) sd_event_now(gv->event, CLOCK_MONOTONIC, &now);

        return varlink_reply(json_pack(
                        "{s:s, s:o, s:o, s:o, s:s, s:s, s:o, s:s, s:o, s:o,"
                        " s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o, s:b,"
                        " s:o, s:o, s:o, s:o}",
                        "version", PACKAGE_VERSION,
                        "pid", jint((uint64_t) getpid()),
                        "uptime_usec", jint(now - gv->start_usec),
                        "ticks", jint(s.ticks),
                        "layout", bw_cg_layout_to_string(s.layout),
                        "bandwidth_root", s.bandwidth_root,
                        "interval_usec", jint(s.interval_usec),
                        "mode", bw_mode_to_string(s.mode),
                        "n_units", jint(s.counts.units),
                        "n_present", jint(s.counts.present),
                        "n_boosted", jint(s.counts.boosted),
                        "n_paused", jint(s.counts.paused),
                        "reloads", jint(s.reloads),
                        "reload_failures", jint(s.reload_failures),
                        "host_pressure_rate", jint(s.host_pressure_rate),
                        "host_pressure_limit", jint(s.host_pressure_limit),
                        "host_other_usage_rate", jint(s.host_other_usage_rate),
                        "host_other_wait_rate", jtime_or_null(s.host_other_wait_rate),
                        "host_other_behind_rate", jtime_or_null(s.host_other_behind_rate),
                        "host_governed_excess_rate", jint(s.host_governed_excess_rate),
                        "host_idle_rate", jint(s.host_idle_rate),
                        "host_over_limit", json_boolean(s.host_over_limit),
                        "telemetry", (int) s.telemetry,
                        "telemetry_reason", jstring_or_null(s.telemetry ? NULL : s.telemetry_reason),
                        "telemetry_cgroups", jint(s.telemetry_tracked),
                        "refused_writes", (int) s.refused_writes,
                        "refused_writes_reason", jstring_or_null(s.refused_writes ? NULL : s.refused_writes_reason),
                        "refused_writes_seen", jint(s.refused_writes_seen),
                        "connections", jint(varlink_server_n_connections(varlink_call_server(call))),
                        "state_error", jstring_or_null(s.state_error < 0 ? STRERROR(s.state_error) : NULL)));
}

static json_t *method_list_units(VarlinkCall *call, json_t *params, void *userdata) {
        GovernorVarlink *gv = userdata;
        _cleanup_free_ struct governor_unit *units = NULL;
        json_t *limit = json_object_get(params, "limit"), *array;
        size_t n, total;

        if (json_is_integer(limit) && json_integer_value(limit) < 1)
                return varlink_reply_error(INTERFACE ".InvalidParameter",
                                           json_pack("{s:s, s:s}", "parameter", "limit",
                                                     "reason", "must be at least 1"));
        if (gv->governor.ops->list_units(gv->governor.userdata,
                                         json_is_integer(limit) ? (size_t) json_integer_value(limit) : SIZE_MAX,
                                         &units, &n, &total) < 0)
                return NULL;
        array = json_array();
        if (!array)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (json_array_append_new(array, unit_summary_json(&units[i])) < 0) {
                        json_decref(array);
                        return NULL;
                }
        return varlink_reply(json_pack("{s:o, s:o}", "units", array, "total", jint(total)));
}

static json_t *method_get_unit(VarlinkCall *call, json_t *params, void *userdata) {
        GovernorVarlink *gv = userdata;
        const char *name = json_string_value(json_object_get(params, "unit"));
        struct governor_unit u;
        int r;

        r = gv->governor.ops->get_unit(gv->governor.userdata, name, &u);
        if (r == -ENOENT)
                return reply_unit_not_found(name);
        if (r < 0)
                return NULL;
        return varlink_reply(unit_json(&u));
}

static json_t *method_explain(VarlinkCall *call, json_t *params, void *userdata) {
        GovernorVarlink *gv = userdata;
        const char *name = json_string_value(json_object_get(params, "unit"));
        struct governor_unit_summary s;
        struct governor_decision d;
        bool has_decision;
        int r;

        r = gv->governor.ops->explain(gv->governor.userdata, name, &s, &has_decision, &d);
        if (r == -ENOENT)
                return reply_unit_not_found(name);
        if (r < 0)
                return NULL;
        return varlink_reply(json_pack("{s:s, s:s, s:b, s:o, s:o}",
                                       "unit", s.name,
                                       "mode", bw_mode_to_string(s.mode),
                                       "paused", (int) s.paused,
                                       "decision", has_decision ? decision_json(&d) : json_null(),
                                       "protection", protection_json(&s.prot)));
}

static json_t *method_get_latency(VarlinkCall *call, json_t *params, void *userdata) {
        GovernorVarlink *gv = userdata;
        const char *name = json_string_value(json_object_get(params, "unit"));
        struct governor_latency l;
        int r;

        r = gv->governor.ops->get_latency(gv->governor.userdata, name, &l);
        if (r == -ENOENT)
                return reply_unit_not_found(name);
        if (r < 0)
                return NULL;
        return varlink_reply(json_pack("{s:s, s:b, s:o, s:o, s:o, s:o, s:o}",
                                       "unit", l.unit,
                                       "available", (int) l.available,
                                       "reason", jstring_or_null(l.available ? NULL : l.reason),
                                       "since_realtime_usec",
                                               l.available ? jint(l.since_realtime_usec) : json_null(),
                                       "total", l.available ? bw_rq_figures_to_json(&l.total) : json_null(),
                                       "window", l.has_window ? bw_rq_figures_to_json(&l.window) : json_null(),
                                       "window_usec", l.has_window ? jint(l.window_usec) : json_null()));
}

static json_t *method_get_history(VarlinkCall *call, json_t *params, void *userdata) {
        GovernorVarlink *gv = userdata;
        const char *name = json_string_value(json_object_get(params, "unit"));
        json_t *limit = json_object_get(params, "limit"), *entries;
        struct bw_history_query q = {
                .has_limit = json_is_integer(limit),
                .limit = json_integer_value(limit),
        };
        struct governor_history h;
        int r;

        r = gv->governor.ops->get_history(gv->governor.userdata, name, &q, &h);
        if (r == -ENOENT)
                return reply_unit_not_found(name);
        if (r == -EINVAL)
                return varlink_reply_error(INTERFACE ".InvalidParameter",
                                           json_pack("{s:s, s:s}", "parameter", "limit",
                                                     "reason", "must be at least 1"));
        if (r < 0)
                return NULL;

        entries = json_array();
        for (size_t i = 0; entries && i < h.n_entries; i++)
                if (json_array_append_new(entries, history_entry_json(&h.entries[i])) < 0)
                        entries = (json_decref(entries), NULL);
        governor_history_done(&h);
        if (!entries)
                return NULL;

        return varlink_reply(json_pack("{s:s, s:o, s:o, s:o}",
                                       "unit", h.unit,
                                       "capacity", jint(h.capacity),
                                       "recorded", jint(h.recorded),
                                       "entries", entries));
}

/* Reading the manifest, hashing its files and parsing BTF takes tens of
 * milliseconds: done once, kept until the next reload. */
static json_t *method_check_kernel(VarlinkCall *call, json_t *params, void *userdata) {
        GovernorVarlink *gv = userdata;
        struct governor_status s;

        if (gv->governor.ops->get_status(gv->governor.userdata, &s) < 0)
                return NULL;
        if (gv->kernel_check && gv->kernel_check_reloads != s.reloads)
                gv->kernel_check = (json_decref(gv->kernel_check), NULL);
        if (!gv->kernel_check) {
                struct bw_kreport *k = NULL;

                if (gv->governor.ops->check_kernel(gv->governor.userdata, &k) < 0)
                        return NULL;
                gv->kernel_check = kernel_check_json(k);
                bw_kreport_free(k);
                if (!gv->kernel_check)
                        return NULL;
                gv->kernel_check_reloads = s.reloads;
        }
        return varlink_reply(json_deep_copy(gv->kernel_check));
}

/* ---- methods that change something -------------------------------------- */

static json_t *method_reload(VarlinkCall *call, json_t *params, void *userdata) {
        GovernorVarlink *gv = userdata;
        struct governor_reload_error e = { 0 };
        struct governor_status s;
        int r;

        log_info("Reload requested over varlink by uid " UID_FMT " (pid " PID_FMT ")",
                 varlink_call_uid(call), varlink_call_pid(call));
        r = gv->governor.ops->reload(gv->governor.userdata, &e);
        if (r < 0) {
                _cleanup_free_ char *reason = NULL;
                char line[16] = "";
                int k;

                /* "FILE:LINE: KEY: MESSAGE", as the log says it. */
                if (e.file && e.line)
                        (void) snprintf(line, sizeof(line), ":%u", e.line);
                if (e.message)
                        k = asprintf(&reason, "%s%s%s%s%s%s", e.file ? e.file : "", line, e.file ? ": " : "",
                                     e.key ? e.key : "", e.key ? ": " : "", e.message);
                else
                        k = asprintf(&reason, "the configuration was rejected (%s)", STRERROR(r));
                if (k < 0)
                        return NULL;
                return varlink_reply_error(INTERFACE ".ReloadFailed",
                                           json_pack("{s:s, s:o, s:o, s:o, s:o}", "reason", reason,
                                                     "file", jstring_or_null(e.file),
                                                     "line", e.file && e.line ? jint(e.line) : json_null(),
                                                     "key", jstring_or_null(e.key),
                                                     "message", jstring_or_null(e.message)));
        }
        if (gv->governor.ops->get_status(gv->governor.userdata, &s) < 0)
                return NULL;
        return varlink_reply(json_pack("{s:o, s:o}", "reloads", jint(s.reloads), "units", jint(s.counts.units)));
}

static json_t *set_paused(VarlinkCall *call, json_t *params, GovernorVarlink *gv, bool paused) {
        const char *name = json_string_value(json_object_get(params, "unit"));
        int r;

        log_info("%s of %s requested over varlink by uid " UID_FMT " (pid " PID_FMT ")",
                 paused ? "Pause" : "Resume", name, varlink_call_uid(call), varlink_call_pid(call));
        r = gv->governor.ops->set_paused(gv->governor.userdata, name, paused);
        if (r == -ENOENT)
                return reply_unit_not_found(name);
        if (r < 0)
                return NULL;
        return varlink_reply(json_pack("{s:s, s:b}", "unit", name, "changed", r > 0));
}

static json_t *method_pause(VarlinkCall *call, json_t *params, void *userdata) {
        return set_paused(call, params, userdata, true);
}

static json_t *method_resume(VarlinkCall *call, json_t *params, void *userdata) {
        return set_paused(call, params, userdata, false);
}

/* ---- the interface ------------------------------------------------------ */

static const struct varlink_param no_params[] = { { NULL, 0, false } };
static const struct varlink_param unit_params[] = { { "unit", JSON_STRING, false }, { NULL, 0, false } };
static const struct varlink_param list_params[] = { { "limit", JSON_INTEGER, true }, { NULL, 0, false } };
static const struct varlink_param history_params[] = {
        { "unit", JSON_STRING, false },
        { "limit", JSON_INTEGER, true },
        { NULL, 0, false },
};

static const struct varlink_method methods[] = {
        { "GetStatus",   VARLINK_ACCESS_READ, no_params,      method_get_status },
        { "ListUnits",   VARLINK_ACCESS_READ, list_params,    method_list_units },
        { "GetUnit",     VARLINK_ACCESS_READ, unit_params,    method_get_unit },
        { "Explain",     VARLINK_ACCESS_READ, unit_params,    method_explain },
        { "GetHistory",  VARLINK_ACCESS_READ, history_params, method_get_history },
        { "GetLatency",  VARLINK_ACCESS_READ, unit_params, method_get_latency },
        { "CheckKernel", VARLINK_ACCESS_READ, no_params,      method_check_kernel },
        { "Reload",      VARLINK_ACCESS_ALL,  no_params,      method_reload },
        { "Pause",       VARLINK_ACCESS_ALL,  unit_params,    method_pause },
        { "Resume",      VARLINK_ACCESS_ALL,  unit_params,    method_resume },
};

static const struct varlink_interface interface = {
        .name = INTERFACE,
        .description = io_bwgov_governor_varlink,
        .methods = methods,
        .n_methods = ELEMENTSOF(methods),
};

int governor_varlink_new(sd_event *e, const char *runtime_dir, const Governor *g, GovernorVarlink **ret) {
        const char *group = getenv("BWGOV_SOCKET_GROUP");
        GovernorVarlink *gv;
        int r;

        gv = malloc(sizeof(*gv));
        if (!gv)
                return log_oom();
        *gv = (GovernorVarlink) { .governor = *g, .event = e };
        (void) sd_event_now(e, CLOCK_MONOTONIC, &gv->start_usec);

        r = varlink_server_new(e, runtime_dir, group && *group ? group : SOCKET_GROUP_DEFAULT,
                               &(const struct varlink_service) {
                                       .vendor = "bwgov",
                                       .product = "bwgovd",
                                       .version = PACKAGE_VERSION,
                                       .url = "man:bwgovd(8)",
                                       .interface = &interface,
                                       .userdata = gv,
                               }, &gv->server);
        if (r < 0) {
                free(gv);
                return r;
        }
        *ret = gv;
        return 0;
}

GovernorVarlink *governor_varlink_free(GovernorVarlink *gv) {
        if (!gv)
                return NULL;
        varlink_server_free(gv->server);
        json_decref(gv->kernel_check);
        free(gv);
        return NULL;
}

void governor_varlink_drain(GovernorVarlink *gv, uint64_t budget_usec) {
        varlink_server_drain(gv->server, budget_usec);
}

int governor_varlink_check_socket(GovernorVarlink *gv) {
        return varlink_server_check_socket(gv->server);
}
