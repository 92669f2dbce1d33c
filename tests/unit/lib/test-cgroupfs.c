/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroupfs on fixture trees: regular files under mkdtemp stand in for the
 * kernel's cgroup files. write() is wrapped (-Wl,--wrap=write, see
 * tests/unit/lib/meson.build) so every write the library makes is recorded, and a
 * fake enforces the kernel's burst <= quota rule and can imitate the
 * pre-6.10 cpu.max bug that scales the burst down by 1000. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include "bwgov/util/macro.h"
#include "bwgov/cgroup/cgroupfs-path.h"
#include "bwgov/cgroup/cgroupfs-write.h"

/* ---- write() fake ---------------------------------------------------- */

#define LOG_MAX 32

static struct {
        bool on;                /* record and enforce */
        bool corrupt_burst;     /* imitate kernels < 6.10: cpu.max write divides cpu.max.burst by 1000 */
        const char *fail;       /* writes to this file fail with EIO */
        unsigned n;             /* write() calls seen while on */
        unsigned rejected;
        char log[LOG_MAX][96];  /* "file=value" */
} fake;

ssize_t __real_write(int fd, const void *buf, size_t count);
ssize_t __wrap_write(int fd, const void *buf, size_t count);

static void fake_reset(void) {
        memset(&fake, 0, sizeof(fake));
        fake.on = true;
}

static bool read_sibling(const char *dir, const char *name, char *buf, size_t size, size_t *ret_len) {
        char p[PATH_MAX];
        FILE *f;
        size_t n;

        snprintf(p, sizeof(p), "%s/%s", dir, name);
        f = fopen(p, "re");
        if (!f)
                return false;
        n = fread(buf, 1, size - 1, f);
        fclose(f);
        buf[n] = 0;
        *ret_len = n;
        return true;
}

/* The state the cgroup would be in after this write, checked the way
 * tg_set_cfs_bandwidth() does (burst <= quota unless unlimited). */
static bool fake_allows(const char *dir, const char *name, const char *val, size_t len) {
        bool v2 = strncmp(name, "cpu.max", 7) == 0;
        uint64_t quota = BW_QUOTA_MAX, period = 100000, burst = 0;
        char buf[256];
        size_t n;

        if (v2) {
                if (strcmp(name, "cpu.max") == 0) {
                        if (bw_cpumax_parse(val, len, &quota, &period) < 0)
                                return false;
                } else if (read_sibling(dir, "cpu.max", buf, sizeof(buf), &n))
                        assert_int_equal(bw_cpumax_parse(buf, n, &quota, &period), 0);

                if (strcmp(name, "cpu.max.burst") == 0) {
                        if (bw_u64_parse(val, len, &burst) < 0)
                                return false;
                } else if (read_sibling(dir, "cpu.max.burst", buf, sizeof(buf), &n))
                        assert_int_equal(bw_u64_parse(buf, n, &burst), 0);
        } else {
                if (strcmp(name, "cpu.cfs_quota_us") == 0) {
                        if (bw_cfs_quota_parse(val, len, &quota) < 0)
                                return false;
                } else if (read_sibling(dir, "cpu.cfs_quota_us", buf, sizeof(buf), &n))
                        assert_int_equal(bw_cfs_quota_parse(buf, n, &quota), 0);

                if (strcmp(name, "cpu.cfs_period_us") == 0) {
                        if (bw_u64_parse(val, len, &period) < 0)
                                return false;
                } else if (read_sibling(dir, "cpu.cfs_period_us", buf, sizeof(buf), &n))
                        assert_int_equal(bw_u64_parse(buf, n, &period), 0);

                if (strcmp(name, "cpu.cfs_burst_us") == 0) {
                        if (bw_u64_parse(val, len, &burst) < 0)
                                return false;
                } else if (read_sibling(dir, "cpu.cfs_burst_us", buf, sizeof(buf), &n))
                        assert_int_equal(bw_u64_parse(buf, n, &burst), 0);
        }

        if (period < BW_PERIOD_MIN_USEC || period > BW_PERIOD_MAX_USEC)
                return false;
        if (quota != BW_QUOTA_MAX && (quota < BW_QUOTA_MIN_USEC || burst > quota))
                return false;
        return true;
}

ssize_t __wrap_write(int fd, const void *buf, size_t count) {
        char link[64], path[PATH_MAX], *slash;
        ssize_t n, r;

        if (!fake.on) {
                r = __real_write(fd, buf, count);
                if (r >= 0 && fd > 2)
                        assert_int_equal(ftruncate(fd, r), 0);
                return r;
        }

        fake.n++;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof(path) - 1);
        assert_true(n > 0);
        path[n] = 0;
        slash = strrchr(path, '/');
        assert_non_null(slash);
        *slash = 0;

        if (fake.n <= LOG_MAX) {
                size_t vlen = count;

                if (vlen > 0 && ((const char *) buf)[vlen - 1] == '\n')
                        vlen--;
                snprintf(fake.log[fake.n - 1], sizeof(fake.log[0]), "%s=%.*s",
                         slash + 1, (int) vlen, (const char *) buf);
        }

        if (fake.fail && strcmp(slash + 1, fake.fail) == 0) {
                errno = EIO;
                return -1;
        }

        if (!fake_allows(path, slash + 1, buf, count)) {
                fake.rejected++;
                errno = EINVAL;
                return -1;
        }

        r = __real_write(fd, buf, count);
        /* A cgroup file holds exactly the last value written. */
        if (r >= 0)
                assert_int_equal(ftruncate(fd, r), 0);

        if (fake.corrupt_burst && strcmp(slash + 1, "cpu.max") == 0) {
                char b[64], p[PATH_MAX + 16];
                uint64_t v;
                size_t len;
                FILE *f;

                if (read_sibling(path, "cpu.max.burst", b, sizeof(b), &len)) {
                        assert_int_equal(bw_u64_parse(b, len, &v), 0);
                        snprintf(p, sizeof(p), "%s/cpu.max.burst", path);
                        f = fopen(p, "we");
                        assert_non_null(f);
                        fprintf(f, "%" PRIu64 "\n", v / 1000);
                        fclose(f);
                }
        }

        return r;
}

static void assert_bw(const struct bw_bandwidth *a, const struct bw_bandwidth *b) {
        assert_int_equal(a->quota_usec, b->quota_usec);
        assert_int_equal(a->period_usec, b->period_usec);
        assert_int_equal(a->burst_usec, b->burst_usec);
        assert_int_equal(a->has_burst, b->has_burst);
}

static void assert_log(const char *const *want, unsigned n) {
        if (fake.n != n)
                for (unsigned i = 0; i < fake.n && i < LOG_MAX; i++)
                        print_message("write %u: %s\n", i, fake.log[i]);
        assert_int_equal(fake.n, n);
        for (unsigned i = 0; i < n; i++)
                assert_string_equal(fake.log[i], want[i]);
        assert_int_equal(fake.rejected, 0);
}

/* ---- fixture trees --------------------------------------------------- */

static char *tree_new(void) {
        char *d = strdup("/tmp/bwgov-test-cgroupfs-XXXXXX");

        assert_non_null(d);
        assert_non_null(mkdtemp(d));
        return d;
}

static void mkdir_p(const char *path) {
        char p[PATH_MAX];

        assert_true(strlen(path) < sizeof(p));
        strcpy(p, path);
        for (char *s = p + 1; *s; s++)
                if (*s == '/') {
                        *s = 0;
                        assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
                        *s = '/';
                }
        assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static void tree_put(const char *root, const char *rel, const char *content) {
        char p[PATH_MAX], *slash;
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        slash = strrchr(p, '/');
        *slash = 0;
        mkdir_p(p);
        *slash = '/';

        f = fopen(p, "we");
        assert_non_null(f);
        assert_true(fputs(content, f) >= 0);
        assert_int_equal(fclose(f), 0);
}

static char *tree_get(const char *root, const char *rel) {
        char p[PATH_MAX], *s = NULL;
        size_t n = 0;
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        f = fopen(p, "re");
        assert_non_null(f);
        assert_true(getdelim(&s, &n, 0, f) >= 0);
        fclose(f);
        return s;
}

static void assert_file(const char *root, const char *rel, const char *want) {
        _cleanup_free_ char *s = tree_get(root, rel);

        assert_string_equal(s, want);
}

/* Put a file's mtime far in the past so that any write shows. */
static void tree_age(const char *root, const char *rel) {
        struct timespec ts[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };
        char p[PATH_MAX];

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
}

static bool tree_aged(const char *root, const char *rel) {
        char p[PATH_MAX];
        struct stat st;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        assert_int_equal(stat(p, &st), 0);
        return st.st_mtim.tv_sec == 1000000000;
}

static int rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw) {
        return remove(p);
}

