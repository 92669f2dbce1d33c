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

#include "bwgov/cgroup/cpustat.h"
#include "bwgov/util/macro.h"

/* A string literal and its length, so that cases may hold NUL bytes. */
#define S(s) s, sizeof(s) - 1

#define ALL_V1 (BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED | BW_CPUSTAT_THROTTLED | \
                BW_CPUSTAT_NR_BURSTS | BW_CPUSTAT_BURST)
#define CPUTIME (BW_CPUSTAT_USAGE | BW_CPUSTAT_USER | BW_CPUSTAT_SYSTEM)
#define THROTTLE (BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED | BW_CPUSTAT_THROTTLED)
#define BURST (BW_CPUSTAT_NR_BURSTS | BW_CPUSTAT_BURST)

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

static void assert_stat_equal(const struct bw_cpu_stat *a, const struct bw_cpu_stat *b) {
        assert_int_equal(a->usage_usec, b->usage_usec);
        assert_int_equal(a->nr_periods, b->nr_periods);
        assert_int_equal(a->nr_throttled, b->nr_throttled);
        assert_int_equal(a->throttled_usec, b->throttled_usec);
        assert_int_equal(a->nr_bursts, b->nr_bursts);
        assert_int_equal(a->burst_usec, b->burst_usec);
        assert_int_equal(a->local_throttled_usec, b->local_throttled_usec);
        assert_int_equal(a->seen, b->seen);
}

typedef int (*stat_parser)(const char *buf, size_t len, struct bw_cpu_stat *ret);

/* Parse from an exact-size heap copy (no NUL after the data), and check that
 * the output is untouched on failure. */
static int parse_copy(stat_parser parse, const char *data, size_t len, struct bw_cpu_stat *ret) {
        struct bw_cpu_stat out, pattern;
        char *copy;
        int r;

        copy = malloc(len > 0 ? len : 1);
        assert_non_null(copy);
        if (len > 0)
                memcpy(copy, data, len);

        memset(&pattern, 0xa5, sizeof(pattern));
        out = pattern;
        r = parse(copy, len, &out);
        free(copy);

        if (r < 0)
                assert_memory_equal(&out, &pattern, sizeof(out));
        else
                assert_int_equal(r, 0);
        if (ret)
                *ret = out;
        return r;
}

/* ---- fixtures from real and hand-built kernels ---- */

struct good_fixture {
        const char *name;
        stat_parser parse;
        struct bw_cpu_stat expect;
};

static const struct good_fixture good_fixtures[] = {
        /* this host (6.18), v1 cpu hierarchy root */
        { "cpustat/v1-host-root.stat", bw_cpustat_parse_v1,
          { .seen = ALL_V1 } },
        /* this host, v1 child with quota 20 ms / 100 ms, burst 10 ms, 2 busy loops */
        { "cpustat/v1-throttled.stat", bw_cpustat_parse_v1,
          { .nr_periods = 37, .nr_throttled = 13, .throttled_usec = 504497,
            .nr_bursts = 13, .burst_usec = 83617, .seen = ALL_V1 } },
        /* this host, v1 child without a limit of its own under a 20 ms / 100 ms
         * parent, one busy loop: its own limit never throttled it */
        { "cpustat/v1-throttled-by-parent.stat", bw_cpustat_parse_v1,
          { .seen = ALL_V1 } },
        /* 6.1 with schedstats: wait_sum between the sets is ignored */
        { "cpustat/v1-6.1-schedstat.stat", bw_cpustat_parse_v1,
          { .nr_periods = 1208, .nr_throttled = 77, .throttled_usec = 2803117,
            .nr_bursts = 12, .burst_usec = 61250, .seen = ALL_V1 } },
        /* before 5.14: no burst fields */
        { "cpustat/v1-5.10-no-burst.stat", bw_cpustat_parse_v1,
          { .nr_periods = 5120, .nr_throttled = 311, .throttled_usec = 18220451,
            .seen = THROTTLE } },
        /* this host, unified root: no cpu controller, has nice_usec */
        { "cpustat/v2-host-root.stat", bw_cpustat_parse_v2,
          { .usage_usec = 118892928, .seen = CPUTIME } },
        /* this host, unified child of the throttled twin */
        { "cpustat/v2-host-child.stat", bw_cpustat_parse_v2,
          { .usage_usec = 570565, .seen = CPUTIME } },
        /* 5.15 with the cpu controller: no burst fields */
        { "cpustat/v2-5.15-throttled.stat", bw_cpustat_parse_v2,
          { .usage_usec = 8432097112, .nr_periods = 184233, .nr_throttled = 9120, .throttled_usec = 512840391,
            .seen = CPUTIME | THROTTLE } },
        /* 6.6: core_sched.force_idle_usec, burst fields */
        { "cpustat/v2-6.6-burst.stat", bw_cpustat_parse_v2,
          { .usage_usec = 3711804259, .nr_periods = 73110, .nr_throttled = 1502, .throttled_usec = 98124410,
            .nr_bursts = 388, .burst_usec = 11820304, .seen = CPUTIME | THROTTLE | BURST } },
        /* 6.18: nice_usec too */
        { "cpustat/v2-6.18-burst.stat", bw_cpustat_parse_v2,
          { .usage_usec = 2031337402, .nr_periods = 40112, .nr_throttled = 2210, .throttled_usec = 301447120,
            .nr_bursts = 95, .burst_usec = 4750031, .seen = CPUTIME | THROTTLE | BURST } },
        /* boundary values: UINT64_MAX, 2^32, 2^53 + 1 (not exact in a double) */
        { "cpustat/v2-6.18-limits.stat", bw_cpustat_parse_v2,
          { .usage_usec = UINT64_MAX, .nr_periods = UINT64_MAX, .nr_throttled = UINT64_C(4294967296),
            .throttled_usec = UINT64_C(9007199254740993),
            .nr_bursts = 1, .burst_usec = 50000, .seen = CPUTIME | THROTTLE | BURST } },
};

