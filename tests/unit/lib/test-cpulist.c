/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/cgroup/cpulist.h"
#include "bwgov/util/macro.h"

static void test_parse(void **state) {
        static const struct {
                const char *in;
                int r;
                const char *canonical;  /* formatted back */
        } cases[] = {
                { "0-3\n", 0, "0-3" },
                { "0", 0, "0" },
                { "0-1,3,5-6", 0, "0-1,3,5-6" },
                { "3,1,2", 0, "1-3" },                  /* unordered: sorted */
                { "1,1,0-1", 0, "0-1" },                /* duplicates */
                { "", 0, "" },
                { "\n", 0, "" },
                { "65535", 0, "65535" },
                { "65536", -EINVAL, NULL },
                { "3-1", -EINVAL, NULL },
                { "0,", -EINVAL, NULL },
                { ",0", -EINVAL, NULL },
                { "0-", -EINVAL, NULL },
                { "a", -EINVAL, NULL },
                { "0 1", -EINVAL, NULL },
                { "-1", -EINVAL, NULL },
                { "0\n\n", -EINVAL, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ unsigned *cpus = NULL;
                _cleanup_free_ char *s = NULL;
                size_t n = 0;
                int r = bw_cpulist_parse(cases[i].in, strlen(cases[i].in), &cpus, &n);

                if (r != cases[i].r)
                        fail_msg("case %zu (%s): %d, expected %d", i, cases[i].in, r, cases[i].r);
                if (r < 0)
                        continue;
                assert_int_equal(bw_cpulist_format(cpus, n, &s), 0);
                if (strcmp(s, cases[i].canonical) != 0)
                        fail_msg("case %zu (%s): \"%s\", expected \"%s\"", i, cases[i].in, s, cases[i].canonical);
        }
}

static void test_format_errors(void **state) {
        static const unsigned down[] = { 2, 1 }, dup[] = { 1, 1 };
        char *s = NULL;

        assert_int_equal(bw_cpulist_format(down, 2, &s), -EINVAL);
        assert_int_equal(bw_cpulist_format(dup, 2, &s), -EINVAL);
        assert_null(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_format_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
