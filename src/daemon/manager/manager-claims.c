/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's side of claims.h: where the locks between daemons live,
 * and the hook with which each unit claims its cgroup before it governs it
 * (unit.h), saying who holds one it is refused. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/config/config-source.h"
#include "claims.h"
#include "log.h"
#include "manager-types.h"
#include "manager-claims.h"
#include "manager-shared.h"
#include "unit/unit-resolve.h"

/* Where u's cgroup is named, for the refusal, as its drop-ins say now
 * (bw_config_cgroup_named_at()); NULL when they cannot say. */
static char *unit_cgroup_named_at(Manager *m, const Unit *u) {
        const char *const *dirs;
        const char *buf[2];
        char *at = NULL;

        manager_config_dirs(m, &dirs, buf);
        if (bw_config_cgroup_named_at(dirs, u->name, &at) <= 0)
                return NULL;
        return at;
}

int manager_claims_new(Manager *m) {
        m->claims_path = claims_dir(m->cgroup_root);
        if (!m->claims_path || claims_new(m->claims_path, &m->claims) < 0)
                return log_oom();
        return 0;
}

/* One governor per cgroup (claims.h): the first claim keeps it, a second
 * is refused and says who holds it, once per unit. */
int manager_claim(Unit *u, const char *path, dev_t dev, ino_t ino, bool take, void *userdata) {
        struct claim_holder h;
        Manager *m = userdata;
        int r;

        if (!take) {
                claims_release(m->claims, dev, ino, u);
                return 0;
        }
        r = claims_take(m->claims, dev, ino, u, &h);
        if (r == -EBUSY || r == -EADDRINUSE) {
                const Unit *o = h.owner;
                _cleanup_free_ char *us = NULL;

                if (unit_set_owner_said(u, true))
                        return r;
                us = unit_cgroup_named_at(m, u);
                if (o) {
                        _cleanup_free_ char *os = unit_cgroup_named_at(m, o);

                        log_error("%s: cgroup %s (%s) is governed by unit %s (%s): not governing it twice", u->name,
                                  path, us ? us : "by its name", o->name, os ? os : "by its name");
                } else
                        log_error("%s: cgroup %s (%s) is governed by another bwgovd (pid %d): not governing it",
                                  u->name, path, us ? us : "by its name", (int) h.pid);
                return r;
        }
        if (r < 0 && !m->claims_said)
                log_warning_errno(r, "Cannot lock cgroups against other bwgovd daemons (%s): %s", m->claims_path,
                                  STRERROR(r));
        m->claims_said |= r < 0;
        if (unit_set_owner_said(u, false))
                log_info("%s: cgroup %s is free again: governing it", u->name, path);
        return 0;
}
