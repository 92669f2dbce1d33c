/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's tick in five steps: observe, reconcile, decide, act, record
 * (unit-tick.c). */
#pragma once

#include "unit.h"

/* The ticker found the unit due (its entry is out of the queue): schedule
 * the next sample one Interval= after due, then tick. */
void unit_on_due(Unit *u, uint64_t due, uint64_t now);

/* One pass in five steps (unit-tick.c): observe (find the cgroup, sample it),
 * reconcile (adopt, re-base, intents: the only writes before the
 * decision), decide, act (write), record. Returns 0, also when the cgroup
 * is gone, or a negative errno (logged). */
int unit_tick(Unit *u, uint64_t now);

/* Parking: a unit still for long costs no sample of its own.
 *
 * A quiet unit whose light samples read nothing (its parent's usage did not
 * move since its own last read, usagegate.h), at rest with a full bucket
 * and no debt, nothing held against it (host shedding, latency, a PSI
 * trigger, a lever, a refused write) parks after UNIT_PARK_AFTER such
 * samples: its tick moves to its next slow full sample (at most
 * UNIT_PARKED_FULL_EVERY Interval= after its last full one), and the
 * manager calls unit_parked_still() once per Interval= instead. Every tick
 * of a parked one would have decided the same as the last: usage still,
 * the bucket full, nothing to write.
 *
 * It ticks again at once when its parent's usage moved (a task below the
 * parent ran: within one Interval= of its start), when its quota file was
 * written (by anyone, us included) or its watch ended (the cgroup went),
 * or when anything else schedules it (a reload, a shedding plan, latency
 * protection). Its first tick then counts from the last reading that
 * proved it still, as the light samples it skipped would have: the law's
 * rates and bucket are what they would have been.
 *
 * With ParkAtBaseline=yes (or auto, while the manager finds that a stop
 * would take more than UNIT_PARK_AUTO_STOP_USEC to put every governed
 * cgroup back) and the run-queue programs' wakes (rqstat-bpf.h), a
 * unit about to park puts its baseline back and arms its activity flag to
 * wake it: a stop then has nothing to write for it. To the law it still
 * rests at its headroom; the first run of one of its tasks wakes it
 * (unit_wake(), within milliseconds) and its sample raises it there. One
 * adopted at its baseline stays there (unit_rest_at_baseline()) and parks
 * after UNIT_PARK_AFTER samples; one raised since parks at its headroom
 * until its samples found no usage for UNIT_BASELINE_AFTER Interval=s, and
 * at its baseline from its first park after that (its slow full sample, a
 * minute later at most): a group with gaps of seconds between its bursts is
 * not written twice per gap. A batch of samples
 * spends at most UNIT_PARK_WRITE_BUDGET_USEC on such writes (each makes the
 * kernel walk every task group: 0.3 ms at ten thousand); a unit left over
 * parks at its next sample. */
#define UNIT_PARK_AFTER 3
#define UNIT_PARKED_FULL_EVERY 60
#define UNIT_BASELINE_AFTER 30
#define UNIT_PARK_WRITE_BUDGET_USEC (10 * USEC_PER_MSEC)
/* ParkAtBaseline=auto rests idle units at their baselines once putting
 * every governed cgroup back (at the measured cost of a planned write)
 * would take a stop longer than this, and stops at half of it. */
#define UNIT_PARK_AUTO_STOP_USEC (1 * USEC_PER_SEC)

/* Whether idle units rest at their baselines: p as set (yes, no), or for
 * auto by the stop that n_units at write_usec each would take (resting:
 * whether they do now, for the hysteresis). */
bool unit_park_resolve(enum bw_park p, bool resting, size_t n_units, uint64_t write_usec);

/* For a parked unit: true when it is still (its gate read, shared with its
 * siblings, equal to what it was before the unit's own last read; its
 * quota file not written), the reading noted; false when it must tick now.
 * Reads no file of its own. */
bool unit_parked_still(Unit *u, uint64_t now);

/* Its cgroup was removed (cgwatch, on its parent directory): a full sample
 * at once, which reads its own files, finds them gone and forgets it. A
 * light one could be gated, and a parked unit would wait for its slow full
 * sample (cgroupfs tells the watches on a removed cgroup's files nothing). */
void unit_cgroup_removed(Unit *u, uint64_t now);

/* Adoption, ParkAtBaseline= in effect: a unit whose cgroup holds its baseline
 * (cur) stays there, armed to wake, resting at rest to the law, instead of
 * being raised to rest now: an idle one is never written. Returns false
 * when it cannot (the setting off, no wakes, another value there): then
 * the caller writes rest. */
bool unit_rest_at_baseline(Unit *u, const struct bw_bandwidth *cur, const struct bw_bandwidth *rest);

/* A task of a unit parked at its baseline ran (rqstat-bpf.h's wake): its
 * sample now, or just after the law's spacing from its last one. */
void unit_wake(Unit *u, uint64_t now);
/* A task of a unit parked at its headroom with its flag armed (unit-tick.c)
 * ran: the wake is spent, its sample waits for the next check. Returns
 * false, and does nothing, for any other unit. */
bool unit_wake_headroom(Unit *u);
