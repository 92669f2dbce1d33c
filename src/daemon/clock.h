/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The daemon's one clock read. Rates are counter deltas over the time
 * between two reads, so a counter's time is read when the counter is, not
 * taken from the timer's scheduled time (which would inflate the rates
 * whenever the loop runs late, and a busy host is exactly when it does). */

#include <stdint.h>
#include <time.h>

#include "bwgov/macro.h"

/* Now on clock_id (CLOCK_MONOTONIC, CLOCK_REALTIME), in µs. */
static inline uint64_t clock_now_usec(clockid_t clock_id) {
        struct timespec ts;

        (void) clock_gettime(clock_id, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}