static void tree_rm(char *root) {
        if (!root)
                return;
        assert_int_equal(nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
        free(root);
}

static void tree_rmp(char **root) {
        tree_rm(*root);
}
#define _cleanup_tree_ _cleanup_(tree_rmp)

static void rootp(struct bw_cg_root **r) {
        bw_cg_root_free(*r);
}
static void cgp(struct bw_cg **c) {
        bw_cg_free(*c);
}

#define V2_STAT \
        "usage_usec 5000000\nuser_usec 3000000\nsystem_usec 2000000\n" \
        "core_sched.force_idle_usec 0\nnr_periods 400\nnr_throttled 40\n" \
        "throttled_usec 120000\nnr_bursts 3\nburst_usec 9000\n"
#define TWIN_STAT \
        "usage_usec 7000000\nuser_usec 4000000\nsystem_usec 3000000\nnice_usec 0\n"
#define V1_STAT \
        "nr_periods 250\nnr_throttled 25\nthrottled_time 80000000\nnr_bursts 2\nburst_time 4000000\n"
#define PRESSURE \
        "some avg10=1.50 avg60=0.75 avg300=0.10 total=123456\n" \
        "full avg10=0.25 avg60=0.00 avg300=0.00 total=6543\n"

#define CG "web.slice/app.service"

/* V2 tree: cgroup.controllers at the top, cpu files in CG. */
static char *tree_v2(const char *max, const char *burst) {
        char *t = tree_new();

        tree_put(t, "cgroup.controllers", "cpuset cpu io memory pids\n");
        tree_put(t, CG "/cpu.max", max);
        if (burst)
                tree_put(t, CG "/cpu.max.burst", burst);
        tree_put(t, CG "/cpu.stat", V2_STAT);
        tree_put(t, CG "/cpu.pressure", PRESSURE);
        return t;
}

static void put_v1(const char *t, const char *dir, const char *quota, const char *period, const char *burst) {
        char p[PATH_MAX];

        snprintf(p, sizeof(p), "%s/cpu.cfs_quota_us", dir);
        tree_put(t, p, quota);
        snprintf(p, sizeof(p), "%s/cpu.cfs_period_us", dir);
        tree_put(t, p, period);
        if (burst) {
                snprintf(p, sizeof(p), "%s/cpu.cfs_burst_us", dir);
                tree_put(t, p, burst);
        }
        snprintf(p, sizeof(p), "%s/cpu.stat", dir);
        tree_put(t, p, V1_STAT);
}

/* HYBRID tree: cpu/ (v1) + unified/ (v2 twin without controllers). */
static char *tree_hybrid(const char *quota, const char *period, const char *burst, bool twin) {
        char *t = tree_new();

        put_v1(t, "cpu/" CG, quota, period, burst);
        tree_put(t, "unified/cgroup.procs", "");
        if (twin) {
                tree_put(t, "unified/" CG "/cpu.stat", TWIN_STAT);
                tree_put(t, "unified/" CG "/cpu.pressure", PRESSURE);
        }
        return t;
}

static void open_cg(const char *t, struct bw_cg_root **ret_root, struct bw_cg **ret_cg) {
        assert_int_equal(bw_cg_root_open_dir(t, ret_root), 0);
        assert_int_equal(bw_cg_open(*ret_root, CG, ret_cg), 0);
}

static char *fixture_path(const char *name) {
        const char *d = getenv("BWGOV_FIXTURES");
        char *p;

        assert_non_null(d);
        assert_true(asprintf(&p, "%s/cgroupfs/%s", d, name) > 0);
        return p;
}

/* The content of a file under tests/fixtures, e.g. a real kernel file to put
 * into a tree. */
static char *fixture_text(const char *name) {
        const char *d = getenv("BWGOV_FIXTURES");

        assert_non_null(d);
        return tree_get(d, name);
}

/* ---- mountinfo ------------------------------------------------------- */

static void parse_fixture(const char *name, struct bw_cg_mounts *ret) {
        _cleanup_free_ char *p = fixture_path(name);
        _cleanup_fclose_ FILE *f = fopen(p, "re");

        assert_non_null(f);
        assert_int_equal(bw_cg_mounts_parse(f, ret), 0);
}

static void test_mounts_hybrid(void **state) {
        struct bw_cg_mounts m;

        parse_fixture("mountinfo-hybrid", &m);
        assert_string_equal(m.v2, "/sys/fs/cgroup/unified");
        assert_string_equal(m.cpu, "/sys/fs/cgroup/cpu");
        assert_string_equal(m.cpuacct, "/sys/fs/cgroup/cpuacct");
        assert_false(m.v2_has_cpu);
        assert_int_equal(bw_cg_layout_from_mounts(&m), BW_CG_LAYOUT_HYBRID);
        bw_cg_mounts_done(&m);
        assert_null(m.v2);
        bw_cg_mounts_done(&m);
        bw_cg_mounts_done(NULL);
}

static void test_mounts_v2(void **state) {
        struct bw_cg_mounts m;

        parse_fixture("mountinfo-v2", &m);
        assert_string_equal(m.v2, "/sys/fs/cgroup");
        assert_null(m.cpu);
        assert_null(m.cpuacct);
        /* Until cgroup.controllers has been read, the cpu controller is not known. */
        assert_int_equal(bw_cg_layout_from_mounts(&m), BW_CG_LAYOUT_UNKNOWN);
        m.v2_has_cpu = true;
        assert_int_equal(bw_cg_layout_from_mounts(&m), BW_CG_LAYOUT_V2);
        bw_cg_mounts_done(&m);
}

static void test_mounts_v1_comount(void **state) {
        struct bw_cg_mounts m;

        parse_fixture("mountinfo-v1-comount", &m);
        assert_null(m.v2);
        assert_string_equal(m.cpu, "/sys/fs/cgroup/cpu,cpuacct");
        assert_string_equal(m.cpuacct, "/sys/fs/cgroup/cpu,cpuacct");
        assert_int_equal(bw_cg_layout_from_mounts(&m), BW_CG_LAYOUT_V1);
        bw_cg_mounts_done(&m);
}

static void test_mounts_escape_and_words(void **state) {
        /* Octal escapes in the mount point; "cpuset" is not "cpu"; the first
         * mount of a hierarchy wins over later bind mounts; optional fields
         * before the separator are skipped. */
        static const char text[] =
                "30 1 0:26 / /cg\\040v2 rw shared:9 master:3 - cgroup2 cgroup2 rw\n"
                "\n"
                "31 1 0:27 / /cg/cpuset rw - cgroup cgroup rw,cpuset\n"
                "32 1 0:28 / /cg/my\\134cpu\\011x rw shared:4 - cgroup cgroup rw,nosuid,cpu\n"
                "33 1 0:28 / /bind/cpu rw - cgroup cgroup rw,cpu\n"
                "34 1 0:29 / /cg/acct rw - cgroup none rw,cpuacct,name=x\n"
                "35 1 0:30 / /other rw - cgroup2 cgroup2 rw\n";
        _cleanup_fclose_ FILE *f = fmemopen((void *) text, strlen(text), "r");
        struct bw_cg_mounts m;

        assert_non_null(f);
        assert_int_equal(bw_cg_mounts_parse(f, &m), 0);
        assert_string_equal(m.v2, "/cg v2");
        assert_string_equal(m.cpu, "/cg/my\\cpu\tx");
        assert_string_equal(m.cpuacct, "/cg/acct");
        assert_int_equal(bw_cg_layout_from_mounts(&m), BW_CG_LAYOUT_HYBRID);
        bw_cg_mounts_done(&m);
}

static void test_mounts_empty(void **state) {
        _cleanup_fclose_ FILE *f = fmemopen((void *) "\n", 1, "r");
        struct bw_cg_mounts m;

        assert_int_equal(bw_cg_mounts_parse(f, &m), 0);
        assert_null(m.v2);
        assert_null(m.cpu);
        assert_null(m.cpuacct);
        assert_int_equal(bw_cg_layout_from_mounts(&m), BW_CG_LAYOUT_UNKNOWN);
        assert_int_equal(bw_cg_layout_from_mounts(NULL), BW_CG_LAYOUT_UNKNOWN);
        bw_cg_mounts_done(&m);
}

static void test_mounts_malformed(void **state) {
        static const char *const bad[] = {
                "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime cgroup cgroup rw,cpu\n",   /* no "-" */
                "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup\n",        /* no super options */
                "32 31 0:29 / /sys/fs/cgroup/cpu - cgroup cgroup rw,cpu\n",             /* too few fields */
                "32 31 0:29 / sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",           /* relative mount point */
                "32 31 0:29 /  /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",         /* empty field */
                "32 31 0:29 / /a\\000b rw - cgroup cgroup rw,cpu\n",                     /* escaped NUL */
                "32 31 0:29 / /ok rw - cgroup2 cgroup2 rw \n",                          /* trailing blank */
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                /* A good line first: its allocation must not leak on failure. */
                _cleanup_free_ char *text = NULL;
                _cleanup_fclose_ FILE *f = NULL;
                struct bw_cg_mounts m = { .v2 = (char *) "sentinel" };

                assert_true(asprintf(&text, "41 31 0:38 / /u rw - cgroup2 cgroup2 rw\n%s", bad[i]) > 0);
                f = fmemopen(text, strlen(text), "r");
                assert_non_null(f);
                print_message("# bad mountinfo line %zu\n", i);
                assert_int_equal(bw_cg_mounts_parse(f, &m), -EINVAL);
                assert_string_equal(m.v2, "sentinel");
        }
}

static void test_layout_to_string(void **state) {
        assert_string_equal(bw_cg_layout_to_string(BW_CG_LAYOUT_V2), "v2");
        assert_string_equal(bw_cg_layout_to_string(BW_CG_LAYOUT_HYBRID), "hybrid");
        assert_string_equal(bw_cg_layout_to_string(BW_CG_LAYOUT_V1), "v1");
        assert_string_equal(bw_cg_layout_to_string(BW_CG_LAYOUT_UNKNOWN), "unknown");
        assert_string_equal(bw_cg_layout_to_string((enum bw_cg_layout) 42), "unknown");
}

/* The host's own layout: whatever it is, open_host must agree with a parse of
 * the same mountinfo, and the cross-check with libcgroup must not fail it. */
static void test_root_open_host(void **state) {
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        int r;

        r = bw_cg_root_open_host(&root);
        print_message("# open_host: %d layout %s bw %s v2 %s libcgroup %d\n", r,
                      root ? bw_cg_layout_to_string(root->layout) : "-",
                      root ? root->bw_path : "-", root && root->v2_path ? root->v2_path : "-",
                      root ? root->libcgroup_check : 0);
        if (r == -EOPNOTSUPP)
                return;
        assert_int_equal(r, 0);
        assert_int_not_equal(root->layout, BW_CG_LAYOUT_UNKNOWN);
        assert_true(root->bw_fd >= 0);
        assert_non_null(root->bw_path);
        assert_true(root->libcgroup_check != -ENOTSUP);
        if (root->layout == BW_CG_LAYOUT_V1)
                assert_int_equal(root->v2_fd, -1);
        else
                assert_true(root->v2_fd >= 0);
}

/* ---- roots ----------------------------------------------------------- */

static void test_root_open_dir(void **state) {
        _cleanup_tree_ char *t = tree_new();
        struct bw_cg_root *root = NULL;
        char p[PATH_MAX];

        /* Nothing there. */
        assert_int_equal(bw_cg_root_open_dir(t, &root), -ENOENT);
        snprintf(p, sizeof(p), "%s/missing", t);
        assert_int_equal(bw_cg_root_open_dir(p, &root), -ENOENT);
        tree_put(t, "file", "x");
        snprintf(p, sizeof(p), "%s/file", t);
        assert_int_equal(bw_cg_root_open_dir(p, &root), -ENOTDIR);

        /* V1: cpu/ alone, then with cpuacct/. */
        tree_put(t, "cpu/cpu.cfs_quota_us", "-1\n");
        assert_int_equal(bw_cg_root_open_dir(t, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_V1);
        assert_int_equal(root->v2_fd, -1);
        assert_int_equal(root->acct_fd, -1);
        snprintf(p, sizeof(p), "%s/cpu", t);
        assert_string_equal(root->bw_path, p);
        assert_null(root->v2_path);
        assert_int_equal(root->libcgroup_check, -ENOTSUP);
        bw_cg_root_free(root);

        tree_put(t, "cpuacct/cpuacct.usage", "0\n");
        assert_int_equal(bw_cg_root_open_dir(t, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_V1);
        assert_true(root->acct_fd >= 0);
        bw_cg_root_free(root);

        /* HYBRID: cpu/ + unified/. */
        tree_put(t, "unified/cgroup.procs", "");
        assert_int_equal(bw_cg_root_open_dir(t, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_HYBRID);
        assert_true(root->bw_fd >= 0);
        assert_true(root->v2_fd >= 0);
        assert_int_not_equal(root->v2_fd, root->bw_fd);
        snprintf(p, sizeof(p), "%s/unified", t);
        assert_string_equal(root->v2_path, p);
        bw_cg_root_free(root);

        /* V2: cgroup.controllers decides, and must list cpu. */
        tree_put(t, "cgroup.controllers", "cpuset io memory pids\n");
        assert_int_equal(bw_cg_root_open_dir(t, &root), -EOPNOTSUPP);
        tree_put(t, "cgroup.controllers", "cpuset io memory pids cpu\n");
        assert_int_equal(bw_cg_root_open_dir(t, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_V2);
        assert_int_equal(root->v2_fd, root->bw_fd);
        assert_string_equal(root->bw_path, t);
        bw_cg_root_free(root);

        bw_cg_root_free(NULL);
}

static void test_root_open_mounts(void **state) {
        _cleanup_tree_ char *t = tree_new();
        char cpu[PATH_MAX], acct[PATH_MAX], v2[PATH_MAX];
        struct bw_cg_mounts m = { .cpu = cpu, .cpuacct = acct, .v2 = v2 };
        struct bw_cg_root *root = NULL;

        snprintf(cpu, sizeof(cpu), "%s/cpu", t);
        snprintf(acct, sizeof(acct), "%s/cpuacct", t);
        snprintf(v2, sizeof(v2), "%s/unified", t);
        mkdir_p(cpu);
        mkdir_p(acct);
        mkdir_p(v2);

        assert_int_equal(bw_cg_root_open_mounts(&m, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_HYBRID);
        assert_string_equal(root->bw_path, cpu);
        assert_string_equal(root->v2_path, v2);
        assert_int_equal(root->acct_fd, -1);
        bw_cg_root_free(root);

        m.v2_has_cpu = true;
        m.cpu = m.cpuacct = NULL;
        assert_int_equal(bw_cg_root_open_mounts(&m, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_V2);
        assert_string_equal(root->bw_path, v2);
        assert_int_equal(root->bw_fd, root->v2_fd);
        bw_cg_root_free(root);

        /* V1, separate and comounted cpuacct. */
        m = (struct bw_cg_mounts) { .cpu = cpu, .cpuacct = acct };
        assert_int_equal(bw_cg_root_open_mounts(&m, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_V1);
        assert_true(root->acct_fd >= 0);
        assert_int_not_equal(root->acct_fd, root->bw_fd);
        bw_cg_root_free(root);
        m.cpuacct = cpu;
        assert_int_equal(bw_cg_root_open_mounts(&m, &root), 0);
        assert_int_equal(root->acct_fd, root->bw_fd);
        bw_cg_root_free(root);

        m = (struct bw_cg_mounts) { .v2 = v2 };
        assert_int_equal(bw_cg_root_open_mounts(&m, &root), -EOPNOTSUPP);
        m = (struct bw_cg_mounts) { .cpu = acct + 1 /* relative: not there */ };
        assert_int_equal(bw_cg_root_open_mounts(&m, &root), -ENOENT);
}

/* ---- paths ------------------------------------------------------------ */

static void test_path_validate(void **state) {
        static const struct {
                const char *path;
                int r;
        } table[] = {
                { "", 0 },
                { "/", 0 },
                { "web.slice", 0 },
                { "/web.slice/app.service", 0 },
                { "a/b/c", 0 },
                { "..a/b..", 0 },
                { ".hidden", 0 },
                { "a b", 0 },
                { "..", -EINVAL },
                { ".", -EINVAL },
                { "a/../b", -EINVAL },
                { "a/./b", -EINVAL },
                { "../x", -EINVAL },
                { "a/..", -EINVAL },
                { "a//b", -EINVAL },
                { "//a", -EINVAL },
                { "a/", -EINVAL },
                { "a\nb", -EINVAL },
                { "a\tb", -EINVAL },
                { "a\x7f", -EINVAL },
                { "\x01", -EINVAL },
        };
        char *long_path;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                /* Only the index: the paths hold raw control characters,
                 * which would break the TAP stream. */
                print_message("# path %zu\n", i);
                assert_int_equal(bw_cg_path_validate(table[i].path), table[i].r);
        }
        assert_int_equal(bw_cg_path_validate(NULL), -EINVAL);

        long_path = malloc(PATH_MAX + 1);
        assert_non_null(long_path);
        memset(long_path, 'a', PATH_MAX);
        long_path[PATH_MAX] = 0;
        for (size_t i = 100; i < PATH_MAX; i += 101)
                long_path[i] = '/';
        assert_int_equal(bw_cg_path_validate(long_path), -EINVAL);
        long_path[PATH_MAX - 1] = 0;
        assert_int_equal(bw_cg_path_validate(long_path), 0);
        memset(long_path, 'a', NAME_MAX + 1);
        long_path[NAME_MAX + 1] = 0;
        assert_int_equal(bw_cg_path_validate(long_path), -EINVAL);
        free(long_path);
}

/* Symlinks anywhere in the path are refused, pointing outside or not, with
 * openat2 and with the fallback walk alike. */
static void test_openat_beneath(void **state) {
        _cleanup_tree_ char *t = tree_new();
        _cleanup_tree_ char *outside = tree_new();
        _cleanup_close_ int dfd = -1;
        char p[PATH_MAX];

        tree_put(t, "a/b/file", "x");
        tree_put(outside, "secret/cpu.cfs_quota_us", "-1\n");
        snprintf(p, sizeof(p), "%s/a/evil", t);
        assert_int_equal(symlink(outside, p), 0);
        snprintf(p, sizeof(p), "%s/a/inside", t);
        assert_int_equal(symlink("b", p), 0);
        snprintf(p, sizeof(p), "%s/abs", t);
        assert_int_equal(symlink("/", p), 0);

        dfd = open(t, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);

        for (int mode = 0; mode < 2; mode++) {
                bool use = mode == 0;
                int fd;

                print_message("# openat2 %s\n", use ? "allowed" : "disabled");

                fd = bw_cg_openat_beneath(dfd, "a/b", O_PATH | O_DIRECTORY, use);
                assert_true(fd >= 0);
                close(fd);
                fd = bw_cg_openat_beneath(dfd, "/a/b/file", O_RDONLY, use);
                assert_true(fd >= 0);
                close(fd);
                fd = bw_cg_openat_beneath(dfd, "", O_PATH | O_DIRECTORY, use);
                assert_true(fd >= 0);
                close(fd);

                assert_int_equal(bw_cg_openat_beneath(dfd, "a/evil", O_PATH | O_DIRECTORY, use), -ELOOP);
                assert_int_equal(bw_cg_openat_beneath(dfd, "a/evil/secret", O_PATH | O_DIRECTORY, use), -ELOOP);
                assert_int_equal(bw_cg_openat_beneath(dfd, "a/evil/secret/cpu.cfs_quota_us", O_RDONLY, use), -ELOOP);
                assert_int_equal(bw_cg_openat_beneath(dfd, "a/inside", O_PATH | O_DIRECTORY, use), -ELOOP);
                assert_int_equal(bw_cg_openat_beneath(dfd, "a/inside/file", O_RDONLY, use), -ELOOP);
                assert_int_equal(bw_cg_openat_beneath(dfd, "abs", O_PATH, use), -ELOOP);
                assert_int_equal(bw_cg_openat_beneath(dfd, "abs/tmp", O_PATH | O_DIRECTORY, use), -ELOOP);
                assert_int_equal(bw_cg_openat_beneath(dfd, "..", O_PATH | O_DIRECTORY, use), -EINVAL);
                assert_int_equal(bw_cg_openat_beneath(dfd, "a/../a", O_PATH | O_DIRECTORY, use), -EINVAL);
                assert_int_equal(bw_cg_openat_beneath(dfd, "a\nb", O_PATH | O_DIRECTORY, use), -EINVAL);
                assert_int_equal(bw_cg_openat_beneath(dfd, "a/missing", O_PATH | O_DIRECTORY, use), -ENOENT);
                assert_int_equal(bw_cg_openat_beneath(dfd, "a/b/file", O_PATH | O_DIRECTORY, use), -ENOTDIR);
        }
}

static void test_open_refuses(void **state) {
        _cleanup_tree_ char *t = tree_hybrid("-1\n", "100000\n", "0\n", true);
        _cleanup_tree_ char *outside = tree_hybrid("-1\n", "100000\n", "0\n", true);
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        struct bw_cg *cg = NULL;
        char p[PATH_MAX], q[PATH_MAX];

        assert_int_equal(bw_cg_root_open_dir(t, &root), 0);

        /* A directory symlink inside the bandwidth tree, pointing out. */
        snprintf(p, sizeof(p), "%s/cpu/web.slice/evil", t);
        snprintf(q, sizeof(q), "%s/cpu/" CG, outside);
        assert_int_equal(symlink(q, p), 0);
        assert_int_equal(bw_cg_open(root, "web.slice/evil", &cg), -ELOOP);

        /* A symlinked file inside a real cgroup directory. */
        put_v1(t, "cpu/linked", "-1\n", "100000\n", "0\n");
        snprintf(p, sizeof(p), "%s/cpu/linked/cpu.stat", t);
        assert_int_equal(unlink(p), 0);
        snprintf(q, sizeof(q), "%s/cpu/" CG "/cpu.stat", outside);
        assert_int_equal(symlink(q, p), 0);
        assert_int_equal(bw_cg_open(root, "linked", &cg), -ELOOP);

        assert_int_equal(bw_cg_open(root, "..", &cg), -EINVAL);
        assert_int_equal(bw_cg_open(root, "web.slice/../web.slice", &cg), -EINVAL);
        assert_int_equal(bw_cg_open(root, "web.slice\n", &cg), -EINVAL);
        assert_int_equal(bw_cg_open(root, NULL, &cg), -EINVAL);
        assert_int_equal(bw_cg_open(root, "nope", &cg), -ENOENT);
        assert_null(cg);

        /* A directory without bandwidth files: not governable. */
        tree_put(t, "cpu/empty/cpu.stat", V1_STAT);
        assert_int_equal(bw_cg_open(root, "empty", &cg), -EOPNOTSUPP);
        assert_null(cg);
        bw_cg_free(NULL);
}

/* ---- reads ------------------------------------------------------------ */

static void test_read_v2(void **state) {
        _cleanup_tree_ char *t = tree_v2("50000 100000\n", "20000\n");
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        struct bw_cpu_stat st;
        struct bw_psi psi;
        struct bw_bandwidth bw;

        open_cg(t, &root, &cg);
        assert_int_equal(cg->layout, BW_CG_LAYOUT_V2);
        assert_string_equal(cg->path, CG);
        assert_int_equal(cg->v2_dirfd, cg->bw_dirfd);
        assert_int_equal(cg->usage_fd, -1);
        assert_true(cg->pressure_fd >= 0);

        /* Twice: the held fds are re-read from offset 0. */
        for (int i = 0; i < 2; i++) {
                assert_int_equal(bw_cg_read_stat(cg, &st), 0);
                assert_int_equal(st.usage_usec, 5000000);
                assert_true(st.seen & BW_CPUSTAT_USER);
                assert_int_equal(st.nr_periods, 400);
                assert_int_equal(st.nr_throttled, 40);
                assert_int_equal(st.throttled_usec, 120000);
                assert_int_equal(st.nr_bursts, 3);
                assert_int_equal(st.burst_usec, 9000);
                assert_true(st.seen & BW_CPUSTAT_USAGE);
                assert_true(st.seen & BW_CPUSTAT_THROTTLED);
        }

        /* The held fd sees new content (kernel files regenerate on read). */
        tree_put(t, CG "/cpu.stat", "usage_usec 6000000\nuser_usec 1\nsystem_usec 2\n");
        assert_int_equal(bw_cg_read_stat(cg, &st), 0);
        assert_int_equal(st.usage_usec, 6000000);
        assert_false(st.seen & BW_CPUSTAT_NR_PERIODS);

        assert_int_equal(bw_cg_read_pressure(cg, &psi), 0);
        assert_int_equal(psi.some.avg10, 150);
        assert_int_equal(psi.some.total_usec, 123456);
        assert_true(psi.has_full);
        assert_int_equal(psi.full.total_usec, 6543);

        assert_int_equal(bw_cg_read_bandwidth(cg, &bw), 0);
        assert_int_equal(bw.quota_usec, 50000);
        assert_int_equal(bw.period_usec, 100000);
        assert_int_equal(bw.burst_usec, 20000);
        assert_true(bw.has_burst);

        tree_put(t, CG "/cpu.max", "max 250000\n");
        assert_int_equal(bw_cg_read_bandwidth(cg, &bw), 0);
        assert_true(bw.quota_usec == BW_QUOTA_MAX);
        assert_int_equal(bw.period_usec, 250000);

        /* Parser errors come through. */
        tree_put(t, CG "/cpu.max", "fifty 100000\n");
        assert_int_equal(bw_cg_read_bandwidth(cg, &bw), -EINVAL);
        tree_put(t, CG "/cpu.stat", "nr_periods 1\n");
        assert_int_equal(bw_cg_read_stat(cg, &st), -ENODATA);

        assert_int_equal(bw_cg_read_stat(NULL, &st), -EINVAL);
        assert_int_equal(bw_cg_read_bandwidth(cg, NULL), -EINVAL);
}

static void test_read_v2_no_burst_no_psi(void **state) {
        _cleanup_tree_ char *t = tree_v2("max 100000\n", NULL);
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        struct bw_bandwidth bw;
        struct bw_psi psi;
        char p[PATH_MAX];

        snprintf(p, sizeof(p), "%s/" CG "/cpu.pressure", t);
        assert_int_equal(unlink(p), 0);

        open_cg(t, &root, &cg);
        assert_int_equal(cg->pressure_fd, -1);
        assert_int_equal(bw_cg_read_pressure(cg, &psi), -EOPNOTSUPP);
        assert_int_equal(bw_cg_read_bandwidth(cg, &bw), 0);
        assert_false(bw.has_burst);
        assert_int_equal(bw.burst_usec, 0);
}

static void test_read_too_big(void **state) {
        _cleanup_tree_ char *t = tree_v2("max 100000\n", "0\n");
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        _cleanup_free_ char *big = NULL;
        struct bw_cpu_stat st;

        open_cg(t, &root, &cg);

        /* 4 KiB of unknown keys after a valid head: truncation, not a parse. */
        big = malloc(8192);
        assert_non_null(big);
        strcpy(big, V2_STAT);
        while (strlen(big) < 4200)
                strcat(big, "some_future_key_usec 12345678\n");
        tree_put(t, CG "/cpu.stat", big);
        assert_int_equal(bw_cg_read_stat(cg, &st), -EFBIG);
}

static void test_read_hybrid(void **state) {
        _cleanup_tree_ char *t = tree_hybrid("-1\n", "100000\n", "0\n", true);
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        struct bw_cpu_stat st;
        struct bw_psi psi;
        struct bw_bandwidth bw;

        open_cg(t, &root, &cg);
        assert_int_equal(cg->layout, BW_CG_LAYOUT_HYBRID);
        assert_true(cg->v2_dirfd >= 0);
        assert_int_not_equal(cg->v2_dirfd, cg->bw_dirfd);
        assert_true(cg->usage_fd >= 0);

        /* Throttling from v1 cpu.stat (ns -> µs), usage from the twin. */
        assert_int_equal(bw_cg_read_stat(cg, &st), 0);
        assert_int_equal(st.nr_periods, 250);
        assert_int_equal(st.nr_throttled, 25);
        assert_int_equal(st.throttled_usec, 80000);
        assert_int_equal(st.nr_bursts, 2);
        assert_int_equal(st.burst_usec, 4000);
        assert_int_equal(st.usage_usec, 7000000);
        assert_int_equal(st.seen & (BW_CPUSTAT_USER | BW_CPUSTAT_SYSTEM), BW_CPUSTAT_USER | BW_CPUSTAT_SYSTEM);
        assert_true(st.seen & BW_CPUSTAT_USAGE);
        assert_true(st.seen & BW_CPUSTAT_NR_THROTTLED);

        assert_int_equal(bw_cg_read_pressure(cg, &psi), 0);
        assert_int_equal(psi.full.avg10, 25);

        assert_int_equal(bw_cg_read_bandwidth(cg, &bw), 0);
        assert_true(bw.quota_usec == BW_QUOTA_MAX);
        assert_int_equal(bw.period_usec, 100000);
        assert_true(bw.has_burst);
        assert_int_equal(bw.burst_usec, 0);

        tree_put(t, "cpu/" CG "/cpu.cfs_quota_us", "30000\n");
        tree_put(t, "cpu/" CG "/cpu.cfs_burst_us", "5000\n");
        assert_int_equal(bw_cg_read_bandwidth(cg, &bw), 0);
        assert_int_equal(bw.quota_usec, 30000);
        assert_int_equal(bw.burst_usec, 5000);
}

static void test_read_hybrid_no_twin(void **state) {
        _cleanup_tree_ char *t = tree_hybrid("-1\n", "100000\n", NULL, false);
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        struct bw_cpu_stat st;
        struct bw_psi psi;
        struct bw_bandwidth bw;

        open_cg(t, &root, &cg);
        assert_int_equal(cg->v2_dirfd, -1);
        assert_int_equal(cg->usage_fd, -1);
        assert_int_equal(cg->pressure_fd, -1);
        assert_int_equal(bw_cg_read_stat(cg, &st), 0);
        assert_false(st.seen & BW_CPUSTAT_USAGE);
        assert_int_equal(st.nr_periods, 250);
        assert_int_equal(bw_cg_read_pressure(cg, &psi), -EOPNOTSUPP);
        assert_int_equal(bw_cg_read_bandwidth(cg, &bw), 0);
        assert_false(bw.has_burst);
}

/* The twin made after the cgroup was opened (its v1 directory first, as a
 * tool that makes both may): found when looked for again, then read as if
 * it had been there; not found while it is not there, nothing changed. */
static void test_find_twin_late(void **state) {
        _cleanup_tree_ char *t = tree_hybrid("-1\n", "100000\n", NULL, false);
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        struct bw_cpu_stat st;
        struct bw_psi psi;
        unsigned nfds;

        open_cg(t, &root, &cg);
        assert_false(cg->has_v2);
        nfds = bw_cg_nfds(cg);
        assert_int_equal(bw_cg_find_twin(cg), 0);
        assert_false(cg->has_v2);
        assert_int_equal(bw_cg_nfds(cg), nfds);
        assert_int_equal(bw_cg_dir(cg, BW_CG_TREE_V2), -EOPNOTSUPP);

        tree_put(t, "unified/" CG "/cpu.stat", TWIN_STAT);
        tree_put(t, "unified/" CG "/cpu.pressure", PRESSURE);
        assert_int_equal(bw_cg_find_twin(cg), 1);
        assert_true(cg->has_v2);
        assert_int_equal(bw_cg_nfds(cg), nfds + 3);
        assert_true(bw_cg_has(cg, BW_CG_FILE_USAGE));
        assert_true(bw_cg_has(cg, BW_CG_FILE_PRESSURE));
        assert_int_equal(bw_cg_read_stat(cg, &st), 0);
        assert_true(st.seen & BW_CPUSTAT_USAGE);
        assert_int_equal(st.usage_usec, 7000000);
        assert_int_equal(st.nr_periods, 250);
        assert_int_equal(bw_cg_read_pressure(cg, &psi), 0);
        assert_int_equal(psi.full.avg10, 25);
        assert_true(bw_cg_dir(cg, BW_CG_TREE_V2) >= 0);

        /* Found once: not again. */
        assert_int_equal(bw_cg_find_twin(cg), 0);
        assert_int_equal(bw_cg_nfds(cg), nfds + 3);

        /* Released and opened again like a twin found at the start. */
        assert_true(bw_cg_release(cg, _BW_CG_FILE_ALL - 1) > 0);
        assert_int_equal(bw_cg_read_stat(cg, &st), 0);
        assert_int_equal(st.usage_usec, 7000000);
}

/* Not HYBRID: nothing to look for. */
static void test_find_twin_not_hybrid(void **state) {
        _cleanup_tree_ char *t = tree_v2("50000 100000\n", "0\n");
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;

        open_cg(t, &root, &cg);
        assert_int_equal(bw_cg_find_twin(cg), 0);
        assert_int_equal(bw_cg_find_twin(NULL), -EINVAL);
}

static void test_read_v1(void **state) {
        _cleanup_tree_ char *t = tree_new();
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        struct bw_cg *cg = NULL;
        struct bw_cpu_stat st;
        struct bw_psi psi;

        /* Separate cpuacct hierarchy. */
        put_v1(t, "cpu/" CG, "20000\n", "100000\n", "0\n");
        tree_put(t, "cpuacct/" CG "/cpuacct.usage", "123456789\n");
        assert_int_equal(bw_cg_root_open_dir(t, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_V1);
        assert_int_equal(bw_cg_open(root, CG, &cg), 0);
        assert_int_equal(cg->v2_dirfd, -1);
        assert_int_equal(bw_cg_read_stat(cg, &st), 0);
        assert_int_equal(st.usage_usec, 123456);
        assert_true(st.seen & BW_CPUSTAT_USAGE);
        assert_int_equal(st.nr_throttled, 25);
        assert_int_equal(bw_cg_read_pressure(cg, &psi), -EOPNOTSUPP);
        bw_cg_free(cg);

        /* Comounted cpu,cpuacct: the usage in the cpu directory wins. */
        tree_put(t, "cpu/" CG "/cpuacct.usage", "999000\n");
        assert_int_equal(bw_cg_open(root, CG, &cg), 0);
        assert_int_equal(bw_cg_read_stat(cg, &st), 0);
        assert_int_equal(st.usage_usec, 999);
        bw_cg_free(cg);

        /* No usage anywhere: stat without usage. */
        put_v1(t, "cpu/other", "-1\n", "100000\n", "0\n");
        assert_int_equal(bw_cg_open(root, "other", &cg), 0);
        assert_int_equal(cg->usage_fd, -1);
        assert_int_equal(bw_cg_read_stat(cg, &st), 0);
        assert_false(st.seen & BW_CPUSTAT_USAGE);
        bw_cg_free(cg);
}

/* cpu.stat.local: PREFIX is where the bandwidth tree sits in T ("" or
 * "cpu/"). CG gets the fixture FILE, its sibling "web.slice/old.service" (a
 * kernel before 6.6) none. */
static void check_local(const char *t, const char *prefix, const char *file, uint64_t usec,
                        const char *newer, uint64_t newer_usec) {
        _cleanup_free_ char *content = fixture_text(file);
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL, *old = NULL;
        struct bw_cpu_stat st;
        char p[PATH_MAX];

        print_message("# %s in %s\n", file, prefix[0] ? prefix : "v2");
        snprintf(p, sizeof(p), "%s" CG "/cpu.stat.local", prefix);
        tree_put(t, p, content);

        open_cg(t, &root, &cg);
        assert_true(cg->local_fd >= 0);

        /* Twice: the held fd is re-read from offset 0. */
        for (int i = 0; i < 2; i++) {
                memset(&st, 0xaa, sizeof(st));
                assert_int_equal(bw_cg_read_stat(cg, &st), 0);
                assert_true(st.seen & BW_CPUSTAT_LOCAL_THROTTLED);
                assert_int_equal(st.local_throttled_usec, usec);
        }

        /* The held fd sees new content. */
        tree_put(t, p, newer);
        assert_int_equal(bw_cg_read_stat(cg, &st), 0);
        assert_true(st.seen & BW_CPUSTAT_LOCAL_THROTTLED);
        assert_int_equal(st.local_throttled_usec, newer_usec);

        assert_int_equal(bw_cg_open(root, "web.slice/old.service", &old), 0);
        assert_int_equal(old->local_fd, -1);
        memset(&st, 0xaa, sizeof(st));
        assert_int_equal(bw_cg_read_stat(old, &st), 0);
        assert_false(st.seen & BW_CPUSTAT_LOCAL_THROTTLED);
        assert_int_equal(st.local_throttled_usec, 0);
        assert_true(st.seen & BW_CPUSTAT_NR_THROTTLED);
}

static void test_read_local(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "0\n");
        _cleanup_tree_ char *hy = tree_hybrid("-1\n", "100000\n", "0\n", true);
        _cleanup_tree_ char *v1 = tree_new();
        _cleanup_free_ char *v1_stat = fixture_text("cpustat/v1-throttled-by-parent.stat");
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        struct bw_cpu_stat st;

        tree_put(v2, "web.slice/old.service/cpu.max", "max 100000\n");
        tree_put(v2, "web.slice/old.service/cpu.stat", V2_STAT);
        check_local(v2, "", "cpustat/v2-6.6.stat.local", 0, "throttled_usec 1635564\n", 1635564);

        /* HYBRID: the bandwidth tree's file, never the twin's (a v2 tree
         * without the cpu controller has an empty one). */
        put_v1(hy, "cpu/web.slice/old.service", "-1\n", "100000\n", NULL);
        tree_put(hy, "unified/" CG "/cpu.stat.local", "");
        check_local(hy, "cpu/", "cpustat/v1-throttled-by-parent.stat.local", 1635564,
                    "throttled_time 1999\n", 1);

        put_v1(v1, "cpu/" CG, "-1\n", "100000\n", NULL);
        put_v1(v1, "cpu/web.slice/old.service", "-1\n", "100000\n", NULL);
        check_local(v1, "cpu/", "cpustat/v1-host-root.stat.local", 0, "throttled_time 5000000\n", 5000);

        /* This host's child throttled by its parent only: nothing in
         * cpu.stat, 1.6 s in cpu.stat.local. */
        tree_put(hy, "cpu/" CG "/cpu.stat", v1_stat);
        tree_put(hy, "cpu/" CG "/cpu.stat.local", "throttled_time 1635564128\n");
        open_cg(hy, &root, &cg);
        assert_int_equal(bw_cg_read_stat(cg, &st), 0);
        assert_int_equal(st.throttled_usec, 0);
        assert_int_equal(st.nr_throttled, 0);
        assert_int_equal(st.local_throttled_usec, 1635564);
        assert_int_equal(st.usage_usec, 7000000);
        assert_true(st.seen & BW_CPUSTAT_USAGE);
        assert_true(st.seen & BW_CPUSTAT_LOCAL_THROTTLED);
}

/* A cpu.stat.local the parser refuses costs the bit, not the sample. */
static void test_read_local_bad(void **state) {
        static const struct {
                const char *v2, *v1;
        } bad[] = {
                { "", "" },                                             /* empty (no cpu controller) */
                { "throttled_time 5000\n", "throttled_usec 5\n" },    /* the other version's key */
                { "throttled_usec\n", "throttled_time\n" },           /* malformed */
                { "throttled_usec 1\nthrottled_usec 2\n", "throttled_time 1\nthrottled_time 2\n" },
                { "throttled_usec 18446744073709551616\n", "throttled_time -1\n" },
                { "throttled_usec 1\r\n", "throttled_time 1\xff\n" },
        };
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "0\n");
        _cleanup_tree_ char *hy = tree_hybrid("-1\n", "100000\n", "0\n", true);
        _cleanup_(rootp) struct bw_cg_root *root2 = NULL, *rooth = NULL;
        _cleanup_(cgp) struct bw_cg *cg2 = NULL, *cgh = NULL;
        _cleanup_free_ char *big = NULL;
        struct bw_cpu_stat st;

        tree_put(v2, CG "/cpu.stat.local", "throttled_usec 1\n");
        tree_put(hy, "cpu/" CG "/cpu.stat.local", "throttled_time 1000\n");
        open_cg(v2, &root2, &cg2);
        open_cg(hy, &rooth, &cgh);

        for (size_t i = 0; i < ELEMENTSOF(bad) + 1; i++) {
                print_message("# bad cpu.stat.local %zu\n", i);
                if (i < ELEMENTSOF(bad)) {
                        tree_put(v2, CG "/cpu.stat.local", bad[i].v2);
                        tree_put(hy, "cpu/" CG "/cpu.stat.local", bad[i].v1);
                } else {
                        /* A full read buffer: truncated, not parsed. */
                        big = malloc(8192);
                        assert_non_null(big);
                        strcpy(big, "throttled_usec 1\n");
                        while (strlen(big) < 4200)
                                strcat(big, "some_future_key_usec 12345678\n");
                        tree_put(v2, CG "/cpu.stat.local", big);
                        tree_put(hy, "cpu/" CG "/cpu.stat.local", big);
                }

                memset(&st, 0xaa, sizeof(st));
                assert_int_equal(bw_cg_read_stat(cg2, &st), 0);
                assert_false(st.seen & BW_CPUSTAT_LOCAL_THROTTLED);
                assert_int_equal(st.local_throttled_usec, 0);
                assert_int_equal(st.usage_usec, 5000000);
                assert_int_equal(st.throttled_usec, 120000);

                memset(&st, 0xaa, sizeof(st));
                assert_int_equal(bw_cg_read_stat(cgh, &st), 0);
                assert_false(st.seen & BW_CPUSTAT_LOCAL_THROTTLED);
                assert_int_equal(st.local_throttled_usec, 0);
                assert_int_equal(st.usage_usec, 7000000);
                assert_int_equal(st.throttled_usec, 80000);
        }

        /* cpu.stat itself is not optional: its errors still fail the read. */
        tree_put(v2, CG "/cpu.stat.local", "throttled_usec 1\n");
        tree_put(v2, CG "/cpu.stat", "nr_periods 1\n");
        assert_int_equal(bw_cg_read_stat(cg2, &st), -ENODATA);
}

/* The cgroup directory goes away under open fds: every call says "vanished". */
static void vanish(const char *t, const char *dir) {
        static const char *const files[] = {
                "cpu.max", "cpu.max.burst", "cpu.stat", "cpu.stat.local", "cpu.pressure",
                "cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.cfs_burst_us", "cpuacct.usage",
        };
        char p[PATH_MAX];

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                snprintf(p, sizeof(p), "%s/%s/%s", t, dir, files[i]);
                (void) unlink(p);
        }
        snprintf(p, sizeof(p), "%s/%s", t, dir);
        assert_int_equal(rmdir(p), 0);
}

static void assert_all_vanished(struct bw_cg *cg, bool has_psi) {
        struct bw_bandwidth target = { .quota_usec = 10000, .period_usec = 100000 };
        struct bw_bandwidth bw;
        struct bw_cpu_stat st;
        struct bw_psi psi;
        int r;

        fake_reset();
        r = bw_cg_read_stat(cg, &st);
        assert_true(bw_cg_error_is_vanished(r));
        r = bw_cg_read_pressure(cg, &psi);
        assert_true(has_psi ? bw_cg_error_is_vanished(r) : r == -EOPNOTSUPP);
        r = bw_cg_read_bandwidth(cg, &bw);
        assert_true(bw_cg_error_is_vanished(r));
        r = bw_cg_write_bandwidth(cg, &target, NULL);
        assert_true(bw_cg_error_is_vanished(r));
        assert_int_equal(fake.n, 0);
        assert_int_equal(cg->stats.writes, 0);
        fake.on = false;
}

static void test_vanished(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "0\n");
        _cleanup_tree_ char *hy = tree_hybrid("50000\n", "100000\n", "0\n", true);
        _cleanup_(rootp) struct bw_cg_root *root2 = NULL, *rooth = NULL;
        _cleanup_(cgp) struct bw_cg *cg2 = NULL, *cgh = NULL, *cgt = NULL;
        struct bw_cpu_stat st;
        struct bw_psi psi;

        tree_put(v2, CG "/cpu.stat.local", "throttled_usec 0\n");
        open_cg(v2, &root2, &cg2);
        assert_true(cg2->local_fd >= 0);
        vanish(v2, CG);
        assert_all_vanished(cg2, true);

        tree_put(hy, "cpu/" CG "/cpu.stat.local", "throttled_time 0\n");
        open_cg(hy, &rooth, &cgh);
        assert_true(cgh->local_fd >= 0);
        vanish(hy, "cpu/" CG);
        vanish(hy, "unified/" CG);
        tree_put(hy, "unified/" CG "/cpu.stat", TWIN_STAT);
        tree_put(hy, "unified/" CG "/cpu.pressure", PRESSURE);
        assert_all_vanished(cgh, true);

        /* Only the v2 twin vanished: usage and PSI reads say so. */
        assert_int_equal(bw_cg_open(rooth, "web.slice", &cgt), -EOPNOTSUPP);
        put_v1(hy, "cpu/" CG, "50000\n", "100000\n", "0\n");
        assert_int_equal(bw_cg_open(rooth, CG, &cgt), 0);
        assert_true(cgt->pressure_fd >= 0);
        vanish(hy, "unified/" CG);
        assert_true(bw_cg_error_is_vanished(bw_cg_read_stat(cgt, &st)));
        assert_true(bw_cg_error_is_vanished(bw_cg_read_pressure(cgt, &psi)));
}

/* cpu.stat.local read last, after cpu.stat succeeded: a vanished cgroup is
 * still reported as such, not as a sample without the bit. */
static void test_vanished_local(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "0\n");
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        struct bw_cpu_stat st;
        char p[PATH_MAX];
        int r;

        tree_put(v2, CG "/cpu.stat.local", "throttled_usec 0\n");
        open_cg(v2, &root, &cg);
        snprintf(p, sizeof(p), "%s/" CG "/cpu.stat.local", v2);
        assert_int_equal(unlink(p), 0);
        memset(&st, 0xaa, sizeof(st));
        r = bw_cg_read_stat(cg, &st);
        assert_true(bw_cg_error_is_vanished(r));
        assert_int_equal(st.seen, 0xaaaaaaaa);
}

/* The light sample: cpu.stat without cpu.stat.local, the quota from the
 * held file (an external write seen without reopening). */
static void test_read_light_quota(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "0\n");
        _cleanup_tree_ char *hy = tree_hybrid("50000\n", "100000\n", "0\n", true);
        _cleanup_(rootp) struct bw_cg_root *root2 = NULL, *rooth = NULL;
        _cleanup_(cgp) struct bw_cg *cg2 = NULL, *cgh = NULL;
        struct bw_cpu_stat st;
        uint64_t q, p;

        tree_put(v2, CG "/cpu.stat.local", "throttled_usec 777\n");
        open_cg(v2, &root2, &cg2);
        assert_int_equal(bw_cg_read_stat_light(cg2, &st), 0);
        assert_int_equal(st.usage_usec, 5000000);
        assert_int_equal(st.throttled_usec, 120000);
        assert_false(st.seen & BW_CPUSTAT_LOCAL_THROTTLED);
        assert_int_equal(bw_cg_read_stat(cg2, &st), 0);
        assert_true(st.seen & BW_CPUSTAT_LOCAL_THROTTLED);
        assert_int_equal(st.local_throttled_usec, 777);
        /* V2: no usage file of its own; the light read has it. */
        assert_int_equal(bw_cg_read_usage(cg2, &st), -EOPNOTSUPP);
        st = (struct bw_cpu_stat) { 0 };
        assert_int_equal(bw_cg_read_usage_any(cg2, &st), 0);
        assert_true(st.seen & BW_CPUSTAT_USAGE);
        assert_int_equal(st.usage_usec, 5000000);
        assert_int_equal(st.throttled_usec, 120000);
        assert_int_equal(bw_cg_read_quota(cg2, &q, &p), 0);
        assert_int_equal(q, 50000);
        assert_int_equal(p, 100000);
        tree_put(v2, CG "/cpu.max", "max 50000\n");
        assert_int_equal(bw_cg_read_quota(cg2, &q, &p), 0);
        assert_int_equal(q, BW_QUOTA_MAX);
        assert_int_equal(p, 50000);

        open_cg(hy, &rooth, &cgh);
        assert_int_equal(bw_cg_read_stat_light(cgh, &st), 0);
        assert_int_equal(st.usage_usec, 7000000);       /* the twin's */
        assert_int_equal(st.nr_throttled, 25);          /* v1 cpu.stat */
        /* Hybrid: the twin's usage alone, v1's cpu.stat not read. */
        st = (struct bw_cpu_stat) { 0 };
        assert_int_equal(bw_cg_read_usage_any(cgh, &st), 0);
        assert_true(st.seen & BW_CPUSTAT_USAGE);
        assert_int_equal(st.usage_usec, 7000000);
        assert_false(st.seen & BW_CPUSTAT_NR_THROTTLED);
        tree_put(hy, "cpu/" CG "/cpu.cfs_quota_us", "70000\n");
        assert_int_equal(bw_cg_read_quota(cgh, &q, &p), 0);
        assert_int_equal(q, 70000);
        assert_int_equal(p, 0);                         /* v1: the period is another file */
        /* On a fixture tree (regular files, readable after unlink) only the
         * full read notices a removed cgroup; kernfs fails every read. */
        vanish(hy, "cpu/" CG);
        assert_int_equal(bw_cg_read_stat_light(cgh, &st), 0);
        assert_true(bw_cg_error_is_vanished(bw_cg_read_stat(cgh, &st)));
}

/* Released files are opened again when read; a cgroup gone meanwhile is
 * reported as vanished by the reopen. */
static void test_release(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "0\n");
        _cleanup_tree_ char *hy = tree_hybrid("50000\n", "100000\n", "0\n", true);
        _cleanup_(rootp) struct bw_cg_root *root2 = NULL, *rooth = NULL;
        _cleanup_(cgp) struct bw_cg *cg2 = NULL, *cgh = NULL;
        struct bw_cpu_stat st;
        struct bw_bandwidth bw;
        struct bw_psi psi;
        unsigned all = _BW_CG_FILE_ALL - 1, n0;

        tree_put(v2, CG "/cpu.stat.local", "throttled_usec 5\n");
        open_cg(v2, &root2, &cg2);
        n0 = bw_cg_nfds(cg2);
        assert_int_equal(n0, 5);                        /* dir, quota, stat, local, pressure */
        assert_int_equal(bw_cg_release(cg2, all), 4);
        assert_int_equal(bw_cg_nfds(cg2), 1);
        assert_true(bw_cg_has(cg2, BW_CG_FILE_PRESSURE));
        assert_false(bw_cg_holds(cg2, BW_CG_FILE_PRESSURE));
        assert_false(bw_cg_has(cg2, BW_CG_FILE_USAGE));  /* V2: cpu.stat has it */
        assert_int_equal(bw_cg_release(cg2, all), 0);
        assert_int_equal(bw_cg_read_stat(cg2, &st), 0);
        assert_int_equal(st.local_throttled_usec, 5);
        assert_int_equal(bw_cg_read_bandwidth(cg2, &bw), 0);
        assert_int_equal(bw.quota_usec, 50000);
        assert_int_equal(bw_cg_read_pressure(cg2, &psi), 0);
        assert_true(bw_cg_holds(cg2, BW_CG_FILE_PRESSURE));
        assert_int_equal(bw_cg_nfds(cg2), n0);
        assert_int_equal(bw_cg_release(cg2, BW_CG_FILE_STAT | BW_CG_FILE_QUOTA), 2);
        vanish(v2, CG);
        assert_true(bw_cg_error_is_vanished(bw_cg_read_stat(cg2, &st)));
        assert_true(bw_cg_error_is_vanished(bw_cg_read_bandwidth(cg2, &bw)));

        /* Hybrid: the twin's usage and pressure beneath the v2 directory. */
        open_cg(hy, &rooth, &cgh);
        n0 = bw_cg_nfds(cgh);
        assert_int_equal(bw_cg_release(cgh, all), n0 - 2);
        assert_int_equal(bw_cg_read_stat_light(cgh, &st), 0);
        assert_int_equal(st.usage_usec, 7000000);
        assert_int_equal(bw_cg_read_pressure(cgh, &psi), 0);
        assert_int_equal(psi.full.total_usec, 6543);
}

/* Released directories: a read of a file still held needs none; anything
 * else opens them again beneath the root, and only the directory the
 * cgroup was opened at will do. */
static void test_release_dirs(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "0\n");
        _cleanup_tree_ char *hy = tree_hybrid("50000\n", "100000\n", "0\n", true);
        _cleanup_(rootp) struct bw_cg_root *root2 = NULL, *rooth = NULL;
        _cleanup_(cgp) struct bw_cg *cg2 = NULL, *cgh = NULL;
        struct bw_bandwidth bw, target = { .quota_usec = 60000, .period_usec = 100000 };
        struct bw_cpu_stat st;
        struct bw_psi psi;
        _cleanup_free_ char *max = NULL;
        int dfd;

        open_cg(v2, &root2, &cg2);
        /* Everything but cpu.stat: dir, quota, pressure (no cpu.stat.local). */
        assert_int_equal(bw_cg_nfds(cg2), 4);
        assert_int_equal(bw_cg_release(cg2, ((_BW_CG_FILE_ALL - 1) & ~BW_CG_FILE_STAT) | BW_CG_DIRS), 3);
        assert_int_equal(bw_cg_nfds(cg2), 1);
        assert_int_equal(bw_cg_release(cg2, BW_CG_DIRS), 0);
        assert_int_equal(bw_cg_read_stat_light(cg2, &st), 0);
        assert_int_equal(bw_cg_nfds(cg2), 1);           /* the held file alone */
        assert_int_equal(bw_cg_read_bandwidth(cg2, &bw), 0);
        assert_int_equal(bw.quota_usec, 50000);
        assert_int_equal(bw_cg_nfds(cg2), 3);           /* the directory, the quota too */
        assert_int_equal(bw_cg_release(cg2, BW_CG_FILE_QUOTA | BW_CG_DIRS), 2);
        assert_int_equal(bw_cg_write_bandwidth(cg2, &target, NULL), 1);
        max = tree_get(v2, CG "/cpu.max");
        assert_string_equal(max, "60000 100000\n");
        dfd = bw_cg_dir(cg2, BW_CG_TREE_V2);            /* V2: the same directory */
        assert_true(dfd >= 0);
        assert_int_equal(bw_cg_dir(cg2, BW_CG_TREE_BW), dfd);
        assert_int_equal(bw_cg_same(root2, cg2), 1);

        /* Removed and made again at the same path: another directory. */
        assert_int_equal(bw_cg_nfds(cg2), 3);           /* the write read the quota */
        assert_int_equal(bw_cg_release(cg2, BW_CG_FILE_QUOTA | BW_CG_DIRS), 2);
        vanish(v2, CG);
        assert_int_equal(bw_cg_dir(cg2, BW_CG_TREE_BW), -ENODEV);
        tree_put(v2, CG "/cpu.max", "70000 100000\n");
        tree_put(v2, CG "/cpu.stat", V2_STAT);
        tree_put(v2, CG "/cpu.pressure", PRESSURE);
        assert_int_equal(bw_cg_same(root2, cg2), 0);
        assert_int_equal(bw_cg_dir(cg2, BW_CG_TREE_BW), -ENODEV);
        assert_true(bw_cg_error_is_vanished(bw_cg_read_pressure(cg2, &psi)));
        assert_true(bw_cg_error_is_vanished(bw_cg_read_bandwidth(cg2, &bw)));
        assert_true(bw_cg_error_is_vanished(bw_cg_write_bandwidth(cg2, &target, NULL)));
        free(max);
        max = tree_get(v2, CG "/cpu.max");
        assert_string_equal(max, "70000 100000\n");   /* not written through the new one */
        assert_int_equal(bw_cg_nfds(cg2), 1);

        /* Hybrid: the v2 twin's directory apart; pressure opens it alone. */
        open_cg(hy, &rooth, &cgh);
        assert_int_equal(bw_cg_release(cgh, BW_CG_FILE_PRESSURE | BW_CG_FILE_QUOTA | BW_CG_DIRS), 4);
        assert_int_equal(bw_cg_read_stat_light(cgh, &st), 0);  /* cpu.stat and the twin's held */
        assert_int_equal(st.usage_usec, 7000000);
        assert_int_equal(bw_cg_read_pressure(cgh, &psi), 0);
        assert_int_equal(psi.full.total_usec, 6543);
        assert_true(cgh->v2_dirfd >= 0);
        assert_int_equal(cgh->bw_dirfd, -1);
        assert_true(bw_cg_dir(cgh, BW_CG_TREE_BW) >= 0);
        assert_int_not_equal(bw_cg_dir(cgh, BW_CG_TREE_BW), bw_cg_dir(cgh, BW_CG_TREE_V2));
        assert_int_equal(bw_cg_release(cgh, BW_CG_DIRS), 2);
}

