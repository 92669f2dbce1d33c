/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Levers on fixture trees (regular files under mkdtemp stand in for the
 * cgroup files): where each lives per layout, the v1 mappings, reading,
 * writing, sameness and the siblings' weights. */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/cgroup/lever.h"
#include "bwgov/util/macro.h"

#define CG "web.slice/app.service"

static void mkdir_p(const char *path) {
        char p[PATH_MAX];

        snprintf(p, sizeof(p), "%s", path);
        for (char *s = p + 1; *s; s++)
                if (*s == '/') {
                        *s = '\0';
                        (void) mkdir(p, 0755);
                        *s = '/';
                }
        (void) mkdir(p, 0755);
}

static void put(const char *root, const char *name, const char *content) {
        char p[PATH_MAX], d[PATH_MAX];
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", root, name);
        snprintf(d, sizeof(d), "%s", p);
        *strrchr(d, '/') = '\0';
        mkdir_p(d);
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static char *get(const char *root, const char *name) {
        static char buf[256];
        char p[PATH_MAX];
        FILE *f;
        size_t n;

        snprintf(p, sizeof(p), "%s/%s", root, name);
        f = fopen(p, "re");
        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        /* A write to a regular file does not truncate it, as a cgroup file
         * takes each write whole: the fixtures are written over values of
         * the same length or longer, and compared up to the newline. */
        buf[strcspn(buf, "\n")] = '\0';
        return buf;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(p);
}

static char *tree_new(void) {
        char *t = strdup("/tmp/bwgov-test-lever-XXXXXX");

        assert_non_null(t);
        assert_non_null(mkdtemp(t));
        return t;
}

static void tree_free(char *t) {
        (void) nftw(t, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(t);
}

/* A hybrid tree with freezer and cpuset hierarchies, CG in all of them,
 * and two siblings of CG in the cpu hierarchy. */
static char *tree_hybrid(void) {
        char *t = tree_new();

        put(t, "cpu/" CG "/cpu.cfs_quota_us", "-1\n");
        put(t, "cpu/" CG "/cpu.cfs_period_us", "100000\n");
        put(t, "cpu/" CG "/cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
        put(t, "cpu/" CG "/cpu.shares", "1024\n");
        put(t, "cpu/" CG "/cpu.idle", "0\n");
        put(t, "cpu/web.slice/db.service/cpu.shares", "2048\n");
        put(t, "cpu/web.slice/batch.service/cpu.shares", "512\n");
        put(t, "cpu/web.slice/batch.service/cpu.idle", "1\n");
        put(t, "unified/cgroup.procs", "");
        put(t, "unified/" CG "/cgroup.freeze", "0\n");
        put(t, "cpuset/" CG "/cpuset.cpus", "0-3\n");
        return t;
}

static void test_names_and_files(void **state) {
        for (int l = 0; l < _BW_LEVER_MAX; l++)
                assert_int_equal(bw_lever_from_string(bw_lever_to_string((enum bw_lever) l)), l);
        assert_int_equal(bw_lever_from_string("shares"), _BW_LEVER_INVALID);
        assert_string_equal(bw_lever_file(BW_CG_LAYOUT_V2, BW_LEVER_WEIGHT), "cpu.weight");
        assert_string_equal(bw_lever_file(BW_CG_LAYOUT_HYBRID, BW_LEVER_WEIGHT), "cpu.shares");
        assert_string_equal(bw_lever_file(BW_CG_LAYOUT_HYBRID, BW_LEVER_FREEZE), "cgroup.freeze");
        assert_string_equal(bw_lever_file(BW_CG_LAYOUT_V1, BW_LEVER_FREEZE), "freezer.state");
        assert_string_equal(bw_lever_file(BW_CG_LAYOUT_V1, BW_LEVER_CPUS), "cpuset.cpus");
}

static void test_native(void **state) {
        char b[64];

        /* The kernel's conversion, both ways, clamped. */
        assert_int_equal(bw_shares_from_weight(100), 1024);
        assert_int_equal(bw_shares_from_weight(10000), 102400);
        assert_int_equal(bw_shares_from_weight(1), 10);
        assert_int_equal(bw_weight_from_shares(1024), 100);
        assert_int_equal(bw_weight_from_shares(262144), 10000);
        assert_int_equal(bw_weight_from_shares(3), 1);

        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_HYBRID, BW_LEVER_WEIGHT, "400", b, sizeof(b)), 0);
        assert_string_equal(b, "4096");
        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_V2, BW_LEVER_WEIGHT, "400", b, sizeof(b)), 0);
        assert_string_equal(b, "400");
        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_V2, BW_LEVER_WEIGHT, "0", b, sizeof(b)), -EINVAL);
        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_V2, BW_LEVER_WEIGHT, "10001", b, sizeof(b)), -EINVAL);
        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_V2, BW_LEVER_WEIGHT, "1x", b, sizeof(b)), -EINVAL);
        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_V1, BW_LEVER_FREEZE, "1", b, sizeof(b)), 0);
        assert_string_equal(b, "FROZEN");
        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_V1, BW_LEVER_FREEZE, "0", b, sizeof(b)), 0);
        assert_string_equal(b, "THAWED");
        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_HYBRID, BW_LEVER_FREEZE, "1", b, sizeof(b)), 0);
        assert_string_equal(b, "1");
        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_V2, BW_LEVER_IDLE, "2", b, sizeof(b)), -EINVAL);
        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_V2, BW_LEVER_CPUS, "0-1,3", b, sizeof(b)), 0);
        assert_string_equal(b, "0-1,3");
        assert_int_equal(bw_lever_native(BW_CG_LAYOUT_V2, BW_LEVER_CPUS, "0-1,3", b, 3), -ENOBUFS);

        assert_int_equal(bw_lever_from_native(BW_CG_LAYOUT_HYBRID, BW_LEVER_WEIGHT, "2048", b, sizeof(b)), 0);
        assert_string_equal(b, "200");
        assert_int_equal(bw_lever_from_native(BW_CG_LAYOUT_V1, BW_LEVER_FREEZE, "FREEZING", b, sizeof(b)), 0);
        assert_string_equal(b, "1");
        assert_int_equal(bw_lever_from_native(BW_CG_LAYOUT_V1, BW_LEVER_FREEZE, "THAWED", b, sizeof(b)), 0);
        assert_string_equal(b, "0");

        assert_true(bw_lever_same(BW_LEVER_FREEZE, "FREEZING\n", "FROZEN"));
        assert_false(bw_lever_same(BW_LEVER_FREEZE, "THAWED", "FROZEN"));
        assert_true(bw_lever_same(BW_LEVER_CPUS, " 0-3\n", "0-3"));
        assert_false(bw_lever_same(BW_LEVER_CPUS, "0-3", "0-2"));
        assert_false(bw_lever_same(BW_LEVER_WEIGHT, NULL, "1"));
}

