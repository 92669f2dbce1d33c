/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cache of the last metrics file (metrics-cache.h). */
#include <errno.h>
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

/* pread() len bytes at off into b's buffer. */
static bool copy_through(const MetricsCache *c, struct metrics_buf *b, uint64_t off, size_t len) {
        char *p = b->cap - b->len >= len ? b->data + b->len : metrics_buf_reserve_slow(b, len);
        size_t got = 0;

        if (!p)
                return true;            /* b has failed: nothing more is written */
        while (got < len) {
                ssize_t k = pread(c->fd, p + got, len - got, (off_t) (off + got));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return false;
                got += (size_t) k;
        }
        b->len += len;
        return true;
}

bool metrics_cache_copy(const MetricsCache *c, struct metrics_buf *b, uint64_t off, size_t len) {
        uint64_t start;
        size_t done = 0;

        if (b->fd < 0 || b->no_copy_range || len < METRICS_COPY_KERNEL_MIN)
                return copy_through(c, b, off, len);
        if (b->error < 0 || (b->len > 0 && metrics_buf_flush(b) < 0))
                return true;
        start = b->flushed;
        while (done < len) {
                loff_t from = (loff_t) (off + done);
                ssize_t k = copy_file_range(c->fd, &from, b->fd, NULL, len - done, 0);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && done == 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                                           errno == EOPNOTSUPP || errno == EBADF)) {
                        b->no_copy_range = true;        /* another file system, an old kernel */
                        return copy_through(c, b, off, len);
                }
                if (k < 0) {
                        b->error = -errno;
                        return true;
                }
                if (k == 0) {
                        /* Put b's file back where it was. */
                        if (ftruncate(b->fd, (off_t) start) < 0 || lseek(b->fd, (off_t) start, SEEK_SET) < 0)
                                b->error = -errno;
                        b->flushed = start;
                        return false;
                }
                done += (size_t) k;
                b->flushed += (uint64_t) k;
        }
        return true;
}