/* ---- ancestors -------------------------------------------------------- */

#define LEAF "top.slice/mid.slice/leaf.service"

/* Set DIR's limit ("" is the root): cpu.max in V2, cpu/DIR/cpu.cfs_* in v1. */
static void put_limit(const char *t, enum bw_cg_layout layout, const char *dir, uint64_t quota, uint64_t period) {
        const char *sep = dir[0] ? "/" : "";
        char p[PATH_MAX], v[64];

        if (layout == BW_CG_LAYOUT_V2) {
                snprintf(p, sizeof(p), "%s%scpu.max", dir, sep);
                if (quota == BW_QUOTA_MAX)
                        snprintf(v, sizeof(v), "max %" PRIu64 "\n", period);
                else
                        snprintf(v, sizeof(v), "%" PRIu64 " %" PRIu64 "\n", quota, period);
                tree_put(t, p, v);
                return;
        }

        snprintf(p, sizeof(p), "cpu/%s%scpu.cfs_quota_us", dir, sep);
        if (quota == BW_QUOTA_MAX)
                snprintf(v, sizeof(v), "-1\n");
        else
                snprintf(v, sizeof(v), "%" PRIu64 "\n", quota);
        tree_put(t, p, v);
        snprintf(p, sizeof(p), "cpu/%s%scpu.cfs_period_us", dir, sep);
        snprintf(v, sizeof(v), "%" PRIu64 "\n", period);
        tree_put(t, p, v);
}

