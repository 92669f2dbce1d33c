/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the manager's parts share and call (manager-shared.h): a unit by name, the
 * configuration directories, the host timer's interval, the cgroup root and
 * the state store opened, the counts over the units, the stop's count of
 * write errors. Calls no other manager*.c file: they call it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bwgov/util/util.h"
#include "log.h"
#include "manager-types.h"
#include "unit/unit-state.h"
#include "manager-shared.h"
#include "unit/unit-intent.h"

static int unit_name_cmp(const void *key, const void *entry) {
        return strcmp(key, (*(Unit *const *) entry)->name);
}

/* m->units is sorted by name (manager_sync_units()). */
Unit *manager_get_unit(Manager *m, const char *name) {
        Unit **u = m->n_units > 0 ? bsearch(name, m->units, m->n_units, sizeof(Unit *), unit_name_cmp) : NULL;

        return u ? *u : NULL;
}

int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);
        char *s;

        if (!p)
                return -ENOMEM;
        for (s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

void manager_config_dirs(Manager *m, const char *const **ret, const char *buf[2]) {
        if (m->config_dir) {
                buf[0] = m->config_dir;
                buf[1] = NULL;
                *ret = buf;
        } else
                *ret = bw_config_default_dirs();
}

uint64_t host_interval(const Manager *m) {
        return m->config.global.active_interval_usec < m->config.global.interval_usec ?
               m->config.global.active_interval_usec : m->config.global.interval_usec;
}

/* While every unit is parked where its first run wakes bwgovd, the host
 * timer runs once per Interval= (manager.c): a group that such a run woke,
 * at or raised at once to its headroom, would meet the brake up to an
 * Interval= late. */
void manager_host_pass_soon(Manager *m, uint64_t now) {
        uint64_t due;

        if (!m->host_timer || m->stopping || sd_event_source_get_time(m->host_timer, &due) < 0)
                return;
        if (due > now + host_interval(m))
                (void) sd_event_source_set_time(m->host_timer, now);
}


int manager_open_root(Manager *m) {
        int r;

        if (m->root)
                return 0;
        if (m->cgroup_root)
                r = bw_cg_root_open_dir(m->cgroup_root, &m->root);
        else
                r = bw_cg_root_open_host(&m->root);
        if (r == -EOPNOTSUPP)
                return log_error_errno(r, "No cgroup CPU bandwidth controller is mounted on this host "
                                       "(need cgroup v2 with the cpu controller, or a v1 cpu hierarchy): "
                                       "not supported");
        if (r < 0)
                return log_error_errno(r, "Failed to open the cgroup tree %s: %s",
                                       m->cgroup_root ? m->cgroup_root : "", STRERROR(r));
        log_info("cgroup layout: %s (bandwidth in %s)", bw_cg_layout_to_string(m->root->layout), m->root->bw_path);
        if (!m->cgroup_root && m->root->libcgroup_check != 1)
                log_debug("libcgroup %s where the cpu controller is mounted%s%s",
                          m->root->libcgroup_check == 0 ? "disagrees on" : "cannot say",
                          m->root->libcgroup_check < 0 ? ": " : "",
                          m->root->libcgroup_check < 0 ? STRERROR(m->root->libcgroup_check) : "");
        m->unit_ctx.root = m->root;
        return 0;
}

int manager_open_store(Manager *m, bool create) {
        struct stat st;
        int r;

        if (m->store_open)
                return 1;
        if (!create && stat(m->state_dir, &st) < 0 && errno == ENOENT)
                return 0;       /* nothing was ever recorded there */
        r = mkdir_p(m->state_dir, 0755);
        if (r < 0)
                return log_error_errno(r, "Failed to create state directory %s: %s", m->state_dir, STRERROR(r));
        r = store_lock(m->store, m->state_dir);
        if (r < 0)
                return r;
        r = store_open(m->store, m->state_dir);
        if (r < 0)
                return r;
        m->store_open = true;
        return 1;
}

/* The write errors so far: a unit with more at the end did not get its
 * baseline back because of one. */
void manager_count_stop(Manager *m) {
        if (m->stop_counted)
                return;
        for (size_t i = 0; i < m->n_units; i++)
                unit_stop_begin(m->units[i]);
        m->stop_counted = true;
}

void manager_count_unit(struct governor_counts *c, const Unit *u) {
        c->present += u->cg != NULL;
        c->boosted += unit_is_boosted(u);
        c->paused += u->paused;
        c->spending += unit_state(u) == UNIT_STATE_SPENDING;
}

size_t manager_adopted(const Manager *m) {
        size_t n = 0;

        for (size_t i = 0; i < m->n_units; i++)
                n += m->units[i]->adopted;
        return n;
}

void manager_counts(const Manager *m, struct governor_counts *ret) {
        struct governor_counts c = { .units = m->n_units };

        for (size_t i = 0; i < m->n_units; i++)
                manager_count_unit(&c, m->units[i]);
        *ret = c;
}
