/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "governor.h"

/* Write <runtime_dir>/metrics.prom in the Prometheus text format from the
 * governor's snapshots, replaced atomically (node_exporter textfile
 * collector style). Returns 0 or a negative errno (logged at debug). */
int metrics_write(const Governor *g, const char *runtime_dir);
