/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit names to cgroup paths: slices by systemd's naming, other units by a
 * breadth-first search of the tree (contracts in include/bwgov/cgroup/discover.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/cgroup/discover.h"
#include "bwgov/util/macro.h"

static const char *const unit_suffixes[] = {
        ".slice", ".service", ".scope", ".socket", ".mount", ".swap",
};

static bool endswith(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a > b && strcmp(s + a - b, suffix) == 0;
}

bool bw_unit_is_systemd(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(unit_suffixes); i++)
                if (endswith(name, unit_suffixes[i]))
                        return true;
        return false;
}

int bw_unit_cgroup_path(const char *name, char **ret) {
        size_t n, stem;
        char *out, *p;

        if (!name || !*name || strchr(name, '/'))
                return -EINVAL;

        if (!bw_unit_is_systemd(name)) {
                if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                        return -EINVAL;
                out = strdup(name);
                if (!out)
                        return -ENOMEM;
                *ret = out;
                return 0;
        }
        if (!endswith(name, ".slice"))
                return -EAGAIN;

        if (strcmp(name, "-.slice") == 0) {
                out = strdup("");
                if (!out)
                        return -ENOMEM;
                *ret = out;
                return 0;
        }

        n = strlen(name);
        stem = n - strlen(".slice");
        /* systemd rejects leading, trailing and doubled dashes in slice names. */
        if (name[0] == '-' || name[stem - 1] == '-')
                return -EINVAL;
        for (size_t i = 1; i < stem; i++)
                if (name[i] == '-' && name[i - 1] == '-')
                        return -EINVAL;

        /* Each dash adds one parent: "a-b-c.slice" has the prefixes "a" and
         * "a-b". Worst case length: sum of prefixes + suffixes. */
        out = malloc(n * (n / 2 + 2) + 1);
        if (!out)
                return -ENOMEM;
        p = out;
        for (size_t i = 0; i < stem; i++) {
                if (name[i] != '-')
                        continue;
                memcpy(p, name, i);
                p += i;
                p = stpcpy(p, ".slice/");
        }
        p = stpcpy(p, name);
        *ret = out;
        return 0;
}

struct queue_item {
        char *path;
        unsigned depth;
};

int bw_discover_find(int dirfd, const char *name, unsigned max_depth, char **ret) {
        struct queue_item *q = NULL;
        size_t head = 0, tail = 0, cap = 0;
        int r = -ENOENT;

        q = calloc(cap = 64, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q[tail++] = (struct queue_item) { strdup(""), 0 };
        if (!q[0].path) {
                free(q);
                return -ENOMEM;
        }

        while (head < tail) {
                struct queue_item it = q[head++];
                _cleanup_close_ int fd = -1;
                DIR *d;
                struct dirent *de;

                if (it.path[0] == '\0')
                        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                else
                        fd = openat(dirfd, it.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0) {
                        /* Vanished while we walked: not an error. */
                        free(it.path);
                        continue;
                }
                d = fdopendir(fd);
                if (!d) {
                        free(it.path);
                        continue;
                }
                fd = -1;

                while ((de = readdir(d))) {
                        char *child;

                        if (de->d_type != DT_DIR || de->d_name[0] == '.')
                                continue;
                        if (asprintf(&child, "%s%s%s", it.path, it.path[0] ? "/" : "", de->d_name) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        if (strcmp(de->d_name, name) == 0) {
                                *ret = child;
                                r = 0;
                                break;
                        }
                        if (it.depth + 1 >= max_depth) {
                                free(child);
                                continue;
                        }
                        if (tail == cap) {
                                struct queue_item *nq = realloc(q, (cap *= 2) * sizeof(*q));
                                if (!nq) {
                                        free(child);
                                        r = -ENOMEM;
                                        break;
                                }
                                q = nq;
                        }
                        q[tail++] = (struct queue_item) { child, it.depth + 1 };
                }
                closedir(d);
                free(it.path);
                if (r != -ENOENT)
                        break;
        }

        for (size_t i = head; i < tail; i++)
                free(q[i].path);
        free(q);
        return r;
}
