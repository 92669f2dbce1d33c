/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manifest's grammar: the top-level document, "files", "branches" and
 * "items" with their detect lists, upstream releases and stable maps, parsed
 * into struct bw_kmanifest, from a buffer or from a file. The checks of
 * single values and the error bookkeeping are kmanifest-schema.c; the
 * manifest as data (lifetime, error list) is kmanifest.c. */

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/util/fileio.h"
#include "bwgov/kernel/kmanifest-parse.h"
#include "bwgov/kernel/kmanifest.h"
#include "bwgov/util/macro.h"
#include "kmanifest-schema.h"

#define MANIFEST_SCHEMA "io.bwgov.kernel-manifest"
#define MANIFEST_SCHEMA_VERSION 1
/* A manifest is a few kB; refuse to slurp anything absurd. */
#define MANIFEST_SIZE_MAX (4u * 1024u * 1024u)

static void kmanifest_freep(struct bw_kmanifest **m) {
        bw_kmanifest_free(*m);
}

static const char *kind_str(int i) { return bw_kitem_kind_to_string(i); }
static const char *importance_str(int i) { return bw_kimportance_to_string(i); }
static const char *effect_str(int i) { return bw_keffect_to_string(i); }
static const char *method_str(int i) { return bw_kdetect_method_to_string(i); }
static const char *behaviour_str(int i) { return bw_kbehaviour_to_string(i); }

static bool manifest_has_file(const struct bw_kmanifest *m, const char *path) {
        for (size_t i = 0; i < m->n_files; i++)
                if (strcmp(m->files[i].path, path) == 0)
                        return true;
        return false;
}

static void check_refs(struct vctx *c, const struct bw_kmanifest *m, const char *path, json_t *arr) {
        size_t i;
        json_t *v;

        if (!json_is_array(arr))
                return;
        json_array_foreach(arr, i, v) {
                _cleanup_free_ char *pi = NULL;

                if (!json_is_string(v) || manifest_has_file(m, json_string_value(v)))
                        continue;
                pi = vctx_path_index(c, path, i);
                if (pi)
                        vctx_error(c, pi, "\"%s\" is not listed in $.files", json_string_value(v));
        }
}

static void parse_files(struct vctx *c, json_t *root, struct bw_kmanifest *m) {
        static const char *const keys[] = { "path", "sha256", NULL };
        json_t *arr, *v;
        size_t i;

        m->files = vctx_get_array(c, root, "files", "$.files", sizeof(struct bw_kfile), &arr);
        if (!m->files)
                return;
        json_array_foreach(arr, i, v) {
                _cleanup_free_ char *p = vctx_path_index(c, "$.files", i);
                const char *path, *digest;
                bool ok = true;

                if (!p)
                        return;
                if (!json_is_object(v)) {
                        vctx_error(c, p, "expected an object, got %s", vctx_json_type(v));
                        continue;
                }
                vctx_check_keys(c, p, v, keys, keys);
                path = vctx_get_string(c, p, v, "path");
                digest = vctx_get_string(c, p, v, "sha256");
                if (path && !manifest_is_relative_path(path)) {
                        vctx_error_key(c, p, "path", "expected a relative path without \".\" or \"..\" components");
                        ok = false;
                }
                if (path && manifest_has_file(m, path)) {
                        vctx_error_key(c, p, "path", "duplicate file \"%s\"", path);
                        ok = false;
                }
                if (digest && !manifest_is_hex_lower(digest, 64, 64)) {
                        vctx_error_key(c, p, "sha256", "expected 64 lowercase hex digits");
                        ok = false;
                }
                if (!ok || !path || !digest)
                        continue;
                m->files[m->n_files].path = vctx_strdup(c, path);
                if (!m->files[m->n_files].path)
                        return;
                memcpy(m->files[m->n_files].sha256, digest, 65);
                m->n_files++;
        }
}

