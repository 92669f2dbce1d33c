/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's side of the run-queue telemetry (telemetry.h): load it as
 * Telemetry= says, on the host's own cgroup tree only, keep the reason when
 * there is none, and count (or stop counting) every open unit cgroup. */

#include <stdio.h>

#include "log.h"
#include "manager.h"

static void manager_drop_telemetry(Manager *m, const char *why) {
        if (m->telemetry) {
                for (size_t i = 0; i < m->n_units; i++)
                        unit_detach_telemetry(m->units[i]);
                m->telemetry = telemetry_free(m->telemetry);
                log_info("Run-queue telemetry unloaded: %s", why);
        }
        snprintf(m->telemetry_reason, sizeof(m->telemetry_reason), "%s", why);
}

void manager_apply_telemetry(Manager *m) {
        int r;

        if (m->cgroup_root) {
                manager_drop_telemetry(m, "bwgovd runs on a cgroup tree other than the host's (--cgroup-root)");
                return;
        }
        if (m->root && m->root->v2_fd < 0) {
                manager_drop_telemetry(m, "the host has no cgroup2 tree to count tasks by (cgroup v1 only)");
                return;
        }
        if (!m->config.global.telemetry) {
                manager_drop_telemetry(m, "turned off (Telemetry=no)");
                return;
        }
        if (!m->telemetry) {
                r = telemetry_new(m->config.n_units, &m->telemetry, m->telemetry_reason);
                if (r < 0) {
                        log_notice("No run-queue telemetry: %s", m->telemetry_reason);
                        return;
                }
                m->telemetry_reason[0] = '\0';
                log_info("Run-queue telemetry loaded (BPF; maps sized for the %zu configured units, grown on demand).",
                         m->config.n_units);
        }
        for (size_t i = 0; i < m->n_units; i++)
                unit_attach_telemetry(m->units[i]);
}
