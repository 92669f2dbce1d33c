/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The nested-siblings behaviour probe: is a limited group's quota held when
 * its tasks run in a child group, several of them on one CPU?
 *
 * With the task-based throttle (6.18 on), a throttled hierarchy's tasks leave
 * the runqueue through a task work on their way back to user mode, and 7.2's
 * set_next_task_fair() sets that work up only when its walk meets a throttled
 * level. The walk stops at the first level already current, so a sibling
 * picked after a throttled task of the same child group is not throttled and
 * runs on (the 7.2 series' patch 5). Measured in a 2-CPU guest under a 10 %
 * quota, 3 s: one task in the child 1.01 times the quota, two 2.0 times,
 * three 3.8 times; with the fix 1.03-1.06 times. Two tasks in the limited
 * group itself are held on every kernel. */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bwgov/kernel/kprobe-siblings.h"
#include "bwgov/util/macro.h"
#include "kprobe-scratch.h"

#define SIB_TASKS            3
#define SIB_QUOTA_USEC       10000ULL
#define SIB_PERIOD_USEC      100000ULL
#define SIB_SETTLE_NSEC      (250 * 1000 * 1000LL)      /* past the first period's refill */
#define SIB_MEASURE_NSEC     (1000 * 1000 * 1000LL)
#define SIB_CHILD            "siblings"
#define SIB_ALARM_SEC        10
/* Used / allowed, per mille: an escaped sibling runs until it blocks, which
 * a busy loop never does. */
#define SIB_ABSENT_PERMILLE  2000
#define SIB_PRESENT_PERMILLE 1500
/* Below this the tasks did not even get their quota: a host too busy to tell. */
#define SIB_BUSY_PERMILLE    500

static int64_t mono_nsec(clockid_t clk) {
        struct timespec ts;

        if (clock_gettime(clk, &ts) < 0)
                return -1;
        return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void nap(int64_t ns) {
        struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
                ;
}

static _Noreturn void spin_on(int cpu, int wait_fd) {
        struct sigaction sa = { .sa_handler = SIG_DFL };
        volatile unsigned long spin = 0;
        cpu_set_t set;
        sigset_t mask;
        char c;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) sigaction(SIGALRM, &sa, NULL);
        sigemptyset(&mask);
        sigaddset(&mask, SIGALRM);
        (void) sigprocmask(SIG_UNBLOCK, &mask, NULL);
        alarm(SIB_ALARM_SEC);
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) < 0)
                _exit(1);
        while (read(wait_fd, &c, 1) < 0 && errno == EINTR)
                ;
        for (;;)
                spin++;
}

/* The lowest CPU this process may run on. */
static int first_cpu(void) {
        cpu_set_t set;

        if (sched_getaffinity(0, sizeof set, &set) < 0)
                return -errno;
        for (int i = 0; i < CPU_SETSIZE; i++)
                if (CPU_ISSET(i, &set))
                        return i;
        return -ENOENT;
}

/* CPU time of the tasks, in ns, or a negative errno. */
static int64_t cpu_time(const pid_t *pids, size_t n) {
        int64_t sum = 0;

        for (size_t i = 0; i < n; i++) {
                clockid_t clk;
                int64_t t;

                if (clock_getcpuclockid(pids[i], &clk) != 0)
                        return -ESRCH;
                t = mono_nsec(clk);
                if (t < 0)
                        return -errno;
                sum += t;
        }
        return sum;
}

static void end_tasks(pid_t *pids, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (pids[i] > 0)
                        (void) kill(pids[i], SIGKILL);
        for (size_t i = 0; i < n; i++) {
                if (pids[i] <= 0)
                        continue;
                while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
                        ;
                pids[i] = 0;
        }
}

/* Remove the child group, retrying while killed tasks are still leaving it. */
static void remove_child(int dir_fd) {
        for (int i = 0; i < 200; i++) {
                if (unlinkat(dir_fd, SIB_CHILD, AT_REMOVEDIR) >= 0 || errno == ENOENT || errno != EBUSY)
                        return;
                nap(10 * 1000 * 1000LL);
        }
}

static int limit_parent(const struct bw_kprobe_env *env, int dir_fd) {
        char v[64];
        int r;

        if (env->bw_is_v1) {
                snprintf(v, sizeof v, "%llu", SIB_PERIOD_USEC);
                r = bw_scratch_write(dir_fd, "cpu.cfs_period_us", v);
                if (r < 0)
                        return r;
                snprintf(v, sizeof v, "%llu", SIB_QUOTA_USEC);
                return bw_scratch_write(dir_fd, "cpu.cfs_quota_us", v);
        }
        snprintf(v, sizeof v, "%llu %llu", SIB_QUOTA_USEC, SIB_PERIOD_USEC);
        return bw_scratch_write(dir_fd, "cpu.max", v);
}

enum bw_kstatus bw_kprobe_nested_siblings_judge(int64_t used_ns, int64_t allowed_ns, unsigned *ret_permille) {
        int64_t permille;

