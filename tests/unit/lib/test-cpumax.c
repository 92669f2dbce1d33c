/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/util/macro.h"

/* A string literal and its length, so that cases may hold NUL bytes. */
#define S(s) s, sizeof(s) - 1

#define SENTINEL UINT64_C(0xa5a5a5a5a5a5a5a5)

/* Read a fixture into a buffer of exactly its size, without a terminating
 * NUL, so that ASan catches a parser reading past len. */
static char *read_fixture(const char *name, size_t *ret_len) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -1;
        const char *dir;
        struct stat st;
        char *buf;
        size_t done = 0;

        dir = getenv("BWGOV_FIXTURES");
        assert_non_null(dir);
        assert_true(asprintf(&path, "%s/%s", dir, name) >= 0);

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                fail_msg("cannot open %s: %s", path, strerror(errno));
        assert_int_equal(fstat(fd, &st), 0);

        buf = malloc(st.st_size > 0 ? (size_t) st.st_size : 1);
        assert_non_null(buf);
        while (done < (size_t) st.st_size) {
                ssize_t n = read(fd, buf + done, (size_t) st.st_size - done);
                assert_true(n > 0);
                done += (size_t) n;
        }

        *ret_len = done;
        return buf;
}

static char *dup_exact(const char *data, size_t len) {
        char *copy = malloc(len > 0 ? len : 1);

        assert_non_null(copy);
        if (len > 0)
                memcpy(copy, data, len);
        return copy;
}

/* The three parsers on an exact-size heap copy; outputs start as SENTINEL and
 * must still be SENTINEL after a failure. */
static int u64_parse_copy(const char *data, size_t len, uint64_t *ret) {
        _cleanup_free_ char *copy = dup_exact(data, len);
        uint64_t v = SENTINEL;
        int r;

        r = bw_u64_parse(copy, len, &v);
        if (r < 0)
                assert_true(v == SENTINEL);
        *ret = v;
        return r;
}

static int cfs_quota_parse_copy(const char *data, size_t len, uint64_t *ret) {
        _cleanup_free_ char *copy = dup_exact(data, len);
        uint64_t v = SENTINEL;
        int r;

        r = bw_cfs_quota_parse(copy, len, &v);
        if (r < 0)
                assert_true(v == SENTINEL);
        *ret = v;
        return r;
}

static int cpumax_parse_copy(const char *data, size_t len, uint64_t *ret_quota, uint64_t *ret_period) {
        _cleanup_free_ char *copy = dup_exact(data, len);
        uint64_t q = SENTINEL, p = SENTINEL;
        int r;

        r = bw_cpumax_parse(copy, len, &q, &p);
        if (r < 0) {
                assert_true(q == SENTINEL);
                assert_true(p == SENTINEL);
        }
        *ret_quota = q;
        *ret_period = p;
        return r;
}

/* ---- bw_u64_parse ---- */