/* LEAF under two ancestors and the top-level solo.service, all at max; the
 * root itself is limited to 10 ms / 100 ms, which must never count. */
static char *tree_ancestors(enum bw_cg_layout layout) {
        static const char *const dirs[] = { "top.slice", "top.slice/mid.slice", LEAF, "solo.service" };
        char *t = tree_new();
        char p[PATH_MAX];

        if (layout == BW_CG_LAYOUT_V2)
                tree_put(t, "cgroup.controllers", "cpu io memory pids\n");
        else if (layout == BW_CG_LAYOUT_HYBRID)
                tree_put(t, "unified/cgroup.procs", "");

        put_limit(t, layout, "", 10000, 100000);
        tree_put(t, layout == BW_CG_LAYOUT_V2 ? "cpu.stat" : "cpu/cpu.stat",
                 layout == BW_CG_LAYOUT_V2 ? V2_STAT : V1_STAT);
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                put_limit(t, layout, dirs[i], BW_QUOTA_MAX, 100000);
                snprintf(p, sizeof(p), "%s%s/cpu.stat", layout == BW_CG_LAYOUT_V2 ? "" : "cpu/", dirs[i]);
                tree_put(t, p, layout == BW_CG_LAYOUT_V2 ? V2_STAT : V1_STAT);
        }
        return t;
}

