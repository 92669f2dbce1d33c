/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's table of units (manager-units.h): kept in step with the
 * configuration, adopted in the ticker's batches, restored together, and
 * which of them contain others. */
#include <assert.h>
#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/cgroup/slice.h"
#include "clock.h"
#include "log.h"
#include "manager-types.h"
#include "manager-prefix.h"
#include "manager-shared.h"
#include "manager-units.h"
#include "unit/unit-intent.h"
#include "unit/unit-resolve.h"
#include "unit/unit-tick.h"

static int unit_ptr_name_cmp(const void *a, const void *b) {
        return strcmp((*(Unit *const *) a)->name, (*(Unit *const *) b)->name);
}

/* u is in m->units (sorted by name). */
static bool bsearch_unit(Manager *m, Unit *u) {
        Unit **p = m->n_units > 0 ? bsearch(&u, m->units, m->n_units, sizeof(Unit *), unit_ptr_name_cmp) : NULL;

        return p && *p == u;
}

/* A unit to have: the configuration's, or a prefix unit it still makes. */
struct wanted {
        const struct bw_unit_config *c;
        bool instance;
};

static int wanted_cmp(const void *a, const void *b) {
        return strcmp(((const struct wanted *) a)->c->name, ((const struct wanted *) b)->c->name);
}

/* The units to have, sorted by name (*ret_instances: the prefix units'
 * configurations, to free). */
static int wanted_units(Manager *m, struct wanted **ret, struct bw_unit_config **ret_instances,
                        size_t *ret_n_instances, size_t *ret_n) {
        struct bw_unit_config *inst = NULL;
        size_t n_inst = 0, n = 0;
        struct wanted *v;
        int r;

        r = manager_instance_configs(m, &inst, &n_inst);
        if (r < 0)
                return r;
        v = calloc(m->config.n_units + n_inst + 1, sizeof(*v));
        if (!v) {
                array_done_and_free(inst, n_inst, bw_unit_config_done);
                return -ENOMEM;
        }
        for (size_t k = 0; k < m->config.n_units; k++)
                v[n++] = (struct wanted) { &m->config.units[k], false };
        for (size_t k = 0; k < n_inst; k++)
                v[n++] = (struct wanted) { &inst[k], true };
        if (n_inst > 0)
                qsort(v, n, sizeof(*v), wanted_cmp);
        *ret = v;
        *ret_instances = inst;
        *ret_n_instances = n_inst;
        *ret_n = n;
        return 0;
}

/* Whether some unit's configuration is an entry of c. */
static bool config_in_use(const Manager *m, const struct bw_config *c) {
        uintptr_t lo = (uintptr_t) c->units, hi = (uintptr_t) (c->units + c->n_units);

        for (size_t i = 0; i < m->n_units; i++)
                if ((uintptr_t) m->units[i]->cfg >= lo && (uintptr_t) m->units[i]->cfg < hi)
                        return true;
        return false;
}

/* Free the configurations loaded before the current one that no unit
 * points into any more: all of them after a sync that went through; after
 * one that failed, the units it kept may still (manager_load_config()). */
static void manager_free_old_configs(Manager *m) {
        size_t n = 0;

        for (size_t k = 0; k < m->n_old_configs; k++) {
                if (config_in_use(m, &m->old_configs[k]))
                        m->old_configs[n++] = m->old_configs[k];
                else
                        bw_config_done(&m->old_configs[k]);
        }
        m->n_old_configs = n;
        if (n == 0)
                m->old_configs = mfree(m->old_configs);
}

/* The units of the configuration, in its (name) order: kept ones
 * reconfigured, new ones created (their first sample due at once, adopted
 * in the ticker's batches), dropped ones restored and freed. One pass over
 * both sorted lists, not a search per unit.
 *
 * The table stays whole while units are reconfigured and restored: a
 * restore calls back into the manager (on cgroup v1, lowering a parent
 * lowers the governed cgroups below it first, over the whole table), so
 * the new table is built only after, and the dropped units freed last. */
