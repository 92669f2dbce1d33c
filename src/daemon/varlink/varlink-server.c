/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The varlink transport (see varlink-server.h): the socket, connections with
 * bounded buffers, who may connect and their access levels; each message
 * goes to varlink-dispatch.c. It knows no governor. */

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "clock.h"
#include "log.h"
#include "varlink-server.h"
#include "varlink-socket.h"
#include "varlink-dispatch.h"

#define UID_FMT "%" PRIu32
#define PID_FMT "%" PRIi32

/* One message, NUL included. Calls are small (a method name and a few
 * short parameters); 64 KiB leaves room for any client and bounds what a
 * connection holds before a NUL arrives. */
#define MESSAGE_MAX (64U * 1024U)
#define INPUT_INITIAL 4096U

/* While more than this waits to be sent, no further call of the connection
 * is read or answered: a client that does not read cannot make the daemon
 * buffer more than this plus one reply. */
#define OUTPUT_HIGH (64U * 1024U)

/* A client that takes no byte of its pending replies for this long is
 * dropped: nothing a healthy client does takes that long. */
#define STALL_TIMEOUT_USEC (10 * USEC_PER_SEC)

/* Enough for every operator tool at once; each costs an fd and at most
 * MESSAGE_MAX + OUTPUT_HIGH bytes plus one reply. The last
 * CONNECTIONS_RESERVED are for root and the daemon's own user only, and any
 * other user holds at most CONNECTIONS_PER_UID_MAX: members of the socket's
 * group can lock out neither root (two of them holding 128 each used to)
 * nor, alone, each other (it takes four to fill what is theirs). */
#define CONNECTIONS_MAX 256U
#define CONNECTIONS_RESERVED 32U
#define CONNECTIONS_PER_UID_MAX 64U

/* A connection that completes no call for this long is closed: idle
 * connections held open would keep others out for good. Clients send their
 * call as soon as they connect (bwgovctl, varlinkctl); a minute is ample
 * for one that keeps a connection for several calls. */
#define IDLE_TIMEOUT_USEC (60 * USEC_PER_SEC)

/* accept() out of fds: stop listening for a moment instead of spinning on
 * a level-triggered listening socket. */
#define ACCEPT_RETRY_USEC (1 * USEC_PER_SEC)

/* Below the control loop's timers (priority 0): a flood of clients delays
 * answers, never a tick. */
#define PRIORITY (SD_EVENT_PRIORITY_NORMAL + 10)


/* A connection; a method sees it as the call it is answering. */
typedef struct VarlinkCall Connection;

struct VarlinkCall {
        VarlinkServer *server;
        Connection *prev, *next;
        int fd;
        sd_event_source *io;
        sd_event_source *stall;
        sd_event_source *idle;
        uint64_t last_call_usec;        /* CLOCK_MONOTONIC of the last complete call, or of the connect */
        uid_t uid;
        gid_t gid;
        pid_t pid;
        VarlinkAccess access;

        char *in;               /* received bytes [in_start, in_end) */
        size_t in_size, in_start, in_end;
        char *out;              /* replies to send [out_start, out_end) */
        size_t out_size, out_start, out_end;

        bool eof;               /* the client will send nothing more */
        bool closing;           /* answer nothing more; close once the output is sent */
        bool answered;          /* a call of it was answered (varlink_server_drain()) */
};

struct VarlinkServer {
        struct varlink_service service;
        int listen_fd;
        bool activated;         /* from systemd: not ours to unlink */
        bool bound;             /* we created path: unlink it at the end */
        char *path;             /* the socket we bound */
        sd_event_source *listen_source;
        sd_event_source *accept_retry;
        Connection *connections;
        size_t n_connections;
        bool have_group;
        gid_t group;
        uid_t self_uid;
        dev_t path_dev;         /* the socket file we bound, to tell it from another */
        ino_t path_ino;
        bool draining;          /* the loop is over: read methods only (varlink_server_drain()) */
};

/* ---- calls -------------------------------------------------------------- */

uid_t varlink_call_uid(const VarlinkCall *call) {
        return call->uid;
}

pid_t varlink_call_pid(const VarlinkCall *call) {
        return call->pid;
}

VarlinkServer *varlink_call_server(VarlinkCall *call) {
        return call->server;
}

