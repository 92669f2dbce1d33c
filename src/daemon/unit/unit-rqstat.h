/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A unit's view of the run-queue telemetry (rqstat-bpf.h): its cgroup's
 * counters since it was first counted, and the window over its latest
 * sample interval, which the law sees (p99 and throttled share) and explain
 * shows. Plain state in the Unit; the Rqstat itself is the manager's. */

#include <stdbool.h>
#include <stdint.h>

#include "bwgov/law/policy.h"
#include "bwgov/telemetry/rqstat-abi.h"
#include "source/rqstat-bpf.h"

struct unit_rqstat_counts {
        bool has_last;
        struct bw_rq_counters last;     /* cumulative, at the last sample */
        uint64_t last_usec;             /* CLOCK_MONOTONIC of that sample */
        bool has_window;
        struct bw_rq_counters window;   /* last minus the one before */
        uint64_t window_usec;
};

/* The counters are allocated once the tracked cgroup's are not all zero: a
 * kilobyte per unit that idle units (most of a thousand containers) and
 * units without telemetry do not need. Until then they are zero, as of
 * the samples counted in zero_samples (the last at zero_usec). */
struct unit_rqstat {
        uint64_t cgroup_id;             /* tracked under this id; 0 when not tracked */
        uint64_t since_realtime_usec;   /* CLOCK_REALTIME when it was first tracked */
        struct unit_rqstat_counts *c;        /* non-NULL once something was counted */
        uint64_t zero_usec;
        uint64_t zero_window_usec;      /* between the last two of them */
        uint32_t act_slot;              /* its activity slot, if act_watched */
        uint8_t zero_samples;           /* samples that found nothing counted yet (0, 1, 2: many) */
        bool act_watched;               /* its activity is watched (rqstat_watch()) in act_slot */
};

/* The counts as the snapshot and explain see them: *c, or zeros for a
 * tracked cgroup where nothing was counted yet (NULL before any sample). */
const struct unit_rqstat_counts *unit_rqstat_counts(const struct unit_rqstat *ut);

/* The cgroup was opened (v2_dirfd: its cgroup2 directory, -1 when the host
 * has none; cpu_cgroup_id: the inode of its directory holding cpu.max):
 * count it and watch its activity, a wake handed owner (rqstat-bpf.h). Returns
 * 0 or a negative errno (logged by the caller). */
int unit_rqstat_attach(struct unit_rqstat *ut, Rqstat *t, int v2_dirfd, uint64_t cpu_cgroup_id, void *owner);
/* The cgroup was closed, or telemetry goes away: stop counting it. */
void unit_rqstat_detach(struct unit_rqstat *ut, Rqstat *t);

/* Read the counters at a sample: update the window and fill the input's
 * run-queue figures (has_rq false when there were no waits). Returns 0, or
 * a negative errno when the counters could not be read. */
int unit_rqstat_sample(struct unit_rqstat *ut, Rqstat *t, uint64_t now_usec,
                          struct bw_policy_input *in);
