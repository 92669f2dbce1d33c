/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* INTERIM (branch cont): freezer and cpuset levers kept in memory, for
 * contention.c until main's unit-levers.c lands; no write-ahead, so a
 * SIGKILLed daemon leaves what it held. Freeze: cgroup.freeze of the v2
 * directory (the twin on hybrid); CPUs: cpuset.cpus in v2, else in the v1
 * cpuset hierarchy at /sys/fs/cgroup/cpuset. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/fileio.h"
#include "bwgov/macro.h"
#include "log.h"
#include "unit-levers.h"
#include "unit.h"

#define V1_CPUSET_ROOT "/sys/fs/cgroup/cpuset"
#define VALUE_MAX 512

struct held {
        const Unit *u;
        enum unit_lever l;
        char orig[VALUE_MAX];
        char set[VALUE_MAX];
};

static struct held *held;
static size_t n_held;

static struct held *find(const Unit *u, enum unit_lever l) {
        for (size_t i = 0; i < n_held; i++)
                if (held[i].u == u && held[i].l == l)
                        return &held[i];
        return NULL;
}

/* The lever's file as (dirfd, path); -EOPNOTSUPP when there is none. */
static int lever_file(const Unit *u, enum unit_lever l, int *ret_dirfd, char **ret_path) {
        if (!u->cg)
                return -ENODEV;
        if (l == UNIT_LEVER_FREEZE) {
                if (u->cg->v2_dirfd < 0)
                        return -EOPNOTSUPP;
                *ret_dirfd = u->cg->v2_dirfd;
                *ret_path = strdup("cgroup.freeze");
        } else if (l == UNIT_LEVER_CPUS) {
                if (u->cg->layout == BW_CG_LAYOUT_V2) {
                        *ret_dirfd = u->cg->bw_dirfd;
                        *ret_path = strdup("cpuset.cpus");
                } else {
                        *ret_dirfd = AT_FDCWD;
                        if (asprintf(ret_path, V1_CPUSET_ROOT "/%s/cpuset.cpus", u->cg->path) < 0)
                                *ret_path = NULL;
                }
        } else
                return -EOPNOTSUPP;
        return *ret_path ? 0 : -ENOMEM;
}

static int lever_read(const Unit *u, enum unit_lever l, char *buf, size_t n) {
        _cleanup_free_ char *path = NULL;
        int dirfd, r;
        ssize_t k;

        r = lever_file(u, l, &dirfd, &path);
        if (r < 0)
                return r;
        k = bw_read_small_at(dirfd, path, O_NOFOLLOW, buf, n);
        if (k == -ENOENT)
                return -EOPNOTSUPP;
        if (k < 0)
                return (int) k;
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

static int lever_write(const Unit *u, enum unit_lever l, const char *value) {
        _cleanup_free_ char *path = NULL;
        int dirfd, r;

        r = lever_file(u, l, &dirfd, &path);
        if (r < 0)
                return r;
        return bw_write_at(dirfd, path, O_NOFOLLOW, value, strlen(value));
}

int unit_lever_set(Unit *u, enum unit_lever l, const char *value) {
        struct held *h = find(u, l);
        char cur[VALUE_MAX];
        int r;

        r = lever_read(u, l, cur, sizeof cur);
        if (r < 0)
                return r;
        if (!h) {
                struct held *n = realloc(held, (n_held + 1) * sizeof(*held));
                if (!n)
                        return -ENOMEM;
                held = n;
                h = &held[n_held++];
                *h = (struct held) { .u = u, .l = l };
                snprintf(h->orig, sizeof h->orig, "%s", cur);
        }
        snprintf(h->set, sizeof h->set, "%s", value);
        if (strcmp(cur, value) == 0)
                return 0;
        r = lever_write(u, l, value);
        if (r < 0)
                return log_warning_errno(r, "%s: writing %s to lever %d failed: %s", u->name, value, l, STRERROR(r));
        return 1;
}

int unit_lever_restore(Unit *u, enum unit_lever l, const char *why) {
        struct held *h = find(u, l);
        char cur[VALUE_MAX];
        int r = 0;

        if (!h)
                return 0;
        if (lever_read(u, l, cur, sizeof cur) >= 0 && strcmp(cur, h->set) == 0 && strcmp(cur, h->orig) != 0) {
                r = lever_write(u, l, h->orig);
                log_debug("%s: lever %d back to %s (%s)", u->name, l, h->orig, why);
                r = r < 0 ? r : 1;
        }
        *h = held[--n_held];
        return r;
}

bool unit_lever_is_set(const Unit *u, enum unit_lever l) {
        return find(u, l) != NULL;
}
