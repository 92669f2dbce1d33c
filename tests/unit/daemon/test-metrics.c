/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics.prom (src/daemon/metrics/metrics.c) over a fake governor (a governor_ops
 * table with canned snapshots): a small fixed snapshot byte for byte
 * against tests/fixtures/metrics/, the number of lines of a large one, the
 * file metrics_write() leaves (written in chunks) against the same render
 * in memory, errors, and when the file is due (injected clock). No root,
 * no Manager. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"
#include "governor.h"
#include "metrics/metrics-cache.h"
#include "metrics/metrics.h"

#define FILE_MAX_BYTES (64 * 1024 * 1024)

struct fake {
        struct governor_status status;
        struct governor_unit *units;
        size_t n_units;
        int status_error;
        int list_error;
        size_t snapshot_calls;
};

static int fake_get_status(void *userdata, struct governor_status *ret) {
        struct fake *f = userdata;

        if (f->status_error < 0)
                return f->status_error;
        *ret = f->status;
        return 0;
}

/* The units' names are in strcmp() order, as the manager keeps them. */
static int fake_snapshot_units(void *userdata, const char *after, size_t max, struct governor_unit *out,
                               size_t *ret_n, size_t *ret_total) {
        struct fake *f = userdata;
        size_t k = 0, i = 0;

        if (f->list_error < 0)
                return f->list_error;
        while (after && i < f->n_units && strcmp(f->units[i].summary.name, after) <= 0)
                i++;
        for (; i < f->n_units && k < max; i++)
                out[k++] = f->units[i];
        *ret_n = k;
        *ret_total = f->n_units;
        f->snapshot_calls++;
        return 0;
}

