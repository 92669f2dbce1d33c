/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The varlink server and io.bwgov.Governor (src/daemon/varlink/varlink-server.c,
 * governor-varlink.c) over an inert fake governor: the input is what one
 * client sends on one connection (NUL-separated messages; a NUL is added
 * at the end), through a real AF_UNIX socket in a scratch directory, the
 * way the daemon's own test (test-governor-varlink.c) talks to it. That
 * covers the transport's framing and buffers, the envelope and parameter
 * checks, dispatch, and every method's JSON view. A fresh server per input
 * keeps runs independent (CheckKernel's cache, the fake's pause flag).
 *
 * Properties: every reply is a JSON object with either an "error" string
 * and a "parameters" object, or a "parameters" object alone; there are no
 * more replies than messages; the server closes the connection once the
 * client has sent everything and read every reply; nothing leaks. */

#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "fuzz-util.h"
#include "varlink/governor-varlink.h"
#include "governor.h"
#include "log.h"

/* Enough loop iterations for any input the corpora and libFuzzer make; a
 * server that is still talking after that has lost track of the client. */
#define ITERATIONS_MAX 200000

struct fake {
        struct bw_history *history;
        bool paused;
        unsigned reloads;
};

static bool known(const char *name) {
        return strcmp(name, "app.slice") == 0;
}

static int fake_get_status(void *userdata, struct governor_status *ret) {
        const struct fake *f = userdata;

        *ret = (struct governor_status) {
                .counts = { .units = 1, .present = 1, .paused = f->paused },
                .layout = BW_CG_LAYOUT_HYBRID,
                .bandwidth_root = "/sys/fs/cgroup/cpu",
                .interval_usec = USEC_PER_SEC,
                .mode = BW_MODE_ELASTIC,
                .reloads = f->reloads,
                .telemetry_reason = "",
                .refused_writes_reason = "",
        };
        return 0;
}

static void fake_summary(const struct fake *f, struct governor_unit_summary *ret) {
        *ret = (struct governor_unit_summary) {
                .name = "app.slice",
                .cgroup = "/app.slice",
                .mode = BW_MODE_ELASTIC,
                .state = "resting",
                .present = true,
                .adopted = true,
                .paused = f->paused,
                .baseline = { .quota_usec = 50000, .period_usec = 100000 },
                .current = { .quota_usec = 100000, .period_usec = 100000, .burst_usec = 5000, .has_burst = true },
                .has_rule = true,
                .rule = BW_RULE_STEADY,
                .ticks = 3,
                .prot = { .note = "", .levers = { "100" } },
        };
}

static void fake_unit(const struct fake *f, struct governor_unit *ret) {
        *ret = (struct governor_unit) { .config.cfg.credit_max_usec = 30000000, .credit.credit_usec = 1234 };
        fake_summary(f, &ret->summary);
}

static int fake_list_units(void *userdata, size_t limit, struct governor_unit **ret, size_t *ret_n,
                           size_t *ret_total) {
        struct governor_unit *u = calloc(1, sizeof(*u));

        if (!u)
                return -ENOMEM;
        fake_unit(userdata, u);
        *ret = u;
        *ret_n = limit > 0;
        if (ret_total)
                *ret_total = 1;
        return 0;
}

static int fake_get_unit(void *userdata, const char *name, struct governor_unit *ret) {
        if (!known(name))
                return -ENOENT;
        fake_unit(userdata, ret);
        return 0;
}

static int fake_get_history(void *userdata, const char *name, const struct bw_history_query *q,
                            struct governor_history *ret) {
        const struct fake *f = userdata;
        struct governor_history h = {
                .unit = "app.slice",
                .capacity = bw_history_capacity(f->history),
                .recorded = bw_history_pushed(f->history),
        };
        int r;

        if (!known(name))
                return -ENOENT;
        r = bw_history_select(f->history, q, &h.entries, &h.n_entries);
        if (r < 0)
                return r;
        *ret = h;
        return 0;
}

static int fake_explain(void *userdata, const char *name, struct governor_unit_summary *ret_summary,
                        bool *ret_has_decision, struct governor_decision *ret_decision) {
        if (!known(name))
                return -ENOENT;
        fake_summary(userdata, ret_summary);
        *ret_has_decision = true;
        *ret_decision = (struct governor_decision) {
                .d = { .rule = BW_RULE_STEADY },
                .old = { .quota_usec = 50000, .period_usec = 100000 },
                .quota_limit_usec = BW_QUOTA_MAX,
        };
        return 0;
}

static int fake_get_latency(void *userdata, const char *name, struct governor_latency *ret) {
        if (!known(name))
                return -ENOENT;
        *ret = (struct governor_latency) { .unit = "app.slice", .available = true, .has_window = true,
                                           .window_usec = USEC_PER_SEC };
        ret->total.wait_slots[3] = 2;
        ret->total.wakeups = 2;
        ret->total.wait_ns = 20000;
        ret->window = ret->total;
        return 0;
}

static int fake_check_kernel(void *userdata, struct bw_kreport **ret) {
        struct bw_kreport *r = calloc(1, sizeof(*r));

        if (!r || !(r->manifest_path = strdup("/m.json")) || bw_kerrors_add(&r->errors, "$", "no manifest") < 0) {
                bw_kreport_free(r);
                return -ENOMEM;
        }
        r->manifest_error = -ENOENT;
        r->verdict = BW_KVERDICT_UNCHECKED;
        *ret = r;
        return 0;
}

