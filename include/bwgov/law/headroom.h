/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The headroom levels of the control law and what each costs: extra quota
 * above the baseline rests on one of BW_HEADROOM_LEVELS fractions of the
 * largest headroom, on a 1 ms grid, and a level is affordable when the
 * credit bucket holds what it costs until the next sample
 * (bw_credit_needed()). Section 3 of the essay in src/lib/law/policy.c. Pure,
 * no state: the law fills a struct bw_headroom once per decision.
 *
 * Units: µs per period for quotas and headroom, CPU-µs for credit, µs for
 * horizons. */

#include <stdbool.h>
#include <stdint.h>

#include "bwgov/law/credit.h"

/* Headroom levels: the extra quota rests on one of these fractions of the
 * largest headroom (1/4, 2/4, 3/4, 4/4), so that a group whose credit moves
 * a little is not rewritten every tick. */
#define BW_HEADROOM_LEVELS 4

/* The grid of every quota and burst the law sets, anchored at the baseline. */
#define BW_HEADROOM_QUANTUM_USEC UINT64_C(1000)

/* Raising to a level needs RAISE_NUM/RAISE_DEN (5/4) of what it costs, so
 * that a raise lasts even at full spending (hysteresis against holding). */
#define BW_HEADROOM_RAISE_NUM UINT64_C(5)
#define BW_HEADROOM_RAISE_DEN UINT64_C(4)

/* What the law knows about the price of headroom for one decision. */
struct bw_headroom {
        uint64_t period_usec;
        uint64_t baseline_quota_usec;
        uint64_t burst_usec;            /* the burst next to any quota the law sets */
        uint64_t slack_usec;            /* per-CPU slack and the bucket's uncertainty (bw_credit_reserve()) */
        uint64_t fast_usec;             /* the short horizon, lateness included */
        uint64_t slow_usec;             /* the idle horizon (Interval=), lateness included */
        uint64_t max_usec;              /* the largest headroom, after every cap */
};

/* v rounded down to the grid. */
uint64_t bw_headroom_quant_down(uint64_t v);

/* The headroom of level k (0..BW_HEADROOM_LEVELS): k/LEVELS of max_usec,
 * rounded down to the grid. Level 0 is no headroom. */
uint64_t bw_headroom_level(const struct bw_headroom *h, unsigned k);

/* The credit needed to hold extra quota `extra_usec` until a sample
 * horizon_usec away (bw_credit_needed() with this decision's prices). */
uint64_t bw_headroom_cost(const struct bw_headroom *h, uint64_t extra_usec, uint64_t horizon_usec);

/* The highest level k > 0 with a non-zero headroom whose cost over
 * horizon_usec the credit covers (times 5/4 with raise_margin); 0 when none
 * or when the bucket is in debt. */
unsigned bw_headroom_affordable(const struct bw_headroom *h, const struct bw_credit *c, uint64_t horizon_usec,
                                bool raise_margin);

/* Where a full bucket (credit_max_usec) rests: the highest level it affords
 * at the idle horizon, with the raise margin. */
unsigned bw_headroom_reachable(const struct bw_headroom *h, uint64_t credit_max_usec);

/* The lowest level a raise from a headroom of from_usec goes to on the way
 * back up: where a full bucket rests (bw_headroom_reachable()), or, from a
 * level below half of that (the baseline included), half of it (rounded
 * up). The way back is thus at most two writes from wherever the credit
 * left the unit: half the headroom once the credit pays for it, then the
 * rest. */
unsigned bw_headroom_way_back(const struct bw_headroom *h, uint64_t credit_max_usec, uint64_t from_usec);

/* The highest level whose non-zero headroom is at or below extra_usec; 0
 * when none. */
unsigned bw_headroom_level_at_or_below(const struct bw_headroom *h, uint64_t extra_usec);
