/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Probes that decide whether the running kernel has a manifest item: files
 * and cpu.stat fields in the cgroup tree, /proc files, the kernel config,
 * BTF (kprobe.c); behaviour probes that measure a scratch cgroup are
 * kprobe-behaviour.h and kprobe-write-order.h; the version table and the dispatch of one method
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

#include "bwgov/kernel/kmanifest.h"
#include "bwgov/util/kversion.h"
#include "bwgov/util/macro.h"

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

/* What a behaviour probe adds when its scratch cgroup (cgroup v2) has no
 * cpu.max: the cpu controller is not enabled below the root, as on a Debian
 * 13 host (systemd 257) where no unit has asked for CPU control yet. */
#define BW_KPROBE_NO_CPU_CONTROLLER \
        " (the cpu controller is not in the root's cgroup.subtree_control: systemd enables it " \
        "for the first unit with CPUWeight= or CPUQuota=)"

/* Set *ret to STATUS with "how" formatted from FMT. Returns 0 or -ENOMEM. */
int bw_kprobe_result_set(struct bw_kprobe_result *ret, enum bw_kstatus status, const char *fmt, ...) _printf_(3, 4);

/* "<env->host_root><path>" (PATH absolute) into *ret (malloc'd). Returns 0
 * or -ENOMEM. */
int bw_kprobe_host_path(const struct bw_kprobe_env *env, const char *path, char **ret);

/* The individual probes, for bw_kprobe_run() (kprobe-run.h), tests and the
 * daemon. Inconclusive outcomes (file unreadable, probe not allowed, ...)
 * are BW_KSTATUS_UNKNOWN with the reason in how. Each returns 0, or -ENOMEM
 * (ret untouched). The behaviour probes are kprobe-behaviour.h and
 * kprobe-write-order.h.
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
/* Look an option up in a kernel config file (gzip'd or plain; zlib reads
 * both). Returns 1 and *ret_value (malloc'd, "y", "m", "250", "\"str\"") when
 * the option is set, 0 when it is "is not set" or not mentioned (ret_value
 * NULL), or a negative errno when the file cannot be read. */
int bw_kconfig_lookup(const char *path, const char *option, char **ret_value);
