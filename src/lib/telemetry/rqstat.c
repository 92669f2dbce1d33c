/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Run-queue counters as figures: sums over CPUs, deltas, percentiles of the
 * log2 histograms and the LatencyFigures JSON (contracts in
 * include/bwgov/telemetry/rqstat.h). */
#include <errno.h>
#include <stddef.h>

#include "bwgov/util/macro.h"
#include "bwgov/util/util.h"
#include "bwgov/telemetry/rqstat.h"

/* Every field is a bw_u64: BW_RQ_SLOTS for each histogram and 11 others. A
 * counter added to the ABI must be added to the tables below too. */
_Static_assert(sizeof(struct bw_rq_counters) == (2 * BW_RQ_SLOTS + 11) * sizeof(uint64_t),
               "struct bw_rq_counters changed: update sum_fields[] and rqstat.c");

/* The counters that add up over CPUs and subtract between samples: all but
 * the histograms, wait_max_ns and the pending_* scratch. */
static const size_t sum_fields[] = {
        offsetof(struct bw_rq_counters, wakeups),
        offsetof(struct bw_rq_counters, preemptions),
        offsetof(struct bw_rq_counters, wait_ns),
        offsetof(struct bw_rq_counters, throttled_wait_ns),
        offsetof(struct bw_rq_counters, throttled_waits),
        offsetof(struct bw_rq_counters, migrated_waits),
        offsetof(struct bw_rq_counters, throttles),
        offsetof(struct bw_rq_counters, throttle_ns),
};

static uint64_t *field(struct bw_rq_counters *c, size_t offset) {
        return (uint64_t *) ((char *) c + offset);
}

static uint64_t cfield(const struct bw_rq_counters *c, size_t offset) {
        return *(const uint64_t *) ((const char *) c + offset);
}

uint64_t bw_rq_others_cross(const struct bw_rq_others *now, const struct bw_rq_others *before, size_t n) {
        uint64_t apart_governed = 0, apart_waiting = 0;

        if (!now || !before)
                return 0;
        for (size_t c = 0; c < n; c++) {
                uint64_t behind = u64_sat_sub(now[c].behind_ns, before[c].behind_ns);
                uint64_t governed = u64_sat_sub(now[c].governed_ns, before[c].governed_ns);
                uint64_t waiting = u64_sat_sub(now[c].waiting_ns, before[c].waiting_ns);

                apart_governed = u64_sat_add(apart_governed, u64_sat_sub(governed, behind));
                apart_waiting = u64_sat_add(apart_waiting, u64_sat_sub(waiting, behind));
        }
        return u64_min(apart_governed, apart_waiting);
}

void bw_rq_add(struct bw_rq_counters *acc, const struct bw_rq_counters *x) {
        for (size_t i = 0; i < BW_RQ_SLOTS; i++) {
                acc->wait_slots[i] += x->wait_slots[i];
                acc->throttle_slots[i] += x->throttle_slots[i];
        }
        for (size_t i = 0; i < ELEMENTSOF(sum_fields); i++)
                *field(acc, sum_fields[i]) += cfield(x, sum_fields[i]);
        if (x->wait_max_ns > acc->wait_max_ns)
                acc->wait_max_ns = x->wait_max_ns;
        acc->pending_since_ns = 0;
        acc->pending_clock_ns = 0;
}

/* Whether any counter of now is below before's: the counters were reset. */
static bool went_down(const struct bw_rq_counters *now, const struct bw_rq_counters *before) {
        for (size_t i = 0; i < BW_RQ_SLOTS; i++)
                if (now->wait_slots[i] < before->wait_slots[i] || now->throttle_slots[i] < before->throttle_slots[i])
                        return true;
        for (size_t i = 0; i < ELEMENTSOF(sum_fields); i++)
                if (cfield(now, sum_fields[i]) < cfield(before, sum_fields[i]))
                        return true;
        return now->wait_max_ns < before->wait_max_ns;
}

/* The exclusive upper end of the highest non-empty bucket, in ns
 * (UINT64_MAX for the last bucket); 0 for an empty histogram. */
