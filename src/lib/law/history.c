/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The decision ring of one cgroup and the selection GetHistory makes from it
 * (contracts in include/bwgov/law/history.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/law/history.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/util.h"

/* A ring over `allocated` slots that grows on push, 2, 4, 8 ... up to
 * the capacity: a quiet unit records a handful of transitions, and ten
 * thousand rings of 256 entries up front were 28 MiB. */
#define HISTORY_FIRST 2

int bw_history_init(struct bw_history *h, size_t capacity) {
        if (!h || capacity == 0)
                return -EINVAL;
        if (capacity > UINT32_MAX)
                return -ENOMEM;
        *h = (struct bw_history) { .capacity = (uint32_t) capacity };
        return 0;
}

void bw_history_done(struct bw_history *h) {
        if (!h)
                return;
        free(h->entries);
        *h = (struct bw_history) { 0 };
}

int bw_history_new(size_t capacity, struct bw_history **ret) {
        struct bw_history *h;
        int r;

        if (capacity == 0 || !ret)
                return -EINVAL;
        h = malloc(sizeof(struct bw_history));
        if (!h)
                return -ENOMEM;
        r = bw_history_init(h, capacity);
        if (r < 0) {
                free(h);
                return r;
        }
        *ret = h;
        return 0;
}

void bw_history_free(struct bw_history *h) {
        if (!h)
                return;
        free(h->entries);
        free(h);
}

/* Room for one more without overwriting: the entries oldest first into a
 * larger array. Returns false when full or out of memory. */
static bool history_grow(struct bw_history *h) {
        struct bw_history_entry *n;
        uint32_t a;

        if (h->allocated >= h->capacity)
                return false;
        a = h->allocated > 0 ? (h->allocated > h->capacity / 2 ? h->capacity : h->allocated * 2) : HISTORY_FIRST;
        if (a > h->capacity)
                a = h->capacity;
        n = calloc(a, sizeof(*n));
        if (!n)
                return false;
        for (size_t i = 0; i < h->count; i++)
                n[i] = *bw_history_oldest(h, i);
        free(h->entries);
        h->entries = n;
        h->allocated = a;
        h->head = h->count % a;
        return true;
}

void bw_history_push(struct bw_history *h, const struct bw_history_entry *e) {
        h->pushed++;
        /* Out of memory: keep overwriting the oldest of what there is. */
        if (h->count == h->allocated && !history_grow(h) && h->allocated == 0)
                return;
        h->entries[h->head] = *e;
        h->head = (h->head + 1) % h->allocated;
        if (h->count < h->allocated)
                h->count++;
}

void bw_history_clear(struct bw_history *h) {
        if (!h)
                return;
        h->entries = mfree(h->entries);
        h->allocated = h->count = h->head = 0;
}

size_t bw_history_allocated_bytes(const struct bw_history *h) {
        return h ? sizeof(*h) + h->allocated * sizeof(struct bw_history_entry) : 0;
}

size_t bw_history_count(const struct bw_history *h) {
        return h ? h->count : 0;
}

size_t bw_history_capacity(const struct bw_history *h) {
        return h ? h->capacity : 0;
}

uint64_t bw_history_pushed(const struct bw_history *h) {
        return h ? h->pushed : 0;
}

const struct bw_history_entry *bw_history_oldest(const struct bw_history *h, size_t i) {
        if (!h || i >= h->count)
                return NULL;
        /* The oldest entry sits at head - count (mod allocated). */
        return &h->entries[(h->head + h->allocated - h->count + i) % h->allocated];
}

const struct bw_history_entry *bw_history_newest(const struct bw_history *h, size_t i) {
        if (!h || i >= h->count)
                return NULL;
        return bw_history_oldest(h, h->count - 1 - i);
}

int bw_history_set_capacity(struct bw_history *h, size_t capacity) {
        struct bw_history n;
        size_t keep;
        int r;

        if (!h)
                return -EINVAL;
        r = bw_history_init(&n, capacity);
        if (r < 0)
                return r;

        keep = h->count < capacity ? h->count : capacity;
        for (size_t i = keep; i > 0; i--)
                bw_history_push(&n, bw_history_newest(h, i - 1));
        n.pushed = h->pushed;

        bw_history_done(h);
        *h = n;
        return 0;
}

int bw_history_resize(struct bw_history **h, size_t capacity) {
        if (!h || !*h)
                return -EINVAL;
        return bw_history_set_capacity(*h, capacity);
}

int bw_history_select(
                const struct bw_history *h,
                const struct bw_history_query *q,
                struct bw_history_entry **ret_entries,
                size_t *ret_n) {

        struct bw_history_entry *entries = NULL;
        size_t n;

        if (!q || !ret_entries || !ret_n)
                return -EINVAL;
        if (q->has_limit && q->limit < 1)
                return -EINVAL;

        n = bw_history_count(h);
        if (q->has_limit && (uint64_t) q->limit < n)
                n = (size_t) q->limit;
        if (n > 0) {
                entries = calloc(n, sizeof(*entries));
                if (!entries)
                        return -ENOMEM;
        }
        /* The newest n, oldest first. */
        for (size_t i = 0; i < n; i++)
                entries[i] = *bw_history_newest(h, n - 1 - i);

        *ret_entries = entries;
        *ret_n = n;
        return 0;
}

static uint32_t u32_sat(uint64_t v) {
        return (uint32_t) u64_min(v, UINT32_MAX);
}

void bw_decision_keep(const struct bw_decision *d, struct bw_decision_kept *ret) {
        *ret = (struct bw_decision_kept) {
                .target = d->target,
                .next_tick_usec = d->next_tick_usec,
                .dt_usec = d->dt_usec,
                .credit_before_usec = d->credit_before_usec,
                .credit_after_usec = d->credit_after_usec,
                .debt_usec = d->debt_usec,
                .time_to_empty_usec = d->time_to_empty_usec,
                .reserve_usec = d->reserve_usec,
                .rq_wait_p99_usec = d->rq_wait_p99_usec,
                .headroom_usec = d->headroom_usec,
                .headroom_max_usec = d->headroom_max_usec,
                .usage_rate = u32_sat(d->usage_rate),
                .throttle_rate = u32_sat(d->throttle_rate),
                .ancestor_throttle_rate = u32_sat(d->ancestor_throttle_rate),
                .pressure_rate = u32_sat(d->pressure_rate),
                .d_nr_periods = u32_sat(d->d_nr_periods),
                .d_nr_throttled = u32_sat(d->d_nr_throttled),
                .d_nr_bursts = u32_sat(d->d_nr_bursts),
                .earn_rate = u32_sat(d->earn_rate),
                .spend_rate = u32_sat(d->spend_rate),
                .spend_avg = u32_sat(d->spend_avg),
                .rq_throttled_permille = (uint16_t) u64_min(d->rq_throttled_permille, UINT16_MAX),
                .rule = (uint8_t) d->rule,
                .level = (uint8_t) u64_min(d->level, UINT8_MAX),
                .would_change = d->would_change,
                .change = d->change,
                .emergency = d->emergency,
                .active = d->active,
                .has_rq = d->has_rq,
                .rq_over_target = d->rq_over_target,
        };
}

void bw_decision_unkeep(const struct bw_decision_kept *k, struct bw_decision *ret) {
        *ret = (struct bw_decision) {
                .target = k->target,
                .next_tick_usec = k->next_tick_usec,
                .dt_usec = k->dt_usec,
                .usage_rate = k->usage_rate,
                .throttle_rate = k->throttle_rate,
                .ancestor_throttle_rate = k->ancestor_throttle_rate,
                .pressure_rate = k->pressure_rate,
                .d_nr_periods = k->d_nr_periods,
                .d_nr_throttled = k->d_nr_throttled,
                .d_nr_bursts = k->d_nr_bursts,
                .credit_before_usec = k->credit_before_usec,
                .credit_after_usec = k->credit_after_usec,
                .debt_usec = k->debt_usec,
                .earn_rate = k->earn_rate,
                .spend_rate = k->spend_rate,
                .spend_avg = k->spend_avg,
                .time_to_empty_usec = k->time_to_empty_usec,
                .reserve_usec = k->reserve_usec,
                .rq_wait_p99_usec = k->rq_wait_p99_usec,
                .headroom_usec = k->headroom_usec,
                .headroom_max_usec = k->headroom_max_usec,
                .rule = (enum bw_rule) k->rule,
                .level = k->level,
                .rq_throttled_permille = k->rq_throttled_permille,
                .would_change = k->would_change,
                .change = k->change,
                .emergency = k->emergency,
                .active = k->active,
                .has_rq = k->has_rq,
                .rq_over_target = k->rq_over_target,
        };
}

void bw_history_entry_from_decision(
                const struct bw_decision *d,
                const struct bw_bandwidth *old_bw,
                uint64_t realtime_usec,
                bool applied,
                struct bw_history_entry *ret) {

        *ret = (struct bw_history_entry) {
                .realtime_usec = realtime_usec,
                .rule = (uint8_t) d->rule,
                .applied = applied,
                .usage_rate = u32_sat(d->usage_rate),
                .throttle_rate = u32_sat(d->throttle_rate),
                .pressure_rate = u32_sat(d->pressure_rate),
                .credit_usec = d->credit_after_usec,
                .old_bw = *old_bw,
                .new_bw = d->target,
        };
}
