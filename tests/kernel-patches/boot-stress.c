/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stress run of `boot-check --stress` (PID 1 of a patched kernel built with
 * lockdep and KASAN, cgroup2 mounted by boot-probe.c): what LTP's
 * cfs_bandwidth01 does, written anew here with more writers. A hierarchy
 *
 *   bwgov-stress/a/a1   2 spinners, a forker (a child that spins 3 ms and
 *                       exits, every 10 ms)
 *   bwgov-stress/a/a2   2 bursty workers (1 ms on, 1 ms off)
 *   bwgov-stress/b/b1   a spinner, a process of 3 threads (spin, bursty, spin)
 *   bwgov-stress/b/b2   2 sleepers (0.2 ms on, 5 ms off)
 *
 * runs while PID 1 changes it every 2-20 ms at random: a new cpu.max (periods
 * of 20, 50 and 100 ms, quotas from a tenth to twice the period, or "max") on
 * any of the seven groups, the same cpu.max written again (identical-update
 * no-op), a new cpu.max.burst (up to twice the quota: a patched kernel takes
 * a burst above the quota), a quota lowered below the burst (write order), a
 * worker moved to another leaf, all cpu.stat files read; every 5 s a group
 * with a throttled spinner is created and removed again, every 15 s CPU 1
 * goes offline and online (where the kernel can, and not with
 * bwgov.hotplug=0). Periods stay at 20 ms and more: at 10 ms the TCG
 * guest's period timer can overrun, and mainline's own
 * "period too short" printk under cfs_b->lock is a lockdep report of its own
 * (see boot-check) that would switch lockdep off for the rest of the run.
 *
 * Output: "STRESS begin", a "STRESS progress t=N ..." line every 30 s, "STRESS
 * summary ...", "STRESS interrupts ..." (the serial port's and the local
 * timer's lines of /proc/interrupts), "STRESS lockdep debug_locks=1|0|-1"
 * (whether lockdep is still on at the end) and "STRESS done". In a stress
 * run every line of PID 1 goes to the kernel log (say_through_kmsg()), never
 * through the console tty: a task waiting on the tty is woken from the
 * serial interrupt under the port lock, and with that link mainline's
 * "period too short" printk under cfs_b->lock closes a cycle (cfs_b->lock,
 * rq->__lock, pi_lock, the tty's write_wait, the port lock, console_owner)
 * that lockdep reports and that can deadlock the guest: one 7.2 run's console
 * stopped after the first 16 characters of a line, a full transmit FIFO,
 * with both vCPUs busy. The verdict (no WARN, BUG, KASAN or lockdep report
 * on the console) is boot-check's.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boot-probe.h"

/* The lines of /proc/interrupts that show whether the serial port's and the
 * timers' interrupts still arrive on each CPU after the hotplugs. */
static void interrupts(void) {
        char l[512];
        FILE *f = fopen("/proc/interrupts", "re");

        if (!f)
                return;
        while (fgets(l, sizeof(l), f))
                if (strstr(l, "ttyS") || strstr(l, "LOC:") || strstr(l, "CPU0"))
                        say("STRESS interrupts %s", l + strspn(l, " "));
        fclose(f);
}

#define TOP CG "/bwgov-stress"

enum kind { SPIN, BURSTY, SLEEPER, FORKER, THREADS };

static const char *const groups[] = {
        TOP, TOP "/a", TOP "/a/a1", TOP "/a/a2", TOP "/b", TOP "/b/b1", TOP "/b/b2",
};
#define N_GROUPS (sizeof(groups) / sizeof(groups[0]))
static const char *const leaves[] = { TOP "/a/a1", TOP "/a/a2", TOP "/b/b1", TOP "/b/b2" };
#define N_LEAVES (sizeof(leaves) / sizeof(leaves[0]))

static const struct {
        enum kind kind;
        unsigned leaf;
} plan[] = {
        { SPIN, 0 }, { SPIN, 0 }, { FORKER, 0 }, { BURSTY, 1 }, { BURSTY, 1 },
        { SPIN, 2 }, { THREADS, 2 }, { SLEEPER, 3 }, { SLEEPER, 3 },
};
#define N_WORKERS (sizeof(plan) / sizeof(plan[0]))

struct counts {
        unsigned long writes, einval, errors, same, bursts, below, moves, reads, churns, hotplugs;
};

static unsigned long long rng_state;

static unsigned rnd(unsigned n) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return (unsigned) (rng_state % n);
}

