// SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-only
/*
 * Run-queue telemetry per governed cgroup: how long each wake-up and each
 * preemption of a task waited before it ran again, how much of that wait fell
 * while the task's group (or an ancestor) was throttled, and the throttles
 * themselves. tp_btf programs only (they load where fentry and kprobes do
 * not); every kernel field is a CO-RE relocation (kernel-types.h).
 *
 * What is exact and what is an estimate:
 *   - the wait: bpf_ktime_get_ns() from the sched_wakeup / sched_wakeup_new
 *     tracepoint, or from the sched_switch that took a still-runnable task
 *     off the CPU, to the sched_switch that puts it back on. Exact, for the
 *     task that waited (its own cgroup, not the waker's).
 *   - the throttled part of a wait: the growth of the task's cfs_rq
 *     throttled clock over the wait, clamped to the wait. From 6.6 the clock
 *     is cfs_rq->throttled_clock_self{,_time}: wall time (rq clock) during
 *     which the cfs_rq sat in a throttled hierarchy (its own limit or an
 *     ancestor's), the per-CPU pieces of cpu.stat.local's throttled_usec:
 *     exact while the task stays on that CPU. Before 6.6 it is the
 *     hierarchical PELT clock (throttled_clock_pelt{,_time}), which runs at
 *     the task clock scaled by capacity: an estimate. A wait that ends on
 *     another CPU than it began counts as migrated, its throttled part 0.
 *   - throttles: seen when a runnable task leaves the CPU in a throttled
 *     hierarchy (throttle_count > 0; on 6.18's task-based throttling also
 *     task->throttled). One per cgroup and CPU until a task of the group runs
 *     there again; the duration is the throttled clock's growth until then
 *     (else the wall time: an upper bound). A throttle that starts while the
 *     group has no task on the CPU is not seen.
 *
 * Only governed cgroups are counted: the daemon keeps one `stats` entry per
 * governed cgroup id (kernfs id = inode of the cgroup directory); a task
 * counts for the nearest governed ancestor of its cgroup (itself included),
 * found once per cgroup and cached in `cgcache` until the daemon bumps
 * bw_generation. Nothing is sent to user space per event: the daemon reads
 * the per-CPU counters when it samples.
 *
 * Outside: the fair tasks of no governed group are not followed, but the
 * wait each one ends is added to one per-CPU counter (`others`), read from
 * the kernel's own sched_info: what the governed groups' headroom may cost
 * the rest of the host, for the host brake; and per CPU the governed run
 * time (kept at every switch), the time outside work waited and the time
 * both held, so that the brake can tell a wait the governed groups cause
 * from one the others' own tasks make each other.
 *
 * Activity: whether any task of a governed cgroup ran since the daemon last
 * read the cgroup's usage, so that an idle one is not read at all. The
 * daemon gives each governed cgroup a slot in `activity` (an mmapped
 * array), keyed by the cgroup of the task's task group (the cpu
 * controller's: the directory holding cpu.max, a v1 one on a hybrid host),
 * and sets it to 0 before it reads the usage; the first run-time the kernel
 * accounts to a task of the group (sched_stat_runtime: update_curr, at
 * every switch-out and tick of a fair task) sets it to 1. Other classes
 * (RT, deadline, sched_ext) are flagged when they switch in and out: on
 * kernels before 6.8 their update_curr has no tracepoint. A flag that is
 * already 1 is only read, so a busy group costs a load, not a shared store.
 * Removing the cgroup (cgroup_rmdir) sets it too: its unit then reads and
 * finds it gone.
 *
 * Wake: a unit parked at its baseline (ParkAtBaseline=) arms its slot with 2
 * instead of 0. The first run that raises such a flag also sends the slot
 * through the `wakes` ring buffer, so that the daemon raises the unit within
 * milliseconds, not at its next check. Two CPUs may both see the 2 and send
 * it twice (the daemon takes a second wake as nothing); a wake lost to a
 * full ring or a race with the daemon's own store leaves the flag raised,
 * which the daemon's check finds within one Interval=.
 */

#include "kernel-types.h"
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bwgov/telemetry/rqstat-abi.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0
#define MAX_ANCESTOR_WALK 16

