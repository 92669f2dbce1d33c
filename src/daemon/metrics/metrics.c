/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics.prom: the Prometheus text rendering of the governor's snapshots
 * (governor.h), written atomically, and when it is due.
 *
 * One render goes over every unit once per family (~35 lines a unit), so
 * the hot path has no stdio: each sample line is reserved once in a
 * buffer of our own and filled with memcpy and a hand-written decimal;
 * each unit name is escaped once per render, not once per line. Only the
 * run-queue families (BPF telemetry) keep snprintf for their "%.9g". */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/telemetry/rqstat.h"
#include "clock.h"
#include "log.h"
#include "metrics-cache.h"
#include "metrics-families.h"
#include "metrics.h"

/* The longest decimal of a uint64_t. */
#define U64_DECIMAL_MAX 20

#define LABEL_OPEN "{unit=\""
#define LABEL_CLOSE "\"} "

/* ---- the buffer ----------------------------------------------------------- */

/* Room for n more bytes at the end: write there, then buf_commit(). NULL
 * once the buffer has failed. */
static inline char *buf_reserve(struct metrics_buf *b, size_t n) {
        if (__builtin_expect(b->cap - b->len >= n, 1))
                return b->data + b->len;
        return metrics_buf_reserve_slow(b, n);
}

static inline void buf_commit(struct metrics_buf *b, const char *end) {
        b->len = (size_t) (end - b->data);
}

static void buf_put(struct metrics_buf *b, const char *s, size_t n) {
        char *p = buf_reserve(b, n);

        if (p)
                buf_commit(b, mempcpy(p, s, n));
}

static void buf_puts(struct metrics_buf *b, const char *s) {
        buf_put(b, s, strlen(s));
}

/* v in decimal at p (room for U64_DECIMAL_MAX bytes); returns the end.
 * Two digits per division, from the right into tmp, then one copy of a
 * constant size (no call) of which the first n bytes count. */
static char *put_u64(char *p, uint64_t v) {
        static const char pairs[] =
                "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                "8081828384858687888990919293949596979899";
        char tmp[2 * U64_DECIMAL_MAX], *s = tmp + U64_DECIMAL_MAX;

        if (v < 10) {
                *p = (char) ('0' + v);
                return p + 1;
        }
        while (v >= 100) {
                unsigned k = (unsigned) (v % 100) * 2;

                v /= 100;
                *--s = pairs[k + 1];
                *--s = pairs[k];
        }
        if (v >= 10) {
                *--s = pairs[v * 2 + 1];
                *--s = pairs[v * 2];
        } else
                *--s = (char) ('0' + v);
        memcpy(p, s, U64_DECIMAL_MAX);
        return p + (tmp + U64_DECIMAL_MAX - s);
}

static void buf_put_u64(struct metrics_buf *b, uint64_t v) {
        char *p = buf_reserve(b, U64_DECIMAL_MAX);

        if (p)
                buf_commit(b, put_u64(p, v));
}

/* ---- labels ------------------------------------------------------------- */


/* A unit name as a label value, escaped, in storage padded to BLOCK. */
struct label {
        const char *s;
        size_t len;
};

#define LABEL_SPECIALS "\\\"\n"

/* Label values are unit names: escape backslash, quote and newline as the
 * exposition format requires; runs between them are copied whole. */
static void put_escaped(struct metrics_buf *b, const char *s) {
        for (;;) {
                size_t n = strcspn(s, LABEL_SPECIALS);

                buf_put(b, s, n);
                if (!s[n])
                        return;
                buf_put(b, s[n] == '\n' ? "\\n" : s[n] == '"' ? "\\\"" : "\\\\", 2);
                s += n + 1;
        }
}

/* A unit's label, escaped into storage (starting at a multiple of BLOCK
 * and padded to one); its offset and length there. */
static void label_add(struct metrics_buf *storage, const char *name, size_t *ret_off, size_t *ret_len) {
        static const char zeros[BLOCK];

        *ret_off = storage->len;
        put_escaped(storage, name);
        *ret_len = storage->len - *ret_off;
        buf_put(storage, zeros, (BLOCK - storage->len % BLOCK) % BLOCK);
}

/* Copy n bytes of padded storage in BLOCKs; the destination has room for
 * up to BLOCK - 1 bytes more. Returns the end of the n bytes. */
