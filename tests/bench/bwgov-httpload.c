/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* bwgov-httpload: an open-loop HTTP/1.1 load generator for the real-application
 * benchmarks (tests/bench/apps). Requests are due on a schedule (evenly spaced,
 * Poisson arrivals, or as wrk2 paces its connections: every connection at its
 * share of the rate from one start time, so that they come due together),
 * whatever the server does; a request
 * that finds no idle keep-alive connection waits in a queue, and its latency is
 * measured from the time it was due, not from the time it was sent, so a
 * stalled server cannot hide its stall (wrk2's "coordinated omission"
 * correction, oha's --latency-correction). One thread, epoll, a timerfd at the
 * next due time. Responses are read whole: Content-Length, chunked transfer
 * coding (mod_deflate's gzip output), or until the server closes.
 *
 * Prints one JSON object on stdout; with --log, one line per measured request
 * ("due_s latency_ms status bytes": due time from the start of the measured
 * window, latency, HTTP status or 0 for a failure, body bytes). */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench-util.h"
#include "httpload-parse.h"

#define CONN_MAX        1024
#define HEADERS_MAX     16
#define REQUEST_MAX     4096
#define RECV_CHUNK      65536
#define TICK_NS         (100 * NSEC_PER_MSEC)  /* timeouts are checked at least this often */
#define RECONNECT_NS    (10 * NSEC_PER_MSEC)   /* a refused connect is tried again after this */

typedef struct Args {
        struct sockaddr_storage addr;
        socklen_t addr_len;
        char host[INET6_ADDRSTRLEN + 16];
        char path[1024];
        const char *headers[HEADERS_MAX];
        size_t n_headers;
        double rate_per_s, duration_s, warmup_s, timeout_s, drain_s;
        unsigned connections;
        enum arrivals { ARRIVALS_FIXED, ARRIVALS_POISSON, ARRIVALS_WRK2 } arrivals;
        uint64_t seed;
        const char *log_path;
} Args;

enum conn_state { CONN_DOWN, CONN_CONNECTING, CONN_IDLE, CONN_SENDING, CONN_READING };

typedef struct Conn {
        int fd;
        enum conn_state state;
        uint64_t due_ns, sent_ns, retry_ns;
        size_t sent;
        HttpResponse resp;
} Conn;

typedef struct Record {
        uint64_t due_ns, done_ns, bytes;
        int status;
} Record;

typedef struct Load {
        Args a;
        char request[REQUEST_MAX];
        size_t request_len;
        Conn conns[CONN_MAX];
        int epfd, tfd, sfd;
        uint64_t t0, measure_from, end, next_due;
        bool scheduling;
        Rng rng;
        double mean_ns, t;
        unsigned batch_left;
        /* the queue of due requests waiting for a connection (their due times) */
        uint64_t *queue;
        size_t q_head, q_len, q_cap;
        Record *rec;
        size_t n_rec, rec_cap;
        uint64_t scheduled, warmup_done, queued, connects, err_connect, err_timeout, err_protocol, err_status;
        uint64_t max_queue, bytes;
} Load;

static void help(void) {
        printf("Usage: bwgov-httpload [OPTIONS] URL\n\n"
               "Open-loop HTTP/1.1 load: requests are due on a schedule and their latency is\n"
               "measured from the time they were due. URL: http://IPV4-OR-[IPV6]:PORT/PATH.\n\n"
               "  -h --help              Show this help\n"
               "  -r --rate=R            Requests per second (default 10)\n"
               "  -a --arrivals=KIND     fixed (evenly spaced), poisson, or wrk2: every connection at\n"
               "                         rate/connections from one start, so that all come due at once\n"
               "                         every connections/rate seconds, as wrk2 -R paces them (default fixed)\n"
               "  -c --connections=N     Keep-alive connections (default 12, at most 1024)\n"
               "  -d --duration=S        Measured window, seconds (default 20)\n"
               "  -w --warmup=S          Requests due in this many seconds first are not measured (default 0)\n"
               "  -H --header=LINE       Extra request header, e.g. 'Accept-Encoding: gzip' (up to 16)\n"
               "  -t --timeout=S         A request unanswered this long fails (default 30)\n"
               "     --drain=S           After the window, wait this long for requests still due (default 30)\n"
               "  -s --seed=N            RNG seed of the Poisson arrivals (default 1)\n"
               "  -l --log=FILE          One line per measured request: due_s latency_ms status bytes\n"
               "SIGTERM/SIGINT end the run early; what was measured is reported.\n");
}

static int parse_url(const char *url, Args *a) {
        const char *p = url, *host, *host_end, *port_s, *path;
        char hostbuf[INET6_ADDRSTRLEN], *end;
        unsigned long port;
        size_t hl;

        if (strncmp(p, "http://", 7) != 0)
                return -EINVAL;
        host = p + 7;
        if (*host == '[') {
                host++;
                host_end = strchr(host, ']');
                if (!host_end)
                        return -EINVAL;
                port_s = host_end + 1;
        } else {
                host_end = host + strcspn(host, ":/");
                port_s = host_end;
        }
        hl = (size_t) (host_end - host);
        if (hl == 0 || hl >= sizeof(hostbuf) || *port_s != ':')
                return -EINVAL;
        memcpy(hostbuf, host, hl);
        hostbuf[hl] = '\0';
        errno = 0;
        port = strtoul(port_s + 1, &end, 10);
        if (errno != 0 || end == port_s + 1 || port == 0 || port > 65535 || (*end != '/' && *end != '\0'))
                return -EINVAL;
        path = *end ? end : "/";
        if (strlen(path) >= sizeof(a->path))
                return -EINVAL;

        memset(&a->addr, 0, sizeof(a->addr));
        if (strchr(hostbuf, ':')) {
                struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) &a->addr;

                if (inet_pton(AF_INET6, hostbuf, &s6->sin6_addr) != 1)
                        return -EINVAL;
                s6->sin6_family = AF_INET6;
                s6->sin6_port = htons((uint16_t) port);
                a->addr_len = sizeof(*s6);
                snprintf(a->host, sizeof(a->host), "[%s]:%lu", hostbuf, port);
        } else {
                struct sockaddr_in *s4 = (struct sockaddr_in *) &a->addr;

                if (inet_pton(AF_INET, hostbuf, &s4->sin_addr) != 1)
                        return -EINVAL;
                s4->sin_family = AF_INET;
                s4->sin_port = htons((uint16_t) port);
                a->addr_len = sizeof(*s4);
                snprintf(a->host, sizeof(a->host), "%s:%lu", hostbuf, port);
        }
        strcpy(a->path, path);
        return 0;
}

static int check_args(Args *a) {
        if (!(a->rate_per_s >= 0.01) || a->rate_per_s > 1000000) {
                fprintf(stderr, "bwgov-httpload: --rate must be 0.01..1000000\n");
                return -EINVAL;
        }
        if (!(a->duration_s > 0) || a->duration_s > 86400) {
                fprintf(stderr, "bwgov-httpload: --duration must be above 0 and at most a day\n");
                return -EINVAL;
        }
        if (a->warmup_s > 86400 || !(a->timeout_s > 0) || a->timeout_s > 3600 || a->drain_s > 3600) {
                fprintf(stderr, "bwgov-httpload: --warmup at most a day, --timeout above 0 and --drain at most an hour\n");
                return -EINVAL;
        }
        if (a->connections == 0 || a->connections > CONN_MAX) {
                fprintf(stderr, "bwgov-httpload: --connections must be 1..%d\n", CONN_MAX);
                return -EINVAL;
        }
        return 0;
}

static int parse_args(int argc, char *argv[], Args *ret) {
        enum { ARG_DRAIN = 0x100 };
        static const struct option options[] = {
                { "help",        no_argument,       NULL, 'h'       },
                { "rate",        required_argument, NULL, 'r'       },
                { "arrivals",    required_argument, NULL, 'a'       },
                { "connections", required_argument, NULL, 'c'       },
                { "duration",    required_argument, NULL, 'd'       },
                { "warmup",      required_argument, NULL, 'w'       },
                { "header",      required_argument, NULL, 'H'       },
                { "timeout",     required_argument, NULL, 't'       },
                { "drain",       required_argument, NULL, ARG_DRAIN },
                { "seed",        required_argument, NULL, 's'       },
                { "log",         required_argument, NULL, 'l'       },
                { NULL, 0, NULL, 0 }
        };
        Args a = { .rate_per_s = 10, .duration_s = 20, .timeout_s = 30, .drain_s = 30, .connections = 12,
                   .arrivals = ARRIVALS_FIXED, .seed = 1 };
        uint64_t u;
        int c, r = 0;

        while ((c = getopt_long(argc, argv, "hr:a:c:d:w:H:t:s:l:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'r':
                        r = parse_decimal(optarg, &a.rate_per_s);
                        break;
                case 'a':
                        if (strcmp(optarg, "fixed") == 0)
                                a.arrivals = ARRIVALS_FIXED;
                        else if (strcmp(optarg, "poisson") == 0)
                                a.arrivals = ARRIVALS_POISSON;
                        else if (strcmp(optarg, "wrk2") == 0)
                                a.arrivals = ARRIVALS_WRK2;
                        else
                                r = -EINVAL;
                        break;
                case 'c':
                        r = parse_u64(optarg, &u);
                        a.connections = r >= 0 && u <= CONN_MAX ? (unsigned) u : 0;
                        break;
                case 'd':
                        r = parse_decimal(optarg, &a.duration_s);
                        break;
                case 'w':
                        r = parse_decimal(optarg, &a.warmup_s);
                        break;
                case 'H':
                        if (a.n_headers >= HEADERS_MAX || !strchr(optarg, ':') || strpbrk(optarg, "\r\n"))
                                r = -EINVAL;
                        else
                                a.headers[a.n_headers++] = optarg;
                        break;
                case 't':
                        r = parse_decimal(optarg, &a.timeout_s);
                        break;
                case ARG_DRAIN:
                        r = parse_decimal(optarg, &a.drain_s);
                        break;
                case 's':
                        r = parse_u64(optarg, &a.seed);
                        break;
                case 'l':
                        a.log_path = optarg;
                        break;
                default:
                        return -EINVAL;
                }
                if (r < 0) {
                        fprintf(stderr, "bwgov-httpload: invalid value '%s' for --%s\n", optarg,
                                option_name(options, c));
                        return r;
                }
        }
        if (optind != argc - 1) {
                fprintf(stderr, "bwgov-httpload: expected one URL (see --help)\n");
                return -EINVAL;
        }
        if (parse_url(argv[optind], &a) < 0) {
                fprintf(stderr, "bwgov-httpload: invalid URL '%s': expected http://IPV4-OR-[IPV6]:PORT/PATH\n",
                        argv[optind]);
                return -EINVAL;
        }
        r = check_args(&a);
        if (r < 0)
                return r;
        *ret = a;
        return 1;
}

static int build_request(Load *l) {
        int n = snprintf(l->request, sizeof(l->request), "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: bwgov-httpload\r\n",
                         l->a.path, l->a.host);

        for (size_t i = 0; i < l->a.n_headers && n > 0 && (size_t) n < sizeof(l->request); i++)
                n += snprintf(l->request + n, sizeof(l->request) - (size_t) n, "%s\r\n", l->a.headers[i]);
        if (n > 0 && (size_t) n < sizeof(l->request))
                n += snprintf(l->request + n, sizeof(l->request) - (size_t) n, "\r\n");
        if (n <= 0 || (size_t) n >= sizeof(l->request))
                return -E2BIG;
        l->request_len = (size_t) n;
        return 0;
}

/* The next due time. wrk2: `connections` requests at once, every
 * connections/rate seconds, the first batch one interval after the start. */
static uint64_t next_due(Load *l) {
        switch (l->a.arrivals) {
        case ARRIVALS_WRK2:
                if (l->batch_left == 0) {
                        l->t += l->mean_ns * l->a.connections;
                        l->batch_left = l->a.connections;
                }
                l->batch_left--;
                break;
        case ARRIVALS_POISSON:
                l->t += rng_exponential(&l->rng, l->mean_ns);
                break;
        default:
                l->t += l->mean_ns;
        }
        return (uint64_t) l->t;
}

static const char *arrivals_name(enum arrivals a) {
        return a == ARRIVALS_WRK2 ? "wrk2" : a == ARRIVALS_POISSON ? "poisson" : "fixed";
}

static int queue_push(Load *l, uint64_t due) {
        if (l->q_len == l->q_cap) {
                size_t cap = l->q_cap ? l->q_cap * 2 : 1024;
                uint64_t *q = malloc(cap * sizeof(*q));

                if (!q)
                        return -ENOMEM;
                for (size_t i = 0; i < l->q_len; i++)
                        q[i] = l->queue[(l->q_head + i) % l->q_cap];
                free(l->queue);
                l->queue = q;
                l->q_head = 0;
                l->q_cap = cap;
        }
        l->queue[(l->q_head + l->q_len) % l->q_cap] = due;
        l->q_len++;
        if (l->q_len > l->max_queue)
                l->max_queue = l->q_len;
        return 0;
}

static uint64_t queue_pop(Load *l) {
        uint64_t due = l->queue[l->q_head];

        l->q_head = (l->q_head + 1) % l->q_cap;
        l->q_len--;
        return due;
}

/* One request finished (status > 0) or failed (status 0): recorded when it was
 * due inside the measured window. */
static int record(Load *l, uint64_t due, int status, uint64_t bytes) {
        if (due < l->measure_from) {
                l->warmup_done++;
                return 0;
        }
        if (l->n_rec == l->rec_cap) {
                size_t cap = l->rec_cap ? l->rec_cap * 2 : 4096;
                Record *r = realloc(l->rec, cap * sizeof(*r));

                if (!r)
                        return -ENOMEM;
                l->rec = r;
                l->rec_cap = cap;
        }
        l->rec[l->n_rec++] = (Record) { due, monotonic_ns(), bytes, status };
        if (status >= 200 && status < 300)
                l->bytes += bytes;
        else if (status > 0)
                l->err_status++;
        return 0;
}

static void conn_close(Load *l, Conn *c) {
        if (c->fd >= 0) {
                (void) epoll_ctl(l->epfd, EPOLL_CTL_DEL, c->fd, NULL);
                close(c->fd);
        }
        c->fd = -1;
        c->state = CONN_DOWN;
}

static int conn_watch(Load *l, Conn *c, uint32_t events) {
        struct epoll_event ev = { .events = events, .data.ptr = c };

        return epoll_ctl(l->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0 ? -errno : 0;
}

static int conn_open(Load *l, Conn *c) {
        struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = c };
        int one = 1;

        c->fd = socket(l->a.addr.ss_family, SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC, 0);
        if (c->fd < 0)
                return -errno;
        (void) setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        l->connects++;
        if (connect(c->fd, (struct sockaddr *) &l->a.addr, l->a.addr_len) < 0 && errno != EINPROGRESS) {
                int r = -errno;

                close(c->fd);
                c->fd = -1;
                return r;
        }
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
                int r = -errno;

                close(c->fd);
                c->fd = -1;
                return r;
        }
        c->state = CONN_CONNECTING;
        return 0;
}

/* A connection failed: the request on it (if any) fails, the connection is
 * made again after RECONNECT_NS. */
static int conn_fail(Load *l, Conn *c, uint64_t *counter) {
        int r = 0;

        if (c->state == CONN_SENDING || c->state == CONN_READING)
                r = record(l, c->due_ns, 0, 0);
        else if (c->state == CONN_CONNECTING && c->due_ns)
                r = record(l, c->due_ns, 0, 0);
        (*counter)++;
        conn_close(l, c);
        c->due_ns = 0;
        c->retry_ns = monotonic_ns() + RECONNECT_NS;
        return r;
}

static int conn_send(Load *l, Conn *c) {
        while (c->sent < l->request_len) {
                ssize_t n = send(c->fd, l->request + c->sent, l->request_len - c->sent, MSG_NOSIGNAL);

                if (n < 0) {
                        if (errno == EAGAIN)
                                return conn_watch(l, c, EPOLLOUT);
                        if (errno == EINTR)
                                continue;
                        return conn_fail(l, c, &l->err_protocol);
                }
                c->sent += (size_t) n;
        }
        c->state = CONN_READING;
        return conn_watch(l, c, EPOLLIN);
}

/* Hands the oldest waiting request to an idle connection. */
static int dispatch(Load *l) {
        for (unsigned i = 0; i < l->a.connections && l->q_len > 0; i++) {
                Conn *c = &l->conns[i];
                int r;

                if (c->state != CONN_IDLE)
                        continue;
                c->due_ns = queue_pop(l);
                c->sent_ns = monotonic_ns();
                c->sent = 0;
                http_response_init(&c->resp);
                c->state = CONN_SENDING;
                r = conn_send(l, c);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int conn_read(Load *l, Conn *c) {
        static char buf[RECV_CHUNK];

        for (;;) {
                ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
                int r;

                if (n < 0) {
                        if (errno == EAGAIN)
                                return 0;
                        if (errno == EINTR)
                                continue;
                        return conn_fail(l, c, &l->err_protocol);
                }
                /* n == 0: the server closed; whole only for a body read until close */
                r = http_response_feed(&c->resp, buf, (size_t) n);
                if (r < 0)
                        return conn_fail(l, c, &l->err_protocol);
                if (r == 0)
                        continue;
                r = record(l, c->due_ns, c->resp.status, c->resp.body_bytes);
                if (r < 0)
                        return r;
                c->due_ns = 0;
                if (c->resp.close || n == 0) {
                        conn_close(l, c);
                        return conn_open(l, c) < 0 ? conn_fail(l, c, &l->err_connect) : 0;
                }
                c->state = CONN_IDLE;
                r = conn_watch(l, c, EPOLLIN);
                return r < 0 ? r : dispatch(l);
        }
}

static int conn_event(Load *l, Conn *c, uint32_t events) {
        if (c->state == CONN_CONNECTING) {
                int err = 0;
                socklen_t len = sizeof(err);

                if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0 || (events & EPOLLERR))
                        return conn_fail(l, c, &l->err_connect);
                c->state = CONN_IDLE;
                c->due_ns = 0;
                if (conn_watch(l, c, EPOLLIN) < 0)
                        return -errno;
                return dispatch(l);
        }
        if (c->state == CONN_SENDING)
                return conn_send(l, c);
        if (c->state == CONN_READING)
                return conn_read(l, c);
        if (c->state == CONN_IDLE && (events & (EPOLLIN|EPOLLHUP|EPOLLERR))) {
                /* The server closed an idle keep-alive connection: make it again. */
                conn_close(l, c);
                return conn_open(l, c) < 0 ? conn_fail(l, c, &l->err_connect) : 0;
        }
        return 0;
}

/* Timeouts of requests in flight, and connections to make again. */
static int housekeeping(Load *l, uint64_t now) {
        uint64_t limit = (uint64_t) llround(l->a.timeout_s * (double) NSEC_PER_SEC);

        for (unsigned i = 0; i < l->a.connections; i++) {
                Conn *c = &l->conns[i];
                int r = 0;

                if ((c->state == CONN_SENDING || c->state == CONN_READING) && now - c->sent_ns > limit)
                        r = conn_fail(l, c, &l->err_timeout);
                else if (c->state == CONN_DOWN && now >= c->retry_ns && conn_open(l, c) < 0)
                        r = conn_fail(l, c, &l->err_connect);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int arm_timer(Load *l) {
        struct itimerspec its = { 0 };
        uint64_t when = l->scheduling ? l->next_due : 0;

        if (when == 0)
                return 0;
        its.it_value.tv_sec = (time_t) (when / NSEC_PER_SEC);
        its.it_value.tv_nsec = (long) (when % NSEC_PER_SEC);
        return timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

static bool conn_any_idle(const Load *l) {
        for (unsigned i = 0; i < l->a.connections; i++)
                if (l->conns[i].state == CONN_IDLE)
                        return true;
        return false;
}

/* Requests now due join the queue; the schedule ends with the window. */
static int on_timer(Load *l) {
        uint64_t exp, now = monotonic_ns();
        int r;

        if (read(l->tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
                return -errno;
        while (l->scheduling && l->next_due <= now) {
                r = queue_push(l, l->next_due);
                if (r < 0)
                        return r;
                l->scheduled++;
                if (!conn_any_idle(l))
                        l->queued++;
                l->next_due = next_due(l);
                if (l->next_due >= l->end)
                        l->scheduling = false;
        }
        r = dispatch(l);
        return r < 0 ? r : arm_timer(l);
}

static bool in_flight(const Load *l) {
        if (l->q_len > 0)
                return true;
        for (unsigned i = 0; i < l->a.connections; i++)
                if (l->conns[i].state == CONN_SENDING || l->conns[i].state == CONN_READING)
                        return true;
        return false;
}

static int setup(Load *l) {
        struct epoll_event ev = { .events = EPOLLIN };
        sigset_t ss;
        int r;

        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK|TFD_CLOEXEC);
        l->sfd = signalfd(-1, &ss, SFD_NONBLOCK|SFD_CLOEXEC);
        if (l->epfd < 0 || l->tfd < 0 || l->sfd < 0)
                return -errno;
        ev.data.ptr = &l->tfd;
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->tfd, &ev) < 0)
                return -errno;
        ev.data.ptr = &l->sfd;
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->sfd, &ev) < 0)
                return -errno;
        for (unsigned i = 0; i < l->a.connections; i++) {
                l->conns[i].fd = -1;
                r = conn_open(l, &l->conns[i]);
                if (r < 0) {
                        l->err_connect++;
                        l->conns[i].retry_ns = monotonic_ns() + RECONNECT_NS;
                }
        }
        return 0;
}

/* The event loop: until the schedule has ended and nothing is in flight, the
 * drain time is over, or a signal came. Returns 1 if interrupted. */
static int run(Load *l) {
        uint64_t drain_end = 0;
        int r;

        for (;;) {
                struct epoll_event evs[64];
                uint64_t now = monotonic_ns();
                int n;

                if (!l->scheduling) {
                        if (drain_end == 0)
                                drain_end = now + (uint64_t) llround(l->a.drain_s * (double) NSEC_PER_SEC);
                        if (!in_flight(l) || now >= drain_end)
                                return 0;
                }
                n = epoll_wait(l->epfd, evs, (int) (sizeof(evs) / sizeof(evs[0])), (int) (TICK_NS / NSEC_PER_MSEC));
                if (n < 0 && errno != EINTR)
                        return -errno;
                for (int i = 0; i < n; i++) {
                        if (evs[i].data.ptr == &l->sfd)
                                return 1;
                        r = evs[i].data.ptr == &l->tfd ? on_timer(l) : conn_event(l, evs[i].data.ptr, evs[i].events);
                        if (r < 0)
                                return r;
                }
                r = housekeeping(l, monotonic_ns());
                if (r < 0)
                        return r;
                r = dispatch(l);
                if (r < 0)
                        return r;
        }
}

static int write_log(const Load *l) {
        FILE *f = fopen(l->a.log_path, "we");

        if (!f)
                return -errno;
        for (size_t i = 0; i < l->n_rec; i++) {
                const Record *rc = &l->rec[i];

                fprintf(f, "%.6f %.3f %d %" PRIu64 "\n", (double) (rc->due_ns - l->measure_from) / (double) NSEC_PER_SEC,
                        (double) (rc->done_ns - rc->due_ns) / (double) NSEC_PER_MSEC, rc->status, rc->bytes);
        }
        return fclose(f) == 0 ? 0 : -EIO;
}

static int report(Load *l, bool interrupted) {
        SampleStore lat;
        uint64_t ok = 0, unfinished = l->q_len, wall = monotonic_ns() - l->t0;
        json_t *j;
        int r;

        for (unsigned i = 0; i < l->a.connections; i++)
                if (l->conns[i].due_ns >= l->measure_from && l->conns[i].due_ns &&
                    (l->conns[i].state == CONN_SENDING || l->conns[i].state == CONN_READING))
                        unfinished++;
        sample_store_init(&lat, SAMPLES_MAX_DEFAULT, l->a.seed);
        for (size_t i = 0; i < l->n_rec; i++)
                if (l->rec[i].status >= 200 && l->rec[i].status < 300) {
                        ok++;
                        (void) sample_store_add(&lat, (double) (l->rec[i].done_ns - l->rec[i].due_ns));
                }
        sample_store_finish(&lat);
        j = json_pack("{s:s, s:s, s:f, s:s, s:i, s:f, s:f, s:b, s:I, s:I, s:I, s:I, s:f, s:o, s:{s:I, s:I, s:I, s:I, "
                      "s:I}, s:I, s:I, s:I, s:f, s:f}",
                      "program", "bwgov-httpload", "url_path", l->a.path, "rate_per_s", l->a.rate_per_s,
                      "arrivals", arrivals_name(l->a.arrivals), "connections", (int) l->a.connections,
                      "duration_s", l->a.duration_s, "warmup_s", l->a.warmup_s, "interrupted", interrupted,
                      "scheduled", (json_int_t) l->scheduled, "measured", (json_int_t) l->n_rec,
                      "completed", (json_int_t) ok, "warmup_requests", (json_int_t) l->warmup_done,
                      "achieved_rate_per_s", (double) ok / l->a.duration_s,
                      "latency_ms", sample_store_json(&lat, 1.0 / (double) NSEC_PER_MSEC),
                      "errors", "connect", (json_int_t) l->err_connect, "timeout", (json_int_t) l->err_timeout,
                      "protocol", (json_int_t) l->err_protocol, "status", (json_int_t) l->err_status,
                      "unfinished", (json_int_t) unfinished,
                      "queued", (json_int_t) l->queued, "max_queue", (json_int_t) l->max_queue,
                      "connects", (json_int_t) l->connects,
                      "body_mb", (double) l->bytes / 1e6, "wall_s", (double) wall / (double) NSEC_PER_SEC);
        sample_store_done(&lat);
        if (!j)
                return -ENOMEM;
        r = json_print_line(j);
        json_decref(j);
        return r;
}

int main(int argc, char *argv[]) {
        static Load l;
        int r, rr;

        r = parse_args(argc, argv, &l.a);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        if (build_request(&l) < 0) {
                fprintf(stderr, "bwgov-httpload: the request is longer than %d bytes\n", REQUEST_MAX);
                return 2;
        }
        signals_block();
        rng_seed(&l.rng, l.a.seed, 0);
        r = setup(&l);
        if (r < 0) {
                fprintf(stderr, "bwgov-httpload: setup: %s\n", strerror(-r));
                return 1;
        }
        l.mean_ns = (double) NSEC_PER_SEC / l.a.rate_per_s;
        l.t0 = monotonic_ns();
        l.measure_from = l.t0 + (uint64_t) llround(l.a.warmup_s * (double) NSEC_PER_SEC);
        l.end = l.measure_from + (uint64_t) llround(l.a.duration_s * (double) NSEC_PER_SEC);
        l.t = (double) l.t0;
        l.next_due = next_due(&l);
        l.scheduling = l.next_due < l.end;
        r = arm_timer(&l);
        if (r >= 0)
                r = run(&l);
        if (r < 0)
                fprintf(stderr, "bwgov-httpload: %s\n", strerror(-r));
        if (l.a.log_path) {
                rr = write_log(&l);
                if (rr < 0)
                        fprintf(stderr, "bwgov-httpload: %s: %s\n", l.a.log_path, strerror(-rr));
        }
        rr = report(&l, r == 1);
        return r < 0 || rr < 0 ? 1 : 0;
}
