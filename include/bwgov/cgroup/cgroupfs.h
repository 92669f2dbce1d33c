/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One governed cgroup: path confinement beneath a root, its files held open,
 * reading its usage, pressure and bandwidth, and the one ordered write path.
 * Finding the roots is cgroupfs-mount.h's. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bwgov/cgroup/cgroupfs-mount.h"
#include "bwgov/cgroup/cpumax.h"
#include "bwgov/cgroup/cpustat.h"
#include "bwgov/cgroup/psi.h"

/* Counters of one handle's writes; see bw_cg_write_bandwidth(). */
struct bw_cg_write_stats {
        uint64_t writes;         /* files actually written */
        uint64_t skipped;        /* writes not done because the value was already there */
        uint64_t burst_repairs;  /* burst re-written after a quota write corrupted it */
};

/* One governed cgroup with its files held open. The directories are read
 * through bw_cg_dir(): they may be released too (BW_CG_DIRS). */
struct bw_cg {
        const struct bw_cg_root *root;  /* the directories are opened again beneath it (outlives cg) */
        dev_t bw_dev, v2_dev;   /* the directories' identities: opened again, they must be the same */
        ino_t bw_ino, v2_ino;
        struct bw_cg_write_stats stats;
        enum bw_cg_layout layout;
        int bw_dirfd;           /* cgroup dir in the bandwidth tree, -1 while released */
        int v2_dirfd;           /* cgroup dir in the v2 tree (the same fd as bw_dirfd in V2), -1 if absent
                                 * or released */
        int stat_fd;            /* bandwidth cpu.stat (throttling) */
        int local_fd;           /* bandwidth cpu.stat.local (v2 dir in V2, v1 cpu dir otherwise),
                                 * -1 when the kernel has none (< 6.6) */
        int usage_fd;           /* v2 twin cpu.stat (HYBRID) or cpuacct.usage (V1); -1 in V2 */
        int pressure_fd;        /* cpu.pressure, -1 when unavailable */
        int quota_fd;           /* the bandwidth tree's cpu.max (V2) or cpu.cfs_quota_us */
        uint16_t released;      /* BW_CG_FILE_* closed by bw_cg_release(), opened again when read */
        uint16_t pinned;        /* BW_CG_FILE_* that cannot be opened again (kept) */
        bool has_v2;            /* there is a v2 directory (held or released) */
        bool kernfs;            /* on cgroupfs: a removed cgroup's reads fail by themselves */
        /* Validated relative path, in the same allocation (ten thousand
         * cgroups: no pointer and no allocation of its own). */
        char path[];
};

/* The files of a cgroup that are held open between reads (the directories
 * always are). */
enum {
        BW_CG_FILE_STAT     = 1 << 0,
        BW_CG_FILE_LOCAL    = 1 << 1,
        BW_CG_FILE_USAGE    = 1 << 2,
        BW_CG_FILE_PRESSURE = 1 << 3,
        BW_CG_FILE_QUOTA    = 1 << 4,
        _BW_CG_FILE_ALL     = 1 << 5,
        /* Not a file: the cgroup's directories. */
        BW_CG_DIRS          = 1 << 8,
};

/* Close the given files of an open cgroup (ten thousand cgroups do not fit
 * under a file descriptor limit of 20 000 with every file held); the next
 * read of one opens it again beneath the directory. Returns how many fds
 * were closed. A file whose directory is not held (a v1 cpuacct hierarchy
 * apart from the cpu one) stays open. With BW_CG_DIRS the directories are
 * closed too: a read of a file still held needs none, anything else opens
 * them again beneath the root (bw_cg_dir()). */
