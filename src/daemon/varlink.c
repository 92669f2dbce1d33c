/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The varlink server (see varlink.h): the socket, connections with bounded
 * buffers, the org.varlink.service methods and io.bwgov.Governor. */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "bwgov/kernelcheck.h"
#include "config.h"
#include "io.bwgov.Governor.varlink.h"
#include "log.h"
#include "manager.h"
#include "varlink.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

#define UID_FMT "%" PRIu32
#define PID_FMT "%" PRIi32

#define INTERFACE "io.bwgov.Governor"
#define SOCKET_NAME INTERFACE
#define DEFAULT_GROUP "bwgov"

/* One message, NUL included. Calls are small (a method name and a unit
 * name); 64 KiB leaves room for any client and bounds what a connection
 * holds before a NUL arrives. */
#define MESSAGE_MAX (64U * 1024U)
#define INPUT_INITIAL 4096U

/* While more than this waits to be sent, no further call of the connection
 * is read or answered: a client that does not read cannot make the daemon
 * buffer more than this plus one reply. */
#define OUTPUT_HIGH (64U * 1024U)

/* A client that takes no byte of its pending replies for this long is
 * dropped: nothing a healthy client does takes that long. */
#define STALL_TIMEOUT_USEC (10 * USEC_PER_SEC)

/* Enough for every operator tool at once; each costs an fd and at most
 * MESSAGE_MAX + OUTPUT_HIGH bytes plus one reply. Non-root uids get half,
 * so one group member cannot lock root out. */
#define CONNECTIONS_MAX 256U
#define CONNECTIONS_PER_UID_MAX 128U

/* accept() out of fds: stop listening for a moment instead of spinning on
 * a level-triggered listening socket. */
#define ACCEPT_RETRY_USEC (1 * USEC_PER_SEC)

/* Below the control loop's timers (priority 0): a flood of clients delays
 * answers, never a tick. */
#define PRIORITY (SD_EVENT_PRIORITY_NORMAL + 10)

static const char service_description[] =
        "# The Varlink Service Interface is provided by every varlink service. It\n"
        "# describes the service and the interfaces it implements.\n"
        "interface org.varlink.service\n"
        "\n"
        "# Get a list of all the interfaces a service provides and information\n"
        "# about the implementation.\n"
        "method GetInfo() -> (\n"
        "  vendor: string,\n"
        "  product: string,\n"
        "  version: string,\n"
        "  url: string,\n"
        "  interfaces: []string\n"
        ")\n"
        "\n"
        "# Get the description of an interface that is implemented by this service.\n"
        "method GetInterfaceDescription(interface: string) -> (description: string)\n"
        "\n"
        "# The requested interface was not found.\n"
        "error InterfaceNotFound (interface: string)\n"
        "\n"
        "# The requested method was not found\n"
        "error MethodNotFound (method: string)\n"
        "\n"
        "# The interface defines the requested method, but the service does not\n"
        "# implement it.\n"
        "error MethodNotImplemented (method: string)\n"
        "\n"
        "# One of the passed parameters is invalid.\n"
        "error InvalidParameter (parameter: string)\n";

typedef enum Access {
        ACCESS_NONE,            /* org.varlink.service only */
        ACCESS_READ,            /* + the read methods */
        ACCESS_ALL,             /* + Reload, Pause, Resume */
} Access;

typedef struct Connection Connection;

struct Connection {
        Varlink *server;
        Connection *prev, *next;
        int fd;
        sd_event_source *io;
        sd_event_source *stall;
        uid_t uid;
        gid_t gid;
        pid_t pid;
        Access access;

        char *in;               /* received bytes [in_start, in_end) */
        size_t in_size, in_start, in_end;
        char *out;              /* replies to send [out_start, out_end) */
        size_t out_size, out_start, out_end;

        bool eof;               /* the client will send nothing more */
        bool closing;           /* answer nothing more; close once the output is sent */
};

struct Varlink {
        Manager *manager;
        int listen_fd;
        bool activated;         /* from systemd: not ours to unlink */
        bool bound;             /* we created path: unlink it at the end */
        char *path;             /* the socket we bound */
        sd_event_source *listen_source;
        sd_event_source *accept_retry;
        Connection *connections;
        size_t n_connections;
        bool have_group;
        gid_t group;
        uid_t self_uid;
        uint64_t start_usec;

        /* CheckKernel's reply, and m->reloads when it was computed. */
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

/* Steals parameters. */
static json_t *reply(json_t *parameters) {
        if (!parameters)
                return NULL;
        return json_pack("{s:o}", "parameters", parameters);
}

/* Steals parameters; NULL means none. */
static json_t *reply_error(const char *error, json_t *parameters) {
        return json_pack("{s:s, s:o}", "error", error, "parameters", parameters ? parameters : json_object());
}

static json_t *reply_invalid_parameter(const char *name) {
        return reply_error("org.varlink.service.InvalidParameter", json_pack("{s:s}", "parameter", name));
}

/* ---- io.bwgov.Governor -------------------------------------------------- */

typedef json_t *(*method_fn)(Connection *c, json_t *params);

static enum bw_mode unit_effective_mode(Manager *m, Unit *u) {
        return bw_unit_mode(&m->config, &u->cfg);
}

static const struct bw_bandwidth *unit_current(const Unit *u) {
        return u->has_written ? &u->written : &u->baseline;
}

static json_t *unit_summary_json(Manager *m, Unit *u) {
        return json_pack("{s:s, s:o, s:s, s:s, s:b, s:b, s:b, s:b, s:o, s:o, s:o, s:o, s:o, s:o}",
                         "name", u->name,
                         "cgroup", jstring_or_null(u->cgroup_path),
                         "mode", bw_mode_to_string(unit_effective_mode(m, u)),
                         "state", unit_state_to_string(u),
                         "present", (int) (u->cg != NULL),
                         "adopted", (int) u->adopted,
                         "paused", (int) u->paused,
                         "boosted", (int) unit_is_boosted(u),
                         "baseline", u->adopted ? bandwidth_json(&u->baseline) : json_null(),
                         "current", u->adopted ? bandwidth_json(unit_current(u)) : json_null(),
                         "credit_usec", u->adopted ? jint(u->pstate.credit.credit_usec) : json_null(),
                         "credit_max_usec", jint(u->cfg.credit_max_usec),
                         "rule", jstring_or_null(u->has_last ? bw_rule_to_string(u->last.rule) : NULL),
                         "ticks", jint(u->ticks));
}

static json_t *jtime_or_null(uint64_t usec) {
        return usec == UINT64_MAX ? json_null() : jint(usec);
}

/* The credit bucket and the headroom it pays for, from the last decision;
 * null before the first one. */
static json_t *unit_credit_json(const Unit *u) {
        const struct bw_decision *d = &u->last;

        if (!u->adopted || !u->has_last)
                return json_null();
        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
                         "credit_usec", jint(u->pstate.credit.credit_usec),
                         "debt_usec", jint(u->pstate.credit.debt_usec),
                         "credit_max_usec", jint(u->params.credit_max_usec),
                         "reserve_usec", jint(d->reserve_usec),
                         "earn_rate", jint(d->earn_rate),
                         "spend_rate", jint(d->spend_rate),
                         "spend_avg", jint(d->spend_avg),
                         "time_to_empty_usec", jtime_or_null(d->time_to_empty_usec),
                         "exhausted", (int) u->pstate.exhausted);
}

