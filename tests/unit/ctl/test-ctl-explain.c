/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl explain's text (src/ctl/explain-render.c) from canned Explain
 * replies: the whole layout once, the run-queue line in each of its cases,
 * no decision, colour. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "explain-render.h"

/* The decision was taken 1.5 s before "now". */
#define DECIDED_USEC UINT64_C(1714564800000000)
#define NOW_USEC     (DECIDED_USEC + UINT64_C(1500000))

/* A unit throttled by its own 50 % quota, spending credit, whose tasks
 * waited mostly throttled: the law raised its headroom. */
static const char reply_text[] =
        "{\"unit\": \"web.slice\", \"mode\": \"elastic\", \"paused\": false,"
        " \"decision\": {"
        "  \"realtime_usec\": 1714564800000000, \"rule\": \"headroom-raise\","
        "  \"description\": \"the credit pays for a higher headroom level\","
        "  \"explain\": \"headroom-raise: use 700000us/s thr 120000us/s credit 20000ms; level 4/4, active,"
        " run-queue p99 65ms 80% throttled; quota 50000->100000 burst 50000->50000; next sample in 250ms\","
        "  \"old\": {\"quota_usec\": 50000, \"period_usec\": 100000, \"burst_usec\": 50000, \"has_burst\": true},"
        "  \"target\": {\"quota_usec\": 100000, \"period_usec\": 100000, \"burst_usec\": 50000, \"has_burst\": true},"
        "  \"would_change\": true, \"change\": true, \"applied\": true, \"emergency\": false,"
        "  \"next_sample_usec\": 250000,"
        "  \"inputs\": {\"dt_usec\": 1000000, \"usage_rate\": 700000, \"throttle_rate\": 120000,"
        "   \"ancestor_throttle_rate\": 0, \"pressure_rate\": 30000, \"d_nr_periods\": 10, \"d_nr_throttled\": 6,"
        "   \"d_nr_bursts\": 2, \"credit_before_usec\": 20200000, \"credit_after_usec\": 20000000,"
        "   \"debt_usec\": 0, \"earn_rate\": 0, \"spend_rate\": 200000, \"spend_avg\": 150000, \"active\": true,"
        "   \"rq_wait_p99_usec\": 65536, \"rq_throttled_permille\": 800, \"rq_over_target\": true},"
        "  \"headroom\": {\"headroom_usec\": 50000, \"headroom_max_usec\": 50000, \"level\": 4, \"levels\": 4,"
        "   \"reserve_usec\": 417500, \"time_to_empty_usec\": 100000000},"
        "  \"target_throttle\": 10000, \"target_pressure\": 50000, \"target_wait_p99_usec\": 50000,"
        "  \"credit_max_usec\": 30000000, \"quota_limit_usec\": 100000}}";

static const char full_text[] =
        "web.slice (mode elastic)\n"
        "    Decision: headroom-raise, 1.5s ago\n"
        "     Because: the credit pays for a higher headroom level\n"
        "     Outcome: 0.50 CPU (50%), burst 50ms -> 1.00 CPU (100%), burst 50ms (written)\n"
        "      Inputs: over the last 1s:\n"
        "              usage 0.70 CPU\n"
        "              throttled 120ms/s (target 10ms/s), in 6 of 10 periods\n"
        "              pressure (full) 30ms/s (target 50ms/s)\n"
        "              run queue: p99 65.5ms, 80% of the wait throttled (over TargetWaitP99=50ms)\n"
        "              2 bursts\n"
        "              credit 20.2s -> 20s of 30s, earning 0.00 CPU, spending 0.20 CPU (active)\n"
        "      Limits: quota up to 1.00 CPU (100%)\n"
        "    Headroom: 0.50 CPU above the baseline, level 4 of 4 (up to 0.50 CPU now); 417.5ms held in reserve\n"
        "              at the average spending, down to the reserve in 1min 40s\n"
        "              next sample in 250ms\n"
        "         Law: headroom-raise: use 700000us/s thr 120000us/s credit 20000ms; level 4/4, active, run-queue "
        "p99 65ms 80% throttled; quota 50000->100000 burst 50000->50000; next sample in 250ms\n";

static json_t *reply_new(void) {
        json_error_t e;
        json_t *r = json_loads(reply_text, 0, &e);

        if (!r)
                fail_msg("reply_text: %s at %d", e.text, e.position);
        return r;
}

static char *render(json_t *reply, bool colour) {
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);

        assert_non_null(f);
        assert_int_equal(explain_print(f, reply, NOW_USEC, colour), 0);
        assert_int_equal(fclose(f), 0);
        return s;
}

