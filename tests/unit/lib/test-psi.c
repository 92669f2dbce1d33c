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

#include "bwgov/util/macro.h"
#include "bwgov/cgroup/psi.h"

/* A string literal and its length, so that cases may hold NUL bytes. */
#define S(s) s, sizeof(s) - 1

#define LINE0 "avg10=0.00 avg60=0.00 avg300=0.00 total=0"

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

/* Parse from an exact-size heap copy, and check that the output is untouched
 * on failure. */
static int parse_copy(const char *data, size_t len, struct bw_psi *ret) {
        struct bw_psi out, pattern;
        char *copy;
        int r;

        copy = malloc(len > 0 ? len : 1);
        assert_non_null(copy);
        if (len > 0)
                memcpy(copy, data, len);

        memset(&pattern, 0xa5, sizeof(pattern));
        out = pattern;
        r = bw_psi_parse(copy, len, &out);
        free(copy);

        if (r < 0)
                assert_memory_equal(&out, &pattern, sizeof(out));
        else
                assert_int_equal(r, 0);
        if (ret)
                *ret = out;
        return r;
}

static void assert_line_equal(const struct bw_psi_line *a, const struct bw_psi_line *b) {
        assert_int_equal(a->avg10, b->avg10);
        assert_int_equal(a->avg60, b->avg60);
        assert_int_equal(a->avg300, b->avg300);
        assert_int_equal(a->total_usec, b->total_usec);
}

static void assert_psi_equal(const struct bw_psi *a, const struct bw_psi *b) {
        assert_line_equal(&a->some, &b->some);
        assert_int_equal(a->has_full, b->has_full);
        if (b->has_full)
                assert_line_equal(&a->full, &b->full);
}

struct good_fixture {
        const char *name;
        struct bw_psi expect;
};

static const struct good_fixture good_fixtures[] = {
        /* this host (6.18) */
        { "psi/proc-pressure-cpu",
          { .some = { 4969, 2455, 679, 24961217 }, .full = { 0, 0, 0, 0 }, .has_full = true } },
        { "psi/v2-host-root.pressure",
          { .some = { 4969, 2455, 679, 24960621 }, .full = { 0, 0, 0, 0 }, .has_full = true } },
        /* this host: unified twin of a v1 child throttled to 20 % with 2 busy loops */
        { "psi/v2-host-child-throttled.pressure",
          { .some = { 2477, 482, 102, 3273674 }, .full = { 2352, 457, 96, 3111821 }, .has_full = true } },
        /* before 5.13 a cgroup's cpu.pressure had no "full" line */
        { "psi/v2-5.10-some-only.pressure",
          { .some = { 153, 87, 33, 91736402 }, .has_full = false } },
        /* boundaries: 100.00 and a total of UINT64_MAX */
        { "psi/v2-saturated.pressure",
          { .some = { 10000, 9841, 7109, UINT64_MAX }, .full = { 10000, 9705, 6990, UINT64_C(88314455120) },
            .has_full = true } },
};

static void test_fixtures(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(good_fixtures); i++) {
                _cleanup_free_ char *buf = NULL;
                struct bw_psi psi;
                size_t len;

                print_message("# %s\n", good_fixtures[i].name);
                buf = read_fixture(good_fixtures[i].name, &len);
                assert_int_equal(parse_copy(buf, len, &psi), 0);
                assert_psi_equal(&psi, &good_fixtures[i].expect);
        }
}

static void test_good(void **state) {
        static const struct {
                const char *name;
                const char *buf;
                size_t len;
                struct bw_psi expect;
        } cases[] = {
                { "one decimal", S("some avg10=4.6 avg60=0.0 avg300=1.05 total=5\n"),
                  { .some = { 460, 0, 105, 5 } } },
                { "no trailing newline", S("some " LINE0 "\nfull avg10=1.00 avg60=2.00 avg300=3.00 total=4"),
                  { .some = { 0, 0, 0, 0 }, .full = { 100, 200, 300, 4 }, .has_full = true } },
                { "fields in any order", S("some total=7 avg300=0.03 avg60=0.02 avg10=0.01\n"),
                  { .some = { 1, 2, 3, 7 } } },
                { "full before some", S("full avg10=0.50 avg60=0.25 avg300=0.10 total=9\nsome " LINE0 "\n"),
                  { .some = { 0, 0, 0, 0 }, .full = { 50, 25, 10, 9 }, .has_full = true } },
                { "leading zeros", S("some avg10=00.50 avg60=099.99 avg300=0100.00 total=007\n"),
                  { .some = { 50, 9999, 10000, 7 } } },
                { "total uint64 max", S("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551615\n"),
                  { .some = { 0, 0, 0, UINT64_MAX } } },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_psi psi;

                print_message("# %s\n", cases[i].name);
                assert_int_equal(parse_copy(cases[i].buf, cases[i].len, &psi), 0);
                assert_psi_equal(&psi, &cases[i].expect);
        }
}

