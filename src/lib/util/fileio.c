/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small-file read and write relative to a directory fd (contracts in
 * include/bwgov/util/fileio.h). */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"

/* Reads until EOF or until BUF[0..SIZE) is full. Returns the length or a
 * negative errno. */
static ssize_t read_loop(int fd, char *buf, size_t size) {
        size_t len = 0;

        while (len < size) {
                ssize_t n = read(fd, buf + len, size - len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        return (ssize_t) len;
}

/* The whole of fd into a new NUL-terminated buffer (bw_read_full_at()). */
static int read_fd_full(int fd, size_t max, char **ret_buf, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;

        for (;;) {
                ssize_t n;

                if (len == size) {
                        char *nb;

                        /* One byte past MAX tells "exactly MAX" from "more". */
                        if (size > max)
                                return -EFBIG;
                        size = size == 0 ? 4096 : size * 2;
                        if (size > max + 1)
                                size = max + 1;
                        nb = realloc(buf, size + 1);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                }
                n = read_loop(fd, buf + len, size - len);
                if (n < 0)
                        return (int) n;
                len += (size_t) n;
                if (len > max)
                        return -EFBIG;
                if (len < size)
                        break;
        }
        buf[len] = '\0';
        *ret_buf = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int bw_read_full_at(int dirfd, const char *path, int open_flags, size_t max, char **ret_buf, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | open_flags);
        if (fd < 0)
                return -errno;
        return read_fd_full(fd, max, ret_buf, ret_len);
}

/* -EISDIR for a directory, -EBADFD for any other file that is not a
 * regular one, 0 for a regular file. */
static int verify_regular(mode_t mode) {
        if (S_ISREG(mode))
                return 0;
        return S_ISDIR(mode) ? -EISDIR : -EBADFD;
}

int bw_open_regular_at(int dirfd, const char *path, int open_flags) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        /* Look first, so that a device is not even opened (an open can
         * have side effects); then open without blocking, and check what
         * was opened, which may have been swapped in since. */
        if (fstatat(dirfd, path, &st, open_flags & O_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0) < 0)
                return -errno;
        if (S_ISLNK(st.st_mode))
                return -ELOOP;
        r = verify_regular(st.st_mode);
        if (r < 0)
                return r;
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | open_flags);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        r = verify_regular(st.st_mode);
        if (r < 0)
                return r;
        return TAKE_FD(fd);
}

int bw_read_regular_at(int dirfd, const char *path, int open_flags, size_t max, char **ret_buf, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;

        fd = bw_open_regular_at(dirfd, path, open_flags);
        if (fd < 0)
                return fd;
        return read_fd_full(fd, max, ret_buf, ret_len);
}

const char *bw_file_type_name(mode_t mode) {
        switch (mode & S_IFMT) {
        case S_IFREG:  return "a regular file";
        case S_IFDIR:  return "a directory";
        case S_IFIFO:  return "a FIFO";
        case S_IFSOCK: return "a socket";
        case S_IFCHR:  return "a character device";
        case S_IFBLK:  return "a block device";
        case S_IFLNK:  return "a symlink";
        default:       return "a file of unknown type";
        }
}

ssize_t bw_read_small_at(int dirfd, const char *path, int open_flags, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;
        char extra;

        if (size == 0)
                return -EINVAL;
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | open_flags);
        if (fd < 0)
                return -errno;
        n = read_loop(fd, buf, size - 1);
        if (n < 0)
                return n;
        if ((size_t) n == size - 1) {
                ssize_t m = read_loop(fd, &extra, 1);

                if (m < 0)
                        return m;
                if (m > 0)
                        return -EFBIG;
        }
        buf[n] = '\0';
        return n;
}

int bw_write_at(int dirfd, const char *path, int open_flags, const char *buf, size_t len) {
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY | open_flags);
        if (fd < 0)
                return -errno;
        n = write(fd, buf, len);
        if (n < 0)
                return -errno;
        if ((size_t) n != len)
                return -EIO;
        return 0;
}