size_t varlink_server_n_connections(const VarlinkServer *s) {
        return s->n_connections;
}

/* ---- connections -------------------------------------------------------- */

static void connection_free(Connection *c) {
        VarlinkServer *v;

        if (!c)
                return;
        v = c->server;
        if (c->prev)
                c->prev->next = c->next;
        else
                v->connections = c->next;
        if (c->next)
                c->next->prev = c->prev;
        v->n_connections--;
        log_debug("Varlink: connection of pid " PID_FMT " closed (%zu open)", c->pid, v->n_connections);

        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->stall);
        sd_event_source_disable_unref(c->idle);
        if (c->fd >= 0)
                close(c->fd);
        free(c->in);
        free(c->out);
        free(c);
}

static size_t connection_pending(const Connection *c) {
        return c->out_end - c->out_start;
}

static int on_stall(sd_event_source *s, uint64_t usec, void *userdata) {
        Connection *c = userdata;

        log_debug("Varlink: pid " PID_FMT " read none of %zu pending bytes for %" PRIu64 "s, disconnecting",
                  c->pid, connection_pending(c), STALL_TIMEOUT_USEC / USEC_PER_SEC);
        connection_free(c);
        return 0;
}

/* No complete call for IDLE_TIMEOUT_USEC: close. Calls only move
 * last_call_usec; the timer, when it fires early, waits for the rest. A
 * connection with replies pending is the stall timer's. */
static int on_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        Connection *c = userdata;
        uint64_t until = c->last_call_usec + IDLE_TIMEOUT_USEC;

        if (until > usec || connection_pending(c) > 0) {
                (void) sd_event_source_set_time(s, until > usec ? until : usec + IDLE_TIMEOUT_USEC);
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                return 0;
        }
        log_debug("Varlink: connection of pid " PID_FMT " (uid " UID_FMT ") made no call for %" PRIu64 "s, closing",
                  c->pid, c->uid, IDLE_TIMEOUT_USEC / USEC_PER_SEC);
        connection_free(c);
        return 0;
}

/* (Re)start the stall timer: called when output becomes pending or moves. */
static int connection_arm_stall(Connection *c) {
        int r;

        if (!c->stall) {
                r = sd_event_add_time_relative(sd_event_source_get_event(c->io), &c->stall, CLOCK_MONOTONIC,
                                               STALL_TIMEOUT_USEC, 0, on_stall, c);
                if (r < 0)
                        return r;
                return sd_event_source_set_priority(c->stall, PRIORITY);
        }
        r = sd_event_source_set_time_relative(c->stall, STALL_TIMEOUT_USEC);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(c->stall, SD_EVENT_ONESHOT);
}

static int connection_queue(Connection *c, json_t *msg) {
        _cleanup_free_ char *s = json_dumps(msg, JSON_COMPACT);
        size_t len;

        if (!s)
                return -ENOMEM;
        len = strlen(s) + 1;            /* the NUL ends the message */

        if (c->out_start > 0 && c->out_start == c->out_end)
                c->out_start = c->out_end = 0;
        if (c->out_size - c->out_end < len) {
                size_t pending = connection_pending(c), size = c->out_size ? c->out_size : 4096;
                char *n;

                while (size < pending + len)
                        size *= 2;
                n = malloc(size);
                if (!n)
                        return -ENOMEM;
                if (pending > 0)
                        memcpy(n, c->out + c->out_start, pending);
                free(c->out);
                c->out = n;
                c->out_size = size;
                c->out_start = 0;
                c->out_end = pending;
        }
        memcpy(c->out + c->out_end, s, len);
        c->out_end += len;
        return 0;
}

/* Send what the socket takes. Returns 0 (also when it would block) or a
 * negative errno when the connection is broken. */
