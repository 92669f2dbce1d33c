/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host sample (pressure, the CPU used outside the governed groups, the
 * brake) and the shedding plan, every ActiveInterval= (manager.c's host
 * timer). */
#pragma once

#include "manager-types.h"

/* The host sample and the shedding plan (manager-host.c), every
 * host_interval(). */
void manager_sample_host(Manager *m);
void manager_plan_shedding(Manager *m, uint64_t now);
