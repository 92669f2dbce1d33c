/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers of the fuzz targets (see fuzz-util.h). */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-util.h"

_Noreturn void fuzz_fail(const char *file, int line, const char *what) {
        fprintf(stderr, "%s:%d: property does not hold: %s\n", file, line, what);
        abort();
}

char *fuzz_strndup(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                abort();
        if (size > 0)
                memcpy(s, data, size);
        s[size] = '\0';
        return s;
}

uint64_t fuzz_take_u64(struct fuzz_bytes *b) {
        uint64_t v = 0;

        for (size_t i = 0; i < sizeof(v); i++)
                v = v << 8 | fuzz_take_u8(b);
        return v;
}

uint8_t fuzz_take_u8(struct fuzz_bytes *b) {
        uint8_t v;

        if (b->size == 0)
                return 0;
        v = b->data[0];
        b->data++;
        b->size--;
        return v;
}

char *fuzz_mkdtemp(const char *name) {
        char *path;

        if (asprintf(&path, "/tmp/bwgov-fuzz-%s-XXXXXX", name) < 0)
                return NULL;
        if (!mkdtemp(path)) {
                int saved = errno;

                free(path);
                errno = saved;
                return NULL;
        }
        return path;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path) < 0 ? -1 : 0;
}

int fuzz_rm_rf(const char *path) {
        /* Depth first, physical: a symlink is removed, never followed. */
        if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
                return -errno;
        return 0;
}

int fuzz_write_file_at(int dirfd, const char *path, const void *content, size_t len) {
        const char *p = content;
        int fd, r = 0;

        fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                p += n;
                len -= (size_t) n;
        }
        close(fd);
        return r;
}
