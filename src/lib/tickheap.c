/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The due-time heap (see tickheap.h). */
#include <errno.h>
#include <stdlib.h>

#include "bwgov/tickheap.h"

static void place(struct bw_tickheap *h, size_t i, struct bw_tick_entry *e) {
        h->v[i] = e;
        e->slot = i + 1;
}

static void sift_up(struct bw_tickheap *h, size_t i) {
        struct bw_tick_entry *e = h->v[i];

        while (i > 0) {
                size_t parent = (i - 1) / 2;

                if (h->v[parent]->due_usec <= e->due_usec)
                        break;
                place(h, i, h->v[parent]);
                i = parent;
        }
        place(h, i, e);
}

static void sift_down(struct bw_tickheap *h, size_t i) {
        struct bw_tick_entry *e = h->v[i];

        for (;;) {
                size_t c = 2 * i + 1;

                if (c >= h->n)
                        break;
                if (c + 1 < h->n && h->v[c + 1]->due_usec < h->v[c]->due_usec)
                        c++;
                if (e->due_usec <= h->v[c]->due_usec)
                        break;
                place(h, i, h->v[c]);
                i = c;
        }
        place(h, i, e);
}

int bw_tickheap_put(struct bw_tickheap *h, struct bw_tick_entry *e, uint64_t due_usec) {
        if (bw_tick_entry_queued(e)) {
                uint64_t old = e->due_usec;

                e->due_usec = due_usec;
                if (due_usec < old)
                        sift_up(h, e->slot - 1);
                else if (due_usec > old)
                        sift_down(h, e->slot - 1);
                return 0;
        }
        if (h->n == h->allocated) {
                size_t n = h->allocated ? h->allocated * 2 : 64;
                struct bw_tick_entry **v = reallocarray(h->v, n, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                h->v = v;
                h->allocated = n;
        }
        e->due_usec = due_usec;
        place(h, h->n++, e);
        sift_up(h, h->n - 1);
        return 0;
}

void bw_tickheap_remove(struct bw_tickheap *h, struct bw_tick_entry *e) {
        size_t i;
        struct bw_tick_entry *last;

        if (!bw_tick_entry_queued(e))
                return;
        i = e->slot - 1;
        e->slot = 0;
        last = h->v[--h->n];
        if (i == h->n)
                return;
        place(h, i, last);
        if (i > 0 && h->v[(i - 1) / 2]->due_usec > last->due_usec)
                sift_up(h, i);
        else
                sift_down(h, i);
}

struct bw_tick_entry *bw_tickheap_pop_due(struct bw_tickheap *h, uint64_t until_usec) {
        struct bw_tick_entry *e = bw_tickheap_peek(h);

        if (!e || e->due_usec > until_usec)
                return NULL;
        bw_tickheap_remove(h, e);
        return e;
}

void bw_tickheap_done(struct bw_tickheap *h) {
        for (size_t i = 0; i < h->n; i++)
                h->v[i]->slot = 0;
        free(h->v);
        *h = (struct bw_tickheap) {0};
}