static void parse_branches(struct vctx *c, json_t *root, struct bw_kmanifest *m) {
        static const char *const keys[] = { "base", "series", NULL };
        json_t *obj = json_object_get(root, "branches"), *v;
        const char *name;

        if (!obj)
                return;
        if (!json_is_object(obj)) {
                vctx_error(c, "$.branches", "expected an object, got %s", vctx_json_type(obj));
                return;
        }
        m->branches = calloc(json_object_size(obj) + 1, sizeof(struct bw_kbranch));
        if (!m->branches) {
                c->oom = -ENOMEM;
                return;
        }
        json_object_foreach(obj, name, v) {
                _cleanup_free_ char *p = vctx_path_key(c, "$.branches", name), *ps = NULL;
                struct bw_kbranch *b = &m->branches[m->n_branches];
                unsigned major, minor;
                const char *base;

                if (!p)
                        return;
                if (manifest_parse_branch(name, &major, &minor) < 0)
                        vctx_error(c, p, "expected a branch name like \"6.1\"");
                if (!json_is_object(v)) {
                        vctx_error(c, p, "expected an object, got %s", vctx_json_type(v));
                        continue;
                }
                vctx_check_keys(c, p, v, keys, keys);
                base = vctx_get_string(c, p, v, "base");
                ps = vctx_path_key(c, p, "series");
                if (!ps)
                        return;
                check_refs(c, m, ps, json_object_get(v, "series"));

                b->name = vctx_strdup(c, name);
                b->base = base ? vctx_strdup(c, base) : NULL;
                b->series = vctx_get_strv(c, p, v, "series", false, manifest_is_relative_path,
                                     "a relative path", &b->n_series);
                m->n_branches++;
                if (c->oom < 0)
                        return;
        }
}

static void parse_detect(struct vctx *c, const char *path, json_t *v, const struct bw_kitem *it,
                         struct bw_kdetect *d, bool *ret_ok) {
        static const char *const keys_none[] = { "method", NULL };
        static const char *const keys_any[] = { "method", "any", NULL };
        static const char *const keys_path[] = { "method", "path", NULL };
        static const char *const keys_option[] = { "method", "option", NULL };
        static const char *const keys_btf[] = { "method", "struct", "member", NULL };
        static const char *const keys_probe[] = { "method", "probe", NULL };
        const char *s;
        int method;

        *ret_ok = false;
        if (!json_is_object(v)) {
                vctx_error(c, path, "expected an object, got %s", vctx_json_type(v));
                return;
        }
        if (!json_object_get(v, "method")) {
                vctx_error_key(c, path, "method", "missing");
                return;
        }
        method = vctx_get_enum(c, path, v, "method", bw_kdetect_method_from_string, method_str, _BW_KDETECT_MAX);
        if (method < 0)
                return;
        d->method = method;

        switch (method) {
        case BW_KDETECT_VERSION:
        case BW_KDETECT_PSI_FULL:
                vctx_check_keys(c, path, v, keys_none, keys_none);
                if (method == BW_KDETECT_VERSION && !it->has_upstream)
                        vctx_error(c, path, "method \"version\" needs an upstream release");
                break;

        case BW_KDETECT_FILE:
        case BW_KDETECT_CPUSTAT_FIELD:
                vctx_check_keys(c, path, v, keys_any, keys_any);
                d->any = vctx_get_strv(c, path, v, "any", true,
                                  method == BW_KDETECT_FILE ? manifest_is_plain_name : manifest_is_identifier,
                                  method == BW_KDETECT_FILE ? "a file name without '/'" : "a cpu.stat key",
                                  &d->n_any);
                if (d->n_any == 0)
                        return;
                break;

        case BW_KDETECT_PROC_FILE:
                vctx_check_keys(c, path, v, keys_path, keys_path);
                s = vctx_get_string(c, path, v, "path");
                if (!s)
                        return;
                if (s[0] != '/' || !manifest_is_relative_path(s + 1)) {
                        vctx_error_key(c, path, "path", "expected an absolute path without \".\" or \"..\" components");
                        return;
                }
                d->path = vctx_strdup(c, s);
                break;

        case BW_KDETECT_KCONFIG:
                vctx_check_keys(c, path, v, keys_option, keys_option);
                s = vctx_get_string(c, path, v, "option");
                if (!s)
                        return;
                if (!manifest_is_kconfig_option(s)) {
                        vctx_error_key(c, path, "option", "expected an option name like \"CONFIG_PSI\"");
                        return;
                }
                d->option = vctx_strdup(c, s);
                break;

        case BW_KDETECT_BTF_MEMBER: {
                const char *st, *mb;

                vctx_check_keys(c, path, v, keys_btf, keys_btf);
                st = vctx_get_string(c, path, v, "struct");
                mb = vctx_get_string(c, path, v, "member");
                if (st && !manifest_is_identifier(st)) {
                        vctx_error_key(c, path, "struct", "expected a C identifier");
                        st = NULL;
                }
                if (mb && !manifest_is_identifier(mb)) {
                        vctx_error_key(c, path, "member", "expected a C identifier");
                        mb = NULL;
                }
                if (!st || !mb)
                        return;
                d->struct_name = vctx_strdup(c, st);
                d->member = vctx_strdup(c, mb);
                break;
        }

        case BW_KDETECT_BEHAVIOUR: {
                int b;

                vctx_check_keys(c, path, v, keys_probe, keys_probe);
                b = vctx_get_enum(c, path, v, "probe", bw_kbehaviour_from_string, behaviour_str, _BW_KBEHAVIOUR_MAX);
                if (b < 0)
                        return;
                d->behaviour = b;
                break;
        }
        }
        *ret_ok = true;
}

