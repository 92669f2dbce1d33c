/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PID 1 of the boot-check initramfs: mounts proc, sysfs and cgroup2, enables the
 * cpu controller and measures CFS bandwidth behaviour in scratch cgroups, one
 * "RESULT <test> key=value..." line per test on the console, then reboots (qemu
 * runs with -no-reboot, so that ends the VM).
 *
 *   enforce    1 busy thread, cpu.max "50000 100000", 2 s: usage must stay near
 *              1 s (the pool still limits; atomic-runtime-pool must not leak)
 *   rewrite    1 busy thread, cpu.max "10000 100000", 3 s, the same cpu.max
 *              written every 2 ms (identical-update-noop: usage stays near 0.3 s)
 *   bursty     4 threads running 1 ms and sleeping 1 ms, cpu.max "50000 100000",
 *              2 s: exercises runtime return, the slack timer and unthrottling
 *   writeorder no task: cpu.max "50000 100000", cpu.max.burst 50000, then
 *              cpu.max "25000 100000", below the burst (burst-write-order:
 *              lowered=1 and the burst kept; mainline: lowered=0 errno=22,
 *              EINVAL), then a burst of five quotas over "10000 100000"
 *              (burst_set=1 patched, 0 mainline)
 *   burstcap   when burst_set: that group (burst 50000 over quota 10000), 0.6 s
 *              idle, then 1 busy thread for 1 s: no period may run more than one
 *              quota over its quota (burst_usec <= nr_bursts * 10000), the
 *              refill caps the burst at min(burst, quota)
 *   (bwgovctl check-kernel, table and JSON, behaviour probes on)
 *   boundary   NCPU busy threads, quota = NCPU CPUs at a 10 ms period, 3 s: any
 *              throttling is accounting noise (accounting-slack: close to none);
 *              after a "PROBE boundary begins" line
 *   test_cpu   when boot-check put /test_cpu (the kernel's cgroup CPU selftest,
 *              with the series' cases) into the initramfs: run whole N times
 *              ("bwgov.kselftest=N" on the command line, default 1), its TAP
 *              output between "KSELFTEST BEGIN" and "KSELFTEST END" lines; last
 *
 * With "bwgov.stress=SECONDS" on the command line it runs none of these but
 * boot-stress.c's stress run (boot-check --stress).
 *
 * Built static by tests/kernel-patches/boot-check; not part of the meson build.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boot-probe.h"

static atomic_bool stop_flag;

static int kmsg_fd = -1;

int say_through_kmsg(void) {
        if (mknod("/dev/kmsg", S_IFCHR | 0600, makedev(1, 11)) < 0 && errno != EEXIST)
                return -errno;
        kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
        return kmsg_fd < 0 ? -errno : 0;
}

void say(const char *fmt, ...) {
        char buf[1024];
        va_list ap;
        int n;

        va_start(ap, fmt);
        if (kmsg_fd < 0) {
                vprintf(fmt, ap);
                va_end(ap);
                fflush(stdout);
                return;
        }
        n = vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        if ((size_t) n >= sizeof(buf))
                n = sizeof(buf) - 1;
        if (write(kmsg_fd, buf, (size_t) n) < 0)
                return;         /* nowhere else to say it */
}

int write_file(const char *path, const char *value) {
        int fd, r = 0;
        size_t n = strlen(value);

        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, value, n) != (ssize_t) n)
                r = -errno;
        close(fd);
        return r;
}

/* Value of "key N" in a flat-keyed file such as cpu.stat; -1 when absent. */
long long read_key(const char *path, const char *key) {
        char line[256];
        long long v = -1;
        size_t klen = strlen(key);
        FILE *f;

        f = fopen(path, "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
                        v = strtoll(line + klen + 1, NULL, 10);
                        break;
                }
        fclose(f);
        return v;
}

double now_sec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin_for(double sec) {
        double end = now_sec() + sec;
        volatile unsigned long x = 0;

        while (now_sec() < end)
                x++;
}

struct worker {
        pthread_t thread;
        bool bursty;
};

static void *worker_main(void *arg) {
        struct worker *w = arg;
        struct timespec ms = { 0, 1000 * 1000 };
        volatile unsigned long x = 0;

        while (!atomic_load(&stop_flag)) {
                if (w->bursty) {
                        spin_for(0.001);
                        nanosleep(&ms, NULL);
                } else
                        for (int i = 0; i < 100000; i++)
                                x++;
        }
        return NULL;
}

/*
 * Run @nthreads workers inside cgroup @name with @cpu_max for @sec seconds; the
 * workers are threads of a child process that moves itself into the cgroup. If
 * @rewrite_ms > 0 the parent writes @cpu_max again every @rewrite_ms ms.
 */
