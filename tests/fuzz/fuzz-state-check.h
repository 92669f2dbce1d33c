/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What fuzz-state and fuzz-state-journal check of a state: the same
 * entries, and every entry well formed. */

#include <stdbool.h>
#include <string.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/cgroup/lever.h"
#include "bwgov/state/state.h"
#include "fuzz-util.h"

static inline bool same_bw(const struct bw_bandwidth *a, const struct bw_bandwidth *b) {
        return a->quota_usec == b->quota_usec && a->period_usec == b->period_usec &&
                a->burst_usec == b->burst_usec && a->has_burst == b->has_burst;
}

static inline bool same_str(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

static inline bool same_unit(const struct bw_state_unit *a, const struct bw_state_unit *b) {
        if (!same_str(a->name, b->name) || !same_str(a->cgroup, b->cgroup) || !same_bw(&a->baseline, &b->baseline))
                return false;
        if (a->has_written != b->has_written || (a->has_written && !same_bw(&a->written, &b->written)))
                return false;
        if (a->has_pending != b->has_pending || (a->has_pending && !same_bw(&a->pending, &b->pending)))
                return false;
        if (a->credit_usec != b->credit_usec || a->debt_usec != b->debt_usec || a->paused != b->paused ||
            a->slice_usec != b->slice_usec || a->cgroup_dev != b->cgroup_dev || a->cgroup_ino != b->cgroup_ino)
                return false;
        for (size_t l = 0; l < _BW_LEVER_MAX; l++) {
                const struct bw_ledger_lever *x = bw_state_unit_lever(a, (enum bw_lever) l),
                                             *y = bw_state_unit_lever(b, (enum bw_lever) l);

                if (!x != !y)
                        return false;
                if (x && (!same_str(x->original, y->original) || !same_str(x->written, y->written) ||
                          !same_str(x->weight, y->weight)))
                        return false;
        }
        return true;
}

/* What bwgov may write over a baseline: its period, and a quota no lower
 * (unlimited only over an unlimited baseline). */
static inline bool could_write(const struct bw_bandwidth *w, const struct bw_bandwidth *b) {
        if (w->period_usec != b->period_usec)
                return false;
        if (b->quota_usec == BW_QUOTA_MAX)
                return w->quota_usec == BW_QUOTA_MAX;
        return w->quota_usec == BW_QUOTA_MAX || w->quota_usec >= b->quota_usec;
}

static inline void check_units(struct bw_state *s) {
        for (size_t i = 0; i < s->n_units; i++) {
                struct bw_state_unit *u = &s->units[i];

                fuzz_check(i == 0 || strcmp(s->units[i - 1].name, u->name) < 0);
                fuzz_check(bw_state_find(s, u->name) == u);
                fuzz_check(bw_bandwidth_validate(&u->baseline) == 0);
                fuzz_check(!u->has_written || bw_bandwidth_validate(&u->written) == 0);
                fuzz_check(!u->has_pending || bw_bandwidth_validate(&u->pending) == 0);
                fuzz_check(bw_state_classify(u, &u->baseline) == BW_OWNERSHIP_BASELINE);
                /* A recorded value bwgov could have written is its own; one
                 * it could not (another period, below the baseline, a limit
                 * over an unlimited baseline) is stale or edited and never
                 * trusted (bw_state_classify()). */
                fuzz_check(!u->has_written || !could_write(&u->written, &u->baseline) ||
                           bw_state_classify(u, &u->written) != BW_OWNERSHIP_EXTERNAL);
                fuzz_check(!u->has_pending || !could_write(&u->pending, &u->baseline) ||
                           bw_state_classify(u, &u->pending) != BW_OWNERSHIP_EXTERNAL);
        }
}
