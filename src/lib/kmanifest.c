/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel patch-set manifest: strict schema validation with JSON paths in
 * every error, and SHA-256 verification of the files it lists. */

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/kernelcheck.h"
#include "config.h"
#include "bwgov/macro.h"

#define MANIFEST_SCHEMA "io.bwgov.kernel-manifest"
#define MANIFEST_SCHEMA_VERSION 1
/* A manifest is a few kB; refuse to slurp anything absurd. */
#define MANIFEST_SIZE_MAX (4u * 1024u * 1024u)

void bw_kerrors_done(struct bw_kerrors *e) {
        if (!e)
                return;
        for (size_t i = 0; i < e->n_errors; i++) {
                free(e->errors[i].path);
                free(e->errors[i].message);
        }
        free(e->errors);
        e->errors = NULL;
        e->n_errors = 0;
}

static int kerrors_add_va(struct bw_kerrors *e, const char *path, const char *fmt, va_list ap) {
        _cleanup_free_ char *p = NULL, *m = NULL;
        struct bw_kerror *n;

        if (!e)
                return 0;
        p = strdup(path);
        if (!p || vasprintf(&m, fmt, ap) < 0) {
                m = NULL;
                return -ENOMEM;
        }
        n = realloc(e->errors, (e->n_errors + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        e->errors = n;
        e->errors[e->n_errors++] = (struct bw_kerror) { .path = TAKE_PTR(p), .message = TAKE_PTR(m) };
        return 0;
}

static int kerrors_add(struct bw_kerrors *e, const char *path, const char *fmt, ...) _printf_(3, 4);
static int kerrors_add(struct bw_kerrors *e, const char *path, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = kerrors_add_va(e, path, fmt, ap);
        va_end(ap);
        return r;
}

/* ------------------------------------------------------------------------ */

static void strv_free(char **v, size_t n) {
        if (!v)
                return;
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

static void kdetect_done(struct bw_kdetect *d) {
        strv_free(d->any, d->n_any);
        free(d->path);
        free(d->option);
        free(d->struct_name);
        free(d->member);
}

static void kitem_done(struct bw_kitem *it) {
        free(it->id);
        free(it->title);
        free(it->upstream_commit);
        free(it->stable);
        strv_free(it->patches, it->n_patches);
        for (size_t i = 0; i < it->n_detect; i++)
                kdetect_done(&it->detect[i]);
        free(it->detect);
        free(it->fallback);
        free(it->note);
}

void bw_kmanifest_free(struct bw_kmanifest *m) {
        if (!m)
                return;
        free(m->patchset_version);
        for (size_t i = 0; i < m->n_branches; i++) {
                free(m->branches[i].name);
                free(m->branches[i].base);
                strv_free(m->branches[i].series, m->branches[i].n_series);
        }
        free(m->branches);
        for (size_t i = 0; i < m->n_files; i++)
                free(m->files[i].path);
        free(m->files);
        for (size_t i = 0; i < m->n_items; i++)
                kitem_done(&m->items[i]);
        free(m->items);
        free(m);
}

static void kmanifest_freep(struct bw_kmanifest **m) {
        bw_kmanifest_free(*m);
}

const struct bw_kitem *bw_kmanifest_find_item(const struct bw_kmanifest *m, const char *id) {
        for (size_t i = 0; i < m->n_items; i++)
                if (strcmp(m->items[i].id, id) == 0)
                        return &m->items[i];
        return NULL;
}

/* ------------------------------------------------------------------------ */
/* Validation context: every problem is recorded, parsing goes on so one run
 * reports them all; only ENOMEM stops it. */

struct vctx {
        struct bw_kerrors *errors;
        size_t n_invalid;
        int oom;
};

static void verr(struct vctx *c, const char *path, const char *fmt, ...) _printf_(3, 4);
static void verr(struct vctx *c, const char *path, const char *fmt, ...) {
        va_list ap;

        c->n_invalid++;
        va_start(ap, fmt);
        if (kerrors_add_va(c->errors, path, fmt, ap) < 0)
                c->oom = -ENOMEM;
        va_end(ap);
}

static bool is_ident_key(const char *k) {
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || *k == '_'))
                return false;
        for (k++; *k; k++)
                if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
                      *k == '_'))
                        return false;
        return true;
}