static void test_fixtures(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(good_fixtures); i++) {
                const struct good_fixture *f = &good_fixtures[i];
                _cleanup_free_ char *buf = NULL;
                struct bw_cpu_stat st;
                size_t len;

                print_message("# %s\n", f->name);
                buf = read_fixture(f->name, &len);
                assert_int_equal(parse_copy(f->parse, buf, len, &st), 0);
                assert_stat_equal(&st, &f->expect);
        }
}

/* v2 files are not v1 files and the other way round. */
static void test_wrong_version(void **state) {
        _cleanup_free_ char *v1 = NULL, *v2 = NULL;
        size_t len1, len2;

        v1 = read_fixture("cpustat/v1-throttled.stat", &len1);
        v2 = read_fixture("cpustat/v2-6.18-burst.stat", &len2);

        assert_int_equal(parse_copy(bw_cpustat_parse_v2, v1, len1, NULL), -ENODATA);
        assert_int_equal(parse_copy(bw_cpustat_parse_v1, v2, len2, NULL), -ENODATA);
}

/* ---- inline cases ---- */

struct good_case {
        const char *name;
        const char *buf;
        size_t len;
        struct bw_cpu_stat expect;
};

static const struct good_case good_v2[] = {
        { "no trailing newline", S("usage_usec 12"), { .usage_usec = 12, .seen = BW_CPUSTAT_USAGE } },
        { "zero", S("usage_usec 0\n"), { .seen = BW_CPUSTAT_USAGE } },
        { "uint64 max", S("usage_usec 18446744073709551615\n"),
          { .usage_usec = UINT64_MAX, .seen = BW_CPUSTAT_USAGE } },
        { "leading zeros", S("usage_usec 007\n"), { .usage_usec = 7, .seen = BW_CPUSTAT_USAGE } },
        { "unknown keys anywhere, any value", S("core_sched.force_idle_usec 5\nusage_usec 3\nfuture_key abc\nnice_usec -5\n"),
          { .usage_usec = 3, .seen = BW_CPUSTAT_USAGE } },
        { "duplicate unknown key", S("nice_usec 0\nnice_usec 0\nusage_usec 1\n"),
          { .usage_usec = 1, .seen = BW_CPUSTAT_USAGE } },
        { "any order", S("burst_usec 8\nnr_bursts 7\nthrottled_usec 6\nnr_throttled 5\nnr_periods 4\n"
                         "system_usec 3\nuser_usec 2\nusage_usec 1"),
          { .usage_usec = 1, .nr_periods = 4, .nr_throttled = 5,
            .throttled_usec = 6, .nr_bursts = 7, .burst_usec = 8, .seen = CPUTIME | THROTTLE | BURST } },
        { "v1 keys are unknown in v2", S("usage_usec 1\nthrottled_time 5\nburst_time 6\n"),
          { .usage_usec = 1, .seen = BW_CPUSTAT_USAGE } },
};

