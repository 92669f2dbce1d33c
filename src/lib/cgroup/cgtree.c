/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The governed cgroups' paths, sorted: ancestors and descendants of one
 * (contracts in include/bwgov/cgroup/cgtree.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/cgroup/cgtree.h"
#include "bwgov/util/macro.h"

static int node_cmp(const void *a, const void *b) {
        return strcmp(((const struct bw_cgtree_node *) a)->path, ((const struct bw_cgtree_node *) b)->path);
}

/* The first index whose path's first len bytes are not below key's
 * (truncating keeps the order). */
static size_t lower_bound(const struct bw_cgtree *t, const char *key, size_t len) {
        size_t lo = 0, hi = t->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (strncmp(t->v[mid].path, key, len) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* Where the node for path's first len bytes is, or would go. */
static size_t find_index(const struct bw_cgtree *t, const char *path, size_t len, bool *ret_found) {
        size_t lo = 0, hi = t->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const char *p = t->v[mid].path;
                int c = strncmp(p, path, len);

                if (c == 0 && p[len] != '\0')
                        c = 1;          /* longer: after */
                if (c == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *ret_found = false;
        return lo;
}

static int reserve(struct bw_cgtree *t, size_t n) {
        struct bw_cgtree_node *v;
        size_t a;

        if (n <= t->allocated)
                return 0;
        a = t->allocated;
        while (a < n)
                a = grow_capacity(a, 16);
        v = reallocarray(t->v, a, sizeof(*v));
        if (!v)
                return -ENOMEM;
        t->v = v;
        t->allocated = a;
        return 0;
}

int bw_cgtree_build(struct bw_cgtree *t, const struct bw_cgtree_node *nodes, size_t n) {
        t->n = 0;
        if (reserve(t, n) < 0)
                return -ENOMEM;
        if (n == 0)
                return 0;
        memcpy(t->v, nodes, n * sizeof(*nodes));
        t->n = n;
        qsort(t->v, n, sizeof(*t->v), node_cmp);
        return 0;
}

int bw_cgtree_add(struct bw_cgtree *t, const char *path, void *owner) {
        bool found;
        size_t i = find_index(t, path, strlen(path), &found);

        if (found)
                return -EEXIST;
        if (reserve(t, t->n + 1) < 0)
                return -ENOMEM;
        memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
        t->v[i] = (struct bw_cgtree_node) { .path = path, .owner = owner };
        t->n++;
        return 0;
}

void *bw_cgtree_find(const struct bw_cgtree *t, const char *path) {
        bool found;
        size_t i = find_index(t, path, strlen(path), &found);

        return found ? t->v[i].owner : NULL;
}

size_t bw_cgtree_foreach_ancestor(const struct bw_cgtree *t, const char *path, bw_cgtree_fn fn, void *userdata) {
        size_t n = 0, len = strlen(path);

        /* Each prefix that ends before a slash, the longest first. */
        while (len > 0) {
                bool found;
                size_t i;

                while (len > 0 && path[len - 1] != '/')
                        len--;
                if (len == 0)
                        break;
                len--;                  /* the slash */
                i = find_index(t, path, len, &found);
                if (found) {
                        if (fn)
                                fn(t->v[i].owner, userdata);
                        n++;
                }
        }
        return n;
}

size_t bw_cgtree_foreach_descendant(const struct bw_cgtree *t, const char *path, bw_cgtree_fn fn, void *userdata) {
        size_t n = 0, len = strlen(path);

        if (len == 0)
                return 0;               /* the root: nobody's ancestor here */
        /* Every path below starts with path: they are in the run of those
         * that do, among the ones followed by a '-' or a '.' (which sort
         * before the slash). */
        for (size_t i = lower_bound(t, path, len); i < t->n && strncmp(t->v[i].path, path, len) == 0; i++)
                if (t->v[i].path[len] == '/') {
                        if (fn)
                                fn(t->v[i].owner, userdata);
                        n++;
                }
        return n;
}

void bw_cgtree_done(struct bw_cgtree *t) {
        t->v = mfree(t->v);
        t->n = t->allocated = 0;
}