static int connection_flush(Connection *c) {
        bool progress = false;
        int r;

        while (c->out_start < c->out_end) {
                ssize_t n = send(c->fd, c->out + c->out_start, c->out_end - c->out_start,
                                 MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        return -errno;
                }
                c->out_start += (size_t) n;
                progress = true;
        }

        if (c->out_start == c->out_end) {
                c->out_start = c->out_end = 0;
                /* Don't keep a large reply's buffer around. */
                if (c->out_size > OUTPUT_HIGH) {
                        c->out = (free(c->out), NULL);
                        c->out_size = 0;
                }
                if (c->stall)
                        (void) sd_event_source_set_enabled(c->stall, SD_EVENT_OFF);
                return 0;
        }
        if (progress || !c->stall || sd_event_source_get_enabled(c->stall, NULL) == 0) {
                r = connection_arm_stall(c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Receive what is there. Returns 0 or a negative errno. */
static int connection_read(Connection *c) {
        size_t used = c->in_end - c->in_start;
        ssize_t n;

        if (c->in_start > 0 && c->in_end == c->in_size) {
                memmove(c->in, c->in + c->in_start, used);
                c->in_start = 0;
                c->in_end = used;
        }
        if (c->in_end == c->in_size) {
                size_t size = c->in_size ? c->in_size * 2 : INPUT_INITIAL;
                char *p;

                if (size > MESSAGE_MAX)
                        size = MESSAGE_MAX;
                if (size == c->in_size)
                        return 0;       /* full: connection_process() says too large */
                p = realloc(c->in, size);
                if (!p)
                        return -ENOMEM;
                c->in = p;
                c->in_size = size;
        }

        n = recv(c->fd, c->in + c->in_end, c->in_size - c->in_end, MSG_DONTWAIT);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                return -errno;
        }
        if (n == 0)
                c->eof = true;
        c->in_end += (size_t) n;
        return 0;
}

/* Answer the complete messages received, as long as the output is not
 * over its mark. Returns 0 or -ENOMEM. */
static int connection_process(Connection *c) {
        int r;

        while (!c->closing && connection_pending(c) <= OUTPUT_HIGH) {
                char *start = c->in + c->in_start, *nul;
                json_t *answer;
                bool oneway, close = false;

                nul = c->in_end > c->in_start ? memchr(start, 0, c->in_end - c->in_start) : NULL;
                if (!nul) {
                        if (c->in_end - c->in_start >= MESSAGE_MAX) {
                                log_debug("Varlink: message from pid " PID_FMT " over %u bytes, closing",
                                          c->pid, MESSAGE_MAX);
                                c->closing = true;
                                answer = varlink_reply_transport_error(
                                                &c->server->service, "MessageTooLarge",
                                                json_pack("{s:I}", "limit", (json_int_t) MESSAGE_MAX));
                                if (!answer)
                                        return -ENOMEM;
                                r = connection_queue(c, answer);
                                json_decref(answer);
                                return r;
                        }
                        break;
                }

                /* Draining, a call that would change something is not
                 * made: the connection closes unanswered, as it would
                 * have at the exit. */
                if (c->server->draining &&
                    varlink_dispatch_access(&c->server->service, start, (size_t) (nul - start)) > VARLINK_ACCESS_READ) {
                        c->closing = true;
                        break;
                }
                (void) sd_event_now(sd_event_source_get_event(c->io), CLOCK_MONOTONIC, &c->last_call_usec);
                answer = varlink_dispatch_message(&c->server->service, c, c->access, c->uid, c->pid, start,
                                                  (size_t) (nul - start), &oneway, &close);
                if (close)
                        c->closing = true;
                c->in_start += (size_t) (nul - start) + 1;
                if (!answer) {
                        if (oneway)
                                continue;
                        return -ENOMEM;
                }
                r = connection_queue(c, answer);
                json_decref(answer);
                if (r < 0)
                        return r;
                c->answered = true;
        }
        if (c->in_start == c->in_end)
                c->in_start = c->in_end = 0;
        return 0;
}

static void connection_update_events(Connection *c) {
        uint32_t events = 0;

        if (!c->eof && !c->closing && connection_pending(c) <= OUTPUT_HIGH)
                events |= EPOLLIN;
        if (connection_pending(c) > 0)
                events |= EPOLLOUT;
        (void) sd_event_source_set_io_events(c->io, events);
}

static int on_connection_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Connection *c = userdata;
        int r;

        if (revents & EPOLLERR) {
                connection_free(c);
                return 0;
        }

        r = connection_flush(c);
        if (r < 0)
                goto drop;

        if (!c->eof && !c->closing && connection_pending(c) <= OUTPUT_HIGH && (revents & (EPOLLIN | EPOLLHUP))) {
                r = connection_read(c);
                if (r < 0)
                        goto drop;
        }

        r = connection_process(c);
        if (r < 0)
                goto drop;
        r = connection_flush(c);
        if (r < 0)
                goto drop;

        /* After the client's end: answer what is complete, then close. A
         * trailing partial message is dropped. */
        if (c->eof && !c->closing && connection_pending(c) <= OUTPUT_HIGH &&
            !memchr(c->in + c->in_start, 0, c->in_end - c->in_start))
                c->closing = true;
        if (c->closing && connection_pending(c) == 0) {
                connection_free(c);
                return 0;
        }
        connection_update_events(c);
        return 0;

drop:
        if (r != -EPIPE && r != -ECONNRESET)
                log_debug_errno(r, "Varlink: connection of pid " PID_FMT " failed: %s", c->pid, STRERROR(r));
        connection_free(c);
        return 0;
}

static VarlinkAccess decide_access(const VarlinkServer *v, int fd, const struct ucred *cred) {
        int r;

        if (cred->uid == 0 || cred->uid == v->self_uid)
                return VARLINK_ACCESS_ALL;
        if (!v->have_group)
                return VARLINK_ACCESS_NONE;
        if (cred->gid == v->group)
                return VARLINK_ACCESS_READ;
        r = varlink_peer_has_group(fd, v->group);
        if (r < 0)
                log_debug_errno(r, "Varlink: cannot read the groups of pid " PID_FMT ": %s", cred->pid, STRERROR(r));
        return r > 0 ? VARLINK_ACCESS_READ : VARLINK_ACCESS_NONE;
}

/* Room for one more connection of cred's peer (see CONNECTIONS_MAX)? A
 * refusal is a warning, held back per user and reason (log_limited(): once,
 * then once per 10 minutes with a count), so that a peer who keeps trying
 * cannot flood the journal either; the peer sees its connection closed. */
static bool server_admit(const VarlinkServer *v, const struct ucred *cred) {
        bool privileged = cred->uid == 0 || cred->uid == v->self_uid;
        size_t n = 0;

        if (v->n_connections >= CONNECTIONS_MAX) {
                log_limited(LOG_WARNING, 0, "Varlink: refusing connections of uid " UID_FMT ": all %u connections "
                            "are open", cred->uid, CONNECTIONS_MAX);
                return false;
        }
        if (privileged)
                return true;
        if (v->n_connections >= CONNECTIONS_MAX - CONNECTIONS_RESERVED) {
                log_limited(LOG_WARNING, 0, "Varlink: refusing connections of uid " UID_FMT ": the %u connections "
                            "for users other than root are open (the last %u are kept for root)", cred->uid,
                            CONNECTIONS_MAX - CONNECTIONS_RESERVED, CONNECTIONS_RESERVED);
                return false;
        }
        for (const Connection *i = v->connections; i; i = i->next)
                n += i->uid == cred->uid;
        if (n >= CONNECTIONS_PER_UID_MAX) {
                log_limited(LOG_WARNING, 0, "Varlink: refusing connections of uid " UID_FMT ": it has %u open, "
                            "the most one user other than root may have", cred->uid, CONNECTIONS_PER_UID_MAX);
                return false;
        }
        return true;
}

static int on_accept_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        VarlinkServer *v = userdata;

        (void) sd_event_source_set_enabled(v->listen_source, SD_EVENT_ON);
        return 0;
}