int manager_sync_units(Manager *m) {
        _cleanup_free_ struct wanted *wanted = NULL;
        _cleanup_free_ bool *kept = NULL;
        _cleanup_free_ Unit **units = NULL;
        struct bw_unit_config *inst = NULL;
        size_t n = 0, i = 0, n_wanted = 0, n_inst = 0;
        bool changed = false;
        int r = 0;

        r = wanted_units(m, &wanted, &inst, &n_inst, &n_wanted);
        if (r < 0)
                return r;
        units = calloc(n_wanted > 0 ? n_wanted : 1, sizeof(Unit *));
        kept = calloc(m->n_units > 0 ? m->n_units : 1, sizeof(bool));
        if (!units || !kept) {
                array_done_and_free(inst, n_inst, bw_unit_config_done);
                return -ENOMEM;
        }
        /* First the units that stay and those that go, the table whole. */
        for (size_t k = 0; k < n_wanted; k++) {
                const struct bw_unit_config *c = wanted[k].c;
                int cmp = 1;

                while (i < m->n_units && (cmp = strcmp(m->units[i]->name, c->name)) < 0) {
                        contention_unit_leaving(m->contention, m->units[i], "unconfigure");
                        unit_unconfigure(m->units[i++]);
                        changed = true;
                }
                if (i < m->n_units && cmp == 0) {
                        kept[i] = true;
                        r = unit_reconfigure(m->units[i], c);
                        unit_set_instance(m->units[i++], wanted[k].instance);
                        if (r < 0)
                                break;
                }
        }
        for (; i < m->n_units && r >= 0; i++) {
                changed = true;
                contention_unit_leaving(m->contention, m->units[i], "unconfigure");
                unit_unconfigure(m->units[i]);
        }
        /* Then the new table: the kept units and the new ones, in order. */
        i = 0;
        for (size_t k = 0; k < n_wanted && r >= 0; k++) {
                while (i < m->n_units && strcmp(m->units[i]->name, wanted[k].c->name) < 0)
                        i++;
                if (i < m->n_units && strcmp(m->units[i]->name, wanted[k].c->name) == 0) {
                        units[n++] = m->units[i++];
                        continue;
                }
                r = unit_new(&m->unit_ctx, wanted[k].c, &units[n]);
                if (r < 0)
                        break;
                unit_set_instance(units[n++], wanted[k].instance);
                changed = true;
        }
        array_done_and_free(inst, n_inst, bw_unit_config_done);
        if (r < 0) {
                /* Keep every unit there was (the dropped ones were put
                 * back already: they govern again from their next tick). */
                for (size_t k = 0; k < n; k++)
                        if (!bsearch_unit(m, units[k]))
                                unit_free(units[k]);
                manager_free_old_configs(m);
                return r;
        }
        m->outermost_dirty = true;      /* m->cgtree is about to hold freed units */
        for (size_t k = 0; k < m->n_units; k++)
                if (!kept[k]) {
                        latency_guard_unit_leaving(&m->latency, m->units[k]);
                        unit_free(m->units[k]);
                }
        free(m->units);
        if (changed)
                metrics_mark_changed(&m->metrics);
        m->units = TAKE_PTR(units);
        m->n_units = n;
        m->any_searched = false;
        for (size_t k = 0; k < n && !m->any_searched; k++) {
                _cleanup_free_ char *path = NULL;

                m->any_searched = unit_expected_path(m->units[k], &path) == -EAGAIN;
        }
        manager_free_old_configs(m);
        manager_resolve_park(m);
        return 0;
}

void manager_resolve_park(Manager *m) {
        enum bw_park p = m->config.global.park_at_baseline;
        bool rest;

        if (m->stopping)
                return;
        rest = unit_park_resolve(p, m->rest_at_baseline, m->n_units, m->write_usec);
        if (rest == m->rest_at_baseline)
                return;
        /* Without the wakes (no BPF) no unit rests there whatever this says
         * (unit-tick.c): the line says so rather than promise it. */
        if (p == BW_PARK_AUTO)
                log_info("ParkAtBaseline=auto: idle units %s (a stop would write %zu cgroups at %" PRIu64
                         " us each)",
                         !rest ? "rest at their headroom again" :
                         rqstat_can_wake(m->rqstat) ? "now rest at their baselines" :
                         "would rest at their baselines, but without the run-queue telemetry's wakes they stay "
                         "at their headroom",
                         m->n_units, m->write_usec);
        m->rest_at_baseline = rest;
}

