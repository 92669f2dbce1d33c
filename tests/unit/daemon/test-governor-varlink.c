/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* io.bwgov.Governor and the varlink transport over a fake governor (a
 * governor_ops table with canned snapshots), on a real socket in a
 * temporary directory: the replies byte for byte, how the interface maps
 * the governor's errors, and when it asks the governor again. No root, no
 * Manager. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/util/macro.h"
#include "config.h"
#include "varlink/governor-varlink.h"
#include "governor.h"
#include "varlink/varlink-socket.h"

/* How long a test waits for a reply: the loop runs in steps of 10 ms. */
#define STEP_USEC (10 * USEC_PER_MSEC)
#define STEPS 500

struct fake {
        struct governor_status status;
        struct bw_history *history;
        unsigned check_kernel_calls;
        int reload_result;
        bool paused;
        bool no_telemetry;
        size_t list_limit;              /* the last ListUnits' */
};

static bool is_app(const char *name) {
        return strcmp(name, "app.slice") == 0;
}

static void fake_unit(struct governor_unit *ret) {
        *ret = (struct governor_unit) {
                .summary = {
                        .name = "app.slice",
                        .cgroup = "/app.slice",
                        .mode = BW_MODE_ELASTIC,
                        .state = "resting",
                        .present = true,
                        .adopted = true,
                        .boosted = true,
                        .baseline = { .quota_usec = 50000, .period_usec = 100000 },
                        .current = { .quota_usec = 100000, .period_usec = 100000 },
                        .has_rule = true,
                        .rule = BW_RULE_STEADY,
                        .ticks = 7,
                },
                .config.cfg.credit_max_usec = 30000000,
                .credit = { .credit_usec = 1234 },
                .has_decision = true,
                .decision.d = {
                        .rule = BW_RULE_STEADY,
                        .dt_usec = 250000,
                        .usage_rate = 900000,
                        .throttle_rate = 2000,
                        .ancestor_throttle_rate = 1000,
                        .level = 3,
                        .active = true,
                        .time_to_empty_usec = 8000000,
                        .has_rq = true,
                        .rq_wait_p99_usec = 512,
                        .rq_throttled_permille = 250,
                },
        };
}

static int fake_get_status(void *userdata, struct governor_status *ret) {
        struct fake *f = userdata;

        *ret = f->status;
        return 0;
}

/* One unit of three configured. */
static int fake_list_units(void *userdata, size_t limit, struct governor_unit **ret, size_t *ret_n,
                           size_t *ret_total) {
        struct fake *f = userdata;
        struct governor_unit *u = calloc(1, sizeof(*u));

        if (!u)
                return -ENOMEM;
        f->list_limit = limit;
        fake_unit(u);
        *ret = u;
        *ret_n = 1;
        *ret_total = 3;
        return 0;
}

static int fake_get_unit(void *userdata, const char *name, struct governor_unit *ret) {
        if (!is_app(name))
                return -ENOENT;
        fake_unit(ret);
        return 0;
}

static int fake_get_history(void *userdata, const char *name, const struct bw_history_query *q,
                            struct governor_history *ret) {
        struct fake *f = userdata;
        struct governor_history h = {
                .unit = "app.slice",
                .capacity = bw_history_capacity(f->history),
                .recorded = bw_history_pushed(f->history),
        };
        int r;

        if (!is_app(name))
                return -ENOENT;
        r = bw_history_select(f->history, q, &h.entries, &h.n_entries);
        if (r < 0)
                return r;
        *ret = h;
        return 0;
}

static int fake_explain(void *userdata, const char *name, struct governor_unit_summary *ret_summary,
                        bool *ret_has_decision, struct governor_decision *ret_decision) {
        struct governor_unit u;

        if (!is_app(name))
                return -ENOENT;
        fake_unit(&u);
        *ret_summary = u.summary;
        *ret_has_decision = false;
        *ret_decision = (struct governor_decision) { .quota_limit_usec = BW_QUOTA_MAX };
        return 0;
}