static const enum bw_cg_layout anc_layouts[] = {
        BW_CG_LAYOUT_V2, BW_CG_LAYOUT_HYBRID, BW_CG_LAYOUT_V1,
};

/* Open fds of this process, to see that nothing stays open. */
static unsigned count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        assert_non_null(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

/* Call with sentinels, check that they stay on failure, return the result. */
static int ancestor_quota(const struct bw_cg_root *root, struct bw_cg *cg, uint64_t period,
                          uint64_t *ret_quota, char **ret_path) {
        char *path = (char *) "sentinel";
        uint64_t quota = 4242;
        int r;

        r = bw_cg_read_ancestor_quota(root, cg, period, &quota, ret_path ? &path : NULL);
        if (r < 0) {
                assert_int_equal(quota, 4242);
                assert_string_equal(path, "sentinel");
        }
        *ret_quota = quota;
        if (ret_path)
                *ret_path = r >= 0 ? path : NULL;
        return r;
}

static void test_ancestor_quota(void **state) {
        static const struct {
                const char *name;
                uint64_t top_quota, top_period, mid_quota, mid_period;
                uint64_t period;        /* asked for */
                int r;
                uint64_t quota;
                const char *path;
        } cases[] = {
                { "no ancestor limited", BW_QUOTA_MAX, 100000, BW_QUOTA_MAX, 100000,
                  100000, 0, BW_QUOTA_MAX, NULL },
                { "parent limited", BW_QUOTA_MAX, 100000, 50000, 100000,
                  100000, 1, 50000, "top.slice/mid.slice" },
                { "grandparent limited, parent at max", 30000, 100000, BW_QUOTA_MAX, 100000,
                  100000, 1, 30000, "top.slice" },
                { "both limited: the parent", 40000, 100000, 20000, 100000,
                  100000, 1, 20000, "top.slice/mid.slice" },
                /* v2 allows a child above its parent; the nearest still wins */
                { "nearest, not tightest", 20000, 100000, 50000, 100000,
                  100000, 1, 50000, "top.slice/mid.slice" },
                { "scaled to a longer period", BW_QUOTA_MAX, 100000, 25000, 50000,
                  100000, 1, 50000, "top.slice/mid.slice" },
                { "scaled to a shorter period, rounded down", BW_QUOTA_MAX, 100000, 33333, 100000,
                  10000, 1, 3333, "top.slice/mid.slice" },
                { "grandparent scaled", 250000, 1000000, BW_QUOTA_MAX, 50000,
                  100000, 1, 25000, "top.slice" },
                { "exactly 1 ms", BW_QUOTA_MAX, 100000, 10000, 100000,
                  10000, 1, 1000, "top.slice/mid.slice" },
                { "below 1 ms: 1 ms", BW_QUOTA_MAX, 100000, 1500, 100000,
                  10000, 1, 1000, "top.slice/mid.slice" },
                { "1 ms period to 1 s", BW_QUOTA_MAX, 100000, 1000, 1000,
                  1000000, 1, 1000000, "top.slice/mid.slice" },
                { "kernel's largest quota, not capped", BW_QUOTA_MAX, 100000, BW_QUOTA_LIMIT_USEC, 1000,
                  1000000, 1, BW_QUOTA_LIMIT_USEC * 1000, "top.slice/mid.slice" },
        };

        for (size_t l = 0; l < ELEMENTSOF(anc_layouts); l++)
                for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                        enum bw_cg_layout layout = anc_layouts[l];
                        _cleanup_tree_ char *t = tree_ancestors(layout);
                        _cleanup_(rootp) struct bw_cg_root *root = NULL;
                        _cleanup_(cgp) struct bw_cg *cg = NULL;
                        _cleanup_free_ char *path = NULL;
                        uint64_t quota;
                        unsigned fds;

                        print_message("# %s: %s\n", bw_cg_layout_to_string(layout), cases[i].name);
                        put_limit(t, layout, "top.slice", cases[i].top_quota, cases[i].top_period);
                        put_limit(t, layout, "top.slice/mid.slice", cases[i].mid_quota, cases[i].mid_period);
                        assert_int_equal(bw_cg_root_open_dir(t, &root), 0);
                        assert_int_equal(root->layout, layout);
                        assert_int_equal(bw_cg_open(root, LEAF, &cg), 0);

                        fds = count_fds();
                        assert_int_equal(ancestor_quota(root, cg, cases[i].period, &quota, &path), cases[i].r);
                        assert_int_equal(count_fds(), fds);
                        assert_int_equal(quota, cases[i].quota);
                        if (cases[i].path)
                                assert_string_equal(path, cases[i].path);
                        else
                                assert_null(path);

                        /* Without ret_path: the same answer. */
                        assert_int_equal(ancestor_quota(root, cg, cases[i].period, &quota, NULL), cases[i].r);
                        assert_int_equal(quota, cases[i].quota);
                }
}

