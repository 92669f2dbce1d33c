/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where a unit's cgroup is, watching for it while it is not there, and the
 * manager's marks on the unit (unit-resolve.c). */
#pragma once

#include "unit.h"

/* Find the unit's cgroup and open it. Returns 1 when open, 0 when absent,
 * a negative errno (logged) when it cannot be mapped or opened. */
int unit_resolve(Unit *u);

/* The cgroup u expects (Cgroup=, or the one its name maps to): 0 with
 * *ret, -EAGAIN when it is searched for (a service or scope), -EINVAL for
 * a malformed slice name, -ENOMEM. */
int unit_expected_path(const Unit *u, char **ret);
/* The directory watched went, and the watch with it (nothing to release). */
void unit_watch_gone(Unit *u);

/* What the manager works out for a unit. */
/* "Governed by unit X" said (true) or the cgroup free again (false);
 * returns what was said before, so that each is logged once. */
bool unit_set_owner_said(Unit *u, bool said);
/* Made from prefix directories for a cgroup found, or configured. */
void unit_set_instance(Unit *u, bool instance);
/* Its place in the manager's cgtree of this generation (unit_place). */
void unit_set_place(Unit *u, uint32_t generation, bool outermost, bool has_governed_descendants);
/* A governed unit's cgroup is below u (true), or none is known to be yet
 * (false: the cgtree is about to be worked out again). */
void unit_set_has_governed_descendants(Unit *u, bool has);
/* A governed unit's cgroup was found above u. */
void unit_clear_outermost(Unit *u);