static void test_bad(void **state) {
        static const struct {
                const char *name;
                const char *buf;
                size_t len;
                int error;
        } cases[] = {
                { "empty", S(""), -ENODATA },
                { "full only", S("full " LINE0 "\n"), -ENODATA },
                { "malformed full beats missing some", S("full avg10=0.00\n"), -EINVAL },
                { "type alone", S("some"), -EINVAL },
                { "type alone, newline", S("some\n"), -EINVAL },
                { "type and blank", S("some "), -EINVAL },
                { "missing total", S("some avg10=0.00 avg60=0.00 avg300=0.00\n"), -EINVAL },
                { "missing avg60", S("some avg10=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "duplicate field", S("some avg10=0.00 avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "duplicate total", S("some " LINE0 " total=0\n"), -EINVAL },
                { "duplicate some", S("some " LINE0 "\nsome " LINE0 "\n"), -EINVAL },
                { "duplicate full", S("some " LINE0 "\nfull " LINE0 "\nfull " LINE0 "\n"), -EINVAL },
                { "unknown line type", S("some " LINE0 "\nhalf " LINE0 "\n"), -EINVAL },
                { "upper case type", S("SOME " LINE0 "\n"), -EINVAL },
                { "unknown field", S("some " LINE0 " avg5=0.00\n"), -EINVAL },
                { "field without =", S("some avg10 0.00 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg above 100", S("some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg 101", S("some avg10=101.00 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg huge", S("some avg10=99999999999999999999.00 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg 3 decimals", S("some avg10=0.001 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg no decimals", S("some avg10=1 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg dot, no decimals", S("some avg10=1. avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg no integer part", S("some avg10=.50 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg negative", S("some avg10=-1.00 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg plus", S("some avg10=+1.00 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg decimal comma", S("some avg10=1,50 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg empty", S("some avg10= avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg two dots", S("some avg10=1.5.0 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "avg exponent", S("some avg10=1e1 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "total huge", S("some avg10=0.00 avg60=0.00 avg300=0.00 total=99999999999999999999999\n"), -EINVAL },
                { "total uint64 max + 1", S("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n"), -EINVAL },
                { "total negative", S("some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n"), -EINVAL },
                { "total plus", S("some avg10=0.00 avg60=0.00 avg300=0.00 total=+1\n"), -EINVAL },
                { "total empty", S("some avg10=0.00 avg60=0.00 avg300=0.00 total=\n"), -EINVAL },
                { "total fraction", S("some avg10=0.00 avg60=0.00 avg300=0.00 total=1.5\n"), -EINVAL },
                { "two blanks", S("some  " LINE0 "\n"), -EINVAL },
                { "two blanks between fields", S("some avg10=0.00  avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "trailing blank", S("some " LINE0 " \n"), -EINVAL },
                { "tab", S("some\tavg10=0.00 avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "CRLF", S("some " LINE0 "\r\nfull " LINE0 "\r\n"), -EINVAL },
                { "empty line", S("some " LINE0 "\n\n"), -EINVAL },
                { "leading empty line", S("\nsome " LINE0 "\n"), -EINVAL },
                { "non-UTF-8 only", S("\xff\xfe"), -EINVAL },
                { "non-UTF-8 in avg", S("some avg10=0.0\xff avg60=0.00 avg300=0.00 total=0\n"), -EINVAL },
                { "non-UTF-8 line", S("some " LINE0 "\n\xff\xfe\n"), -EINVAL },
                { "NUL in total", S("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\0\n"), -EINVAL },
                { "NUL in type", S("so\0e " LINE0 "\n"), -EINVAL },
                { "trailing NUL", S("some " LINE0 "\n\0"), -EINVAL },
                { "truncated field", S("some avg10=0.00 avg60=0.00 avg300=0.00 tot"), -EINVAL },
                { "truncated avg", S("some avg10=0.00 avg60=0.00 avg300=0."), -EINVAL },
                { "malformed full after good some", S("some " LINE0 "\nfull avg10=0.00 avg60=0.00\n"), -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                print_message("# %s\n", cases[i].name);
                assert_int_equal(parse_copy(cases[i].buf, cases[i].len, NULL), cases[i].error);
        }
}

static void assert_known_result(int r) {
        if (r != 0 && r != -EINVAL && r != -ENODATA)
                fail_msg("unexpected result %d", r);
}

/* Fuzz-ish: every prefix and some byte substitutions of every fixture. */
static void test_fuzz(void **state) {
        static const char subst[] = { '\0', '\n', ' ', '\r', '=', '.', '-', '0', '9', 'x', (char) 0xff };

        for (size_t i = 0; i < ELEMENTSOF(good_fixtures); i++) {
                _cleanup_free_ char *buf = NULL;
                size_t len;

                buf = read_fixture(good_fixtures[i].name, &len);

                for (size_t k = 0; k <= len; k++)
                        assert_known_result(parse_copy(buf, k, NULL));

                for (size_t k = 0; k < len; k++)
                        for (size_t s = 0; s < ELEMENTSOF(subst); s++) {
                                char saved = buf[k];

                                buf[k] = subst[s];
                                assert_known_result(parse_copy(buf, len, NULL));
                                buf[k] = saved;
                        }
        }
}

static void test_not_nul_terminated(void **state) {
        const char big[] = "some avg10=1.25 avg60=0.00 avg300=0.00 total=12345\nfull avg10";
        struct bw_psi psi;

        /* cut in the middle of total: the prefix is a complete line */
        assert_int_equal(bw_psi_parse(big, strlen("some avg10=1.25 avg60=0.00 avg300=0.00 total=12"), &psi), 0);
        assert_int_equal(psi.some.avg10, 125);
        assert_int_equal(psi.some.total_usec, 12);
        assert_false(psi.has_full);

        /* cut in the middle of avg10: one decimal */
        assert_int_equal(bw_psi_parse("some total=1 avg60=0.00 avg300=0.00 avg10=1.25", strlen("some total=1 avg60=0.00 avg300=0.00 avg10=1.2"), &psi), 0);
        assert_int_equal(psi.some.avg10, 120);

        assert_int_equal(bw_psi_parse(big, sizeof(big) - 1, &psi), -EINVAL);
        assert_int_equal(bw_psi_parse(NULL, 0, &psi), -ENODATA);
}

static void test_rate(void **state) {
        static const struct {
                uint64_t prev_total, prev_now, total, now;
                int r;
                uint64_t rate;
                const char *why;
        } cases[] = {
                { 0,       0,       0,       1000000, 1, 0,       "no stall" },
                { 1000,    5000000, 251000,  6000000, 1, 250000,  "a quarter of one second" },
                { 0,       0,       100000,  2000000, 1, 50000,   "over two seconds" },
                { 0,       0,       1,       3,       1, 333333,  "rounded down" },
                { 0,       0,       1000000, 1000000, 1, 1000000, "stalled all the time" },
                { 0,       0,       1500000, 1000000, 1, 1000000, "more stall than wall time: clamped" },
                { 0,       0,       UINT64_MAX, 1,    1, 1000000, "huge delta: no overflow, clamped" },
                { 0,       0,       UINT64_MAX / 2, UINT64_MAX, 1, 499999, "huge interval: no overflow, rounded down" },
                { 500,     1000,    400,     2000,    0, 0,       "total went backwards" },
                { 0,       1000,    500,     1000,    0, 0,       "time did not advance" },
                { 0,       2000,    500,     1000,    0, 0,       "time went backwards" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t rate = 4242;

                print_message("# %s\n", cases[i].why);
                assert_int_equal(bw_psi_rate(cases[i].prev_total, cases[i].prev_now, cases[i].total, cases[i].now,
                                             &rate),
                                 cases[i].r);
                assert_int_equal(rate, cases[i].r > 0 ? cases[i].rate : 4242);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fixtures),
                cmocka_unit_test(test_good),
                cmocka_unit_test(test_bad),
                cmocka_unit_test(test_fuzz),
                cmocka_unit_test(test_not_nul_terminated),
                cmocka_unit_test(test_rate),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
