/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* New cgroups, as they are made. A unit whose cgroup does not exist yet is
 * looked for once per Interval=; its parent directory is also watched with
 * inotify (IN_CREATE, IN_MOVED_TO: cgroupfs reports mkdir like any file
 * system), so that a container's cgroup is governed moments after it is
 * made, not up to an interval later. A present unit keeps the watch for
 * its cgroup's removal (IN_DELETE): the watches on the files of a removed
 * cgroup get no event. The watches are shared by path and counted: ten
 * thousand units below one slice cost one watch. */

#include <systemd/sd-event.h>

typedef struct CgWatch CgWatch;

/* A directory `name` appeared in the directory watched as wd (made), or
 * went from it (!made: removed or moved away); name is NULL when the
 * watched directory itself went away (the watch is gone: units holding wd
 * must forget it without cgwatch_release()). */
typedef void (*cgwatch_fn)(int wd, const char *name, bool made, void *userdata);

int cgwatch_new(sd_event *event, cgwatch_fn fn, void *userdata, CgWatch **ret);
CgWatch *cgwatch_free(CgWatch *w);

/* Watch directory `path` for new subdirectories. Returns its watch
 * descriptor (the same one for the same directory, counted once more) or
 * a negative errno: -ENOENT when it does not exist, -ENOSPC when the
 * inotify watch limit is reached. */
int cgwatch_add(CgWatch *w, const char *path);

/* Give back one count of wd; the watch goes with the last. */
void cgwatch_release(CgWatch *w, int wd);

/* Directories watched. */
size_t cgwatch_size(const CgWatch *w);
