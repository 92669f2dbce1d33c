/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One unit's tick (src/daemon/unit/) over a cgroup v2 fixture tree under
 * /tmp, with the real store (a state directory under /tmp), ticker and
 * sample code, and the manager's hooks faked here. Each case drives
 * unit_tick() and checks what it wrote to cpu.max and cpu.max.burst, what it
 * returned, and what it recorded (the saved entry, the hooks, the order of
 * the steps): adoption, re-base, the cgroup vanishing at each step (one
 * outcome: assert_gone()), refused writes, a shed, a latency hold, pause,
 * restore, light samples, a value never written twice.
 *
 * Link seams (tests/unit/daemon/meson.build): clock_gettime() (CLOCK_MONOTONIC is
 * the test's clock), write() (every write to the tree is counted, and can
 * fail or make the cgroup vanish), pread64() (a removed cgroup's file fails
 * with ENODEV, as on kernfs), store_intent() (the write-ahead intent, the
 * step between the decision and its write). No root. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/cgroup/cgroupfs-mount.h"
#include "bwgov/law/history.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"
#include "log.h"
#include "unit/unit.h"
#include "unit/unit-state.h"
#include "tmptree.h"
#include "unit/unit-intent.h"
#include "unit/unit-sample.h"
#include "unit/unit-resolve.h"
#include "unit/unit-tick.h"

#define NAME "app.service"
#define CG "app.slice/" NAME

/* ---- the unit's fields the test reads (the only direct reads; everything
 * else goes through the unit's functions, the saved entry and the files) */

static uint64_t unit_external_changes(const Unit *u) {
        return u->stats.external_changes;
}

static uint64_t unit_write_errors(const Unit *u) {
        return u->stats.write_errors;
}

static uint64_t unit_light_samples(const Unit *u) {
        return u->stats.light_samples;
}

static bool unit_is_parked(const Unit *u) {
        return u->sampler.parked;
}

/* The usage its last sample took. */
static uint64_t unit_last_usage(const Unit *u) {
        return u->sampler.last_stat.usage_usec;
}

/* Its next sample a full one. */
static void full_sample_next(Unit *u) {
        u->sampler.full_due = true;
}

/* Its last sample read a usage. */
static bool unit_last_has_usage(const Unit *u) {
        return u->sampler.has_last_stat && (u->sampler.last_stat.seen & BW_CPUSTAT_USAGE);
}

/* The newest entry of its history (i = 0), NULL when none. */
static const struct bw_history_entry *unit_history(const Unit *u, size_t i) {
        return bw_history_newest(&u->hist.log, i);
}

/* The rule of the last decision, _BW_RULE_INVALID when none. */
static enum bw_rule unit_last_rule(const Unit *u) {
        return u->prev.has ? u->prev.decision.rule : _BW_RULE_INVALID;
}

/* ---- the fixture ------------------------------------------------------- */

enum fault {
        FAULT_NONE,
        FAULT_VANISH,           /* the cgroup is removed */
        FAULT_EXTERNAL,         /* someone else writes cpu.max (EXTERNAL_QUOTA) */
};

#define EXTERNAL_QUOTA "30000 100000"

struct fixture {
        char dir[64], tree[96], state[96];      /* under dir: the cgroup2 root, the state directory */
        struct bw_cg_root *root;
        sd_event *event;
        Ticker *ticker;         /* real, its loop never run */
        Store *store;
        struct bw_config config;
        struct bw_unit_config ucfg;
        struct unit_context ctx;
        bool host_over_limit, stopping, said, rest_at_baseline;
        size_t fds_held;
        unsigned fd_keep, fd_share, trigger_closes_left;
        Rqstat *rqstat;         /* NULL: none */
        Unit *u;

        uint64_t usage, periods, throttled, throttled_usec;
        /* Recorded: writes to the tree and their order with the hooks. */
        unsigned writes_max, writes_burst, intents;
        unsigned decided, recorded;     /* the decide and record steps run (bw_policy_decide(), the history entry) */
        unsigned adopted, cgroup_changed, quota_changed;
        uint64_t ticks_counted;
        unsigned stat_reads;    /* reads of the cgroup's cpu.stat */
        char events[512];
        /* Injected. */
        const char *fail_file;  /* a write to this file fails ... */
        int fail_errno;         /* ... with this errno (ENODEV: the cgroup vanished) */
        bool fail_vanish;       /* ... and the cgroup vanished with any errno */
        enum fault at_intent, at_adopted;
};

static struct fixture *F;
static uint64_t fake_now;

_printf_(1, 2) static void event(const char *fmt, ...) {
        size_t n = strlen(F->events);
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(F->events + n, sizeof(F->events) - n, fmt, ap);
        va_end(ap);
}

/* The file's content, without its newline. */
static const char *get(const char *name) {
        static char b[128];
        char p[PATH_MAX];
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s/%s", F->tree, CG, name);
        f = fopen(p, "re");
        if (!f)
                return "(none)";
        if (!fgets(b, sizeof(b), f))
                b[0] = '\0';
        fclose(f);
        b[strcspn(b, "\n")] = '\0';
        return b;
}

static void vanish(void) {
        static const char *const files[] = { "cpu.max", "cpu.max.burst", "cpu.stat", "cpu.pressure" };
        char p[PATH_MAX];

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                snprintf(p, sizeof(p), "%s/%s/%s", F->tree, CG, files[i]);
                (void) unlink(p);
        }
        snprintf(p, sizeof(p), "%s/%s", F->tree, CG);
        assert_int_equal(rmdir(p), 0);
        event("vanish ");
}

/* Once. */
static void fault(enum fault *what) {
        if (*what == FAULT_VANISH)
                vanish();
        else if (*what == FAULT_EXTERNAL)
                tmptree_put(F->tree, CG "/cpu.max", EXTERNAL_QUOTA "\n");
        *what = FAULT_NONE;
}

/* ---- link seams ---------------------------------------------------------- */

int __real_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_gettime(clockid_t id, struct timespec *ts) {
        if (id != CLOCK_MONOTONIC || !F)
                return __real_clock_gettime(id, ts);
        ts->tv_sec = (time_t) (fake_now / USEC_PER_SEC);
        ts->tv_nsec = (long) (fake_now % USEC_PER_SEC) * 1000;
        return 0;
}

/* The name of the file fd has open in the tree, NULL for one elsewhere. */
static const char *tree_file(int fd, char path[static PATH_MAX]) {
        char link[64];
        size_t len;
        ssize_t n;

        if (!F)
                return NULL;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, path, PATH_MAX - 1);
        len = strlen(F->tree);
        if (n <= 0 || (size_t) n <= len || strncmp(path, F->tree, len) != 0 || path[len] != '/')
                return NULL;
        path[n] = '\0';
        return strrchr(path, '/') + 1;
}