static int fake_list_units(void *userdata, size_t limit, struct governor_unit **ret, size_t *ret_n,
                           size_t *ret_total) {
        struct fake *f = userdata;
        struct governor_unit *u;

        assert_int_equal(limit, SIZE_MAX);      /* the metrics list every unit */
        if (f->list_error < 0)
                return f->list_error;
        u = calloc(f->n_units > 0 ? f->n_units : 1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        if (f->n_units > 0)
                memcpy(u, f->units, f->n_units * sizeof(*u));
        *ret = u;
        *ret_n = f->n_units;
        if (ret_total)
                *ret_total = f->n_units;
        return 0;
}

static const struct governor_ops fake_ops = {
        .get_status = fake_get_status,
        .list_units = fake_list_units,
        .snapshot_units = fake_snapshot_units,
};

/* ---- the fixed snapshot ----------------------------------------------------- */

/* An adopted, boosted throughput unit with a decision and a full cpu.stat. */
static void unit_steady(struct governor_unit *u, const char *name) {
        *u = (struct governor_unit) {
                .summary = {
                        .name = name,
                        .present = true,
                        .adopted = true,
                        .baseline = { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0 },
                        .current = { .quota_usec = 100000, .period_usec = 100000, .burst_usec = 20000 },
                        .ticks = 86400,
                        .prot.cls = BW_CLASS_THROUGHPUT,
                },
                .credit = { .credit_usec = 29876543, .debt_usec = 0, .credit_max_usec = 30000000 },
                .has_decision = true,
                .counters = {
                        .io = { .writes = 17, .skipped = 3, .burst_repairs = 1 },
                        .external_changes = 2,
                        .write_errors = 0,
                        .decisions_applied = 12,
                },
                .has_stat = true,
                .stat = {
                        .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_LOCAL_THROTTLED,
                        .usage_usec = 123456789012,
                        .throttled_usec = 4567890,
                        .local_throttled_usec = 4567000,
                        .nr_throttled = 456,
                        .nr_periods = 864000,
                },
                .shed_permille = 250,
        };
        u->decision.d = (struct bw_decision) {
                .headroom_usec = 50000,
                .headroom_max_usec = 50000,
                .level = 4,
                .earn_rate = 312345,
                .spend_rate = 0,
                .spend_avg = 1234,
                .time_to_empty_usec = 987654321,
                .active = true,
        };
}

/* Three units: a latency unit with run-queue telemetry and the largest
 * counter; a unit whose name needs every escape, present but not adopted
 * yet; an absent, paused one with no quota. */
static void snapshot_small(struct fake *f, struct governor_unit units[static 3]) {
        unit_steady(&units[0], "db.service");
        units[0].summary.prot = (struct governor_protection) {
                .cls = BW_CLASS_LATENCY,
                .level = BW_LAT_WEIGHT,
                .has_p99 = true,
                .p99_usec = 1500,
                .missed = 7,
                .changes = 3,
                .hold = true,
                .levers = { [0] = "400" },
                .slice_usec = 300,
        };
        units[0].counters.io.writes = UINT64_MAX;
        units[0].decision.d.time_to_empty_usec = UINT64_MAX;   /* not spending: absent */
        units[0].has_rq = true;
        units[0].rq.wait_slots[0] = 10;
        units[0].rq.wait_slots[3] = 2;
        units[0].rq.wait_slots[12] = 1;
        units[0].rq.wait_slots[BW_RQ_SLOTS - 1] = 1;
        units[0].rq.wait_ns = 6000000;
        units[0].rq.throttled_wait_ns = 3000000;
        units[0].rq.throttles = 4;
        units[0].rq.throttle_ns = 1234567891;

        unit_steady(&units[1], "odd\"na\\me\nwith \"all\\");
        units[1].summary.adopted = false;
        units[1].has_decision = false;
        units[1].stat.seen = BW_CPUSTAT_USAGE;                  /* no cpu.stat.local */
        units[1].shed_permille = 0;
        units[1].has_rq = true;                                 /* never ran: no run-queue lines */

        units[2] = (struct governor_unit) {
                .summary = {
                        .name = "web.slice",
                        .paused = true,
                        .adopted = true,
                        .baseline = { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000 },
                        .current = { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000 },
                        .ticks = 10,
                },
                .credit = { .credit_usec = 99, .debt_usec = 100, .credit_max_usec = 10, .exhausted = true },
        };

        *f = (struct fake) {
                .status = {
                        .realtime_usec = UINT64_C(1700000000999999),    /* 2023-11-14 22:13:20 UTC */
                        .ticks = 1000000,
                        .counts.units = 3,
                        .reloads = 2,
                        .reload_failures = 1,
                        .state_saves = 42,
                        .host_pressure_rate = 12345,
                        .host_other_usage_rate = 99,
                        .host_other_wait_rate = 66,
                        .host_other_behind_rate = 44,
                        .host_governed_excess_rate = 77,
                        .host_idle_rate = 55,
                        .telemetry = true,
                        .host_over_limit = false,
                        .heap_bytes = 1234567,
                        .usage_gates = 2,
                        .gated_samples = 777,
                        .activity_gated_samples = 888,
                        .parked = 5,
                        .parked_wakes = 12,
                },
                .units = units,
                .n_units = 3,
        };
}

static char *read_fixture(const char *name, size_t *ret_len) {
        const char *d = getenv("BWGOV_FIXTURES");
        char path[PATH_MAX];
        char *buf = NULL;

        assert_non_null(d);
        snprintf(path, sizeof(path), "%s/metrics/%s", d, name);
        assert_int_equal(bw_read_full_at(AT_FDCWD, path, 0, FILE_MAX_BYTES, &buf, ret_len), 0);
        return buf;
}

static void assert_text_equal(const char *got, size_t got_len, const char *want, size_t want_len) {
        size_t i = 0, line = 1;

        for (; i < got_len && i < want_len && got[i] == want[i]; i++)
                line += got[i] == '\n';
        if (i == got_len && i == want_len)
                return;
        print_error("first difference at byte %zu, line %zu:\n got: %.80s\nwant: %.80s\n", i, line,
                    i < got_len ? got + i : "(end)", i < want_len ? want + i : "(end)");
        fail();
}

static void test_render_small(void **state) {
        struct governor_unit units[3];
        struct metrics_buf b = METRICS_BUF_INIT;
        _cleanup_free_ char *want = NULL;
        struct fake f;
        size_t want_len;

        snapshot_small(&f, units);
        assert_int_equal(metrics_render(&(Governor) { &fake_ops, &f }, &b), 0);
        want = read_fixture("small.prom", &want_len);
        assert_text_equal(b.data, b.len, want, want_len);
        metrics_buf_done(&b);
        assert_null(b.data);
        assert_int_equal(b.len, 0);
}

/* ---- many units ------------------------------------------------------------- */

/* Lines without units: 17 host values of three lines each, the HELP and
 * TYPE of the 37 unit families and of the 4 run-queue ones. */
#define LINES_NO_UNITS (18 * 3 + 37 * 2 + 4 * 2)
/* Of the 37 unit families, a steady throughput unit is in all but the
 * four Class=latency ones. */
#define LINES_PER_STEADY_UNIT 33

struct many {
        struct fake f;
        struct governor_unit *units;
        char (*names)[64];
};

static void many_make(struct many *m, size_t n) {
        m->units = calloc(n, sizeof(*m->units));
        m->names = calloc(n, sizeof(*m->names));
        assert_non_null(m->units);
        assert_non_null(m->names);
        for (size_t i = 0; i < n; i++) {
                /* Every tenth name needs escaping; the number first keeps
                 * them in strcmp() order. */
                snprintf(m->names[i], sizeof(m->names[i]), i % 10 == 3 ? "unit-%05zu-\"\\.service" :
                         "unit-%05zu.service", i);
                unit_steady(&m->units[i], m->names[i]);
                m->units[i].stat.usage_usec += i * 1000003;
        }
        m->f = (struct fake) { .units = m->units, .n_units = n, .status.counts.units = n,
                               .status.host_other_wait_rate = UINT64_MAX /* no telemetry: no line */,
                               .status.host_other_behind_rate = UINT64_MAX };
}

static void many_done(struct many *m) {
        free(m->units);
        free(m->names);
}

static size_t count_lines(const char *s, size_t n) {
        size_t lines = 0;

        for (const char *p = s; (p = memchr(p, '\n', n - (size_t) (p - s))); p++)
                lines++;
        return lines;
}

static void test_render_many(void **state) {
        static const size_t sizes[] = { 0, 1, 2, 999, 5000 };

        for (size_t k = 0; k < ELEMENTSOF(sizes); k++) {
                struct metrics_buf b = METRICS_BUF_INIT;
                struct many m;

                many_make(&m, sizes[k]);
                assert_int_equal(metrics_render(&(Governor) { &fake_ops, &m.f }, &b), 0);
                assert_int_equal(count_lines(b.data, b.len), LINES_NO_UNITS + LINES_PER_STEADY_UNIT * sizes[k]);
                assert_true(b.len > 0 && b.data[b.len - 1] == '\n');
                if (sizes[k] > 3)
                        assert_non_null(memmem(b.data, b.len, "\nbwgov_usage_usec_total{unit=\"unit-00003-\\\"\\\\"
                                               ".service\"} 123459789021\n", 68));
                metrics_buf_done(&b);
                many_done(&m);
        }
}

/* A render appends: twice into one buffer is the text twice. */
static void test_render_appends(void **state) {
        struct governor_unit units[3];
        struct metrics_buf b = METRICS_BUF_INIT;
        struct fake f;
        size_t once;

        snapshot_small(&f, units);
        assert_int_equal(metrics_render(&(Governor) { &fake_ops, &f }, &b), 0);
        once = b.len;
        assert_int_equal(metrics_render(&(Governor) { &fake_ops, &f }, &b), 0);
        assert_int_equal(b.len, 2 * once);
        assert_memory_equal(b.data, b.data + once, once);
        metrics_buf_done(&b);
}

/* ---- the file ----------------------------------------------------------------- */

static void rm_dir(const char *dir) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/metrics.prom", dir);
        (void) unlink(path);
        assert_int_equal(rmdir(dir), 0);        /* no temporary file left behind */
}

