/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's run-queue telemetry (src/daemon/unit/unit-rqstat.c) against a fake
 * Rqstat (the functions of source/rqstat-bpf.h it calls, defined here instead of
 * the libbpf-backed ones): no memory for the counters while the cgroup's are
 * all zero, yet the snapshot's zeros and windows as if there were; the
 * window taken from the last zero sample once something is counted; a reset
 * of the counters (maps loaded again) opens no window; detach frees (the
 * ASan run finds a leak). No root, no BPF. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "unit/unit-rqstat.h"

#define MS USEC_PER_MSEC

/* ---- the fake: one cgroup, counters the test sets ------------------------ */

static struct {
        uint64_t tracked;               /* the id tracked, 0 for none */
        unsigned tracks, untracks;
        uint64_t watched;               /* the cpu cgroup id watched, 0 for none */
        unsigned watches, unwatches;
        struct bw_rq_counters counters;
        int read_error;
} fake;

int rqstat_cgroup_id(int dirfd, uint64_t *ret) {
        if (dirfd < 0)
                return -EBADF;
        *ret = 4242;
        return 0;
}

int rqstat_track(Rqstat *t, uint64_t cgroup_id) {
        (void) t;
        fake.tracked = cgroup_id;
        fake.tracks++;
        return 0;
}

int rqstat_untrack(Rqstat *t, uint64_t cgroup_id) {
        (void) t;
        assert_int_equal(cgroup_id, fake.tracked);
        fake.tracked = 0;
        fake.untracks++;
        return 0;
}

int rqstat_read(Rqstat *t, uint64_t cgroup_id, struct bw_rq_counters *ret) {
        (void) t;
        assert_int_equal(cgroup_id, fake.tracked);
        if (fake.read_error)
                return fake.read_error;
        *ret = fake.counters;
        return 0;
}

int rqstat_watch(Rqstat *t, uint64_t cpu_cgroup_id, void *owner, uint32_t *ret_slot) {
        (void) t;
        assert_int_equal(fake.watched, 0);
        fake.watched = cpu_cgroup_id;
        fake.watches++;
        *ret_slot = 7;
        return 0;
}

int rqstat_unwatch(Rqstat *t, uint32_t slot) {
        (void) t;
        assert_int_equal(slot, 7);
        assert_int_not_equal(fake.watched, 0);
        fake.watched = 0;
        fake.unwatches++;
        return 0;
}

/* Never dereferenced by unit-rqstat.c: only passed back to the fake. */
static Rqstat *const T = (Rqstat *) &fake;

static int setup(void **state) {
        (void) state;
        memset(&fake, 0, sizeof(fake));
        return 0;
}

/* n waits of about 2^slot µs, one of them long enough to be the p99. */
static void add_waits(unsigned slot, uint64_t n) {
        fake.counters.wait_slots[slot] += n;
        fake.counters.wakeups += n;
        fake.counters.wait_ns += n * (UINT64_C(1) << slot) * 1000;
        if (fake.counters.wait_max_ns < (UINT64_C(1) << (slot + 1)) * 1000 - 1)
                fake.counters.wait_max_ns = (UINT64_C(1) << (slot + 1)) * 1000 - 1;
}

static void test_idle_has_no_counters(void **state) {
        struct unit_rqstat ut = {0};
        struct bw_policy_input in;
        const struct unit_rqstat_counts *c;

        (void) state;
        assert_int_equal(unit_rqstat_attach(&ut, T, 3, 99, NULL), 0);
        assert_int_equal(ut.cgroup_id, 4242);
        assert_int_equal(fake.tracks, 1);
        /* Attached, not sampled: nothing to show yet. */
        assert_null(unit_rqstat_counts(&ut));

        in.has_rq = true;
        assert_int_equal(unit_rqstat_sample(&ut, T, 1000 * MS, &in), 0);
        assert_false(in.has_rq);
        assert_null(ut.c);
        c = unit_rqstat_counts(&ut);
        assert_non_null(c);
        assert_true(c->has_last);
        assert_int_equal(c->last_usec, 1000 * MS);
        assert_false(c->has_window);
        assert_int_equal(c->last.wakeups, 0);

        /* Many zero samples: still no memory, and the window is the latest
         * interval, all zeros. */
        for (uint64_t t = 2000; t <= 5000; t += 1000)
                assert_int_equal(unit_rqstat_sample(&ut, T, t * MS, &in), 0);
        assert_int_equal(unit_rqstat_sample(&ut, T, 5250 * MS, &in), 0);
        assert_false(in.has_rq);
        assert_null(ut.c);
        c = unit_rqstat_counts(&ut);
        assert_true(c->has_window);
        assert_int_equal(c->window_usec, 250 * MS);
        assert_int_equal(c->last_usec, 5250 * MS);
        assert_int_equal(c->window.wait_ns, 0);

        unit_rqstat_detach(&ut, T);
        assert_int_equal(fake.untracks, 1);
        assert_int_equal(ut.cgroup_id, 0);
        assert_null(unit_rqstat_counts(&ut));
}

