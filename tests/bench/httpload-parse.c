/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One HTTP/1.x response read as its bytes arrive (contract in httpload-parse.h). */

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "httpload-parse.h"

void http_response_init(HttpResponse *r) {
        r->status = 0;
        r->close = false;
        r->body_bytes = 0;
        r->state = HTTP_HEAD;
        r->remaining = 0;
        r->head_len = r->line_len = 0;
}

static int parse_u64_digits(const char *s, size_t len, unsigned base, uint64_t *ret) {
        uint64_t v = 0;
        size_t i = 0;

        if (len == 0)
                return -EPROTO;
        for (; i < len; i++) {
                unsigned d;
                char c = s[i];

                if (c >= '0' && c <= '9')
                        d = (unsigned) (c - '0');
                else if (base == 16 && c >= 'a' && c <= 'f')
                        d = (unsigned) (c - 'a' + 10);
                else if (base == 16 && c >= 'A' && c <= 'F')
                        d = (unsigned) (c - 'A' + 10);
                else
                        return -EPROTO;
                if (v > (UINT64_MAX - d) / base)
                        return -EPROTO;
                v = v * base + d;
        }
        *ret = v;
        return 0;
}

static const char *skip_ws(const char *s, const char *end) {
        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        return s;
}

static bool value_has_token(const char *v, const char *end, const char *token) {
        size_t tl = strlen(token);

        for (const char *p = v; p + tl <= end; p++)
                if (strncasecmp(p, token, tl) == 0)
                        return true;
        return false;
}

