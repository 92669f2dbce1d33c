/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bw_read_full_at(), bw_read_small_at(), bw_write_at() and
 * bw_open_regular_at() on files in a private temporary directory (no root). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"

struct dir {
        char path[64];
        int fd;
};

static int dir_setup(void **state) {
        struct dir *d = calloc(1, sizeof *d);

        assert_non_null(d);
        strcpy(d->path, "/tmp/bwgov-test-fileio-XXXXXX");
        assert_non_null(mkdtemp(d->path));
        d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(d->fd >= 0);
        *state = d;
        return 0;
}

static int dir_teardown(void **state) {
        struct dir *d = *state;
        const char *names[] = { "f", "empty", "big", "link", "fifo", "dir" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (unlinkat(d->fd, names[i], 0) < 0 && errno == EISDIR)
                        (void) unlinkat(d->fd, names[i], AT_REMOVEDIR);
        close(d->fd);
        assert_int_equal(rmdir(d->path), 0);
        free(d);
        return 0;
}

static void put(int dirfd, const char *name, const char *data, size_t len) {
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t) len);
        close(fd);
}

static void test_read_full(void **state) {
        struct dir *d = *state;
        _cleanup_free_ char *big = NULL;
        char *buf = NULL;
        size_t len = 0;

        put(d->fd, "f", "nr_periods 5\n", 13);
        assert_int_equal(bw_read_full_at(d->fd, "f", 0, 1024, &buf, &len), 0);
        assert_int_equal(len, 13);
        assert_string_equal(buf, "nr_periods 5\n");
        free(buf);

        /* exactly MAX bytes fit, one more does not */
        assert_int_equal(bw_read_full_at(d->fd, "f", 0, 13, &buf, &len), 0);
        assert_int_equal(len, 13);
        free(buf);
        buf = NULL;
        assert_int_equal(bw_read_full_at(d->fd, "f", 0, 12, &buf, &len), -EFBIG);
        assert_null(buf);

        put(d->fd, "empty", "", 0);
        assert_int_equal(bw_read_full_at(d->fd, "empty", 0, 0, &buf, NULL), 0);
        assert_string_equal(buf, "");
        free(buf);

        /* larger than the first buffer: the growth path */
        big = malloc(20000);
        assert_non_null(big);
        for (size_t i = 0; i < 20000; i++)
                big[i] = (char) ('a' + i % 26);
        put(d->fd, "big", big, 20000);
        assert_int_equal(bw_read_full_at(d->fd, "big", 0, 1 << 20, &buf, &len), 0);
        assert_int_equal(len, 20000);
        assert_memory_equal(buf, big, 20000);
        assert_int_equal(buf[20000], '\0');
        free(buf);
        buf = NULL;
        assert_int_equal(bw_read_full_at(d->fd, "big", 0, 19999, &buf, &len), -EFBIG);

        assert_int_equal(bw_read_full_at(d->fd, "missing", 0, 10, &buf, &len), -ENOENT);
}

static void test_read_small(void **state) {
        struct dir *d = *state;
        char buf[8];

        put(d->fd, "f", "max 10\n", 7);
        assert_int_equal(bw_read_small_at(d->fd, "f", 0, buf, sizeof buf), 7);
        assert_string_equal(buf, "max 10\n");
        /* one byte too many for the buffer and its NUL */
        assert_int_equal(bw_read_small_at(d->fd, "f", 0, buf, 7), -EFBIG);
        assert_int_equal(bw_read_small_at(d->fd, "f", 0, buf, 0), -EINVAL);
        assert_int_equal(bw_read_small_at(d->fd, "missing", 0, buf, sizeof buf), -ENOENT);

        /* O_NOFOLLOW is passed through */
        assert_int_equal(symlinkat("f", d->fd, "link"), 0);
        assert_int_equal(bw_read_small_at(d->fd, "link", 0, buf, sizeof buf), 7);
        assert_int_equal(bw_read_small_at(d->fd, "link", O_NOFOLLOW, buf, sizeof buf), -ELOOP);
}

static void test_write(void **state) {
        struct dir *d = *state;
        char buf[16];

        put(d->fd, "f", "old value\n", 10);
        /* no O_TRUNC: like a cgroup file, the caller's bytes overwrite in place */
        assert_int_equal(bw_write_at(d->fd, "f", 0, "new", 3), 0);
        assert_int_equal(bw_read_small_at(d->fd, "f", 0, buf, sizeof buf), 10);
        assert_string_equal(buf, "new value\n");
        /* never creates */
        assert_int_equal(bw_write_at(d->fd, "missing", 0, "x", 1), -ENOENT);
}

static void on_alarm(int sig) {
        static const char msg[] = "bw_open_regular_at() blocked for 5 s\n";

        (void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(1);
}

/* bw_open_regular_at() never blocks and opens regular files only (issue
 * 17, finding 2: a FIFO at the state file's name hung bwgovd at start). */
static void test_open_regular(void **state) {
        struct sigaction sa = { .sa_handler = on_alarm };
        struct dir *d = *state;
        char *buf = NULL;
        size_t len;
        int fd;

        assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
        alarm(5);
        put(d->fd, "f", "content", 7);
        fd = bw_open_regular_at(d->fd, "f", O_NOFOLLOW);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(bw_read_regular_at(d->fd, "f", 0, 100, &buf, &len), 0);
        assert_string_equal(buf, "content");
        buf = mfree(buf);

        assert_int_equal(mkfifoat(d->fd, "fifo", 0600), 0);
        assert_int_equal(bw_open_regular_at(d->fd, "fifo", 0), -EBADFD);
        assert_int_equal(bw_read_regular_at(d->fd, "fifo", O_NOFOLLOW, 100, &buf, &len), -EBADFD);
        assert_null(buf);
        assert_int_equal(mkdirat(d->fd, "dir", 0700), 0);
        assert_int_equal(bw_open_regular_at(d->fd, "dir", 0), -EISDIR);
        assert_int_equal(bw_open_regular_at(d->fd, "missing", 0), -ENOENT);
        /* The null device is not a regular file either. */
        assert_int_equal(bw_open_regular_at(AT_FDCWD, "/dev/null", 0), -EBADFD);
        /* A symlink: followed to a regular file, refused under O_NOFOLLOW,
         * and its target's type counts. */
        assert_int_equal(symlinkat("fifo", d->fd, "link"), 0);
        assert_int_equal(bw_open_regular_at(d->fd, "link", 0), -EBADFD);
        assert_int_equal(bw_open_regular_at(d->fd, "link", O_NOFOLLOW), -ELOOP);
        alarm(0);

        assert_string_equal(bw_file_type_name(S_IFIFO | 0600), "a FIFO");
        assert_string_equal(bw_file_type_name(S_IFDIR | 0755), "a directory");
        assert_string_equal(bw_file_type_name(S_IFSOCK), "a socket");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_read_full, dir_setup, dir_teardown),
                cmocka_unit_test_setup_teardown(test_read_small, dir_setup, dir_teardown),
                cmocka_unit_test_setup_teardown(test_write, dir_setup, dir_teardown),
                cmocka_unit_test_setup_teardown(test_open_regular, dir_setup, dir_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