static void test_first_waits_open_a_window(void **state) {
        struct unit_rqstat ut = {0};
        struct bw_policy_input in;
        const struct unit_rqstat_counts *c;

        (void) state;
        assert_int_equal(unit_rqstat_attach(&ut, T, 3, 99, NULL), 0);
        assert_int_equal(unit_rqstat_sample(&ut, T, 1000 * MS, &in), 0);
        assert_null(ut.c);

        /* Waits counted: the counters are allocated, and the window runs
         * from the last zero sample, so the law sees them at once. 99 short
         * waits and one of ~4 ms: the p99 is the short ones' bucket bound. */
        add_waits(3, 99);
        add_waits(12, 1);
        fake.counters.throttled_wait_ns = fake.counters.wait_ns / 4;
        assert_int_equal(unit_rqstat_sample(&ut, T, 2000 * MS, &in), 0);
        assert_non_null(ut.c);
        c = unit_rqstat_counts(&ut);
        assert_ptr_equal(c, ut.c);
        assert_true(c->has_window);
        assert_int_equal(c->window_usec, 1000 * MS);
        assert_int_equal(c->window.wakeups, 100);
        assert_true(in.has_rq);
        assert_int_equal(in.rq_wait_p99_usec, 16);
        assert_int_equal(in.rq_throttled_permille, 250);

        /* The next window holds only what came since. */
        add_waits(12, 50);
        assert_int_equal(unit_rqstat_sample(&ut, T, 3000 * MS, &in), 0);
        assert_int_equal(ut.c->window.wakeups, 50);
        assert_int_equal(ut.c->window_usec, 1000 * MS);
        assert_true(in.has_rq);
        assert_true(in.rq_wait_p99_usec >= 4096 && in.rq_wait_p99_usec <= 8192);

        /* Nothing new: an empty window, no figures for the law. */
        assert_int_equal(unit_rqstat_sample(&ut, T, 4000 * MS, &in), 0);
        assert_true(ut.c->has_window);
        assert_false(in.has_rq);

        unit_rqstat_detach(&ut, T);          /* frees ut.c: ASan checks */
        assert_null(ut.c);
}

static void test_reset_opens_no_window(void **state) {
        struct unit_rqstat ut = {0};
        struct bw_policy_input in;
        uint64_t since;

        (void) state;
        assert_int_equal(unit_rqstat_attach(&ut, T, 3, 99, NULL), 0);
        add_waits(5, 1000);
        assert_int_equal(unit_rqstat_sample(&ut, T, 1000 * MS, &in), 0);
        add_waits(5, 10);
        assert_int_equal(unit_rqstat_sample(&ut, T, 2000 * MS, &in), 0);
        assert_true(in.has_rq);
        since = ut.since_realtime_usec;

        /* The maps were loaded again: counters start from nothing. The
         * difference would be negative; no window, counting since now. */
        memset(&fake.counters, 0, sizeof(fake.counters));
        add_waits(5, 3);
        assert_int_equal(unit_rqstat_sample(&ut, T, 3000 * MS, &in), 0);
        assert_false(ut.c->has_window);
        assert_false(in.has_rq);
        assert_true(ut.since_realtime_usec >= since);
        /* From there on, windows again. */
        add_waits(5, 7);
        assert_int_equal(unit_rqstat_sample(&ut, T, 4000 * MS, &in), 0);
        assert_true(ut.c->has_window);
        assert_int_equal(ut.c->window.wakeups, 7);
        assert_true(in.has_rq);

        unit_rqstat_detach(&ut, T);
}

static void test_without_telemetry_or_read_error(void **state) {
        struct unit_rqstat ut = {0};
        struct bw_policy_input in = { .has_rq = true };

        (void) state;
        /* No Rqstat (BPF not available): nothing tracked, nothing read. */
        assert_int_equal(unit_rqstat_attach(&ut, NULL, 3, 99, NULL), 0);
        assert_int_equal(ut.cgroup_id, 0);
        assert_int_equal(unit_rqstat_sample(&ut, NULL, 1000 * MS, &in), 0);
        assert_false(in.has_rq);
        assert_null(unit_rqstat_counts(&ut));
        unit_rqstat_detach(&ut, NULL);

        /* No cgroup2 directory: the id cannot be had. */
        assert_int_equal(unit_rqstat_attach(&ut, T, -1, 99, NULL), -EBADF);
        assert_int_equal(fake.tracks, 0);
        assert_int_equal(fake.watches, 0);
        assert_false(ut.act_watched);

        /* A failed read is the caller's to log; the state stays as it was. */
        assert_int_equal(unit_rqstat_attach(&ut, T, 3, 99, NULL), 0);
        fake.read_error = -EIO;
        assert_int_equal(unit_rqstat_sample(&ut, T, 1000 * MS, &in), -EIO);
        assert_null(ut.c);
        assert_null(unit_rqstat_counts(&ut));
        unit_rqstat_detach(&ut, T);
}

/* The activity slot is the cpu directory's, handed back on detach, once. */
static void test_activity_watched_while_attached(void **state) {
        struct unit_rqstat ut = {0};

        (void) state;
        assert_int_equal(unit_rqstat_attach(&ut, T, 3, 99, NULL), 0);
        assert_true(ut.act_watched);
        assert_int_equal(ut.act_slot, 7);
        assert_int_equal(fake.watched, 99);
        /* Attached already: nothing watched twice. */
        assert_int_equal(unit_rqstat_attach(&ut, T, 3, 99, NULL), 0);
        assert_int_equal(fake.watches, 1);
        unit_rqstat_detach(&ut, T);
        assert_false(ut.act_watched);
        assert_int_equal(fake.watched, 0);
        assert_int_equal(fake.unwatches, 1);
        unit_rqstat_detach(&ut, T);
        assert_int_equal(fake.unwatches, 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_idle_has_no_counters, setup),
                cmocka_unit_test_setup(test_first_waits_open_a_window, setup),
                cmocka_unit_test_setup(test_reset_opens_no_window, setup),
                cmocka_unit_test_setup(test_without_telemetry_or_read_error, setup),
                cmocka_unit_test_setup(test_activity_watched_while_attached, setup),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
