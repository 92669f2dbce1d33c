/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl latency's text from a GetLatency reply: the waits since the
 * cgroup was first counted and over the last sample interval, their
 * percentiles, the throttled part, and the log2 histograms as bars. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bwgov/util/macro.h"
#include "bwgov/util/util.h"
#include "format.h"
#include "rqstat-render.h"
#include "reply.h"
#include "table.h"

/* "2024-05-01 12:00:00" and its NUL. */
#define TIMESTAMP_MAX 64
/* A uint64_t in decimal, "inf", and a NUL. */
#define NUMBER_MAX 24

/* The decimal width of v. */
static int digits(uint64_t v) {
        int n = 1;

        while (v >= 10) {
                v /= 10;
                n++;
        }
        return n;
}

/* A bucket's upper end: its number, or "inf" for the last (null). */
static void fmt_upper(char buf[static NUMBER_MAX], json_t *b) {
        if (jhas(b, "upper_usec"))
                snprintf(buf, NUMBER_MAX, "%" PRIu64, ju64(b, "upper_usec"));
        else
                snprintf(buf, NUMBER_MAX, "inf");
}

size_t rqstat_print_histogram(FILE *f, json_t *buckets, const char *indent) {
        size_t n = json_array_size(buckets), first = n, last = 0;
        uint64_t max = 0;
        int lo_w = 1, hi_w = 1, count_w = (int) strlen("count");
        char hi[NUMBER_MAX], bar[LATENCY_BAR_WIDTH + 1];

        for (size_t i = 0; i < n; i++) {
                json_t *b = json_array_get(buckets, i);
                uint64_t c = ju64(b, "count");

                if (c == 0)
                        continue;
                if (first == n)
                        first = i;
                last = i;
                if (c > max)
                        max = c;
        }
        if (first == n)
                return 0;

        /* Column widths over the lines printed. */
        for (size_t i = first; i <= last; i++) {
                json_t *b = json_array_get(buckets, i);

                fmt_upper(hi, b);
                if (digits(ju64(b, "lower_usec")) > lo_w)
                        lo_w = digits(ju64(b, "lower_usec"));
                if ((int) strlen(hi) > hi_w)
                        hi_w = (int) strlen(hi);
                if (digits(ju64(b, "count")) > count_w)
                        count_w = digits(ju64(b, "count"));
        }

        fprintf(f, "%s%*s : %*s  distribution\n", indent, lo_w + 3 + hi_w, "usecs", count_w, "count");
        for (size_t i = first; i <= last; i++) {
                json_t *b = json_array_get(buckets, i);
                uint64_t c = ju64(b, "count");
                size_t w = (size_t) u64_muldiv(c, LATENCY_BAR_WIDTH, max);     /* c <= max: at most the width */

                if (w > LATENCY_BAR_WIDTH)      /* said for the compiler, which cannot see it */
                        w = LATENCY_BAR_WIDTH;
                memset(bar, '#', w);
                memset(bar + w, ' ', LATENCY_BAR_WIDTH - w);
                bar[LATENCY_BAR_WIDTH] = '\0';
                fmt_upper(hi, b);
                fprintf(f, "%s%*" PRIu64 " - %-*s : %*" PRIu64 " |%s|\n", indent, lo_w, ju64(b, "lower_usec"),
                        hi_w, hi, count_w, c, bar);
        }
        return last - first + 1;
}

/* "p50 48us, p90 256us, p99 4.1ms, p99.9 8.2ms". */
static void print_percentiles(FILE *f, json_t *fig) {
        static const struct {
                const char *name, *key;
        } ps[] = {
                { "p50", "p50_usec" }, { "p90", "p90_usec" }, { "p99", "p99_usec" }, { "p99.9", "p999_usec" },
        };
        char a[FMT_MAX];

        fprintf(f, LABEL, "Percentiles:");
        for (size_t i = 0; i < ELEMENTSOF(ps); i++)
                fprintf(f, "%s%s %s", i > 0 ? ", " : "", ps[i].name,
                        jhas(fig, ps[i].key) ? fmt_span_fine(a, ju64(fig, ps[i].key)) : "-");
        fprintf(f, "\n");
}