/* app.slice has telemetry: 3 waits, one of them long and half throttled. */
static int fake_get_latency(void *userdata, const char *name, struct governor_latency *ret) {
        struct fake *f = userdata;

        if (!is_app(name))
                return -ENOENT;
        *ret = (struct governor_latency) { .unit = "app.slice", .available = !f->no_telemetry };
        if (f->no_telemetry) {
                ret->reason = "turned off (Telemetry=no)";
                return 0;
        }
        ret->since_realtime_usec = 1700000000000000;
        ret->total.wait_slots[3] = 2;           /* [8, 16) us */
        ret->total.wait_slots[12] = 1;          /* [4096, 8192) us */
        ret->total.wakeups = 3;
        ret->total.wait_ns = 6000000;
        ret->total.wait_max_ns = 5000000;
        ret->total.throttled_wait_ns = 3000000;
        ret->total.throttled_waits = 1;
        return 0;
}

/* A report whose manifest did not load: the verdict could-not-check and
 * the manifest's first error as the reason. */
static int fake_check_kernel(void *userdata, struct bw_kreport **ret) {
        struct fake *f = userdata;
        struct bw_kreport *r;

        f->check_kernel_calls++;
        r = calloc(1, sizeof *r);
        if (!r || !(r->manifest_path = strdup("/m.json")) ||
            bw_kerrors_add(&r->errors, "$", "no manifest") < 0) {
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

        if (f->reload_result < 0) {
                f->status.reload_failures++;
                if (f->reload_result == -EINVAL)
                        *ret_error = (struct governor_reload_error) {
                                "/etc/bwgov/web.slice.d/10-a.conf", 3, "CPUQuota",
                                "expected a CPU percentage like 250%" };
                return f->reload_result;
        }
        f->status.reloads++;
        return 0;
}

static int fake_set_paused(void *userdata, const char *name, bool paused) {
        struct fake *f = userdata;
        bool was = f->paused;

        if (!is_app(name))
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

struct harness {
        char dir[64];
        char socket[128];
        sd_event *event;
        GovernorVarlink *gv;
        struct fake fake;
};

static int setup(void **state) {
        struct harness *t = calloc(1, sizeof(*t));
        Governor g;

        assert_non_null(t);
        strcpy(t->dir, "/tmp/bwgov-test-varlink-XXXXXX");
        assert_non_null(mkdtemp(t->dir));
        snprintf(t->socket, sizeof t->socket, "%s/io.bwgov.Governor", t->dir);
        assert_int_equal(bw_history_new(4, &t->fake.history), 0);
        for (uint64_t i = 1; i <= 6; i++) {
                struct bw_history_entry e = {
                        .realtime_usec = i,
                        .rule = BW_RULE_STEADY,
                        .credit_usec = 100 * i,
                        .old_bw = { .quota_usec = 50000, .period_usec = 100000 },
                        .new_bw = { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 7,
                                    .has_burst = true },
                };
                bw_history_push(t->fake.history, &e);
        }
        t->fake.status = (struct governor_status) {
                .counts = { .units = 4, .present = 3, .boosted = 2, .paused = 1, .spending = 1 },
                .layout = BW_CG_LAYOUT_V2,
                .bandwidth_root = "/sys/fs/cgroup",
                .interval_usec = USEC_PER_SEC,
                .mode = BW_MODE_ELASTIC,
                .reloads = 3,
                .host_other_usage_rate = 400000,
                .host_governed_excess_rate = 300000,
                .host_idle_rate = 100000,
                .host_over_limit = true,
        };
        assert_int_equal(sd_event_new(&t->event), 0);
        g = (Governor) { &fake_ops, &t->fake };
        assert_int_equal(governor_varlink_new(t->event, t->dir, &g, &t->gv), 0);
        *state = t;
        return 0;
}

static int teardown(void **state) {
        struct harness *t = *state;

        governor_varlink_free(t->gv);
        sd_event_unref(t->event);
        bw_history_free(t->fake.history);
        /* The server removes the socket it bound: the directory is empty. */
        assert_int_equal(rmdir(t->dir), 0);
        free(t);
        return 0;
}

static int client(struct harness *t) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        assert_true(fd >= 0);
        strcpy(sa.sun_path, t->socket);
        assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof sa), 0);
        return fd;
}

