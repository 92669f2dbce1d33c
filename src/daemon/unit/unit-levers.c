/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's levers beyond its bandwidth and its threads' EEVDF slices,
 * through the ledger: recorded before each write, written only when
 * different, put back exactly (restore.h), someone else's value kept (the
 * original written back to a weight or cpu.idle is systemd's, not theirs). See
 * unit-levers.h; the files are lever.h's, the slices slice.h's, the
 * records store.h's. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/util/fileio.h"
#include "bwgov/state/ledger.h"
#include "bwgov/util/macro.h"
#include "bwgov/cgroup/slice.h"
#include "clock.h"
#include "log.h"
#include "restore.h"
#include "unit-levers.h"

static const char *lever_file(const struct lever_host *u, enum bw_lever l) {
        return bw_lever_file(u->cg->layout, l);
}

static int lever_read(const struct lever_host *u, enum bw_lever l, char *buf, size_t n) {
        int r = bw_lever_read(u->root, u->cg, l, buf, n);

        if (r == -EOPNOTSUPP && !(u->lv->unsupported & (1u << l))) {
                u->lv->unsupported |= (uint8_t) (1u << l);
                log_notice("%s: cgroup %s has no %s here, not using that lever", u->name, u->cgroup_path,
                           lever_file(u, l));
        }
        return r;
}

/* Held (recorded and not being put back). */
static bool held(const struct lever_host *u, enum bw_lever l) {
        return store_lever(u->store, u->name, l) && !store_lever_releasing(u->store, u->name, l);
}

/* Someone else wrote the file while bwgovd held it: theirs stays (the
 * record goes the way of an undo that finds someone else's value: the idle
 * lever's weight comes back, the kernel having reset it), and bwgovd does
 * not set it again until the holder lets the lever go. */
static int yield(const struct lever_host *u, enum bw_lever l, const char *cur, const char *ours) {
        log_notice("%s: %s changed by someone else to %s while bwgovd held it at %s: theirs is kept, bwgovd does "
                   "not set it again until it no longer needs it", u->name, lever_file(u, l), cur, ours);
        u->lv->yielded |= (uint8_t) (1u << l);
        (void) restore_lever(u->root, u->cg, u->store, u->name, l, "someone-else");
        return 0;
}

/* The weight and cpu.idle back at the value bwgovd found: what systemd does
 * each time it applies a unit's cgroup settings again (CPUWeight=: a service
 * in the slice started or stopped, a daemon-reload), not a choice against the
 * lever, which is set again. Any other value, or another lever, is someone
 * else's (yield()). */
static bool reapplied(enum bw_lever l, const struct bw_ledger_lever *rec, const char *cur) {
        return (l == BW_LEVER_WEIGHT || l == BW_LEVER_IDLE) && rec->original && bw_lever_same(l, cur, rec->original);
}

