/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where a unit's cgroup is, and watching for it while it is not there
 * (unit-resolve.h; the watch is cgwatch.h's), and the manager's marks on it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/cgroup/discover.h"
#include "clock.h"
#include "log.h"
#include "unit.h"
#include "unit-resolve.h"

/* Where we look for service and scope units below the root: systemd nests
 * them at most a few slices deep (user.slice/user-1000.slice/session-1.scope). */
#define DISCOVER_MAX_DEPTH 6

int unit_expected_path(const Unit *u, char **ret) {
        char *path;

        if (u->cfg->cgroup) {
                path = strdup(u->cfg->cgroup);
                if (!path)
                        return -ENOMEM;
                *ret = path;
                return 0;
        }
        return bw_unit_cgroup_path(u->name, ret);
}

/* Absent: watch the parent directory of its cgroup-to-be, so that it is
 * looked for as soon as it is made. Without a parent yet (or out of
 * watches), the look once per Interval= finds it. Present: the same
 * watch tells its removal. */
static void unit_watch(Unit *u, const char *path) {
        _cleanup_free_ char *dir = NULL;
        const char *slash, *rel = path;
        int wd;

        if (u->watch_wd >= 0 || !u->ctx->cgwatch)
                return;
        while (*rel == '/')
                rel++;
        slash = strrchr(rel, '/');
        if (asprintf(&dir, "/proc/self/fd/%d/%.*s", u->ctx->root->bw_fd, slash ? (int) (slash - rel) : 0, rel) < 0)
                return;
        wd = cgwatch_add(u->ctx->cgwatch, dir);
        if (wd < 0)
                log_debug_errno(wd, "%s: not watching for cgroup %s: %s", u->name, path, STRERROR(wd));
        else
                u->watch_wd = wd;
}

/* Present: watch its quota file for writes (quotawatch.h). Out of watches,
 * its light samples read the file. */
static void unit_watch_quota(Unit *u) {
        char path[64];
        int dfd, r;

        if (!u->ctx->quotawatch)
                return;
        dfd = bw_cg_dir(u->cg, BW_CG_TREE_BW);
        if (dfd < 0) {
                log_debug_errno(dfd, "%s: not watching its quota file: %s", u->name, STRERROR(dfd));
                return;
        }
        (void) snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, bw_cg_quota_name(u->cg));
        r = quotawatch_add(u->ctx->quotawatch, path, &u->quota_watch);
        if (r == -ENOSPC && !*u->ctx->quota_watch_said) {
                log_info("Out of inotify watches (fs.inotify.max_user_watches): the units past %zu read their "
                         "quota file at every sample", quotawatch_size(u->ctx->quotawatch));
                unit_count(u, &(struct unit_counters) { .quota_watch_said = true });
        } else if (r < 0 && r != -ENOSPC)
                log_debug_errno(r, "%s: not watching its quota file: %s", u->name, STRERROR(r));
}

/* A hybrid host's cgroup opened before its v2 twin was made (its v1
 * directory first, or a tool that makes v1 directories only): the twin
 * is looked for again this often while the cgroup stays open, one failed
 * lookup. */
#define UNIT_TWIN_RETRY_USEC USEC_PER_SEC

static void unit_find_twin(Unit *u) {
        uint64_t now;
        int r;

        if (u->cg->has_v2 || u->cg->layout != BW_CG_LAYOUT_HYBRID || u->ctx->root->v2_fd < 0)
                return;
        now = clock_now_usec(CLOCK_MONOTONIC);
        if (now - u->sampler.twin_tried_usec < UNIT_TWIN_RETRY_USEC)
                return;
        u->sampler.twin_tried_usec = now;
        r = bw_cg_find_twin(u->cg);
        if (r < 0)
                log_debug_errno(r, "%s: cannot open the cgroup2 twin of cgroup %s: %s", u->name, u->cgroup_path,
                                STRERROR(r));
        if (r <= 0)
                return;
        log_info("%s: cgroup %s has its cgroup2 twin now: usage and pressure are read from it", u->name,
                 u->cgroup_path[0] ? u->cgroup_path : "/");
        unit_count_fds(u);
        unit_attach_rqstat(u);
        /* This tick's sample is a full one: a light one keeps the last
         * full sample's fields, which had no usage. */
        u->sampler.full_due = true;
}

