/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The state store: state.json in the state directory and when it is
 * written. Writes of cpu.max save their intent first (write-ahead: a crash
 * between the write and the next save must still recognise the kernel's
 * value as ours); everything else (adoption, re-base, the outcome of a
 * write whose intent is saved) marks the store dirty and is saved together
 * a little later, and the credit buckets are saved every
 * STORE_SAVE_INTERVAL_USEC. See include/bwgov/state/state.h for the file. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "bwgov/state/ledger.h"
#include "bwgov/state/state.h"

/* The state file also carries the credit buckets; saving it on every tick
 * would fsync once a second per host for little gain. Writes save at once. */
#define STORE_SAVE_INTERVAL_USEC (10 * USEC_PER_SEC)

typedef struct Store Store;

/* A store that saves nothing until store_open(). saves_counter (may be
 * NULL) is bumped on every successful save (the counter metrics publish).
 * Returns 0 or -ENOMEM. */
int store_new(sd_event *event, uint64_t *saves_counter, Store **ret);
Store *store_free(Store *s);

/* Open the (existing) state directory dir and load its state file, never
 * blocking (bw_state_load()). A missing file starts empty; an unreadable
 * one is kept as state.json.broken and the store starts empty, with a
 * warning. Returns 0, or a negative errno (logged) when the directory
 * cannot be opened or the state file is not a regular file (a directory,
 * FIFO, socket, device or symlink: -EISDIR, -EBADFD, -ELOOP): the daemon
 * refuses to start then. */
int store_open(Store *s, const char *dir);

/* One daemon per state directory: two would each take the other's writes
 * for someone else's, re-base on them and raise again (issue 17). The lock
 * is an flock() on .lock in dir, held until store_free(); the file says
 * which pid holds it. Returns 0, -EBUSY when another daemon holds it, or
 * a negative errno (logged). */
int store_lock(Store *s, const char *dir);

/* Save now. Returns 0 (also without a directory) or a negative errno
 * (logged). */
int store_save(Store *s);

/* Save now for what is not in the file yet (intents, adoptions, levers):
 * entries whose credit alone moved keep the credit of the last
 * store_save() or store_periodic() (bw_state.credit_may_lag). */
int store_save_intents(Store *s);

/* Memory differs from the file in a way that needs no write-ahead: save
 * within STORE_SAVE_DELAY_USEC, one save for many such changes. */
void store_mark(Store *s);

/* The loop is over: from now on store_mark() only marks, and the caller
 * saves last. */
void store_stop(Store *s);

/* Called every Interval=: saves when the last periodic save is
 * STORE_SAVE_INTERVAL_USEC old (the credit buckets change on every tick
 * without marking the store) and anything is left to save. Returns
 * whether it tried. */
bool store_periodic(Store *s, uint64_t now_usec);

/* The entry saved for a unit, NULL when none. Valid until the next
 * store_record_unit() or store_forget(). */
const struct bw_state_unit *store_find(Store *s, const char *name);

/* Forget a unit's entry (unconfigured, or its cgroup moved). */
void store_forget(Store *s, const char *name);

/* What the state file keeps of one unit. */
struct store_record {
        const char *cgroup;
        uint64_t cgroup_dev, cgroup_ino;        /* its bandwidth directory's identity, 0: keep the recorded one */
        struct bw_bandwidth baseline;
        bool has_written;
        struct bw_bandwidth written;
        uint64_t credit_usec;
        uint64_t debt_usec;
        bool paused;
};

enum {
        /* The kernel holds what the record says (adoption, re-base, a write
         * that succeeded): any write-ahead intent is resolved. */
        STORE_SETTLED = 1 << 0,
        /* Save soon (store_mark()); without it the periodic save takes it. */
        STORE_SOON    = 1 << 1,
};

/* The one place that mirrors a unit into its entry, created when missing.
 * flags: STORE_SETTLED, STORE_SOON. Returns 0 or -ENOMEM. */
int store_record_unit(Store *s, const char *name, const struct store_record *r, unsigned flags);

/* Set paused in name's entry, if there is one: for a unit not adopted yet,
 * whose saved entry decides at adoption (otherwise store_record_unit()). */
void store_set_paused(Store *s, const char *name, bool paused);

/* Write-ahead: record that target is about to be written to name's cgroup.
 * With save, the intent is saved now unless this very intent is saved
 * already; without, the caller saves one batch of intents with
 * store_save(). Returns 0, or the save's negative errno (logged): then
 * nothing must be written. A unit without an entry needs no intent. */
