/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One detection method of a manifest item run (kprobe-run.c): the version
 * table, or the probe of kprobe.h that answers the method. */

#include "bwgov/kernel/kmanifest.h"
#include "bwgov/kernel/kprobe.h"

/* Run one detection method. Inconclusive outcomes (file unreadable, probe not
 * allowed, ...) are BW_KSTATUS_UNKNOWN with the reason in how. Returns 0, or
 * -ENOMEM (ret untouched). item gives the version method its releases. */
int bw_kprobe_run(const struct bw_kprobe_env *env, const struct bw_kitem *item, const struct bw_kdetect *d,
                  struct bw_kprobe_result *ret);
