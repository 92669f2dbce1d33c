/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's tick in five steps: observe, reconcile, decide, act, record
 * (unit-tick.c). */
#pragma once

#include "unit.h"

/* The ticker found the unit due (its entry is out of the queue): schedule
 * the next sample one Interval= after due, then tick. */
void unit_on_due(Unit *u, uint64_t due, uint64_t now);

/* One pass in five steps (unit-tick.c): observe (find the cgroup, sample it),
 * reconcile (adopt, re-base, intents: the only writes before the
 * decision), decide, act (write), record. Returns 0, also when the cgroup
 * is gone, or a negative errno (logged). */
int unit_tick(Unit *u, uint64_t now);
