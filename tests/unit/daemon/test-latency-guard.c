/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The latency guard's member table (src/daemon/guard/latency-guard.c) over a
 * hybrid fixture tree: its state of each unit follows the unit table it
 * is handed (kept, new, forgotten), is read through latency_guard_view(),
 * and starts afresh after latency_guard_unit_leaving(); a hold reaches the
 * unit only through unit_set_headroom_cap(). The levers, the unit's mode
 * and headroom cap, the store and the telemetry are fakes below. */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/cgroup/cgroupfs-mount.h"
#include "guard/latency-guard.h"
#include "unit/unit-sample.h"
#include "tmptree.h"

/* ---- fakes at the guard's edges ---------------------------------------- */

int levers_set(const struct lever_host *h, enum unit_lever l, const char *value) {
        return 0;
}

int levers_restore_one(const struct lever_host *h, enum unit_lever l, const char *why) {
        return 0;
}

bool levers_is_set(const struct lever_host *h, enum unit_lever l) {
        return false;
}

bool levers_any(const struct lever_host *h) {
        return false;
}

int levers_slice_apply(const struct lever_host *h, uint64_t slice_usec) {
        return 0;
}

enum bw_mode unit_mode(const Unit *u) {
        return BW_MODE_BURST;
}

/* The unit module's setter (unit-sample.c), recorded: the guard writes no
 * field of a unit. */
static unsigned cap_calls, cap_last;

void unit_set_headroom_cap(Unit *u, enum unit_cap cap, unsigned permille, uint64_t now) {
        assert_int_equal(cap, UNIT_CAP_LATENCY_HOLD);
        cap_calls++;
        cap_last = permille;
}

const struct bw_ledger_lever *store_lever(Store *s, const char *name, enum bw_lever l) {
        return NULL;
}

int rqstat_read(Rqstat *t, uint64_t cgroup_id, struct bw_rq_counters *ret) {
        return -ENOENT;
}

/* ---- the fixture tree -------------------------------------------------- */

static const char *const NAMES[] = { "a.service", "b.service", "c.service" };

