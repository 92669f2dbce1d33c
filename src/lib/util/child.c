/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A call in a forked child (contracts in include/bwgov/util/child.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bwgov/util/child.h"
#include "bwgov/util/macro.h"

static int read_all(int fd, void *buf, size_t size) {
        size_t got = 0;

        while (got < size) {
                ssize_t n = read(fd, (char *) buf + got, size - got);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return -EIO;
                got += (size_t) n;
        }
        return 0;
}

int bw_call_in_child(int (*fn)(void *userdata, void *out), void *userdata, void *out, size_t out_size) {
        _cleanup_free_ char *buf = malloc(sizeof(int) + out_size);
        int p[2], r, status;
        pid_t pid;

        if (!buf || pipe2(p, O_CLOEXEC) < 0)
                return fn(userdata, out);
        pid = fork();
        if (pid < 0) {
                close(p[0]);
                close(p[1]);
                return fn(userdata, out);
        }
        if (pid == 0) {
                ssize_t n;

                close(p[0]);
                if (out_size > 0)
                        memcpy(buf + sizeof(int), out, out_size);
                r = fn(userdata, out_size > 0 ? buf + sizeof(int) : NULL);
                memcpy(buf, &r, sizeof(int));
                n = write(p[1], buf, sizeof(int) + out_size);
                _exit(n == (ssize_t) (sizeof(int) + out_size) ? 0 : 1);
        }
        close(p[1]);
        r = read_all(p[0], buf, sizeof(int) + out_size);
        close(p[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (r < 0)
                return r;
        if (out_size > 0)
                memcpy(out, buf + sizeof(int), out_size);
        memcpy(&r, buf, sizeof(int));
        return r;
}
