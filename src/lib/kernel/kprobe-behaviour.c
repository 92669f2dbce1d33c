/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Behaviour probes: each creates a scratch cgroup under the bandwidth root
 * (kprobe-scratch.c), forks a busy loop into it, measures what the kernel
 * does under a quota (burst kept across cpu.max writes, identical rewrites,
 * accounting slack, pool lock acquisitions) and removes the cgroup again;
 * and the dispatch of every behaviour probe (the gate and the load-free
 * write-order probe are kprobe-write-order.c's). Only these probes touch
 * the kernel; the static ones are kprobe.c. */

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
#include "bwgov/kernel/kprobe-behaviour.h"
#include "bwgov/kernel/kprobe-siblings.h"
#include "bwgov/kernel/kprobe-write-order.h"
#include "bwgov/kernel/kprobe.h"
#include "bwgov/util/macro.h"
#include "kprobe-scratch.h"

/* ------------------------------------------------------------------------ */
/* Behaviour probes in a scratch cgroup */

/* Lengths of the identical-update probe. The unlimited phase shows what one
 * busy thread gets right now (a loaded host cannot show the
 * difference); the quota phase shows the 10 % limit holds at all; the rewrite
 * phase rewrites the same quota every 2 ms, which on an unpatched kernel
 * refills the pool each time (measured on 6.18: 0.31 s of CPU in 3 s without
 * rewrites, 2.99 s with). 1.5 s in all. */
#define PROBE_UNLIMITED_NSEC   (200 * 1000 * 1000LL)
#define PROBE_QUOTA_NSEC       (300 * 1000 * 1000LL)
#define PROBE_REWRITE_NSEC     (1000 * 1000 * 1000LL)
#define PROBE_REWRITE_EVERY_NSEC (2 * 1000 * 1000LL)
/* A quota that held proves nothing if the rewrites were starved. */
#define PROBE_REWRITE_MAX_GAP_NSEC (20 * 1000 * 1000LL)
#define PROBE_QUOTA_USEC       10000
#define PROBE_PERIOD_USEC      100000
/* The child kills itself after this long if the parent never does. */
#define PROBE_CHILD_ALARM_SEC  10

static int64_t now_nsec(clockid_t clk) {
        struct timespec ts;

        if (clock_gettime(clk, &ts) < 0)
                return -1;
        return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_nsec(int64_t ns) {
        struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
                ;
}

static int probe_burst_survives(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret) {
        struct bw_scratch s;
        struct stat st;
        uint64_t burst = 0;
        int r;

        /* The bug is in cpu.max's write handler; v1 writes never had it, so
         * this hierarchy cannot show whether the kernel has the fix. */
        if (env->bw_is_v1)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: not applicable on a v1 hierarchy (the bug is in cpu.max only)");

        r = bw_scratch_create(env, &s);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: cannot create a scratch cgroup: %s",
                                            strerror(-r));

        if (fstatat(s.dir_fd, "cpu.max", &st, 0) < 0) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: scratch cgroup has no cpu.max" BW_KPROBE_NO_CPU_CONTROLLER);
                goto finish;
        }
        if (fstatat(s.dir_fd, "cpu.max.burst", &st, 0) < 0) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: scratch cgroup has no cpu.max.burst");
                goto finish;
        }
        r = bw_scratch_write(s.dir_fd, "cpu.max", "50000 100000");
        if (r >= 0)
                r = bw_scratch_write(s.dir_fd, "cpu.max.burst", "20000");
        /* A different quota, so that a kernel that skips identical updates
         * still goes through the whole write path. */
        if (r >= 0)
                r = bw_scratch_write(s.dir_fd, "cpu.max", "60000 100000");
        if (r >= 0)
                r = bw_scratch_read_u64(s.dir_fd, "cpu.max.burst", &burst);
        if (r < 0) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: scratch cgroup: %s", strerror(-r));
                goto finish;
        }

        if (burst == 20000)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT,
                                         "behaviour: cpu.max.burst kept 20000 across a cpu.max write");
        else if (burst == 20)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT,
                                         "behaviour: cpu.max.burst 20000 became 20 after a cpu.max write");
        else
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: cpu.max.burst 20000 became %llu after a cpu.max write",
                                         (unsigned long long) burst);
