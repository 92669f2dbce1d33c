/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The libinih front end: reads one configuration file a line at a time,
 * shapes each line for libinih and hands every assignment of the file's one
 * section to the caller (contracts in include/bwgov/config/config-ini.h). Knows no
 * keys; config.c does.
 *
 * Notes on Debian's libinih (55, built with INI_HANDLER_LINENO=0 and the
 * options exposed as process-wide globals: ini_allow_multiline,
 * ini_allow_inline_comments, ini_max_line, ...). A library must not change
 * process-wide state, so we leave the globals alone and shape the input
 * instead, through our own ini_reader:
 *   - the reader counts lines (the handler gets no line number); it hands
 *     inih exactly one line per call, so the count matches inih's and the
 *     line number it returns for syntax errors;
 *   - the reader strips leading blanks, so inih's Python-style continuation
 *     lines (an indented line continues the previous value) never happen: an
 *     indented "Key=value" is an assignment of its own, as in systemd;
 *   - inih's line buffer is a fixed 200 bytes on the stack; a longer line
 *     (a deep Cgroup= path) would be split into bogus lines. The reader hands
 *     inih only "Key=" and keeps the value, which the handler then uses;
 *   - inline comments (" ;") stay enabled, as inih does by default; no value
 *     we accept contains " ;", and it is documented in bwgov.conf(5);
 *   - the reader also checks section headers, so an unknown section is an
 *     error even when it holds no keys, and stops at the first error so the
 *     first problem in a file is the one reported. */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <ini.h>

#include "bwgov/config/config-ini.h"
#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"
#include "util/string-util.h"

#define UTF8_BOM      "\xEF\xBB\xBF"
#define INI_LINE_MIN  4                 /* what a line handed to inih needs at least: "K=\n" and a NUL */
#define INI_ERR_NOMEM (-2)              /* ini_parse_stream(): could not allocate */

struct ini_ctx {
        FILE *f;
        const char *path;
        const char *section;            /* the one section the file may have */
        bw_ini_assign_fn assign;
        void *userdata;

        unsigned line;
        char *buf;
        size_t buf_size;
        char *long_value;               /* value of the current line, when too long for inih */

        int r;                          /* first error, < 0 once set */
        struct bw_config_error error;
};

_printf_(4, 5)
static void ctx_fail(struct ini_ctx *ctx, int r, const char *key, const char *fmt, ...) {
        va_list ap;

        if (ctx->r < 0)
                return;

        va_start(ap, fmt);
        ctx->r = bw_config_error_setv(&ctx->error, r, ctx->path, ctx->line, key, fmt, ap);
        va_end(ap);
}

/* inih's line buffer is too small for this line: give inih "Key=" and keep
 * the value (after '=' or ':', inline comment removed, blanks stripped, the
 * way inih would) for the handler. */
static char *reader_long_line(struct ini_ctx *ctx, char *p, char *str, size_t num) {
        size_t key_len;
        bool was_space = false;
        char *value, *q;

        if (*p == '#' || *p == ';') {
                strcpy(str, "\n");
                return str;
        }

        key_len = strcspn(p, "=:");
        if (!p[key_len] || key_len + 3 > num) {
                ctx_fail(ctx, -EINVAL, NULL, "line too long");
                return NULL;
        }

        value = p + key_len + 1;
        for (q = value; *q; q++) {
                if (was_space && *q == ';') {
                        *q = '\0';
                        break;
                }
                was_space = ascii_isspace(*q);
        }
        value = (char *) skip_space(value);
        strip_trailing_space(value);

        ctx->long_value = strdup(value);
        if (!ctx->long_value) {
                ctx->r = -ENOMEM;
                return NULL;
        }

        memcpy(str, p, key_len + 1);
        str[key_len + 1] = '\n';
        str[key_len + 2] = '\0';
        return str;
}

