/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cgroup's usage alone from one held file: a parent's, for the usage
 * gates of its governed children (cgroupfs-usage.c). */
#pragma once

#include "bwgov/cgroup/cgroupfs.h"

/* The usage file of the cgroup PATH (validated, opened beneath the root as
 * bw_cg_open() does) alone: cpu.stat of the v2 tree (V2, HYBRID) or
 * cpuacct.usage (V1). For a governed cgroup's parent, whose usage counts
 * every task below it (src/daemon/source/usagegate.h). REQUIRE_KERNFS refuses a file
 * that is not on cgroupfs (-EOPNOTSUPP): only there is a parent's usage the
 * sum of its children's. Returns the fd, -EOPNOTSUPP without that tree, or
 * another negative errno. */
int bw_cg_usage_open(const struct bw_cg_root *root, const char *path, bool require_kernfs);

/* Its cumulative usage in µs: one pread. Returns 0, -EFBIG when it fills
 * the 4 KiB buffer, -ENODATA/-EINVAL from the parser, or -errno. */
int bw_cg_usage_read(const struct bw_cg_root *root, int fd, uint64_t *ret_usec);
