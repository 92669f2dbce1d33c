/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The error report of the configuration loader: which file, line and key
 * were at fault and what was expected there. The loader modules (config.c,
 * config-ini.c, config-dropin.c, config-prefix.c, config-claims.c) fill it;
 * callers print it. */

#include <stdarg.h>

#include "bwgov/util/macro.h"

/* Error report: set when loading fails. Caller frees with bw_config_error_done(). */
struct bw_config_error {
        char *file;             /* the file or directory at fault; NULL when none */
        unsigned line;          /* 0 when not tied to a line */
        char *key;              /* NULL when not tied to a key */
        char *message;          /* what was expected, e.g. "expected a CPU percentage like 250%";
                                 * NULL only after an allocation failure */
};

/* Frees the strings and zeroes *e. Accepts NULL. */
void bw_config_error_done(struct bw_config_error *e);

/* Format "file:line: key: message" (parts omitted when absent) into a
 * malloc'd string; NULL on ENOMEM. */
char *bw_config_error_to_string(const struct bw_config_error *e);

/* For the loader: fill *E (which must be empty) with copies of FILE and KEY
 * (either may be NULL) and the formatted message, and return R; or return
 * -ENOMEM, with *E still empty, when the strings cannot be allocated. */
_printf_(6, 0)
int bw_config_error_setv(struct bw_config_error *e, int r, const char *file, unsigned line, const char *key,
                         const char *fmt, va_list ap);
_printf_(6, 7)
int bw_config_error_set(struct bw_config_error *e, int r, const char *file, unsigned line, const char *key,
                        const char *fmt, ...);
/* The same for an I/O error R (negative errno) on FILE: "WHAT: strerror". */
int bw_config_error_set_errno(struct bw_config_error *e, int r, const char *file, const char *what);
/* FILE, named like a configuration file, is a directory, FIFO, socket or
 * device: "a FIFO, not a configuration file: expected ...". Returns
 * -EINVAL (or -ENOMEM). */
int bw_config_error_set_not_regular(struct bw_config_error *e, const char *file);
