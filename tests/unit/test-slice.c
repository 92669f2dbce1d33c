/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* EEVDF slices: the task list parser, and get/set on a thread of our own
 * (no root needed to shorten one's own slice; SKIP where the kernel has no
 * custom slices). */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/slice.h"

static void test_parse(void **state) {
        static const char in[] = "42\n7\n42\n\n100000\n";
        pid_t *v = NULL;
        size_t n = 0;

        assert_int_equal(bw_slice_parse_tids(in, strlen(in), &v, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(v[0], 7);
        assert_int_equal(v[1], 42);
        assert_int_equal(v[2], 100000);
        free(v);
        assert_int_equal(bw_slice_parse_tids("", 0, &v, &n), 0);
        assert_int_equal(n, 0);
        free(v);
        /* The last line may lack its newline. */
        assert_int_equal(bw_slice_parse_tids("5\n6", 3, &v, &n), 0);
        assert_int_equal(n, 2);
        free(v);
        assert_int_equal(bw_slice_parse_tids("5\nx\n", 4, &v, &n), -EINVAL);
        assert_int_equal(bw_slice_parse_tids("0\n", 2, &v, &n), -EINVAL);
        assert_int_equal(bw_slice_parse_tids("-3\n", 3, &v, &n), -EINVAL);
        assert_int_equal(bw_slice_parse_tids("123456789012345678901234567\n", 28, &v, &n), -EINVAL);
}

static void test_own_slice(void **state) {
        uint64_t def, now;
        bool fair;
        int r;

        if (!bw_slice_supported()) {
                print_message("SKIP: this kernel has no EEVDF custom slices (before 6.12)\n");
                skip();
        }
        assert_int_equal(bw_slice_get(0, &def, &fair), 0);
        assert_true(fair);
        r = bw_slice_set(0, 250);
        if (r == -EPERM) {
                print_message("SKIP: not allowed to set our own slice here\n");
                skip();
        }
        assert_int_equal(r, 0);
        assert_int_equal(bw_slice_get(0, &now, NULL), 0);
        assert_int_equal(now, 250);
        /* 0 is the default again. */
        assert_int_equal(bw_slice_set(0, 0), 0);
        assert_int_equal(bw_slice_get(0, &now, NULL), 0);
        assert_int_equal(now, def);
        assert_int_equal(bw_slice_set(0, BW_SLICE_MAX_USEC + 1), -EINVAL);
        assert_int_equal(bw_slice_get(-1, &now, NULL), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_own_slice),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