ssize_t __real_write(int fd, const void *buf, size_t count);
ssize_t __wrap_write(int fd, const void *buf, size_t count);
ssize_t __wrap_write(int fd, const void *buf, size_t count) {
        char path[PATH_MAX];
        const char *name = tree_file(fd, path);

        if (!name)
                return __real_write(fd, buf, count);
        if (F->fail_file && strcmp(name, F->fail_file) == 0) {
                event("refused:%s ", name);
                if (F->fail_errno == ENODEV || F->fail_vanish)
                        vanish();
                errno = F->fail_errno;
                return -1;
        }
        if (strcmp(name, "cpu.max") == 0)
                F->writes_max++;
        else if (strcmp(name, "cpu.max.burst") == 0)
                F->writes_burst++;
        event("write:%s=%.*s ", name, (int) strcspn(buf, "\n"), (const char *) buf);
        return __real_write(fd, buf, count);
}

/* kernfs fails a read of a removed cgroup's file with ENODEV; an ordinary
 * filesystem reads the unlinked file (the library checks st_nlink only in
 * full samples): reads of the tree's files behave as on kernfs. */
ssize_t __real_pread64(int fd, void *buf, size_t count, off_t offset);
ssize_t __wrap_pread64(int fd, void *buf, size_t count, off_t offset);
ssize_t __wrap_pread64(int fd, void *buf, size_t count, off_t offset) {
        char path[PATH_MAX];
        struct stat st;

        if (tree_file(fd, path) && fstat(fd, &st) >= 0 && st.st_nlink == 0) {
                errno = ENODEV;
                return -1;
        }
        if (F && tree_file(fd, path) && strcmp(path + strlen(path) - strlen("/cpu.stat"), "/cpu.stat") == 0)
                F->stat_reads++;
        return __real_pread64(fd, buf, count, offset);
}

int __real_store_intent(Store *s, const char *name, const struct bw_bandwidth *target, bool save);
int __wrap_store_intent(Store *s, const char *name, const struct bw_bandwidth *target, bool save);
int __wrap_store_intent(Store *s, const char *name, const struct bw_bandwidth *target, bool save) {
        F->intents++;
        event("intent ");
        fault(&F->at_intent);
        return __real_store_intent(s, name, target, save);
}

/* The law (the decide step) and the history entry (the record step), counted. */
int __real_bw_policy_decide(const struct bw_policy_params *p, struct bw_policy_state *s,
                            const struct bw_policy_input *in, struct bw_decision *ret);
int __wrap_bw_policy_decide(const struct bw_policy_params *p, struct bw_policy_state *s,
                            const struct bw_policy_input *in, struct bw_decision *ret);
int __wrap_bw_policy_decide(const struct bw_policy_params *p, struct bw_policy_state *s,
                            const struct bw_policy_input *in, struct bw_decision *ret) {
        F->decided++;
        return __real_bw_policy_decide(p, s, in, ret);
}

void __real_bw_history_entry_from_decision(const struct bw_decision *d, const struct bw_bandwidth *old_bw,
                                           uint64_t realtime_usec, bool applied, struct bw_history_entry *ret);
void __wrap_bw_history_entry_from_decision(const struct bw_decision *d, const struct bw_bandwidth *old_bw,
                                           uint64_t realtime_usec, bool applied, struct bw_history_entry *ret);
void __wrap_bw_history_entry_from_decision(const struct bw_decision *d, const struct bw_bandwidth *old_bw,
                                           uint64_t realtime_usec, bool applied, struct bw_history_entry *ret) {
        F->recorded++;
        __real_bw_history_entry_from_decision(d, old_bw, realtime_usec, applied, ret);
}

/* systemd's intent is not there (every unit has Cgroup=); the run-queue
 * telemetry neither (the context's is NULL), except for the activity tests,
 * which point it at act: one slot, its flag the test sets as the BPF
 * programs would when a task of the cgroup runs. */
int sdintent_read(SdIntent *s, const char *unit, uint64_t *ret_quota_usec, uint64_t *ret_period_usec) {
        return 0;
}

static struct {
        uint32_t flag;          /* 0 armed, 1: a task ran since the last arm (or unknown), 2 armed to wake */
        bool can_wake;          /* the ring buffer is followed */
        unsigned arms;
        uint64_t watched;       /* the cpu directory's id watched, 0 for none */
} act;

#define ACT_RQSTAT ((Rqstat *) &act)

int rqstat_track(Rqstat *t, uint64_t cgroup_id) {
        return t == ACT_RQSTAT ? 0 : -EOPNOTSUPP;
}

int rqstat_untrack(Rqstat *t, uint64_t cgroup_id) {
        return 0;
}

int rqstat_read(Rqstat *t, uint64_t cgroup_id, struct bw_rq_counters *ret) {
        if (t != ACT_RQSTAT)
                return -ENOENT;
        *ret = (struct bw_rq_counters) {0};
        return 0;
}

int rqstat_cgroup_id(int dirfd, uint64_t *ret) {
        struct stat st;

        if (fstat(dirfd, &st) < 0)
                return -errno;
        *ret = (uint64_t) st.st_ino;
        return 0;
}

int rqstat_watch(Rqstat *t, uint64_t cpu_cgroup_id, void *owner, uint32_t *ret_slot) {
        assert_ptr_equal(t, ACT_RQSTAT);
        assert_int_equal(act.watched, 0);
        act.watched = cpu_cgroup_id;
        act.flag = 1;
        *ret_slot = 0;
        return 0;
}

int rqstat_unwatch(Rqstat *t, uint32_t slot) {
        assert_int_equal(slot, 0);
        act.watched = 0;
        return 0;
}

void rqstat_arm(Rqstat *t, uint32_t slot) {
        assert_int_equal(slot, 0);
        act.flag = 0;
        act.arms++;
}

bool rqstat_ran(const Rqstat *t, uint32_t slot) {
        assert_int_equal(slot, 0);
        return act.flag == 1;
}

bool rqstat_can_wake(const Rqstat *t) {
        return t == ACT_RQSTAT && act.can_wake;
}

void rqstat_arm_wake(Rqstat *t, uint32_t slot) {
        assert_int_equal(slot, 0);
        assert_true(act.can_wake);
        act.flag = 2;
        act.arms++;
}

bool rqstat_arm_wake_still(Rqstat *t, uint32_t slot) {
        assert_int_equal(slot, 0);
        assert_true(act.can_wake);
        if (act.flag == 1)
                return false;
        act.flag = 2;
        return true;
}

/* ---- the manager's hooks ------------------------------------------------- */

static int hook_claim(Unit *u, const char *path, dev_t dev, ino_t ino, bool take, void *userdata) {
        return 0;
}

static void hook_cgroup_changed(Unit *u, void *userdata) {
        F->cgroup_changed++;
        event("cgroup_changed ");
}