/* Take one connection off the listening socket's queue. Returns 1 when
 * one was taken (and kept, or refused), 0 when none waits, or a negative
 * errno from accept4(). */
static int server_accept(VarlinkServer *v, sd_event *e) {
        _cleanup_close_ int cfd = -1;
        struct ucred cred;
        socklen_t len = sizeof cred;
        Connection *c;
        int r;

        cfd = accept4(v->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;

        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
                log_debug_errno(errno, "Varlink: SO_PEERCRED failed: %s", STRERROR(errno));
                return 1;
        }

        if (!server_admit(v, &cred))
                return 1;

        c = calloc(1, sizeof(*c));
        if (!c) {
                log_oom();
                return 1;
        }
        c->server = v;
        c->fd = -1;
        c->uid = cred.uid;
        c->gid = cred.gid;
        c->pid = cred.pid;
        c->access = decide_access(v, cfd, &cred);

        (void) sd_event_now(e, CLOCK_MONOTONIC, &c->last_call_usec);
        r = sd_event_add_io(e, &c->io, cfd, EPOLLIN, on_connection_io, c);
        if (r >= 0)
                r = sd_event_source_set_priority(c->io, PRIORITY);
        if (r >= 0)
                r = sd_event_add_time(e, &c->idle, CLOCK_MONOTONIC,
                                      c->last_call_usec + IDLE_TIMEOUT_USEC, USEC_PER_SEC, on_idle, c);
        if (r >= 0)
                r = sd_event_source_set_priority(c->idle, PRIORITY);
        if (r < 0) {
                log_warning_errno(r, "Varlink: cannot watch a connection: %s", STRERROR(r));
                sd_event_source_disable_unref(c->io);
                sd_event_source_disable_unref(c->idle);
                free(c);
                return 1;
        }
        c->fd = TAKE_FD(cfd);
        c->next = v->connections;
        if (c->next)
                c->next->prev = c;
        v->connections = c;
        v->n_connections++;
        log_debug("Varlink: connection from pid " PID_FMT " uid " UID_FMT " (%s), %zu open", c->pid, c->uid,
                  c->access == VARLINK_ACCESS_ALL ? "all methods" :
                  c->access == VARLINK_ACCESS_READ ? "read methods" : "no methods",
                  v->n_connections);
        return 1;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        VarlinkServer *v = userdata;
        int r;

        r = server_accept(v, sd_event_source_get_event(s));
        if (r == -EMFILE || r == -ENFILE || r == -ENOBUFS || r == -ENOMEM) {
                log_warning_errno(r, "Varlink: cannot accept connections: %s, pausing for a second", STRERROR(r));
                (void) sd_event_source_set_enabled(v->listen_source, SD_EVENT_OFF);
                if (v->accept_retry) {
                        (void) sd_event_source_set_time_relative(v->accept_retry, ACCEPT_RETRY_USEC);
                        (void) sd_event_source_set_enabled(v->accept_retry, SD_EVENT_ONESHOT);
                } else
                        (void) sd_event_add_time_relative(sd_event_source_get_event(s), &v->accept_retry,
                                                          CLOCK_MONOTONIC, ACCEPT_RETRY_USEC, 0, on_accept_retry, v);
        }
        return 0;
}

