/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/cgroup/discover.h"
#include "bwgov/util/macro.h"

static void test_slice_paths(void **unused) {
        static const struct { const char *unit, *path; int r; } table[] = {
                { "-.slice", "", 0 },
                { "web.slice", "web.slice", 0 },
                { "a-b.slice", "a.slice/a-b.slice", 0 },
                { "a-b-c.slice", "a.slice/a-b.slice/a-b-c.slice", 0 },
                { "system-getty.slice", "system.slice/system-getty.slice", 0 },
                { "bwgov-demo", "bwgov-demo", 0 },
                { "container42", "container42", 0 },
                { "a--b.slice", NULL, -EINVAL },
                { "-a.slice", NULL, -EINVAL },
                { "a-.slice", NULL, -EINVAL },
                { "x/y.slice", NULL, -EINVAL },
                { "..", NULL, -EINVAL },
                { "", NULL, -EINVAL },
                { "nginx.service", NULL, -EAGAIN },
                { "session-1.scope", NULL, -EAGAIN },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                char *p = NULL;
                int r = bw_unit_cgroup_path(table[i].unit, &p);
                assert_int_equal(r, table[i].r);
                if (r == 0) {
                        assert_string_equal(p, table[i].path);
                        free(p);
                } else
                        assert_null(p);
        }
        assert_true(bw_unit_is_systemd("a.service"));
        assert_false(bw_unit_is_systemd("service"));
        assert_false(bw_unit_is_systemd(".slice"));
}

static void test_find(void **unused) {
        char dir[] = "/tmp/bwgov-test-discover-XXXXXX", path[512];
        char *p = NULL;
        int dfd;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/system.slice", dir);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/system.slice/nginx.service", dir);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/outside", dir);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/outside/hidden.service", dir);
        assert_int_equal(mkdir(path, 0755), 0);
        /* A symlink to a directory must not be followed. */
        snprintf(path, sizeof path, "%s/link.slice", dir);
        assert_int_equal(symlink("outside", path), 0);

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);

        assert_int_equal(bw_discover_find(dfd, "nginx.service", 4, &p), 0);
        assert_string_equal(p, "system.slice/nginx.service");
        free(p);
        p = NULL;
        assert_int_equal(bw_discover_find(dfd, "nginx.service", 1, &p), -ENOENT);
        assert_int_equal(bw_discover_find(dfd, "missing.service", 8, &p), -ENOENT);
        assert_null(p);
        assert_int_equal(bw_discover_find(dfd, "hidden.service", 8, &p), 0);
        assert_string_equal(p, "outside/hidden.service");
        free(p);
        close(dfd);

        snprintf(path, sizeof path, "rm -rf '%s'", dir);
        assert_int_equal(system(path), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_slice_paths),
                cmocka_unit_test(test_find),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
