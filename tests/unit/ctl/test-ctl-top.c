/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl top's rows, sort orders and frames (src/ctl/top-render.c) from a
 * canned ListUnits reply and GetStatus reply. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "top-render.h"

#define ACTIVITY(usage, thr, level, empty, p99)                                                        \
        "{\"dt_usec\":250000,\"usage_rate\":" #usage ",\"throttle_rate\":" #thr                        \
        ",\"ancestor_throttle_rate\":0,\"level\":" #level ",\"levels\":4,\"active\":false,"              \
        "\"time_to_empty_usec\":" #empty ",\"rq_wait_p99_usec\":" #p99 ",\"rq_throttled_permille\":null}"
#define PROTECTION(cls, level, p99)                                                                    \
        "{\"class\":\"" cls "\",\"level\":\"" level "\",\"p99_usec\":" #p99 "}"
#define BW(q) "{\"quota_usec\":" #q ",\"period_usec\":100000,\"burst_usec\":0,\"has_burst\":false}"

/* Four units: one spending its credit (throttled a little), one resting, a
 * latency unit one rung up whose p99 comes from its protection window, and
 * one whose cgroup is not there. */
static const char units_json[] =
        "["
        "{\"name\":\"web.service\",\"state\":\"resting\",\"adopted\":true,\"baseline\":" BW(100000) ","
        " \"credit_usec\":30000000,\"credit_max_usec\":30000000,"
        " \"protection\":" PROTECTION("throughput", "none", null) ","
        " \"activity\":" ACTIVITY(300000, 0, 4, null, 96) "},"
        "{\"name\":\"batch.slice\",\"state\":\"spending\",\"adopted\":true,\"baseline\":" BW(50000) ","
        " \"credit_usec\":1500000,\"credit_max_usec\":10000000,"
        " \"protection\":" PROTECTION("best-effort", "none", null) ","
        " \"activity\":" ACTIVITY(1500000, 12500, 2, 4200000, 8000) "},"
        "{\"name\":\"api.slice\",\"state\":\"baseline\",\"adopted\":true,\"baseline\":" BW(null) ","
        " \"credit_usec\":30000000,\"credit_max_usec\":30000000,"
        " \"protection\":" PROTECTION("latency", "weight", 1500) ","
        " \"activity\":" ACTIVITY(200000, 0, 0, null, null) "},"
        "{\"name\":\"gone.slice\",\"state\":\"absent\",\"adopted\":false,\"baseline\":null,"
        " \"credit_usec\":null,\"credit_max_usec\":10000000,"
        " \"protection\":" PROTECTION("throughput", "none", null) ", \"activity\":null}"
        "]";

static const char status_json[] =
        "{\"version\":\"9.9\",\"n_units\":4,\"n_present\":3,\"n_boosted\":1,\"n_paused\":0,"
        "\"host_pressure_rate\":120000,\"host_pressure_limit\":400000,\"host_over_limit\":true,"
        "\"host_other_usage_rate\":250000,\"host_other_wait_rate\":30000,\"host_other_behind_rate\":20000}";

struct fixture {
        json_t *units, *status;
        struct top_row *rows;
        size_t n;
};

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->units = json_loads(units_json, 0, NULL);
        f->status = json_loads(status_json, 0, NULL);
        assert_non_null(f->units);
        assert_non_null(f->status);
        assert_int_equal(top_rows_from_units(f->units, &f->rows, &f->n), 0);
        assert_int_equal(f->n, 4);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        free(f->rows);
        json_decref(f->units);
        json_decref(f->status);
        free(f);
        return 0;
}

static const struct top_row *find(const struct fixture *f, const char *name) {
        for (size_t i = 0; i < f->n; i++)
                if (strcmp(f->rows[i].name, name) == 0)
                        return &f->rows[i];
        fail_msg("no row %s", name);
        return NULL;
}

static void test_rows(void **state) {
        struct fixture *f = *state;
        const struct top_row *b = find(f, "batch.slice"), *a = find(f, "api.slice"), *g = find(f, "gone.slice");

        assert_string_equal(b->state, "spending");
        assert_true(b->has_activity);
        assert_int_equal(b->usage_rate, 1500000);
        assert_int_equal(b->baseline_rate, 500000);
        assert_int_equal(b->throttle_rate, 12500);
        assert_int_equal(b->level, 2);
        assert_int_equal(b->levels, 4);
        assert_true(b->has_empty);
        assert_int_equal(b->empty_usec, 4200000);
        assert_true(b->has_p99);
        assert_int_equal(b->p99_usec, 8000);
        /* No sample p99: the latency protection's window's. */
        assert_true(a->has_p99);
        assert_int_equal(a->p99_usec, 1500);
        assert_true(a->baseline_max);
        assert_string_equal(a->rung, "weight");
        assert_int_equal(a->rung_index, 2);
        assert_false(g->adopted);
        assert_false(g->has_activity);
        assert_false(g->has_p99);
}