static uint64_t highest_upper_ns(const uint64_t slots[static BW_RQ_SLOTS]) {
        uint64_t lo, hi;

        for (unsigned i = BW_RQ_SLOTS; i > 0; i--)
                if (slots[i - 1] > 0) {
                        bw_rq_slot_range(i - 1, &lo, &hi);
                        return hi > UINT64_MAX / NSEC_PER_USEC ? UINT64_MAX : hi * NSEC_PER_USEC;
                }
        return 0;
}

int bw_rq_delta(const struct bw_rq_counters *now, const struct bw_rq_counters *before,
                struct bw_rq_counters *ret) {
        struct bw_rq_counters d = {0};
        uint64_t bound;

        if (went_down(now, before)) {
                *ret = *now;
                ret->pending_since_ns = 0;
                ret->pending_clock_ns = 0;
                return 1;
        }

        for (size_t i = 0; i < BW_RQ_SLOTS; i++) {
                d.wait_slots[i] = now->wait_slots[i] - before->wait_slots[i];
                d.throttle_slots[i] = now->throttle_slots[i] - before->throttle_slots[i];
        }
        for (size_t i = 0; i < ELEMENTSOF(sum_fields); i++)
                *field(&d, sum_fields[i]) = cfield(now, sum_fields[i]) - cfield(before, sum_fields[i]);

        /* A max that grew was reached in the interval. Else the interval's
         * longest wait is not known: at most the end of its highest bucket,
         * and never above the max of all time. */
        if (now->wait_max_ns > before->wait_max_ns)
                d.wait_max_ns = now->wait_max_ns;
        else {
                bound = highest_upper_ns(d.wait_slots);
                d.wait_max_ns = bound < now->wait_max_ns ? bound : now->wait_max_ns;
        }

        *ret = d;
        return 0;
}

static uint64_t slots_sum(const uint64_t slots[static BW_RQ_SLOTS]) {
        uint64_t n = 0;

        for (size_t i = 0; i < BW_RQ_SLOTS; i++)
                n += slots[i];
        return n;
}

uint64_t bw_rq_waits(const struct bw_rq_counters *c) {
        return slots_sum(c->wait_slots);
}

bool bw_rq_any(const struct bw_rq_counters *c) {
        return slots_sum(c->wait_slots) > 0 || slots_sum(c->throttle_slots) > 0 || c->wakeups > 0 ||
                c->preemptions > 0 || c->wait_ns > 0 || c->wait_max_ns > 0 || c->throttled_wait_ns > 0 ||
                c->throttled_waits > 0 || c->migrated_waits > 0 || c->throttles > 0 || c->throttle_ns > 0;
}

void bw_rq_slot_range(unsigned slot, uint64_t *ret_lo_usec, uint64_t *ret_hi_usec) {
        /* Beyond the last slot: the last one, which holds everything longer. */
        if (slot >= BW_RQ_SLOTS - 1) {
                *ret_lo_usec = UINT64_C(1) << (BW_RQ_SLOTS - 1);
                *ret_hi_usec = UINT64_MAX;
                return;
        }
        *ret_lo_usec = slot == 0 ? 0 : UINT64_C(1) << slot;
        *ret_hi_usec = UINT64_C(2) << slot;
}

__extension__ typedef unsigned __int128 u128;  /* sums of counts, times 10000 */

/* The bucket that holds the q-quantile: the first by which at least
 * q/10000 of the samples are in (cum / total >= q / 10000). Returns its
 * index with *ret_need = total x q and *ret_below = the samples before it
 * x 10000; -EINVAL for q out of range, -ENODATA for an empty histogram. */
static int quantile_slot(const uint64_t slots[static BW_RQ_SLOTS], unsigned q, u128 *ret_need, u128 *ret_below) {
        u128 total = 0, cum = 0;

        if (q < 1 || q > 10000)
                return -EINVAL;
        for (size_t i = 0; i < BW_RQ_SLOTS; i++)
                total += slots[i];
        if (total == 0)
                return -ENODATA;
        for (unsigned i = 0; i < BW_RQ_SLOTS; i++) {
                if ((cum + slots[i]) * 10000 >= total * q) {
                        *ret_need = total * q;
                        *ret_below = cum * 10000;
                        return (int) i;
                }
                cum += slots[i];
        }
        return -EINVAL;                         /* not reached: cum ends at total */
}

