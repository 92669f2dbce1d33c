/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Controlled contention, pure: among the throughput units that together
 * want more CPU than the host has, which are frozen now and until when
 * (Contention=gang), which CPUs each may use (Contention=pin), and when the
 * contention is over. The daemon reads each unit's usage and weight, calls
 * bw_contention_observe() and bw_contention_plan(), and writes what the
 * plan says (cgroup.freeze / freezer.state, cpuset.cpus); it decides
 * nothing itself.
 *
 * Demand. A unit's demand is the CPU it used (µs/s) over its latest window
 * in which it was not frozen: a frozen unit uses nothing, and what it would
 * use is what it used when it last ran. A unit is busy when its demand is
 * at least BW_CONTENTION_BUSY_MIN. Idle units take no part: they are never
 * frozen and never pinned.
 *
 * Contention starts when at least two units are busy and either at least
 * two of them are starved (their threads wait for a CPU: on a host shared
 * with other work their usage alone never adds up to the host) or their
 * demands add up to at least BW_CONTENTION_ENTER_PERMILLE of the host's CPUs
 * (the host is full of them). It ends, with every unit thawed and on all
 * CPUs again, when fewer than two are busy, or fewer than two starved and
 * their demands under BW_CONTENTION_LEAVE_PERMILLE (hysteresis: pinned or
 * gang-scheduled units cannot use more than the host, so their sum sits at
 * the host's size, and one threshold would flap).
 *
 * gang: the busy units take turns leading a slot of ContentionInterval=, in
 * the order the daemon passes them. The leader runs; then, in turn order,
 * every other busy unit whose want still fits the CPUs the slot has left
 * runs beside it (a leader that uses one CPU of two leaves the other to the
 * next one: strict gang scheduling wastes it, the slides' measurement).
 * A unit's want is its demand, unless it was starved over the window its
 * demand comes from (its CPU pressure "some" at least
 * BW_CONTENTION_STARVED_MIN: its threads waited for a CPU, so it used less
 * than it wanted), or its pressure is unknown: then it wants the whole host.
 * The others are frozen for the slot. A frozen unit runs again within
 * (busy units - 1) slots.
 *
 * pin: each busy unit gets a contiguous run of the host's CPUs, as many as
 * its cpu.weight share of them (largest remainder), at least one; the runs
 * are disjoint. With more busy units than CPUs, each busy unit gets one CPU
 * and the units are dealt to CPUs heaviest first, each to the CPU with the
 * least weight on it so far (ties: the lower CPU), so that units share a
 * CPU under the kernel's fair scheduler, in proportion to their weights.
 * Nothing is frozen.
 *
 * share: nothing is frozen or pinned; the planner only says whether the
 * units are contending (for status). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bwgov/config/config.h"

#define BW_CONTENTION_BUSY_MIN       UINT64_C(100000)   /* 10 % of a CPU: less is idle */
#define BW_CONTENTION_STARVED_MIN    UINT64_C(100000)   /* PSI some 10 % of the time: it wanted more */
#define BW_CONTENTION_NO_PSI         UINT64_MAX         /* bw_contention_observe() without pressure */
/* Usage cannot show more demand than the host has, and a host shared with
 * other work shows less: three quarters of the host's CPUs used by the
 * busy units is a full host. A false start costs little: gang slots pack
 * units that fit together, and pinning gives each at least a CPU. */
#define BW_CONTENTION_ENTER_PERMILLE UINT64_C(750)      /* of the host's CPUs: contention starts */
#define BW_CONTENTION_LEAVE_PERMILLE UINT64_C(500)      /* ... and ends under this */
/* Without a slot to keep (pin, share, no contention), the plan is made again
 * this often at most: new busy units are seen within a second. */
#define BW_CONTENTION_REPLAN_MAX_USEC UINT64_C(1000000)
/* Within a gang slot, this often: a leader whose work is done (or that went
 * idle) hands over within this long instead of leaving the host idle until
 * its slot ends (measured: with 2 s slots and no check, the makespan of
 * the contention benchmark was 1.6 times the kernel's). */
#define BW_CONTENTION_GANG_CHECK_USEC UINT64_C(200000)

/* One unit taking part (a Class=throughput unit whose cgroup is open and
 * that is not paused). The daemon keeps it between calls. */
struct bw_contention_unit {
        uint64_t weight;                /* cpu.weight, 1..10000 (v1: cpu.shares mapped); 0 reads as 100 */

        /* bw_contention_observe()'s state */
        bool has_sample;
        uint64_t last_usage_usec;
        uint64_t last_time_usec;
        uint64_t last_some_usec;        /* PSI some total, BW_CONTENTION_NO_PSI when unknown */
        bool has_demand;
        uint64_t demand_rate;           /* µs/s over its latest window unfrozen */
        bool starved;                   /* ... and it waited for a CPU over that window (or unknown) */

        /* bw_contention_plan()'s output */
        bool busy;
        bool frozen;
        size_t cpu_first;               /* index into the host's CPU array ... */
        size_t cpu_count;               /* ... and how many; 0: all CPUs (not pinned) */
};

struct bw_contention_state {
        bool contended;
        size_t leader;                  /* index of the unit leading the gang slot */
        bool has_slot;
        uint64_t slot_end_usec;         /* when the gang slot ends */
};

/* A sample of u at now: its cumulative usage and CPU pressure "some" total
 * (BW_CONTENTION_NO_PSI when it has none). The demand becomes the usage
 * rate since the previous sample and starved whether the pressure grew by
 * BW_CONTENTION_STARVED_MIN per second or more, unless u was frozen by the
 * plan in force over that window (u->frozen), which keeps what it had. A
 * usage that went back (a new cgroup under the same name) starts over from
 * this sample; no time passed changes nothing. */
void bw_contention_observe(struct bw_contention_unit *u, uint64_t usage_usec, uint64_t some_usec, uint64_t now_usec);

/* Forget u's samples and demand (its cgroup was closed, or it was paused). */
void bw_contention_forget(struct bw_contention_unit *u);

/* Plan at now for units[0..n) (the gang turn order is this order) on a host
 * of ncpus CPUs: fills each unit's busy, frozen, cpu_first and cpu_count,
 * updates st, and returns in *ret_next_usec when to plan again (the end of
 * the gang slot or now + BW_CONTENTION_GANG_CHECK_USEC, whichever is first;
 * else now + min(interval, BW_CONTENTION_REPLAN_MAX_USEC)).
 * A new gang slot starts when the current one has ended or its leader is no
 * longer busy; otherwise the running slot's leader is kept. Returns 0, or
 * -EINVAL for ncpus 0, interval_usec 0, an invalid mode, or n > 0 with a NULL
 * array. */
int bw_contention_plan(
                enum bw_contention mode,
                struct bw_contention_unit *units,
                size_t n,
                size_t ncpus,
                uint64_t interval_usec,
                uint64_t now_usec,
                struct bw_contention_state *st,
                uint64_t *ret_next_usec);
