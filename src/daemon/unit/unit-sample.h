/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's samples, full and light, the law's input made from one, and the
 * caps others put on its headroom (unit-sample.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/cgroup/cpustat.h"
#include "bwgov/cgroup/psi.h"
#include "source/usagegate.h"

typedef struct Unit Unit;
struct bw_policy_input;

/* What a unit reads before its law decides, and how much of it.
 *
 * A full sample reads cpu.stat (and the twin's usage, cpu.stat.local),
 * cpu.pressure, the bandwidth files, the run-queue telemetry, systemd's
 * CPUQuota=. Most governed groups, most of the time, are quiet: at rest,
 * not spending credit, never throttled. Their samples between two full
 * ones (every UNIT_QUIET_FULL_EVERY) are light: cpu.stat (throttling and
 * usage), and the quota file only when it was written since (quotawatch.h;
 * without a watch, from its held file), nothing else. Throttling since
 * the last sample, a quota written by someone else, a shedding plan or a
 * write of ours each make it a full sample at once; pressure matters to the
 * law only with throttling, so skipping it while there is none loses
 * nothing. A period or burst written alone by someone else waits for the
 * next full sample.
 *
 * PSI triggers wake a unit the moment it stalls, between samples. Each
 * costs the kernel a poll and its close waits for an RCU grace period
 * (9 ms here: a thousand of them made a stop take ten seconds), so only
 * groups near their quota hold one: opened when a sample finds the group
 * near (spending, throttled, or using half its baseline), closed after
 * UNIT_TRIGGER_LINGER_USEC far from it, a few closes per second at most. */

#define UNIT_QUIET_FULL_EVERY 20
#define UNIT_TRIGGER_LINGER_USEC (60 * USEC_PER_SEC)

/* The sampler's memory and gates, in each Unit; only unit-sample.c and the
 * tick (unit-tick.c) read or write them. */
struct unit_sampler {
        uint64_t last_tick_usec;
        uint64_t deadline_usec;         /* the latest sample the last decision's horizon allows */
        struct bw_cpu_stat last_stat;   /* valid if has_last_stat */
        /* The last full sample's pressure as the law reads it, its full
         * line's total (has_last_psi, last_psi_has_full): light samples
         * reuse it. */
        uint64_t last_psi_full_usec;
        uint64_t quiet_samples;         /* consecutive quiet decisions */
        UsageGate *gate;                /* its parent's usage, while open (usagegate.h); if gate_valid, ... */
        uint64_t gate_usage_usec;       /* ... read before its own last usage read with this value ... */
        uint64_t gate_after_usec;       /* ... and that read of its own taken at this time */
        /* Parked (unit-tick.h): out of the per-Interval= rhythm until its
         * gate moves, its quota file is written, or a full sample is due. */
        uint64_t parked_usage_usec;     /* its usage while parked, as the host's sum counts it (0: not counted) */
        uint64_t parked_usec;           /* when it parked */
        uint64_t still_usec;            /* the last gate reading that proved it still (parked) */
        uint64_t last_full_usec;        /* its last full sample */
        uint64_t twin_tried_usec;       /* open without its v2 twin (hybrid): when it was last looked for */
        /* Parked at its baseline (ParkAtBaseline=, unit-tick.c): the kernel
         * holds the baseline and its activity flag is armed to wake it; to
         * the law it rests at `rest`, where its first run raises it. */
        struct bw_bandwidth rest;
        uint64_t used_usec;             /* its last sample that found usage (or its first) */
        /* The host's own last reading of its usage (unit_usage_now(), from
         * manager-host.c near the host's limit) and when it was taken: the
         * next host sample's rate of it. */
        uint64_t host_usage_usec;
        uint64_t host_read_usec;

        /* The flags together (ten thousand units: no padding after each). */
        bool has_last_stat;
        bool has_last_psi;
        bool last_psi_has_full;
        bool quiet;                     /* the last decision found it quiet: light samples (above) */
        bool gate_valid;                /* gate_usage_usec and gate_after_usec hold a reading */
        bool gated;                     /* this tick's sample read nothing of its own (no file opened) */
        bool parked;                    /* parked (above) */
        bool full_due;                  /* the parked unit's slow full sample: the next one is full */
        bool at_baseline;               /* parked at its baseline (above) */
        bool wake_armed;                /* parked at its headroom, its flag armed to wake bwgovd (unit-tick.c) */
};

/* Whether the unit's gate is its activity flag (rqstat-bpf.h: BPF loaded, its
 * cgroup watched, no governed unit below it) rather than its parent's
 * usage (usagegate.h). */
bool unit_activity_gated(const Unit *u);
/* Whether its gate shows that nothing of the unit ran since its own usage
 * was last read (then *ret_usec: when that was last known). Reads no file
 * when gated by activity, at most the parent's usage otherwise. */
bool unit_gate_unmoved(Unit *u, uint64_t now, uint64_t *ret_usec);

/* The unit's cumulative usage at `now`, for the host's sample: its last
 * reading when its activity flag shows that nothing of it ran since, else
 * read (one file); and its rate, µs/s, since the host's own last reading of
 * it if the host took that at host_last_usec (its last sample), else since
 * the law's last sample of it (0 when neither is older than now). Notes the
 * reading for the host's next sample; changes nothing of the unit's own
 * sampling. Returns 0, -ENODATA without a usage reading, -ERANGE for a
 * usage below its last sample's (a counter that went back), or a negative
 * errno from the read. */
int unit_usage_now(Unit *u, uint64_t now, uint64_t host_last_usec, uint64_t *ret_usec, uint64_t *ret_rate);

/* The reads of a full sample (the tick's observe step): cpu.stat and PSI
 * into in, the usage gate noted before them. Returns 1, -ENODEV when the
 * cgroup vanished (unit_vanished()), or a negative errno (logged). Writes
 * no cgroup file. */
int unit_sample(Unit *u, struct bw_policy_input *in);

/* A light sample of a quiet unit, with *cur what the kernel holds. Returns
 * 1 when taken, 0 when a full one is needed, -ENODEV when the cgroup
 * vanished (unit_vanished()). Writes no cgroup file. */
int unit_sample_light(Unit *u, struct bw_bandwidth *cur, struct bw_policy_input *in);

/* The law's input from a sample taken (the tick's decide step): cur what
 * the kernel holds, the nearest limited ancestor's quota (read again for a
 * full sample, the one known for a light one), the caps others put on its
 * headroom (taken: a shedding plan applies once) and, for a full sample,
 * the run-queue telemetry. Reads only. */
void unit_sample_input(Unit *u, const struct bw_bandwidth *cur, bool full, struct bw_policy_input *in);

/* The caps other policies put on the unit's headroom, taken by its next
 * sample (the only way they reach the unit):
 * UNIT_CAP_HOST_SHED: the host's shedding plan gives it permille of its
 *   headroom to give up (shown; 0: none); a share is applied once, at a
 *   tick at now.
 * UNIT_CAP_LATENCY_HOLD: permille > 0 holds its headroom at the contract
 *   for a latency unit (as host pressure does); a hold that begins
 *   withdraws all headroom at once (a tick at now); 0 lets go. */
enum unit_cap {
        UNIT_CAP_HOST_SHED,
        UNIT_CAP_LATENCY_HOLD,
};
void unit_set_headroom_cap(Unit *u, enum unit_cap cap, unsigned permille, uint64_t now);