static int run_test(const char *test, const char *cpu_max, int nthreads, bool bursty,
                    double sec, int rewrite_ms, double idle_sec) {
        char dir[128], path[192], pidbuf[32];
        long long usage, periods, throttled, throttled_us, bursts, burst_us;
        unsigned rewrites = 0;
        int pipefd[2], status;
        pid_t pid;
        char c;

        snprintf(dir, sizeof(dir), CG "/bwgov-test-%s", test);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                say("RESULT %s error=mkdir:%s\n", test, strerror(errno));
                return -1;
        }
        snprintf(path, sizeof(path), "%s/cpu.max", dir);
        if (write_file(path, cpu_max) < 0) {
                say("RESULT %s error=cpu.max:%s\n", test, strerror(errno));
                return -1;
        }
        if (pipe(pipefd) < 0)
                return -1;

        pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                struct worker *w = calloc(nthreads, sizeof(*w));

                close(pipefd[1]);
                snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
                snprintf(pidbuf, sizeof(pidbuf), "%d", getpid());
                if (!w || write_file(path, pidbuf) < 0)
                        _exit(1);
                /* Wait for the start signal, then run until the pipe closes. */
                if (read(pipefd[0], &c, 1) != 1)
                        _exit(1);
                for (int i = 0; i < nthreads; i++) {
                        w[i].bursty = bursty;
                        pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
                }
                (void) read(pipefd[0], &c, 1);
                atomic_store(&stop_flag, true);
                for (int i = 0; i < nthreads; i++)
                        pthread_join(w[i].thread, NULL);
                _exit(0);
        }
        close(pipefd[0]);
        /* Let the child join the cgroup (and the group idle, if asked). */
        usleep((useconds_t) ((idle_sec > 0.1 ? idle_sec : 0.1) * 1e6));

        snprintf(path, sizeof(path), "%s/cpu.stat", dir);
        usage = read_key(path, "usage_usec");
        periods = read_key(path, "nr_periods");
        throttled = read_key(path, "nr_throttled");
        throttled_us = read_key(path, "throttled_usec");
        bursts = read_key(path, "nr_bursts");
        burst_us = read_key(path, "burst_usec");

        (void) write(pipefd[1], "g", 1);
        double start = now_sec();
        while (now_sec() - start < sec) {
                if (rewrite_ms > 0) {
                        char max_path[192];

                        usleep(rewrite_ms * 1000);
                        snprintf(max_path, sizeof(max_path), "%s/cpu.max", dir);
                        if (write_file(max_path, cpu_max) == 0)
                                rewrites++;
                } else
                        usleep(50 * 1000);
        }
        close(pipefd[1]);
        waitpid(pid, &status, 0);

        say("RESULT %s seconds=%.2f usage_usec=%lld nr_periods=%lld nr_throttled=%lld throttled_usec=%lld "
            "nr_bursts=%lld burst_usec=%lld rewrites=%u\n",
            test, sec,
            read_key(path, "usage_usec") - usage,
            read_key(path, "nr_periods") - periods,
            read_key(path, "nr_throttled") - throttled,
            read_key(path, "throttled_usec") - throttled_us,
            read_key(path, "nr_bursts") - bursts,
            read_key(path, "burst_usec") - burst_us,
            rewrites);
        rmdir(dir);
        return 0;
}

/* A file holding one number; -1 when unreadable. */
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

/* writeorder and, where the kernel takes a burst above the quota, burstcap
 * (see the top). Leaves no cgroup behind. */
static void write_order_test(void) {
        const char *dir = CG "/bwgov-test-burstcap";
        int lowered, burst_set, err = 0;
        long long burst_after;

        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                say("RESULT writeorder error=mkdir:%s\n", strerror(errno));
                return;
        }
        if (write_file(CG "/bwgov-test-burstcap/cpu.max", "50000 100000") < 0 ||
            write_file(CG "/bwgov-test-burstcap/cpu.max.burst", "50000") < 0) {
                say("RESULT writeorder error=setup:%s\n", strerror(errno));
                rmdir(dir);
                return;
        }
        lowered = write_file(CG "/bwgov-test-burstcap/cpu.max", "25000 100000");
        if (lowered < 0)
                err = -lowered;
        burst_after = read_number(CG "/bwgov-test-burstcap/cpu.max.burst");
        /* Five quotas of burst over a quota of 10 ms (mainline: burst first
         * down to 0, then the quota, then the burst, which it refuses). */
        (void) write_file(CG "/bwgov-test-burstcap/cpu.max.burst", "0");
        (void) write_file(CG "/bwgov-test-burstcap/cpu.max", "10000 100000");
        burst_set = write_file(CG "/bwgov-test-burstcap/cpu.max.burst", "50000") == 0;
        say("RESULT writeorder lowered=%d errno=%d burst_after=%lld burst_set=%d\n",
            lowered == 0, err, burst_after, burst_set);
        if (burst_set)
                run_test("burstcap", "10000 100000", 1, false, 1.0, 0, 0.6);
        rmdir(dir);
}

