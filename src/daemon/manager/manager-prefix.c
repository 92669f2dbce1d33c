/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Units made from prefix directories (bwgov.conf(5)): a cgroup named like
 * a unit that a prefix directory applies to ("libpod-.scope.d/" and
 * machine.slice/libpod-0f1e….scope) is governed as a unit of that name,
 * made when bwgovd finds it and forgotten when the cgroup goes. bwgovd
 * looks where systemd puts units: the root and every slice below it, each
 * watched for new directories (cgwatch.h), and again every
 * PREFIX_RESCAN_USEC for what a watch missed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "source/cgwatch.h"
#include "guard/contention-sched.h"
#include "log.h"
#include "manager-types.h"
#include "source/ticker.h"
#include "manager-prefix.h"
#include "manager-shared.h"
#include "unit/unit-resolve.h"
#include "bwgov/cgroup/cgroupfs-path.h"
#include "bwgov/config/config-prefix.h"

/* systemd nests slices a few levels deep (kubepods.slice/
 * kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/…). */
#define PREFIX_MAX_DEPTH 8

/* A made cgroup is adopted after this long (manager-units.c says why). */
#define PREFIX_SETTLE_USEC (50 * USEC_PER_MSEC)

struct slice_watch {
        int wd;
        char *path;                     /* relative to the root, "" for the root */
};

static bool is_slice(const char *name) {
        size_t n = strlen(name);

        return n > 6 && strcmp(name + n - 6, ".slice") == 0;
}

static void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

static int config_name_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const struct bw_unit_config *) elem)->name);
}

/* A unit for the cgroup PATH named NAME, in its place in m->units, its
 * first sample once whoever made the cgroup had time to set it up. */
static void instance_add(Manager *m, const char *path, const char *name) {
        _cleanup_(bw_unit_config_done) struct bw_unit_config cfg = { 0 };
        struct bw_config_error err = { 0 };
        const char *const *dirs;
        const char *buf[2];
        Unit *u = NULL, **units;
        uint64_t now;
        size_t at;
        int r;

        u = manager_get_unit(m, name);
        if (u) {
                /* Configured by its own name, or made already: a unit
                 * searched for by name looks now, not at its next tick. */
                if (!u->cg) {
                        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
                        (void) ticker_schedule(m->ticker, &u->tick, now + PREFIX_SETTLE_USEC);
                }
                return;
        }
        manager_config_dirs(m, &dirs, buf);
        r = bw_config_load_instance(dirs, name, path, &cfg, &err);
        if (r < 0) {
                _cleanup_free_ char *s = bw_config_error_to_string(&err);

                log_error("%s: not governed, its prefix drop-ins do not load: %s", name, s ? s : STRERROR(r));
                bw_config_error_done(&err);
                return;
        }
        if (r == 0)
                return;         /* every drop-in masked */
        units = reallocarray(m->units, m->n_units + 1, sizeof(Unit *));
        if (!units) {
                log_oom();
                return;
        }
        m->units = units;
        r = unit_new(&m->unit_ctx, &cfg, &u);
        if (r < 0) {
                log_error_errno(r, "%s: cannot govern cgroup %s: %s", name, path, STRERROR(r));
                return;
        }
        unit_set_instance(u, true);
        for (at = m->n_units; at > 0 && strcmp(m->units[at - 1]->name, name) > 0; at--)
                ;
        memmove(m->units + at + 1, m->units + at, (m->n_units - at) * sizeof(Unit *));
        m->units[at] = u;
        m->n_units++;
        m->outermost_dirty = true;
        metrics_mark_changed(&m->metrics);
        log_info("%s: found cgroup %s, governed by its prefix drop-ins", name, path);
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        (void) ticker_schedule(m->ticker, &u->tick, now + PREFIX_SETTLE_USEC);
}

static struct slice_watch *slice_watch_find(Manager *m, int wd) {
        for (size_t i = 0; i < m->n_slice_watches; i++)
                if (m->slice_watches[i].wd == wd)
                        return &m->slice_watches[i];
        return NULL;
}

/* Watch the slice PATH for new cgroups (once). */
static void slice_watch(Manager *m, const char *path) {
        _cleanup_free_ char *p = NULL, *copy = NULL;
        struct slice_watch *w;
        int wd;

        if (!m->cgwatch)
                return;
        if (asprintf(&p, "/proc/self/fd/%d/%s", m->root->bw_fd, path) < 0)
                return;
        wd = cgwatch_add(m->cgwatch, p);
        if (wd < 0) {
                log_debug_errno(wd, "Not watching slice /%s for new cgroups: %s", path, STRERROR(wd));
                return;
        }
        if (slice_watch_find(m, wd)) {
                cgwatch_release(m->cgwatch, wd);        /* held once already */
                return;
        }
        copy = strdup(path);
        w = copy ? reallocarray(m->slice_watches, m->n_slice_watches + 1, sizeof(*w)) : NULL;
        if (!w) {
                cgwatch_release(m->cgwatch, wd);
                return;
        }
        m->slice_watches = w;
        m->slice_watches[m->n_slice_watches++] = (struct slice_watch) { wd, TAKE_PTR(copy) };
}

