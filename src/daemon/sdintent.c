/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "bwgov/discover.h"
#include "log.h"
#include "manager.h"
#include "sdintent.h"

static const char *unit_interface(const char *name) {
        static const struct { const char *suffix, *iface; } map[] = {
                { ".slice",   "org.freedesktop.systemd1.Slice"   },
                { ".service", "org.freedesktop.systemd1.Service" },
                { ".scope",   "org.freedesktop.systemd1.Scope"   },
                { ".socket",  "org.freedesktop.systemd1.Socket"  },
                { ".mount",   "org.freedesktop.systemd1.Mount"   },
                { ".swap",    "org.freedesktop.systemd1.Swap"    },
        };
        size_t n = strlen(name);

        for (size_t i = 0; i < ELEMENTSOF(map); i++) {
                size_t k = strlen(map[i].suffix);
                if (n > k && strcmp(name + n - k, map[i].suffix) == 0)
                        return map[i].iface;
        }
        return NULL;
}

static sd_bus *get_bus(Manager *m) {
        int r;

        if (m->bus)
                return m->bus;
        if (m->bus_failed || m->cgroup_root || sd_booted() <= 0)
                return NULL;
        r = sd_bus_open_system(&m->bus);
        if (r < 0) {
                m->bus_failed = true;
                log_info_errno(r, "Cannot reach systemd on the system bus, not following CPUQuota= of units: %s",
                               STRERROR(r));
                return NULL;
        }
        return m->bus;
}

int sdintent_poll(Manager *m, Unit *u, uint64_t *ret_quota_usec, uint64_t *ret_period_usec) {
        _cleanup_free_ char *path = NULL;
        const char *iface;
        uint64_t per_sec = 0, period = 0, quota;
        sd_bus *bus;
        int r;

        if (u->cfg.cgroup || !bw_unit_is_systemd(u->name))
                return 0;
        iface = unit_interface(u->name);
        if (!iface)
                return 0;
        bus = get_bus(m);
        if (!bus)
                return 0;

        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", u->name, &path);
        if (r < 0)
                return 0;
        r = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", path, iface,
                                        "CPUQuotaPerSecUSec", NULL, 't', &per_sec);
        if (r >= 0)
                r = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", path, iface,
                                                "CPUQuotaPeriodUSec", NULL, 't', &period);
        if (r < 0) {
                log_debug_errno(r, "%s: cannot read CPUQuota from systemd: %s", u->name, STRERROR(r));
                if (r == -ECONNRESET || r == -ENOTCONN) {
                        m->bus = sd_bus_flush_close_unref(m->bus);
                }
                return 0;
        }

        /* systemd's own defaults: period "infinity" means 100 ms. */
        if (period == UINT64_MAX || period == 0)
                period = 100000;
        if (per_sec == UINT64_MAX)
                quota = BW_QUOTA_MAX;
        else {
                /* systemd rounds the same way (cgroup_cpu_quota_to_string:
                 * per-second value scaled to the period, at least 1 ms). */
                quota = per_sec * period / USEC_PER_SEC;
                if (quota < BW_QUOTA_MIN_USEC)
                        quota = BW_QUOTA_MIN_USEC;
        }

        if (u->has_sd_intent && u->sd_quota_usec == quota && u->sd_period_usec == period)
                return 0;

        r = u->has_sd_intent;   /* the first observation is only recorded */
        u->has_sd_intent = true;
        u->sd_quota_usec = quota;
        u->sd_period_usec = period;
        if (!r)
                return 0;
        *ret_quota_usec = quota;
        *ret_period_usec = period;
        return 1;
}

void sdintent_close(Manager *m) {
        m->bus = sd_bus_flush_close_unref(m->bus);
}
