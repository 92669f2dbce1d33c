/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Manager: the event loop, the table of configured units, the host
 * sample and shedding, and the kernel check's result. main.c makes and runs
 * it; the varlink server and metrics see it only through governor.h
 * (manager-governor.h), units (unit.h) never. This header has what
 * manager.c defines, over the Manager's type (manager-types.h); each
 * manager-*.c declares its part in a header of its name. */

#include "manager-types.h"

/* How long a stop goes on trying to put back what failed to go back (the
 * records stay for `bwgovd --restore` and the next start). */
#define STOP_RESTORE_BUDGET_USEC (2 * USEC_PER_SEC)

int manager_new(Manager **ret);
Manager *manager_free(Manager *m);
int manager_load_config(Manager *m);
int manager_startup(Manager *m);
int manager_run(Manager *m);
/* SIGHUP: create the runtime directory again if it was deleted, reload the
 * configuration (a broken one is logged and the old one kept: returns the
 * error; so is a --config-dir= that is gone), then Manager.reloaded. */
int manager_reload(Manager *m);
/* Pause (restore the baseline, stop writing) or resume a unit. Returns 1
 * when changed, 0 when it already was so, -ENOENT for an unknown unit. */
int manager_set_paused(Manager *m, const char *name, bool paused);
/* Restore every baseline that we changed; save the state. Returns the
 * number of units whose baseline a write error kept from being put back
 * (each logged; their records stay in state.json for the next start). */
size_t manager_shutdown(Manager *m);
