/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the manager puts back itself (restore.h), the units aside: at start,
 * before any unit is made, every lever and slice a previous bwgovd left,
 * whatever the configuration says now, and the baselines of the units it no
 * longer names; while running, every undo that failed, after its back-off;
 * at a stop, what is left, for a while; and with no configuration at all (it
 * cannot be loaded, or `bwgovd --restore` after any exit), everything. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/cgroup/discover.h"
#include "bwgov/util/macro.h"
#include "clock.h"
#include "log.h"
#include "manager-types.h"
#include "restore.h"
#include "manager-restore.h"
#include "manager-shared.h"
#include "bwgov/config/config-prefix.h"

/* How long a start tries before the loop takes over the retries, and how
 * long an exit tries before it gives up (the records stay). */
#define START_RESTORE_BUDGET_USEC (1 * USEC_PER_SEC)
#define EXIT_RESTORE_BUDGET_USEC (5 * USEC_PER_SEC)

static struct bw_cg *cgroup_of(const char *name, const char *path, void *userdata) {
        Unit *u = manager_get_unit(userdata, name);

        return u && u->cg && u->cgroup_path && strcmp(u->cgroup_path, path) == 0 ? u->cg : NULL;
}

static struct restore_ctx restore_ctx(Manager *m, bool exiting) {
        return (struct restore_ctx) {
                .root = m->root,
                .store = m->store,
                .cgroup_of = cgroup_of,
                .userdata = m,
                .keep_quotas = exiting && store_keep_quotas(m->store),
        };
}

/* Whether the configuration governs name at the cgroup path: a unit of it
 * whose Cgroup= (or the cgroup its name maps to, with its Subgroup=) is
 * path, or searched for by name (its adoption finds out), or a unit a
 * prefix directory makes. */
static bool configured_at(Manager *m, const char *name, const char *path) {
        const struct bw_unit_config *c = bw_config_find_unit(&m->config, name);
        _cleanup_free_ char *want = NULL, *full = NULL;
        int r;

        if (!c)
                return bw_config_prefix_matches(&m->config, name);
        r = c->cgroup ? ((want = strdup(c->cgroup)) ? 0 : -ENOMEM) : bw_unit_cgroup_path(name, &want);
        if (r == -EAGAIN)
                return true;
        if (r < 0)
                return r == -ENOMEM;    /* keep it rather than put it back for want of memory */
        if (c->subgroup && asprintf(&full, "%s%s%s", want, want[0] ? "/" : "", c->subgroup) < 0)
                return true;
        return strcmp(full ? full : want, path) == 0;
}

void manager_reconcile_start(Manager *m) {
        const struct restore_ctx c = restore_ctx(m, false);
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC);
        _cleanup_free_ char **names = NULL;
        size_t n = 0, orphans = 0, left;

        store_set_keep_quotas(m->store, !m->config.global.restore_on_exit);
        /* Levers and slices, every one: the guards set again what they
         * still want; a record kept would be nobody's to let go. */
        store_undo_all(m->store, false, now);
        if (store_names(m->store, &names, &n) < 0)
                log_oom();
        for (size_t i = 0; i < n; i++) {
                const struct bw_state_unit *su = store_find(m->store, names[i]);

                if (su && !configured_at(m, names[i], su->cgroup)) {
                        store_orphan(m->store, names[i], false, now);
                        orphans++;
                }
                free(names[i]);
        }
        if (store_undo_count(m->store) == 0)
                return;
        log_info("Putting back what the saved state records: levers and slices of %zu unit(s), the baselines of "
                 "%zu no longer configured", store_undo_count(m->store) - orphans, orphans);
        left = restore_until(&c, START_RESTORE_BUDGET_USEC, "start");
        if (left > 0)
                log_warning("%zu saved unit(s) not put back yet: tried again while running", left);
}

void manager_retry_restores(Manager *m, uint64_t now) {
        const struct restore_ctx c = restore_ctx(m, false);

        if (store_undo_count(m->store) > 0 && !m->stopping)
                (void) restore_due(&c, now, "retry");
}

size_t manager_restore_left(Manager *m, uint64_t budget_usec, const char *why) {
        const struct restore_ctx c = restore_ctx(m, true);
        size_t left;

        if (!m->store_open || store_undo_count(m->store) == 0)
                return 0;
        left = restore_until(&c, budget_usec, why);
        if (left > 0)
                log_error("%zu unit(s) still hold levers or raised quotas bwgovd could not put back: they stay in "
                          "state.json, for `bwgovd --restore` (ExecStopPost=) and the next start", left);
        return left;
}

int manager_restore_only(Manager *m, const char *why) {
        int r;

        r = manager_open_root(m);
        if (r < 0)
                return r;
        r = manager_open_store(m, false);
        if (r <= 0)
                return r;
        return manager_restore_exit(m, why);
}

int manager_restore_exit(Manager *m, const char *why) {
        int r;

        if (!m->store_open)
                return 0;
        store_undo_all(m->store, true, clock_now_usec(CLOCK_MONOTONIC));
        if (store_undo_count(m->store) == 0) {
                log_debug("Nothing recorded in %s is left to put back", m->state_dir);
                return 0;
        }
        log_info("Putting back everything %s records (%zu unit(s)): levers, slices%s", m->state_dir,
                 store_undo_count(m->store), store_keep_quotas(m->store) ? " (RestoreOnExit=no: not the quotas)" :
                 " and raised quotas");
        r = manager_restore_left(m, EXIT_RESTORE_BUDGET_USEC, why) > 0 ? -EAGAIN : 0;
        (void) store_save(m->store);
        return r;
}