/* The root is not consulted: limited in every tree here, it never counts. */
static void test_ancestor_quota_top_level(void **state) {
        for (size_t l = 0; l < ELEMENTSOF(anc_layouts); l++) {
                enum bw_cg_layout layout = anc_layouts[l];
                _cleanup_tree_ char *t = tree_ancestors(layout);
                _cleanup_(rootp) struct bw_cg_root *root = NULL;
                _cleanup_(cgp) struct bw_cg *solo = NULL, *top = NULL, *self = NULL;
                _cleanup_free_ char *path = NULL;
                uint64_t quota;

                print_message("# %s\n", bw_cg_layout_to_string(layout));
                put_limit(t, layout, "top.slice", 20000, 100000);
                assert_int_equal(bw_cg_root_open_dir(t, &root), 0);

                /* A top-level cgroup has no ancestors. */
                assert_int_equal(bw_cg_open(root, "solo.service", &solo), 0);
                assert_int_equal(ancestor_quota(root, solo, 100000, &quota, &path), 0);
                assert_true(quota == BW_QUOTA_MAX);
                assert_null(path);
                assert_int_equal(bw_cg_open(root, "/top.slice", &top), 0);
                assert_int_equal(ancestor_quota(root, top, 100000, &quota, &path), 0);
                assert_true(quota == BW_QUOTA_MAX);

                /* The root opened as a cgroup (a v1 root has bandwidth
                 * files, this v2 one too): no ancestors either. */
                assert_int_equal(bw_cg_open(root, "", &self), 0);
                assert_int_equal(ancestor_quota(root, self, 100000, &quota, &path), 0);
                assert_true(quota == BW_QUOTA_MAX);
                assert_null(path);
        }
}

