/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Mount and hierarchy discovery: /proc/self/mountinfo, cgroup.controllers,
 * the v2 / hybrid / v1 layout, and the root directories every governed
 * cgroup is opened beneath (contracts in include/bwgov/cgroup/cgroupfs-mount.h). */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include <libcgroup.h>

#include "bwgov/cgroup/cgroupfs-mount.h"
#include "bwgov/util/child.h"
#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"
#include "cgroupfs-files.h"

/* cgroup.controllers lists a few dozen short names; one page is plenty. */
#define CONTROLLERS_READ_MAX 4096

const char *bw_cg_layout_to_string(enum bw_cg_layout l) {
        switch (l) {
        case BW_CG_LAYOUT_V2:
                return "v2";
        case BW_CG_LAYOUT_HYBRID:
                return "hybrid";
        case BW_CG_LAYOUT_V1:
                return "v1";
        case BW_CG_LAYOUT_UNKNOWN:
        default:
                return "unknown";
        }
}

void bw_cg_mounts_done(struct bw_cg_mounts *m) {
        if (!m)
                return;

        free_many(m->v2, m->cpu, m->cpuacct, m->freezer, m->cpuset);
        *m = (struct bw_cg_mounts) { 0 };
}

/* mountinfo escapes space, tab, newline and backslash as \ooo (octal). */
static int mountinfo_unescape(const char *s, char **ret) {
        _cleanup_free_ char *out = NULL;
        char *o;

        out = malloc(strlen(s) + 1);
        if (!out)
                return -ENOMEM;

        o = out;
        while (*s) {
                if (s[0] == '\\' &&
                    s[1] >= '0' && s[1] <= '3' &&
                    s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        unsigned v = (unsigned) (s[1] - '0') << 6 |
                                     (unsigned) (s[2] - '0') << 3 |
                                     (unsigned) (s[3] - '0');
                        if (v == 0)
                                return -EINVAL;
                        *o++ = (char) v;
                        s += 4;
                } else
                        *o++ = *s++;
        }
        *o = 0;

        *ret = TAKE_PTR(out);
        return 0;
}

/* True if the list S, whose items are separated by any of SEPS, holds an
 * item that is exactly WORD. */
static bool list_has(const char *s, const char *seps, const char *word) {
        size_t n = strlen(word);

        for (;;) {
                size_t l;

                s += strspn(s, seps);
                if (!*s)
                        return false;
                l = strcspn(s, seps);
                if (l == n && memcmp(s, word, n) == 0)
                        return true;
                s += l;
        }
}

/* The fields of one mountinfo line that matter here. */
struct mountinfo_line {
        const char *mount_point;
        const char *fstype;
        const char *super_opts;
};

/* Split LINE (modified in place) per proc(5): ID PARENT MAJ:MIN ROOT
 * MOUNT-POINT MOUNT-OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER-OPTIONS. */
static int mountinfo_split(char *line, struct mountinfo_line *ret) {
        const char *fields[6], *tail[3];
        size_t nf = 0, nt = 0;
        bool sep = false;
        char *p = line;

        for (;;) {
                char *tok = p;
                char *e = strchrnul(p, ' ');
                bool last = !*e;

                *e = 0;
                if (!*tok)
                        return -EINVAL; /* empty field: double blank or stray blank */

                if (nf < ELEMENTSOF(fields))
                        fields[nf++] = tok;
                else if (!sep) {
                        if (strcmp(tok, "-") == 0)
                                sep = true;
                        /* else: an optional field (shared:N, master:N, ...) */
                } else if (nt < ELEMENTSOF(tail))
                        tail[nt++] = tok;
                /* anything after the super options is ignored */

                if (last)
                        break;
                p = e + 1;
        }

        if (nf < ELEMENTSOF(fields) || !sep || nt < ELEMENTSOF(tail))
                return -EINVAL;
        if (fields[4][0] != '/')
                return -EINVAL;

        *ret = (struct mountinfo_line) {
                .mount_point = fields[4],
                .fstype = tail[0],
                .super_opts = tail[2],
        };
        return 0;
}

