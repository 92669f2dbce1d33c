/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The bwgov-kernel-patches manifest (schema "io.bwgov.kernel-manifest",
 * schema_version 1): its items, branches and files, the error list, and the
 * SHA-256 check of the patch files it lists (kmanifest.c). The strict parser
 * that reports every problem at a JSON path is kmanifest-parse.h. */

#include <stdbool.h>
#include <stddef.h>

#include "bwgov/util/kversion.h"
#include "bwgov/util/macro.h"


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
        BW_KEFFECT_ORDER_WRITES,                /* quota below burst refused: burst first */
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
        BW_KBEHAVIOUR_WRITE_ORDER,              /* load-free: see bw_kbehaviour_is_load_free() */
        BW_KBEHAVIOUR_NESTED_SIBLINGS,
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
        char *upstream_commit;          /* NULL when !has_upstream, or for a feature known
                                         * by its release only ("commit": null) */
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

/* Append one error (message formatted from FMT). A NULL E is allowed and
 * ignored. Returns 0 or -ENOMEM. */
int bw_kerrors_add(struct bw_kerrors *e, const char *path, const char *fmt, ...) _printf_(3, 4);

/* Opens the directory that holds the manifest at PATH, the one its "files"
 * are relative to ("." for a bare file name). Returns the fd (O_DIRECTORY,
 * O_CLOEXEC) or a negative errno. */
int bw_kmanifest_open_dir(const char *path);

/* The installed manifest of bwgov-kernel-patches; for an uninstalled build
 * (tests, scripts/demo) the one in the source tree when the installed one
 * is missing. Never NULL. */
const char *bw_kmanifest_default_path(void);

/* Check every entry of "files": the file, relative to dir_fd (the manifest's
 * directory), must exist and have the listed SHA-256 (OpenSSL EVP). Each
 * missing or mismatching file adds an error at "$.files[i]" naming the file.
 * Returns 0 when all match, -EBADMSG when some did not, -ENOMEM. */
int bw_kmanifest_verify_files(const struct bw_kmanifest *m, int dir_fd, struct bw_kerrors *ret_errors);
/* Hash each file in a forked child process, so that libcrypto is never
 * mapped into the caller (a daemon that runs for months keeps 3.4 MiB of
 * it resident otherwise: OpenSSL cannot be unloaded). The results are the
 * same; off by default. */
void bw_kmanifest_set_hash_in_child(bool b);

const struct bw_kitem *bw_kmanifest_find_item(const struct bw_kmanifest *m, const char *id);
/* Free what the item or detection method owns (not the struct itself). */
void bw_kitem_done(struct bw_kitem *it);
void bw_kdetect_done(struct bw_kdetect *d);

void bw_kmanifest_free(struct bw_kmanifest *m);
