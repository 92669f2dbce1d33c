/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Putting back what the state file records (store.h, ledger.h): a lever's
 * original, the default slice of a cgroup's threads, a unit's baseline.
 *
 * restore_lever() undoes one lever record on an open cgroup: the unit that
 * held it lets it go (unit-levers.c). restore_entry() undoes what an entry
 * has marked to put back (store.h, undo bits), by the cgroup path it
 * records, with or without a Unit: a lever whose undo failed (tried again
 * after the back-off), a unit no longer configured whose restore failed,
 * every record at start (whatever the configuration says by then, or
 * when it cannot be loaded) and `bwgovd --restore` after any exit. Nothing
 * is written where the file no longer holds what bwgovd wrote (someone
 * else's value stays, and is logged), nor into a cgroup made anew since
 * its record (another device or inode), nor from a record bwgovd could not
 * have made (bw_ledger_plausible()). A record is forgotten only once the
 * kernel reads its original back. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/cgroup/lever.h"
#include "store.h"

struct restore_ctx {
        const struct bw_cg_root *root;
        Store *store;
        /* The open cgroup of the unit named name, when it governs the
         * cgroup at path (NULL: opened by the path). userdata is passed
         * back. */
        struct bw_cg *(*cgroup_of)(const char *name, const char *path, void *userdata);
        void *userdata;
        /* An exit with RestoreOnExit=no: baselines stay (levers go back). */
        bool keep_quotas;
};

/* Undo name's record of lever l on cg: the original written where the
 * file holds what bwgovd wrote, read back, then the record forgotten; for
 * the idle lever the weight from before it too (the kernel reset it). why
 * names the occasion in the journal. Returns 1 when written, 0 when there
 * was nothing to write (no record, the original in place, someone else's
 * value kept, no such file, an implausible record dropped), or a negative
 * errno: the record stays, to be tried again (logged on the first failure
 * only). */
int restore_lever(const struct bw_cg_root *root, struct bw_cg *cg, Store *store, const char *name, enum bw_lever l,
                  const char *why);

/* The threads of cg and of every cgroup below it (sorted, *ret malloc'd). */
int restore_cgroup_tids(struct bw_cg *cg, pid_t **ret, size_t *ret_n);

/* Every thread of cg still at slice_usec back to the default slice.
 * Returns 0, or the first error other than a thread gone (the others are
 * still tried). */
int restore_slice_threads(struct bw_cg *cg, uint64_t slice_usec);

/* What name's entry has to be put back. Returns 1 when all of it is done
 * (the entry's undo bits clear, an orphan entry forgotten), 0 when some of
 * it failed (tried again after the back-off). */
int restore_entry(const struct restore_ctx *c, const char *name, uint64_t now, const char *why);

/* restore_entry() for every entry due at now, the deepest cgroups first
 * (cgroup v1 refuses a parent's quota below a child's). Returns how many
 * entries still have something to put back. */
size_t restore_due(const struct restore_ctx *c, uint64_t now, const char *why);

/* restore_due() again after each back-off until nothing is left or
 * budget_usec has passed (a stop, `bwgovd --restore`: the loop is over).
 * Returns how many entries still have something to put back. */
size_t restore_until(const struct restore_ctx *c, uint64_t budget_usec, const char *why);