finish:
        bw_scratch_done(&s);
        return r;
}

struct measurement {
        unsigned cpu_permille;          /* child's CPU time / wall time, per mille of one CPU */
        unsigned writes;                /* rewrites done */
        int64_t max_gap_nsec;           /* longest time between two rewrites */
};

/* Measure the child's CPU use over the next span_ns of wall time; with
 * rewrite_fd >= 0, write value to it every PROBE_REWRITE_EVERY_NSEC meanwhile. */
static int measure(pid_t child, int64_t span_ns, int rewrite_fd, const char *value, struct measurement *ret) {
        struct measurement m = { 0 };
        clockid_t clk;
        int64_t c0, c1, t0, t1, next, last_write;
        size_t len = value ? strlen(value) : 0;

        if (clock_getcpuclockid(child, &clk) != 0)
                return -ESRCH;
        c0 = now_nsec(clk);
        t0 = now_nsec(CLOCK_MONOTONIC);
        if (c0 < 0 || t0 < 0)
                return -errno;

        for (next = last_write = t0;;) {
                int64_t t = now_nsec(CLOCK_MONOTONIC);

                if (t - t0 >= span_ns)
                        break;
                if (rewrite_fd >= 0 && t >= next) {
                        if (pwrite(rewrite_fd, value, len, 0) != (ssize_t) len)
                                return errno > 0 ? -errno : -EIO;
                        m.writes++;
                        if (t - last_write > m.max_gap_nsec)
                                m.max_gap_nsec = t - last_write;
                        last_write = t;
                        next = t + PROBE_REWRITE_EVERY_NSEC;
                }
                sleep_nsec(rewrite_fd >= 0 ? next - t : span_ns - (t - t0));
        }

        c1 = now_nsec(clk);
        t1 = now_nsec(CLOCK_MONOTONIC);
        if (c1 < 0 || t1 <= t0)
                return -errno;
        m.cpu_permille = (unsigned) ((c1 - c0) * 1000 / (t1 - t0));
        *ret = m;
        return 0;
}

static _Noreturn void busy_child(int wait_fd) {
        struct sigaction sa = { .sa_handler = SIG_DFL };
        volatile unsigned long spin = 0;
        sigset_t mask;
        char c;

        /* Backstops should the parent never kill us: its death, and an alarm
         * with the default (terminating) action, unblocked, whatever the
         * parent had set up. */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) sigaction(SIGALRM, &sa, NULL);
        sigemptyset(&mask);
        sigaddset(&mask, SIGALRM);
        (void) sigprocmask(SIG_UNBLOCK, &mask, NULL);
        alarm(PROBE_CHILD_ALARM_SEC);
        /* Start spinning only once the parent moved us into the scratch cgroup. */
        while (read(wait_fd, &c, 1) < 0 && errno == EINTR)
                ;
        for (;;)
                spin++;
}

/* Fork a busy loop, weight the scratch group heavily (so that on a busy host
 * the loop still gets most of a CPU when unthrottled: the probes need the
 * contrast; best effort, the unlimited phases check the outcome), move the
 * loop into the group and start it. Returns 0, 1 with an UNKNOWN result in
 * ret when it could not, or -ENOMEM. */
/* An UNKNOWN result was set (0) or could not be (-ENOMEM): stop the probe. */
static int stopped(int r) {
        return r < 0 ? r : 1;
}

