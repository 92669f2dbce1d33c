/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Drop-in scanning over the configuration search directories: which main
 * file counts, which *.conf drop-ins survive and in what order, masking,
 * and the list of <unit>.d directories (contracts in
 * include/bwgov/config/config-dropin.h). Reads directories and file types, never
 * file contents. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bwgov/config/config-dropin.h"
#include "bwgov/util/macro.h"
#include "util/string-util.h"

#define DROPIN_SUFFIX   ".conf"
#define UNIT_DIR_SUFFIX ".d"
#define DEV_NULL        "/dev/null"
#define DEV_NULL_MAJOR  1               /* devices.txt: 1 char, minor 3 = /dev/null */
#define DEV_NULL_MINOR  3

static void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

static int cmp_strp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* "DIR/NAME", malloc'd; NULL on ENOMEM. */
static char *path_join(const char *dir, const char *name) {
        char *p;

        return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* Is name in dfd a configuration file? Returns 1 (with *ret_masked), 0 when
 * it is absent, -EISDIR or -EBADFD when it is (or a symlink points to) a
 * directory, FIFO, socket or device other than the null device: named like
 * a configuration file, it is an error, never silently skipped (issue 17),
 * or another negative errno (e.g. -ENOENT for a dangling symlink). Masked:
 * a symlink to /dev/null, the null device itself, or an empty regular file
 * (systemd's null_or_empty()). */
static int check_file(int dfd, const char *name, bool *ret_masked) {
        struct stat st;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;

        if (S_ISLNK(st.st_mode)) {
                char target[sizeof(DEV_NULL)];
                ssize_t n;

                n = readlinkat(dfd, name, target, sizeof(target));
                if (n == (ssize_t) strlen(DEV_NULL) && memcmp(target, DEV_NULL, (size_t) n) == 0) {
                        *ret_masked = true;
                        return 1;
                }
                if (fstatat(dfd, name, &st, 0) < 0)
                        return -errno;
        }

        if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(DEV_NULL_MAJOR, DEV_NULL_MINOR)) {
                *ret_masked = true;
                return 1;
        }
        if (S_ISREG(st.st_mode)) {
                *ret_masked = st.st_size == 0;
                return 1;
        }
        return S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
}

/* Calls FN for every entry of the directory DPATH (a missing one has none).
 * Returns 0, the first negative value FN returns, or the errno of opening or
 * reading the directory (with *ERROR filled). */
typedef int (*entry_fn)(int dfd, const char *dpath, const char *name, void *userdata);

static int scan_dir(const char *dpath, entry_fn fn, void *userdata, struct bw_config_error *error) {
        _cleanup_(closedirp) DIR *d = NULL;
        int r;

        d = opendir(dpath);
        if (!d) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0;
                return bw_config_error_set_errno(error, -errno, dpath, "cannot open directory");
        }

        for (;;) {
                struct dirent *de;

                errno = 0;
                de = readdir(d);
                if (!de)
                        return errno == 0 ? 0 :
                                bw_config_error_set_errno(error, -errno, dpath, "cannot read directory");

                r = fn(dirfd(d), dpath, de->d_name, userdata);
                if (r < 0)
                        return r;
        }
}

static void dropin_done(struct bw_dropin *d) {
        free_many(d->name, d->path);
}

void bw_dropin_list_done(struct bw_dropin_list *l) {
        if (!l)
                return;
        array_done_and_free(l->items, l->n, dropin_done);
        *l = (struct bw_dropin_list) { 0 };
}

size_t bw_dropin_list_n_active(const struct bw_dropin_list *l) {
        size_t n = 0;

        for (size_t i = 0; i < l->n; i++)
                if (!l->items[i].masked)
                        n++;
        return n;
}

int bw_dropin_first_active(const char *const *dirs, const char *name, char **ret_path) {
        struct bw_dropin_list l = { 0 };
        struct bw_config_error error = { 0 };
        int r;

        r = bw_dropin_list_collect_unit(dirs, name, &l, &error);
        bw_config_error_done(&error);
        if (r < 0)
                return r;
        r = 0;
        for (size_t i = 0; i < l.n && r == 0; i++)
                if (!l.items[i].masked) {
                        *ret_path = l.items[i].path;
                        l.items[i].path = NULL;
                        r = 1;
                }
        bw_dropin_list_done(&l);
        return r;
}

/* Add name, or replace the entry of the same name from a lower-priority
 * directory. Takes ownership of path (freed on failure). */
