/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reading one configuration file with libinih: syntax (sections, Key=value,
 * comments), line numbers, long lines and the first-error rule; the caller
 * gets each assignment and decides what the key means. */

#include "bwgov/config/config-error.h"

/* One assignment KEY=VALUE at PATH:LINE of the file's section, in file order;
 * VALUE has no blanks around it and is "" for "Key=". Returns 0 to go on, or
 * a negative errno to stop: -ENOMEM as it is, any other after filling *ERROR
 * (empty on entry), e.g. with bw_config_error_set(error, -EINVAL, path, line,
 * key, ...). */
typedef int (*bw_ini_assign_fn)(const char *path, unsigned line, const char *key, const char *value,
                                void *userdata, struct bw_config_error *error);

/* Parse the file PATH, which may have the section [SECTION] only, calling
 * ASSIGN for each assignment. Stops at the first error, which is the first
 * one in the file (a syntax error before an error of ASSIGN's wins). Returns
 * 0; -EINVAL for a syntax error, an unknown section or what ASSIGN returned,
 * with *RET_ERROR filled; -ENOMEM; or another negative errno from opening or
 * reading PATH, with *RET_ERROR filled. */
int bw_ini_parse_file(const char *path, const char *section, bw_ini_assign_fn assign, void *userdata,
                      struct bw_config_error *ret_error);