/* Thousands of units are far more than one chunk: the file is written in
 * pieces, and is the render in memory all the same. */
static void test_write_file(void **state) {
        char dir[] = "/tmp/bwgov-test-metrics-XXXXXX", path[PATH_MAX];
        struct metrics_buf b = METRICS_BUF_INIT;
        _cleanup_free_ char *got = NULL;
        size_t got_len;
        struct many m;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/metrics.prom", dir);
        many_make(&m, 3000);
        assert_int_equal(metrics_write(&(Governor) { &fake_ops, &m.f }, dir), 0);
        assert_int_equal(bw_read_full_at(AT_FDCWD, path, 0, FILE_MAX_BYTES, &got, &got_len), 0);
        assert_int_equal(metrics_render(&(Governor) { &fake_ops, &m.f }, &b), 0);
        assert_true(b.len > 4 * 256 * 1024);
        assert_text_equal(got, got_len, b.data, b.len);
        metrics_buf_done(&b);

        /* Rewritten in place, smaller. */
        m.f.n_units = 0;
        assert_int_equal(metrics_write(&(Governor) { &fake_ops, &m.f }, dir), 0);
        free(got);
        got = NULL;
        assert_int_equal(bw_read_full_at(AT_FDCWD, path, 0, FILE_MAX_BYTES, &got, &got_len), 0);
        assert_int_equal(count_lines(got, got_len), LINES_NO_UNITS);
        many_done(&m);
        rm_dir(dir);
}

