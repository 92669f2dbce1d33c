/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* bwgovctl latency's text: a GetLatency reply (io.bwgov.Governor.varlink)
 * as people read it, the layout bwgovctl(1) shows. Pure: the reply, the
 * clock and the colour decision are parameters, so tests render canned
 * replies. */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The width of a histogram bar at the largest count, as bcc's tools draw it. */
#define LATENCY_BAR_WIDTH 40

/* Print reply to f. now_realtime_usec dates "since ... (N ago)"; colour
 * makes the unit's name bold. A reply with available false prints one line,
 * "No run-queue telemetry for UNIT: REASON". Returns 0, or -EBADMSG for a
 * reply that says available but has no "total" object (nothing printed). */
int rqstat_print(FILE *f, json_t *reply, uint64_t now_realtime_usec, bool colour);

/* A Bucket array as text bars: one line per bucket from the first non-empty
 * to the last, each "indent LOWER - UPPER : COUNT |###...   |" (µs; UPPER
 * excluded, "inf" for the last bucket), after a header line; bars scaled so
 * that the largest count fills LATENCY_BAR_WIDTH. Prints nothing when every
 * bucket is empty; returns the number of bucket lines printed. */
size_t rqstat_print_histogram(FILE *f, json_t *buckets, const char *indent);