int levers_set(const struct lever_host *u, enum unit_lever lever, const char *value) {
        enum bw_lever l = (enum bw_lever) lever;
        _cleanup_(bw_ledger_lever_done) struct bw_ledger_lever was = { 0 }, next = { 0 };
        char native[BW_LEVER_VALUE_MAX], cur[BW_LEVER_VALUE_MAX], weight[BW_LEVER_VALUE_MAX];
        const struct bw_ledger_lever *rec;
        bool had;
        int r;

        if (!u->cg || !u->adopted)
                return -ENODEV;
        r = bw_lever_native(u->cg->layout, l, value, native, sizeof(native));
        if (r < 0)
                return log_error_errno(r, "%s: invalid value \"%s\" for %s", u->name, value, lever_file(u, l));
        if (unit_levers_yielded(u->lv, l))
                return 0;
        /* In cpu.idle the kernel holds the weight at its minimum and
         * refuses another (v1); it resets it when idle goes back to 0. */
        if (l == BW_LEVER_WEIGHT && held(u, BW_LEVER_IDLE))
                return 0;
        r = lever_read(u, l, cur, sizeof(cur));
        if (r < 0)
                return r == -EOPNOTSUPP ? r : log_warning_errno(r, "%s: cannot read %s: %s", u->name,
                                                                 lever_file(u, l), STRERROR(r));

        rec = store_lever(u->store, u->name, l);
        if (rec && rec->written && !bw_lever_same(l, cur, rec->written)) {
                if (!reapplied(l, rec, cur))
                        return yield(u, l, cur, rec->written);
                log_info("%s: %s back at the %s bwgovd found (the unit's own settings applied again): set again",
                         u->name, lever_file(u, l), cur);
        }
        if (bw_lever_same(l, cur, native)) {
                if (rec)
                        store_lever_hold(u->store, u->name, l);
                return 0;
        }

        /* Write-ahead: the original (the first one) and the value about to
         * be written, saved before the write. */
        had = rec != NULL;
        if (had && bw_ledger_lever_set(&was, rec->original, rec->written, rec->weight) < 0)
                return log_oom();
        if (l == BW_LEVER_IDLE && !had && bw_lever_read(u->root, u->cg, BW_LEVER_WEIGHT, weight, sizeof(weight)) < 0)
                weight[0] = '\0';
        r = bw_ledger_lever_set(&next, had ? was.original : cur, native,
                                l != BW_LEVER_IDLE ? NULL : had ? was.weight : weight[0] ? weight : NULL);
        if (r < 0)
                return log_oom();
        u->lv->maybe_recorded = true;
        r = store_lever_intent(u->store, u->name, l, &next);
        if (r < 0)
                return log_warning_errno(r, "%s: not changing %s: its record could not be saved: %s", u->name,
                                         lever_file(u, l), STRERROR(r));
        r = bw_lever_write(u->root, u->cg, l, native);
        if (r < 0) {
                /* The file holds what it held: so does the record. */
                store_lever_restore_record(u->store, u->name, l, had ? &was : NULL);
                return log_warning_errno(r, "%s: writing \"%s\" to %s failed: %s", u->name, native,
                                         lever_file(u, l), STRERROR(r));
        }
        log_info("%s: %s %s -> %s", u->name, lever_file(u, l), cur, native);
        return 1;
}

int levers_restore_one(const struct lever_host *u, enum unit_lever lever, const char *why) {
        enum bw_lever l = (enum bw_lever) lever;
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC);
        int r;

        u->lv->yielded &= (uint8_t) ~(1u << l);
        if (!store_lever(u->store, u->name, l))
                return 0;
        /* Being put back already: the retries keep their back-off. */
        if (store_lever_releasing(u->store, u->name, l))
                return 0;
        store_lever_release(u->store, u->name, l, false, now);
        if (!u->cg)
                return 0;       /* put back by its path (restore_due()) */
        r = restore_lever(u->root, u->cg, u->store, u->name, l, why);
        if (r < 0)
                store_lever_release(u->store, u->name, l, true, now);
        return r;
}

bool levers_is_set(const struct lever_host *u, enum unit_lever l) {
        return store_lever(u->store, u->name, (enum bw_lever) l) != NULL;
}

bool levers_value(const struct lever_host *u, enum unit_lever lever, char *buf, size_t n) {
        enum bw_lever l = (enum bw_lever) lever;
        const struct bw_ledger_lever *rec = store_lever(u->store, u->name, l);

        if (!rec || !rec->written || !u->cg || store_lever_releasing(u->store, u->name, l))
                return false;
        return bw_lever_from_native(u->cg->layout, l, rec->written, buf, n) >= 0;
}

bool levers_any(const struct lever_host *u) {
        const struct bw_state_unit *su;

        if (unit_levers_slice_usec(u->lv) > 0)
                return true;
        if (!u->lv->maybe_recorded)
                return false;
        su = store_find(u->store, u->name);
        u->lv->maybe_recorded = su && bw_state_unit_has_levers(su);
        return u->lv->maybe_recorded;
}

/* ---- slices ---------------------------------------------------------------- */

/* Returns 0, or a negative errno when the thread is there and kept ours. */
static int slice_put_back(uint64_t ours, const struct unit_slice_thread *t) {
        uint64_t now, back = t->orig_usec == bw_slice_default_usec() ? 0 : t->orig_usec;
        int r;

        /* Only a thread still at our slice: one that set its own keeps it. */
        if (bw_slice_get(t->tid, &now, NULL) < 0 || now != ours)
                return 0;
        r = bw_slice_set(t->tid, back);
        return r == -ESRCH ? 0 : r;
}

