/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl latency's text (src/ctl/rqstat-render.c) from canned
 * GetLatency replies, line by line. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bwgov/util/macro.h"
#include "bwgov/telemetry/rqstat.h"
#include "rqstat-render.h"

/* 2024-05-01 12:00:00 UTC and 1h 3min later. */
#define SINCE_USEC UINT64_C(1714564800000000)
#define NOW_USEC   (SINCE_USEC + UINT64_C(3780000000))

struct out {
        char *s;
        size_t n;
        FILE *f;
};

static void out_open(struct out *o) {
        *o = (struct out) { .s = NULL };
        o->f = open_memstream(&o->s, &o->n);
        assert_non_null(o->f);
}

static char *out_close(struct out *o) {
        fclose(o->f);
        return o->s;
}

static int render(json_t *reply, bool colour, char **ret) {
        struct out o;
        int r;

        out_open(&o);
        r = rqstat_print(o.f, reply, NOW_USEC, colour);
        *ret = out_close(&o);
        return r;
}

/* The unit's figures since it was first counted: 9675 waits, mostly
 * 4-16 µs, a few of 4-16 ms; 12 throttles. */
static json_t *total_figures(void) {
        struct bw_rq_counters c = {
                .wakeups = 8900, .preemptions = 775,
                .wait_ns = 152300000, .wait_max_ns = 10230000,
                .throttled_wait_ns = 18730000, .throttled_waits = 40, .migrated_waits = 3,
                .throttles = 12, .throttle_ns = 62000000,
        };

        c.wait_slots[0] = 120;
        c.wait_slots[2] = 3000;
        c.wait_slots[3] = 5400;
        c.wait_slots[4] = 900;
        c.wait_slots[5] = 200;
        c.wait_slots[7] = 40;
        c.wait_slots[12] = 12;
        c.wait_slots[13] = 3;
        c.throttle_slots[12] = 10;
        c.throttle_slots[13] = 2;
        return bw_rq_figures_to_json(&c);
}

/* The last interval: 820 short waits, no throttle. */
static json_t *window_figures(void) {
        struct bw_rq_counters c = { .wakeups = 800, .preemptions = 20, .wait_ns = 6100000, .wait_max_ns = 28000 };

        c.wait_slots[2] = 300;
        c.wait_slots[3] = 500;
        c.wait_slots[4] = 20;
        return bw_rq_figures_to_json(&c);
}

static const char full_text[] =
        "app.slice: 9675 waits (8900 wake-ups, 775 preemptions) since 2024-05-01 12:00:00 (1h 3min ago)\n"
        "\n"
        "Total:\n"
        "       Waits: 9675 (8900 wake-ups, 775 preemptions), 152.3ms in all\n"
        " Percentiles: p50 16us, p90 32us, p99 64us, p99.9 8.2ms\n"
        "         Max: 10.2ms\n"
        "   Throttled: 12.3% of the wait time, in 40 of 9675 waits\n"
        "              3 waits ended on another CPU: their throttled part counts 0\n"
        "           usecs : count  distribution\n"
        "       0 - 2     :   120 |                                        |\n"
        "       2 - 4     :     0 |                                        |\n"
        "       4 - 8     :  3000 |######################                  |\n"
        "       8 - 16    :  5400 |########################################|\n"
        "      16 - 32    :   900 |######                                  |\n"
        "      32 - 64    :   200 |#                                       |\n"
        "      64 - 128   :     0 |                                        |\n"
        "     128 - 256   :    40 |                                        |\n"
        "     256 - 512   :     0 |                                        |\n"
        "     512 - 1024  :     0 |                                        |\n"
        "    1024 - 2048  :     0 |                                        |\n"
        "    2048 - 4096  :     0 |                                        |\n"
        "    4096 - 8192  :    12 |                                        |\n"
        "    8192 - 16384 :     3 |                                        |\n"
        "   Throttles: 12, 62ms in all\n"
        "           usecs : count  distribution\n"
        "    4096 - 8192  :    10 |########################################|\n"
        "    8192 - 16384 :     2 |########                                |\n"
        "\n"
        "Last interval (5s):\n"
        "       Waits: 820 (800 wake-ups, 20 preemptions), 6.1ms in all\n"
        " Percentiles: p50 16us, p90 16us, p99 28us, p99.9 28us\n"
        "         Max: 28us\n"
        "   Throttled: 0% of the wait time, in 0 of 820 waits\n"
        "      usecs : count  distribution\n"
        "     4 - 8  :   300 |########################                |\n"
        "     8 - 16 :   500 |########################################|\n"
        "    16 - 32 :    20 |#                                       |\n"
        "   Throttles: none\n";

static void test_full(void **state) {
        _cleanup_free_ char *plain = NULL;
        json_t *reply = json_pack("{s:s, s:b, s:n, s:I, s:o, s:o, s:I}", "unit", "app.slice", "available", 1,
                                  "reason", "since_realtime_usec", (json_int_t) SINCE_USEC,
                                  "total", total_figures(), "window", window_figures(),
                                  "window_usec", (json_int_t) 5000000);

        assert_non_null(reply);
        assert_int_equal(render(reply, false, &plain), 0);
        assert_string_equal(plain, full_text);
        json_decref(reply);
}

