/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One governed cgroup: the handle with its directories and files held open
 * (a released file is opened again on its next read), whether it is still
 * the same cgroup, and reads of usage, pressure, bandwidth and ancestors' quotas
 * (contracts in include/bwgov/cgroup/cgroupfs.h). Path confinement beneath a root
 * is cgroupfs-path.c's, the one ordered write path cgroupfs-write.c's, the
 * usage file alone cgroupfs-usage.c's, finding the roots cgroupfs-mount.c's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include <libcgroup.h>

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"

#include "cgroupfs-files.h"
#include "bwgov/cgroup/cgroupfs-path.h"

void bw_cg_free(struct bw_cg *cg) {
        if (!cg)
                return;

        /* In V2 v2_dirfd is bw_dirfd. */
        const int fds[] = { cg->bw_dirfd, cg->v2_dirfd, cg->stat_fd, cg->local_fd, cg->usage_fd, cg->pressure_fd,
                            cg->quota_fd };

        close_distinct(fds, ELEMENTSOF(fds));
        free(cg);
}

static void bw_cg_freep(struct bw_cg **cg) {
        bw_cg_free(*cg);
}

/* pread the whole of a small file from offset 0. A file that fills the buffer
 * is reported as -EFBIG, not parsed half. An unlinked file (st_nlink 0, what a
 * removed directory leaves behind on ordinary filesystems; kernfs fails the
 * read with ENODEV itself) counts as vanished. */
static int read_fd(const struct bw_cg *cg, int fd, bool check_unlinked, char *buf, size_t size, size_t *ret_len) {
        struct stat st;
        ssize_t n;

        n = pread(fd, buf, size, 0);
        if (n < 0)
                return -errno;
        if ((size_t) n >= size)
                return -EFBIG;

        /* On kernfs the read itself failed (a syscall less per read); the
         * light samples of a fixture tree leave the check to the full ones. */
        if (cg->kernfs || !check_unlinked) {
                *ret_len = (size_t) n;
                return 0;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_nlink == 0)
                return -ENODEV;

        *ret_len = (size_t) n;
        return 0;
}

/* Read without touching the file's atime where the daemon may (it owns
 * the file, or has CAP_FOWNER): a read then dirties no inode. cgroupfs
 * keeps no atime of its own; an ordinary filesystem (a fixture) does. */
static int open_file(int dirfd, const char *name) {
        int fd;

        fd = openat(dirfd, name, O_RDONLY|O_CLOEXEC|O_NOFOLLOW|O_NOCTTY|O_NOATIME);
        if (fd < 0 && errno == EPERM)
                fd = openat(dirfd, name, O_RDONLY|O_CLOEXEC|O_NOFOLLOW|O_NOCTTY);
        if (fd < 0)
                return -errno;
        return fd;
}

/* Open an optional file: -1 when it does not exist. */
static int open_file_optional(int dirfd, const char *name, int *ret_fd) {
        int fd;

        fd = open_file(dirfd, name);
        if (fd == -ENOENT)
                fd = -1;
        else if (fd < 0)
                return fd;

        *ret_fd = fd;
        return 0;
}

/* Open the directory of cg's path beneath ROOTFD; 1 and the fd in *ret
 * when it is the one of DEV and INO, 0 when the path names another one or
 * none, or a negative errno. */
static int open_same_dir(int rootfd, const char *path, dev_t dev, ino_t ino, int *ret) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = bw_cg_openat_beneath(rootfd, path, O_PATH|O_DIRECTORY, true);
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_dev != dev || st.st_ino != ino)
                return 0;
        if (ret)
                *ret = TAKE_FD(fd);
        return 1;
}

int bw_cg_same(const struct bw_cg_root *root, const struct bw_cg *cg) {
        if (!root || !cg || root->bw_fd < 0)
                return -EINVAL;
        return open_same_dir(root->bw_fd, cg->path, cg->bw_dev, cg->bw_ino, NULL);
}

/* The identity of the directory at FD, kept for opening it again. */
static int dir_identity(int fd, dev_t *ret_dev, ino_t *ret_ino) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        *ret_dev = st.st_dev;
        *ret_ino = st.st_ino;
        return 0;
}

