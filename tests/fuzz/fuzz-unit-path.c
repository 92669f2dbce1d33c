/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit names and cgroup paths: bw_unit_cgroup_path(), bw_unit_is_systemd(),
 * bw_discover_find(), bw_parse_cgroup_path() (Cgroup=) and
 * bw_config_unit_name_is_valid(), on the input up to its first NUL.
 *
 * Properties: a slice's path ends in the slice itself and has one
 * component per dash, each a slice, and is a valid Cgroup= path that
 * bw_parse_cgroup_path() keeps as it is; other systemd units are -EAGAIN
 * (to be found), anything else maps to itself; made as directories in a
 * scratch tree, the slice is found by bw_discover_find() at that path
 * (never when hidden); bw_parse_cgroup_path() is idempotent. */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/config/config-dropin.h"
#include "bwgov/cgroup/discover.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"
#include "fuzz-util.h"

/* Unit names come from directory names (<unit>.d): NAME_MAX. A slice's path
 * grows with the square of its length; past that the input means nothing. */
#define UNIT_NAME_MAX 255
/* The scratch tree is made for paths well below PATH_MAX. */
#define FIND_PATH_MAX 1024

static bool endswith(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);

        return a > b && strcmp(s + a - b, suffix) == 0;
}

static bool has_cc(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < ' ' || *s == 0x7f)
                        return true;
        return false;
}

/* mkdir -p PATH (of COMPONENTS directories) in a scratch tree, then look
 * for NAME as deep as that and one level less. */
static void check_find(const char *path, size_t components, const char *name) {
        _cleanup_free_ char *dir = NULL, *found = NULL, *p = strdup(path);
        _cleanup_close_ int dfd = -1;
        int r;

        fuzz_check(p);
        dir = fuzz_mkdtemp("unit-path");
        fuzz_check(dir);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        fuzz_check(dfd >= 0);
        for (char *s = p; (s = strchr(s, '/')); s++) {
                *s = '\0';
                fuzz_check(mkdirat(dfd, p, 0755) == 0);
                *s = '/';
        }
        fuzz_check(mkdirat(dfd, p, 0755) == 0);

        r = bw_discover_find(dfd, name, (unsigned) components, &found);
        if (name[0] == '.')
                fuzz_check(r == -ENOENT);       /* hidden directories are not searched */
        else
                fuzz_check(r == 0 && strcmp(found, path) == 0);
        /* (A top-level directory is found even with max_depth 0.) */
        if (components > 1)
                fuzz_check(bw_discover_find(dfd, name, (unsigned) components - 1, &found) == -ENOENT);
        fuzz_check(fuzz_rm_rf(dir) == 0);
}

static void check_unit(const char *name) {
        _cleanup_free_ char *path = NULL, *again = NULL;
        size_t components = 1, dashes = 0, n;
        int r;

        r = bw_unit_cgroup_path(name, &path);
        if (!*name || strchr(name, '/')) {
                fuzz_check(r == -EINVAL);
                return;
        }
        if (!bw_unit_is_systemd(name)) {
                bool dots = strcmp(name, ".") == 0 || strcmp(name, "..") == 0;

                fuzz_check(dots ? r == -EINVAL : r == 0 && strcmp(path, name) == 0);
                return;
        }
        if (!endswith(name, ".slice")) {
                fuzz_check(r == -EAGAIN);
                return;
        }
        fuzz_check(r == 0 || r == -EINVAL);
        if (r < 0)
                return;
        if (strcmp(name, "-.slice") == 0) {
                fuzz_check(strcmp(path, "") == 0);
                return;
        }

        for (const char *s = name; *s; s++)
                dashes += *s == '-';
        for (const char *s = path; *s; s++)
                components += *s == '/';
        fuzz_check(components == dashes + 1);
        n = strlen(path);
        fuzz_check(n >= strlen(name) && strcmp(path + n - strlen(name), name) == 0);
        fuzz_check(n == strlen(name) || path[n - strlen(name) - 1] == '/');
        for (const char *c = path; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
                size_t l = strcspn(c, "/");

                fuzz_check(l > 6 && memcmp(c + l - 6, ".slice", 6) == 0);
        }

        if (has_cc(name))
                return;
        r = bw_parse_cgroup_path(path, &again);
        if (n > BW_CGROUP_PATH_MAX) {
                fuzz_check(r == -ERANGE);
                return;
        }
        fuzz_check(r == 0 && strcmp(again, path) == 0);
        if (n < FIND_PATH_MAX)
                check_find(path, components, name);
}

static void check_cgroup_path(const char *s) {
        _cleanup_free_ char *path = NULL, *again = NULL;
        int r;

        r = bw_parse_cgroup_path(s, &path);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0)
                return;
        fuzz_check(path[0] != '/' && path[0] != '\0' && path[strlen(path) - 1] != '/');
        fuzz_check(bw_parse_cgroup_path(path, &again) == 0 && strcmp(again, path) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = fuzz_strndup(data, size);

        check_cgroup_path(s);
        if (strlen(s) > UNIT_NAME_MAX)
                return 0;
        (void) bw_config_unit_name_is_valid(s);
        check_unit(s);
        return 0;
}
