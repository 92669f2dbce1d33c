/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* INTERIM (branch cont): the subset of the lead's unit-levers.h API that
 * contention.c uses, over a minimal in-memory implementation
 * (unit-levers-interim.c) without write-ahead. Replaced by main's
 * unit-levers.{c,h} when that lands ("levers:" commit). */

#include <stdbool.h>
#include <stddef.h>

typedef struct Unit Unit;

enum unit_lever { UNIT_LEVER_WEIGHT, UNIT_LEVER_IDLE, UNIT_LEVER_FREEZE, UNIT_LEVER_CPUS, _UNIT_LEVER_MAX };

int unit_lever_set(Unit *u, enum unit_lever l, const char *value);
int unit_lever_restore(Unit *u, enum unit_lever l, const char *why);
bool unit_lever_is_set(const Unit *u, enum unit_lever l);
