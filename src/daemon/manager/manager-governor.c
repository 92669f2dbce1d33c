/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The governor API (governor.h) over the Manager and its Units: snapshots
 * for IPC and metrics and the commands (reload, pause); the status counts
 * are manager-shared.c's manager_counts(). */

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "clock.h"
#include "governor.h"
#include "manager.h"
#include "manager-governor.h"
#include "unit/unit-state.h"
#include "manager-shared.h"

/* Under AddressSanitizer its allocator serves malloc(): its own count then
 * (its resident set holds shadow memory, quarantine and stack traces, the
 * heap in use is what the daemon's growth would show in). */
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static uint64_t heap_in_use(void) {
        struct mallinfo2 mi;

        if (__sanitizer_get_current_allocated_bytes)
                return __sanitizer_get_current_allocated_bytes();
        mi = mallinfo2();
        return (uint64_t) mi.uordblks + mi.hblkhd;
}

static int get_status(void *userdata, struct governor_status *ret) {
        const Manager *m = userdata;
        struct governor_status s = {
                .realtime_usec = clock_now_usec(CLOCK_REALTIME),
                .ticks = m->ticks,
                .layout = m->root->layout,
                .bandwidth_root = m->root->bw_path ? m->root->bw_path : "",
                .interval_usec = m->config.global.interval_usec,
                .mode = m->config.global.mode,
                .reloads = m->reloads,
                .reload_failures = m->reload_failures,
                .state_saves = m->state_saves,
                .state_error = store_save_error(m->store),
                .host_pressure_rate = m->host_some_rate,
                .host_pressure_limit = m->config.global.host_pressure_limit,
                .host_other_usage_rate = m->host_other_usage,
                .host_other_wait_rate = m->host_other_wait,
                .host_other_behind_rate = m->host_other_behind,
                .host_governed_excess_rate = m->host_governed_excess,
                .host_idle_rate = m->host_idle,
                .host_over_limit = m->host_over_limit,
                .telemetry = m->rqstat != NULL,
                .telemetry_reason = m->rqstat_reason,
                .telemetry_tracked = m->rqstat ? rqstat_tracked(m->rqstat) : 0,
                .refused_writes = m->refused != NULL,
                .refused_writes_reason = m->refused_reason,
                .refused_writes_seen = m->refused ? refused_count(m->refused) : 0,
                .heap_bytes = heap_in_use(),
                .usage_gates = usage_gates_size(m->gates),
                .gated_samples = usage_gates_skipped(m->gates),
                .activity_gated_samples = m->activity_gated,
                .parked = m->parked,
                .parked_wakes = m->parked_wakes,
        };

        manager_counts(m, &s.counts);
        *ret = s;
        return 0;
}

/* at: u's index in m->units, SIZE_MAX when not known. */
static void unit_summary(const Manager *m, const Unit *u, size_t at, struct governor_unit_summary *ret) {
        struct latency_view lv;

        latency_guard_view_at(&m->latency, u, at, &lv);
        *ret = (struct governor_unit_summary) {
                .name = u->name,
                .cgroup = u->cgroup_path,
                .mode = bw_unit_mode(&m->config, u->cfg),
                .state = unit_state_to_string(u),
                .present = u->cg != NULL,
                .adopted = u->adopted,
                .paused = u->paused,
                .boosted = unit_is_boosted(u),
                .baseline = u->baseline,
                .current = u->has_written ? u->written : u->baseline,
                .has_rule = u->prev.has,
                .rule = u->prev.decision.rule,
                .ticks = u->stats.ticks,
                .prot = {
                        .cls = bw_unit_class(u->cfg),
                        .latency_target_usec = bw_unit_latency_target_usec(u->cfg),
                        .guarantee = lv.guarantee,
                        .level = lv.level,
                        .has_p99 = lv.has_p99,
                        .p99_usec = lv.p99_usec,
                        .samples = lv.samples,
                        .missed = lv.missed,
                        .changes = lv.changes,
                        /* A latency unit is never held: its rung holds the
                         * others (issue 30: "held": false at the top rung
                         * read as no protection at all). */
                        .hold = bw_unit_class(u->cfg) == BW_CLASS_LATENCY ? lv.level >= BW_LAT_HOLD :
                                u->caps.latency_hold,
                        .note = lv.note,
                        .layout = u->cg ? u->cg->layout : BW_CG_LAYOUT_UNKNOWN,
                        .slice_usec = unit_levers_slice_usec(&u->lv),
                        .slice_threads = unit_levers_slice_threads(&u->lv),
                },
        };
        /* Held levers: the value bwgovd wrote (not one being put back). */
        for (size_t l = 0; l < _BW_LEVER_MAX && u->lv.maybe_recorded; l++) {
                const struct bw_ledger_lever *rec = store_lever(m->store, u->name, (enum bw_lever) l);

                ret->prot.levers[l] = rec && !store_lever_releasing(m->store, u->name, (enum bw_lever) l) ?
                        rec->written : NULL;
        }
}

