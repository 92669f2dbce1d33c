/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Kernel validation: the bwgov-kernel-patches manifest (schema
 * "io.bwgov.kernel-manifest", schema_version 1), the running kernel's
 * version, probes that decide for each manifest item whether the kernel has
 * it, and the capabilities the governor adapts to.
 *
 * Everything here is pure library code: paths, directory fds, the
 * /proc/version text and the host root prefix are parameters, so fixture trees
 * stand in for /sys/fs/cgroup, /proc and /boot without root. Only the
 * behaviour probes touch the kernel (they create and remove one scratch
 * cgroup) and they run only when bw_kprobe_env.allow_behaviour is set. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* Tri-state answer of every probe and of every item. */

enum bw_kstatus {
        BW_KSTATUS_UNKNOWN = 0,
        BW_KSTATUS_PRESENT,
        BW_KSTATUS_ABSENT,
        _BW_KSTATUS_MAX,
};

/* "present", "absent", "unknown"; NULL for an out-of-range value. */
const char *bw_kstatus_to_string(enum bw_kstatus s);

/* ------------------------------------------------------------------------ */
/* Kernel versions */

enum bw_kversion_origin {
        BW_KVERSION_FROM_RELEASE = 0,   /* the release token, e.g. "6.18.44-fc-v657" */
        BW_KVERSION_FROM_DEBIAN,        /* the "Debian 6.1.192-2" tag of /proc/version */
};

#define BW_KRELEASE_MAX 65              /* like struct utsname.release */

struct bw_kversion {
        unsigned major;
        unsigned minor;
        unsigned patch;                 /* stable level; meaningful only when patch_known */
        bool patch_known;               /* false for distribution ABI names such as
                                         * "5.15.0-100-generic": the base is 5.15, the
                                         * stable level (and backports) cannot be told */
        unsigned rc;                    /* N of a "-rcN" pre-release of major.minor, 0 for a release */
        enum bw_kversion_origin origin;
        char release[BW_KRELEASE_MAX];  /* the release token as found ("6.1.0-28-amd64"),
                                         * used for /boot/config-<release> and messages */
};

/* Parse a kernel version from either a whole /proc/version line ("Linux
 * version <release> (...) #1 SMP ...") or a bare release ("6.18.44",
 * "6.10.0-rc3", "6.12.117-1", "5.15.0-100-generic").
 *  - A Debian tag in /proc/version ("... Debian 6.1.192-2 (2026-01-02)") of
 *    the same major.minor wins over the release token: "6.1.0-28-amd64" is
 *    an ABI name, the upstream version is 6.1.192. Other "Debian x.y.z" words
 *    (the compiler's version) do not match major.minor and are ignored.
 *  - "X.Y.0-N..." (an ABI number after a .0 release) without such a tag has
 *    an unknown stable level (patch_known = false).
 *  - "X.Y" alone is X.Y.0.
 * Returns 0, or -EINVAL when no version can be found (ret untouched). */
int bw_kversion_parse(const char *s, struct bw_kversion *ret);

/* Read a /proc/version-style file and parse it. Returns 0, -errno when it
 * cannot be opened, -EINVAL when it holds no version (ret untouched). */
int bw_kversion_read(const char *path, struct bw_kversion *ret);

/* Order of two versions by (major, minor, patch, rc), a release sorting after
 * its rcs. An unknown patch compares as 0. Returns <0, 0, >0. */
int bw_kversion_compare(const struct bw_kversion *a, const struct bw_kversion *b);

/* Format as "6.18.44", "6.10.0-rc3" or "5.15.?" (unknown stable level) into
 * buf. Returns buf. size should be at least BW_KRELEASE_MAX. */
char *bw_kversion_format(const struct bw_kversion *v, char *buf, size_t size);

/* First fixed release of one stable branch, e.g. branch 6.1 -> 6.1.93. */
struct bw_kstable {
        unsigned major;
        unsigned minor;
        unsigned patch;
};