static inline char *put_blocks(char *p, const char *s, size_t n) {
        for (size_t k = 0; k < n; k += BLOCK)
                memcpy(p + k, s + k, BLOCK);
        return p + n;
}

/* name{unit="label"} v, one reservation for the line. */
static inline void put_sample(struct metrics_buf *b, const char *name, size_t name_len, const struct label *l,
                              uint64_t v) {
        char *p = buf_reserve(b, name_len + l->len + 2 * BLOCK + sizeof(LABEL_OPEN LABEL_CLOSE) +
                                 U64_DECIMAL_MAX);

        if (!p)
                return;
        p = put_blocks(p, name, name_len);
        memcpy(p, LABEL_OPEN, sizeof(LABEL_OPEN) - 1);
        p = put_blocks(p + sizeof(LABEL_OPEN) - 1, l->s, l->len);
        memcpy(p, LABEL_CLOSE, sizeof(LABEL_CLOSE) - 1);
        p += sizeof(LABEL_CLOSE) - 1;
        p = put_u64(p, v);
        *p++ = '\n';
        buf_commit(b, p);
}

/* # HELP and # TYPE of a family. */
static void put_header(struct metrics_buf *b, const char *name, size_t name_len, const char *type,
                       const char *help) {
        buf_puts(b, "# HELP ");
        buf_put(b, name, name_len);
        buf_put(b, " ", 1);
        buf_puts(b, help);
        buf_puts(b, "\n# TYPE ");
        buf_put(b, name, name_len);
        buf_put(b, " ", 1);
        buf_puts(b, type);
        buf_put(b, "\n", 1);
}

/* ---- host-wide values ------------------------------------------------------ */

/* One value without labels: HELP, TYPE and the sample. */
static void scalar(struct metrics_buf *b, const char *name, const char *type, const char *help, uint64_t v) {
        size_t len = strlen(name);

        put_header(b, name, len, type, help);
        buf_put(b, name, len);
        buf_put(b, " ", 1);
        buf_put_u64(b, v);
        buf_put(b, "\n", 1);
}

static void write_host(struct metrics_buf *b, const struct governor_status *s) {
        scalar(b, "bwgov_ticks_total", "counter", "Control-loop passes over all units.", s->ticks);
        scalar(b, "bwgov_units", "gauge", "Configured units.", s->counts.units);
        scalar(b, "bwgov_reloads_total", "counter", "Configuration reloads (SIGHUP).", s->reloads);
        scalar(b, "bwgov_state_saves_total", "counter",
               "Saves of the state (state.json rewritten or a line appended to state.journal, fsynced).",
               s->state_saves);
        scalar(b, "bwgov_reload_failures_total", "counter", "Reloads rejected (old configuration kept).",
               s->reload_failures);
        scalar(b, "bwgov_host_pressure_some_usec_per_second", "gauge",
               "Host CPU pressure (some) over the last interval.", s->host_pressure_rate);
        scalar(b, "bwgov_host_other_usage_usec_per_second", "gauge", "CPU used outside the governed groups.",
               s->host_other_usage_rate);
        if (s->host_other_wait_rate != UINT64_MAX)
                scalar(b, "bwgov_host_other_wait_usec_per_second", "gauge",
                       "Time the tasks outside the governed groups waited for a CPU, summed over them "
                       "(with the run-queue telemetry only).",
                       s->host_other_wait_rate);
        if (s->host_other_behind_rate != UINT64_MAX)
                scalar(b, "bwgov_host_other_behind_usec_per_second", "gauge",
                       "CPU time that ran governed work while tasks outside the governed groups waited for "
                       "that CPU, each CPU's time once (with the run-queue telemetry only); what the host "
                       "brake weighs against HostPressureLimit=.",
                       s->host_other_behind_rate);
        scalar(b, "bwgov_host_governed_excess_usec_per_second", "gauge",
               "CPU the governed groups use above their baselines.", s->host_governed_excess_rate);
        scalar(b, "bwgov_host_idle_usec_per_second", "gauge", "Idle CPU of the host, over all CPUs.",
               s->host_idle_rate);
        scalar(b, "bwgov_runqueue_telemetry", "gauge",
               "1 while the run-queue BPF programs are loaded (GetStatus says why not).", s->telemetry ? 1 : 0);
        scalar(b, "bwgov_host_over_limit", "gauge",
               "1 while the governed groups' headroom harms work outside them (HostPressureLimit=).",
               s->host_over_limit ? 1 : 0);
        scalar(b, "bwgov_usage_gates", "gauge",
               "Parent cgroups whose usage is read once for their governed children.", s->usage_gates);
        scalar(b, "bwgov_gated_samples_total", "counter",
               "Samples of quiet units that read nothing of their own: no task below the parent had run.",
               s->gated_samples);
        scalar(b, "bwgov_activity_gated_samples_total", "counter",
               "Samples of quiet units that read nothing of their own: none of their tasks had run (BPF).",
               s->activity_gated_samples);
        scalar(b, "bwgov_parked_units", "gauge",
               "Still units checked once per Interval= by their activity flag or parent's usage instead of sampled.",
               s->parked);
        scalar(b, "bwgov_parked_wakes_total", "counter",
               "Parked units that had to be sampled: a task of theirs (or below their parent) ran, or their quota "
               "was written.", s->parked_wakes);
        scalar(b, "bwgov_heap_bytes", "gauge", "The daemon's heap in use (allocated, not resident), bytes.",
               s->heap_bytes);
        scalar(b, "bwgov_metrics_timestamp_seconds", "gauge",
               "When bwgovd took these values, seconds since the Unix epoch (a file no longer rewritten ages).",
               s->realtime_usec / USEC_PER_SEC);
}

