/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Cgroup paths: what a relative cgroup path may be, and opening one beneath
 * a root without leaving it (contracts in include/bwgov/cgroup/cgroupfs-path.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "bwgov/cgroup/cgroupfs-path.h"

int bw_cg_path_validate(const char *path) {
        size_t len;
        const char *p;

        if (!path)
                return -EINVAL;

        len = strnlen(path, PATH_MAX);
        if (len >= PATH_MAX)
                return -EINVAL;

        for (p = path; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return -EINVAL;

        /* One leading slash is allowed; "" and "/" are the root. */
        p = path;
        if (*p == '/')
                p++;
        if (!*p)
                return 0;

        for (;;) {
                const char *e = strchrnul(p, '/');
                size_t n = (size_t) (e - p);

                if (n == 0)
                        return -EINVAL;
                if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return -EINVAL;
                if (n > NAME_MAX)
                        return -EINVAL;
                if (!*e)
                        return 0;
                p = e + 1;
        }
}

static int openat2_beneath(int dirfd, const char *path, int flags) {
        struct open_how how = {
                /* No O_NOFOLLOW: RESOLVE_NO_SYMLINKS refuses a symlink in
                 * any position with ELOOP, O_NOFOLLOW would turn the last one
                 * into ENOTDIR or an O_PATH fd on the link. */
                .flags = (uint64_t) (flags | O_CLOEXEC),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        long fd;

        fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        if (fd < 0)
                return -errno;
        return (int) fd;
}

/* After an open failed with ENOTDIR/ELOOP/ENOENT: was NAME a symlink? Lets the
 * walk report -ELOOP the way openat2 does. */
static int refine_symlink_error(int dirfd, const char *name, int r) {
        struct stat st;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISLNK(st.st_mode))
                return -ELOOP;
        return r;
}

/* Component walk for kernels without openat2 (< 5.6) or sandboxes that filter
 * it: each component opened with O_NOFOLLOW relative to the previous one. The
 * path is validated, so there are no "." or ".." components to escape with. */
static int walk_beneath(int dirfd, const char *path, int flags) {
        _cleanup_free_ char *copy = NULL;
        _cleanup_close_ int cur = -1;
        char *p, *e;
        int fd;

        copy = strdup(path);
        if (!copy)
                return -ENOMEM;

        p = copy;
        for (;;) {
                int at = cur >= 0 ? cur : dirfd;
                bool last;

                e = strchrnul(p, '/');
                last = !*e;
                *e = 0;

                if (last) {
                        fd = openat(at, p, flags | O_CLOEXEC | O_NOFOLLOW);
                        if (fd < 0)
                                return refine_symlink_error(at, p, -errno);
                        if (flags & O_PATH) {
                                struct stat st;

                                /* O_PATH|O_NOFOLLOW opens a symlink itself. */
                                if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
                                        safe_close(fd);
                                        return -ELOOP;
                                }
                        }
                        return fd;
                }

                fd = openat(at, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0)
                        return refine_symlink_error(at, p, -errno);
                safe_close(cur);
                cur = fd;
                p = e + 1;
        }
}

int bw_cg_openat_beneath(int dirfd, const char *path, int flags, bool allow_openat2) {
        const char *rel;
        int r;

        r = bw_cg_path_validate(path);
        if (r < 0)
                return r;

        rel = path[0] == '/' ? path + 1 : path;
        if (!*rel)
                rel = ".";

        if (allow_openat2) {
                r = openat2_beneath(dirfd, rel, flags);
                if (r != -ENOSYS && r != -EPERM)
                        return r;
        }

        return walk_beneath(dirfd, rel, flags);
}

