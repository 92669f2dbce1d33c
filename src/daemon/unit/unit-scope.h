/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A Subgroup= unit's own cgroup governed as one with it, and the nearest
 * limited ancestor of any unit (unit-scope.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct Unit Unit;
struct bw_bandwidth;

/* At a full sample, with cur what the unit's cgroup holds: open the scope
 * (the unit's cgroup less its Subgroup=), tie it when its quota is the
 * unit's contract, what the unit holds, or what bwgovd wrote, and it has no
 * other child cgroup; while tied (and not observing) put cur's quota on it.
 * Anything else on the scope unties it: a limit of someone else's. */
void unit_scope_follow(Unit *u, const struct bw_bandwidth *cur);
/* The nearest limited ancestor's quota in the unit's period, or
 * BW_QUOTA_MAX (read again every 10 s, at once for a new cgroup). */
uint64_t unit_ancestor_quota(Unit *u, uint64_t now);
/* The scope is tied: the law's ancestor is the one above it. */
bool unit_scope_tied(const Unit *u);
/* Around a write of the unit's bandwidth: a tied scope is raised to target
 * before, and set to what the unit holds after (lowered). */
void unit_scope_before_write(Unit *u, const struct bw_bandwidth *target);
void unit_scope_after_write(Unit *u, const struct bw_bandwidth *now);
/* The nearest limited ancestor above the tied scope, in the unit's period,
 * or BW_QUOTA_MAX (read again every 10 s). */
uint64_t unit_scope_ancestor_quota(Unit *u, uint64_t now);
/* Close the scope's cgroup; the tie is worked out again when it is opened. */
void unit_scope_close(Unit *u);
/* An ancestor's quota changed: read again at the next sample, not taken
 * from what its usage gate kept. */
void unit_forget_ancestor(Unit *u);
