/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The nested-siblings behaviour probe (kprobe-siblings.c): does a limited
 * group's quota hold for several busy tasks of one child group on one CPU?
 * bw_kprobe_behaviour() gates it; see kprobe-behaviour.h for what it does. */

#include <stdint.h>

#include "bwgov/kernel/kprobe.h"

/* The verdict on what the tasks used (used_ns) against what the quota
 * allowed over the same wall time (allowed_ns): at least twice is ABSENT (a
 * sibling of a throttled task escaped the throttle), at most 1.5 times and
 * at least half PRESENT, anything else UNKNOWN (below half: a host too busy
 * to tell). *ret_permille gets used/allowed in per mille. */
enum bw_kstatus bw_kprobe_nested_siblings_judge(int64_t used_ns, int64_t allowed_ns, unsigned *ret_permille);

/* Runs the probe under env->bw_root_fd. Returns 0 and *ret, or -ENOMEM. */
int bw_kprobe_nested_siblings(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret);