/* In steps (ten thousand units are some 40 ms of rendering): with no
 * time budget each step takes one piece of the snapshot (SNAPSHOT_CHUNK
 * units), then renders one part (the host values, a family, the run-queue
 * families). A unit list that changes while it is taken in pieces (a
 * reload) is taken again from the start. Until the last step the file is
 * the one before; a job dropped half-way leaves it and no temporary file. */
static void test_write_in_steps(void **state) {
        char dir[] = "/tmp/bwgov-test-metrics-XXXXXX", path[PATH_MAX];
        struct metrics_buf b = METRICS_BUF_INIT;
        _cleanup_free_ char *got = NULL, *first = NULL;
        size_t got_len, first_len, steps = 0;
        MetricsJob *j = NULL;
        struct many m;
        int r;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/metrics.prom", dir);
        many_make(&m, 2000);
        m.f.n_units = 10;
        assert_int_equal(metrics_write(&(Governor) { &fake_ops, &m.f }, dir), 0);
        assert_int_equal(bw_read_full_at(AT_FDCWD, path, 0, FILE_MAX_BYTES, &first, &first_len), 0);
        m.f.n_units = 1500;
        assert_int_equal(metrics_render(&(Governor) { &fake_ops, &m.f }, &b), 0);

        m.f.n_units = 2000;
        m.f.snapshot_calls = 0;
        assert_int_equal(metrics_job_new(&(Governor) { &fake_ops, &m.f }, dir, NULL, &j), 0);
        while ((r = metrics_job_step(j, 0)) == 0) {
                if (++steps == 3) {
                        assert_int_equal(m.f.snapshot_calls, 3);
                        m.f.n_units = 1500;     /* units gone (a reload, containers) */
                }
                assert_int_equal(bw_read_full_at(AT_FDCWD, path, 0, FILE_MAX_BYTES, &got, &got_len), 0);
                assert_text_equal(got, got_len, first, first_len);
                got = mfree(got);
        }
        assert_int_equal(r, 1);
        /* 3 pieces of 128, then the 1116 after the last name taken in 9
         * (nothing taken again), the labels, 42 parts (the host values,
         * 37 families, 4 run-queue ones). */
        assert_int_equal(m.f.snapshot_calls, 3 + 9);
        assert_int_equal(steps + 1, 3 + 9 + 1 + 42);
        j = metrics_job_free(j);
        assert_int_equal(bw_read_full_at(AT_FDCWD, path, 0, FILE_MAX_BYTES, &got, &got_len), 0);
        assert_text_equal(got, got_len, b.data, b.len);
        got = mfree(got);

        /* Dropped half-way: the last whole file stays. */
        m.f.n_units = 5;
        assert_int_equal(metrics_job_new(&(Governor) { &fake_ops, &m.f }, dir, NULL, &j), 0);
        assert_int_equal(metrics_job_step(j, 0), 0);
        assert_int_equal(metrics_job_step(j, 0), 0);
        j = metrics_job_free(j);
        assert_int_equal(bw_read_full_at(AT_FDCWD, path, 0, FILE_MAX_BYTES, &got, &got_len), 0);
        assert_text_equal(got, got_len, b.data, b.len);

        metrics_buf_done(&b);
        many_done(&m);
        rm_dir(dir);
}

/* ---- the cache of the last file ---------------------------------------------- */

/* A file written with the cache: it is what a render without one gives;
 * the segments (64 units) copied from the last file and rendered. */
