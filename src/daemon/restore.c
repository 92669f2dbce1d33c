/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Putting back what the state file records: one lever on an open cgroup,
 * or everything an entry has marked to put back, by its path. See
 * restore.h; the rules are ledger.h's, the records store.h's. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bwgov/law/baseline.h"
#include "bwgov/state/ledger.h"
#include "bwgov/util/macro.h"
#include "bwgov/cgroup/slice.h"
#include "bwgov/util/util.h"
#include "clock.h"
#include "log.h"
#include "restore.h"
#include "bwgov/cgroup/cgroupfs-write.h"

#define TIDS_MAX_DEPTH 16u

/* Put back in this order: thawed first (nothing stays frozen if a later
 * write fails); on v1 a group in cpu.idle refuses cpu.shares, and leaving
 * it resets them: idle before weight. */
static const enum bw_lever restore_order[] = { BW_LEVER_FREEZE, BW_LEVER_IDLE, BW_LEVER_WEIGHT, BW_LEVER_CPUS };

static const char *lever_file(const struct bw_cg *cg, enum bw_lever l) {
        return bw_lever_file(cg->layout, l);
}

/* A failure is said once per record, not at every retry. */
static bool first_try(Store *store, const char *name) {
        const struct bw_state_unit *su = store_find(store, name);

        return !su || su->undo_attempts == 0;
}

/* The idle lever went (back) to 0: the kernel set the weight to its
 * default; the group's own goes back, unless someone wrote another since. */
static int restore_idle_weight(const struct bw_cg_root *root, struct bw_cg *cg, const char *name,
                               const struct bw_ledger_lever *rec) {
        const char *reset = bw_ledger_idle_reset_weight(cg->layout);
        char cur[BW_LEVER_VALUE_MAX];
        int r;

        if (!rec->weight || bw_lever_read(root, cg, BW_LEVER_WEIGHT, cur, sizeof(cur)) < 0 ||
            !bw_lever_same(BW_LEVER_WEIGHT, cur, reset) || bw_lever_same(BW_LEVER_WEIGHT, cur, rec->weight))
                return 0;
        r = bw_lever_write(root, cg, BW_LEVER_WEIGHT, rec->weight);
        if (r < 0)
                return r;
        log_info("%s: %s %s -> %s (its own, reset by the kernel when cpu.idle went back to 0)", name,
                 lever_file(cg, BW_LEVER_WEIGHT), cur, rec->weight);
        return 1;
}

int restore_lever(const struct bw_cg_root *root, struct bw_cg *cg, Store *store, const char *name, enum bw_lever l,
                  const char *why) {
        _cleanup_(bw_ledger_lever_done) struct bw_ledger_lever rec = { 0 };
        const struct bw_ledger_lever *saved = store_lever(store, name, l);
        char cur[BW_LEVER_VALUE_MAX], back[BW_LEVER_VALUE_MAX];
        int r, k;

        if (!saved)
                return 0;
        /* A copy: the store may move while this runs. */
        r = bw_ledger_lever_set(&rec, saved->original, saved->written, saved->weight);
        if (r < 0)
                return log_oom();
        if (!bw_ledger_plausible(l, &rec)) {
                log_notice("%s: the state's record of %s (%s, written %s) is not one bwgovd makes: dropped, "
                           "nothing written", name, lever_file(cg, l), rec.original, rec.written ? rec.written : "-");
                store_lever_clear(store, name, l);
                return 0;
        }
        r = bw_lever_read(root, cg, l, cur, sizeof(cur));
        if (r == -EOPNOTSUPP || bw_cg_error_is_vanished(r)) {
                /* No such file here, or the cgroup went: nothing of ours. */
                store_lever_clear(store, name, l);
                return 0;
        }
        if (r < 0)
                return first_try(store, name) ? log_warning_errno(r, "%s: cannot read %s to put it back: %s", name,
                                                                  lever_file(cg, l), STRERROR(r)) : r;
        switch (bw_ledger_undo_plan(l, &rec, cur)) {
        case BW_LEDGER_UNDO_THEIRS:
                log_notice("%s: not putting %s back to %s: someone else set it to %s since bwgovd wrote %s", name,
                           lever_file(cg, l), rec.original, cur, rec.written ? rec.written : "it");
                k = l == BW_LEVER_IDLE ? restore_idle_weight(root, cg, name, &rec) : 0;
                if (k < 0)
                        return first_try(store, name) ?
                                log_warning_errno(k, "%s: putting its weight back failed: %s", name, STRERROR(k)) : k;
                store_lever_clear(store, name, l);
                return 0;
        case BW_LEDGER_UNDO_NOTHING:
                r = 0;
                break;
        case BW_LEDGER_UNDO_WRITE:
        default:
                r = bw_lever_write(root, cg, l, rec.original);
                if (r >= 0)
                        r = bw_lever_read(root, cg, l, back, sizeof(back));
                if (r >= 0 && !bw_lever_same(l, back, rec.original))
                        r = -EAGAIN;    /* the kernel did not take it (yet) */
                if (r < 0)
                        return first_try(store, name) ?
                                log_warning_errno(r, "%s: putting %s back to %s failed (%s), trying again", name,
                                                  lever_file(cg, l), rec.original, STRERROR(r)) : r;
                log_info("%s: %s %s -> %s (%s)", name, lever_file(cg, l), cur, rec.original, why);
                if (!first_try(store, name))
                        log_notice("%s: %s is back at %s after failed attempts", name, lever_file(cg, l),
                                   rec.original);
                r = 1;
                break;
        }
        if (l == BW_LEVER_IDLE) {
                k = restore_idle_weight(root, cg, name, &rec);
                if (k < 0)
                        return first_try(store, name) ?
                                log_warning_errno(k, "%s: putting its weight back failed: %s", name, STRERROR(k)) : k;
        }
        store_lever_clear(store, name, l);
        return r;
}