static int scratch_start_busy(const struct bw_kprobe_env *env, struct bw_scratch *s, struct bw_kprobe_result *ret) {
        int pipefd[2] = { -EBADF, -EBADF };
        char pidbuf[32];
        int r;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return stopped(bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: pipe: %s", strerror(errno)));
        s->child = fork();
        if (s->child < 0) {
                s->child = 0;
                r = stopped(bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: fork: %s", strerror(errno)));
                goto finish;
        }
        if (s->child == 0) {
                close(pipefd[1]);
                busy_child(pipefd[0]);
        }

        (void) bw_scratch_write(s->dir_fd, env->bw_is_v1 ? "cpu.shares" : "cpu.weight",
                        env->bw_is_v1 ? "262144" : "10000");

        snprintf(pidbuf, sizeof pidbuf, "%d", (int) s->child);
        r = bw_scratch_write(s->dir_fd, "cgroup.procs", pidbuf);
        if (r < 0) {
                r = stopped(bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                               "behaviour: cannot move the probe into the scratch cgroup: %s", strerror(-r)));
                goto finish;
        }
        if (write(pipefd[1], "x", 1) != 1) {
                r = stopped(bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: cannot start the probe: %s",
                               strerror(errno)));
                goto finish;
        }
        r = 0;
finish:
        close(pipefd[0]);
        close(pipefd[1]);
        return r;
}

/* Create the scratch cgroup and start the busy loop in it. Returns 0, 1
 * with an UNKNOWN result in ret (nothing left to clean up), or -ENOMEM. */
static int scratch_start(const struct bw_kprobe_env *env, struct bw_scratch *s, struct bw_kprobe_result *ret) {
        int r;

        r = bw_scratch_create(env, s);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return stopped(bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                                    "behaviour: cannot create a scratch cgroup: %s",
                                                    strerror(-r)));
        r = scratch_start_busy(env, s, ret);
        if (r != 0)
                bw_scratch_done(s);
        return r;
}

/* Limit the scratch group to quota per period (v1: period first). The
 * written file and value come back in ret_file and value, for rewriting.
 * Returns 1 when the limit is in place, 0 when it could not be written (*ret
 * says so), or a negative errno. */
static int scratch_set_quota(const struct bw_kprobe_env *env, const struct bw_scratch *s, unsigned long long quota,
                             unsigned long long period, char *value, size_t size, const char **ret_file,
                             struct bw_kprobe_result *ret) {
        char p[32];
        int r = 0;

        if (env->bw_is_v1) {
                snprintf(p, sizeof p, "%llu", period);
                snprintf(value, size, "%llu", quota);
                *ret_file = "cpu.cfs_quota_us";
                r = bw_scratch_write(s->dir_fd, "cpu.cfs_period_us", p);
        } else {
                snprintf(value, size, "%llu %llu", quota, period);
                *ret_file = "cpu.max";
        }
        if (r >= 0)
                r = bw_scratch_write(s->dir_fd, *ret_file, value);
        if (r == -ENOENT && !env->bw_is_v1)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: scratch cgroup has no cpu.max" BW_KPROBE_NO_CPU_CONTROLLER);
        if (r < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: cannot set the scratch quota: %s", strerror(-r));
        return 1;
}

/* The result when the probe's own CPU time could not be measured. */
static int measure_failed(struct bw_kprobe_result *ret, int r) {
        return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                    "behaviour: cannot measure the probe's CPU time: %s", strerror(-r));
}

/* Starts the scratch cgroup with its busy child and measures the child
 * without a limit for PROBE_UNLIMITED_NSEC. Returns 1 with *s running (the
 * caller ends it with bw_scratch_done()), 0 when *ret says why the probe cannot
 * go on (nothing left running), or a negative errno. */