static void test_rows_malformed(void **state) {
        json_t *v = json_loads("[{\"name\":\"a\"}, 3]", 0, NULL), *o = json_object();
        struct top_row *rows = NULL;
        size_t n = 0;

        assert_int_equal(top_rows_from_units(v, &rows, &n), -EBADMSG);
        assert_int_equal(top_rows_from_units(o, &rows, &n), -EBADMSG);
        assert_null(rows);
        json_decref(v);
        json_decref(o);
        /* An empty list is no error. */
        v = json_array();
        assert_int_equal(top_rows_from_units(v, &rows, &n), 0);
        assert_int_equal(n, 0);
        free(rows);
        json_decref(v);
}

static void assert_order(struct fixture *f, enum top_column by, bool reverse, const char *want) {
        char got[256] = "";

        top_sort(f->rows, f->n, by, reverse);
        for (size_t i = 0; i < f->n; i++) {
                strcat(got, i ? " " : "");
                strcat(got, f->rows[i].name);
        }
        if (strcmp(got, want) != 0)
                fail_msg("by %s%s: \"%s\", expected \"%s\"", top_column_name(by), reverse ? " reversed" : "", got,
                         want);
}

static void test_sort(void **state) {
        struct fixture *f = *state;

        assert_order(f, TOP_USAGE, false, "batch.slice web.service api.slice gone.slice");
        /* Reversed, a row without a value still comes last. */
        assert_order(f, TOP_USAGE, true, "api.slice web.service batch.slice gone.slice");
        assert_order(f, TOP_UNIT, false, "api.slice batch.slice gone.slice web.service");
        assert_order(f, TOP_UNIT, true, "web.service gone.slice batch.slice api.slice");
        assert_order(f, TOP_STATE, false, "batch.slice web.service api.slice gone.slice");
        /* The least credit first; equal shares by name. */
        assert_order(f, TOP_CREDIT, false, "batch.slice api.slice web.service gone.slice");
        assert_order(f, TOP_EMPTY, false, "batch.slice api.slice gone.slice web.service");
        assert_order(f, TOP_BASELINE, false, "api.slice web.service batch.slice gone.slice");
        assert_order(f, TOP_HEADROOM, false, "web.service batch.slice api.slice gone.slice");
        assert_order(f, TOP_THROTTLED, false, "batch.slice api.slice web.service gone.slice");
        assert_order(f, TOP_P99, false, "batch.slice api.slice web.service gone.slice");
        assert_order(f, TOP_CLASS, false, "batch.slice api.slice gone.slice web.service");
        assert_order(f, TOP_RUNG, false, "api.slice batch.slice gone.slice web.service");
}

static void test_columns(void **state) {
        for (int c = 0; c < _TOP_COLUMN_MAX; c++) {
                assert_int_equal(top_column_from_name(top_column_name((enum top_column) c)), c);
                assert_int_equal(top_column_from_key(top_column_key((enum top_column) c)), c);
                assert_non_null(top_column_header((enum top_column) c));
        }
        assert_int_equal(top_column_from_name("cpu"), -EINVAL);
        assert_int_equal(top_column_from_name(NULL), -EINVAL);
        assert_int_equal(top_column_from_key('x'), -EINVAL);
        assert_null(top_column_name(_TOP_COLUMN_MAX));
}

static char *render(const struct top_frame *fr) {
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);

        assert_non_null(f);
        assert_int_equal(top_render(f, fr), 0);
        fclose(f);
        return s;
}

static void test_batch(void **state) {
        struct fixture *f = *state;
        struct top_frame fr = {
                .status = f->status, .rows = f->rows, .n_rows = f->n, .total = 4,
                .sort = TOP_USAGE, .interval_usec = 1000000, .legend = true,
        };
        _cleanup_free_ char *s = NULL, *bare = NULL;

        top_sort(f->rows, f->n, fr.sort, false);
        s = render(&fr);
        assert_string_equal(s,
                "bwgovd 9.9: 4 units, 3 present, 1 boosted, 0 paused; 1 spending, 0 exhausted\n"
                "Host: CPU pressure 120ms/s of 400ms/s, brake ON: headroom withdrawn; "
                "outside the governed units 0.25 CPU, waiting 30ms/s (20ms/s behind the units)\n"
                "\n"
                "UNIT         STATE      CPU  BASELINE  CREDIT  EMPTY IN  HEADROOM  THROTTLED  RQ P99  "
                "CLASS        RUNG\n"
                "batch.slice  spending  1.50      0.50  15%         4.2s       2/4       1.3%     8ms  "
                "best-effort  none\n"
                "web.service  resting   0.30      1.00  100%           -       4/4         0%    96us  "
                "throughput   none\n"
                "api.slice    baseline  0.20       max  100%           -       0/4         0%   1.5ms  "
                "latency      weight\n"
                "gone.slice   absent       -         -  -              -         -          -       -  "
                "throughput   none\n");

        /* --no-legend: the rows alone, the widths of the cells alone. */
        fr.legend = false;
        bare = render(&fr);
        assert_string_equal(bare,
                "batch.slice  spending  1.50  0.50  15%   4.2s  2/4  1.3%    8ms  best-effort  none\n"
                "web.service  resting   0.30  1.00  100%     -  4/4    0%   96us  throughput   none\n"
                "api.slice    baseline  0.20   max  100%     -  0/4    0%  1.5ms  latency      weight\n"
                "gone.slice   absent       -     -  -        -    -     -      -  throughput   none\n");
}

