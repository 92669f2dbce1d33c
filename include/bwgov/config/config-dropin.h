/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Finding the configuration files over the search directories, by systemd's
 * drop-in rules (see bwgov/config.h for the rules as users see them): which
 * copy of the main file counts, which *.conf drop-ins survive and in what
 * order, which are masked, and which <unit>.d directories exist. Reading
 * the files is the caller's (config.c). DIRS is a NULL-terminated list,
 * lowest priority first. Errors are negative errno values with *ERROR
 * filled (which must be empty); a missing directory is not an error. */

#include <stdbool.h>
#include <stddef.h>

#include "bwgov/config/config-error.h"

/* One drop-in name that survived the merge: the file of the highest-priority
 * directory that has that name. */
struct bw_dropin {
        char *name;             /* "10-web.conf" */
        char *path;             /* "<dir>/<subdir>/10-web.conf" */
        bool masked;            /* /dev/null or an empty file: skip it */
};

struct bw_dropin_list {
        struct bw_dropin *items;        /* sorted by name (strcmp) */
        size_t n;
};

/* Frees the items and zeroes *L. Accepts NULL. */
void bw_dropin_list_done(struct bw_dropin_list *l);

/* How many items are not masked. */
size_t bw_dropin_list_n_active(const struct bw_dropin_list *l);

/* The *.conf files of <dir>/<SUBDIR> over all DIRS, merged by name and
 * sorted. Hidden names and names not ending in ".conf" are ignored, so are
 * entries that are not files (directories, FIFOs). Returns 0 with *RET
 * filled (possibly empty), or -ENOMEM, or the errno of a directory that
 * cannot be read or a drop-in that cannot be examined (-ENOENT for a
 * dangling symlink). */
int bw_dropin_list_collect(const char *const *dirs, const char *subdir, struct bw_dropin_list *ret,
                           struct bw_config_error *error);

/* The drop-ins of unit NAME by systemd's rules: those of <NAME>.d and of
 * the prefix directories of its name cut after each dash
 * ("cri-containerd-0f1e.scope" also reads "cri-.scope.d" and
 * "cri-containerd-.scope.d"). Per file name the highest-priority
 * directory wins, and within one directory the most specific name. */
int bw_dropin_list_collect_unit(const char *const *dirs, const char *name, struct bw_dropin_list *ret,
                                struct bw_config_error *error);

/* The path of the first active drop-in of unit NAME (as
 * bw_dropin_list_collect_unit() finds them now): 1 with *ret_path
 * (malloc'd), 0 when it has none, or a negative errno. For messages about a
 * unit whose name names its cgroup: the configuration keeps no path for it. */
int bw_dropin_first_active(const char *const *dirs, const char *name, char **ret_path);

/* NAME is a prefix directory's ("libpod-.scope"): it applies to every unit
 * of that type whose name starts with the part before the dot. */
bool bw_config_unit_name_is_prefix(const char *name);

/* The main file NAME: only the copy in the highest-priority directory that
 * has one counts. Returns 1 with its path in *RET_PATH (malloc'd), 0 with
 * *RET_PATH = NULL when no directory has one or that copy is masked, or a
 * negative errno. */
int bw_config_find_main(const char *const *dirs, const char *name, char **ret_path, struct bw_config_error *error);

/* A unit name as a <unit>.d directory may spell it: not empty, ".", ".."
 * and without '/' or control characters. */
bool bw_config_unit_name_is_valid(const char *name);

/* A list of malloc'd strings. */
struct bw_strv {
        char **items;
        size_t n;
};

/* Frees the strings and zeroes *V. Accepts NULL. */
void bw_strv_done(struct bw_strv *v);

/* The names of the unit directories over all DIRS: every subdirectory (or
 * symlink to one) whose name ends in ".d", except EXCLUDE (the main drop-in
 * directory), minus the ".d"; sorted, without duplicates. Returns 0 with
 * *RET filled, -EINVAL (with *ERROR) for an invalid unit name, -ENOMEM, or
 * the errno of a search directory that cannot be read. */
int bw_config_unit_names(const char *const *dirs, const char *exclude, struct bw_strv *ret,
                         struct bw_config_error *error);