static void test_ancestor_quota_errors(void **state) {
        for (size_t l = 0; l < ELEMENTSOF(anc_layouts); l++) {
                enum bw_cg_layout layout = anc_layouts[l];
                const char *pre = layout == BW_CG_LAYOUT_V2 ? "" : "cpu/";
                _cleanup_tree_ char *t = tree_ancestors(layout);
                _cleanup_tree_ char *other = tree_ancestors(layout == BW_CG_LAYOUT_V2 ?
                                                            BW_CG_LAYOUT_HYBRID : BW_CG_LAYOUT_V2);
                _cleanup_(rootp) struct bw_cg_root *root = NULL, *root_other = NULL;
                _cleanup_(cgp) struct bw_cg *cg = NULL;
                char p[PATH_MAX], q[PATH_MAX];
                uint64_t quota;

                print_message("# %s\n", bw_cg_layout_to_string(layout));
                put_limit(t, layout, "top.slice", 20000, 100000);
                assert_int_equal(bw_cg_root_open_dir(t, &root), 0);
                assert_int_equal(bw_cg_root_open_dir(other, &root_other), 0);
                assert_int_equal(bw_cg_open(root, LEAF, &cg), 0);

                assert_int_equal(ancestor_quota(NULL, cg, 100000, &quota, NULL), -EINVAL);
                assert_int_equal(ancestor_quota(root, NULL, 100000, &quota, NULL), -EINVAL);
                assert_int_equal(bw_cg_read_ancestor_quota(root, cg, 100000, NULL, NULL), -EINVAL);
                assert_int_equal(ancestor_quota(root, cg, 999, &quota, NULL), -EINVAL);
                assert_int_equal(ancestor_quota(root, cg, 1000001, &quota, NULL), -EINVAL);
                assert_int_equal(ancestor_quota(root, cg, 0, &quota, NULL), -EINVAL);
                assert_int_equal(ancestor_quota(root_other, cg, 100000, &quota, NULL), -EINVAL);
                assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), 1);
                assert_int_equal(quota, 20000);

                /* An ancestor without its bandwidth file: no limit there. */
                snprintf(p, sizeof(p), "%s/%stop.slice/%s", t, pre,
                         layout == BW_CG_LAYOUT_V2 ? "cpu.max" : "cpu.cfs_quota_us");
                assert_int_equal(unlink(p), 0);
                assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), 0);
                assert_true(quota == BW_QUOTA_MAX);
                put_limit(t, layout, "top.slice", 20000, 100000);

                /* Garbage in the nearest limited ancestor's files. */
                if (layout == BW_CG_LAYOUT_V2) {
                        tree_put(t, "top.slice/mid.slice/cpu.max", "fifty 100000\n");
                        assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), -EINVAL);
                        tree_put(t, "top.slice/mid.slice/cpu.max", "50000 0\n");
                        assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), -ERANGE);
                } else {
                        tree_put(t, "cpu/top.slice/mid.slice/cpu.cfs_quota_us", "-2\n");
                        assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), -EINVAL);
                        tree_put(t, "cpu/top.slice/mid.slice/cpu.cfs_quota_us", "50000\n");
                        tree_put(t, "cpu/top.slice/mid.slice/cpu.cfs_period_us", "0\n");
                        assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), -ERANGE);
                        tree_put(t, "cpu/top.slice/mid.slice/cpu.cfs_period_us", "1000001\n");
                        assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), -ERANGE);
                }
                put_limit(t, layout, "top.slice/mid.slice", BW_QUOTA_MAX, 100000);
                assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), 1);

                /* An ancestor replaced by a symlink (to where it went) after
                 * the open: the walk refuses it, inside the tree or not. */
                snprintf(p, sizeof(p), "%s/%stop.slice", t, pre);
                snprintf(q, sizeof(q), "%s/%sreal.slice", t, pre);
                assert_int_equal(rename(p, q), 0);
                assert_int_equal(symlink("real.slice", p), 0);
                assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), -ELOOP);
                assert_int_equal(unlink(p), 0);
                snprintf(q, sizeof(q), "%s/%stop.slice", other, layout == BW_CG_LAYOUT_V2 ? "cpu/" : "");
                assert_int_equal(symlink(q, p), 0);
                assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), -ELOOP);
                assert_int_equal(unlink(p), 0);
                snprintf(q, sizeof(q), "%s/%sreal.slice", t, pre);
                assert_int_equal(rename(q, p), 0);
                assert_int_equal(ancestor_quota(root, cg, 100000, &quota, NULL), 1);

                /* The cgroup itself vanished, its ancestors did not. */
                snprintf(p, sizeof(p), "%s" LEAF, pre);
                vanish(t, p);
                assert_true(bw_cg_error_is_vanished(ancestor_quota(root, cg, 100000, &quota, NULL)));

                /* An ancestor vanished too. */
                snprintf(p, sizeof(p), "%stop.slice/mid.slice", pre);
                vanish(t, p);
                assert_true(bw_cg_error_is_vanished(ancestor_quota(root, cg, 100000, &quota, NULL)));
        }
}

/* ---- writes ------------------------------------------------------------ */

static const char *const v2_files[] = { CG "/cpu.max", CG "/cpu.max.burst" };
static const char *const v1_files[] = {
        "cpu/" CG "/cpu.cfs_quota_us", "cpu/" CG "/cpu.cfs_period_us", "cpu/" CG "/cpu.cfs_burst_us",
};

static void test_write_unchanged(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "20000\n");
        _cleanup_tree_ char *hy = tree_hybrid("50000\n", "100000\n", "20000\n", true);
        _cleanup_(rootp) struct bw_cg_root *root2 = NULL, *rooth = NULL;
        _cleanup_(cgp) struct bw_cg *cg2 = NULL, *cgh = NULL;
        const struct bw_bandwidth same = {
                .quota_usec = 50000, .period_usec = 100000, .burst_usec = 20000, .has_burst = true,
        };
        struct bw_bandwidth now;

        open_cg(v2, &root2, &cg2);
        open_cg(hy, &rooth, &cgh);
        for (size_t i = 0; i < ELEMENTSOF(v2_files); i++)
                tree_age(v2, v2_files[i]);
        for (size_t i = 0; i < ELEMENTSOF(v1_files); i++)
                tree_age(hy, v1_files[i]);

        fake_reset();
        for (int i = 0; i < 100; i++) {
                memset(&now, 0xaa, sizeof(now));
                assert_int_equal(bw_cg_write_bandwidth(cg2, &same, &now), 0);
                assert_bw(&now, &same);
                assert_int_equal(bw_cg_write_bandwidth(cgh, &same, NULL), 0);
        }
        /* Not one write() syscall, not one file touched. */
        assert_int_equal(fake.n, 0);
        fake.on = false;

        assert_int_equal(cg2->stats.writes, 0);
        assert_int_equal(cg2->stats.skipped, 200);      /* cpu.max + cpu.max.burst */
        assert_int_equal(cgh->stats.writes, 0);
        assert_int_equal(cgh->stats.skipped, 300);      /* quota + period + burst */
        assert_int_equal(cg2->stats.burst_repairs + cgh->stats.burst_repairs, 0);

        for (size_t i = 0; i < ELEMENTSOF(v2_files); i++)
                assert_true(tree_aged(v2, v2_files[i]));
        for (size_t i = 0; i < ELEMENTSOF(v1_files); i++)
                assert_true(tree_aged(hy, v1_files[i]));
        assert_file(v2, CG "/cpu.max", "50000 100000\n");
        assert_file(v2, CG "/cpu.max.burst", "20000\n");
        assert_file(hy, "cpu/" CG "/cpu.cfs_quota_us", "50000\n");
}

static void test_write_changed_once(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("max 100000\n", "0\n");
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        const struct bw_bandwidth target = { .quota_usec = 20000, .period_usec = 100000 };
        static const char *const want[] = { "cpu.max=20000 100000" };
        struct bw_bandwidth now;

        open_cg(v2, &root, &cg);
        tree_age(v2, CG "/cpu.max.burst");

        fake_reset();
        assert_int_equal(bw_cg_write_bandwidth(cg, &target, &now), 1);
        assert_log(want, 1);
        assert_int_equal(now.quota_usec, 20000);
        assert_int_equal(now.period_usec, 100000);
        assert_true(now.has_burst);
        assert_int_equal(now.burst_usec, 0);
        assert_int_equal(cg->stats.writes, 1);
        assert_int_equal(cg->stats.skipped, 1);
        assert_file(v2, CG "/cpu.max", "20000 100000\n");
        assert_true(tree_aged(v2, CG "/cpu.max.burst"));

        /* Again: nothing. */
        fake_reset();
        assert_int_equal(bw_cg_write_bandwidth(cg, &target, NULL), 0);
        assert_int_equal(fake.n, 0);
        assert_int_equal(cg->stats.writes, 1);
        assert_int_equal(cg->stats.skipped, 3);

        /* Back to unlimited. */
        fake_reset();
        assert_int_equal(bw_cg_write_bandwidth(cg, &(struct bw_bandwidth) {
                .quota_usec = BW_QUOTA_MAX, .period_usec = 100000 }, NULL), 1);
        assert_file(v2, CG "/cpu.max", "max 100000\n");
        fake.on = false;
}