static void write_cached(struct many *m, const char *dir, MetricsCache *c, size_t *ret_reused,
                         size_t *ret_rendered) {
        struct metrics_buf b = METRICS_BUF_INIT;
        _cleanup_free_ char *got = NULL;
        char path[PATH_MAX];
        MetricsJob *j = NULL;
        size_t got_len;
        int r;

        snprintf(path, sizeof(path), "%s/metrics.prom", dir);
        assert_int_equal(metrics_job_new(&(Governor) { &fake_ops, &m->f }, dir, c, &j), 0);
        while ((r = metrics_job_step(j, 0)) == 0)
                ;
        assert_int_equal(r, 1);
        j = metrics_job_free(j);
        metrics_cache_stats(c, ret_reused, ret_rendered);

        assert_int_equal(bw_read_full_at(AT_FDCWD, path, 0, FILE_MAX_BYTES, &got, &got_len), 0);
        assert_int_equal(metrics_render(&(Governor) { &fake_ops, &m->f }, &b), 0);
        assert_text_equal(got, got_len, b.data, b.len);
        metrics_buf_done(&b);
}

static void assert_segments(struct many *m, const char *dir, MetricsCache *c, size_t reused, size_t rendered) {
        size_t got_reused, got_rendered;

        write_cached(m, dir, c, &got_reused, &got_rendered);
        assert_int_equal(got_reused, reused);
        assert_int_equal(got_rendered, rendered);
}

/* 1000 units are 16 segments (15 of 64, one of 40). Unchanged, each is
 * copied; a unit's value or run-queue counter changed, a unit gone or
 * added: its segment is rendered again, and those after it when the
 * units moved. A file changed behind bwgovd's back is not copied from. */
static void test_cache(void **state) {
        char dir[] = "/tmp/bwgov-test-metrics-XXXXXX", path[PATH_MAX];
        MetricsCache *c = metrics_cache_new();
        struct many m;
        struct stat st;
        int fd;

        assert_non_null(c);
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/metrics.prom", dir);
        many_make(&m, 1000);
        m.units[70].has_rq = true;
        m.units[70].rq.wait_slots[2] = 5;

        assert_segments(&m, dir, c, 0, 16);
        assert_segments(&m, dir, c, 16, 0);
        assert_segments(&m, dir, c, 16, 0);

        m.units[100].stat.usage_usec++;                         /* segment 1 */
        assert_segments(&m, dir, c, 15, 1);
        m.units[70].rq.wait_slots[2]++;                         /* segment 1 again */
        m.units[999].credit.credit_usec = 1;                    /* segment 15 */
        assert_segments(&m, dir, c, 14, 2);
        m.units[70].has_rq = false;                             /* its histogram gone */
        assert_segments(&m, dir, c, 15, 1);
        m.units[640].summary.name = "unit-00640-renamed.service";       /* segment 10 */
        assert_segments(&m, dir, c, 15, 1);

        m.f.n_units = 999;                                      /* the last segment is shorter */
        assert_segments(&m, dir, c, 15, 1);
        m.f.units = m.units + 1;                                /* the first unit gone: all moved */
        m.f.n_units = 999;
        assert_segments(&m, dir, c, 0, 16);
        m.f.units = m.units;
        m.f.n_units = 1000;
        assert_segments(&m, dir, c, 0, 16);
        assert_segments(&m, dir, c, 16, 0);

        /* Appended to, or rewritten to the same size. */
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "# x\n", 4), 4);
        assert_int_equal(close(fd), 0);
        assert_segments(&m, dir, c, 0, 16);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, "#", 1, 200000), 1);
        /* Later than bwgovd's write (the kernel's file times tick coarsely). */
        assert_int_equal(fstat(fd, &st), 0);
        st.st_mtim.tv_sec += 1;
        assert_int_equal(futimens(fd, (const struct timespec[2]) { st.st_atim, st.st_mtim }), 0);
        assert_int_equal(close(fd), 0);
        assert_segments(&m, dir, c, 0, 16);
        assert_segments(&m, dir, c, 16, 0);

        /* Shorter while it looks as written (cut between bwgovd's stat and
         * its copy): a copy comes up short, in the middle of a run of
         * segments, and those lines are rendered instead; the file is whole. */
        assert_int_equal(fstat(c->fd, &st), 0);
        assert_int_equal(ftruncate(c->fd, st.st_size / 2 + 1000), 0);
        assert_int_equal(fstat(c->fd, &c->st), 0);
        assert_segments(&m, dir, c, 0, 16);
        assert_segments(&m, dir, c, 16, 0);

        /* Removed (an operator's rm): still copied from, the file comes back whole. */
        assert_int_equal(unlink(path), 0);
        assert_segments(&m, dir, c, 16, 0);

        /* None. */
        m.f.n_units = 0;
        assert_segments(&m, dir, c, 0, 0);
        m.f.n_units = 1000;
        assert_segments(&m, dir, c, 0, 16);

        many_done(&m);
        metrics_cache_free(c);
        rm_dir(dir);
}

