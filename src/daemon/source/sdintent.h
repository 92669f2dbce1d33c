/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What systemd intends for a unit's cpu.max, read over D-Bus.
 *
 * systemd writes cpu.max for its units (CPUQuota=, set-property) without
 * looking at cpu.max.burst; the kernel refuses a quota below the burst, so
 * while bwgovd holds a raised burst such a write fails in PID 1 and is lost.
 * bwgovd therefore follows what systemd *intends*: the unit's
 * CPUQuotaPerSecUSec and CPUQuotaPeriodUSec. When the intent changes and the
 * kernel does not hold it, bwgovd lowers its burst and puts systemd's value
 * in place itself, then re-bases on it (unit-intent.c). This file owns the bus
 * connection and the D-Bus reads; the unit remembers what it saw. */

#include <stdbool.h>
#include <stdint.h>

typedef struct SdIntent SdIntent;

/* enabled false (a fixture cgroup tree, not the host's) makes every read
 * say "unknown" without touching the bus. Returns 0 or -ENOMEM. */
int sdintent_new(bool enabled, SdIntent **ret);
SdIntent *sdintent_free(SdIntent *s);

/* The quota (BW_QUOTA_MAX for none) and period systemd intends for unit.
 * Returns 1 with both set, 0 when unknown (not a systemd unit, no system
 * bus, unit not loaded, a read failed), never an error: systemd being
 * unreachable only means this safety net is off. */
int sdintent_read(SdIntent *s, const char *unit, uint64_t *ret_quota_usec, uint64_t *ret_period_usec);
