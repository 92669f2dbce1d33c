/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a unit is doing, in one word and two numbers: the views the CLI,
 * the metrics and the guards read (unit-state.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct Unit Unit;

/* What a unit is doing, one word for tables and JSON: "absent" (no
 * cgroup), "new" (not adopted yet), "paused", "exhausted" (at the baseline
 * for want of credit), "spending" (using credit with headroom in place),
 * "resting" (headroom in place, not spending), "baseline" (no headroom:
 * mode, CPUQuotaMax= or an ancestor leaves none). */
enum unit_state {
        UNIT_STATE_ABSENT,
        UNIT_STATE_NEW,
        UNIT_STATE_PAUSED,
        UNIT_STATE_EXHAUSTED,
        UNIT_STATE_BASELINE,
        UNIT_STATE_SPENDING,
        UNIT_STATE_RESTING,
        _UNIT_STATE_MAX,
};
enum unit_state unit_state(const Unit *u);
const char *unit_state_to_string(const Unit *u);
/* The unit uses headroom above its baseline (it is "spending" with its
 * quota raised): the one definition of "boosted". */
bool unit_is_boosted(const Unit *u);
/* Headroom the unit holds, µs/s: its quota above the baseline, resting or
 * in use (0 when not adopted, not written or unlimited). */
uint64_t unit_headroom(const Unit *u);
