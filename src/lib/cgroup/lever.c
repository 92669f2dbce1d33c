/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Levers: where weight, idle, freezer and cpuset live in each layout, the
 * v1 <-> v2 value mapping, and reading and writing them at the cgroup's
 * held directory fds (or, for the v1 freezer and cpuset hierarchies, a
 * directory opened beneath their root for the call). See lever.h. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/cgroup/cpulist.h"
#include "bwgov/util/fileio.h"
#include "bwgov/cgroup/lever.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"
#include "cgroupfs-files.h"
#include "util/string-util.h"
#include "bwgov/cgroup/cgroupfs-path.h"

static const char *const lever_table[_BW_LEVER_MAX] = {
        [BW_LEVER_WEIGHT] = "weight",
        [BW_LEVER_IDLE] = "idle",
        [BW_LEVER_FREEZE] = "freeze",
        [BW_LEVER_CPUS] = "cpus",
};

BW_DEFINE_STRING_TABLE(bw_lever, enum bw_lever, lever_table, _BW_LEVER_MAX, enum bw_lever, _BW_LEVER_INVALID)

/* Which directory a lever's file is in. */
enum where {
        WHERE_NONE,
        WHERE_BW,       /* the bandwidth tree's directory (bw_cg_dir()) */
        WHERE_V2,       /* the cgroup2 directory */
        WHERE_FREEZER,  /* v1 freezer hierarchy */
        WHERE_CPUSET,   /* v1 cpuset hierarchy */
};

struct place {
        enum where where;
        const char *file;
};

static struct place lever_place(enum bw_cg_layout layout, enum bw_lever l) {
        bool v2 = layout == BW_CG_LAYOUT_V2;

        switch (l) {
        case BW_LEVER_WEIGHT:
                return v2 ? (struct place) { WHERE_V2, "cpu.weight" } : (struct place) { WHERE_BW, "cpu.shares" };
        case BW_LEVER_IDLE:
                return (struct place) { v2 ? WHERE_V2 : WHERE_BW, "cpu.idle" };
        case BW_LEVER_FREEZE:
                if (layout == BW_CG_LAYOUT_V1)
                        return (struct place) { WHERE_FREEZER, "freezer.state" };
                return (struct place) { WHERE_V2, "cgroup.freeze" };
        case BW_LEVER_CPUS:
                return (struct place) { v2 ? WHERE_V2 : WHERE_CPUSET, "cpuset.cpus" };
        case _BW_LEVER_MAX:
        default:
                break;
        }
        return (struct place) { WHERE_NONE, NULL };
}

const char *bw_lever_file(enum bw_cg_layout layout, enum bw_lever l) {
        return lever_place(layout, l).file;
}

static bool v1_shares(enum bw_cg_layout layout, enum bw_lever l) {
        return l == BW_LEVER_WEIGHT && layout != BW_CG_LAYOUT_V2;
}

static bool v1_freezer(enum bw_cg_layout layout, enum bw_lever l) {
        return l == BW_LEVER_FREEZE && layout == BW_CG_LAYOUT_V1;
}

uint64_t bw_weight_from_shares(uint64_t shares) {
        uint64_t w = shares * BW_WEIGHT_DEFAULT / 1024;

        return w < BW_WEIGHT_MIN ? BW_WEIGHT_MIN : w > BW_WEIGHT_MAX ? BW_WEIGHT_MAX : w;
}

uint64_t bw_shares_from_weight(uint64_t weight) {
        uint64_t s = weight > BW_SHARES_MAX ? BW_SHARES_MAX : weight * 1024 / BW_WEIGHT_DEFAULT;

        return s < BW_SHARES_MIN ? BW_SHARES_MIN : s > BW_SHARES_MAX ? BW_SHARES_MAX : s;
}

static int parse_u64_all(const char *s, uint64_t *ret) {
        const char *p = s;
        int r;

        r = bw_parse_digits(&p, ret);
        if (r < 0)
                return r;
        while (*p == ' ' || *p == '\n')
                p++;
        return *p ? -EINVAL : 0;
}

static int put_str(char *buf, size_t n, const char *s) {
        int k = snprintf(buf, n, "%s", s);

        return k < 0 || (size_t) k >= n ? -ENOBUFS : 0;
}

static int put_u64(char *buf, size_t n, uint64_t v) {
        int k = snprintf(buf, n, "%" PRIu64, v);

        return k < 0 || (size_t) k >= n ? -ENOBUFS : 0;
}

