/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* bwgovd's kernel check at startup: the one pipeline of kreport.h, logged as
 * one table, with KernelCheck= deciding what a failed check means. Knows
 * nothing of the Manager: it gets the mode, the manifest and the roots. */

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/config/config.h"
#include "bwgov/kernel/kreport.h"

struct kcheck_startup_args {
        enum bw_kernel_check mode;      /* KernelCheck= */
        const char *manifest_path;      /* --manifest=; NULL: the installed manifest */
        const struct bw_cg_root *root;  /* the cgroup roots the daemon governs */
};

/* Validate the running kernel against the bwgov-kernel-patches manifest:
 * check the manifest and its patch digests, probe the kernel (files,
 * cpu.stat fields, version table, kernel config, BTF; no scratch-cgroup
 * behaviour probes in the daemon: they take seconds and fork busy loops) and
 * log one table. KernelCheck=off skips it; warn logs; strict refuses.
 *
 * Returns 1 when the items were probed (*ret_caps what the kernel can do), 0
 * when they were not (KernelCheck=off, or the manifest could not be loaded:
 * *ret_caps conservative), -EOPNOTSUPP with KernelCheck=strict when a
 * required item is absent or the check could not be done, -ENOMEM (logged).
 * ret_report (may be NULL) receives the report, NULL with KernelCheck=off.
 * Nothing is returned through ret_caps and ret_report on failure. */
int kcheck_startup_run(const struct kcheck_startup_args *a, struct bw_kcaps *ret_caps, struct bw_kreport **ret_report);