/* The head is whole (it ends with an empty line): status, framing, close. */
static int parse_head(HttpResponse *r) {
        const char *p = r->head, *end = r->head + r->head_len, *eol;
        bool chunked = false, has_length = false, http10, keep_alive = false, close = false;
        uint64_t length = 0;

        eol = memchr(p, '\r', (size_t) (end - p));
        if (!eol || eol - p < 12 || strncmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') || p[8] != ' ')
                return -EPROTO;
        http10 = p[7] == '0';
        if (p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
            (eol > p + 12 && p[12] != ' '))
                return -EPROTO;
        r->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');

        for (p = eol + 2; p < end - 2; p = eol + 2) {
                const char *colon, *v, *ve;

                eol = memchr(p, '\r', (size_t) (end - p));
                if (!eol || eol + 1 >= end || eol[1] != '\n')
                        return -EPROTO;
                colon = memchr(p, ':', (size_t) (eol - p));
                if (!colon || colon == p)
                        return -EPROTO;
                v = skip_ws(colon + 1, eol);
                ve = eol;
                while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                        ve--;
                if ((size_t) (colon - p) == 14 && strncasecmp(p, "Content-Length", 14) == 0) {
                        if (parse_u64_digits(v, (size_t) (ve - v), 10, &length) < 0)
                                return -EPROTO;
                        has_length = true;
                } else if ((size_t) (colon - p) == 17 && strncasecmp(p, "Transfer-Encoding", 17) == 0)
                        chunked = value_has_token(v, ve, "chunked");
                else if ((size_t) (colon - p) == 10 && strncasecmp(p, "Connection", 10) == 0) {
                        close = close || value_has_token(v, ve, "close");
                        keep_alive = keep_alive || value_has_token(v, ve, "keep-alive");
                }
        }
        r->close = close || (http10 && !keep_alive);

        if (r->status < 200 || r->status == 204 || r->status == 304) {
                if (r->status < 200)
                        return -EPROTO;         /* no 1xx is asked for (no Expect:, no Upgrade:) */
                r->state = HTTP_DONE;
        } else if (chunked)
                r->state = HTTP_CHUNK_SIZE;
        else if (has_length) {
                r->remaining = length;
                r->state = length > 0 ? HTTP_BODY_LENGTH : HTTP_DONE;
        } else {
                r->close = true;
                r->state = HTTP_BODY_CLOSE;
        }
        return 0;
}

/* Collects one CRLF-terminated line into r->line; returns the bytes used, and
 * sets *ret_whole when the line is complete (without its CRLF). */
static int take_line(HttpResponse *r, const char *buf, size_t len, bool *ret_whole) {
        const char *nl = memchr(buf, '\n', len);
        size_t n = nl ? (size_t) (nl - buf) + 1 : len;

        if (r->line_len + n > sizeof(r->line))
                return -E2BIG;
        memcpy(r->line + r->line_len, buf, n);
        r->line_len += n;
        *ret_whole = nl != NULL;
        if (*ret_whole) {
                if (r->line_len < 2 || r->line[r->line_len - 2] != '\r')
                        return -EPROTO;
                r->line_len -= 2;
        }
        return (int) n;
}

static int chunk_size_line(HttpResponse *r) {
        uint64_t size;
        size_t n;

        r->line[r->line_len] = '\0';
        n = strcspn(r->line, ";");              /* extensions are ignored */
        while (n > 0 && (r->line[n - 1] == ' ' || r->line[n - 1] == '\t'))
                n--;
        if (n > 15 || parse_u64_digits(r->line, n, 16, &size) < 0)
                return -EPROTO;
        r->line_len = 0;
        r->remaining = size;
        r->state = size > 0 ? HTTP_CHUNK_DATA : HTTP_TRAILER;
        return 0;
}

/* The head: bytes up to and including the empty line. Returns the bytes used. */
static int feed_head(HttpResponse *r, const char *buf, size_t len) {
        for (size_t i = 0; i < len; i++) {
                if (r->head_len >= sizeof(r->head))
                        return -E2BIG;
                r->head[r->head_len++] = buf[i];
                if (r->head_len >= 4 && memcmp(r->head + r->head_len - 4, "\r\n\r\n", 4) == 0) {
                        int k = parse_head(r);

                        return k < 0 ? k : (int) (i + 1);
                }
        }
        return (int) len;
}

static int feed_body(HttpResponse *r, const char *buf, size_t len) {
        bool whole;
        int k;

        switch (r->state) {
        case HTTP_BODY_LENGTH:
        case HTTP_CHUNK_DATA: {
                size_t n = r->remaining < len ? (size_t) r->remaining : len;

                r->remaining -= n;
                r->body_bytes += n;
                if (r->remaining == 0)
                        r->state = r->state == HTTP_BODY_LENGTH ? HTTP_DONE : HTTP_CHUNK_CRLF;
                return (int) n;
        }
        case HTTP_CHUNK_CRLF:
        case HTTP_CHUNK_SIZE:
        case HTTP_TRAILER:
                k = take_line(r, buf, len, &whole);
                if (k < 0 || !whole)
                        return k;
                if (r->state == HTTP_CHUNK_SIZE)
                        return chunk_size_line(r) < 0 ? -EPROTO : k;
                if (r->state == HTTP_CHUNK_CRLF) {
                        if (r->line_len != 0)
                                return -EPROTO;
                        r->state = HTTP_CHUNK_SIZE;
                } else if (r->line_len == 0)
                        r->state = HTTP_DONE;   /* the empty line after the trailers */
                r->line_len = 0;
                return k;
        case HTTP_BODY_CLOSE:
                r->body_bytes += len;
                return (int) len;
        default:
                return -EPROTO;
        }
}

int http_response_feed(HttpResponse *r, const char *buf, size_t len) {
        if (len == 0)
                return r->state == HTTP_BODY_CLOSE ? (r->state = HTTP_DONE, 1) : -EPROTO;
        if (r->state == HTTP_DONE)
                return -EPROTO;

        while (len > 0) {
                int k = r->state == HTTP_HEAD ? feed_head(r, buf, len) : feed_body(r, buf, len);

                if (k < 0)
                        return k;
                buf += k;
                len -= (size_t) k;
                if (r->state == HTTP_DONE)
                        return len == 0 ? 1 : -EPROTO;
        }
        return 0;
}