static int scratch_start_unlimited(const struct bw_kprobe_env *env, struct bw_scratch *s,
                                   struct measurement *ret_unlimited, struct bw_kprobe_result *ret) {
        int r;

        r = scratch_start(env, s, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        r = measure(s->child, PROBE_UNLIMITED_NSEC, -EBADF, NULL, ret_unlimited);
        if (r < 0) {
                r = measure_failed(ret, r);
                bw_scratch_done(s);
                return r;
        }
        return 1;
}

static int probe_identical_update(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret) {
        _cleanup_close_ int rewrite_fd = -EBADF;
        const char *quota_file;
        char quota_value[64];
        struct measurement unlimited, limited, rewritten;
        unsigned u, l, w;
        struct bw_scratch s;
        int r;

        r = scratch_start_unlimited(env, &s, &unlimited, ret);
        if (r <= 0)
                return r;

        r = scratch_set_quota(env, &s, PROBE_QUOTA_USEC, PROBE_PERIOD_USEC, quota_value, sizeof quota_value,
                              &quota_file, ret);
        if (r <= 0)
                goto finish;

        r = measure(s.child, PROBE_QUOTA_NSEC, -EBADF, NULL, &limited);
        if (r < 0) {
                r = measure_failed(ret, r);
                goto finish;
        }

        rewrite_fd = openat(s.dir_fd, quota_file, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (rewrite_fd < 0) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: %s: %s", quota_file, strerror(errno));
                goto finish;
        }
        r = measure(s.child, PROBE_REWRITE_NSEC, rewrite_fd, quota_value, &rewritten);
        if (r < 0) {
                r = measure_failed(ret, r);
                goto finish;
        }

        /* Thresholds in per mille of one CPU, against a 10 % quota. */
        u = unlimited.cpu_permille;
        l = limited.cpu_permille;
        w = rewritten.cpu_permille;
        if (u < 500)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: host too busy (the probe got %u.%u%% of a CPU unthrottled)",
                                         u / 10, u % 10);
        else if (l > 300)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: a 10%% quota was not enforced (the probe used %u.%u%%)",
                                         l / 10, l % 10);
        else if (w <= 250 && (rewritten.writes < PROBE_REWRITE_NSEC / PROBE_REWRITE_EVERY_NSEC / 2 ||
                              rewritten.max_gap_nsec > PROBE_REWRITE_MAX_GAP_NSEC))
                /* The quota held, but maybe only because we did not get
                 * to write often enough. */
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: inconclusive, only %u rewrites (longest gap %lld ms)",
                                         rewritten.writes, (long long) (rewritten.max_gap_nsec / 1000000));
        else if (w <= 250)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT,
                                         "behaviour: 10%% quota held under identical writes every 2 ms "
                                         "(%u.%u%% CPU, %u.%u%% without writes)",
                                         w / 10, w % 10, l / 10, l % 10);
        else if (w >= 400)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT,
                                         "behaviour: identical writes every 2 ms let a 10%% quota run at %u.%u%% "
                                         "(%u.%u%% without writes)",
                                         w / 10, w % 10, l / 10, l % 10);
        else
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: inconclusive, %u.%u%% CPU under a 10%% quota with identical "
                                         "writes",
                                         w / 10, w % 10);
finish:
        bw_scratch_done(&s);
        return r;
}

/* Accounting slack. Runtime is accounted in arrears (at the tick), so one
 * thread under a quota of exactly one CPU overdraws its local pool near every
 * period boundary; mainline pays that debt from the new period's quota and
 * throttles the thread although it never ran more than one CPU (measured on
 * 6.18 with HZ=250: 36-48 % of the periods at a 10 ms period; the
 * thesis: 49 %). With the slack, the debt is paid from what the previous
 * period left unused and the thread is hardly throttled. A thread that is not
 * given a whole CPU (a busy host) never reaches its quota and would look
 * patched: the unlimited and limited phases must both show most of a CPU. */
#define SLACK_PERIOD_USEC      10000
#define SLACK_SETTLE_NSEC      (100 * 1000 * 1000LL)
#define SLACK_MEASURE_NSEC     (2000 * 1000 * 1000LL)
/* Per mille of periods throttled: at or above ABSENT the debt throttles,
 * at or below PRESENT it does not. Seen: 360-480 unpatched (6.18 and
 * 6.1), 15-30 patched (6.1 under QEMU TCG). */