static size_t visible_width(const char *s, size_t len) {
        size_t w = 0;

        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\033') {           /* CSI ... final byte */
                        while (i < len && !(s[i] >= '@' && s[i] <= '~' && s[i] != '['))
                                i++;
                        continue;
                }
                w += ((unsigned char) s[i] & 0xc0) != 0x80;
        }
        return w;
}

/* The live screen: at most height lines of at most width columns, no
 * newline after the last (it would scroll), the credit as a bar, the unit
 * names shortened in the middle, the rows that do not fit counted. */
static void test_live(void **state) {
        struct fixture *f = *state;
        struct top_frame fr = {
                .status = f->status, .rows = f->rows, .n_rows = f->n, .total = 4,
                .sort = TOP_CREDIT, .interval_usec = 2000000, .live = true, .legend = true,
                .width = 100, .height = 8,
        };
        _cleanup_free_ char *s = NULL, *help = NULL, *err = NULL;
        size_t lines = 0;

        top_sort(f->rows, f->n, fr.sort, false);
        s = render(&fr);
        for (const char *p = s, *e; *p; p = e + 1) {
                e = strchr(p, '\n');
                if (!e)
                        e = p + strlen(p) - 1;
                assert_true(visible_width(p, (size_t) (e - p)) <= 100);
                lines++;
        }
        assert_int_equal(lines, 8);
        assert_true(s[strlen(s) - 1] != '\n');
        assert_non_null(strstr(s, "4 of 4 units by credit, every 2s; keys:"));
        assert_non_null(strstr(s, "batch.slice  spending  1.50      0.50  [##        ] 15%"));
        assert_non_null(strstr(s, "[##########] 100%"));
        /* Five lines above the rows: two rows, and the line that counts the others. */
        assert_non_null(strstr(s, "2 more not shown"));
        assert_non_null(strstr(s, "api.slice"));
        assert_null(strstr(s, "web.service"));
        assert_null(strstr(s, "gone.slice"));

        /* Tall enough: every row. */
        fr.width = 70;
        fr.height = 30;
        free(s);
        s = render(&fr);
        assert_null(strstr(s, "more not shown"));
        assert_non_null(strstr(s, "gone.slice"));

        fr.help = true;
        help = render(&fr);
        assert_non_null(strstr(help, "r                       reverse the order"));
        assert_null(strstr(help, "UNIT"));

        /* A failed refresh: its message, no table. */
        fr.help = false;
        fr.status = NULL;
        fr.message = "bwgovd is not running (cannot connect to X: No such file or directory)";
        err = render(&fr);
        assert_non_null(strstr(err, "bwgovd is not running"));
        assert_null(strstr(err, "UNIT"));
}

static void test_shortened(void **state) {
        json_t *units = json_loads(
                "[{\"name\":\"libpod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope\","
                "\"state\":\"resting\",\"adopted\":false}]", 0, NULL);
        struct top_row *rows = NULL;
        size_t n = 0;
        struct top_frame fr = {
                .status = json_object(), .total = 1, .live = true, .legend = true, .width = 80, .height = 10,
        };
        _cleanup_free_ char *s = NULL;

        assert_int_equal(top_rows_from_units(units, &rows, &n), 0);
        fr.rows = rows;
        fr.n_rows = n;
        s = render(&fr);
        /* 80 columns less the others' 75: the 16-column minimum, cut in the middle. */
        assert_non_null(strstr(s, "\nlibpod...f.scope  resting"));
        assert_null(strstr(s, "0123456789abcdef0123"));
        json_decref(fr.status);
        json_decref(units);
        free(rows);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_rows, setup, teardown),
                cmocka_unit_test(test_rows_malformed),
                cmocka_unit_test_setup_teardown(test_sort, setup, teardown),
                cmocka_unit_test(test_columns),
                cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
                cmocka_unit_test_setup_teardown(test_live, setup, teardown),
                cmocka_unit_test(test_shortened),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
