/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The daemon's one clock read. Rates are counter deltas over the time
 * between two reads, so a counter's time is read when the counter is, not
 * taken from the timer's scheduled time (which would inflate the rates
 * whenever the loop runs late, and a busy host is exactly when it does). */

#include <stdint.h>
#include <time.h>

#include "bwgov/util/macro.h"

/* Now on clock_id (CLOCK_MONOTONIC, CLOCK_REALTIME), in µs. */
static inline uint64_t clock_now_usec(clockid_t clock_id) {
        struct timespec ts;

        (void) clock_gettime(clock_id, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* The accuracy asked of a timer that fires delay_usec from now: late by
 * 1/16 of it at most (sd-event's default accuracy, 250 ms, would be as long
 * as the shortest intervals themselves), at least 1 µs. */
#define TIMER_ACCURACY_DIVISOR 16

static inline uint64_t timer_accuracy_usec(uint64_t delay_usec) {
        return delay_usec / TIMER_ACCURACY_DIVISOR > 0 ? delay_usec / TIMER_ACCURACY_DIVISOR : 1;
}
