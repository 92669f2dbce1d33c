/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The units' ticker (src/daemon/source/ticker.c) on a real sd-event loop: a unit
 * rescheduled one interval after it was due, as unit_on_due() does, keeps
 * that interval (issue 17, finding 6: Interval=1s ticked every 1.25 s, the
 * timer's default accuracy of 250 ms and a re-arm from when it fired), and
 * ticker_next_due() keeps a rhythm or takes up one on the grid. The clock is
 * the real one: sd-event takes no other. No root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <time.h>

#include "bwgov/util/macro.h"
#include "source/ticker.h"

#define INTERVAL_USEC (20 * USEC_PER_MSEC)
#define TICKS 50

struct run {
        Ticker *ticker;
        sd_event *event;
        struct bw_tick_entry entry;
        uint64_t at_usec[TICKS], lateness_usec[TICKS];
        unsigned n;
};

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static void on_due(struct bw_tick_entry *const *due, size_t n, uint64_t now, void *userdata) {
        struct run *r = userdata;
        uint64_t t = now_usec();

        assert_int_equal(n, 1);
        assert_ptr_equal(due[0], &r->entry);
        r->at_usec[r->n] = t;
        r->lateness_usec[r->n] = t > due[0]->due_usec ? t - due[0]->due_usec : 0;
        if (++r->n == TICKS) {
                (void) sd_event_exit(r->event, 0);
                return;
        }
        /* unit_on_due(): one interval after it was due, not after now
         * (ticker_next_due() on time; its re-phasing is test_next_due's). */
        assert_int_equal(ticker_schedule(r->ticker, &r->entry, due[0]->due_usec + INTERVAL_USEC), 0);
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

static void test_rhythm(void **state) {
        struct run r = { 0 };
        uint64_t start, period, median;

        assert_int_equal(sd_event_new(&r.event), 0);
        assert_int_equal(ticker_new(r.event, on_due, &r, &r.ticker), 0);
        start = now_usec() + INTERVAL_USEC;
        assert_int_equal(ticker_schedule(r.ticker, &r.entry, start), 0);
        assert_int_equal(sd_event_loop(r.event), 0);
        assert_int_equal(r.n, TICKS);

        /* The period over the run is the interval: within 5 %, which a
         * drift (the 1.25 s of finding 6 is 25 %) never is, and which a late
         * first or last wake-up of a loaded machine (up to 49 ms over the 49
         * periods) does not fail; the 1 % this checked before failed once on
         * the development machine at a load average of 9. */
        period = (r.at_usec[TICKS - 1] - r.at_usec[0]) / (TICKS - 1);
        assert_true(period >= INTERVAL_USEC * 95 / 100);
        assert_true(period <= INTERVAL_USEC * 105 / 100);
        /* Each tick comes when it is due: the timer's accuracy (1 ms) and
         * the process's timer slack, not sd-event's default 250 ms. The
         * median, so that a busy machine's odd late wake-up does not fail
         * it. */
        qsort(r.lateness_usec, TICKS, sizeof(uint64_t), cmp_u64);
        median = r.lateness_usec[TICKS / 2];
        assert_true(median < 2 * USEC_PER_MSEC);

        ticker_free(r.ticker);
        sd_event_unref(r.event);
}

#define MS USEC_PER_MSEC

/* ticker_next_due(), what unit_on_due() schedules with (a 50 ms grid). */
static void test_next_due(void **state) {
        uint64_t first;

        /* On time or late by less than an interval: the rhythm is kept,
         * whatever the lateness. */
        assert_int_equal(ticker_next_due(1000 * MS, 1000 * MS, 1000 * MS, 50 * MS), 2000 * MS);
        assert_int_equal(ticker_next_due(1000 * MS + 17, 1003 * MS, 1000 * MS, 50 * MS), 2000 * MS + 17);
        assert_int_equal(ticker_next_due(1000 * MS + 17, 1999 * MS, 1000 * MS, 50 * MS), 2000 * MS + 17);
        /* Late by an interval or more: from the grid point at or before now,
         * still ahead of now. */
        assert_int_equal(ticker_next_due(1000 * MS, 2000 * MS, 1000 * MS, 50 * MS), 3000 * MS);
        assert_int_equal(ticker_next_due(1000 * MS, 2130 * MS, 1000 * MS, 50 * MS), 3100 * MS);
        assert_int_equal(ticker_next_due(1000 * MS + 17, 5049 * MS, 1000 * MS, 50 * MS), 6000 * MS);
        /* At the shortest Interval= (100 ms, twice the grid) too. */
        assert_true(ticker_next_due(0, 149 * MS, 100 * MS, 50 * MS) > 149 * MS);
        /* Entries of many phases that all lost their rhythm in one grid
         * step share one due time: one wake-up instead of one each. */
        first = ticker_next_due(0, 3000 * MS + 1, 1000 * MS, 50 * MS);
        for (uint64_t phase = 1; phase < 1000 * MS; phase += 7919)
                assert_int_equal(ticker_next_due(phase, 3000 * MS + 1 + phase % (49 * MS), 1000 * MS, 50 * MS),
                                 first);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_next_due),
                cmocka_unit_test(test_rhythm),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