static void sleep_usec(long usec) {
        struct timespec ts = { usec / 1000000, (usec % 1000000) * 1000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static void spin_usec(long usec) {
        double end = now_sec() + usec / 1e6;
        volatile unsigned long x = 0;

        while (now_sec() < end)
                x++;
}

static void *thread_main(void *arg) {
        long on = (long) arg;

        for (;;) {
                spin_usec(on);
                if (on < 100000)
                        sleep_usec(on);
        }
        return NULL;
}

/* A worker process: never returns; the run ends it with SIGKILL. */
static void worker(enum kind kind) {
        pthread_t t;

        switch (kind) {
        case SPIN:
                for (;;)
                        spin_usec(100000);
        case BURSTY:
                for (;;) {
                        spin_usec(1000);
                        sleep_usec(1000);
                }
        case SLEEPER:
                for (;;) {
                        spin_usec(200);
                        sleep_usec(5000);
                }
        case FORKER:
                for (;;) {
                        pid_t pid = fork();

                        if (pid == 0) {
                                spin_usec(3000);
                                _exit(0);
                        }
                        sleep_usec(10000);
                        while (waitpid(-1, NULL, WNOHANG) > 0)
                                ;
                }
        case THREADS:
                pthread_create(&t, NULL, thread_main, (void *) 100000L);
                pthread_create(&t, NULL, thread_main, (void *) 1000L);
                thread_main((void *) 100000L);
        }
        _exit(1);
}

static int move_to(const char *group, pid_t pid) {
        char path[256], buf[32];

        snprintf(path, sizeof(path), "%s/cgroup.procs", group);
        snprintf(buf, sizeof(buf), "%d", (int) pid);
        return write_file(path, buf);
}

static pid_t start_worker(enum kind kind, const char *group) {
        pid_t pid = fork();

        if (pid == 0) {
                if (move_to(group, getpid()) < 0)
                        _exit(1);
                worker(kind);
        }
        return pid;
}

static int setup(void) {
        static const char *const parents[] = { TOP, TOP "/a", TOP "/b" };
        char path[256];
        int r;

        for (size_t i = 0; i < N_GROUPS; i++)
                if (mkdir(groups[i], 0755) < 0 && errno != EEXIST)
                        return -errno;
        for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++) {
                snprintf(path, sizeof(path), "%s/cgroup.subtree_control", parents[i]);
                r = write_file(path, "+cpu");
                if (r < 0)
                        return r;
        }
        return 0;
}

static long long read_number(const char *path) {
        char buf[64] = "";
        FILE *f = fopen(path, "re");

        if (!f)
                return -1;
        if (!fgets(buf, sizeof(buf), f))
                buf[0] = '\0';
        fclose(f);
        return buf[0] >= '0' && buf[0] <= '9' ? strtoll(buf, NULL, 10) : -1;
}

/* The group's cpu.max as "QUOTA PERIOD" (QUOTA may be "max"); -errno. */
static int read_max(const char *group, char *buf, size_t size) {
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/cpu.max", group);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        if (!fgets(buf, (int) size, f))
                buf[0] = '\0';
        fclose(f);
        buf[strcspn(buf, "\n")] = '\0';
        return buf[0] ? 0 : -ENODATA;
}

/*
 * Diagnostics for a run that stalls (7.2 patched, no hotplug: PID 1 made a few
 * writes in minutes without being blocked in D state). PID 1 marks each step
 * of its loop (op_begin()); a second thread of PID 1 (in the root group, like
 * PID 1) dumps the state of the hierarchy, "STRESS diag ..." lines, when a
 * step has taken more than 2 s beyond what it should, again every 10 s while
 * it lasts, and every 30 s anyway: each group's cpu.max, cpu.max.burst and
 * cpu.stat, each group's cfs_rq per CPU from debugfs' sched/debug (queued,
 * throttled, throttle_count), and each worker's threads (state, CPU time,
 * CPU, wchan, cgroup, kernel stack when not running).
 */
static atomic_llong op_start_us;        /* 0: no step under way */
static atomic_llong op_expect_us;
static _Atomic(const char *) op_name;
static atomic_int churn_pid;
static const pid_t *diag_pids;

static long long now_usec(void) {
        return (long long) (now_sec() * 1e6);
}

static void op_end(void);

/* The step @name begins (and the one before ends); it should take @expect_usec. */
static void op_begin(const char *name, long long expect_usec) {
        op_end();
        atomic_store(&op_name, name);
        atomic_store(&op_expect_us, expect_usec);
        atomic_store(&op_start_us, now_usec());
}

static void op_end(void) {
        long long start = atomic_exchange(&op_start_us, 0);
        long long took = now_usec() - start;

        if (start && took - atomic_load(&op_expect_us) > 2000000)
                say("STRESS diag slow op=%s took=%.3f s\n", atomic_load(&op_name), took / 1e6);
}

/* The whole of a small file into @buf, NUL-terminated; its length or -1. */
static ssize_t slurp(const char *path, char *buf, size_t size) {
        FILE *f = fopen(path, "re");
        size_t n;

        buf[0] = '\0';
        if (!f)
                return -1;
        n = fread(buf, 1, size - 1, f);
        fclose(f);
        buf[n] = '\0';
        return (ssize_t) n;
}

/* Newlines of @s to @c, the trailing ones dropped. */
static char *flatten(char *s, char c) {
        size_t n = strlen(s);

        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
                s[--n] = '\0';
        for (char *p = s; *p; p++)
                if (*p == '\n')
                        *p = c;
        return s;
}

static void diag_group(const char *why, const char *group) {
        char path[256], max[64], burst[32], stat[512];

        snprintf(path, sizeof(path), "%s/cpu.max", group);
        if (slurp(path, max, sizeof(max)) < 0)
                return;
        snprintf(path, sizeof(path), "%s/cpu.max.burst", group);
        slurp(path, burst, sizeof(burst));
        snprintf(path, sizeof(path), "%s/cpu.stat", group);
        slurp(path, stat, sizeof(stat));
        say("STRESS diag %s group=%s max=\"%s\" burst=%s stat: %s\n", why, group + strlen(CG),
            flatten(max, ' '), flatten(burst, ' '), flatten(stat, ' '));
}

/* The cfs_rqs of the stress groups in sched/debug: one line per CPU and group. */
static void diag_cfs_rqs(const char *why) {
        static const char *const keys[] = { ".nr_queued", ".h_nr_queued", ".h_nr_runnable", ".throttled",
                                             ".throttle_count" };
        char l[512], out[900] = "";
        size_t o = 0;
        bool in = false;
        FILE *f = fopen("/sys/kernel/debug/sched/debug", "re");

        if (!f) {
                say("STRESS diag %s sched/debug: %s\n", why, strerror(errno));
                return;
        }
        while (fgets(l, sizeof(l), f)) {
                l[strcspn(l, "\n")] = '\0';
                if (strncmp(l, "cfs_rq[", 7) == 0 || l[0] == '\0' || strncmp(l, "rt_rq[", 6) == 0) {
                        if (in && o)
                                say("STRESS diag %s %s\n", why, out);
                        in = strncmp(l, "cfs_rq[", 7) == 0 && strstr(l, "/bwgov-stress");
                        o = in ? (size_t) snprintf(out, sizeof(out), "%s", l) : 0;
                        continue;
                }
                if (!in)
                        continue;
                /* A debug kernel's line (boot-check's debug patch): as it is. */
                if (strncmp(l, "  .bw: ", 7) == 0) {
                        if (o < sizeof(out))
                                o += (size_t) snprintf(out + o, sizeof(out) - o, " %s", l + 7);
                        continue;
                }
                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                        const char *k = strstr(l, keys[i]), *v;

                        if (!k || strncmp(k + strlen(keys[i]), " ", 1) != 0 || !(v = strchr(k, ':')))
                                continue;
                        if (o < sizeof(out))
                                o += (size_t) snprintf(out + o, sizeof(out) - o, " %s=%s", keys[i] + 1,
                                                       v + 1 + strspn(v + 1, " "));
                }
        }
        if (in && o)
                say("STRESS diag %s %s\n", why, out);
        fclose(f);
}