struct step {
        uint64_t quota, period, burst;
        const char *log[4];     /* expected writes, in order */
        unsigned n;
};

static void run_steps(struct bw_cg *cg, const struct step *steps, size_t n_steps, uint64_t repairs_per_step) {
        for (size_t i = 0; i < n_steps; i++) {
                const struct step *s = &steps[i];
                struct bw_bandwidth t = {
                        .quota_usec = s->quota, .period_usec = s->period,
                        .burst_usec = s->burst, .has_burst = true,
                };
                struct bw_bandwidth now, check;
                uint64_t writes = cg->stats.writes;

                print_message("# step %zu\n", i);
                fake_reset();
                assert_int_equal(bw_cg_write_bandwidth(cg, &t, &now), (int) s->n);
                assert_log(s->log, s->n);
                fake.on = false;
                assert_int_equal(cg->stats.writes - writes, s->n);
                assert_bw(&now, &t);
                assert_int_equal(bw_cg_read_bandwidth(cg, &check), 0);
                assert_bw(&check, &t);
        }
        assert_int_equal(cg->stats.burst_repairs, repairs_per_step * n_steps);
}

/* V2 ordering against a fake that rejects burst > quota like the kernel. */
static void test_write_order_v2(void **state) {
        static const struct step steps[] = {
                { 50000, 100000, 20000, { "cpu.max=50000 100000", "cpu.max.burst=20000" }, 2 },
                /* quota below the current burst: burst goes down first */
                { 15000, 100000, 10000, { "cpu.max.burst=10000", "cpu.max=15000 100000" }, 2 },
                /* burst above the current quota: quota goes up first */
                { 80000, 100000, 60000, { "cpu.max=80000 100000", "cpu.max.burst=60000" }, 2 },
                { 10000, 100000, 10000, { "cpu.max.burst=10000", "cpu.max=10000 100000" }, 2 },
                { 10000, 100000, 0, { "cpu.max.burst=0" }, 1 },
                { 10000, 50000, 0, { "cpu.max=10000 50000" }, 1 },
                { 10000, 50000, 0, { NULL }, 0 },
        };
        _cleanup_tree_ char *v2 = tree_v2("max 100000\n", "0\n");
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;

        open_cg(v2, &root, &cg);
        run_steps(cg, steps, ELEMENTSOF(steps), 0);
        assert_int_equal(cg->stats.writes, 10);
        assert_int_equal(cg->stats.skipped, 0 + 0 + 0 + 0 + 1 + 1 + 2);
        assert_file(v2, CG "/cpu.max", "10000 50000\n");
}

/* v1 files: quota and period apart, in the order that keeps the ratio low. */
static void test_write_order_v1(void **state) {
        static const struct step steps[] = {
                /* from max: period first, quota last */
                { 50000, 50000, 0, { "cpu.cfs_period_us=50000", "cpu.cfs_quota_us=50000" }, 2 },
                /* ratio 1.0 -> 0.5, both shrink: quota first (25000/50000, not 50000/20000) */
                { 10000, 20000, 0, { "cpu.cfs_quota_us=10000", "cpu.cfs_period_us=20000" }, 2 },
                /* ratio 0.5 -> 0.4 with a longer period: period first (10000/200000, not 80000/20000) */
                { 80000, 200000, 0, { "cpu.cfs_period_us=200000", "cpu.cfs_quota_us=80000" }, 2 },
                /* burst up after quota */
                { 100000, 200000, 90000, { "cpu.cfs_quota_us=100000", "cpu.cfs_burst_us=90000" }, 2 },
                /* burst down before quota */
                { 30000, 200000, 20000, { "cpu.cfs_burst_us=20000", "cpu.cfs_quota_us=30000" }, 2 },
                /* all three, burst down first */
                { 10000, 100000, 1000, { "cpu.cfs_burst_us=1000", "cpu.cfs_quota_us=10000",
                                         "cpu.cfs_period_us=100000" }, 3 },
                /* to max: quota first; burst must be 0 with max */
                { BW_QUOTA_MAX, 300000, 0, { "cpu.cfs_burst_us=0", "cpu.cfs_quota_us=-1",
                                             "cpu.cfs_period_us=300000" }, 3 },
                { BW_QUOTA_MAX, 300000, 0, { NULL }, 0 },
        };
        _cleanup_tree_ char *hy = tree_hybrid("-1\n", "100000\n", "0\n", true);
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;

        open_cg(hy, &root, &cg);
        run_steps(cg, steps, ELEMENTSOF(steps), 0);
        assert_int_equal(cg->stats.writes, 16);
        assert_int_equal(cg->stats.skipped, 1 + 1 + 1 + 1 + 1 + 0 + 0 + 3);
        assert_file(hy, "cpu/" CG "/cpu.cfs_quota_us", "-1\n");
}

/* Kernels before 6.10 divide cpu.max.burst by 1000 on a cpu.max write: the
 * burst is read back and repaired when it should have stayed. */
static void test_write_burst_repair(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "20000\n");
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        static const struct {
                uint64_t quota, burst;
                const char *log[3];
                unsigned n, repairs;
        } steps[] = {
                /* burst unchanged: repaired */
                { 60000, 20000, { "cpu.max=60000 100000", "cpu.max.burst=20000" }, 2, 1 },
                /* burst going down: set, broken, repaired */
                { 40000, 10000, { "cpu.max.burst=10000", "cpu.max=40000 100000", "cpu.max.burst=10000" }, 3, 1 },
                /* burst going up: the normal write puts it right, no repair */
                { 50000, 30000, { "cpu.max=50000 100000", "cpu.max.burst=30000" }, 2, 0 },
                /* nothing to do: nothing written, nothing broken */
                { 50000, 30000, { NULL }, 0, 0 },
        };

        open_cg(v2, &root, &cg);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                struct bw_bandwidth t = {
                        .quota_usec = steps[i].quota, .period_usec = 100000,
                        .burst_usec = steps[i].burst, .has_burst = true,
                };
                struct bw_bandwidth now;
                uint64_t repairs = cg->stats.burst_repairs;

                print_message("# step %zu\n", i);
                fake_reset();
                fake.corrupt_burst = true;
                assert_int_equal(bw_cg_write_bandwidth(cg, &t, &now), (int) steps[i].n);
                assert_log(steps[i].log, steps[i].n);
                fake.on = false;
                assert_int_equal(cg->stats.burst_repairs - repairs, steps[i].repairs);
                assert_bw(&now, &t);
        }
        assert_file(v2, CG "/cpu.max.burst", "30000\n");
}

static void test_write_invalid(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "0\n");
        _cleanup_tree_ char *nb = tree_v2("50000 100000\n", NULL);
        _cleanup_(rootp) struct bw_cg_root *root = NULL, *rootnb = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL, *cgnb = NULL;
        static const struct bw_bandwidth bad[] = {
                { .quota_usec = 10000, .period_usec = 100000, .burst_usec = 20000, .has_burst = true },
                { .quota_usec = 999, .period_usec = 100000 },
                { .quota_usec = 10000, .period_usec = 999 },
                { .quota_usec = 10000, .period_usec = 1000001 },
                { .quota_usec = 10000, .period_usec = 100000, .burst_usec = 1 },
                { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 1, .has_burst = true },
        };

        open_cg(v2, &root, &cg);
        open_cg(nb, &rootnb, &cgnb);
        tree_age(v2, CG "/cpu.max");

        fake_reset();
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(bw_cg_write_bandwidth(cg, &bad[i], NULL), -EINVAL);
        assert_int_equal(bw_cg_write_bandwidth(cg, NULL, NULL), -EINVAL);
        assert_int_equal(bw_cg_write_bandwidth(NULL, &bad[1], NULL), -EINVAL);

        /* A burst the kernel cannot hold; a zero burst is fine. */
        assert_int_equal(bw_cg_write_bandwidth(cgnb, &(struct bw_bandwidth) {
                .quota_usec = 50000, .period_usec = 100000, .burst_usec = 1000, .has_burst = true }, NULL),
                -EOPNOTSUPP);
        assert_int_equal(fake.n, 0);
        assert_int_equal(bw_cg_write_bandwidth(cgnb, &(struct bw_bandwidth) {
                .quota_usec = 50000, .period_usec = 100000, .has_burst = true }, NULL), 0);
        assert_int_equal(cgnb->stats.skipped, 1);
        assert_int_equal(bw_cg_write_bandwidth(cgnb, &(struct bw_bandwidth) {
                .quota_usec = 40000, .period_usec = 100000 }, NULL), 1);
        fake.on = false;

        assert_int_equal(cg->stats.writes + cg->stats.skipped, 0);
        assert_true(tree_aged(v2, CG "/cpu.max"));
        assert_file(nb, CG "/cpu.max", "40000 100000\n");
}

/* A write the kernel refuses: the error comes back, the counters say what was
 * really written. */
static void test_write_error(void **state) {
        _cleanup_tree_ char *v2 = tree_v2("50000 100000\n", "20000\n");
        _cleanup_(rootp) struct bw_cg_root *root = NULL;
        _cleanup_(cgp) struct bw_cg *cg = NULL;
        static const char *const want[] = { "cpu.max.burst=10000", "cpu.max=15000 100000" };
        const struct bw_bandwidth t = {
                .quota_usec = 15000, .period_usec = 100000, .burst_usec = 10000, .has_burst = true,
        };

        open_cg(v2, &root, &cg);

        fake_reset();
        fake.fail = "cpu.max";
        assert_int_equal(bw_cg_write_bandwidth(cg, &t, NULL), -EIO);
        fake.on = false;
        assert_int_equal(fake.n, 2);
        assert_string_equal(fake.log[0], want[0]);
        assert_string_equal(fake.log[1], want[1]);
        assert_int_equal(cg->stats.writes, 1);
        assert_file(v2, CG "/cpu.max.burst", "10000\n");

        /* Next time only what is still missing is written. */
        fake_reset();
        assert_int_equal(bw_cg_write_bandwidth(cg, &t, NULL), 1);
        assert_log(want + 1, 1);
        fake.on = false;
        assert_int_equal(cg->stats.writes, 2);
        assert_file(v2, CG "/cpu.max", "15000 100000\n");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mounts_hybrid),
                cmocka_unit_test(test_mounts_v2),
                cmocka_unit_test(test_mounts_v1_comount),
                cmocka_unit_test(test_mounts_escape_and_words),
                cmocka_unit_test(test_mounts_empty),
                cmocka_unit_test(test_mounts_malformed),
                cmocka_unit_test(test_layout_to_string),
                cmocka_unit_test(test_root_open_host),
                cmocka_unit_test(test_root_open_dir),
                cmocka_unit_test(test_root_open_mounts),
                cmocka_unit_test(test_path_validate),
                cmocka_unit_test(test_openat_beneath),
                cmocka_unit_test(test_open_refuses),
                cmocka_unit_test(test_read_v2),
                cmocka_unit_test(test_read_v2_no_burst_no_psi),
                cmocka_unit_test(test_read_too_big),
                cmocka_unit_test(test_read_hybrid),
                cmocka_unit_test(test_read_hybrid_no_twin),
                cmocka_unit_test(test_find_twin_late),
                cmocka_unit_test(test_find_twin_not_hybrid),
                cmocka_unit_test(test_read_v1),
                cmocka_unit_test(test_read_local),
                cmocka_unit_test(test_read_local_bad),
                cmocka_unit_test(test_vanished),
                cmocka_unit_test(test_vanished_local),
                cmocka_unit_test(test_read_light_quota),
                cmocka_unit_test(test_release),
                cmocka_unit_test(test_release_dirs),
                cmocka_unit_test(test_ancestor_quota),
                cmocka_unit_test(test_ancestor_quota_top_level),
                cmocka_unit_test(test_ancestor_quota_errors),
                cmocka_unit_test(test_write_unchanged),
                cmocka_unit_test(test_write_changed_once),
                cmocka_unit_test(test_write_order_v2),
                cmocka_unit_test(test_write_order_v1),
                cmocka_unit_test(test_write_burst_repair),
                cmocka_unit_test(test_write_invalid),
                cmocka_unit_test(test_write_error),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