int bw_lever_native(enum bw_cg_layout layout, enum bw_lever l, const char *value, char *buf, size_t n) {
        uint64_t v;

        if (!value || !buf || (unsigned) l >= _BW_LEVER_MAX)
                return -EINVAL;
        switch (l) {
        case BW_LEVER_WEIGHT:
                if (parse_u64_all(value, &v) < 0 || v < BW_WEIGHT_MIN || v > BW_WEIGHT_MAX)
                        return -EINVAL;
                return put_u64(buf, n, v1_shares(layout, l) ? bw_shares_from_weight(v) : v);
        case BW_LEVER_IDLE:
        case BW_LEVER_FREEZE:
                if (!streq(value, "0") && !streq(value, "1"))
                        return -EINVAL;
                if (v1_freezer(layout, l))
                        return put_str(buf, n, streq(value, "1") ? "FROZEN" : "THAWED");
                return put_str(buf, n, value);
        case BW_LEVER_CPUS:
                if (strchr(value, '\n'))
                        return -EINVAL;
                return put_str(buf, n, value);
        case _BW_LEVER_MAX:
        default:
                break;
        }
        return -EINVAL;
}

int bw_lever_from_native(enum bw_cg_layout layout, enum bw_lever l, const char *native, char *buf, size_t n) {
        uint64_t v;

        if (!native || !buf || (unsigned) l >= _BW_LEVER_MAX)
                return -EINVAL;
        if (v1_shares(layout, l)) {
                if (parse_u64_all(native, &v) < 0)
                        return -EINVAL;
                return put_u64(buf, n, bw_weight_from_shares(v));
        }
        if (v1_freezer(layout, l))
                return put_str(buf, n, strncmp(native, "THAWED", 6) == 0 ? "0" : "1");
        return put_str(buf, n, native);
}

/* The directory of cg that holds the lever's file: cg's own (bw_cg_dir())
 * (*ret_owned = -1), or one opened beneath a v1 root (*ret_owned, to close). */
static int lever_dir(const struct bw_cg_root *root, struct bw_cg *cg, enum bw_lever l, const char **ret_file,
                     int *ret_owned) {
        struct place p = lever_place(cg->layout, l);
        int rootfd = -1, fd;

        *ret_owned = -1;
        *ret_file = p.file;
        switch (p.where) {
        case WHERE_BW:
                return bw_cg_dir(cg, BW_CG_TREE_BW);
        case WHERE_V2:
                return bw_cg_dir(cg, BW_CG_TREE_V2);
        case WHERE_FREEZER:
                rootfd = root ? root->freezer_fd : -1;
                break;
        case WHERE_CPUSET:
                rootfd = root ? root->cpuset_fd : -1;
                break;
        case WHERE_NONE:
        default:
                return -EINVAL;
        }
        if (rootfd < 0)
                return -EOPNOTSUPP;
        if (isempty(cg->path) || streq(cg->path, "/")) {
                fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return -errno;
        } else
                fd = bw_cg_openat_beneath(rootfd, cg->path, O_RDONLY | O_DIRECTORY, true);
        if (fd == -ENOENT)
                return -EOPNOTSUPP;     /* no directory of this group in that hierarchy */
        if (fd < 0)
                return fd;
        *ret_owned = fd;
        return fd;
}

int bw_lever_read(const struct bw_cg_root *root, struct bw_cg *cg, enum bw_lever l, char *buf, size_t n) {
        _cleanup_close_ int owned = -1;
        const char *file;
        ssize_t k;
        int dfd;

        if (!cg || !buf || n == 0 || (unsigned) l >= _BW_LEVER_MAX)
                return -EINVAL;
        dfd = lever_dir(root, cg, l, &file, &owned);
        if (dfd < 0)
                return dfd;
        k = bw_read_small_at(dfd, file, O_NOFOLLOW, buf, n);
        if (k == -EFBIG)
                return -ENOBUFS;
        if (k == -ENOENT && (l == BW_LEVER_CPUS || l == BW_LEVER_IDLE)) {
                /* The cpuset controller is not enabled here, or the kernel
                 * has no cpu.idle; a vanished cgroup fails faccessat too. */
                if (faccessat(dfd, ".", F_OK, 0) == 0)
                        return -EOPNOTSUPP;
        }
        if (k < 0)
                return (int) k;
        while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == ' '))
                buf[--k] = '\0';
        return 0;
}

int bw_lever_write(const struct bw_cg_root *root, struct bw_cg *cg, enum bw_lever l, const char *native) {
        _cleanup_close_ int owned = -1;
        const char *file;
        int dfd, r;

        if (!cg || !native || (unsigned) l >= _BW_LEVER_MAX)
                return -EINVAL;
        dfd = lever_dir(root, cg, l, &file, &owned);
        if (dfd < 0)
                return dfd;
        r = bw_write_at(dfd, file, O_NOFOLLOW, native, strlen(native));
        if (r < 0)
                return r;
        return bw_cg_fixture_trim(dfd, file, strlen(native));
}