static void hook_adopted(Unit *u, void *userdata) {
        F->adopted++;
        event("adopted ");
        fault(&F->at_adopted);
}

static void hook_lowering(Unit *u, uint64_t quota_usec, uint64_t period_usec, void *userdata) {
        fail_msg("lowering is cgroup v1's, the fixture is v2");
}

static void hook_quota_changed(Unit *u, void *userdata) {
        F->quota_changed++;
        event("quota_changed ");
}

static void hook_count(Unit *u, const struct unit_counters *delta, void *userdata) {
        F->ticks_counted += delta->ticks;
        F->fds_held += (size_t) delta->fds;     /* as the manager counts them */
}

static const struct unit_hooks hooks = {
        .claim = hook_claim,
        .cgroup_changed = hook_cgroup_changed,
        .adopted = hook_adopted,
        .lowering = hook_lowering,
        .quota_changed = hook_quota_changed,
        .count = hook_count,
};

/* ---- setup --------------------------------------------------------------- */

static void stat_put(void) {
        char b[512];

        snprintf(b, sizeof(b), "usage_usec %" PRIu64 "\nuser_usec %" PRIu64 "\nsystem_usec 0\nnr_periods %" PRIu64
                 "\nnr_throttled %" PRIu64 "\nthrottled_usec %" PRIu64 "\nnr_bursts 0\nburst_usec 0\n",
                 F->usage, F->usage, F->periods, F->throttled, F->throttled_usec);
        tmptree_put(F->tree, CG "/cpu.stat", b);
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        F = f;
        fake_now = 1000 * USEC_PER_SEC;
        snprintf(f->dir, sizeof(f->dir), "/tmp/bwgov-test-unit-tick-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->tree, sizeof(f->tree), "%s/cg", f->dir);
        snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
        tmptree_put(f->tree, "cgroup.controllers", "cpu io memory\n");
        tmptree_put(f->tree, CG "/cpu.max", "50000 100000\n");
        tmptree_put(f->tree, CG "/cpu.max.burst", "0\n");
        tmptree_put(f->tree, CG "/cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                                         "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        f->usage = 1000;
        stat_put();
        memset(&act, 0, sizeof(act));
        assert_int_equal(mkdir(f->state, 0755), 0);

        assert_int_equal(bw_cg_root_open_dir(f->tree, &f->root), 0);
        assert_int_equal(sd_event_new(&f->event), 0);
        assert_int_equal(ticker_new(f->event, NULL, NULL, &f->ticker), 0);
        assert_int_equal(store_new(f->event, NULL, &f->store), 0);
        assert_int_equal(store_open(f->store, f->state), 0);
        f->config.global = (struct bw_global_config) {
                .interval_usec = USEC_PER_SEC,
                .mode = BW_MODE_ELASTIC,
                .host_pressure_limit = 40 * BW_PERCENT_UNIT,
                .pressure_window_usec = 2 * USEC_PER_SEC,
                .history_size = 16,
                .active_interval_usec = 250 * USEC_PER_MSEC,
        };
        f->ucfg = (struct bw_unit_config) {
                .name = (char *) NAME,
                .cgroup = (char *) CG,
                .credit_max_usec = 30 * USEC_PER_SEC,
                .target_throttle = BW_PERCENT_UNIT,
                .target_pressure = 5 * BW_PERCENT_UNIT,
                .target_wait_p99_usec = 50 * USEC_PER_MSEC,
        };
        f->fd_keep = UNIT_FILES_ALL;
        f->fd_share = 1000;
        f->trigger_closes_left = 100;
        f->ctx = (struct unit_context) {
                .event = f->event, .ticker = f->ticker, .config = &f->config, .root = f->root, .store = f->store,
                .ncpus = 2, .burst_supported = true, .host_over_limit = &f->host_over_limit,
                .stopping = &f->stopping, .rqstat = &f->rqstat, .hooks = &hooks,
                /* Descriptors: plenty, every file kept. */
                .fd_limit_said = &f->said, .quota_watch_said = &f->said, .fds_held = &f->fds_held, .fd_budget = 1000,
                .fd_keep = &f->fd_keep, .fd_share = &f->fd_share, .trigger_closes_left = &f->trigger_closes_left,
        };
        assert_int_equal(unit_new(&f->ctx, &f->ucfg, &f->u), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        unit_free(f->u);
        store_free(f->store);
        ticker_free(f->ticker);
        sd_event_unref(f->event);
        bw_cg_root_free(f->root);
        tmptree_remove(f->dir);
        free(f);
        F = NULL;
        return 0;
}

/* ---- driving the tick ------------------------------------------------------ */

static void records_reset(void) {
        F->events[0] = '\0';
        F->writes_max = F->writes_burst = F->intents = 0;
}

/* One second later the group used usage_per_sec (µs/s), throttled in
 * throttled_periods of its 10 periods; then a tick. Records start afresh. */
static int tick_after(uint64_t usage_per_sec, unsigned throttled_periods) {
        F->usage += usage_per_sec;
        F->periods += 10;
        F->throttled += throttled_periods;
        F->throttled_usec += throttled_periods * 50000;
        stat_put();
        fake_now += USEC_PER_SEC;
        records_reset();
        return unit_tick(F->u, fake_now);
}

static const struct bw_state_unit *entry(void) {
        return store_find(F->store, NAME);
}

/* The first tick: adopted at 50000/100000 (burst 0), resting at four times
 * that (CPUQuotaMax= by default), the burst at the baseline quota. */
static void adopt(void) {
        assert_int_equal(tick_after(0, 0), 0);
        assert_string_equal(get("cpu.max"), "200000 100000");
        assert_string_equal(get("cpu.max.burst"), "50000");
        assert_int_equal(unit_state(F->u), UNIT_STATE_RESTING);
}

/* "The cgroup is gone", whichever step met it: the tick returns 0 (no
 * error), wrote nothing, the cgroup is closed (the manager told), the unit
 * not adopted and its saved entry forgotten (a cgroup of the name later is
 * adopted afresh). */
static void assert_gone(int r) {
        assert_int_equal(r, 0);
        assert_int_equal(F->writes_max + F->writes_burst, 0);
        assert_int_equal(unit_state(F->u), UNIT_STATE_ABSENT);
        assert_null(entry());
        assert_non_null(strstr(F->events, "cgroup_changed"));
        assert_int_equal(unit_write_errors(F->u), 0);
}

/* ---- the cases --------------------------------------------------------------- */

/* Observe, reconcile (adopt), decide, act (intent saved, then the quota
 * raised before the burst), record: in that order. */
static void test_adopt(void **state) {
        const struct bw_history_entry *h;
        const struct bw_state_unit *su;

        assert_int_equal(unit_state(F->u), UNIT_STATE_ABSENT);
        adopt();
        assert_string_equal(F->events, "cgroup_changed adopted intent write:cpu.max=200000 100000 "
                                       "write:cpu.max.burst=50000 quota_changed ");
        assert_int_equal(F->adopted, 1);
        assert_int_equal(F->ticks_counted, 1);
        assert_int_equal(unit_last_rule(F->u), BW_RULE_PRIME);
        assert_int_equal(unit_external_changes(F->u), 0);
        /* Recorded after the write: applied, from what the kernel held. */
        assert_non_null(h = unit_history(F->u, 0));
        assert_int_equal(h->rule, BW_RULE_PRIME);
        assert_true(h->applied);
        assert_int_equal(h->old_bw.quota_usec, 50000);
        assert_int_equal(h->new_bw.quota_usec, 200000);
        assert_non_null(su = entry());
        assert_int_equal(su->baseline.quota_usec, 50000);
        assert_int_equal(su->baseline.period_usec, 100000);
        assert_int_equal(su->baseline.burst_usec, 0);
        assert_true(su->has_written);
        assert_int_equal(su->written.quota_usec, 200000);
        assert_int_equal(su->written.burst_usec, 50000);
        assert_int_equal(su->credit_usec, 30 * USEC_PER_SEC);
}

/* The first decision rests under the nearest limited ancestor: adoption
 * (the contract's period) comes before the sample that reads it. */
static void test_adopt_under_limited_ancestor(void **state) {
        tmptree_put(F->tree, "app.slice/cpu.max", "150000 100000\n");
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_last_rule(F->u), BW_RULE_PRIME);
        assert_string_equal(get("cpu.max"), "150000 100000");
}

/* CPUQuota= names the contract: adoption puts it in place. Today the
 * tick's decision still starts from the value read before that write
 * (unit_adopt() does not update it), so unit_apply() finds cpu.max changed
 * and writes nothing: the unit rests above the contract one tick later. */
static void test_adopt_configured_quota(void **state) {
        F->u = unit_free(F->u);
        F->ucfg.cpu_quota = 200000;             /* 20 %: 20000/100000 */
        assert_int_equal(unit_new(&F->ctx, &F->ucfg, &F->u), 0);
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(entry()->baseline.quota_usec, 20000);
        assert_non_null(strstr(F->events, "adopted intent write:cpu.max=20000 100000 "));
        assert_int_equal(F->writes_max, 1);
        assert_string_equal(get("cpu.max"), "20000 100000");
        assert_int_equal(unit_external_changes(F->u), 0);
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_external_changes(F->u), 0);
        assert_string_equal(get("cpu.max"), "80000 100000");
        assert_string_equal(get("cpu.max.burst"), "20000");
}

/* Someone else wrote cpu.max: counted, their value the new contract, the
 * decision taken from it (not from ours: never written back). */
static void test_rebase(void **state) {
        adopt();
        tmptree_put(F->tree, CG "/cpu.max", EXTERNAL_QUOTA "\n");
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_external_changes(F->u), 1);
        assert_int_equal(entry()->baseline.quota_usec, 30000);
        assert_null(strstr(F->events, "cpu.max=200000"));
        assert_string_equal(get("cpu.max"), "120000 100000");
        assert_int_equal(entry()->written.quota_usec, 120000);
        /* Once: the next tick finds what it wrote. */
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_external_changes(F->u), 1);
        assert_int_equal(F->writes_max + F->writes_burst, 0);
}

