/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "bwgov/cpumax.h"
#include "bwgov/macro.h"

/* Daemon logging. To the journal with structured fields when stderr is
 * connected to it (JOURNAL_STREAM), to stderr otherwise. Only the daemon
 * and the CLI log; src/lib never does. */

void log_setup(void);
void log_set_max_level(int level);
int log_get_max_level(void);
int log_level_from_string(const char *s);

/* Returns -abs(error) (or 0 for error == 0) so callers can `return log_…_errno()`. */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

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
