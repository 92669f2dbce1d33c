/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The quota watch (src/daemon/source/quotawatch.c) on files in a temporary
 * directory: a write is told (an identical one too), a file not written is
 * not, a removed file ends its watch with its flag set, a removed watch
 * tells nothing more, the same file twice is refused, and many watches
 * with writes among them find exactly the ones written. inotify reports a
 * write(2) the same on tmpfs and cgroupfs (the VFS does). No root. */
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
#include <unistd.h>

#include "source/quotawatch.h"

#define MANY 3000

struct fixture {
        char dir[64];
        QuotaWatch *w;
};

static void path_of(const struct fixture *f, unsigned i, char *buf, size_t size) {
        (void) snprintf(buf, size, "%s/cpu.max.%u", f->dir, i);
}

static void write_file(const struct fixture *f, unsigned i, const char *text) {
        char path[128];
        int fd;

        path_of(f, i, path, sizeof(path));
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

static void watch(struct fixture *f, unsigned i, struct quota_watch *slot) {
        char path[128];

        path_of(f, i, path, sizeof(path));
        *slot = (struct quota_watch) { .wd = -1 };
        assert_int_equal(quotawatch_add(f->w, path, slot), 0);
        assert_true(slot->wd >= 0);
        assert_true(slot->written);     /* the first look reads the file */
        slot->written = false;
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        if (!f)
                return -1;
        strcpy(f->dir, "/tmp/bwgov-test-quotawatch-XXXXXX");
        if (!mkdtemp(f->dir) || quotawatch_new(&f->w) < 0)
                return -1;
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;
        char path[128];

        quotawatch_free(f->w);
        for (unsigned i = 0; i < MANY; i++) {
                path_of(f, i, path, sizeof(path));
                (void) unlink(path);
        }
        (void) rmdir(f->dir);
        free(f);
        return 0;
}

static void test_write_told(void **state) {
        struct fixture *f = *state;
        struct quota_watch a, b;

        write_file(f, 0, "max 100000\n");
        write_file(f, 1, "50000 100000\n");
        watch(f, 0, &a);
        watch(f, 1, &b);
        quotawatch_drain(f->w);
        assert_false(a.written);
        assert_false(b.written);

        write_file(f, 0, "max 100000\n");       /* identical: told all the same */
        quotawatch_drain(f->w);
        assert_true(a.written);
        assert_false(b.written);

        a.written = false;
        quotawatch_drain(f->w);                 /* nothing new */
        assert_false(a.written);
        assert_int_equal(quotawatch_size(f->w), 2);

        quotawatch_remove(f->w, &a);
        assert_int_equal(a.wd, -1);
        write_file(f, 0, "20000 100000\n");
        quotawatch_drain(f->w);
        assert_false(a.written);
        assert_int_equal(quotawatch_size(f->w), 1);
        quotawatch_remove(f->w, &b);
        quotawatch_remove(f->w, &b);            /* twice: nothing */
        assert_int_equal(quotawatch_size(f->w), 0);
}

static void test_removed_file(void **state) {
        struct fixture *f = *state;
        struct quota_watch a;
        char path[128];

        write_file(f, 2, "max 100000\n");
        watch(f, 2, &a);
        path_of(f, 2, path, sizeof(path));
        assert_int_equal(unlink(path), 0);
        quotawatch_drain(f->w);
        assert_true(a.written);                 /* read it: it is gone */
        assert_int_equal(a.wd, -1);
        assert_int_equal(quotawatch_size(f->w), 0);
        quotawatch_remove(f->w, &a);            /* nothing left to remove */
}

static void test_same_file_twice(void **state) {
        struct fixture *f = *state;
        struct quota_watch a, b = { .wd = -1 };
        char path[128];

        write_file(f, 3, "max 100000\n");
        watch(f, 3, &a);
        path_of(f, 3, path, sizeof(path));
        assert_int_equal(quotawatch_add(f->w, path, &b), -EEXIST);
        assert_int_equal(b.wd, -1);
        assert_true(b.written);
        write_file(f, 3, "1000 100000\n");
        quotawatch_drain(f->w);
        assert_true(a.written);
        quotawatch_remove(f->w, &a);
        assert_int_equal(quotawatch_add(f->w, "/tmp/bwgov-test-quotawatch-none/cpu.max", &b), -ENOENT);
}

static void test_many(void **state) {
        struct fixture *f = *state;
        struct quota_watch *s = calloc(MANY, sizeof(*s));

        assert_non_null(s);
        for (unsigned i = 0; i < MANY; i++) {
                write_file(f, i, "max 100000\n");
                watch(f, i, &s[i]);
        }
        /* Every seventh written, every eleventh watch gone first: more
         * events than one read takes. */
        for (unsigned i = 0; i < MANY; i += 11)
                quotawatch_remove(f->w, &s[i]);
        for (unsigned i = 0; i < MANY; i += 7)
                write_file(f, i, "30000 100000\n");
        quotawatch_drain(f->w);
        for (unsigned i = 0; i < MANY; i++)
                assert_int_equal(s[i].written, i % 7 == 0 && i % 11 != 0);
        for (unsigned i = 0; i < MANY; i++)
                quotawatch_remove(f->w, &s[i]);
        assert_int_equal(quotawatch_size(f->w), 0);
        free(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_write_told, setup, teardown),
                cmocka_unit_test_setup_teardown(test_removed_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_same_file_twice, setup, teardown),
                cmocka_unit_test_setup_teardown(test_many, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
