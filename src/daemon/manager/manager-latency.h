/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The latency guard's timing (latency-guard.h): a pass from the host timer
 * every ActiveInterval= while the guard is idle, its own fast timer every
 * LATENCY_FAST_USEC while it has a latency unit or holds something. */
#pragma once

#include "manager-types.h"

/* The latency guard's pass from the host timer at usec, when it is idle
 * and something changed, starting its own fast timer once it has work
 * (manager-latency.c). */
void manager_latency_pass(Manager *m, uint64_t usec);
