/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the manager puts back itself (restore.h), the units aside: at start,
 * before any unit is made, every lever and slice a previous bwgovd left,
 * whatever the configuration says now, and the baselines of the units it no
 * longer names; while running, every undo that failed, after its back-off;
 * at a stop, what is left, for a while; and with no configuration at all (it
 * cannot be loaded, or `bwgovd --restore` after any exit), everything. */
#pragma once

#include "manager-types.h"

/* What the manager puts back itself (manager-restore.c, restore.h): at
 * start, before any unit is made, every lever and slice recorded and the
 * baselines of units the configuration no longer names; while running, the
 * undos due after their back-off; at an exit, what is left, for up to
 * budget_usec (returns how many units still hold something; each logged).
 * manager_restore_only(): with no configuration (it cannot be loaded, or
 * `bwgovd --restore`), everything the state directory records, the
 * baselines too unless RestoreOnExit=no was saved; 0 when all is back (or
 * nothing was recorded), -EAGAIN when something is left (logged), another
 * negative errno (-EBUSY: another bwgovd holds the state directory). */
void manager_reconcile_start(Manager *m);
void manager_retry_restores(Manager *m, uint64_t now);
size_t manager_restore_left(Manager *m, uint64_t budget_usec, const char *why);
int manager_restore_only(Manager *m, const char *why);

/* The same with the root and the state open already (a start that fails). */
int manager_restore_exit(Manager *m, const char *why);