/* One task: state, utime+stime (ticks), CPU, wchan, cgroup; its kernel stack
 * when it is not running. */
static void diag_task(const char *why, pid_t pid, pid_t tid) {
        char path[96], buf[1024], wchan[64], cg[128], stack[1024], state = '?';
        unsigned long ut = 0, st = 0;
        int cpu = -1;
        char *p;

        snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int) pid, (int) tid);
        if (slurp(path, buf, sizeof(buf)) <= 0)
                return;
        p = strrchr(buf, ')');
        /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ... processor (39) */
        if (p)
                sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %*d %*d %*u %*u "
                              "%*d %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*d %d",
                       &state, &ut, &st, &cpu);
        snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", (int) pid, (int) tid);
        slurp(path, wchan, sizeof(wchan));
        snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", (int) pid, (int) tid);
        slurp(path, cg, sizeof(cg));
        stack[0] = '\0';
        if (state != 'R') {
                snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", (int) pid, (int) tid);
                slurp(path, stack, sizeof(stack));
        }
        say("STRESS diag %s task=%d/%d state=%c ticks=%lu cpu=%d wchan=%s cg=%s%s%.600s\n", why, (int) pid,
            (int) tid, state, ut + st, cpu, wchan[0] ? wchan : "-", flatten(cg, ' '), stack[0] ? " stack: " : "",
            flatten(stack, '|'));
}

