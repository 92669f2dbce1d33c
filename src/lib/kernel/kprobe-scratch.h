/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The behaviour probes' scratch cgroup (src/lib only, not installed): one
 * directory "<scratch_prefix>-<pid>" under the bandwidth root, created empty
 * and always removed again, with the task a probe may have moved into it
 * killed first; and the one-value reads and writes of its files. Used by
 * kprobe-behaviour.c (busy-loop probes) and kprobe-write-order.c (no task). */

#include <stdint.h>
#include <sys/types.h>

#include "bwgov/kernel/kprobe.h"

struct bw_scratch {
        int root_fd;                    /* borrowed: env->bw_root_fd */
        char *name;                     /* "<prefix>-<pid>", NULL when none */
        int dir_fd;                     /* the scratch cgroup, -EBADF when none */
        pid_t child;                    /* a task in it the caller started, 0 when none */
};

/* Creates the scratch cgroup under env->bw_root_fd (a leftover of an earlier
 * run of this very pid is removed first). Returns 0 and *ret, or a negative
 * errno (nothing left behind). */
int bw_scratch_create(const struct bw_kprobe_env *env, struct bw_scratch *ret);

/* Kills and reaps s->child if set, closes the directory and removes it
 * (retrying for up to 2 s while a killed task is still leaving it). */
void bw_scratch_done(struct bw_scratch *s);

/* One value into a cgroup file, one write(): 0 or the kernel's negative errno. */
int bw_scratch_write(int dir_fd, const char *name, const char *value);

/* A file holding one unsigned decimal number (cpu.max.burst,
 * cpu.cfs_burst_us, ...). Returns 0, -EINVAL for other content, or a
 * negative errno. */
int bw_scratch_read_u64(int dir_fd, const char *name, uint64_t *ret);
