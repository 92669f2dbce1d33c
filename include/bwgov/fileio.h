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

/* Reads the whole file (up to SIZE - 1 bytes) into BUF and NUL-terminates
 * it. Returns the length, -EFBIG if the file does not fit, or another
 * negative errno. SIZE must be at least 1. */
ssize_t bw_read_small_at(int dirfd, const char *path, int open_flags, char *buf, size_t size);

/* Writes BUF[0..LEN) with one write() to an existing file, opened
 * O_WRONLY without O_TRUNC (a cgroup or /proc file takes each write as one
 * value). Returns 0, -EIO if the write was short, or another negative
 * errno (the kernel's verdict on the value: EINVAL, EBUSY, ...). */
int bw_write_at(int dirfd, const char *path, int open_flags, const char *buf, size_t len);