/* Adopting a cgroup opens, reads and writes its files: on a real cgroupfs
 * some 200 µs each; restoring one reads and writes it. A batch of either
 * works for at most this long and leaves the rest to the next loop
 * iteration, so that ten thousand cgroups adopted or restored hold up a
 * varlink client or the watchdog no longer than this. */
#define SLICE_BUDGET_USEC (10 * USEC_PER_MSEC)

/* What a batch may plan to write in the time it has left. A bandwidth
 * write walks every task group of the host in the kernel
 * (__cfs_schedulable()): some 15 µs with a few hundred cgroups, 300 µs
 * with ten thousand, measured here. So the cost is measured, each batch's
 * writes averaged into m->write_usec, not assumed. */
static size_t writes_fitting(const Manager *m, uint64_t elapsed_usec) {
        uint64_t left = elapsed_usec < SLICE_BUDGET_USEC ? SLICE_BUDGET_USEC - elapsed_usec : 0;

        return m->write_usec > 0 ? left / m->write_usec : SIZE_MAX;
}

/* An array with room for one entry per unit (at least one). */
static void *units_calloc(const Manager *m, size_t size) {
        return calloc(m->n_units > 0 ? m->n_units : 1, size);
}

struct planned_write {
        Unit *u;
        struct bw_bandwidth cur, target;
};

/* Parents before their children (cgroup v1 refuses a child's quota above
 * its parent's): by cgroup path, a prefix sorts first. */
static int planned_write_cmp(const void *a, const void *b) {
        const struct planned_write *x = a, *y = b;

        return strcmp(x->u->cgroup_path, y->u->cgroup_path);
}

/* Write many units at once: the intents of all the writes are saved in one
 * go before the first write, not in one whole-file save per unit, which
 * with a thousand units made adoption quadratic and a stop outlast
 * systemd's timeout. unit_apply() then finds each intent saved. */
static void manager_apply_planned(Manager *m, struct planned_write *plan, size_t n, const char *why) {
        /* Within bwgovd's own budget the wall clock would count the
         * periods it waits once the budget is spent: a soak's writes came
         * out at 4959 µs each, and ParkAtBaseline=auto took a stop of 216
         * units for one of over a second. */
        clockid_t clock = bw_sched_cost_clock();
        uint64_t start, took;
        bool raise = false;

        for (size_t i = 0; i < n; i++) {
                (void) store_intent(m->store, plan[i].u->name, &plan[i].target, false);
                raise |= !bw_bandwidth_equal(&plan[i].target, &plan[i].u->baseline);
        }
        /* Baselines put back need no record saved first (unit_apply()). */
        if (raise && n > 1 && store_save_intents(m->store) < 0)
                log_warning("Writing %zu unit(s) without their intents saved together", n);
        start = clock_now_usec(clock);
        for (size_t i = 0; i < n; i++) {
                int r = unit_apply(plan[i].u, &plan[i].cur, &plan[i].target, why);

                if (!m->stopping)
                        continue;
                /* Planned from a value that changed (a parent put back
                 * first lowered it), or the write failed: planned again at
                 * the end of the stop. */
                if (r < 0 && !bw_cg_error_is_vanished(r))
                        unit_stop_restore_again(plan[i].u);
                /* The files are not needed again. */
                if (plan[i].u->cg)
                        (void) bw_cg_release(plan[i].u->cg, _BW_CG_FILE_ALL - 1);
        }
        /* The writes' cost alone: the batch's save is not in it, and a
         * lone raise (which saves its intent itself) is not measured. A
         * slow disk's fsync counted per write would shrink the batches,
         * and with them the units per save, down to one. */
        if (n == 0 || (raise && n == 1))
                return;
        /* Smoothed: one batch slowed by a busy host does not halve the next. */
        took = (clock_now_usec(clock) - start) / n;
        m->write_usec = m->write_usec > 0 ? (3 * m->write_usec + took) / 4 : took;
        manager_resolve_park(m);
}

/* Restore units [from, to) with their intents saved together; returns
 * the plan (the units written) for restore_again(), or NULL (then each was
 * restored alone). */