static void scan(Manager *m, const char *path, unsigned depth) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int fd;

        /* The root's fd is O_PATH: readdir() needs one opened for reading. */
        fd = path[0] ? bw_cg_openat_beneath(m->root->bw_fd, path, O_RDONLY | O_DIRECTORY, true) :
                openat(m->root->bw_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;         /* gone meanwhile */
        d = fdopendir(fd);
        if (!d) {
                (void) close(fd);
                return;
        }
        slice_watch(m, path);
        while ((de = readdir(d))) {
                _cleanup_free_ char *child = NULL;
                struct stat st;

                if (de->d_name[0] == '.')
                        continue;
                if (de->d_type != DT_DIR &&
                    (de->d_type != DT_UNKNOWN || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                     !S_ISDIR(st.st_mode)))
                        continue;
                if (asprintf(&child, "%s%s%s", path, path[0] ? "/" : "", de->d_name) < 0)
                        return;
                if (bw_config_prefix_matches(&m->config, de->d_name))
                        instance_add(m, child, de->d_name);
                if (is_slice(de->d_name) && depth < PREFIX_MAX_DEPTH)
                        scan(m, child, depth + 1);
        }
}

static void slice_watches_release(Manager *m) {
        for (size_t i = 0; i < m->n_slice_watches; i++) {
                if (m->cgwatch)
                        cgwatch_release(m->cgwatch, m->slice_watches[i].wd);
                free(m->slice_watches[i].path);
        }
        m->slice_watches = mfree(m->slice_watches);
        m->n_slice_watches = 0;
}

void manager_scan_prefixes(Manager *m, uint64_t now) {
        if (m->config.n_prefixes == 0) {
                slice_watches_release(m);
                return;
        }
        m->prefix_scan_usec = now;
        scan(m, "", 0);
}

/* The cgroup PATH was removed: its unit lets it go at once (on cgroupfs its
 * reads would fail at the next sample anyway; a quiet unit's next full one
 * may be twenty Interval=s away). */
static void instance_removed(Manager *m, const char *path) {
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];

                if (u->place.instance && u->cg && u->cgroup_path && strcmp(u->cgroup_path, path) == 0 &&
                    bw_cg_same(m->root, u->cg) == 0) {
                        unit_vanished(u);
                        return;
                }
        }
}

bool manager_prefix_dir_event(Manager *m, int wd, const char *name, bool made) {
        struct slice_watch *w = slice_watch_find(m, wd);
        _cleanup_free_ char *child = NULL;

        if (!w)
                return false;
        if (!name) {
                /* The slice went, its watch with it. */
                free(w->path);
                *w = m->slice_watches[--m->n_slice_watches];
                return true;
        }
        if (m->config.n_prefixes == 0 || m->stopping)
                return true;
        if (asprintf(&child, "%s%s%s", w->path, w->path[0] ? "/" : "", name) < 0)
                return true;
        if (!made) {
                if (bw_config_prefix_matches(&m->config, name)) {
                        instance_removed(m, child);
                        /* Its unit may hold no cgroup by now: crun's subgroup
                         * lost its files a sample before the scope went, and
                         * the prune then still found its directory. The
                         * scope's removal is the container's: looked at again
                         * at the next host pass. */
                        m->instances_gone = true;
                }
                return true;
        }
        if (bw_config_prefix_matches(&m->config, name))
                instance_add(m, child, name);
        if (is_slice(name))
                scan(m, child, 1);
        return true;
}

void manager_prune_instances(Manager *m) {
        size_t j = 0;

        if (!m->instances_gone || m->stopping)
                return;
        m->instances_gone = false;
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];

                /* Only one that had its cgroup and whose directory is gone
                 * (one not adopted yet has none; one whose files went
                 * alone is looked at again by its ticks). */
                if (!u->place.instance || u->cg || !u->cgroup_path ||
                    faccessat(m->root->bw_fd, u->cgroup_path[0] ? u->cgroup_path : ".", F_OK,
                              AT_SYMLINK_NOFOLLOW) >= 0 || errno != ENOENT) {
                        m->units[j++] = u;
                        continue;
                }
                log_info("%s: cgroup gone, no longer governed", u->name);
                contention_unit_leaving(m->contention, u, "removed");
                latency_guard_unit_leaving(&m->latency, u);
                unit_free(u);
        }
        if (j == m->n_units)
                return;
        m->n_units = j;
        m->outermost_dirty = true;
        metrics_mark_changed(&m->metrics);
}

void manager_prefix_done(Manager *m) {
        slice_watches_release(m);
}

/* For manager_sync_units(): the configurations of the instances that a
 * prefix directory still makes (and the configuration does not name). */
int manager_instance_configs(Manager *m, struct bw_unit_config **ret, size_t *ret_n) {
        struct bw_unit_config *v;
        const char *const *dirs;
        const char *buf[2];
        size_t n = 0;

        v = calloc(m->n_units > 0 ? m->n_units : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        manager_config_dirs(m, &dirs, buf);
        for (size_t i = 0; i < m->n_units; i++) {
                const Unit *u = m->units[i];
                struct bw_config_error err = { 0 };

                if (!u->place.instance || !bw_config_prefix_matches(&m->config, u->name) ||
                    (m->config.n_units > 0 && bsearch(u->name, m->config.units, m->config.n_units,
                                                      sizeof(struct bw_unit_config), config_name_cmp)))
                        continue;
                if (bw_config_load_instance(dirs, u->name, u->cfg->cgroup, &v[n], &err) > 0)
                        n++;
                bw_config_error_done(&err);
        }
        *ret = v;
        *ret_n = n;
        return 0;
}