int bw_cg_mounts_parse(FILE *f, struct bw_cg_mounts *ret) {
        _cleanup_free_ char *line = NULL;
        struct bw_cg_mounts m = { 0 };
        size_t size = 0;
        int r;

        if (!f || !ret)
                return -EINVAL;

        for (;;) {
                struct mountinfo_line ml;
                char **slot[4] = { NULL, NULL, NULL, NULL };
                ssize_t n;

                errno = 0;
                n = getline(&line, &size, f);
                if (n < 0) {
                        if (ferror(f)) {
                                r = errno > 0 ? -errno : -EIO;
                                goto fail;
                        }
                        break;
                }
                if (n > 0 && line[n - 1] == '\n')
                        line[--n] = 0;
                if (n == 0)
                        continue;
                if (strlen(line) != (size_t) n) {
                        r = -EINVAL; /* embedded NUL */
                        goto fail;
                }

                r = mountinfo_split(line, &ml);
                if (r < 0)
                        goto fail;

                if (strcmp(ml.fstype, "cgroup2") == 0) {
                        if (!m.v2)
                                slot[0] = &m.v2;
                } else if (strcmp(ml.fstype, "cgroup") == 0) {
                        /* The first mount of a controller wins; later ones
                         * are bind mounts of the same hierarchy. */
                        if (!m.cpu && list_has(ml.super_opts, ",", "cpu"))
                                slot[0] = &m.cpu;
                        if (!m.cpuacct && list_has(ml.super_opts, ",", "cpuacct"))
                                slot[1] = &m.cpuacct;
                        if (!m.freezer && list_has(ml.super_opts, ",", "freezer"))
                                slot[2] = &m.freezer;
                        if (!m.cpuset && list_has(ml.super_opts, ",", "cpuset"))
                                slot[3] = &m.cpuset;
                }

                for (size_t i = 0; i < ELEMENTSOF(slot); i++) {
                        if (!slot[i])
                                continue;
                        r = mountinfo_unescape(ml.mount_point, slot[i]);
                        if (r < 0)
                                goto fail;
                }
        }

        *ret = m;
        return 0;

fail:
        bw_cg_mounts_done(&m);
        return r;
}

enum bw_cg_layout bw_cg_layout_from_mounts(const struct bw_cg_mounts *m) {
        if (!m)
                return BW_CG_LAYOUT_UNKNOWN;

        /* A controller is bound to one hierarchy at a time: either the v2
         * tree lists it, or a v1 mount carries it. */
        if (m->v2 && m->v2_has_cpu)
                return BW_CG_LAYOUT_V2;
        if (m->cpu && m->v2)
                return BW_CG_LAYOUT_HYBRID;
        if (m->cpu)
                return BW_CG_LAYOUT_V1;
        return BW_CG_LAYOUT_UNKNOWN;
}

/* Does the cgroup2 directory at dirfd list the cpu controller? 1, 0 or
 * negative errno. */
static int controllers_have_cpu(int dirfd) {
        char buf[CONTROLLERS_READ_MAX];
        ssize_t n;

        n = bw_read_small_at(dirfd, "cgroup.controllers", O_NOFOLLOW, buf, sizeof(buf));
        if (n < 0)
                return (int) n;

        return list_has(buf, " \t\n", "cpu");
}

