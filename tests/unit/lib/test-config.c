/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/config/config.h"
#include "bwgov/util/macro.h"
#include "bwgov/config/config-dropin.h"
#include "bwgov/config/config-prefix.h"
#include "bwgov/config/config-source.h"

#define PCT(x) ((uint64_t) ((x) * 10000))       /* whole percent -> µs/s */
#define MSEC(x) ((uint64_t) (x) * USEC_PER_MSEC)
#define SEC(x) ((uint64_t) (x) * USEC_PER_SEC)

/* ---- temp trees standing in for /usr/lib/bwgov, /run/bwgov, /etc/bwgov ---- */

struct tree {
        char root[64];
        char dir_usr[96], dir_run[96], dir_etc[96];
        const char *dirs[4];
};

static void tree_init(struct tree *t) {
        memset(t, 0, sizeof(*t));
        strcpy(t->root, "/tmp/bwgov-test-config-XXXXXX");
        assert_non_null(mkdtemp(t->root));
        snprintf(t->dir_usr, sizeof(t->dir_usr), "%s/usr-lib", t->root);
        snprintf(t->dir_run, sizeof(t->dir_run), "%s/run", t->root);
        snprintf(t->dir_etc, sizeof(t->dir_etc), "%s/etc", t->root);
        t->dirs[0] = t->dir_usr;
        t->dirs[1] = t->dir_run;
        t->dirs[2] = t->dir_etc;
        t->dirs[3] = NULL;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path) < 0 ? -1 : 0;
}

