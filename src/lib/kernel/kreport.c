/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one kernel-check pipeline: version, manifest, digests, cgroup roots,
 * probe environment, run, verdict, into one struct bw_kreport, and that
 * report's one JSON shape. bwgovd, its CheckKernel method and `bwgovctl
 * check-kernel` all go through here. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/kernel/kmanifest-parse.h"
#include "bwgov/kernel/kreport.h"
#include "bwgov/util/macro.h"

void bw_kreport_free(struct bw_kreport *r) {
        if (!r)
                return;
        free_many(r->manifest_path, r->version_error, r->root_error);
        bw_kmanifest_free(r->manifest);
        bw_kerrors_done(&r->errors);
        bw_kcheck_result_free(r->result);
        bw_cg_root_free(r->root_owned);
        free(r);
}

static void kreport_freep(struct bw_kreport **r) {
        bw_kreport_free(*r);
}

/* The kernel version; a failure is recorded in the report. */
static int kreport_version(struct bw_kreport *rep, const struct bw_kreport_args *a) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (a->proc_version)
                path = strdup(a->proc_version);
        else if (asprintf(&path, "%s/proc/version", a->host_root ? a->host_root : "") < 0)
                path = NULL;
        if (!path)
                return -ENOMEM;

        r = bw_kversion_read(path, &rep->version);
        rep->version_ok = r >= 0;
        if (r == -EINVAL)
                r = asprintf(&rep->version_error, "%s: no kernel version found", path);
        else if (r < 0)
                r = asprintf(&rep->version_error, "%s: %s", path, strerror(-r));
        if (r < 0) {
                rep->version_error = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* The manifest and the digests of its files. */
static int kreport_manifest(struct bw_kreport *rep, const struct bw_kreport_args *a) {
        _cleanup_close_ int dir_fd = -EBADF;
        int r;

        rep->manifest_path = strdup(a->manifest_path ? a->manifest_path : bw_kmanifest_default_path());
        if (!rep->manifest_path)
                return -ENOMEM;
        r = bw_kmanifest_load(AT_FDCWD, rep->manifest_path, &rep->manifest, &rep->errors);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                rep->manifest_error = r;
                return 0;
        }

        /* A directory that cannot be opened leaves the files unverified,
         * without an error of their own. */
        dir_fd = bw_kmanifest_open_dir(rep->manifest_path);
        if (dir_fd == -ENOMEM)
                return dir_fd;
        if (dir_fd < 0)
                return 0;
        r = bw_kmanifest_verify_files(rep->manifest, dir_fd, &rep->errors);
        if (r == -ENOMEM)
                return r;
        rep->files_ok = r >= 0;
        return 0;
}

/* The cgroup roots the probes look at, and whether behaviour probes run. */
static int kreport_root(struct bw_kreport *rep, const struct bw_kreport_args *a) {
        int r;

        if (a->root)
                rep->root = a->root;
        else {
                r = a->cgroup_root ? bw_cg_root_open_dir(a->cgroup_root, &rep->root_owned) :
                                     bw_cg_root_open_host(&rep->root_owned);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        rep->root_owned = NULL;
                        if (asprintf(&rep->root_error, "no cgroup CPU bandwidth controller found%s%s: %s",
                                     a->cgroup_root ? " in " : "", a->cgroup_root ? a->cgroup_root : "",
                                     strerror(-r)) < 0) {
                                rep->root_error = NULL;
                                return -ENOMEM;
                        }
                }
                rep->root = rep->root_owned;
        }

        /* The load-free probes (a few writes to an empty scratch cgroup)
         * run for every caller; without root they report that they could
         * not create it. */
        rep->probes_allowed = a->probe != 0 && a->privileged && rep->root;
        rep->load_free_probes_allowed = rep->root != NULL;
        rep->probes_note = rep->probes_allowed ? "run" :
                           !rep->root ? "not run (no cgroup bandwidth root)" :
                           a->probe == 0 ? "load-free only (--no-probe)" : "load-free only (the others need root)";
        return 0;
}

static int kreport_probe(struct bw_kreport *rep, const struct bw_kreport_args *a) {
        const struct bw_cg_root *root = rep->root;
        struct bw_kprobe_env env = {
                .bw_root_fd = root ? root->bw_fd : -EBADF,
                .bw_is_v1 = root && root->layout != BW_CG_LAYOUT_V2,
                .v2_root_fd = root ? root->v2_fd : -EBADF,
                .host_root = a->host_root,
                .btf_path = a->btf_path,
                .version = rep->version_ok ? &rep->version : NULL,
                .allow_behaviour = rep->probes_allowed,
                .allow_load_free_behaviour = rep->load_free_probes_allowed,
                .scratch_prefix = a->scratch_prefix,
        };
        struct bw_kbpf bpf;
        int r;

        r = bw_kcheck_run(rep->manifest, &env, &rep->result);
        if (r < 0)
                return r;
        r = bw_kprobe_bpf_support(&env, &bpf);
        if (r < 0)
                return r;
        rep->result->caps.has_bpf_runqueue = bpf.has_runqueue;
        rep->result->caps.bpf_throttled_clock = bpf.throttled_clock;
        rep->result->caps.throttle_model = bpf.throttle_model;
        rep->verdict = rep->files_ok ? rep->result->verdict : BW_KVERDICT_UNCHECKED;
        return 0;
}

int bw_kreport_run(const struct bw_kreport_args *a, struct bw_kreport **ret) {
        _cleanup_(kreport_freep) struct bw_kreport *rep = NULL;
        int r;

        rep = calloc(1, sizeof(*rep));
        if (!rep)
                return -ENOMEM;
        rep->verdict = BW_KVERDICT_UNCHECKED;

        r = kreport_version(rep, a);
        if (r >= 0)
                r = kreport_manifest(rep, a);
        if (r >= 0)
                r = kreport_root(rep, a);
        if (r >= 0 && rep->manifest)
                r = kreport_probe(rep, a);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rep);
        return 0;
}

const char *bw_kreport_problem(const struct bw_kreport *r) {
        if (!r->manifest)
                return "the manifest could not be loaded";
        if (!r->files_ok)
                return "the manifest's files do not match their digests";
        return NULL;
}

/* ------------------------------------------------------------------------ */
/* JSON */

static json_t *string_or_null(const char *s) {
        return s ? json_string(s) : json_null();
}

static json_t *kernel_json(const struct bw_kreport *rep) {
        const struct bw_kversion *v = &rep->version;
        char ver[BW_KRELEASE_MAX];

        if (!rep->version_ok)
                return json_pack("{s:n, s:s?}", "release", "error", rep->version_error);
        return json_pack("{s:s, s:s, s:I, s:I, s:o, s:I, s:s}",
                         "release", v->release,
                         "version", bw_kversion_format(v, ver, sizeof ver),
                         "major", (json_int_t) v->major,
                         "minor", (json_int_t) v->minor,
                         "patch", v->patch_known ? json_integer(v->patch) : json_null(),
                         "rc", (json_int_t) v->rc,
                         "origin", v->origin == BW_KVERSION_FROM_DEBIAN ? "debian" : "release");
}

static json_t *errors_json(const struct bw_kerrors *e) {
        json_t *arr = json_array();

        if (!arr)
                return NULL;
        for (size_t i = 0; i < e->n_errors; i++)
                if (json_array_append_new(arr, json_pack("{s:s, s:s}", "path", e->errors[i].path,
                                                         "message", e->errors[i].message)) < 0) {
                        json_decref(arr);
                        return NULL;
                }
        return arr;
}

static json_t *cgroup_json(const struct bw_kreport *rep) {
        if (!rep->root)
                return json_pack("{s:n, s:s?}", "layout", "error", rep->root_error);
        return json_pack("{s:s, s:s, s:s?}",
                         "layout", bw_cg_layout_to_string(rep->root->layout),
                         "bandwidth_root", rep->root->bw_path,
                         "v2_root", rep->root->v2_path);
}

static json_t *item_json(const struct bw_kcheck_row *row) {
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:s, s:s}",
                         "id", row->id,
                         "title", row->title,
                         "kind", bw_kitem_kind_to_string(row->kind),
                         "importance", bw_kimportance_to_string(row->importance),
                         "status", bw_kstatus_to_string(row->status),
                         "method", string_or_null(row->method >= 0 ?
                                                  bw_kdetect_method_to_string(row->method) : NULL),
                         "detected_by", row->detected_by,
                         "behaviour", string_or_null(row->behaviour >= 0 ?
                                                     bw_kstatus_to_string(row->behaviour) : NULL),
                         "effect", bw_keffect_to_string(row->effect),
                         "fallback", row->fallback);
}

json_t *bw_kreport_items_to_json(const struct bw_kreport *r) {
        json_t *items = json_array();

        if (!items)
                return NULL;
        for (size_t i = 0; r->result && i < r->result->n_rows; i++)
                if (json_array_append_new(items, item_json(&r->result->rows[i])) < 0) {
                        json_decref(items);
                        return NULL;
                }
        return items;
}

json_t *bw_kreport_caps_to_json(const struct bw_kreport *r) {
        const struct bw_kcaps *c;

        if (!r->result)
                return json_null();
        c = &r->result->caps;
        return json_pack("{s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:s, s:s, s:b}",
                         "has_burst", c->has_burst,
                         "burst_bug", c->burst_bug,
                         "has_psi", c->has_psi,
                         "has_psi_full", c->has_psi_full,
                         "has_psi_triggers_unprivileged", c->has_psi_triggers_unprivileged,
                         "has_burst_stats", c->has_burst_stats,
                         "identical_update_is_noop", c->identical_update_is_noop,
                         "has_bpf_runqueue", c->has_bpf_runqueue,
                         "bpf_throttled_clock", c->bpf_throttled_clock ? c->bpf_throttled_clock : "none",
                         "throttle_model", c->throttle_model ? c->throttle_model : "unknown",
                         "write_order_free", c->write_order_free);
}

json_t *bw_kreport_to_json(const struct bw_kreport *r) {
        /* json_pack() takes the "o" references even when it fails. */
        return json_pack("{s:o, s:{s:s, s:s?, s:b, s:b, s:o}, s:o, s:{s:b, s:b, s:s}, s:s, s:o, s:o}",
                         "kernel", kernel_json(r),
                         "manifest",
                                 "path", r->manifest_path,
                                 "patchset_version", r->manifest ? r->manifest->patchset_version : NULL,
                                 "valid", r->manifest != NULL,
                                 "files_verified", r->files_ok,
                                 "errors", errors_json(&r->errors),
                         "cgroup", cgroup_json(r),
                         "probes",
                                 "behaviour", r->probes_allowed,
                                 "load_free", r->load_free_probes_allowed,
                                 "note", r->probes_note,
                         "verdict", bw_kverdict_to_string(r->verdict),
                         "items", r->result ? bw_kreport_items_to_json(r) : json_null(),
                         "capabilities", bw_kreport_caps_to_json(r));
}
