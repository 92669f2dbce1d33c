/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/state/ledger.h"
#include "bwgov/cgroup/lever.h"

/* Persistent state (state.json in the state directory), one entry per
 * governed unit. It is what lets bwgovd tell its own writes from someone
 * else's across restarts and crashes:
 *
 *   baseline  the contract found at adoption (or set by CPUQuota=), restored
 *             on stop;
 *   written   the last value bwgovd wrote and saw succeed;
 *   pending   a value bwgovd is about to write: saved BEFORE the write
 *             (write-ahead), so a crash between the write and the next save
 *             still recognises the kernel's value as ours and never adopts a
 *             boosted value as the baseline;
 *   credit    the budget bucket, CPU-µs, and any debt (usage beyond the
 *             bucket not yet repaid; optional, 0 when absent);
 *   levers    the lever ledger (ledger.h): for every lever file bwgovd
 *             changed, its original and the value bwgovd wrote, saved
 *             BEFORE the write and put back (only where the file still
 *             holds bwgovd's value) on release, stop, by `bwgovd --restore`
 *             and at the next start, whatever the configuration then says;
 *   slice_usec the EEVDF slice bwgovd gave the cgroup's threads (0: none):
 *             every thread still at that slice goes back to the default;
 *   cgroup_dev, cgroup_ino  the identity of the cgroup's bandwidth
 *             directory at adoption: a directory of that name with another
 *             identity is a new cgroup, none of whose values are bwgov's.
 *
 * File format (schema_version 1):
 *   {"schema_version": 1, "restore_on_exit": false (only when so),
 *    "units": {"web.slice": {"cgroup": "web.slice",
 *     "cgroup_dev": 30, "cgroup_ino": 4711,
 *     "baseline": {"quota_usec": 50000 | null (max), "period_usec": 100000,
 *                  "burst_usec": 0, "has_burst": true},
 *     "written": {...} | null, "pending": {...} | null,
 *     "credit_usec": 30000000, "debt_usec": 0, "paused": false,
 *     "levers": {"weight": {"original": "100", "written": "400"},
 *                "idle": {"original": "0", "written": "1", "weight": "1024"},
 *                "freeze": {"original": "0", "written": "1"}, "cpus": {...}},
 *     "slice_usec": 125}}}
 * ("levers", "slice_usec" and the identity are optional and written only
 * when set; a lever given as a string is an older bwgovd's original alone.)
 */

struct bw_state_unit {
        char *name;
        char *cgroup;                           /* in name's allocation, or name itself: never freed alone */
        struct bw_bandwidth baseline;
        struct bw_bandwidth written;            /* if has_written */
        struct bw_bandwidth pending;            /* if has_pending */
        uint64_t credit_usec;
        uint64_t debt_usec;
        /* The ledger (ledger.h): _BW_LEVER_MAX records, empty where nothing
         * changed; NULL while none is (most entries: bw_state_unit_lever()). */
        struct bw_ledger_lever *levers;
        uint64_t slice_usec;
        uint64_t cgroup_dev, cgroup_ino;        /* 0: not known */
        /* Not serialised: the records (a bit per lever, BW_STATE_UNDO_SLICE
         * for the slice) that are to be put back rather than held, the
         * failed attempts so far and when to try again (monotonic µs). */
        unsigned undo;
        unsigned undo_attempts;
        uint64_t undo_due_usec;
        /* Not serialised: whether the entry changed since it was last
         * made into a save, kept as two hashes of its fields when it was
         * (bw_hash_bytes(): with and without its credit and debt; made:
         * they are valid, cleared by a lever change). A save formats every
         * entry as it goes; the hashes only say which ones a journal line
         * must carry. The entry's text is never kept: ten thousand of them
         * were 3.4 MB of the daemon's heap. */
        uint64_t made_hash, made_hash_lag;

        /* The flags together (ten thousand entries: no padding after each). */
        bool has_written;
        bool has_pending;
        bool paused;
        /* Not serialised: the pending intent is in the file already (set
         * by the caller after a successful save, cleared when it changes). */
        bool pending_saved;
        bool made;                              /* made_hash and made_hash_lag are valid (above) */
        /* Not serialised: the entry as made is in the file or the journal
         * (cleared when it is made again, set by bw_state_saved()). */
        bool saved;
};

/* struct bw_state_unit.undo: the slice's bit (the levers' are 1 << lever),
 * the baseline's (put back; the entry stays), and the whole entry's (its
 * baseline put back, then the entry forgotten: a unit no longer governed). */
#define BW_STATE_UNDO_SLICE (1u << _BW_LEVER_MAX)
#define BW_STATE_UNDO_QUOTA (1u << (_BW_LEVER_MAX + 1))
#define BW_STATE_UNDO_ENTRY (1u << (_BW_LEVER_MAX + 2))

