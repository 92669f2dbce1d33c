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

#include "bwgov/cgroupfs.h"
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

struct unit_levers {
        char *set[_BW_LEVER_MAX];       /* native value written, NULL when the lever is not held */
        char *orig[_BW_LEVER_MAX];      /* native original, restored when released */
        bool unsupported[_BW_LEVER_MAX];/* said once: this cgroup has no such file */
        uint64_t slice_usec;            /* the slice its threads get, 0: none */
        struct unit_slice_thread *threads;      /* sorted by tid */
        size_t n_threads;
        uint64_t slice_errors;
};

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
 * v1). The first time, the file's current content is saved as the original
 * (state.json, before the write). Returns 1 when written, 0 when the file
 * already held it, -EOPNOTSUPP when this cgroup has no such file (said
 * once), -ENODEV without an open, adopted cgroup, or another negative errno
 * (logged). */
int levers_set(const struct lever_host *u, enum unit_lever l, const char *value);

/* Put lever l back to its original, unless someone else changed it since
 * (then theirs stays), and forget it. Returns 1 when written, 0 otherwise. */
int levers_restore_one(const struct lever_host *u, enum unit_lever l, const char *why);

bool levers_is_set(const struct lever_host *u, enum unit_lever l);
/* The value held, in v2 syntax, into buf; false when not held. */
bool levers_value(const struct lever_host *u, enum unit_lever l, char *buf, size_t n);

/* Give every thread of the unit's cgroup the EEVDF slice slice_usec
 * (0: back to what they had), new threads included: call it again to
 * follow them. Returns the number of threads at that slice, or a negative
 * errno (-EOPNOTSUPP without custom slices). */
int levers_slice_apply(const struct lever_host *u, uint64_t slice_usec);

/* Everything back: the slices, then freezer, idle, weight and cpuset. */
void levers_restore(const struct lever_host *u, const char *why);

/* At adoption after a restart: put back what a previous daemon left
 * recorded in the unit's saved entry (levers and slices), and forget it. */
void levers_recover(const struct lever_host *u, const struct bw_state_unit *su);

/* The cgroup is gone, and its files with it: forget the levers (memory
 * and saved entry) without writing anything. */
void levers_forget(const struct lever_host *u);

/* Free the memory (the files stay as they are). */
void unit_levers_done(struct unit_levers *lv);
