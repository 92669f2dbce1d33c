/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's levers beyond its bandwidth and its threads' EEVDF slices: set
 * with the original saved first, written only when different, put back
 * exactly. See unit-levers.h; the files are lever.h's, the slices
 * slice.h's. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/fileio.h"
#include "bwgov/macro.h"
#include "bwgov/slice.h"
#include "log.h"
#include "unit-levers.h"

#define TIDS_MAX_DEPTH 16u

static const char *lever_file(const struct lever_host *u, enum bw_lever l) {
        return bw_lever_file(u->cg->layout, l);
}

static void lever_forget(struct unit_levers *lv, enum bw_lever l) {
        free(lv->set[l]);
        free(lv->orig[l]);
        lv->set[l] = lv->orig[l] = NULL;
}

static int lever_read(const struct lever_host *u, enum bw_lever l, char *buf, size_t n) {
        int r = bw_lever_read(u->root, u->cg, l, buf, n);

        if (r == -EOPNOTSUPP && !u->lv->unsupported[l]) {
                u->lv->unsupported[l] = true;
                log_notice("%s: cgroup %s has no %s here, not using that lever", u->name, u->cgroup_path,
                           lever_file(u, l));
        }
        return r;
}

int levers_set(const struct lever_host *u, enum unit_lever lever, const char *value) {
        enum bw_lever l = (enum bw_lever) lever;
        struct unit_levers *lv = u->lv;
        char native[BW_LEVER_VALUE_MAX], cur[BW_LEVER_VALUE_MAX];
        int r;

        if (!u->cg || !u->adopted)
                return -ENODEV;
        r = bw_lever_native(u->cg->layout, l, value, native, sizeof(native));
        if (r < 0)
                return log_error_errno(r, "%s: invalid value \"%s\" for %s", u->name, value, lever_file(u, l));
        r = lever_read(u, l, cur, sizeof(cur));
        if (r < 0)
                return r == -EOPNOTSUPP ? r : log_warning_errno(r, "%s: cannot read %s: %s", u->name,
                                                                 lever_file(u, l), STRERROR(r));

        if (lv->set[l] && !bw_lever_same(l, cur, lv->set[l])) {
                /* Someone else wrote it while we held it: theirs is the
                 * value to restore now. */
                log_notice("%s: %s changed by someone else (%s, ours was %s); restoring %s later", u->name,
                           lever_file(u, l), cur, lv->set[l], cur);
                free(lv->orig[l]);
                lv->orig[l] = strdup(cur);
                store_lever_clear(u->store, u->name, l);
                if (!lv->orig[l] || store_lever_intent(u->store, u->name, l, cur) < 0) {
                        lever_forget(lv, l);
                        return -ENOMEM;
                }
        }
        if (bw_lever_same(l, cur, native)) {
                if (lv->set[l] || lv->orig[l]) {
                        free(lv->set[l]);
                        lv->set[l] = strdup(native);
                }
                return 0;
        }
        if (!lv->orig[l]) {
                r = store_lever_intent(u->store, u->name, l, cur);
                if (r < 0)
                        return log_warning_errno(r, "%s: not changing %s: its original could not be saved: %s",
                                                 u->name, lever_file(u, l), STRERROR(r));
                lv->orig[l] = strdup(cur);
                if (!lv->orig[l])
                        return log_oom();
        }
        r = bw_lever_write(u->root, u->cg, l, native);
        if (r < 0)
                return log_warning_errno(r, "%s: writing \"%s\" to %s failed: %s", u->name, native,
                                         lever_file(u, l), STRERROR(r));
        free(lv->set[l]);
        lv->set[l] = strdup(native);
        log_info("%s: %s %s -> %s", u->name, lever_file(u, l), cur, native);
        return 1;
}

int levers_restore_one(const struct lever_host *u, enum unit_lever lever, const char *why) {
        enum bw_lever l = (enum bw_lever) lever;
        struct unit_levers *lv = u->lv;
        char cur[BW_LEVER_VALUE_MAX];
        int r = 0;

        if (!lv->orig[l])
                return 0;
        if (!u->cg)
                goto done;      /* the cgroup is gone, and its files with it */
        if (lever_read(u, l, cur, sizeof(cur)) < 0)
                goto done;
        if (lv->set[l] && !bw_lever_same(l, cur, lv->set[l]))
                log_info("%s: not restoring %s, someone else set it to %s", u->name, lever_file(u, l), cur);
        else if (!bw_lever_same(l, cur, lv->orig[l])) {
                r = bw_lever_write(u->root, u->cg, l, lv->orig[l]);
                if (r < 0)
                        log_warning_errno(r, "%s: restoring %s to %s failed: %s", u->name, lever_file(u, l),
                                          lv->orig[l], STRERROR(r));
                else {
                        log_info("%s: %s %s -> %s (%s)", u->name, lever_file(u, l), cur, lv->orig[l], why);
                        r = 1;
                }
        }
done:
        lever_forget(lv, l);
        store_lever_clear(u->store, u->name, l);
        return r;
}

