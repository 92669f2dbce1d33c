/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One quota write the kernel refused because it was below the group's
 * burst (the write-order dependency), as src/bpf/refused.bpf.c sends it
 * through its ring buffer. Shared by the BPF program and user space
 * (bpf-abi.h). */

#include "bwgov/telemetry/bpf-abi.h"

#define BW_REFUSED_COMM_MAX 16

struct bw_refused_write {
        bw_u64 cgroup_id;       /* kernfs id of the cgroup (its directory's inode) in the bandwidth hierarchy */
        bw_u64 period_usec;     /* what the writer asked for */
        bw_u64 quota_usec;
        bw_u64 burst_usec;      /* the burst in force, above quota_usec */
        bw_u32 tgid;            /* the writer */
        bw_u32 reserved;
        char comm[BW_REFUSED_COMM_MAX];
};
