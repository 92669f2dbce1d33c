/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * looptime.so: an LD_PRELOAD shim for the overhead benchmark that measures
 * how long an event loop stays busy after each wake-up, without ptrace.
 *
 * It wraps epoll_wait(2)/epoll_pwait(2). A call with a timeout other than 0
 * may block: it ends a busy period and its return, when it brings events,
 * starts the next one. Calls with timeout 0 (sd-event polls once between
 * dispatches while sources are pending) stay inside the busy period, so a
 * busy period is all the work done for one wake-up. Busy periods that
 * started after LOOPTIME_SKIP_MS are kept in memory (at most 1 << 20) and
 * written at exit to $LOOPTIME_OUT as text: one line "wakeups N", then one
 * busy period in nanoseconds per line, each preceded by the CLOCK_MONOTONIC
 * time of the wake-up in ns.
 *
 * Built by overhead.py with the system compiler; not part of the project's
 * build and never installed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>

#define MAX_SAMPLES (1u << 20)

static uint64_t samples_at[MAX_SAMPLES];
static uint64_t samples_ns[MAX_SAMPLES];
static unsigned n_samples;
static uint64_t wakeups;
static uint64_t last_return_ns;
static int last_had_events;
static uint64_t skip_until_ns;

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void note_call(int timeout) {
        uint64_t t;

        if (timeout == 0)
                return;
        t = now_ns();

        if (skip_until_ns == 0) {
                const char *s = getenv("LOOPTIME_SKIP_MS");
                skip_until_ns = t + (s ? strtoull(s, NULL, 10) : 0) * 1000000u + 1;
        }
        if (last_had_events && last_return_ns >= skip_until_ns && n_samples < MAX_SAMPLES) {
                samples_at[n_samples] = last_return_ns;
                samples_ns[n_samples++] = t - last_return_ns;
        }
}

static void note_return(int timeout, int r) {
        if (timeout == 0)
                return;
        last_return_ns = now_ns();
        last_had_events = r > 0;
        if (r > 0 && last_return_ns >= skip_until_ns)
                wakeups++;
}

int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout) {
        static int (*real)(int, struct epoll_event *, int, int);
        int r;

        if (!real)
                *(void **) &real = dlsym(RTLD_NEXT, "epoll_wait");     /* POSIX's idiom for function pointers */
        note_call(timeout);
        r = real(epfd, events, maxevents, timeout);
        note_return(timeout, r);
        return r;
}

int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout, const sigset_t *sigmask) {
        static int (*real)(int, struct epoll_event *, int, int, const sigset_t *);
        int r;

        if (!real)
                *(void **) &real = dlsym(RTLD_NEXT, "epoll_pwait");
        note_call(timeout);
        r = real(epfd, events, maxevents, timeout, sigmask);
        note_return(timeout, r);
        return r;
}

__attribute__((destructor)) static void looptime_dump(void) {
        const char *out = getenv("LOOPTIME_OUT");
        FILE *f;

        if (!out)
                return;
        f = fopen(out, "we");
        if (!f)
                return;
        fprintf(f, "wakeups %llu\n", (unsigned long long) wakeups);
        for (unsigned i = 0; i < n_samples; i++)
                fprintf(f, "%llu %llu\n", (unsigned long long) samples_at[i], (unsigned long long) samples_ns[i]);
        fclose(f);
}