static struct planned_write *restore_range(Manager *m, size_t from, size_t to, const char *why, size_t *ret_n) {
        struct planned_write *plan = calloc(to > from ? to - from : 1, sizeof(*plan));
        size_t n = 0;

        *ret_n = 0;
        if (!plan) {
                for (size_t i = from; i < to; i++)
                        unit_restore_baseline(m->units[i], why);
                return NULL;
        }
        for (size_t i = from; i < to; i++) {
                plan[n].u = m->units[i];
                if (unit_restore_plan(plan[n].u, &plan[n].cur, &plan[n].target) > 0)
                        n++;
                /* Reading opened its quota file: given back (stopping, ten
                 * thousand of them would not fit). */
                if (m->stopping && m->units[i]->cg)
                        (void) bw_cg_release(m->units[i]->cg, _BW_CG_FILE_ALL - 1);
        }
        manager_apply_planned(m, plan, n, why);
        *ret_n = n;
        return plan;
}

/* A parent put back before its child lowers the child first (cgroup v1):
 * the child's planned write then finds another value than it planned from
 * and is not done. Planned again, one by one. */
static void restore_again(Manager *m, Unit *u, const char *why) {
        struct bw_bandwidth cur, target;

        if (unit_restore_plan(u, &cur, &target) > 0)
                unit_restore_baseline(u, why);
        if (m->stopping && u->cg)
                (void) bw_cg_release(u->cg, _BW_CG_FILE_ALL - 1);
}

void manager_restore_all(Manager *m, const char *why) {
        _cleanup_free_ struct planned_write *plan = NULL;
        size_t n;

        plan = restore_range(m, 0, m->n_units, why, &n);
        for (size_t i = 0; i < n; i++)
                restore_again(m, plan[i].u, why);
}

static int on_stop_pass(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (m->stop_at < m->n_units) {
                uint64_t start = clock_now_usec(CLOCK_MONOTONIC);

                /* Up to 32 units at a time (fewer when their writes would
                 * not fit), for at most SLICE_BUDGET_USEC. */
                while (m->stop_at < m->n_units && clock_now_usec(CLOCK_MONOTONIC) - start < SLICE_BUDGET_USEC) {
                        size_t k = writes_fitting(m, clock_now_usec(CLOCK_MONOTONIC) - start), to, n;

                        k = k < 1 ? 1 : k > 32 ? 32 : k;
                        to = m->n_units - m->stop_at > k ? m->stop_at + k : m->n_units;

                        free(restore_range(m, m->stop_at, to, "stop", &n));
                        m->stop_at = to;
                }
                /* Again at the next iteration, behind what became pending
                 * meanwhile (a timer due at once, not a defer source: that
                 * one would stay ahead of the varlink clients). */
                return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        /* Only the ones whose restore was not done (reading every cgroup
         * again took a third of a second at ten thousand, in one go). */
        for (size_t i = 0; i < m->n_units; i++)
                if (m->units[i]->restore_again)
                        restore_again(m, m->units[i], "stop");
        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        return sd_event_exit(m->event, 0);
}

int manager_stop_begin(Manager *m) {
        int r;

        manager_count_stop(m);
        m->stop_at = 0;
        r = sd_event_add_time(m->event, &m->stop_source, CLOCK_MONOTONIC, 1, 0, on_stop_pass, m);
        if (r >= 0)
                r = sd_event_source_set_priority(m->stop_source, TICKER_BACKLOG_PRIORITY);
        if (r < 0) {
                m->stop_source = sd_event_source_disable_unref(m->stop_source);
                return log_error_errno(r, "Cannot restore from the event loop, restoring at exit: %s", STRERROR(r));
        }
        return 0;
}

static void set_has_descendants(void *owner, void *userdata) {
        unit_set_has_governed_descendants(owner, true);
}

static void clear_outermost(void *owner, void *userdata) {
        unit_clear_outermost(owner);
}

/* Which units have no governed unit above them (the host brake sums their
 * usage: a slice's includes its services'), and which have governed units
 * below them (their quota caps those): the tree of their paths, and a
 * lookup of each one's ancestors, n log n. The tree is kept for the
 * cgroups found after (manager_outermost_add()). */
void manager_update_outermost(Manager *m) {
        _cleanup_free_ struct bw_cgtree_node *nodes = units_calloc(m, sizeof(*nodes));
        size_t n = 0;

        if (!nodes)
                return;
        for (size_t i = 0; i < m->n_units; i++) {
                unit_set_has_governed_descendants(m->units[i], false);
                if (m->units[i]->cgroup_path)
                        nodes[n++] = (struct bw_cgtree_node) { m->units[i]->cgroup_path, m->units[i] };
        }
        if (bw_cgtree_build(&m->cgtree, nodes, n) < 0)
                return;
        m->outermost_dirty = false;
        /* 32 bits, wrapping past 0: a unit's 0 means never. */
        if (++m->cgtree_generation == 0)
                m->cgtree_generation = 1;
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];

                bool outermost = !u->cgroup_path ||
                        bw_cgtree_foreach_ancestor(&m->cgtree, u->cgroup_path, set_has_descendants, NULL) == 0;

                /* Its own has_governed_descendants was set by those below it, before or after. */
                unit_set_place(u, u->cgroup_path ? m->cgtree_generation : 0, outermost,
                               u->place.has_governed_descendants);
        }
}