static void send_msg(int fd, const char *msg) {
        assert_int_equal(send(fd, msg, strlen(msg) + 1, MSG_NOSIGNAL), (ssize_t) strlen(msg) + 1);
}

/* Run the loop until a reply arrives on fd (returned, to free()) or the
 * connection ends (NULL). */
static char *receive(struct harness *t, int fd) {
        char buf[65536];
        size_t len = 0;

        for (int i = 0; i < STEPS; i++) {
                ssize_t n;

                assert_true(sd_event_run(t->event, STEP_USEC) >= 0);
                n = recv(fd, buf + len, sizeof buf - len - 1, MSG_DONTWAIT);
                if (n == 0)
                        return NULL;
                if (n < 0) {
                        assert_true(errno == EAGAIN);
                        continue;
                }
                len += (size_t) n;
                if (memchr(buf, 0, len))
                        return strdup(buf);
        }
        fail_msg("no reply and no end of the connection");
        return NULL;
}

static char *exchange(struct harness *t, int fd, const char *msg) {
        send_msg(fd, msg);
        return receive(t, fd);
}

/* One call on a connection of its own. */
static char *call(struct harness *t, const char *msg) {
        int fd = client(t);
        char *reply = exchange(t, fd, msg);

        close(fd);
        return reply;
}

