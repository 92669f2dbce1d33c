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
 * unit's note says what was done to it and why (explain).
 *
 * The guard keeps its state of each unit in its own member table (the
 * ladder, the window, the fast samples, the weights, the note), in the
 * order of the unit table it was last handed; the others read it through
 * latency_guard_view(). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bwgov/law/latency.h"
#include "source/rqstat-bpf.h"
#include "unit/unit.h"

#define LATENCY_WINDOW_USEC (1000 * USEC_PER_MSEC)
/* How often the guard runs while it protects a unit: the neighbours'
 * demand is sampled and the floor set (bw_lat_pressure_step()) at this
 * pace, the ladder's windows stay LATENCY_WINDOW_USEC. */
#define LATENCY_FAST_USEC (50 * USEC_PER_MSEC)

struct latency_guard_context {
        unsigned ncpus;
        bool slice_supported;           /* bw_slice_supported() at start */
        Rqstat *const *rqstat;          /* the manager's, NULL inside when there is none */
};

struct latency_member;

struct latency_guard {
        struct latency_guard_context ctx;
        struct latency_member *members; /* one per unit of the last pass, in its order */
        size_t n_members;
        bool scaled;                    /* the last overcommit check scaled the guarantees */
        uint64_t scaled_sum;            /* what they added up to then */
        bool idle;                      /* the last pass found no latency unit and nothing held */
};

/* What latency protection holds for one unit, as explain and the metrics show it. */
struct latency_view {
        uint64_t guarantee;             /* CPUGuarantee= after overcommit scaling, µs/s */
        enum bw_lat_level level;        /* the rung in force (Class=latency) */
        bool has_p99;
        uint64_t p99_usec;              /* the latest window's run-queue wait p99 */
        uint64_t samples, missed;       /* windows seen, and those over the target */
        uint64_t changes;               /* times its rung changed */
        const char *note;               /* what is done to it and why, "" when nothing; valid until the next pass */
};

/* One pass over units[0..n) at now (CLOCK_MONOTONIC). The member table
 * follows units first (a unit new to it starts from nothing). */
void latency_guard_tick(struct latency_guard *g, Unit *const *units, size_t n, uint64_t now);

/* u's state in the guard into *ret; zeroes ("" note) for a unit the guard
 * has not seen yet. */
void latency_guard_view(const struct latency_guard *g, const Unit *u, struct latency_view *ret);
/* The same, looked for at index at of the last pass's units first (their
 * order is the members'): a pass over every unit in order is not
 * quadratic (ten thousand units, every metrics write). */
void latency_guard_view_at(const struct latency_guard *g, const Unit *u, size_t at, struct latency_view *ret);

/* u is about to be freed: forget its state (its levers are the unit's to
 * put back). Call it before unit_free(), so that a new unit at the same
 * address starts from nothing. */
void latency_guard_unit_leaving(struct latency_guard *g, Unit *u);

/* u's cgroup was closed: its window starts afresh when it is back. */
void latency_guard_cgroup_closed(struct latency_guard *g, Unit *u);

/* Frees the member table (nothing is put back). */
void latency_guard_done(struct latency_guard *g);

/* Whether the unit takes part: its cgroup open and adopted, not paused,
 * Mode= neither off nor observe. */
bool latency_guard_eligible(const Unit *u);