/* Sized by the daemon before load (bpf_map__set_max_entries). */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
        __uint(max_entries, 256);
        __type(key, u64);
        __type(value, struct bw_rq_counters);
} stats SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 1024);
        __type(key, u64);
        __type(value, struct bw_rq_cg);
} cgcache SEC(".maps");

/* The wait a task is in, if it belongs to a governed group. */
struct task_wait {
        u64 since_ns;           /* 0: not waiting (or not counted) */
        u64 governed;
        u64 cfs_rq;             /* where it waits: the throttled clock is per cfs_rq */
        u64 clock_ns;           /* that throttled clock when the wait began */
        u32 preempted;
        u32 pad;
};

struct {
        __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, int);
        __type(value, struct task_wait);
} waits SEC(".maps");

/* Activity (above): the slot of each governed cgroup, by the kernfs id of
 * its cpu-controller directory; sized by the daemon, as `stats`. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 256);
        __type(key, u64);
        __type(value, u32);
} actslots SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_MMAPABLE);
        __uint(max_entries, 256);
        __type(key, u32);
        __type(value, u64);     /* an array's values are 8-byte aligned: mmapped, u64 each */
} activity SEC(".maps");

/* Slots (u32) of armed flags raised: the daemon polls its fd. */
struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, 64 * 1024);
} wakes SEC(".maps");

/* Task group (by address) → its governed slot + 1 (0: none), per
 * generation. A stale address only flags a slot too many. */
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 1024);
        __type(key, u64);
        __type(value, struct bw_rq_cg);
} actcache SEC(".maps");

/* The waits of work outside the governed groups (rqstat-abi.h). */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, u32);
        __type(value, struct bw_rq_others);
} others SEC(".maps");

/* Tasks outside the governed groups woken with a sched_info.last_queued
 * older than their wake-up (others_woken()): the rq clock at the wake-up,
 * by thread id, until the task is switched in. Few at a time: an entry is
 * taken at the task's next switch-in. */
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 4096);
        __type(key, u32);
        __type(value, u64);
} woken_late SEC(".maps");

/* Bumped by the daemon after every change to the governed set. */
volatile __u32 bw_generation;

static __always_inline u32 log2_u32(u32 v) {
        u32 r, shift;

        r = (v > 0xFFFF) << 4;
        v >>= r;
        shift = (v > 0xFF) << 3;
        v >>= shift;
        r |= shift;
        shift = (v > 0xF) << 2;
        v >>= shift;
        r |= shift;
        shift = (v > 0x3) << 1;
        v >>= shift;
        r |= shift;
        r |= (v >> 1);
        return r;
}

static __always_inline u64 slot_of(u64 ns) {
        u64 us = ns / 1000;
        u32 hi = us >> 32;

        if (us < 2)
                return 0;
        return hi ? log2_u32(hi) + 32 : log2_u32((u32) us);
}

/* One more sample in the bucket of ns. The bound is checked on the very
 * register that indexes (barrier_var): older verifiers (6.1) lose a bound
 * that clang checked on a copy. */
static __always_inline void count_in(bw_u64 slots[BW_RQ_SLOTS], u64 ns) {
        u64 s = slot_of(ns);

        barrier_var(s);
        if (s >= BW_RQ_SLOTS)
                s = BW_RQ_SLOTS - 1;
        barrier_var(s);
        if (s < BW_RQ_SLOTS)
                slots[s]++;
}

/* The governed cgroup p counts for, 0 for none. */
static __always_inline u64 governed_of(struct task_struct *p) {
        struct bw_rq_cg v = { .generation = bw_generation };
        struct cgroup *cg = p->cgroups->dfl_cgrp;
        struct bw_rq_cg *c;
        u64 id;

        if (!cg)
                return 0;
        id = cg->kn->id;
        /* The walk below runs once per cgroup and generation: CO-RE probe
         * reads there, direct loads on the hot path. */
        c = bpf_map_lookup_elem(&cgcache, &id);
        if (c && c->generation == v.generation)
                return c->governed;

        for (int i = 0; i < MAX_ANCESTOR_WALK && cg; i++) {
                u64 a = i == 0 ? id : BPF_CORE_READ(cg, kn, id);

                if (bpf_map_lookup_elem(&stats, &a)) {
                        v.governed = a;
                        break;
                }
                cg = BPF_CORE_READ(cg, self.parent, cgroup);
        }
        bpf_map_update_elem(&cgcache, &id, &v, BPF_ANY);
        return v.governed;
}