int bw_rq_quantile_usec(const uint64_t slots[static BW_RQ_SLOTS], uint64_t max_ns, unsigned q,
                        uint64_t *ret_usec) {
        uint64_t lo, hi, cap = max_ns / NSEC_PER_USEC;
        u128 need, below;
        int i = quantile_slot(slots, q, &need, &below);

        if (i < 0)
                return i;
        bw_rq_slot_range((unsigned) i, &lo, &hi);
        *ret_usec = max_ns > 0 && cap < hi ? cap : hi;
        return 0;
}

int bw_rq_quantile_interp_usec(const uint64_t slots[static BW_RQ_SLOTS], uint64_t max_ns, unsigned q,
                               uint64_t *ret_usec) {
        uint64_t lo, hi, cap = max_ns / NSEC_PER_USEC, v;
        u128 need, below;
        int i = quantile_slot(slots, q, &need, &below);

        if (i < 0)
                return i;
        bw_rq_slot_range((unsigned) i, &lo, &hi);
        if (hi == UINT64_MAX)
                v = max_ns > 0 ? cap : lo;
        else    /* lo + (hi - lo) x (need - below) / slots[i], all x 10000 */
                v = lo + (uint64_t) ((u128) (hi - lo) * (need - below) / ((u128) slots[i] * 10000));
        *ret_usec = max_ns > 0 && cap < v ? cap : v;
        return 0;
}

/* A counter as a JSON integer (json_int_t is signed: clamped). */
static json_t *jint(uint64_t v) {
        return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t) v);
}

static json_t *quantile_json(const uint64_t slots[static BW_RQ_SLOTS], uint64_t max_ns, unsigned q) {
        uint64_t usec;

        if (bw_rq_quantile_usec(slots, max_ns, q, &usec) < 0)
                return json_null();
        return jint(usec);
}

/* [{lower_usec, upper_usec, count}] of every bucket. */
static json_t *buckets_json(const uint64_t slots[static BW_RQ_SLOTS]) {
        json_t *arr = json_array();
        uint64_t lo, hi;

        if (!arr)
                return NULL;
        for (unsigned i = 0; i < BW_RQ_SLOTS; i++) {
                bw_rq_slot_range(i, &lo, &hi);
                if (json_array_append_new(arr, json_pack("{s:o, s:o, s:o}", "lower_usec", jint(lo),
                                                         "upper_usec", hi == UINT64_MAX ? json_null() : jint(hi),
                                                         "count", jint(slots[i]))) < 0) {
                        json_decref(arr);
                        return NULL;
                }
        }
        return arr;
}

json_t *bw_rq_figures_to_json(const struct bw_rq_counters *c) {
        const uint64_t *w = c->wait_slots, *t = c->throttle_slots;
        /* Of the wait time, from the ns counters; a throttled part above the
         * whole (counters read while they move) is all of it. */
        double share = c->wait_ns == 0 ? 0.0 :
                c->throttled_wait_ns >= c->wait_ns ? 1.0 : (double) c->throttled_wait_ns / (double) c->wait_ns;

        /* json_pack() takes the "o" references even when it fails. */
        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:o, s:o, s:o, s:o}",
                         "waits", jint(slots_sum(w)),
                         "wakeups", jint(c->wakeups),
                         "preemptions", jint(c->preemptions),
                         "wait_usec", jint(c->wait_ns / NSEC_PER_USEC),
                         "wait_max_usec", jint(c->wait_max_ns / NSEC_PER_USEC),
                         "p50_usec", quantile_json(w, c->wait_max_ns, BW_RQ_P50),
                         "p90_usec", quantile_json(w, c->wait_max_ns, BW_RQ_P90),
                         "p99_usec", quantile_json(w, c->wait_max_ns, BW_RQ_P99),
                         "p999_usec", quantile_json(w, c->wait_max_ns, BW_RQ_P999),
                         "throttled_wait_usec", jint(c->throttled_wait_ns / NSEC_PER_USEC),
                         "throttled_waits", jint(c->throttled_waits),
                         "migrated_waits", jint(c->migrated_waits),
                         "throttled_share", share,
                         "buckets", buckets_json(w),
                         "throttles", jint(c->throttles),
                         "throttle_usec", jint(c->throttle_ns / NSEC_PER_USEC),
                         "throttle_buckets", buckets_json(t));
}
