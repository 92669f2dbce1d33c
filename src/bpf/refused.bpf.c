// SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-only
/*
 * Quota writes the kernel refused for the burst. Without the write-order
 * patch (bwgov-kernel-patches' "burst-write-order"), tg_set_cfs_bandwidth()
 * returns -EINVAL for a quota below the group's current burst: with
 * bwgovd's resting burst in place, a container runtime or an operator that
 * lowers a governed quota is refused, and nothing in cgroupfs says so (a
 * refused write changes nothing and inotify reports nothing). An fexit
 * program on the function that takes every cgroup quota write - v1
 * cpu.cfs_quota_us, v2 cpu.max, and their period and burst files -
 * sees its arguments and its result: a refused write whose quota is below
 * the burst in force is sent to bwgovd, which lowers its burst and puts the
 * writer's quota in place itself.
 *
 * tg_set_cfs_bandwidth(tg, period, quota, burst) takes nanoseconds (up to
 * 6.16); 6.17 made it tg_set_bandwidth(tg, period_us, quota_us, burst_us).
 * The daemon loads the one the running kernel's BTF has. Writes by bwgovd
 * itself (bw_self_tgid) are not sent: it orders its own writes.
 */

#include "kernel-types.h"
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bwgov/telemetry/refused-abi.h"

char LICENSE[] SEC("license") = "GPL";

#define BW_EINVAL 22
#define BW_RUNTIME_INF ((u64) ~0ULL)

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, 16 * 4096);
} events SEC(".maps");

const volatile __u32 bw_self_tgid = 0;

static __always_inline int report(struct task_group *tg, u64 period_us, u64 quota_us, u64 burst_us, long ret)
{
        struct bw_refused_write *e;
        u32 tgid = bpf_get_current_pid_tgid() >> 32;

        /* Only the write-order refusal: a finite quota below the burst. */
        if (ret != -BW_EINVAL || quota_us == BW_RUNTIME_INF || burst_us <= quota_us || tgid == bw_self_tgid)
                return 0;
        e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
        if (!e)
                return 0;
        e->cgroup_id = BPF_CORE_READ(tg, css.cgroup, kn, id);
        e->period_usec = period_us;
        e->quota_usec = quota_us;
        e->burst_usec = burst_us;
        e->tgid = tgid;
        e->reserved = 0;
        bpf_get_current_comm(e->comm, sizeof(e->comm));
        bpf_ringbuf_submit(e, 0);
        return 0;
}

SEC("fexit/tg_set_cfs_bandwidth")
int BPF_PROG(refused_cfs_bandwidth, struct task_group *tg, u64 period, u64 quota, u64 burst, int ret)
{
        return report(tg, period / 1000, quota == BW_RUNTIME_INF ? quota : quota / 1000, burst / 1000, ret);
}

SEC("fexit/tg_set_bandwidth")
int BPF_PROG(refused_bandwidth, struct task_group *tg, u64 period_us, u64 quota_us, u64 burst_us, int ret)
{
        return report(tg, period_us, quota_us, burst_us, ret);
}