static json_t *unit_headroom_json(const Unit *u) {
        const struct bw_decision *d = &u->last;

        if (!u->adopted || !u->has_last)
                return json_null();
        return json_pack("{s:o, s:o, s:I, s:I, s:b, s:o}",
                         "headroom_usec", jint(d->headroom_usec),
                         "headroom_max_usec", jint(d->headroom_max_usec),
                         "level", (json_int_t) d->level,
                         "levels", (json_int_t) BW_POLICY_LEVELS,
                         "active", (int) d->active,
                         "next_sample_usec", jint(d->next_tick_usec));
}

/* The unit named by the "unit" parameter (already type-checked), or NULL
 * with the error reply in *ret_reply. */
static Unit *lookup_unit(Connection *c, json_t *params, json_t **ret_reply) {
        const char *name = json_string_value(json_object_get(params, "unit"));
        Unit *u = manager_get_unit(c->server->manager, name);

        if (!u)
                *ret_reply = reply_error(INTERFACE ".UnitNotFound", json_pack("{s:s}", "unit", name));
        return u;
}

static json_t *method_get_status(Connection *c, json_t *params) {
        Varlink *v = c->server;
        Manager *m = v->manager;
        size_t present = 0, boosted = 0, paused = 0;
        struct timespec ts;
        uint64_t now;

        for (size_t i = 0; i < m->n_units; i++) {
                present += m->units[i]->cg != NULL;
                boosted += unit_is_boosted(m->units[i]);
                paused += m->units[i]->paused;
        }
        clock_gettime(CLOCK_MONOTONIC, &ts);
        now = (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;

        return reply(json_pack("{s:s, s:o, s:o, s:o, s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                               "version", PACKAGE_VERSION,
                               "pid", jint((uint64_t) getpid()),
                               "uptime_usec", jint(now - v->start_usec),
                               "ticks", jint(m->ticks),
                               "layout", bw_cg_layout_to_string(m->root->layout),
                               "bandwidth_root", m->root->bw_path ? m->root->bw_path : "",
                               "interval_usec", jint(m->config.global.interval_usec),
                               "mode", bw_mode_to_string(m->config.global.mode),
                               "n_units", jint(m->n_units),
                               "n_present", jint(present),
                               "n_boosted", jint(boosted),
                               "n_paused", jint(paused),
                               "reloads", jint(m->reloads),
                               "reload_failures", jint(m->reload_failures),
                               "host_pressure_rate", jint(m->host_some_rate),
                               "host_pressure_limit", jint(m->config.global.host_pressure_limit),
                               "host_other_usage_rate", jint(m->host_other_usage),
                               "host_over_limit", json_boolean(m->host_over_limit),
                               "connections", jint(v->n_connections)));
}

static json_t *method_list_units(Connection *c, json_t *params) {
        Manager *m = c->server->manager;
        json_t *units = json_array();

        if (!units)
                return NULL;
        /* m->units follows the configuration, which is sorted by name. */
        for (size_t i = 0; i < m->n_units; i++)
                if (json_array_append_new(units, unit_summary_json(m, m->units[i])) < 0) {
                        json_decref(units);
                        return NULL;
                }
        return reply(json_pack("{s:o}", "units", units));
}

static json_t *unit_config_json(Manager *m, Unit *u) {
        const struct bw_unit_config *cfg = &u->cfg;

        return json_pack("{s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o}",
                         "cgroup", jstring_or_null(cfg->cgroup),
                         "mode", bw_mode_to_string(unit_effective_mode(m, u)),
                         "cpu_quota", cfg->cpu_quota > 0 ? jint(cfg->cpu_quota) : json_null(),
                         "cpu_quota_max", cfg->cpu_quota_max > 0 ? jint(cfg->cpu_quota_max) : json_null(),
                         "cpu_burst_max_usec", cfg->has_cpu_burst_max ? jint(cfg->cpu_burst_max_usec) : json_null(),
                         "credit_max_usec", jint(cfg->credit_max_usec),
                         "target_throttle", jint(cfg->target_throttle),
                         "target_pressure", jint(cfg->target_pressure),
                         "priority", (json_int_t) cfg->priority,
                         "interval_usec", jint(bw_unit_interval_usec(&m->config, cfg)),
                         "active_interval_usec", jint(bw_unit_active_interval_usec(&m->config, cfg)));
}

static json_t *unit_stat_json(const Unit *u) {
        const struct bw_cpu_stat *s = &u->last_stat;

        if (!u->has_last_stat)
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

static json_t *method_get_unit(Connection *c, json_t *params) {
        Manager *m = c->server->manager;
        json_t *err = NULL, *limits;
        Unit *u;

        u = lookup_unit(c, params, &err);
        if (!u)
                return err;

        limits = u->adopted ? json_pack("{s:o, s:o}",
                                        "quota_limit_usec", jquota(bw_policy_quota_limit_usec(&u->params)),
                                        "burst_limit_usec", jint(bw_policy_contract_burst_usec(&u->params)))
                            : json_null();

        return reply(json_pack("{s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o}, s:o, s:I, s:o, s:o}",
                               "unit", unit_summary_json(m, u),
                               "config", unit_config_json(m, u),
                               "limits", limits,
                               "credit", unit_credit_json(u),
                               "headroom", unit_headroom_json(u),
                               "counters",
                                       "ticks", jint(u->ticks),
                                       "writes", jint(u->cg ? u->cg->stats.writes : 0),
                                       "skipped_writes", jint(u->cg ? u->cg->stats.skipped : 0),
                                       "burst_repairs", jint(u->cg ? u->cg->stats.burst_repairs : 0),
                                       "external_changes", jint(u->external_changes),
                                       "write_errors", jint(u->write_errors),
                                       "decisions_applied", jint(u->decisions_applied),
                               "stat", unit_stat_json(u),
                               "shed_permille", (json_int_t) u->shed_permille,
                               "history_entries", jint(u->history ? bw_history_count(u->history) : 0),
                               "history_capacity", jint(u->history ? bw_history_capacity(u->history) : 0)));
}

static json_t *decision_json(const Unit *u) {
        const struct bw_decision *d = &u->last;

        return json_pack("{s:o, s:s, s:s, s:s, s:o, s:o, s:b, s:b, s:b, s:b, s:o,"
                         " s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b},"
                         " s:{s:o, s:o, s:I, s:I, s:o, s:o},"
                         " s:o, s:o, s:o, s:o}",
                         "realtime_usec", jint(u->last_realtime_usec),
                         "rule", strna(bw_rule_to_string(d->rule)),
                         "description", strna(bw_rule_description(d->rule)),
                         "explain", d->explain,
                         "old", bandwidth_json(&u->last_current),
                         "target", bandwidth_json(&d->target),
                         "would_change", (int) d->would_change,
                         "change", (int) d->change,
                         "applied", (int) u->last_applied,
                         "emergency", (int) d->emergency,
                         "next_sample_usec", jint(d->next_tick_usec),
                         "inputs",
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
                         "headroom",
                                 "headroom_usec", jint(d->headroom_usec),
                                 "headroom_max_usec", jint(d->headroom_max_usec),
                                 "level", (json_int_t) d->level,
                                 "levels", (json_int_t) BW_POLICY_LEVELS,
                                 "reserve_usec", jint(d->reserve_usec),
                                 "time_to_empty_usec", jtime_or_null(d->time_to_empty_usec),
                         "target_throttle", jint(u->params.target_throttle),
                         "target_pressure", jint(u->params.target_pressure),
                         "credit_max_usec", jint(u->params.credit_max_usec),
                         "quota_limit_usec", jquota(bw_policy_quota_limit_usec(&u->params)));
}

static json_t *method_explain(Connection *c, json_t *params) {
        Manager *m = c->server->manager;
        json_t *err = NULL;
        Unit *u;

        u = lookup_unit(c, params, &err);
        if (!u)
                return err;
        return reply(json_pack("{s:s, s:s, s:b, s:o}",
                               "unit", u->name,
                               "mode", bw_mode_to_string(unit_effective_mode(m, u)),
                               "paused", (int) u->paused,
                               "decision", u->has_last ? decision_json(u) : json_null()));
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

static json_t *method_get_history(Connection *c, json_t *params) {
        json_t *err = NULL, *limit, *entries;
        size_t n;
        Unit *u;

        u = lookup_unit(c, params, &err);
        if (!u)
                return err;

        n = u->history ? bw_history_count(u->history) : 0;
        limit = json_object_get(params, "limit");
        if (json_is_integer(limit)) {
                json_int_t l = json_integer_value(limit);
                if (l < 1)
                        return reply_error(INTERFACE ".InvalidParameter",
                                           json_pack("{s:s, s:s}", "parameter", "limit", "reason", "must be at least 1"));
                if ((uint64_t) l < n)
                        n = (size_t) l;
        }

        entries = json_array();
        if (!entries)
                return NULL;
        /* The newest n, oldest first. */
        for (size_t i = n; i > 0; i--)
                if (json_array_append_new(entries, history_entry_json(bw_history_newest(u->history, i - 1))) < 0) {
                        json_decref(entries);
                        return NULL;
                }

        return reply(json_pack("{s:s, s:o, s:o, s:o}",
                               "unit", u->name,
                               "capacity", jint(u->history ? bw_history_capacity(u->history) : 0),
                               "recorded", jint(u->history ? bw_history_pushed(u->history) : 0),
                               "entries", entries));
}

/* ---- CheckKernel -------------------------------------------------------- */



static json_t *kcheck_items_json(const struct bw_kcheck_result *res) {
        json_t *items = json_array();

        if (!items)
                return NULL;
        for (size_t i = 0; res && i < res->n_rows; i++) {
                const struct bw_kcheck_row *row = &res->rows[i];
                if (json_array_append_new(items, json_pack(
                                "{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:s}",
                                "id", row->id,
                                "title", row->title,
                                "kind", strna(bw_kitem_kind_to_string(row->kind)),
                                "importance", strna(bw_kimportance_to_string(row->importance)),
                                "status", strna(bw_kstatus_to_string(row->status)),
                                "method", jstring_or_null(row->method >= 0 ?
                                                          bw_kdetect_method_to_string((enum bw_kdetect_method) row->method) : NULL),
                                "detected_by", row->detected_by ? row->detected_by : "",
                                "fallback", row->fallback ? row->fallback : "")) < 0) {
                        json_decref(items);
                        return NULL;
                }
        }
        return items;
}

/* Reading the manifest, hashing its files and parsing BTF takes tens of
 * milliseconds: done once, kept until the next reload. No behaviour probes
 * (they fork busy loops for seconds). */
static json_t *kernel_check_compute(Manager *m) {
        const char *path = m->manifest_path ? m->manifest_path : bw_kmanifest_default_path();
        _cleanup_free_ char *dir = NULL, *error = NULL;
        struct bw_kmanifest *manifest = NULL;
        struct bw_kcheck_result *res = NULL;
        struct bw_kerrors errors = {0};
        struct bw_kversion version;
        bool version_ok, files_ok = false;
        enum bw_kverdict verdict = BW_KVERDICT_UNCHECKED;
        char vbuf[BW_KRELEASE_MAX];
        json_t *caps = NULL, *ret = NULL;
        const char *slash;
        int r;

        version_ok = bw_kversion_read("/proc/version", &version) >= 0;

        r = bw_kmanifest_load(AT_FDCWD, path, &manifest, &errors);
        if (r < 0) {
                if (asprintf(&error, "manifest %s: %s", path,
                             errors.n_errors > 0 ? errors.errors[0].message : strerror(-r)) < 0)
                        error = NULL;
                goto build;
        }

        slash = strrchr(path, '/');
        dir = slash ? strndup(path, slash == path ? 1 : (size_t) (slash - path)) : strdup(".");
        if (dir) {
                _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                files_ok = dfd >= 0 && bw_kmanifest_verify_files(manifest, dfd, &errors) >= 0;
        }
        if (!files_ok && asprintf(&error, "the manifest's files do not match their digests") < 0)
                error = NULL;

        {
                struct bw_kprobe_env env = {
                        .bw_root_fd = m->root->bw_fd,
                        .bw_is_v1 = m->root->layout != BW_CG_LAYOUT_V2,
                        .v2_root_fd = m->root->v2_fd,
                        .version = version_ok ? &version : NULL,
                        .allow_behaviour = false,
                };
                r = bw_kcheck_run(manifest, &env, &res);
                if (r < 0)
                        goto finish;
        }
        verdict = files_ok ? res->verdict : BW_KVERDICT_UNCHECKED;
        caps = json_pack("{s:b, s:b, s:b, s:b, s:b, s:b, s:b}",
                         "has_burst", (int) res->caps.has_burst,
                         "burst_bug", (int) res->caps.burst_bug,
                         "has_psi", (int) res->caps.has_psi,
                         "has_psi_full", (int) res->caps.has_psi_full,
                         "has_psi_triggers_unprivileged", (int) res->caps.has_psi_triggers_unprivileged,
                         "has_burst_stats", (int) res->caps.has_burst_stats,
                         "identical_update_is_noop", (int) res->caps.identical_update_is_noop);

build:
        ret = json_pack("{s:s, s:o, s:o, s:s, s:o, s:b, s:o, s:o, s:o}",
                        "verdict", strna(bw_kverdict_to_string(verdict)),
                        "release", jstring_or_null(version_ok ? version.release : NULL),
                        "version", jstring_or_null(version_ok ? bw_kversion_format(&version, vbuf, sizeof vbuf) : NULL),
                        "manifest", path,
                        "patchset_version", jstring_or_null(manifest ? manifest->patchset_version : NULL),
                        "files_verified", (int) files_ok,
                        "capabilities", caps ? caps : json_null(),
                        "items", kcheck_items_json(res),
                        "error", jstring_or_null(error));
        caps = NULL;
finish:
        json_decref(caps);
        bw_kcheck_result_free(res);
        bw_kmanifest_free(manifest);
        bw_kerrors_done(&errors);
        return ret;
}

static json_t *method_check_kernel(Connection *c, json_t *params) {
        Varlink *v = c->server;

        if (v->kernel_check && v->kernel_check_reloads != v->manager->reloads)
                v->kernel_check = (json_decref(v->kernel_check), NULL);
        if (!v->kernel_check) {
                v->kernel_check = kernel_check_compute(v->manager);
                if (!v->kernel_check)
                        return NULL;
                v->kernel_check_reloads = v->manager->reloads;
        }
        return reply(json_deep_copy(v->kernel_check));
}

/* ---- mutating methods --------------------------------------------------- */

static json_t *method_reload(Connection *c, json_t *params) {
        Manager *m = c->server->manager;
        int r;

        log_info("Reload requested over varlink by uid " UID_FMT " (pid " PID_FMT ")", c->uid, c->pid);
        r = manager_reload(m);
        if (r < 0) {
                _cleanup_free_ char *reason = NULL;
                if (asprintf(&reason, "the configuration was rejected (%s); the previous one stays, "
                             "the daemon's log names the file and line", STRERROR(r)) < 0)
                        return NULL;
                return reply_error(INTERFACE ".ReloadFailed", json_pack("{s:s}", "reason", reason));
        }
        return reply(json_pack("{s:o, s:o}", "reloads", jint(m->reloads), "units", jint(m->n_units)));
}

static json_t *set_paused(Connection *c, json_t *params, bool paused) {
        const char *name = json_string_value(json_object_get(params, "unit"));
        int r;

        log_info("%s of %s requested over varlink by uid " UID_FMT " (pid " PID_FMT ")",
                 paused ? "Pause" : "Resume", name, c->uid, c->pid);
        r = manager_set_paused(c->server->manager, name, paused);
        if (r == -ENOENT)
                return reply_error(INTERFACE ".UnitNotFound", json_pack("{s:s}", "unit", name));
        if (r < 0)
                return NULL;
        return reply(json_pack("{s:s, s:b}", "unit", name, "changed", r > 0));
}

static json_t *method_pause(Connection *c, json_t *params) {
        return set_paused(c, params, true);
}

static json_t *method_resume(Connection *c, json_t *params) {
        return set_paused(c, params, false);
}

/* ---- org.varlink.service ------------------------------------------------ */

static json_t *service_get_info(Connection *c, json_t *params) {
        return reply(json_pack("{s:s, s:s, s:s, s:s, s:[s, s]}",
                               "vendor", "bwgov",
                               "product", "bwgovd",
                               "version", PACKAGE_VERSION,
                               "url", "man:bwgovd(8)",
                               "interfaces", "org.varlink.service", INTERFACE));
}

static json_t *service_get_interface_description(Connection *c, json_t *params) {
        const char *name = json_string_value(json_object_get(params, "interface"));

        if (strcmp(name, INTERFACE) == 0)
                return reply(json_pack("{s:s}", "description", io_bwgov_governor_varlink));
        if (strcmp(name, "org.varlink.service") == 0)
                return reply(json_pack("{s:s}", "description", service_description));
        return reply_error("org.varlink.service.InterfaceNotFound", json_pack("{s:s}", "interface", name));
}

/* ---- dispatch ----------------------------------------------------------- */

struct param_spec {
        const char *name;
        json_type type;
        bool optional;          /* absent or null allowed */
};

struct method {
        const char *name;
        Access access;
        const struct param_spec *params; /* terminated by a NULL name */
        method_fn run;
};

static const struct param_spec no_params[] = { { NULL, 0, false } };
static const struct param_spec interface_params[] = { { "interface", JSON_STRING, false }, { NULL, 0, false } };
static const struct param_spec unit_params[] = { { "unit", JSON_STRING, false }, { NULL, 0, false } };
static const struct param_spec history_params[] = {
        { "unit", JSON_STRING, false },
        { "limit", JSON_INTEGER, true },
        { NULL, 0, false },
};

static const struct method methods[] = {
        { "org.varlink.service.GetInfo",                 ACCESS_NONE, no_params,        service_get_info },
        { "org.varlink.service.GetInterfaceDescription", ACCESS_NONE, interface_params, service_get_interface_description },
        { INTERFACE ".GetStatus",                        ACCESS_READ, no_params,        method_get_status },
        { INTERFACE ".ListUnits",                        ACCESS_READ, no_params,        method_list_units },
        { INTERFACE ".GetUnit",                          ACCESS_READ, unit_params,      method_get_unit },
        { INTERFACE ".Explain",                          ACCESS_READ, unit_params,      method_explain },
        { INTERFACE ".GetHistory",                       ACCESS_READ, history_params,   method_get_history },
        { INTERFACE ".CheckKernel",                      ACCESS_READ, no_params,        method_check_kernel },
        { INTERFACE ".Reload",                           ACCESS_ALL,  no_params,        method_reload },
        { INTERFACE ".Pause",                            ACCESS_ALL,  unit_params,      method_pause },
        { INTERFACE ".Resume",                           ACCESS_ALL,  unit_params,      method_resume },
};

/* NULL when the parameters match the spec, else the error reply. */
static json_t *check_params(const struct param_spec *spec, json_t *params) {
        const char *key;
        json_t *value;

        json_object_foreach(params, key, value) {
                const struct param_spec *p;
                for (p = spec; p->name; p++)
                        if (strcmp(p->name, key) == 0)
                                break;
                if (!p->name)
                        return reply_invalid_parameter(key);
        }
        for (const struct param_spec *p = spec; p->name; p++) {
                value = json_object_get(params, p->name);
                if ((!value || json_is_null(value)) && p->optional)
                        continue;
                if (!value || json_typeof(value) != p->type)
                        return reply_invalid_parameter(p->name);
        }
        return NULL;
}

static bool interface_known(const char *method) {
        const char *dot = strrchr(method, '.');
        size_t n;

        if (!dot)
                return false;
        n = (size_t) (dot - method);
        return (n == strlen(INTERFACE) && strncmp(method, INTERFACE, n) == 0) ||
               (n == strlen("org.varlink.service") && strncmp(method, "org.varlink.service", n) == 0);
}

static json_t *invalid_message(Connection *c, const char *fmt, ...) _printf_(2, 3);
static json_t *invalid_message(Connection *c, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&reason, fmt, ap);
        va_end(ap);
        if (n < 0)
                return NULL;
        log_debug("Varlink: invalid message from pid " PID_FMT ": %s, closing", c->pid, reason);
        c->closing = true;
        return reply_error(INTERFACE ".InvalidMessage", json_pack("{s:s}", "reason", reason));
}

/* Answer one message. Returns the reply to send (NULL with *ret_oneway for
 * none), or NULL without *ret_oneway on out of memory. */
static json_t *handle_message(Connection *c, const char *buf, size_t len, bool *ret_oneway) {
        json_t *msg, *ret = NULL, *params, *v, *upgrade;
        const struct method *method = NULL;
        json_error_t jerr;
        const char *name;
        bool oneway = false;

        *ret_oneway = false;
        msg = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!msg)
                return invalid_message(c, "not JSON: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
        if (!json_is_object(msg)) {
                ret = invalid_message(c, "not a JSON object");
                goto finish;
        }

        name = json_string_value(json_object_get(msg, "method"));
        if (!name) {
                ret = invalid_message(c, "no \"method\" string");
                goto finish;
        }
        v = json_object_get(msg, "oneway");
        if (v && !json_is_boolean(v)) {
                ret = invalid_message(c, "\"oneway\" is not a boolean");
                goto finish;
        }
        oneway = json_is_true(v);
        v = json_object_get(msg, "more");
        if (v && !json_is_boolean(v)) {
                ret = invalid_message(c, "\"more\" is not a boolean");
                goto finish;
        }
        upgrade = json_object_get(msg, "upgrade");
        if (upgrade && !json_is_boolean(upgrade)) {
                ret = invalid_message(c, "\"upgrade\" is not a boolean");
                goto finish;
        }

        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                if (strcmp(methods[i].name, name) == 0) {
                        method = &methods[i];
                        break;
                }
        if (!method) {
                if (!interface_known(name)) {
                        const char *dot = strrchr(name, '.');
                        _cleanup_free_ char *iface = strndup(name, dot ? (size_t) (dot - name) : strlen(name));
                        ret = iface ? reply_error("org.varlink.service.InterfaceNotFound",
                                                  json_pack("{s:s}", "interface", iface)) : NULL;
                } else
                        ret = reply_error("org.varlink.service.MethodNotFound", json_pack("{s:s}", "method", name));
                goto finish;
        }
        if (json_is_true(upgrade)) {
                ret = reply_error("org.varlink.service.MethodNotImplemented", json_pack("{s:s}", "method", name));
                goto finish;
        }

        if (c->access < method->access) {
                log_debug("Varlink: %s refused to uid " UID_FMT " (pid " PID_FMT ")", name, c->uid, c->pid);
                ret = reply_error(INTERFACE ".PermissionDenied", NULL);
                goto finish;
        }

        params = json_object_get(msg, "parameters");
        if (params && json_is_null(params))
                params = NULL;
        if (params && !json_is_object(params)) {
                ret = reply_invalid_parameter("parameters");
                goto finish;
        }
        if (!params) {
                params = json_object();
                if (!params)
                        goto finish;
                json_object_set_new(msg, "parameters", params);
        }
        ret = check_params(method->params, params);
        if (ret)
                goto finish;

        ret = method->run(c, params);

finish:
        json_decref(msg);
        if (oneway && !c->closing) {
                json_decref(ret);
                *ret_oneway = true;
                return NULL;
        }
        return ret;
}

/* ---- connections -------------------------------------------------------- */

static void connection_free(Connection *c) {
        Varlink *v;

        if (!c)
                return;
        v = c->server;
        if (c->prev)
                c->prev->next = c->next;
        else
                v->connections = c->next;
        if (c->next)
                c->next->prev = c->prev;
        v->n_connections--;
        log_debug("Varlink: connection of pid " PID_FMT " closed (%zu open)", c->pid, v->n_connections);

        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->stall);
        if (c->fd >= 0)
                close(c->fd);
        free(c->in);
        free(c->out);
        free(c);
}

static size_t connection_pending(const Connection *c) {
        return c->out_end - c->out_start;
}

static int on_stall(sd_event_source *s, uint64_t usec, void *userdata) {
        Connection *c = userdata;

        log_debug("Varlink: pid " PID_FMT " read none of %zu pending bytes for %" PRIu64 "s, disconnecting",
                  c->pid, connection_pending(c), STALL_TIMEOUT_USEC / USEC_PER_SEC);
        connection_free(c);
        return 0;
}

/* (Re)start the stall timer: called when output becomes pending or moves. */
static int connection_arm_stall(Connection *c) {
        int r;

        if (!c->stall) {
                r = sd_event_add_time_relative(sd_event_source_get_event(c->io), &c->stall, CLOCK_MONOTONIC,
                                               STALL_TIMEOUT_USEC, 0, on_stall, c);
                if (r < 0)
                        return r;
                return sd_event_source_set_priority(c->stall, PRIORITY);
        }
        r = sd_event_source_set_time_relative(c->stall, STALL_TIMEOUT_USEC);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(c->stall, SD_EVENT_ONESHOT);
}

static int connection_queue(Connection *c, json_t *msg) {
        _cleanup_free_ char *s = json_dumps(msg, JSON_COMPACT);
        size_t len;

        if (!s)
                return -ENOMEM;
        len = strlen(s) + 1;            /* the NUL ends the message */

        if (c->out_start > 0 && c->out_start == c->out_end)
                c->out_start = c->out_end = 0;
        if (c->out_size - c->out_end < len) {
                size_t pending = connection_pending(c), size = c->out_size ? c->out_size : 4096;
                char *n;

                while (size < pending + len)
                        size *= 2;
                n = malloc(size);
                if (!n)
                        return -ENOMEM;
                if (pending > 0)
                        memcpy(n, c->out + c->out_start, pending);
                free(c->out);
                c->out = n;
                c->out_size = size;
                c->out_start = 0;
                c->out_end = pending;
        }
        memcpy(c->out + c->out_end, s, len);
        c->out_end += len;
        return 0;
}

/* Send what the socket takes. Returns 0 (also when it would block) or a
 * negative errno when the connection is broken. */
static int connection_flush(Connection *c) {
        bool progress = false;
        int r;

        while (c->out_start < c->out_end) {
                ssize_t n = send(c->fd, c->out + c->out_start, c->out_end - c->out_start,
                                 MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        return -errno;
                }
                c->out_start += (size_t) n;
                progress = true;
        }

        if (c->out_start == c->out_end) {
                c->out_start = c->out_end = 0;
                /* Don't keep a large reply's buffer around. */
                if (c->out_size > OUTPUT_HIGH) {
                        c->out = (free(c->out), NULL);
                        c->out_size = 0;
                }
                if (c->stall)
                        (void) sd_event_source_set_enabled(c->stall, SD_EVENT_OFF);
                return 0;
        }
        if (progress || !c->stall || sd_event_source_get_enabled(c->stall, NULL) == 0) {
                r = connection_arm_stall(c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Receive what is there. Returns 0 or a negative errno. */
static int connection_read(Connection *c) {
        size_t used = c->in_end - c->in_start;
        ssize_t n;

        if (c->in_start > 0 && c->in_end == c->in_size) {
                memmove(c->in, c->in + c->in_start, used);
                c->in_start = 0;
                c->in_end = used;
        }
        if (c->in_end == c->in_size) {
                size_t size = c->in_size ? c->in_size * 2 : INPUT_INITIAL;
                char *p;

                if (size > MESSAGE_MAX)
                        size = MESSAGE_MAX;
                if (size == c->in_size)
                        return 0;       /* full: connection_process() says too large */
                p = realloc(c->in, size);
                if (!p)
                        return -ENOMEM;
                c->in = p;
                c->in_size = size;
        }

        n = recv(c->fd, c->in + c->in_end, c->in_size - c->in_end, MSG_DONTWAIT);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                return -errno;
        }
        if (n == 0)
                c->eof = true;
        c->in_end += (size_t) n;
        return 0;
}

/* Answer the complete messages received, as long as the output is not
 * over its mark. Returns 0 or -ENOMEM. */
static int connection_process(Connection *c) {
        int r;

        while (!c->closing && connection_pending(c) <= OUTPUT_HIGH) {
                char *start = c->in + c->in_start, *nul;
                json_t *answer;
                bool oneway;

                nul = c->in_end > c->in_start ? memchr(start, 0, c->in_end - c->in_start) : NULL;
                if (!nul) {
                        if (c->in_end - c->in_start >= MESSAGE_MAX) {
                                log_debug("Varlink: message from pid " PID_FMT " over %u bytes, closing",
                                          c->pid, MESSAGE_MAX);
                                c->closing = true;
                                answer = reply_error(INTERFACE ".MessageTooLarge",
                                                     json_pack("{s:I}", "limit", (json_int_t) MESSAGE_MAX));
                                if (!answer)
                                        return -ENOMEM;
                                r = connection_queue(c, answer);
                                json_decref(answer);
                                return r;
                        }
                        break;
                }

                answer = handle_message(c, start, (size_t) (nul - start), &oneway);
                c->in_start += (size_t) (nul - start) + 1;
                if (!answer) {
                        if (oneway)
                                continue;
                        return -ENOMEM;
                }
                r = connection_queue(c, answer);
                json_decref(answer);
                if (r < 0)
                        return r;
        }
        if (c->in_start == c->in_end)
                c->in_start = c->in_end = 0;
        return 0;
}

static void connection_update_events(Connection *c) {
        uint32_t events = 0;

        if (!c->eof && !c->closing && connection_pending(c) <= OUTPUT_HIGH)
                events |= EPOLLIN;
        if (connection_pending(c) > 0)
                events |= EPOLLOUT;
        (void) sd_event_source_set_io_events(c->io, events);
}

static int on_connection_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Connection *c = userdata;
        int r;

        if (revents & EPOLLERR) {
                connection_free(c);
                return 0;
        }

        r = connection_flush(c);
        if (r < 0)
                goto drop;

        if (!c->eof && !c->closing && connection_pending(c) <= OUTPUT_HIGH && (revents & (EPOLLIN | EPOLLHUP))) {
                r = connection_read(c);
                if (r < 0)
                        goto drop;
        }

        r = connection_process(c);
        if (r < 0)
                goto drop;
        r = connection_flush(c);
        if (r < 0)
                goto drop;

        /* After the client's end: answer what is complete, then close. A
         * trailing partial message is dropped. */
        if (c->eof && !c->closing && connection_pending(c) <= OUTPUT_HIGH &&
            !memchr(c->in + c->in_start, 0, c->in_end - c->in_start))
                c->closing = true;
        if (c->closing && connection_pending(c) == 0) {
                connection_free(c);
                return 0;
        }
        connection_update_events(c);
        return 0;

drop:
        if (r != -EPIPE && r != -ECONNRESET)
                log_debug_errno(r, "Varlink: connection of pid " PID_FMT " failed: %s", c->pid, STRERROR(r));
        connection_free(c);
        return 0;
}

/* The peer's supplementary groups (SO_PEERGROUPS, kernel >= 4.13) contain
 * gid? 1 yes, 0 no, negative errno. */
static int peer_has_group(int fd, gid_t gid) {
        _cleanup_free_ gid_t *groups = NULL;
        socklen_t len = 64 * sizeof(gid_t);

        for (;;) {
                free(groups);
                groups = malloc(len);
                if (!groups)
                        return -ENOMEM;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) >= 0)
                        break;
                if (errno != ERANGE)
                        return -errno;
        }
        for (size_t i = 0; i < len / sizeof(gid_t); i++)
                if (groups[i] == gid)
                        return 1;
        return 0;
}

