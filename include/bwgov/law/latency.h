/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Latency protection, the pure part: FDL's ideas (a latency target and a
 * bandwidth guarantee per group, graceful degradation rather than admission
 * control) with the levers today's kernels offer, as a ladder a
 * Class=latency unit climbs one rung per sample while its run-queue wait
 * p99 misses LatencyTarget=, cheapest first, and descends one rung after a
 * run of samples met with margin:
 *
 *   none        nothing done for it;
 *   hold        the headroom of the throughput and best-effort units is
 *               withdrawn and held (they stay at their contracts, never below);
 *   weight      its cpu.weight is raised to what CPUGuarantee= asks for
 *               against its siblings (bw_lat_guarantee_weight()), or four
 *               times its own without one;
 *   weight-high sixteen times its own weight (or its guarantee weight, if
 *               more), at most 10000 (cpu.shares 102400): not simply the
 *               maximum, because a parent's weight is split over the CPUs by
 *               its children's load, and a child with an extreme weight
 *               leaves its siblings' CPUs little of the parent's weight
 *               against the rest of the host;
 *   slice       its threads get a short EEVDF slice (6.12+, skipped before);
 *   idle        the best-effort units go into cpu.idle (skipped when there
 *               are none): the one lever that puts a unit below its contract.
 *
 * A sample is missed when its p99 is above the target (two rungs at once
 * when it is more than BW_LAT_FAR times the target), met with margin at or
 * below three quarters of it (or with no waits at all). The run of met
 * samples a step down needs starts at BW_LAT_HOLD_MIN and doubles, up to
 * BW_LAT_HOLD_MAX, each time a step down is followed by a miss within twice
 * that run: a group that needs a lever keeps it instead of flapping.
 *
 * The neighbours: every fast sample (LATENCY_FAST_USEC in the daemon, 50 ms)
 * the guard measures the runnable demand of the other governed units (their
 * CPU use plus their run-queue wait, in milli-CPUs) and hands it to
 * bw_lat_pressure_step(). When that demand and the unit's own use fill
 * BW_LAT_CONTENDED_PERMILLE of the host, the unit gets the floor of its top
 * rung at once (idle where best-effort units are governed, else slice or
 * weight-high): the lever a saturated host needs, from the first sample,
 * before any wait is missed. A rung, the floor's or one the ladder climbed
 * to, remembers the neighbours' demand that came with it (cause_mcpu); while
 * that demand is there, met samples do not step the ladder down (they are
 * met because it is protected). The cause is gone when the demand fell to
 * half of it and either below BW_LAT_NOISE_MCPU (the unit's own load may
 * keep the host busy: it is no neighbour) or the host below
 * BW_LAT_CALM_PERMILLE, for BW_LAT_CALM_USEC on end: then floor and ladder
 * come down to none at once. A ladder climbed
 * with no neighbour demand to speak of (below BW_LAT_NOISE_MCPU: the unit's
 * own load) descends on met samples as above. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum bw_lat_level {
        BW_LAT_NONE = 0,
        BW_LAT_HOLD,
        BW_LAT_WEIGHT,
        BW_LAT_WEIGHT_HIGH,
        BW_LAT_SLICE,
        BW_LAT_IDLE,
        _BW_LAT_MAX,
        _BW_LAT_INVALID = -1,
};

#define BW_LAT_HOLD_MIN 8u
#define BW_LAT_FAR      4u
#define BW_LAT_HOLD_MAX 256u

#define BW_LAT_CONTENDED_PERMILLE 900u  /* neighbours' demand + own use, of the host's CPUs: floor */
#define BW_LAT_CALM_PERMILLE      600u  /* ... below this (or the demand noise; and halved): gone ... */
#define BW_LAT_CALM_USEC          (UINT64_C(3) * 1000000)      /* ... for this long: released */
#define BW_LAT_NOISE_MCPU         100u  /* less neighbour demand than this caused nothing */

/* "none", "hold", "weight", "weight-high", "slice", "idle". */
const char *bw_lat_level_to_string(enum bw_lat_level l);
enum bw_lat_level bw_lat_level_from_string(const char *s);

