/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's log (src/daemon/log.c): log_setup() takes the repeat
 * filter's memory at the start, so that the first warning held back for
 * repeats, hours in, allocates nothing (the churn soak read the 96 KiB it
 * took then as the heap growing); the filter then holds a repeat back.
 * No root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/util/repeat.h"
#include "log.h"

/* As bwgovd's metrics count it (manager-governor.c): the sanitizer
 * allocator's bytes in use under AddressSanitizer, malloc's otherwise. */
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static size_t heap_in_use(void) {
        struct mallinfo2 mi;

        if (__sanitizer_get_current_allocated_bytes)
                return __sanitizer_get_current_allocated_bytes();
        mi = mallinfo2();
        return mi.uordblks + mi.hblkhd;
}

static char path[] = "/tmp/bwgov-test-log-XXXXXX";

/* The lines to a file of the test's own, read back below. */
static int setup(void **state) {
        int fd = mkstemp(path);

        if (fd < 0)
                return -1;
        (void) close(fd);
        if (!freopen(path, "w", stderr))
                return -1;
        /* Unbuffered, as stderr is: else its buffer is allocated by the
         * first line, inside the count. */
        return setvbuf(stderr, NULL, _IONBF, 0);
}

static int teardown(void **state) {
        (void) unlink(path);
        return 0;
}

/* How many lines of the file hold text. */
static unsigned lines_with(const char *text) {
        char line[4096];
        unsigned n = 0;
        FILE *f = fopen(path, "re");

        if (!f)
                return 0;
        while (fgets(line, sizeof line, f))
                n += strstr(line, text) != NULL;
        fclose(f);
        return n;
}

static void test_filter_memory_at_start(void **state) {
        size_t before, after;
        void *p;

        /* The count sees an allocation of the table's size (else the
         * comparison below would prove nothing). */
        before = heap_in_use();
        p = malloc(BW_REPEAT_SLOTS * sizeof(struct bw_repeat_slot));
        assert_non_null(p);
        assert_true(heap_in_use() >= before + BW_REPEAT_SLOTS * sizeof(struct bw_repeat_slot));
        free(p);

        log_setup();
        before = heap_in_use();
        (void) log_limited(LOG_WARNING, 0, "app.slice: cannot count the run-queue wait of cgroup app.slice");
        (void) log_limited(LOG_WARNING, 0, "app.slice: cannot count the run-queue wait of cgroup app.slice");
        log_repeat_begin();
        log_error("b.slice: cannot open cgroup b.slice");
        log_repeat_end();
        after = heap_in_use();
        assert_int_equal(after, before);

        /* The filter in use: the repeat held back, the other line out. */
        fflush(stderr);
        assert_int_equal(lines_with("cannot count the run-queue wait of cgroup app.slice"), 1);
        assert_int_equal(lines_with("cannot open cgroup b.slice"), 1);
}

int main(void) {
        size_t before = heap_in_use();
        void *volatile probe = malloc(64 * 1024);       /* volatile: not optimized away */
        bool counted = probe && heap_in_use() >= before + 64 * 1024;

        free(probe);
        if (!counted) {
                /* valgrind's malloc, for one, is not the one mallinfo2() counts. */
                printf("1..0 # SKIP this allocator's bytes in use are not counted (valgrind?)\n");
                return 0;
        }

        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_filter_memory_at_start),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