/* u found a cgroup, and had no path before: its place among the others
 * and what it changes of theirs, in log n (ten thousand units adopted in
 * batches worked every unit out again per batch, 13 ms each at the end).
 * Returns false when everything has to be worked out again. */
bool manager_outermost_add(Manager *m, Unit *u) {
        /* In the tree already (a scan would cost ten thousand compares per
         * cgroup found): it moved, its old place means something. */
        if (m->outermost_dirty || !u->cgroup_path || u->place.cgtree_generation == m->cgtree_generation ||
            bw_cgtree_add(&m->cgtree, u->cgroup_path, u) < 0)
                return false;
        unit_set_place(u, m->cgtree_generation,
                       bw_cgtree_foreach_ancestor(&m->cgtree, u->cgroup_path, set_has_descendants, NULL) == 0,
                       bw_cgtree_foreach_descendant(&m->cgtree, u->cgroup_path, clear_outermost, NULL) > 0);
        return true;
}

/* Adopt the units of a batch whose cgroup is there and put their resting
 * headroom and burst in place together, with one save of the intents for
 * all of them (at start, and for units a reload adds), before their ticks
 * take over. */
/* Adopt the new units of a batch together (one save of the intents).
 * deferred[i] is set for the units left for the next batch. */
static void manager_adopt_batch(Manager *m, Unit *const *units, size_t n_units, bool *deferred) {
        struct planned_write plan[TICKER_BATCH];
        size_t n = 0, adopted = 0;
        uint64_t start = clock_now_usec(CLOCK_MONOTONIC), elapsed;

        assert(n_units <= TICKER_BATCH);
        for (size_t i = 0; i < n_units; i++) {
                Unit *u = units[i];
                struct bw_bandwidth cur;

                deferred[i] = false;
                if (u->adopted)
                        continue;
                /* The reads and the resting writes planned so far (read
                 * again, write, read back, the save) within the budget:
                 * before the first write is measured, the reads take a
                 * third of it. */
                elapsed = clock_now_usec(CLOCK_MONOTONIC) - start;
                if (adopted > 0 && (m->write_usec > 0 ? writes_fitting(m, elapsed) <= n
                                                       : elapsed > SLICE_BUDGET_USEC / 3)) {
                        deferred[i] = true;
                        continue;
                }
                if (unit_resolve(u) <= 0)
                        continue;
                if (bw_cg_read_bandwidth(u->cg, &cur) < 0 || unit_adopt(u, &cur) < 0)
                        continue;
                adopted++;
                if (u->params_mode != unit_mode(u))
                        unit_update_params(u);
                /* unit_adopt() may have put CPUQuota= in place. */
                if (bw_cg_read_bandwidth(u->cg, &cur) < 0)
                        continue;
                if (unit_rest_plan(u, &cur, &plan[n].target) &&
                    !unit_rest_at_baseline(u, &cur, &plan[n].target)) {
                        plan[n].u = u;
                        plan[n].cur = cur;
                        n++;
                }
        }
        qsort(plan, n, sizeof(*plan), planned_write_cmp);
        manager_apply_planned(m, plan, n, "resting-headroom");
        /* New cgroups hold all their files: the plan again before their
         * samples release what it does not keep. */
        if (adopted > 0) {
                manager_plan_fds(m);
                m->trim_soon = true;
        }
}

