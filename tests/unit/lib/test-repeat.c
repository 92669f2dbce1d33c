/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bw_repeat_check(): a repeated message passes once, then once per window
 * with the count held back; a new text passes at once; the table's limits.
 * Injected clock. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>

#include "bwgov/util/macro.h"
#include "bwgov/util/repeat.h"

#define MIN (60ULL * 1000000ULL)
#define WINDOW (10 * MIN)

/* A failure on every tick (1 s) for half an hour: the first line, then one
 * line per 10 minutes saying how many were held back. */
static void test_every_tick(void **state) {
        struct bw_repeat r = { 0 };
        uint64_t key = bw_repeat_key("app.slice: cannot open cgroup app.slice: Operation not supported");
        unsigned passed = 0;
        uint32_t held, held_total = 0;

        for (uint64_t t = 0; t <= 30 * MIN; t += 1000000) {
                if (bw_repeat_check(&r, key, t, WINDOW, &held)) {
                        assert_int_equal(t % WINDOW, 0);
                        assert_int_equal(held, t == 0 ? 0 : WINDOW / 1000000 - 1);
                        held_total += held;
                        passed++;
                } else
                        assert_int_equal(held, 0);
        }
        assert_int_equal(passed, 4);            /* 0, 10, 20 and 30 min */
        assert_int_equal(held_total, 30 * 60 - 3);
        bw_repeat_done(&r);
}

/* A changed text is a new message: it passes at once, and the old one,
 * coming back within its window, is still held. */
static void test_change(void **state) {
        struct bw_repeat r = { 0 };
        uint64_t a = bw_repeat_key("Failed to save /var/lib/bwgov/state.json: No such file or directory");
        uint64_t b = bw_repeat_key("Failed to save /var/lib/bwgov/state.json: Read-only file system");
        uint32_t held;

        assert_true(a != b);
        assert_true(bw_repeat_check(&r, a, 0, WINDOW, &held));
        assert_false(bw_repeat_check(&r, a, 1000, WINDOW, &held));
        assert_true(bw_repeat_check(&r, b, 2000, WINDOW, &held));
        assert_int_equal(held, 0);
        assert_false(bw_repeat_check(&r, b, 3000, WINDOW, &held));
        assert_false(bw_repeat_check(&r, a, 4000, WINDOW, &held));
        assert_true(bw_repeat_check(&r, a, WINDOW, WINDOW, &held));
        assert_int_equal(held, 2);
        /* A clock that went back does not hold a message for ever. */
        assert_true(bw_repeat_check(&r, b, 1000, WINDOW, &held));
        assert_int_equal(held, 1);
        bw_repeat_done(&r);
}

/* Many distinct messages (one per unit): a thousand of them each pass
 * once, then are held, none forgotten. */
static void test_many(void **state) {
        struct bw_repeat r = { 0 };
        char text[64];
        uint32_t held;
        unsigned passed = 0;

        for (unsigned round = 0; round < 3; round++)
                for (unsigned i = 0; i < 1000; i++) {
                        snprintf(text, sizeof text, "u%05u.slice: cannot open cgroup", i);
                        passed += bw_repeat_check(&r, bw_repeat_key(text), round * 1000000 + i, WINDOW, &held);
                }
        assert_int_equal(passed, 1000);
        /* Key 0 is a key like any other. */
        assert_true(bw_repeat_check(&r, 0, 0, WINDOW, &held));
        assert_false(bw_repeat_check(&r, 0, 1, WINDOW, &held));
        bw_repeat_done(&r);
        bw_repeat_done(&r);
}

/* A full set evicts the key let through longest ago, which then passes
 * again when it comes back. */
static void test_eviction(void **state) {
        struct bw_repeat r = { 0 };
        uint64_t keys[BW_REPEAT_WAYS + 1];
        uint32_t held;
        unsigned n = 0;

        /* Keys of one set: the first ones fill it, the last evicts. */
        for (uint64_t k = 1; n <= BW_REPEAT_WAYS; k++)
                if (bw_repeat_set_of(k) == bw_repeat_set_of(1))
                        keys[n++] = k;
        for (unsigned i = 0; i <= BW_REPEAT_WAYS; i++)
                assert_true(bw_repeat_check(&r, keys[i], i, WINDOW, &held));
        for (unsigned i = 2; i <= BW_REPEAT_WAYS; i++)
                assert_false(bw_repeat_check(&r, keys[i], 100, WINDOW, &held));
        assert_true(bw_repeat_check(&r, keys[0], 100, WINDOW, &held));   /* evicted, back */
        bw_repeat_done(&r);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_tick),
                cmocka_unit_test(test_change),
                cmocka_unit_test(test_many),
                cmocka_unit_test(test_eviction),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