/* Table: a request and the exact reply, in call order on one fake. */
static void test_replies(void **state) {
        static const struct { const char *request, *reply; } table[] = {
                { "{\"method\":\"io.bwgov.Governor.GetUnit\",\"parameters\":{\"unit\":\"nope\"}}",
                  "{\"error\":\"io.bwgov.Governor.UnitNotFound\",\"parameters\":{\"unit\":\"nope\"}}" },
                { "{\"method\":\"io.bwgov.Governor.Explain\",\"parameters\":{\"unit\":\"app.slice\"}}",
                  "{\"parameters\":{\"unit\":\"app.slice\",\"mode\":\"elastic\",\"paused\":false,\"decision\":null,"
                  "\"protection\":{\"class\":\"throughput\",\"latency_target_usec\":null,\"guarantee\":null,"
                  "\"level\":\"none\",\"p99_usec\":null,\"samples\":0,\"missed\":0,\"held\":false,\"note\":\"\","
                  "\"levers\":{},\"slice_usec\":null,\"slice_threads\":0}}}" },
                { "{\"method\":\"io.bwgov.Governor.ListUnits\"}",
                  "{\"parameters\":{\"units\":[{\"name\":\"app.slice\",\"cgroup\":\"/app.slice\",\"mode\":\"elastic\","
                  "\"state\":\"resting\",\"present\":true,\"adopted\":true,\"paused\":false,\"boosted\":true,"
                  "\"baseline\":{\"quota_usec\":50000,\"period_usec\":100000,\"burst_usec\":0,\"has_burst\":false},"
                  "\"current\":{\"quota_usec\":100000,\"period_usec\":100000,\"burst_usec\":0,\"has_burst\":false},"
                  "\"credit_usec\":1234,\"credit_max_usec\":30000000,\"rule\":\"steady\",\"ticks\":7,"
                  "\"protection\":{\"class\":\"throughput\",\"latency_target_usec\":null,\"guarantee\":null,"
                  "\"level\":\"none\",\"p99_usec\":null,\"samples\":0,\"missed\":0,\"held\":false,\"note\":\"\","
                  "\"levers\":{},\"slice_usec\":null,\"slice_threads\":0},"
                  "\"activity\":{\"dt_usec\":250000,\"usage_rate\":900000,\"throttle_rate\":2000,"
                  "\"ancestor_throttle_rate\":1000,\"level\":3,\"levels\":4,\"active\":true,"
                  "\"time_to_empty_usec\":8000000,\"rq_wait_p99_usec\":512,\"rq_throttled_permille\":250}}],"
                  "\"total\":3}}" },
                { "{\"method\":\"io.bwgov.Governor.ListUnits\",\"parameters\":{\"limit\":0}}",
                  "{\"error\":\"io.bwgov.Governor.InvalidParameter\","
                  "\"parameters\":{\"parameter\":\"limit\",\"reason\":\"must be at least 1\"}}" },
                { "{\"method\":\"io.bwgov.Governor.ListUnits\",\"parameters\":{\"limit\":\"all\"}}",
                  "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"limit\"}}" },
                /* The unit is looked up before the limit is checked. */
                { "{\"method\":\"io.bwgov.Governor.GetHistory\",\"parameters\":{\"unit\":\"nope\",\"limit\":0}}",
                  "{\"error\":\"io.bwgov.Governor.UnitNotFound\",\"parameters\":{\"unit\":\"nope\"}}" },
                { "{\"method\":\"io.bwgov.Governor.GetHistory\",\"parameters\":{\"unit\":\"app.slice\",\"limit\":0}}",
                  "{\"error\":\"io.bwgov.Governor.InvalidParameter\","
                  "\"parameters\":{\"parameter\":\"limit\",\"reason\":\"must be at least 1\"}}" },
                { "{\"method\":\"io.bwgov.Governor.GetHistory\",\"parameters\":{\"unit\":\"app.slice\",\"limit\":1}}",
                  "{\"parameters\":{\"unit\":\"app.slice\",\"capacity\":4,\"recorded\":6,\"entries\":["
                  "{\"realtime_usec\":6,\"rule\":\"steady\",\"applied\":false,\"usage_rate\":0,\"throttle_rate\":0,"
                  "\"pressure_rate\":0,\"credit_usec\":600,"
                  "\"old\":{\"quota_usec\":50000,\"period_usec\":100000,\"burst_usec\":0,\"has_burst\":false},"
                  "\"new\":{\"quota_usec\":null,\"period_usec\":100000,\"burst_usec\":7,\"has_burst\":true}}]}}" },
                { "{\"method\":\"io.bwgov.Governor.Pause\",\"parameters\":{\"unit\":\"app.slice\"}}",
                  "{\"parameters\":{\"unit\":\"app.slice\",\"changed\":true}}" },
                { "{\"method\":\"io.bwgov.Governor.Pause\",\"parameters\":{\"unit\":\"app.slice\"}}",
                  "{\"parameters\":{\"unit\":\"app.slice\",\"changed\":false}}" },
                { "{\"method\":\"io.bwgov.Governor.Resume\",\"parameters\":{\"unit\":\"nope\"}}",
                  "{\"error\":\"io.bwgov.Governor.UnitNotFound\",\"parameters\":{\"unit\":\"nope\"}}" },
                { "{\"method\":\"io.bwgov.Governor.Reload\"}",
                  "{\"parameters\":{\"reloads\":4,\"units\":4}}" },
                /* The transport: org.varlink.service and its errors. */
                { "{\"method\":\"org.varlink.service.GetInfo\"}",
                  "{\"parameters\":{\"vendor\":\"bwgov\",\"product\":\"bwgovd\",\"version\":\"" PACKAGE_VERSION "\","
                  "\"url\":\"man:bwgovd(8)\",\"interfaces\":[\"org.varlink.service\",\"io.bwgov.Governor\"]}}" },
                { "{\"method\":\"nope.X\"}",
                  "{\"error\":\"org.varlink.service.InterfaceNotFound\",\"parameters\":{\"interface\":\"nope\"}}" },
                { "{\"method\":\"io.bwgov.Governor.Nope\"}",
                  "{\"error\":\"org.varlink.service.MethodNotFound\","
                  "\"parameters\":{\"method\":\"io.bwgov.Governor.Nope\"}}" },
                { "{\"method\":\"io.bwgov.Governor.GetStatus\",\"parameters\":{\"x\":1}}",
                  "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"x\"}}" },
                { "{\"method\":\"io.bwgov.Governor.GetUnit\",\"parameters\":{\"unit\":1}}",
                  "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"unit\"}}" },
                { "{\"method\":\"io.bwgov.Governor.GetStatus\",\"upgrade\":true}",
                  "{\"error\":\"org.varlink.service.MethodNotImplemented\","
                  "\"parameters\":{\"method\":\"io.bwgov.Governor.GetStatus\"}}" },
                /* Transport errors in the interface's namespace. */
                { "{\"method\":1}",
                  "{\"error\":\"io.bwgov.Governor.InvalidMessage\","
                  "\"parameters\":{\"reason\":\"no \\\"method\\\" string\"}}" },
        };
        struct harness *t = *state;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *reply = call(t, table[i].request);

                assert_non_null(reply);
                assert_string_equal(reply, table[i].reply);
        }
}

