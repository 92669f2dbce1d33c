/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration loader's error report: filling, formatting and freeing
 * struct bw_config_error (contracts in include/bwgov/config/config-error.h). */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bwgov/config/config-error.h"
#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"
#include "util/string-util.h"

void bw_config_error_done(struct bw_config_error *e) {
        if (!e)
                return;
        free_many(e->file, e->key, e->message);
        *e = (struct bw_config_error) { 0 };
}

char *bw_config_error_to_string(const struct bw_config_error *e) {
        const char *msg, *key, *sep;
        char *s;
        int n;

        if (!e)
                return NULL;

        msg = e->message ? e->message : "out of memory";
        key = e->key ? e->key : "";
        sep = e->key ? ": " : "";
        if (e->file && e->line > 0)
                n = asprintf(&s, "%s:%u: %s%s%s", e->file, e->line, key, sep, msg);
        else if (e->file)
                n = asprintf(&s, "%s: %s%s%s", e->file, key, sep, msg);
        else
                n = asprintf(&s, "%s%s%s", key, sep, msg);
        if (n < 0)
                return NULL;
        return s;
}

int bw_config_error_setv(struct bw_config_error *e, int r, const char *file, unsigned line, const char *key,
                         const char *fmt, va_list ap) {
        struct bw_config_error n = { .line = line };

        if (!strdup_or_null(file, &n.file) || !strdup_or_null(key, &n.key) || vasprintf(&n.message, fmt, ap) < 0) {
                n.message = NULL;
                bw_config_error_done(&n);
                return -ENOMEM;
        }

        *e = n;
        return r;
}

int bw_config_error_set(struct bw_config_error *e, int r, const char *file, unsigned line, const char *key,
                        const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = bw_config_error_setv(e, r, file, line, key, fmt, ap);
        va_end(ap);
        return r;
}

int bw_config_error_set_errno(struct bw_config_error *e, int r, const char *file, const char *what) {
        char buf[128];

        return bw_config_error_set(e, r, file, 0, NULL, "%s: %s", what, strerror_r(-r, buf, sizeof(buf)));
}

int bw_config_error_set_not_regular(struct bw_config_error *e, const char *file) {
        struct stat st;

        return bw_config_error_set(e, -EINVAL, file, 0, NULL,
                                   "%s, not a configuration file: expected a regular file (or a symlink to "
                                   "/dev/null, which masks)",
                                   stat(file, &st) >= 0 ? bw_file_type_name(st.st_mode) : "not a regular file");
}
