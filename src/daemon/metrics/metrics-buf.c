/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The metrics buffer's own file: what it holds goes out, or away
 * (metrics-buf.h). metrics.c fills it; metrics-cache.c copies into its file. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "metrics-buf.h"

/* What a full buffer holds before it goes to the file: large enough that
 * the write()s are few, small enough to stay off the resident set. */
#define METRICS_CHUNK_BYTES (256 * 1024)

void metrics_buf_done(struct metrics_buf *b) {
        free(b->data);
        b->data = NULL;
        b->len = b->cap = 0;
        b->error = 0;
        b->flushed = 0;
}

int metrics_buf_flush(struct metrics_buf *b) {
        size_t off = 0;

        while (off < b->len) {
                ssize_t k = write(b->fd, b->data + off, b->len - off);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return b->error = -errno;
                }
                off += (size_t) k;
        }
        b->flushed += b->len;
        b->len = 0;
        return 0;
}

char *metrics_buf_reserve_slow(struct metrics_buf *b, size_t n) {
        size_t cap;
        char *p;

        if (b->error < 0)
                return NULL;
        if (b->fd >= 0 && b->len > 0 && metrics_buf_flush(b) < 0)
                return NULL;
        if (b->cap - b->len >= n)
                return b->data + b->len;

        cap = b->fd >= 0 ? METRICS_CHUNK_BYTES : 2 * b->cap;
        if (cap < b->len + n)
                cap = b->len + n;
        if (cap < 4096)
                cap = 4096;
        p = realloc(b->data, cap);
        if (!p) {
                b->error = -ENOMEM;
                return NULL;
        }
        b->data = p;
        b->cap = cap;
        return p + b->len;
}