/* Does kernel v carry a change that landed in mainline release_major.release_minor,
 * with the given first fixed stable releases?
 *  - PRESENT when v >= the mainline release (an rc of that very release is
 *    UNKNOWN: the change may have landed after that rc), or when v's branch
 *    has a stable entry and v's stable level >= it;
 *  - ABSENT when v's branch has a stable entry and v is below it, or when
 *    v's branch is older than the release and has no stable entry;
 *  - UNKNOWN when v's stable level is unknown (a distribution ABI name: it
 *    may carry backports) and v is older than the release.
 * ret_reason (optional) receives a malloc'd one-line explanation such as
 * "6.1.192 >= 6.1.93 (6.1 stable)". Returns 0 or -ENOMEM. */
int bw_kversion_has_fix(
                const struct bw_kversion *v,
                unsigned release_major,
                unsigned release_minor,
                const struct bw_kstable *stable,
                size_t n_stable,
                enum bw_kstatus *ret_status,
                char **ret_reason);

/* ------------------------------------------------------------------------ */
/* Manifest */

enum bw_kitem_kind {
        BW_KITEM_UPSTREAM_FIX = 0,
        BW_KITEM_OUT_OF_TREE,
        BW_KITEM_FEATURE,
        _BW_KITEM_KIND_MAX,
};

enum bw_kimportance {
        BW_KIMPORTANCE_REQUIRED = 0,
        BW_KIMPORTANCE_RECOMMENDED,
        BW_KIMPORTANCE_OPTIONAL,
        _BW_KIMPORTANCE_MAX,
};

/* What the daemon adapts when the item is absent. */
enum bw_keffect {
        BW_KEFFECT_NONE = 0,
        BW_KEFFECT_NO_BURST,                    /* no burst: quota only */
        BW_KEFFECT_BURST_REPAIR,                /* burst bug: re-write burst after quota writes */
        BW_KEFFECT_NO_PSI,                      /* no PSI: throttle statistics only */
        BW_KEFFECT_NO_PSI_FULL,
        BW_KEFFECT_NO_PSI_TRIGGERS,             /* no unprivileged triggers: poll, or 2 s windows */
        BW_KEFFECT_NO_BURST_STATS,
        BW_KEFFECT_AVOID_IDENTICAL_WRITES,
        _BW_KEFFECT_MAX,
};

enum bw_kdetect_method {
        BW_KDETECT_VERSION = 0,
        BW_KDETECT_FILE,
        BW_KDETECT_PROC_FILE,
        BW_KDETECT_CPUSTAT_FIELD,
        BW_KDETECT_PSI_FULL,
        BW_KDETECT_KCONFIG,
        BW_KDETECT_BTF_MEMBER,
        BW_KDETECT_BEHAVIOUR,
        _BW_KDETECT_MAX,
};

enum bw_kbehaviour {
        BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE = 0,
        BW_KBEHAVIOUR_IDENTICAL_UPDATE_NOOP,
        BW_KBEHAVIOUR_ACCOUNTING_SLACK,
        BW_KBEHAVIOUR_ATOMIC_RUNTIME_POOL,
        _BW_KBEHAVIOUR_MAX,
};

/* The manifest's spelling of each value ("upstream-fix", "required",
 * "burst-repair", "cpustat-field", "identical-update-noop", ...); NULL for an
 * out-of-range value. The from_string functions return -EINVAL when unknown. */
const char *bw_kitem_kind_to_string(enum bw_kitem_kind k);
int bw_kitem_kind_from_string(const char *s);
const char *bw_kimportance_to_string(enum bw_kimportance i);
int bw_kimportance_from_string(const char *s);
const char *bw_keffect_to_string(enum bw_keffect e);
int bw_keffect_from_string(const char *s);
const char *bw_kdetect_method_to_string(enum bw_kdetect_method m);
int bw_kdetect_method_from_string(const char *s);
const char *bw_kbehaviour_to_string(enum bw_kbehaviour b);
int bw_kbehaviour_from_string(const char *s);