/* u's record of lever l, NULL when it has none. */
static inline const struct bw_ledger_lever *bw_state_unit_lever(const struct bw_state_unit *u, enum bw_lever l) {
        return u->levers && bw_ledger_has(&u->levers[l]) ? &u->levers[l] : NULL;
}

#define BW_BOOT_ID_MAX 37

struct bw_state {
        /* /proc/sys/kernel/random/boot_id of the boot that saved it, "" when
         * unknown: values written in another boot are not in the kernel now. */
        char boot_id[BW_BOOT_ID_MAX];
        /* The file's: bw_state_save() counts it up; journal lines name the
         * one they follow, and only lines of the loaded file's are replayed. */
        uint64_t generation;
        /* RestoreOnExit= of the configuration last loaded: `bwgovd
         * --restore`, which reads no configuration, leaves quotas alone when
         * it was "no" (levers go back whatever it says). */
        bool keep_quotas;
        struct bw_state_unit *units;    /* sorted by name (strcmp) */
        size_t n_units;
        size_t n_allocated;
        size_t changed;                 /* entries the last save or format found changed */
        /* An entry whose credit and debt are all that changed since it was
         * last made does not count as changed, and a journal line does not
         * carry it (a save of write-ahead intents: the credits move on
         * every tick and are saved on a rhythm of their own, STORE_SAVE_INTERVAL_USEC).
         * A whole file has every entry's credit as it is. */
        bool credit_may_lag;
        char **forgotten;               /* names removed since the last save (for the journal) */
        size_t n_forgotten;
};

/* Parse a state document. Returns 0; -EINVAL for malformed JSON or a wrong
 * schema (the caller should then start from nothing and say so); -ENOMEM. */
int bw_state_parse(const char *buf, size_t len, struct bw_state *ret);

/* Load NAME relative to dirfd (not following a symlink, never blocking in
 * open(): bw_open_regular_at()). -ENOENT when there is no state yet;
 * -EISDIR (a directory), -EBADFD (a FIFO, socket or device) or -ELOOP (a
 * symlink) when NAME is not a regular file; -EINVAL for a malformed file,
 * -EFBIG for one over 16 MiB, another negative errno for I/O errors. */
int bw_state_load(int dirfd, const char *name, struct bw_state *ret);

/* Serialise to a malloc'd NUL-terminated string: one line per entry
 * (compact, keys sorted). s->changed says how many entries changed since
 * they were last made (credit_may_lag: not counting a credit alone). */
int bw_state_format(struct bw_state *s, char **ret);

/* Atomic replace: write .NAME.tmp.PID in dirfd (created anew: whatever is
 * at that name is unlinked first; a directory there fails the save with
 * -EISDIR), fsync, rename over NAME, fsync the directory. s->generation is
 * counted up and saved (left as it was on failure). On failure the old
 * file is intact. */
int bw_state_save(int dirfd, const char *name, struct bw_state *s);

void bw_state_done(struct bw_state *s);

/* After a successful save (full or appended): every entry as made is saved,
 * no removal left to record. */
void bw_state_saved(struct bw_state *s);

/* Whether a save would write anything new: an entry never saved, or whose
 * fields (its credit and debt included) differ from what its last save
 * made of it, or a removal not saved yet. Reads only. */
bool bw_state_unsaved(const struct bw_state *s);

/* Find a unit entry (a binary search), NULL if none. The pointer stays valid
 * until the next bw_state_add() or bw_state_remove() on s. */
struct bw_state_unit *bw_state_find(struct bw_state *s, const char *name);

/* Add (or return the existing) entry for name, keeping the table sorted; the
 * new entry is zeroed with name and cgroup copied. NULL on ENOMEM (s is then
 * unchanged). Pointers from earlier lookups are invalidated. */
struct bw_state_unit *bw_state_add(struct bw_state *s, const char *name, const char *cgroup);

/* Some lever record or a slice is recorded. */
bool bw_state_unit_has_levers(const struct bw_state_unit *u);

/* Drop the entry for name; no-op if absent. */
void bw_state_remove(struct bw_state *s, const char *name);

/* Two bandwidth values are "the same" for ownership purposes: quota and
 * period equal, and burst equal when both sides know it. */
bool bw_bandwidth_equal(const struct bw_bandwidth *a, const struct bw_bandwidth *b);

/* Classify what the kernel holds (cur) for a unit found in the state:
 * BW_OWNERSHIP_BASELINE  cur equals the stored baseline (nothing boosted);
 * BW_OWNERSHIP_OURS      quota/period and burst each equal one of baseline,
 *                        written or pending (a crash between the quota and
 *                        the burst write leaves such a mix): keep the stored
 *                        baseline;
 * BW_OWNERSHIP_EXTERNAL  anything else: someone else set it, it becomes the baseline. */
enum bw_ownership {
        BW_OWNERSHIP_OURS,
        BW_OWNERSHIP_BASELINE,
        BW_OWNERSHIP_EXTERNAL,
};

enum bw_ownership bw_state_classify(const struct bw_state_unit *u, const struct bw_bandwidth *cur);