/* cpu.max changed between the decision and its write (during the
 * write-ahead save): nothing written, the next tick re-bases. */
static void test_changed_while_deciding(void **state) {
        adopt();
        F->at_intent = FAULT_EXTERNAL;
        unit_set_headroom_cap(F->u, UNIT_CAP_HOST_SHED, 1000, fake_now);
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(F->intents, 1);
        assert_int_equal(F->writes_max + F->writes_burst, 0);
        assert_string_equal(get("cpu.max"), EXTERNAL_QUOTA);
        assert_int_equal(unit_external_changes(F->u), 0);
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_external_changes(F->u), 1);
        assert_int_equal(entry()->baseline.quota_usec, 30000);
}

/* Before the tick: its first read fails. */
static void test_gone_before_tick(void **state) {
        unsigned n, h;

        adopt();
        n = F->decided;
        h = F->recorded;
        vanish();
        assert_gone(tick_after(0, 0));
        /* observe said gone: nothing decided, nothing recorded */
        assert_int_equal(F->decided, n);
        assert_int_equal(F->recorded, h);
}

/* Between reconcile and the sample: adopted, then gone. */
static void test_gone_after_adopt(void **state) {
        F->at_adopted = FAULT_VANISH;
        assert_gone(tick_after(0, 0));
        assert_int_equal(F->adopted, 1);
        /* found by the write (act): decided, never recorded */
        assert_int_equal(F->decided, 1);
        assert_int_equal(F->recorded, 0);
}

/* Between the decision and its write: gone while its intent is saved. */
static void test_gone_before_write(void **state) {
        unsigned n, h;

        adopt();
        n = F->decided;
        h = F->recorded;
        F->at_intent = FAULT_VANISH;
        unit_set_headroom_cap(F->u, UNIT_CAP_HOST_SHED, 1000, fake_now);
        assert_gone(tick_after(0, 0));
        assert_int_equal(F->intents, 1);
        /* act said gone: decided, not recorded */
        assert_int_equal(F->decided, n + 1);
        assert_int_equal(F->recorded, h);
}

/* At the write: the kernel says ENODEV. */
static void test_gone_at_write(void **state) {
        F->fail_file = "cpu.max";
        F->fail_errno = ENODEV;
        assert_gone(tick_after(0, 0));
        assert_non_null(strstr(F->events, "intent refused:cpu.max vanish "));
        assert_int_equal(F->decided, 1);
        assert_int_equal(F->recorded, 0);
}

/* In reconcile, at the write of an intent (a quota write the kernel refused
 * for bwgovd's burst, put in place): gone before the law is asked, whether
 * the kernel says ENODEV or ENOENT (the file gone with its directory). */
static void gone_at_intent_write(int err) {
        struct bw_refused_write w = { .period_usec = 100000, .quota_usec = 30000, .burst_usec = 200000,
                                      .tgid = 42, .comm = "writer" };
        unsigned n, h;

        adopt();
        n = F->decided;
        h = F->recorded;
        unit_refused_write(F->u, &w);
        F->fail_file = "cpu.max.burst";        /* lowered first, under the new quota */
        F->fail_errno = err;
        F->fail_vanish = true;
        assert_gone(tick_after(0, 0));
        assert_non_null(strstr(F->events, "refused:cpu.max.burst"));
        assert_int_equal(F->decided, n);
        assert_int_equal(F->recorded, h);
}

static void test_gone_at_intent_write(void **state) {
        gone_at_intent_write(ENODEV);
}

static void test_gone_at_intent_write_enoent(void **state) {
        gone_at_intent_write(ENOENT);
}