/* HYBRID: the v2 twin's directory, its usage (cpu.stat) and pressure, all
 * or none: 1 found, 0 none there (or no v2 tree), or a negative errno. cg
 * is changed only when found. */
static int open_twin(struct bw_cg *cg, const struct bw_cg_root *root, const char *rel) {
        _cleanup_close_ int fd = -EBADF, usage_fd = -EBADF, pressure_fd = -EBADF;
        dev_t dev = 0;
        ino_t ino = 0;
        int r;

        if (root->v2_fd < 0)
                return 0;
        fd = bw_cg_openat_beneath(root->v2_fd, rel, O_PATH|O_DIRECTORY, true);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        r = dir_identity(fd, &dev, &ino);
        if (r < 0)
                return r;
        r = open_file_optional(fd, CPU_STAT, &usage_fd);
        if (r < 0)
                return r;
        r = open_file_optional(fd, CPU_PRESSURE, &pressure_fd);
        if (r < 0)
                return r;

        cg->v2_dirfd = TAKE_FD(fd);
        cg->v2_dev = dev;
        cg->v2_ino = ino;
        cg->usage_fd = TAKE_FD(usage_fd);
        cg->pressure_fd = TAKE_FD(pressure_fd);
        cg->has_v2 = true;
        return 1;
}

int bw_cg_find_twin(struct bw_cg *cg) {
        if (!cg || !cg->root)
                return -EINVAL;
        if (cg->layout != BW_CG_LAYOUT_HYBRID || cg->has_v2)
                return 0;
        return open_twin(cg, cg->root, cg->path);
}

/* The files beside the bandwidth tree's: the v2 twin (HYBRID), cpuacct
 * (V1), pressure. */
static int open_usage_and_pressure(struct bw_cg *cg, const struct bw_cg_root *root, const char *rel) {
        int r;

        switch (root->layout) {
        case BW_CG_LAYOUT_V2:
                cg->v2_dirfd = cg->bw_dirfd;
                cg->has_v2 = true;
                cg->v2_dev = cg->bw_dev;
                cg->v2_ino = cg->bw_ino;
                r = open_file_optional(cg->v2_dirfd, CPU_PRESSURE, &cg->pressure_fd);
                if (r < 0)
                        return r;
                break;

        case BW_CG_LAYOUT_HYBRID:
                /* The twin may be missing: no PSI and no usage then, but
                 * bandwidth still works (bw_cg_find_twin() looks again). */
                r = open_twin(cg, root, rel);
                if (r < 0)
                        return r;
                break;

        case BW_CG_LAYOUT_V1:
                /* cpu,cpuacct comounted: the cpu directory has the usage. */
                r = open_file_optional(cg->bw_dirfd, CPUACCT_USAGE, &cg->usage_fd);
                if (r < 0)
                        return r;
                if (cg->usage_fd < 0 && root->acct_fd >= 0 && root->acct_fd != root->bw_fd) {
                        _cleanup_close_ int afd = -1;

                        afd = bw_cg_openat_beneath(root->acct_fd, rel, O_PATH|O_DIRECTORY, true);
                        if (afd >= 0) {
                                r = open_file_optional(afd, CPUACCT_USAGE, &cg->usage_fd);
                                if (r < 0)
                                        return r;
                                /* Its directory is not kept: no reopening. */
                                cg->pinned |= BW_CG_FILE_USAGE;
                        } else if (afd != -ENOENT)
                                return afd;
                }
                break;

        case BW_CG_LAYOUT_UNKNOWN:
        default:
                return -EINVAL;
        }
        return 0;
}

