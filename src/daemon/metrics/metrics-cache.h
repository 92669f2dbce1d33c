/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a metrics file keeps for the next one (MetricsCache, metrics.h):
 * the rows a render takes of each unit, the parts of the text, and the
 * segments of units whose lines the next file copies when their rows hash
 * the same. metrics.c renders; metrics-cache.c hashes and keeps. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "bwgov/telemetry/rqstat.h"
#include "metrics-families.h"
#include "metrics.h"

/* The run-queue families besides the histogram (metrics.c's rq_families). */
#define N_RQ_FAMILIES 3

/* The parts of the text, in order: the host values, each unit family, the
 * run-queue histogram, the other run-queue families. All but the first
 * have a line or more per unit. */
enum {
        PART_HOST,
        PART_FAMILY0,
        PART_RQ_HISTOGRAM = PART_FAMILY0 + METRICS_N_FAMILIES,
        PART_RQ0,
        _PART_MAX = PART_RQ0 + N_RQ_FAMILIES,
};

#define N_ROW_PARTS (_PART_MAX - PART_FAMILY0)

/* What the file needs of one unit, taken from its snapshot: each family's
 * value (bit k of ok: family k has one for it), the run-queue counters,
 * and where its label is in the render's label storage. A fifth of the
 * snapshot's size, which at ten thousand units is what the render keeps. */
/* A unit's run-queue values, apart: most hosts count none (ten thousand
 * rows would carry 2.7 MB of zeros for a few milliseconds). */
struct metrics_row_rq {
        uint64_t wait_slots[BW_RQ_SLOTS];
        uint64_t wait_ns;
        uint64_t rq[N_RQ_FAMILIES];
};

struct metrics_rqs {
        struct metrics_row_rq *v;
        size_t n, allocated;
};

struct metrics_row {
        uint64_t v[METRICS_N_FAMILIES];
        uint64_t ok;
        size_t label_off, label_len;    /* in the label storage, padded with zeros to a BLOCK */
        size_t rq;                      /* 1 + its index in the job's metrics_rqs, 0 without */
};

/* The rows are cut into segments of this many units, in name order. A
 * segment whose rows hash as they did in the last file written, with as
 * many units, has its lines of each part copied from that file (still
 * open) instead of rendered: on a quiet host most of the file is copies.
 * Units come or go: the segments from there on differ, and are rendered. */
#define SEGMENT 64

struct metrics_segment {
        uint64_t hash;                  /* of its rows: labels, values, run-queue counters */
        size_t n;                       /* rows */
        uint64_t off[N_ROW_PARTS];      /* of its lines of each part in the file */
        uint32_t len[N_ROW_PARTS];
};

struct MetricsCache {
        int fd;                         /* the last file written, open; -1 without */
        struct stat st;                 /* its size and time when written: changed since, not used */
        struct metrics_segment *segs;
        size_t n_segs;
        size_t reused, rendered;        /* segments of the last file */
};

/* The hash of rows[0..n): their text depends on their labels (in
 * storage), values and run-queue counters only. */
uint64_t metrics_rows_hash(const struct metrics_row *rows, size_t n, const struct metrics_rqs *rqs,
                           const char *storage);

/* Whether the cache's file is still as it wrote it (size and time): an
 * operator's edit (it should not be written to) turns the cache off for
 * the next file. */
bool metrics_cache_intact(const MetricsCache *c);

/* A file complete and in place becomes the cache's: its fd (taken), its
 * segments (taken), and the counts of segments copied and rendered. */
void metrics_cache_take(MetricsCache *c, int fd, struct metrics_segment *segs, size_t n_segs, size_t reused,
                        size_t rendered);

/* Copy len bytes at off of the cache's file to the end of b: through the
 * kernel (copy_file_range(), no copy in and out of this process) when b
 * writes to a file and len is at least METRICS_COPY_KERNEL_MIN, else into
 * b's buffer. False when the file has fewer bytes (changed behind us): b
 * is then as it was, and the caller renders the lines instead. A write
 * that fails fails b (its error), and returns true. */
#define METRICS_COPY_KERNEL_MIN (16U * 1024U)
bool metrics_cache_copy(const MetricsCache *c, struct metrics_buf *b, uint64_t off, size_t len);
