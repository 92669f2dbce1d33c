/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The buffer metrics.prom is rendered into (metrics-buf.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes of a rendering. Appends grow it; with fd >= 0 it is instead
 * written out to fd whenever it fills up (metrics_write()), so its size
 * stays one chunk whatever the number of units. The first error (-ENOMEM,
 * a failed write) is kept in error and every later append is dropped. */
struct metrics_buf {
        char *data;
        size_t len;
        size_t cap;
        int fd;                 /* where full chunks go; -1: keep everything in data */
        uint64_t flushed;       /* bytes written to fd so far */
        int error;              /* 0 or the first negative errno */
        bool no_copy_range;     /* copy_file_range() refused between the files: pread() */
};

#define METRICS_BUF_INIT { .fd = -1 }

/* Room for n more bytes at the end of data (written out to fd first when
 * it has one, else grown), or NULL once the buffer has failed. metrics.c's
 * buf_reserve() takes the fast path inline. */
char *metrics_buf_reserve_slow(struct metrics_buf *b, size_t n);
/* Write what data holds to fd. Returns 0 or the buffer's error. */
int metrics_buf_flush(struct metrics_buf *b);
/* Frees data; the buffer is METRICS_BUF_INIT again (fd kept). */
void metrics_buf_done(struct metrics_buf *b);
