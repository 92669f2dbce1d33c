/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The bwgovctl commands that talk to bwgovd over varlink: status, show,
 * explain, history, reload, pause, resume. argv[0] is the command name; each
 * parses its own options (--json, --no-legend, --socket=PATH, -h; history
 * also -n N) and returns the process exit code below. The --json output and
 * the codes are documented in docs/bwgovctl-json.md. */

#define CTL_EXIT_FAILURE     1  /* an error reply other than those below, a broken reply */
#define CTL_EXIT_USAGE       2  /* the command line */
#define CTL_EXIT_NOT_RUNNING 3  /* cannot connect to the socket */
#define CTL_EXIT_NO_UNIT     4  /* io.bwgov.Governor.UnitNotFound */
#define CTL_EXIT_DENIED      5  /* io.bwgov.Governor.PermissionDenied, or EACCES on connect */

int verb_status(int argc, char *argv[]);
int verb_show(int argc, char *argv[]);
int verb_explain(int argc, char *argv[]);
int verb_history(int argc, char *argv[]);
int verb_reload(int argc, char *argv[]);
int verb_pause(int argc, char *argv[]);
int verb_resume(int argc, char *argv[]);
