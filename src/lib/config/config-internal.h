/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Between config.c and config-prefix.c (prefix units): config_load_unit(). */

struct bw_config;
struct bw_config_error;
struct bw_unit_config;

/* Unit NAME's drop-ins (its own directory's and its prefix directories')
 * parsed and checked: 1 with *ret, *ret_cgroup_at ("file:line" of
 * Cgroup=, or NULL) and, unless ret_named_at is NULL, *ret_named_at
 * (config_cgroup_source()); 0 when none is left unmasked, or a negative
 * errno with *error filled. */
int config_load_unit(const char *const *dirs, const char *name, struct bw_unit_config *ret, char **ret_cgroup_at,
                     char **ret_named_at, struct bw_config_error *error);

struct bw_dropin_list;