/* "$.a" + key -> "$.a.key" or "$.a[\"6.1\"]"; NULL on ENOMEM (recorded). */
static char *path_key(struct vctx *c, const char *base, const char *key) {
        char *p;
        int r;

        if (is_ident_key(key))
                r = asprintf(&p, "%s.%s", base, key);
        else
                r = asprintf(&p, "%s[\"%s\"]", base, key);
        if (r < 0) {
                c->oom = -ENOMEM;
                return NULL;
        }
        return p;
}

static char *path_index(struct vctx *c, const char *base, size_t i) {
        char *p;

        if (asprintf(&p, "%s[%zu]", base, i) < 0) {
                c->oom = -ENOMEM;
                return NULL;
        }
        return p;
}

static char *xstrdup(struct vctx *c, const char *s) {
        char *d = strdup(s);

        if (!d)
                c->oom = -ENOMEM;
        return d;
}

static const char *json_type_name(const json_t *j) {
        switch (json_typeof(j)) {
        case JSON_OBJECT:  return "an object";
        case JSON_ARRAY:   return "an array";
        case JSON_STRING:  return "a string";
        case JSON_INTEGER: return "an integer";
        case JSON_REAL:    return "a number";
        case JSON_TRUE:
        case JSON_FALSE:   return "a boolean";
        case JSON_NULL:    return "null";
        }
        return "?";
}

/* Report keys of obj that are not in allowed (NULL-terminated) and required
 * keys that are missing. */
static void check_keys(struct vctx *c, const char *path, json_t *obj,
                       const char *const *allowed, const char *const *required) {
        const char *key;
        json_t *v;

        json_object_foreach(obj, key, v) {
                bool ok = false;

                for (const char *const *a = allowed; *a; a++)
                        if (strcmp(*a, key) == 0) {
                                ok = true;
                                break;
                        }
                if (!ok) {
                        _cleanup_free_ char *p = path_key(c, path, key);
                        if (p)
                                verr(c, p, "unknown key");
                }
        }
        for (const char *const *q = required; q && *q; q++)
                if (!json_object_get(obj, *q)) {
                        _cleanup_free_ char *p = path_key(c, path, *q);
                        if (p)
                                verr(c, p, "missing");
                }
}

/* Member key of obj as a non-empty string, or NULL (error recorded unless
 * the key is absent: check_keys reports those). */
static const char *get_string(struct vctx *c, const char *path, json_t *obj, const char *key) {
        _cleanup_free_ char *p = NULL;
        json_t *v = json_object_get(obj, key);

        if (!v)
                return NULL;
        if (json_is_string(v) && json_string_length(v) > 0 && strlen(json_string_value(v)) == json_string_length(v))
                return json_string_value(v);
        p = path_key(c, path, key);
        if (p)
                verr(c, p, json_is_string(v) ? "expected a non-empty string without NUL bytes" :
                     "expected a string, got %s", json_type_name(v));
        return NULL;
}

static void expected_one_of(struct vctx *c, const char *path, const char *(*to_string)(int), int max) {
        _cleanup_free_ char *list = NULL;
        size_t len = 0;
        FILE *f;

        f = open_memstream(&list, &len);
        if (!f) {
                c->oom = -ENOMEM;
                return;
        }
        for (int i = 0; i < max; i++)
                fprintf(f, "%s%s", i > 0 ? ", " : "", to_string(i));
        if (fclose(f) != 0) {
                c->oom = -ENOMEM;
                return;
        }
        verr(c, path, "expected one of %s", list);
}

/* Enumerated string member; -1 when invalid or missing (error recorded). */
static int get_enum(struct vctx *c, const char *path, json_t *obj, const char *key,
                    int (*from_string)(const char *), const char *(*to_string)(int), int max) {
        _cleanup_free_ char *p = NULL;
        json_t *v = json_object_get(obj, key);
        int r;

        if (!v)
                return -1;
        if (json_is_string(v)) {
                r = from_string(json_string_value(v));
                if (r >= 0)
                        return r;
        }
        p = path_key(c, path, key);
        if (p)
                expected_one_of(c, p, to_string, max);
        return -1;
}