#define SLACK_ABSENT_PERMILLE  150
#define SLACK_PRESENT_PERMILLE 75
/* Per mille of one CPU the thread must get for a "present". */
#define SLACK_BUSY_PERMILLE    900

/* Value of "key N" at the start of a line of a flat-keyed file. */
static int kv_get_u64(const char *buf, const char *key, uint64_t *ret) {
        size_t n = strlen(key);

        for (const char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
                if (strncmp(l, key, n) == 0 && l[n] == ' ') {
                        char *end;

                        errno = 0;
                        *ret = strtoull(l + n + 1, &end, 10);
                        if (errno != 0 || end == l + n + 1)
                                return -EINVAL;
                        return 0;
                }
        return -ENOENT;
}

static int read_periods(int dir_fd, uint64_t *ret_periods, uint64_t *ret_throttled) {
        char buf[1024];
        ssize_t n;
        int r;

        n = bw_read_small_at(dir_fd, "cpu.stat", O_NOFOLLOW, buf, sizeof buf);
        if (n < 0)
                return (int) n;
        r = kv_get_u64(buf, "nr_periods", ret_periods);
        if (r >= 0)
                r = kv_get_u64(buf, "nr_throttled", ret_throttled);
        return r;
}

static int probe_accounting_slack(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret) {
        struct measurement unlimited, limited;
        uint64_t p0, t0, p1, t1, periods, throttled;
        unsigned u, l, f;
        const char *file;
        char value[64];
        struct bw_scratch s;
        int r;

        r = scratch_start_unlimited(env, &s, &unlimited, ret);
        if (r <= 0)
                return r;
        u = unlimited.cpu_permille;
        if (u < SLACK_BUSY_PERMILLE) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: host too busy for the accounting-slack probe "
                                         "(it got %u.%u%% of a CPU unthrottled)", u / 10, u % 10);
                goto finish;
        }

        /* No burst (a new group has none): it would carry the leftover over
         * and hide the debt on any kernel. */
        r = scratch_set_quota(env, &s, SLACK_PERIOD_USEC, SLACK_PERIOD_USEC, value, sizeof value, &file, ret);
        if (r <= 0)
                goto finish;
        sleep_nsec(SLACK_SETTLE_NSEC);

        r = read_periods(s.dir_fd, &p0, &t0);
        if (r >= 0)
                r = measure(s.child, SLACK_MEASURE_NSEC, -EBADF, NULL, &limited);
        if (r >= 0)
                r = read_periods(s.dir_fd, &p1, &t1);
        if (r < 0) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: cannot read the scratch cpu.stat: %s",
                                         strerror(-r));
                goto finish;
        }

        periods = p1 - p0;
        throttled = t1 - t0;
        l = limited.cpu_permille;
        /* 200 periods of 10 ms: far fewer means the period timer did not run
         * as configured, and the fractions mean nothing. */
        if (periods < SLACK_MEASURE_NSEC / (SLACK_PERIOD_USEC * 1000LL) / 2 || throttled > periods) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: inconclusive, %llu periods of 10 ms in 2 s",
                                         (unsigned long long) periods);
                goto finish;
        }
        f = (unsigned) (throttled * 1000 / periods);
        if (f >= SLACK_ABSENT_PERMILLE)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT,
                                         "behaviour: one thread under a quota of one CPU at a 10 ms period was "
                                         "throttled in %u.%u%% of periods (%llu of %llu)",
                                         f / 10, f % 10, (unsigned long long) throttled, (unsigned long long) periods);
        else if (f <= SLACK_PRESENT_PERMILLE && l >= SLACK_BUSY_PERMILLE)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT,
                                         "behaviour: one thread under a quota of one CPU at a 10 ms period was "
                                         "throttled in %u.%u%% of periods (%llu of %llu) and ran %u.%u%%",
                                         f / 10, f % 10, (unsigned long long) throttled, (unsigned long long) periods,
                                         l / 10, l % 10);
        else
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: inconclusive, %u.%u%% of periods throttled (%llu of %llu), "
                                         "%u.%u%% of a CPU used",
                                         f / 10, f % 10, (unsigned long long) throttled, (unsigned long long) periods,
                                         l / 10, l % 10);
