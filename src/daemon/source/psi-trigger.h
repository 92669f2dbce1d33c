/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A PSI trigger on a cgroup's cpu.pressure "full" line, which grows by the
 * wall time the group is throttled (Documentation/accounting/psi.rst, "full"
 * for cgroups): the fd becomes readable (EPOLLPRI) when the stall exceeds
 * the threshold within the window, and reports EPOLLERR once the cgroup is
 * gone. */

#include <stdbool.h>
#include <stdint.h>

#include "bwgov/util/macro.h"

/* Unprivileged PSI triggers need a window that is a multiple of 2 s
 * (kernel/sched/psi.c psi_trigger_create(), without CAP_SYS_RESOURCE). */
#define PSI_TRIGGER_UNPRIVILEGED_WINDOW_USEC (2 * USEC_PER_SEC)

/* Opens cpu.pressure below v2_dirfd and arms a trigger for target_pressure
 * (µs/s) over window_usec, rounded up to a 2 s multiple unless any_window.
 * Only on a real cgroup2 file: writing a trigger into a fixture's regular
 * file would corrupt it. Returns the fd to poll, or a negative errno
 * (-EMEDIUMTYPE when the file is not on cgroup2; logged at debug, name is
 * for the messages). */
int psi_trigger_open(int v2_dirfd, const char *name, uint64_t target_pressure, uint64_t window_usec, bool any_window);
