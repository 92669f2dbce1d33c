/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A unit's view of the run-queue telemetry (telemetry.h): its cgroup's
 * counters since it was first counted, and the window over its latest
 * sample interval, which the law sees (p99 and throttled share) and explain
 * shows. Plain state in the Unit; the Telemetry itself is the manager's. */

#include <stdbool.h>
#include <stdint.h>

#include "bwgov/policy.h"
#include "bwgov/rqstat-abi.h"
#include "telemetry.h"

struct unit_telemetry_counts {
        bool has_last;
        struct bw_rq_counters last;     /* cumulative, at the last sample */
        uint64_t last_usec;             /* CLOCK_MONOTONIC of that sample */
        bool has_window;
        struct bw_rq_counters window;   /* last minus the one before */
        uint64_t window_usec;
};

/* The counters are allocated while the cgroup is tracked: a kilobyte per
 * unit that ten thousand units without telemetry do not need. */
struct unit_telemetry {
        uint64_t cgroup_id;             /* tracked under this id; 0 when not tracked */
        uint64_t since_realtime_usec;   /* CLOCK_REALTIME when it was first tracked */
        struct unit_telemetry_counts *c;        /* non-NULL while tracked */
};

/* The cgroup was opened (v2_dirfd: its cgroup2 directory, -1 when the host
 * has none): count it. Returns 0 or a negative errno (logged by the caller). */
int unit_telemetry_attach(struct unit_telemetry *ut, Telemetry *t, int v2_dirfd);
/* The cgroup was closed, or telemetry goes away: stop counting it. */
void unit_telemetry_detach(struct unit_telemetry *ut, Telemetry *t);

/* Read the counters at a sample: update the window and fill the input's
 * run-queue figures (has_rq false when there were no waits). Returns 0, or
 * a negative errno when the counters could not be read. */
int unit_telemetry_sample(struct unit_telemetry *ut, Telemetry *t, uint64_t now_usec,
                          struct bw_policy_input *in);
