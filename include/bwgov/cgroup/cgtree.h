/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Which governed cgroups are above and below one another: the governed
 * cgroups' paths (relative to the hierarchy's root, no leading slash, ""
 * for the root itself) kept sorted, so that a path's ancestors are a
 * binary search each and its descendants one contiguous run. At ten
 * thousand cgroups adopted in batches, each new one is placed in log n
 * instead of every relation being worked out again per batch.
 *
 * A node names its path (not copied: it must stay valid while the node is
 * in the tree) and an owner. "Below" means strictly below by whole path
 * components ("a/b" is below "a", "a-b" and "a.b" are not); the root ("")
 * is nobody's ancestor here (every cgroup is below it, which says
 * nothing). Not thread-safe. */

#include <stdbool.h>
#include <stddef.h>

struct bw_cgtree_node {
        const char *path;
        void *owner;
};

struct bw_cgtree {
        struct bw_cgtree_node *v;       /* sorted by path (strcmp) */
        size_t n, allocated;
};

/* The tree holds exactly nodes[0..n) (copied, then sorted). Returns 0 or
 * -ENOMEM (the tree is then empty). */
int bw_cgtree_build(struct bw_cgtree *t, const struct bw_cgtree_node *nodes, size_t n);

/* Add one node. Returns 0, -EEXIST when its path is in the tree already,
 * -ENOMEM. */
int bw_cgtree_add(struct bw_cgtree *t, const char *path, void *owner);

/* The owner of the node at exactly path, NULL when none. */
void *bw_cgtree_find(const struct bw_cgtree *t, const char *path);

/* fn(owner, userdata) for every node strictly above path, the nearest
 * first; for every node strictly below it, in path order. Each returns how
 * many it found (fn may be NULL, to count). */
typedef void (*bw_cgtree_fn)(void *owner, void *userdata);
size_t bw_cgtree_foreach_ancestor(const struct bw_cgtree *t, const char *path, bw_cgtree_fn fn, void *userdata);
size_t bw_cgtree_foreach_descendant(const struct bw_cgtree *t, const char *path, bw_cgtree_fn fn, void *userdata);

void bw_cgtree_done(struct bw_cgtree *t);