static int fake_reload(void *userdata, struct governor_reload_error *ret_error) {
        struct fake *f = userdata;

        /* Every other reload is refused, naming a file and line. */
        if (++f->reloads % 2 == 0) {
                *ret_error = (struct governor_reload_error) { "/etc/bwgov/x.d/10.conf", 2, "CPUQuota", "expected" };
                return -EINVAL;
        }
        return 0;
}

static int fake_set_paused(void *userdata, const char *name, bool paused) {
        struct fake *f = userdata;
        bool was = f->paused;

        if (!known(name))
                return -ENOENT;
        f->paused = paused;
        return was != paused;
}

static const struct governor_ops fake_ops = {
        .get_status = fake_get_status,
        .list_units = fake_list_units,
        .get_unit = fake_get_unit,
        .get_history = fake_get_history,
        .explain = fake_explain,
        .get_latency = fake_get_latency,
        .check_kernel = fake_check_kernel,
        .reload = fake_reload,
        .set_paused = fake_set_paused,
};

/* One reply, NUL excluded: an object with "parameters", and maybe "error". */
static void check_reply(const char *s, size_t n) {
        json_t *m = json_loadb(s, n, JSON_REJECT_DUPLICATES, NULL), *e;

        fuzz_check(json_is_object(m));
        fuzz_check(json_is_object(json_object_get(m, "parameters")));
        e = json_object_get(m, "error");
        fuzz_check(!e || json_is_string(e));
        fuzz_check(json_object_size(m) == (e ? 2u : 1u));
        json_decref(m);
}

struct client {
        int fd;
        char *in;               /* replies received, [0, in_len) */
        size_t in_len, in_size;
        size_t replies;
};

/* Take what the server sent; returns false once it closed. */
static bool client_receive(struct client *c) {
        char buf[16384];
        ssize_t n;

        n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
                return false;
        if (n < 0) {
                fuzz_check(errno == EAGAIN);
                return true;
        }
        if (c->in_len + (size_t) n > c->in_size) {
                c->in_size = (c->in_len + (size_t) n) * 2;
                c->in = realloc(c->in, c->in_size);
                fuzz_check(c->in);
        }
        memcpy(c->in + c->in_len, buf, (size_t) n);
        c->in_len += (size_t) n;
        for (char *nul; (nul = memchr(c->in, 0, c->in_len)); ) {
                size_t l = (size_t) (nul - c->in);

                check_reply(c->in, l);
                c->replies++;
                memmove(c->in, nul + 1, c->in_len - l - 1);
                c->in_len -= l + 1;
        }
        return true;
}

static int client_connect(const char *dir) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        fuzz_check(fd >= 0);
        fuzz_check(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/io.bwgov.Governor", dir) <
                   (int) sizeof(sa.sun_path));
        fuzz_check(connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0);
        return fd;
}

/* Send MSG[0..len) while running the loop, then read to the end. */
static void converse(sd_event *e, const char *dir, const uint8_t *msg, size_t len) {
        struct client c = { .fd = client_connect(dir) };
        size_t sent = 0, messages = 1;
        bool open = true, shut = false;
        unsigned i;

        for (size_t k = 0; k + 1 < len; k++)
                messages += msg[k] == 0;
        for (i = 0; i < ITERATIONS_MAX && open; i++) {
                if (sent < len) {
                        ssize_t n = send(c.fd, msg + sent, len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);

                        if (n > 0)
                                sent += (size_t) n;
                        else if (n < 0 && errno != EAGAIN)
                                sent = len;     /* the server closed: it said why in a reply */
                }
                if (sent == len && !shut) {
                        (void) shutdown(c.fd, SHUT_WR);
                        shut = true;
                }
                fuzz_check(sd_event_run(e, 0) >= 0);
                open = client_receive(&c);
        }
        fuzz_check(!open);              /* the server hung up, in time */
        fuzz_check(c.in_len == 0);      /* no partial reply */
        fuzz_check(c.replies <= messages);
        free(c.in);
        close(c.fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fake f = { 0 };
        _cleanup_free_ char *dir = NULL;
        _cleanup_free_ uint8_t *msg = NULL;
        GovernorVarlink *gv = NULL;
        sd_event *e = NULL;
        Governor g = { &fake_ops, &f };

        log_set_max_level(LOG_ERR);
        fuzz_check(setenv("BWGOV_SOCKET_GROUP", "0", 1) == 0);

        fuzz_check(bw_history_new(4, &f.history) == 0);
        for (uint64_t i = 1; i <= 6; i++)
                bw_history_push(f.history, &(struct bw_history_entry) {
                        .realtime_usec = i,
                        .rule = BW_RULE_STEADY,
                        .old_bw = { .quota_usec = 50000, .period_usec = 100000 },
                        .new_bw = { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000 },
                });

        /* The input and a NUL that ends its last message. */
        msg = malloc(size + 1);
        fuzz_check(msg);
        memcpy(msg, data, size);
        msg[size] = 0;

        dir = fuzz_mkdtemp("varlink");
        fuzz_check(dir);
        fuzz_check(sd_event_new(&e) >= 0);
        fuzz_check(governor_varlink_new(e, dir, &g, &gv) == 0);

        converse(e, dir, msg, size + 1);

        governor_varlink_free(gv);
        sd_event_unref(e);
        bw_history_free(f.history);
        fuzz_check(fuzz_rm_rf(dir) == 0);
        return 0;
}