/* When boot-check put bwgovctl (with its libraries and the manifest) into
 * the initramfs, run its kernel check with behaviour probes here, between
 * markers boot-check extracts: the table an operator would see. */
static void check_kernel(void) {
        static const char *const variants[][5] = {
                { "/bwgovctl", "check-kernel", "--manifest=/kp/manifest.json", NULL, NULL },
                { "/bwgovctl", "check-kernel", "--manifest=/kp/manifest.json", "--json", NULL },
        };

        if (access("/bwgovctl", X_OK) < 0)
                return;
        setenv("NO_COLOR", "1", 1);     /* the console is a tty */
        for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
                pid_t pid;
                int status = 0;

                say("CHECKKERNEL BEGIN %s\n", variants[i][3] ? "json" : "table");
                pid = fork();
                if (pid == 0) {
                        execv(variants[i][0], (char *const *) variants[i]);
                        _exit(127);
                }
                if (pid > 0)
                        waitpid(pid, &status, 0);
                say("CHECKKERNEL END exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        }
}

/* When boot-check put the kernel's own cgroup CPU selftest (test_cpu, built
 * from the patched tree: the series adds cases to it) into the initramfs, run
 * it whole @runs times; its TAP output goes to the console between markers. */
static void run_kselftest(unsigned runs) {
        char *const argv[] = { "/test_cpu", NULL };

        if (access("/test_cpu", X_OK) < 0)
                return;
        for (unsigned run = 1; run <= runs; run++) {
                int status = 0;
                pid_t pid;

                say("KSELFTEST BEGIN test_cpu run=%u\n", run);
                pid = fork();
                if (pid == 0) {
                        execv(argv[0], argv);
                        _exit(127);
                }
                if (pid > 0)
                        waitpid(pid, &status, 0);
                say("KSELFTEST END exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        }
}

unsigned cmdline_number(const char *key, unsigned def) {
        char line[1024] = "", want[64];
        const char *p;
        FILE *f = fopen("/proc/cmdline", "re");

        if (!f)
                return def;
        if (!fgets(line, sizeof(line), f))
                line[0] = '\0';
        fclose(f);
        snprintf(want, sizeof(want), "bwgov.%s=", key);
        p = strstr(line, want);
        return p ? (unsigned) strtoul(p + strlen(want), NULL, 10) : def;
}

int main(void) {
        unsigned stress;
        long ncpu;
        char max[64];

        mkdir("/proc", 0555);
        mkdir("/sys", 0555);
        mount("proc", "/proc", "proc", 0, NULL);
        mount("sysfs", "/sys", "sysfs", 0, NULL);
        stress = cmdline_number("stress", 0);
        if (stress > 0)
                (void) say_through_kmsg();
        if (mount("cgroup2", CG, "cgroup2", 0, NULL) < 0) {
                say("RESULT setup error=mount-cgroup2:%s\n", strerror(errno));
                goto out;
        }
        if (write_file(CG "/cgroup.subtree_control", "+cpu") < 0) {
                say("RESULT setup error=enable-cpu:%s\n", strerror(errno));
                goto out;
        }
        ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        say("RESULT setup ncpu=%ld\n", ncpu);

        if (stress > 0) {
                if (stress_run(stress, cmdline_number("hotplug", 1) != 0) == 0)
                        say("RESULT done\n");
                goto out;
        }

        run_test("enforce", "50000 100000", 1, false, 2.0, 0, 0);
        run_test("rewrite", "10000 100000", 1, false, 3.0, 2, 0);
        run_test("bursty", "50000 100000", 4, true, 2.0, 0, 0);
        write_order_test();
        check_kernel();
        /* Last: under TCG a 10 ms period timer can overrun, and mainline then
         * prints "period too short" under cfs_b->lock, which lockdep reports
         * against the console and which turns lockdep (and lock_stat) off. The
         * probes above, and check-kernel's lock_stat reading, are done by then;
         * boot-check judges what follows this line apart. */
        say("PROBE boundary begins\n");
        snprintf(max, sizeof(max), "%ld 10000", ncpu * 10000);
        run_test("boundary", max, (int) ncpu, false, 3.0, 0, 0);
        /* After the cut too: test_cpu has a 10 ms period of its own. */
        run_kselftest(cmdline_number("kselftest", 1));
        say("RESULT done\n");
out:
        sync();
        reboot(RB_AUTOBOOT);
        return 0;
}