/* Raise slot's flag: 0 (armed) becomes 1; 2 (armed to wake) becomes 1 and
 * the slot goes to the daemon; a raised flag is only read. */
static __always_inline void activity_raise(u32 slot) {
        u64 *a = bpf_map_lookup_elem(&activity, &slot);

        if (!a || *a == 1)
                return;
        if (*a == 2) {
                *a = 1;
                bpf_ringbuf_output(&wakes, &slot, sizeof(slot), 0);
                return;
        }
        *a = 1;
}

/* A task of p's task group ran: flag its governed cgroup's slot. Every
 * kernel with CFS bandwidth control has sched_task_group
 * (CONFIG_CFS_BANDWIDTH needs CONFIG_CGROUP_SCHED); where it is missing the
 * programs do not load, and without them nothing is gated. */
static __always_inline void activity_mark(struct task_struct *p) {
        struct bw_rq_cg v = { .generation = bw_generation };
        struct task_group *tg = p->sched_task_group;
        u64 key = (u64) tg;
        struct bw_rq_cg *c;
        struct cgroup *cg;
        u32 slot;

        if (!tg)
                return;
        c = bpf_map_lookup_elem(&actcache, &key);
        if (c && c->generation == v.generation) {
                if (!c->governed)
                        return;
                slot = (u32) (c->governed - 1);
        } else {
                cg = BPF_CORE_READ(tg, css.cgroup);
                for (int i = 0; i < MAX_ANCESTOR_WALK && cg; i++) {
                        u64 id = BPF_CORE_READ(cg, kn, id);
                        u32 *s = bpf_map_lookup_elem(&actslots, &id);

                        if (s) {
                                v.governed = (u64) *s + 1;
                                break;
                        }
                        cg = BPF_CORE_READ(cg, self.parent, cgroup);
                }
                bpf_map_update_elem(&actcache, &key, &v, BPF_ANY);
                if (!v.governed)
                        return;
                slot = (u32) (v.governed - 1);
        }
        activity_raise(slot);
}

/* SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE: fair tasks, whose run time
 * sched_stat_runtime reports on every kernel. */
static __always_inline bool fair_policy(unsigned int policy) {
        return policy == 0 || policy == 3 || policy == 5;
}

/* The cfs_rq's throttled clock, up to now (see the top of the file). */
static __always_inline u64 throttled_clock(struct cfs_rq *cfs) {
        u64 t, since, now;

        if (!cfs)
                return 0;
        if (bpf_core_field_exists(cfs->throttled_clock_self_time)) {
                t = cfs->throttled_clock_self_time;
                since = cfs->throttled_clock_self;
                if (since) {
                        now = cfs->rq->clock;
                        if (now > since)
                                t += now - since;
                }
                return t;
        }
        if (bpf_core_field_exists(cfs->throttled_clock_pelt_time)) {
                t = cfs->throttled_clock_pelt_time;
                if (cfs->throttle_count > 0) {
                        struct rq *rq = cfs->rq;

                        now = rq->clock_pelt - rq->lost_idle_time;
                        since = cfs->throttled_clock_pelt;
                        if (now > since)
                                t += now - since;
                }
                return t;
        }
        return 0;
}

static __always_inline bool task_throttled(struct task_struct *p, struct cfs_rq *cfs) {
        if (bpf_core_field_exists(p->throttled) && p->throttled)
                return true;
        return cfs && cfs->throttle_count > 0;
}

/* Only fair tasks count in `others`: SCHED_NORMAL and SCHED_BATCH (a
 * SCHED_IDLE task chose to wait; a real-time task does not wait for the
 * governed groups' CPU); not the idle task; only where sched_info exists. */
static __always_inline bool others_counted(struct task_struct *p) {
        return bpf_core_field_exists(p->sched_info.last_queued) && p->pid != 0 && (p->policy == 0 || p->policy == 3);
}

/* A wait shorter than this is taken as it is, without a look at
 * woken_late: a stale stamp that young changes nothing. */
#define OTHERS_STALE_NS 1000000ULL