/* ListUnits hands its limit to the governor; without one, all units. */
static void test_list_limit(void **state) {
        struct harness *t = *state;
        _cleanup_free_ char *a = NULL, *b = NULL;

        a = call(t, "{\"method\":\"io.bwgov.Governor.ListUnits\",\"parameters\":{\"limit\":2}}");
        assert_non_null(strstr(a, "\"total\":3"));
        assert_int_equal(t->fake.list_limit, 2);
        b = call(t, "{\"method\":\"io.bwgov.Governor.ListUnits\"}");
        assert_non_null(b);
        assert_true(t->fake.list_limit == SIZE_MAX);
}

static void test_reload_failed(void **state) {
        struct harness *t = *state;
        _cleanup_free_ char *reply = NULL, *bare = NULL;

        /* Where and why, in the reply (issue 17, finding 7). */
        t->fake.reload_result = -EINVAL;
        reply = call(t, "{\"method\":\"io.bwgov.Governor.Reload\"}");
        assert_string_equal(reply, "{\"error\":\"io.bwgov.Governor.ReloadFailed\",\"parameters\":{\"reason\":"
                            "\"/etc/bwgov/web.slice.d/10-a.conf:3: CPUQuota: expected a CPU percentage like 250%\","
                            "\"file\":\"/etc/bwgov/web.slice.d/10-a.conf\",\"line\":3,\"key\":\"CPUQuota\","
                            "\"message\":\"expected a CPU percentage like 250%\"}}");
        assert_int_equal(t->fake.status.reload_failures, 1);
        /* No configuration error to tell: the errno. */
        t->fake.reload_result = -ENOMEM;
        bare = call(t, "{\"method\":\"io.bwgov.Governor.Reload\"}");
        assert_string_equal(bare, "{\"error\":\"io.bwgov.Governor.ReloadFailed\",\"parameters\":{\"reason\":"
                            "\"the configuration was rejected (Cannot allocate memory)\",\"file\":null,"
                            "\"line\":null,\"key\":null,\"message\":null}}");
}

