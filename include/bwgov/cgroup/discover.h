/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* Mapping configured unit names to cgroup paths (relative to a cgroup root,
 * no leading slash), the way systemd lays its units out:
 *
 *   -.slice          ->  ""  (the root)
 *   web.slice        ->  web.slice
 *   a-b-c.slice      ->  a.slice/a-b.slice/a-b-c.slice
 *   x.service, x.scope, ... -> wherever the tree has a directory of that
 *                       name (services live in the slice named by Slice=,
 *                       which bwgov cannot know without asking PID 1), found
 *                       by bw_discover_find();
 *   anything else    ->  the name itself as a relative path (containers
 *                       and hand-made cgroups), unless Cgroup= says otherwise. */

/* True when name ends in a systemd unit suffix (.slice, .service, .scope, ...). */
bool bw_unit_is_systemd(const char *name);

/* Compute the path of a slice or a non-systemd name. Returns 0 and a malloc'd
 * path; -EAGAIN when the unit is a service/scope-like unit that must be found
 * with bw_discover_find(); -EINVAL for a malformed slice name ("a--b.slice",
 * "-a.slice"); -ENOMEM. */
int bw_unit_cgroup_path(const char *name, char **ret);

/* Breadth-first search below dirfd for a directory named `name`, at most
 * max_depth levels deep, never following symlinks. Returns 0 with a malloc'd
 * relative path, -ENOENT when absent, or a negative errno. */
int bw_discover_find(int dirfd, const char *name, unsigned max_depth, char **ret);