static Access decide_access(Varlink *v, int fd, const struct ucred *cred) {
        int r;

        if (cred->uid == 0 || cred->uid == v->self_uid)
                return ACCESS_ALL;
        if (!v->have_group)
                return ACCESS_NONE;
        if (cred->gid == v->group)
                return ACCESS_READ;
        r = peer_has_group(fd, v->group);
        if (r < 0)
                log_debug_errno(r, "Varlink: cannot read the groups of pid " PID_FMT ": %s", cred->pid, STRERROR(r));
        return r > 0 ? ACCESS_READ : ACCESS_NONE;
}

static int on_accept_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Varlink *v = userdata;

        (void) sd_event_source_set_enabled(v->listen_source, SD_EVENT_ON);
        return 0;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Varlink *v = userdata;
        _cleanup_close_ int cfd = -1;
        struct ucred cred;
        socklen_t len = sizeof cred;
        Connection *c;
        int r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                        log_warning_errno(errno, "Varlink: cannot accept connections: %s, pausing for a second",
                                          STRERROR(errno));
                        (void) sd_event_source_set_enabled(v->listen_source, SD_EVENT_OFF);
                        if (v->accept_retry) {
                                (void) sd_event_source_set_time_relative(v->accept_retry, ACCEPT_RETRY_USEC);
                                (void) sd_event_source_set_enabled(v->accept_retry, SD_EVENT_ONESHOT);
                        } else
                                (void) sd_event_add_time_relative(sd_event_source_get_event(s), &v->accept_retry,
                                                                  CLOCK_MONOTONIC, ACCEPT_RETRY_USEC, 0,
                                                                  on_accept_retry, v);
                }
                return 0;
        }

        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
                log_debug_errno(errno, "Varlink: SO_PEERCRED failed: %s", STRERROR(errno));
                return 0;
        }

        if (v->n_connections >= CONNECTIONS_MAX) {
                log_debug("Varlink: %zu connections open, refusing pid " PID_FMT, v->n_connections, cred.pid);
                return 0;
        }
        if (cred.uid != 0) {
                size_t n = 0;
                for (Connection *i = v->connections; i; i = i->next)
                        n += i->uid == cred.uid;
                if (n >= CONNECTIONS_PER_UID_MAX) {
                        log_debug("Varlink: uid " UID_FMT " has %zu connections open, refusing pid " PID_FMT,
                                  cred.uid, n, cred.pid);
                        return 0;
                }
        }

        c = calloc(1, sizeof(*c));
        if (!c) {
                log_oom();
                return 0;
        }
        c->server = v;
        c->fd = -1;
        c->uid = cred.uid;
        c->gid = cred.gid;
        c->pid = cred.pid;
        c->access = decide_access(v, cfd, &cred);

        r = sd_event_add_io(sd_event_source_get_event(s), &c->io, cfd, EPOLLIN, on_connection_io, c);
        if (r >= 0)
                r = sd_event_source_set_priority(c->io, PRIORITY);
        if (r < 0) {
                log_warning_errno(r, "Varlink: cannot watch a connection: %s", STRERROR(r));
                sd_event_source_disable_unref(c->io);
                free(c);
                return 0;
        }
        c->fd = TAKE_FD(cfd);
        c->next = v->connections;
        if (c->next)
                c->next->prev = c;
        v->connections = c;
        v->n_connections++;
        log_debug("Varlink: connection from pid " PID_FMT " uid " UID_FMT " (%s), %zu open", c->pid, c->uid,
                  c->access == ACCESS_ALL ? "all methods" : c->access == ACCESS_READ ? "read methods" : "no methods",
                  v->n_connections);
        return 0;
}

