/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The run-queue telemetry programs (src/bpf/rqstat.bpf.c), loaded and
 * attached once by the manager, and the set of cgroups they count: one entry
 * per governed cgroup (by cgroup id, the inode of its cgroup2 directory).
 * Reading a cgroup's counters sums them over CPUs. When the set outgrows the
 * maps, the programs are loaded again at twice the size and every tracked
 * cgroup counts from zero (bw_rq_delta() sees the reset). Built without BPF,
 * rqstat_new() fails with -EOPNOTSUPP and says so. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "bwgov/telemetry/rqstat-abi.h"

typedef struct Rqstat Rqstat;

#define RQSTAT_REASON_MAX 256

/* Load and attach, sized for `capacity` governed cgroups (grows on demand).
 * On failure returns a negative errno and writes why, for people, into
 * reason: no BPF in this build, no BTF in the kernel, not permitted, ... */
int rqstat_new(size_t capacity, Rqstat **ret, char reason[static RQSTAT_REASON_MAX]);
Rqstat *rqstat_free(Rqstat *t);

/* Count the cgroup with this id (0, or -ENOMEM, or a load error when
 * growing). Tracking an id already tracked is a no-op. */
int rqstat_track(Rqstat *t, uint64_t cgroup_id);
/* Stop counting it; 0 also when it was not tracked. */
int rqstat_untrack(Rqstat *t, uint64_t cgroup_id);
/* Its counters summed over CPUs; -ENOENT when not tracked. */
int rqstat_read(Rqstat *t, uint64_t cgroup_id, struct bw_rq_counters *ret);
/* The waits of the fair tasks outside every governed group (rqstat-abi.h),
 * summed over CPUs; they start from 0 again when the programs are loaded
 * again (rqstat_loads() tells). -ENODATA until a wait was read from a
 * kernel that keeps sched_info (never, without CONFIG_SCHED_INFO).
 * behind_ns also has, summed over the readings so far, the waits behind
 * governed work on another CPU (bw_rq_others_cross() between each reading
 * and the one before): read it as often as that should resolve (the host
 * sample does, every ActiveInterval= near its limit). The scratch fields
 * are 0. */
int rqstat_read_others(Rqstat *t, struct bw_rq_others *ret);

size_t rqstat_tracked(const Rqstat *t);

/* Activity: whether a task of a cgroup ran since its unit last looked.
 * Watch the cgroup by the id of its cpu-controller directory (the one
 * holding cpu.max: a v1 one on a hybrid host; tasks in its descendants
 * count for the nearest watched one); the slot is the unit's handle. Arm
 * the slot just before reading the cgroup's usage: rqstat_ran() then says
 * whether any of its tasks was accounted run time since (true when it
 * cannot tell: a slot not handed out, a map loaded again). A slot given
 * back may be handed out again. Without BPF, rqstat_watch() fails with
 * -EOPNOTSUPP. owner is what a wake of the slot is handed (below). */
int rqstat_watch(Rqstat *t, uint64_t cpu_cgroup_id, void *owner, uint32_t *ret_slot);
int rqstat_unwatch(Rqstat *t, uint32_t slot);
void rqstat_arm(Rqstat *t, uint32_t slot);
bool rqstat_ran(const Rqstat *t, uint32_t slot);

/* Wakes: armed with rqstat_arm_wake() instead of rqstat_arm(), the first
 * run of a task of the cgroup also calls the wake function with the slot's
 * owner, from the event loop, within milliseconds (a ring buffer the
 * programs write to). A slot may be woken twice for one run, or (rarely:
 * the ring full, a race with the arm) not at all: rqstat_ran() still says
 * it ran. rqstat_arm_wake_still() arms to wake only if nothing ran since
 * the last arm, and says whether it did. rqstat_follow_wakes() starts
 * following them (0, or a negative errno: then rqstat_can_wake() is
 * false). */
typedef void (*rqstat_wake_fn)(void *owner, void *userdata);
int rqstat_follow_wakes(Rqstat *t, sd_event *e, rqstat_wake_fn fn, void *userdata);
bool rqstat_can_wake(const Rqstat *t);
void rqstat_arm_wake(Rqstat *t, uint32_t slot);
bool rqstat_arm_wake_still(Rqstat *t, uint32_t slot);
/* Slots woken through the ring buffer so far. */
uint64_t rqstat_wakes(const Rqstat *t);
size_t rqstat_watched(const Rqstat *t);
/* How often the programs were loaded (1 + the times the maps grew). */
unsigned rqstat_loads(const Rqstat *t);

/* libbpf's messages to the journal (warnings as warnings, the rest at
 * debug level); every user of libbpf calls this before loading. */
void rqstat_libbpf_log(void);

/* The cgroup id of a cgroup2 directory: its inode number. */
int rqstat_cgroup_id(int dirfd, uint64_t *ret);
