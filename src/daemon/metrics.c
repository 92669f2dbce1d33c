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

#include "bwgov/rqstat.h"
#include "log.h"
#include "metrics.h"

/* What a full buffer holds before it goes to the file: large enough that
 * the write()s are few, small enough to stay off the resident set. */
#define METRICS_CHUNK_BYTES (256 * 1024)

/* The longest decimal of a uint64_t. */
#define U64_DECIMAL_MAX 20

#define LABEL_OPEN "{unit=\""
#define LABEL_CLOSE "\"} "

/* ---- the buffer ----------------------------------------------------------- */

void metrics_buf_done(struct metrics_buf *b) {
        free(b->data);
        b->data = NULL;
        b->len = b->cap = 0;
        b->error = 0;
}

static int buf_flush(struct metrics_buf *b) {
        size_t off = 0;

        while (off < b->len) {
                ssize_t k = write(b->fd, b->data + off, b->len - off);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return b->error = -errno;
                }
                off += (size_t) k;
        }
        b->len = 0;
        return 0;
}

static char *buf_reserve_slow(struct metrics_buf *b, size_t n) {
        size_t cap;
        char *p;

        if (b->error < 0)
                return NULL;
        if (b->fd >= 0 && b->len > 0 && buf_flush(b) < 0)
                return NULL;
        if (b->cap - b->len >= n)
                return b->data + b->len;

        cap = b->fd >= 0 ? METRICS_CHUNK_BYTES : 2 * b->cap;
        if (cap < b->len + n)
                cap = b->len + n;
        if (cap < 4096)
                cap = 4096;
        p = realloc(b->data, cap);
        if (!p) {
                b->error = -ENOMEM;
                return NULL;
        }
        b->data = p;
        b->cap = cap;
        return p + b->len;
}

/* Room for n more bytes at the end: write there, then buf_commit(). NULL
 * once the buffer has failed. */
