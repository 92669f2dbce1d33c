/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A min-heap of due times: the one schedule of every governed unit's next
 * sample. Entries live in their owners (struct Unit embeds one: its owner
 * is found from the entry's address, not kept in it) and know
 * their slot, so moving an entry (a decision's new horizon) and removing
 * one are O(log n) without a search. The heap is 8-ary and keeps each due
 * time next to its entry pointer: at ten thousand entries a pop compares
 * children in one array (not in ten thousand scattered Units) and moves
 * through 5 levels instead of 14, each move a write to the moved entry's
 * slot. Ties keep no order. Not thread-safe. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bw_tick_entry {
        uint64_t due_usec;
        size_t slot;                    /* index + 1 in the heap, 0 while not queued */
};

#define BW_TICKHEAP_ARITY 8

struct bw_tickheap_node {
        uint64_t due_usec;              /* = e->due_usec */
        struct bw_tick_entry *e;
};

struct bw_tickheap {
        struct bw_tickheap_node *v;
        size_t n, allocated;
};

static inline bool bw_tick_entry_queued(const struct bw_tick_entry *e) {
        return e->slot > 0;
}

/* Queue e for due_usec, or move it there when queued already. Returns 0 or
 * -ENOMEM (e is then not queued). */
int bw_tickheap_put(struct bw_tickheap *h, struct bw_tick_entry *e, uint64_t due_usec);

/* Take e out of the heap; nothing when it is not queued. */
void bw_tickheap_remove(struct bw_tickheap *h, struct bw_tick_entry *e);

/* The entry due first, NULL when empty. */
static inline struct bw_tick_entry *bw_tickheap_peek(const struct bw_tickheap *h) {
        return h->n > 0 ? h->v[0].e : NULL;
}

/* Take out and return the entry due first if it is due by until_usec, else
 * NULL. */
struct bw_tick_entry *bw_tickheap_pop_due(struct bw_tickheap *h, uint64_t until_usec);

void bw_tickheap_done(struct bw_tickheap *h);
