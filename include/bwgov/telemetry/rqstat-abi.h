/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What src/bpf/rqstat.bpf.c counts per governed cgroup and CPU, as the
 * daemon reads it from the `stats` map: one value per possible CPU, summed by
 * the reader. Shared by the BPF program (clang -target bpf) and user space
 * (bpf-abi.h). Counters only ever grow while the entry exists; the
 * `pending_*` fields are the program's scratch for the throttle in progress
 * on that CPU and are not data. */

#include "bwgov/telemetry/bpf-abi.h"

/* Log2 buckets of microseconds: slot 0 holds [0, 2) µs, slot i (1 ≤ i <
 * BW_RQ_SLOTS-1) holds [2^i, 2^(i+1)) µs, the last slot everything from
 * 2^(BW_RQ_SLOTS-1) µs (about 67 s) up. */
#define BW_RQ_SLOTS 27

struct bw_rq_counters {
        bw_u64 wait_slots[BW_RQ_SLOTS];  /* run-queue waits (enqueue → on CPU) */
        bw_u64 wakeups;                  /* waits that began with a wake-up */
        bw_u64 preemptions;              /* waits that began with a switch-out while runnable */
        bw_u64 wait_ns;                  /* sum of the waits */
        bw_u64 wait_max_ns;
        bw_u64 throttled_wait_ns;        /* of wait_ns: while the cgroup or an ancestor was throttled */
        bw_u64 throttled_waits;          /* waits with any throttled part */
        bw_u64 migrated_waits;           /* waits that ended on another CPU: throttled part unknown (0) */
        bw_u64 throttle_slots[BW_RQ_SLOTS];      /* throttle durations, per CPU (one cfs_rq) */
        bw_u64 throttles;                /* throttle events seen (a runnable task switched out throttled) */
        bw_u64 throttle_ns;              /* sum of their durations */
        bw_u64 pending_since_ns;         /* scratch: the throttle in progress on this CPU, else 0 */
        bw_u64 pending_clock_ns;         /* scratch: its throttled clock when it began */
};

/* The waits of fair tasks outside every governed group (SCHED_NORMAL and
 * SCHED_BATCH; SCHED_IDLE tasks chose to wait), in the `others` per-CPU
 * array (one entry), summed by the reader: what the host brake protects.
 * Each wait is the kernel's own (sched_info, from enqueue to the switch that
 * runs the task, on the rq clock), from the CPU it ends on: a wait that
 * migrated counts only its part on that CPU. `known` is 1 once a wait was
 * read from a kernel that keeps sched_info (CONFIG_SCHED_INFO); where it
 * stays 0 the counters mean nothing.
 *
 * On each CPU, also the time governed work ran there (governed_ns, runs
 * ended), the time at least one outside task waited there (waiting_ns)
 * and the time both held (behind_ns: governed work ran while outside work
 * waited for that CPU, each CPU's time once however many waited, so at
 * most 1 s/s per CPU). The last two are counted when an outside wait ends:
 * the part of it after the last wait that ended on that CPU to waiting_ns,
 * and the governed run time there since that end, up to that part, to
 * behind_ns; exact where the waits on a CPU overlap (a queue), an upper
 * bound for a wait that began after the last one ended (governed work that
 * ran before it began may count, at most its length). Governed work that
 * runs on one CPU while outside work waits on another (the load balancer
 * weighs groups, not tasks) shows as governed_ns and waiting_ns apart on
 * two CPUs; the reader pairs those (bw_rq_others_cross()).
 *
 * The last three fields are the programs' own. */
struct bw_rq_others {
        bw_u64 wait_ns;
        bw_u64 waits;
        bw_u64 known;
        bw_u64 behind_ns;
        bw_u64 waiting_ns;
        bw_u64 governed_ns;
        bw_u64 governed_since_ns;        /* scratch: the governed run in progress began (ktime), 0: none */
        bw_u64 counted_governed_ns;      /* scratch: governed_ns when an outside wait ended last */
        bw_u64 counted_clock;            /* scratch: the rq clock then */
};

/* The cgroup → governed-ancestor cache (LRU), valid for one generation of
 * the governed set (the program's `bw_generation`); the activity cache
 * (task group → governed slot + 1 in `governed`) has the same shape. */
struct bw_rq_cg {
        bw_u64 governed;                 /* cgroup id of the governed group, 0 for none */
        bw_u32 generation;
        bw_u32 pad;
};