static int dropin_list_put(struct bw_dropin_list *l, const char *name, char *path, bool masked) {
        _cleanup_free_ char *p = path, *n = NULL;
        struct bw_dropin *items;

        for (size_t i = 0; i < l->n; i++)
                if (streq(l->items[i].name, name)) {
                        free(l->items[i].path);
                        l->items[i].path = TAKE_PTR(p);
                        l->items[i].masked = masked;
                        return 0;
                }

        n = strdup(name);
        if (!n)
                return -ENOMEM;
        items = reallocarray(l->items, l->n + 1, sizeof(*items));
        if (!items)
                return -ENOMEM;
        l->items = items;
        l->items[l->n++] = (struct bw_dropin) { .name = TAKE_PTR(n), .path = TAKE_PTR(p), .masked = masked };
        return 0;
}

static int cmp_dropin(const void *a, const void *b) {
        return strcmp(((const struct bw_dropin *) a)->name, ((const struct bw_dropin *) b)->name);
}

struct dropin_scan {
        struct bw_dropin_list *list;
        struct bw_config_error *error;
};

static int dropin_entry(int dfd, const char *dpath, const char *name, void *userdata) {
        struct dropin_scan *s = userdata;
        _cleanup_free_ char *path = NULL;
        bool masked = false;
        int r;

        if (name[0] == '.' || !endswith(name, DROPIN_SUFFIX))
                return 0;

        path = path_join(dpath, name);
        if (!path)
                return -ENOMEM;

        r = check_file(dfd, name, &masked);
        if (r == -EISDIR || r == -EBADFD)
                return bw_config_error_set_not_regular(s->error, path);
        if (r < 0)
                return bw_config_error_set_errno(s->error, r, path, "cannot access");
        if (r == 0)
                return 0;

        return dropin_list_put(s->list, name, TAKE_PTR(path), masked);
}

/* The drop-ins of SUBDIRS (in that order within each of DIRS: a later
 * one's file replaces an earlier one's of the same name), sorted. */
static int collect(const char *const *dirs, char *const *subdirs, size_t n_subdirs, struct bw_dropin_list *ret,
                   struct bw_config_error *error) {
        _cleanup_(bw_dropin_list_done) struct bw_dropin_list l = { 0 };
        struct dropin_scan s = { .list = &l, .error = error };
        int r;

        for (size_t i = 0; dirs[i]; i++)
                for (size_t k = 0; k < n_subdirs; k++) {
                        _cleanup_free_ char *dpath = path_join(dirs[i], subdirs[k]);

                        if (!dpath)
                                return -ENOMEM;
                        r = scan_dir(dpath, dropin_entry, &s, error);
                        if (r < 0)
                                return r;
                }

        if (l.n > 0)
                qsort(l.items, l.n, sizeof(*l.items), cmp_dropin);
        *ret = l;
        l = (struct bw_dropin_list) { 0 };
        return 0;
}

int bw_dropin_list_collect(const char *const *dirs, const char *subdir, struct bw_dropin_list *ret,
                           struct bw_config_error *error) {
        return collect(dirs, (char *const *) &subdir, 1, ret, error);
}

bool bw_config_unit_name_is_prefix(const char *name) {
        const char *dot = name ? strrchr(name, '.') : NULL;

        /* "X-.T": X not empty ("-.slice" is the root slice), T a type. */
        return dot && dot - name >= 2 && dot[-1] == '-' && dot[1] != '\0' && !strchr(dot + 1, '-');
}

/* The directories systemd reads for unit NAME, least specific first: the
 * name cut after each dash ("a-b-c.scope": "a-.scope", "a-b-.scope"),
 * then the name itself; SUFFIX after each. */
static int unit_variants(const char *name, const char *suffix, struct bw_strv *ret) {
        _cleanup_(bw_strv_done) struct bw_strv v = { 0 };
        const char *dot = strrchr(name, '.');
        size_t n = 0;

        for (const char *p = name; dot && p < dot; p++)
                n += *p == '-';
        v.items = calloc(n + 1, sizeof(*v.items));
        if (!v.items)
                return -ENOMEM;
        for (const char *p = name + 1; dot && p < dot; p++) {
                /* A dash ending the prefix part ("a-.scope") names a prefix
                 * directory itself: its variants are the shorter ones. */
                if (*p != '-' || p + 1 == dot)
                        continue;
                if (asprintf(&v.items[v.n], "%.*s%s%s", (int) (p + 1 - name), name, dot, suffix) < 0)
                        return -ENOMEM;
                v.n++;
        }
        if (asprintf(&v.items[v.n], "%s%s", name, suffix) < 0)
                return -ENOMEM;
        v.n++;
        *ret = v;
        v = (struct bw_strv) { 0 };
        return 0;
}