static void tree_done(struct tree *t) {
        assert_int_equal(nftw(t->root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void mkdir_parents(const char *path) {
        char buf[PATH_MAX];

        assert_true(strlen(path) < sizeof(buf));
        strcpy(buf, path);
        for (char *p = buf + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        assert_true(mkdir(buf, 0755) == 0 || errno == EEXIST);
                        *p = '/';
                }
}

/* rel is relative to the tree root: "etc/web.slice.d/10-a.conf". */
static void put(const struct tree *t, const char *rel, const char *content) {
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", t->root, rel);
        mkdir_parents(path);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(content, 1, strlen(content), f), strlen(content));
        assert_int_equal(fclose(f), 0);
}

static void put_bytes(const struct tree *t, const char *rel, const char *content, size_t len) {
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", t->root, rel);
        mkdir_parents(path);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(content, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
}

static void link_to(const struct tree *t, const char *rel, const char *target) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", t->root, rel);
        mkdir_parents(path);
        assert_int_equal(symlink(target, path), 0);
}

static void make_dir(const struct tree *t, const char *rel) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s/", t->root, rel);
        mkdir_parents(path);
}

/* Load; on failure return the error string with the tree root replaced by
 * "ROOT" in *ret_msg. */
static int load(const struct tree *t, struct bw_config *c, char **ret_msg) {
        struct bw_config_error e = { 0 };
        int r;

        r = bw_config_load(t->dirs, c, &e);
        if (r < 0 && ret_msg) {
                _cleanup_free_ char *s = bw_config_error_to_string(&e);
                size_t n = strlen(t->root), len = 0;
                char *out = NULL;
                FILE *f;

                assert_non_null(s);
                f = open_memstream(&out, &len);
                assert_non_null(f);
                for (const char *p = s; *p;) {
                        if (strncmp(p, t->root, n) == 0) {
                                fputs("ROOT", f);
                                p += n;
                        } else
                                fputc(*p++, f);
                }
                assert_int_equal(fclose(f), 0);
                *ret_msg = out;
        }
        if (r < 0)
                bw_config_error_done(&e);
        else {
                /* Success leaves the error alone. */
                assert_null(e.file);
                assert_null(e.message);
        }
        return r;
}

static void assert_load_error(const struct tree *t, int expected_r, const char *expected_msg) {
        struct bw_config c = { 0 };
        char *msg = NULL;
        int r;

        r = load(t, &c, &msg);
        if (r >= 0)
                bw_config_done(&c);
        assert_int_equal(r, expected_r);
        assert_non_null(msg);
        assert_string_equal(msg, expected_msg);
        free(msg);
        /* Untouched on failure. */
        assert_null(c.units);
        assert_int_equal(c.n_units, 0);
        assert_int_equal(c.global.interval_usec, 0);
}

static const char *fixture_dir(void) {
        const char *d = getenv("BWGOV_FIXTURES");

        assert_non_null(d);
        return d;
}

static void test_enums(void **state) {
        assert_int_equal(bw_mode_from_string("off"), BW_MODE_OFF);
        assert_int_equal(bw_mode_from_string("observe"), BW_MODE_OBSERVE);
        assert_int_equal(bw_mode_from_string("burst"), BW_MODE_BURST);
        assert_int_equal(bw_mode_from_string("elastic"), BW_MODE_ELASTIC);
        assert_int_equal(bw_mode_from_string("Elastic"), _BW_MODE_INVALID);
        assert_int_equal(bw_mode_from_string(""), _BW_MODE_INVALID);
        assert_int_equal(bw_mode_from_string(NULL), _BW_MODE_INVALID);
        for (int m = 0; m < _BW_MODE_MAX; m++)
                assert_int_equal(bw_mode_from_string(bw_mode_to_string((enum bw_mode) m)), m);
        assert_null(bw_mode_to_string(_BW_MODE_MAX));
        assert_null(bw_mode_to_string(_BW_MODE_INVALID));

        assert_int_equal(bw_kernel_check_from_string("off"), BW_KERNEL_CHECK_OFF);
        assert_int_equal(bw_kernel_check_from_string("warn"), BW_KERNEL_CHECK_WARN);
        assert_int_equal(bw_kernel_check_from_string("strict"), BW_KERNEL_CHECK_STRICT);
        assert_int_equal(bw_kernel_check_from_string("yes"), _BW_KERNEL_CHECK_INVALID);
        for (int k = 0; k < _BW_KERNEL_CHECK_MAX; k++)
                assert_int_equal(bw_kernel_check_from_string(bw_kernel_check_to_string((enum bw_kernel_check) k)), k);
        assert_null(bw_kernel_check_to_string(_BW_KERNEL_CHECK_MAX));

        for (int k = 0; k < _BW_CLASS_MAX; k++)
                assert_int_equal(bw_class_from_string(bw_class_to_string((enum bw_class) k)), k);
        assert_int_equal(bw_class_from_string("best_effort"), _BW_CLASS_INVALID);
        for (int k = 0; k < _BW_CONTENTION_MAX; k++)
                assert_int_equal(bw_contention_from_string(bw_contention_to_string((enum bw_contention) k)), k);

        /* ParkAtBaseline=: auto, or any boolean. */
        for (int k = 0; k < _BW_PARK_MAX; k++)
                assert_int_equal(bw_park_from_string(bw_park_to_string((enum bw_park) k)), k);
        assert_int_equal(bw_park_from_string("on"), BW_PARK_YES);
        assert_int_equal(bw_park_from_string("0"), BW_PARK_NO);
        assert_int_equal(bw_park_from_string("Auto"), _BW_PARK_INVALID);
        assert_int_equal(bw_park_from_string(""), _BW_PARK_INVALID);
        assert_int_equal(bw_park_from_string(NULL), _BW_PARK_INVALID);
        assert_null(bw_park_to_string(_BW_PARK_MAX));
}

/* bw_unit_config_copy() duplicates every string and copies the rest;
 * bw_unit_config_done() frees one copy without touching the other. */
static void test_unit_config_copy(void **state) {
        struct bw_unit_config src = {
                .name = (char *) "web.slice",
                .cgroup = (char *) "machine.slice/web.scope",
                .mode = BW_MODE_BURST,
                .has_mode = true,
                .cpu_quota = PCT(250),
                .cpu_quota_max = PCT(400),
                .cpu_burst_max_usec = MSEC(50),
                .has_cpu_burst_max = true,
                .credit_max_usec = SEC(30),
                .target_throttle = PCT(1),
                .target_pressure = PCT(5),
                .priority = -7,
                .interval_usec = MSEC(500),
                .active_interval_usec = MSEC(250),
                .cpu_quota_source = (char *) "/etc/bwgov/web.slice.d/10-a.conf:3",
        };
        struct bw_unit_config copy, untouched = { .priority = 42 };

        assert_int_equal(bw_unit_config_copy(&src, &copy), 0);
        assert_ptr_not_equal(copy.name, src.name);
        assert_ptr_not_equal(copy.cgroup, src.cgroup);
        assert_ptr_not_equal(copy.cpu_quota_source, src.cpu_quota_source);
        assert_string_equal(copy.name, src.name);
        assert_string_equal(copy.cgroup, src.cgroup);
        assert_string_equal(copy.cpu_quota_source, src.cpu_quota_source);
        /* Everything but the three strings is copied as it is. */
        assert_int_equal(copy.mode, src.mode);
        assert_true(copy.has_mode);
        assert_int_equal(copy.cpu_quota, src.cpu_quota);
        assert_int_equal(copy.cpu_quota_max, src.cpu_quota_max);
        assert_int_equal(copy.cpu_burst_max_usec, src.cpu_burst_max_usec);
        assert_true(copy.has_cpu_burst_max);
        assert_int_equal(copy.credit_max_usec, src.credit_max_usec);
        assert_int_equal(copy.target_throttle, src.target_throttle);
        assert_int_equal(copy.target_pressure, src.target_pressure);
        assert_int_equal(copy.priority, src.priority);
        assert_int_equal(copy.interval_usec, src.interval_usec);
        assert_int_equal(copy.active_interval_usec, src.active_interval_usec);

        bw_unit_config_done(&copy);
        assert_null(copy.name);
        assert_null(copy.cgroup);
        assert_null(copy.cpu_quota_source);
        assert_int_equal(copy.cpu_quota, 0);
        assert_int_equal(copy.priority, 0);
        bw_unit_config_done(&copy);     /* done twice: nothing left to free */
        bw_unit_config_done(NULL);

        /* Unset strings stay unset. */
        src.cgroup = NULL;
        src.cpu_quota_source = NULL;
        assert_int_equal(bw_unit_config_copy(&src, &copy), 0);
        assert_string_equal(copy.name, "web.slice");
        assert_null(copy.cgroup);
        assert_null(copy.cpu_quota_source);
        bw_unit_config_done(&copy);

        assert_int_equal(bw_unit_config_copy(NULL, &untouched), -EINVAL);
        assert_int_equal(untouched.priority, 42);
        assert_int_equal(bw_unit_config_copy(&src, NULL), -EINVAL);
}

static void test_error_to_string(void **state) {
        struct bw_config_error e = {
                .file = (char *) "/etc/bwgov/web.slice.d/10-a.conf",
                .line = 3,
                .key = (char *) "CPUQuota",
                .message = (char *) "expected a CPU percentage like 250%",
        };
        char *s;

        s = bw_config_error_to_string(&e);
        assert_string_equal(s, "/etc/bwgov/web.slice.d/10-a.conf:3: CPUQuota: expected a CPU percentage like 250%");
        free(s);

        e.key = NULL;
        s = bw_config_error_to_string(&e);
        assert_string_equal(s, "/etc/bwgov/web.slice.d/10-a.conf:3: expected a CPU percentage like 250%");
        free(s);

        e.line = 0;
        s = bw_config_error_to_string(&e);
        assert_string_equal(s, "/etc/bwgov/web.slice.d/10-a.conf: expected a CPU percentage like 250%");
        free(s);

        e.file = NULL;
        e.key = (char *) "Mode";
        s = bw_config_error_to_string(&e);
        assert_string_equal(s, "Mode: expected a CPU percentage like 250%");
        free(s);

        assert_null(bw_config_error_to_string(NULL));
        bw_config_error_done(NULL);
}

/* ---- loading ---- */

static void assert_global_defaults(const struct bw_global_config *g) {
        assert_int_equal(g->interval_usec, SEC(1));
        assert_int_equal(g->mode, BW_MODE_ELASTIC);
        assert_int_equal(g->host_pressure_limit, PCT(40));
        assert_int_equal(g->pressure_window_usec, SEC(2));
        assert_int_equal(g->kernel_check, BW_KERNEL_CHECK_WARN);
        assert_true(g->restore_on_exit);
        assert_int_equal(g->history_size, 256);
        assert_int_equal(g->active_interval_usec, MSEC(250));
        assert_true(g->telemetry);
        assert_int_equal(g->metrics_interval_usec, SEC(10));
        assert_int_equal(g->park_at_baseline, BW_PARK_AUTO);
}

static void assert_unit_defaults(const struct bw_unit_config *u) {
        assert_null(u->cgroup);
        assert_false(u->has_mode);
        assert_int_equal(u->cpu_quota, 0);
        assert_null(u->cpu_quota_source);
        assert_int_equal(u->cpu_quota_max, 0);
        assert_false(u->has_cpu_burst_max);
        assert_int_equal(u->cpu_burst_max_usec, 0);
        assert_int_equal(u->credit_max_usec, SEC(30));
        assert_int_equal(u->target_throttle, PCT(1));
        assert_int_equal(u->target_pressure, PCT(5));
        assert_int_equal(u->target_wait_p99_usec, MSEC(50));
        assert_int_equal(u->priority, 0);
        assert_int_equal(u->interval_usec, 0);
}

static void test_default_dirs(void **state) {
        const char *const *d = bw_config_default_dirs();

        assert_non_null(d[0]);
        assert_non_null(d[1]);
        assert_non_null(d[2]);
        assert_null(d[3]);
        assert_string_equal(d[1], "/run/bwgov");
        for (size_t i = 0; i < 3; i++) {
                size_t n = strlen(d[i]);

                assert_true(n > 6);
                assert_string_equal(d[i] + n - 6, "/bwgov");
        }
        assert_non_null(strstr(d[0], "/lib/bwgov"));
        assert_non_null(strstr(d[2], "etc/bwgov"));
}

static void test_missing_dirs_give_defaults(void **state) {
        struct tree t;
        struct bw_config c = { 0 };

        tree_init(&t); /* none of usr-lib, run, etc exists */
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_global_defaults(&c.global);
        assert_int_equal(c.n_units, 0);
        assert_null(bw_config_find_unit(&c, "web.slice"));
        assert_int_equal(bw_unit_mode(&c, NULL), BW_MODE_ELASTIC);
        assert_int_equal(bw_unit_interval_usec(&c, NULL), SEC(1));
        bw_config_done(&c);
        bw_config_done(&c); /* idempotent */
        bw_config_done(NULL);
        tree_done(&t);
}

/* The static fixture tree tests/fixtures/config/layered/{usr-lib,run,etc}. */
static void test_fixture_layered(void **state) {
        char usr[PATH_MAX], run[PATH_MAX], etc[PATH_MAX], src[PATH_MAX + 64];
        const char *dirs[] = { usr, run, etc, NULL };
        struct bw_config_error e = { 0 };
        struct bw_config c = { 0 };
        const struct bw_unit_config *u;

        snprintf(usr, sizeof(usr), "%s/config/layered/usr-lib", fixture_dir());
        snprintf(run, sizeof(run), "%s/config/layered/run", fixture_dir());
        snprintf(etc, sizeof(etc), "%s/config/layered/etc", fixture_dir());

        assert_int_equal(bw_config_load(dirs, &c, &e), 0);

        /* etc/bwgov.conf wins whole: usr-lib's HistorySize=100 is not applied. */
        assert_int_equal(c.global.interval_usec, SEC(2));
        assert_int_equal(c.global.history_size, 256);
        /* bwgov.conf.d: etc/10-mode.conf replaced usr-lib/10-mode.conf,
         * run/20-pressure.conf applies after it. */
        assert_int_equal(c.global.mode, BW_MODE_BURST);
        assert_int_equal(c.global.host_pressure_limit, PCT(30));
        assert_int_equal(c.global.kernel_check, BW_KERNEL_CHECK_STRICT);
        assert_true(c.global.restore_on_exit); /* only in the replaced usr-lib/10-mode.conf */

        assert_int_equal(c.n_units, 3);
        assert_string_equal(c.units[0].name, "app.service");
        assert_string_equal(c.units[1].name, "mycontainer");
        assert_string_equal(c.units[2].name, "web.slice");

        u = bw_config_find_unit(&c, "web.slice");
        assert_ptr_equal(u, &c.units[2]);
        /* etc/web.slice.d/10-base.conf replaced usr-lib's (which set
         * CPUQuotaMax=300% and Priority=5); run's 20-runtime.conf sorts after it. */
        assert_int_equal(u->cpu_quota, PCT(150));
        snprintf(src, sizeof(src), "%s/web.slice.d/20-runtime.conf:3", run);
        assert_string_equal(u->cpu_quota_source, src);
        assert_int_equal(u->cpu_quota_max, 0);
        assert_int_equal(u->priority, 0);
        assert_true(u->has_cpu_burst_max);
        assert_int_equal(u->cpu_burst_max_usec, MSEC(20));
        assert_int_equal(bw_unit_mode(&c, u), BW_MODE_BURST);   /* global */

        u = bw_config_find_unit(&c, "app.service");
        assert_non_null(u);
        assert_true(u->has_mode);
        assert_int_equal(bw_unit_mode(&c, u), BW_MODE_OBSERVE);
        assert_int_equal(u->interval_usec, MSEC(500));
        assert_int_equal(bw_unit_interval_usec(&c, u), MSEC(500));
        /* The global ActiveInterval= (250ms default) applies, under the unit's Interval=. */
        assert_int_equal(bw_unit_active_interval_usec(&c, u), MSEC(250));
        {
                struct bw_unit_config copy = *u;

                copy.active_interval_usec = SEC(1);
                assert_int_equal(bw_unit_active_interval_usec(&c, &copy), MSEC(500));  /* never above Interval= */
        }

        u = bw_config_find_unit(&c, "mycontainer");
        assert_non_null(u);
        assert_string_equal(u->cgroup, "machine.slice/libpod-abc.scope");
        assert_int_equal(u->cpu_quota, PCT(50));
        assert_int_equal(bw_unit_interval_usec(&c, u), SEC(2));

        assert_null(bw_config_find_unit(&c, "web"));
        assert_null(bw_config_find_unit(&c, "web.slice.d"));
        assert_null(bw_config_find_unit(&c, "zzz.slice"));
        assert_null(bw_config_find_unit(&c, NULL));
        bw_config_done(&c);
}

static void test_main_config_highest_wins(void **state) {
        struct tree t;
        struct bw_config c = { 0 };

        tree_init(&t);
        put(&t, "usr-lib/bwgov.conf", "[Governor]\nInterval=5s\nHistorySize=100\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.global.interval_usec, SEC(5));
        assert_int_equal(c.global.history_size, 100);
        bw_config_done(&c);

        /* A copy in /run replaces the one in /usr/lib entirely. */
        put(&t, "run/bwgov.conf", "[Governor]\nInterval=3s\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.global.interval_usec, SEC(3));
        assert_int_equal(c.global.history_size, 256);
        bw_config_done(&c);

        /* A copy in /etc replaces both, drop-ins from every dir apply on top. */
        put(&t, "etc/bwgov.conf", "[Governor]\nRestoreOnExit=no\n");
        put(&t, "usr-lib/bwgov.conf.d/50-a.conf", "[Governor]\nHistorySize=7\nInterval=4s\n");
        put(&t, "run/bwgov.conf.d/60-b.conf", "[Governor]\nHistorySize=8\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.global.interval_usec, SEC(4));
        assert_int_equal(c.global.history_size, 8);
        assert_false(c.global.restore_on_exit);
        bw_config_done(&c);
        tree_done(&t);
}

/* A masked /etc copy hides the lower ones: no main file at all. */
static void test_main_config_masked(void **state) {
        struct tree t;
        struct bw_config c = { 0 };

        tree_init(&t);
        put(&t, "usr-lib/bwgov.conf", "[Governor]\nInterval=5s\n");
        link_to(&t, "etc/bwgov.conf", "/dev/null");
        put(&t, "run/bwgov.conf.d/10-a.conf", "[Governor]\nHistorySize=9\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.global.interval_usec, SEC(1));
        assert_int_equal(c.global.history_size, 9);
        bw_config_done(&c);
        tree_done(&t);
}

static void test_dropin_override_and_order(void **state) {
        struct tree t;
        struct bw_config c = { 0 };
        const struct bw_unit_config *u;
        char src[PATH_MAX];

        tree_init(&t);
        /* Lexical order: 10-a then 20-b; later wins key by key. */
        put(&t, "usr-lib/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=100%\nPriority=3\nTargetThrottle=2%\n");
        put(&t, "usr-lib/web.slice.d/20-b.conf", "[Bandwidth]\nCPUQuota=200%\n");
        /* Sorts by file name, not by directory: etc's 15 comes between. */
        put(&t, "etc/web.slice.d/15-c.conf", "[Bandwidth]\nCPUQuota=150%\nPriority=4\n");
        /* The same name in a later directory replaces the earlier file. */
        put(&t, "run/web.slice.d/10-a.conf", "[Bandwidth]\n\nCreditMax=1min\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        u = bw_config_find_unit(&c, "web.slice");
        assert_non_null(u);
        assert_int_equal(u->cpu_quota, PCT(200));
        snprintf(src, sizeof(src), "%s/web.slice.d/20-b.conf:2", t.dir_usr);
        assert_string_equal(u->cpu_quota_source, src);
        assert_int_equal(u->priority, 4);
        assert_int_equal(u->target_throttle, PCT(1)); /* usr-lib's 10-a.conf is gone */
        assert_int_equal(u->credit_max_usec, SEC(60));
        bw_config_done(&c);

        /* Within one file the last assignment wins. */
        put(&t, "etc/web.slice.d/99-z.conf", "[Bandwidth]\nPriority=-7\nPriority=8\n[Bandwidth]\nPriority=9\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        u = bw_config_find_unit(&c, "web.slice");
        assert_int_equal(u->priority, 9);
        bw_config_done(&c);
        tree_done(&t);
}

/* Prefix directories, systemd's way: "a-.scope.d" applies to every scope
 * whose name starts with "a-"; per file name the highest-priority
 * directory wins, within one the most specific name. */
static void test_prefix_dirs(void **state) {
        struct bw_unit_config i = { 0 };
        struct bw_config_error e = { 0 };
        struct tree t;
        struct bw_config c = { 0 };
        const struct bw_unit_config *u;

        tree_init(&t);
        put(&t, "usr-lib/cri-.scope.d/10-a.conf", "[Bandwidth]\nCreditMax=10s\nPriority=1\n");
        put(&t, "usr-lib/cri-containerd-.scope.d/10-a.conf", "[Bandwidth]\nCreditMax=20s\n");
        put(&t, "usr-lib/cri-containerd-.scope.d/20-b.conf", "[Bandwidth]\nCPUQuotaMax=300%\n");
        put(&t, "run/cri-.scope.d/20-b.conf", "[Bandwidth]\nCPUQuotaMax=150%\n");
        put(&t, "etc/cri-containerd-abc.scope.d/30-c.conf", "[Bandwidth]\nTargetThrottle=3%\n");
        put(&t, "etc/libpod-.scope.d/10-a.conf", "[Bandwidth]\nCreditMax=5s\n");
        put(&t, "etc/-.slice.d/10-a.conf", "[Bandwidth]\nCreditMax=7s\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        /* Prefix directories are no units; "-.slice" is the root slice. */
        assert_int_equal(c.n_prefixes, 3);
        assert_string_equal(c.prefixes[0], "cri-.scope");
        assert_string_equal(c.prefixes[1], "cri-containerd-.scope");
        assert_string_equal(c.prefixes[2], "libpod-.scope");
        assert_null(bw_config_find_unit(&c, "libpod-.scope"));
        assert_non_null(bw_config_find_unit(&c, "-.slice"));
        /* A unit of its own name reads its prefixes' drop-ins too: usr-lib's
         * 10-a.conf of cri-containerd- replaces cri-'s whole (its Priority=
         * gone), run's 20-b.conf of cri- replaces usr-lib's of
         * cri-containerd-. */
        u = bw_config_find_unit(&c, "cri-containerd-abc.scope");
        assert_non_null(u);
        assert_int_equal(u->credit_max_usec, SEC(20));
        assert_int_equal(u->priority, 0);
        assert_int_equal(u->cpu_quota_max, PCT(150));
        assert_int_equal(u->target_throttle, PCT(3));

        assert_true(bw_config_prefix_matches(&c, "libpod-0f1e.scope"));
        assert_true(bw_config_prefix_matches(&c, "cri-containerd-0f1e.scope"));
        assert_true(bw_config_prefix_matches(&c, "cri-o-1.scope"));
        assert_false(bw_config_prefix_matches(&c, "libpod-0f1e.service"));     /* another type */
        assert_false(bw_config_prefix_matches(&c, "libpod.scope"));
        assert_false(bw_config_prefix_matches(&c, "libpodx-1.scope"));
        assert_false(bw_config_prefix_matches(&c, "libpod-.scope"));           /* the prefix itself */
        assert_false(bw_config_prefix_matches(&c, "xlibpod-1.scope"));

        /* An instance: its prefixes' drop-ins, governing the cgroup found. */
        assert_int_equal(bw_config_load_instance(t.dirs, "cri-containerd-0f1e.scope",
                                                 "kubepods.slice/cri-containerd-0f1e.scope", &i, &e), 1);
        assert_string_equal(i.name, "cri-containerd-0f1e.scope");
        assert_string_equal(i.cgroup, "kubepods.slice/cri-containerd-0f1e.scope");
        assert_int_equal(i.credit_max_usec, SEC(20));
        assert_int_equal(i.cpu_quota_max, PCT(150));
        assert_int_equal(i.target_throttle, PCT(1));          /* the default: abc's own is not its */
        bw_unit_config_done(&i);
        assert_int_equal(bw_config_load_instance(t.dirs, "libpod-1.scope", "machine.slice/libpod-1.scope", &i, &e),
                         1);
        assert_int_equal(i.credit_max_usec, SEC(5));
        bw_unit_config_done(&i);
        /* Every drop-in masked: none. */
        put(&t, "etc/libpod-.scope.d/10-a.conf", "");
        assert_int_equal(bw_config_load_instance(t.dirs, "libpod-1.scope", "m/libpod-1.scope", &i, &e), 0);
        bw_config_done(&c);

        /* A prefix directory naming one cgroup is refused where it says so. */
        put(&t, "etc/libpod-.scope.d/10-a.conf", "[Bandwidth]\n\nCgroup=/machine.slice\n");
        assert_load_error(&t, -EINVAL, "ROOT/etc/libpod-.scope.d/10-a.conf:3: Cgroup: libpod-.scope is a prefix "
                          "directory, for every unit whose name starts with its prefix: it cannot name one cgroup");
        tree_done(&t);
}

static void test_masking(void **state) {
        struct tree t;
        struct bw_config c = { 0 };
        const struct bw_unit_config *u;

        tree_init(&t);
        put(&t, "usr-lib/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=100%\n");
        put(&t, "usr-lib/web.slice.d/20-b.conf", "[Bandwidth]\nPriority=5\n");
        put(&t, "usr-lib/app.service.d/10-a.conf", "[Bandwidth]\nCPUQuota=100%\n");
        put(&t, "usr-lib/db.service.d/10-a.conf", "[Bandwidth]\nCPUQuota=100%\n");
        put(&t, "usr-lib/bwgov.conf.d/10-a.conf", "[Governor]\nHistorySize=5\n");
        /* Mask by symlink to /dev/null. */
        link_to(&t, "etc/web.slice.d/20-b.conf", "/dev/null");
        /* Mask every file of app.service: the unit is not configured. */
        link_to(&t, "run/app.service.d/10-a.conf", "/dev/null");
        /* An empty file masks too (systemd's null_or_empty()). */
        put(&t, "etc/db.service.d/10-a.conf", "");
        /* A symlink whose target resolves to /dev/null through another link. */
        link_to(&t, "etc/null", "/dev/null");
        link_to(&t, "etc/bwgov.conf.d/10-a.conf", "../null");
        assert_int_equal(load(&t, &c, NULL), 0);

        assert_int_equal(c.global.history_size, 256);
        assert_int_equal(c.n_units, 1);
        u = bw_config_find_unit(&c, "web.slice");
        assert_non_null(u);
        assert_int_equal(u->cpu_quota, PCT(100));
        assert_int_equal(u->priority, 0);
        assert_null(bw_config_find_unit(&c, "app.service"));
        assert_null(bw_config_find_unit(&c, "db.service"));
        bw_config_done(&c);

        /* A unit with only a section header is configured with defaults. */
        put(&t, "etc/empty.slice.d/10-a.conf", "[Bandwidth]\n");
        /* An empty directory is not a unit. */
        make_dir(&t, "etc/nothing.slice.d");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.n_units, 2);
        u = bw_config_find_unit(&c, "empty.slice");
        assert_non_null(u);
        assert_unit_defaults(u);
        assert_null(bw_config_find_unit(&c, "nothing.slice"));
        bw_config_done(&c);
        tree_done(&t);
}

static void test_empty_assignment_resets(void **state) {
        struct tree t;
        struct bw_config c = { 0 };
        const struct bw_unit_config *u;

        tree_init(&t);
        put(&t, "usr-lib/web.slice.d/10-a.conf",
            "[Bandwidth]\n"
            "Mode=observe\n"
            "CPUQuota=100%\n"
            "CPUQuotaMax=300%\n"
            "CPUBurstMax=0\n"
            "CreditMax=1h\n"
            "TargetThrottle=3%\n"
            "TargetPressure=7%\n"
            "Priority=12\n"
            "Interval=5s\n"
            "Cgroup=/foo.slice\n");
        put(&t, "etc/web.slice.d/20-b.conf",
            "[Bandwidth]\n"
            "Mode=\n"
            "CPUQuota=\n"
            "CPUQuotaMax=\n"
            "CPUBurstMax=\n"
            "CreditMax=\n"
            "TargetThrottle=\n"
            "TargetPressure=   \n"
            "Priority=\n"
            "Interval= ; reset\n"
            "Cgroup=\n");
        put(&t, "usr-lib/bwgov.conf",
            "[Governor]\nInterval=3s\nMode=off\nHostPressureLimit=1%\nPressureWindow=4s\n"
            "KernelCheck=off\nRestoreOnExit=no\nHistorySize=1\n");
        put(&t, "etc/bwgov.conf.d/10-reset.conf",
            "[Governor]\nInterval=\nMode=\nHostPressureLimit=\nPressureWindow=\n"
            "KernelCheck=\nRestoreOnExit=\nHistorySize=\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_global_defaults(&c.global);
        u = bw_config_find_unit(&c, "web.slice");
        assert_non_null(u);
        assert_string_equal(u->name, "web.slice");
        assert_unit_defaults(u);
        bw_config_done(&c);

        /* Reset, then set again in the same file. */
        put(&t, "etc/web.slice.d/30-c.conf", "[Bandwidth]\nCPUQuota=\nCPUQuota=75%\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        u = bw_config_find_unit(&c, "web.slice");
        assert_int_equal(u->cpu_quota, PCT(75));
        bw_config_done(&c);
        tree_done(&t);
}

static void test_unit_suffixes(void **state) {
        static const char *const names[] = {
                "web.slice", "app.service", "foo.scope", "mycontainer", "a.b.c", "x", "sys-fs.mount",
                "getty@tty1.service", "name with space", ".hidden", "...",
        };
        struct tree t;
        struct bw_config c = { 0 };

        tree_init(&t);
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                char rel[PATH_MAX], content[64];

                snprintf(rel, sizeof(rel), "%s/%s.d/10-x.conf", i % 2 ? "etc" : "usr-lib", names[i]);
                snprintf(content, sizeof(content), "[Bandwidth]\nPriority=%zu\n", i);
                put(&t, rel, content);
        }
        /* Not unit directories: the global drop-in dir, a file named *.d, a
         * directory without the suffix. */
        put(&t, "etc/bwgov.conf.d/10-a.conf", "[Governor]\nHistorySize=3\n");
        put(&t, "etc/file.d", "[Bandwidth]\nPriority=1\n");
        put(&t, "etc/nodsuffix/10-x.conf", "[Bandwidth]\nPriority=1\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.n_units, ELEMENTSOF(names));
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                const struct bw_unit_config *u = bw_config_find_unit(&c, names[i]);

                print_message("# unit %s\n", names[i]);
                assert_non_null(u);
                assert_string_equal(u->name, names[i]);
                assert_int_equal(u->priority, (int64_t) i);
        }
        for (size_t i = 1; i < c.n_units; i++)
                assert_true(strcmp(c.units[i - 1].name, c.units[i].name) < 0);
        assert_null(bw_config_find_unit(&c, "bwgov.conf"));
        assert_null(bw_config_find_unit(&c, "file"));
        assert_int_equal(c.global.history_size, 3);
        bw_config_done(&c);
        tree_done(&t);
}

static void test_invalid_unit_names(void **state) {
        static const char *const dirs[] = { ".d", "..d", "...d", "bad\001name.d", "tab\tname.d" };

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                struct tree t;
                char rel[PATH_MAX], expected[PATH_MAX];

                tree_init(&t);
                put(&t, "usr-lib/ok.slice.d/10-a.conf", "[Bandwidth]\n");
                snprintf(rel, sizeof(rel), "run/%s/10-a.conf", dirs[i]);
                put(&t, rel, "[Bandwidth]\n");
                snprintf(expected, sizeof(expected),
                         "ROOT/run/%s: invalid unit name, expected <unit>.d with a unit name that is not empty, "
                         "\".\" or \"..\" and has no control characters", dirs[i]);
                assert_load_error(&t, -EINVAL, expected);
                tree_done(&t);
        }
}

struct error_case {
        const char *rel;
        const char *content;
        const char *message;
};

static void run_error_cases(const struct error_case *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                struct tree t;

                print_message("# error case %zu: %s\n", i, cases[i].message);
                tree_init(&t);
                put(&t, cases[i].rel, cases[i].content);
                assert_load_error(&t, -EINVAL, cases[i].message);
                tree_done(&t);
        }
}

static void test_error_messages(void **state) {
        static const struct error_case cases[] = {
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=abc\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: CPUQuota: expected a CPU percentage like 250%" },
                { "etc/web.slice.d/10-a.conf", "# comment\n\n; other comment\n[Bandwidth]\n\nCPUQuota=2.5\n",
                  "ROOT/etc/web.slice.d/10-a.conf:6: CPUQuota: expected a CPU percentage like 250%" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=0%\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: CPUQuota: value out of range, expected a CPU percentage "
                  "above 0% and at most 1000000%, like 250%" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=1000000.001%\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: CPUQuota: value out of range, expected a CPU percentage "
                  "above 0% and at most 1000000%, like 250%" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuotaMax=lots\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: CPUQuotaMax: expected a CPU percentage like 400%" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nMode=fast\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: Mode: expected one of off, observe, burst, elastic" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUBurstMax=-1ms\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: CPUBurstMax: value out of range, expected a time span like 50ms" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUBurstMax=50 ms x\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: CPUBurstMax: expected a time span like 50ms" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCreditMax=25h\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: CreditMax: value out of range, expected a CPU time span "
                  "between 0 and 24h, like 30s" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nTargetThrottle=101%\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: TargetThrottle: value out of range, expected a percentage "
                  "between 0% and 100%, like 1%" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nTargetPressure=5\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: TargetPressure: expected a percentage between 0% and 100%, "
                  "like 5%" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nPriority=1001\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: Priority: value out of range, expected an integer between "
                  "-1000 and 1000" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nPriority=high\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: Priority: expected an integer between -1000 and 1000" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nInterval=50ms\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: Interval: value out of range, expected a time span between "
                  "100ms and 1h, like 1s" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCgroup=/a/../b\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: Cgroup: expected a cgroup path like /machine.slice/foo.scope, "
                  "without empty, \".\" or \"..\" components" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQouta=200%\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: CPUQouta: unknown key in section [Bandwidth]" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\ncpuquota=200%\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: cpuquota: unknown key in section [Bandwidth]" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nHistorySize=5\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: HistorySize: unknown key in section [Bandwidth]" },
                { "etc/web.slice.d/10-a.conf", "[Bandwith]\nCPUQuota=200%\n",
                  "ROOT/etc/web.slice.d/10-a.conf:1: unknown section [Bandwith], expected [Bandwidth]" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=200%\n[Governor]\n",
                  "ROOT/etc/web.slice.d/10-a.conf:3: unknown section [Governor], expected [Bandwidth]" },
                { "etc/web.slice.d/10-a.conf", "CPUQuota=200%\n[Bandwidth]\n",
                  "ROOT/etc/web.slice.d/10-a.conf:1: CPUQuota: assignment outside of a section, expected "
                  "[Bandwidth] first" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: syntax error, expected [Section], Key=value or a comment" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\n[Bandwidth\nCPUQuota=5%\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: syntax error, expected [Section], Key=value or a comment" },
                /* The first problem in the file is reported. */
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=200%\nbroken line\nMode=fast\n",
                  "ROOT/etc/web.slice.d/10-a.conf:3: syntax error, expected [Section], Key=value or a comment" },
                { "etc/web.slice.d/10-a.conf", "[Bandwidth]\nMode=fast\nbroken line\n",
                  "ROOT/etc/web.slice.d/10-a.conf:2: Mode: expected one of off, observe, burst, elastic" },
                { "etc/bwgov.conf", "[Governor]\nInterval=2h\n",
                  "ROOT/etc/bwgov.conf:2: Interval: value out of range, expected a time span between 100ms and 1h, "
                  "like 1s" },
                { "etc/bwgov.conf", "[Governor]\nMode=elastic\nMode=Elastic\n",
                  "ROOT/etc/bwgov.conf:3: Mode: expected one of off, observe, burst, elastic" },
                { "etc/bwgov.conf", "[Governor]\nHostPressureLimit=40\n",
                  "ROOT/etc/bwgov.conf:2: HostPressureLimit: expected a percentage between 0% and 100%, like 40%" },
                { "etc/bwgov.conf", "[Governor]\nPressureWindow=100ms\n",
                  "ROOT/etc/bwgov.conf:2: PressureWindow: value out of range, expected a time span between 500ms "
                  "and 10s, like 2s" },
                { "etc/bwgov.conf", "[Governor]\nMetricsInterval=50ms\n",
                  "ROOT/etc/bwgov.conf:2: MetricsInterval: value out of range, expected a time span between 100ms "
                  "and 1h, like 10s" },
                { "etc/bwgov.conf", "[Governor]\nMetricsInterval=61min\n",
                  "ROOT/etc/bwgov.conf:2: MetricsInterval: value out of range, expected a time span between 100ms "
                  "and 1h, like 10s" },
                { "etc/bwgov.conf", "[Governor]\nMetricsInterval=often\n",
                  "ROOT/etc/bwgov.conf:2: MetricsInterval: expected a time span between 100ms and 1h, like 10s" },
                { "etc/bwgov.conf", "[Governor]\nKernelCheck=yes\n",
                  "ROOT/etc/bwgov.conf:2: KernelCheck: expected one of off, warn, strict" },
                { "etc/bwgov.conf", "[Governor]\nRestoreOnExit=maybe\n",
                  "ROOT/etc/bwgov.conf:2: RestoreOnExit: expected a boolean like yes or no" },
                { "etc/bwgov.conf", "[Governor]\nParkAtBaseline=sometimes\n",
                  "ROOT/etc/bwgov.conf:2: ParkAtBaseline: expected auto, or a boolean like yes or no" },
                { "etc/bwgov.conf", "[Governor]\nHistorySize=0\n",
                  "ROOT/etc/bwgov.conf:2: HistorySize: value out of range, expected an integer between 1 and 65536" },
                { "etc/bwgov.conf", "[Governor]\nHistorySize=65537\n",
                  "ROOT/etc/bwgov.conf:2: HistorySize: value out of range, expected an integer between 1 and 65536" },
                { "etc/bwgov.conf", "[Governor]\nCPUQuota=200%\n",
                  "ROOT/etc/bwgov.conf:2: CPUQuota: unknown key in section [Governor]" },
                { "etc/bwgov.conf", "[Bandwidth]\n",
                  "ROOT/etc/bwgov.conf:1: unknown section [Bandwidth], expected [Governor]" },
                { "etc/bwgov.conf", "Interval=1s\n",
                  "ROOT/etc/bwgov.conf:1: Interval: assignment outside of a section, expected [Governor] first" },
                { "run/bwgov.conf.d/10-x.conf", "[Governor]\n\n\n\nInterval=1x\n",
                  "ROOT/run/bwgov.conf.d/10-x.conf:5: Interval: expected a time span between 100ms and 1h, like 1s" },
        };

        run_error_cases(cases, ELEMENTSOF(cases));
}

static void test_cross_field_quota_max(void **state) {
        struct tree t;
        struct bw_config c = { 0 };

        tree_init(&t);
        put(&t, "usr-lib/web.slice.d/10-a.conf", "[Bandwidth]\n\nCPUQuota=250%\n");
        put(&t, "etc/web.slice.d/20-b.conf", "[Bandwidth]\nPriority=1\nCPUQuotaMax=200%\n");
        assert_load_error(&t, -EINVAL,
                          "ROOT/etc/web.slice.d/20-b.conf:3: CPUQuotaMax: expected a CPU percentage not below "
                          "CPUQuota=250% (set at ROOT/usr-lib/web.slice.d/10-a.conf:3)");

        /* Equal is fine; only-max is fine (baseline adopted at run time). */
        put(&t, "etc/web.slice.d/20-b.conf", "[Bandwidth]\nCPUQuotaMax=250%\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.units[0].cpu_quota_max, PCT(250));
        bw_config_done(&c);

        put(&t, "usr-lib/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=12.5%\n");
        put(&t, "etc/web.slice.d/30-c.conf", "[Bandwidth]\nCPUQuotaMax=12.499%\n");
        assert_load_error(&t, -EINVAL,
                          "ROOT/etc/web.slice.d/30-c.conf:2: CPUQuotaMax: expected a CPU percentage not below "
                          "CPUQuota=12.5% (set at ROOT/usr-lib/web.slice.d/10-a.conf:2)");

        /* Resetting CPUQuota= removes the constraint. */
        put(&t, "etc/web.slice.d/40-d.conf", "[Bandwidth]\nCPUQuota=\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.units[0].cpu_quota, 0);
        assert_null(c.units[0].cpu_quota_source);
        assert_int_equal(c.units[0].cpu_quota_max, 124990);
        bw_config_done(&c);
        tree_done(&t);
}

static void test_broken_keeps_previous(void **state) {
        struct tree good, bad;
        struct bw_config c = { 0 }, snap;
        struct bw_config_error e = { 0 };
        char *msg = NULL;

        tree_init(&good);
        put(&good, "etc/bwgov.conf", "[Governor]\nInterval=3s\nMode=observe\n");
        put(&good, "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=200%\nCgroup=/web.slice\n");
        put(&good, "etc/app.service.d/10-a.conf", "[Bandwidth]\nPriority=-5\n");
        assert_int_equal(load(&good, &c, NULL), 0);
        snap = c;

        tree_init(&bad);
        put(&bad, "etc/bwgov.conf", "[Governor]\nInterval=4s\n");
        put(&bad, "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=300%\n");
        put(&bad, "etc/zzz.service.d/10-a.conf", "[Bandwidth]\nCPUQuota=300%\nPriority=x\n");
        assert_int_equal(load(&bad, &c, &msg), -EINVAL);
        assert_string_equal(msg, "ROOT/etc/zzz.service.d/10-a.conf:3: Priority: expected an integer between -1000 "
                                 "and 1000");
        free(msg);

        /* Nothing changed, not even the pointers. */
        assert_int_equal(c.global.interval_usec, snap.global.interval_usec);
        assert_int_equal(c.global.mode, BW_MODE_OBSERVE);
        assert_int_equal(c.global.host_pressure_limit, snap.global.host_pressure_limit);
        assert_int_equal(c.global.pressure_window_usec, snap.global.pressure_window_usec);
        assert_int_equal(c.global.kernel_check, snap.global.kernel_check);
        assert_int_equal(c.global.restore_on_exit, snap.global.restore_on_exit);
        assert_int_equal(c.global.history_size, snap.global.history_size);
        assert_ptr_equal(c.units, snap.units);
        assert_int_equal(c.n_units, 2);
        assert_string_equal(c.units[0].name, "app.service");
        assert_int_equal(c.units[0].priority, -5);
        assert_string_equal(c.units[1].name, "web.slice");
        assert_int_equal(c.units[1].cpu_quota, PCT(200));
        assert_string_equal(c.units[1].cgroup, "web.slice");
        assert_int_equal(c.global.interval_usec, SEC(3));

        /* Without an error struct too. */
        assert_int_equal(bw_config_load(bad.dirs, &c, NULL), -EINVAL);
        assert_ptr_equal(c.units, snap.units);

        /* A successful reload into a fresh struct, then swap. */
        put(&bad, "etc/zzz.service.d/10-a.conf", "[Bandwidth]\nCPUQuota=300%\n");
        {
                struct bw_config fresh = { 0 };

                assert_int_equal(bw_config_load(bad.dirs, &fresh, &e), 0);
                bw_config_done(&c);
                c = fresh;
        }
        assert_int_equal(c.global.interval_usec, SEC(4));
        assert_int_equal(c.n_units, 2);
        assert_null(e.message);
        bw_config_done(&c);
        tree_done(&good);
        tree_done(&bad);
}

static void test_broken_file_in_one_dir(void **state) {
        struct tree t;

        tree_init(&t);
        put(&t, "usr-lib/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=100%\n");
        put(&t, "usr-lib/web.slice.d/30-c.conf", "[Bandwidth]\nPriority=2\n");
        put(&t, "run/web.slice.d/20-b.conf", "[Bandwidth]\nCPUQuota=100%\nCPUBurstMax=fast\n");
        put(&t, "etc/web.slice.d/10-a.conf", "[Bandwidth]\nCPUQuota=150%\n");
        assert_load_error(&t, -EINVAL, "ROOT/run/web.slice.d/20-b.conf:3: CPUBurstMax: expected a time span like 50ms");

        /* A broken file that is replaced by a good one of the same name in a
         * later directory is never read. */
        put(&t, "etc/web.slice.d/20-b.conf", "[Bandwidth]\nCPUBurstMax=10ms\n");
        {
                struct bw_config c = { 0 };

                assert_int_equal(load(&t, &c, NULL), 0);
                assert_int_equal(c.units[0].cpu_burst_max_usec, MSEC(10));
                assert_int_equal(c.units[0].cpu_quota, PCT(150));
                bw_config_done(&c);
        }

        /* Same for a masked one. */
        put(&t, "usr-lib/web.slice.d/40-broken.conf", "garbage\n");
        assert_load_error(&t, -EINVAL,
                          "ROOT/usr-lib/web.slice.d/40-broken.conf:1: syntax error, expected [Section], Key=value or "
                          "a comment");
        link_to(&t, "run/web.slice.d/40-broken.conf", "/dev/null");
        {
                struct bw_config c = { 0 };

                assert_int_equal(load(&t, &c, NULL), 0);
                bw_config_done(&c);
        }
        tree_done(&t);
}

static void test_duplicate_unit_dirs_merge(void **state) {
        struct tree t;
        struct bw_config c = { 0 };
        const struct bw_unit_config *u;

        tree_init(&t);
        put(&t, "usr-lib/web.slice.d/10-vendor.conf", "[Bandwidth]\nCPUQuota=100%\nTargetPressure=10%\n");
        put(&t, "run/web.slice.d/50-runtime.conf", "[Bandwidth]\nCPUBurstMax=30ms\n");
        put(&t, "etc/web.slice.d/90-admin.conf", "[Bandwidth]\nCPUQuotaMax=300%\nMode=off\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.n_units, 1);
        u = &c.units[0];
        assert_string_equal(u->name, "web.slice");
        assert_int_equal(u->cpu_quota, PCT(100));
        assert_int_equal(u->target_pressure, PCT(10));
        assert_int_equal(u->cpu_burst_max_usec, MSEC(30));
        assert_true(u->has_cpu_burst_max);
        assert_int_equal(u->cpu_quota_max, PCT(300));
        assert_int_equal(bw_unit_mode(&c, u), BW_MODE_OFF);
        bw_config_done(&c);
        tree_done(&t);
}

/* Issue 17, finding 1: two units on one cgroup (one Cgroup= twice, a
 * directory symlinked to another, or Cgroup= naming another unit's cgroup)
 * would take each other's writes for someone else's: refused. */
static void test_one_unit_per_cgroup(void **state) {
        struct tree t;
        struct bw_config c = { 0 };

        tree_init(&t);
        put(&t, "etc/a.d/10-x.conf", "[Bandwidth]\nCgroup=/machine.slice/x.scope\n");
        put(&t, "etc/b.d/10-x.conf", "[Bandwidth]\nCPUQuotaMax=300%\n\nCgroup=machine.slice/x.scope/\n");
        assert_load_error(&t, -EINVAL, "ROOT/etc/b.d/10-x.conf:4: Cgroup: unit b would govern cgroup "
                          "/machine.slice/x.scope, which unit a governs (ROOT/etc/a.d/10-x.conf:2): one unit per cgroup");
        tree_done(&t);

        /* web.slice.d -> app.slice.d, whose drop-in names a cgroup. */
        tree_init(&t);
        put(&t, "etc/app.slice.d/10-x.conf", "[Bandwidth]\nCgroup=/srv.slice\n");
        link_to(&t, "etc/web.slice.d", "app.slice.d");
        assert_load_error(&t, -EINVAL, "ROOT/etc/web.slice.d/10-x.conf:2: Cgroup: unit web.slice would govern cgroup "
                          "/srv.slice, which unit app.slice governs (ROOT/etc/app.slice.d/10-x.conf:2): "
                          "one unit per cgroup");
        tree_done(&t);

        /* Cgroup= on another unit's cgroup by name: the Cgroup= line. */
        tree_init(&t);
        put(&t, "etc/srv.slice.d/10-x.conf", "[Bandwidth]\n");
        put(&t, "etc/zzz.d/10-x.conf", "[Bandwidth]\nCgroup=srv.slice\n");
        assert_load_error(&t, -EINVAL, "ROOT/etc/zzz.d/10-x.conf:2: Cgroup: unit zzz would govern cgroup "
                          "/srv.slice, which unit srv.slice governs (by its name): one unit per cgroup");
        put(&t, "etc/zzz.d/10-x.conf", "[Bandwidth]\nCgroup=srv.slice/zzz\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.n_units, 2);
        /* Where each names its cgroup, for the daemon's messages: read
         * again when asked, not kept in the unit. */
        {
                _cleanup_free_ char *first = NULL;

                assert_int_equal(bw_config_cgroup_named_at(t.dirs, "zzz", &first), 1);
                assert_non_null(strstr(first, "/etc/zzz.d/10-x.conf:2"));
                free(first);
                first = NULL;
                /* Found by its name: its first drop-in. */
                assert_int_equal(bw_config_cgroup_named_at(t.dirs, "srv.slice", &first), 1);
                assert_non_null(strstr(first, "/etc/srv.slice.d/10-x.conf"));
                assert_null(strchr(strstr(first, ".conf"), ':'));
                free(first);
                first = NULL;
                /* A masked drop-in is not where it is named; a later one is. */
                put(&t, "etc/srv.slice.d/05-empty.conf", "");
                put(&t, "run/srv.slice.d/20-y.conf", "[Bandwidth]\n");
                assert_int_equal(bw_config_cgroup_named_at(t.dirs, "srv.slice", &first), 1);
                assert_non_null(strstr(first, "/etc/srv.slice.d/10-x.conf"));
                free(first);
                first = NULL;
                put(&t, "etc/srv.slice.d/10-x.conf", "");
                assert_int_equal(bw_config_cgroup_named_at(t.dirs, "srv.slice", &first), 1);
                assert_non_null(strstr(first, "/run/srv.slice.d/20-y.conf"));
                free(first);
                first = NULL;
                /* Subgroup= before Cgroup=: it makes the path governed. */
                put(&t, "etc/zzz.d/10-x.conf", "[Bandwidth]\nCgroup=srv.slice\n\nSubgroup=inner\n");
                assert_int_equal(bw_config_cgroup_named_at(t.dirs, "zzz", &first), 1);
                assert_non_null(strstr(first, "/etc/zzz.d/10-x.conf:4"));
                free(first);
                first = NULL;
                /* A drop-in that no longer loads, and no unit at all. */
                put(&t, "etc/zzz.d/10-x.conf", "[Bandwidth]\nCPUQuota=lots\n");
                assert_int_equal(bw_config_cgroup_named_at(t.dirs, "zzz", &first), -EINVAL);
                assert_null(first);
                assert_int_equal(bw_config_cgroup_named_at(t.dirs, "none.slice", &first), 0);
                assert_null(first);
                assert_int_equal(bw_dropin_first_active(t.dirs, "none.slice", &first), 0);
                assert_null(first);
        }
        bw_config_done(&c);
        tree_done(&t);

        /* Issue 30, finding 5: a Subgroup= below one unit's cgroup is the
         * cgroup another's Cgroup= names. */
        tree_init(&t);
        put(&t, "etc/one.d/10-x.conf", "[Bandwidth]\nCgroup=machine.slice/x.scope\nSubgroup=container\n");
        put(&t, "etc/two.d/10-x.conf", "[Bandwidth]\nCgroup=machine.slice/x.scope/container\n");
        assert_load_error(&t, -EINVAL, "ROOT/etc/two.d/10-x.conf:2: Cgroup: unit two would govern cgroup "
                          "/machine.slice/x.scope/container, which unit one governs (ROOT/etc/one.d/10-x.conf:3): "
                          "one unit per cgroup");
        tree_done(&t);

        /* ... a slice's Subgroup= and another unit's Cgroup=. */
        tree_init(&t);
        put(&t, "etc/a.slice.d/10-x.conf", "[Bandwidth]\nSubgroup=inner\n");
        put(&t, "etc/b.d/10-x.conf", "[Bandwidth]\nCgroup=a.slice/inner\n");
        assert_load_error(&t, -EINVAL, "ROOT/etc/b.d/10-x.conf:2: Cgroup: unit b would govern cgroup "
                          "/a.slice/inner, which unit a.slice governs (ROOT/etc/a.slice.d/10-x.conf:2): "
                          "one unit per cgroup");
        tree_done(&t);
}

static void test_known_keys(void **state) {
        static const char *const values[] = {
                "Governor.Interval=2s", "Governor.Mode=burst", "Governor.HostPressureLimit=50%",
                "Governor.PressureWindow=4s", "Governor.KernelCheck=strict", "Governor.RestoreOnExit=no",
                "Governor.HistorySize=10", "Governor.ActiveInterval=500ms", "Governor.Telemetry=no",
                "Governor.Contention=gang", "Governor.ContentionInterval=500ms", "Governor.MetricsInterval=1min",
                "Governor.ParkAtBaseline=yes",
                "Bandwidth.Mode=observe",
                "Bandwidth.CPUQuota=150%",
                "Bandwidth.CPUQuotaMax=350%", "Bandwidth.CPUBurstMax=25ms", "Bandwidth.CreditMax=2min",
                "Bandwidth.TargetThrottle=2%", "Bandwidth.TargetPressure=6%", "Bandwidth.TargetWaitP99=20ms",
                "Bandwidth.Priority=-3",
                "Bandwidth.Interval=250ms", "Bandwidth.ActiveInterval=200ms", "Bandwidth.Cgroup=machine.slice/x.scope/",
                "Bandwidth.Subgroup=/container", "Bandwidth.Class=latency", "Bandwidth.LatencyTarget=1ms", "Bandwidth.CPUGuarantee=50%",
        };
        const char *const *keys = bw_config_known_keys();
        char gov[4096] = "[Governor]\n", bw[4096] = "[Bandwidth]\n";
        struct tree t;
        struct bw_config c = { 0 };
        const struct bw_unit_config *u;
        size_t n = 0;

        for (; keys[n]; n++) {
                const char *dot = strchr(keys[n], '.');

                assert_non_null(dot);
                assert_true(strncmp(keys[n], "Governor.", 9) == 0 || strncmp(keys[n], "Bandwidth.", 10) == 0);
                for (size_t j = 0; j < n; j++)
                        assert_string_not_equal(keys[j], keys[n]);
                /* Every known key has a test value below, in the same order. */
                assert_true(n < ELEMENTSOF(values));
                assert_int_equal(strncmp(values[n], keys[n], strlen(keys[n])), 0);
                assert_int_equal(values[n][strlen(keys[n])], '=');

                strcat(strncmp(keys[n], "Governor.", 9) == 0 ? gov : bw, dot + 1);
                strcat(strncmp(keys[n], "Governor.", 9) == 0 ? gov : bw, values[n] + strlen(keys[n]));
                strcat(strncmp(keys[n], "Governor.", 9) == 0 ? gov : bw, "\n");
        }
        assert_int_equal(n, 29);
        assert_int_equal(n, ELEMENTSOF(values));

        tree_init(&t);
        put(&t, "etc/bwgov.conf", gov);
        put(&t, "etc/all.slice.d/10-all.conf", bw);
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.global.interval_usec, SEC(2));
        assert_int_equal(c.global.mode, BW_MODE_BURST);
        assert_int_equal(c.global.host_pressure_limit, PCT(50));
        assert_int_equal(c.global.pressure_window_usec, SEC(4));
        assert_int_equal(c.global.kernel_check, BW_KERNEL_CHECK_STRICT);
        assert_false(c.global.restore_on_exit);
        assert_int_equal(c.global.history_size, 10);
        assert_int_equal(c.global.active_interval_usec, MSEC(500));
        assert_false(c.global.telemetry);
        assert_int_equal(c.global.contention, BW_CONTENTION_GANG);
        assert_int_equal(c.global.contention_interval_usec, MSEC(500));
        assert_int_equal(c.global.metrics_interval_usec, SEC(60));
        assert_int_equal(c.global.park_at_baseline, BW_PARK_YES);
        u = bw_config_find_unit(&c, "all.slice");
        assert_non_null(u);
        assert_true(u->has_mode);
        assert_int_equal(u->mode, BW_MODE_OBSERVE);
        assert_int_equal(u->cpu_quota, PCT(150));
        assert_int_equal(u->cpu_quota_max, PCT(350));
        assert_int_equal(u->cpu_burst_max_usec, MSEC(25));
        assert_int_equal(u->credit_max_usec, SEC(120));
        assert_int_equal(u->target_throttle, PCT(2));
        assert_int_equal(u->target_pressure, PCT(6));
        assert_int_equal(u->target_wait_p99_usec, MSEC(20));
        assert_int_equal(u->priority, -3);
        assert_int_equal(u->interval_usec, MSEC(250));
        assert_int_equal(u->active_interval_usec, MSEC(200));
        assert_int_equal(bw_unit_active_interval_usec(&c, u), MSEC(200));
        assert_string_equal(u->cgroup, "machine.slice/x.scope");
        assert_string_equal(u->subgroup, "container");
        assert_true(u->has_class);
        assert_int_equal(bw_unit_class(u), BW_CLASS_LATENCY);
        assert_int_equal(u->latency_target_usec, MSEC(1));
        assert_int_equal(bw_unit_latency_target_usec(u), MSEC(1));
        assert_int_equal(u->cpu_guarantee, PCT(50));
        bw_config_done(&c);
        tree_done(&t);
}

/* Class= defaults to latency when LatencyTarget= is set; the latency keys
 * on a unit of another class name both assignments. */
static void test_classes(void **state) {
        struct tree t;
        struct bw_config c = { 0 };

        tree_init(&t);
        put(&t, "etc/a.slice.d/10.conf", "[Bandwidth]\nLatencyTarget=2ms\n");
        put(&t, "etc/b.slice.d/10.conf", "[Bandwidth]\nClass=latency\n");
        put(&t, "etc/c.slice.d/10.conf", "[Bandwidth]\nClass=best-effort\n");
        put(&t, "etc/d.slice.d/10.conf", "[Bandwidth]\nPriority=1\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(bw_unit_class(&c.units[0]), BW_CLASS_LATENCY);
        assert_int_equal(bw_unit_latency_target_usec(&c.units[0]), MSEC(2));
        assert_int_equal(bw_unit_class(&c.units[1]), BW_CLASS_LATENCY);
        assert_int_equal(bw_unit_latency_target_usec(&c.units[1]), BW_LATENCY_TARGET_DEFAULT_USEC);
        assert_int_equal(bw_unit_class(&c.units[2]), BW_CLASS_BEST_EFFORT);
        assert_int_equal(bw_unit_latency_target_usec(&c.units[2]), 0);
        assert_int_equal(bw_unit_class(&c.units[3]), BW_CLASS_THROUGHPUT);
        assert_int_equal(c.global.contention, BW_CONTENTION_SHARE);
        assert_int_equal(c.global.contention_interval_usec, SEC(1));
        bw_config_done(&c);

        put(&t, "etc/c.slice.d/20.conf", "[Bandwidth]\n\nLatencyTarget=1ms\n");
        assert_load_error(&t, -EINVAL,
                          "ROOT/etc/c.slice.d/20.conf:3: LatencyTarget: only Class=latency takes it, but the unit is "
                          "Class=best-effort (set at ROOT/etc/c.slice.d/10.conf:2)");
        put(&t, "etc/c.slice.d/20.conf", "[Bandwidth]\nClass=\n");
        put(&t, "etc/d.slice.d/20.conf", "[Bandwidth]\nCPUGuarantee=50%\n");
        assert_load_error(&t, -EINVAL,
                          "ROOT/etc/d.slice.d/20.conf:2: CPUGuarantee: only Class=latency takes it (set Class=latency "
                          "or LatencyTarget=)");
        put(&t, "etc/d.slice.d/20.conf", "[Bandwidth]\nClass=fast\n");
        assert_load_error(&t, -EINVAL,
                          "ROOT/etc/d.slice.d/20.conf:2: Class: expected one of latency, throughput, best-effort");
        put(&t, "etc/d.slice.d/20.conf", "[Bandwidth]\nLatencyTarget=5us\n");
        assert_load_error(&t, -EINVAL,
                          "ROOT/etc/d.slice.d/20.conf:2: LatencyTarget: value out of range, expected a time span "
                          "between 10us and 10s, like 1ms");
        put(&t, "etc/d.slice.d/20.conf", "");
        put(&t, "etc/bwgov.conf", "[Governor]\nContention=fair\n");
        assert_load_error(&t, -EINVAL, "ROOT/etc/bwgov.conf:2: Contention: expected one of share, gang, pin");
        tree_done(&t);
}

static void test_cgroup_values(void **state) {
        static const struct {
                const char *in;
                const char *out; /* NULL: rejected */
        } cases[] = {
                { "/machine.slice/foo.scope", "machine.slice/foo.scope" },
                { "machine.slice/foo.scope", "machine.slice/foo.scope" },
                { "/web.slice/", "web.slice" },
                { "a", "a" },
                { "/a/.b/c..", "a/.b/c.." },
                { "/", NULL },
                { "//", NULL },
                { "//a", NULL },
                { "a//b", NULL },
                { "a/b//", NULL },
                { "/a/./b", NULL },
                { "/a/..", NULL },
                { "..", NULL },
                { "/a/b\x7f", NULL },
        };

        /* Cgroup= and Subgroup= take the same paths (Subgroup= below the unit's). */
        for (size_t i = 0; i < 2 * ELEMENTSOF(cases); i++) {
                const char *key = i % 2 ? "Subgroup" : "Cgroup";
                const char *in = cases[i / 2].in, *out = cases[i / 2].out;
                struct tree t;
                struct bw_config c = { 0 };
                char content[256], want[128];
                char *msg = NULL;
                int r;

                print_message("# %s=%s\n", key, in);
                tree_init(&t);
                snprintf(content, sizeof(content), "[Bandwidth]\n%s=%s\n", key, in);
                put(&t, "etc/x.d/10.conf", content);
                r = load(&t, &c, &msg);
                if (out) {
                        assert_int_equal(r, 0);
                        assert_string_equal(i % 2 ? c.units[0].subgroup : c.units[0].cgroup, out);
                        assert_null(i % 2 ? c.units[0].cgroup : c.units[0].subgroup);
                        bw_config_done(&c);
                } else {
                        assert_int_equal(r, -EINVAL);
                        snprintf(want, sizeof(want), "ROOT/etc/x.d/10.conf:2: %s: expected a cgroup path", key);
                        assert_non_null(strstr(msg, want));
                        free(msg);
                }
                tree_done(&t);
        }
}

static void test_long_lines(void **state) {
        struct tree t;
        struct bw_config c = { 0 };
        char *path, *content, *comment;
        size_t n;

        /* A 4096-character Cgroup= path, far beyond inih's 200-byte line buffer. */
        path = malloc(BW_CGROUP_PATH_MAX + 2);
        assert_non_null(path);
        path[0] = '/';
        for (n = 1; n < BW_CGROUP_PATH_MAX; n++)
                path[n] = n % 50 == 0 ? '/' : (char) ('a' + n % 26);
        path[n] = '\0';
        comment = malloc(1000);
        assert_non_null(comment);
        memset(comment, 'c', 999);
        comment[0] = '#';
        comment[999] = '\0';

        assert_true(asprintf(&content, "%s\n[Bandwidth]\nCgroup = %s ; an inline comment\nPriority=4\n", comment, path) > 0);
        tree_init(&t);
        put(&t, "etc/long.d/10.conf", content);
        free(content);
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_string_equal(c.units[0].cgroup, path + 1);
        assert_int_equal(c.units[0].priority, 4);
        bw_config_done(&c);

        /* Line numbers stay right after long lines. */
        assert_true(asprintf(&content, "%s\n[Bandwidth]\nCgroup=%s\nPriority=x\n", comment, path) > 0);
        put(&t, "etc/long.d/10.conf", content);
        free(content);
        assert_load_error(&t, -EINVAL, "ROOT/etc/long.d/10.conf:4: Priority: expected an integer between -1000 and 1000");

        /* One character more is out of range. */
        path[BW_CGROUP_PATH_MAX] = 'z';
        path[BW_CGROUP_PATH_MAX + 1] = '\0';
        assert_true(asprintf(&content, "[Bandwidth]\nCgroup=%s\n", path) > 0);
        put(&t, "etc/long.d/10.conf", content);
        free(content);
        assert_load_error(&t, -EINVAL,
                          "ROOT/etc/long.d/10.conf:2: Cgroup: value out of range, expected a cgroup path of at most "
                          "4096 characters");

        /* A long line that is not an assignment. */
        assert_true(asprintf(&content, "[Bandwidth]\n%s\n", path + 1) > 0);
        put(&t, "etc/long.d/10.conf", content);
        free(content);
        assert_load_error(&t, -EINVAL, "ROOT/etc/long.d/10.conf:2: line too long");

        /* A long value of a key that does not take one gets the usual message. */
        assert_true(asprintf(&content, "[Bandwidth]\nMode=%s\n", path + 1) > 0);
        put(&t, "etc/long.d/10.conf", content);
        free(content);
        assert_load_error(&t, -EINVAL, "ROOT/etc/long.d/10.conf:2: Mode: expected one of off, observe, burst, elastic");

        /* A long empty assignment resets. */
        assert_true(asprintf(&content, "[Bandwidth]\nPriority=3\nPriority=%*s\n", 300, "") > 0);
        put(&t, "etc/long.d/10.conf", content);
        free(content);
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.units[0].priority, 0);
        bw_config_done(&c);

        free(path);
        free(comment);
        tree_done(&t);
}

static void test_syntax(void **state) {
        struct tree t;
        struct bw_config c = { 0 };
        const struct bw_unit_config *u;
        static const char nul_file[] = "[Bandwidth]\nPriority=1\0\n";

        tree_init(&t);
        /* Indented lines are assignments of their own (no continuation
         * lines), inline comments after " ;", "Key: value", CRLF, a BOM, blanks
         * around "=". */
        put(&t, "etc/a.slice.d/10.conf",
            "\xEF\xBB\xBF[Bandwidth]\r\n"
            "CPUQuota=200%\r\n"
            "    Priority=7\r\n"
            "\tCPUQuotaMax = 300% ; inline comment\r\n"
            "CreditMax: 10s\r\n"
            "  # indented comment\r\n"
            "  ; another one\r\n"
            "   [Bandwidth]   \r\n"
            "TargetThrottle=2%\r\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        u = bw_config_find_unit(&c, "a.slice");
        assert_non_null(u);
        assert_int_equal(u->cpu_quota, PCT(200));
        assert_int_equal(u->priority, 7);
        assert_int_equal(u->cpu_quota_max, PCT(300));
        assert_int_equal(u->credit_max_usec, SEC(10));
        assert_int_equal(u->target_throttle, PCT(2));
        bw_config_done(&c);

        /* An indented line after an assignment is not a continuation of it. */
        put(&t, "etc/a.slice.d/10.conf", "[Bandwidth]\nCPUQuota=200%\n   300%\n");
        assert_load_error(&t, -EINVAL,
                          "ROOT/etc/a.slice.d/10.conf:3: syntax error, expected [Section], Key=value or a comment");

        /* ";" without a blank before it is part of the value. */
        put(&t, "etc/a.slice.d/10.conf", "[Bandwidth]\nCPUQuota=200%;x\n");
        assert_load_error(&t, -EINVAL, "ROOT/etc/a.slice.d/10.conf:2: CPUQuota: expected a CPU percentage like 250%");

        put_bytes(&t, "etc/a.slice.d/10.conf", nul_file, sizeof(nul_file) - 1);
        assert_load_error(&t, -EINVAL, "ROOT/etc/a.slice.d/10.conf:2: line contains a NUL byte");

        /* No trailing newline is fine; a file of comments only is fine. */
        put(&t, "etc/a.slice.d/10.conf", "[Bandwidth]\nPriority=2");
        put(&t, "etc/a.slice.d/20.conf", "# nothing here\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.units[0].priority, 2);
        bw_config_done(&c);
        tree_done(&t);
}

static void test_ignored_files(void **state) {
        struct tree t;
        struct bw_config c = { 0 };

        tree_init(&t);
        put(&t, "etc/web.slice.d/10-a.conf", "[Bandwidth]\nPriority=1\n");
        put(&t, "etc/web.slice.d/20-b.conf.bak", "garbage\n");
        put(&t, "etc/web.slice.d/README", "garbage\n");
        put(&t, "etc/web.slice.d/.30-hidden.conf", "garbage\n");
        put(&t, "etc/web.slice.d/conf", "garbage\n");
        put(&t, "etc/bwgov.conf.d/README", "garbage\n");
        put(&t, "etc/README.txt", "garbage\n");
        put(&t, "etc/bwgov.conf.bak", "garbage\n");
        put(&t, "run/bwgov.conf", "[Governor]\nHistorySize=11\n");
        assert_int_equal(load(&t, &c, NULL), 0);
        assert_int_equal(c.n_units, 1);
        assert_int_equal(c.units[0].priority, 1);
        assert_int_equal(c.global.history_size, 11);
        bw_config_done(&c);
        tree_done(&t);
}

/* Issue 17, finding 8: something named like a configuration file that is
 * not one (a directory, a FIFO, a socket, a symlink to one of them) is an
 * error naming it and what it is, never silently skipped, and a FIFO is
 * never opened (it would block until a writer came). */
static void test_not_regular_files(void **state) {
        static const struct {
                const char *make;       /* "dir", "fifo" or a symlink target under ROOT */
                const char *rel;
                const char *msg;
        } cases[] = {
                { "dir", "etc/web.slice.d/40-dir.conf",
                  "ROOT/etc/web.slice.d/40-dir.conf: a directory, not a configuration file: expected a regular "
                  "file (or a symlink to /dev/null, which masks)" },
                { "fifo", "run/web.slice.d/50-fifo.conf",
                  "ROOT/run/web.slice.d/50-fifo.conf: a FIFO, not a configuration file: expected a regular file "
                  "(or a symlink to /dev/null, which masks)" },
                { "fifo", "etc/bwgov.conf.d/10-fifo.conf",
                  "ROOT/etc/bwgov.conf.d/10-fifo.conf: a FIFO, not a configuration file: expected a regular file "
                  "(or a symlink to /dev/null, which masks)" },
                { "dir", "etc/bwgov.conf",
                  "ROOT/etc/bwgov.conf: a directory, not a configuration file: expected a regular file (or a "
                  "symlink to /dev/null, which masks)" },
                { "fifo", "usr-lib/bwgov.conf",
                  "ROOT/usr-lib/bwgov.conf: a FIFO, not a configuration file: expected a regular file (or a "
                  "symlink to /dev/null, which masks)" },
                { "target", "etc/web.slice.d/60-link.conf",
                  "ROOT/etc/web.slice.d/60-link.conf: a FIFO, not a configuration file: expected a regular file "
                  "(or a symlink to /dev/null, which masks)" },
        };

        alarm(10);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char path[PATH_MAX], target[PATH_MAX];
                struct tree t;

                tree_init(&t);
                put(&t, "etc/web.slice.d/10-a.conf", "[Bandwidth]\nPriority=1\n");
                snprintf(path, sizeof(path), "%s/%s", t.root, cases[i].rel);
                mkdir_parents(path);
                if (strcmp(cases[i].make, "dir") == 0)
                        make_dir(&t, cases[i].rel);
                else if (strcmp(cases[i].make, "fifo") == 0)
                        assert_int_equal(mkfifo(path, 0600), 0);
                else {
                        snprintf(target, sizeof(target), "%s/fifo", t.root);
                        assert_int_equal(mkfifo(target, 0600), 0);
                        assert_int_equal(symlink(target, path), 0);
                }
                assert_load_error(&t, -EINVAL, cases[i].msg);
                tree_done(&t);
        }
        alarm(0);
}

static void test_io_errors(void **state) {
        struct tree t;

        /* A dangling drop-in symlink is an error, not silently skipped. */
        tree_init(&t);
        put(&t, "etc/web.slice.d/10-a.conf", "[Bandwidth]\n");
        link_to(&t, "etc/web.slice.d/20-b.conf", "/nonexistent/bwgov-test");
        assert_load_error(&t, -ENOENT, "ROOT/etc/web.slice.d/20-b.conf: cannot access: No such file or directory");
        tree_done(&t);

        tree_init(&t);
        link_to(&t, "run/bwgov.conf", "/nonexistent/bwgov-test");
        assert_load_error(&t, -ENOENT, "ROOT/run/bwgov.conf: cannot access: No such file or directory");
        tree_done(&t);

        /* A search "directory" that is a file counts as missing. */
        tree_init(&t);
        put(&t, "etc", "not a directory\n");
        {
                struct bw_config c = { 0 };

                assert_int_equal(load(&t, &c, NULL), 0);
                assert_global_defaults(&c.global);
                bw_config_done(&c);
        }
        tree_done(&t);
}

/* The shipped conf/bwgov.conf and conf/web.slice.d-example.conf parse, and
 * bwgov.conf's commented-out values are the built-in defaults. */
static void test_shipped_files(void **state) {
        const char *src = getenv("BWGOV_SOURCE_ROOT");
        char path[PATH_MAX], line[512];
        struct tree t;
        struct bw_config c = { 0 }, uncommented = { 0 };
        const struct bw_unit_config *u;
        _cleanup_free_ char *all = NULL;
        size_t all_len = 0;
        FILE *f, *mem;
        int n_keys = 0;

        assert_non_null(src);
        tree_init(&t);

        snprintf(path, sizeof(path), "%s/conf/bwgov.conf", src);
        f = fopen(path, "re");
        assert_non_null(f);
        mem = open_memstream(&all, &all_len);
        assert_non_null(mem);
        {
                _cleanup_free_ char *raw = NULL;
                size_t raw_len = 0;
                FILE *rawf = open_memstream(&raw, &raw_len);

                assert_non_null(rawf);
                while (fgets(line, sizeof(line), f)) {
                        fputs(line, rawf);
                        /* "#Key=value" lines are the documented defaults: uncomment them. */
                        if (line[0] == '#' && line[1] >= 'A' && line[1] <= 'Z' && strchr(line, '=')) {
                                fputs(line + 1, mem);
                                n_keys++;
                        } else
                                fputs(line, mem);
                }
                assert_int_equal(fclose(rawf), 0);
                put(&t, "usr-lib/bwgov.conf", raw);
        }
        assert_int_equal(fclose(f), 0);
        assert_int_equal(fclose(mem), 0);
        assert_int_equal(n_keys, 11); /* the [Governor] keys it shows */

        snprintf(path, sizeof(path), "%s/conf/web.slice.d-example.conf", src);
        f = fopen(path, "re");
        assert_non_null(f);
        {
                _cleanup_free_ char *raw = NULL;
                size_t raw_len = 0;
                FILE *rawf = open_memstream(&raw, &raw_len);
                int documented = 0;

                assert_non_null(rawf);
                while (fgets(line, sizeof(line), f)) {
                        const char *l = line[0] == '#' ? line + 1 : line;

                        fputs(line, rawf);
                        for (const char *const *k = bw_config_known_keys(); *k; k++)
                                if (strncmp(*k, "Bandwidth.", 10) == 0 && strncmp(l, *k + 10, strlen(*k + 10)) == 0 &&
                                    l[strlen(*k + 10)] == '=')
                                        documented++;
                }
                assert_int_equal(fclose(rawf), 0);
                assert_int_equal(documented, 12); /* every [Bandwidth] key, once */
                put(&t, "usr-lib/web.slice.d/10-limits.conf", raw);
        }
        assert_int_equal(fclose(f), 0);

        assert_int_equal(load(&t, &c, NULL), 0);
        assert_global_defaults(&c.global);
        u = bw_config_find_unit(&c, "web.slice");
        assert_non_null(u);
        assert_int_equal(u->cpu_quota, PCT(200));
        assert_int_equal(u->cpu_quota_max, PCT(400));
        assert_int_equal(u->cpu_burst_max_usec, MSEC(50));
        bw_config_done(&c);

        /* The uncommented defaults load to exactly the built-in defaults. */
        put(&t, "etc/bwgov.conf", all);
        assert_int_equal(load(&t, &uncommented, NULL), 0);
        assert_global_defaults(&uncommented.global);
        bw_config_done(&uncommented);
        tree_done(&t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_enums),
                cmocka_unit_test(test_error_to_string),
                cmocka_unit_test(test_unit_config_copy),
                cmocka_unit_test(test_default_dirs),
                cmocka_unit_test(test_missing_dirs_give_defaults),
                cmocka_unit_test(test_fixture_layered),
                cmocka_unit_test(test_main_config_highest_wins),
                cmocka_unit_test(test_main_config_masked),
                cmocka_unit_test(test_dropin_override_and_order),
                cmocka_unit_test(test_prefix_dirs),
                cmocka_unit_test(test_masking),
                cmocka_unit_test(test_empty_assignment_resets),
                cmocka_unit_test(test_unit_suffixes),
                cmocka_unit_test(test_invalid_unit_names),
                cmocka_unit_test(test_error_messages),
                cmocka_unit_test(test_cross_field_quota_max),
                cmocka_unit_test(test_broken_keeps_previous),
                cmocka_unit_test(test_broken_file_in_one_dir),
                cmocka_unit_test(test_duplicate_unit_dirs_merge),
                cmocka_unit_test(test_one_unit_per_cgroup),
                cmocka_unit_test(test_known_keys),
                cmocka_unit_test(test_classes),
                cmocka_unit_test(test_cgroup_values),
                cmocka_unit_test(test_long_lines),
                cmocka_unit_test(test_syntax),
                cmocka_unit_test(test_ignored_files),
                cmocka_unit_test(test_not_regular_files),
                cmocka_unit_test(test_io_errors),
                cmocka_unit_test(test_shipped_files),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
