/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/util/macro.h"

/* Daemon logging. To the journal with structured fields when stderr is
 * connected to it (JOURNAL_STREAM), to stderr otherwise. Only the daemon
 * and the CLI log; src/lib never does. */

/* Where the lines go (above), and the memory of the repeat filter (below)
 * taken now: called first, at the start. */
void log_setup(void);
void log_set_max_level(int level);
int log_get_max_level(void);
int log_level_from_string(const char *s);

/* Returns -abs(error) (or 0 for error == 0) so callers can `return log_…_errno()`. */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

/* Repeats. Between log_repeat_begin() and log_repeat_end() (nested scopes
 * count), a warning or error whose text was logged before is held back
 * until LOG_REPEAT_WINDOW_USEC after it was last logged, then logged again
 * with "(N more times in the last 10 min, not logged)"; a changed text (a
 * different unit, path or error) is logged at once (bwgov/util/repeat.h). The
 * passes that run on every tick use a scope: the units' ticks, the host
 * timer, the deferred state save. So a failure that recurs on every tick
 * (a cgroup that cannot be opened, a state directory that cannot be
 * written) is one line, then one summary line every 10 minutes while it
 * lasts. Outside a scope (start, reload, a client's command, stop) every
 * line is logged. Info, notice and debug lines are never held back. */
#define LOG_REPEAT_WINDOW_USEC (10 * 60 * USEC_PER_SEC)
void log_repeat_begin(void);
void log_repeat_end(void);

/* log_internal() through the repeat filter, whatever the scope: for lines
 * that a client can make the daemon repeat (a refused connection). */
int log_limited(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_debug(...)   log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)    log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)  log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)   log_internal(LOG_ERR, 0, __VA_ARGS__)
#define log_debug_errno(e, ...)   log_internal(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...)    log_internal(LOG_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...)   log_internal(LOG_ERR, (e), __VA_ARGS__)

/* -Wpedantic rejects %m: messages take "%s" and STRERROR(r). */
#define STRERROR(e) strerror(abs(e))

#define log_oom() log_internal(LOG_ERR, ENOMEM, "Out of memory.")

/* A change of a unit's bandwidth, with BWGOV_UNIT=, BWGOV_QUOTA_OLD=,
 * BWGOV_QUOTA_NEW=, BWGOV_BURST_OLD=, BWGOV_BURST_NEW=, BWGOV_REASON= fields
 * (quotas in µs per period, "max" for unlimited). */
void log_unit_change(int level, const char *unit, const struct bw_bandwidth *old,
                     const struct bw_bandwidth *new, const char *reason, const char *fmt, ...) _printf_(6, 7);
