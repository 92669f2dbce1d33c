/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The units' one timer (see ticker.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "bwgov/util/util.h"
#include "log.h"
#include "ticker.h"

struct Ticker {
        sd_event *event;
        sd_event_source *timer;
        struct bw_tickheap heap;
        ticker_fn fn;
        void *userdata;
        bool dispatching;               /* re-armed once when the batch is done */
        bool backlog;                   /* at TICKER_BACKLOG_PRIORITY */
        uint64_t armed_usec;            /* the timer's time, 0 while off */
};

static int on_ticker_timer(sd_event_source *s, uint64_t usec, void *userdata);

int ticker_new(sd_event *event, ticker_fn fn, void *userdata, Ticker **ret) {
        Ticker *t = calloc(1, sizeof(*t));
        int r;

        if (!t)
                return -ENOMEM;
        t->event = sd_event_ref(event);
        t->fn = fn;
        t->userdata = userdata;
        r = sd_event_add_time(event, &t->timer, CLOCK_MONOTONIC, UINT64_MAX, USEC_PER_MSEC, on_ticker_timer, t);
        if (r < 0) {
                ticker_free(t);
                return r;
        }
        (void) sd_event_source_set_enabled(t->timer, SD_EVENT_OFF);
        *ret = t;
        return 0;
}

Ticker *ticker_free(Ticker *t) {
        if (!t)
                return NULL;
        sd_event_source_disable_unref(t->timer);
        bw_tickheap_done(&t->heap);
        sd_event_unref(t->event);
        free(t);
        return NULL;
}

/* The timer for the earliest entry, or off. */
static void ticker_arm(Ticker *t) {
        const struct bw_tick_entry *e = bw_tickheap_peek(&t->heap);
        int r;

        if (!e) {
                if (t->armed_usec != 0)
                        (void) sd_event_source_set_enabled(t->timer, SD_EVENT_OFF);
                t->armed_usec = 0;
                return;
        }
        if (t->armed_usec == u64_max(e->due_usec, 1))
                return;
        r = sd_event_source_set_time(t->timer, u64_max(e->due_usec, 1));
        if (r >= 0 && t->armed_usec == 0)
                r = sd_event_source_set_enabled(t->timer, SD_EVENT_ON);
        if (r < 0) {
                log_error_errno(r, "Failed to arm the units' timer: %s", STRERROR(r));
                return;
        }
        t->armed_usec = u64_max(e->due_usec, 1);
}

static void ticker_set_backlog(Ticker *t, bool backlog) {
        int r;

        if (t->backlog == backlog)
                return;
        r = sd_event_source_set_priority(t->timer, backlog ? TICKER_BACKLOG_PRIORITY : SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                log_warning_errno(r, "Failed to set the units' timer's priority: %s", STRERROR(r));
        else
                t->backlog = backlog;
}

static int on_ticker_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct bw_tick_entry *due[TICKER_BATCH];
        Ticker *t = userdata;
        uint64_t now;
        size_t n = 0;

        (void) sd_event_now(t->event, CLOCK_MONOTONIC, &now);
        while (n < TICKER_BATCH) {
                struct bw_tick_entry *e = bw_tickheap_pop_due(&t->heap, now + TICKER_EARLY_USEC);
                if (!e)
                        break;
                due[n++] = e;
        }
        t->dispatching = true;
        if (n > 0)
                t->fn(due, n, now, t->userdata);
        t->dispatching = false;
        /* More due: run again after whatever else is pending (the timer is
         * marked pending anew, behind the sources already pending), the
         * varlink clients included. */
        t->armed_usec = 1;      /* force a re-arm: the timer fired */
        ticker_arm(t);
        ticker_set_backlog(t, bw_tickheap_peek(&t->heap) &&
                              bw_tickheap_peek(&t->heap)->due_usec <= now + TICKER_EARLY_USEC);
        return 0;
}

int ticker_schedule(Ticker *t, struct bw_tick_entry *e, uint64_t due_usec) {
        int r = bw_tickheap_put(&t->heap, e, due_usec);

        if (r < 0)
                return log_error_errno(r, "Failed to schedule a sample: %s", STRERROR(r));
        if (!t->dispatching && (t->armed_usec == 0 || due_usec < t->armed_usec))
                ticker_arm(t);
        return 0;
}

void ticker_cancel(Ticker *t, struct bw_tick_entry *e) {
        bw_tickheap_remove(&t->heap, e);
        if (!t->dispatching && !bw_tickheap_peek(&t->heap))
                ticker_arm(t);
}

size_t ticker_size(const Ticker *t) {
        return t->heap.n;
}
