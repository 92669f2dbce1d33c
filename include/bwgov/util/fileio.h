/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small-file I/O relative to a directory fd: the one place that loops over
 * read() and checks a write() for shortness. cgroup, /proc and sysfs files,
 * the state file and the manifest all go through here.
 *
 * Every path is opened relative to DIRFD (AT_FDCWD for a plain path) with
 * O_CLOEXEC|O_NOCTTY plus the caller's OPEN_FLAGS (O_NOFOLLOW, where the last
 * component must not be a symlink). Errors are negative errno values; EINTR
 * is retried. */

#include <stddef.h>
#include <sys/types.h>

/* Reads the whole file into a new NUL-terminated buffer. Returns 0 with
 * *ret_buf (free()) and *ret_len set, -EFBIG if the file holds more than MAX
 * bytes, or another negative errno. An empty file gives an empty string. */
int bw_read_full_at(int dirfd, const char *path, int open_flags, size_t max, char **ret_buf, size_t *ret_len);

/* Opens a file that must be a regular file, for reading, in a way no file
 * type can block or disturb: a FIFO, socket or device found at PATH is not
 * opened (fstatat() first), and the open itself is O_NONBLOCK (what was
 * opened is checked again with fstat(): it may have been swapped in). With
 * O_NOFOLLOW in OPEN_FLAGS a symlink is refused. Returns the fd (O_NONBLOCK
 * set, which changes nothing for a regular file), -EISDIR for a directory,
 * -EBADFD for another file that is not a regular one, -ELOOP for a symlink
 * under O_NOFOLLOW, or another negative errno (-ENOENT, -EACCES, ...). */
int bw_open_regular_at(int dirfd, const char *path, int open_flags);

/* bw_read_full_at() for a file that must be a regular file (state, config):
 * opened with bw_open_regular_at(), with its errors. */
int bw_read_regular_at(int dirfd, const char *path, int open_flags, size_t max, char **ret_buf, size_t *ret_len);

/* What kind of file MODE says, for messages: "a FIFO", "a directory",
 * "a socket", "a character device", ... (static strings). */
const char *bw_file_type_name(mode_t mode);

/* Reads the whole file (up to SIZE - 1 bytes) into BUF and NUL-terminates
 * it. Returns the length, -EFBIG if the file does not fit, or another
 * negative errno. SIZE must be at least 1. */
ssize_t bw_read_small_at(int dirfd, const char *path, int open_flags, char *buf, size_t size);

/* Writes BUF[0..LEN) with one write() to an existing file, opened
 * O_WRONLY without O_TRUNC (a cgroup or /proc file takes each write as one
 * value). Returns 0, -EIO if the write was short, or another negative
 * errno (the kernel's verdict on the value: EINVAL, EBUSY, ...). */
int bw_write_at(int dirfd, const char *path, int open_flags, const char *buf, size_t len);
