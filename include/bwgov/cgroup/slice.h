/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* EEVDF custom slices: a fair task's sched_attr.sched_runtime (kernel 6.12
 * and later) asks for a shorter (or longer) time slice, clamped by the
 * kernel to [100us, 100ms]; a shorter slice means an earlier virtual
 * deadline, so the task is picked sooner among the eligible. Setting 0
 * returns the task to the default (the sysctl base slice). sched_getattr()
 * reports the slice in use, custom or not, so the default cannot be told
 * from a custom slice of the same length: callers compare with the default
 * of a task of their own (bw_slice_get(0)). Before 6.12 sched_runtime means
 * nothing for fair tasks and sched_getattr() reports 0.
 *
 * And the threads of a cgroup: cgroup.threads (v2) or tasks (v1), parsed
 * from a buffer. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define BW_SLICE_MIN_USEC UINT64_C(100)
#define BW_SLICE_MAX_USEC UINT64_C(100000)

/* The slice of task tid (0: the calling thread) in µs, and whether its
 * policy is a fair one (SCHED_OTHER, SCHED_BATCH; not SCHED_IDLE, RT or
 * deadline). Returns 0, -ESRCH when the task is gone, another negative
 * errno. */
int bw_slice_get(pid_t tid, uint64_t *ret_usec, bool *ret_fair);

/* Set tid's slice to usec (0 = the default), keeping its policy and nice
 * value. Returns 0, -EOPNOTSUPP for a task that is not fair, -ESRCH when it
 * is gone, another negative errno (EPERM). */
int bw_slice_set(pid_t tid, uint64_t usec);

/* Whether this kernel has custom slices: it is 6.12 or later (uname) and a
 * fair task's sched_getattr() reports a non-zero sched_runtime (the calling
 * thread's: the answer is kept once a fair thread has asked). */
bool bw_slice_supported(void);

/* The slice of a fair thread without a custom one: the calling thread's,
 * read the first time and kept (0 when it is not fair or the read fails),
 * so that it is known before bw_slice_set_self() changes that thread's. */
uint64_t bw_slice_default_usec(void);

/* Gives the calling thread a slice of usec (0: the default), having noted
 * the default first. Returns what bw_slice_set() returns. */
int bw_slice_set_self(uint64_t usec);

/* SCHED_DEADLINE, as the kernel's ABI numbers it (glibc's <sched.h> has no
 * name for it). */
#define BW_SCHED_DEADLINE 6

/* Moves the calling thread to SCHED_DEADLINE with a budget of runtime_usec
 * every period_usec (the deadline is the period), reset on fork, having
 * noted the fair default slice first (bw_slice_default_usec()). Within its
 * budget the thread runs as soon as it wakes, ahead of every fair task;
 * past it, it waits for the next period, so that it can never take more
 * than runtime/period of a CPU. Returns 0, -EINVAL for a runtime of 0 or
 * above the period, -EPERM without CAP_SYS_NICE or where the thread may
 * not run on every CPU of its root domain, -EBUSY when the kernel's
 * admission control refuses the bandwidth. */
int bw_sched_reserve_self(uint64_t runtime_usec, uint64_t period_usec);

/* Puts the calling thread back to SCHED_OTHER with the default slice and
 * its nice value (after bw_sched_reserve_self(): for bulk work that should
 * not wait for the budget's periods). Returns 0 or a negative errno. */
int bw_sched_fair_self(void);

/* tid's scheduling policy (SCHED_OTHER, BW_SCHED_DEADLINE, ...) or a
 * negative errno. */
int bw_sched_policy(pid_t tid);

/* The clock to time the calling thread's own work with (two readings of
 * it, under one policy): its CPU time while it runs SCHED_DEADLINE, where
 * the wall clock would also count the rest of each period it waits once
 * its budget is spent (writes measured so came out at 5 ms each instead of
 * tens of µs), CLOCK_MONOTONIC otherwise, where waiting for a CPU on a busy
 * host is part of what the work takes. */
clockid_t bw_sched_cost_clock(void);

/* Parse a list of task ids, one per line (cgroup.threads, tasks), into a
 * sorted array without duplicates (*ret, free()). Returns 0, -EINVAL for a
 * malformed line, -ENOMEM. */
int bw_slice_parse_tids(const char *buf, size_t len, pid_t **ret, size_t *ret_n);

/* The threads of the cgroup at dirfd and of every cgroup below it (file:
 * "cgroup.threads" on cgroup2, "tasks" on v1), at most max_depth levels
 * down, sorted without duplicates (*ret, free()). A child that vanishes
 * meanwhile is skipped. Returns 0, or a negative errno for the top
 * directory's file (-ENOENT/-ENODEV when the cgroup vanished). */
int bw_slice_cgroup_tids(int dirfd, const char *file, unsigned max_depth, pid_t **ret, size_t *ret_n);
