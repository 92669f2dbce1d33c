/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The usage gates (src/daemon/source/usagegate.c) on a fixture v2 tree in a
 * temporary directory and a v1 one: one gate per parent, shared by its
 * children and counted; not for the root's children; not read below
 * USAGE_GATE_MIN_CHILDREN; a reading shared only within
 * USAGE_GATE_MAX_AGE_USEC and only when newer than the time asked after;
 * the file refused off cgroupfs when that is required; the ancestor's
 * quota shared between siblings of one period within its age, forgotten on
 * demand; the last put frees the gate. No root (the fixture is tmpfs, so cgroupfs is not required). */
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

#include "source/usagegate.h"

struct fixture {
        char dir[64];
        struct bw_cg_root *root;
        UsageGates *g;
};

static void put_file(const char *dir, const char *rel, const char *text) {
        char path[256];
        FILE *f;

        (void) snprintf(path, sizeof(path), "%s/%s", dir, rel);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *dir, const char *rel) {
        char path[256];

        (void) snprintf(path, sizeof(path), "%s/%s", dir, rel);
        assert_int_equal(mkdir(path, 0755), 0);
}

static void set_usage(struct fixture *f, const char *rel, unsigned long long usec) {
        char text[128], path[192];

        (void) snprintf(text, sizeof(text), "usage_usec %llu\nuser_usec 0\nsystem_usec %llu\n", usec, usec);
        (void) snprintf(path, sizeof(path), "%s/cpu.stat", rel);
        put_file(f->dir, path, text);
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        if (!f)
                return -1;
        (void) snprintf(f->dir, sizeof(f->dir), "/tmp/bwgov-test-gate-XXXXXX");
        if (!mkdtemp(f->dir))
                return -1;
        put_file(f->dir, "cgroup.controllers", "cpu io memory\n");
        make_dir(f->dir, "web.slice");
        set_usage(f, "web.slice", 1000);
        if (bw_cg_root_open_dir(f->dir, &f->root) < 0)
                return -1;
        if (usage_gates_new(false, &f->g) < 0)
                return -1;
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;
        char cmd[128];

        usage_gates_free(f->g);
        bw_cg_root_free(f->root);
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

static void test_shared_and_counted(void **state) {
        struct fixture *f = *state;
        UsageGate *a, *b, *other;

        /* The root's children have none: the root always moves. */
        assert_null(usage_gate_get(f->g, f->root, "web.slice"));
        assert_null(usage_gate_get(f->g, f->root, "/web.slice"));
        a = usage_gate_get(f->g, f->root, "web.slice/a.service");
        b = usage_gate_get(f->g, f->root, "/web.slice/b.service");
        other = usage_gate_get(f->g, f->root, "web.slice/x.service/inner.scope");
        assert_non_null(a);
        assert_ptr_equal(a, b);
        assert_non_null(other);
        assert_ptr_not_equal(a, other);
        assert_int_equal(usage_gate_children(a), 2);
        assert_int_equal(usage_gates_size(f->g), 2);
        usage_gate_put(b);
        usage_gate_put(other);
        assert_int_equal(usage_gates_size(f->g), 1);
        assert_int_equal(usage_gate_children(a), 1);
        usage_gate_put(a);
        assert_int_equal(usage_gates_size(f->g), 0);
}

static void test_threshold_and_sharing(void **state) {
        struct fixture *f = *state;
        UsageGate *gs[USAGE_GATE_MIN_CHILDREN];
        uint64_t usage = 0, t = 0;
        const uint64_t now = 10 * 1000 * 1000;

        for (unsigned i = 0; i < USAGE_GATE_MIN_CHILDREN; i++) {
                char path[64];

                (void) snprintf(path, sizeof(path), "web.slice/c%u.service", i);
                gs[i] = usage_gate_get(f->g, f->root, path);
                assert_non_null(gs[i]);
                /* Below the threshold it is not read, nor held open. */
                if (i + 1 < USAGE_GATE_MIN_CHILDREN) {
                        assert_int_equal(usage_gate_read(gs[i], now, 0, &usage, &t), -EAGAIN);
                        assert_int_equal(usage_gates_fds(f->g), 0);
                }
        }
        assert_int_equal(usage_gate_read(gs[0], now, 0, &usage, &t), 0);
        assert_int_equal(usage, 1000);
        assert_int_equal(t, now);
        assert_int_equal(usage_gates_fds(f->g), 1);

        /* Within the age, shared (the file's new value not seen) ... */
        set_usage(f, "web.slice", 2000);
        assert_int_equal(usage_gate_read(gs[1], now + USAGE_GATE_MAX_AGE_USEC, 0, &usage, &t), 0);
        assert_int_equal(usage, 1000);
        assert_int_equal(t, now);
        /* ... but never when it is not newer than the time asked after ... */
        assert_int_equal(usage_gate_read(gs[1], now + 10, now, &usage, &t), 0);
        assert_int_equal(usage, 2000);
        assert_int_equal(t, now + 10);
        /* ... nor older than the age. */
        set_usage(f, "web.slice", 3000);
        assert_int_equal(usage_gate_read(gs[2], now + 11 + USAGE_GATE_MAX_AGE_USEC, 0, &usage, &t), 0);
        assert_int_equal(usage, 3000);

        /* One child less: below the threshold, closed and not read. */
        usage_gate_put(gs[3]);
        assert_int_equal(usage_gates_fds(f->g), 0);
        assert_int_equal(usage_gate_read(gs[0], now + 20 * USAGE_GATE_MAX_AGE_USEC, 0, &usage, &t), -EAGAIN);
        for (unsigned i = 0; i < USAGE_GATE_MIN_CHILDREN - 1; i++)
                usage_gate_put(gs[i]);
        assert_int_equal(usage_gates_size(f->g), 0);
}

static void test_refused(void **state) {
        struct fixture *f = *state;
        UsageGates *strict = NULL;
        UsageGate *gs[USAGE_GATE_MIN_CHILDREN];
        uint64_t usage, t;

        /* Off cgroupfs a parent's usage sums nothing: refused when required. */
        assert_int_equal(usage_gates_new(true, &strict), 0);
        for (unsigned i = 0; i < USAGE_GATE_MIN_CHILDREN; i++)
                gs[i] = usage_gate_get(strict, f->root, "web.slice/c.service");
        assert_int_equal(usage_gate_read(gs[0], 1000, 0, &usage, &t), -EAGAIN);
        assert_int_equal(usage_gates_fds(strict), 0);
        for (unsigned i = 0; i < USAGE_GATE_MIN_CHILDREN; i++)
                usage_gate_put(gs[i]);
        usage_gates_free(strict);

        /* A parent whose cpu.stat has no usage: a read error, not a value. */
        put_file(f->dir, "web.slice/cpu.stat", "nr_periods 3\n");
        for (unsigned i = 0; i < USAGE_GATE_MIN_CHILDREN; i++)
                gs[i] = usage_gate_get(f->g, f->root, "web.slice/c.service");
        assert_true(usage_gate_read(gs[0], 1000, 0, &usage, &t) < 0);
        for (unsigned i = 0; i < USAGE_GATE_MIN_CHILDREN; i++)
                usage_gate_put(gs[i]);
}

static void test_ancestor_shared(void **state) {
        struct fixture *f = *state;
        UsageGate *a = usage_gate_get(f->g, f->root, "web.slice/a.service");
        UsageGate *b = usage_gate_get(f->g, f->root, "web.slice/b.service");
        const char *path = NULL;
        uint64_t q = 0, t = 0;

        /* Nothing put yet: the first child walks. */
        assert_false(usage_gate_ancestor_get(b, 100000, 1000, 10000000, &q, &path, &t));
        usage_gate_ancestor_put(a, 100000, 1000, 150000, "limits.slice");
        /* A sibling with the same period takes it, with the ancestor's path ... */
        assert_true(usage_gate_ancestor_get(b, 100000, 5000, 10000000, &q, &path, &t));
        assert_int_equal(q, 150000);
        assert_string_equal(path, "limits.slice");
        assert_int_equal(t, 1000);
        /* ... not in another period, nor once it is as old as the refresh ... */
        assert_false(usage_gate_ancestor_get(b, 50000, 5000, 10000000, &q, &path, &t));
        assert_false(usage_gate_ancestor_get(b, 100000, 1000 + 10000000, 10000000, &q, &path, &t));
        /* ... nor after an ancestor's quota changed. */
        usage_gate_ancestor_forget(a);
        assert_false(usage_gate_ancestor_get(b, 100000, 5000, 10000000, &q, &path, &t));
        /* No limited ancestor: shared too, without a path. */
        usage_gate_ancestor_put(b, 100000, 2000, UINT64_MAX, NULL);
        assert_true(usage_gate_ancestor_get(a, 100000, 3000, 10000000, &q, &path, &t));
        assert_int_equal(q, UINT64_MAX);
        assert_null(path);
        usage_gate_put(a);
        usage_gate_put(b);
}

static void test_v1_cpuacct(void **state) {
        struct fixture *f = *state;
        struct bw_cg_root *root = NULL;
        UsageGate *gs[USAGE_GATE_MIN_CHILDREN];
        char dir[64];
        uint64_t usage = 0, t;
        char cmd[128];

        (void) f;
        (void) snprintf(dir, sizeof(dir), "/tmp/bwgov-test-gate1-XXXXXX");
        assert_non_null(mkdtemp(dir));
        make_dir(dir, "cpu");
        make_dir(dir, "cpuacct");
        make_dir(dir, "cpuacct/web.slice");
        put_file(dir, "cpu/cpu.cfs_quota_us", "-1\n");
        put_file(dir, "cpuacct/web.slice/cpuacct.usage", "5000000\n");
        assert_int_equal(bw_cg_root_open_dir(dir, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_V1);
        for (unsigned i = 0; i < USAGE_GATE_MIN_CHILDREN; i++)
                gs[i] = usage_gate_get(f->g, root, "web.slice/c.service");
        assert_int_equal(usage_gate_read(gs[0], 1000, 0, &usage, &t), 0);
        assert_int_equal(usage, 5000);          /* ns to µs */
        for (unsigned i = 0; i < USAGE_GATE_MIN_CHILDREN; i++)
                usage_gate_put(gs[i]);
        bw_cg_root_free(root);
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_shared_and_counted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_threshold_and_sharing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_ancestor_shared, setup, teardown),
                cmocka_unit_test_setup_teardown(test_v1_cpuacct, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
