/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the manager's parts share and call (manager-shared.c): a unit by name, the
 * configuration directories, the host timer's interval, the cgroup root and
 * the state store opened, the counts over the units, the stop's count of
 * write errors. manager-shared.c calls no other manager*.c file: they call it. */
#pragma once

#include "manager-types.h"

/* The cgroup tree (--cgroup-root or the host's). Returns 0 or a negative
 * errno (logged). */
int manager_open_root(Manager *m);

/* Look up a configured unit; NULL when unknown. */
Unit *manager_get_unit(Manager *m, const char *name);

/* The status counts (units, present, boosted, paused, spending): the one
 * count for the sd_notify STATUS line, GetStatus and metrics. */
void manager_counts(const Manager *m, struct governor_counts *ret);
/* Add one unit to c (manager_counts()'s step). */
void manager_count_unit(struct governor_counts *c, const Unit *u);

/* How many units are adopted. */
size_t manager_adopted(const Manager *m);

/* The configuration's search directories (buf: room for --config-dir=). */
void manager_config_dirs(Manager *m, const char *const **ret, const char *buf[2]);

/* The host timer's period: ActiveInterval=, at most Interval=. */
uint64_t host_interval(const Manager *m);

/* A parked unit ran (the caller counts it in Manager.unparked or
 * .parked_no_wake, so that the host passes come every ActiveInterval=
 * again: manager.c's host_pass_interval()): where the host timer was a
 * whole Interval= away, the next pass at once. */
void manager_host_pass_soon(Manager *m, uint64_t now);

/* mkdir -p: each missing directory of path made with mode. Returns 0 or a
 * negative errno. */
int mkdir_p(const char *path, mode_t mode);

/* Note each unit's write errors as the stop begins (once; the stop and
 * manager_shutdown() call it). */
void manager_count_stop(Manager *m);
/* Lock the state directory (made when create) and load its state. Returns
 * 1, 0 when !create and there is no state directory, a negative errno
 * (logged; -EBUSY: another bwgovd holds it). */
int manager_open_store(Manager *m, bool create);
