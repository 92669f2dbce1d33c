/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The kernel check from start to end, once for every caller (bwgovd at
 * startup, its CheckKernel varlink method, `bwgovctl check-kernel`): read the
 * kernel version, find and load the manifest, check its files' digests, open
 * the cgroup roots, decide whether behaviour probes may run, probe every
 * item, and reach the verdict. Everything found, errors included, lands in
 * one struct bw_kreport; bw_kreport_to_json() is its one JSON shape. */

#include <jansson.h>
#include <stdbool.h>

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/kernel/kcheck.h"

struct bw_kreport_args {
        const char *manifest_path;      /* NULL: bw_kmanifest_default_path() */
        const char *host_root;          /* prefix for /proc, /boot and /sys; NULL: the real root */
        const char *proc_version;       /* file with the /proc/version text; NULL: <host_root>/proc/version */
        const char *btf_path;           /* raw BTF; NULL: <host_root>/sys/kernel/btf/vmlinux */
        const struct bw_cg_root *root;  /* the cgroup roots to probe, borrowed; NULL: open cgroup_root */
        const char *cgroup_root;        /* without root: a directory standing in for /sys/fs/cgroup;
                                         * NULL: the host's mounts */
        int probe;                      /* busy-loop behaviour probes: 1 run, 0 do not, -1 run when
                                         * privileged. The load-free ones (write-order) run whenever
                                         * there is a bandwidth root, whatever this says: bwgovd's
                                         * startup check (probe 0) needs them */
        bool privileged;                /* the caller is root (behaviour probes need it) */
        const char *scratch_prefix;     /* name prefix of the probes' scratch cgroup; NULL: "bwgov-probe" */
};

struct bw_kreport {
        char *manifest_path;            /* the manifest used (args or the default) */
        struct bw_kmanifest *manifest;  /* NULL when it could not be loaded */
        int manifest_error;             /* why not (negative errno), 0 when loaded */
        struct bw_kerrors errors;       /* problems of the manifest or of its files */
        bool files_ok;                  /* every file of the manifest matches its digest */
        bool version_ok;
        struct bw_kversion version;     /* meaningful when version_ok */
        char *version_error;            /* why not, when !version_ok */
        const struct bw_cg_root *root;  /* the cgroup roots probed; NULL when none was found */
        char *root_error;               /* why none was found */
        bool probes_allowed;            /* every behaviour probe ran */
        bool load_free_probes_allowed;  /* the load-free ones ran (see probe above) */
        const char *probes_note;        /* "run", "load-free only (why not the others)",
                                         * or "not run (why)" */
        struct bw_kcheck_result *result; /* NULL when the manifest could not be loaded */
        enum bw_kverdict verdict;       /* UNCHECKED too when the manifest or its files failed */

        struct bw_cg_root *root_owned;  /* private: the roots opened for the report */
};

/* Run the whole check. Every failure short of ENOMEM is part of the report
 * (manifest_error, errors, version_error, root_error, the verdict). Returns 0
 * and *ret (bw_kreport_free()), or -ENOMEM. */
int bw_kreport_run(const struct bw_kreport_args *a, struct bw_kreport **ret);

void bw_kreport_free(struct bw_kreport *r);

/* Why the verdict is could-not-check before any item was looked at: "the
 * manifest could not be loaded", "the manifest's files do not match their
 * digests"; NULL when the items decided. */
const char *bw_kreport_problem(const struct bw_kreport *r);

/* The report as the JSON document of `bwgovctl check-kernel --json`
 * (docs/bwgovctl-json.md): kernel, manifest, cgroup, probes, verdict, items,
 * capabilities. Returns a new reference, or NULL on ENOMEM. */
json_t *bw_kreport_to_json(const struct bw_kreport *r);

/* Parts of that document, for replies that carry only some of it: the items
 * array ([] without a manifest) and the capabilities object (null without a
 * manifest) in the shape of the varlink interface's KernelCapabilities (src/
 * daemon's io.bwgov.Governor.varlink). Both return a new reference, or NULL
 * on ENOMEM. */
json_t *bw_kreport_items_to_json(const struct bw_kreport *r);
json_t *bw_kreport_caps_to_json(const struct bw_kreport *r);