int bw_dropin_list_collect_unit(const char *const *dirs, const char *name, struct bw_dropin_list *ret,
                                struct bw_config_error *error) {
        _cleanup_(bw_strv_done) struct bw_strv variants = { 0 };
        int r;

        r = unit_variants(name, UNIT_DIR_SUFFIX, &variants);
        if (r < 0)
                return r;
        return collect(dirs, variants.items, variants.n, ret, error);
}

int bw_config_find_main(const char *const *dirs, const char *name, char **ret_path, struct bw_config_error *error) {
        size_t n_dirs = 0;
        int r;

        while (dirs[n_dirs])
                n_dirs++;

        for (size_t i = n_dirs; i > 0; i--) {
                _cleanup_free_ char *path = path_join(dirs[i - 1], name);
                bool masked = false;

                if (!path)
                        return -ENOMEM;

                r = check_file(AT_FDCWD, path, &masked);
                if (r == -ENOTDIR)
                        continue; /* the search directory is not a directory: missing */
                if (r == -EISDIR || r == -EBADFD)
                        return bw_config_error_set_not_regular(error, path);
                if (r < 0)
                        return bw_config_error_set_errno(error, r, path, "cannot access");
                if (r == 0)
                        continue;

                *ret_path = masked ? NULL : TAKE_PTR(path);
                return !masked;
        }

        *ret_path = NULL;
        return 0;
}

bool bw_config_unit_name_is_valid(const char *name) {
        return !isempty(name) && !streq(name, ".") && !streq(name, "..") && !strchr(name, '/') &&
                !string_has_cc(name);
}

void bw_strv_done(struct bw_strv *v) {
        if (!v)
                return;
        for (size_t i = 0; i < v->n; i++)
                free(v->items[i]);
        free(v->items);
        *v = (struct bw_strv) { 0 };
}

struct unit_scan {
        struct bw_strv *names;
        const char *exclude;
        struct bw_config_error *error;
};

static int unit_dir_entry(int dfd, const char *dpath, const char *name, void *userdata) {
        struct unit_scan *s = userdata;
        _cleanup_free_ char *unit = NULL;
        struct stat st;
        char **items;

        if (!endswith(name, UNIT_DIR_SUFFIX) || streq(name, s->exclude))
                return 0;

        if (fstatat(dfd, name, &st, 0) < 0 || !S_ISDIR(st.st_mode))
                return 0; /* not a directory, or a dangling symlink: not a unit */

        unit = strndup(name, strlen(name) - strlen(UNIT_DIR_SUFFIX));
        if (!unit)
                return -ENOMEM;
        if (!bw_config_unit_name_is_valid(unit)) {
                _cleanup_free_ char *path = path_join(dpath, name);

                if (!path)
                        return -ENOMEM;
                return bw_config_error_set(s->error, -EINVAL, path, 0, NULL,
                                           "invalid unit name, expected <unit>.d with a unit name that is not "
                                           "empty, \".\" or \"..\" and has no control characters");
        }

        items = reallocarray(s->names->items, s->names->n + 1, sizeof(*items));
        if (!items)
                return -ENOMEM;
        s->names->items = items;
        s->names->items[s->names->n++] = TAKE_PTR(unit);
        return 0;
}

int bw_config_unit_names(const char *const *dirs, const char *exclude, struct bw_strv *ret,
                         struct bw_config_error *error) {
        _cleanup_(bw_strv_done) struct bw_strv v = { 0 };
        struct unit_scan s = { .names = &v, .exclude = exclude, .error = error };
        size_t j = 0;
        int r;

        for (size_t i = 0; dirs[i]; i++) {
                r = scan_dir(dirs[i], unit_dir_entry, &s, error);
                if (r < 0)
                        return r;
        }

        if (v.n > 0)
                qsort(v.items, v.n, sizeof(*v.items), cmp_strp);
        for (size_t i = 0; i < v.n; i++) {
                if (j > 0 && streq(v.items[j - 1], v.items[i]))
                        free(v.items[i]);
                else
                        v.items[j++] = v.items[i];
        }
        v.n = j;

        *ret = v;
        v = (struct bw_strv) { 0 };
        return 0;
}
