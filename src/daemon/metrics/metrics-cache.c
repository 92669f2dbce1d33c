/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cache of the last metrics file (metrics-cache.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/util/hash.h"
#include "bwgov/util/macro.h"
#include "metrics-cache.h"

_Static_assert(METRICS_N_FAMILIES <= 64, "one bit of metrics_row.ok per family");
_Static_assert(BLOCK % sizeof(uint64_t) == 0, "label storage is read in words");

MetricsCache *metrics_cache_new(void) {
        MetricsCache *c = calloc(1, sizeof(*c));

        if (c)
                c->fd = -1;
        return c;
}

MetricsCache *metrics_cache_free(MetricsCache *c) {
        if (!c)
                return NULL;
        safe_close(c->fd);
        free(c->segs);
        free(c);
        return NULL;
}

void metrics_cache_stats(const MetricsCache *c, size_t *ret_reused, size_t *ret_rendered) {
        *ret_reused = c->reused;
        *ret_rendered = c->rendered;
}

/* The label's storage is padded with zeros to a BLOCK (a multiple of 8),
 * so it is read a word at a time. */
static uint64_t hash_row(uint64_t h, const struct metrics_row *row, const struct metrics_rqs *rqs,
                         const char *storage) {
        for (size_t k = 0; k < row->label_len; k += sizeof(uint64_t)) {
                uint64_t w;

                memcpy(&w, storage + row->label_off + k, sizeof(w));
                h = bw_hash_word(h, w);
        }
        h = bw_hash_word(h, row->label_len);
        h = bw_hash_word(h, row->ok);
        h = bw_hash_words(h, row->v, METRICS_N_FAMILIES);
        h = bw_hash_word(h, row->rq != 0);
        if (row->rq != 0) {
                const struct metrics_row_rq *x = &rqs->v[row->rq - 1];

                h = bw_hash_words(h, x->wait_slots, BW_RQ_SLOTS);
                h = bw_hash_word(h, x->wait_ns);
                h = bw_hash_words(h, x->rq, N_RQ_FAMILIES);
        }
        return h;
}

uint64_t metrics_rows_hash(const struct metrics_row *rows, size_t n, const struct metrics_rqs *rqs,
                           const char *storage) {
        uint64_t h = 0;

        for (size_t i = 0; i < n; i++)
                h = hash_row(h, &rows[i], rqs, storage);
        return h;
}

bool metrics_cache_intact(const MetricsCache *c) {
        struct stat st;

        return c->fd >= 0 && fstat(c->fd, &st) >= 0 && st.st_size == c->st.st_size &&
                st.st_mtim.tv_sec == c->st.st_mtim.tv_sec && st.st_mtim.tv_nsec == c->st.st_mtim.tv_nsec;
}

void metrics_cache_take(MetricsCache *c, int fd, struct metrics_segment *segs, size_t n_segs, size_t reused,
                        size_t rendered) {
        safe_close(c->fd);
        free(c->segs);
        c->fd = fd;
        c->segs = segs;
        c->n_segs = n_segs;
        c->reused = reused;
        c->rendered = rendered;
        if (fstat(c->fd, &c->st) < 0)
                c->fd = safe_close(c->fd);
}
