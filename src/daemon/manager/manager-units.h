/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's table of units (manager-units.c): kept in step with the
 * configuration, adopted in the ticker's batches, restored together, and
 * which of them contain others. */
#pragma once

#include "manager-types.h"

/* The units' table (manager-units.c). Take the configuration's units:
 * reconfigure kept ones, create new ones (due at once), unconfigure and
 * free dropped ones; m->units stays sorted by name. Returns 0 or a negative
 * errno (every unit kept). */
int manager_sync_units(Manager *m);

/* ParkAtBaseline=: yes and no as set; auto rests idle units at their
 * baselines while putting every unit back at a stop would take longer
 * than UNIT_PARK_AUTO_STOP_USEC at the measured cost of a write (the
 * kernel walks every task group of the host per write: 0.3 ms at ten
 * thousand), and no longer once it would take half of that. After the
 * table or that cost changed. */
void manager_resolve_park(Manager *m);

/* Which units have no governed unit above them, which have some below. */
void manager_update_outermost(Manager *m);
bool manager_outermost_add(Manager *m, Unit *u);

/* Which cgroup files the units keep open between samples, so that they
 * stay within the file descriptor budget (every Interval=). */
void manager_plan_fds(Manager *m);
/* The same from the units as manager_check_parked() just counted them (its
 * walk, not one of its own): right after it, in the same pass. */
void manager_plan_fds_checked(Manager *m);

/* SIGTERM: restore every unit's baseline from the loop, TICKER_BATCH
 * units per iteration, then exit the loop. Returns 0 or a negative errno
 * (then nothing was started). */
int manager_stop_begin(Manager *m);

/* Restore every adopted unit's baseline, the intents saved together. */
void manager_restore_all(Manager *m, const char *why);

/* The ticker's callback (ticker.h): adopt a batch's new units together,
 * then sample each. */
void manager_units_due(struct bw_tick_entry *const *due, size_t n, uint64_t now, void *userdata);

/* Once per Interval=: every parked unit still, or ticked now (unit-tick.h).
 * One read per parent with parked children, none of their own. now: the
 * clock as it is (a gate's reading is labelled with it). */
void manager_check_parked(Manager *m, uint64_t now);

/* cgwatch's callback (cgwatch.h): an absent unit's cgroup was made. */
void manager_cgroup_made(int wd, const char *name, bool made, void *userdata);
