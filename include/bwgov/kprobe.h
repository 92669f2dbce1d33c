/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Probes that decide whether the running kernel has a manifest item: files
 * and cpu.stat fields in the cgroup tree, /proc files, the kernel config,
 * BTF (kprobe.c), behaviour probes that measure a scratch cgroup
 * (kprobe-behaviour.c); the version table and the dispatch of one method
 * are kprobe-run.h. Paths, directory fds and the host root prefix are
 * parameters, so fixture trees stand in for /sys/fs/cgroup,
 * /proc and /boot without root. Only the behaviour probes touch the kernel
 * (they create and remove one scratch cgroup) and they run only when
 * allowed: the busy-loop ones with bw_kprobe_env.allow_behaviour, the
 * load-free one (write-order: no task, a few writes, milliseconds) with
 * allow_load_free_behaviour too. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bwgov/kmanifest.h"
#include "bwgov/kversion.h"
#include "bwgov/macro.h"

struct bw_kprobe_result;

struct bw_kprobe_env {
        int bw_root_fd;                 /* the cgroup directory with the bandwidth files: the
                                         * v2 root, or the v1 "cpu" hierarchy root; -1 if none */
        bool bw_is_v1;                  /* bw_root_fd is a v1 hierarchy (cpu.cfs_*_us) */
        int v2_root_fd;                 /* cgroup2 root for cpu.pressure; -1 if none */
        const char *host_root;          /* prefix for proc-file paths, /proc/config.gz and
                                         * /boot/config-*; NULL or "/" for the real root */
        const char *btf_path;           /* raw BTF; NULL: <host_root>/sys/kernel/btf/vmlinux */
        const struct bw_kversion *version; /* the running kernel; NULL when unknown */
        bool allow_behaviour;           /* run every scratch-cgroup probe, the busy-loop ones
                                         * included (needs root, takes seconds) */
        bool allow_load_free_behaviour; /* run the load-free ones even without allow_behaviour
                                         * (bwgovd's startup check does) */
        const char *scratch_prefix;     /* scratch cgroup "<prefix>-<pid>" under bw_root_fd;
                                         * NULL: "bwgov-probe" */
        /* When set, bw_kcheck_run() calls this instead of bw_kprobe_behaviour()
         * for every probe bw_kprobe_behaviour_allowed() lets run (tests);
         * same contract. */
        int (*behaviour_probe)(const struct bw_kprobe_env *env, enum bw_kbehaviour b,
                               struct bw_kprobe_result *ret);
};

struct bw_kprobe_result {
        enum bw_kstatus status;
        char *how;                      /* malloc'd: how it was detected, or why not */
};

void bw_kprobe_result_done(struct bw_kprobe_result *r);

/* Set *ret to STATUS with "how" formatted from FMT. Returns 0 or -ENOMEM. */
int bw_kprobe_result_set(struct bw_kprobe_result *ret, enum bw_kstatus status, const char *fmt, ...) _printf_(3, 4);

/* "<env->host_root><path>" (PATH absolute) into *ret (malloc'd). Returns 0
 * or -ENOMEM. */
int bw_kprobe_host_path(const struct bw_kprobe_env *env, const char *path, char **ret);

/* The individual probes, for bw_kprobe_run() (kprobe-run.h), tests and the
 * daemon. Inconclusive outcomes (file unreadable, probe not allowed, ...)
 * are BW_KSTATUS_UNKNOWN with the reason in how. Each returns 0, or -ENOMEM
 * (ret untouched).
 *
 * bw_kprobe_behaviour() runs only when bw_kprobe_behaviour_allowed() and when
 * env->bw_root_fd is on a cgroup file system (never in a fixture tree). It
 * creates the scratch cgroup "<scratch_prefix>-<pid>" under bw_root_fd and
 * always removes it again:
 *  - burst-survives-cpumax-write (v2): quota 50000/100000, burst 20000, a
 *    cpu.max write with another quota, burst read back: 20000 present,
 *    20 absent. UNKNOWN on a v1 hierarchy (not applicable: the bug is in
 *    cpu.max's write handler only), so the next method decides.
 *  - identical-update-noop: a forked busy loop (killed by pid, with
 *    PR_SET_PDEATHSIG and an alarm as backstops) runs 0.2 s unlimited, 0.3 s
 *    under a 10 % quota, then 1 s while the same quota is rewritten every
 *    2 ms: still about 10 % is PRESENT, near a whole CPU is ABSENT. A busy
 *    host, an unenforced quota or starved rewrites give UNKNOWN.
 *  - accounting-slack: the busy loop runs 0.2 s unlimited, then 2 s under a
 *    quota of exactly one CPU at a 10 ms period (no burst): throttled in at
 *    least 15 % of the periods is ABSENT (mainline pays the accounting debt
 *    of each period boundary from the new quota), at most 7.5 % with at least
 *    90 % of a CPU used is PRESENT. A busy host or too few periods give
 *    UNKNOWN.
 *  - atomic-runtime-pool: needs /proc/lock_stat (CONFIG_LOCK_STAT, debug
 *    kernels; UNKNOWN without). The busy loop runs 1 s under a quota of two
 *    CPUs at a 1 s period, which it never reaches; the acquisitions of the
 *    &cfs_b->lock class are compared with the slices it refilled (CPU time
 *    over sched_cfs_bandwidth_slice_us): at least one per four slices is
 *    ABSENT, at most one per twenty is PRESENT.
 *  - write-order (load-free: no task, no load, milliseconds; see
 *    bw_kprobe_write_order_at()): quota 50000 and burst 50000 at a 100000
 *    period, then a quota of 25000. Accepted with the burst kept is PRESENT,
 *    EINVAL (and accepted once the burst is 0) is ABSENT.
 *
 * bw_kcheck_run() tries an item's methods in order until one decides; it then
 * still runs the item's behaviour probes that env allows: agreeing
 * or inconclusive results are appended to detected_by, a contradiction makes
 * the item UNKNOWN ("conflicting: ..."). */
