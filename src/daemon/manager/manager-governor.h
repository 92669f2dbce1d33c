/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The governor API (governor.h) over the Manager and its Units: snapshots
 * for IPC and metrics and the commands (reload, pause); the status counts
 * are manager-shared.c's manager_counts(). */
#pragma once

#include "governor.h"

/* The governor API (governor.h) over a Manager: userdata is the Manager. */
extern const struct governor_ops manager_governor_ops;
