/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bw_lines_foreach(): the lines of a buffer, with and without a final
 * newline, empty lines, a buffer that is not NUL-terminated, and a callback
 * that stops the walk. */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "bwgov/util/lines.h"
#include "bwgov/util/macro.h"
#include "tap.h"

#define MAX_LINES 8

struct seen {
        size_t n_lines;
        char lines[MAX_LINES][64];
        size_t stop_at;         /* return -EBADMSG on this line (1-based), 0 = never */
};

static int record(const char *line, size_t n, void *userdata) {
        struct seen *s = userdata;

        assert_true(s->n_lines < MAX_LINES);
        assert_true(n < sizeof(s->lines[0]));
        assert_null(memchr(line, '\n', n));
        memcpy(s->lines[s->n_lines], line, n);
        s->lines[s->n_lines][n] = '\0';
        s->n_lines++;
        return s->n_lines == s->stop_at ? -EBADMSG : 0;
}

static void test_split(void **state) {
        static const struct {
                const char *buf;
                size_t n_lines;
                const char *lines[MAX_LINES];
        } cases[] = {
                { "",                     0, { NULL } },
                { "\n",                   1, { "" } },
                { "a",                    1, { "a" } },
                { "a\n",                  1, { "a" } },
                { "a\nbc",                2, { "a", "bc" } },
                { "a\nbc\n",              2, { "a", "bc" } },
                { "a\n\nb\n",             3, { "a", "", "b" } },
                { "\n\n",                 2, { "", "" } },
                { "some avg10=0.00\nfull avg10=1.00\n", 2, { "some avg10=0.00", "full avg10=1.00" } },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct seen s = { 0 };
                char q[128];

                print_message("# \"%s\"\n", tap_quote(cases[i].buf, q, sizeof(q)));
                assert_int_equal(bw_lines_foreach(cases[i].buf, strlen(cases[i].buf), record, &s), 0);
                assert_int_equal(s.n_lines, cases[i].n_lines);
                for (size_t k = 0; k < s.n_lines; k++)
                        assert_string_equal(s.lines[k], cases[i].lines[k]);
        }
}

static void test_not_nul_terminated(void **state) {
        /* Only the first five bytes are the buffer. */
        static const char buf[] = "x\nyz\nNOT-PART";
        struct seen s = { 0 };

        assert_int_equal(bw_lines_foreach(buf, 5, record, &s), 0);
        assert_int_equal(s.n_lines, 2);
        assert_string_equal(s.lines[0], "x");
        assert_string_equal(s.lines[1], "yz");

        /* The last line without its newline ends at len. */
        s = (struct seen) { 0 };
        assert_int_equal(bw_lines_foreach(buf, 3, record, &s), 0);
        assert_int_equal(s.n_lines, 2);
        assert_string_equal(s.lines[1], "y");
}

static void test_stop_and_errors(void **state) {
        struct seen s = { .stop_at = 2 };

        assert_int_equal(bw_lines_foreach("a\nb\nc\n", 6, record, &s), -EBADMSG);
        assert_int_equal(s.n_lines, 2);         /* c never seen */

        s = (struct seen) { 0 };
        assert_int_equal(bw_lines_foreach(NULL, 1, record, &s), -EINVAL);
        assert_int_equal(bw_lines_foreach(NULL, 0, record, &s), 0);
        assert_int_equal(s.n_lines, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_split),
                cmocka_unit_test(test_not_nul_terminated),
                cmocka_unit_test(test_stop_and_errors),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
