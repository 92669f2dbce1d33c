/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Where the cgroup hierarchies are: parsing /proc/self/mountinfo, telling
 * the v2, hybrid and v1 layouts apart, and opening the roots that every
 * governed cgroup path is resolved against (the host's, or a directory that
 * stands in for /sys/fs/cgroup). */

#include <stdbool.h>
#include <stdio.h>

/* How the host mounts its cgroups.
 *  V2:     one cgroup2 tree with the cpu controller (cpu.max, cpu.stat, cpu.pressure).
 *  HYBRID: the v1 "cpu" hierarchy does bandwidth (cpu.cfs_*), a cgroup2 tree
 *          without controllers tracks the same paths for PSI and usage ("twin").
 *  V1:     v1 only; usage from cpuacct, no PSI. */
enum bw_cg_layout {
        BW_CG_LAYOUT_UNKNOWN = 0,
        BW_CG_LAYOUT_V2,
        BW_CG_LAYOUT_HYBRID,
        BW_CG_LAYOUT_V1,
};

const char *bw_cg_layout_to_string(enum bw_cg_layout l);

/* Mount points found for the cgroup hierarchies (absolute paths, malloc'd). */
struct bw_cg_mounts {
        char *v2;       /* cgroup2 mount or NULL */
        char *cpu;      /* v1 hierarchy carrying the "cpu" controller or NULL */
        char *cpuacct;  /* v1 hierarchy carrying "cpuacct" or NULL (may equal cpu) */
        char *freezer;  /* v1 hierarchy carrying "freezer" or NULL */
        char *cpuset;   /* v1 hierarchy carrying "cpuset" or NULL */
        bool v2_has_cpu;/* "cpu" listed in the v2 root's cgroup.controllers */
};

void bw_cg_mounts_done(struct bw_cg_mounts *m);

/* Parse /proc/self/mountinfo content from f. Fills the mount points; does
 * not look at cgroup.controllers (v2_has_cpu stays false).
 * Returns 0, -ENOMEM, -EINVAL for a malformed line. */
int bw_cg_mounts_parse(FILE *f, struct bw_cg_mounts *ret);

/* Decide the layout from mounts. Returns BW_CG_LAYOUT_UNKNOWN when no usable
 * cpu bandwidth controller exists. */
enum bw_cg_layout bw_cg_layout_from_mounts(const struct bw_cg_mounts *m);

/* The roots that every governed cgroup path is resolved against. */
struct bw_cg_root {
        enum bw_cg_layout layout;
        int bw_fd;      /* directory holding bandwidth files: v2 root or v1 cpu root */
        int v2_fd;      /* cgroup2 root for PSI/usage, -1 in V1 */
        int acct_fd;    /* v1 cpuacct root for usage in V1 (may be -1) */
        int freezer_fd; /* v1 freezer root, -1 in V2 or when not mounted (levers, lever.h) */
        int cpuset_fd;  /* v1 cpuset root, -1 in V2 or when not mounted */
        char *bw_path;  /* for messages */
        char *v2_path;
        /* bw_cg_root_open_host() asks libcgroup where "cpu" is mounted as a
         * second opinion: 1 it agrees with bw_path, 0 it names another
         * place, negative errno when libcgroup failed, -ENOTSUP when not
         * asked (the other constructors). For debug logging only. */
        int libcgroup_check;
};
/* In V2, v2_fd == bw_fd (one fd, closed once); in V1 with cpu,cpuacct
 * comounted, acct_fd == bw_fd. */

/* Open the host's roots: /proc/self/mountinfo, confirmed with libcgroup's
 * cgroup_get_subsys_mount_point("cpu") when available.
 * Returns 0, -EOPNOTSUPP when no cpu bandwidth controller is mounted, or a
 * negative errno from open(). */
int bw_cg_root_open_host(struct bw_cg_root **ret);
/* Ask libcgroup in a forked child (bw_call_in_child()): its
 * initialisation fills 800 KiB of static tables that would otherwise stay
 * resident in a daemon for its life. The answer is the same; off by
 * default. */
void bw_cg_set_libcgroup_in_child(bool b);

/* The part of bw_cg_root_open_host() after discovery: open the roots that
 * the mounts describe (m->v2_has_cpu must already be filled in).
 * Returns 0, -EOPNOTSUPP when bw_cg_layout_from_mounts() is UNKNOWN, or a
 * negative errno from open(). */
int bw_cg_root_open_mounts(const struct bw_cg_mounts *m, struct bw_cg_root **ret);

/* Open roots under a directory that stands in for /sys/fs/cgroup (tests,
 * --cgroup-root): if DIR has cgroup.controllers it is a V2 tree; else if it
 * has cpu/ and unified/ it is HYBRID (cpu/ = v1 cpu, unified/ = cgroup2);
 * else if it has cpu/ alone, V1 (cpuacct/ when present). -ENOENT/-ENOTDIR
 * when none of that is found, -EOPNOTSUPP for a v2 tree whose
 * cgroup.controllers lacks "cpu". */
int bw_cg_root_open_dir(const char *dir, struct bw_cg_root **ret);

void bw_cg_root_free(struct bw_cg_root *r);
