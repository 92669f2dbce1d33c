/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The bwgovctl commands. Those that talk to bwgovd over varlink: status, show,
 * explain, history, latency, top, reload, pause, resume. argv[0] is the command
 * name; each parses its own options (options.h: --json, --no-legend,
 * --socket=PATH, -h; history also -n N, status also -a/--all; top has its
 * own: -d, -o, -r, -b, -n, -a, --no-legend, --socket) and returns the process
 * exit code, one of the CTL_EXIT_* codes of call.h. The --json output and the
 * codes are documented in docs/bwgovctl-json.md. check-kernel, at the end,
 * needs no daemon. */

#include "call.h"

int verb_status(int argc, char *argv[]);
int verb_show(int argc, char *argv[]);
int verb_explain(int argc, char *argv[]);
int verb_history(int argc, char *argv[]);
int verb_latency(int argc, char *argv[]);
/* top parses its own options (bwgovctl top --help); see verbs-top.c. */
int verb_top(int argc, char *argv[]);
int verb_reload(int argc, char *argv[]);
int verb_pause(int argc, char *argv[]);
int verb_resume(int argc, char *argv[]);

/* `bwgovctl check-kernel [--manifest=PATH] [--json] [--probe|--no-probe]
 * [--cgroup-root=DIR]` (verbs-kcheck.c): compare the running kernel with
 * the patch-set manifest, without a daemon. Returns 0 when every required item
 * is present, 1 when something required is missing, 2 when it could not check
 * (manifest unreadable or invalid, files corrupt, a required item undecidable,
 * or a usage error). */
int verb_check_kernel(int argc, char *argv[]);
