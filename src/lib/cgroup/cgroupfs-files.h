/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to src/lib: the names and sizes of the cgroup files the
 * cgroupfs*.c modules read and write, and the fixture-tree trim that
 * cgroupfs-write.c and lever.c share. */

/* Every cgroup file bwgov reads is a few hundred bytes; one page is plenty and
 * a full buffer is treated as truncation rather than parsed. */
#define CG_READ_MAX 4096
/* A formatted value written to a bandwidth file: "max 1000000" or a u64. */
#define VALUE_MAX   64

/* File names, per layout. */
#define V2_MAX         "cpu.max"
#define V2_BURST       "cpu.max.burst"
#define V1_QUOTA       "cpu.cfs_quota_us"
#define V1_PERIOD      "cpu.cfs_period_us"
#define V1_BURST       "cpu.cfs_burst_us"
#define CPU_STAT       "cpu.stat"
#define CPU_STAT_LOCAL "cpu.stat.local"
#define CPU_PRESSURE   "cpu.pressure"
#define CPUACCT_USAGE  "cpuacct.usage"

/* A fixture tree standing in for cgroupfs (--cgroup-root, tests) is made of
 * regular files: trim what a longer old value left behind NAME's new LEN
 * bytes in dirfd, so it reads back like the kernel's file would. Nothing on
 * cgroupfs, where each write() is a whole new value. Returns 0 or a
 * negative errno (cgroupfs-mount.c). */
int bw_cg_fixture_trim(int dirfd, const char *name, size_t len);