int unit_resolve(Unit *u) {
        _cleanup_free_ char *path = NULL;
        bool searched = false;
        int r;

        if (u->cg) {
                unit_find_twin(u);
                return 1;
        }

        r = unit_expected_path(u, &path);
        if (r == -EAGAIN) {
                searched = true;
                r = bw_discover_find(u->ctx->root->bw_fd, u->name, DISCOVER_MAX_DEPTH, &path);
        }
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_warning_errno(r, "%s: cannot map unit to a cgroup: %s", u->name, STRERROR(r));
        if (u->cfg->subgroup) {
                /* The runtime's own cgroup below the unit's (crun's "container"). */
                char *sub;

                if (asprintf(&sub, "%s%s%s", path, path[0] ? "/" : "", u->cfg->subgroup) < 0)
                        return log_oom();
                free(path);
                path = sub;
        }

        r = bw_cg_open(u->ctx->root, path, &u->cg);
        if (bw_cg_error_is_vanished(r)) {
                /* A unit found by name is looked for again by name; its
                 * subgroup, made after it, is watched for in it. */
                if (!searched || u->cfg->subgroup)
                        unit_watch(u, path);
                if (!searched && !u->said.absent)
                        log_info("%s: cgroup %s is not there: governed once it is made", u->name, path);
                u->said.absent = true;
                return 0;
        }
        if (r == -EMFILE || r == -ENFILE)
                return unit_fd_error(u, r, path);
        if (r < 0)
                return log_warning_errno(r, "%s: cannot open cgroup %s: %s", u->name, path, STRERROR(r));
        /* One governor per cgroup, however each unit names it: the first
         * claim keeps it (claims.h). */
        r = u->ctx->hooks->claim(u, path, u->cg->bw_dev, u->cg->bw_ino, true, u->ctx->userdata);
        if (r < 0) {
                bw_cg_free(u->cg);
                u->cg = NULL;
                return 0;
        }
        u->said.absent = false;

        /* Present: the parent directory stays watched, now for the
         * cgroup's removal (manager_cgroup_made()): its own files' watches
         * get no event from cgroupfs, and a parked unit gated by its
         * parent's usage would not read them for a minute. */
        unit_unwatch(u);
        unit_watch(u, path);
        unit_watch_quota(u);
        /* Not its own yet: u->cg was NULL until now. */
        free((char *) u->cgroup_path);
        /* The open cgroup's path, unless it is written otherwise ("/a"
         * opens "a"). */
        u->cgroup_path = strcmp(u->cg->path, path) != 0 ? TAKE_PTR(path) : u->cg->path;
        u->sampler.gate = usage_gate_get(u->ctx->gates, u->ctx->root, u->cgroup_path);
        log_info("%s: governing cgroup %s (%s%s)", u->name, u->cgroup_path[0] ? u->cgroup_path : "/",
                 bw_cg_layout_to_string(u->cg->layout),
                 u->cg->layout == BW_CG_LAYOUT_HYBRID && !u->cg->has_v2 ? ", no cgroup2 twin yet" : "");
        u->sampler.twin_tried_usec = clock_now_usec(CLOCK_MONOTONIC);
        unit_attach_rqstat(u);
        u->ctx->hooks->cgroup_changed(u, u->ctx->userdata);
        return 1;
}

void unit_watch_gone(Unit *u) {
        u->watch_wd = -1;
}

bool unit_set_owner_said(Unit *u, bool said) {
        bool before = u->said.owner;

        u->said.owner = said;
        return before;
}

void unit_set_instance(Unit *u, bool instance) {
        u->place.instance = instance;
}

void unit_set_place(Unit *u, uint32_t generation, bool outermost, bool has_governed_descendants) {
        u->place = (struct unit_place) {
                .instance = u->place.instance,
                .outermost = outermost,
                .has_governed_descendants = has_governed_descendants,
                .cgtree_generation = generation,
        };
}

void unit_set_has_governed_descendants(Unit *u, bool has) {
        u->place.has_governed_descendants = has;
}

void unit_clear_outermost(Unit *u) {
        u->place.outermost = false;
}
