/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One unit per cgroup as the configuration tells it, Subgroup= too: the
 * claims made while loading and their check (config-claims.c). Private to
 * src/lib/config. */
#pragma once

#include <stddef.h>

struct bw_unit_config;
struct bw_config_error;
struct bw_dropin_list;

/* Which cgroup each unit governs, as the configuration says (Cgroup= or the
 * cgroup its name maps to, with its Subgroup=), so that two never govern
 * one (config-claims.c): add each loaded unit, then check. A unit searched for by name (a service,
 * a scope) claims nothing here: bwgovd refuses a second claim on one
 * cgroup when it finds them (by device and inode). */
struct config_claim;
struct config_claims {
        struct config_claim *v;
        size_t n;
};
int config_claims_add(struct config_claims *c, const struct bw_unit_config *u, const char *named_at);

/* Two units on one cgroup: -EINVAL with *error naming both ("file:line"
 * of the later one's Cgroup= or Subgroup=). */
int config_claims_check(struct config_claims *c, struct bw_config_error *error);
void config_claims_done(struct config_claims *c);

/* Where u names its cgroup, into *ret: "file:line" of Subgroup= (sub_file),
 * else of Cgroup= (cg_file), else NULL (found by its name). Returns 0 or
 * -ENOMEM. */
int config_cgroup_source(const struct bw_unit_config *u, const char *cg_file, unsigned cg_line,
                         const char *sub_file, unsigned sub_line, char **ret);