static const struct good_case good_v1[] = {
        { "ns to us truncates", S("nr_periods 1\nnr_throttled 0\nthrottled_time 1999\nnr_bursts 2\nburst_time 999\n"),
          { .nr_periods = 1, .throttled_usec = 1, .nr_bursts = 2, .burst_usec = 0, .seen = ALL_V1 } },
        { "uint64 max ns", S("nr_periods 1\nnr_throttled 0\nthrottled_time 18446744073709551615\n"),
          { .nr_periods = 1, .throttled_usec = UINT64_C(18446744073709551), .seen = THROTTLE } },
        { "no trailing newline", S("nr_periods 3\nnr_throttled 2\nthrottled_time 1500"),
          { .nr_periods = 3, .nr_throttled = 2, .throttled_usec = 1, .seen = THROTTLE } },
        { "v2 keys are unknown in v1", S("usage_usec 9\nnr_periods 3\nnr_throttled 2\nthrottled_time 1500\nthrottled_usec 7\n"),
          { .nr_periods = 3, .nr_throttled = 2, .throttled_usec = 1, .seen = THROTTLE } },
};

static void run_good(const struct good_case *cases, size_t n, stat_parser parse) {
        for (size_t i = 0; i < n; i++) {
                struct bw_cpu_stat st;

                print_message("# %s\n", cases[i].name);
                assert_int_equal(parse_copy(parse, cases[i].buf, cases[i].len, &st), 0);
                assert_stat_equal(&st, &cases[i].expect);
        }
}

static void test_good_v2(void **state) {
        run_good(good_v2, ELEMENTSOF(good_v2), bw_cpustat_parse_v2);
}

static void test_good_v1(void **state) {
        run_good(good_v1, ELEMENTSOF(good_v1), bw_cpustat_parse_v1);
}

struct bad_case {
        const char *name;
        const char *buf;
        size_t len;
        int error;
};

static const struct bad_case bad_v2[] = {
        { "empty", S(""), -ENODATA },
        { "only unknown keys", S("nice_usec 0\n"), -ENODATA },
        { "no usage", S("user_usec 5\nsystem_usec 6\n"), -ENODATA },
        { "missing usage beats partial set", S("nr_periods 1\n"), -ENODATA },
        { "key alone, truncated", S("usage_usec"), -EINVAL },
        { "key alone", S("usage_usec\n"), -EINVAL },
        { "empty value", S("usage_usec \n"), -EINVAL },
        { "truncated key", S("usage_usec 1\nuser_us"), -EINVAL },
        { "unknown key without value", S("usage_usec 1\nfoo\n"), -EINVAL },
        { "malformed beats missing usage", S("nice_usec\n"), -EINVAL },
        { "duplicate key", S("usage_usec 12\nusage_usec 13\n"), -EINVAL },
        { "duplicate key, other field", S("usage_usec 1\nuser_usec 2\nuser_usec 2\n"), -EINVAL },
        { "huge number", S("usage_usec 99999999999999999999999\n"), -EINVAL },
        { "uint64 max + 1", S("usage_usec 18446744073709551616\n"), -EINVAL },
        { "negative", S("usage_usec -5\n"), -EINVAL },
        { "leading plus", S("usage_usec +5\n"), -EINVAL },
        { "trailing garbage", S("usage_usec 12a\n"), -EINVAL },
        { "hex", S("usage_usec 0x10\n"), -EINVAL },
        { "decimal point", S("usage_usec 1.5\n"), -EINVAL },
        { "CRLF", S("usage_usec 12\r\nuser_usec 3\r\n"), -EINVAL },
        { "a key checked but not kept, not a number", S("usage_usec 1\nuser_usec 3x\n"), -EINVAL },
        { "a key checked but not kept, over UINT64_MAX", S("usage_usec 1\nsystem_usec 18446744073709551616\n"), -EINVAL },
        { "empty line at end", S("usage_usec 12\n\n"), -EINVAL },
        { "empty line at start", S("\nusage_usec 12\n"), -EINVAL },
        { "newline only", S("\n"), -EINVAL },
        { "two blanks", S("usage_usec  12\n"), -EINVAL },
        { "leading blank", S(" usage_usec 12\n"), -EINVAL },
        { "tab", S("usage_usec\t12\n"), -EINVAL },
        { "trailing blank", S("usage_usec 12 \n"), -EINVAL },
        { "two values", S("usage_usec 12 13\n"), -EINVAL },
        { "non-UTF-8 in value", S("usage_usec 1\xff\n"), -EINVAL },
        { "non-UTF-8 key", S("usage_usec 1\n\xff\xfe 5\n"), -EINVAL },
        { "non-UTF-8 unknown value", S("usage_usec 1\nnice_usec \xff\xfe\n"), -EINVAL },
        { "non-UTF-8 only", S("\xff\xfe"), -EINVAL },
        { "UTF-8 key", S("usage_usec 1\n\xc3\xa9 5\n"), -EINVAL },
        { "NUL in value", S("usage_usec 1\0" "2\n"), -EINVAL },
        { "NUL in key", S("usage\0usec 1\n"), -EINVAL },
        { "trailing NUL", S("usage_usec 1\n\0"), -EINVAL },
        { "partial throttling set", S("usage_usec 1\nnr_periods 2\nnr_throttled 0\n"), -EINVAL },
        { "bursts without throttling", S("usage_usec 1\nnr_bursts 0\nburst_usec 0\n"), -EINVAL },
        { "partial burst set", S("usage_usec 1\nnr_periods 1\nnr_throttled 0\nthrottled_usec 0\nnr_bursts 3\n"), -EINVAL },
};