struct bw_kdetect {
        enum bw_kdetect_method method;
        char **any;                     /* file, cpustat-field: names, any of which will do */
        size_t n_any;
        char *path;                     /* proc-file: absolute host path */
        char *option;                   /* kconfig: "CONFIG_PSI" */
        char *struct_name;              /* btf-member */
        char *member;                   /* btf-member */
        enum bw_kbehaviour behaviour;   /* behaviour */
};

struct bw_kitem {
        char *id;                       /* [a-z0-9-]+, unique */
        char *title;
        enum bw_kitem_kind kind;
        bool has_upstream;              /* false when "upstream" is null: out-of-tree
                                         * items, build options */
        char *upstream_commit;          /* NULL when !has_upstream */
        unsigned release_major;         /* mainline release that has it */
        unsigned release_minor;
        struct bw_kstable *stable;      /* sorted by branch */
        size_t n_stable;
        char **patches;                 /* paths relative to the manifest directory */
        size_t n_patches;
        struct bw_kdetect *detect;      /* tried in order, first conclusive answer wins */
        size_t n_detect;
        enum bw_kimportance importance;
        char *fallback;
        enum bw_keffect effect;
        bool verified;
        char *note;                     /* NULL when absent */
};

struct bw_kbranch {
        char *name;                     /* "6.1" */
        char *base;
        char **series;
        size_t n_series;
};

struct bw_kfile {
        char *path;                     /* relative to the manifest directory */
        char sha256[65];                /* 64 lowercase hex digits */
};

struct bw_kmanifest {
        char *patchset_version;
        struct bw_kbranch *branches;
        size_t n_branches;
        struct bw_kfile *files;
        size_t n_files;
        struct bw_kitem *items;
        size_t n_items;
};

/* One problem found in a manifest or its files. path is a JSON path into the
 * manifest ("$.items[3].kind", "$.branches[\"6.1\"].series[0]", "$" for the
 * document as a whole); message says what was expected or found. */
struct bw_kerror {
        char *path;
        char *message;
};

struct bw_kerrors {
        struct bw_kerror *errors;
        size_t n_errors;
};

void bw_kerrors_done(struct bw_kerrors *e);

/* Parse and validate a manifest from a buffer. The schema is checked
 * strictly: unknown keys, wrong types, values outside their enumerations,
 * duplicate ids/paths/keys, malformed releases and digests, and references
 * (series entries, item patches) to files not listed in "files" are all
 * errors. Every error found is appended to *ret_errors (when not NULL;
 * existing entries are kept). Returns 0 and *ret on success, -EINVAL when the
 * document is invalid (JSON syntax errors included, reported at "$" with
 * line and column), -ENOMEM. *ret is untouched on failure. */
int bw_kmanifest_parse(const char *buf, size_t len, struct bw_kmanifest **ret, struct bw_kerrors *ret_errors);

/* Read the file at path (relative to dir_fd, or AT_FDCWD) and parse it as
 * above. I/O failures return the negative errno and add one error at "$". */
int bw_kmanifest_load(int dir_fd, const char *path, struct bw_kmanifest **ret, struct bw_kerrors *ret_errors);

/* The installed manifest of bwgov-kernel-patches; for an uninstalled build
 * (tests, scripts/demo) the one in the source tree when the installed one
 * is missing. Never NULL. */
const char *bw_kmanifest_default_path(void);

/* Check every entry of "files": the file, relative to dir_fd (the manifest's
 * directory), must exist and have the listed SHA-256 (OpenSSL EVP). Each
 * missing or mismatching file adds an error at "$.files[i]" naming the file.
 * Returns 0 when all match, -EBADMSG when some did not, -ENOMEM. */
int bw_kmanifest_verify_files(const struct bw_kmanifest *m, int dir_fd, struct bw_kerrors *ret_errors);

const struct bw_kitem *bw_kmanifest_find_item(const struct bw_kmanifest *m, const char *id);

void bw_kmanifest_free(struct bw_kmanifest *m);