static char *reader_cb(char *str, int num, void *stream) {
        struct ini_ctx *ctx = stream;
        ssize_t n;
        size_t len;
        char *p;

        if (ctx->r < 0)
                return NULL; /* stop at the first error */
        if (num < INI_LINE_MIN) {
                ctx_fail(ctx, -ENOBUFS, NULL, "libinih line buffer too small");
                return NULL;
        }

        free(ctx->long_value);
        ctx->long_value = NULL;

        errno = 0;
        n = getline(&ctx->buf, &ctx->buf_size, ctx->f);
        if (n < 0) {
                if (ferror(ctx->f)) {
                        char buf[128];
                        int r = errno > 0 ? -errno : -EIO;

                        ctx_fail(ctx, r, NULL, "read error: %s", strerror_r(-r, buf, sizeof(buf)));
                }
                return NULL;
        }
        ctx->line++;

        if (memchr(ctx->buf, '\0', (size_t) n)) {
                ctx_fail(ctx, -EINVAL, NULL, "line contains a NUL byte");
                return NULL;
        }

        p = ctx->buf;
        if (ctx->line == 1 && strncmp(p, UTF8_BOM, strlen(UTF8_BOM)) == 0)
                p += strlen(UTF8_BOM);
        p = (char *) skip_space(p);
        strip_trailing_space(p);
        len = strlen(p);

        if (*p == '[') {
                const char *end = strchr(p, ']');

                /* Without ']' inih reports a syntax error on this line. */
                if (end) {
                        size_t l = (size_t) (end - p - 1);

                        if (l != strlen(ctx->section) || memcmp(p + 1, ctx->section, l) != 0) {
                                ctx_fail(ctx, -EINVAL, NULL, "unknown section [%.*s], expected [%s]",
                                         (int) l, p + 1, ctx->section);
                                return NULL;
                        }
                }
        }

        if (len + 2 > (size_t) num)
                return reader_long_line(ctx, p, str, (size_t) num);

        memcpy(str, p, len);
        str[len] = '\n';
        str[len + 1] = '\0';
        return str;
}

static int handler_cb(void *user, const char *section, const char *name, const char *value) {
        struct ini_ctx *ctx = user;
        int r;

        if (ctx->r < 0)
                return 0;
        if (ctx->long_value)
                value = ctx->long_value;

        if (isempty(section)) {
                ctx_fail(ctx, -EINVAL, name, "assignment outside of a section, expected [%s] first", ctx->section);
                return 0;
        }
        if (!streq(section, ctx->section)) {
                /* Normally caught by the reader already. */
                ctx_fail(ctx, -EINVAL, NULL, "unknown section [%s], expected [%s]", section, ctx->section);
                return 0;
        }

        r = ctx->assign(ctx->path, ctx->line, name, value, ctx->userdata, &ctx->error);
        if (r < 0) {
                ctx->r = r;
                return 0;
        }
        return 1;
}

int bw_ini_parse_file(const char *path, const char *section, bw_ini_assign_fn assign, void *userdata,
                      struct bw_config_error *ret_error) {
        _cleanup_fclose_ FILE *f = NULL;
        struct ini_ctx ctx = {
                .path = path,
                .section = section,
                .assign = assign,
                .userdata = userdata,
        };
        int fd, k;

        /* Never blocking (a FIFO named *.conf), regular files only. */
        fd = bw_open_regular_at(AT_FDCWD, path, 0);
        if (fd == -EISDIR || fd == -EBADFD)
                return bw_config_error_set_not_regular(ret_error, path);
        if (fd < 0)
                return bw_config_error_set_errno(ret_error, fd, path, "cannot open");
        f = fdopen(fd, "r");
        if (!f) {
                k = -errno;
                safe_close(fd);
                return k;
        }
        ctx.f = f;

        k = ini_parse_stream(reader_cb, &ctx, handler_cb, &ctx);

        free(ctx.buf);
        free(ctx.long_value);

        if (ctx.r == -ENOMEM || k == INI_ERR_NOMEM) {
                bw_config_error_done(&ctx.error);
                return -ENOMEM;
        }
        if (k > 0 && (ctx.r >= 0 || (unsigned) k < ctx.error.line)) {
                /* inih found a syntax error before any error of ours. */
                bw_config_error_done(&ctx.error);
                return bw_config_error_set(ret_error, -EINVAL, path, (unsigned) k, NULL,
                                           "syntax error, expected [Section], Key=value or a comment");
        }
        if (ctx.r < 0) {
                *ret_error = ctx.error;
                return ctx.r;
        }
        if (k < 0)
                return bw_config_error_set(ret_error, -EIO, path, 0, NULL, "cannot parse");
        return 0;
}