static int stable_cmp(const void *a, const void *b) {
        const struct bw_kstable *x = a, *y = b;

        if (x->major != y->major)
                return x->major < y->major ? -1 : 1;
        if (x->minor != y->minor)
                return x->minor < y->minor ? -1 : 1;
        return 0;
}

static void parse_upstream(struct vctx *c, const char *path, json_t *item, struct bw_kitem *it) {
        static const char *const keys[] = { "commit", "release", NULL };
        _cleanup_free_ char *p = vctx_path_key(c, path, "upstream");
        json_t *v = json_object_get(item, "upstream");
        const char *commit, *release;
        bool unknown_commit;

        if (!v || !p)
                return;
        /* null: out-of-tree, or a feature that is a build option rather than
         * a commit. Such an item cannot use the "version" method. */
        if (json_is_null(v))
                return;
        if (!json_is_object(v)) {
                vctx_error(c, p, "expected an object or null, got %s", vctx_json_type(v));
                return;
        }
        if (it->kind == BW_KITEM_OUT_OF_TREE) {
                vctx_error(c, p, "expected null for an out-of-tree item");
                return;
        }
        vctx_check_keys(c, p, v, keys, keys);
        /* A feature may be known by its release alone ("commit": null):
         * a fix must name its commit. */
        unknown_commit = it->kind == BW_KITEM_FEATURE && json_is_null(json_object_get(v, "commit"));
        commit = unknown_commit ? NULL : vctx_get_string(c, p, v, "commit");
        release = vctx_get_string(c, p, v, "release");
        if (commit && !manifest_is_hex_lower(commit, 7, 40)) {
                vctx_error_key(c, p, "commit", "expected an abbreviated commit id (7 to 40 lowercase hex digits)");
                commit = NULL;
        }
        if (release && manifest_parse_branch(release, &it->release_major, &it->release_minor) < 0) {
                vctx_error_key(c, p, "release", "expected a mainline release like \"6.10\"");
                release = NULL;
        }
        if ((!commit && !unknown_commit) || !release)
                return;
        if (commit)
                it->upstream_commit = vctx_strdup(c, commit);
        it->has_upstream = true;
}

static void parse_stable_map(struct vctx *c, const char *path, json_t *item, struct bw_kitem *it) {
        _cleanup_free_ char *p = vctx_path_key(c, path, "stable");
        json_t *obj = json_object_get(item, "stable"), *v;
        const char *branch;

        if (!obj || !p)
                return;
        if (!json_is_object(obj)) {
                vctx_error(c, p, "expected an object, got %s", vctx_json_type(obj));
                return;
        }
        if (it->kind == BW_KITEM_OUT_OF_TREE && json_object_size(obj) > 0) {
                vctx_error(c, p, "expected {} for an out-of-tree item");
                return;
        }
        it->stable = calloc(json_object_size(obj) + 1, sizeof(struct bw_kstable));
        if (!it->stable) {
                c->oom = -ENOMEM;
                return;
        }
        json_object_foreach(obj, branch, v) {
                _cleanup_free_ char *pb = vctx_path_key(c, p, branch);
                unsigned major, minor;
                struct bw_kstable s;

                if (!pb)
                        return;
                if (manifest_parse_branch(branch, &major, &minor) < 0) {
                        vctx_error(c, pb, "expected a branch name like \"6.1\" as key");
                        continue;
                }
                if (!json_is_string(v) || manifest_parse_stable(json_string_value(v), &s) < 0 ||
                    s.major != major || s.minor != minor || s.patch == 0) {
                        vctx_error(c, pb, "expected a release of the %u.%u branch like \"%u.%u.93\"",
                             major, minor, major, minor);
                        continue;
                }
                if (it->has_upstream && (major > it->release_major ||
                                         (major == it->release_major && minor >= it->release_minor))) {
                        vctx_error(c, pb, "stable branch %u.%u is not older than the mainline release %u.%u",
                             major, minor, it->release_major, it->release_minor);
                        continue;
                }
                it->stable[it->n_stable++] = s;
        }
        qsort(it->stable, it->n_stable, sizeof(struct bw_kstable), stable_cmp);
}

