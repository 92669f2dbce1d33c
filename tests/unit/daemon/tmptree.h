/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A file tree under a temporary directory for the unit tests that build
 * cgroup files by hand: a file written with its parent directories made,
 * and the tree removed. Include after <cmocka.h>. */
#pragma once

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

/* ROOT/NAME holds CONTENT; the directories on the way are made. */
static inline void tmptree_put(const char *root, const char *name, const char *content) {
        char p[PATH_MAX], d[PATH_MAX];
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", root, name);
        snprintf(d, sizeof(d), "%s", p);
        for (char *s = d + 1; *s; s++)
                if (*s == '/') {
                        *s = '\0';
                        (void) mkdir(d, 0755);
                        *s = '/';
                }
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static inline int tmptree_remove_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(p);
}

/* DIR and everything below it gone. */
static inline void tmptree_remove(const char *dir) {
        (void) nftw(dir, tmptree_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
