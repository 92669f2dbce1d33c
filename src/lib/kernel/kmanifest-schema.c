/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manifest's validation context and value checks: every problem is
 * recorded at its JSON path and parsing goes on, so one run reports them
 * all; only ENOMEM stops it. The grammar itself (which keys, which types)
 * is kmanifest-parse.c. */

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/kernel/kmanifest.h"
#include "bwgov/util/kversion.h"
#include "bwgov/util/macro.h"
#include "kmanifest-schema.h"

_printf_(3, 0)
static void vctx_errorv(struct vctx *c, const char *path, const char *fmt, va_list ap) {
        _cleanup_free_ char *msg = NULL;

        c->n_invalid++;
        if (vasprintf(&msg, fmt, ap) < 0) {
                msg = NULL;
                c->oom = -ENOMEM;
        } else if (bw_kerrors_add(c->errors, path, "%s", msg) < 0)
                c->oom = -ENOMEM;
}

void vctx_error(struct vctx *c, const char *path, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vctx_errorv(c, path, fmt, ap);
        va_end(ap);
}

void vctx_error_key(struct vctx *c, const char *path, const char *key, const char *fmt, ...) {
        _cleanup_free_ char *p = vctx_path_key(c, path, key);
        va_list ap;

        if (!p)
                return;
        va_start(ap, fmt);
        vctx_errorv(c, p, fmt, ap);
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
char *vctx_path_key(struct vctx *c, const char *base, const char *key) {
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

char *vctx_path_index(struct vctx *c, const char *base, size_t i) {
        char *p;

        if (asprintf(&p, "%s[%zu]", base, i) < 0) {
                c->oom = -ENOMEM;
                return NULL;
        }
        return p;
}

char *vctx_strdup(struct vctx *c, const char *s) {
        char *d = strdup(s);

        if (!d)
                c->oom = -ENOMEM;
        return d;
}

const char *vctx_json_type(const json_t *j) {
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
void vctx_check_keys(struct vctx *c, const char *path, json_t *obj,
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
                        vctx_error_key(c, path, key, "unknown key");
                }
        }
        for (const char *const *q = required; q && *q; q++)
                if (!json_object_get(obj, *q)) {
                        vctx_error_key(c, path, *q, "missing");
                }
}

/* Member key of obj as a non-empty string, or NULL (error recorded unless
 * the key is absent: vctx_check_keys reports those). */
const char *vctx_get_string(struct vctx *c, const char *path, json_t *obj, const char *key) {
        _cleanup_free_ char *p = NULL;
        json_t *v = json_object_get(obj, key);

        if (!v)
                return NULL;
        if (json_is_string(v) && json_string_length(v) > 0 && strlen(json_string_value(v)) == json_string_length(v))
                return json_string_value(v);
        p = vctx_path_key(c, path, key);
        if (p)
                vctx_error(c, p, json_is_string(v) ? "expected a non-empty string without NUL bytes" :
                     "expected a string, got %s", vctx_json_type(v));
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
        vctx_error(c, path, "expected one of %s", list);
}

/* Enumerated string member; -1 when invalid or missing (error recorded). */
int vctx_get_enum(struct vctx *c, const char *path, json_t *obj, const char *key,
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
        p = vctx_path_key(c, path, key);
        if (p)
                expected_one_of(c, p, to_string, max);
        return -1;
}

/* "X.Y" with no leading zeros beyond a lone 0. */
int manifest_parse_branch(const char *s, unsigned *ret_major, unsigned *ret_minor) {
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
int manifest_parse_stable(const char *s, struct bw_kstable *ret) {
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

bool manifest_is_hex_lower(const char *s, size_t min, size_t max) {
        size_t n = strlen(s);

        if (n < min || n > max)
                return false;
        for (; *s; s++)
                if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
                        return false;
        return true;
}

bool manifest_is_item_id(const char *s) {
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
                        return false;
        return *s != '\0';
}

/* A relative path below the manifest directory: no leading '/', no "." or
 * ".." or empty components, no control bytes. */
bool manifest_is_relative_path(const char *s) {
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

bool manifest_is_plain_name(const char *s) {
        return manifest_is_relative_path(s) && !strchr(s, '/');
}

bool manifest_is_identifier(const char *s) {
        return is_ident_key(s);
}

bool manifest_is_kconfig_option(const char *s) {
        if (strncmp(s, "CONFIG_", 7) != 0 || s[7] == '\0')
                return false;
        for (s += 7; *s; s++)
                if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
                        return false;
        return true;
}

/* An array of non-empty strings; each checked by valid (may be NULL).
 * Returns the copied vector (possibly empty) or NULL with *ret_n = 0 on error. */
char **vctx_get_strv(struct vctx *c, const char *path, json_t *obj, const char *key, bool nonempty,
                     bool (*valid)(const char *), const char *valid_what, size_t *ret_n) {
        _cleanup_free_ char *p = NULL;
        json_t *arr = json_object_get(obj, key), *v;
        char **strv;
        size_t i, n = 0;

        *ret_n = 0;
        if (!arr)
                return NULL;
        p = vctx_path_key(c, path, key);
        if (!p)
                return NULL;
        if (!json_is_array(arr)) {
                vctx_error(c, p, "expected an array of strings, got %s", vctx_json_type(arr));
                return NULL;
        }
        if (nonempty && json_array_size(arr) == 0) {
                vctx_error(c, p, "expected a non-empty array");
                return NULL;
        }
        strv = calloc(json_array_size(arr) + 1, sizeof(char *));
        if (!strv) {
                c->oom = -ENOMEM;
                return NULL;
        }
        json_array_foreach(arr, i, v) {
                _cleanup_free_ char *pi = vctx_path_index(c, p, i);

                if (!pi)
                        break;
                if (!json_is_string(v) || json_string_length(v) == 0 ||
                    strlen(json_string_value(v)) != json_string_length(v)) {
                        vctx_error(c, pi, "expected a non-empty string, got %s", vctx_json_type(v));
                        continue;
                }
                if (valid && !valid(json_string_value(v))) {
                        vctx_error(c, pi, "expected %s", valid_what);
                        continue;
                }
                for (size_t k = 0; k < n; k++)
                        if (strcmp(strv[k], json_string_value(v)) == 0) {
                                vctx_error(c, pi, "duplicate entry \"%s\"", json_string_value(v));
                                goto next;
                        }
                strv[n] = vctx_strdup(c, json_string_value(v));
                if (!strv[n])
                        break;
                n++;
        next:;
        }
        *ret_n = n;
        return strv;
}

void *vctx_get_array(struct vctx *c, json_t *obj, const char *key, const char *path, size_t elem_size,
                     json_t **ret_arr) {
        json_t *arr = json_object_get(obj, key);
        void *elems;

        if (!arr)
                return NULL;
        if (!json_is_array(arr)) {
                vctx_error(c, path, "expected an array, got %s", vctx_json_type(arr));
                return NULL;
        }
        elems = calloc(json_array_size(arr) + 1, elem_size);
        if (!elems) {
                c->oom = -ENOMEM;
                return NULL;
        }
        *ret_arr = arr;
        return elems;
}