/* A refused write whose period the kernel would not take (nor struct
 * bw_bandwidth hold) is not put in place, and not tried again. */
static void test_refused_write_bad_period(void **state) {
        struct bw_refused_write w = { .period_usec = 2000000, .quota_usec = 30000, .tgid = 42, .comm = "writer" };

        adopt();
        unit_refused_write(F->u, &w);
        assert_int_equal(tick_after(0, 0), -ERANGE);
        assert_string_equal(get("cpu.max"), "200000 100000");
        assert_int_equal(F->writes_max + F->writes_burst, 0);
        assert_int_equal(tick_after(0, 0), 0);
        assert_string_equal(get("cpu.max"), "200000 100000");
}

/* Someone's write the kernel refused for bwgovd's burst is put in place
 * and re-based on, once. Told again after that (the same write of PID 1,
 * put in place as systemd's intent before the kernel's word of it came
 * in), it is the contract already: the boost since stays, no second
 * external change. */
static void test_refused_write_once(void **state) {
        struct bw_refused_write w = { .period_usec = 100000, .quota_usec = 30000, .burst_usec = 50000,
                                      .tgid = 1, .comm = "systemd" };

        adopt();
        unit_refused_write(F->u, &w);
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(entry()->baseline.quota_usec, 30000);
        assert_int_equal(unit_external_changes(F->u), 1);
        assert_int_equal(tick_after(0, 0), 0);
        assert_string_equal(get("cpu.max"), "120000 100000");

        unit_refused_write(F->u, &w);
        full_sample_next(F->u);         /* intents are followed in full samples */
        assert_int_equal(tick_after(0, 0), 0);
        assert_string_equal(get("cpu.max"), "120000 100000");
        assert_int_equal(F->writes_max + F->writes_burst, 0);
        assert_int_equal(unit_external_changes(F->u), 1);
        assert_int_equal(entry()->baseline.quota_usec, 30000);
}

/* In a light sample (a quiet unit: cpu.stat and the quota file only). */
static void test_gone_light_sample(void **state) {
        uint64_t light;
        unsigned n, h;

        adopt();
        for (int i = 0; i < 3; i++)
                assert_int_equal(tick_after(0, 0), 0);
        light = unit_light_samples(F->u);
        assert_true(light > 0);
        n = F->decided;
        h = F->recorded;
        vanish();
        assert_gone(tick_after(0, 0));
        assert_int_equal(unit_light_samples(F->u), light);
        assert_int_equal(F->decided, n);
        assert_int_equal(F->recorded, h);
}

/* Its bandwidth files went but the directory stays (the controller
 * disabled above it): closed, not adopted, but its saved entry kept, so
 * that what bwgov wrote there is recognised when the files are back. */
static void test_files_gone_cgroup_stays(void **state) {
        char p[PATH_MAX];

        adopt();
        snprintf(p, sizeof(p), "%s/%s/cpu.max", F->tree, CG);
        assert_int_equal(unlink(p), 0);
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_state(F->u), UNIT_STATE_ABSENT);
        assert_non_null(entry());
        assert_int_equal(entry()->written.quota_usec, 200000);
        tmptree_put(F->tree, CG "/cpu.max", "200000 100000\n");
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_external_changes(F->u), 0);
        assert_int_equal(entry()->baseline.quota_usec, 50000);
        assert_int_equal(F->writes_max, 0);
}

/* A gone cgroup made again is adopted afresh, from what it holds. */
static void test_gone_and_back(void **state) {
        adopt();
        vanish();
        assert_gone(tick_after(0, 0));
        tmptree_put(F->tree, CG "/cpu.max", "40000 100000\n");
        tmptree_put(F->tree, CG "/cpu.max.burst", "0\n");
        F->usage = 1000;
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(F->adopted, 2);
        assert_int_equal(unit_external_changes(F->u), 0);
        assert_int_equal(entry()->baseline.quota_usec, 40000);
        assert_string_equal(get("cpu.max"), "160000 100000");
}

/* The kernel refuses the write (EINVAL, EBUSY): counted, the tick goes on
 * (no error, still governed), the file as it was; tried again next tick. */
static void refused_write(int error) {
        F->fail_file = "cpu.max";
        F->fail_errno = error;
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_write_errors(F->u), 1);
        assert_string_equal(get("cpu.max"), "50000 100000");
        assert_int_equal(F->quota_changed, 0);
        assert_int_not_equal(unit_state(F->u), UNIT_STATE_ABSENT);
        assert_int_not_equal(unit_state(F->u), UNIT_STATE_NEW);
        assert_false(entry()->has_written);
        F->fail_file = NULL;
        assert_int_equal(tick_after(0, 0), 0);
        assert_string_equal(get("cpu.max"), "200000 100000");
        assert_int_equal(unit_write_errors(F->u), 1);
}

static void test_refused_einval(void **state) {
        refused_write(EINVAL);
}

static void test_refused_ebusy(void **state) {
        refused_write(EBUSY);
}

/* A shed: the next decision gives up that share of the headroom. */
static void test_shed(void **state) {
        adopt();
        unit_set_headroom_cap(F->u, UNIT_CAP_HOST_SHED, 500, fake_now);
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_last_rule(F->u), BW_RULE_HOST_SHED);
        assert_string_equal(get("cpu.max"), "125000 100000");
        /* Applied once. */
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_not_equal(unit_last_rule(F->u), BW_RULE_HOST_SHED);
}

/* A latency hold withdraws all headroom at once and keeps it withdrawn;
 * let go, the headroom comes back. */
static void test_latency_hold(void **state) {
        adopt();
        unit_set_headroom_cap(F->u, UNIT_CAP_LATENCY_HOLD, 1000, fake_now);
        assert_int_equal(tick_after(0, 0), 0);
        assert_string_equal(get("cpu.max"), "50000 100000");
        for (int i = 0; i < 3; i++) {
                assert_int_equal(tick_after(0, 0), 0);
                assert_int_equal(F->writes_max, 0);
        }
        unit_set_headroom_cap(F->u, UNIT_CAP_LATENCY_HOLD, 0, fake_now);
        for (int i = 0; i < 40 && strcmp(get("cpu.max"), "50000 100000") == 0; i++)
                assert_int_equal(tick_after(0, 0), 0);
        assert_string_not_equal(get("cpu.max"), "50000 100000");
}

/* bwgov never writes a value the file already holds: quiet ticks write
 * nothing, and neither does an apply of what is there. */
