/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A unit's levers beyond its bandwidth (lever.h: weight, idle, freezer,
 * cpuset) and the EEVDF slice of its threads (slice.h): set with the
 * original saved first (write-ahead, store_lever_intent()), written only
 * when different, and put back exactly on stop, pause, unconfigure and, for
 * a daemon that died holding them, at the next start. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bwgov/lever.h"
#include "bwgov/state.h"

typedef struct Unit Unit;

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

struct unit_levers {
        char *set[_BW_LEVER_MAX];       /* native value written, NULL when the lever is not held */
        char *orig[_BW_LEVER_MAX];      /* native original, restored when released */
        bool unsupported[_BW_LEVER_MAX];/* said once: this cgroup has no such file */
        uint64_t slice_usec;            /* the slice its threads get, 0: none */
        struct unit_slice_thread *threads;      /* sorted by tid */
        size_t n_threads;
        uint64_t slice_errors;
};

/* Set lever l to value (cgroup v2 syntax: "250", "1", "0-1"; mapped on
 * v1). The first time, the file's current content is saved as the original
 * (state.json, before the write). Returns 1 when written, 0 when the file
 * already held it, -EOPNOTSUPP when this cgroup has no such file (said
 * once), -ENODEV without an open, adopted cgroup, or another negative errno
 * (logged). */
int unit_lever_set(Unit *u, enum unit_lever l, const char *value);

/* Put lever l back to its original, unless someone else changed it since
 * (then theirs stays), and forget it. Returns 1 when written, 0 otherwise. */
int unit_lever_restore(Unit *u, enum unit_lever l, const char *why);

bool unit_lever_is_set(const Unit *u, enum unit_lever l);
/* The value held, in v2 syntax, into buf; false when not held. */
bool unit_lever_value(const Unit *u, enum unit_lever l, char *buf, size_t n);

/* Give every thread of the unit's cgroup the EEVDF slice slice_usec
 * (0: back to what they had), new threads included: call it again to
 * follow them. Returns the number of threads at that slice, or a negative
 * errno (-EOPNOTSUPP without custom slices). */
int unit_slice_apply(Unit *u, uint64_t slice_usec);

/* Everything back: the slices, then freezer, idle, weight and cpuset. */
void unit_levers_restore(Unit *u, const char *why);

/* At adoption after a restart: put back what a previous daemon left
 * recorded in the unit's saved entry (levers and slices), and forget it. */
void unit_levers_recover(Unit *u, const struct bw_state_unit *su);

/* The cgroup is gone, and its files with it: forget the levers (memory
 * and saved entry) without writing anything. */
void unit_levers_forget(Unit *u);

/* Free the memory (the files stay as they are). */
void unit_levers_done(struct unit_levers *lv);