static void parse_item(struct vctx *c, const char *path, json_t *v, struct bw_kmanifest *m, struct bw_kitem *it,
                       bool *ret_ok) {
        static const char *const keys[] = {
                "id", "title", "kind", "upstream", "stable", "patches", "detect", "importance",
                "fallback", "effect", "verified", "note", NULL };
        static const char *const required[] = {
                "id", "title", "kind", "upstream", "stable", "patches", "detect", "importance",
                "fallback", "effect", "verified", NULL };
        const char *id, *title, *fallback, *note;
        _cleanup_free_ char *pp = NULL, *pd = NULL;
        size_t invalid_before = c->n_invalid;
        json_t *det, *d, *verified;
        int kind, importance, effect;
        size_t i;

        *ret_ok = false;
        if (!json_is_object(v)) {
                vctx_error(c, path, "expected an object, got %s", vctx_json_type(v));
                return;
        }
        vctx_check_keys(c, path, v, keys, required);

        id = vctx_get_string(c, path, v, "id");
        if (id && !manifest_is_item_id(id)) {
                vctx_error_key(c, path, "id", "expected [a-z0-9-]+");
        } else if (id && bw_kmanifest_find_item(m, id)) {
                vctx_error_key(c, path, "id", "duplicate id \"%s\"", id);
        }
        title = vctx_get_string(c, path, v, "title");
        fallback = vctx_get_string(c, path, v, "fallback");
        kind = vctx_get_enum(c, path, v, "kind", bw_kitem_kind_from_string, kind_str, _BW_KITEM_KIND_MAX);
        importance = vctx_get_enum(c, path, v, "importance", bw_kimportance_from_string, importance_str,
                              _BW_KIMPORTANCE_MAX);
        effect = vctx_get_enum(c, path, v, "effect", bw_keffect_from_string, effect_str, _BW_KEFFECT_MAX);
        verified = json_object_get(v, "verified");
        if (verified && !json_is_boolean(verified)) {
                vctx_error_key(c, path, "verified", "expected a boolean, got %s", vctx_json_type(verified));
        }
        note = NULL;
        if (json_object_get(v, "note"))
                note = vctx_get_string(c, path, v, "note");

        it->kind = kind < 0 ? BW_KITEM_UPSTREAM_FIX : kind;
        if (kind >= 0) {
                parse_upstream(c, path, v, it);
                parse_stable_map(c, path, v, it);
        }

        it->patches = vctx_get_strv(c, path, v, "patches", false, manifest_is_relative_path, "a relative path",
                                    &it->n_patches);
        pp = vctx_path_key(c, path, "patches");
        if (pp)
                check_refs(c, m, pp, json_object_get(v, "patches"));

        det = json_object_get(v, "detect");
        pd = vctx_path_key(c, path, "detect");
        if (det && pd) {
                if (!json_is_array(det))
                        vctx_error(c, pd, "expected an array, got %s", vctx_json_type(det));
                else if (json_array_size(det) == 0)
                        vctx_error(c, pd, "expected at least one detection method");
                else {
                        it->detect = calloc(json_array_size(det), sizeof(struct bw_kdetect));
                        if (!it->detect) {
                                c->oom = -ENOMEM;
                                return;
                        }
                        json_array_foreach(det, i, d) {
                                _cleanup_free_ char *pi = vctx_path_index(c, pd, i);
                                bool ok;

                                if (!pi)
                                        return;
                                parse_detect(c, pi, d, it, &it->detect[it->n_detect], &ok);
                                if (ok)
                                        it->n_detect++;
                                else {
                                        bw_kdetect_done(&it->detect[it->n_detect]);
                                        it->detect[it->n_detect] = (struct bw_kdetect) { 0 };
                                }
                        }
                }
        }

        if (c->n_invalid > invalid_before || c->oom < 0 || !id || !title || !fallback ||
            importance < 0 || effect < 0 || !verified)
                return;

        it->id = vctx_strdup(c, id);
        it->title = vctx_strdup(c, title);
        it->fallback = vctx_strdup(c, fallback);
        it->note = note ? vctx_strdup(c, note) : NULL;
        it->importance = importance;
        it->effect = effect;
        it->verified = json_is_true(verified);
        *ret_ok = c->oom == 0;
}