static const char *kind_str(int i) { return bw_kitem_kind_to_string(i); }
static const char *importance_str(int i) { return bw_kimportance_to_string(i); }
static const char *effect_str(int i) { return bw_keffect_to_string(i); }
static const char *method_str(int i) { return bw_kdetect_method_to_string(i); }
static const char *behaviour_str(int i) { return bw_kbehaviour_to_string(i); }

/* "X.Y" with no leading zeros beyond a lone 0. */
static int parse_branch(const char *s, unsigned *ret_major, unsigned *ret_minor) {
        struct bw_kversion v;
        int r;

        for (const char *p = s; *p; p++)
                if (!((*p >= '0' && *p <= '9') || *p == '.'))
                        return -EINVAL;
        r = bw_kversion_parse(s, &v);
        if (r < 0)
                return r;
        if (strchr(strchr(s, '.') + 1, '.'))
                return -EINVAL;
        *ret_major = v.major;
        *ret_minor = v.minor;
        return 0;
}

/* "X.Y.Z" exactly. */
static int parse_stable(const char *s, struct bw_kstable *ret) {
        struct bw_kversion v;
        const char *dot;
        int r;

        for (const char *p = s; *p; p++)
                if (!((*p >= '0' && *p <= '9') || *p == '.'))
                        return -EINVAL;
        dot = strchr(s, '.');
        if (!dot || !strchr(dot + 1, '.'))
                return -EINVAL;
        r = bw_kversion_parse(s, &v);
        if (r < 0)
                return r;
        *ret = (struct bw_kstable) { .major = v.major, .minor = v.minor, .patch = v.patch };
        return 0;
}

static bool is_hex_lower(const char *s, size_t min, size_t max) {
        size_t n = strlen(s);

        if (n < min || n > max)
                return false;
        for (; *s; s++)
                if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
                        return false;
        return true;
}

static bool is_item_id(const char *s) {
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
                        return false;
        return *s != '\0';
}

/* A relative path below the manifest directory: no leading '/', no "." or
 * ".." or empty components, no control bytes. */
static bool is_relative_path(const char *s) {
        const char *comp = s;

        if (*s == '\0' || *s == '/')
                return false;
        for (const char *p = s;; p++) {
                if (*p == '/' || *p == '\0') {
                        size_t n = (size_t) (p - comp);

                        if (n == 0 || (n == 1 && comp[0] == '.') || (n == 2 && comp[0] == '.' && comp[1] == '.'))
                                return false;
                        if (*p == '\0')
                                return true;
                        comp = p + 1;
                } else if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return false;
        }
}

static bool is_plain_name(const char *s) {
        return is_relative_path(s) && !strchr(s, '/');
}

static bool is_identifier(const char *s) {
        return is_ident_key(s);
}

static bool is_kconfig_option(const char *s) {
        if (strncmp(s, "CONFIG_", 7) != 0 || s[7] == '\0')
                return false;
        for (s += 7; *s; s++)
                if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
                        return false;
        return true;
}

static bool manifest_has_file(const struct bw_kmanifest *m, const char *path) {
        for (size_t i = 0; i < m->n_files; i++)
                if (strcmp(m->files[i].path, path) == 0)
                        return true;
        return false;
}

/* An array of non-empty strings; each checked by valid (may be NULL).
 * Returns the copied vector (possibly empty) or NULL with *ret_n = 0 on error. */
