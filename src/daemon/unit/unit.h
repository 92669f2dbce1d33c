/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One governed unit's life: find and open its cgroup, watch its pressure,
 * adopt its baseline, re-base on someone else's write, follow systemd's
 * intent, decide and write on every tick, restore. A unit sees the world
 * through a small unit_context, never the Manager; what spans several units
 * (the cgroup tree of governed units) it asks of the manager through the
 * context's hooks. The decisions themselves are pure functions in
 * src/lib/law/baseline.c and src/lib/law/policy.c. This header has what
 * unit.c defines (the Unit's type is in unit-types.h); each other file of src/daemon/unit/
 * declares its part in a header of its name (unit-tick.h the tick,
 * unit-sample.h the samples, unit-resolve.h, unit-intent.h, unit-scope.h,
 * unit-levers.h, unit-rqstat.h, unit-state.h). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unit-types.h"

/* The unit whose tick entry e is (the ticker hands entries out). */
static inline Unit *unit_of_tick(struct bw_tick_entry *e) {
        return (Unit *) (void *) ((char *) e - offsetof(Unit, tick));
}

/* cgroup_path is a copy of its own (freed with the unit), not the open
 * cgroup's. */
static inline bool unit_cgroup_path_owned(const Unit *u) {
        return u->cgroup_path && !(u->cg && u->cgroup_path == u->cg->path);
}

/* Where its configuration came from, for messages (cpu_quota_source):
 * its configuration, the configuration's entry for it or
 * its own copy (a unit made from prefix directories has no entry). */
const struct bw_unit_config *unit_config_source(const Unit *u);

/* A unit for cfg (ctx->config's entry, shared; another, copied), its timer
 * armed to tick at once. Returns 0 or a negative errno. */
int unit_new(const struct unit_context *ctx, const struct bw_unit_config *cfg, Unit **ret);
Unit *unit_free(Unit *u);

/* Take a new configuration for the unit (shared or copied as in
 * unit_new()): a changed Cgroup=
 * restores the old cgroup's baseline and starts over; an adopted unit gets
 * new parameters; the next tick stays one Interval= after the last. Returns
 * 0 or -ENOMEM. */
int unit_reconfigure(Unit *u, const struct bw_unit_config *cfg);

/* Count (or stop counting) the open cgroup in the run-queue telemetry; the
 * manager calls these when Telemetry= turns the telemetry on or off. */
void unit_attach_rqstat(Unit *u);
void unit_detach_rqstat(Unit *u);

/* Adopt the baseline from cur (the kernel's value), the saved state and
 * CPUQuota= (bw_baseline_adopt()); CPUQuota= is put in place when the
 * kernel does not hold it. Returns 0 or -ENOMEM. */
int unit_adopt(Unit *u, const struct bw_bandwidth *cur);

/* The law's parameters, from the configuration and the baseline: made
 * when needed, not kept (ten thousand units kept 1.2 MB of them). */
void unit_params(const Unit *u, struct bw_policy_params *ret);
/* The law's parameters are taken again, after the baseline or the mode
 * changed: the mode they hold now is noted (params_mode). */
void unit_update_params(Unit *u);
/* The effective Mode= (the unit's, else the global one). */
enum bw_mode unit_mode(const Unit *u);

/* Write target. seen is the value the decision was based on: if the kernel
 * no longer holds it when we are about to write, nothing is written.
 * Returns 1 when written and changed, 0 when the kernel already held it,
 * -EAGAIN when cpu.max changed meanwhile (the next tick re-bases), or
 * another negative errno (logged). */
int unit_apply(Unit *u, const struct bw_bandwidth *seen, const struct bw_bandwidth *target, const char *reason);

/* Someone else wrote cpu.max: their value is the new contract, but for a
 * burst that is still ours (bw_baseline_rebase()). Never writes back. */
void unit_rebase(Unit *u, const struct bw_bandwidth *cur);

/* What restoring the baseline means now (bw_baseline_restore_plan()).
 * Returns 1 with the current value and the one to write, 0 when there is
 * nothing to write. */
int unit_restore_plan(Unit *u, struct bw_bandwidth *ret_cur, struct bw_bandwidth *ret_target);
/* Plan and write the restore; why names it in the journal. Returns
 * unit_apply()'s result (0 when there was nothing to write). */
int unit_restore_baseline(Unit *u, const char *why);

/* Where the unit rests with its credit when the kernel does not hold it
 * yet: true and the value to write (bw_baseline_rest_plan()). */
bool unit_rest_plan(Unit *u, const struct bw_bandwidth *cur, struct bw_bandwidth *ret_target);

/* On cgroup v1, lower u (a governed unit below ancestor, whose quota goes
 * down to quota_usec per period_usec) if it holds more. */
void unit_lower_to(Unit *u, const char *ancestor, uint64_t quota_usec, uint64_t period_usec);

/* A read or open failed: log it (r), or once for the host when the file
 * descriptors ran out. Returns r. */
int unit_fd_error(Unit *u, int r, const char *what);

/* For the unit module's files (unit.c, called by the others): what the kernel should hold (the
 * last value written, else the baseline); the unit mirrored into its
 * saved entry (store_record_unit() flags); its descriptors counted again. */
const struct bw_bandwidth *unit_expected(const Unit *u);
int unit_record(Unit *u, unsigned flags);
void unit_count_fds(Unit *u);

/* Hand delta to the manager's counters (hooks->count). */
void unit_count(Unit *u, const struct unit_counters *delta);

/* Stop watching for u's cgroup (unit_resolve() watches while it is absent;
 * unit.c). */
void unit_unwatch(Unit *u);

/* ---- the unit's descriptors, schedule and end (unit.c) -------------------- */

/* Every file of a cgroup and its directories (BW_CG_*). */
#define UNIT_FILES_ALL ((_BW_CG_FILE_ALL - 1) | BW_CG_DIRS)
/* The share of fd_budget the units' plan fills (the rest is slack for
 * what a pass opens on the way). */
#define UNIT_FD_ROOM(budget) ((budget) / 20 * 17)

/* Close the files the manager's plan does not keep (manager_plan_fds()). */
void unit_fd_economy(Unit *u);

/* The cgroup is gone: close it and forget the unit's saved entry; a cgroup
 * of the same name later is adopted afresh. */
void unit_vanished(Unit *u);

/* Re-arm the unit's timer for delay after from. Returns 0 or a negative
 * errno (logged). */
int unit_schedule(Unit *u, uint64_t from, uint64_t delay);

/* The unit was dropped from the configuration: restore its baseline and
 * forget its saved entry (the caller then frees it). */
void unit_unconfigure(Unit *u);

/* Pause (restore the baseline, stop writing) or resume. */
void unit_set_paused(Unit *u, bool paused);

/* ---- levers (unit-levers.h) over a Unit --------------------------------- */

static inline struct lever_host unit_lever_host(Unit *u) {
        return (struct lever_host) {
                .name = u->name,
                .cgroup_path = u->cgroup_path,
                .cg = u->cg,
                .root = u->ctx->root,
                .store = u->ctx->store,
                .adopted = u->adopted,
                .lv = &u->lv,
        };
}

static inline int unit_lever_set(Unit *u, enum unit_lever l, const char *value) {
        struct lever_host h = unit_lever_host(u);

        return levers_set(&h, l, value);
}

static inline int unit_lever_restore(Unit *u, enum unit_lever l, const char *why) {
        struct lever_host h = unit_lever_host(u);

        return levers_restore_one(&h, l, why);
}

/* Lever l is recorded for the unit: held, or being put back. */
static inline bool unit_lever_is_set(Unit *u, enum unit_lever l) {
        struct lever_host h = unit_lever_host(u);

        return levers_is_set(&h, l);
}

/* Some lever or a thread slice is recorded for the unit. */
static inline bool unit_levers_any(Unit *u) {
        struct lever_host h = unit_lever_host(u);

        return levers_any(&h);
}

static inline int unit_slice_apply(Unit *u, uint64_t slice_usec) {
        struct lever_host h = unit_lever_host(u);

        return levers_slice_apply(&h, slice_usec);
}

static inline void unit_levers_restore(Unit *u, const char *why) {
        struct lever_host h = unit_lever_host(u);

        levers_restore(&h, why);
}

/* ---- the PSI trigger (unit.c) -------------------------------------------- */

/* Close the unit's PSI trigger, if it holds one (unit.c; unit-tick.c opens
 * it near the quota). */
void unit_trigger_close(Unit *u);
