/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The lever ledger: what bwgovd changed on a cgroup beyond its bandwidth,
 * one record per lever file (lever.h): the file's content before bwgovd's
 * first write (original) and the value bwgovd wrote last (written), both in
 * the file's own syntax; for the idle lever also the group's weight before
 * it, which the kernel does not keep (cpu.idle going back to 0 resets the
 * weight to the default: 1024 shares, weight 100).
 *
 * The rules (state.h keeps the records in state.json, the daemon follows
 * them):
 *   - a record is saved before the write it describes (write-ahead);
 *   - it is put back only while the file still holds what bwgovd wrote:
 *     anything else is someone else's value, which stays (and is logged);
 *   - it is dropped only once the file reads the original again (or
 *     someone else's value), never because a write was tried;
 *   - a record bwgovd could not have made (bw_ledger_plausible()) is
 *     dropped without a write: a state file edited by hand, or stale,
 *     must never freeze or idle a group;
 *   - an undo that fails is tried again after bw_ledger_retry_usec(). */

#include <stdbool.h>
#include <stdint.h>

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/cgroup/lever.h"

/* The first retry of a failed undo, and the longest wait between two. */
#define BW_LEDGER_RETRY_MIN_USEC UINT64_C(100000)       /* 100 ms */
#define BW_LEDGER_RETRY_MAX_USEC UINT64_C(30000000)     /* 30 s */

struct bw_ledger_lever {
        char *original;         /* NULL: no record */
        char *written;          /* NULL: a record of a bwgovd that kept the original only */
        char *weight;           /* the idle lever's: the weight file before (native), NULL when unknown */
};

/* Whether lever l is recorded. */
static inline bool bw_ledger_has(const struct bw_ledger_lever *r) {
        return r && r->original;
}

/* Replace r with copies of original, written and weight (written and
 * weight may be NULL). Returns 0, -EINVAL (original NULL, a value too long
 * or with a newline), -ENOMEM (r unchanged). */
int bw_ledger_lever_set(struct bw_ledger_lever *r, const char *original, const char *written, const char *weight);
/* Free r's strings and clear it. */
void bw_ledger_lever_done(struct bw_ledger_lever *r);

/* Whether record r of lever l is one bwgovd could have made: freeze and
 * idle from "0" (THAWED) to "1" (FROZEN), a weight and the idle lever's
 * weight an integer in the file's range, cpus a non-empty CPU list. */
bool bw_ledger_plausible(enum bw_lever l, const struct bw_ledger_lever *r);

enum bw_ledger_undo {
        BW_LEDGER_UNDO_NOTHING,         /* the file holds the original: drop the record */
        BW_LEDGER_UNDO_WRITE,           /* it holds what bwgovd wrote: write the original */
        BW_LEDGER_UNDO_THEIRS,          /* someone else's value: keep it, drop the record */
};

/* What undoing r means while lever l's file holds cur. A record without
 * "written" (an older bwgovd's) counts "1" as written for freeze and idle,
 * and anything but the original as written for weight and cpus. */
enum bw_ledger_undo bw_ledger_undo_plan(enum bw_lever l, const struct bw_ledger_lever *r, const char *cur);

/* The weight file of a group whose cpu.idle went back to 0 (the kernel's
 * default: "1024" shares on v1 and hybrid, "100" on v2). */
const char *bw_ledger_idle_reset_weight(enum bw_cg_layout layout);

/* The wait before the next undo attempt after attempts failed ones:
 * BW_LEDGER_RETRY_MIN_USEC doubling, at most BW_LEDGER_RETRY_MAX_USEC. */
uint64_t bw_ledger_retry_usec(unsigned attempts);
