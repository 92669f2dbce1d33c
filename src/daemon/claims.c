/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One governor per cgroup: the claims of this daemon's units by device and
 * inode, and a lock per claimed cgroup between daemons (claims.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "claims.h"
#include "config.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

struct claim {
        dev_t dev;
        ino_t ino;
        const void *owner;
};

struct lock_file {
        dev_t dev;
        int fd;                         /* -1: cannot be had (said by the error of each claim) */
};

struct Claims {
        char *dir;                      /* NULL: no locks between daemons */
        struct claim *v;                /* sorted by (dev, ino) */
        size_t n, allocated;
        struct lock_file *files;
        size_t n_files;
};

char *claims_dir(const char *cgroup_root) {
        struct statfs sf;
        char *p;

        if (cgroup_root && statfs(cgroup_root, &sf) >= 0 && (uint64_t) sf.f_type != CGROUP_SUPER_MAGIC &&
            (uint64_t) sf.f_type != CGROUP2_SUPER_MAGIC)
                return asprintf(&p, "%s/.bwgov-claims", cgroup_root) < 0 ? NULL : p;
        /* A directory made in cgroupfs is a cgroup: never there. */
        return strdup(BWGOV_RUNTIMEDIR "/claims");
}

int claims_new(const char *dir, Claims **ret) {
        Claims *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        if (dir && !(c->dir = strdup(dir))) {
                free(c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

Claims *claims_free(Claims *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_files; i++)
                if (c->files[i].fd >= 0)
                        close(c->files[i].fd);
        free(c->files);
        free(c->v);
        free(c->dir);
        free(c);
        return NULL;
}

size_t claims_count(const Claims *c) {
        return c ? c->n : 0;
}

static int claim_cmp(dev_t dev, ino_t ino, const struct claim *x) {
        if (dev != x->dev)
                return dev < x->dev ? -1 : 1;
        if (ino != x->ino)
                return ino < x->ino ? -1 : 1;
        return 0;
}

/* The index of (dev, ino), or where it would go. */
static size_t find(const Claims *c, dev_t dev, ino_t ino, bool *ret_found) {
        size_t lo = 0, hi = c->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int k = claim_cmp(dev, ino, &c->v[mid]);

                if (k == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (k < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        *ret_found = false;
        return lo;
}

/* The lock file of device dev: opened (made) once, kept. Returns its fd or
 * a negative errno. */
static int lock_fd(Claims *c, dev_t dev) {
        _cleanup_free_ char *path = NULL, *parent = NULL;
        struct lock_file *f;
        char *slash;
        int fd;

        for (size_t i = 0; i < c->n_files; i++)
                if (c->files[i].dev == dev)
                        return c->files[i].fd;
        /* The directory, and its parent (the default runtime directory,
         * which this daemon need not use itself). */
        parent = strdup(c->dir);
        if (!parent)
                return -ENOMEM;
        slash = strrchr(parent, '/');
        if (slash && slash != parent) {
                *slash = '\0';
                (void) mkdir(parent, 0755);
        }
        if (mkdir(c->dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        if (asprintf(&path, "%s/%u:%u", c->dir, major(dev), minor(dev)) < 0)
                return -ENOMEM;
        f = reallocarray(c->files, c->n_files + 1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        c->files = f;
        /* Byte-range locks are the process's: closing any descriptor of
         * the file would drop them all, so there is exactly one. */
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
        c->files[c->n_files++] = (struct lock_file) { dev, fd >= 0 ? fd : -errno };
        return fd >= 0 ? fd : -errno;
}

static off_t offset_of(ino_t ino) {
        /* Inode numbers are far below this; one that is not shares a byte
         * with another (a claim refused too many, never one let through). */
        return (off_t) ((uint64_t) ino % ((uint64_t) INT64_MAX - 1));
}

/* The lock between daemons: 0, -EADDRINUSE with the holder's pid, or
 * another negative errno. */
static int lock(Claims *c, dev_t dev, ino_t ino, pid_t *ret_pid) {
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = offset_of(ino), .l_len = 1 };
        int fd;

        *ret_pid = 0;
        if (!c->dir)
                return 0;
        fd = lock_fd(c, dev);
        if (fd < 0)
                return fd;
        if (fcntl(fd, F_SETLK, &fl) >= 0)
                return 0;
        if (errno != EAGAIN && errno != EACCES)
                return -errno;
        fl = (struct flock) { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = offset_of(ino), .l_len = 1 };
        if (fcntl(fd, F_GETLK, &fl) >= 0 && fl.l_type != F_UNLCK)
                *ret_pid = fl.l_pid;
        return -EADDRINUSE;
}

static void unlock(Claims *c, dev_t dev, ino_t ino) {
        struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = offset_of(ino), .l_len = 1 };

        for (size_t i = 0; c->dir && i < c->n_files; i++)
                if (c->files[i].dev == dev && c->files[i].fd >= 0)
                        (void) fcntl(c->files[i].fd, F_SETLK, &fl);
}

int claims_take(Claims *c, dev_t dev, ino_t ino, const void *owner, struct claim_holder *ret_holder) {
        struct claim_holder h = { 0 };
        bool found;
        size_t i = find(c, dev, ino, &found);
        int r;

        if (found) {
                if (c->v[i].owner == owner)
                        return 0;
                h.owner = c->v[i].owner;
                h.pid = getpid();
                *ret_holder = h;
                return -EBUSY;
        }
        r = lock(c, dev, ino, &h.pid);
        if (r == -EADDRINUSE) {
                *ret_holder = h;
                return r;
        }
        if (c->n == c->allocated) {
                size_t a = grow_capacity(c->allocated, 64);
                struct claim *v = reallocarray(c->v, a, sizeof(*v));

                if (!v) {
                        if (r >= 0)
                                unlock(c, dev, ino);
                        return -ENOMEM;
                }
                c->v = v;
                c->allocated = a;
        }
        memmove(&c->v[i + 1], &c->v[i], (c->n - i) * sizeof(*c->v));
        c->v[i] = (struct claim) { dev, ino, owner };
        c->n++;
        *ret_holder = (struct claim_holder) { 0 };
        return r;
}

void claims_release(Claims *c, dev_t dev, ino_t ino, const void *owner) {
        bool found;
        size_t i;

        if (!c)
                return;
        i = find(c, dev, ino, &found);
        if (!found || c->v[i].owner != owner)
                return;
        memmove(&c->v[i], &c->v[i + 1], (c->n - i - 1) * sizeof(*c->v));
        c->n--;
        unlock(c, dev, ino);
}
