/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl's varlink client: one blocking connection to bwgovd's socket,
 * one call at a time, NUL-framed JSON with a timeout (contracts in
 * varlink-client.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "varlink-client.h"

/* The daemon answers from memory; 30 s without a byte means it is stuck. */
#define REPLY_TIMEOUT_SEC 30
/* A full history of 65536 entries is about 25 MiB. */
#define REPLY_MAX (256U * 1024U * 1024U)

struct VarlinkClient {
        int fd;
        char *buf;              /* bytes received after the last reply */
        size_t size, used;
};

int varlink_client_connect(const char *path, VarlinkClient **ret) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval tv = { .tv_sec = REPLY_TIMEOUT_SEC };
        _cleanup_close_ int fd = -1;
        VarlinkClient *c;

        if (strlen(path) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return -errno;
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->fd = TAKE_FD(fd);
        *ret = c;
        return 0;
}

VarlinkClient *varlink_client_free(VarlinkClient *c) {
        if (!c)
                return NULL;
        if (c->fd >= 0)
                close(c->fd);
        free(c->buf);
        free(c);
        return NULL;
}

static int send_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return -ETIMEDOUT;
                        return errno == EPIPE ? -ECONNRESET : -errno;
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

/* Receive until a NUL; returns its offset in c->buf. */
static int recv_message(VarlinkClient *c, size_t *ret_len) {
        size_t scanned = 0;

        for (;;) {
                char *nul = c->used > scanned ? memchr(c->buf + scanned, 0, c->used - scanned) : NULL;
                ssize_t k;

                if (nul) {
                        *ret_len = (size_t) (nul - c->buf);
                        return 0;
                }
                scanned = c->used;
                if (c->used == c->size) {
                        size_t size = c->size ? c->size * 2 : 65536;
                        char *p;

                        if (size > REPLY_MAX)
                                return -EMSGSIZE;
                        p = realloc(c->buf, size);
                        if (!p)
                                return -ENOMEM;
                        c->buf = p;
                        c->size = size;
                }
                k = recv(c->fd, c->buf + c->used, c->size - c->used, 0);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return -ETIMEDOUT;
                        return -errno;
                }
                if (k == 0)
                        return -ECONNRESET;
                c->used += (size_t) k;
        }
}

int varlink_client_call(VarlinkClient *c, const char *method, json_t *parameters,
                        json_t **ret_parameters, char **ret_error) {
        _cleanup_free_ char *s = NULL, *error = NULL;
        json_t *msg, *reply, *params;
        size_t len = 0;
        int r;

        if (parameters)
                msg = json_pack("{s:s, s:O}", "method", method, "parameters", parameters);
        else
                msg = json_pack("{s:s, s:{}}", "method", method, "parameters");
        if (!msg)
                return -ENOMEM;
        s = json_dumps(msg, JSON_COMPACT);
        json_decref(msg);
        if (!s)
                return -ENOMEM;

        r = send_all(c->fd, s, strlen(s) + 1);
        if (r < 0)
                return r;
        r = recv_message(c, &len);
        if (r < 0)
                return r;

        reply = json_loadb(c->buf, len, JSON_REJECT_DUPLICATES, NULL);
        memmove(c->buf, c->buf + len + 1, c->used - len - 1);
        c->used -= len + 1;
        if (!json_is_object(reply)) {
                json_decref(reply);
                return -EBADMSG;
        }

        params = json_object_get(reply, "parameters");
        if (params && !json_is_object(params)) {
                json_decref(reply);
                return -EBADMSG;
        }
        if (json_object_get(reply, "error")) {
                const char *name = json_string_value(json_object_get(reply, "error"));
                if (!name) {
                        json_decref(reply);
                        return -EBADMSG;
                }
                error = strdup(name);
                if (!error) {
                        json_decref(reply);
                        return -ENOMEM;
                }
        }

        params = params ? json_incref(params) : json_object();
        json_decref(reply);
        if (!params)
                return -ENOMEM;
        *ret_parameters = params;
        *ret_error = TAKE_PTR(error);
        return *ret_error ? 1 : 0;
}