static void unit_decision(const Unit *u, struct governor_decision *ret) {
        struct bw_policy_params p;

        unit_params(u, &p);
        *ret = (struct governor_decision) {
                .realtime_usec = u->prev.realtime_usec,
                .old = u->prev.current,
                .applied = u->prev.applied,
                .target_throttle = p.target_throttle,
                .target_pressure = p.target_pressure,
                .target_wait_p99_usec = p.target_wait_p99_usec,
                .credit_max_usec = p.credit_max_usec,
                .quota_limit_usec = bw_policy_quota_limit_usec(&p),
        };
        bw_decision_unkeep(&u->prev.decision, &ret->d);
}

static void unit_snapshot(const Manager *m, const Unit *u, size_t at, struct governor_unit *ret) {
        const struct bw_unit_config *cfg = u->cfg;
        struct bw_policy_params p;

        unit_params(u, &p);
        *ret = (struct governor_unit) {
                .config = {
                        .cfg = *cfg,
                        .interval_usec = bw_unit_interval_usec(&m->config, cfg),
                        .active_interval_usec = bw_unit_active_interval_usec(&m->config, cfg),
                },
                .quota_limit_usec = bw_policy_quota_limit_usec(&p),
                .burst_limit_usec = bw_policy_contract_burst_usec(&p),
                .credit = {
                        .credit_usec = u->pstate.credit.credit_usec,
                        .debt_usec = u->pstate.credit.debt_usec,
                        .credit_max_usec = p.credit_max_usec,
                        .exhausted = u->pstate.exhausted,
                },
                .has_decision = u->prev.has,
                .counters = {
                        .io = u->cg ? u->cg->stats : (struct bw_cg_write_stats) { 0 },
                        .external_changes = u->stats.external_changes,
                        .write_errors = u->stats.write_errors,
                        .decisions_applied = u->stats.decisions_applied,
                },
                .has_stat = u->sampler.has_last_stat,
                .stat = u->sampler.last_stat,
                .shed_permille = u->caps.shed_permille,
                .has_rq = unit_rqstat_counts(&u->rq) && unit_rqstat_counts(&u->rq)->has_last,
                .history_entries = bw_history_count(&u->hist.log),
                .history_capacity = bw_history_capacity(&u->hist.log),
        };
        if (ret->has_rq)
                ret->rq = unit_rqstat_counts(&u->rq)->last;
        unit_summary(m, u, at, &ret->summary);
        unit_decision(u, &ret->decision);
}

/* Resting at its headroom or at the baseline: nothing to look at. */
static bool unit_at_rest(const Unit *u) {
        enum unit_state s = unit_state(u);

        return s == UNIT_STATE_RESTING || s == UNIT_STATE_BASELINE;
}

/* Which of m->units list_units() takes when they are more than `limit`: the
 * units doing something first, then the others in name order. */
static bool *pick_units(const Manager *m, size_t limit) {
        bool *pick = calloc(m->n_units, sizeof(*pick));
        size_t k = 0;

        if (!pick)
                return NULL;
        for (size_t i = 0; i < m->n_units && k < limit; i++)
                if (!unit_at_rest(m->units[i]))
                        pick[i] = true, k++;
        for (size_t i = 0; i < m->n_units && k < limit; i++)
                if (!pick[i])
                        pick[i] = true, k++;
        return pick;
}

static int list_units(void *userdata, size_t limit, struct governor_unit **ret, size_t *ret_n, size_t *ret_total) {
        const Manager *m = userdata;
        size_t n = limit < m->n_units ? limit : m->n_units, k = 0;
        _cleanup_free_ bool *pick = NULL;
        struct governor_unit *units = NULL;

        if (n < m->n_units) {
                pick = pick_units(m, n);
                if (!pick)
                        return -ENOMEM;
        }
        /* Not calloc(): unit_snapshot() sets every element whole, and
         * clearing ~1.7 KiB per unit first was a third of this function's
         * cost (metrics.prom asks for every unit). */
        if (n > 0) {
                units = reallocarray(NULL, n, sizeof(*units));
                if (!units)
                        return -ENOMEM;
        }
        /* m->units follows the configuration, which is sorted by name. */
        for (size_t i = 0; i < m->n_units && k < n; i++)
                if (!pick || pick[i])
                        unit_snapshot(m, m->units[i], i, &units[k++]);
        *ret = units;
        *ret_n = n;
        if (ret_total)
                *ret_total = m->n_units;
        return 0;
}