unsigned bw_cg_release(struct bw_cg *cg, unsigned files);
/* Where the cgroup's directories are. */
enum bw_cg_tree {
        BW_CG_TREE_BW,          /* the bandwidth tree's (cpu.max or cpu.cfs_quota_us) */
        BW_CG_TREE_V2,          /* the cgroup2 tree's (the same in V2) */
};
/* The directory's fd (owned by cg), opened again beneath the root when it
 * was released and checked to be the directory cg was opened at (device
 * and inode). Returns the fd; -EOPNOTSUPP for the v2 one of a cgroup
 * without a v2 twin; -ENODEV when the path names another directory now or
 * none (the cgroup was removed, perhaps made again); another negative
 * errno (-EMFILE). */
int bw_cg_dir(struct bw_cg *cg, enum bw_cg_tree tree);
/* The cgroup has the file (held or released). */
bool bw_cg_has(const struct bw_cg *cg, unsigned file);
/* The file is open now (not released). */
bool bw_cg_holds(const struct bw_cg *cg, unsigned file);
/* The quota file's name in the bandwidth directory: "cpu.max" or
 * "cpu.cfs_quota_us". */
const char *bw_cg_quota_name(const struct bw_cg *cg);
/* File descriptors the cgroup holds now. */
unsigned bw_cg_nfds(const struct bw_cg *cg);

/* Open the cgroup PATH under root (which must outlive it: released
 * directories are opened again beneath it), refusing anything that escapes the root
 * (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS when the
 * kernel has it, else a component walk with O_NOFOLLOW). Returns 0; -EINVAL
 * for a bad path; -ENOENT when the cgroup does not exist (in the bandwidth
 * tree; a missing v2 twin in HYBRID only leaves v2_dirfd/pressure_fd at -1,
 * a missing cpu.stat.local only local_fd);
 * -EOPNOTSUPP when the directory has no bandwidth file (cpu.max in V2,
 * cpu.cfs_quota_us otherwise: the controller is not enabled there);
 * -ELOOP/-EXDEV for symlinks or escapes; other negative errno. */
int bw_cg_open(const struct bw_cg_root *root, const char *path, struct bw_cg **ret);

void bw_cg_free(struct bw_cg *cg);

/* HYBRID: look again for the v2 twin of a cgroup opened without one (its v1
 * directory made first, the twin a moment later, or never: a tool that
 * makes v1 directories only). Found, its usage, pressure and v2 directory
 * are read from then on. Returns 1 when found now; 0 when there is still
 * none, the cgroup has its twin already or is not HYBRID; a negative errno
 * (-EMFILE), cg unchanged. */
int bw_cg_find_twin(struct bw_cg *cg);

/* Whether cg's directory is still the one at its path under root: 1 when
 * the path names the same directory (device and inode), 0 when it names
 * none or another one (the cgroup was removed, or removed and made again),
 * negative errno when it cannot be told. A file of a cgroup that is still
 * there can vanish on its own (the controller disabled in the parent's
 * cgroup.subtree_control): then the cgroup is the same. */
int bw_cg_same(const struct bw_cg_root *root, const struct bw_cg *cg);

/* Read throttling and usage into one struct with pread on the open fds.
 * V2: cpu.stat; HYBRID: v1 cpu.stat + usage from the twin's cpu.stat;
 * V1: v1 cpu.stat + cpuacct.usage. Without a twin / cpuacct, BW_CPUSTAT_USAGE
 * stays clear in ret->seen. When local_fd >= 0, cpu.stat.local of the
 * bandwidth tree fills local_throttled_usec and sets
 * BW_CPUSTAT_LOCAL_THROTTLED; that file is optional, so its parse errors and
 * a full read buffer only leave the bit clear (so does the empty file a v2
 * kernel without CONFIG_CFS_BANDWIDTH shows). Returns 0, -ENODEV/-ENOENT when
 * the cgroup vanished (cpu.stat.local included), -EFBIG when cpu.stat or the
 * usage file fills the 4 KiB read buffer, -EINVAL/-ENODATA from their
 * parsers, another negative errno from pread(). */
int bw_cg_read_stat(struct bw_cg *cg, struct bw_cpu_stat *ret);