/* p, outside the governed groups, is woken (the sched_wakeup tracepoint
 * runs after its enqueue). The kernel stamped sched_info.last_queued with
 * the rq clock at that enqueue, unless a stamp was there already. One is
 * there when a sleeping task kept on its run queue by EEVDF's delayed
 * dequeue (6.12 on) was migrated while asleep: the migration's enqueue
 * stamps it, the wake-up keeps the stamp, and the whole sleep since the
 * migration would count as waiting (kcompactd, kdamond and a runtime's
 * parked threads showed their 0.5-1 s sleeps so here, beside a group that
 * filled the CPUs: a fix is proposed upstream, "don't set last_queued for
 * sched_delayed tasks"). Such a wake-up is noted, and its wait counted
 * from it (others_wait()). */
static __always_inline void others_woken(struct task_struct *p) {
        struct cfs_rq *cfs = p->se.cfs_rq;
        u64 since, clock;
        u32 pid;

        if (!others_counted(p) || !cfs)
                return;
        since = p->sched_info.last_queued;
        clock = cfs->rq->clock;
        if (!since || clock <= since + OTHERS_STALE_NS)
                return;
        pid = (u32) p->pid;
        bpf_map_update_elem(&woken_late, &pid, &clock, BPF_ANY);
}

static __always_inline void wait_begin(struct task_struct *p, u64 now, bool preempted) {
        struct cfs_rq *cfs = p->se.cfs_rq;
        struct task_wait *w;
        u64 governed = governed_of(p);

        if (!governed) {
                if (!preempted)
                        others_woken(p);
                return;
        }
        w = bpf_task_storage_get(&waits, p, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
        if (!w)
                return;
        w->since_ns = now;
        w->governed = governed;
        w->cfs_rq = (u64) cfs;
        w->clock_ns = throttled_clock(cfs);
        w->preempted = preempted;

        if (preempted && task_throttled(p, cfs)) {
                struct bw_rq_counters *c = bpf_map_lookup_elem(&stats, &governed);

                if (c && !c->pending_since_ns) {
                        c->throttles++;
                        c->pending_since_ns = now;
                        c->pending_clock_ns = w->clock_ns;
                }
        }
}

static __always_inline void throttle_end(struct bw_rq_counters *c, u64 clock, u64 now) {
        u64 wall = now > c->pending_since_ns ? now - c->pending_since_ns : 0;
        u64 d = clock > c->pending_clock_ns ? clock - c->pending_clock_ns : 0;

        if (d == 0 || d > wall)
                d = wall;
        count_in(c->throttle_slots, d);
        c->throttle_ns += d;
        c->pending_since_ns = 0;
}

/* An outside wait of `wait` ns ends at the rq clock `clock` on this CPU:
 * its part after the last one that ended here to waiting_ns, and the
 * governed run time here since that end, up to that part, to behind_ns
 * (rqstat-abi.h). sched_switch has ended the governed run that this switch
 * ends already (gov_run_switch()). */
static __always_inline void others_behind(struct bw_rq_others *o, u64 clock, u64 wait) {
        u64 from = clock - wait, span, ran;

        if (from < o->counted_clock)
                from = o->counted_clock;
        span = clock > from ? clock - from : 0;
        ran = o->governed_ns > o->counted_governed_ns ? o->governed_ns - o->counted_governed_ns : 0;
        o->waiting_ns += span;
        o->behind_ns += ran < span ? ran : span;
        o->counted_governed_ns = o->governed_ns;
        if (clock > o->counted_clock)
                o->counted_clock = clock;
}

/* This CPU (its `others` entry o) switches to next at now: a governed run
 * that ends is added to governed_ns, one that begins noted. */
static __always_inline void gov_run_switch(struct bw_rq_others *o, struct task_struct *next, u64 now) {
        if (o->governed_since_ns) {
                if (now > o->governed_since_ns)
                        o->governed_ns += now - o->governed_since_ns;
                o->governed_since_ns = 0;
        }
        if (next->pid != 0 && governed_of(next))
                o->governed_since_ns = now;
}

/* p, which no governed group counts, is switched in: its wait, from the
 * kernel's sched_info (still set at the sched_switch tracepoint:
 * sched_info_arrive() runs after it, in prepare_task_switch()), to the
 * `others` counter; from its wake-up instead where others_woken() found
 * the stamp older than that (an entry older than the stamp is a wait
 * since ended, and dropped). The rq clock is read through the task's
 * cfs_rq (updated by __schedule() before it picked the task). o is this
 * CPU's `others` entry, NULL where the lookup failed. */
static __always_inline void others_wait(struct task_struct *p, struct bw_rq_others *o) {
        struct cfs_rq *cfs;
        u64 since, clock, wait, *woke;
        u32 pid;

        if (!o || !others_counted(p))
                return;
        since = p->sched_info.last_queued;
        cfs = p->se.cfs_rq;
        if (!since || !cfs)
                return;
        clock = cfs->rq->clock;
        wait = clock > since ? clock - since : 0;
        if (wait > OTHERS_STALE_NS) {
                pid = (u32) p->pid;
                woke = bpf_map_lookup_elem(&woken_late, &pid);
                if (woke) {
                        if (*woke > since)
                                wait = clock > *woke ? clock - *woke : 0;
                        bpf_map_delete_elem(&woken_late, &pid);
                }
        }
        o->wait_ns += wait;
        o->waits++;
        o->known = 1;
        others_behind(o, clock, wait);
}

static __always_inline void wait_end(struct task_struct *p, u64 now, struct bw_rq_others *o) {
        struct task_wait *w = bpf_task_storage_get(&waits, p, NULL, 0);
        struct bw_rq_counters *c;
        struct cfs_rq *cfs;
        u64 wait, clock, thr;

        if (!w || !w->since_ns) {
                others_wait(p, o);
                return;
        }
        wait = now > w->since_ns ? now - w->since_ns : 0;
        w->since_ns = 0;
        c = bpf_map_lookup_elem(&stats, &w->governed);
        if (!c)
                return;

        count_in(c->wait_slots, wait);
        if (w->preempted)
                c->preemptions++;
        else
                c->wakeups++;
        c->wait_ns += wait;
        if (wait > c->wait_max_ns)
                c->wait_max_ns = wait;

        cfs = p->se.cfs_rq;
        clock = throttled_clock(cfs);
        if ((u64) cfs == w->cfs_rq) {
                thr = clock > w->clock_ns ? clock - w->clock_ns : 0;
                if (thr > wait)
                        thr = wait;
                c->throttled_wait_ns += thr;
                if (thr > 0)
                        c->throttled_waits++;
        } else
                c->migrated_waits++;

        if (c->pending_since_ns)
                throttle_end(c, clock, now);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(bw_sched_wakeup, struct task_struct *p) {
        wait_begin(p, bpf_ktime_get_ns(), false);
        return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(bw_sched_wakeup_new, struct task_struct *p) {
        wait_begin(p, bpf_ktime_get_ns(), false);
        return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(bw_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
             unsigned int prev_state) {
        u64 now = bpf_ktime_get_ns();
        struct bw_rq_others *o;
        u32 zero = 0;

        if (prev_state == TASK_RUNNING && prev->pid != 0)
                wait_begin(prev, now, true);
        o = bpf_map_lookup_elem(&others, &zero);
        if (o)
                gov_run_switch(o, next, now);
        wait_end(next, now, o);
        if (prev->pid != 0 && !fair_policy(prev->policy))
                activity_mark(prev);
        if (next->pid != 0 && !fair_policy(next->policy))
                activity_mark(next);
        return 0;
}

/* A governed cgroup removed (rmdir; cgroupfs sends no inotify event to a
 * watch on one of its files): its flag raised, so that its unit reads it,
 * finds it gone and forgets it, instead of taking the quiet for idleness. */
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(bw_cgroup_rmdir, struct cgroup *cgrp) {
        u64 id = BPF_CORE_READ(cgrp, kn, id);
        u32 *s = bpf_map_lookup_elem(&actslots, &id);

        if (s)
                activity_raise(*s);
        return 0;
}

/* Run time accounted to a task (update_curr): 6.1 passes the vruntime too,
 * which is not read. */
SEC("tp_btf/sched_stat_runtime")
int BPF_PROG(bw_sched_stat_runtime, struct task_struct *p) {
        activity_mark(p);
        return 0;
}