/* GetLatency: the figures from the counters, or the reason there are none. */
static void test_latency(void **state) {
        struct harness *t = *state;
        _cleanup_free_ char *reply = call(t, "{\"method\":\"io.bwgov.Governor.GetLatency\","
                                          "\"parameters\":{\"unit\":\"app.slice\"}}");
        _cleanup_free_ char *off = NULL, *unknown = NULL;
        json_t *msg = json_loads(reply, 0, NULL), *p = json_object_get(msg, "parameters"), *tot, *msg2;

        assert_non_null(p);
        assert_true(json_is_true(json_object_get(p, "available")));
        assert_true(json_is_null(json_object_get(p, "reason")));
        assert_true(json_is_null(json_object_get(p, "window")));
        tot = json_object_get(p, "total");
        assert_int_equal(json_integer_value(json_object_get(tot, "waits")), 3);
        assert_int_equal(json_integer_value(json_object_get(tot, "wait_usec")), 6000);
        assert_int_equal(json_integer_value(json_object_get(tot, "p50_usec")), 16);
        assert_int_equal(json_integer_value(json_object_get(tot, "p99_usec")), 5000);     /* capped at the max */
        assert_int_equal(json_integer_value(json_object_get(tot, "throttled_wait_usec")), 3000);
        assert_int_equal(json_array_size(json_object_get(tot, "buckets")), BW_RQ_SLOTS);
        json_decref(msg);

        t->fake.no_telemetry = true;
        off = call(t, "{\"method\":\"io.bwgov.Governor.GetLatency\",\"parameters\":{\"unit\":\"app.slice\"}}");
        msg2 = json_loads(off, 0, NULL);
        p = json_object_get(msg2, "parameters");
        assert_true(json_is_false(json_object_get(p, "available")));
        assert_string_equal(json_string_value(json_object_get(p, "reason")), "turned off (Telemetry=no)");
        assert_true(json_is_null(json_object_get(p, "total")));
        json_decref(msg2);

        unknown = call(t, "{\"method\":\"io.bwgov.Governor.GetLatency\",\"parameters\":{\"unit\":\"x\"}}");
        assert_non_null(strstr(unknown, "io.bwgov.Governor.UnitNotFound"));
}

/* GetStatus: the counts as the governor gives them, and this connection. */
static void test_status(void **state) {
        struct harness *t = *state;
        _cleanup_free_ char *reply = call(t, "{\"method\":\"io.bwgov.Governor.GetStatus\"}");
        json_t *msg = json_loads(reply, 0, NULL), *p = json_object_get(msg, "parameters");

        assert_non_null(p);
        assert_int_equal(json_integer_value(json_object_get(p, "n_units")), 4);
        assert_int_equal(json_integer_value(json_object_get(p, "n_present")), 3);
        assert_int_equal(json_integer_value(json_object_get(p, "n_boosted")), 2);
        assert_int_equal(json_integer_value(json_object_get(p, "n_paused")), 1);
        assert_int_equal(json_integer_value(json_object_get(p, "reloads")), 3);
        assert_int_equal(json_integer_value(json_object_get(p, "connections")), 1);
        assert_int_equal(json_integer_value(json_object_get(p, "pid")), getpid());
        assert_string_equal(json_string_value(json_object_get(p, "layout")), "v2");
        assert_string_equal(json_string_value(json_object_get(p, "bandwidth_root")), "/sys/fs/cgroup");
        assert_int_equal(json_integer_value(json_object_get(p, "host_other_usage_rate")), 400000);
        assert_int_equal(json_integer_value(json_object_get(p, "host_governed_excess_rate")), 300000);
        assert_int_equal(json_integer_value(json_object_get(p, "host_idle_rate")), 100000);
        assert_true(json_is_true(json_object_get(p, "host_over_limit")));
        json_decref(msg);
}

/* CheckKernel asks the governor once per reload count. */
static void test_check_kernel_cached(void **state) {
        static const char want[] =
                "{\"parameters\":{\"verdict\":\"could-not-check\",\"release\":null,\"version\":null,"
                "\"manifest\":\"/m.json\",\"patchset_version\":null,\"files_verified\":false,"
                "\"capabilities\":null,\"items\":[],\"error\":\"manifest /m.json: no manifest\"}}";
        struct harness *t = *state;

        for (unsigned i = 0; i < 3; i++) {
                _cleanup_free_ char *reply = call(t, "{\"method\":\"io.bwgov.Governor.CheckKernel\"}");
                assert_string_equal(reply, want);
        }
        assert_int_equal(t->fake.check_kernel_calls, 1);

        free(call(t, "{\"method\":\"io.bwgov.Governor.Reload\"}"));
        for (unsigned i = 0; i < 2; i++) {
                _cleanup_free_ char *reply = call(t, "{\"method\":\"io.bwgov.Governor.CheckKernel\"}");
                assert_string_equal(reply, want);
        }
        assert_int_equal(t->fake.check_kernel_calls, 2);
}

