/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Pressure stall information: the parser of cpu.pressure and
 * /proc/pressure/cpu, and the stall rate between two readings. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line of a pressure file. The averages are percentages in fixed point,
 * hundredths (avg10=4.68 -> 468), parsed without the locale; total is the
 * cumulative stall time in µs. Only deltas of total are fit for control. */
struct bw_psi_line {
        uint32_t avg10;
        uint32_t avg60;
        uint32_t avg300;
        uint64_t total_usec;
};

struct bw_psi {
        struct bw_psi_line some;
        struct bw_psi_line full;
        bool has_full;          /* the kernel printed a "full" line */
};

/* Parse cpu.pressure or /proc/pressure/cpu. "some" is mandatory, "full" is
 * optional (per-cgroup cpu full since 5.13). buf need not be NUL-terminated
 * and is never read past len; the last line may lack its newline. A line is
 * "some" or "full", then the four fields avg10= avg60= avg300= total=, each
 * once, in any order, separated by one blank. An average has 1 or 2 decimals
 * ("4.6" = 460). Returns 0; -ENODATA when the "some" line is missing (also for
 * empty input); -EINVAL for a malformed, empty, unknown or duplicate line, a
 * missing, unknown or duplicate field, an average above 100.00 or a number
 * that overflows. Malformed lines are reported before a missing "some".
 * ret is untouched on failure. */
int bw_psi_parse(const char *buf, size_t len, struct bw_psi *ret);

/* A stall cannot outlast the wall time: 1000000 µs/s is 100 % stalled. */
#define BW_PSI_RATE_MAX UINT64_C(1000000)

/* The stall rate between two readings of a pressure total (some or full):
 * (total_usec - prev_total_usec) per second of (now_usec - prev_now_usec),
 * in µs/s, rounded down, at most BW_PSI_RATE_MAX, without overflow for any
 * input. Returns 1 with *ret_rate set; 0 when the interval carries no rate,
 * *ret_rate untouched: the time did not advance, or the total went backwards
 * (the cgroup was recreated). */
int bw_psi_rate(uint64_t prev_total_usec, uint64_t prev_now_usec, uint64_t total_usec, uint64_t now_usec,
                uint64_t *ret_rate);
