/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Prefix directories ("libpod-.scope.d/"): which unit names one applies to,
 * and the configuration of an instance made from one (config-prefix.c). */
#pragma once

#include "bwgov/config/config.h"

/* Whether a prefix directory of C applies to unit NAME (not a prefix name
 * itself): NAME starts with one's part before the dot and has its type. */
bool bw_config_prefix_matches(const struct bw_config *c, const char *name);

/* The configuration of unit NAME as its prefix directories (and its own
 * <NAME>.d, if any) make it, governing CGROUP (relative to the root).
 * Returns 1 with *ret filled, 0 when every drop-in is masked, or a
 * negative errno with *error filled. */
int bw_config_load_instance(const char *const *dirs, const char *name, const char *cgroup,
                            struct bw_unit_config *ret, struct bw_config_error *error);
