/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Latency protection over the governed units: every LATENCY_FAST_USEC
 * while there is a latency unit (else every ActiveInterval=) the manager
 * hands it the units; the governed cgroups' runnable demand (CPU use plus
 * run-queue wait) sets each latency unit's floor at once when its
 * neighbours fill the host, and each Class=latency unit's run-queue wait p99
 * (the BPF telemetry; cpu.pressure where there is none) over a window of
 * at least LATENCY_WINDOW_USEC moves it on its ladder (bw_lat_step()), and
 * the levers follow what the ladders ask for: the other units' headroom
 * held, the latency units' weights and slices, the best-effort units'
 * cpu.idle. Every lever is set and put back through unit-levers.h; each
 * unit's lat_note says what was done to it and why (explain). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "telemetry.h"
#include "unit.h"

#define LATENCY_WINDOW_USEC (1000 * USEC_PER_MSEC)
/* How often the guard runs while it protects a unit: the neighbours'
 * demand is sampled and the floor set (bw_lat_pressure_step()) at this
 * pace, the ladder's windows stay LATENCY_WINDOW_USEC. */
#define LATENCY_FAST_USEC (50 * USEC_PER_MSEC)

struct latency_guard_context {
        unsigned ncpus;
        bool slice_supported;           /* bw_slice_supported() at start */
        Telemetry *const *telemetry;    /* the manager's, NULL inside when there is none */
};

struct latency_guard {
        struct latency_guard_context ctx;
        bool scaled;                    /* the last overcommit check scaled the guarantees */
        uint64_t scaled_sum;            /* what they added up to then */
        bool idle;                      /* the last pass found no latency unit and nothing held */
};

/* One pass over units[0..n) at now (CLOCK_MONOTONIC). */
void latency_guard_tick(struct latency_guard *g, Unit *const *units, size_t n, uint64_t now);

/* The guard's own levers of one unit (weight, idle, slices) and its hold,
 * back as they were: the unit left the guard's care. */
void latency_guard_release(Unit *u, const char *why);

/* Whether the unit takes part: its cgroup open and adopted, not paused,
 * Mode= neither off nor observe. */
bool latency_guard_eligible(const Unit *u);
