/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `bwgovctl check-kernel [--manifest=PATH] [--json] [--probe|--no-probe]
 * [--cgroup-root=DIR]`: compare the running kernel with the patch-set
 * manifest, without a daemon. argv[0] is the verb name. Returns the process
 * exit code: 0 every required item present, 1 something required missing,
 * 2 could not check (manifest unreadable or invalid, files corrupt, a
 * required item undecidable, or a usage error). */
int verb_check_kernel(int argc, char *argv[]);
