/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Levers: the cgroup files beyond the bandwidth that bwgovd changes for
 * latency protection and contention (weight, idle, freezer, cpuset), where
 * each lives in each layout, and reading and writing them at the held
 * directory fds. Values cross this interface in cgroup v2's syntax
 * ("250", "1", "0-1"); the v1 files are mapped:
 *
 *   lever   V2                   HYBRID (v1 + cgroup2 twin)     V1
 *   weight  cpu.weight 1..10000  cpu/…/cpu.shares               cpu/…/cpu.shares
 *   idle    cpu.idle 0|1         cpu/…/cpu.idle                 cpu/…/cpu.idle
 *   freeze  cgroup.freeze 0|1    the twin's cgroup.freeze       freezer/…/freezer.state
 *   cpus    cpuset.cpus          cpuset/…/cpuset.cpus           cpuset/…/cpuset.cpus
 *
 * On a hybrid host the twin's cgroup.freeze is used, not the v1 freezer:
 * the cgroup2 freezer is core (no controller to enable), and systemd creates
 * the twin of every unit but no v1 freezer directory. cpu.shares and
 * cpu.weight convert as the kernel does (weight = shares * 100 / 1024).
 * The original of a file is kept as read (native syntax) and written back
 * as read, so a restore is exact. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bwgov/cgroup/cgroupfs.h"

enum bw_lever {
        BW_LEVER_WEIGHT = 0,
        BW_LEVER_IDLE,
        BW_LEVER_FREEZE,
        BW_LEVER_CPUS,
        _BW_LEVER_MAX,
        _BW_LEVER_INVALID = -1,
};

/* Longest value kept (a cpuset list of a large host fits). */
#define BW_LEVER_VALUE_MAX 512

#define BW_WEIGHT_MIN     UINT64_C(1)
#define BW_WEIGHT_DEFAULT UINT64_C(100)
#define BW_WEIGHT_MAX     UINT64_C(10000)
#define BW_SHARES_MIN     UINT64_C(2)
#define BW_SHARES_MAX     UINT64_C(262144)

/* "weight", "idle", "freeze", "cpus": the state file's keys. */
const char *bw_lever_to_string(enum bw_lever l);
enum bw_lever bw_lever_from_string(const char *s);

/* The file a lever lives in under layout ("cpu.shares", "cgroup.freeze",
 * …), for messages. */
const char *bw_lever_file(enum bw_cg_layout layout, enum bw_lever l);

/* cpu.shares <-> cpu.weight, the kernel's conversion, clamped to the
 * target's range. */
uint64_t bw_weight_from_shares(uint64_t shares);
uint64_t bw_shares_from_weight(uint64_t weight);

/* The native text for VALUE (v2 syntax) under layout into buf: weights
 * become shares on v1, freeze 0|1 becomes THAWED|FROZEN on V1. Returns 0,
 * -EINVAL for a value out of the lever's range, -ENOBUFS. */
int bw_lever_native(enum bw_cg_layout layout, enum bw_lever l, const char *value, char *buf, size_t n);

/* The lever's value in v2 syntax from the native text (for messages and
 * comparisons): shares -> weight, FROZEN/FREEZING -> 1, THAWED -> 0. */
int bw_lever_from_native(enum bw_cg_layout layout, enum bw_lever l, const char *native, char *buf, size_t n);

/* Read the lever's file of cg (trailing newline removed) into buf.
 * Returns 0, -EOPNOTSUPP when the layout or this cgroup has no such file
 * (no v1 freezer/cpuset directory, no cpuset controller on v2), -ENOBUFS,
 * -ENOENT/-ENODEV when the cgroup vanished, another negative errno. */
int bw_lever_read(const struct bw_cg_root *root, struct bw_cg *cg, enum bw_lever l, char *buf, size_t n);

/* Write NATIVE to the lever's file of cg (one write). Same errors as
 * bw_lever_read(), and the kernel's (EINVAL, EBUSY, …). */
int bw_lever_write(const struct bw_cg_root *root, struct bw_cg *cg, enum bw_lever l, const char *native);

/* Whether two native values mean the same (a v1 FREEZING is FROZEN, two
 * weights the same number, two CPU lists the same CPUs; blanks around are
 * ignored). */
bool bw_lever_same(enum bw_lever l, const char *a, const char *b);

/* Sum of the weights (v2 units) of cg's siblings in the bandwidth tree
 * (cpu.weight, or cpu.shares converted), cg itself left out; an idle
 * sibling counts as BW_WEIGHT_MIN. Returns 0 with *ret_sum and the
 * number of siblings, or a negative errno. */
int bw_lever_sibling_weights(const struct bw_cg_root *root, struct bw_cg *cg, uint64_t *ret_sum,
                             unsigned *ret_n);