static void test_no_identical_write(void **state) {
        struct bw_bandwidth cur = { .quota_usec = 200000, .period_usec = 100000, .burst_usec = 50000, .has_burst = 1 };
        struct stat st0, st1;
        char p[PATH_MAX];

        adopt();
        snprintf(p, sizeof(p), "%s/%s/cpu.max", F->tree, CG);
        assert_int_equal(stat(p, &st0), 0);
        for (int i = 0; i < 10; i++) {
                assert_int_equal(tick_after(i % 2 ? 20000 : 0, 0), 0);
                assert_int_equal(F->writes_max + F->writes_burst, 0);
        }
        assert_int_equal(unit_apply(F->u, &cur, &cur, "test"), 0);
        assert_int_equal(F->writes_max + F->writes_burst, 0);
        assert_int_equal(stat(p, &st1), 0);
        assert_int_equal(st0.st_mtim.tv_sec, st1.st_mtim.tv_sec);
        assert_int_equal(st0.st_mtim.tv_nsec, st1.st_mtim.tv_nsec);
}

/* Paused: the baseline back, then observed (decisions, ticks) but never
 * written, however throttled; resumed, governed again. */
static void test_paused(void **state) {
        adopt();
        unit_set_paused(F->u, true);
        assert_string_equal(get("cpu.max"), "50000 100000");
        assert_string_equal(get("cpu.max.burst"), "0");
        assert_true(entry()->paused);
        for (int i = 0; i < 5; i++) {
                assert_int_equal(tick_after(500000, 10), 0);
                assert_int_equal(F->writes_max + F->writes_burst + F->intents, 0);
                assert_int_equal(unit_state(F->u), UNIT_STATE_PAUSED);
        }
        assert_int_equal(F->ticks_counted, 6);
        unit_set_paused(F->u, false);
        assert_int_equal(tick_after(0, 0), 0);
        assert_string_not_equal(get("cpu.max"), "50000 100000");
}

/* Stop: the baseline (quota and burst) written back, the saved entry
 * without a value of ours; a stopping daemon's tick does nothing. */
static void test_restore_on_stop(void **state) {
        adopt();
        F->stopping = true;
        /* unit_apply()'s count of files written (unit.h says 1). */
        assert_true(unit_restore_baseline(F->u, "stop") > 0);
        assert_string_equal(get("cpu.max"), "50000 100000");
        assert_string_equal(get("cpu.max.burst"), "0");
        assert_false(entry()->has_written);
        assert_int_equal(tick_after(500000, 10), 0);
        assert_string_equal(F->events, "");
        assert_int_equal(F->ticks_counted, 1);
        /* Restored already: nothing to write. */
        assert_int_equal(unit_restore_baseline(F->u, "stop"), 0);
}

/* A restore never writes over someone else's quota: only the burst,
 * still ours, goes back. */
static void test_restore_not_ours(void **state) {
        adopt();
        tmptree_put(F->tree, CG "/cpu.max", EXTERNAL_QUOTA "\n");
        records_reset();
        assert_int_equal(unit_restore_baseline(F->u, "stop"), 1);
        assert_string_equal(get("cpu.max"), EXTERNAL_QUOTA);
        assert_string_equal(get("cpu.max.burst"), "0");
        assert_int_equal(F->writes_max, 0);
}

/* A quiet unit's samples go light (cpu.stat and the quota file only); a
 * quota written by someone else still ends one in a re-base. */
static void test_light_samples(void **state) {
        uint64_t light;

        adopt();
        for (int i = 0; i < 5; i++)
                assert_int_equal(tick_after(0, 0), 0);
        light = unit_light_samples(F->u);
        assert_true(light >= 3);
        tmptree_put(F->tree, CG "/cpu.max", EXTERNAL_QUOTA "\n");
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_light_samples(F->u), light);
        assert_int_equal(unit_external_changes(F->u), 1);
        assert_int_equal(entry()->baseline.quota_usec, 30000);
}

/* A sample 10 ms after the last decides nothing and writes nothing; a shed
 * it met is kept for the next. */
static void test_too_soon(void **state) {
        adopt();
        unit_set_headroom_cap(F->u, UNIT_CAP_HOST_SHED, 1000, fake_now);
        fake_now += 10 * USEC_PER_MSEC;
        records_reset();
        assert_int_equal(unit_tick(F->u, fake_now), 0);
        assert_int_equal(unit_last_rule(F->u), BW_RULE_TOO_SOON);
        assert_string_equal(F->events, "");
        assert_string_equal(get("cpu.max"), "200000 100000");
        assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(unit_last_rule(F->u), BW_RULE_HOST_SHED);
        assert_string_equal(get("cpu.max"), "50000 100000");
}

/* The activity tests' fixture: the fake telemetry (act), quota files
 * watched (a unit without a watch is never gated), parking on. */
static int setup_activity(void **state) {
        QuotaWatch *qw;

        setup(state);
        assert_int_equal(quotawatch_new(&qw), 0);
        F->ctx.quotawatch = qw;
        F->ctx.park = true;
        F->ctx.rest_at_baseline = &F->rest_at_baseline;
        F->rqstat = ACT_RQSTAT;
        return 0;
}

static int teardown_activity(void **state) {
        QuotaWatch *qw = F->ctx.quotawatch;

        F->u = unit_free(F->u);         /* its watch before the watcher */
        quotawatch_free(qw);
        return teardown(state);
}

/* The v1 cpu.stat of the hybrid tree under hy (throttling only). */
static void hybrid_stat_put(const char *hy) {
        char b[256];

        snprintf(b, sizeof(b), "nr_periods %" PRIu64 "\nnr_throttled 0\nthrottled_time 0\n", F->periods);
        tmptree_put(hy, "cpu/" CG "/cpu.stat", b);
}

/* A hybrid host's cgroup whose v2 twin is made after bwgovd opened it (the
 * v1 directory first): governed at once without usage or pressure, the
 * twin looked for again once a second, then read, and its run-queue wait
 * counted. The unit's tree is put beside the v2 one: cpu/ and unified/. */