/* One LatencyFigures object under its title ("Total:", "Last interval (5s):"). */
static void print_figures(FILE *f, const char *title, json_t *fig) {
        uint64_t waits = ju64(fig, "waits"), throttles = ju64(fig, "throttles");
        char a[FMT_MAX], b[FMT_MAX];

        fprintf(f, "\n%s\n", title);
        fprintf(f, LABEL "%" PRIu64 " (%" PRIu64 " wake-ups, %" PRIu64 " preemptions), %s in all\n", "Waits:",
                waits, ju64(fig, "wakeups"), ju64(fig, "preemptions"), fmt_span_fine(a, ju64(fig, "wait_usec")));
        if (waits > 0) {
                print_percentiles(f, fig);
                fprintf(f, LABEL "%s\n", "Max:", fmt_span_fine(a, ju64(fig, "wait_max_usec")));
                fprintf(f, LABEL "%s of the wait time, in %" PRIu64 " of %" PRIu64 " waits\n", "Throttled:",
                        fmt_share(b, ju64(fig, "throttled_wait_usec"), ju64(fig, "wait_usec")),
                        ju64(fig, "throttled_waits"), waits);
                if (ju64(fig, "migrated_waits") > 0)
                        fprintf(f, LABEL "%" PRIu64 " waits ended on another CPU: their throttled part counts 0\n",
                                "", ju64(fig, "migrated_waits"));
                rqstat_print_histogram(f, json_object_get(fig, "buckets"), "    ");
        }
        if (throttles == 0) {
                fprintf(f, LABEL "none\n", "Throttles:");
                return;
        }
        fprintf(f, LABEL "%" PRIu64 ", %s in all\n", "Throttles:", throttles,
                fmt_span_fine(a, ju64(fig, "throttle_usec")));
        rqstat_print_histogram(f, json_object_get(fig, "throttle_buckets"), "    ");
}

/* " since 2024-05-01 12:00:00 (1h 3min ago)", or nothing without a time. */
static void print_since(FILE *f, json_t *reply, uint64_t now) {
        uint64_t since = ju64(reply, "since_realtime_usec");
        time_t sec = (time_t) (since / USEC_PER_SEC);
        char when[TIMESTAMP_MAX] = "?", a[FMT_MAX];
        struct tm tm;

        if (!jhas(reply, "since_realtime_usec"))
                return;
        if (localtime_r(&sec, &tm))
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        fprintf(f, " since %s (%s ago)", when, fmt_span(a, now > since ? now - since : 0));
}

int rqstat_print(FILE *f, json_t *reply, uint64_t now_realtime_usec, bool colour) {
        json_t *total = json_object_get(reply, "total"), *window = json_object_get(reply, "window");
        const char *unit = strq(jstr(reply, "unit"));
        char title[FMT_MAX + 32], a[FMT_MAX];

        if (!jbool(reply, "available")) {
                fprintf(f, "No run-queue telemetry for %s: %s\n", unit,
                        jstr(reply, "reason") ? jstr(reply, "reason") : "no reason given");
                return 0;
        }
        if (!json_is_object(total))
                return -EBADMSG;

        fprintf(f, "%s%s%s: %" PRIu64 " waits (%" PRIu64 " wake-ups, %" PRIu64 " preemptions)",
                colour ? ANSI_BOLD : "", unit, colour ? ANSI_RESET : "", ju64(total, "waits"),
                ju64(total, "wakeups"), ju64(total, "preemptions"));
        print_since(f, reply, now_realtime_usec);
        fprintf(f, "\n");

        print_figures(f, "Total:", total);
        if (json_is_object(window)) {
                if (jhas(reply, "window_usec"))
                        snprintf(title, sizeof title, "Last interval (%s):", fmt_span(a, ju64(reply, "window_usec")));
                else
                        snprintf(title, sizeof title, "Last interval:");
                print_figures(f, title, window);
        }
        return 0;
}