static inline char *buf_reserve(struct metrics_buf *b, size_t n) {
        if (__builtin_expect(b->cap - b->len >= n, 1))
                return b->data + b->len;
        return buf_reserve_slow(b, n);
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

/* Labels and family names are copied in blocks of this many bytes, a
 * constant size the compiler turns into a few moves instead of a call to
 * memcpy() per line: their storage is padded to it, and a line reserves
 * that much more than it needs. */
#define BLOCK 16

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

/* The label of every unit, escaped once for the whole render into
 * *storage (each one starting at a multiple of BLOCK and padded to one),
 * which the labels then point into: free it after them. */
static int labels_make(const struct governor_unit *units, size_t n, struct label **ret,
                       struct metrics_buf *storage) {
        _cleanup_free_ struct label *l = NULL;
        _cleanup_free_ size_t *off = NULL;
        static const char zeros[BLOCK];

        l = calloc(n > 0 ? n : 1, sizeof(*l));
        off = calloc(n > 0 ? n : 1, sizeof(*off));
        if (!l || !off)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                off[i] = storage->len;
                put_escaped(storage, units[i].summary.name);
                l[i].len = storage->len - off[i];
                buf_put(storage, zeros, (BLOCK - storage->len % BLOCK) % BLOCK);
        }
        if (storage->error < 0)
                return storage->error;
        /* storage->data moves while it grows: point into it at the end. */
        for (size_t i = 0; i < n; i++)
                l[i].s = storage->data + off[i];
        *ret = TAKE_PTR(l);
        return 0;
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

/* ---- the per-unit families ------------------------------------------------ */

/* A unit's value of one family; *ret_ok false leaves the unit out (the
 * value does not exist for it). */
typedef uint64_t (*unit_value_fn)(const struct governor_unit *u, bool *ret_ok);

/* Room for the longest family name, in whole BLOCKs; a longer name does
 * not compile (-Werror), one that fills it has no NUL: name_len counts. */
#define FAMILY_NAME_MAX (3 * BLOCK)

struct family {
        char name[FAMILY_NAME_MAX];
        size_t name_len;
        const char *type;
        unit_value_fn value;
        const char *help;
};

#define FAMILY(name, type, value, help) { name, sizeof(name) - 1, type, value, help }

static void write_family(struct metrics_buf *b, const struct family *fam, const struct governor_unit *units,
                         const struct label *labels, size_t n_units) {
        put_header(b, fam->name, fam->name_len, fam->type, fam->help);
        for (size_t i = 0; i < n_units; i++) {
                bool ok = true;
                uint64_t v = fam->value(&units[i], &ok);

                if (ok)
                        put_sample(b, fam->name, fam->name_len, &labels[i], v);
        }
}

#define PRESENT (u->summary.present)
#define ADOPTED (u->summary.adopted)
#define LAST_OK (u->summary.adopted && u->has_decision)
#define LAST (u->decision.d)
#define STAT_OK (u->has_stat)
#define CURRENT (u->summary.current)
#define BASELINE (u->summary.baseline)
typedef const struct governor_unit GU;
static uint64_t v_writes(GU *u, bool *ok) { *ok = PRESENT; return u->counters.io.writes; }
static uint64_t v_skipped(GU *u, bool *ok) { *ok = PRESENT; return u->counters.io.skipped; }
static uint64_t v_repairs(GU *u, bool *ok) { *ok = PRESENT; return u->counters.io.burst_repairs; }
static uint64_t v_external(GU *u, bool *ok) { return u->counters.external_changes; }
static uint64_t v_errors(GU *u, bool *ok) { return u->counters.write_errors; }
static uint64_t v_applied(GU *u, bool *ok) { return u->counters.decisions_applied; }
static uint64_t v_ticks(GU *u, bool *ok) { return u->summary.ticks; }
static uint64_t v_present(GU *u, bool *ok) { return PRESENT; }
static uint64_t v_paused(GU *u, bool *ok) { return u->summary.paused; }
static uint64_t v_credit(GU *u, bool *ok) { *ok = ADOPTED; return u->credit.credit_usec; }
static uint64_t v_debt(GU *u, bool *ok) { *ok = ADOPTED; return u->credit.debt_usec; }
static uint64_t v_credit_max(GU *u, bool *ok) { *ok = ADOPTED; return u->credit.credit_max_usec; }
static uint64_t v_headroom(GU *u, bool *ok) { *ok = LAST_OK; return LAST.headroom_usec; }
static uint64_t v_headroom_max(GU *u, bool *ok) { *ok = LAST_OK; return LAST.headroom_max_usec; }
static uint64_t v_level(GU *u, bool *ok) { *ok = LAST_OK; return LAST.level; }
static uint64_t v_earn(GU *u, bool *ok) { *ok = LAST_OK; return LAST.earn_rate; }
static uint64_t v_spend(GU *u, bool *ok) { *ok = LAST_OK; return LAST.spend_rate; }
static uint64_t v_spend_avg(GU *u, bool *ok) { *ok = LAST_OK; return LAST.spend_avg; }
static uint64_t v_tte(GU *u, bool *ok) {
        *ok = LAST_OK && LAST.time_to_empty_usec != UINT64_MAX;
        return LAST.time_to_empty_usec;
}
static uint64_t v_active(GU *u, bool *ok) { *ok = LAST_OK; return LAST.active; }
static uint64_t v_local_throttled(GU *u, bool *ok) {
        *ok = STAT_OK && (u->stat.seen & BW_CPUSTAT_LOCAL_THROTTLED);
        return u->stat.local_throttled_usec;
}
static uint64_t v_throttled(GU *u, bool *ok) { *ok = STAT_OK; return u->stat.throttled_usec; }
static uint64_t v_nr_throttled(GU *u, bool *ok) { *ok = STAT_OK; return u->stat.nr_throttled; }
static uint64_t v_nr_periods(GU *u, bool *ok) { *ok = STAT_OK; return u->stat.nr_periods; }
static uint64_t v_usage(GU *u, bool *ok) {
        *ok = STAT_OK && (u->stat.seen & BW_CPUSTAT_USAGE);
        return u->stat.usage_usec;
}
static uint64_t v_shed(GU *u, bool *ok) { return u->shed_permille; }

static uint64_t v_lat_level(const struct governor_unit *u, bool *ok) {
        *ok = u->summary.prot.cls == BW_CLASS_LATENCY;
        return (uint64_t) u->summary.prot.level;
}

static uint64_t v_lat_p99(const struct governor_unit *u, bool *ok) {
        *ok = u->summary.prot.cls == BW_CLASS_LATENCY && u->summary.prot.has_p99;
        return u->summary.prot.p99_usec;
}

static uint64_t v_lat_missed(const struct governor_unit *u, bool *ok) {
        *ok = u->summary.prot.cls == BW_CLASS_LATENCY;
        return u->summary.prot.missed;
}

static uint64_t v_lat_held(const struct governor_unit *u, bool *ok) {
        const struct governor_protection *p = &u->summary.prot;
        uint64_t n = p->hold ? 1 : 0;

        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                n += p->levers[l] ? 1 : 0;
        *ok = true;
        return n + (p->slice_usec > 0 ? 1 : 0);
}
static uint64_t v_quota(GU *u, bool *ok) {
        *ok = ADOPTED && CURRENT.quota_usec != BW_QUOTA_MAX;
        return CURRENT.quota_usec;
}
static uint64_t v_burst(GU *u, bool *ok) { *ok = ADOPTED; return CURRENT.burst_usec; }
static uint64_t v_period(GU *u, bool *ok) { *ok = ADOPTED; return CURRENT.period_usec; }
static uint64_t v_base_quota(GU *u, bool *ok) {
        *ok = ADOPTED && BASELINE.quota_usec != BW_QUOTA_MAX;
        return BASELINE.quota_usec;
}
static uint64_t v_base_burst(GU *u, bool *ok) { *ok = ADOPTED; return BASELINE.burst_usec; }

/* The per-unit families, in the order the file lists them. */
static const struct family families[] = {
        FAMILY("bwgov_unit_present", "gauge", v_present,
                "1 when the unit's cgroup exists and is governed."),
        FAMILY("bwgov_unit_paused", "gauge", v_paused,
                "1 when governing is paused for the unit."),
        FAMILY("bwgov_unit_ticks_total", "counter", v_ticks,
                "Decisions taken for the unit."),
        FAMILY("bwgov_writes_total", "counter", v_writes,
                "Files written (cpu.max, burst)."),
        FAMILY("bwgov_skipped_writes_total", "counter", v_skipped,
                "Writes not done because the value was already there."),
        FAMILY("bwgov_burst_repairs_total", "counter", v_repairs,
                "Burst re-written after a quota write changed it (kernels < 6.10)."),
        FAMILY("bwgov_external_changes_total", "counter", v_external,
                "Values found that bwgov did not write (re-based)."),
        FAMILY("bwgov_write_errors_total", "counter", v_errors,
                "Failed writes."),
        FAMILY("bwgov_decisions_applied_total", "counter", v_applied,
                "Decisions that changed the kernel's values."),
        FAMILY("bwgov_quota_usec", "gauge", v_quota,
                "Current quota per period."),
        FAMILY("bwgov_burst_usec", "gauge", v_burst,
                "Current burst."),
        FAMILY("bwgov_period_usec", "gauge", v_period,
                "Current period."),
        FAMILY("bwgov_baseline_quota_usec", "gauge", v_base_quota,
                "The contract's quota per period."),
        FAMILY("bwgov_baseline_burst_usec", "gauge", v_base_burst,
                "The burst found at adoption."),
        FAMILY("bwgov_credit_usec", "gauge", v_credit,
                "Credit bucket, CPU-microseconds."),
        FAMILY("bwgov_debt_usec", "gauge", v_debt,
                "Usage beyond the credit not yet repaid, CPU-microseconds."),
        FAMILY("bwgov_credit_max_usec", "gauge", v_credit_max,
                "CreditMax=, CPU-microseconds."),
        FAMILY("bwgov_credit_earn_usec_per_second", "gauge", v_earn,
                "Credit earned over the last sample (baseline minus usage), CPU-microseconds per second."),
        FAMILY("bwgov_credit_spend_usec_per_second", "gauge", v_spend,
                "Credit spent over the last sample (usage minus baseline), CPU-microseconds per second."),
        FAMILY("bwgov_credit_spend_avg_usec_per_second", "gauge", v_spend_avg,
                "Credit spending averaged over about 10 s, CPU-microseconds per second."),
        FAMILY("bwgov_credit_time_to_empty_usec", "gauge", v_tte,
                "At the average spending, time until the credit is down to its reserve (absent when not spending)."),
        FAMILY("bwgov_headroom_usec", "gauge", v_headroom,
                "Quota above the baseline the last decision set, per period."),
        FAMILY("bwgov_headroom_max_usec", "gauge", v_headroom_max,
                "The largest headroom now (CPUQuotaMax=, the nearest limited ancestor, host shedding), per period."),
        FAMILY("bwgov_headroom_level", "gauge", v_level,
                "Headroom level, 0 (baseline) to 4 (all of the largest)."),
        FAMILY("bwgov_unit_active", "gauge", v_active,
                "1 while the group spends credit, is throttled, or its run-queue p99 is over TargetWaitP99= "
                "(short horizon)."),
        FAMILY("bwgov_throttled_usec_total", "counter", v_throttled,
                "Kernel throttled time."),
        FAMILY("bwgov_nr_throttled_total", "counter", v_nr_throttled,
                "Kernel throttled periods."),
        FAMILY("bwgov_local_throttled_usec_total", "counter", v_local_throttled,
                "Kernel throttled time by the group's own or an ancestor's limit (cpu.stat.local)."),
        FAMILY("bwgov_nr_periods_total", "counter", v_nr_periods,
                "Kernel enforcement periods."),
        FAMILY("bwgov_usage_usec_total", "counter", v_usage,
                "CPU time used."),
        FAMILY("bwgov_shed_permille", "gauge", v_shed,
                "Share of the unit's headroom the last host shedding plan withdrew."),
        FAMILY("bwgov_latency_level", "gauge", v_lat_level,
                "Class=latency: the latency protection rung, 0 (none), 1 hold, 2 weight, 3 weight-high, 4 slice, "
                "5 idle."),
        FAMILY("bwgov_latency_wait_p99_usec", "gauge", v_lat_p99,
                "Class=latency: run-queue wait p99 of the latest one-second window, microseconds."),
        FAMILY("bwgov_latency_missed_total", "counter", v_lat_missed,
                "Class=latency: windows whose run-queue wait p99 was over LatencyTarget=."),
        FAMILY("bwgov_levers_held", "gauge", v_lat_held,
                "Levers bwgov holds on the unit beyond its bandwidth: headroom held for a latency unit, weight, idle, "
                "freezer, cpuset, thread slices."),
};


static void write_units(struct metrics_buf *b, const struct governor_unit *units, const struct label *labels,
                        size_t n) {
        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                write_family(b, &families[i], units, labels, n);
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
        scalar(b, "bwgov_runqueue_telemetry", "gauge",
               "1 while the run-queue BPF programs are loaded (GetStatus says why not).", s->telemetry ? 1 : 0);
        scalar(b, "bwgov_host_over_limit", "gauge",
               "1 while the host is over HostPressureLimit= with work outside the governed groups.",
               s->host_over_limit ? 1 : 0);
        scalar(b, "bwgov_usage_gates", "gauge",
               "Parent cgroups whose usage is read once for their governed children.", s->usage_gates);
        scalar(b, "bwgov_gated_samples_total", "counter",
               "Samples of quiet units that read nothing of their own: no task below the parent had run.",
               s->gated_samples);
        scalar(b, "bwgov_heap_bytes", "gauge", "The daemon's heap in use (allocated, not resident), bytes.",
               s->heap_bytes);
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

/* The wait histogram: the log2 buckets as cumulative "le" buckets. */
static void write_rq_histogram(struct metrics_buf *b, const struct governor_unit *units, const struct label *labels,
                               size_t n) {
        static const char name[] = "bwgov_runqueue_wait_seconds";
        struct number le[BW_RQ_SLOTS];

        /* The bounds are the same for every unit. */
        for (unsigned slot = 0; slot < BW_RQ_SLOTS; slot++) {
                uint64_t lo, hi;

                bw_rq_slot_range(slot, &lo, &hi);
                if (hi == UINT64_MAX)
                        le[slot] = (struct number) { "+Inf", 4 };
                else
                        number_format(&le[slot], (double) hi / 1e6);
        }

        put_header(b, name, sizeof(name) - 1, "histogram",
                   "Run-queue wait of the unit's tasks, from wake-up or preemption until they ran (BPF, since the "
                   "cgroup was first counted).");
        for (size_t i = 0; i < n; i++) {
                const struct governor_unit *u = &units[i];
                uint64_t cum = 0;

                if (!u->has_rq)
                        continue;
                for (unsigned slot = 0; slot < BW_RQ_SLOTS; slot++) {
                        cum += u->rq.wait_slots[slot];
                        rq_sample(b, "bwgov_runqueue_wait_seconds_bucket", &labels[i], &le[slot], cum, false);
                }
                rq_sample(b, "bwgov_runqueue_wait_seconds_sum", &labels[i], NULL, u->rq.wait_ns, true);
                rq_sample(b, "bwgov_runqueue_wait_seconds_count", &labels[i], NULL, cum, false);
        }
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

static void write_rq(struct metrics_buf *b, const struct governor_unit *units, const struct label *labels,
                     size_t n) {
        write_rq_histogram(b, units, labels, n);
        for (size_t k = 0; k < ELEMENTSOF(rq_families); k++) {
                const struct rq_family *fam = &rq_families[k];

                put_header(b, fam->name, strlen(fam->name), "counter", fam->help);
                for (size_t i = 0; i < n; i++) {
                        uint64_t v;

                        if (!units[i].has_rq)
                                continue;
                        memcpy(&v, (const char *) &units[i].rq + fam->offset, sizeof(v));
                        rq_sample(b, fam->name, &labels[i], NULL, v, fam->ns);
                }
        }
}

/* ---- the file ---------------------------------------------------------------- */

int metrics_render(const Governor *g, struct metrics_buf *b) {
        _cleanup_free_ struct governor_unit *units = NULL;
        _cleanup_free_ struct label *labels = NULL;
        struct metrics_buf storage = METRICS_BUF_INIT;
        struct governor_status status;
        size_t n;
        int r;

        r = g->ops->get_status(g->userdata, &status);
        if (r < 0)
                return r;
        r = g->ops->list_units(g->userdata, SIZE_MAX, &units, &n, NULL);
        if (r < 0)
                return r;
        r = labels_make(units, n, &labels, &storage);
        if (r >= 0) {
                write_host(b, &status);
                write_units(b, units, labels, n);
                write_rq(b, units, labels, n);
                r = b->error;
        }
        metrics_buf_done(&storage);
        return r;
}

/* A warning (the caller's per-tick pass holds back its repeats, log.h):
 * an operator reads the file, so its absence is worth a line. */
static int metrics_write_failed(const char *path, int r) {
        return log_warning_errno(r, "Cannot write the metrics to %s: %s%s", path, STRERROR(r),
                                 r == -ENOENT ? " (the runtime directory is gone; a reload creates it again)" : "");
}

int metrics_write(const Governor *g, const char *runtime_dir) {
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        struct metrics_buf b = METRICS_BUF_INIT;
        int r;

        if (asprintf(&path, "%s/metrics.prom", runtime_dir) < 0 ||
            asprintf(&tmp, "%s/.metrics.prom.%d", runtime_dir, (int) getpid()) < 0)
                return log_oom();

        /* A file of our own, never opened blocking (a FIFO left at that
         * name would hang the loop). */
        if (unlink(tmp) < 0 && errno != ENOENT)
                return metrics_write_failed(tmp, -errno);
        b.fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
        if (b.fd < 0)
                return metrics_write_failed(tmp, -errno);

        r = metrics_render(g, &b);
        if (r >= 0)
                r = buf_flush(&b);
        metrics_buf_done(&b);
        if (close(b.fd) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                return metrics_write_failed(path, r);
        }
        return 0;
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
