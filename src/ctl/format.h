/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Human renderings of bwgov's numbers for bwgovctl: integer arithmetic
 * only (no locale, no floating point), rounding half up. Each writes into
 * buf (at least FMT_MAX bytes) and returns it. */

#include <stdint.h>

#define FMT_MAX 96

/* A quota per period as CPUs and percent of one CPU: "0.50 CPU (50%)",
 * "1.25 CPU (125%)", "0.33 CPU (33.3%)"; "max" for BW_QUOTA_MAX. */
char *fmt_quota(char *buf, uint64_t quota_usec, uint64_t period_usec);

/* The same from µs of CPU per second (usage rates, CPUQuota=): "0.48 CPU". */
char *fmt_cpus(char *buf, uint64_t usec_per_sec);

/* A duration: "0ms", "0.9ms", "12.5ms", "50ms", "1s", "29.9s", "1min",
 * "2min 5s", "1h", "1h 3min" (below a minute with at most one decimal,
 * above it truncated to the second or minute). */
char *fmt_span(char *buf, uint64_t usec);

/* A duration down to the µs, for latencies: "0us", "48us", "999us" below a
 * millisecond, from there on as fmt_span() ("1ms", "4.1ms", "1.5s"). */
char *fmt_span_fine(char *buf, uint64_t usec);

/* A rate of wall time in ms per second: "0ms/s", "0.5ms/s", "120ms/s". */
char *fmt_rate(char *buf, uint64_t usec_per_sec);

/* A µs/s amount as a percentage, like the configuration: "5%", "0.1%". */
char *fmt_percent(char *buf, uint64_t usec_per_sec);

/* part of whole as a percentage with at most one decimal: "12.3%", "25%",
 * "100%"; "0%" when whole is 0. */
char *fmt_share(char *buf, uint64_t part, uint64_t whole);
