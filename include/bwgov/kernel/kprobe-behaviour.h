/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The behaviour probes (kprobe-behaviour.c): each measures what the kernel
 * does in a scratch cgroup under the bandwidth root (kprobe-scratch.c) and
 * removes it again; the gate and the load-free write-order probe are
 * kprobe-write-order.h. */

#include <stdint.h>
#include <stdio.h>

#include "bwgov/kernel/kmanifest.h"
#include "bwgov/kernel/kprobe.h"

/* bw_kprobe_behaviour() runs only when bw_kprobe_behaviour_allowed() and when
 * env->bw_root_fd is on a cgroup file system (never in a fixture tree). It
 * creates the scratch cgroup "<scratch_prefix>-<pid>" under bw_root_fd and
 * always removes it again:
 *  - burst-survives-cpumax-write (v2): quota 50000/100000, burst 20000, a
 *    cpu.max write with another quota, burst read back: 20000 present,
 *    20 absent. UNKNOWN on a v1 hierarchy (not applicable: the bug is in
 *    cpu.max's write handler only), so the next method decides.
 *  - identical-update-noop: a forked busy loop (killed by pid, with
 *    PR_SET_PDEATHSIG and an alarm as backstops) runs 0.2 s unlimited, 0.3 s
 *    under a 10 % quota, then 1 s while the same quota is rewritten every
 *    2 ms: still about 10 % is PRESENT, near a whole CPU is ABSENT. A busy
 *    host, an unenforced quota or starved rewrites give UNKNOWN.
 *  - accounting-slack: the busy loop runs 0.2 s unlimited, then 2 s under a
 *    quota of exactly one CPU at a 10 ms period (no burst): throttled in at
 *    least 15 % of the periods is ABSENT (mainline pays the accounting debt
 *    of each period boundary from the new quota), at most 7.5 % with at least
 *    90 % of a CPU used is PRESENT. A busy host or too few periods give
 *    UNKNOWN.
 *  - atomic-runtime-pool: needs /proc/lock_stat (CONFIG_LOCK_STAT, debug
 *    kernels; UNKNOWN without). The busy loop runs 1 s under a quota of two
 *    CPUs at a 1 s period, which it never reaches; the acquisitions of the
 *    &cfs_b->lock class are compared with the slices it refilled (CPU time
 *    over sched_cfs_bandwidth_slice_us): at least one per four slices is
 *    ABSENT, at most one per twenty is PRESENT.
 *  - write-order (load-free: no task, no load, milliseconds; see
 *    bw_kprobe_write_order_at()): quota 50000 and burst 50000 at a 100000
 *    period, then a quota of 25000. Accepted with the burst kept is PRESENT,
 *    EINVAL (and accepted once the burst is 0) is ABSENT.
 *  - nested-siblings (bw_kprobe_nested_siblings(), kprobe-siblings.c): a
 *    scratch group with a 10 % quota (100 ms period) and a child group
 *    without a limit, three busy loops pinned to one CPU in the child; after
 *    0.25 s, 1 s measured: at least twice the quota is ABSENT (a sibling of
 *    the throttled task escaped the throttle, as on unpatched 7.2), at most
 *    1.5 times and at least half of it is PRESENT (6.1, 6.12 and the 6.18
 *    host hold it without the series: the fault is 7.2's).
 * Inconclusive outcomes are BW_KSTATUS_UNKNOWN with the reason in how.
 * Returns 0, or -ENOMEM (ret untouched). */
int bw_kprobe_behaviour(const struct bw_kprobe_env *env, enum bw_kbehaviour b, struct bw_kprobe_result *ret);

/* Sum of the acquisitions of a lock class in /proc/lock_stat. Returns 1 and
 * *ret when the class is listed, 0 (*ret = 0) when it is not, -EBADMSG for a
 * file that is not lock_stat, -ENOTRECOVERABLE when lock debugging was turned
 * off (the counts stopped). */
int bw_lockstat_acquisitions(FILE *f, const char *class_name, uint64_t *ret);