/* The ticker's batch: adopt the new ones together, then sample each; the
 * ones left over by the adoption's time budget are due again at once. */
void manager_units_due(struct bw_tick_entry *const *due, size_t n, uint64_t now, void *userdata) {
        Manager *m = userdata;
        Unit *units[TICKER_BATCH];
        bool deferred[TICKER_BATCH] = { false };

        for (size_t i = 0; i < n; i++)
                units[i] = unit_of_tick(due[i]);
        if (m->stopping)
                return;         /* the stop puts baselines back: no samples, nothing rescheduled */
        quotawatch_drain(m->quotawatch);        /* before the light samples look (quotawatch.h) */
        m->batch_started_usec = clock_now_usec(CLOCK_MONOTONIC);
        manager_adopt_batch(m, units, n, deferred);
        /* Left for the next batch, still due when they were (their
         * rhythm: unit_on_due()). */
        for (size_t i = 0; i < n; i++) {
                bool was_parked = units[i]->sampler.parked;

                if (deferred[i]) {
                        (void) ticker_schedule(m->ticker, due[i], due[i]->due_usec);
                        continue;
                }
                unit_on_due(units[i], due[i]->due_usec, now);
                if (was_parked && !units[i]->sampler.parked) {
                        m->unparked++;
                        manager_host_pass_soon(m, now);
                }
        }
        m->batch_started_usec = 0;
}

/* What the plan counts of one unit: the directories it may hold, its PSI
 * trigger. */
static void fd_census_add(struct manager_fd_census *c, const Unit *u, bool hybrid) {
        c->dirs += (u->cg ? u->cg->has_v2 && u->cg->layout != BW_CG_LAYOUT_V2 : hybrid) ? 2 : 1;
        c->triggers += u->trigger.fd >= 0;
}

void manager_check_parked(Manager *m, uint64_t now) {
        struct governor_counts c = { .units = m->n_units };
        struct manager_fd_census census = { 0 };
        bool hybrid = m->root && m->root->layout != BW_CG_LAYOUT_V2;
        size_t parked = 0, parked_no_wake = 0, unparked = 0;

        quotawatch_drain(m->quotawatch);        /* before the flags are looked at (quotawatch.h) */
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];

                fd_census_add(&census, u, hybrid);
                if (!u->sampler.parked) {
                        unparked += u->cg != NULL;
                        manager_count_unit(&c, u);
                        continue;
                }
                /* Parked: present, at rest, not paused (unit_may_park()). */
                c.present++;
                if (unit_parked_still(u, now)) {
                        parked++;
                        parked_no_wake += !u->sampler.at_baseline && !u->sampler.wake_armed;
                        /* The plan may keep less than when it parked. */
                        if (m->fds_held > UNIT_FD_ROOM(m->unit_ctx.fd_budget))
                                unit_fd_economy(u);
                        continue;
                }
                m->parked_wakes++;
                unparked++;
                (void) ticker_schedule(m->ticker, &u->tick, now);
        }
        m->parked = parked;
        m->parked_no_wake = parked_no_wake;
        m->unparked = unparked;
        m->pass_counts = c;
        m->pass_census = census;
}

/* A made cgroup is looked for after this long: whoever made it (systemd,
 * a container runtime) writes its quota next, and on a hybrid host makes
 * its cgroup2 twin; adopted before, it would be adopted twice. */
#define CGROUP_SETTLE_USEC (50 * USEC_PER_MSEC)

static bool unit_expects(const Unit *u, const char *name) {
        _cleanup_free_ char *path = NULL;
        const char *base;

        if (unit_expected_path(u, &path) < 0)
                return false;
        base = strrchr(path, '/');
        return strcmp(base ? base + 1 : path, name) == 0;
}