static const struct bad_case bad_v1[] = {
        { "empty", S(""), -ENODATA },
        { "missing throttled_time", S("nr_periods 1\nnr_throttled 0\n"), -ENODATA },
        { "missing nr_periods", S("nr_throttled 0\nthrottled_time 5\nnr_bursts 0\nburst_time 0\n"), -ENODATA },
        { "v2 keys only", S("usage_usec 1\nnr_periods 1\nnr_throttled 0\nthrottled_usec 5\n"), -ENODATA },
        { "partial burst set", S("nr_periods 1\nnr_throttled 0\nthrottled_time 5\nnr_bursts 1\n"), -EINVAL },
        { "negative", S("nr_periods -1\nnr_throttled 0\nthrottled_time 5\n"), -EINVAL },
        { "leading plus", S("nr_periods +1\nnr_throttled 0\nthrottled_time 5\n"), -EINVAL },
        { "duplicate", S("nr_periods 1\nnr_periods 1\nnr_throttled 0\nthrottled_time 5\n"), -EINVAL },
        { "huge ns", S("nr_periods 1\nnr_throttled 0\nthrottled_time 99999999999999999999999\n"), -EINVAL },
        { "CRLF", S("nr_periods 1\r\nnr_throttled 0\r\nthrottled_time 5\r\n"), -EINVAL },
        { "truncated", S("nr_periods 1\nnr_throttled 0\nthrottled_time"), -EINVAL },
        { "non-UTF-8", S("nr_periods 1\nnr_throttled 0\nthrottled_time 5\n\xff\xfe\n"), -EINVAL },
        { "NUL", S("nr_periods 1\nnr_throttled 0\0\nthrottled_time 5\n"), -EINVAL },
};

static void run_bad(const struct bad_case *cases, size_t n, stat_parser parse) {
        for (size_t i = 0; i < n; i++) {
                print_message("# %s\n", cases[i].name);
                assert_int_equal(parse_copy(parse, cases[i].buf, cases[i].len, NULL), cases[i].error);
        }
}

static void test_bad_v2(void **state) {
        run_bad(bad_v2, ELEMENTSOF(bad_v2), bw_cpustat_parse_v2);
}

static void test_bad_v1(void **state) {
        run_bad(bad_v1, ELEMENTSOF(bad_v1), bw_cpustat_parse_v1);
}

/* ---- cpu.stat.local ---- */

typedef int (*local_parser)(const char *buf, size_t len, uint64_t *ret_usec);

struct local_case {
        const char *name;
        const char *buf;
        size_t len;
        int error;
        uint64_t usec;
};

/* Parse from an exact-size heap copy; the output is untouched on failure. */
static int parse_local_copy(local_parser parse, const char *data, size_t len, uint64_t *ret_usec) {
        uint64_t usec = UINT64_C(0xa5a5a5a5a5a5a5a5);
        char *copy;
        int r;

        copy = malloc(len > 0 ? len : 1);
        assert_non_null(copy);
        if (len > 0)
                memcpy(copy, data, len);

        r = parse(copy, len, &usec);
        free(copy);

        if (r < 0)
                assert_int_equal(usec, UINT64_C(0xa5a5a5a5a5a5a5a5));
        else
                assert_int_equal(r, 0);
        if (ret_usec)
                *ret_usec = usec;
        return r;
}

