/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

typedef struct Manager Manager;

/* Write <runtime-dir>/metrics.prom in the Prometheus text format, replaced
 * atomically (node_exporter textfile collector style). */
int metrics_write(Manager *m);
