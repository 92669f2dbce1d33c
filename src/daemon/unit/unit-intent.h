/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What someone else means cpu.max to be and the kernel does not hold:
 * systemd's CPUQuota= and refused writes, put in place (unit-intent.c). */
#pragma once

#include "unit.h"

/* What others meant cpu.max to be and the kernel refused for our burst
 * (unit-intent.c): a refused write told by the kernel (unit_refused_write())
 * or systemd's changed CPUQuota=, put in place with the burst lowered
 * first, then re-based on. cur is updated. Returns 0 or a negative errno. */
int unit_follow_intents(Unit *u, struct bw_bandwidth *cur, uint64_t now);
/* Note a refused write of this unit's cgroup for the next tick. */
void unit_refused_write(Unit *u, const struct bw_refused_write *w);

/* Its restore is to be done again at the end of the stop. */
void unit_stop_restore_again(Unit *u);
/* The stop began: its write errors so far are counted. */
void unit_stop_begin(Unit *u);
/* Did a write fail since unit_stop_begin()? */
bool unit_stop_write_failed(const Unit *u);
