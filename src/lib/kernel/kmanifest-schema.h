/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The manifest parser's validation context and value checks, shared by the
 * parts of the parser (src/lib only, not installed). Every check records its
 * problem at a JSON path ("$.items[3].kind") and returns; parsing goes on so
 * one run reports every problem. Only ENOMEM stops it (c->oom). */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "bwgov/kernel/kmanifest.h"
#include "bwgov/util/macro.h"

struct vctx {
        struct bw_kerrors *errors;      /* where problems go; NULL: only counted */
        size_t n_invalid;               /* problems found */
        int oom;                        /* -ENOMEM once an allocation failed, else 0 */
};

/* Record a problem at PATH. */
void vctx_error(struct vctx *c, const char *path, const char *fmt, ...) _printf_(3, 4);

/* Record a problem at member KEY of the object at PATH. */
void vctx_error_key(struct vctx *c, const char *path, const char *key, const char *fmt, ...) _printf_(4, 5);

/* "$.a" + key -> "$.a.key" or "$.a[\"6.1\"]"; "$.a" + 3 -> "$.a[3]". Both
 * return a malloc'd path, or NULL on ENOMEM (recorded). */
char *vctx_path_key(struct vctx *c, const char *base, const char *key);
char *vctx_path_index(struct vctx *c, const char *base, size_t i);

/* strdup(), recording ENOMEM. */
char *vctx_strdup(struct vctx *c, const char *s);

/* "an object", "a string", ... for messages. */
const char *vctx_json_type(const json_t *j);

/* Report keys of OBJ that are not in ALLOWED (NULL-terminated) and keys of
 * REQUIRED (NULL-terminated, or NULL) that are missing. */
void vctx_check_keys(struct vctx *c, const char *path, json_t *obj,
                     const char *const *allowed, const char *const *required);

/* Member KEY of OBJ as a non-empty string without NUL bytes, or NULL: absent
 * (not recorded: vctx_check_keys reports missing keys) or wrong (recorded). */
const char *vctx_get_string(struct vctx *c, const char *path, json_t *obj, const char *key);

/* Enumerated string member KEY of OBJ: the value from FROM_STRING, or -1
 * when absent (not recorded) or not one of the MAX names of TO_STRING
 * (recorded, listing them). */
int vctx_get_enum(struct vctx *c, const char *path, json_t *obj, const char *key,
                  int (*from_string)(const char *), const char *(*to_string)(int), int max);

/* Member KEY of OBJ as an array of distinct non-empty strings, each accepted
 * by VALID (may be NULL; VALID_WHAT names what it wants); with NONEMPTY, an
 * empty array is a problem. Returns the copied strings (NULL-terminated,
 * possibly with fewer entries than the array when some were wrong) with
 * *ret_n their number, or NULL with *ret_n = 0 when absent or not an array. */
char **vctx_get_strv(struct vctx *c, const char *path, json_t *obj, const char *key, bool nonempty,
                     bool (*valid)(const char *), const char *valid_what, size_t *ret_n);

/* Member KEY of OBJ, which must be an array: returns a zeroed allocation
 * of one more than its size elements of ELEM_SIZE bytes for the parsed
 * entries, and *ret_arr the array. Returns NULL (*ret_arr untouched) when
 * KEY is absent, not an array (recorded at PATH) or on ENOMEM (recorded). */
void *vctx_get_array(struct vctx *c, json_t *obj, const char *key, const char *path, size_t elem_size,
                     json_t **ret_arr);

/* Value checks of the schema; pure. */
bool manifest_is_hex_lower(const char *s, size_t min, size_t max);    /* [0-9a-f]{min,max} */
bool manifest_is_item_id(const char *s);                               /* [a-z0-9-]+ */
/* Below the manifest directory: no leading '/', no ".", ".." or empty
 * components, no control bytes. */
bool manifest_is_relative_path(const char *s);
bool manifest_is_plain_name(const char *s);     /* a relative path without '/' */
bool manifest_is_identifier(const char *s);     /* a C identifier */
bool manifest_is_kconfig_option(const char *s); /* CONFIG_[A-Z0-9_]+ */

/* A branch name "X.Y" (no third component). Returns 0 or -EINVAL. */
int manifest_parse_branch(const char *s, unsigned *ret_major, unsigned *ret_minor);

/* A stable release "X.Y.Z" exactly. Returns 0 or -EINVAL. */
int manifest_parse_stable(const char *s, struct bw_kstable *ret);
