/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A bounded per-cgroup ring of decisions, for `bwgovctl history` and
 * `explain`. O(1) push (amortised); when full, a push overwrites the oldest
 * entry. Its memory grows with what is recorded (2, 4, 8 ... entries, up
 * to the capacity), nothing before the first push: a ring costs at most
 * sizeof(struct bw_history) (32, kept in its unit) + capacity ×
 * sizeof(struct bw_history_entry) (80) bytes. If growing
 * fails for want of memory, the push overwrites the oldest of what is
 * allocated. Not thread-safe (the daemon is one thread). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/law/policy.h"

/* One decision as the ring keeps it: 80 bytes. The rates are µs/s, at most
 * one second per CPU (4 294 CPUs fit in 32 bits; more saturate at
 * UINT32_MAX); pressure is at most one second per second. */
struct bw_history_entry {
        uint64_t realtime_usec;         /* CLOCK_REALTIME of the decision */
        uint64_t credit_usec;           /* credit after the decision */
        struct bw_bandwidth old_bw;     /* what the kernel held */
        struct bw_bandwidth new_bw;     /* the decision's target */
        uint32_t usage_rate;            /* µs/s */
        uint32_t throttle_rate;         /* µs/s */
        uint32_t pressure_rate;         /* µs/s of PSI full */
        uint8_t rule;                   /* enum bw_rule */
        bool applied;                   /* written to the kernel (false: observe, no change, or the write failed) */
};

/* The ring itself, kept in its owner (a unit): its entries are allocated
 * as they are recorded. Read it through the functions below. */
struct bw_history {
        struct bw_history_entry *entries;
        uint64_t pushed;
        uint32_t capacity;
        uint32_t allocated;
        uint32_t count;
        uint32_t head;                  /* index of the next write */
};

/* An empty ring of capacity entries in place (h need not be zeroed).
 * Returns 0, -EINVAL for capacity 0, -ENOMEM above UINT32_MAX entries. */
int bw_history_init(struct bw_history *h, size_t capacity);
/* Free its entries; h is empty (capacity 0) after. */
void bw_history_done(struct bw_history *h);
/* bw_history_resize() in place: on failure *h is unchanged. */
int bw_history_set_capacity(struct bw_history *h, size_t capacity);

/* A ring of its own allocation (bw_history_init()). Returns 0, -EINVAL for
 * capacity 0, -ENOMEM. */
int bw_history_new(size_t capacity, struct bw_history **ret);
void bw_history_free(struct bw_history *h);
static inline void bw_history_freep(struct bw_history **h) {
        bw_history_free(*h);
}
#define _cleanup_history_ __attribute__((cleanup(bw_history_freep)))

/* Change the capacity (HistorySize= on reload), keeping the newest entries
 * that fit. On failure (-EINVAL, -ENOMEM) *h is unchanged. */
int bw_history_resize(struct bw_history **h, size_t capacity);

void bw_history_push(struct bw_history *h, const struct bw_history_entry *e);

size_t bw_history_count(const struct bw_history *h);         /* entries held, <= capacity */
size_t bw_history_allocated_bytes(const struct bw_history *h);  /* the ring's memory now */
/* Drop every entry and the memory they took (pushed() keeps counting). */
void bw_history_clear(struct bw_history *h);
size_t bw_history_capacity(const struct bw_history *h);
uint64_t bw_history_pushed(const struct bw_history *h);      /* pushes ever; minus count = dropped */

/* The i-th entry counted from the oldest / from the newest (i = 0 is the
 * oldest / the newest); NULL when i >= count. Valid until the next push. */
const struct bw_history_entry *bw_history_oldest(const struct bw_history *h, size_t i);
const struct bw_history_entry *bw_history_newest(const struct bw_history *h, size_t i);

/* What `bwgovctl history` (GetHistory) asks of a ring: every entry, or the
 * newest `limit`. */
struct bw_history_query {
        bool has_limit;
        int64_t limit;                  /* at least 1 when has_limit */
};

/* Copy the entries q selects, oldest first: the newest q->limit of h, all
 * of them without a limit. h may be NULL (a unit without a ring: no
 * entries). Returns 0 with *ret_entries (to free(); NULL when *ret_n is 0)
 * and *ret_n, -EINVAL when q has a limit below 1, -ENOMEM. */
int bw_history_select(
                const struct bw_history *h,
                const struct bw_history_query *q,
                struct bw_history_entry **ret_entries,
                size_t *ret_n);

/* The last decision as a unit keeps it for explain (160 bytes, not 208):
 * each field of struct bw_decision, the rates and per-sample counts in 32
 * bits (µs/s: 4 294 CPUs; more saturate at UINT32_MAX, as in an entry). */
struct bw_decision_kept {
        struct bw_bandwidth target;
        uint64_t next_tick_usec;
        uint64_t dt_usec;
        uint64_t credit_before_usec;
        uint64_t credit_after_usec;
        uint64_t debt_usec;
        uint64_t time_to_empty_usec;
        uint64_t reserve_usec;
        uint64_t rq_wait_p99_usec;
        uint64_t headroom_usec;
        uint64_t headroom_max_usec;
        uint32_t usage_rate;
        uint32_t throttle_rate;
        uint32_t ancestor_throttle_rate;
        uint32_t pressure_rate;
        uint32_t d_nr_periods;
        uint32_t d_nr_throttled;
        uint32_t d_nr_bursts;
        uint32_t earn_rate;
        uint32_t spend_rate;
        uint32_t spend_avg;
        uint16_t rq_throttled_permille;
        uint8_t rule;                   /* enum bw_rule */
        uint8_t level;
        bool would_change;
        bool change;
        bool emergency;
        bool active;
        bool has_rq;
        bool rq_over_target;
};

void bw_decision_keep(const struct bw_decision *d, struct bw_decision_kept *ret);
void bw_decision_unkeep(const struct bw_decision_kept *k, struct bw_decision *ret);

/* Fill an entry from a decision and the value the kernel held before it. */
void bw_history_entry_from_decision(
                const struct bw_decision *d,
                const struct bw_bandwidth *old_bw,
                uint64_t realtime_usec,
                bool applied,
                struct bw_history_entry *ret);