static void test_read_write_hybrid(void **state) {
        char *t = tree_hybrid();
        struct bw_cg_root *root = NULL;
        struct bw_cg *cg = NULL;
        char b[BW_LEVER_VALUE_MAX];
        uint64_t sum = 0;
        unsigned n = 0;

        assert_int_equal(bw_cg_root_open_dir(t, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_HYBRID);
        assert_true(root->cpuset_fd >= 0);
        assert_int_equal(root->freezer_fd, -1);         /* no freezer/ in this tree */
        assert_int_equal(bw_cg_open(root, CG, &cg), 0);

        assert_int_equal(bw_lever_read(root, cg, BW_LEVER_WEIGHT, b, sizeof(b)), 0);
        assert_string_equal(b, "1024");
        assert_int_equal(bw_lever_write(root, cg, BW_LEVER_WEIGHT, "4096"), 0);
        assert_string_equal(get(t, "cpu/" CG "/cpu.shares"), "4096");
        /* The twin's cgroup.freeze, not a v1 freezer. */
        assert_int_equal(bw_lever_write(root, cg, BW_LEVER_FREEZE, "1"), 0);
        assert_string_equal(get(t, "unified/" CG "/cgroup.freeze"), "1");
        assert_int_equal(bw_lever_read(root, cg, BW_LEVER_CPUS, b, sizeof(b)), 0);
        assert_string_equal(b, "0-3");
        assert_int_equal(bw_lever_write(root, cg, BW_LEVER_CPUS, "1-2"), 0);
        assert_string_equal(get(t, "cpuset/" CG "/cpuset.cpus"), "1-2");

        /* Siblings: db 2048 shares = 200, batch idle = 1. */
        assert_int_equal(bw_lever_sibling_weights(root, cg, &sum, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(sum, 201);
        bw_cg_free(cg);

        /* A group with no cpuset directory: the lever is not there. */
        put(t, "cpu/other.slice/cpu.cfs_quota_us", "-1\n");
        put(t, "cpu/other.slice/cpu.cfs_period_us", "100000\n");
        put(t, "cpu/other.slice/cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
        assert_int_equal(bw_cg_open(root, "other.slice", &cg), 0);
        assert_int_equal(bw_lever_read(root, cg, BW_LEVER_CPUS, b, sizeof(b)), -EOPNOTSUPP);
        assert_int_equal(bw_lever_write(root, cg, BW_LEVER_CPUS, "0"), -EOPNOTSUPP);
        /* No cpu.idle file (a kernel before 5.15): not there either. */
        assert_int_equal(bw_lever_read(root, cg, BW_LEVER_IDLE, b, sizeof(b)), -EOPNOTSUPP);
        bw_cg_free(cg);
        bw_cg_root_free(root);
        tree_free(t);
}

static void test_read_write_v1_freezer(void **state) {
        char *t = tree_new();
        struct bw_cg_root *root = NULL;
        struct bw_cg *cg = NULL;
        char b[BW_LEVER_VALUE_MAX];

        put(t, "cpu/" CG "/cpu.cfs_quota_us", "-1\n");
        put(t, "cpu/" CG "/cpu.cfs_period_us", "100000\n");
        put(t, "cpu/" CG "/cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
        put(t, "freezer/" CG "/freezer.state", "THAWED\n");
        assert_int_equal(bw_cg_root_open_dir(t, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_V1);
        assert_int_equal(bw_cg_open(root, CG, &cg), 0);
        assert_int_equal(bw_lever_read(root, cg, BW_LEVER_FREEZE, b, sizeof(b)), 0);
        assert_string_equal(b, "THAWED");
        assert_int_equal(bw_lever_write(root, cg, BW_LEVER_FREEZE, "FROZEN"), 0);
        assert_string_equal(get(t, "freezer/" CG "/freezer.state"), "FROZEN");
        assert_int_equal(bw_lever_read(root, cg, BW_LEVER_CPUS, b, sizeof(b)), -EOPNOTSUPP);
        bw_cg_free(cg);
        bw_cg_root_free(root);
        tree_free(t);
}

static void test_v2(void **state) {
        char *t = tree_new();
        struct bw_cg_root *root = NULL;
        struct bw_cg *cg = NULL;
        char b[BW_LEVER_VALUE_MAX];

        put(t, "cgroup.controllers", "cpuset cpu\n");
        put(t, CG "/cpu.max", "max 100000\n");
        put(t, CG "/cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\n");
        put(t, CG "/cpu.weight", "100\n");
        put(t, CG "/cgroup.freeze", "0\n");
        assert_int_equal(bw_cg_root_open_dir(t, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_V2);
        assert_int_equal(bw_cg_open(root, CG, &cg), 0);
        assert_int_equal(bw_lever_read(root, cg, BW_LEVER_WEIGHT, b, sizeof(b)), 0);
        assert_string_equal(b, "100");
        assert_int_equal(bw_lever_write(root, cg, BW_LEVER_WEIGHT, "10000"), 0);
        assert_string_equal(get(t, CG "/cpu.weight"), "10000");
        /* No cpuset controller enabled for this group. */
        assert_int_equal(bw_lever_read(root, cg, BW_LEVER_CPUS, b, sizeof(b)), -EOPNOTSUPP);
        bw_cg_free(cg);
        bw_cg_root_free(root);
        tree_free(t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names_and_files),
                cmocka_unit_test(test_native),
                cmocka_unit_test(test_read_write_hybrid),
                cmocka_unit_test(test_read_write_v1_freezer),
                cmocka_unit_test(test_v2),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