static void diag_process(const char *why, pid_t pid) {
        char path[64];
        struct dirent *e;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        d = opendir(path);
        if (!d)
                return;
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        diag_task(why, pid, (pid_t) atoi(e->d_name));
        closedir(d);
}

static void diag_dump(const char *why) {
        int churn = atomic_load(&churn_pid);

        for (size_t i = 0; i < N_GROUPS; i++)
                diag_group(why, groups[i]);
        diag_group(why, TOP "/a/churn");
        diag_cfs_rqs(why);
        diag_process(why, 1);
        for (size_t i = 0; i < N_WORKERS; i++)
                if (diag_pids[i] > 0)
                        diag_process(why, diag_pids[i]);
        if (churn > 0)
                diag_process(why, churn);
}

/*
 * With "bwgov.probe=1" (boot-check: BWGOV_STRESS_PROBE=1), an experiment on a
 * churn child that a waitpid has waited for 20 s: write each group above it,
 * its own first, a cpu.max one microsecond above its quota (a real change:
 * tg_set_cfs_bandwidth() sets every cfs_rq's runtime_remaining to 1 and
 * unthrottles the throttled ones), and say after each whether the child is
 * gone 2 s later. A child that goes after its group's rewrite was held by
 * that group's throttling (debt), not by a leaked throttle_count below it.
 */
static void probe(int pid) {
        static const char *const chain[] = { TOP "/a/churn", TOP "/a", TOP };
        char max[64], path[256];
        long long quota, period;

        for (size_t i = 0; i < sizeof(chain) / sizeof(chain[0]); i++) {
                snprintf(path, sizeof(path), "%s/cpu.max", chain[i]);
                if (read_max(chain[i], max, sizeof(max)) < 0)
                        continue;
                if (sscanf(max, "%lld %lld", &quota, &period) != 2)
                        continue;       /* "max": nothing to reset */
                snprintf(max, sizeof(max), "%lld %lld", quota + 1, period);
                say("STRESS diag probe write %s \"%s\": %d\n", path, max, write_file(path, max));
                sleep_usec(2000000);
                snprintf(path, sizeof(path), "/proc/%d/stat", pid);
                if (atomic_load(&churn_pid) != pid || access(path, F_OK) < 0) {
                        say("STRESS diag probe churn child %d gone after the write to %s\n", pid,
                            chain[i] + strlen(CG));
                        return;
                }
                say("STRESS diag probe churn child %d still there after the write to %s\n", pid,
                    chain[i] + strlen(CG));
                diag_dump("probe");
        }
}