int restore_cgroup_tids(struct bw_cg *cg, pid_t **ret, size_t *ret_n) {
        int dfd = bw_cg_dir(cg, BW_CG_TREE_V2);
        bool v2 = dfd != -EOPNOTSUPP;

        if (!v2)
                dfd = bw_cg_dir(cg, BW_CG_TREE_BW);
        if (dfd < 0)
                return dfd;
        return bw_slice_cgroup_tids(dfd, v2 ? "cgroup.threads" : "tasks", TIDS_MAX_DEPTH, ret, ret_n);
}

int restore_slice_threads(struct bw_cg *cg, uint64_t slice_usec) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;
        uint64_t now;
        int r, ret = 0;

        r = restore_cgroup_tids(cg, &tids, &n);
        if (bw_cg_error_is_vanished(r))
                return 0;
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                if (bw_slice_get(tids[i], &now, NULL) < 0 || now != slice_usec)
                        continue;
                r = bw_slice_set(tids[i], 0);
                if (r < 0 && r != -ESRCH && ret == 0)
                        ret = r;
        }
        return ret;
}

/* The baseline of an entry no unit governs any more. Returns 0 or a
 * negative errno. */
static int restore_quota(const struct restore_ctx *c, struct bw_cg *cg, const char *name, const char *why) {
        const struct bw_state_unit *su = store_find(c->store, name);
        struct bw_bandwidth cur, target, now;
        struct bw_state_unit copy;
        int r;

        if (!su || c->keep_quotas)
                return 0;
        r = bw_cg_read_bandwidth(cg, &cur);
        if (bw_cg_error_is_vanished(r))
                return 0;
        if (r < 0)
                return r;
        copy = *su;
        switch (bw_baseline_restore_entry(&copy, &cur, &target)) {
        case BW_RESTORE_NOTHING:
                return 0;
        case BW_RESTORE_NOT_OURS:
                log_info("%s: not restoring cgroup %s, its quota is someone else's now", name, copy.cgroup);
                return 0;
        case BW_RESTORE_BURST:
        case BW_RESTORE_BASELINE:
        default:
                break;
        }
        r = bw_cg_write_bandwidth(cg, &target, &now);
        if (bw_cg_error_is_vanished(r))
                return 0;
        if (r < 0)
                return r;
        log_unit_change(LOG_INFO, name, &cur, &now, why, "%s: cgroup %s back at its baseline (%s)", name,
                        copy.cgroup, why);
        return 0;
}

/* The cgroup went, or was made anew: nothing recorded is in it. */
static void forget_records(Store *store, const char *name, unsigned undo) {
        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                store_lever_clear(store, name, (enum bw_lever) l);
        (void) store_slice(store, name, 0);
        if (undo & BW_STATE_UNDO_ENTRY)
                store_forget(store, name);
        else
                store_undo_done(store, name, undo);
}

/* The cgroup to put name's entry back on: the unit's (*ret_owned NULL)
 * or one opened by path (to free). 0 with it, 1 when there is none to
 * put anything back on (gone, or another cgroup by now), negative errno. */
static int entry_cgroup(const struct restore_ctx *c, const struct bw_state_unit *su, struct bw_cg **ret,
                        struct bw_cg **ret_owned) {
        struct bw_cg *cg = c->cgroup_of ? c->cgroup_of(su->name, su->cgroup, c->userdata) : NULL;
        int r;

        *ret_owned = NULL;
        if (!cg) {
                r = bw_cg_open(c->root, su->cgroup, ret_owned);
                if (bw_cg_error_is_vanished(r)) {
                        log_debug("%s: cgroup %s is gone: nothing of it to put back", su->name, su->cgroup);
                        return 1;
                }
                if (r < 0)
                        return r;
                cg = *ret_owned;
        }
        if (su->cgroup_ino > 0 && (cg->bw_dev != su->cgroup_dev || cg->bw_ino != su->cgroup_ino)) {
                log_info("%s: cgroup %s was made anew since bwgovd governed it: nothing of bwgovd's is in it",
                         su->name, su->cgroup);
                bw_cg_free(*ret_owned);
                *ret_owned = NULL;
                return 1;
        }
        *ret = cg;
        return 0;
}