int store_intent(Store *s, const char *name, const struct bw_bandwidth *target, bool save);

/* ---- the lever ledger (ledger.h) ------------------------------------------
 *
 * Each entry's lever records are the truth of what bwgovd changed beyond
 * the bandwidth. A record is held (its lever wanted) or to be put back
 * (released: its holder let it go, an undo failed, or a previous bwgovd
 * left it): those are retried, with back-off, until the file reads the
 * original again (restore.h), and only then forgotten. */

/* name's record of lever l, NULL when there is none. Valid until the
 * store next changes. */
const struct bw_ledger_lever *store_lever(Store *s, const char *name, enum bw_lever l);
/* It is to be put back, not held. */
bool store_lever_releasing(Store *s, const char *name, enum bw_lever l);

/* Write-ahead: make rec name's record of lever l (a new one, or the same
 * original with a new written value), held, and save now, before the
 * caller writes the file. Returns 0, -ENOENT without an entry (adopt
 * first), or the save's negative errno: then the record is as it was and
 * nothing must be written. */
int store_lever_intent(Store *s, const char *name, enum bw_lever l, const struct bw_ledger_lever *rec);
/* A write store_lever_intent() announced failed: the record back to rec
 * (NULL: none), saved soon. */
void store_lever_restore_record(Store *s, const char *name, enum bw_lever l, const struct bw_ledger_lever *rec);
/* The file holds what the record says bwgovd wrote, and its holder wants
 * it so again: held, not to be put back. */
void store_lever_hold(Store *s, const char *name, enum bw_lever l);
/* Lever l is to be put back; failed: an attempt did not work, the next is
 * bw_ledger_retry_usec() after now (a first release is due at now). */
void store_lever_release(Store *s, const char *name, enum bw_lever l, bool failed, uint64_t now);
/* The file reads the original again, or someone else's value (or the
 * cgroup is gone): forget the record (saved soon). */
void store_lever_clear(Store *s, const char *name, enum bw_lever l);

/* The EEVDF slice given to the unit's threads (0: none any more); a new
 * slice is saved now, before the threads get it. Returns 0, -ENOENT, or
 * the save's negative errno. */
int store_slice(Store *s, const char *name, uint64_t slice_usec);
/* The slice is to be put back (failed: as store_lever_release()). */
void store_slice_release(Store *s, const char *name, bool failed, uint64_t now);

/* name's unit is no longer governed, but its entry records something not
 * put back yet (a lever, a slice, a raised quota): everything of it is put
 * back by restore.h and then the entry forgotten. */
void store_orphan(Store *s, const char *name, bool failed, uint64_t now);
/* Every record of every entry is to be put back (a start, `bwgovd
 * --restore`); quotas: the baselines too (the entries stay, at their
 * baselines: store_quota_restored()). */
void store_undo_all(Store *s, bool quotas, uint64_t now);
/* name's baseline is back in the kernel: nothing written is in place. */
void store_quota_restored(Store *s, const char *name);
/* The names of every entry (*ret malloc'd, each name too). */
int store_names(Store *s, char ***ret, size_t *ret_n);
/* name's baseline is to be put back from its entry, when it records a
 * value written (a unit stopped before it was adopted again). */
void store_undo_quota(Store *s, const char *name, uint64_t now);
/* An attempt on name's records failed: the next after the back-off. */
void store_undo_failed(Store *s, const char *name, uint64_t now);
/* Those of bits (BW_STATE_UNDO_*, 1 << lever) are done. */
void store_undo_done(Store *s, const char *name, unsigned bits);
/* Entries with something to put back (0: nothing). */
size_t store_undo_count(const Store *s);
/* The names of those due at now (*ret malloc'd, each name too). Returns 0
 * or -ENOMEM. */
int store_undo_due(Store *s, uint64_t now, char ***ret, size_t *ret_n);
/* Entries that record lever l (held or to be put back). */
size_t store_count_levers(const Store *s, enum bw_lever l);

/* RestoreOnExit= of the configuration in force, kept in the state file for
 * `bwgovd --restore` (which reads no configuration): "no" keeps quotas. */
void store_set_keep_quotas(Store *s, bool keep);
bool store_keep_quotas(const Store *s);

/* The last save's error (a negative errno), 0 when it worked or none was
 * tried: while saves fail nothing is raised (the write-ahead cannot be
 * recorded), only baselines are put back. */
int store_save_error(const Store *s);