static int snapshot_units(void *userdata, const char *after, size_t max, struct governor_unit *out,
                          size_t *ret_n, size_t *ret_total) {
        const Manager *m = userdata;
        size_t lo = 0, hi = m->n_units, k = 0;

        /* The first unit whose name sorts after AFTER (m->units is sorted). */
        while (after && lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (strcmp(m->units[mid]->name, after) <= 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t i = lo; i < m->n_units && k < max; i++)
                unit_snapshot(m, m->units[i], i, &out[k++]);
        *ret_n = k;
        *ret_total = m->n_units;
        return 0;
}

static int get_unit(void *userdata, const char *name, struct governor_unit *ret) {
        Manager *m = userdata;
        const Unit *u = manager_get_unit(m, name);

        if (!u)
                return -ENOENT;
        unit_snapshot(m, u, SIZE_MAX, ret);
        return 0;
}

static int get_history(void *userdata, const char *name, const struct bw_history_query *q,
                       struct governor_history *ret) {
        const Unit *u = manager_get_unit(userdata, name);
        struct governor_history h;
        int r;

        if (!u)
                return -ENOENT;
        h = (struct governor_history) {
                .unit = u->name,
                .capacity = bw_history_capacity(&u->hist.log),
                .recorded = bw_history_pushed(&u->hist.log),
        };
        r = bw_history_select(&u->hist.log, q, &h.entries, &h.n_entries);
        if (r < 0)
                return r;
        *ret = h;
        return 0;
}

static int explain(void *userdata, const char *name, struct governor_unit_summary *ret_summary,
                   bool *ret_has_decision, struct governor_decision *ret_decision) {
        Manager *m = userdata;
        const Unit *u = manager_get_unit(m, name);

        if (!u)
                return -ENOENT;
        unit_summary(m, u, SIZE_MAX, ret_summary);
        unit_decision(u, ret_decision);
        *ret_has_decision = u->prev.has;
        return 0;
}

static int get_latency(void *userdata, const char *name, struct governor_latency *ret) {
        Manager *m = userdata;
        Unit *u = manager_get_unit(m, name);
        struct governor_latency l;
        int r;

        if (!u)
                return -ENOENT;
        l = (struct governor_latency) { .unit = u->name };
        if (!m->rqstat)
                l.reason = m->rqstat_reason[0] ? m->rqstat_reason : "not loaded";
        else if (!u->cg)
                l.reason = "the unit's cgroup is not present";
        else if (u->rq.cgroup_id == 0)
                l.reason = "the unit's cgroup has no cgroup2 directory to count its tasks by";
        else {
                const struct unit_rqstat_counts *c = unit_rqstat_counts(&u->rq);

                r = rqstat_read(m->rqstat, u->rq.cgroup_id, &l.total);
                if (r < 0)
                        return r;
                l.available = true;
                l.since_realtime_usec = u->rq.since_realtime_usec;
                l.has_window = c && c->has_window;
                if (l.has_window) {
                        l.window = c->window;
                        l.window_usec = c->window_usec;
                }
        }
        *ret = l;
        return 0;
}

/* CheckKernel's report: the shared kernel-check pipeline (bw_kreport_run():
 * version, manifest, digests, probe environment, run, verdict) on the
 * daemon's roots. No busy-loop behaviour probes (they fork busy loops for
 * seconds); the load-free write-order probe runs. */
static int check_kernel(void *userdata, struct bw_kreport **ret) {
        const Manager *m = userdata;

        return bw_kreport_run(&(struct bw_kreport_args) {
                                      .manifest_path = m->manifest_path,
                                      .root = m->root,
                                      .probe = 0,
                              }, ret);
}

static int reload(void *userdata, struct governor_reload_error *ret_error) {
        Manager *m = userdata;
        int r = manager_reload(m);

        if (r < 0 && ret_error)
                *ret_error = (struct governor_reload_error) {
                        .file = m->config_error.file,
                        .line = m->config_error.line,
                        .key = m->config_error.key,
                        .message = m->config_error.message,
                };
        return r;
}

static int set_paused(void *userdata, const char *name, bool paused) {
        return manager_set_paused(userdata, name, paused);
}

const struct governor_ops manager_governor_ops = {
        .get_status = get_status,
        .list_units = list_units,
        .snapshot_units = snapshot_units,
        .get_unit = get_unit,
        .get_history = get_history,
        .explain = explain,
        .get_latency = get_latency,
        .check_kernel = check_kernel,
        .reload = reload,
        .set_paused = set_paused,
};