/* Which rungs exist on this host now. */
struct bw_lat_caps {
        bool others;            /* some throughput or best-effort unit is governed (hold) */
        bool slice;             /* the kernel has custom slices (slice.h) */
        bool best_effort;       /* some best-effort unit is governed (idle) */
};

struct bw_lat_state {
        enum bw_lat_level level;
        unsigned met;           /* consecutive samples met with margin */
        unsigned hold;          /* met samples a step down needs; 0 = BW_LAT_HOLD_MIN */
        uint64_t down_usec;     /* when the last step down was taken (0: never) */
        unsigned down_samples;  /* samples since then */
        bool last_missed;
        bool has_last;
        uint64_t last_p99_usec; /* the last sample's p99 (0 without waits) */
        uint64_t n_samples, n_missed;
        /* The neighbours (bw_lat_pressure_step()). */
        enum bw_lat_level floor;        /* the rung their demand asks for (none or the top) */
        uint64_t demand_mcpu;           /* their runnable demand at the last fast sample */
        uint64_t cause_mcpu;            /* their demand when the rung held now was taken (0: none) */
        uint64_t calm_usec;             /* since when the cause looks gone (0: it does not) */
        uint64_t n_changes;             /* times bw_lat_level_now() changed (counted by the caller) */
};

struct bw_lat_sample {
        uint64_t now_usec;
        bool has_waits;
        uint64_t p99_usec;
        uint64_t target_usec;
};

/* One sample: returns +1 when the level went up, -1 when it went down, 0
 * when it stayed. A level whose rung is not in caps is skipped both ways;
 * a level above what caps allow (caps changed) comes down at once. */
int bw_lat_step(struct bw_lat_state *s, const struct bw_lat_sample *x, const struct bw_lat_caps *caps);

/* One fast sample of the neighbours: their runnable demand (CPU use plus
 * run-queue wait over the sample, milli-CPUs), the unit's own use, and the
 * host's CPUs. */
struct bw_lat_pressure {
        uint64_t now_usec;
        uint64_t demand_mcpu;
        uint64_t own_mcpu;
        unsigned ncpus;
};

/* Sets the floor and releases a rung whose cause is gone (see the top).
 * Returns +1 when bw_lat_level_now() went up, -1 down, 0 same. */
int bw_lat_pressure_step(struct bw_lat_state *s, const struct bw_lat_pressure *p, const struct bw_lat_caps *caps);

/* The rung in force: the higher of the ladder's and the floor, on a rung
 * that exists. */
enum bw_lat_level bw_lat_level_now(const struct bw_lat_state *s, const struct bw_lat_caps *caps);

/* The weight (v2 units) that gives a group `guarantee` µs/s of a host of
 * ncpus CPUs when its siblings, of summed weight others, all want CPU:
 * w / (w + others) >= guarantee / (ncpus * 1e6). Never below own, at most
 * BW_WEIGHT_MAX; others 0 (no sibling) gives own. */
uint64_t bw_lat_guarantee_weight(uint64_t guarantee, unsigned ncpus, uint64_t others, uint64_t own);

/* The weight of a rung for a group whose own (original) weight is own and
 * whose guarantee weight is gw (0 without CPUGuarantee=): weight -> gw or
 * 4 x own, weight-high and above -> the larger of gw and 16 x own (at most
 * BW_WEIGHT_MAX); below -> own. */
uint64_t bw_lat_level_weight(enum bw_lat_level l, uint64_t own, uint64_t gw);

/* The EEVDF slice for a target: an eighth of it, within [100us, 3ms]. */
uint64_t bw_lat_slice_usec(uint64_t target_usec);

struct bw_lat_guarantee {
        uint64_t guarantee;     /* CPUGuarantee=, µs/s; 0 = none */
        int64_t priority;       /* Priority= */
};

/* Overcommit: when the guarantees add up to more than 80 % of the host
 * (ncpus CPUs), scale them down: the lowest Priority= first, each to half,
 * then the next, then all in proportion until they fit. ret_scaled[i]
 * gets each one's guarantee after scaling. Returns 1 when something was
 * scaled, 0 when they fit, -EINVAL. */
int bw_lat_scale_guarantees(const struct bw_lat_guarantee *g, size_t n, unsigned ncpus, uint64_t *ret_scaled);
