/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Where unit NAME's cgroup is named, for a message (not kept in the unit:
 * its drop-ins are read again): "file:line" of its Subgroup=, else of its
 * Cgroup=, else the path of its first drop-in (its name names the
 * cgroup). dirs NULL: the default directories. Returns 1 with *ret
 * (malloc'd), 0 when the directories hold no such unit now, or a negative
 * errno (a drop-in that no longer loads). */
int bw_config_cgroup_named_at(const char *const *dirs, const char *name, char **ret);
