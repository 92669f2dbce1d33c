/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The latency guard's timing (latency-guard.h): a pass from the host timer
 * every ActiveInterval= while the guard is idle, its own fast timer every
 * LATENCY_FAST_USEC while it has a latency unit or holds something. */
#include <systemd/sd-event.h>

#include "clock.h"
#include "guard/latency-guard.h"
#include "log.h"
#include "manager-types.h"
#include "manager-latency.h"

/* The latency guard's fast timer: every LATENCY_FAST_USEC while it has a
 * latency unit or holds something, off when it went idle (the host timer
 * looks again every ActiveInterval=). */
static bool manager_latency_fast(const Manager *m) {
        int on = SD_EVENT_OFF;

        return m->latency_timer && sd_event_source_get_enabled(m->latency_timer, &on) >= 0 && on != SD_EVENT_OFF;
}

static int on_latency_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (m->stopping)
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        log_repeat_begin();
        latency_guard_tick(&m->latency, m->units, m->n_units, usec);
        log_repeat_end();
        m->latency_generation = m->units_generation;
        if (m->latency.idle)
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        (void) sd_event_source_set_time(s, usec + LATENCY_FAST_USEC);
        return sd_event_source_set_enabled(s, SD_EVENT_ON);
}

static void manager_latency_fast_start(Manager *m, uint64_t now) {
        int r;

        if (!m->latency_timer)
                r = sd_event_add_time(m->event, &m->latency_timer, CLOCK_MONOTONIC, now + LATENCY_FAST_USEC,
                                      timer_accuracy_usec(LATENCY_FAST_USEC), on_latency_timer, m);
        else {
                r = sd_event_source_set_time(m->latency_timer, now + LATENCY_FAST_USEC);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->latency_timer, SD_EVENT_ON);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to start the latency guard's timer, it follows ActiveInterval=: %s",
                                  STRERROR(r));
}

void manager_latency_pass(Manager *m, uint64_t usec) {
        /* No latency unit and nothing held, and no cgroup came or went nor
         * a reload since: the pass over every unit would find the same.
         * While there is one, the guard has its fast timer. */
        if (manager_latency_fast(m) || (m->latency.idle && m->latency_generation == m->units_generation))
                return;
        latency_guard_tick(&m->latency, m->units, m->n_units, usec);
        m->latency_generation = m->units_generation;
        if (!m->latency.idle)
                manager_latency_fast_start(m, usec);
}
