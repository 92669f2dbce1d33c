/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/cgroup/cgtree.h"

static void collect(void *owner, void *userdata) {
        char *out = userdata;

        strcat(out, owner);
        strcat(out, ";");
}

static void test_relations(void **unused) {
        static const char *paths[] = { "web.slice", "web.slice/a.service", "web.slice/a.service/x",
                                       "web.slice-2", "web.slice.d", "web", "webb/c", "other.slice/web.slice/d" };
        struct bw_cgtree t = {0};
        char out[512];

        for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++)
                assert_int_equal(bw_cgtree_add(&t, paths[i], (void *) paths[i]), 0);
        assert_int_equal(bw_cgtree_add(&t, "web.slice", NULL), -EEXIST);
        assert_ptr_equal(bw_cgtree_find(&t, "web.slice-2"), paths[3]);
        assert_null(bw_cgtree_find(&t, "web.slic"));
        assert_null(bw_cgtree_find(&t, "web.slice/"));

        out[0] = '\0';
        assert_int_equal(bw_cgtree_foreach_ancestor(&t, "web.slice/a.service/x/y", collect, out), 3);
        assert_string_equal(out, "web.slice/a.service/x;web.slice/a.service;web.slice;");
        /* A name that starts like a governed one is not below it. */
        assert_int_equal(bw_cgtree_foreach_ancestor(&t, "web.slice-2/z", NULL, NULL), 1);
        assert_int_equal(bw_cgtree_foreach_ancestor(&t, "webb/c", NULL, NULL), 0);
        assert_int_equal(bw_cgtree_foreach_ancestor(&t, "web.slice", NULL, NULL), 0);

        out[0] = '\0';
        assert_int_equal(bw_cgtree_foreach_descendant(&t, "web.slice", collect, out), 2);
        assert_string_equal(out, "web.slice/a.service;web.slice/a.service/x;");
        assert_int_equal(bw_cgtree_foreach_descendant(&t, "web", NULL, NULL), 0);
        assert_int_equal(bw_cgtree_foreach_descendant(&t, "", NULL, NULL), 0);     /* the root: nobody's */
        assert_int_equal(bw_cgtree_foreach_descendant(&t, "other.slice", NULL, NULL), 1);
        bw_cgtree_done(&t);

        /* Built from nothing (no unit has a cgroup yet): empty, and usable. */
        assert_int_equal(bw_cgtree_build(&t, NULL, 0), 0);
        assert_int_equal(bw_cgtree_foreach_ancestor(&t, "a/b", NULL, NULL), 0);
        assert_int_equal(bw_cgtree_add(&t, "a", (void *) "a"), 0);
        assert_int_equal(bw_cgtree_foreach_ancestor(&t, "a/b", NULL, NULL), 1);
        bw_cgtree_done(&t);
}

/* The brute force: b strictly below a by whole components. */
static bool below(const char *b, const char *a) {
        size_t n = strlen(a);

        return n > 0 && strncmp(b, a, n) == 0 && b[n] == '/';
}

/* Random trees of names that sort around the slash ('-', '.', '0'), built
 * once at a time (build) and one by one (add): every path's ancestors and
 * descendants are what the brute force finds. */
static void test_random_against_brute_force(void **unused) {
        static const char *names[] = { "a", "a-b", "a.c", "a0", "ab", "b" };
        char paths[200][64];
        struct bw_cgtree_node nodes[200];
        unsigned seed = 12345;

        for (int round = 0; round < 200; round++) {
                struct bw_cgtree t = {0}, built = {0};
                size_t n = 0;

                for (size_t i = 0; i < 60; i++) {
                        char p[64] = "";
                        int depth = 1 + (int) (rand_r(&seed) % 4);
                        bool dup = false;

                        for (int d = 0; d < depth; d++) {
                                if (d > 0)
                                        strcat(p, "/");
                                strcat(p, names[rand_r(&seed) % (sizeof(names) / sizeof(*names))]);
                        }
                        for (size_t k = 0; k < n; k++)
                                dup |= strcmp(paths[k], p) == 0;
                        if (dup) {
                                assert_int_equal(bw_cgtree_add(&t, p, NULL), -EEXIST);
                                continue;
                        }
                        strcpy(paths[n], p);
                        assert_int_equal(bw_cgtree_add(&t, paths[n], paths[n]), 0);
                        nodes[n] = (struct bw_cgtree_node) { paths[n], paths[n] };
                        n++;
                }
                assert_int_equal(bw_cgtree_build(&built, nodes, n), 0);
                for (size_t i = 0; i < n; i++) {
                        size_t anc = 0, desc = 0;

                        for (size_t k = 0; k < n; k++) {
                                anc += below(paths[i], paths[k]);
                                desc += below(paths[k], paths[i]);
                        }
                        assert_int_equal(bw_cgtree_foreach_ancestor(&t, paths[i], NULL, NULL), anc);
                        assert_int_equal(bw_cgtree_foreach_descendant(&t, paths[i], NULL, NULL), desc);
                        assert_int_equal(bw_cgtree_foreach_ancestor(&built, paths[i], NULL, NULL), anc);
                        assert_int_equal(bw_cgtree_foreach_descendant(&built, paths[i], NULL, NULL), desc);
                        assert_ptr_equal(bw_cgtree_find(&t, paths[i]), paths[i]);
                }
                bw_cgtree_done(&t);
                bw_cgtree_done(&built);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_relations),
                cmocka_unit_test(test_random_against_brute_force),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