static const struct local_case local_v2[] = {
        { "kernel format", S("throttled_usec 1635564\n"), 0, 1635564 },
        { "zero", S("throttled_usec 0\n"), 0, 0 },
        { "no trailing newline", S("throttled_usec 12"), 0, 12 },
        { "leading zeros", S("throttled_usec 007\n"), 0, 7 },
        { "uint64 max", S("throttled_usec 18446744073709551615\n"), 0, UINT64_MAX },
        { "unknown keys anywhere, any value", S("future_usec 5\nthrottled_usec 7\nnr_future -x\n"), 0, 7 },
        { "duplicate unknown key", S("future_usec 1\nfuture_usec 1\nthrottled_usec 3\n"), 0, 3 },
        { "v1 key is unknown in v2", S("throttled_time 5000\nthrottled_usec 7\n"), 0, 7 },
        /* v2 cgroups without the cpu controller have an empty cpu.stat.local
         * (seen on this host's controller-less unified tree) */
        { "empty", S(""), -ENODATA, 0 },
        { "only unknown keys", S("future_usec 5\n"), -ENODATA, 0 },
        { "v1 key only", S("throttled_time 5000\n"), -ENODATA, 0 },
        { "duplicate", S("throttled_usec 1\nthrottled_usec 1\n"), -EINVAL, 0 },
        { "key alone", S("throttled_usec\n"), -EINVAL, 0 },
        { "key alone, truncated", S("throttled_usec"), -EINVAL, 0 },
        { "empty value", S("throttled_usec \n"), -EINVAL, 0 },
        { "malformed beats missing", S("future_usec\n"), -EINVAL, 0 },
        { "malformed unknown line after a good one", S("throttled_usec 1\nfoo\n"), -EINVAL, 0 },
        { "two blanks", S("throttled_usec  1\n"), -EINVAL, 0 },
        { "tab", S("throttled_usec\t1\n"), -EINVAL, 0 },
        { "trailing blank", S("throttled_usec 1 \n"), -EINVAL, 0 },
        { "empty line at end", S("throttled_usec 1\n\n"), -EINVAL, 0 },
        { "newline only", S("\n"), -EINVAL, 0 },
        { "CRLF", S("throttled_usec 1\r\n"), -EINVAL, 0 },
        { "negative", S("throttled_usec -1\n"), -EINVAL, 0 },
        { "leading plus", S("throttled_usec +1\n"), -EINVAL, 0 },
        { "hex", S("throttled_usec 0x10\n"), -EINVAL, 0 },
        { "uint64 max + 1", S("throttled_usec 18446744073709551616\n"), -EINVAL, 0 },
        { "huge number", S("throttled_usec 99999999999999999999999\n"), -EINVAL, 0 },
        { "NUL in value", S("throttled_usec 1\0" "2\n"), -EINVAL, 0 },
        { "trailing NUL", S("throttled_usec 1\n\0"), -EINVAL, 0 },
        { "non-UTF-8", S("throttled_usec 1\n\xff\xfe 5\n"), -EINVAL, 0 },
};

static const struct local_case local_v1[] = {
        /* what this host printed for a child throttled by its parent */
        { "kernel format", S("throttled_time 1635564128\n"), 0, 1635564 },
        { "zero", S("throttled_time 0\n"), 0, 0 },
        { "ns to us truncates", S("throttled_time 1999\n"), 0, 1 },
        { "below one us", S("throttled_time 999\n"), 0, 0 },
        { "no trailing newline", S("throttled_time 1500"), 0, 1 },
        { "uint64 max ns", S("throttled_time 18446744073709551615\n"), 0, UINT64_C(18446744073709551) },
        { "unknown keys anywhere, any value", S("future_time x\nthrottled_time 3000\nnr_future 1\n"), 0, 3 },
        { "v2 key is unknown in v1", S("throttled_usec 7\nthrottled_time 3000\n"), 0, 3 },
        { "empty", S(""), -ENODATA, 0 },
        { "v2 key only", S("throttled_usec 7\n"), -ENODATA, 0 },
        { "duplicate", S("throttled_time 1000\nthrottled_time 2000\n"), -EINVAL, 0 },
        { "key alone", S("throttled_time\n"), -EINVAL, 0 },
        { "malformed beats missing", S("future_time\n"), -EINVAL, 0 },
        { "two blanks", S("throttled_time  1000\n"), -EINVAL, 0 },
        { "empty line at start", S("\nthrottled_time 1000\n"), -EINVAL, 0 },
        { "CRLF", S("throttled_time 1000\r\n"), -EINVAL, 0 },
        { "negative", S("throttled_time -1000\n"), -EINVAL, 0 },
        { "decimal point", S("throttled_time 1.5\n"), -EINVAL, 0 },
        { "uint64 max + 1 ns", S("throttled_time 18446744073709551616\n"), -EINVAL, 0 },
        { "huge ns", S("throttled_time 99999999999999999999999\n"), -EINVAL, 0 },
        { "NUL", S("throttled_time 1000\0\n"), -EINVAL, 0 },
        { "non-UTF-8", S("throttled_time 1\xff\n"), -EINVAL, 0 },
};