static void test_u64_parse(void **state) {
        static const struct {
                const char *buf;
                size_t len;
                int error;
                uint64_t v;
        } cases[] = {
                { S("0"), 0, 0 },
                { S("0\n"), 0, 0 },
                { S("100000\n"), 0, 100000 },
                { S("007"), 0, 7 },
                { S("18446744073709551615\n"), 0, UINT64_MAX },
                { S("18446744073709551616"), -ERANGE, 0 },
                { S("99999999999999999999999\n"), -ERANGE, 0 },
                { S("99999999999999999999999x"), -EINVAL, 0 },   /* garbage beats overflow */
                { S(""), -EINVAL, 0 },
                { S("\n"), -EINVAL, 0 },
                { S("-1"), -EINVAL, 0 },
                { S("+1"), -EINVAL, 0 },
                { S(" 1"), -EINVAL, 0 },
                { S("1 "), -EINVAL, 0 },
                { S("1\n\n"), -EINVAL, 0 },
                { S("1\r\n"), -EINVAL, 0 },
                { S("0x10"), -EINVAL, 0 },
                { S("1.0"), -EINVAL, 0 },
                { S("\xff\xfe"), -EINVAL, 0 },
                { S("1\0"), -EINVAL, 0 },
                { S("\0" "1"), -EINVAL, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t v;
                int r;

                print_message("# u64 case %zu\n", i);
                r = u64_parse_copy(cases[i].buf, cases[i].len, &v);
                assert_int_equal(r, cases[i].error);
                if (r == 0)
                        assert_int_equal(v, cases[i].v);
        }

        assert_int_equal(bw_u64_parse(NULL, 0, &(uint64_t) { 0 }), -EINVAL);
}

/* ---- bw_cpumax_parse ---- */

static void test_cpumax_parse(void **state) {
        static const struct {
                const char *name;
                const char *buf;
                size_t len;
                int error;
                uint64_t quota, period;
        } cases[] = {
                { "max", S("max 100000\n"), 0, BW_QUOTA_MAX, 100000 },
                { "max, no newline", S("max 100000"), 0, BW_QUOTA_MAX, 100000 },
                { "limited", S("50000 100000\n"), 0, 50000, 100000 },
                { "minimums", S("1000 1000\n"), 0, 1000, 1000 },
                { "maximums", S("17592186044415 1000000\n"), 0, UINT64_C(17592186044415), 1000000 },
                { "quota above kernel limit", S("17592186044416 100000\n"), -ERANGE, 0, 0 },
                { "quota below 1 ms", S("999 100000\n"), -ERANGE, 0, 0 },
                { "quota 0", S("0 100000\n"), -ERANGE, 0, 0 },
                { "period below 1 ms", S("1000 999\n"), -ERANGE, 0, 0 },
                { "period above 1 s", S("max 1000001\n"), -ERANGE, 0, 0 },
                { "period 0", S("max 0\n"), -ERANGE, 0, 0 },
                { "UINT64_MAX spelled out is not max", S("18446744073709551615 100000\n"), -ERANGE, 0, 0 },
                { "quota overflows", S("99999999999999999999999 100000\n"), -ERANGE, 0, 0 },
                { "period overflows", S("max 99999999999999999999999\n"), -ERANGE, 0, 0 },
                { "garbage beats range", S("99999999999999999999999 x\n"), -EINVAL, 0, 0 },
                { "garbage beats range 2", S("x 99999999999999999999999\n"), -EINVAL, 0, 0 },
                { "max alone", S("max"), -EINVAL, 0, 0 },
                { "max alone, newline", S("max\n"), -EINVAL, 0, 0 },
                { "quota alone", S("50000\n"), -EINVAL, 0, 0 },
                { "empty", S(""), -EINVAL, 0, 0 },
                { "newline", S("\n"), -EINVAL, 0, 0 },
                { "two blanks", S("max  100000\n"), -EINVAL, 0, 0 },
                { "leading blank", S(" max 100000\n"), -EINVAL, 0, 0 },
                { "trailing blank", S("max 100000 \n"), -EINVAL, 0, 0 },
                { "upper case", S("MAX 100000\n"), -EINVAL, 0, 0 },
                { "maximum", S("maximum 100000\n"), -EINVAL, 0, 0 },
                { "three fields", S("max 100000 5\n"), -EINVAL, 0, 0 },
                { "v1 -1", S("-1 100000\n"), -EINVAL, 0, 0 },
                { "plus", S("+5000 100000\n"), -EINVAL, 0, 0 },
                { "negative period", S("5000 -100000\n"), -EINVAL, 0, 0 },
                { "CRLF", S("max 100000\r\n"), -EINVAL, 0, 0 },
                { "two newlines", S("max 100000\n\n"), -EINVAL, 0, 0 },
                { "newline inside quota", S("5\n 100000\n"), -EINVAL, 0, 0 },
                { "newline as separator", S("50000\n100000\n"), -EINVAL, 0, 0 },
                { "tab", S("max\t100000\n"), -EINVAL, 0, 0 },
                { "exponent", S("max 1e5\n"), -EINVAL, 0, 0 },
                { "non-UTF-8", S("\xff\xfe 100000\n"), -EINVAL, 0, 0 },
                { "NUL", S("max 100\0" "000\n"), -EINVAL, 0, 0 },
                { "trailing NUL", S("max 100000\n\0"), -EINVAL, 0, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t q, p;
                int r;

                print_message("# %s\n", cases[i].name);
                r = cpumax_parse_copy(cases[i].buf, cases[i].len, &q, &p);
                assert_int_equal(r, cases[i].error);
                if (r == 0) {
                        assert_true(q == cases[i].quota);
                        assert_int_equal(p, cases[i].period);
                }
        }
}

/* ---- bw_cfs_quota_parse ---- */

static void test_cfs_quota_parse(void **state) {
        static const struct {
                const char *buf;
                size_t len;
                int error;
                uint64_t v;
        } cases[] = {
                { S("-1\n"), 0, BW_QUOTA_MAX },
                { S("-1"), 0, BW_QUOTA_MAX },
                { S("20000\n"), 0, 20000 },
                { S("1000"), 0, 1000 },
                { S("17592186044415\n"), 0, UINT64_C(17592186044415) },
                { S("-2\n"), -EINVAL, 0 },
                { S("-0\n"), -EINVAL, 0 },
                { S("-10\n"), -EINVAL, 0 },
                { S("-\n"), -EINVAL, 0 },
                { S("--1\n"), -EINVAL, 0 },
                { S("-1 \n"), -EINVAL, 0 },
                { S("-1\r\n"), -EINVAL, 0 },
                { S("-1\n\n"), -EINVAL, 0 },
                { S("+1000\n"), -EINVAL, 0 },
                { S("max\n"), -EINVAL, 0 },
                { S(""), -EINVAL, 0 },
                { S("\xff\xfe"), -EINVAL, 0 },
                { S("-1\0"), -EINVAL, 0 },
                { S("999\n"), -ERANGE, 0 },
                { S("0\n"), -ERANGE, 0 },
                { S("17592186044416\n"), -ERANGE, 0 },
                { S("18446744073709551615\n"), -ERANGE, 0 },
                { S("99999999999999999999999\n"), -ERANGE, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t v;
                int r;

                print_message("# cfs_quota case %zu\n", i);
                r = cfs_quota_parse_copy(cases[i].buf, cases[i].len, &v);
                assert_int_equal(r, cases[i].error);
                if (r == 0)
                        assert_true(v == cases[i].v);
        }
}

/* ---- fixtures from this host (v1) and hand-built v2 files ---- */

static void test_fixtures(void **state) {
        static const struct {
                const char *name;
                enum { U64, CFS_QUOTA, CPUMAX } kind;
                uint64_t v, period;
        } cases[] = {
                { "cpumax/v1-host-root.cfs_quota_us",    CFS_QUOTA, BW_QUOTA_MAX, 0 },
                { "cpumax/v1-host-root.cfs_period_us",   U64, 100000, 0 },
                { "cpumax/v1-host-root.cfs_burst_us",    U64, 0, 0 },
                { "cpumax/v1-throttled.cfs_quota_us",    CFS_QUOTA, 20000, 0 },
                { "cpumax/v1-throttled.cfs_period_us",   U64, 100000, 0 },
                { "cpumax/v1-throttled.cfs_burst_us",    U64, 10000, 0 },
                { "cpumax/v2-max.cpu.max",               CPUMAX, BW_QUOTA_MAX, 100000 },
                { "cpumax/v2-limited.cpu.max",           CPUMAX, 50000, 100000 },
                { "cpumax/v2-limit.cpu.max",             CPUMAX, UINT64_C(17592186044415), 1000000 },
                { "cpumax/v2-none.cpu.max.burst",        U64, 0, 0 },
                { "cpumax/v2-limited.cpu.max.burst",     U64, 25000, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *buf = NULL;
                uint64_t v, p;
                size_t len;

                print_message("# %s\n", cases[i].name);
                buf = read_fixture(cases[i].name, &len);

                switch (cases[i].kind) {
                case U64:
                        assert_int_equal(u64_parse_copy(buf, len, &v), 0);
                        break;
                case CFS_QUOTA:
                        assert_int_equal(cfs_quota_parse_copy(buf, len, &v), 0);
                        break;
                case CPUMAX:
                        assert_int_equal(cpumax_parse_copy(buf, len, &v, &p), 0);
                        assert_int_equal(p, cases[i].period);
                        break;
                }
                assert_true(v == cases[i].v);
        }
}

/* ---- bw_bandwidth_validate ---- */

static void test_validate(void **state) {
        static const struct {
                const char *name;
                struct bw_bandwidth bw;
                int error;
        } cases[] = {
                { "max, no burst", { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 0, .has_burst = false }, 0 },
                { "max, burst file at 0", { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, 0 },
                { "limited", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = false }, 0 },
                { "burst = quota", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true }, 0 },
                { "minimums", { .quota_usec = 1000, .period_usec = 1000, .burst_usec = 0, .has_burst = true }, 0 },
                { "maximums", { .quota_usec = BW_QUOTA_LIMIT_USEC, .period_usec = 1000000, .burst_usec = 0, .has_burst = true }, 0 },
                { "burst + quota = limit", { .quota_usec = BW_QUOTA_LIMIT_USEC / 2 + 1, .period_usec = 100000, .burst_usec = BW_QUOTA_LIMIT_USEC / 2, .has_burst = true }, 0 },
                { "burst + quota above limit", { .quota_usec = BW_QUOTA_LIMIT_USEC / 2 + 1, .period_usec = 100000, .burst_usec = BW_QUOTA_LIMIT_USEC / 2 + 1, .has_burst = true }, -EINVAL },
                { "quota below 1 ms", { .quota_usec = 999, .period_usec = 100000, .burst_usec = 0, .has_burst = false }, -EINVAL },
                { "quota 0", { .quota_usec = 0, .period_usec = 100000, .burst_usec = 0, .has_burst = false }, -EINVAL },
                { "quota above limit", { .quota_usec = BW_QUOTA_LIMIT_USEC + 1, .period_usec = 100000, .burst_usec = 0, .has_burst = false }, -EINVAL },
                { "quota max - 1", { .quota_usec = UINT64_MAX - 1, .period_usec = 100000, .burst_usec = 0, .has_burst = false }, -EINVAL },
                { "period below 1 ms", { .quota_usec = 50000, .period_usec = 999, .burst_usec = 0, .has_burst = false }, -EINVAL },
                { "period above 1 s", { .quota_usec = 50000, .period_usec = 1000001, .burst_usec = 0, .has_burst = false }, -EINVAL },
                { "period 0", { .quota_usec = BW_QUOTA_MAX, .period_usec = 0, .burst_usec = 0, .has_burst = false }, -EINVAL },
                { "burst > quota", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 50001, .has_burst = true }, -EINVAL },
                { "burst with max quota", { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 1000, .has_burst = true }, -EINVAL },
                { "burst without burst support", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 1000, .has_burst = false }, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                print_message("# %s\n", cases[i].name);
                assert_int_equal(bw_bandwidth_validate(&cases[i].bw), cases[i].error);
        }

        assert_int_equal(bw_bandwidth_validate(NULL), -EINVAL);
}

/* ---- bw_bandwidth_identical ---- */

static void test_identical(void **state) {
        static const struct {
                const char *name;
                struct bw_bandwidth a, b;
                bool identical;
        } cases[] = {
                { "same", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true }, { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true }, true },
                { "same, no burst file", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = false }, { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = false }, true },
                { "both max", { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, true },
                { "burst file on one side only", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = false }, true },
                { "quota differs", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, { .quota_usec = 51000, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, false },
                { "quota max vs number", { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, false },
                { "period differs", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, { .quota_usec = 50000, .period_usec = 200000, .burst_usec = 0, .has_burst = true }, false },
                { "burst differs", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true }, { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, false },
                { "burst differs, one without the file", { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 1000, .has_burst = true }, { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = false },
                  false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                print_message("# %s\n", cases[i].name);
                assert_int_equal(bw_bandwidth_identical(&cases[i].a, &cases[i].b), cases[i].identical);
                assert_int_equal(bw_bandwidth_identical(&cases[i].b, &cases[i].a), cases[i].identical);
        }
}

/* ---- formatters ---- */

static void test_cpumax_format(void **state) {
        char buf[64];

        assert_int_equal(bw_cpumax_format(BW_QUOTA_MAX, 100000, buf, sizeof(buf)), 11);
        assert_string_equal(buf, "max 100000\n");
        assert_int_equal(bw_cpumax_format(50000, 100000, buf, sizeof(buf)), 13);
        assert_string_equal(buf, "50000 100000\n");
        assert_int_equal(bw_cpumax_format(BW_QUOTA_LIMIT_USEC, 1000000, buf, sizeof(buf)), 23);
        assert_string_equal(buf, "17592186044415 1000000\n");

        /* exact fit needs room for the NUL; buf untouched on failure */
        memset(buf, 'Z', sizeof(buf));
        assert_int_equal(bw_cpumax_format(50000, 100000, buf, 13), -ENOBUFS);
        for (size_t i = 0; i < sizeof(buf); i++)
                assert_int_equal(buf[i], 'Z');
        assert_int_equal(bw_cpumax_format(50000, 100000, buf, 14), 13);
        assert_string_equal(buf, "50000 100000\n");
        assert_int_equal(bw_cpumax_format(50000, 100000, NULL, 0), -ENOBUFS);

        memset(buf, 'Z', sizeof(buf));
        assert_int_equal(bw_cpumax_format(999, 100000, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(bw_cpumax_format(UINT64_MAX - 1, 100000, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(bw_cpumax_format(BW_QUOTA_LIMIT_USEC + 1, 100000, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(bw_cpumax_format(BW_QUOTA_MAX, 999, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(bw_cpumax_format(BW_QUOTA_MAX, 1000001, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(buf[0], 'Z');
}

static void test_u64_format(void **state) {
        char buf[32];

        assert_int_equal(bw_u64_format(0, buf, sizeof(buf)), 2);
        assert_string_equal(buf, "0\n");
        assert_int_equal(bw_u64_format(25000, buf, sizeof(buf)), 6);
        assert_string_equal(buf, "25000\n");

        memset(buf, 'Z', sizeof(buf));
        assert_int_equal(bw_u64_format(UINT64_MAX, buf, 21), -ENOBUFS);
        assert_int_equal(buf[0], 'Z');
        assert_int_equal(bw_u64_format(UINT64_MAX, buf, 22), 21);
        assert_string_equal(buf, "18446744073709551615\n");
        assert_int_equal(bw_u64_format(1, NULL, 0), -ENOBUFS);
}

static void test_cfs_quota_format(void **state) {
        char buf[32];

        assert_int_equal(bw_cfs_quota_format(BW_QUOTA_MAX, buf, sizeof(buf)), 3);
        assert_string_equal(buf, "-1\n");
        assert_int_equal(bw_cfs_quota_format(20000, buf, sizeof(buf)), 6);
        assert_string_equal(buf, "20000\n");

        memset(buf, 'Z', sizeof(buf));
        assert_int_equal(bw_cfs_quota_format(20000, buf, 6), -ENOBUFS);
        assert_int_equal(bw_cfs_quota_format(999, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(bw_cfs_quota_format(BW_QUOTA_LIMIT_USEC + 1, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(buf[0], 'Z');
}

/* Whatever the formatters write, the parsers read back. */
static void test_round_trip(void **state) {
        static const uint64_t quotas[] = { BW_QUOTA_MAX, 1000, 1001, 50000, 123456789, BW_QUOTA_LIMIT_USEC };
        static const uint64_t periods[] = { 1000, 100000, 1000000 };
        char buf[64];

        for (size_t i = 0; i < ELEMENTSOF(quotas); i++) {
                uint64_t q, p;
                int n;

                n = bw_cfs_quota_format(quotas[i], buf, sizeof(buf));
                assert_true(n > 0);
                assert_int_equal(bw_cfs_quota_parse(buf, (size_t) n, &q), 0);
                assert_true(q == quotas[i]);

                for (size_t j = 0; j < ELEMENTSOF(periods); j++) {
                        n = bw_cpumax_format(quotas[i], periods[j], buf, sizeof(buf));
                        assert_true(n > 0);
                        assert_int_equal(bw_cpumax_parse(buf, (size_t) n, &q, &p), 0);
                        assert_true(q == quotas[i]);
                        assert_int_equal(p, periods[j]);
                }

                if (quotas[i] != BW_QUOTA_MAX) {
                        n = bw_u64_format(quotas[i], buf, sizeof(buf));
                        assert_true(n > 0);
                        assert_int_equal(bw_u64_parse(buf, (size_t) n, &q), 0);
                        assert_true(q == quotas[i]);
                }
        }
}

/* ---- fuzz-ish: every prefix and some byte substitutions of every fixture ---- */

static void fuzz_one(const char *buf, size_t len) {
        uint64_t a, b;
        int r;

        r = u64_parse_copy(buf, len, &a);
        assert_true(r == 0 || r == -EINVAL || r == -ERANGE);
        r = cfs_quota_parse_copy(buf, len, &a);
        assert_true(r == 0 || r == -EINVAL || r == -ERANGE);
        r = cpumax_parse_copy(buf, len, &a, &b);
        assert_true(r == 0 || r == -EINVAL || r == -ERANGE);
}

static void test_fuzz(void **state) {
        static const char *const fixtures[] = {
                "cpumax/v1-host-root.cfs_quota_us",
                "cpumax/v1-host-root.cfs_period_us",
                "cpumax/v1-host-root.cfs_burst_us",
                "cpumax/v1-throttled.cfs_quota_us",
                "cpumax/v1-throttled.cfs_period_us",
                "cpumax/v1-throttled.cfs_burst_us",
                "cpumax/v2-max.cpu.max",
                "cpumax/v2-limited.cpu.max",
                "cpumax/v2-limit.cpu.max",
                "cpumax/v2-none.cpu.max.burst",
                "cpumax/v2-limited.cpu.max.burst",
        };
        static const char subst[] = { '\0', '\n', ' ', '\r', '-', '+', '0', '9', 'x', (char) 0xff };

        for (size_t i = 0; i < ELEMENTSOF(fixtures); i++) {
                _cleanup_free_ char *buf = NULL;
                size_t len;

                buf = read_fixture(fixtures[i], &len);

                for (size_t k = 0; k <= len; k++)
                        fuzz_one(buf, k);

                for (size_t k = 0; k < len; k++)
                        for (size_t s = 0; s < ELEMENTSOF(subst); s++) {
                                char saved = buf[k];

                                buf[k] = subst[s];
                                fuzz_one(buf, len);
                                buf[k] = saved;
                        }
        }
}

static void test_quota_to_string(void **state) {
        char buf[BW_QUOTA_STRING_MAX];

        assert_string_equal(bw_quota_to_string(BW_QUOTA_MAX, buf), "max");
        assert_string_equal(bw_quota_to_string(0, buf), "0");
        assert_string_equal(bw_quota_to_string(50000, buf), "50000");
        /* the longest u64 below max fits */
        assert_string_equal(bw_quota_to_string(BW_QUOTA_MAX - 1, buf), "18446744073709551614");
        assert_ptr_equal(bw_quota_to_string(1, buf), buf);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_quota_to_string),
                cmocka_unit_test(test_u64_parse),
                cmocka_unit_test(test_cpumax_parse),
                cmocka_unit_test(test_cfs_quota_parse),
                cmocka_unit_test(test_fixtures),
                cmocka_unit_test(test_validate),
                cmocka_unit_test(test_identical),
                cmocka_unit_test(test_cpumax_format),
                cmocka_unit_test(test_u64_format),
                cmocka_unit_test(test_cfs_quota_format),
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_fuzz),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
