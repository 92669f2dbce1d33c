/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Contention= in the daemon: which units take part, their usage and weight
 * sampled on a timer of its own (a gang slot, or a second at most), the
 * pure plan of src/lib/law/contention.c, and the plan put in place through the
 * unit's levers (unit-levers.h: the freezer, cpuset.cpus), which save the
 * original first and put it back. Knows no Manager: the manager hands it
 * the unit table when that changes.
 *
 * Taking part: Class=throughput and Class=best-effort units whose cgroup
 * is open and adopted, not paused, in Mode=burst or elastic (observe and
 * off never write). A unit that stops taking part gets its freezer and
 * cpuset back at once. */

#include <stddef.h>
#include <systemd/sd-event.h>

#include "bwgov/config/config.h"
#include "unit/unit.h"

typedef struct Contention Contention;

/* A contention scheduler on event, reading Contention= and
 * ContentionInterval= from config and its members from the unit table
 * *units[0..*n_units) (the manager's; all three outlive it), counting what
 * is frozen and pinned from the ledger in store. The host's CPUs
 * are read from /sys/devices/system/cpu/online (0..ncpus-1 when
 * unreadable). Nothing happens before the first contention_sync().
 * Returns 0 or a negative errno. */
int contention_new(sd_event *event, const struct bw_config *config, Unit *const *const *units, const size_t *n_units,
                   unsigned ncpus, Store *store, Contention **ret);
/* Frees without restoring (contention_restore_all() first on a stop). NULL is fine. */
Contention *contention_free(Contention *c);

/* Plan again now (start, reload, pause, resume). Members follow the unit
 * table at every plan (units adopted later join within a second); units
 * that left have their levers back. Call contention_unit_leaving() before
 * freeing a unit. With Contention=share nothing is sampled or held and the
 * timer stops until the next call. */
void contention_sync(Contention *c);

/* u is about to be freed (dropped from the configuration): its freezer and
 * cpuset back, and forget it. */
void contention_unit_leaving(Contention *c, Unit *u, const char *why);

/* Stop: every unit's freezer and cpuset back; the timer stops. */
void contention_restore_all(Contention *c, const char *why);