static void run_local(const struct local_case *cases, size_t n, local_parser parse) {
        for (size_t i = 0; i < n; i++) {
                uint64_t usec;

                print_message("# %s\n", cases[i].name);
                assert_int_equal(parse_local_copy(parse, cases[i].buf, cases[i].len, &usec), cases[i].error);
                if (cases[i].error == 0)
                        assert_int_equal(usec, cases[i].usec);
        }
}

static void test_local_v2(void **state) {
        run_local(local_v2, ELEMENTSOF(local_v2), bw_cpustat_local_parse_v2);
}

static void test_local_v1(void **state) {
        run_local(local_v1, ELEMENTSOF(local_v1), bw_cpustat_local_parse_v1);
}

struct local_fixture {
        const char *name;
        local_parser parse;
        uint64_t usec;
};

static const struct local_fixture local_fixtures[] = {
        /* this host (6.18), v1 cpu hierarchy root */
        { "cpustat/v1-host-root.stat.local", bw_cpustat_local_parse_v1, 0 },
        /* this host, the child of v1-throttled-by-parent.stat: cpu.stat says
         * 0 ns throttled, cpu.stat.local 1.6 s */
        { "cpustat/v1-throttled-by-parent.stat.local", bw_cpustat_local_parse_v1, 1635564 },
        /* cgroup v2, written from the kernel's format (cpu_local_stat_show) */
        { "cpustat/v2-6.6.stat.local", bw_cpustat_local_parse_v2, 0 },
};

static void test_local_fixtures(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(local_fixtures); i++) {
                const struct local_fixture *f = &local_fixtures[i];
                _cleanup_free_ char *buf = NULL;
                uint64_t usec;
                size_t len;

                print_message("# %s\n", f->name);
                buf = read_fixture(f->name, &len);
                assert_int_equal(parse_local_copy(f->parse, buf, len, &usec), 0);
                assert_int_equal(usec, f->usec);

                /* The other version's key is unknown there; a cpu.stat.local
                 * is not a cpu.stat. */
                assert_int_equal(parse_local_copy(f->parse == bw_cpustat_local_parse_v1 ?
                                                  bw_cpustat_local_parse_v2 : bw_cpustat_local_parse_v1,
                                                  buf, len, NULL), -ENODATA);
                assert_int_equal(parse_copy(bw_cpustat_parse_v1, buf, len, NULL), -ENODATA);
                assert_int_equal(parse_copy(bw_cpustat_parse_v2, buf, len, NULL), -ENODATA);
        }
}

/* The cpu.stat parsers never set the cpu.stat.local bit, even when the key
 * names collide (v1 cpu.stat has throttled_time too). */
static void test_local_not_from_stat(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(good_fixtures); i++) {
                _cleanup_free_ char *buf = NULL;
                struct bw_cpu_stat st;
                size_t len;

                buf = read_fixture(good_fixtures[i].name, &len);
                assert_int_equal(parse_copy(good_fixtures[i].parse, buf, len, &st), 0);
                assert_false(st.seen & BW_CPUSTAT_LOCAL_THROTTLED);
                assert_int_equal(st.local_throttled_usec, 0);
        }
}

/* ---- cpuacct.usage ---- */

