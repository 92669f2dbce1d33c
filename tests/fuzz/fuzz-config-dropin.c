/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration loader: bw_config_load() over three search directories
 * (usr-lib, run, etc: lowest priority first) in a scratch tree the input
 * describes, with the drop-in merging and masking of config-dropin.c and
 * the libinih front end of config-ini.c.
 *
 * Input: a list of entries, each a header line, then the file's content up
 * to the next header line:
 *
 *     == etc/bwgov.conf                      a file
 *     == etc/web.slice.d/                    a directory
 *     == run/web.slice.d/10.conf -> /dev/null  a symlink (to /dev/null, or a
 *                                            relative target without "..")
 *
 * Paths are relative, of at most MAX_DEPTH components, none empty, "." or
 * ".."; entries that break this or collide with an earlier one are skipped.
 *
 * Properties: on success, the units are sorted by name, each name is valid
 * and found by bw_config_find_unit(), the intervals are in range and the
 * active interval in effect is never above the unit's interval, and each unit
 * copies (bw_unit_config_copy()); on failure *ret stays as it was and the
 * error names what failed; everything is freed, the tree removed. */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/config/config-dropin.h"
#include "bwgov/config/config.h"
#include "bwgov/util/macro.h"
#include "fuzz-util.h"

#define HEADER "== "
#define MAX_DEPTH 4
#define MAX_ENTRIES 64
#define PATH_LEN_MAX 200

/* A path of the tree: relative, MAX_DEPTH components at most, none empty,
 * "." or "..". */
static bool path_ok(const char *p) {
        size_t depth = 0;

        if (!*p || strlen(p) > PATH_LEN_MAX || *p == '/')
                return false;
        for (;;) {
                size_t l = strcspn(p, "/");

                if (l == 0 || (l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                if (++depth > MAX_DEPTH)
                        return false;
                p += l;
                if (!*p)
                        return true;
                p++;
        }
}

static bool target_ok(const char *t) {
        if (strcmp(t, "/dev/null") == 0)
                return true;
        return *t != '/' && path_ok(t);
}

/* mkdir -p the parents of PATH (modified and restored). */
static int make_parents(int dfd, char *path) {
        for (char *s = path; (s = strchr(s, '/')); s++) {
                *s = '\0';
                if (mkdirat(dfd, path, 0755) < 0 && errno != EEXIST) {
                        *s = '/';
                        return -errno;
                }
                *s = '/';
        }
        return 0;
}

/* One entry: SPEC is the header line after "== ". Failures skip it. */
static void make_entry(int dfd, char *spec, const char *content, size_t len) {
        char *arrow = strstr(spec, " -> ");
        size_t n = strlen(spec);
        bool dir = false;

        if (arrow) {
                *arrow = '\0';
                arrow += strlen(" -> ");
        } else if (n > 0 && spec[n - 1] == '/') {
                spec[n - 1] = '\0';
                dir = true;
        }
        if (!path_ok(spec) || (arrow && !target_ok(arrow)) || make_parents(dfd, spec) < 0)
                return;

        if (arrow) {
                if (symlinkat(arrow, dfd, spec) < 0)
                        return;         /* a name already made: the first one stays */
        } else if (dir) {
                (void) mkdirat(dfd, spec, 0755);
        } else if (faccessat(dfd, spec, F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
                (void) fuzz_write_file_at(dfd, spec, content, len);
        }
}

static bool is_header(const char *p, const char *end) {
        return (size_t) (end - p) >= strlen(HEADER) && memcmp(p, HEADER, strlen(HEADER)) == 0;
}

static const char *next_line(const char *p, const char *end) {
        const char *nl = memchr(p, '\n', (size_t) (end - p));

        return nl ? nl + 1 : end;
}

/* Split the input into entries and make each one below dfd. */
static void make_tree(int dfd, const char *in, size_t size) {
        const char *end = in + size, *p = in;
        size_t entries = 0;

        /* To the first header; the text before it is ignored. */
        while (p < end && !is_header(p, end))
                p = next_line(p, end);
        while (p < end && entries++ < MAX_ENTRIES) {
                const char *content = next_line(p, end), *next = content;
                size_t spec_len = (size_t) (content - p) - strlen(HEADER);
                _cleanup_free_ char *spec = NULL;

                if (content[-1] == '\n')
                        spec_len--;
                spec = fuzz_strndup((const uint8_t *) p + strlen(HEADER), spec_len);
                while (next < end && !is_header(next, end))
                        next = next_line(next, end);
                if (strlen(spec) == spec_len)   /* no NUL in the name */
                        make_entry(dfd, spec, content, (size_t) (next - content));
                p = next;
        }
}

static void check_config(const struct bw_config *c) {
        fuzz_check(c->global.interval_usec >= BW_INTERVAL_MIN_USEC && c->global.interval_usec <= BW_INTERVAL_MAX_USEC);
        for (size_t i = 0; i < c->n_units; i++) {
                const struct bw_unit_config *u = &c->units[i];
                struct bw_unit_config copy;

                fuzz_check(bw_config_unit_name_is_valid(u->name));
                fuzz_check(i == 0 || strcmp(c->units[i - 1].name, u->name) < 0);
                fuzz_check(bw_config_find_unit(c, u->name) == u);
                fuzz_check(bw_unit_active_interval_usec(c, u) <= bw_unit_interval_usec(c, u));
                fuzz_check(bw_unit_mode(c, u) >= 0 && bw_unit_mode(c, u) < _BW_MODE_MAX);
                fuzz_check(bw_unit_class(u) >= 0 && bw_unit_class(u) < _BW_CLASS_MAX);
                (void) bw_unit_latency_target_usec(u);

                fuzz_check(bw_unit_config_copy(u, &copy) == 0);
                fuzz_check(strcmp(copy.name, u->name) == 0 && copy.cpu_quota == u->cpu_quota);
                bw_unit_config_done(&copy);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const subdirs[] = { "usr-lib", "run", "etc" };
        _cleanup_free_ char *dir = NULL, *d0 = NULL, *d1 = NULL, *d2 = NULL;
        _cleanup_(bw_config_error_done) struct bw_config_error error = { 0 };
        _cleanup_(bw_config_done) struct bw_config c = { 0 };
        _cleanup_close_ int dfd = -1;
        const char *dirs[4] = { NULL };
        int r;

        dir = fuzz_mkdtemp("config");
        fuzz_check(dir);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        fuzz_check(dfd >= 0);
        for (size_t i = 0; i < ELEMENTSOF(subdirs); i++)
                fuzz_check(mkdirat(dfd, subdirs[i], 0755) == 0);
        fuzz_check(asprintf(&d0, "%s/%s", dir, subdirs[0]) > 0 && asprintf(&d1, "%s/%s", dir, subdirs[1]) > 0 &&
                   asprintf(&d2, "%s/%s", dir, subdirs[2]) > 0);
        dirs[0] = d0, dirs[1] = d1, dirs[2] = d2;

        make_tree(dfd, (const char *) data, size);

        r = bw_config_load(dirs, &c, &error);
        if (r == 0) {
                fuzz_check(!error.message && !error.file);
                check_config(&c);
        } else {
                _cleanup_free_ char *s = bw_config_error_to_string(&error);

                fuzz_check(r < 0 && c.units == NULL && c.n_units == 0);
                fuzz_check(s && error.message);
        }

        fuzz_check(fuzz_rm_rf(dir) == 0);
        return 0;
}