/* A failing operation fails the render and leaves the file as it was. */
static void test_errors(void **state) {
        char dir[] = "/tmp/bwgov-test-metrics-XXXXXX", path[PATH_MAX], missing[PATH_MAX + 16];
        struct governor_unit units[3];
        struct metrics_buf b = METRICS_BUF_INIT;
        _cleanup_free_ char *before = NULL, *after = NULL;
        size_t before_len, after_len;
        struct fake f;

        snapshot_small(&f, units);
        f.status_error = -EIO;
        assert_int_equal(metrics_render(&(Governor) { &fake_ops, &f }, &b), -EIO);
        f.status_error = 0;
        f.list_error = -ENOMEM;
        assert_int_equal(metrics_render(&(Governor) { &fake_ops, &f }, &b), -ENOMEM);
        metrics_buf_done(&b);

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/metrics.prom", dir);
        f.list_error = 0;
        assert_int_equal(metrics_write(&(Governor) { &fake_ops, &f }, dir), 0);
        assert_int_equal(bw_read_full_at(AT_FDCWD, path, 0, FILE_MAX_BYTES, &before, &before_len), 0);
        f.list_error = -ENOMEM;
        f.status.ticks++;
        assert_int_equal(metrics_write(&(Governor) { &fake_ops, &f }, dir), -ENOMEM);
        assert_int_equal(bw_read_full_at(AT_FDCWD, path, 0, FILE_MAX_BYTES, &after, &after_len), 0);
        assert_text_equal(after, after_len, before, before_len);

        snprintf(missing, sizeof(missing), "%s/gone", dir);
        f.list_error = 0;
        assert_int_equal(metrics_write(&(Governor) { &fake_ops, &f }, missing), -ENOENT);
        rm_dir(dir);
}

/* ---- when it is due --------------------------------------------------------- */

#define SEC(s) ((uint64_t) (s) * USEC_PER_SEC)
#define MSEC(s) ((uint64_t) (s) * USEC_PER_MSEC)

static void test_due(void **state) {
        struct metrics_clock c = { 0 };
        const uint64_t t0 = SEC(1000), every = SEC(10), slack = MSEC(500);

        /* At start. */
        assert_true(metrics_due(&c, t0, every, slack));
        metrics_mark_written(&c, t0);
        assert_false(metrics_due(&c, t0, every, slack));

        /* Every MetricsInterval=, less half an Interval= pass. */
        assert_false(metrics_due(&c, t0 + SEC(9), every, slack));
        assert_false(metrics_due(&c, t0 + SEC(9) + MSEC(499), every, slack));
        assert_true(metrics_due(&c, t0 + SEC(9) + MSEC(500), every, slack));
        assert_true(metrics_due(&c, t0 + SEC(10), every, 0));
        assert_false(metrics_due(&c, t0 + SEC(10) - 1, every, 0));
        assert_true(metrics_due(&c, t0 + SEC(3600), every, slack));

        /* A structural change: at the next pass, whatever the interval. */
        metrics_mark_written(&c, t0 + SEC(10));
        assert_false(metrics_due(&c, t0 + SEC(11), every, slack));
        metrics_mark_changed(&c);
        metrics_mark_changed(&c);
        assert_true(metrics_due(&c, t0 + SEC(11), every, slack));
        metrics_mark_written(&c, t0 + SEC(11));
        assert_false(metrics_due(&c, t0 + SEC(12), every, slack));
        assert_false(metrics_due(&c, t0 + SEC(20), every, slack));
        assert_true(metrics_due(&c, t0 + SEC(21), every, slack));

        /* A shorter interval than the passes: every pass. */
        assert_true(metrics_due(&c, t0 + SEC(12), SEC(1), slack));

        /* Time before the last write does not hold the file back. */
        assert_true(metrics_due(&c, t0, every, slack));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_render_small),
                cmocka_unit_test(test_render_many),
                cmocka_unit_test(test_render_appends),
                cmocka_unit_test(test_write_file),
                cmocka_unit_test(test_write_in_steps),
                cmocka_unit_test(test_cache),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_due),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
