/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl's reading of bwgovd's replies (src/ctl/reply.c) and its verb
 * options (src/ctl/options.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/util/macro.h"
#include "format.h"
#include "options.h"
#include "reply.h"
#include "table.h"

static void test_accessors(void **state) {
        json_t *o = json_pack("{s:s, s:b, s:I, s:I, s:n, s:I}", "s", "x", "t", 1, "n", (json_int_t) 42,
                              "neg", (json_int_t) -5, "null", "q", (json_int_t) 50000);

        assert_non_null(o);
        assert_string_equal(jstr(o, "s"), "x");
        assert_null(jstr(o, "n"));
        assert_string_equal(strq(NULL), "?");
        assert_true(jbool(o, "t"));
        assert_false(jbool(o, "missing"));
        assert_true(jhas(o, "n"));
        assert_false(jhas(o, "null"));
        assert_false(jhas(o, "missing"));
        assert_int_equal(ju64(o, "n"), 42);
        assert_int_equal(ju64(o, "neg"), 0);
        assert_int_equal(ju64(o, "s"), 0);
        /* The interface says null (or nothing) for "max". */
        assert_true(jquota(o, "null") == BW_QUOTA_MAX);
        assert_true(jquota(o, "missing") == BW_QUOTA_MAX);
        assert_int_equal(jquota(o, "q"), 50000);
        json_decref(o);
}

static void test_bandwidth(void **state) {
        json_t *bw = json_pack("{s:I, s:I, s:b, s:I}", "quota_usec", (json_int_t) 50000, "period_usec",
                               (json_int_t) 100000, "has_burst", 1, "burst_usec", (json_int_t) 10000);
        json_t *unlimited = json_pack("{s:n, s:I, s:b}", "quota_usec", "period_usec", (json_int_t) 100000,
                                      "has_burst", 0);
        json_t *not_object = json_string("x");
        char buf[FMT_MAX];

        assert_string_equal(fmt_bw_quota(buf, bw), "0.50 CPU (50%)");
        assert_string_equal(fmt_bw_burst(buf, bw), "10ms");
        assert_string_equal(fmt_bw_quota(buf, unlimited), "max");
        assert_string_equal(fmt_bw_burst(buf, unlimited), "-");
        assert_string_equal(fmt_bw_quota(buf, not_object), "-");
        assert_string_equal(fmt_bw_burst(buf, NULL), "-");
        json_decref(bw);
        json_decref(unlimited);
        json_decref(not_object);
}

static void test_unit_state_and_credit(void **state) {
        json_t *u = json_pack("{s:s, s:I, s:I}", "state", "spending", "credit_usec", (json_int_t) 12000,
                              "credit_max_usec", (json_int_t) 60000000);
        json_t *v = json_pack("{s:s, s:n, s:I}", "state", "baseline", "credit_usec", "credit_max_usec",
                              (json_int_t) 1000000);
        const char *colour = "unset";
        char buf[FMT_MAX];

        assert_string_equal(unit_state(u, &colour), "spending");
        assert_string_equal(colour, ANSI_GREEN);
        assert_string_equal(unit_state(v, &colour), "baseline");
        assert_null(colour);
        assert_string_equal(unit_state(NULL, &colour), "?");
        fmt_credit(buf, u);
        assert_string_equal(buf, "12ms of 1min");
        fmt_credit(buf, v);
        assert_string_equal(buf, "- of 1s");
        json_decref(u);
        json_decref(v);
}

static const struct verb_info info_history = {
        "history", VERB_TAKES_UNIT | VERB_TAKES_LINES | VERB_HAS_TABLE, "History",
};
static const struct verb_info info_reload = {
        "reload", VERB_MUTATING, "Reload",
};

/* parse_options() on a NULL-terminated word list; getopt restarted. */
static int parse(const struct verb_info *v, struct options *ret, ...) {
        char *argv[8];
        int argc = 0;
        va_list ap;

        va_start(ap, ret);
        for (char *w; argc < (int) ELEMENTSOF(argv) - 1 && (w = va_arg(ap, char *)); )
                argv[argc++] = w;
        va_end(ap);
        argv[argc] = NULL;
        optind = 0;
        opterr = 0;
        return parse_options(argc, argv, v, ret);
}

static void test_options(void **state) {
        struct options o;

        assert_int_equal(setenv("BWGOV_SOCKET", "/tmp/env.sock", 1), 0);
        assert_int_equal(parse(&info_history, &o, "history", "-n", "5", "--json", "app.slice", NULL), 1);
        assert_string_equal(o.unit, "app.slice");
        assert_true(o.has_lines);
        assert_int_equal(o.lines, 5);
        assert_true(o.json);
        assert_false(o.colour);
        assert_true(o.legend);
        assert_string_equal(o.socket, "/tmp/env.sock");

        assert_int_equal(parse(&info_history, &o, "history", "--no-legend", "--socket=/x", "a", NULL), 1);
        assert_false(o.has_lines);
        assert_false(o.legend);
        assert_string_equal(o.socket, "/x");

        assert_int_equal(unsetenv("BWGOV_SOCKET"), 0);
        assert_int_equal(parse(&info_reload, &o, "reload", NULL), 1);
        assert_null(o.unit);
        assert_string_equal(o.socket, CTL_DEFAULT_SOCKET);

        /* Usage errors. */
        assert_int_equal(parse(&info_history, &o, "history", NULL), -EINVAL);
        assert_int_equal(parse(&info_history, &o, "history", "a", "b", NULL), -EINVAL);
        assert_int_equal(parse(&info_reload, &o, "reload", "a", NULL), -EINVAL);
        assert_int_equal(parse(&info_reload, &o, "reload", "--lines=3", NULL), -EINVAL);
        assert_int_equal(parse(&info_history, &o, "history", "-n", "0", "a", NULL), -EINVAL);
        assert_int_equal(parse(&info_history, &o, "history", "-n", "-1", "a", NULL), -EINVAL);
        assert_int_equal(parse(&info_history, &o, "history", "-n", " 1", "a", NULL), -EINVAL);
        assert_int_equal(parse(&info_history, &o, "history", "-n", "1x", "a", NULL), -EINVAL);
        assert_int_equal(parse(&info_history, &o, "history", "-n", "99999999999999999999999", "a", NULL), -EINVAL);
        assert_int_equal(parse(&info_history, &o, "history", "--socket=", "a", NULL), -EINVAL);
        assert_int_equal(parse(&info_history, &o, "history", "--bogus", "a", NULL), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_accessors),
                cmocka_unit_test(test_bandwidth),
                cmocka_unit_test(test_unit_state_and_credit),
                cmocka_unit_test(test_options),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
