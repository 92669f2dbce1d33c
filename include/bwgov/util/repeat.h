/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Which of a stream of repeated messages to let through: the first of each
 * (by a 64-bit key, the hash of its text), then at most one per window
 * while it keeps coming, with the number held back since the last one let
 * through. A message with a new key (different text: the error changed)
 * always passes. Used by the daemon's log so that a failure that recurs
 * on every tick is one line, then one summary per window, not a line per
 * tick. The caller brings the clock.
 *
 * The table remembers BW_REPEAT_SLOTS (4096) keys at most, BW_REPEAT_WAYS
 * per set (the one let through longest ago is evicted): a thousand
 * distinct messages (one per failing unit) fit; with several thousand,
 * some of them pass more often than once per window. Not thread-safe. */

#include <stdbool.h>
#include <stdint.h>

#define BW_REPEAT_WAYS 16U
#define BW_REPEAT_SETS 256U
#define BW_REPEAT_SLOTS (BW_REPEAT_WAYS * BW_REPEAT_SETS)

struct bw_repeat_slot {
        uint64_t key;                   /* 0: free */
        uint64_t passed_usec;           /* when it was last let through */
        uint32_t held;                  /* held back since */
};

struct bw_repeat {
        struct bw_repeat_slot *slots;   /* BW_REPEAT_SLOTS, by bw_repeat_init() or on first use */
};

/* Takes the table's memory now (BW_REPEAT_SLOTS slots, 96 KiB): a
 * daemon's heap is then what it is from its start, not larger by that much
 * from its first rate-limited message on, hours in. 0, or -ENOMEM (then
 * bw_repeat_check() tries again on first use). */
int bw_repeat_init(struct bw_repeat *r);

/* The key of a message: FNV-1a over its text, never 0. */
uint64_t bw_repeat_key(const char *text);

/* The set (0 .. BW_REPEAT_SETS - 1) whose BW_REPEAT_WAYS slots may hold
 * key: keys of one set compete for them. */
unsigned bw_repeat_set_of(uint64_t key);

/* Message key is seen at now_usec. Returns true when it is to be logged
 * (the first time, or the first time window_usec or more after it last
 * was), with *ret_held the number of times it was held back since it last
 * was (0 the first time); false to hold it back (counted). Out of memory,
 * everything passes. */
bool bw_repeat_check(struct bw_repeat *r, uint64_t key, uint64_t now_usec, uint64_t window_usec,
                     uint32_t *ret_held);

/* Forget everything. */
void bw_repeat_done(struct bw_repeat *r);
