/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one write path of a cgroup's bandwidth: read, compare, write only
 * what differs, in the order the kernel accepts, the burst read back
 * (cgroupfs-write.c). */
#pragma once

#include "bwgov/cgroup/cgroupfs.h"

/* The only write path. Reads the current values, then writes only what
 * differs from *target, in an order the kernel accepts:
 *   1. burst, if it goes down (the kernel requires burst <= quota at all times),
 *   2. quota/period (cpu.max in V2; cpu.cfs_period_us then cpu.cfs_quota_us in v1,
 *      ordered so no intermediate state is rejected),
 *   3. burst, if it goes up;
 * after a quota write the burst is read back and, if the kernel changed it
 * (kernels before 6.10 divide it by 1000 on cpu.max writes), written again
 * and counted in stats.burst_repairs. target->burst_usec is the wanted burst
 * (0 when has_burst is false, as bw_bandwidth_validate() demands); a target
 * burst when the kernel has no burst file is ignored unless non-zero
 * (-EOPNOTSUPP). stats.skipped grows by one per file left alone because it
 * already held the target (V2: cpu.max, cpu.max.burst; v1: cpu.cfs_quota_us,
 * cpu.cfs_period_us, cpu.cfs_burst_us). Each write is one open(O_WRONLY|
 * O_NOFOLLOW) relative to the cgroup dirfd, one write(), close.
 * Returns the number of files written (0: everything already matched, nothing
 * was touched), -EINVAL for an invalid target, -ENODEV/-ENOENT when the cgroup
 * vanished, or another negative errno from write(). ret_now, if not NULL,
 * receives the values read back at the end. */
int bw_cg_write_bandwidth(struct bw_cg *cg, const struct bw_bandwidth *target, struct bw_bandwidth *ret_now);