static const struct unit_slice_thread *find_thread(const struct unit_slices *sl, pid_t tid) {
        size_t lo = 0, hi = sl->n_threads;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (sl->threads[mid].tid == tid)
                        return &sl->threads[mid];
                if (sl->threads[mid].tid < tid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

/* Its threads back to their slices; the memory of them goes. */
static void slices_release(const struct lever_host *u) {
        struct unit_slices *sl = u->lv->slices;
        int r = 0;

        if (!sl)
                return;
        if (sl->slice_usec == 0 && sl->n_threads == 0) {
                /* Allocated, never given (its record was not saved). */
                free(sl->threads);
                u->lv->slices = mfree(sl);
                return;
        }
        for (size_t i = 0; i < sl->n_threads; i++) {
                int k = slice_put_back(sl->slice_usec, &sl->threads[i]);

                if (k < 0)
                        r = k;
        }
        if (sl->slice_usec > 0)
                log_info("%s: %" PRIu64 "us EEVDF slice withdrawn from its threads", u->name, sl->slice_usec);
        free(sl->threads);
        u->lv->slices = mfree(sl);
        if (r < 0) {
                /* Tried again on every thread still at it (restore.h). */
                log_warning_errno(r, "%s: putting its threads' slice back failed: %s", u->name, STRERROR(r));
                store_slice_release(u->store, u->name, true, clock_now_usec(CLOCK_MONOTONIC));
        } else
                (void) store_slice(u->store, u->name, 0);
}

int levers_slice_apply(const struct lever_host *u, uint64_t slice_usec) {
        struct unit_levers *lv = u->lv;
        _cleanup_free_ pid_t *tids = NULL;
        struct unit_slice_thread *next;
        struct unit_slices *sl;
        size_t n = 0, k = 0;
        bool fresh;
        int r;

        if (slice_usec == 0) {
                slices_release(u);
                return 0;
        }
        if (!u->cg || !u->adopted)
                return -ENODEV;
        if (unit_levers_slice_usec(lv) != slice_usec && unit_levers_slice_usec(lv) > 0)
                slices_release(u);      /* a new length: from the originals again */
        if (!lv->slices) {
                lv->slices = calloc(1, sizeof(*lv->slices));
                if (!lv->slices)
                        return log_oom();
        }
        sl = lv->slices;
        fresh = sl->slice_usec == 0;
        if (fresh) {
                lv->maybe_recorded = true;
                r = store_slice(u->store, u->name, slice_usec);
                if (r < 0)
                        return log_warning_errno(r, "%s: not setting slices: the state could not be saved: %s",
                                                 u->name, STRERROR(r));
        }
        r = restore_cgroup_tids(u->cg, &tids, &n);
        if (r < 0)
                return r;
        next = calloc(n > 0 ? n : 1, sizeof(*next));
        if (!next)
                return log_oom();
        for (size_t i = 0; i < n; i++) {
                const struct unit_slice_thread *t = find_thread(sl, tids[i]);
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
                        if (r != -ESRCH && sl->errors++ == 0)
                                log_warning_errno(r, "%s: cannot set the slice of thread %d: %s", u->name,
                                                  (int) tids[i], STRERROR(r));
                        continue;
                }
                next[k++] = (struct unit_slice_thread) { .tid = tids[i], .orig_usec = orig };
        }
        free(sl->threads);
        sl->threads = next;
        sl->n_threads = (uint32_t) k;
        if (fresh)
                log_info("%s: %" PRIu64 "us EEVDF slice for its %zu thread%s", u->name, slice_usec, k,
                         k == 1 ? "" : "s");
        sl->slice_usec = slice_usec;
        return (int) k;
}

/* ---- all of them ------------------------------------------------------------ */

void levers_restore(const struct lever_host *u, const char *why) {
        /* Thawed first: nothing stays frozen if a later write fails. On v1
         * a group in cpu.idle refuses cpu.shares: idle before weight. */
        static const enum unit_lever order[] = { UNIT_LEVER_FREEZE, UNIT_LEVER_IDLE, UNIT_LEVER_WEIGHT,
                                                 UNIT_LEVER_CPUS };

        slices_release(u);
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                (void) levers_restore_one(u, order[i], why);
}

void unit_levers_done(struct unit_levers *lv) {
        if (lv->slices)
                free(lv->slices->threads);
        free(lv->slices);
        /* A record left (an undo still to be retried) is the store's. */
        *lv = (struct unit_levers) { .maybe_recorded = true };
}
