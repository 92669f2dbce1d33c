/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A unit's levers beyond its bandwidth (lever.h: weight, idle, freezer,
 * cpuset) and the EEVDF slice of its threads (slice.h), through the
 * ledger (ledger.h, store.h): every write is recorded first with the
 * file's original and the value about to be written (write-ahead); a file
 * that already holds the value is not written; letting a lever go puts the
 * original back where the file still holds bwgovd's value (restore.h) and
 * forgets the record only once the kernel reads the original back: an undo
 * that fails stays recorded and is tried again with back-off. A value
 * someone else writes while bwgovd holds the lever is theirs: it is kept
 * (logged, never written over) until the holder lets the lever go. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bwgov/cgroup/lever.h"
#include "bwgov/state/state.h"

#include "bwgov/cgroup/cgroupfs.h"
#include "store.h"

enum unit_lever {
        UNIT_LEVER_WEIGHT = BW_LEVER_WEIGHT,
        UNIT_LEVER_IDLE = BW_LEVER_IDLE,
        UNIT_LEVER_FREEZE = BW_LEVER_FREEZE,
        UNIT_LEVER_CPUS = BW_LEVER_CPUS,
        _UNIT_LEVER_MAX = _BW_LEVER_MAX,
};

struct unit_slice_thread {
        pid_t tid;
        uint64_t orig_usec;     /* its slice before ours (sched_getattr) */
};

/* Its threads' EEVDF slices, while it has some (allocated then: most
 * units never do). */
struct unit_slices {
        uint64_t slice_usec;            /* the slice its threads get, 0: none */
        struct unit_slice_thread *threads;      /* sorted by tid */
        uint32_t n_threads;
        uint32_t errors;                /* counted to log the first */
};

/* What a unit keeps in memory of its levers (the records are the store's). */
struct unit_levers {
        struct unit_slices *slices;     /* NULL: no slice given */
        /* A bit per lever (1 << enum bw_lever), not a bool: ten thousand
         * units, eight bytes each. */
        uint8_t unsupported;            /* said once: this cgroup has no such file */
        uint8_t yielded;                /* someone else's value, kept until the holder lets the lever go */
        /* Some record of the unit's may be in the store (false: surely
         * none): spares a lookup for every quiet unit on every tick. */
        bool maybe_recorded;
};
_Static_assert(_BW_LEVER_MAX <= 8, "a bit of unit_levers.yielded per lever");

/* Someone else's value of lever l is kept (unit_levers.yielded). */
static inline bool unit_levers_yielded(const struct unit_levers *lv, enum bw_lever l) {
        return lv->yielded & (1u << l);
}

/* The slice its threads get (0: none) and how many have it. */
static inline uint64_t unit_levers_slice_usec(const struct unit_levers *lv) {
        return lv->slices ? lv->slices->slice_usec : 0;
}
static inline size_t unit_levers_slice_threads(const struct unit_levers *lv) {
        return lv->slices ? lv->slices->n_threads : 0;
}

/* What the functions below act on: one unit's cgroup and its levers
 * (unit.h builds it from a Unit: unit_lever_host()). */
struct lever_host {
        const char *name;
        const char *cgroup_path;
        struct bw_cg *cg;               /* NULL while the cgroup is absent */
        const struct bw_cg_root *root;
        Store *store;
        bool adopted;
        struct unit_levers *lv;
};

/* Set lever l to value (cgroup v2 syntax: "250", "1", "0-1"; mapped on
 * v1). The record (the original, and value) is saved before the write.
 * Returns 1 when written, 0 when the file already held it or someone
 * else's value is kept there, -EOPNOTSUPP when this cgroup has no such file
 * (said once), -ENODEV without an open, adopted cgroup, or another negative
 * errno (logged; nothing changed). While the unit is in cpu.idle its weight
 * is the kernel's: setting the weight then does nothing. */
int levers_set(const struct lever_host *u, enum unit_lever l, const char *value);

/* Let lever l go: its original back where the file still holds bwgovd's
 * value (restore_lever()). Returns 1 when written, 0 when there was nothing
 * to write, a negative errno when the undo failed: the record stays, and
 * is tried again after the back-off (restore_due()). */
int levers_restore_one(const struct lever_host *u, enum unit_lever l, const char *why);

/* Lever l is recorded: held, or being put back. */
bool levers_is_set(const struct lever_host *u, enum unit_lever l);
/* The value held (not being put back), in v2 syntax, into buf; false when
 * not held. */
bool levers_value(const struct lever_host *u, enum unit_lever l, char *buf, size_t n);
/* Some lever or a slice is recorded for the unit. */
bool levers_any(const struct lever_host *u);

/* Give every thread of the unit's cgroup the EEVDF slice slice_usec
 * (0: back to what they had), new threads included: call it again to
 * follow them. Returns the number of threads at that slice, or a negative
 * errno (-EOPNOTSUPP without custom slices). */
int levers_slice_apply(const struct lever_host *u, uint64_t slice_usec);

/* Everything back: the slices, then freezer, idle, weight and cpuset. */
void levers_restore(const struct lever_host *u, const char *why);

/* Free the memory (the files and records stay as they are). */
void unit_levers_done(struct unit_levers *lv);