/* ---- the socket --------------------------------------------------------- */

static void socket_group(Varlink *v) {
        const char *name = getenv("BWGOV_SOCKET_GROUP");
        struct group *g;
        char *end;
        unsigned long n;

        if (!name || !*name)
                name = DEFAULT_GROUP;
        errno = 0;
        n = strtoul(name, &end, 10);
        if (*name >= '0' && *name <= '9' && !*end && errno == 0 && n < (gid_t) -1) {
                v->group = (gid_t) n;
                v->have_group = true;
                return;
        }
        g = getgrnam(name);
        if (!g) {
                log_debug("Varlink: no group \"%s\": read methods for root only", name);
                return;
        }
        v->group = g->gr_gid;
        v->have_group = true;
}

/* The first listening AF_UNIX stream socket systemd passed, or -1. */
static int socket_from_systemd(void) {
        int n = sd_listen_fds(true);

        for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++)
                if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0)
                        return fd;
        if (n > 0)
                log_warning("Varlink: %d file descriptors passed, none a listening unix stream socket; binding my own", n);
        return -1;
}

static int socket_bind(Varlink *v, const char *dir) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        struct stat st;
        mode_t old;
        int r;

        if (asprintf(&v->path, "%s/%s", dir, SOCKET_NAME) < 0) {
                v->path = NULL;
                return log_oom();
        }
        if (strlen(v->path) >= sizeof sa.sun_path)
                return log_error_errno(ENAMETOOLONG, "Varlink: socket path %s is longer than %zu bytes", v->path,
                                       sizeof sa.sun_path - 1);
        strcpy(sa.sun_path, v->path);

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return log_error_errno(errno, "Varlink: socket() failed: %s", STRERROR(errno));

        if (lstat(v->path, &st) >= 0) {
                _cleanup_close_ int probe = -1;

                if (!S_ISSOCK(st.st_mode))
                        return log_error_errno(EEXIST, "Varlink: %s exists and is not a socket", v->path);
                /* A previous run's socket is removed; a live one is another
                 * daemon's (a non-blocking connect to a listening socket
                 * succeeds at once, or EAGAIN when its backlog is full). */
                probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (probe >= 0 && (connect(probe, (struct sockaddr *) &sa, sizeof sa) >= 0 || errno == EAGAIN))
                        return log_error_errno(EADDRINUSE, "Varlink: another process listens on %s; "
                                               "is bwgovd already running with this runtime directory?", v->path);
                (void) unlink(v->path);
        }

        /* Created 0660 from the start: no window in which others may connect. */
        old = umask(0117);
        r = bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 ? -errno : 0;
        umask(old);
        if (r < 0)
                return log_error_errno(r, "Varlink: cannot bind %s: %s", v->path, STRERROR(r));
        if (v->have_group && chown(v->path, (uid_t) -1, v->group) < 0)
                log_warning_errno(errno, "Varlink: cannot give %s to group %u: %s", v->path, (unsigned) v->group,
                                  STRERROR(errno));
        if (chmod(v->path, 0660) < 0)
                log_warning_errno(errno, "Varlink: cannot chmod %s: %s", v->path, STRERROR(errno));

        v->bound = true;
        if (listen(fd, SOMAXCONN) < 0)
                return log_error_errno(errno, "Varlink: cannot listen on %s: %s", v->path, STRERROR(errno));
        v->listen_fd = TAKE_FD(fd);
        return 0;
}