/* ------------------------------------------------------------------------ */
/* Probes */

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
        bool allow_behaviour;           /* run the scratch-cgroup probes (needs root) */
        const char *scratch_prefix;     /* scratch cgroup "<prefix>-<pid>" under bw_root_fd;
                                         * NULL: "bwgov-probe" */
        /* With allow_behaviour, bw_kcheck_run() calls this instead of
         * bw_kprobe_behaviour() when set (tests); same contract. */
        int (*behaviour_probe)(const struct bw_kprobe_env *env, enum bw_kbehaviour b,
                               struct bw_kprobe_result *ret);
};

struct bw_kprobe_result {
        enum bw_kstatus status;
        char *how;                      /* malloc'd: how it was detected, or why not */
};

void bw_kprobe_result_done(struct bw_kprobe_result *r);

/* Run one detection method. Inconclusive outcomes (file unreadable, probe not
 * allowed, ...) are BW_KSTATUS_UNKNOWN with the reason in how. Returns 0, or
 * -ENOMEM (ret untouched). item gives the version method its releases. */
int bw_kprobe_run(const struct bw_kprobe_env *env, const struct bw_kitem *item, const struct bw_kdetect *d,
                  struct bw_kprobe_result *ret);

/* The individual probes, for tests and the daemon. Same contract as above.
 *
 * bw_kprobe_behaviour() runs only with env->allow_behaviour and only when
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
 *
 * bw_kcheck_run() tries an item's methods in order until one decides; with
 * allow_behaviour it then still runs the item's behaviour probes: agreeing
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
int bw_kprobe_behaviour(const struct bw_kprobe_env *env, enum bw_kbehaviour b, struct bw_kprobe_result *ret);

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

/* ------------------------------------------------------------------------ */
/* The check */

/* What the governor adapts to. Derived from the items by their "effect": a
 * capability is true only when the manifest has items with that effect and
 * every one of them is present (unknown counts as absent). burst_bug is true
 * when the kernel has burst, the bandwidth root is v2 (only cpu.max writes
 * corrupt the burst) and not every burst-repair item is present. The
 * conservative value of everything is false (see bw_kcaps_conservative()). */
struct bw_kcaps {
        bool has_burst;
        bool burst_bug;                 /* needs repair: re-write burst after quota writes */
        bool has_psi;
        bool has_psi_full;              /* implies has_psi */
        bool has_psi_triggers_unprivileged; /* implies has_psi */
        bool has_burst_stats;
        bool identical_update_is_noop;
};

/* The conservative capabilities used when nothing could be checked. */
void bw_kcaps_conservative(struct bw_kcaps *ret);

enum bw_kverdict {
        BW_KVERDICT_OK = 0,             /* every required item present */
        BW_KVERDICT_REQUIRED_MISSING = 1, /* some required item absent */
        BW_KVERDICT_UNCHECKED = 2,      /* some required item unknown, or the check failed */
};

/* "ok", "required-missing", "could-not-check". The numeric values are the
 * exit codes of `bwgovctl check-kernel`. */
const char *bw_kverdict_to_string(enum bw_kverdict v);

struct bw_kcheck_row {
        char *id;
        char *title;
        enum bw_kitem_kind kind;
        enum bw_kimportance importance;
        enum bw_keffect effect;
        char *fallback;
        enum bw_kstatus status;
        int method;                     /* enum bw_kdetect_method that decided, -1 if none did */
        char *detected_by;              /* "file: cpu.cfs_burst_us", or why nothing decided */
        int behaviour;                  /* enum bw_kstatus the item's behaviour probe saw,
                                         * -1 if none ran */
};

struct bw_kcheck_result {
        struct bw_kcheck_row *rows;     /* in manifest order */
        size_t n_rows;
        struct bw_kcaps caps;
        enum bw_kverdict verdict;
        size_t n_required_absent;
        size_t n_required_unknown;
};

/* Probe every item of m. Behaviour probes run at most once each per call.
 * Returns 0 and a result owning its strings (it does not reference m), or
 * -ENOMEM. */
int bw_kcheck_run(const struct bw_kmanifest *m, const struct bw_kprobe_env *env, struct bw_kcheck_result **ret);

void bw_kcheck_result_free(struct bw_kcheck_result *r);
