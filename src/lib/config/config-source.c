/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where a unit names its cgroup, read from its drop-ins when a message
 * needs it (contract in include/bwgov/config/config-source.h): the
 * configuration does not keep it per unit. */
#include <errno.h>
#include <stdlib.h>

#include "bwgov/config/config-dropin.h"
#include "bwgov/config/config-source.h"
#include "bwgov/config/config.h"
#include "bwgov/util/macro.h"
#include "config-internal.h"

int bw_config_cgroup_named_at(const char *const *dirs, const char *name, char **ret) {
        _cleanup_(bw_unit_config_done) struct bw_unit_config u = { 0 };
        _cleanup_(bw_config_error_done) struct bw_config_error error = { 0 };
        _cleanup_free_ char *at = NULL, *named_at = NULL;
        int r;

        if (!name || !ret)
                return -EINVAL;
        if (!dirs)
                dirs = bw_config_default_dirs();
        r = config_load_unit(dirs, name, &u, &at, &named_at, &error);
        if (r <= 0)
                return r;
        if (!named_at)
                return bw_dropin_first_active(dirs, name, ret);
        *ret = TAKE_PTR(named_at);
        return 1;
}