static int open_root_dir(int atfd, const char *path) {
        int fd;

        fd = openat(atfd, path, O_PATH|O_DIRECTORY|O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return fd;
}

static struct bw_cg_root *root_new(void) {
        struct bw_cg_root *r;

        r = calloc(1, sizeof(*r));
        if (!r)
                return NULL;

        r->bw_fd = r->v2_fd = r->acct_fd = r->freezer_fd = r->cpuset_fd = -1;
        r->libcgroup_check = -ENOTSUP;
        return r;
}

void bw_cg_root_free(struct bw_cg_root *r) {
        if (!r)
                return;

        /* v2_fd is bw_fd in V2, acct_fd is bw_fd with cpu,cpuacct comounted. */
        const int fds[] = { r->bw_fd, r->v2_fd, r->acct_fd, r->freezer_fd, r->cpuset_fd };

        close_distinct(fds, ELEMENTSOF(fds));
        free(r->bw_path);
        free(r->v2_path);
        free(r);
}

static void bw_cg_root_freep(struct bw_cg_root **r) {
        bw_cg_root_free(*r);
}

int bw_cg_root_open_mounts(const struct bw_cg_mounts *m, struct bw_cg_root **ret) {
        _cleanup_(bw_cg_root_freep) struct bw_cg_root *root = NULL;
        enum bw_cg_layout layout;
        const char *bw_mount;
        int fd;

        if (!m || !ret)
                return -EINVAL;

        layout = bw_cg_layout_from_mounts(m);
        if (layout == BW_CG_LAYOUT_UNKNOWN)
                return -EOPNOTSUPP;

        root = root_new();
        if (!root)
                return -ENOMEM;
        root->layout = layout;

        bw_mount = layout == BW_CG_LAYOUT_V2 ? m->v2 : m->cpu;
        root->bw_path = strdup(bw_mount);
        if (!root->bw_path)
                return -ENOMEM;
        fd = open_root_dir(AT_FDCWD, bw_mount);
        if (fd < 0)
                return fd;
        root->bw_fd = fd;

        if (layout == BW_CG_LAYOUT_V2)
                root->v2_fd = root->bw_fd;
        else if (layout == BW_CG_LAYOUT_HYBRID) {
                fd = open_root_dir(AT_FDCWD, m->v2);
                if (fd < 0)
                        return fd;
                root->v2_fd = fd;
        }
        if (root->v2_fd >= 0) {
                root->v2_path = strdup(m->v2);
                if (!root->v2_path)
                        return -ENOMEM;
        }

        /* V1 usage: a separate cpuacct hierarchy. When comounted with cpu,
         * cpuacct.usage sits in the cpu directory and bw_cg_open() finds it
         * there first. */
        if (layout == BW_CG_LAYOUT_V1 && m->cpuacct) {
                if (m->cpu && strcmp(m->cpu, m->cpuacct) == 0)
                        root->acct_fd = root->bw_fd;
                else {
                        fd = open_root_dir(AT_FDCWD, m->cpuacct);
                        if (fd < 0)
                                return fd;
                        root->acct_fd = fd;
                }
        }

        /* The v1 freezer and cpuset hierarchies, for the levers; a missing
         * or unopenable one only leaves those levers out. */
        if (layout != BW_CG_LAYOUT_V2) {
                if (m->freezer)
                        root->freezer_fd = open_root_dir(AT_FDCWD, m->freezer);
                if (m->cpuset)
                        root->cpuset_fd = open_root_dir(AT_FDCWD, m->cpuset);
                root->freezer_fd = root->freezer_fd < 0 ? -1 : root->freezer_fd;
                root->cpuset_fd = root->cpuset_fd < 0 ? -1 : root->cpuset_fd;
        }

        *ret = TAKE_PTR(root);
        return 0;
}

/* Map libcgroup's error codes (ECGROUP*, or errno through ECGOTHER) to a
 * negative errno, for the debug-only cross-check. */
static int libcgroup_errno(int code) {
        if (code == ECGOTHER) {
                int e = cgroup_get_last_errno();

                return e > 0 ? -e : -EIO;
        }
        if (code == ECGROUPNOTMOUNTED || code == ECGROUPSUBSYSNOTMOUNTED)
                return -ENOENT;
        return -EIO;
}

/* Ask libcgroup where the cpu controller is mounted and compare with what
 * mountinfo said. 1 agree, 0 disagree, negative errno when libcgroup failed. */
static int libcgroup_cross_check(const char *expected) {
        char *mnt = NULL;
        int r;

        r = cgroup_init();
        if (r != 0)
                return libcgroup_errno(r);

        r = cgroup_get_subsys_mount_point("cpu", &mnt);
        if (r != 0)
                return libcgroup_errno(r);

        r = mnt && expected && strcmp(mnt, expected) == 0;
        free(mnt);
        return r;
}

static bool libcgroup_in_child = false;

void bw_cg_set_libcgroup_in_child(bool b) {
        libcgroup_in_child = b;
}

static int libcgroup_call(void *userdata, void *out) {
        return libcgroup_cross_check(userdata);
}

int bw_cg_root_open_host(struct bw_cg_root **ret) {
        _cleanup_(bw_cg_mounts_done) struct bw_cg_mounts m = { 0 };
        _cleanup_fclose_ FILE *f = NULL;
        struct bw_cg_root *root;
        int r;

        if (!ret)
                return -EINVAL;

        f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return -errno;

        r = bw_cg_mounts_parse(f, &m);
        if (r < 0)
                return r;

        if (m.v2) {
                _cleanup_close_ int fd = -1;

                fd = open_root_dir(AT_FDCWD, m.v2);
                if (fd < 0)
                        return fd;
                r = controllers_have_cpu(fd);
                if (r < 0 && r != -ENOENT)
                        return r;
                m.v2_has_cpu = r > 0;
        }

        r = bw_cg_root_open_mounts(&m, &root);
        if (r < 0)
                return r;

        /* libcgroup is a second opinion only: its answer, or its failure, is
         * recorded for the caller to log at debug level and changes nothing. */
        root->libcgroup_check = libcgroup_in_child ? bw_call_in_child(libcgroup_call, root->bw_path, NULL, 0) :
                                                     libcgroup_cross_check(root->bw_path);

        *ret = root;
        return 0;
}

int bw_cg_root_open_dir(const char *dir, struct bw_cg_root **ret) {
        _cleanup_(bw_cg_root_freep) struct bw_cg_root *root = NULL;
        _cleanup_close_ int dfd = -1;
        int fd, r;

        if (!dir || !ret)
                return -EINVAL;

        dfd = open_root_dir(AT_FDCWD, dir);
        if (dfd < 0)
                return dfd;

        root = root_new();
        if (!root)
                return -ENOMEM;

        r = controllers_have_cpu(dfd);
        if (r >= 0) {
                if (r == 0)
                        return -EOPNOTSUPP;
                root->layout = BW_CG_LAYOUT_V2;
                root->bw_fd = root->v2_fd = TAKE_FD(dfd);
                root->bw_path = strdup(dir);
                root->v2_path = strdup(dir);
                if (!root->bw_path || !root->v2_path)
                        return -ENOMEM;
                *ret = TAKE_PTR(root);
                return 0;
        }
        if (r != -ENOENT)
                return r;

        fd = open_root_dir(dfd, "cpu");
        if (fd < 0)
                return fd;
        root->bw_fd = fd;
        if (asprintf(&root->bw_path, "%s/cpu", dir) < 0) {
                root->bw_path = NULL;
                return -ENOMEM;
        }

        fd = open_root_dir(dfd, "unified");
        if (fd >= 0) {
                root->layout = BW_CG_LAYOUT_HYBRID;
                root->v2_fd = fd;
                if (asprintf(&root->v2_path, "%s/unified", dir) < 0) {
                        root->v2_path = NULL;
                        return -ENOMEM;
                }
        } else if (fd == -ENOENT) {
                root->layout = BW_CG_LAYOUT_V1;
                fd = open_root_dir(dfd, "cpuacct");
                if (fd >= 0)
                        root->acct_fd = fd;
                else if (fd != -ENOENT)
                        return fd;
        } else
                return fd;

        fd = open_root_dir(dfd, "freezer");
        root->freezer_fd = fd < 0 ? -1 : fd;
        fd = open_root_dir(dfd, "cpuset");
        root->cpuset_fd = fd < 0 ? -1 : fd;

        *ret = TAKE_PTR(root);
        return 0;
}

int bw_cg_fixture_trim(int dirfd, const char *name, size_t len) {
        _cleanup_close_ int fd = -EBADF;
        struct statfs sfs;

        if (fstatfs(dirfd, &sfs) < 0 || sfs.f_type == CGROUP_SUPER_MAGIC || sfs.f_type == CGROUP2_SUPER_MAGIC)
                return 0;

        fd = openat(dirfd, name, O_WRONLY|O_CLOEXEC|O_NOFOLLOW|O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t) len) < 0)
                return -errno;
        return 0;
}