static size_t trimmed_len(const char *s, const char **ret_start) {
        size_t n;

        while (*s == ' ' || *s == '\n')
                s++;
        n = strlen(s);
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n'))
                n--;
        *ret_start = s;
        return n;
}

/* Two CPU lists naming the same CPUs ("0-1" and "0,1"). */
static bool same_cpus(const char *a, size_t na, const char *b, size_t nb) {
        _cleanup_free_ unsigned *x = NULL, *y = NULL;
        size_t nx = 0, ny = 0;

        if (bw_cpulist_parse(a, na, &x, &nx) < 0 || bw_cpulist_parse(b, nb, &y, &ny) < 0)
                return false;
        return nx == ny && (nx == 0 || memcmp(x, y, nx * sizeof(*x)) == 0);
}

bool bw_lever_same(enum bw_lever l, const char *a, const char *b) {
        const char *sa, *sb;
        size_t na, nb;
        uint64_t x, y;

        if (!a || !b)
                return false;
        na = trimmed_len(a, &sa);
        nb = trimmed_len(b, &sb);
        if (l == BW_LEVER_WEIGHT && parse_u64_all(sa, &x) >= 0 && parse_u64_all(sb, &y) >= 0)
                return x == y;
        if (l == BW_LEVER_CPUS && (na != nb || memcmp(sa, sb, na) != 0))
                return same_cpus(sa, na, sb, nb);
        if (l == BW_LEVER_FREEZE) {
                /* v1: FREEZING is on its way to FROZEN. */
                bool fa = (na == 8 && strncmp(sa, "FREEZING", 8) == 0) || (na == 6 && strncmp(sa, "FROZEN", 6) == 0),
                     fb = (nb == 8 && strncmp(sb, "FREEZING", 8) == 0) || (nb == 6 && strncmp(sb, "FROZEN", 6) == 0);

                if (fa || fb)
                        return fa && fb;
        }
        return na == nb && memcmp(sa, sb, na) == 0;
}

/* One sibling's weight in v2 units, BW_WEIGHT_MIN for an idle one; 0 to
 * leave it out (not a cgroup with the file). */
static uint64_t sibling_weight(int parentfd, const char *name, enum bw_cg_layout layout) {
        _cleanup_close_ int fd = -1;
        char buf[32];
        uint64_t v;

        fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return 0;
        if (bw_read_small_at(fd, "cpu.idle", O_NOFOLLOW, buf, sizeof(buf)) > 0 && buf[0] == '1')
                return BW_WEIGHT_MIN;
        if (bw_read_small_at(fd, layout == BW_CG_LAYOUT_V2 ? "cpu.weight" : "cpu.shares", O_NOFOLLOW, buf,
                             sizeof(buf)) <= 0 ||
            parse_u64_all(buf, &v) < 0)
                return 0;
        return layout == BW_CG_LAYOUT_V2 ? v : bw_weight_from_shares(v);
}

int bw_lever_sibling_weights(const struct bw_cg_root *root, struct bw_cg *cg, uint64_t *ret_sum,
                             unsigned *ret_n) {
        _cleanup_free_ char *parent = NULL;
        const char *self, *slash;
        uint64_t sum = 0;
        unsigned n = 0;
        struct dirent *de;
        DIR *d;
        int fd;

        if (!root || !cg || !ret_sum || isempty(cg->path))
                return -EINVAL;
        slash = strrchr(cg->path, '/');
        self = slash ? slash + 1 : cg->path;
        if (slash) {
                parent = strndup(cg->path, (size_t) (slash - cg->path));
                if (!parent)
                        return -ENOMEM;
                fd = bw_cg_openat_beneath(root->bw_fd, parent, O_RDONLY | O_DIRECTORY, true);
        } else {
                fd = openat(root->bw_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
        }
        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d) {
                int e = -errno;

                close(fd);
                return e;
        }
        while ((de = readdir(d))) {
                uint64_t w;

                if (de->d_type != DT_DIR || de->d_name[0] == '.' || streq(de->d_name, self))
                        continue;
                w = sibling_weight(dirfd(d), de->d_name, cg->layout);
                if (w > 0) {
                        sum += w;
                        n++;
                }
        }
        closedir(d);
        *ret_sum = sum;
        if (ret_n)
                *ret_n = n;
        return 0;
}
