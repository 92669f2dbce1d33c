/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/util/child.h"

static int touched;             /* set by the call: in the child, never here */

static int fill(void *userdata, void *out) {
        touched = 1;
        snprintf(out, 32, "hello %s from %d", (const char *) userdata, (int) getpid());
        return 7;
}

static int refuse(void *userdata, void *out) {
        touched = 1;
        return -ENOENT;
}

static int die(void *userdata, void *out) {
        _exit(3);
}

static void test_call_in_child(void **unused) {
        char out[32] = "untouched", want[32];

        assert_int_equal(bw_call_in_child(fill, "you", out, sizeof(out)), 7);
        snprintf(want, sizeof(want), "hello you from %d", (int) getpid());
        assert_string_not_equal(out, want);             /* another pid wrote it */
        assert_memory_equal(out, "hello you from ", 15);
        assert_int_equal(touched, 0);

        assert_int_equal(bw_call_in_child(refuse, NULL, NULL, 0), -ENOENT);
        assert_int_equal(touched, 0);

        /* A child that ends without answering: -EIO, out untouched. */
        strcpy(out, "untouched");
        assert_int_equal(bw_call_in_child(die, NULL, out, sizeof(out)), -EIO);
        assert_string_equal(out, "untouched");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_call_in_child),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