finish:
        bw_scratch_done(&s);
        return r;
}

/* Atomic runtime pool. The patch is meant to change nothing but cost: the
 * only behaviour left to see is that the pool lock (cfs_b->lock, one lockdep
 * class for every group) is no longer taken for each slice a CPU refills.
 * Kernels with CONFIG_LOCK_STAT count acquisitions per lock class in
 * /proc/lock_stat: one busy thread under a quota it never reaches, with a 1 s
 * period, refills a slice (sched_cfs_bandwidth_slice_us) at the first tick
 * that finds the last one used up; on mainline every refill takes the lock
 * (measured on a CONFIG_LOCK_STAT kernel, HZ=250, 5 ms slices: 128 acquisitions
 * in 1 s, about one per 8 ms: every second tick), with the atomic pool only
 * the first refill of each period and the timers do (2 in 1 s). Other
 * bandwidth-limited groups busy meanwhile add acquisitions, which can make a
 * patched kernel look inconclusive, never an unpatched one look patched.
 * Production kernels have no lock_stat: UNKNOWN, the BTF member decides
 * there. */
#define POOL_PERIOD_USEC       1000000
#define POOL_QUOTA_USEC        2000000
#define POOL_SETTLE_NSEC       (100 * 1000 * 1000LL)
#define POOL_MEASURE_NSEC      (1000 * 1000 * 1000LL)
#define POOL_CLASS             "&cfs_b->lock"

int bw_lockstat_acquisitions(FILE *f, const char *class_name, uint64_t *ret) {
        char line[512];
        size_t n = strlen(class_name);
        uint64_t sum = 0;
        bool header = false, found = false;

        while (fgets(line, sizeof line, f)) {
                const char *l = line + strspn(line, " ");
                unsigned long long v[8];

                if (!header) {
                        if (strncmp(line, "lock_stat version ", 18) != 0)
                                return -EBADMSG;
                        header = true;
                        continue;
                }
                if (strncmp(line, "*WARNING*", 9) == 0)
                        return -ENOTRECOVERABLE;        /* lock debugging turned itself off */
                /* "<name>:" or "<name>-W:" / "<name>-R:" for rwlocks; the
                 * lines of contention points carry no colon after the name. */
                if (strncmp(l, class_name, n) != 0)
                        continue;
                l += n;
                if (l[0] == '-' && (l[1] == 'W' || l[1] == 'R'))
                        l += 2;
                if (l[0] != ':')
                        continue;
                /* con-bounces contentions wait-min wait-max wait-total
                 * wait-avg acq-bounces acquisitions ... */
                if (sscanf(l + 1, "%llu %llu %*s %*s %*s %*s %llu %llu", &v[0], &v[1], &v[2], &v[3]) != 4)
                        return -EBADMSG;
                sum += v[3];
                found = true;
        }
        if (ferror(f))
                return -EIO;
        if (!header)
                return -EBADMSG;
        *ret = sum;
        return found;
}

static int read_lockstat(const char *path, uint64_t *ret) {
        _cleanup_fclose_ FILE *f = NULL;
        int r;

        f = fopen(path, "re");
        if (!f)
                return -errno;
        r = bw_lockstat_acquisitions(f, POOL_CLASS, ret);
        return r < 0 ? r : 0;   /* not listed yet: never taken, 0 */
}