int bw_cg_open(const struct bw_cg_root *root, const char *path, struct bw_cg **ret) {
        _cleanup_(bw_cg_freep) struct bw_cg *cg = NULL;
        const char *rel;
        int fd, r;

        if (!root || !ret)
                return -EINVAL;

        r = bw_cg_path_validate(path);
        if (r < 0)
                return r;
        if (root->bw_fd < 0 || root->layout == BW_CG_LAYOUT_UNKNOWN)
                return -EINVAL;

        rel = path[0] == '/' ? path + 1 : path;

        cg = calloc(1, sizeof(*cg) + strlen(rel) + 1);
        if (!cg)
                return -ENOMEM;
        strcpy(cg->path, rel);
        cg->bw_dirfd = cg->v2_dirfd = cg->stat_fd = cg->local_fd = cg->usage_fd = cg->pressure_fd = cg->quota_fd = -1;
        cg->layout = root->layout;
        cg->root = root;

        fd = bw_cg_openat_beneath(root->bw_fd, rel, O_PATH|O_DIRECTORY, true);
        if (fd < 0)
                return fd;
        cg->bw_dirfd = fd;
        r = dir_identity(fd, &cg->bw_dev, &cg->bw_ino);
        if (r < 0)
                return r;
        {
                struct statfs sfs;

                cg->kernfs = fstatfs(fd, &sfs) >= 0 &&
                        (sfs.f_type == CGROUP_SUPER_MAGIC || sfs.f_type == CGROUP2_SUPER_MAGIC);
        }

        /* Without its bandwidth file the directory is not governable: the cpu
         * controller is not enabled for it (v2) or this is not a cpu
         * hierarchy. */
        if (faccessat(cg->bw_dirfd, bw_cg_quota_name(cg),
                      F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? -EOPNOTSUPP : -errno;
        /* Held: read on every sample (an external write is seen at once),
         * one pread instead of an open, read and close. */
        fd = open_file(cg->bw_dirfd, bw_cg_quota_name(cg));
        if (fd < 0)
                return fd;
        cg->quota_fd = fd;

        fd = open_file(cg->bw_dirfd, CPU_STAT);
        if (fd < 0)
                return fd;
        cg->stat_fd = fd;

        /* Kernels before 6.6 have no cpu.stat.local. */
        r = open_file_optional(cg->bw_dirfd, CPU_STAT_LOCAL, &cg->local_fd);
        if (r < 0)
                return r;

        r = open_usage_and_pressure(cg, root, rel);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(cg);
        return 0;
}

/* ---- held and released files ------------------------------------------------- */

static int *file_slot(struct bw_cg *cg, unsigned file) {
        switch (file) {
        case BW_CG_FILE_STAT:     return &cg->stat_fd;
        case BW_CG_FILE_LOCAL:    return &cg->local_fd;
        case BW_CG_FILE_USAGE:    return &cg->usage_fd;
        case BW_CG_FILE_PRESSURE: return &cg->pressure_fd;
        case BW_CG_FILE_QUOTA:    return &cg->quota_fd;
        default:                  return NULL;
        }
}

int bw_cg_dir(struct bw_cg *cg, enum bw_cg_tree tree) {
        bool v2 = tree == BW_CG_TREE_V2 && cg->layout != BW_CG_LAYOUT_V2;
        int *slot = v2 ? &cg->v2_dirfd : &cg->bw_dirfd, fd = -EBADF, rootfd, r;

        if (tree == BW_CG_TREE_V2 && !cg->has_v2)
                return -EOPNOTSUPP;
        if (*slot >= 0)
                return *slot;
        rootfd = v2 ? cg->root->v2_fd : cg->root->bw_fd;
        if (rootfd < 0)
                return -EBADF;
        r = open_same_dir(rootfd, cg->path, v2 ? cg->v2_dev : cg->bw_dev, v2 ? cg->v2_ino : cg->bw_ino, &fd);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENODEV;         /* removed, or removed and made again */
        *slot = fd;
        if (cg->layout == BW_CG_LAYOUT_V2)
                cg->v2_dirfd = fd;
        return fd;
}

/* Open NAME beneath the directory of TREE. */
static int open_in(struct bw_cg *cg, enum bw_cg_tree tree, const char *name) {
        int dfd = bw_cg_dir(cg, tree);

        return dfd < 0 ? dfd : open_file(dfd, name);
}

/* Where a released file is opened again from. */
static int file_reopen(struct bw_cg *cg, unsigned file) {
        switch (file) {
        case BW_CG_FILE_STAT:
                return open_in(cg, BW_CG_TREE_BW, CPU_STAT);
        case BW_CG_FILE_LOCAL:
                return open_in(cg, BW_CG_TREE_BW, CPU_STAT_LOCAL);
        case BW_CG_FILE_USAGE:
                return cg->layout == BW_CG_LAYOUT_HYBRID ? open_in(cg, BW_CG_TREE_V2, CPU_STAT) :
                        open_in(cg, BW_CG_TREE_BW, CPUACCT_USAGE);
        case BW_CG_FILE_PRESSURE:
                return open_in(cg, BW_CG_TREE_V2, CPU_PRESSURE);
        case BW_CG_FILE_QUOTA:
                return open_in(cg, BW_CG_TREE_BW, bw_cg_quota_name(cg));
        default:
                return -EINVAL;
        }
}

/* The file's fd, opened again if it was released; -1 when the cgroup has
 * no such file, a negative errno when reopening failed (-ENOENT: the
 * cgroup vanished). */
static int file_fd(struct bw_cg *cg, unsigned file) {
        int *slot = file_slot(cg, file), fd;

        if (*slot >= 0 || !(cg->released & file))
                return *slot;
        fd = file_reopen(cg, file);
        if (fd < 0)
                return fd;
        cg->released &= ~file;
        *slot = fd;
        return fd;
}

unsigned bw_cg_release(struct bw_cg *cg, unsigned files) {
        unsigned n = 0;

        files &= ~cg->pinned;
        for (unsigned f = 1; f < _BW_CG_FILE_ALL; f <<= 1) {
                int *slot = file_slot(cg, f);

                if (!(files & f) || !slot || *slot < 0)
                        continue;
                close(*slot);
                *slot = -1;
                cg->released |= f;
                n++;
        }
        if (!(files & BW_CG_DIRS))
                return n;
        if (cg->v2_dirfd >= 0 && cg->v2_dirfd != cg->bw_dirfd) {
                close(cg->v2_dirfd);
                n++;
        }
        if (cg->bw_dirfd >= 0) {
                close(cg->bw_dirfd);
                n++;
        }
        cg->bw_dirfd = cg->v2_dirfd = -1;
        return n;
}

bool bw_cg_has(const struct bw_cg *cg, unsigned file) {
        int *slot = file_slot((struct bw_cg *) cg, file);

        return slot && (*slot >= 0 || (cg->released & file));
}

bool bw_cg_holds(const struct bw_cg *cg, unsigned file) {
        int *slot = file_slot((struct bw_cg *) cg, file);

        return slot && *slot >= 0;
}

const char *bw_cg_quota_name(const struct bw_cg *cg) {
        return cg->layout == BW_CG_LAYOUT_V2 ? V2_MAX : V1_QUOTA;
}

unsigned bw_cg_nfds(const struct bw_cg *cg) {
        const int fds[] = { cg->bw_dirfd, cg->v2_dirfd != cg->bw_dirfd ? cg->v2_dirfd : -1, cg->stat_fd,
                            cg->local_fd, cg->usage_fd, cg->pressure_fd, cg->quota_fd };
        unsigned n = 0;

        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                n += fds[i] >= 0;
        return n;
}

/* Add cpu.stat.local to *st when the cgroup has one. The file is optional:
 * content the parser refuses, or too much of it, leaves
 * BW_CPUSTAT_LOCAL_THROTTLED clear rather than failing the sample; errors
 * reading it (a vanished cgroup among them) are returned. */
static int read_local(struct bw_cg *cg, struct bw_cpu_stat *st) {
        char buf[CG_READ_MAX];
        size_t len;
        uint64_t usec;
        int fd, r;

        fd = file_fd(cg, BW_CG_FILE_LOCAL);
        if (fd == -1)
                return 0;
        if (fd < 0)
                return fd;
        r = read_fd(cg, fd, true, buf, sizeof(buf), &len);
        if (r == -EFBIG)
                return 0;
        if (r < 0)
                return r;

        if (cg->layout == BW_CG_LAYOUT_V2)
                r = bw_cpustat_local_parse_v2(buf, len, &usec);
        else
                r = bw_cpustat_local_parse_v1(buf, len, &usec);
        if (r < 0)
                return 0;

        st->local_throttled_usec = usec;
        st->seen |= BW_CPUSTAT_LOCAL_THROTTLED;
        return 0;
}

/* The usage file of a v1 bandwidth tree (the twin's cpu.stat in HYBRID,
 * cpuacct.usage in V1) into st: 0 (nothing set without one) or an error. */
static int read_usage(struct bw_cg *cg, bool check, struct bw_cpu_stat *st) {
        struct bw_cpu_stat twin;
        char buf[CG_READ_MAX];
        size_t len;
        int fd, r;

        fd = file_fd(cg, BW_CG_FILE_USAGE);
        if (fd < -1)
                return fd;
        if (fd < 0)
                return 0;
        r = read_fd(cg, fd, check, buf, sizeof(buf), &len);
        if (r < 0)
                return r;
        if (cg->layout != BW_CG_LAYOUT_HYBRID) {
                r = bw_cpuacct_usage_parse(buf, len, &st->usage_usec);
                if (r < 0)
                        return r;
                st->seen |= BW_CPUSTAT_USAGE;
                return 0;
        }
        r = bw_cpustat_parse_v2(buf, len, &twin);
        if (r < 0)
                return r;
        st->usage_usec = twin.usage_usec;
        st->seen |= twin.seen & (BW_CPUSTAT_USAGE|BW_CPUSTAT_USER|BW_CPUSTAT_SYSTEM);
        return 0;
}

static int read_stat(struct bw_cg *cg, bool local, struct bw_cpu_stat *ret) {
        struct bw_cpu_stat st = { 0 };
        char buf[CG_READ_MAX];
        size_t len;
        int fd, r;

        if (!cg || !ret)
                return -EINVAL;

        fd = file_fd(cg, BW_CG_FILE_STAT);
        if (fd < 0)
                return fd == -1 ? -EBADF : fd;
        r = read_fd(cg, fd, local, buf, sizeof(buf), &len);
        if (r < 0)
                return r;

        if (cg->layout == BW_CG_LAYOUT_V2) {
                r = bw_cpustat_parse_v2(buf, len, &st);
                if (r < 0)
                        return r;
                r = local ? read_local(cg, &st) : 0;
                if (r < 0)
                        return r;
                *ret = st;
                return 0;
        }

        r = bw_cpustat_parse_v1(buf, len, &st);
        if (r < 0)
                return r;

        r = read_usage(cg, local, &st);
        if (r < 0)
                return r;

        r = local ? read_local(cg, &st) : 0;
        if (r < 0)
                return r;

        *ret = st;
        return 0;
}

int bw_cg_read_stat(struct bw_cg *cg, struct bw_cpu_stat *ret) {
        return read_stat(cg, true, ret);
}

int bw_cg_read_stat_light(struct bw_cg *cg, struct bw_cpu_stat *ret) {
        return read_stat(cg, false, ret);
}

int bw_cg_read_usage(struct bw_cg *cg, struct bw_cpu_stat *ret) {
        struct bw_cpu_stat st = { 0 };
        int r;

        if (!cg || !ret)
                return -EINVAL;
        if (cg->layout == BW_CG_LAYOUT_V2 || !bw_cg_has(cg, BW_CG_FILE_USAGE))
                return -EOPNOTSUPP;
        r = read_usage(cg, false, &st);
        if (r < 0)
                return r;
        *ret = st;
        return 0;
}

int bw_cg_read_usage_any(struct bw_cg *cg, struct bw_cpu_stat *ret) {
        int r;

        r = bw_cg_read_usage(cg, ret);
        if (r == -EOPNOTSUPP)
                r = bw_cg_read_stat_light(cg, ret);
        return r;
}

int bw_cg_read_pressure(struct bw_cg *cg, struct bw_psi *ret) {
        char buf[CG_READ_MAX];
        size_t len;
        int fd, r;

        if (!cg || !ret)
                return -EINVAL;
        fd = file_fd(cg, BW_CG_FILE_PRESSURE);
        if (fd == -1)
                return -EOPNOTSUPP;
        if (fd < 0)
                return fd;
        r = read_fd(cg, fd, true, buf, sizeof(buf), &len);
        if (r < 0)
                return r;

        return bw_psi_parse(buf, len, ret);
}

/* Open, read and close the small file NAME beneath DIRFD (never following a
 * symlink) and PARSE it into *RET. Returns 0, -EFBIG when it fills
 * CG_READ_MAX, the parser's error, or another negative errno. */
static int read_u64_at(int dirfd, const char *name, int (*parse)(const char *, size_t, uint64_t *),
                       uint64_t *ret) {
        char buf[CG_READ_MAX];
        ssize_t n;

        n = bw_read_small_at(dirfd, name, O_NOFOLLOW, buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        return parse(buf, (size_t) n, ret);
}

/* Read an optional burst file: *ret_has false when the kernel lacks it. */
int bw_cg_read_burst(struct bw_cg *cg, uint64_t *ret_usec, bool *ret_has) {
        uint64_t v;
        int dfd, r;

        dfd = bw_cg_dir(cg, BW_CG_TREE_BW);
        if (dfd < 0)
                return dfd;
        r = read_u64_at(dfd, cg->layout == BW_CG_LAYOUT_V2 ? V2_BURST : V1_BURST, bw_u64_parse, &v);
        if (r == -ENOENT) {
                /* Tell "no burst support" from "the cgroup is gone". */
                if (faccessat(dfd, CPU_STAT, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                *ret_usec = 0;
                *ret_has = false;
                return 0;
        }
        if (r < 0)
                return r;

        *ret_usec = v;
        *ret_has = true;
        return 0;
}

/* Quota and period from the bandwidth files in DIRFD: cpu.max in V2, else
 * cpu.cfs_quota_us and cpu.cfs_period_us (the v1 period is not range-checked).
 * Each file is opened, read and closed. */
static int read_quota_period(int dirfd, enum bw_cg_layout layout, uint64_t *ret_quota_usec,
                             uint64_t *ret_period_usec) {
        uint64_t quota, period;
        int r;

        if (layout == BW_CG_LAYOUT_V2) {
                char buf[CG_READ_MAX];
                ssize_t n;

                n = bw_read_small_at(dirfd, V2_MAX, O_NOFOLLOW, buf, sizeof(buf));
                if (n < 0)
                        return (int) n;
                r = bw_cpumax_parse(buf, (size_t) n, &quota, &period);
        } else {
                r = read_u64_at(dirfd, V1_QUOTA, bw_cfs_quota_parse, &quota);
                if (r >= 0)
                        r = read_u64_at(dirfd, V1_PERIOD, bw_u64_parse, &period);
        }
        if (r < 0)
                return r;

        *ret_quota_usec = quota;
        *ret_period_usec = period;
        return 0;
}

static int read_quota(struct bw_cg *cg, bool check, uint64_t *ret_quota_usec, uint64_t *ret_period_usec) {
        char buf[CG_READ_MAX];
        uint64_t quota, period = 0;
        size_t len;
        int fd, r;

        if (!cg || !ret_quota_usec || !ret_period_usec)
                return -EINVAL;
        fd = file_fd(cg, BW_CG_FILE_QUOTA);
        if (fd < 0)
                return fd == -1 ? -EBADF : fd;
        r = read_fd(cg, fd, check, buf, sizeof(buf), &len);
        if (r < 0)
                return r;
        if (cg->layout == BW_CG_LAYOUT_V2)
                r = bw_cpumax_parse(buf, len, &quota, &period);
        else
                r = bw_cfs_quota_parse(buf, len, &quota);
        if (r < 0)
                return r;
        *ret_quota_usec = quota;
        *ret_period_usec = period;
        return 0;
}

int bw_cg_read_quota(struct bw_cg *cg, uint64_t *ret_quota_usec, uint64_t *ret_period_usec) {
        return read_quota(cg, false, ret_quota_usec, ret_period_usec);
}

int bw_cg_read_bandwidth(struct bw_cg *cg, struct bw_bandwidth *ret) {
        struct bw_bandwidth bw = { 0 };
        uint64_t period;
        int r;

        if (!cg || !ret)
                return -EINVAL;

        r = read_quota(cg, true, &bw.quota_usec, &period);
        if (r >= 0 && cg->layout != BW_CG_LAYOUT_V2) {
                r = bw_cg_dir(cg, BW_CG_TREE_BW);
                if (r >= 0)
                        r = read_u64_at(r, V1_PERIOD, bw_u64_parse, &period);
        }
        if (r < 0)
                return r;
        if (period > UINT32_MAX)
                return -ERANGE;         /* the kernel allows up to 1 s */
        bw.period_usec = (uint32_t) period;

        r = bw_cg_read_burst(cg, &bw.burst_usec, &bw.has_burst);
        if (r < 0)
                return r;

        *ret = bw;
        return 0;
}

/* Is cg's directory still there? 0, or -ENOENT once it was removed (its
 * dirfd then finds nothing; -ENODEV when released and made again), another
 * negative errno. */
static int cg_check_alive(struct bw_cg *cg) {
        int dfd = bw_cg_dir(cg, BW_CG_TREE_BW);

        if (dfd < 0)
                return dfd;
        if (faccessat(dfd, bw_cg_quota_name(cg), F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        return 0;
}

int bw_cg_read_ancestor_quota(const struct bw_cg_root *root, struct bw_cg *cg, uint64_t period_usec,
                              uint64_t *ret_quota_usec, char **ret_path) {
        __extension__ typedef unsigned __int128 u128;
        _cleanup_free_ char *path = NULL;
        uint64_t quota = BW_QUOTA_MAX, period = 0;
        char *slash;
        int r;

        if (!root || !cg || !ret_quota_usec)
                return -EINVAL;
        if (period_usec < BW_PERIOD_MIN_USEC || period_usec > BW_PERIOD_MAX_USEC)
                return -EINVAL;
        if (root->bw_fd < 0 || root->layout != cg->layout)
                return -EINVAL;

        path = strdup(cg->path);
        if (!path)
                return -ENOMEM;

        /* Cut one component at a time: "a/b/c" asks "a/b", then "a"; the
         * root ("") is never asked. */
        while ((slash = strrchr(path, '/'))) {
                _cleanup_close_ int dfd = -1;

                *slash = 0;

                dfd = bw_cg_openat_beneath(root->bw_fd, path, O_PATH|O_DIRECTORY, true);
                if (dfd < 0)
                        return dfd;

                r = read_quota_period(dfd, cg->layout, &quota, &period);
                if (r == -ENOENT) {
                        /* No bandwidth file: no limit at this level. If the
                         * directory went away instead, cg went before it and
                         * the check below says so. */
                        quota = BW_QUOTA_MAX;
                        continue;
                }
                if (r < 0)
                        return r;
                if (quota != BW_QUOTA_MAX)
                        break;
        }

        r = cg_check_alive(cg);
        if (r < 0)
                return r;

        if (quota == BW_QUOTA_MAX) {
                *ret_quota_usec = BW_QUOTA_MAX;
                if (ret_path)
                        *ret_path = NULL;
                return 0;
        }

        /* cpu.max's parser checked the period, the v1 one is a bare number. */
        if (period < BW_PERIOD_MIN_USEC || period > BW_PERIOD_MAX_USEC)
                return -ERANGE;

        /* quota < 2^44 and period_usec <= 10^6: the product just fits 64
         * bits; 128 bits make that nothing to check. The result is at most
         * 1000 times the quota. */
        quota = (uint64_t) ((u128) quota * period_usec / period);
        *ret_quota_usec = quota < BW_QUOTA_MIN_USEC ? BW_QUOTA_MIN_USEC : quota;
        if (ret_path)
                *ret_path = TAKE_PTR(path);
        return 1;
}