/* ---- the server --------------------------------------------------------- */

static void server_group(VarlinkServer *v, const char *name) {
        if (!name || !*name) {
                log_debug("Varlink: no socket group: read methods for root only");
                return;
        }
        if (varlink_socket_group(name, &v->group) < 0) {
                log_debug("Varlink: no group \"%s\": read methods for root only", name);
                return;
        }
        v->have_group = true;
}

static void server_remember_path(VarlinkServer *v) {
        struct stat st;

        if (lstat(v->path, &st) >= 0) {
                v->path_dev = st.st_dev;
                v->path_ino = st.st_ino;
        }
}

/* The socket file at v->path is still the one we bound (not deleted, nor
 * replaced by another daemon's). */
static bool server_path_is_ours(const VarlinkServer *v) {
        struct stat st;

        return lstat(v->path, &st) >= 0 && S_ISSOCK(st.st_mode) && st.st_dev == v->path_dev &&
               st.st_ino == v->path_ino;
}

/* The socket from systemd, else <runtime_dir>/<interface name>. */
static int server_listen(VarlinkServer *v, const char *runtime_dir) {
        int r;

        r = varlink_socket_from_systemd(&v->listen_fd);
        if (r != 0) {
                v->activated = r > 0;
                return r < 0 ? r : 0;
        }
        if (asprintf(&v->path, "%s/%s", runtime_dir, v->service.interface->name) < 0) {
                v->path = NULL;
                return log_oom();
        }
        r = varlink_socket_bind(v->path, v->have_group ? &v->group : NULL, v->service.product, &v->listen_fd);
        if (r < 0)
                return r;
        v->bound = true;
        server_remember_path(v);
        return 0;
}