static char **get_strv(struct vctx *c, const char *path, json_t *obj, const char *key, bool nonempty,
                       bool (*valid)(const char *), const char *valid_what, size_t *ret_n) {
        _cleanup_free_ char *p = NULL;
        json_t *arr = json_object_get(obj, key), *v;
        char **strv;
        size_t i, n = 0;

        *ret_n = 0;
        if (!arr)
                return NULL;
        p = path_key(c, path, key);
        if (!p)
                return NULL;
        if (!json_is_array(arr)) {
                verr(c, p, "expected an array of strings, got %s", json_type_name(arr));
                return NULL;
        }
        if (nonempty && json_array_size(arr) == 0) {
                verr(c, p, "expected a non-empty array");
                return NULL;
        }
        strv = calloc(json_array_size(arr) + 1, sizeof(char *));
        if (!strv) {
                c->oom = -ENOMEM;
                return NULL;
        }
        json_array_foreach(arr, i, v) {
                _cleanup_free_ char *pi = path_index(c, p, i);

                if (!pi)
                        break;
                if (!json_is_string(v) || json_string_length(v) == 0 ||
                    strlen(json_string_value(v)) != json_string_length(v)) {
                        verr(c, pi, "expected a non-empty string, got %s", json_type_name(v));
                        continue;
                }
                if (valid && !valid(json_string_value(v))) {
                        verr(c, pi, "expected %s", valid_what);
                        continue;
                }
                for (size_t k = 0; k < n; k++)
                        if (strcmp(strv[k], json_string_value(v)) == 0) {
                                verr(c, pi, "duplicate entry \"%s\"", json_string_value(v));
                                goto next;
                        }
                strv[n] = xstrdup(c, json_string_value(v));
                if (!strv[n])
                        break;
                n++;
        next:;
        }
        *ret_n = n;
        return strv;
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
                pi = path_index(c, path, i);
                if (pi)
                        verr(c, pi, "\"%s\" is not listed in $.files", json_string_value(v));
        }
}

