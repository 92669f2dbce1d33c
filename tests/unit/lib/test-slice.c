/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* EEVDF slices: the task list parser, and get/set on a thread of our own
 * (no root needed to shorten one's own slice; SKIP where the kernel has no
 * custom slices). The deadline reservation bwgovd gives itself, and the
 * clock that times its work within it, in a child (it needs CAP_SYS_NICE:
 * SKIP without). */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/cgroup/slice.h"

static void test_parse(void **state) {
        static const char in[] = "42\n7\n42\n\n100000\n";
        pid_t *v = NULL;
        size_t n = 0;

        assert_int_equal(bw_slice_parse_tids(in, strlen(in), &v, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(v[0], 7);
        assert_int_equal(v[1], 42);
        assert_int_equal(v[2], 100000);
        free(v);
        assert_int_equal(bw_slice_parse_tids("", 0, &v, &n), 0);
        assert_int_equal(n, 0);
        free(v);
        /* The last line may lack its newline. */
        assert_int_equal(bw_slice_parse_tids("5\n6", 3, &v, &n), 0);
        assert_int_equal(n, 2);
        free(v);
        assert_int_equal(bw_slice_parse_tids("5\nx\n", 4, &v, &n), -EINVAL);
        assert_int_equal(bw_slice_parse_tids("0\n", 2, &v, &n), -EINVAL);
        assert_int_equal(bw_slice_parse_tids("-3\n", 3, &v, &n), -EINVAL);
        assert_int_equal(bw_slice_parse_tids("123456789012345678901234567\n", 28, &v, &n), -EINVAL);
}

static void put(const char *dir, const char *name, const char *content) {
        char p[4096];
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", dir, name);
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

/* A slice's threads are in its services: the walk goes down the tree. */
static void test_cgroup_tids(void **state) {
        char t[] = "/tmp/bwgov-test-slice-XXXXXX", p[4096];
        pid_t *v = NULL;
        size_t n = 0;
        int fd;

        assert_non_null(mkdtemp(t));
        put(t, "cgroup.threads", "");
        snprintf(p, sizeof(p), "%s/a.service", t);
        assert_int_equal(mkdir(p, 0755), 0);
        put(p, "cgroup.threads", "30\n10\n");
        snprintf(p, sizeof(p), "%s/a.service/deep", t);
        assert_int_equal(mkdir(p, 0755), 0);
        put(p, "cgroup.threads", "20\n10\n");
        snprintf(p, sizeof(p), "%s/b.service", t);
        assert_int_equal(mkdir(p, 0755), 0);          /* no file: not a cgroup, skipped */

        fd = open(t, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(bw_slice_cgroup_tids(fd, "cgroup.threads", 16, &v, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(v[0], 10);
        assert_int_equal(v[1], 20);
        assert_int_equal(v[2], 30);
        free(v);
        /* Depth-limited: one level down only. */
        assert_int_equal(bw_slice_cgroup_tids(fd, "cgroup.threads", 1, &v, &n), 0);
        assert_int_equal(n, 2);
        free(v);
        /* The top's own file is needed. */
        assert_int_equal(bw_slice_cgroup_tids(fd, "tasks", 16, &v, &n), -ENOENT);
        close(fd);
        snprintf(p, sizeof(p), "rm -rf '%s'", t);
        assert_int_equal(system(p), 0);
}

static void test_supported(void **state) {
        struct utsname u;
        unsigned major = 0, minor = 0;

        assert_int_equal(uname(&u), 0);
        assert_int_equal(sscanf(u.release, "%u.%u", &major, &minor), 2);
        /* Never before 6.12, whatever sched_getattr() says. */
        if (major < 6 || (major == 6 && minor < 12))
                assert_false(bw_slice_supported());
        else {
                uint64_t usec;
                bool fair;

                assert_int_equal(bw_slice_get(0, &usec, &fair), 0);
                assert_int_equal(bw_slice_supported(), fair && usec > 0);
        }
}

static void test_own_slice(void **state) {
        uint64_t def, now;
        bool fair;
        int r;

        if (!bw_slice_supported()) {
                print_message("SKIP: this kernel has no EEVDF custom slices (before 6.12)\n");
                skip();
        }
        assert_int_equal(bw_slice_get(0, &def, &fair), 0);
        assert_true(fair);
        r = bw_slice_set(0, 250);
        if (r == -EPERM) {
                print_message("SKIP: not allowed to set our own slice here\n");
                skip();
        }
        assert_int_equal(r, 0);
        assert_int_equal(bw_slice_get(0, &now, NULL), 0);
        assert_int_equal(now, 250);
        /* 0 is the default again. */
        assert_int_equal(bw_slice_set(0, 0), 0);
        assert_int_equal(bw_slice_get(0, &now, NULL), 0);
        assert_int_equal(now, def);
        assert_int_equal(bw_slice_set(0, BW_SLICE_MAX_USEC + 1), -EINVAL);
        assert_int_equal(bw_slice_get(-1, &now, NULL), -EINVAL);
}

/* bw_slice_set_self() notes the default before it changes the thread's:
 * the default stays what a thread without a custom slice gets. */
static void test_set_self(void **state) {
        uint64_t def, now;
        int r;

        if (!bw_slice_supported()) {
                print_message("SKIP: this kernel has no EEVDF custom slices (before 6.12)\n");
                skip();
        }
        assert_int_equal(bw_slice_get(0, &def, NULL), 0);
        r = bw_slice_set_self(BW_SLICE_MIN_USEC);
        if (r == -EPERM) {
                print_message("SKIP: not allowed to set our own slice here\n");
                skip();
        }
        assert_int_equal(r, 0);
        assert_int_equal(bw_slice_get(0, &now, NULL), 0);
        assert_int_equal(now, BW_SLICE_MIN_USEC);
        assert_int_equal(bw_slice_default_usec(), def);
        assert_int_equal(bw_slice_set_self(0), 0);
        assert_int_equal(bw_slice_get(0, &now, NULL), 0);
        assert_int_equal(now, def);
        assert_int_equal(bw_slice_default_usec(), def);
}

/* In a child: the reservation, its policy, the fair default noted before
 * it (def, 0 where there are no custom slices), a fork that works and
 * starts fair, and the way back to fair with the nice value kept. The exit status says which step failed; 77 = not allowed. */
static int reserve_child(uint64_t def) {
        pid_t pid;
        int r, st;

        if (setpriority(PRIO_PROCESS, 0, 3) < 0)
                return 6;
        r = bw_sched_reserve_self(5000, 50000);
        if (r == -EPERM)
                return 77;
        if (r < 0)
                return 1;
        if (bw_sched_policy(0) != BW_SCHED_DEADLINE)
                return 2;
        if (bw_slice_default_usec() != def)
                return 3;
        pid = fork();
        if (pid < 0)
                return 4;
        if (pid == 0)
                _exit(bw_sched_policy(0) == SCHED_OTHER ? 0 : 1);
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return 5;
        /* Back to fair, its nice value kept. */
        if (bw_sched_fair_self() < 0 || bw_sched_policy(0) != SCHED_OTHER)
                return 7;
        errno = 0;
        if (getpriority(PRIO_PROCESS, 0) != 3)
                return 8;
        return 0;
}

/* A child that reserved the budget exited 0 (the test passes on), 77 (not
 * allowed here: SKIP) or the number of the step that failed. */
static void assert_child_passed(pid_t pid) {
        int st;

        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        if (WEXITSTATUS(st) == 77) {
                print_message("SKIP: not allowed to move a thread to SCHED_DEADLINE here (CAP_SYS_NICE)\n");
                skip();
        }
        assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_reserve_self(void **state) {
        uint64_t def = 0;
        pid_t pid;

        assert_int_equal(bw_sched_reserve_self(0, 50000), -EINVAL);
        assert_int_equal(bw_sched_reserve_self(50001, 50000), -EINVAL);
        assert_int_equal(bw_sched_policy(-1), -EINVAL);
        assert_int_equal(bw_sched_policy(0), SCHED_OTHER);
        if (bw_slice_supported())
                assert_int_equal(bw_slice_get(0, &def, NULL), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(reserve_child(def));
        assert_child_passed(pid);
        /* The parent is untouched. */
        assert_int_equal(bw_sched_policy(0), SCHED_OTHER);
}

static uint64_t now_usec(clockid_t c) {
        struct timespec ts;

        (void) clock_gettime(c, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* In a child: 20 ms of work within a budget of 5 ms every 50 ms takes some
 * 200 ms of wall clock, nearly all of it waiting for the next period;
 * bw_sched_cost_clock() times the work (20 ms, not the wall's 150+); fair
 * again it is the wall clock, a sleep included. 77 = not allowed. */
static int cost_child(void) {
        uint64_t c0, c1, w0, w1, cpu0;
        clockid_t c;
        int r;

        r = bw_sched_reserve_self(5000, 50000);
        if (r == -EPERM)
                return 77;
        if (r < 0)
                return 1;
        c = bw_sched_cost_clock();
        c0 = now_usec(c);
        w0 = now_usec(CLOCK_MONOTONIC);
        cpu0 = now_usec(CLOCK_THREAD_CPUTIME_ID);
        while (now_usec(CLOCK_THREAD_CPUTIME_ID) - cpu0 < 20000)
                ;
        c1 = now_usec(c);
        w1 = now_usec(CLOCK_MONOTONIC);
        if (w1 - w0 < 100000)
                return 2;               /* the budget never ran out: proves nothing */
        if (c1 - c0 < 20000 || c1 - c0 > (w1 - w0) / 2)
                return 3;
        if (bw_sched_fair_self() < 0 || bw_sched_cost_clock() != CLOCK_MONOTONIC)
                return 4;
        c0 = now_usec(bw_sched_cost_clock());
        (void) usleep(20000);
        if (now_usec(bw_sched_cost_clock()) - c0 < 20000)
                return 5;
        return 0;
}

static void test_cost_clock(void **state) {
        pid_t pid;

        assert_int_equal(bw_sched_cost_clock(), CLOCK_MONOTONIC);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(cost_child());
        assert_child_passed(pid);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_cgroup_tids),
                cmocka_unit_test(test_supported),
                cmocka_unit_test(test_own_slice),
                /* Before test_set_self: the default is not noted yet. */
                cmocka_unit_test(test_reserve_self),
                cmocka_unit_test(test_cost_clock),
                cmocka_unit_test(test_set_self),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