int restore_entry(const struct restore_ctx *c, const char *name, uint64_t now, const char *why) {
        const struct bw_state_unit *su = store_find(c->store, name);
        struct bw_cg *cg = NULL, *owned = NULL;
        _cleanup_free_ char *path = NULL;
        uint64_t slice;
        unsigned undo;
        bool failed = false;
        int r;

        if (!su || !su->undo)
                return 1;
        path = strdup(su->cgroup);
        if (!path)
                return log_oom();
        undo = su->undo;
        slice = su->slice_usec;
        r = entry_cgroup(c, su, &cg, &owned);
        if (r > 0) {
                forget_records(c->store, name, undo);
                return 1;
        }
        if (r < 0) {
                if (first_try(c->store, name))
                        log_warning_errno(r, "%s: cannot open cgroup %s to put it back: %s", name, path,
                                          STRERROR(r));
                store_undo_failed(c->store, name, now);
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(restore_order); i++)
                if (undo & (1u << restore_order[i]))
                        failed |= restore_lever(c->root, cg, c->store, name, restore_order[i], why) < 0;
        if (undo & BW_STATE_UNDO_SLICE) {
                r = restore_slice_threads(cg, slice);
                if (r < 0 && first_try(c->store, name))
                        log_warning_errno(r, "%s: cannot put its threads' slice back: %s", name, STRERROR(r));
                if (r < 0)
                        failed = true;
                else {
                        log_info("%s: %" PRIu64 "us EEVDF slice taken back from its threads (%s)", name, slice, why);
                        (void) store_slice(c->store, name, 0);
                }
        }
        if ((undo & (BW_STATE_UNDO_ENTRY | BW_STATE_UNDO_QUOTA)) && !failed) {
                r = restore_quota(c, cg, name, why);
                if (r < 0 && first_try(c->store, name))
                        log_warning_errno(r, "%s: putting the baseline of cgroup %s back failed: %s", name,
                                          path, STRERROR(r));
                failed = r < 0;
        }
        bw_cg_free(owned);
        if (failed) {
                store_undo_failed(c->store, name, now);
                return 0;
        }
        if (undo & BW_STATE_UNDO_ENTRY)
                store_forget(c->store, name);
        else {
                if ((undo & BW_STATE_UNDO_QUOTA) && !c->keep_quotas)
                        store_quota_restored(c->store, name);
                store_undo_done(c->store, name, undo);
        }
        return 1;
}

struct due {
        char *name;
        char *cgroup;
};

/* Deepest first: a child's path sorts after its parent's. */
static int due_cmp(const void *a, const void *b) {
        return -strcmp(((const struct due *) a)->cgroup, ((const struct due *) b)->cgroup);
}

size_t restore_due(const struct restore_ctx *c, uint64_t now, const char *why) {
        _cleanup_free_ struct due *v = NULL;
        _cleanup_free_ char **names = NULL;
        size_t n = 0, k = 0;

        if (store_undo_count(c->store) == 0)
                return 0;
        if (store_undo_due(c->store, now, &names, &n) < 0) {
                log_oom();
                return store_undo_count(c->store);
        }
        v = calloc(n > 0 ? n : 1, sizeof(*v));
        for (size_t i = 0; i < n; i++) {
                const struct bw_state_unit *su = store_find(c->store, names[i]);

                if (v && su)
                        v[k++] = (struct due) { names[i], su->cgroup };
                else
                        free(names[i]);
        }
        if (v) {
                qsort(v, k, sizeof(*v), due_cmp);
                for (size_t i = 0; i < k; i++) {
                        (void) restore_entry(c, v[i].name, now, why);
                        free(v[i].name);
                }
        }
        return store_undo_count(c->store);
}

size_t restore_until(const struct restore_ctx *c, uint64_t budget_usec, const char *why) {
        uint64_t start = clock_now_usec(CLOCK_MONOTONIC), now = start;
        size_t left;

        for (;;) {
                left = restore_due(c, now, why);
                if (left == 0)
                        return 0;
                now = clock_now_usec(CLOCK_MONOTONIC);
                if (now - start >= budget_usec)
                        return left;
                /* Until the next one is due (a tenth of a second at first). */
                (void) nanosleep(&(struct timespec) { .tv_nsec = 50 * 1000 * 1000 }, NULL);
                now = clock_now_usec(CLOCK_MONOTONIC);
        }
}