/* ---- run-queue telemetry: seconds, as Prometheus wants them -------------- */

/* The "%.9g" of a value; these families exist only with BPF telemetry. */
struct number {
        char s[32];
        size_t len;
};

static void number_format(struct number *ret, double v) {
        int k = snprintf(ret->s, sizeof(ret->s), "%.9g", v);

        ret->len = k > 0 && (size_t) k < sizeof(ret->s) ? (size_t) k : 0;
}

/* ns as seconds in decimal, exactly and without printf (a thousand units
 * have some 25 000 of these): "12.0345", "0". Room for U64_DECIMAL_MAX + 10. */
static char *put_ns_seconds(char *p, uint64_t ns) {
        uint64_t frac = ns % 1000000000u;

        p = put_u64(p, ns / 1000000000u);
        if (frac == 0)
                return p;
        *p++ = '.';
        for (int i = 8; i >= 0; i--) {
                p[i] = (char) ('0' + frac % 10);
                frac /= 10;
        }
        p += 9;
        while (p[-1] == '0')
                p--;
        return p;
}

/* One sample: v is a count, or nanoseconds shown as seconds. */
static void rq_sample(struct metrics_buf *b, const char *name, const struct label *l, const struct number *le,
                      uint64_t v, bool ns) {
        char value[U64_DECIMAL_MAX + 10];
        size_t len = (size_t) ((ns ? put_ns_seconds(value, v) : put_u64(value, v)) - value);

        buf_puts(b, name);
        buf_put(b, LABEL_OPEN, sizeof(LABEL_OPEN) - 1);
        buf_put(b, l->s, l->len);
        if (le) {
                buf_put(b, "\",le=\"", 6);
                buf_put(b, le->s, le->len);
        }
        buf_put(b, LABEL_CLOSE, sizeof(LABEL_CLOSE) - 1);
        buf_put(b, value, len);
        buf_put(b, "\n", 1);
}

struct rq_family {
        const char *name;
        const char *help;
        bool ns;                        /* nanoseconds, shown as seconds; else a count */
        size_t offset;                  /* of the counter in struct bw_rq_counters */
};

static const struct rq_family rq_families[] = {
        { "bwgov_runqueue_throttled_wait_seconds_total",
          "Of the run-queue wait, the part while the group or an ancestor was throttled.",
          true, offsetof(struct bw_rq_counters, throttled_wait_ns) },
        { "bwgov_runqueue_throttles_total",
          "Throttles seen: a runnable task of the group left a CPU throttled.",
          false, offsetof(struct bw_rq_counters, throttles) },
        { "bwgov_runqueue_throttle_seconds_total",
          "Summed duration of those throttles.",
          true, offsetof(struct bw_rq_counters, throttle_ns) },
};

_Static_assert(ELEMENTSOF(rq_families) == N_RQ_FAMILIES, "metrics-cache.h counts them");