static void parse_files(struct vctx *c, json_t *root, struct bw_kmanifest *m) {
        static const char *const keys[] = { "path", "sha256", NULL };
        json_t *arr = json_object_get(root, "files"), *v;
        size_t i;

        if (!arr)
                return;
        if (!json_is_array(arr)) {
                verr(c, "$.files", "expected an array, got %s", json_type_name(arr));
                return;
        }
        m->files = calloc(json_array_size(arr) + 1, sizeof(struct bw_kfile));
        if (!m->files) {
                c->oom = -ENOMEM;
                return;
        }
        json_array_foreach(arr, i, v) {
                _cleanup_free_ char *p = path_index(c, "$.files", i);
                const char *path, *digest;
                bool ok = true;

                if (!p)
                        return;
                if (!json_is_object(v)) {
                        verr(c, p, "expected an object, got %s", json_type_name(v));
                        continue;
                }
                check_keys(c, p, v, keys, keys);
                path = get_string(c, p, v, "path");
                digest = get_string(c, p, v, "sha256");
                if (path && !is_relative_path(path)) {
                        _cleanup_free_ char *pp = path_key(c, p, "path");
                        if (pp)
                                verr(c, pp, "expected a relative path without \".\" or \"..\" components");
                        ok = false;
                }
                if (path && manifest_has_file(m, path)) {
                        _cleanup_free_ char *pp = path_key(c, p, "path");
                        if (pp)
                                verr(c, pp, "duplicate file \"%s\"", path);
                        ok = false;
                }
                if (digest && !is_hex_lower(digest, 64, 64)) {
                        _cleanup_free_ char *pp = path_key(c, p, "sha256");
                        if (pp)
                                verr(c, pp, "expected 64 lowercase hex digits");
                        ok = false;
                }
                if (!ok || !path || !digest)
                        continue;
                m->files[m->n_files].path = xstrdup(c, path);
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
                verr(c, "$.branches", "expected an object, got %s", json_type_name(obj));
                return;
        }
        m->branches = calloc(json_object_size(obj) + 1, sizeof(struct bw_kbranch));
        if (!m->branches) {
                c->oom = -ENOMEM;
                return;
        }
        json_object_foreach(obj, name, v) {
                _cleanup_free_ char *p = path_key(c, "$.branches", name), *ps = NULL;
                struct bw_kbranch *b = &m->branches[m->n_branches];
                unsigned major, minor;
                const char *base;

                if (!p)
                        return;
                if (parse_branch(name, &major, &minor) < 0)
                        verr(c, p, "expected a branch name like \"6.1\"");
                if (!json_is_object(v)) {
                        verr(c, p, "expected an object, got %s", json_type_name(v));
                        continue;
                }
                check_keys(c, p, v, keys, keys);
                base = get_string(c, p, v, "base");
                ps = path_key(c, p, "series");
                if (!ps)
                        return;
                check_refs(c, m, ps, json_object_get(v, "series"));

                b->name = xstrdup(c, name);
                b->base = base ? xstrdup(c, base) : NULL;
                b->series = get_strv(c, p, v, "series", false, is_relative_path,
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
                verr(c, path, "expected an object, got %s", json_type_name(v));
                return;
        }
        if (!json_object_get(v, "method")) {
                _cleanup_free_ char *p = path_key(c, path, "method");
                if (p)
                        verr(c, p, "missing");
                return;
        }
        method = get_enum(c, path, v, "method", bw_kdetect_method_from_string, method_str, _BW_KDETECT_MAX);
        if (method < 0)
                return;
        d->method = method;

        switch (method) {
        case BW_KDETECT_VERSION:
        case BW_KDETECT_PSI_FULL:
                check_keys(c, path, v, keys_none, keys_none);
                if (method == BW_KDETECT_VERSION && !it->has_upstream)
                        verr(c, path, "method \"version\" needs an upstream release");
                break;

        case BW_KDETECT_FILE:
        case BW_KDETECT_CPUSTAT_FIELD:
                check_keys(c, path, v, keys_any, keys_any);
                d->any = get_strv(c, path, v, "any", true,
                                  method == BW_KDETECT_FILE ? is_plain_name : is_identifier,
                                  method == BW_KDETECT_FILE ? "a file name without '/'" : "a cpu.stat key",
                                  &d->n_any);
                if (d->n_any == 0)
                        return;
                break;

        case BW_KDETECT_PROC_FILE:
                check_keys(c, path, v, keys_path, keys_path);
                s = get_string(c, path, v, "path");
                if (!s)
                        return;
                if (s[0] != '/' || !is_relative_path(s + 1)) {
                        _cleanup_free_ char *p = path_key(c, path, "path");
                        if (p)
                                verr(c, p, "expected an absolute path without \".\" or \"..\" components");
                        return;
                }
                d->path = xstrdup(c, s);
                break;

        case BW_KDETECT_KCONFIG:
                check_keys(c, path, v, keys_option, keys_option);
                s = get_string(c, path, v, "option");
                if (!s)
                        return;
                if (!is_kconfig_option(s)) {
                        _cleanup_free_ char *p = path_key(c, path, "option");
                        if (p)
                                verr(c, p, "expected an option name like \"CONFIG_PSI\"");
                        return;
                }
                d->option = xstrdup(c, s);
                break;

        case BW_KDETECT_BTF_MEMBER: {
                const char *st, *mb;

                check_keys(c, path, v, keys_btf, keys_btf);
                st = get_string(c, path, v, "struct");
                mb = get_string(c, path, v, "member");
                if (st && !is_identifier(st)) {
                        _cleanup_free_ char *p = path_key(c, path, "struct");
                        if (p)
                                verr(c, p, "expected a C identifier");
                        st = NULL;
                }
                if (mb && !is_identifier(mb)) {
                        _cleanup_free_ char *p = path_key(c, path, "member");
                        if (p)
                                verr(c, p, "expected a C identifier");
                        mb = NULL;
                }
                if (!st || !mb)
                        return;
                d->struct_name = xstrdup(c, st);
                d->member = xstrdup(c, mb);
                break;
        }

        case BW_KDETECT_BEHAVIOUR: {
                int b;

                check_keys(c, path, v, keys_probe, keys_probe);
                b = get_enum(c, path, v, "probe", bw_kbehaviour_from_string, behaviour_str, _BW_KBEHAVIOUR_MAX);
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
        _cleanup_free_ char *p = path_key(c, path, "upstream");
        json_t *v = json_object_get(item, "upstream");
        const char *commit, *release;

        if (!v || !p)
                return;
        /* null: out-of-tree, or a feature that is a build option rather than
         * a commit. Such an item cannot use the "version" method. */
        if (json_is_null(v))
                return;
        if (!json_is_object(v)) {
                verr(c, p, "expected an object or null, got %s", json_type_name(v));
                return;
        }
        if (it->kind == BW_KITEM_OUT_OF_TREE) {
                verr(c, p, "expected null for an out-of-tree item");
                return;
        }
        check_keys(c, p, v, keys, keys);
        commit = get_string(c, p, v, "commit");
        release = get_string(c, p, v, "release");
        if (commit && !is_hex_lower(commit, 7, 40)) {
                _cleanup_free_ char *pc = path_key(c, p, "commit");
                if (pc)
                        verr(c, pc, "expected an abbreviated commit id (7 to 40 lowercase hex digits)");
                commit = NULL;
        }
        if (release && parse_branch(release, &it->release_major, &it->release_minor) < 0) {
                _cleanup_free_ char *pr = path_key(c, p, "release");
                if (pr)
                        verr(c, pr, "expected a mainline release like \"6.10\"");
                release = NULL;
        }
        if (!commit || !release)
                return;
        it->upstream_commit = xstrdup(c, commit);
        it->has_upstream = true;
}

static void parse_stable_map(struct vctx *c, const char *path, json_t *item, struct bw_kitem *it) {
        _cleanup_free_ char *p = path_key(c, path, "stable");
        json_t *obj = json_object_get(item, "stable"), *v;
        const char *branch;

        if (!obj || !p)
                return;
        if (!json_is_object(obj)) {
                verr(c, p, "expected an object, got %s", json_type_name(obj));
                return;
        }
        if (it->kind == BW_KITEM_OUT_OF_TREE && json_object_size(obj) > 0) {
                verr(c, p, "expected {} for an out-of-tree item");
                return;
        }
        it->stable = calloc(json_object_size(obj) + 1, sizeof(struct bw_kstable));
        if (!it->stable) {
                c->oom = -ENOMEM;
                return;
        }
        json_object_foreach(obj, branch, v) {
                _cleanup_free_ char *pb = path_key(c, p, branch);
                unsigned major, minor;
                struct bw_kstable s;

                if (!pb)
                        return;
                if (parse_branch(branch, &major, &minor) < 0) {
                        verr(c, pb, "expected a branch name like \"6.1\" as key");
                        continue;
                }
                if (!json_is_string(v) || parse_stable(json_string_value(v), &s) < 0 ||
                    s.major != major || s.minor != minor || s.patch == 0) {
                        verr(c, pb, "expected a release of the %u.%u branch like \"%u.%u.93\"",
                             major, minor, major, minor);
                        continue;
                }
                if (it->has_upstream && (major > it->release_major ||
                                         (major == it->release_major && minor >= it->release_minor))) {
                        verr(c, pb, "stable branch %u.%u is not older than the mainline release %u.%u",
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
                verr(c, path, "expected an object, got %s", json_type_name(v));
                return;
        }
        check_keys(c, path, v, keys, required);

        id = get_string(c, path, v, "id");
        if (id && !is_item_id(id)) {
                _cleanup_free_ char *p = path_key(c, path, "id");
                if (p)
                        verr(c, p, "expected [a-z0-9-]+");
        } else if (id && bw_kmanifest_find_item(m, id)) {
                _cleanup_free_ char *p = path_key(c, path, "id");
                if (p)
                        verr(c, p, "duplicate id \"%s\"", id);
        }
        title = get_string(c, path, v, "title");
        fallback = get_string(c, path, v, "fallback");
        kind = get_enum(c, path, v, "kind", bw_kitem_kind_from_string, kind_str, _BW_KITEM_KIND_MAX);
        importance = get_enum(c, path, v, "importance", bw_kimportance_from_string, importance_str,
                              _BW_KIMPORTANCE_MAX);
        effect = get_enum(c, path, v, "effect", bw_keffect_from_string, effect_str, _BW_KEFFECT_MAX);
        verified = json_object_get(v, "verified");
        if (verified && !json_is_boolean(verified)) {
                _cleanup_free_ char *p = path_key(c, path, "verified");
                if (p)
                        verr(c, p, "expected a boolean, got %s", json_type_name(verified));
        }
        note = NULL;
        if (json_object_get(v, "note"))
                note = get_string(c, path, v, "note");

        it->kind = kind < 0 ? BW_KITEM_UPSTREAM_FIX : kind;
        if (kind >= 0) {
                parse_upstream(c, path, v, it);
                parse_stable_map(c, path, v, it);
        }

        it->patches = get_strv(c, path, v, "patches", false, is_relative_path, "a relative path", &it->n_patches);
        pp = path_key(c, path, "patches");
        if (pp)
                check_refs(c, m, pp, json_object_get(v, "patches"));

        det = json_object_get(v, "detect");
        pd = path_key(c, path, "detect");
        if (det && pd) {
                if (!json_is_array(det))
                        verr(c, pd, "expected an array, got %s", json_type_name(det));
                else if (json_array_size(det) == 0)
                        verr(c, pd, "expected at least one detection method");
                else {
                        it->detect = calloc(json_array_size(det), sizeof(struct bw_kdetect));
                        if (!it->detect) {
                                c->oom = -ENOMEM;
                                return;
                        }
                        json_array_foreach(det, i, d) {
                                _cleanup_free_ char *pi = path_index(c, pd, i);
                                bool ok;

                                if (!pi)
                                        return;
                                parse_detect(c, pi, d, it, &it->detect[it->n_detect], &ok);
                                if (ok)
                                        it->n_detect++;
                                else {
                                        kdetect_done(&it->detect[it->n_detect]);
                                        it->detect[it->n_detect] = (struct bw_kdetect) { 0 };
                                }
                        }
                }
        }

        if (c->n_invalid > invalid_before || c->oom < 0 || !id || !title || !fallback ||
            importance < 0 || effect < 0 || !verified)
                return;

        it->id = xstrdup(c, id);
        it->title = xstrdup(c, title);
        it->fallback = xstrdup(c, fallback);
        it->note = note ? xstrdup(c, note) : NULL;
        it->importance = importance;
        it->effect = effect;
        it->verified = json_is_true(verified);
        *ret_ok = c->oom == 0;
}

static void parse_items(struct vctx *c, json_t *root, struct bw_kmanifest *m) {
        json_t *arr = json_object_get(root, "items"), *v;
        size_t i;

        if (!arr)
                return;
        if (!json_is_array(arr)) {
                verr(c, "$.items", "expected an array, got %s", json_type_name(arr));
                return;
        }
        m->items = calloc(json_array_size(arr) + 1, sizeof(struct bw_kitem));
        if (!m->items) {
                c->oom = -ENOMEM;
                return;
        }
        json_array_foreach(arr, i, v) {
                _cleanup_free_ char *p = path_index(c, "$.items", i);
                struct bw_kitem *it = &m->items[m->n_items];
                bool ok;

                if (!p)
                        return;
                parse_item(c, p, v, m, it, &ok);
                if (ok)
                        m->n_items++;
                else {
                        kitem_done(it);
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
                if (kerrors_add(ret_errors, "$", "line %d column %d: %s", jerr.line, jerr.column, jerr.text) < 0)
                        return -ENOMEM;
                return -EINVAL;
        }

        m = calloc(1, sizeof(*m));
        if (!m) {
                json_decref(root);
                return -ENOMEM;
        }

        if (!json_is_object(root)) {
                verr(&c, "$", "expected an object, got %s", json_type_name(root));
                goto finish;
        }
        check_keys(&c, "$", root, keys, keys);

        v = json_object_get(root, "schema");
        if (v && !(json_is_string(v) && strcmp(json_string_value(v), MANIFEST_SCHEMA) == 0))
                verr(&c, "$.schema", "expected \"" MANIFEST_SCHEMA "\"");
        v = json_object_get(root, "schema_version");
        if (v && !json_is_integer(v))
                verr(&c, "$.schema_version", "expected an integer, got %s", json_type_name(v));
        else if (v && json_integer_value(v) != MANIFEST_SCHEMA_VERSION)
                verr(&c, "$.schema_version", "unsupported version %lld, expected %d",
                     (long long) json_integer_value(v), MANIFEST_SCHEMA_VERSION);
        s = get_string(&c, "$", root, "patchset_version");
        if (s)
                m->patchset_version = xstrdup(&c, s);

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

static int read_all_at(int dir_fd, const char *path, size_t max, char **ret_buf, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;
        ssize_t n;

        fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        for (;;) {
                if (len == size) {
                        char *nb;

                        if (size >= max)
                                return -EFBIG;
                        size = size == 0 ? 4096 : size * 2;
                        nb = realloc(buf, size + 1);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                }
                n = read(fd, buf + len, size - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        if (!buf) {
                buf = malloc(1);
                if (!buf)
                        return -ENOMEM;
        }
        buf[len] = '\0';
        *ret_buf = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

int bw_kmanifest_load(int dir_fd, const char *path, struct bw_kmanifest **ret, struct bw_kerrors *ret_errors) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;

        r = read_all_at(dir_fd, path, MANIFEST_SIZE_MAX, &buf, &len);
        if (r < 0) {
                if (r != -ENOMEM && kerrors_add(ret_errors, "$", "cannot read %s: %s", path, strerror(-r)) < 0)
                        return -ENOMEM;
                return r;
        }
        return bw_kmanifest_parse(buf, len, ret, ret_errors);
}

static int sha256_fd(int fd, char ret_hex[static 65]) {
        EVP_MD_CTX *ctx;
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned md_len = 0;
        char buf[16384];
        ssize_t n;
        int r = 0;

        ctx = EVP_MD_CTX_new();
        if (!ctx)
                return -ENOMEM;
        if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
                r = -EIO;
                goto finish;
        }
        for (;;) {
                n = read(fd, buf, sizeof buf);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        goto finish;
                }
                if (n == 0)
                        break;
                if (EVP_DigestUpdate(ctx, buf, (size_t) n) != 1) {
                        r = -EIO;
                        goto finish;
                }
        }
        if (EVP_DigestFinal_ex(ctx, md, &md_len) != 1 || md_len != 32) {
                r = -EIO;
                goto finish;
        }
        for (unsigned i = 0; i < md_len; i++)
                snprintf(ret_hex + 2 * i, 3, "%02x", md[i]);
finish:
        EVP_MD_CTX_free(ctx);
        return r;
}

int bw_kmanifest_verify_files(const struct bw_kmanifest *m, int dir_fd, struct bw_kerrors *ret_errors) {
        bool bad = false;
        int r;

        for (size_t i = 0; i < m->n_files; i++) {
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ char *p = NULL;
                char hex[65];
                struct stat st;

                if (asprintf(&p, "$.files[%zu]", i) < 0)
                        return -ENOMEM;

                fd = openat(dir_fd, m->files[i].path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0) {
                        r = kerrors_add(ret_errors, p, "%s: %s", m->files[i].path,
                                        errno == ENOENT ? "missing" : strerror(errno));
                        if (r < 0)
                                return r;
                        bad = true;
                        continue;
                }
                if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                        r = kerrors_add(ret_errors, p, "%s: not a regular file", m->files[i].path);
                        if (r < 0)
                                return r;
                        bad = true;
                        continue;
                }
                r = sha256_fd(fd, hex);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        r = kerrors_add(ret_errors, p, "%s: cannot read: %s", m->files[i].path, strerror(-r));
                        if (r < 0)
                                return r;
                        bad = true;
                        continue;
                }
                if (strcmp(hex, m->files[i].sha256) != 0) {
                        r = kerrors_add(ret_errors, p, "%s: sha256 mismatch: manifest has %s, file has %s",
                                        m->files[i].path, m->files[i].sha256, hex);
                        if (r < 0)
                                return r;
                        bad = true;
                }
        }
        return bad ? -EBADMSG : 0;
}

const char *bw_kmanifest_default_path(void) {
#if defined(BWGOV_MANIFEST_PATH) && defined(BWGOV_MANIFEST_BUILD)
        if (access(BWGOV_MANIFEST_PATH, F_OK) < 0 && access(BWGOV_MANIFEST_BUILD, F_OK) >= 0)
                return BWGOV_MANIFEST_BUILD;
#endif
#ifdef BWGOV_MANIFEST_PATH
        return BWGOV_MANIFEST_PATH;
#else
        return BWGOV_DATADIR "/kernel-patches/manifest.json";
#endif
}