static int probe_atomic_pool(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret) {
        _cleanup_free_ char *lockstat = NULL, *slice_path = NULL;
        struct measurement m;
        uint64_t a0, a1, slice_us = 0, taken, slices;
        const char *file;
        char buf[64], value[64];
        struct bw_scratch s;
        int r;

        r = bw_kprobe_host_path(env, "/proc/lock_stat", &lockstat);
        if (r >= 0)
                r = bw_kprobe_host_path(env, "/proc/sys/kernel/sched_cfs_bandwidth_slice_us", &slice_path);
        if (r < 0)
                return r;
        r = read_lockstat(lockstat, &a0);
        if (r == -ENOENT)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: no /proc/lock_stat (CONFIG_LOCK_STAT) to count pool lock "
                                            "acquisitions");
        if (r == -ENOTRECOVERABLE)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: /proc/lock_stat: lock debugging was turned off by an earlier "
                                            "warning");
        if (r < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: /proc/lock_stat: %s", strerror(-r));
        if (bw_read_small_at(AT_FDCWD, slice_path, O_NOFOLLOW, buf, sizeof buf) > 0)
                slice_us = strtoull(buf, NULL, 10);
        if (slice_us == 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: cannot read /proc/sys/kernel/sched_cfs_bandwidth_slice_us");

        r = scratch_start(env, &s, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        r = scratch_set_quota(env, &s, POOL_QUOTA_USEC, POOL_PERIOD_USEC, value, sizeof value, &file, ret);
        if (r <= 0)
                goto finish;
        sleep_nsec(POOL_SETTLE_NSEC);

        r = read_lockstat(lockstat, &a0);
        if (r >= 0)
                r = measure(s.child, POOL_MEASURE_NSEC, -EBADF, NULL, &m);
        if (r >= 0)
                r = read_lockstat(lockstat, &a1);
        if (r < 0) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: pool lock probe: %s", strerror(-r));
                goto finish;
        }

        /* Slices the thread used: CPU time over the slice length. */
        slices = (uint64_t) m.cpu_permille * (POOL_MEASURE_NSEC / 1000) / 1000 / slice_us;
        taken = a1 >= a0 ? a1 - a0 : 0;
        if (slices < 40)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: inconclusive, the probe used only %llu slices of %llu us",
                                         (unsigned long long) slices, (unsigned long long) slice_us);
        else if (taken * 4 >= slices)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT,
                                         "behaviour: the pool lock was taken %llu times while the probe used %llu "
                                         "slices of runtime",
                                         (unsigned long long) taken, (unsigned long long) slices);
        else if (taken * 20 <= slices)
                r = bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT,
                                         "behaviour: the pool lock was taken only %llu times while the probe used "
                                         "%llu slices "
                                         "of runtime", (unsigned long long) taken, (unsigned long long) slices);
        else
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: inconclusive, the pool lock was taken %llu times while the probe "
                                         "used %llu "
                                         "slices of runtime", (unsigned long long) taken, (unsigned long long) slices);
finish:
        bw_scratch_done(&s);
        return r;
}

int bw_kprobe_behaviour(const struct bw_kprobe_env *env, enum bw_kbehaviour b, struct bw_kprobe_result *ret) {
        struct statfs sfs;

        if (!bw_kprobe_behaviour_allowed(env, b))
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: probe not run");
        if (env->bw_root_fd < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: no cgroup bandwidth root");
        /* Never create scratch directories in a fixture tree or anywhere else
         * that is not a cgroup file system. */
        if (fstatfs(env->bw_root_fd, &sfs) < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: bandwidth root: %s", strerror(errno));
        if (sfs.f_type != CGROUP_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: bandwidth root is not a cgroup file system");

        switch (b) {
        case BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE:
                return probe_burst_survives(env, ret);
        case BW_KBEHAVIOUR_IDENTICAL_UPDATE_NOOP:
                return probe_identical_update(env, ret);
        case BW_KBEHAVIOUR_ACCOUNTING_SLACK:
                return probe_accounting_slack(env, ret);
        case BW_KBEHAVIOUR_ATOMIC_RUNTIME_POOL:
                return probe_atomic_pool(env, ret);
        case BW_KBEHAVIOUR_WRITE_ORDER:
                return bw_kprobe_write_order(env, ret);
        case BW_KBEHAVIOUR_NESTED_SIBLINGS:
                return bw_kprobe_nested_siblings(env, ret);
        default:
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: unknown probe");
        }
}