int varlink_new(Manager *m, Varlink **ret) {
        Varlink *v;
        struct timespec ts;
        int fd, r;

        v = calloc(1, sizeof(*v));
        if (!v)
                return log_oom();
        v->manager = m;
        v->listen_fd = -1;
        v->self_uid = geteuid();
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v->start_usec = (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
        socket_group(v);

        fd = socket_from_systemd();
        if (fd >= 0) {
                int flags = fcntl(fd, F_GETFL);
                if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
                        r = log_error_errno(errno, "Varlink: cannot set up the socket from systemd: %s", STRERROR(errno));
                        close(fd);
                        goto fail;
                }
                v->listen_fd = fd;
                v->activated = true;
        } else {
                r = socket_bind(v, m->runtime_dir);
                if (r < 0)
                        goto fail;
        }

        r = sd_event_add_io(m->event, &v->listen_source, v->listen_fd, EPOLLIN, on_accept, v);
        if (r >= 0)
                r = sd_event_source_set_priority(v->listen_source, PRIORITY);
        if (r < 0) {
                log_error_errno(r, "Varlink: cannot watch the socket: %s", STRERROR(r));
                goto fail;
        }

        log_info("Varlink interface %s on %s%s", INTERFACE, v->activated ? "the socket from systemd" : v->path,
                 v->have_group ? "" : " (root only: no socket group)");
        *ret = v;
        return 0;

fail:
        varlink_free(v);
        return r;
}

Varlink *varlink_free(Varlink *v) {
        if (!v)
                return NULL;
        while (v->connections)
                connection_free(v->connections);
        sd_event_source_disable_unref(v->listen_source);
        sd_event_source_disable_unref(v->accept_retry);
        if (v->listen_fd >= 0)
                close(v->listen_fd);
        if (v->bound)
                (void) unlink(v->path);
        free(v->path);
        json_decref(v->kernel_check);
        free(v);
        return NULL;
}
