/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's side of its BPF programs: the run-queue telemetry
 * (rqstat-bpf.h), loaded as Telemetry= says, on the host's own cgroup tree
 * only, with the reason kept when there is none, counting every open unit
 * cgroup; and the refused quota writes (refused.h), handed to their unit. */

#include <inttypes.h>
#include <stdio.h>

#include "clock.h"
#include "log.h"
#include "manager-types.h"
#include "manager-bpf.h"
#include "manager-shared.h"
#include "unit/unit-intent.h"
#include "unit/unit-tick.h"

static void manager_drop_rqstat(Manager *m, const char *why) {
        if (m->rqstat) {
                for (size_t i = 0; i < m->n_units; i++)
                        unit_detach_rqstat(m->units[i]);
                m->rqstat = rqstat_free(m->rqstat);
                log_info("Run-queue telemetry unloaded: %s", why);
        }
        snprintf(m->rqstat_reason, sizeof(m->rqstat_reason), "%s", why);
}

/* A unit at its baseline ran (ParkAtBaseline=, unit-tick.h): a parked
 * one counts as the parked check's wakes do, and the host passes come
 * every ActiveInterval= again. One parked at its headroom with its flag
 * armed (unit-tick.c) is not sampled for it: a sample for every burst of
 * a group that bursts between its checks cost bwgovd 0.7 % of a CPU more
 * at ten thousand groups, 5 % of them bursty. Only the host passes come
 * every ActiveInterval= again, and one near the limit looks at it. */
static void on_unit_wake(void *owner, void *userdata) {
        Manager *m = userdata;
        Unit *u = owner;
        bool was_parked = u->sampler.parked;
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC);

        if (m->stopping)
                return;
        if (unit_wake_headroom(u)) {
                m->parked_no_wake++;
                manager_host_pass_soon(m, now);
                return;
        }
        if (was_parked && u->sampler.at_baseline)
                m->parked_wakes++;
        unit_wake(u, now);
        if (was_parked && !u->sampler.parked) {
                m->unparked++;
                manager_host_pass_soon(m, now);
        }
}

void manager_apply_rqstat(Manager *m) {
        int r;

        if (m->cgroup_root) {
                manager_drop_rqstat(m, "bwgovd runs on a cgroup tree other than the host's (--cgroup-root)");
                return;
        }
        if (m->root && m->root->v2_fd < 0) {
                manager_drop_rqstat(m, "the host has no cgroup2 tree to count tasks by (cgroup v1 only)");
                return;
        }
        if (!m->config.global.telemetry) {
                manager_drop_rqstat(m, "turned off (Telemetry=no)");
                return;
        }
        if (!m->rqstat) {
                r = rqstat_new(m->config.n_units, &m->rqstat, m->rqstat_reason);
                if (r < 0) {
                        log_notice("No run-queue telemetry: %s", m->rqstat_reason);
                        return;
                }
                m->rqstat_reason[0] = '\0';
                log_info("Run-queue telemetry loaded (BPF; maps sized for the %zu configured units, grown on demand).",
                         m->config.n_units);
                r = rqstat_follow_wakes(m->rqstat, m->event, on_unit_wake, m);
                if (r < 0)
                        log_warning_errno(r, "The run-queue telemetry cannot wake parked units (%s): "
                                         "ParkAtBaseline= parks them at their headroom.", STRERROR(r));
        }
        for (size_t i = 0; i < m->n_units; i++)
                unit_attach_rqstat(m->units[i]);
}

static void on_refused(const struct bw_refused_write *w, void *userdata) {
        Manager *m = userdata;

        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];

                if (u->cg && u->adopted && (uint64_t) u->cg->bw_ino == w->cgroup_id) {
                        unit_refused_write(u, w);
                        return;
                }
        }
        log_debug("%s[%" PRIu32 "]: a quota of %" PRIu64 "us refused for the burst of cgroup %" PRIu64
                  ", which bwgovd does not govern", w->comm, w->tgid, w->quota_usec, w->cgroup_id);
}

void manager_follow_refused(Manager *m, bool write_order_free) {
        int r;

        if (m->cgroup_root) {
                snprintf(m->refused_reason, sizeof(m->refused_reason),
                         "bwgovd runs on a cgroup tree other than the host's (--cgroup-root)");
                return;
        }
        if (write_order_free) {
                snprintf(m->refused_reason, sizeof(m->refused_reason),
                         "not needed: the kernel takes a quota below the burst (burst-write-order)");
                log_info("The kernel takes a quota below the burst: "
                         "writers lowering a governed quota are never refused.");
                return;
        }
        r = refused_new(m->event, on_refused, m, &m->refused, m->refused_reason);
        if (r < 0) {
                log_notice("Quota writes the kernel refuses for bwgovd's burst cannot be followed: %s. A writer "
                           "other than systemd that lowers a governed quota below the burst gets EINVAL "
                           "(bwgovd(8), WRITE ORDER).", m->refused_reason);
                return;
        }
        m->refused_reason[0] = '\0';
        log_info("Quota writes the kernel refuses for bwgovd's burst are followed and put in place "
                 "(BPF fexit on %s()).", refused_function(m->refused));
}
