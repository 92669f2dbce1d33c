/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One timer for every unit's next sample. Ten thousand sd-event timers cost
 * an epoll_wait() and a timerfd re-arm per unit per tick; the ticker keeps
 * the due times in a heap (tickheap.h) and arms one timer for the earliest.
 * When it fires, the entries due by then (and those due within
 * TICKER_EARLY_USEC after, so neighbours share a wake-up) are handed to the
 * callback in batches of at most TICKER_BATCH: between two batches the loop
 * runs, so the watchdog, signals and varlink clients never wait behind ten
 * thousand units adopted at once. While batches are left over, the timer
 * runs at TICKER_BACKLOG_PRIORITY, the varlink server's priority, so that
 * clients are answered between two batches (at priority 0 a timer that is
 * always pending would be dispatched before any of them). */

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "bwgov/util/macro.h"
#include "bwgov/util/tickheap.h"

#define TICKER_BATCH 256
#define TICKER_EARLY_USEC (5 * USEC_PER_MSEC)
#define TICKER_BACKLOG_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 10)

typedef struct Ticker Ticker;

/* The entries due now (taken out of the heap: reschedule what should come
 * again), oldest due first; now is CLOCK_MONOTONIC. */
typedef void (*ticker_fn)(struct bw_tick_entry *const *due, size_t n, uint64_t now, void *userdata);

int ticker_new(sd_event *event, ticker_fn fn, void *userdata, Ticker **ret);
Ticker *ticker_free(Ticker *t);

/* Queue (or move) e for due_usec. Returns 0 or a negative errno (logged). */
int ticker_schedule(Ticker *t, struct bw_tick_entry *e, uint64_t due_usec);
void ticker_cancel(Ticker *t, struct bw_tick_entry *e);

/* Entries queued. */
size_t ticker_size(const Ticker *t);

/* When an entry that came due at due and comes every interval is due next:
 * one interval after due keeps its rhythm (not after now, which would drift
 * by each wake-up's lateness). When that is not ahead of now any more (the
 * loop was held, or the entry waited for later batches), one interval after
 * the last point of a grid of grid_usec at or before now: entries that lost
 * their rhythm share wake-ups instead of each keeping its own phase. grid_usec
 * is at most half the interval, so the result is always ahead of now. */
static inline uint64_t ticker_next_due(uint64_t due, uint64_t now, uint64_t interval, uint64_t grid_usec) {
        return (due + interval > now ? due : now - now % grid_usec) + interval;
}
