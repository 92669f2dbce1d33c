/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* CPU lists in the kernel's syntax ("0-3,8,10-11": cpuset.cpus,
 * /sys/devices/system/cpu/online). */

#include <stddef.h>

#define BW_CPULIST_CPU_MAX 65535U       /* highest CPU number accepted (NR_CPUS is at most 8192 today) */

/* Parse buf[0..len) (a trailing newline is allowed) into the CPUs it names,
 * ascending and without duplicates; *ret is malloc'd (NULL when empty: ""
 * or "\n" name no CPU). Returns 0, -EINVAL for bad syntax, a range that
 * runs backwards or a CPU above BW_CPULIST_CPU_MAX, -ENOMEM. */
int bw_cpulist_parse(const char *buf, size_t len, unsigned **ret, size_t *ret_n);

/* cpus[0..n) (ascending) as a list with ranges ("0-1,3"); "" for n 0.
 * Returns 0, -EINVAL when not ascending, -ENOMEM. */
int bw_cpulist_format(const unsigned *cpus, size_t n, char **ret);