int bw_kprobe_file(const struct bw_kprobe_env *env, char *const *any, size_t n_any, struct bw_kprobe_result *ret);
int bw_kprobe_proc_file(const struct bw_kprobe_env *env, const char *path, struct bw_kprobe_result *ret);
int bw_kprobe_cpustat_field(const struct bw_kprobe_env *env, char *const *any, size_t n_any,
                            struct bw_kprobe_result *ret);
int bw_kprobe_psi_full(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret);
int bw_kprobe_kconfig(const struct bw_kprobe_env *env, const char *option, struct bw_kprobe_result *ret);
int bw_kprobe_btf_member(const struct bw_kprobe_env *env, const char *struct_name, const char *member,
                         struct bw_kprobe_result *ret);
/* What the run-queue telemetry (src/bpf) can rely on in this kernel's BTF. */
struct bw_kbpf {
        bool has_runqueue;              /* tp_btf sched_switch, sched_wakeup{,_new}; task->se.cfs_rq */
        const char *throttled_clock;    /* "exact" (6.6+), "estimate" (PELT), "none" */
        const char *throttle_model;     /* "task" (6.18+), "cfs_rq", "unknown" */
};

/* Fills *ret (false / "none" / "unknown" without BTF). Returns 0 or -ENOMEM. */
int bw_kprobe_bpf_support(const struct bw_kprobe_env *env, struct bw_kbpf *ret);
int bw_kprobe_behaviour(const struct bw_kprobe_env *env, enum bw_kbehaviour b, struct bw_kprobe_result *ret);

/* The load-free behaviour probes: no task in the scratch cgroup, no load, a
 * few writes, milliseconds (write-order). bwgovd runs them at startup,
 * where the busy-loop probes never run. */
bool bw_kbehaviour_is_load_free(enum bw_kbehaviour b);

/* Whether env lets probe b run: allow_behaviour, or allow_load_free_behaviour
 * for a load-free probe. */
bool bw_kprobe_behaviour_allowed(const struct bw_kprobe_env *env, enum bw_kbehaviour b);

/* How the write-order probe writes a value into a cgroup file: 0 or the
 * kernel's negative errno (the test seam). */
typedef int (*bw_kprobe_write_fn)(int dir_fd, const char *name, const char *value, void *userdata);

/* The write-order probe's steps in dir_fd, an empty cgroup with the
 * bandwidth files (v1: cpu.cfs_{period,quota,burst}_us; v2: cpu.max,
 * cpu.max.burst), through write (NULL: the files themselves):
 * period 100000, quota 50000, burst 50000, then quota 25000 below the burst.
 * That write accepted and the burst read back as 50000 is PRESENT (the
 * kernel no longer orders quota and burst); refused with EINVAL, and
 * accepted once the burst is 0, is ABSENT (mainline: a quota below the burst
 * is EINVAL). On v2 a burst read back as 50 is UNKNOWN: the kernel has the
 * cpu.max burst bug (divided by 1000), which hides the check. Anything else
 * is UNKNOWN with the reason. Leaves the group limited; the caller removes
 * it. Returns 0 or -ENOMEM. */
int bw_kprobe_write_order_at(int dir_fd, bool v1, bw_kprobe_write_fn write, void *userdata,
                             struct bw_kprobe_result *ret);
/* The whole probe: a scratch cgroup under env->bw_root_fd, the steps above,
 * the cgroup removed. For bw_kprobe_behaviour(), which checks the gate. */
int bw_kprobe_write_order(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret);

/* Sum of the acquisitions of a lock class in /proc/lock_stat. Returns 1 and
 * *ret when the class is listed, 0 (*ret = 0) when it is not, -EBADMSG for a
 * file that is not lock_stat, -ENOTRECOVERABLE when lock debugging was turned
 * off (the counts stopped). */
int bw_lockstat_acquisitions(FILE *f, const char *class_name, uint64_t *ret);

/* Look an option up in a kernel config file (gzip'd or plain; zlib reads
 * both). Returns 1 and *ret_value (malloc'd, "y", "m", "250", "\"str\"") when
 * the option is set, 0 when it is "is not set" or not mentioned (ret_value
 * NULL), or a negative errno when the file cannot be read. */
int bw_kconfig_lookup(const char *path, const char *option, char **ret_value);
