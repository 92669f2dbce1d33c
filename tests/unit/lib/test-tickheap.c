/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/util/macro.h"
#include "bwgov/util/tickheap.h"

/* The heap property, every entry's slot and its due time kept next to it,
 * checked whole. */
static void check_heap(const struct bw_tickheap *h) {
        for (size_t i = 0; i < h->n; i++) {
                assert_int_equal(h->v[i].e->slot, i + 1);
                assert_int_equal(h->v[i].due_usec, h->v[i].e->due_usec);
                if (i > 0)
                        assert_true(h->v[(i - 1) / BW_TICKHEAP_ARITY].due_usec <= h->v[i].due_usec);
        }
}

static void test_order(void **state) {
        static const uint64_t due[] = { 50, 10, 40, 10, 30, 20, 60, 0 };
        struct bw_tick_entry e[ELEMENTSOF(due)] = {{0}};
        struct bw_tickheap h = {0};
        uint64_t last = 0;

        for (size_t i = 0; i < ELEMENTSOF(due); i++) {
                assert_int_equal(bw_tickheap_put(&h, &e[i], due[i]), 0);
                check_heap(&h);
        }
        assert_int_equal(bw_tickheap_peek(&h)->due_usec, 0);
        /* Only what is due by 30 comes out. */
        for (size_t k = 0; k < 5; k++) {
                struct bw_tick_entry *x = bw_tickheap_pop_due(&h, 30);

                assert_non_null(x);
                assert_true(x->due_usec >= last && x->due_usec <= 30);
                assert_false(bw_tick_entry_queued(x));
                last = x->due_usec;
                check_heap(&h);
        }
        assert_null(bw_tickheap_pop_due(&h, 30));
        assert_int_equal(h.n, 3);
        bw_tickheap_done(&h);
        assert_false(bw_tick_entry_queued(&e[0]));
}

static void test_move_remove(void **state) {
        struct bw_tick_entry e[700] = {{0}};
        struct bw_tickheap h = {0};
        unsigned seed = 7;

        for (size_t i = 0; i < ELEMENTSOF(e); i++)
                assert_int_equal(bw_tickheap_put(&h, &e[i], (uint64_t) rand_r(&seed) % 1000), 0);
        check_heap(&h);
        /* Move entries both ways, remove some, remove one twice. */
        for (size_t i = 0; i < ELEMENTSOF(e); i += 3) {
                assert_int_equal(bw_tickheap_put(&h, &e[i], (uint64_t) rand_r(&seed) % 1000), 0);
                check_heap(&h);
        }
        for (size_t i = 1; i < ELEMENTSOF(e); i += 4) {
                bw_tickheap_remove(&h, &e[i]);
                bw_tickheap_remove(&h, &e[i]);
                assert_false(bw_tick_entry_queued(&e[i]));
                check_heap(&h);
        }
        assert_int_equal(h.n, ELEMENTSOF(e) - ELEMENTSOF(e) / 4);
        /* Everything comes out in order, each once. */
        for (uint64_t last = 0, k = 0;; k++) {
                struct bw_tick_entry *x = bw_tickheap_pop_due(&h, UINT64_MAX);

                if (!x) {
                        assert_int_equal(k, ELEMENTSOF(e) - ELEMENTSOF(e) / 4);
                        break;
                }
                assert_true(x->due_usec >= last);
                last = x->due_usec;
        }
        bw_tickheap_done(&h);
}

static void test_remove_last_and_only(void **state) {
        struct bw_tick_entry a = {0}, b = {0};
        struct bw_tickheap h = {0};

        assert_null(bw_tickheap_peek(&h));
        assert_null(bw_tickheap_pop_due(&h, UINT64_MAX));
        assert_int_equal(bw_tickheap_put(&h, &a, 5), 0);
        bw_tickheap_remove(&h, &a);
        assert_int_equal(h.n, 0);
        assert_int_equal(bw_tickheap_put(&h, &a, 5), 0);
        assert_int_equal(bw_tickheap_put(&h, &b, 1), 0);
        bw_tickheap_remove(&h, &a);             /* the last slot */
        check_heap(&h);
        assert_ptr_equal(bw_tickheap_peek(&h), &b);
        bw_tickheap_done(&h);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_order),
                cmocka_unit_test(test_move_remove),
                cmocka_unit_test(test_remove_last_and_only),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
