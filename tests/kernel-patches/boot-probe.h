/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What boot-probe.c (PID 1 of boot-check's guests) shares with boot-stress.c.
 * Built static by tests/kernel-patches/boot-check; not part of the meson build.
 */
#pragma once

#include <stdbool.h>

#define CG "/sys/fs/cgroup"

/* printf() to the console, flushed at once (the guest may stop any time);
 * after say_through_kmsg(), one line at a time into the kernel log instead. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* From now on say() writes to /dev/kmsg (made if missing), whose console
 * writes poll the serial port: no task ever waits on the console tty (see
 * boot-stress.c). Returns 0, or -errno and say() keeps the console. */
int say_through_kmsg(void);

/* Write @value to the file @path: 0, or -errno. */
int write_file(const char *path, const char *value);

/* Value of "key N" in a flat-keyed file such as cpu.stat; -1 when absent. */
long long read_key(const char *path, const char *key);

/* CLOCK_MONOTONIC in seconds. */
double now_sec(void);

/* N from "bwgov.KEY=N" on the kernel command line; @def when absent. */
unsigned cmdline_number(const char *key, unsigned def);

/*
 * The stress run (boot-check --stress): a hierarchy of bandwidth-limited
 * cgroups with spinning, sleeping and forking workers whose cpu.max and
 * cpu.max.burst change under them for @seconds, CPU 1 taken offline and back
 * every 15 s when @hotplug. Prints "STRESS ..." lines and returns 0 when it
 * ran to the end, -errno when it could not set up.
 */
int stress_run(unsigned seconds, bool hotplug);
