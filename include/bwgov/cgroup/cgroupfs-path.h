/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cgroup's path checked and opened beneath the root, confined: no "..",
 * no symlink out of the tree (cgroupfs-path.c). */
#pragma once

#include <stdbool.h>

/* Check a cgroup path relative to the root ("web.slice/app.service", no
 * leading slash needed, "" or "/" is the root itself). Returns 0, or -EINVAL for
 * "..", ".", empty components, NUL/newline/control bytes, or a length above
 * PATH_MAX. */
int bw_cg_path_validate(const char *path);

/* Open PATH (validated as above) beneath DIRFD with FLAGS (O_CLOEXEC is
 * added), never following a symlink in any component and never
 * leaving DIRFD: openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
 * RESOLVE_NO_MAGICLINKS) when ALLOW_OPENAT2 and the kernel has it (ENOSYS or
 * a seccomp EPERM fall back), else a component-by-component openat() walk.
 * Returns the fd, -EINVAL for a bad path, -ELOOP when a component is a
 * symlink (-EXDEV from openat2 for an escape), or another negative errno.
 * ALLOW_OPENAT2 = false exists so tests cover the fallback. */
int bw_cg_openat_beneath(int dirfd, const char *path, int flags, bool allow_openat2);
