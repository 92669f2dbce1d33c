/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The gate of the behaviour probes, and the load-free one among them: the
 * write-order probe (kprobe-write-order.c). */

#include <stdbool.h>

#include "bwgov/kernel/kmanifest.h"
#include "bwgov/kernel/kprobe.h"

/* The load-free behaviour probes: no task in the scratch cgroup, no load, a
 * few writes, milliseconds (write-order). bwgovd runs them at startup,
 * where the busy-loop probes never run. */
bool bw_kbehaviour_is_load_free(enum bw_kbehaviour b);

/* Whether env lets probe b run: allow_behaviour, or allow_load_free_behaviour
 * for a load-free probe. */
bool bw_kprobe_behaviour_allowed(const struct bw_kprobe_env *env, enum bw_kbehaviour b);

/* How the write-order probe writes a value into a cgroup file: 0 or the
 * kernel's negative errno (the test seam). */
typedef int (*bw_kprobe_write_fn)(int dir_fd, const char *name, const char *value, void *userdata);

/* The write-order probe's steps in dir_fd, an empty cgroup with the
 * bandwidth files (v1: cpu.cfs_{period,quota,burst}_us; v2: cpu.max,
 * cpu.max.burst), through write (NULL: the files themselves):
 * period 100000, quota 50000, burst 50000, then quota 25000 below the burst.
 * That write accepted and the burst read back as 50000 is PRESENT (the
 * kernel no longer orders quota and burst); refused with EINVAL, and
 * accepted once the burst is 0, is ABSENT (mainline: a quota below the burst
 * is EINVAL). On v2 a burst read back as 50 is UNKNOWN: the kernel has the
 * cpu.max burst bug (divided by 1000), which hides the check. Anything else
 * is UNKNOWN with the reason. Leaves the group limited; the caller removes
 * it. Returns 0 or -ENOMEM. */
int bw_kprobe_write_order_at(int dir_fd, bool v1, bw_kprobe_write_fn write, void *userdata,
                             struct bw_kprobe_result *ret);
/* The whole probe: a scratch cgroup under env->bw_root_fd, the steps above,
 * the cgroup removed. For bw_kprobe_behaviour(), which checks the gate. */
int bw_kprobe_write_order(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret);