static int rq_add(struct metrics_rqs *rqs, const struct governor_unit *u, size_t *ret) {
        struct metrics_row_rq *x;

        if (rqs->n == rqs->allocated) {
                size_t a = rqs->allocated ? rqs->allocated * 2 : 16;
                struct metrics_row_rq *v = reallocarray(rqs->v, a, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                rqs->v = v;
                rqs->allocated = a;
        }
        x = &rqs->v[rqs->n++];
        memcpy(x->wait_slots, u->rq.wait_slots, sizeof(x->wait_slots));
        x->wait_ns = u->rq.wait_ns;
        for (size_t k = 0; k < N_RQ_FAMILIES; k++)
                memcpy(&x->rq[k], (const char *) &u->rq + rq_families[k].offset, sizeof(x->rq[k]));
        *ret = rqs->n;
        return 0;
}

static int row_make(struct metrics_row *row, const struct governor_unit *u, struct metrics_rqs *rqs,
                    struct metrics_buf *storage) {
        row->ok = 0;
        for (size_t k = 0; k < METRICS_N_FAMILIES; k++) {
                bool ok = true;

                row->v[k] = metrics_families[k].value(u, &ok);
                row->ok |= (uint64_t) ok << k;
        }
        row->rq = 0;
        /* A group that never ran has no run-queue lines (31 of its 64: half
         * of a 42 MB file at ten thousand idle groups). */
        if (u->has_rq && bw_rq_any(&u->rq) && rq_add(rqs, u, &row->rq) < 0)
                return -ENOMEM;
        label_add(storage, u->summary.name, &row->label_off, &row->label_len);
        return storage->error;
}

/* Where the next byte goes in the file. */
static inline uint64_t buf_offset(const struct metrics_buf *b) {
        return b->flushed + b->len;
}

/* ---- the rows' lines ------------------------------------------------------------ */

static void put_row_family(struct metrics_buf *b, size_t k, const struct metrics_row *row, const struct label *l) {
        const struct metrics_family *fam = &metrics_families[k];

        if (row->ok & ((uint64_t) 1 << k))
                put_sample(b, fam->name, fam->name_len, l, row->v[k]);
}

/* The wait histogram: the log2 buckets as cumulative "le" buckets. */
static void put_row_histogram(struct metrics_buf *b, const struct number *le, const struct metrics_row_rq *x,
                              const struct label *l) {
        uint64_t cum = 0;

        for (unsigned slot = 0; slot < BW_RQ_SLOTS; slot++) {
                cum += x->wait_slots[slot];
                rq_sample(b, "bwgov_runqueue_wait_seconds_bucket", l, &le[slot], cum, false);
        }
        rq_sample(b, "bwgov_runqueue_wait_seconds_sum", l, NULL, x->wait_ns, true);
        rq_sample(b, "bwgov_runqueue_wait_seconds_count", l, NULL, cum, false);
}

static const char rq_histogram_name[] = "bwgov_runqueue_wait_seconds";

/* The histogram's bounds: the same for every unit. */
static void histogram_bounds(struct number le[static BW_RQ_SLOTS]) {
        for (unsigned slot = 0; slot < BW_RQ_SLOTS; slot++) {
                uint64_t lo, hi;

                bw_rq_slot_range(slot, &lo, &hi);
                if (hi == UINT64_MAX)
                        le[slot] = (struct number) { "+Inf", 4 };
                else
                        number_format(&le[slot], (double) hi / 1e6);
        }
}

/* ---- the file ---------------------------------------------------------------- */

/* A warning (the caller's per-tick pass holds back its repeats, log.h):
 * an operator reads the file, so its absence is worth a line. */
static int metrics_write_failed(const char *path, int r) {
        return log_warning_errno(r, "Cannot write the metrics to %s: %s%s", path, STRERROR(r),
                                 r == -ENOENT ? " (the runtime directory is gone; a reload creates it again)" : "");
}

/* Units snapshotted per governor call: a loop iteration's worth at most. */
#define SNAPSHOT_CHUNK 128

_Static_assert(SNAPSHOT_CHUNK % SEGMENT == 0, "a snapshot call takes whole segments");

/* A rendering in steps (metrics.h): the snapshot, then the file. */
struct MetricsJob {
        Governor g;
        struct governor_status status;
        char *last;                     /* the name of the last unit taken */
        struct metrics_row *rows;
        size_t n, allocated;            /* rows taken so far */
        struct metrics_rqs rqs;         /* their run-queue values */
        bool snapped;                   /* all of them */
        struct governor_unit *chunk;    /* one call's snapshots */
        struct label *labels;           /* the rows' labels, made when rendering starts */
        struct metrics_buf storage;     /* the labels' text */
        struct number le[BW_RQ_SLOTS];  /* the histogram's bounds */
        struct metrics_segment *segs;   /* where this file's segments go, made with the labels */
        size_t n_segs;
        MetricsCache *cache;            /* borrowed: the last file, taken over at the end; or NULL */
        bool use_cache;                 /* the cache's file is as it wrote it */
        struct metrics_buf *b;          /* out: own_b, or the caller's */
        struct metrics_buf own_b;
        size_t step;                    /* the next part: see job_part() */
        char *tmp, *path;               /* metrics_job_new(): the file being written, then its name */
};

static bool job_segment_cached(const MetricsJob *j, size_t s) {
        return j->use_cache && s < j->cache->n_segs && j->cache->segs[s].n == j->segs[s].n &&
                j->cache->segs[s].hash == j->segs[s].hash;
}

/* The lines of one part for the rows of segment s, and where they are. */
static void job_render_segment(MetricsJob *j, size_t part, size_t s) {
        size_t end = (s + 1) * SEGMENT < j->n ? (s + 1) * SEGMENT : j->n;
        uint64_t at = buf_offset(j->b);

        for (size_t i = s * SEGMENT; i < end; i++) {
                const struct metrics_row *row = &j->rows[i];

                if (part < PART_RQ_HISTOGRAM)
                        put_row_family(j->b, part - PART_FAMILY0, row, &j->labels[i]);
                else if (row->rq == 0)
                        continue;
                else if (part == PART_RQ_HISTOGRAM)
                        put_row_histogram(j->b, j->le, &j->rqs.v[row->rq - 1], &j->labels[i]);
                else {
                        const struct rq_family *fam = &rq_families[part - PART_RQ0];

                        rq_sample(j->b, fam->name, &j->labels[i], NULL,
                                  j->rqs.v[row->rq - 1].rq[part - PART_RQ0], fam->ns);
                }
        }
        j->segs[s].off[part - PART_FAMILY0] = at;
        j->segs[s].len[part - PART_FAMILY0] = (uint32_t) (buf_offset(j->b) - at);
}

/* The lines of part of the cached segments [a, b), back to back in the last
 * file, copied at once; rendered when that file has fewer bytes than it
 * had (changed behind us). */
static void job_copy_run(MetricsJob *j, size_t part, size_t a, size_t b) {
        const struct metrics_segment *c = j->cache->segs;
        size_t p = part - PART_FAMILY0;
        uint64_t at = buf_offset(j->b);

        if (metrics_cache_copy(j->cache, j->b, c[a].off[p], c[b - 1].off[p] + c[b - 1].len[p] - c[a].off[p])) {
                for (size_t s = a; s < b; s++) {
                        j->segs[s].off[p] = at + (c[s].off[p] - c[a].off[p]);
                        j->segs[s].len[p] = c[s].len[p];
                }
                return;
        }
        j->use_cache = false;
        for (size_t s = a; s < b; s++)
                job_render_segment(j, part, s);
}

/* A part with a line or more per unit: its header, then each segment's
 * lines, copied from the last file or rendered. */
static void job_rows_part(MetricsJob *j, size_t part) {
        size_t p = part - PART_FAMILY0;

        if (part < PART_RQ_HISTOGRAM) {
                const struct metrics_family *fam = &metrics_families[p];

                put_header(j->b, fam->name, fam->name_len, fam->type, fam->help);
        } else if (part == PART_RQ_HISTOGRAM)
                put_header(j->b, rq_histogram_name, sizeof(rq_histogram_name) - 1, "histogram",
                           "Run-queue wait of the unit's tasks, from wake-up or preemption until they ran (BPF, "
                           "since the cgroup was first counted).");
        else {
                const struct rq_family *fam = &rq_families[part - PART_RQ0];

                put_header(j->b, fam->name, strlen(fam->name), "counter", fam->help);
        }

        /* Cached segments whose lines lay back to back in the last file
         * (on a quiet host, most of a part) are copied in one go. */
        for (size_t s = 0, run = 0; s <= j->n_segs; s++) {
                const struct metrics_segment *c = j->cache ? j->cache->segs : NULL;
                bool cached = s < j->n_segs && job_segment_cached(j, s);

                if (run > 0 && (!cached || c[s].off[p] != c[s - 1].off[p] + c[s - 1].len[p])) {
                        job_copy_run(j, part, s - run, s);
                        run = 0;
                        cached = cached && j->use_cache;
                }
                if (s == j->n_segs)
                        break;
                if (cached)
                        run++;
                else
                        job_render_segment(j, part, s);
        }
}

static void job_part(MetricsJob *j, size_t part) {
        if (part == PART_HOST)
                write_host(j->b, &j->status);
        else
                job_rows_part(j, part);
}

/* The next units' rows: those after the last one taken, in name order (a
 * unit made or gone since the first ones, a container, a reload, needs no
 * start over: one made before the last name waits for the next file). */
static int job_snapshot(MetricsJob *j) {
        size_t got = 0, total = 0;
        int r;

        r = j->g.ops->snapshot_units(j->g.userdata, j->last, SNAPSHOT_CHUNK, j->chunk, &got, &total);
        if (r < 0)
                return r;
        if (got > 0) {
                char *last = strdup(j->chunk[got - 1].summary.name);

                if (!last)
                        return -ENOMEM;
                free(j->last);
                j->last = last;
        }
        if (j->n + got > j->allocated) {
                size_t a = total > j->n + got ? total : j->n + got;
                struct metrics_row *rows = reallocarray(j->rows, a, sizeof(*rows));

                if (!rows)
                        return -ENOMEM;
                j->rows = rows;
                j->allocated = a;
        }
        for (size_t i = 0; i < got; i++) {
                r = row_make(&j->rows[j->n], &j->chunk[i], &j->rqs, &j->storage);
                if (r < 0)
                        return r;
                j->n++;
        }
        if (got < SNAPSHOT_CHUNK) {
                j->snapped = true;
                j->chunk = mfree(j->chunk);
        }
        return 0;
}

/* Once every row is taken: the labels (storage->data moves while it
 * grows: they point into it once it is whole) and the segments' hashes. */
static int job_labels(MetricsJob *j) {
        j->labels = calloc(j->n > 0 ? j->n : 1, sizeof(*j->labels));
        if (!j->labels)
                return -ENOMEM;
        for (size_t i = 0; i < j->n; i++)
                j->labels[i] = (struct label) { j->storage.data + j->rows[i].label_off, j->rows[i].label_len };

        j->n_segs = (j->n + SEGMENT - 1) / SEGMENT;
        j->segs = calloc(j->n_segs > 0 ? j->n_segs : 1, sizeof(*j->segs));
        if (!j->segs)
                return -ENOMEM;
        for (size_t s = 0; s < j->n_segs; s++) {
                struct metrics_segment *seg = &j->segs[s];

                seg->n = (s + 1) * SEGMENT < j->n ? SEGMENT : j->n - s * SEGMENT;
                seg->hash = metrics_rows_hash(&j->rows[s * SEGMENT], seg->n, &j->rqs, j->storage.data);
        }
        j->use_cache = j->cache && j->b->fd >= 0 && metrics_cache_intact(j->cache);
        return 0;
}

/* The job's file is complete and in place: it is the cache's now. */
static void job_cache_take(MetricsJob *j) {
        size_t reused = 0;

        for (size_t s = 0; s < j->n_segs; s++)
                reused += job_segment_cached(j, s);
        metrics_cache_take(j->cache, TAKE_FD(j->own_b.fd), TAKE_PTR(j->segs), j->n_segs, reused,
                           j->n_segs - reused);
}

MetricsJob *metrics_job_free(MetricsJob *j) {
        if (!j)
                return NULL;
        if (j->own_b.fd >= 0) {
                (void) close(j->own_b.fd);
                (void) unlink(j->tmp);          /* not finished: the old file stays */
        }
        metrics_buf_done(&j->own_b);
        metrics_buf_done(&j->storage);
        free(j->last);
        free(j->rows);
        free(j->rqs.v);
        free(j->chunk);
        free(j->labels);
        free(j->segs);
        free(j->tmp);
        free(j->path);
        free(j);
        return NULL;
}

static int job_new(const Governor *g, struct metrics_buf *b, MetricsJob **ret) {
        MetricsJob *j = calloc(1, sizeof(*j));
        int r;

        if (!j)
                return -ENOMEM;
        j->g = *g;
        j->storage = (struct metrics_buf) METRICS_BUF_INIT;
        j->own_b = (struct metrics_buf) METRICS_BUF_INIT;
        j->b = b ? b : &j->own_b;
        histogram_bounds(j->le);
        j->chunk = calloc(SNAPSHOT_CHUNK, sizeof(*j->chunk));
        r = j->chunk ? g->ops->get_status(g->userdata, &j->status) : -ENOMEM;
        if (r < 0) {
                metrics_job_free(j);
                return r;
        }
        *ret = j;
        return 0;
}

static int job_fail(MetricsJob *j, int r) {
        return j->path ? metrics_write_failed(j->path, r) : r;
}

int metrics_job_step(MetricsJob *j, uint64_t budget_usec) {
        uint64_t start = clock_now_usec(CLOCK_MONOTONIC);
        int r;

        do {
                if (!j->snapped)
                        r = job_snapshot(j);
                else if (!j->labels)
                        r = job_labels(j);
                else if (j->step < _PART_MAX) {
                        job_part(j, j->step++);
                        r = j->b->error;
                } else
                        break;
                if (r < 0)
                        return job_fail(j, r);
        } while (clock_now_usec(CLOCK_MONOTONIC) - start < budget_usec);
        if (j->step < _PART_MAX)
                return 0;
        if (!j->path)
                return 1;               /* rendered into the caller's buffer */

        r = metrics_buf_flush(j->b);
        /* Kept open for the next file's copies (the cache), else closed
         * here, where a failed close is a failed write. */
        if (!j->cache && close(j->own_b.fd) < 0 && r >= 0)
                r = -errno;
        if (!j->cache)
                j->own_b.fd = -1;
        if (r >= 0 && rename(j->tmp, j->path) < 0)
                r = -errno;
        if (r < 0) {
                if (j->own_b.fd >= 0)
                        j->own_b.fd = safe_close(j->own_b.fd);
                (void) unlink(j->tmp);
                return metrics_write_failed(j->path, r);
        }
        if (j->cache) {
                job_cache_take(j);
                log_debug("%s: %zu segments of units copied from the last file, %zu rendered", j->path,
                          j->cache->reused, j->cache->rendered);
        }
        return 1;
}

/* A job all in one go, then freed: 0 or the negative errno. */
static int job_run(MetricsJob *j) {
        int r = metrics_job_step(j, UINT64_MAX);

        metrics_job_free(j);
        return r < 0 ? r : 0;
}

int metrics_render(const Governor *g, struct metrics_buf *b) {
        MetricsJob *j = NULL;
        int r = job_new(g, b, &j);

        return r < 0 ? r : job_run(j);
}

int metrics_job_new(const Governor *g, const char *runtime_dir, MetricsCache *cache, MetricsJob **ret) {
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        MetricsJob *j = NULL;
        int fd, r;

        if (asprintf(&path, "%s/metrics.prom", runtime_dir) < 0 ||
            asprintf(&tmp, "%s/.metrics.prom.%d", runtime_dir, (int) getpid()) < 0)
                return log_oom();

        /* A file of our own, never opened blocking (a FIFO left at that
         * name would hang the loop); readable, for the next file's copies. */
        if (unlink(tmp) < 0 && errno != ENOENT)
                return metrics_write_failed(tmp, -errno);
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
        if (fd < 0)
                return metrics_write_failed(tmp, -errno);
        r = job_new(g, NULL, &j);
        if (r < 0) {
                (void) close(fd);
                (void) unlink(tmp);
                return metrics_write_failed(path, r);
        }
        j->own_b.fd = fd;
        j->cache = cache;
        j->tmp = TAKE_PTR(tmp);
        j->path = TAKE_PTR(path);
        *ret = j;
        return 0;
}

int metrics_write(const Governor *g, const char *runtime_dir) {
        MetricsJob *j = NULL;
        int r = metrics_job_new(g, runtime_dir, NULL, &j);

        return r < 0 ? r : job_run(j);
}

/* ---- when ---------------------------------------------------------------------- */

bool metrics_due(const struct metrics_clock *c, uint64_t now_usec, uint64_t interval_usec, uint64_t slack_usec) {
        if (!c->written || c->changed)
                return true;
        /* A time before the last write (an injected clock; CLOCK_MONOTONIC
         * never goes back) must not hold the file back for ever. */
        if (now_usec < c->last_usec)
                return true;
        return now_usec - c->last_usec + slack_usec >= interval_usec;
}

void metrics_mark_written(struct metrics_clock *c, uint64_t now_usec) {
        c->written = true;
        c->changed = false;
        c->last_usec = now_usec;
}