/* Colour: the unit's name in bold, nothing else changes. */
static void test_colour(void **state) {
        _cleanup_free_ char *bold = NULL;
        json_t *reply = json_pack("{s:s, s:b, s:n, s:I, s:o, s:o, s:I}", "unit", "app.slice", "available", 1,
                                  "reason", "since_realtime_usec", (json_int_t) SINCE_USEC,
                                  "total", total_figures(), "window", window_figures(),
                                  "window_usec", (json_int_t) 5000000);
        static const char first[] = "\033[1mapp.slice\033[0m: 9675 waits (8900 wake-ups, 775 preemptions) "
                                    "since 2024-05-01 12:00:00 (1h 3min ago)";
        const char *nl;

        assert_non_null(reply);
        assert_int_equal(render(reply, true, &bold), 0);
        nl = strchr(bold, '\n');
        assert_non_null(nl);
        assert_int_equal(nl - bold, strlen(first));
        assert_memory_equal(bold, first, strlen(first));
        assert_string_equal(nl, strchr(full_text, '\n'));
        json_decref(reply);
}

static void test_unavailable(void **state) {
        static const struct {
                const char *json, *want;
        } cases[] = {
                { "{\"unit\": \"app.slice\", \"available\": false, \"reason\": \"bwgovd was built without BPF\","
                  " \"since_realtime_usec\": null, \"total\": null, \"window\": null, \"window_usec\": null}",
                  "No run-queue telemetry for app.slice: bwgovd was built without BPF\n" },
                { "{\"unit\": \"db.slice\", \"available\": false, \"reason\": null}",
                  "No run-queue telemetry for db.slice: no reason given\n" },
                /* available false wins over figures that came along anyway. */
                { "{\"unit\": \"x.slice\", \"available\": false, \"reason\": \"Telemetry=no\", \"total\": {}}",
                  "No run-queue telemetry for x.slice: Telemetry=no\n" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *s = NULL;
                json_t *reply = json_loads(cases[i].json, 0, NULL);

                assert_non_null(reply);
                assert_int_equal(render(reply, false, &s), 0);
                assert_string_equal(s, cases[i].want);
                json_decref(reply);
        }
}

static void test_broken(void **state) {
        _cleanup_free_ char *s = NULL;
        json_t *reply = json_loads("{\"unit\": \"app.slice\", \"available\": true, \"total\": null}", 0, NULL);

        assert_non_null(reply);
        assert_int_equal(render(reply, false, &s), -EBADMSG);
        assert_string_equal(s, "");
        json_decref(reply);
}

/* No wait yet, no since, a window without its length. */
static void test_no_waits(void **state) {
        static const struct bw_rq_counters zero = {0};
        _cleanup_free_ char *s = NULL;
        json_t *reply = json_pack("{s:s, s:b, s:n, s:n, s:o, s:o, s:n}", "unit", "new.slice", "available", 1,
                                  "reason", "since_realtime_usec", "total", bw_rq_figures_to_json(&zero),
                                  "window", bw_rq_figures_to_json(&zero), "window_usec");

        assert_non_null(reply);
        assert_int_equal(render(reply, false, &s), 0);
        assert_string_equal(s,
                            "new.slice: 0 waits (0 wake-ups, 0 preemptions)\n"
                            "\n"
                            "Total:\n"
                            "       Waits: 0 (0 wake-ups, 0 preemptions), 0us in all\n"
                            "   Throttles: none\n"
                            "\n"
                            "Last interval:\n"
                            "       Waits: 0 (0 wake-ups, 0 preemptions), 0us in all\n"
                            "   Throttles: none\n");
        json_decref(reply);
}

static char *histogram(const char *json, size_t *ret_lines) {
        json_t *b = json_loads(json, 0, NULL);
        struct out o;

        assert_non_null(b);
        out_open(&o);
        *ret_lines = rqstat_print_histogram(o.f, b, "> ");
        json_decref(b);
        return out_close(&o);
}

static void test_histogram(void **state) {
        _cleanup_free_ char *empty = NULL, *none = NULL, *last = NULL, *one = NULL;
        size_t n;

        /* Every bucket empty, or no array: nothing. */
        empty = histogram("[{\"lower_usec\": 0, \"upper_usec\": 2, \"count\": 0}]", &n);
        assert_int_equal(n, 0);
        assert_string_equal(empty, "");
        none = histogram("{}", &n);
        assert_int_equal(n, 0);
        assert_string_equal(none, "");

        /* The last bucket has no upper end; a wide count widens its column;
         * a bar rounds down. */
        last = histogram("[{\"lower_usec\": 16777216, \"upper_usec\": 33554432, \"count\": 0},"
                         " {\"lower_usec\": 33554432, \"upper_usec\": 67108864, \"count\": 1234567},"
                         " {\"lower_usec\": 67108864, \"upper_usec\": null, \"count\": 3000000}]", &n);
        assert_int_equal(n, 2);
        assert_string_equal(last,
                            ">               usecs :   count  distribution\n"
                            "> 33554432 - 67108864 : 1234567 |################                        |\n"
                            "> 67108864 - inf      : 3000000 |########################################|\n");

        /* One bucket: a full bar. */
        one = histogram("[{\"lower_usec\": 0, \"upper_usec\": 2, \"count\": 0},"
                        " {\"lower_usec\": 2, \"upper_usec\": 4, \"count\": 1},"
                        " {\"lower_usec\": 4, \"upper_usec\": 8, \"count\": 0}]", &n);
        assert_int_equal(n, 1);
        assert_string_equal(one,
                            "> usecs : count  distribution\n"
                            "> 2 - 4 :     1 |########################################|\n");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_full),
                cmocka_unit_test(test_colour),
                cmocka_unit_test(test_unavailable),
                cmocka_unit_test(test_broken),
                cmocka_unit_test(test_no_waits),
                cmocka_unit_test(test_histogram),
        };

        /* "since" is local time: the test's is UTC. */
        setenv("TZ", "UTC", 1);
        tzset();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