/* The line of the output that starts (after the label column) with prefix,
 * as a new string, or NULL. */
static char *line_with(const char *text, const char *prefix) {
        for (const char *l = text; *l; ) {
                const char *end = strchr(l, '\n');
                size_t len = end ? (size_t) (end - l) : strlen(l);

                if (len > 14 && strncmp(l + 14, prefix, strlen(prefix)) == 0)
                        return strndup(l, len);
                l += len + (end ? 1 : 0);
        }
        return NULL;
}

static void test_full(void **state) {
        json_t *reply = reply_new();
        _cleanup_free_ char *s = render(reply, false);

        assert_string_equal(s, full_text);
        json_decref(reply);
}

/* The run-queue line: nothing without figures, else the p99, the throttled
 * share, and where the p99 stands against TargetWaitP99=. */
static void test_runqueue(void **state) {
        static const struct {
                int64_t p99_usec;               /* -1: null */
                int64_t permille;               /* -1: null */
                bool over_target;
                uint64_t target_usec;
                const char *want;               /* NULL: no line */
        } cases[] = {
                { -1, -1, false, 50000, NULL },
                { 65536, 800, true, 50000,
                  "              run queue: p99 65.5ms, 80% of the wait throttled (over TargetWaitP99=50ms)" },
                { 65536, 300, false, 50000,
                  "              run queue: p99 65.5ms, 30% of the wait throttled "
                  "(over TargetWaitP99=50ms, but mostly unthrottled)" },
                { 512, 0, false, 50000,
                  "              run queue: p99 512us, 0% of the wait throttled (target 50ms)" },
                { 50000, 1000, false, 50000,
                  "              run queue: p99 50ms, 100% of the wait throttled (target 50ms)" },
                { 4096, 125, false, 0,
                  "              run queue: p99 4.1ms, 12.5% of the wait throttled (TargetWaitP99= off)" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                json_t *reply = reply_new(), *d = json_object_get(reply, "decision");
                json_t *in = json_object_get(d, "inputs");
                _cleanup_free_ char *s = NULL, *line = NULL;

                json_object_set_new(in, "rq_wait_p99_usec",
                                    cases[i].p99_usec < 0 ? json_null() : json_integer(cases[i].p99_usec));
                json_object_set_new(in, "rq_throttled_permille",
                                    cases[i].permille < 0 ? json_null() : json_integer(cases[i].permille));
                json_object_set_new(in, "rq_over_target", json_boolean(cases[i].over_target));
                json_object_set_new(d, "target_wait_p99_usec", json_integer((json_int_t) cases[i].target_usec));
                s = render(reply, false);
                line = line_with(s, "run queue:");
                if (!cases[i].want)
                        assert_null(line);
                else {
                        assert_non_null(line);
                        assert_string_equal(line, cases[i].want);
                }
                /* The line sits between the pressure and the bursts. */
                assert_non_null(strstr(s, cases[i].want ? "(target 50ms/s)\n              run queue:" :
                                                          "(target 50ms/s)\n              2 bursts\n"));
                json_decref(reply);
        }
}

/* An older daemon's reply has no run-queue members: no line, no failure. */
static void test_runqueue_missing(void **state) {
        json_t *reply = reply_new(), *d = json_object_get(reply, "decision");
        json_t *in = json_object_get(d, "inputs");
        _cleanup_free_ char *s = NULL;

        json_object_del(in, "rq_wait_p99_usec");
        json_object_del(in, "rq_throttled_permille");
        json_object_del(in, "rq_over_target");
        json_object_del(d, "target_wait_p99_usec");
        s = render(reply, false);
        assert_null(strstr(s, "run queue"));
        json_decref(reply);
}

static void test_no_decision(void **state) {
        json_t *reply = reply_new();
        _cleanup_free_ char *s = NULL;

        json_object_set_new(reply, "decision", json_null());
        json_object_set_new(reply, "paused", json_true());
        s = render(reply, false);
        assert_string_equal(s, "web.slice (mode elastic, paused)\n"
                               "No decision yet: the unit's cgroup has not been found or read.\n");
        json_decref(reply);
}

static void test_colour(void **state) {
        json_t *reply = reply_new();
        _cleanup_free_ char *s = render(reply, true);

        assert_non_null(strstr(s, "\033[1mweb.slice\033[0m (mode elastic)\n"));
        assert_non_null(strstr(s, "Decision: \033[1mheadroom-raise\033[0m, 1.5s ago\n"));
        json_decref(reply);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_full),
                cmocka_unit_test(test_runqueue),
                cmocka_unit_test(test_runqueue_missing),
                cmocka_unit_test(test_no_decision),
                cmocka_unit_test(test_colour),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