static void parse_items(struct vctx *c, json_t *root, struct bw_kmanifest *m) {
        json_t *arr, *v;
        size_t i;

        m->items = vctx_get_array(c, root, "items", "$.items", sizeof(struct bw_kitem), &arr);
        if (!m->items)
                return;
        json_array_foreach(arr, i, v) {
                _cleanup_free_ char *p = vctx_path_index(c, "$.items", i);
                struct bw_kitem *it = &m->items[m->n_items];
                bool ok;

                if (!p)
                        return;
                parse_item(c, p, v, m, it, &ok);
                if (ok)
                        m->n_items++;
                else {
                        bw_kitem_done(it);
                        *it = (struct bw_kitem) { 0 };
                }
                if (c->oom < 0)
                        return;
        }
}

int bw_kmanifest_parse(const char *buf, size_t len, struct bw_kmanifest **ret, struct bw_kerrors *ret_errors) {
        static const char *const keys[] = {
                "schema", "schema_version", "patchset_version", "branches", "files", "items", NULL };
        _cleanup_(kmanifest_freep) struct bw_kmanifest *m = NULL;
        struct vctx c = { .errors = ret_errors };
        json_error_t jerr;
        json_t *root, *v;
        const char *s;

        root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
                if (bw_kerrors_add(ret_errors, "$", "line %d column %d: %s", jerr.line, jerr.column, jerr.text) < 0)
                        return -ENOMEM;
                return -EINVAL;
        }

        m = calloc(1, sizeof(*m));
        if (!m) {
                json_decref(root);
                return -ENOMEM;
        }

        if (!json_is_object(root)) {
                vctx_error(&c, "$", "expected an object, got %s", vctx_json_type(root));
                goto finish;
        }
        vctx_check_keys(&c, "$", root, keys, keys);

        v = json_object_get(root, "schema");
        if (v && !(json_is_string(v) && strcmp(json_string_value(v), MANIFEST_SCHEMA) == 0))
                vctx_error(&c, "$.schema", "expected \"" MANIFEST_SCHEMA "\"");
        v = json_object_get(root, "schema_version");
        if (v && !json_is_integer(v))
                vctx_error(&c, "$.schema_version", "expected an integer, got %s", vctx_json_type(v));
        else if (v && json_integer_value(v) != MANIFEST_SCHEMA_VERSION)
                vctx_error(&c, "$.schema_version", "unsupported version %lld, expected %d",
                     (long long) json_integer_value(v), MANIFEST_SCHEMA_VERSION);
        s = vctx_get_string(&c, "$", root, "patchset_version");
        if (s)
                m->patchset_version = vctx_strdup(&c, s);

        /* Files first: branches and items refer to them. */
        parse_files(&c, root, m);
        parse_branches(&c, root, m);
        parse_items(&c, root, m);

finish:
        json_decref(root);
        if (c.oom < 0)
                return c.oom;
        if (c.n_invalid > 0)
                return -EINVAL;
        *ret = TAKE_PTR(m);
        return 0;
}

int bw_kmanifest_load(int dir_fd, const char *path, struct bw_kmanifest **ret, struct bw_kerrors *ret_errors) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;

        r = bw_read_full_at(dir_fd, path, 0, MANIFEST_SIZE_MAX, &buf, &len);
        if (r < 0) {
                if (r != -ENOMEM && bw_kerrors_add(ret_errors, "$", "cannot read %s: %s", path, strerror(-r)) < 0)
                        return -ENOMEM;
                return r;
        }
        return bw_kmanifest_parse(buf, len, ret, ret_errors);
}