static void test_hybrid_twin_late(void **state) {
        char hy[128], twin[256];
        struct bw_cg_root *root;

        snprintf(hy, sizeof(hy), "%s/hy", F->dir);
        tmptree_put(hy, "cpu/" CG "/cpu.cfs_quota_us", "50000\n");
        tmptree_put(hy, "cpu/" CG "/cpu.cfs_period_us", "100000\n");
        tmptree_put(hy, "cpu/" CG "/cpu.cfs_burst_us", "0\n");
        hybrid_stat_put(hy);
        tmptree_put(hy, "unified/cgroup.procs", "");
        assert_int_equal(bw_cg_root_open_dir(hy, &root), 0);
        assert_int_equal(root->layout, BW_CG_LAYOUT_HYBRID);
        bw_cg_root_free(F->root);
        F->root = F->ctx.root = root;
        F->rqstat = ACT_RQSTAT;

        /* Without usage the law keeps it at its baseline, quiet: light
         * samples. */
        for (unsigned i = 0; i < 3; i++) {
                F->periods += 10;
                hybrid_stat_put(hy);
                fake_now += USEC_PER_SEC;
                assert_int_equal(unit_tick(F->u, fake_now), 0);
                assert_int_equal(unit_state(F->u), UNIT_STATE_BASELINE);
        }
        assert_true(unit_light_samples(F->u) > 0);
        assert_false(unit_last_has_usage(F->u));
        assert_int_equal(act.watched, 0);

        /* Made now, with nothing run in it yet; half a second after the
         * last look, not looked for. */
        snprintf(twin, sizeof(twin), "usage_usec 0\nuser_usec 0\nsystem_usec 0\n");
        tmptree_put(hy, "unified/" CG "/cpu.stat", twin);
        tmptree_put(hy, "unified/" CG "/cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                                                        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        F->periods += 5;
        hybrid_stat_put(hy);
        fake_now += USEC_PER_SEC / 2;
        assert_int_equal(unit_tick(F->u, fake_now), 0);
        assert_false(unit_last_has_usage(F->u));
        assert_int_equal(act.watched, 0);

        /* A second after it: found, read in a full sample (a light one
         * keeps the fields of the last full one), counted. */
        F->periods += 5;
        hybrid_stat_put(hy);
        fake_now += USEC_PER_SEC / 2 + 1;
        assert_int_equal(unit_tick(F->u, fake_now), 0);
        assert_true(unit_last_has_usage(F->u));
        assert_int_equal(unit_last_usage(F->u), 0);
        assert_int_not_equal(act.watched, 0);

        /* Its next sample has a usage rate: the law raises it to rest
         * above its baseline, as a cgroup found with its twin. */
        snprintf(twin, sizeof(twin), "usage_usec 100000\nuser_usec 100000\nsystem_usec 0\n");
        tmptree_put(hy, "unified/" CG "/cpu.stat", twin);
        F->periods += 10;
        hybrid_stat_put(hy);
        fake_now += USEC_PER_SEC;
        assert_int_equal(unit_tick(F->u, fake_now), 0);
        assert_int_equal(unit_state(F->u), UNIT_STATE_RESTING);
        assert_int_equal(unit_write_errors(F->u), 0);
        tmptree_remove(hy);
}

/* Gated by its activity flag (BPF): a still unit's light samples read no
 * cpu.stat, it parks, and the manager's check finds it still while the
 * flag stays down. A task that runs raises the flag: the check fails, the
 * next sample reads, and the usage it takes is the file's. */
static void test_activity_gate(void **state) {
        unsigned reads;

        adopt();
        assert_int_not_equal(act.watched, 0);
        for (int i = 0; i < 8 && !unit_is_parked(F->u); i++)
                assert_int_equal(tick_after(0, 0), 0);
        assert_true(unit_is_parked(F->u));
        assert_true(act.arms > 0);

        /* Parked and still: no read, however long. */
        reads = F->stat_reads;
        for (int i = 0; i < 5; i++) {
                fake_now += USEC_PER_SEC;
                assert_true(unit_parked_still(F->u, fake_now));
        }
        assert_int_equal(F->stat_reads, reads);

        /* A task ran: 7 ms of it. */
        F->usage += 7000;
        stat_put();
        act.flag = 1;
        fake_now += USEC_PER_SEC;
        assert_false(unit_parked_still(F->u, fake_now));
        assert_int_equal(unit_tick(F->u, fake_now), 0);
        assert_false(unit_is_parked(F->u));
        assert_true(F->stat_reads > reads);
        assert_int_equal(unit_last_usage(F->u), F->usage);
        /* Armed again before that read. */
        assert_int_equal(act.flag, 0);
}

/* Parked at its headroom where wakes are followed: its flag is armed to
 * wake (its headroom stays written). Its first run spends the wake once,
 * without a sample (the manager only brings its host passes back); the
 * check that follows finds it ran, and its sample reads. Without wakes it
 * parks armed plainly, and no wake is its. */
static void test_park_at_headroom_wake(void **state) {
        unsigned reads;

        act.can_wake = true;
        adopt();
        for (int i = 0; i < 8 && !unit_is_parked(F->u); i++)
                assert_int_equal(tick_after(0, 0), 0);
        assert_true(unit_is_parked(F->u));
        assert_string_equal(get("cpu.max"), "200000 100000");
        assert_int_equal(act.flag, 2);

        reads = F->stat_reads;
        F->usage += 7000;
        stat_put();
        act.flag = 1;                                   /* the run, as the program marks it */
        assert_true(unit_wake_headroom(F->u));
        assert_false(unit_wake_headroom(F->u));         /* its first run only */
        assert_true(unit_is_parked(F->u));
        assert_int_equal(F->stat_reads, reads);

        fake_now += USEC_PER_SEC;
        assert_false(unit_parked_still(F->u, fake_now));
        assert_int_equal(unit_tick(F->u, fake_now), 0);
        assert_false(unit_is_parked(F->u));
        assert_int_equal(unit_last_usage(F->u), F->usage);
}

static void test_park_at_headroom_no_wakes(void **state) {
        act.can_wake = false;
        adopt();
        for (int i = 0; i < 8 && !unit_is_parked(F->u); i++)
                assert_int_equal(tick_after(0, 0), 0);
        assert_true(unit_is_parked(F->u));
        assert_int_equal(act.flag, 0);
        act.flag = 1;
        assert_false(unit_wake_headroom(F->u));
        assert_true(unit_is_parked(F->u));
}

/* ParkAtBaseline=yes: a unit about to park puts its baseline back, its
 * flag armed to wake it; while nothing runs it stays there (its slow full
 * sample writes nothing and it parks again), and the sample its first run
 * wakes raises it to its rest, with the usage the file holds. */
static void test_park_at_baseline(void **state) {
        int i;

        F->rest_at_baseline = true;
        act.can_wake = true;
        adopt();
        /* Raised at adoption (the usage there is news): it parks at its
         * headroom, its baseline only once nothing was used for
         * UNIT_BASELINE_AFTER Interval=s. */
        for (i = 0; i < 8 && !unit_is_parked(F->u); i++)
                assert_int_equal(tick_after(0, 0), 0);
        assert_true(unit_is_parked(F->u));
        assert_string_equal(get("cpu.max"), "200000 100000");
        /* Its slow full sample a minute later, then a gated one. */
        fake_now += UNIT_PARKED_FULL_EVERY * USEC_PER_SEC;
        assert_int_equal(unit_tick(F->u, fake_now), 0);
        assert_int_equal(tick_after(0, 0), 0);
        assert_true(unit_is_parked(F->u));
        assert_string_equal(get("cpu.max"), "50000 100000");
        assert_string_equal(get("cpu.max.burst"), "0");
        assert_int_equal(act.flag, 2);
        for (i = 0; i < 3; i++) {
                fake_now += USEC_PER_SEC;
                assert_true(unit_parked_still(F->u, fake_now));
        }

        /* Its slow full sample, then a gated one: parked again, nothing written. */
        fake_now += UNIT_PARKED_FULL_EVERY * USEC_PER_SEC;
        records_reset();
        assert_int_equal(unit_tick(F->u, fake_now), 0);
        assert_int_equal(tick_after(0, 0), 0);
        assert_true(unit_is_parked(F->u));
        assert_int_equal(F->writes_max + F->writes_burst, 0);
        assert_string_equal(get("cpu.max"), "50000 100000");
        assert_int_equal(act.flag, 2);

        /* A task ran: 3 ms. Its wake's sample raises it. */
        F->usage += 3000;
        stat_put();
        act.flag = 1;
        fake_now += USEC_PER_SEC;
        records_reset();
        unit_wake(F->u, fake_now);
        assert_false(unit_is_parked(F->u));
        assert_string_equal(get("cpu.max"), "200000 100000");
        assert_string_equal(get("cpu.max.burst"), "50000");
        assert_int_equal(unit_last_usage(F->u), F->usage);
        assert_int_equal(act.flag, 0);

        /* A wake of a unit not at its baseline is nothing. */
        records_reset();
        fake_now += USEC_PER_SEC;
        unit_wake(F->u, fake_now);
        assert_int_equal(F->writes_max + F->writes_burst, 0);
}

/* ParkAtBaseline=: yes and no as set, whatever the stop would cost; auto
 * from a stop of more than a second (ten thousand units at 0.3 ms: yes;
 * a thousand at 40 µs: no), back at half of it, not before. */
static void test_park_resolve(void **state) {
        assert_true(unit_park_resolve(BW_PARK_YES, false, 1, 0));
        assert_false(unit_park_resolve(BW_PARK_NO, true, 10000, 300));
        assert_true(unit_park_resolve(BW_PARK_AUTO, false, 10000, 300));
        assert_false(unit_park_resolve(BW_PARK_AUTO, false, 1000, 40));
        assert_false(unit_park_resolve(BW_PARK_AUTO, false, 10000, 0));        /* not measured yet */
        assert_false(unit_park_resolve(BW_PARK_AUTO, false, 10000, 100));      /* exactly 1 s */
        assert_true(unit_park_resolve(BW_PARK_AUTO, false, 10000, 101));
        assert_true(unit_park_resolve(BW_PARK_AUTO, true, 10000, 51));         /* resting: until 0.5 s */
        assert_false(unit_park_resolve(BW_PARK_AUTO, true, 10000, 50));
        assert_true(unit_park_resolve(BW_PARK_AUTO, false, SIZE_MAX, UINT64_MAX));
}

/* ParkAtBaseline=yes without the wakes (the ring buffer not followed): it
 * parks at its headroom, as without the setting. */
static void test_park_at_baseline_needs_wakes(void **state) {
        F->rest_at_baseline = true;
        adopt();
        for (int i = 0; i < 8 && !unit_is_parked(F->u); i++)
                assert_int_equal(tick_after(0, 0), 0);
        assert_true(unit_is_parked(F->u));
        assert_string_equal(get("cpu.max"), "200000 100000");
        assert_int_equal(act.flag, 0);
}

/* A unit with a governed unit below it is not gated by its own flag (their
 * tasks raise theirs): its light samples read its cpu.stat. */
static void test_activity_gate_not_with_descendants(void **state) {
        unsigned reads;

        adopt();
        unit_set_has_governed_descendants(F->u, true);
        for (int i = 0; i < 4; i++)
                assert_int_equal(tick_after(0, 0), 0);
        reads = F->stat_reads;
        for (int i = 0; i < 4; i++)
                assert_int_equal(tick_after(0, 0), 0);
        assert_int_equal(F->stat_reads, reads + 4);
        assert_false(unit_is_parked(F->u));
}

/* A gated light sample that reads the quota file (a write to it was seen,
 * here an identical one) opened files of its own: the tick counts them and
 * lets go of what the plan does not keep. Uncounted, 1 770 of ten thousand
 * units held files the plan thought closed, and accept() failed. */
static void test_activity_gate_counts_quota_read(void **state) {
        unsigned quota_reads = 0;

        F->fd_keep = BW_CG_FILE_STAT | BW_CG_FILE_USAGE;
        F->fd_share = 0;        /* this unit's share keeps nothing */
        adopt();
        for (int i = 0; i < 8; i++) {
                uint64_t light = unit_light_samples(F->u);

                tmptree_put(F->tree, CG "/cpu.max", "200000 100000\n");
                quotawatch_drain(F->ctx.quotawatch);
                assert_int_equal(tick_after(0, 0), 0);
                assert_string_equal(get("cpu.max"), "200000 100000");
                quota_reads += unit_light_samples(F->u) > light;
                assert_int_equal(F->fds_held, bw_cg_nfds(F->u->cg));
        }
        /* The case: light samples that read the quota. */
        assert_true(quota_reads >= 3);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_adopt, setup, teardown),
                cmocka_unit_test_setup_teardown(test_adopt_under_limited_ancestor, setup, teardown),
                cmocka_unit_test_setup_teardown(test_adopt_configured_quota, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rebase, setup, teardown),
                cmocka_unit_test_setup_teardown(test_changed_while_deciding, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gone_before_tick, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gone_after_adopt, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gone_before_write, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gone_at_write, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gone_at_intent_write, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gone_at_intent_write_enoent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gone_light_sample, setup, teardown),
                cmocka_unit_test_setup_teardown(test_files_gone_cgroup_stays, setup, teardown),
                cmocka_unit_test_setup_teardown(test_gone_and_back, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refused_write_bad_period, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refused_write_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refused_einval, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refused_ebusy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_shed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_latency_hold, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_identical_write, setup, teardown),
                cmocka_unit_test_setup_teardown(test_paused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_restore_on_stop, setup, teardown),
                cmocka_unit_test_setup_teardown(test_restore_not_ours, setup, teardown),
                cmocka_unit_test_setup_teardown(test_light_samples, setup, teardown),
                cmocka_unit_test_setup_teardown(test_too_soon, setup, teardown),
                cmocka_unit_test_setup_teardown(test_hybrid_twin_late, setup, teardown),
                cmocka_unit_test_setup_teardown(test_activity_gate, setup_activity, teardown_activity),
                cmocka_unit_test(test_park_resolve),
                cmocka_unit_test_setup_teardown(test_park_at_baseline, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_park_at_headroom_wake, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_park_at_headroom_no_wakes, setup_activity,
                                                teardown_activity),
                cmocka_unit_test_setup_teardown(test_park_at_baseline_needs_wakes, setup_activity,
                                                teardown_activity),
                cmocka_unit_test_setup_teardown(test_activity_gate_not_with_descendants, setup_activity,
                                                teardown_activity),
                cmocka_unit_test_setup_teardown(test_activity_gate_counts_quota_read, setup_activity,
                                                teardown_activity),
        };

        log_set_max_level(LOG_WARNING);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
