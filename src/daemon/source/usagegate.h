/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Whether any task below a cgroup's parent ran, told with one read for all
 * its governed children: a parent's cumulative usage is the sum of its own
 * tasks' and every descendant's (cgroupfs keeps it so, the rstat flush and
 * cpuacct's charge both walk up), so when two reads of it are equal no task
 * below it ran between them, and a child's usage read before the first is
 * its usage at the second. A quiet unit's light sample (unit-sample.c)
 * then reads nothing of its own: on a host whose idle containers sit under
 * a few slices, one read per slice and tick instead of one per cgroup.
 *
 * Only on cgroupfs (a fixture's parent sums nothing), only for a parent
 * that is not the hierarchy's root (always moving) and that holds
 * USAGE_GATE_MIN_CHILDREN governed cgroups or more (fewer save nothing).
 * A gate's reading is shared for USAGE_GATE_MAX_AGE_USEC; one that serves a
 * comparison is always newer than the child's read it compares with. */

#include <stdbool.h>
#include <stdint.h>

#include "bwgov/cgroup/cgroupfs.h"

#define USAGE_GATE_MIN_CHILDREN 4
#define USAGE_GATE_MAX_AGE_USEC (50 * 1000)

typedef struct UsageGates UsageGates;
typedef struct UsageGate UsageGate;

/* REQUIRE_KERNFS false only for tests (bw_cg_usage_open()). */
int usage_gates_new(bool require_kernfs, UsageGates **ret);
/* All gates must have been put first. */
UsageGates *usage_gates_free(UsageGates *g);

/* The gate of the parent of the cgroup at PATH under ROOT, one more child
 * counted; NULL when it has none (the root's children, out of memory).
 * The file is opened at its first read. */
UsageGate *usage_gate_get(UsageGates *g, const struct bw_cg_root *root, const char *path);
/* One child less; the last closes the file. */
void usage_gate_put(UsageGate *gate);

/* Governed children counted (a gate with fewer than
 * USAGE_GATE_MIN_CHILDREN is not read: usage_gate_read() says -EAGAIN). */
unsigned usage_gate_children(const UsageGate *gate);

/* The parent's usage, read at NOW_USEC or, shared, no more than
 * USAGE_GATE_MAX_AGE_USEC before and after AFTER_USEC. Sets *RET_USAGE and
 * *RET_READ_USEC (when it was read). Returns 0; -EAGAIN when the gate is
 * not used (too few children, its file refused once); another negative
 * errno from the read. */
int usage_gate_read(UsageGate *gate, uint64_t now_usec, uint64_t after_usec,
                    uint64_t *ret_usage, uint64_t *ret_read_usec);

/* The nearest limited ancestor's quota as the parent's children see it
 * (bw_cg_read_ancestor_quota(): the same for all of them), shared: put by
 * the child that walked up, in its PERIOD_USEC, with the ancestor's PATH
 * (NULL: none limited); got by a sibling with the same period when read
 * less than MAX_AGE_USEC before NOW_USEC (true, *RET_QUOTA_USEC and, when
 * not NULL, *RET_PATH the gate's own string and *RET_READ_USEC). Forget:
 * an ancestor's quota changed. A gate of any number of children keeps it. */
void usage_gate_ancestor_put(UsageGate *gate, uint64_t period_usec, uint64_t now_usec, uint64_t quota_usec,
                             const char *path);
bool usage_gate_ancestor_get(UsageGate *gate, uint64_t period_usec, uint64_t now_usec, uint64_t max_age_usec,
                             uint64_t *ret_quota_usec, const char **ret_path, uint64_t *ret_read_usec);
void usage_gate_ancestor_forget(UsageGate *gate);

/* A child's sample read nothing of its own: the gate said no task ran. */
void usage_gate_skipped(UsageGate *gate);

/* Gates held, file descriptors open, and samples skipped over all gates. */
size_t usage_gates_size(const UsageGates *g);
size_t usage_gates_fds(const UsageGates *g);
uint64_t usage_gates_skipped(const UsageGates *g);
