/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The due-time heap (see tickheap.h). */
#include <errno.h>
#include <stdlib.h>

#include "bwgov/util/macro.h"
#include "bwgov/util/tickheap.h"

#define D BW_TICKHEAP_ARITY

static void place(struct bw_tickheap *h, size_t i, struct bw_tickheap_node x) {
        h->v[i] = x;
        x.e->slot = i + 1;
}

static void sift_up(struct bw_tickheap *h, size_t i) {
        struct bw_tickheap_node x = h->v[i];

        while (i > 0) {
                size_t parent = (i - 1) / D;

                if (h->v[parent].due_usec <= x.due_usec)
                        break;
                place(h, i, h->v[parent]);
                i = parent;
        }
        place(h, i, x);
}

static void sift_down(struct bw_tickheap *h, size_t i) {
        struct bw_tickheap_node x = h->v[i];

        for (;;) {
                size_t first = D * i + 1, last, c;

                if (first >= h->n)
                        break;
                last = first + D < h->n ? first + D : h->n;
                c = first;
                for (size_t k = first + 1; k < last; k++)
                        if (h->v[k].due_usec < h->v[c].due_usec)
                                c = k;
                if (x.due_usec <= h->v[c].due_usec)
                        break;
                place(h, i, h->v[c]);
                i = c;
        }
        place(h, i, x);
}

int bw_tickheap_put(struct bw_tickheap *h, struct bw_tick_entry *e, uint64_t due_usec) {
        if (bw_tick_entry_queued(e)) {
                size_t i = e->slot - 1;
                uint64_t old = e->due_usec;

                e->due_usec = h->v[i].due_usec = due_usec;
                if (due_usec < old)
                        sift_up(h, i);
                else if (due_usec > old)
                        sift_down(h, i);
                return 0;
        }
        if (h->n == h->allocated) {
                size_t n = grow_capacity(h->allocated, 64);
                struct bw_tickheap_node *v = reallocarray(h->v, n, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                h->v = v;
                h->allocated = n;
        }
        e->due_usec = due_usec;
        place(h, h->n++, (struct bw_tickheap_node) { due_usec, e });
        sift_up(h, h->n - 1);
        return 0;
}

void bw_tickheap_remove(struct bw_tickheap *h, struct bw_tick_entry *e) {
        struct bw_tickheap_node last;
        size_t i;

        if (!bw_tick_entry_queued(e))
                return;
        i = e->slot - 1;
        e->slot = 0;
        last = h->v[--h->n];
        if (i == h->n)
                return;
        place(h, i, last);
        if (i > 0 && h->v[(i - 1) / D].due_usec > last.due_usec)
                sift_up(h, i);
        else
                sift_down(h, i);
}

struct bw_tick_entry *bw_tickheap_pop_due(struct bw_tickheap *h, uint64_t until_usec) {
        struct bw_tick_entry *e;

        if (h->n == 0 || h->v[0].due_usec > until_usec)
                return NULL;
        e = h->v[0].e;
        bw_tickheap_remove(h, e);
        return e;
}

void bw_tickheap_done(struct bw_tickheap *h) {
        for (size_t i = 0; i < h->n; i++)
                h->v[i].e->slot = 0;
        free(h->v);
        *h = (struct bw_tickheap) {0};
}