int varlink_server_check_socket(VarlinkServer *v) {
        sd_event_source *source = NULL;
        int fd, r;

        if (!v->bound || server_path_is_ours(v))
                return 0;
        r = varlink_socket_bind(v->path, v->have_group ? &v->group : NULL, v->service.product, &fd);
        if (r < 0)
                return r;
        r = sd_event_add_io(sd_event_source_get_event(v->listen_source), &source, fd, EPOLLIN, on_accept, v);
        if (r >= 0)
                r = sd_event_source_set_priority(source, PRIORITY);
        if (r < 0) {
                sd_event_source_disable_unref(source);
                close(fd);
                (void) unlink(v->path);
                return log_error_errno(r, "Varlink: cannot watch the socket: %s", STRERROR(r));
        }
        sd_event_source_disable_unref(v->listen_source);
        close(v->listen_fd);
        v->listen_source = source;
        v->listen_fd = fd;
        server_remember_path(v);
        log_warning("Varlink: socket %s was gone: listening on it again", v->path);
        return 1;
}

int varlink_server_new(sd_event *e, const char *runtime_dir, const char *group,
                       const struct varlink_service *service, VarlinkServer **ret) {
        VarlinkServer *v;
        int r;

        v = calloc(1, sizeof(*v));
        if (!v)
                return log_oom();
        v->service = *service;
        v->listen_fd = -1;
        v->self_uid = geteuid();
        server_group(v, group);

        r = server_listen(v, runtime_dir);
        if (r < 0)
                goto fail;

        r = sd_event_add_io(e, &v->listen_source, v->listen_fd, EPOLLIN, on_accept, v);
        if (r >= 0)
                r = sd_event_source_set_priority(v->listen_source, PRIORITY);
        if (r < 0) {
                log_error_errno(r, "Varlink: cannot watch the socket: %s", STRERROR(r));
                goto fail;
        }

        log_info("Varlink interface %s on %s%s", service->interface->name,
                 v->activated ? "the socket from systemd" : v->path,
                 v->have_group ? "" : " (root only: no socket group)");
        *ret = v;
        return 0;

fail:
        varlink_server_free(v);
        return r;
}

void varlink_server_drain(VarlinkServer *v, uint64_t budget_usec) {
        uint64_t deadline = clock_now_usec(CLOCK_MONOTONIC) + budget_usec;
        sd_event *e = sd_event_source_get_event(v->listen_source);

        v->draining = true;
        /* Those still in the listening queue connected before the end. */
        while (server_accept(v, e) > 0)
                ;
        while (v->connections) {
                size_t n = 0;
                uint64_t t = clock_now_usec(CLOCK_MONOTONIC);
                _cleanup_free_ struct pollfd *pfd = NULL;
                Connection *next;

                if (t >= deadline)
                        break;
                pfd = calloc(v->n_connections, sizeof(*pfd));
                if (!pfd)
                        break;
                for (Connection *c = v->connections; c; c = c->next)
                        pfd[n++] = (struct pollfd) {
                                .fd = c->fd,
                                .events = POLLIN | (connection_pending(c) > 0 ? POLLOUT : 0),
                        };
                if (poll(pfd, n, (int) ((deadline - t + USEC_PER_MSEC - 1) / USEC_PER_MSEC)) < 0 && errno != EINTR)
                        break;
                n = 0;
                for (Connection *c = v->connections; c; c = next) {
                        short revents = pfd[n++].revents;

                        next = c->next;
                        if (revents & (POLLIN | POLLHUP) && !c->eof && !c->closing &&
                            connection_pending(c) <= OUTPUT_HIGH && connection_read(c) < 0) {
                                connection_free(c);
                                continue;
                        }
                        if (connection_process(c) < 0 || connection_flush(c) < 0 || (revents & POLLERR)) {
                                connection_free(c);
                                continue;
                        }
                        /* Done, its replies sent: closing, the client gone
                         * (a trailing partial call dropped), or its calls
                         * answered and nothing more of one received. */
                        if (connection_pending(c) == 0 &&
                            (c->closing || c->eof || (c->in_start == c->in_end && c->answered)))
                                connection_free(c);
                }
        }
}

VarlinkServer *varlink_server_free(VarlinkServer *v) {
        if (!v)
                return NULL;
        while (v->connections)
                connection_free(v->connections);
        sd_event_source_disable_unref(v->listen_source);
        sd_event_source_disable_unref(v->accept_retry);
        if (v->listen_fd >= 0)
                close(v->listen_fd);
        if (v->bound && server_path_is_ours(v))
                (void) unlink(v->path);
        free(v->path);
        free(v);
        return NULL;
}