bool levers_is_set(const struct lever_host *u, enum unit_lever l) {
        return u->lv->set[l] != NULL;
}

bool levers_value(const struct lever_host *u, enum unit_lever l, char *buf, size_t n) {
        if (!u->lv->set[l] || !u->cg)
                return false;
        return bw_lever_from_native(u->cg->layout, (enum bw_lever) l, u->lv->set[l], buf, n) >= 0;
}

/* ---- slices ---------------------------------------------------------------- */

/* The slice a thread of ours has: what a thread without a custom slice
 * gets (sched_getattr() cannot tell the two apart). */
static uint64_t default_slice_usec(void) {
        static uint64_t usec;
        bool is_fair;

        if (usec == 0 && (bw_slice_get(0, &usec, &is_fair) < 0 || !is_fair))
                usec = 0;
        return usec;
}

static void slice_put_back(const struct lever_host *u, const struct unit_slice_thread *t) {
        uint64_t now, back = t->orig_usec == default_slice_usec() ? 0 : t->orig_usec;
        int r;

        /* Only a thread still at our slice: one that set its own keeps it. */
        if (bw_slice_get(t->tid, &now, NULL) < 0 || now != u->lv->slice_usec)
                return;
        r = bw_slice_set(t->tid, back);
        if (r < 0 && r != -ESRCH)
                u->lv->slice_errors++;
}

/* The threads of the unit's cgroup and of every cgroup below it: a slice's
 * are in its services. */
static int read_tids(const struct lever_host *u, pid_t **ret, size_t *ret_n) {
        int dfd = bw_cg_dir(u->cg, BW_CG_TREE_V2);
        bool v2 = dfd != -EOPNOTSUPP;

        if (!v2)
                dfd = bw_cg_dir(u->cg, BW_CG_TREE_BW);
        if (dfd < 0)
                return dfd;
        return bw_slice_cgroup_tids(dfd, v2 ? "cgroup.threads" : "tasks", TIDS_MAX_DEPTH, ret, ret_n);
}