static void test_cpuacct_usage(void **state) {
        static const struct {
                const char *buf;
                size_t len;
                int error;
                uint64_t usec;
        } cases[] = {
                { S("53400701426\n"), 0, 53400701 },
                { S("53400701426"), 0, 53400701 },
                { S("999\n"), 0, 0 },
                { S("0\n"), 0, 0 },
                { S("18446744073709551615\n"), 0, UINT64_C(18446744073709551) },
                { S(""), -EINVAL, 0 },
                { S("\n"), -EINVAL, 0 },
                { S("-1\n"), -EINVAL, 0 },
                { S("+12\n"), -EINVAL, 0 },
                { S("18446744073709551616\n"), -EINVAL, 0 },
                { S("99999999999999999999999\n"), -EINVAL, 0 },
                { S("12\n\n"), -EINVAL, 0 },
                { S("12\r\n"), -EINVAL, 0 },
                { S("1 2\n"), -EINVAL, 0 },
                { S("12\0"), -EINVAL, 0 },
                { S("\xff\xfe"), -EINVAL, 0 },
        };
        _cleanup_free_ char *buf = NULL;
        uint64_t usec;
        size_t len;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *copy = malloc(cases[i].len > 0 ? cases[i].len : 1);
                int r;

                assert_non_null(copy);
                memcpy(copy, cases[i].buf, cases[i].len);
                usec = 4242;
                r = bw_cpuacct_usage_parse(copy, cases[i].len, &usec);
                free(copy);

                print_message("# cpuacct case %zu\n", i);
                assert_int_equal(r, cases[i].error);
                assert_int_equal(usec, r < 0 ? 4242 : cases[i].usec);
        }

        /* this host's v1 cpuacct child */
        buf = read_fixture("cpustat/cpuacct.usage", &len);
        assert_int_equal(bw_cpuacct_usage_parse(buf, len, &usec), 0);
        assert_int_equal(usec, 570364);
}

/* ---- fuzz-ish: every prefix and some byte substitutions of every fixture ---- */

static void assert_known_result(int r) {
        if (r != 0 && r != -EINVAL && r != -ENODATA)
                fail_msg("unexpected result %d", r);
}

/* Feeds every prefix of the fixture NAME, and the fixture with each byte
 * replaced by each of a few troublesome ones, to CHECK, which parses the
 * buffer with the v1 and v2 parsers it is about. */
static void fuzz_fixture(const char *name, void (*check)(const char *buf, size_t len)) {
        static const char subst[] = { '\0', '\n', ' ', '\r', '-', '+', '0', '9', 'x', (char) 0xff, (char) 0x80 };
        _cleanup_free_ char *buf = NULL;
        size_t len;

        buf = read_fixture(name, &len);

        for (size_t k = 0; k <= len; k++)
                check(buf, k);

        for (size_t k = 0; k < len; k++)
                for (size_t s = 0; s < ELEMENTSOF(subst); s++) {
                        char saved = buf[k];

                        buf[k] = subst[s];
                        check(buf, len);
                        buf[k] = saved;
                }
}

static void check_cpustat(const char *buf, size_t len) {
        assert_known_result(parse_copy(bw_cpustat_parse_v1, buf, len, NULL));
        assert_known_result(parse_copy(bw_cpustat_parse_v2, buf, len, NULL));
}

static void check_cpustat_local(const char *buf, size_t len) {
        assert_known_result(parse_local_copy(bw_cpustat_local_parse_v1, buf, len, NULL));
        assert_known_result(parse_local_copy(bw_cpustat_local_parse_v2, buf, len, NULL));
}

#define ALL_FIELDS 0x1ffu

