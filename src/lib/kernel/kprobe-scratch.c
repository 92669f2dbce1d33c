/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The behaviour probes' scratch cgroup and the reads and writes of its
 * files (kprobe-scratch.h). */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"
#include "kprobe-scratch.h"

static void sleep_msec(long ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
                ;
}

void bw_scratch_done(struct bw_scratch *s) {
        if (s->child > 0) {
                (void) kill(s->child, SIGKILL);
                while (waitpid(s->child, NULL, 0) < 0 && errno == EINTR)
                        ;
                s->child = 0;
        }
        if (s->dir_fd >= 0) {
                close(s->dir_fd);
                s->dir_fd = -EBADF;
        }
        if (s->name) {
                /* A killed task leaves the cgroup asynchronously: retry a while. */
                for (int i = 0; i < 200; i++) {
                        if (unlinkat(s->root_fd, s->name, AT_REMOVEDIR) >= 0 || errno == ENOENT)
                                break;
                        if (errno != EBUSY)
                                break;
                        sleep_msec(10);
                }
                free(s->name);
                s->name = NULL;
        }
}

int bw_scratch_create(const struct bw_kprobe_env *env, struct bw_scratch *ret) {
        struct bw_scratch s = { .root_fd = env->bw_root_fd, .dir_fd = -EBADF };

        if (asprintf(&s.name, "%s-%d", env->scratch_prefix ? env->scratch_prefix : "bwgov-probe", (int) getpid()) < 0)
                return -ENOMEM;
        if (mkdirat(s.root_fd, s.name, 0755) < 0) {
                int r = -errno;

                /* A leftover of an earlier run of this very pid: remove and retry. */
                if (r != -EEXIST || unlinkat(s.root_fd, s.name, AT_REMOVEDIR) < 0 ||
                    mkdirat(s.root_fd, s.name, 0755) < 0) {
                        free(s.name);
                        return r;
                }
        }
        s.dir_fd = openat(s.root_fd, s.name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (s.dir_fd < 0) {
                int r = -errno;

                bw_scratch_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

int bw_scratch_write(int dir_fd, const char *name, const char *value) {
        return bw_write_at(dir_fd, name, O_NOFOLLOW, value, strlen(value));
}

int bw_scratch_read_u64(int dir_fd, const char *name, uint64_t *ret) {
        char buf[64], *end;
        unsigned long long v;
        ssize_t n;

        n = bw_read_small_at(dir_fd, name, O_NOFOLLOW, buf, sizeof buf);
        if (n < 0)
                return (int) n;
        if (buf[0] < '0' || buf[0] > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(buf, &end, 10);
        if (errno != 0 || (*end != '\n' && *end != '\0' && *end != ' '))
                return -EINVAL;
        *ret = v;
        return 0;
}
