/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A streaming reader of one HTTP/1.x response, for bwgov-httpload: the status,
 * whether the server will close the connection, and the body's length, read
 * as Content-Length, chunked transfer coding, or everything until the server
 * closes. Bytes are fed as they arrive; nothing is allocated. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX  8192     /* status line and headers */
#define HTTP_LINE_MAX  256      /* a chunk-size or trailer line */

enum http_state {
        HTTP_HEAD,
        HTTP_BODY_LENGTH,
        HTTP_CHUNK_SIZE,
        HTTP_CHUNK_DATA,
        HTTP_CHUNK_CRLF,
        HTTP_TRAILER,
        HTTP_BODY_CLOSE,
        HTTP_DONE,
};

typedef struct HttpResponse {
        int status;                     /* 100..599 once the head is read */
        bool close;                     /* the server closes after this response */
        uint64_t body_bytes;            /* body (decoded from chunks), so far */
        enum http_state state;
        uint64_t remaining;             /* of the body or of the current chunk */
        size_t head_len, line_len;
        char head[HTTP_HEAD_MAX];
        char line[HTTP_LINE_MAX];
} HttpResponse;

void http_response_init(HttpResponse *r);

/* Feeds the next len bytes; len 0 means the server closed the connection.
 * Returns 1 when the response is whole (len 0 ends a body read until close),
 * 0 when more is needed, -EPROTO for a malformed response, bytes after a
 * whole one (no pipelining is asked for), or a close before the end, -E2BIG
 * for a head or line over its limit. */
int http_response_feed(HttpResponse *r, const char *buf, size_t len);
