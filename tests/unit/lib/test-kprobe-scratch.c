/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The behaviour probes' scratch cgroup (src/lib/kernel/kprobe-scratch.c) on a plain
 * directory under /tmp standing in for the bandwidth root: where it is made,
 * a leftover of this pid replaced, what it leaves behind on failure, the
 * task in it killed and reaped, and the one-value reads and writes of its
 * files. The probes that use it need root and real cgroups (check-kernel-host);
 * this needs neither. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"
#include "kernel/kprobe-scratch.h"

struct root {
        char path[64];
        int fd;
};

static void root_init(struct root *r) {
        strcpy(r->path, "/tmp/bwgov-test-scratch-XXXXXX");
        assert_non_null(mkdtemp(r->path));
        r->fd = open(r->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(r->fd >= 0);
}

/* The directory holds at most one level below it here. */
static void root_done(struct root *r) {
        char cmd[128];

        close(r->fd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->path);
        assert_int_equal(system(cmd), 0);
}

static bool exists_at(int dirfd, const char *name) {
        struct stat st;

        return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void put_at(int dirfd, const char *name, const char *text) {
        _cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
}

static char *own_name(const char *prefix) {
        char *name;

        assert_true(asprintf(&name, "%s-%d", prefix, (int) getpid()) > 0);
        return name;
}

/* "<prefix>-<pid>" under the root, open; done removes it and resets s. */
static void test_create_and_done(void **unused) {
        _cleanup_free_ char *name = own_name("bwgov-test-probe");
        _cleanup_free_ char *dflt = own_name("bwgov-probe");
        struct bw_kprobe_env env = { .scratch_prefix = "bwgov-test-probe" };
        struct bw_scratch s;
        struct stat st;
        struct root r;

        root_init(&r);
        env.bw_root_fd = r.fd;
        assert_int_equal(bw_scratch_create(&env, &s), 0);
        assert_string_equal(s.name, name);
        assert_int_equal(s.root_fd, r.fd);
        assert_int_equal(s.child, 0);
        assert_true(s.dir_fd >= 0);
        assert_int_equal(fstat(s.dir_fd, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_true(exists_at(r.fd, name));

        bw_scratch_done(&s);
        assert_false(exists_at(r.fd, name));
        assert_null(s.name);
        assert_int_equal(s.dir_fd, -EBADF);
        bw_scratch_done(&s);                    /* twice: nothing left to do */

        /* No prefix: "bwgov-probe-<pid>". */
        env.scratch_prefix = NULL;
        assert_int_equal(bw_scratch_create(&env, &s), 0);
        assert_string_equal(s.name, dflt);
        assert_true(exists_at(r.fd, dflt));
        bw_scratch_done(&s);
        assert_false(exists_at(r.fd, dflt));
        root_done(&r);
}

/* An empty leftover of this very pid is replaced; one that cannot be
 * removed is an error, and ret stays untouched. */
static void test_leftover(void **unused) {
        _cleanup_free_ char *name = own_name("bwgov-test-probe");
        struct bw_kprobe_env env = { .scratch_prefix = "bwgov-test-probe" };
        struct bw_scratch s, untouched = { .root_fd = 1234, .dir_fd = 5678 };
        struct stat after;
        struct root r;
        int fd;

        umask(022);
        root_init(&r);
        env.bw_root_fd = r.fd;
        assert_int_equal(mkdirat(r.fd, name, 0700), 0);
        assert_int_equal(bw_scratch_create(&env, &s), 0);
        assert_int_equal(fstat(s.dir_fd, &after), 0);
        assert_int_equal(after.st_mode & 07777, 0755);   /* made again, not the leftover's 0700 */
        bw_scratch_done(&s);
        assert_false(exists_at(r.fd, name));

        /* A leftover with a file in it: rmdir refuses, so does create. */
        assert_int_equal(mkdirat(r.fd, name, 0700), 0);
        fd = openat(r.fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        put_at(fd, "tasks", "");
        close(fd);
        s = untouched;
        assert_int_equal(bw_scratch_create(&env, &s), -EEXIST);
        assert_memory_equal(&s, &untouched, sizeof s);
        assert_true(exists_at(r.fd, name));     /* not ours to remove */
        root_done(&r);
}

/* No root, or one that is not a directory: the error, nothing made. */
static void test_create_errors(void **unused) {
        struct bw_kprobe_env env = { .bw_root_fd = -EBADF };
        struct bw_scratch s, untouched = { .root_fd = 1234, .dir_fd = 5678 };
        struct root r;
        int fd;

        s = untouched;
        assert_int_equal(bw_scratch_create(&env, &s), -EBADF);
        assert_memory_equal(&s, &untouched, sizeof s);

        root_init(&r);
        put_at(r.fd, "file", "");
        fd = openat(r.fd, "file", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        env.bw_root_fd = fd;
        assert_int_equal(bw_scratch_create(&env, &s), -ENOTDIR);
        assert_memory_equal(&s, &untouched, sizeof s);
        close(fd);
        root_done(&r);
}

/* The task a probe started in the scratch cgroup is killed and reaped
 * before the directory goes. */
static void test_done_kills_child(void **unused) {
        struct bw_kprobe_env env = { .scratch_prefix = "bwgov-test-probe" };
        struct bw_scratch s;
        struct root r;
        pid_t pid, w;
        int e;

        root_init(&r);
        env.bw_root_fd = r.fd;
        assert_int_equal(bw_scratch_create(&env, &s), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                for (;;)
                        pause();
        }
        s.child = pid;
        bw_scratch_done(&s);
        w = waitpid(pid, NULL, WNOHANG);
        e = errno;
        if (w == 0) {                   /* still there: end it, so the test fails and does not hang */
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
        }
        assert_int_equal(w, -1);        /* already reaped */
        assert_int_equal(e, ECHILD);
        assert_int_equal(s.child, 0);
        assert_null(s.name);
        root_done(&r);
}

/* One value in, one unsigned decimal number out; anything else -EINVAL. */
static void test_write_and_read(void **unused) {
        static const struct {
                const char *text;
                int r;
                uint64_t value;
        } cases[] = {
                { "50000\n", 0, 50000 },
                { "0", 0, 0 },
                { "18446744073709551615\n", 0, UINT64_MAX },
                { "100000 extra\n", 0, 100000 },        /* the first number of a line */
                { "18446744073709551616\n", -EINVAL, 0 },       /* out of range */
                { "max\n", -EINVAL, 0 },
                { "-1\n", -EINVAL, 0 },
                { " 5\n", -EINVAL, 0 },
                { "5x\n", -EINVAL, 0 },
                { "", -EINVAL, 0 },
        };
        struct root r;
        char buf[64];
        uint64_t v;

        root_init(&r);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                put_at(r.fd, "cpu.max.burst", cases[i].text);
                v = 4242;
                assert_int_equal(bw_scratch_read_u64(r.fd, "cpu.max.burst", &v), cases[i].r);
                assert_int_equal(v, cases[i].r == 0 ? cases[i].value : 4242);  /* untouched on error */
        }
        assert_int_equal(bw_scratch_read_u64(r.fd, "missing", &v), -ENOENT);

        /* A write is one write() to a file that exists, never a new one. */
        put_at(r.fd, "cpu.max", "");
        assert_int_equal(bw_scratch_write(r.fd, "cpu.max", "25000 100000"), 0);
        assert_int_equal(bw_read_small_at(r.fd, "cpu.max", 0, buf, sizeof buf), 12);
        assert_string_equal(buf, "25000 100000");
        assert_int_equal(bw_scratch_write(r.fd, "cpu.weight", "100"), -ENOENT);
        assert_false(exists_at(r.fd, "cpu.weight"));

        /* Neither follows a symbolic link. */
        assert_int_equal(symlinkat("cpu.max", r.fd, "link"), 0);
        assert_int_equal(bw_scratch_write(r.fd, "link", "1"), -ELOOP);
        assert_int_equal(bw_scratch_read_u64(r.fd, "link", &v), -ELOOP);
        root_done(&r);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_create_and_done),
                cmocka_unit_test(test_leftover),
                cmocka_unit_test(test_create_errors),
                cmocka_unit_test(test_done_kills_child),
                cmocka_unit_test(test_write_and_read),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