/* The watching thread of PID 1: a dump every 30 s, and when a step is slow. */
static void *diag_main(void *arg) {
        long long last_periodic = now_usec(), last_slow = 0, seen = 0, probed = 0;
        bool probing = cmdline_number("probe", 0) != 0;
        char why[96];

        (void) arg;
        for (;;) {
                long long now, start;

                sleep_usec(500000);
                now = now_usec();
                start = atomic_load(&op_start_us);
                if (probing && start && start != probed && now - start > 20000000 &&
                    strcmp(atomic_load(&op_name), "churn-waitpid") == 0 && atomic_load(&churn_pid) > 0) {
                        probed = start;
                        probe(atomic_load(&churn_pid));
                } else if (start && now - start - atomic_load(&op_expect_us) > 2000000 &&
                    (start != seen || now - last_slow >= 10000000)) {
                        snprintf(why, sizeof(why), "slow:%s:%.0fs", atomic_load(&op_name), (now - start) / 1e6);
                        say("STRESS diag begin %s\n", why);
                        diag_dump(why);
                        seen = start;
                        last_slow = now;
                } else if (now - last_periodic >= 30000000) {
                        diag_dump("periodic");
                        last_periodic = now;
                }
        }
        return NULL;
}

static void diag_start(const pid_t *pids) {
        pthread_t t;

        diag_pids = pids;
        if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) < 0 && errno != EBUSY)
                say("STRESS diag debugfs: %s\n", strerror(errno));
        if (pthread_create(&t, NULL, diag_main, NULL) != 0)
                say("STRESS diag no watching thread\n");
}

/* A write refused with EINVAL is expected (mainline refuses a burst above the
 * quota, a parent may be below its child); any other error is counted as one
 * and the first ones are printed. */
static void write_group(struct counts *c, const char *group, const char *file, const char *value) {
        char path[256];
        int r;

        snprintf(path, sizeof(path), "%s/%s", group, file);
        r = write_file(path, value);
        if (r == 0)
                c->writes++;
        else if (r == -EINVAL)
                c->einval++;
        else if (c->errors++ < 20)
                say("STRESS write-error %s \"%s\": %s\n", path, value, strerror(-r));
}

/* Whether lockdep is still on: "debug_locks: 1" in /proc/lockdep_stats; -1
 * when the file is not there. */
static int lockdep_on(void) {
        char line[256];
        int v = -1;
        FILE *f = fopen("/proc/lockdep_stats", "re");

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, " debug_locks: %d", &v) == 1)
                        break;
        fclose(f);
        return v;
}

/* One random change of the hierarchy. */
static void change(struct counts *c, const pid_t *pids) {
        static const long periods[] = { 20000, 50000, 100000 };
        const char *g = groups[rnd(N_GROUPS)];
        char max[64], path[256];
        long long quota, period, burst;
        unsigned what = rnd(100);

        if (what < 40) {
                period = periods[rnd(3)];
                if (rnd(10) == 0)
                        snprintf(max, sizeof(max), "max %lld", period);
                else
                        snprintf(max, sizeof(max), "%lld %lld", period / 10 + rnd((unsigned) (2 * period - period / 10)),
                                 period);
                write_group(c, g, "cpu.max", max);
        } else if (what < 55) {
                if (read_max(g, max, sizeof(max)) == 0) {
                        write_group(c, g, "cpu.max", max);
                        c->same++;
                }
        } else if (what < 75) {
                if (read_max(g, max, sizeof(max)) == 0 && sscanf(max, "%lld", &quota) == 1) {
                        snprintf(max, sizeof(max), "%u", rnd((unsigned) (2 * quota)));
                        write_group(c, g, "cpu.max.burst", max);
                        c->bursts++;
                }
        } else if (what < 85) {
                snprintf(path, sizeof(path), "%s/cpu.max.burst", g);
                burst = read_number(path);
                if (burst > 2000 && read_max(g, max, sizeof(max)) == 0 &&
                    sscanf(max, "%*s %lld", &period) == 1) {
                        snprintf(max, sizeof(max), "%lld %lld", burst / 2, period);
                        write_group(c, g, "cpu.max", max);
                        c->below++;
                }
        } else if (what < 95) {
                if (move_to(leaves[rnd(N_LEAVES)], pids[rnd(N_WORKERS)]) == 0)
                        c->moves++;
        } else {
                for (size_t i = 0; i < N_GROUPS; i++) {
                        snprintf(path, sizeof(path), "%s/cpu.stat", groups[i]);
                        (void) read_key(path, "throttled_usec");
                }
                c->reads++;
        }
}

