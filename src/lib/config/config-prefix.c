/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Prefix directories (bwgov.conf(5)): "libpod-.scope.d" governs every
 * libpod-<id>.scope bwgovd finds; which names one applies to, and an
 * instance's configuration (contracts in include/bwgov/config/config-prefix.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/config/config-dropin.h"
#include "bwgov/config/config.h"
#include "bwgov/util/macro.h"
#include "config-internal.h"
#include "util/string-util.h"
#include "bwgov/config/config-prefix.h"

bool bw_config_prefix_matches(const struct bw_config *c, const char *name) {
        const char *dot;

        if (!c || !name || bw_config_unit_name_is_prefix(name) || !bw_config_unit_name_is_valid(name))
                return false;
        dot = strrchr(name, '.');
        for (size_t i = 0; dot && i < c->n_prefixes; i++) {
                const char *p = c->prefixes[i], *pdot = strrchr(p, '.');
                size_t plen = (size_t) (pdot - p);

                /* The prefix up to and with its dash, the same type, and a
                 * dash at that place in the name (systemd cuts there). */
                if (streq(pdot, dot) && (size_t) (dot - name) > plen && strncmp(name, p, plen) == 0)
                        return true;
        }
        return false;
}

int bw_config_load_instance(const char *const *dirs, const char *name, const char *cgroup,
                            struct bw_unit_config *ret, struct bw_config_error *error) {
        _cleanup_(bw_unit_config_done) struct bw_unit_config u = { 0 };
        _cleanup_free_ char *at = NULL;
        int r;

        if (!dirs)
                dirs = bw_config_default_dirs();
        if (!name || !cgroup || !ret || !bw_config_unit_name_is_valid(name))
                return -EINVAL;
        r = config_load_unit(dirs, name, &u, &at, NULL, error);
        if (r <= 0)
                return r;
        if (!u.cgroup) {
                u.cgroup = strdup(cgroup);
                if (!u.cgroup)
                        return -ENOMEM;
        }
        *ret = u;
        u = (struct bw_unit_config) { 0 };
        return 1;
}