static void test_delta(void **state) {
        static const struct {
                struct bw_cpu_stat prev, cur;
                unsigned fields;
                int r;
                struct bw_cpu_stat want;
                const char *why;
        } cases[] = {
                { { .usage_usec = 100, .nr_periods = 5, .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS },
                  { .usage_usec = 350, .nr_periods = 9, .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS },
                  ALL_FIELDS, 0,
                  { .usage_usec = 250, .nr_periods = 4, .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS },
                  "growth" },
                { { .usage_usec = 100, .throttled_usec = 7, .seen = BW_CPUSTAT_USAGE },
                  { .usage_usec = 100, .throttled_usec = 9, .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_THROTTLED },
                  ALL_FIELDS, 0,
                  { .seen = BW_CPUSTAT_USAGE },
                  "a counter only one side has: no delta, not in seen" },
                { { .usage_usec = 100, .local_throttled_usec = 10, .seen = BW_CPUSTAT_LOCAL_THROTTLED },
                  { .usage_usec = 50, .local_throttled_usec = 15, .seen = BW_CPUSTAT_LOCAL_THROTTLED },
                  ALL_FIELDS, 0,
                  { .local_throttled_usec = 5, .seen = BW_CPUSTAT_LOCAL_THROTTLED },
                  "cpu.stat.local counts too; usage unseen is not looked at" },
                { { .usage_usec = 100, .seen = BW_CPUSTAT_USAGE },
                  { .usage_usec = 99, .seen = BW_CPUSTAT_USAGE },
                  ALL_FIELDS, -ERANGE, { 0 },
                  "usage went backwards" },
                { { .nr_bursts = 3, .burst_usec = 9, .seen = BW_CPUSTAT_NR_BURSTS | BW_CPUSTAT_BURST },
                  { .nr_bursts = 2, .burst_usec = 9, .seen = BW_CPUSTAT_NR_BURSTS | BW_CPUSTAT_BURST },
                  ALL_FIELDS, -ERANGE, { 0 },
                  "nr_bursts went backwards" },
                { { .usage_usec = 10, .nr_periods = 9, .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS },
                  { .usage_usec = 20, .nr_periods = 1, .seen = BW_CPUSTAT_USAGE | BW_CPUSTAT_NR_PERIODS },
                  BW_CPUSTAT_USAGE, 0,
                  { .usage_usec = 10, .seen = BW_CPUSTAT_USAGE },
                  "a field outside the mask is not looked at, even backwards" },
                { { .seen = 0 }, { .seen = 0 }, ALL_FIELDS, 0, { .seen = 0 }, "nothing" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_cpu_stat d;

                print_message("# %s\n", cases[i].why);
                memset(&d, 0x5a, sizeof d);
                assert_int_equal(bw_cpustat_delta(&cases[i].prev, &cases[i].cur, cases[i].fields, &d), cases[i].r);
                if (cases[i].r < 0) {
                        assert_int_equal(d.seen, 0x5a5a5a5au);          /* untouched */
                        continue;
                }
                assert_int_equal(d.seen, cases[i].want.seen);
                assert_int_equal(d.usage_usec, cases[i].want.usage_usec);
                assert_int_equal(d.nr_periods, cases[i].want.nr_periods);
                assert_int_equal(d.throttled_usec, cases[i].want.throttled_usec);
                assert_int_equal(d.nr_bursts, cases[i].want.nr_bursts);
                assert_int_equal(d.local_throttled_usec, cases[i].want.local_throttled_usec);
        }
}

static void test_fuzz(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(good_fixtures); i++)
                fuzz_fixture(good_fixtures[i].name, check_cpustat);
}

static void test_fuzz_local(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(local_fixtures); i++)
                fuzz_fixture(local_fixtures[i].name, check_cpustat_local);
}

/* The parser must not depend on a NUL after the data: a buffer cut out of a
 * larger one ends in the middle of a number. */
static void test_not_nul_terminated(void **state) {
        const char big[] = "usage_usec 123456\nuser_usec 7";
        struct bw_cpu_stat st;
        uint64_t usec;

        assert_int_equal(bw_cpustat_parse_v2(big, 14, &st), 0);
        assert_int_equal(st.usage_usec, 123);
        assert_int_equal(st.seen, BW_CPUSTAT_USAGE);

        assert_int_equal(bw_cpustat_parse_v2(big, sizeof(big) - 1, &st), 0);
        assert_int_equal(st.usage_usec, 123456);
        assert_int_equal(st.seen, BW_CPUSTAT_USAGE | BW_CPUSTAT_USER);     /* checked, not kept */

        assert_int_equal(bw_cpustat_parse_v2(NULL, 0, &st), -ENODATA);
        assert_int_equal(bw_cpustat_parse_v1(NULL, 0, &st), -ENODATA);

        assert_int_equal(bw_cpustat_local_parse_v2("throttled_usec 4321\nx", 19, &usec), 0);
        assert_int_equal(usec, 4321);
        assert_int_equal(bw_cpustat_local_parse_v1("throttled_time 4321000", 17, &usec), 0);
        assert_int_equal(usec, 0);
        assert_int_equal(bw_cpustat_local_parse_v2(NULL, 0, &usec), -ENODATA);
        assert_int_equal(bw_cpustat_local_parse_v1(NULL, 0, &usec), -ENODATA);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fixtures),
                cmocka_unit_test(test_wrong_version),
                cmocka_unit_test(test_good_v2),
                cmocka_unit_test(test_good_v1),
                cmocka_unit_test(test_bad_v2),
                cmocka_unit_test(test_bad_v1),
                cmocka_unit_test(test_local_v2),
                cmocka_unit_test(test_local_v1),
                cmocka_unit_test(test_local_fixtures),
                cmocka_unit_test(test_local_not_from_stat),
                cmocka_unit_test(test_cpuacct_usage),
                cmocka_unit_test(test_delta),
                cmocka_unit_test(test_fuzz),
                cmocka_unit_test(test_fuzz_local),
                cmocka_unit_test(test_not_nul_terminated),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