/* A oneway call is answered with nothing; the next one on the connection
 * is. An invalid message is answered, then the connection is closed. */
static void test_oneway_and_close(void **state) {
        struct harness *t = *state;
        int fd = client(t);
        _cleanup_free_ char *reply = NULL, *invalid = NULL;

        send_msg(fd, "{\"method\":\"io.bwgov.Governor.Pause\",\"parameters\":{\"unit\":\"app.slice\"},"
                 "\"oneway\":true}");
        reply = exchange(t, fd, "{\"method\":\"io.bwgov.Governor.Resume\",\"parameters\":{\"unit\":\"app.slice\"}}");
        assert_string_equal(reply, "{\"parameters\":{\"unit\":\"app.slice\",\"changed\":true}}");

        invalid = exchange(t, fd, "[]");
        assert_string_equal(invalid, "{\"error\":\"io.bwgov.Governor.InvalidMessage\","
                            "\"parameters\":{\"reason\":\"not a JSON object\"}}");
        assert_null(receive(t, fd));
        close(fd);
}

/* What the end answers without a loop (varlink_server_drain()): a
 * connection of a read call, still in the listening queue, gets its reply
 * and is closed; a call that would change something is not made (closed
 * unanswered); a connection that sends nothing is left to the budget. */
static void test_drain(void **state) {
        struct harness *t = *state;
        int a = client(t), b = client(t), c = client(t);
        char buf[65536];
        ssize_t n;
        json_t *msg;

        send_msg(a, "{\"method\":\"io.bwgov.Governor.GetStatus\"}");
        send_msg(b, "{\"method\":\"io.bwgov.Governor.Pause\",\"parameters\":{\"unit\":\"app.slice\"}}");
        governor_varlink_drain(t->gv, 200 * USEC_PER_MSEC);

        n = recv(a, buf, sizeof buf - 1, MSG_DONTWAIT);
        assert_true(n > 0);
        buf[n] = 0;
        msg = json_loads(buf, 0, NULL);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(msg, "parameters"), "n_units")), 4);
        json_decref(msg);
        assert_int_equal(recv(a, buf, sizeof buf, MSG_DONTWAIT), 0);

        assert_int_equal(recv(b, buf, sizeof buf, MSG_DONTWAIT), 0);
        assert_false(t->fake.paused);

        assert_int_equal(recv(c, buf, sizeof buf, MSG_DONTWAIT), -1);
        assert_int_equal(errno, EAGAIN);
        close(a);
        close(b);
        close(c);
}

/* The socket's group by number, or by name: looked up in a child (NSS
 * modules stay out of the daemon), with the same answer. */
static void test_socket_group(void **state) {
        gid_t gid = 12345;

        assert_int_equal(varlink_socket_group("0", &gid), 0);
        assert_int_equal(gid, 0);
        gid = 12345;
        assert_int_equal(varlink_socket_group("root", &gid), 0);
        assert_int_equal(gid, 0);
        gid = 12345;
        assert_int_equal(varlink_socket_group("bwgov-test-no-such-group", &gid), -ENOENT);
        assert_int_equal(gid, 12345);
}

int main(void) {
        char gid[32];
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_replies, setup, teardown),
                cmocka_unit_test_setup_teardown(test_list_limit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reload_failed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_latency, setup, teardown),
                cmocka_unit_test_setup_teardown(test_status, setup, teardown),
                cmocka_unit_test_setup_teardown(test_check_kernel_cached, setup, teardown),
                cmocka_unit_test_setup_teardown(test_oneway_and_close, setup, teardown),
                cmocka_unit_test_setup_teardown(test_drain, setup, teardown),
                cmocka_unit_test(test_socket_group),
        };

        /* No group lookup on the test host: the socket's group is our own. */
        snprintf(gid, sizeof gid, "%u", (unsigned) getgid());
        setenv("BWGOV_SOCKET_GROUP", gid, 1);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
