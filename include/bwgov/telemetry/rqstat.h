/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Run-queue telemetry as numbers people read: sums over CPUs, deltas between
 * two samples, percentiles from the log2 histogram, and the JSON the daemon
 * serves (io.bwgov.Governor.GetLatency, `bwgovctl latency --json`). Pure
 * functions; the counters come from src/bpf/rqstat.bpf.c through the daemon
 * (include/bwgov/telemetry/rqstat-abi.h says what each one counts). */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "bwgov/telemetry/rqstat-abi.h"

/* The percentiles reported everywhere, in parts per 10000. */
#define BW_RQ_P50  5000u
#define BW_RQ_P90  9000u
#define BW_RQ_P99  9900u
#define BW_RQ_P999 9990u

/* Add x's counters to *acc (per-CPU values to one); the pending_* scratch
 * fields are not data and are left 0 in *acc; wait_max_ns is the max. */
void bw_rq_add(struct bw_rq_counters *acc, const struct bw_rq_counters *x);

/* now - before, counter by counter. A counter that went down means the
 * counters were reset (the daemon reloaded the programs): then *ret is now
 * and the function returns 1; else 0. wait_max_ns of a delta is now's when
 * it grew, else unknown: the upper bound of the highest non-empty bucket. */
int bw_rq_delta(const struct bw_rq_counters *now, const struct bw_rq_counters *before,
                struct bw_rq_counters *ret);

/* The outside work's waits behind governed work on another CPU between
 * two readings of the per-CPU `others` counters (n CPUs each), ns: the
 * load balancer weighs groups, not tasks, and may leave the governed
 * group's threads on one CPU and the outside tasks queued on another, where
 * they wait for each other for a CPU the group took. Per CPU, the governed
 * run time with no outside work waiting there (governed_ns - behind_ns) and
 * the outside waiting with no governed work running there (waiting_ns -
 * behind_ns), each summed over the CPUs: the smaller of the two sums is
 * what can have been taken from waiting outside work elsewhere. Between
 * readings a quarter of a second apart it pairs what held at the same
 * time; over longer ones it also pairs moments apart (an upper bound). A
 * counter that went down (the programs loaded again) counts 0 on its CPU. */
uint64_t bw_rq_others_cross(const struct bw_rq_others *now, const struct bw_rq_others *before, size_t n);

/* Sum of the wait histogram (= wakeups + preemptions when consistent). */
uint64_t bw_rq_waits(const struct bw_rq_counters *c);

/* Whether anything was counted: a wait, a throttle, a throttled wait (the
 * scratch fields aside). A group none of whose tasks ran has nothing. */
bool bw_rq_any(const struct bw_rq_counters *c);

/* The bounds of bucket `slot` in µs: [lo, hi); hi is UINT64_MAX for the last. */
void bw_rq_slot_range(unsigned slot, uint64_t *ret_lo_usec, uint64_t *ret_hi_usec);

/* The q-quantile (q in parts per 10000, 1..10000) of a histogram as an upper
 * bound: the upper end of the bucket that holds it, but not above max_ns
 * (when max_ns > 0). At least q of the samples were shorter than the result
 * (or equal to max). -ENODATA for an empty histogram, -EINVAL for q out of
 * range; else 0 with *ret_usec. */
int bw_rq_quantile_usec(const uint64_t slots[static BW_RQ_SLOTS], uint64_t max_ns, unsigned q,
                        uint64_t *ret_usec);

/* The same quantile interpolated linearly inside its bucket (as if the
 * bucket's samples were spread evenly over [lo, hi)), not above max_ns:
 * an estimate, for comparisons with a target (LatencyTarget=) that a
 * factor-2 upper bound would blur. Same returns as bw_rq_quantile_usec(). */
int bw_rq_quantile_interp_usec(const uint64_t slots[static BW_RQ_SLOTS], uint64_t max_ns, unsigned q,
                               uint64_t *ret_usec);

/* The JSON object io.bwgov.Governor's LatencyFigures type describes (see
 * src/daemon/varlink/io.bwgov.Governor.varlink). NULL on allocation failure. */
json_t *bw_rq_figures_to_json(const struct bw_rq_counters *c);
