/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The metrics buffer's own file: what it holds goes out, or away
 * (metrics-buf.h). metrics.c fills it; metrics-cache.c copies into its file. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "metrics-buf.h"

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