/* The governed cgroup itself, by its name in its parent directory. */
static bool unit_cgroup_named(const Unit *u, const char *name) {
        const char *base;

        if (!u->cg || !u->cgroup_path)
                return false;
        base = strrchr(u->cgroup_path, '/');
        return strcmp(base ? base + 1 : u->cgroup_path, name) == 0;
}

void manager_cgroup_made(int wd, const char *name, bool made, void *userdata) {
        Manager *m = userdata;
        uint64_t now;

        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (name && !made) {
                for (size_t i = 0; i < m->n_units; i++)
                        if (m->units[i]->watch_wd == wd && unit_cgroup_named(m->units[i], name))
                                unit_cgroup_removed(m->units[i], now);
                (void) manager_prefix_dir_event(m, wd, name, false);
                return;
        }
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];

                if (u->watch_wd != wd)
                        continue;
                if (!name) {
                        unit_watch_gone(u);
                        if (u->cg)
                                unit_cgroup_removed(u, now);
                } else if (!u->cg && unit_expects(u, name)) {
                        log_debug("%s: cgroup %s made", u->name, name);
                        (void) ticker_schedule(m->ticker, &u->tick, now + CGROUP_SETTLE_USEC);
                }
        }
        /* After the units' look: a prefix unit made here joins m->units. */
        (void) manager_prefix_dir_event(m, wd, name, true);
}

/* The cgroup files the units keep between samples. What a light sample
 * reads comes first (cpu.stat, the twin's usage, the quota), with the
 * directories (one, two on a hybrid host), then what only full samples
 * read (cpu.stat.local, cpu.pressure). The plan takes the largest set that
 * fits 85 % of the budget for every unit; else every unit keeps the first
 * file a light sample reads and no directory, those that are not quiet
 * keeping everything while it fits (unit_fd_economy()); else that file
 * for the share of units that fits: a stable choice (by each unit's fixed
 * rank), not units taking turns. It counts every configured unit, present
 * or not: planned for the units present only, it would lag behind ten
 * thousand cgroups adopted in batches and run out of descriptors before
 * the next plan. A plan that keeps less than the last one is applied at
 * once. */
static void plan_fds(Manager *m, const struct manager_fd_census *c) {
        size_t dirs = c->dirs, triggers = c->triggers, avail, budget = UNIT_FD_ROOM(m->unit_ctx.fd_budget);
        size_t n = m->n_units;
        bool hybrid = m->root->layout != BW_CG_LAYOUT_V2;
        unsigned light = BW_CG_FILE_STAT | BW_CG_FILE_USAGE | BW_CG_FILE_QUOTA, per_light = hybrid ? 3 : 2;
        unsigned per_first = per_light - 1, keep, share = 1000;

        avail = budget > triggers ? budget - triggers : 0;
        if (n == 0 || avail >= dirs + n * (per_light + 2))
                keep = UNIT_FILES_ALL;
        else if (avail >= dirs + n * per_light)
                keep = light | BW_CG_DIRS;
        else {
                keep = BW_CG_FILE_STAT | BW_CG_FILE_USAGE;
                share = avail >= n * per_first ? 1000 : (unsigned) (avail * 1000 / (n * per_first));
        }
        if (keep != m->fd_keep || share != m->fd_share)
                log_debug("Units hold %zu file descriptors (budget %zu): keeping 0x%x for %u/1000 of %zu units",
                          m->fds_held, m->unit_ctx.fd_budget, keep, share, n);
        if ((keep & ~m->fd_keep) == 0 && share <= m->fd_share && (keep != m->fd_keep || share != m->fd_share)) {
                m->fd_keep = keep;
                m->fd_share = share;
                for (size_t i = 0; i < n; i++)
                        unit_fd_economy(m->units[i]);
        }
        m->fd_keep = keep;
        m->fd_share = share;
}

void manager_plan_fds(Manager *m) {
        struct manager_fd_census c = { 0 };
        bool hybrid = m->root->layout != BW_CG_LAYOUT_V2;

        for (size_t i = 0; i < m->n_units; i++)
                fd_census_add(&c, m->units[i], hybrid);
        plan_fds(m, &c);
}

void manager_plan_fds_checked(Manager *m) {
        plan_fds(m, &m->pass_census);
}
