/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

typedef struct Manager Manager;

/* Validate the running kernel against the bwgov-kernel-patches manifest at
 * startup: check the manifest and its patch digests, probe the kernel (files,
 * cpu.stat fields, version table, kernel config, BTF; no scratch-cgroup
 * behaviour probes in the daemon: they take seconds and fork busy loops),
 * log one table, and keep the capabilities in m->kcaps for the governor.
 * KernelCheck=off skips it; warn logs; strict refuses to start (-EOPNOTSUPP)
 * when a required item is absent or the check could not be done. */
int manager_check_kernel(Manager *m);
