/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Saturating unsigned arithmetic for µs, CPU-µs and rates: the control law
 * multiplies quotas by times and divides by periods, and a wrap-around
 * there would turn a limit into a boost. Every function saturates at
 * UINT64_MAX instead of wrapping; a division by zero saturates too. */

#include <stdint.h>

static inline uint64_t u64_min(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

static inline uint64_t u64_max(uint64_t a, uint64_t b) {
        return a > b ? a : b;
}

static inline uint64_t u64_sat_add(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t u64_sat_sub(uint64_t a, uint64_t b) {
        return a > b ? a - b : 0;
}

/* floor(a * b / c) */
static inline uint64_t u64_muldiv(uint64_t a, uint64_t b, uint64_t c) {
        __extension__ typedef unsigned __int128 u128;
        u128 v;

        if (c == 0)
                return UINT64_MAX;
        if (((a | b) >> 32) == 0)       /* no 128-bit division (a libgcc call) */
                return a * b / c;
        v = (u128) a * b / c;
        return v > UINT64_MAX ? UINT64_MAX : (uint64_t) v;
}

/* ceil(a * b / c) */
static inline uint64_t u64_muldiv_up(uint64_t a, uint64_t b, uint64_t c) {
        __extension__ typedef unsigned __int128 u128;
        u128 v;

        if (c == 0)
                return UINT64_MAX;
        if (((a | b | c) >> 32) == 0)
                return (a * b + c - 1) / c;
        v = ((u128) a * b + c - 1) / c;
        return v > UINT64_MAX ? UINT64_MAX : (uint64_t) v;
}
