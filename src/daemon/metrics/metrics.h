/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* metrics.prom: the render job that takes the units a
 * chunk at a time, and when a write is due (metrics.c); the families and
 * their values are metrics-families.h's. Sees the governor through
 * governor.h only. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "governor.h"
#include "metrics-buf.h"

/* Append the whole text of metrics.prom, from one get_status() and one
 * list_units() of g, to b (after what b already holds). Returns 0, or the
 * error of one of g's operations, or b->error (-ENOMEM, a write error of
 * b->fd). */
int metrics_render(const Governor *g, struct metrics_buf *b);

/* Write <runtime_dir>/metrics.prom in the Prometheus text format from the
 * governor's snapshots, replaced atomically (node_exporter textfile
 * collector style). Returns 0 or a negative errno (logged as a warning;
 * the per-tick caller holds back its repeats, log.h). */
int metrics_write(const Governor *g, const char *runtime_dir);

/* metrics_write() in steps, so that ten thousand units (some 40 ms of
 * rendering) do not hold up the loop in one go: metrics_job_new() takes
 * the snapshot (one get_status() and one list_units(), copied: the units
 * may change or go before the job is done) and opens the temporary file;
 * each metrics_job_step() renders whole families until budget_usec has
 * passed (at least one), and the last renames the file into place. It
 * returns 0 while parts are left, 1 when metrics.prom is replaced, or a
 * negative errno (logged). metrics_job_free() of an unfinished job removes
 * its temporary file: the last complete metrics.prom stays. */
typedef struct MetricsJob MetricsJob;
typedef struct MetricsCache MetricsCache;
int metrics_job_new(const Governor *g, const char *runtime_dir, MetricsCache *cache, MetricsJob **ret);
int metrics_job_step(MetricsJob *j, uint64_t budget_usec);
MetricsJob *metrics_job_free(MetricsJob *j);

/* What a job (metrics_job_new() with a cache) keeps for the next one: the
 * file it wrote, still open, and for each segment of 64 units (in name
 * order) a 64-bit hash of their rows (labels, values, run-queue counters)
 * and where its lines of each family are in that file. The next job copies
 * a segment's lines whose hash and size are unchanged instead of rendering
 * them (an idle unit's rows do not change), and renders the others. A file
 * changed behind bwgovd's back (size or time) is not copied from. The last
 * job's counts of segments copied and rendered: metrics_cache_stats(). */
MetricsCache *metrics_cache_new(void);
MetricsCache *metrics_cache_free(MetricsCache *c);
void metrics_cache_stats(const MetricsCache *c, size_t *ret_reused, size_t *ret_rendered);

/* When metrics.prom is due: at the first pass, then once interval_usec
 * (MetricsInterval=) has passed since the last write, or at the first
 * pass after a structural change (a unit added or removed, a cgroup that
 * appeared or vanished, an adoption, a pause or resume). The daemon asks
 * at each Interval= pass; slack_usec (half an Interval=) keeps a pass that
 * comes a little early from putting the write off by a whole pass. */
struct metrics_clock {
        bool written;           /* at least once */
        bool changed;           /* a structural change since the last write */
        uint64_t last_usec;     /* CLOCK_MONOTONIC of the last write */
};

static inline void metrics_mark_changed(struct metrics_clock *c) {
        c->changed = true;
}

bool metrics_due(const struct metrics_clock *c, uint64_t now_usec, uint64_t interval_usec, uint64_t slack_usec);

/* The file was written (or tried: a failure waits for the next due time
 * like a success) at now_usec. */
void metrics_mark_written(struct metrics_clock *c, uint64_t now_usec);
