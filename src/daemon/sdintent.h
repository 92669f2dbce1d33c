/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct Manager Manager;
typedef struct Unit Unit;

/* systemd writes cpu.max for its units (CPUQuota=, set-property) without
 * looking at cpu.max.burst; the kernel refuses a quota below the burst, so
 * while bwgovd holds a raised burst such a write fails in PID 1 and is lost.
 * bwgovd therefore follows what systemd *intends*: the unit's
 * CPUQuotaPerSecUSec and CPUQuotaPeriodUSec over D-Bus. When the intent
 * changes and the kernel does not hold it, bwgovd lowers its burst and puts
 * systemd's value in place itself, then re-bases on it.
 *
 * Returns 1 and the intended quota/period (quota BW_QUOTA_MAX for none) when
 * the intent changed since the last call, 0 when unchanged or unknown (not
 * a systemd unit, no system bus, unit not loaded), never an error: systemd
 * being unreachable only means this safety net is off. */
int sdintent_poll(Manager *m, Unit *u, uint64_t *ret_quota_usec, uint64_t *ret_period_usec);

void sdintent_close(Manager *m);