/* A group that lives 1 s with a throttled spinner, then goes away. */
static void churn(struct counts *c) {
        const char *g = TOP "/a/churn";
        pid_t pid;

        op_begin("churn-mkdir", 0);
        if (mkdir(g, 0755) < 0) {
                op_end();
                return;
        }
        op_begin("churn-write", 0);
        write_group(c, g, "cpu.max", "2000 20000");
        op_begin("churn-fork", 0);
        pid = start_worker(SPIN, g);
        if (pid > 0) {
                atomic_store(&churn_pid, pid);
                op_begin("churn-sleep", 1000000);
                sleep_usec(1000000);
                op_begin("churn-kill", 0);
                kill(pid, SIGKILL);
                op_begin("churn-waitpid", 0);
                waitpid(pid, NULL, 0);
                atomic_store(&churn_pid, 0);
        }
        op_begin("churn-rmdir", 1000000);
        for (int i = 0; i < 50 && rmdir(g) < 0 && errno == EBUSY; i++)
                sleep_usec(20000);
        op_end();
        c->churns++;
}

static void hotplug(struct counts *c) {
        const char *online = "/sys/devices/system/cpu/cpu1/online";

        if (access(online, W_OK) < 0)
                return;
        if (write_file(online, "0") == 0) {
                sleep_usec(200000);
                if (write_file(online, "1") == 0)
                        c->hotplugs++;
                else
                        say("STRESS error: cannot bring CPU 1 back online\n");
        }
}

static void report(const char *what, double t, const struct counts *c) {
        say("STRESS %s t=%.0f writes=%lu einval=%lu errors=%lu same=%lu bursts=%lu below=%lu moves=%lu "
            "reads=%lu churns=%lu hotplugs=%lu\n",
            what, t, c->writes, c->einval, c->errors, c->same, c->bursts, c->below, c->moves, c->reads,
            c->churns, c->hotplugs);
}

static void teardown(const pid_t *pids) {
        for (size_t i = 0; i < N_WORKERS; i++)
                if (pids[i] > 0)
                        kill(pids[i], SIGKILL);
        while (waitpid(-1, NULL, 0) > 0)
                ;
        for (size_t i = N_GROUPS; i-- > 0;)
                for (int k = 0; k < 50 && rmdir(groups[i]) < 0 && errno == EBUSY; k++)
                        sleep_usec(20000);
}

int stress_run(unsigned seconds, bool hotplug_on) {
        struct counts c = { 0 };
        pid_t pids[N_WORKERS] = { 0 };
        double start, next_report, next_churn, next_hotplug, t;
        int r;

        rng_state = (unsigned long long) (now_sec() * 1e6) | 1;
        r = setup();
        if (r < 0) {
                say("STRESS error=setup:%s\n", strerror(-r));
                return r;
        }
        for (size_t i = 0; i < N_WORKERS; i++) {
                pids[i] = start_worker(plan[i].kind, leaves[plan[i].leaf]);
                if (pids[i] < 0) {
                        say("STRESS error=fork:%s\n", strerror(errno));
                        teardown(pids);
                        return -errno;
                }
        }
        say("STRESS begin seconds=%u groups=%zu workers=%zu hotplug=%d\n", seconds, N_GROUPS, N_WORKERS,
            hotplug_on);
        start = now_sec();
        next_report = 30;
        next_churn = 5;
        next_hotplug = 15;
        diag_start(pids);
        while ((t = now_sec() - start) < seconds) {
                op_begin("change", 0);
                change(&c, pids);
                op_end();
                if (t >= next_churn) {
                        churn(&c);
                        next_churn += 5;
                }
                if (hotplug_on && t >= next_hotplug) {
                        hotplug(&c);
                        next_hotplug += 15;
                }
                if (t >= next_report) {
                        report("progress", t, &c);
                        next_report += 30;
                }
                op_begin("loop-sleep", 20000);
                sleep_usec(2000 + rnd(18000));
                op_end();
        }
        op_begin("teardown", 0);
        teardown(pids);
        op_end();
        report("summary", now_sec() - start, &c);
        interrupts();
        say("STRESS lockdep debug_locks=%d\n", lockdep_on());
        say("STRESS done\n");
        return 0;
}
