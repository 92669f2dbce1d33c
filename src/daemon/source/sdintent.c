/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* systemd's intended CPUQuota= of a unit over the system bus (see
 * sdintent.h): the connection, opened on first use and dropped when PID 1
 * goes away, and the two property reads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "bwgov/law/baseline.h"
#include "bwgov/cgroup/discover.h"
#include "log.h"
#include "sdintent.h"

struct SdIntent {
        bool enabled;
        sd_bus *bus;                    /* system bus, opened on first use */
        bool bus_failed;                /* not reachable: not tried again */
};

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

int sdintent_new(bool enabled, SdIntent **ret) {
        SdIntent *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->enabled = enabled;
        *ret = s;
        return 0;
}

SdIntent *sdintent_free(SdIntent *s) {
        if (!s)
                return NULL;
        sd_bus_flush_close_unref(s->bus);
        free(s);
        return NULL;
}

static sd_bus *get_bus(SdIntent *s) {
        int r;

        if (s->bus)
                return s->bus;
        if (s->bus_failed || !s->enabled || sd_booted() <= 0)
                return NULL;
        r = sd_bus_open_system(&s->bus);
        if (r < 0) {
                s->bus_failed = true;
                log_info_errno(r, "Cannot reach systemd on the system bus, not following CPUQuota= of units: %s",
                               STRERROR(r));
                return NULL;
        }
        return s->bus;
}

int sdintent_read(SdIntent *s, const char *unit, uint64_t *ret_quota_usec, uint64_t *ret_period_usec) {
        _cleanup_free_ char *path = NULL;
        const char *iface;
        uint64_t per_sec = 0, period = 0, quota;
        sd_bus *bus;
        int r;

        if (!bw_unit_is_systemd(unit))
                return 0;
        iface = unit_interface(unit);
        if (!iface)
                return 0;
        bus = get_bus(s);
        if (!bus)
                return 0;

        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path);
        if (r < 0)
                return 0;
        r = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", path, iface,
                                        "CPUQuotaPerSecUSec", NULL, 't', &per_sec);
        if (r >= 0)
                r = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", path, iface,
                                                "CPUQuotaPeriodUSec", NULL, 't', &period);
        if (r < 0) {
                log_debug_errno(r, "%s: cannot read CPUQuota from systemd: %s", unit, STRERROR(r));
                if (r == -ECONNRESET || r == -ENOTCONN)
                        s->bus = sd_bus_flush_close_unref(s->bus);
                return 0;
        }

        /* systemd's own defaults: period "infinity" means 100 ms. */
        if (period == UINT64_MAX || period == 0)
                period = BW_DEFAULT_PERIOD_USEC;
        if (per_sec == UINT64_MAX)
                quota = BW_QUOTA_MAX;
        else {
                /* systemd rounds the same way (cgroup_cpu_quota_to_string:
                 * per-second value scaled to the period, at least 1 ms). */
                quota = per_sec * period / USEC_PER_SEC;
                if (quota < BW_QUOTA_MIN_USEC)
                        quota = BW_QUOTA_MIN_USEC;
        }
        *ret_quota_usec = quota;
        *ret_period_usec = period;
        return 1;
}