        if (used_ns < 0 || allowed_ns <= 0) {
                *ret_permille = 0;
                return BW_KSTATUS_UNKNOWN;
        }
        permille = used_ns / allowed_ns * 1000 + used_ns % allowed_ns * 1000 / allowed_ns;
        *ret_permille = permille > UINT32_MAX ? UINT32_MAX : (unsigned) permille;
        if (permille >= SIB_ABSENT_PERMILLE)
                return BW_KSTATUS_ABSENT;
        if (permille <= SIB_PRESENT_PERMILLE && permille >= SIB_BUSY_PERMILLE)
                return BW_KSTATUS_PRESENT;
        return BW_KSTATUS_UNKNOWN;
}

int bw_kprobe_nested_siblings(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret) {
        _cleanup_close_ int child_fd = -EBADF;
        int pipefd[2] = { -EBADF, -EBADF };
        pid_t pids[SIB_TASKS] = { 0 };
        struct bw_scratch s;
        bool made_child = false;
        int64_t c0, c1, t0, t1, allowed;
        enum bw_kstatus status;
        unsigned permille;
        int cpu, r;

        cpu = first_cpu();
        if (cpu < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: cannot read the CPU affinity: %s",
                                            strerror(-cpu));

        r = bw_scratch_create(env, &s);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: cannot create a scratch cgroup: %s",
                                            strerror(-r));

        r = limit_parent(env, s.dir_fd);
        if (r == -ENOENT && !env->bw_is_v1) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: scratch cgroup has no cpu.max" BW_KPROBE_NO_CPU_CONTROLLER);
                goto finish;
        }
        if (r >= 0)
                (void) bw_scratch_write(s.dir_fd, env->bw_is_v1 ? "cpu.shares" : "cpu.weight",
                                        env->bw_is_v1 ? "262144" : "10000");
        if (r >= 0 && !env->bw_is_v1)
                r = bw_scratch_write(s.dir_fd, "cgroup.subtree_control", "+cpu");
        if (r >= 0) {
                r = mkdirat(s.dir_fd, SIB_CHILD, 0755) < 0 ? -errno : 0;
                made_child = r >= 0;
        }
        if (r >= 0) {
                child_fd = openat(s.dir_fd, SIB_CHILD, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (child_fd < 0)
                        r = -errno;
        }
        if (r >= 0 && pipe2(pipefd, O_CLOEXEC) < 0)
                r = -errno;
        if (r < 0) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                         "behaviour: cannot set up the nested scratch groups: %s", strerror(-r));
                goto finish;
        }

        for (size_t i = 0; i < SIB_TASKS; i++) {
                char pidbuf[32];

                pids[i] = fork();
                if (pids[i] < 0) {
                        pids[i] = 0;
                        r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: fork: %s", strerror(errno));
                        goto finish;
                }
                if (pids[i] == 0) {
                        close(pipefd[1]);
                        spin_on(cpu, pipefd[0]);
                }
                snprintf(pidbuf, sizeof pidbuf, "%d", (int) pids[i]);
                r = bw_scratch_write(child_fd, "cgroup.procs", pidbuf);
                if (r < 0) {
                        r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                                 "behaviour: cannot move a probe task into the child group: %s",
                                                 strerror(-r));
                        goto finish;
                }
        }
        if (write(pipefd[1], "xxx", SIB_TASKS) != SIB_TASKS) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: cannot start the probe: %s",
                                         strerror(errno));
                goto finish;
        }

        nap(SIB_SETTLE_NSEC);
        t0 = mono_nsec(CLOCK_MONOTONIC);
        c0 = cpu_time(pids, SIB_TASKS);
        nap(SIB_MEASURE_NSEC);
        c1 = cpu_time(pids, SIB_TASKS);
        t1 = mono_nsec(CLOCK_MONOTONIC);
        if (c0 < 0 || c1 < 0 || t0 < 0 || t1 <= t0) {
                r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: cannot measure the probe's CPU time: %s",
                                         strerror(ESRCH));
                goto finish;
        }

        /* What the quota allows over the window, in ns. */
        allowed = (t1 - t0) / (int64_t) SIB_PERIOD_USEC * (int64_t) SIB_QUOTA_USEC;
        status = bw_kprobe_nested_siblings_judge(c1 - c0, allowed, &permille);
        r = bw_kprobe_result_set(ret, status, "behaviour: %s%d busy tasks on one CPU in a child of a group with "
                                 "a 10%% quota used %u.%u times the quota",
                                 status == BW_KSTATUS_UNKNOWN ? "inconclusive, " : "", SIB_TASKS,
                                 permille / 1000, permille % 1000 / 100);
finish:
        end_tasks(pids, SIB_TASKS);
        close(pipefd[0]);
        close(pipefd[1]);
        child_fd = safe_close(child_fd);
        if (made_child)
                remove_child(s.dir_fd);
        bw_scratch_done(&s);
        return r;
}