/* bw_cg_read_stat() without cpu.stat.local: throttling and usage, for the
 * light samples of quiet groups (their throttling unchanged, the local
 * share cannot have changed either). */
int bw_cg_read_stat_light(struct bw_cg *cg, struct bw_cpu_stat *ret);
/* Only the usage, where it is a file of its own (HYBRID: the twin's
 * cpu.stat, V1: cpuacct.usage; ret->seen has the usage, user and system
 * bits). -EOPNOTSUPP in V2 (cpu.stat has both) or without a usage file. */
int bw_cg_read_usage(struct bw_cg *cg, struct bw_cpu_stat *ret);
/* The usage by the cheapest read there is: bw_cg_read_usage() where the
 * usage is a file of its own, else bw_cg_read_stat_light(). */
int bw_cg_read_usage_any(struct bw_cg *cg, struct bw_cpu_stat *ret);

/* The burst file: *ret_has false when the kernel has none (the cgroup
 * being there). */
int bw_cg_read_burst(struct bw_cg *cg, uint64_t *ret_usec, bool *ret_has);

/* The quota (and in V2 the period; 0 on v1, whose period is another file)
 * from the held quota file: one pread. */
int bw_cg_read_quota(struct bw_cg *cg, uint64_t *ret_quota_usec, uint64_t *ret_period_usec);

/* Read cpu.pressure. -EOPNOTSUPP when the cgroup has none. */
int bw_cg_read_pressure(struct bw_cg *cg, struct bw_psi *ret);

/* Read the current quota, period and burst (has_burst false when the kernel
 * lacks the burst file). Returns 0 or negative errno. */
int bw_cg_read_bandwidth(struct bw_cg *cg, struct bw_bandwidth *ret);

/* The nearest ancestor of cg (walking up from its parent, stopping below
 * the root of the tree cg was opened in; the root itself has no cpu.max)
 * whose quota is not "max", scaled to period_usec:
 *   ret_quota_usec = ancestor_quota * period_usec / ancestor_period (rounded down, at least 1000).
 * Returns 1 with *ret_quota_usec and, when ret_path is not NULL, a malloc'd
 * relative path of that ancestor; 0 when no ancestor is limited
 * (*ret_quota_usec = BW_QUOTA_MAX, *ret_path = NULL); negative errno on
 * failure (ENOENT/ENODEV if the cgroup vanished).
 * Each ancestor is opened beneath root->bw_fd like bw_cg_open() does (no
 * symlinks: -ELOOP/-EXDEV), its cpu.max (V2) or cpu.cfs_quota_us and
 * cpu.cfs_period_us (v1) read and closed; nothing stays open. An ancestor
 * directory without its bandwidth file counts as unlimited. cg's own
 * directory is checked after the walk, so a cgroup removed meanwhile is
 * reported as vanished rather than answered from its former ancestors.
 * Nearest, not tightest: v1 keeps every limited child's quota/period within
 * its nearest limited ancestor's, v2 does not (there a farther ancestor may
 * be tighter). The result is not capped at BW_QUOTA_LIMIT_USEC (an ancestor
 * near that limit, scaled to a longer period, exceeds it).
 * Other errors: -EINVAL for NULL, period_usec outside [BW_PERIOD_MIN_USEC,
 * BW_PERIOD_MAX_USEC] or a cg opened under another layout; -EINVAL/-ERANGE
 * from the parsers (also for a v1 ancestor period out of range); another
 * negative errno from open()/pread(). ret_quota_usec and ret_path are
 * untouched on failure. */
int bw_cg_read_ancestor_quota(const struct bw_cg_root *root, struct bw_cg *cg, uint64_t period_usec,
                              uint64_t *ret_quota_usec, char **ret_path);

/* True for the errors that mean "the cgroup is gone": skip it, don't fail. */
static inline bool bw_cg_error_is_vanished(int r) {
        return r == -ENOENT || r == -ENODEV || r == -ESTALE;
}
