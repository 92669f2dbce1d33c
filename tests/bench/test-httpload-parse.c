/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgov-httpload's response reader: Content-Length, chunked (with extensions and
 * trailers), read until close, no body (204, 304), Connection: close and HTTP/1.0,
 * every split of the bytes into reads, and what must be refused. */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "httpload-parse.h"

static HttpResponse resp;

/* Feeds text in reads of `step` bytes (0: all at once), then a close when
 * `then_close`; returns the first failure or the last result. */
static int feed(const char *text, size_t step, bool then_close) {
        size_t len = strlen(text), i = 0;
        int r = 0;

        http_response_init(&resp);
        if (step == 0)
                step = len;
        while (i < len) {
                size_t n = len - i < step ? len - i : step;

                r = http_response_feed(&resp, text + i, n);
                i += n;
                if (r < 0)
                        return r;
                if (r == 1 && i < len)          /* whole before the end: the rest is refused */
                        return http_response_feed(&resp, text + i, len - i);
        }
        if (then_close && r == 0)
                r = http_response_feed(&resp, "", 0);
        return r;
}

static const char CHUNKED[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ntransfer-encoding: Chunked\r\n\r\n"
        "5\r\nhello\r\n"
        "1A;name=value\r\nabcdefghijklmnopqrstuvwxyz\r\n"
        "0\r\nX-Trailer: 1\r\n\r\n";

static void test_chunked_every_split(void **state) {
        for (size_t step = 0; step <= sizeof(CHUNKED); step++) {
                assert_int_equal(feed(CHUNKED, step, false), 1);
                assert_int_equal(resp.status, 200);
                assert_int_equal(resp.body_bytes, 5 + 26);
                assert_false(resp.close);
        }
}

static void test_content_length(void **state) {
        static const char text[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 10\r\nConnection: keep-alive\r\n\r\n0123456789";

        for (size_t step = 0; step <= sizeof(text); step++) {
                assert_int_equal(feed(text, step, false), 1);
                assert_int_equal(resp.status, 404);
                assert_int_equal(resp.body_bytes, 10);
                assert_false(resp.close);
        }
        /* Not whole yet: one byte missing. */
        assert_int_equal(feed("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nab", 0, false), 0);
        /* ... and the server closing there is a failure. */
        assert_int_equal(http_response_feed(&resp, "", 0), -EPROTO);
}

static void test_until_close(void **state) {
        assert_int_equal(feed("HTTP/1.0 200 OK\r\n\r\nsome body", 3, false), 0);
        assert_true(resp.close);
        assert_int_equal(http_response_feed(&resp, "", 0), 1);
        assert_int_equal(resp.body_bytes, 9);
        /* HTTP/1.0 with a length: whole at its end, and still closed. */
        assert_int_equal(feed("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 0, false), 1);
        assert_true(resp.close);
        assert_int_equal(feed("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", 0, false), 1);
        assert_false(resp.close);
        assert_int_equal(feed("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 0, false), 1);
        assert_true(resp.close);
        assert_int_equal(resp.body_bytes, 0);
}

static void test_no_body(void **state) {
        assert_int_equal(feed("HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n", 0, false), 1);
        assert_int_equal(resp.status, 304);
        assert_int_equal(resp.body_bytes, 0);
        assert_int_equal(feed("HTTP/1.1 204 No Content\r\n\r\n", 1, false), 1);
        assert_int_equal(resp.status, 204);
}

static void test_refused(void **state) {
        static const char *const bad[] = {
                "HTTP/2 200 OK\r\n\r\n",
                "HTTP/1.1 20 OK\r\n\r\n",
                "HTTP/1.1 2000 OK\r\n\r\n",
                "HTTP/1.1 600 Nope\r\n\r\n",
                "HTTP/1.1 100 Continue\r\n\r\n",
                "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
                "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n",
                /* bytes after a whole response: nothing was pipelined */
                "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab",
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                for (size_t step = 0; step < 4; step++)
                        assert_int_equal(feed(bad[i], step, false), -EPROTO);
}

static void test_limits(void **state) {
        static char big[HTTP_HEAD_MAX + 64];

        memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
        memset(big + 20, 'a', sizeof(big) - 21);
        big[sizeof(big) - 1] = '\0';
        assert_int_equal(feed(big, 0, false), -E2BIG);

        memset(big, '1', sizeof(big));
        memcpy(big, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0;", 49);
        big[HTTP_LINE_MAX + 60] = '\0';
        assert_int_equal(feed(big, 0, false), -E2BIG);
        /* A response already whole takes nothing more, not even a close. */
        assert_int_equal(feed("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, false), 1);
        assert_int_equal(http_response_feed(&resp, "x", 1), -EPROTO);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_chunked_every_split),
                cmocka_unit_test(test_content_length),
                cmocka_unit_test(test_until_close),
                cmocka_unit_test(test_no_body),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_limits),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