struct fixture {
        char dir[64];
        struct bw_cg_root *root;
        struct unit_context ctx;
        Unit units[3];
        struct bw_unit_config cfgs[3];  /* the units' configurations (Unit.cfg) */
        struct latency_guard g;
};

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "/tmp/bwgov-test-latency-guard-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        tmptree_put(f->dir, "unified/cgroup.procs", "");
        for (size_t i = 0; i < 3; i++) {
                char p[128];

                snprintf(p, sizeof(p), "cpu/%s/cpu.cfs_quota_us", NAMES[i]);
                tmptree_put(f->dir, p, "-1\n");
                snprintf(p, sizeof(p), "cpu/%s/cpu.cfs_period_us", NAMES[i]);
                tmptree_put(f->dir, p, "100000\n");
                snprintf(p, sizeof(p), "cpu/%s/cpu.stat", NAMES[i]);
                tmptree_put(f->dir, p, "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
                snprintf(p, sizeof(p), "unified/%s/cpu.stat", NAMES[i]);
                tmptree_put(f->dir, p, "usage_usec 1000\nuser_usec 500\nsystem_usec 500\n");
                snprintf(p, sizeof(p), "unified/%s/cpu.pressure", NAMES[i]);
                tmptree_put(f->dir, p, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                               "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        }
        assert_int_equal(bw_cg_root_open_dir(f->dir, &f->root), 0);
        f->ctx.root = f->root;
        for (size_t i = 0; i < 3; i++) {
                Unit *u = &f->units[i];

                u->ctx = &f->ctx;
                u->name = (char *) NAMES[i];
                u->adopted = true;
                u->cfg = &f->cfgs[i];
                f->cfgs[i].has_class = true;
                f->cfgs[i].class = BW_CLASS_LATENCY;
                f->cfgs[i].cpu_guarantee = (i + 1) * 100000;   /* 10%, 20%, 30% of a CPU */
                assert_int_equal(bw_cg_open(f->root, NAMES[i], &u->cg), 0);
        }
        f->g.ctx = (struct latency_guard_context) { .ncpus = 2 };
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        latency_guard_done(&f->g);
        for (size_t i = 0; i < 3; i++)
                bw_cg_free(f->units[i].cg);
        bw_cg_root_free(f->root);
        tmptree_remove(f->dir);
        free(f);
        return 0;
}

static uint64_t samples(struct fixture *f, size_t i) {
        struct latency_view v, at, off;

        latency_guard_view(&f->g, &f->units[i], &v);
        /* The same at its index, and when the index names another unit. */
        latency_guard_view_at(&f->g, &f->units[i], i, &at);
        latency_guard_view_at(&f->g, &f->units[i], (i + 1) % 3, &off);
        assert_int_equal(at.samples, v.samples);
        assert_int_equal(off.samples, v.samples);
        assert_int_equal(at.level, v.level);
        assert_int_equal(off.level, v.level);
        return v.samples;
}

static uint64_t guarantee(struct fixture *f, size_t i) {
        struct latency_view v;

        latency_guard_view(&f->g, &f->units[i], &v);
        return v.guarantee;
}

/* Each unit's CPU use as its cpu.stat says (µs). */
static void put_usage(struct fixture *f, size_t i, uint64_t usec) {
        char p[128], v[128];

        snprintf(p, sizeof(p), "unified/%s/cpu.stat", NAMES[i]);
        snprintf(v, sizeof(v), "usage_usec %llu\nuser_usec 0\nsystem_usec 0\n", (unsigned long long) usec);
        tmptree_put(f->dir, p, v);
}

/* One pass with what the daemon logs (stderr) caught in buf. */
static void tick_logged(struct fixture *f, Unit **table, size_t n, uint64_t now, char *buf, size_t size) {
        FILE *tmp = tmpfile();
        int saved = dup(STDERR_FILENO);
        size_t got;

        assert_non_null(tmp);
        assert_true(saved >= 0);
        fflush(stderr);
        assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
        latency_guard_tick(&f->g, table, n, now);
        fflush(stderr);
        assert_true(dup2(saved, STDERR_FILENO) >= 0);
        close(saved);
        rewind(tmp);
        got = fread(buf, 1, size - 1, tmp);
        buf[got] = 0;
        fclose(tmp);
}

/* ---- the cases --------------------------------------------------------- */

static void test_unseen_unit(void **state) {
        struct fixture *f = *state;
        struct latency_view v;

        latency_guard_view(&f->g, &f->units[0], &v);
        assert_int_equal(v.guarantee, 0);
        assert_int_equal(v.level, BW_LAT_NONE);
        assert_false(v.has_p99);
        assert_int_equal(v.samples, 0);
        assert_string_equal(v.note, "");
}

static void test_each_unit_its_own(void **state) {
        struct fixture *f = *state;
        Unit *t[] = { &f->units[0], &f->units[1] };
        struct latency_view v;

        latency_guard_tick(&f->g, t, 2, 1000000);
        assert_false(f->g.idle);
        assert_int_equal(guarantee(f, 0), 100000);
        assert_int_equal(guarantee(f, 1), 200000);
        assert_int_equal(guarantee(f, 2), 0);           /* not in the table */
        latency_guard_view(&f->g, &f->units[1], &v);
        assert_int_equal(v.level, BW_LAT_NONE);
        assert_non_null(strstr(v.note, "LatencyTarget="));
}

static void test_table_changes(void **state) {
        struct fixture *f = *state;
        Unit *ab[] = { &f->units[0], &f->units[1] };
        Unit *cb[] = { &f->units[2], &f->units[1] };
        Unit *b[] = { &f->units[1] };

        /* The first pass opens each window (cpu.pressure: no telemetry). */
        latency_guard_tick(&f->g, ab, 2, 1000000);
        assert_int_equal(samples(f, 1), 0);
        /* a left, c came in front of b: b keeps its window (a sample a
         * window later), c starts one. */
        latency_guard_tick(&f->g, cb, 2, 1000000 + LATENCY_WINDOW_USEC);
        assert_int_equal(guarantee(f, 2), 300000);
        assert_int_equal(guarantee(f, 1), 200000);
        assert_int_equal(samples(f, 1), 1);
        assert_int_equal(samples(f, 2), 0);
        assert_int_equal(guarantee(f, 0), 0);           /* forgotten with the table */
        latency_guard_tick(&f->g, b, 1, 1000000 + 2 * LATENCY_WINDOW_USEC);
        assert_int_equal(guarantee(f, 1), 200000);
        assert_int_equal(samples(f, 1), 2);
        assert_int_equal(guarantee(f, 2), 0);
}

static void test_leaving_forgets(void **state) {
        struct fixture *f = *state;
        Unit *ab[] = { &f->units[0], &f->units[1] };
        struct latency_view v;

        latency_guard_tick(&f->g, ab, 2, 1000000);
        latency_guard_unit_leaving(&f->g, &f->units[0]);
        latency_guard_view(&f->g, &f->units[0], &v);
        assert_int_equal(v.guarantee, 0);
        assert_string_equal(v.note, "");
        assert_int_equal(guarantee(f, 1), 200000);
        /* Not a member: nothing happens. */
        latency_guard_unit_leaving(&f->g, &f->units[2]);
        latency_guard_cgroup_closed(&f->g, &f->units[2]);
        assert_int_equal(guarantee(f, 1), 200000);
}

/* A closed cgroup's window is not carried over to the cgroup found again. */
static void test_closed_cgroup_new_window(void **state) {
        struct fixture *f = *state;
        Unit *a[] = { &f->units[0] };

        latency_guard_tick(&f->g, a, 1, 1000000);
        latency_guard_cgroup_closed(&f->g, &f->units[0]);
        latency_guard_tick(&f->g, a, 1, 1000000 + LATENCY_WINDOW_USEC);
        assert_int_equal(samples(f, 0), 0);             /* opened again, not sampled */
        latency_guard_tick(&f->g, a, 1, 1000000 + 2 * LATENCY_WINDOW_USEC);
        assert_int_equal(samples(f, 0), 1);
}

/* A hold left over with no latency unit is let go through the unit's
 * setter, and nothing else is asked of it. */
static void test_hold_let_go(void **state) {
        struct fixture *f = *state;
        Unit *ab[] = { &f->units[0], &f->units[1] };

        f->cfgs[0].class = BW_CLASS_THROUGHPUT;
        f->cfgs[1].class = BW_CLASS_THROUGHPUT;
        f->units[0].caps.latency_hold = true;                /* as the unit module would hold it */
        cap_calls = 0;
        cap_last = 1;
        latency_guard_tick(&f->g, ab, 2, 1000000);
        assert_int_equal(cap_calls, 1);
        assert_int_equal(cap_last, 0);
        assert_false(f->g.idle);                        /* it let something go */
}

static void test_throughput_unit_idle(void **state) {
        struct fixture *f = *state;
        Unit *a[] = { &f->units[0] };

        f->cfgs[0].class = BW_CLASS_THROUGHPUT;
        latency_guard_tick(&f->g, a, 1, 1000000);
        assert_true(f->g.idle);                         /* no latency unit, nothing held */
        assert_int_equal(guarantee(f, 0), 0);
}

/* No latency unit and nothing held: the second pass keeps no members (240
 * bytes a unit at ten thousand); a unit made Class=latency (a reload, which
 * clears idle) has its member again, and while one is configured, paused
 * or not, the members stay. */
static void test_no_members_without_latency(void **state) {
        struct fixture *f = *state;
        Unit *ab[] = { &f->units[0], &f->units[1] };

        f->cfgs[0].class = BW_CLASS_THROUGHPUT;
        f->cfgs[1].class = BW_CLASS_BEST_EFFORT;
        latency_guard_tick(&f->g, ab, 2, 1000000);
        assert_true(f->g.idle);
        assert_int_equal(f->g.n_members, 2);
        latency_guard_tick(&f->g, ab, 2, 2000000);
        assert_true(f->g.idle);
        assert_int_equal(f->g.n_members, 0);
        assert_null(f->g.members);
        assert_int_equal(guarantee(f, 0), 0);

        f->cfgs[0].class = BW_CLASS_LATENCY;
        f->g.idle = false;
        latency_guard_tick(&f->g, ab, 2, 3000000);
        assert_int_equal(f->g.n_members, 2);
        assert_int_equal(guarantee(f, 0), 100000);

        /* Paused: not governed, so no latency unit counts; still members. */
        f->units[0].paused = true;
        for (int i = 0; i < 3; i++)
                latency_guard_tick(&f->g, ab, 2, 4000000 + i * 1000000);
        assert_int_equal(f->g.n_members, 2);
}

/* a (latency) on its top rung, idle, because b (throughput) and c
 * (best-effort) fill the host; c leaves: "idle" is no rung any more and a
 * comes down to the one below, which the journal says as such (not as a
 * release, nor as targets met). */
static void test_rung_gone(void **state) {
        struct fixture *f = *state;
        Unit *abc[] = { &f->units[0], &f->units[1], &f->units[2] };
        struct latency_view v;
        char log[4096];

        f->cfgs[1].class = BW_CLASS_THROUGHPUT;
        f->cfgs[2].class = BW_CLASS_BEST_EFFORT;
        for (size_t i = 0; i < 3; i++)
                put_usage(f, i, 1000);
        latency_guard_tick(&f->g, abc, 3, 1000000);
        put_usage(f, 1, 1000 + 190000);
        put_usage(f, 2, 1000 + 100000);
        tick_logged(f, abc, 3, 1100000, log, sizeof(log));
        assert_non_null(strstr(log, "a.service: neighbours' runnable demand 2.90 CPUs fills the host: "
                                    "protection up to \"idle\" at once"));
        latency_guard_view(&f->g, &f->units[0], &v);
        assert_int_equal(v.level, BW_LAT_IDLE);

        put_usage(f, 1, 1000 + 2 * 190000);
        tick_logged(f, abc, 2, 1200000, log, sizeof(log));
        assert_non_null(strstr(log, "a.service: rung \"idle\" no longer exists here: protection down to "
                                    "\"weight-high\""));
        assert_null(strstr(log, "within LatencyTarget="));
        assert_null(strstr(log, "protection down to \"none\""));
        latency_guard_view(&f->g, &f->units[0], &v);
        assert_int_equal(v.level, BW_LAT_WEIGHT_HIGH);
        assert_int_equal(v.changes, 2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_unseen_unit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_each_unit_its_own, setup, teardown),
                cmocka_unit_test_setup_teardown(test_table_changes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_leaving_forgets, setup, teardown),
                cmocka_unit_test_setup_teardown(test_closed_cgroup_new_window, setup, teardown),
                cmocka_unit_test_setup_teardown(test_hold_let_go, setup, teardown),
                cmocka_unit_test_setup_teardown(test_throughput_unit_idle, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rung_gone, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_members_without_latency, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