static const struct unit_slice_thread *find_thread(const struct unit_levers *lv, pid_t tid) {
        size_t lo = 0, hi = lv->n_threads;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (lv->threads[mid].tid == tid)
                        return &lv->threads[mid];
                if (lv->threads[mid].tid < tid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

static void slices_release(const struct lever_host *u) {
        struct unit_levers *lv = u->lv;

        for (size_t i = 0; i < lv->n_threads; i++)
                slice_put_back(u, &lv->threads[i]);
        free(lv->threads);
        lv->threads = NULL;
        lv->n_threads = 0;
        if (lv->slice_usec > 0)
                log_info("%s: %" PRIu64 "us EEVDF slice withdrawn from its threads", u->name, lv->slice_usec);
        lv->slice_usec = 0;
        (void) store_slice(u->store, u->name, 0);
}

int levers_slice_apply(const struct lever_host *u, uint64_t slice_usec) {
        struct unit_levers *lv = u->lv;
        _cleanup_free_ pid_t *tids = NULL;
        struct unit_slice_thread *next;
        size_t n = 0, k = 0;
        bool fresh;
        int r;

        if (slice_usec == 0) {
                slices_release(u);
                return 0;
        }
        if (!u->cg || !u->adopted)
                return -ENODEV;
        if (lv->slice_usec != slice_usec && lv->slice_usec > 0)
                slices_release(u);      /* a new length: from the originals again */
        fresh = lv->slice_usec == 0;
        if (fresh) {
                r = store_slice(u->store, u->name, slice_usec);
                if (r < 0)
                        return log_warning_errno(r, "%s: not setting slices: the state could not be saved: %s",
                                                 u->name, STRERROR(r));
        }
        r = read_tids(u, &tids, &n);
        if (r < 0)
                return r;
        next = calloc(n > 0 ? n : 1, sizeof(*next));
        if (!next)
                return log_oom();
        for (size_t i = 0; i < n; i++) {
                const struct unit_slice_thread *t = find_thread(lv, tids[i]);
                uint64_t orig;
                bool is_fair;

                if (t) {
                        next[k++] = *t;
                        continue;
                }
                /* A new thread: its slice now is its original. */
                if (bw_slice_get(tids[i], &orig, &is_fair) < 0 || !is_fair)
                        continue;
                r = bw_slice_set(tids[i], slice_usec);
                if (r < 0) {
                        if (r != -ESRCH && lv->slice_errors++ == 0)
                                log_warning_errno(r, "%s: cannot set the slice of thread %d: %s", u->name,
                                                  (int) tids[i], STRERROR(r));
                        continue;
                }
                next[k++] = (struct unit_slice_thread) { .tid = tids[i], .orig_usec = orig };
        }
        free(lv->threads);
        lv->threads = next;
        lv->n_threads = k;
        if (fresh)
                log_info("%s: %" PRIu64 "us EEVDF slice for its %zu thread%s", u->name, slice_usec, k,
                         k == 1 ? "" : "s");
        lv->slice_usec = slice_usec;
        return (int) k;
}

/* ---- all of them ------------------------------------------------------------ */

void levers_restore(const struct lever_host *u, const char *why) {
        /* Thawed first: nothing stays frozen if a later write fails. On v1
         * a group in cpu.idle refuses cpu.shares: idle before weight. */
        static const enum unit_lever order[] = { UNIT_LEVER_FREEZE, UNIT_LEVER_IDLE, UNIT_LEVER_WEIGHT,
                                                 UNIT_LEVER_CPUS };

        if (u->lv->slice_usec > 0 || u->lv->n_threads > 0)
                slices_release(u);
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                (void) levers_restore_one(u, order[i], why);
}

void levers_recover(const struct lever_host *u, const struct bw_state_unit *su) {
        static const enum bw_lever order[] = { BW_LEVER_FREEZE, BW_LEVER_IDLE, BW_LEVER_WEIGHT, BW_LEVER_CPUS };
        char cur[BW_LEVER_VALUE_MAX];

        if (!su || !u->cg || !bw_state_unit_has_levers(su))
                return;
        if (su->slice_usec > 0) {
                _cleanup_free_ pid_t *tids = NULL;
                size_t n = 0;
                uint64_t now;

                if (read_tids(u, &tids, &n) >= 0)
                        for (size_t i = 0; i < n; i++)
                                if (bw_slice_get(tids[i], &now, NULL) >= 0 && now == su->slice_usec)
                                        (void) bw_slice_set(tids[i], 0);
                log_notice("%s: a previous bwgovd left a %" PRIu64 "us slice on its threads; put back to the default",
                           u->name, su->slice_usec);
                (void) store_slice(u->store, u->name, 0);
        }
        for (size_t i = 0; i < ELEMENTSOF(order); i++) {
                enum bw_lever l = order[i];
                /* su may move when the store changes: copy first. */
                _cleanup_free_ char *orig = su->levers[l] ? strdup(su->levers[l]) : NULL;

                if (!su->levers[l])
                        continue;
                if (!orig) {
                        (void) log_oom();
                        return;
                }
                if (bw_lever_read(u->root, u->cg, l, cur, sizeof(cur)) >= 0 && !bw_lever_same(l, cur, orig)) {
                        int r = bw_lever_write(u->root, u->cg, l, orig);

                        if (r < 0)
                                log_warning_errno(r, "%s: restoring %s to %s failed: %s", u->name,
                                                  lever_file(u, l), orig, STRERROR(r));
                        else
                                log_notice("%s: a previous bwgovd left %s at %s; restored %s", u->name,
                                           lever_file(u, l), cur, orig);
                }
                store_lever_clear(u->store, u->name, l);
        }
}

void levers_forget(const struct lever_host *u) {
        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                if (u->lv->orig[l])
                        store_lever_clear(u->store, u->name, (enum bw_lever) l);
        if (u->lv->slice_usec > 0)
                (void) store_slice(u->store, u->name, 0);
        unit_levers_done(u->lv);
}

void unit_levers_done(struct unit_levers *lv) {
        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                lever_forget(lv, (enum bw_lever) l);
        free(lv->threads);
        *lv = (struct unit_levers) { 0 };
}
