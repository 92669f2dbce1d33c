/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "bwgov/util/fileio.h"
#include "bwgov/kernel/kcheck.h"
#include "bwgov/kernel/kmanifest-parse.h"
#include "bwgov/kernel/kprobe-behaviour.h"
#include "bwgov/kernel/kprobe-siblings.h"
#include "bwgov/kernel/kprobe-run.h"
#include "bwgov/kernel/kprobe-write-order.h"
#include "bwgov/util/macro.h"

#define DEBIAN61 "Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) " \
        "12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-01-10)\n"
#define UBUNTU "Linux version 5.15.0-100-generic (buildd@lcy02-amd64-116) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) " \
        "11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #110-Ubuntu SMP Wed Feb 7 13:27:48 UTC 2024\n"
#define HOST "Linux version 6.18.44-fc-v657 (builder@sandboxing) (gcc (GCC) 15.3.0, GNU ld (GNU Binutils) " \
        "2.46) #1 SMP PREEMPT_DYNAMIC @0\n"

static const char *fixtures(void) {
        const char *dir = getenv("BWGOV_FIXTURES");

        assert_non_null(dir);
        return dir;
}

static char *fixture_path(const char *rel) {
        char *p;

        assert_true(asprintf(&p, "%s/kcheck/%s", fixtures(), rel) >= 0);
        return p;
}

static int open_fixture_dir(const char *rel) {
        _cleanup_free_ char *p = fixture_path(rel);
        int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                fail_msg("cannot open %s: %s", p, strerror(errno));
        return fd;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static void rm_rf(const char *dir) {
        assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void write_file(const char *dir, const char *name, const char *content) {
        _cleanup_free_ char *p = NULL;
        FILE *f;

        assert_true(asprintf(&p, "%s/%s", dir, name) >= 0);
        f = fopen(p, "we");
        assert_non_null(f);
        assert_int_equal(fputs(content, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static void mkdir_in(const char *dir, const char *name) {
        _cleanup_free_ char *p = NULL;

        assert_true(asprintf(&p, "%s/%s", dir, name) >= 0);
        assert_int_equal(mkdir(p, 0755), 0);
}

/* ------------------------------------------------------------------------ */
/* Versions */

struct version_case {
        const char *input;
        int r;
        unsigned major, minor, patch;
        bool patch_known;
        unsigned rc;
        enum bw_kversion_origin origin;
        const char *release;
        const char *formatted;
};

static void test_version_parse(void **state) {
        static const struct version_case cases[] = {
                { "6.18.44", 0, 6, 18, 44, true, 0, BW_KVERSION_FROM_RELEASE, "6.18.44", "6.18.44" },
                { "6.18.44-fc-v657", 0, 6, 18, 44, true, 0, BW_KVERSION_FROM_RELEASE, "6.18.44-fc-v657", "6.18.44" },
                { HOST, 0, 6, 18, 44, true, 0, BW_KVERSION_FROM_RELEASE, "6.18.44-fc-v657", "6.18.44" },
                { DEBIAN61, 0, 6, 1, 192, true, 0, BW_KVERSION_FROM_DEBIAN, "6.1.0-28-amd64", "6.1.192" },
                /* Backport: ABI name "6.1.0-0.deb11.17", version after "~bpo" */
                { "Linux version 6.1.0-0.deb11.17-amd64 (debian-kernel@lists.debian.org) (gcc-10 (Debian 10.2.1-6) "
                  "10.2.1 20210110) #1 SMP PREEMPT_DYNAMIC Debian 6.1.69-1~bpo11+1 (2024-01-05)",
                  0, 6, 1, 69, true, 0, BW_KVERSION_FROM_DEBIAN, "6.1.0-0.deb11.17-amd64", "6.1.69" },
                { "Linux version 6.12.117+deb13-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC "
                  "Debian 6.12.117-1 (2026-02-01)",
                  0, 6, 12, 117, true, 0, BW_KVERSION_FROM_DEBIAN, "6.12.117+deb13-amd64", "6.12.117" },
                /* The compiler's "(Debian 12.2.0-14)" is not the kernel's version. */
                { "Linux version 6.1.0-28-amd64 (x) (gcc-12 (Debian 12.2.0-14) 12.2.0) #1 SMP PREEMPT_DYNAMIC",
                  0, 6, 1, 0, false, 0, BW_KVERSION_FROM_RELEASE, "6.1.0-28-amd64", "6.1.?" },
                { "6.1.0-28-amd64", 0, 6, 1, 0, false, 0, BW_KVERSION_FROM_RELEASE, "6.1.0-28-amd64", "6.1.?" },
                { "6.12.117-1", 0, 6, 12, 117, true, 0, BW_KVERSION_FROM_RELEASE, "6.12.117-1", "6.12.117" },
                { "6.10.0-rc3", 0, 6, 10, 0, true, 3, BW_KVERSION_FROM_RELEASE, "6.10.0-rc3", "6.10.0-rc3" },
                { "6.10-rc3", 0, 6, 10, 0, true, 3, BW_KVERSION_FROM_RELEASE, "6.10-rc3", "6.10.0-rc3" },
                { "6.10.0-rc3-00042-gdeadbeef", 0, 6, 10, 0, true, 3, BW_KVERSION_FROM_RELEASE,
                  "6.10.0-rc3-00042-gdeadbeef", "6.10.0-rc3" },
                { UBUNTU, 0, 5, 15, 0, false, 0, BW_KVERSION_FROM_RELEASE, "5.15.0-100-generic", "5.15.?" },
                { "5.14.0-362.8.1.el9_3.x86_64", 0, 5, 14, 0, false, 0, BW_KVERSION_FROM_RELEASE,
                  "5.14.0-362.8.1.el9_3.x86_64", "5.14.?" },
                { "6.5.6-300.fc39.x86_64", 0, 6, 5, 6, true, 0, BW_KVERSION_FROM_RELEASE,
                  "6.5.6-300.fc39.x86_64", "6.5.6" },
                { "6.18", 0, 6, 18, 0, true, 0, BW_KVERSION_FROM_RELEASE, "6.18", "6.18.0" },
                { "  4.19.0\n", 0, 4, 19, 0, true, 0, BW_KVERSION_FROM_RELEASE, "4.19.0", "4.19.0" },
                /* Garbage */
                { .input = "", .r = -EINVAL },
                { .input = "Linux version ", .r = -EINVAL },
                { .input = "Linux version foo (x)", .r = -EINVAL },
                { .input = "foo", .r = -EINVAL },
                { .input = "6", .r = -EINVAL },
                { .input = "6.", .r = -EINVAL },
                { .input = ".6.1", .r = -EINVAL },
                { .input = "6.x.1", .r = -EINVAL },
                { .input = "0.1.2", .r = -EINVAL },
                { .input = "6.1.2.3", .r = -EINVAL },
                { .input = "6.10-rc0", .r = -EINVAL },
                { .input = "99999999999.1.1", .r = -EINVAL },
                { .input = "6.99999999999", .r = -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const struct version_case *c = &cases[i];
                struct bw_kversion v = { .major = 4242 };
                char buf[BW_KRELEASE_MAX];
                int r;

                r = bw_kversion_parse(c->input, &v);
                if (r != c->r)
                        fail_msg("case %zu \"%s\": r=%d, expected %d", i, c->input, r, c->r);
                if (r < 0) {
                        assert_int_equal(v.major, 4242);        /* untouched */
                        continue;
                }
                assert_int_equal(v.major, c->major);
                assert_int_equal(v.minor, c->minor);
                assert_int_equal(v.patch_known, c->patch_known);
                if (c->patch_known)
                        assert_int_equal(v.patch, c->patch);
                assert_int_equal(v.rc, c->rc);
                assert_int_equal(v.origin, c->origin);
                assert_string_equal(v.release, c->release);
                assert_string_equal(bw_kversion_format(&v, buf, sizeof buf), c->formatted);
        }
        assert_int_equal(bw_kversion_parse(NULL, &(struct bw_kversion) { 0 }), -EINVAL);
}

static void test_version_compare(void **state) {
        static const struct {
                const char *a, *b;
                int sign;
        } cases[] = {
                { "6.10.0-rc3", "6.10.0", -1 },
                { "6.10.0-rc3", "6.10.0-rc4", -1 },
                { "6.10.0", "6.10.0-rc7", 1 },
                { "6.1.93", "6.1.192", -1 },
                { "5.15.161", "6.1.1", -1 },
                { "6.18.44-fc-v657", "6.18.44", 0 },
                { DEBIAN61, "6.1.192", 0 },
                { "6.2", "6.10", -1 },
                { "7.0", "6.99", 1 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_kversion a, b;
                int c;

                assert_int_equal(bw_kversion_parse(cases[i].a, &a), 0);
                assert_int_equal(bw_kversion_parse(cases[i].b, &b), 0);
                c = bw_kversion_compare(&a, &b);
                if ((c > 0) - (c < 0) != cases[i].sign)
                        fail_msg("case %zu: compare(%s, %s) = %d", i, cases[i].a, cases[i].b, c);
                c = bw_kversion_compare(&b, &a);
                assert_int_equal((c > 0) - (c < 0), -cases[i].sign);
        }
}

static void test_has_fix(void **state) {
        /* 49217ea147df: v6.10, stable 6.1.93, 5.15.161, 6.8.12 */
        static const struct bw_kstable burst_fix[] = { { 5, 15, 161 }, { 6, 1, 93 }, { 6, 8, 12 } };
        static const struct {
                const char *version;
                enum bw_kstatus expected;
                const char *reason;
        } cases[] = {
                { HOST, BW_KSTATUS_PRESENT, "6.18.44 >= 6.10" },
                { "6.10.0", BW_KSTATUS_PRESENT, "6.10.0 >= 6.10" },
                { "6.10.0-rc3", BW_KSTATUS_UNKNOWN, "pre-release" },
                { "6.11.0-rc1", BW_KSTATUS_PRESENT, NULL },
                { DEBIAN61, BW_KSTATUS_PRESENT, "6.1.192 >= 6.1.93 (6.1 stable)" },
                { "6.1.93", BW_KSTATUS_PRESENT, NULL },
                { "6.1.92", BW_KSTATUS_ABSENT, "6.1.92 < 6.1.93 (6.1 stable)" },
                { "6.8.11", BW_KSTATUS_ABSENT, NULL },
                { "6.8.12", BW_KSTATUS_PRESENT, NULL },
                { "6.9.5", BW_KSTATUS_ABSENT, "6.9.5 < 6.10, no fix in 6.9 stable" },
                { "6.9.0-rc2", BW_KSTATUS_ABSENT, NULL },
                { "5.10.218", BW_KSTATUS_ABSENT, NULL },
                { "5.15.160", BW_KSTATUS_ABSENT, NULL },
                { "5.15.161", BW_KSTATUS_PRESENT, NULL },
                /* A distribution ABI name hides the stable level and backports. */
                { UBUNTU, BW_KSTATUS_UNKNOWN, "stable level of 5.15.? unknown (5.15.0-100-generic)" },
                { "6.1.0-28-amd64", BW_KSTATUS_UNKNOWN, NULL },
                { "5.14.0-362.8.1.el9_3.x86_64", BW_KSTATUS_UNKNOWN, NULL },
                /* ... but not a version that is new enough anyway. */
                { "6.12.0-1-amd64", BW_KSTATUS_PRESENT, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *reason = NULL;
                enum bw_kstatus st = _BW_KSTATUS_MAX;
                struct bw_kversion v;

                assert_int_equal(bw_kversion_parse(cases[i].version, &v), 0);
                assert_int_equal(bw_kversion_has_fix(&v, 6, 10, burst_fix, ELEMENTSOF(burst_fix), &st, &reason), 0);
                if (st != cases[i].expected)
                        fail_msg("case %zu (%s): %s, expected %s (%s)", i, cases[i].version,
                                 bw_kstatus_to_string(st), bw_kstatus_to_string(cases[i].expected), reason);
                assert_non_null(reason);
                if (cases[i].reason && !strstr(reason, cases[i].reason))
                        fail_msg("case %zu: reason \"%s\" lacks \"%s\"", i, reason, cases[i].reason);
        }

        /* No stable map at all: older branches are absent. And the reason is optional. */
        {
                struct bw_kversion v;
                enum bw_kstatus st;

                assert_int_equal(bw_kversion_parse("6.5.13", &v), 0);
                assert_int_equal(bw_kversion_has_fix(&v, 6, 6, NULL, 0, &st, NULL), 0);
                assert_int_equal(st, BW_KSTATUS_ABSENT);
                assert_int_equal(bw_kversion_parse("6.6.0", &v), 0);
                assert_int_equal(bw_kversion_has_fix(&v, 6, 6, NULL, 0, &st, NULL), 0);
                assert_int_equal(st, BW_KSTATUS_PRESENT);
        }
}

/* ------------------------------------------------------------------------ */
/* Enumerations */

static void test_strings(void **state) {
        assert_string_equal(bw_kstatus_to_string(BW_KSTATUS_PRESENT), "present");
        assert_string_equal(bw_kstatus_to_string(BW_KSTATUS_ABSENT), "absent");
        assert_string_equal(bw_kstatus_to_string(BW_KSTATUS_UNKNOWN), "unknown");
        assert_null(bw_kstatus_to_string(_BW_KSTATUS_MAX));

        for (int i = 0; i < _BW_KITEM_KIND_MAX; i++)
                assert_int_equal(bw_kitem_kind_from_string(bw_kitem_kind_to_string(i)), i);
        for (int i = 0; i < _BW_KIMPORTANCE_MAX; i++)
                assert_int_equal(bw_kimportance_from_string(bw_kimportance_to_string(i)), i);
        for (int i = 0; i < _BW_KEFFECT_MAX; i++)
                assert_int_equal(bw_keffect_from_string(bw_keffect_to_string(i)), i);
        for (int i = 0; i < _BW_KDETECT_MAX; i++)
                assert_int_equal(bw_kdetect_method_from_string(bw_kdetect_method_to_string(i)), i);
        for (int i = 0; i < _BW_KBEHAVIOUR_MAX; i++)
                assert_int_equal(bw_kbehaviour_from_string(bw_kbehaviour_to_string(i)), i);

        assert_string_equal(bw_kitem_kind_to_string(BW_KITEM_OUT_OF_TREE), "out-of-tree");
        assert_string_equal(bw_keffect_to_string(BW_KEFFECT_AVOID_IDENTICAL_WRITES), "avoid-identical-writes");
        assert_string_equal(bw_kdetect_method_to_string(BW_KDETECT_CPUSTAT_FIELD), "cpustat-field");
        assert_string_equal(bw_kbehaviour_to_string(BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE),
                            "burst-survives-cpumax-write");
        assert_string_equal(bw_kbehaviour_to_string(BW_KBEHAVIOUR_WRITE_ORDER), "write-order");
        assert_string_equal(bw_keffect_to_string(BW_KEFFECT_ORDER_WRITES), "order-writes");
        /* Only write-order is load-free. */
        for (int i = 0; i < _BW_KBEHAVIOUR_MAX; i++)
                assert_int_equal(bw_kbehaviour_is_load_free(i), i == BW_KBEHAVIOUR_WRITE_ORDER);
        assert_int_equal(bw_kitem_kind_from_string("upstream"), -EINVAL);
        assert_int_equal(bw_kimportance_from_string(NULL), -EINVAL);
        assert_null(bw_keffect_to_string(_BW_KEFFECT_MAX));
        assert_string_equal(bw_kverdict_to_string(BW_KVERDICT_OK), "ok");
        assert_string_equal(bw_kverdict_to_string(BW_KVERDICT_REQUIRED_MISSING), "required-missing");
        assert_string_equal(bw_kverdict_to_string(BW_KVERDICT_UNCHECKED), "could-not-check");
}

/* ------------------------------------------------------------------------ */
/* Manifest */

static char *mutated_manifest(const char *pointer, const char *value);

static void test_manifest_fixture(void **state) {
        _cleanup_free_ char *path = fixture_path("manifest/manifest.json");
        struct bw_kerrors errors = { 0 };
        struct bw_kmanifest *m = NULL;
        const struct bw_kitem *it;

        assert_int_equal(bw_kmanifest_load(AT_FDCWD, path, &m, &errors), 0);
        assert_int_equal(errors.n_errors, 0);
        assert_non_null(m);
        assert_string_equal(m->patchset_version, "fixture-1");
        assert_int_equal(m->n_branches, 2);
        assert_string_equal(m->branches[0].name, "6.1");
        assert_int_equal(m->branches[0].n_series, 1);
        assert_int_equal(m->n_files, 2);
        assert_int_equal(m->n_items, 10);

        it = bw_kmanifest_find_item(m, "cpu-max-burst-fix");
        assert_non_null(it);
        assert_int_equal(it->kind, BW_KITEM_UPSTREAM_FIX);
        assert_true(it->has_upstream);
        assert_string_equal(it->upstream_commit, "49217ea147df");
        assert_int_equal(it->release_major, 6);
        assert_int_equal(it->release_minor, 10);
        /* sorted by branch */
        assert_int_equal(it->n_stable, 3);
        assert_int_equal(it->stable[0].major, 5);
        assert_int_equal(it->stable[0].patch, 161);
        assert_int_equal(it->stable[1].minor, 1);
        assert_int_equal(it->stable[1].patch, 93);
        assert_int_equal(it->stable[2].minor, 8);
        assert_int_equal(it->n_detect, 2);
        assert_int_equal(it->detect[0].method, BW_KDETECT_VERSION);
        assert_int_equal(it->detect[1].method, BW_KDETECT_BEHAVIOUR);
        assert_int_equal(it->detect[1].behaviour, BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE);
        assert_int_equal(it->importance, BW_KIMPORTANCE_REQUIRED);
        assert_int_equal(it->effect, BW_KEFFECT_BURST_REPAIR);
        assert_true(it->verified);
        assert_null(it->note);

        it = bw_kmanifest_find_item(m, "identical-update-noop");
        assert_non_null(it);
        assert_false(it->has_upstream);
        assert_null(it->upstream_commit);
        assert_int_equal(it->n_patches, 2);
        assert_string_equal(it->patches[1], "6.12/0001-sched-fair-identical-update-noop.patch");

        it = bw_kmanifest_find_item(m, "burst-write-order");
        assert_non_null(it);
        assert_int_equal(it->n_detect, 1);
        assert_int_equal(it->detect[0].method, BW_KDETECT_BEHAVIOUR);
        assert_int_equal(it->detect[0].behaviour, BW_KBEHAVIOUR_WRITE_ORDER);
        assert_int_equal(it->effect, BW_KEFFECT_ORDER_WRITES);
        assert_int_equal(it->importance, BW_KIMPORTANCE_OPTIONAL);

        it = bw_kmanifest_find_item(m, "psi");
        assert_non_null(it);
        assert_string_equal(it->detect[0].path, "/proc/pressure/cpu");
        assert_string_equal(it->detect[1].option, "CONFIG_PSI");
        it = bw_kmanifest_find_item(m, "atomic-pool");
        assert_non_null(it);
        assert_string_equal(it->detect[0].struct_name, "cfs_bandwidth");
        assert_string_equal(it->detect[0].member, "runtime_atomic");
        it = bw_kmanifest_find_item(m, "cfs-burst");
        assert_non_null(it);
        assert_int_equal(it->detect[0].n_any, 2);
        assert_string_equal(it->detect[0].any[1], "cpu.cfs_burst_us");
        it = bw_kmanifest_find_item(m, "psi-unprivileged-triggers");
        assert_non_null(it);
        assert_false(it->verified);
        assert_string_equal(it->note, "fixture");

        assert_null(bw_kmanifest_find_item(m, "nope"));
        bw_kmanifest_free(m);

        /* A feature without a commit (a build option) is fine without "version". */
        {
                _cleanup_free_ char *doc = mutated_manifest("/items/6/upstream", "null");

                assert_int_equal(bw_kmanifest_parse(doc, strlen(doc), &m, &errors), 0);
                it = bw_kmanifest_find_item(m, "cpu-stat-local");
                assert_non_null(it);
                assert_int_equal(it->kind, BW_KITEM_FEATURE);
                assert_false(it->has_upstream);
                bw_kmanifest_free(m);
        }
        /* A feature known by its release only: "version" still works. */
        {
                _cleanup_free_ char *doc = mutated_manifest("/items/0/upstream/commit", "null");

                assert_int_equal(bw_kmanifest_parse(doc, strlen(doc), &m, &errors), 0);
                it = bw_kmanifest_find_item(m, "cfs-burst");
                assert_non_null(it);
                assert_true(it->has_upstream);
                assert_null(it->upstream_commit);
                assert_int_equal(it->release_major, 5);
                assert_int_equal(it->release_minor, 14);
                bw_kmanifest_free(m);
        }
        bw_kmanifest_free(NULL);
        bw_kerrors_done(&errors);
        bw_kerrors_done(NULL);
}

/* Walk to the parent of a "/a/0/b" pointer inside j; returns the parent and
 * the last token. */
static json_t *pointer_parent(json_t *j, const char *pointer, char **ret_last) {
        _cleanup_free_ char *copy = strdup(pointer);
        char *save = NULL, *tok, *next;

        assert_non_null(copy);
        tok = strtok_r(copy, "/", &save);
        assert_non_null(tok);
        while ((next = strtok_r(NULL, "/", &save))) {
                if (json_is_array(j))
                        j = json_array_get(j, strtoul(tok, NULL, 10));
                else
                        j = json_object_get(j, tok);
                if (!j)
                        fail_msg("bad pointer %s at %s", pointer, tok);
                tok = next;
        }
        *ret_last = strdup(tok);
        assert_non_null(*ret_last);
        return j;
}

/* The fixture manifest with one value replaced (value JSON text) or removed
 * (value NULL), as a string. */
static char *mutated_manifest(const char *pointer, const char *value) {
        _cleanup_free_ char *path = fixture_path("manifest/manifest.json"), *last = NULL;
        json_error_t err;
        json_t *root, *parent;
        char *s;

        root = json_load_file(path, 0, &err);
        assert_non_null(root);
        parent = pointer_parent(root, pointer, &last);
        if (json_is_array(parent)) {
                size_t idx = strtoul(last, NULL, 10);

                if (value)
                        assert_int_equal(json_array_set_new(parent, idx, json_loads(value, JSON_DECODE_ANY, &err)), 0);
                else
                        assert_int_equal(json_array_remove(parent, idx), 0);
        } else if (value) {
                json_t *v = json_loads(value, JSON_DECODE_ANY, &err);

                if (!v)
                        fail_msg("bad value %s: %s", value, err.text);
                assert_int_equal(json_object_set_new(parent, last, v), 0);
        } else
                assert_int_equal(json_object_del(parent, last), 0);
        s = json_dumps(root, 0);
        json_decref(root);
        assert_non_null(s);
        return s;
}

static void assert_has_error(const struct bw_kerrors *e, const char *path, const char *message, const char *what) {
        for (size_t i = 0; i < e->n_errors; i++)
                if (strcmp(e->errors[i].path, path) == 0 && strstr(e->errors[i].message, message))
                        return;
        for (size_t i = 0; i < e->n_errors; i++)
                print_message("  got %s: %s\n", e->errors[i].path, e->errors[i].message);
        fail_msg("%s: no error \"%s: ...%s...\"", what, path, message);
}

static void test_manifest_schema_errors(void **state) {
        static const struct {
                const char *pointer;
                const char *value;              /* NULL: delete */
                const char *path;
                const char *message;
        } cases[] = {
                { "/items/3/kind", "\"upstream\"", "$.items[3].kind",
                  "expected one of upstream-fix, out-of-tree, feature" },
                { "/items/3/kind", "3", "$.items[3].kind", "expected one of upstream-fix, out-of-tree, feature" },
                { "/schema", "\"io.bwgov.other\"", "$.schema", "expected \"io.bwgov.kernel-manifest\"" },
                { "/schema", NULL, "$.schema", "missing" },
                { "/schema_version", "2", "$.schema_version", "unsupported version 2, expected 1" },
                { "/schema_version", "\"1\"", "$.schema_version", "expected an integer, got a string" },
                { "/patchset_version", "\"\"", "$.patchset_version", "expected a non-empty string" },
                { "/extra", "{}", "$.extra", "unknown key" },
                { "/items", "{}", "$.items", "expected an array, got an object" },
                { "/branches", "[]", "$.branches", "expected an object, got an array" },
                { "/branches/6", "{\"base\": \"x\", \"series\": []}", "$.branches[\"6\"]",
                  "expected a branch name like \"6.1\"" },
                { "/branches/6.1/series/0", "\"6.1/nope.patch\"", "$.branches[\"6.1\"].series[0]",
                  "\"6.1/nope.patch\" is not listed in $.files" },
                { "/branches/6.1/base", NULL, "$.branches[\"6.1\"].base", "missing" },
                { "/files/0/sha256", "\"ABC\"", "$.files[0].sha256", "expected 64 lowercase hex digits" },
                { "/files/0/sha256",
                  "\"48E13F002C3954D799CC7F51A63BA71D0C42B40BDD937896F9ED2FFEA167DEDC\"",
                  "$.files[0].sha256", "expected 64 lowercase hex digits" },
                { "/files/1/path", "\"../x.patch\"", "$.files[1].path", "expected a relative path" },
                { "/files/1/path", "\"/etc/passwd\"", "$.files[1].path", "expected a relative path" },
                { "/files/1/path", "\"6.1/0001-sched-fair-identical-update-noop.patch\"", "$.files[1].path",
                  "duplicate file" },
                { "/files/0/size", "12", "$.files[0].size", "unknown key" },
                { "/items/0/importance", "\"must\"", "$.items[0].importance",
                  "expected one of required, recommended, optional" },
                { "/items/0/effect", "\"panic\"", "$.items[0].effect",
                  "expected one of none, no-burst, burst-repair, no-psi, no-psi-full, no-psi-triggers, "
                  "no-burst-stats, avoid-identical-writes" },
                { "/items/0/foo", "1", "$.items[0].foo", "unknown key" },
                { "/items/0/title", NULL, "$.items[0].title", "missing" },
                { "/items/0/verified", NULL, "$.items[0].verified", "missing" },
                { "/items/5/verified", "\"yes\"", "$.items[5].verified", "expected a boolean, got a string" },
                { "/items/5/note", "7", "$.items[5].note", "expected a string, got an integer" },
                { "/items/2/id", "\"cfs-burst\"", "$.items[2].id", "duplicate id \"cfs-burst\"" },
                { "/items/2/id", "\"Burst_Stats\"", "$.items[2].id", "expected [a-z0-9-]+" },
                { "/items/1/stable/6.1", "\"6.2.1\"", "$.items[1].stable[\"6.1\"]",
                  "expected a release of the 6.1 branch" },
                { "/items/1/stable/6.1", "\"6.1\"", "$.items[1].stable[\"6.1\"]",
                  "expected a release of the 6.1 branch" },
                { "/items/1/stable/6.1", "93", "$.items[1].stable[\"6.1\"]", "expected a release of the 6.1 branch" },
                { "/items/1/stable/6.12", "\"6.12.5\"", "$.items[1].stable[\"6.12\"]",
                  "stable branch 6.12 is not older than the mainline release 6.10" },
                { "/items/1/stable/six", "\"6.1.1\"", "$.items[1].stable.six", "expected a branch name" },
                { "/items/1/stable", "[]", "$.items[1].stable", "expected an object, got an array" },
                { "/items/1/upstream/release", "\"6\"", "$.items[1].upstream.release",
                  "expected a mainline release like \"6.10\"" },
                { "/items/1/upstream/release", "\"6.10.1\"", "$.items[1].upstream.release",
                  "expected a mainline release" },
                { "/items/1/upstream/commit", "\"XYZ\"", "$.items[1].upstream.commit",
                  "expected an abbreviated commit id" },
                /* Only a feature may leave its commit unknown. */
                { "/items/1/upstream/commit", "null", "$.items[1].upstream.commit",
                  "expected a string, got null" },
                { "/items/1/upstream", "null", "$.items[1].detect[0]",
                  "method \"version\" needs an upstream release" },
                { "/items/7/upstream", "{\"commit\": \"abcdef1\", \"release\": \"6.1\"}", "$.items[7].upstream",
                  "expected null for an out-of-tree item" },
                { "/items/7/stable", "{\"6.1\": \"6.1.5\"}", "$.items[7].stable",
                  "expected {} for an out-of-tree item" },
                { "/items/7/detect", "[{\"method\": \"version\"}]", "$.items[7].detect[0]",
                  "method \"version\" needs an upstream release" },
                { "/items/7/detect", "[]", "$.items[7].detect", "expected at least one detection method" },
                { "/items/7/patches/0", "\"nope.patch\"", "$.items[7].patches[0]",
                  "\"nope.patch\" is not listed in $.files" },
                { "/items/7/patches", "\"x\"", "$.items[7].patches", "expected an array of strings" },
                { "/items/0/detect/0/method", "\"guess\"", "$.items[0].detect[0].method",
                  "expected one of version, file, proc-file, cpustat-field, psi-full, kconfig, btf-member, "
                  "behaviour" },
                { "/items/0/detect/0/method", NULL, "$.items[0].detect[0].method", "missing" },
                { "/items/0/detect/0/any", "[]", "$.items[0].detect[0].any", "expected a non-empty array" },
                { "/items/0/detect/0/any", "[\"a/b\"]", "$.items[0].detect[0].any[0]",
                  "expected a file name without '/'" },
                { "/items/0/detect/0/any", "[\"x\", \"x\"]", "$.items[0].detect[0].any[1]", "duplicate entry" },
                { "/items/0/detect/0/path", "\"/x\"", "$.items[0].detect[0].path", "unknown key" },
                { "/items/1/detect/1/probe", "\"x\"", "$.items[1].detect[1].probe",
                  "expected one of burst-survives-cpumax-write, identical-update-noop, accounting-slack, "
                  "atomic-runtime-pool" },
                { "/items/2/detect/0/any", "[\"nr-bursts\"]", "$.items[2].detect[0].any[0]",
                  "expected a cpu.stat key" },
                { "/items/3/detect/0/path", "\"proc/pressure/cpu\"", "$.items[3].detect[0].path",
                  "expected an absolute path" },
                { "/items/3/detect/0/path", "\"/proc/../etc/shadow\"", "$.items[3].detect[0].path",
                  "expected an absolute path" },
                { "/items/3/detect/1/option", "\"PSI\"", "$.items[3].detect[1].option",
                  "expected an option name like \"CONFIG_PSI\"" },
                { "/items/8/detect/0/struct", "\"a b\"", "$.items[8].detect[0].struct", "expected a C identifier" },
                { "/items/8/detect/0/member", NULL, "$.items[8].detect[0].member", "missing" },
                { "/items/4/detect/0/extra", "true", "$.items[4].detect[0].extra", "unknown key" },
                { "/items/4/detect/0", "\"psi-full\"", "$.items[4].detect[0]", "expected an object, got a string" },
                { "/items/4", "[]", "$.items[4]", "expected an object, got an array" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *doc = mutated_manifest(cases[i].pointer, cases[i].value), *what = NULL;
                struct bw_kerrors errors = { 0 };
                struct bw_kmanifest *m = (struct bw_kmanifest *) 0x1;
                int r;

                assert_true(asprintf(&what, "case %zu (%s)", i, cases[i].pointer) >= 0);
                r = bw_kmanifest_parse(doc, strlen(doc), &m, &errors);
                if (r != -EINVAL)
                        fail_msg("%s: r=%d, expected -EINVAL", what, r);
                assert_ptr_equal(m, (struct bw_kmanifest *) 0x1);      /* untouched */
                assert_has_error(&errors, cases[i].path, cases[i].message, what);
                bw_kerrors_done(&errors);
                assert_int_equal(errors.n_errors, 0);
        }
}

static void test_manifest_raw_errors(void **state) {
        static const struct {
                const char *doc;
                const char *message;
        } cases[] = {
                { "", "line 1" },
                { "{", "line 1" },
                { "[]", "expected an object, got an array" },
                { "\"x\"", "'[' or '{' expected" },
                { "{\"schema\": \"a\", \"schema\": \"b\"}", "duplicate" },
                { "{\"schema\": \"io.bwgov.kernel-manifest\"}\n{}", "line 2" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct bw_kerrors errors = { 0 };
                struct bw_kmanifest *m = NULL;

                assert_int_equal(bw_kmanifest_parse(cases[i].doc, strlen(cases[i].doc), &m, &errors), -EINVAL);
                assert_null(m);
                assert_has_error(&errors, "$", cases[i].message, cases[i].doc);
                bw_kerrors_done(&errors);
        }

        /* Every problem is reported in one pass, and errors may be dropped. */
        {
                const char *doc = "{\"schema\": 1, \"schema_version\": 1, \"patchset_version\": \"x\", "
                                  "\"branches\": {}, \"files\": [], \"items\": [{\"id\": \"A\"}]}";
                struct bw_kerrors errors = { 0 };
                struct bw_kmanifest *m = NULL;

                assert_int_equal(bw_kmanifest_parse(doc, strlen(doc), &m, &errors), -EINVAL);
                assert_has_error(&errors, "$.schema", "expected", "multi");
                assert_has_error(&errors, "$.items[0].id", "expected [a-z0-9-]+", "multi");
                assert_has_error(&errors, "$.items[0].title", "missing", "multi");
                assert_has_error(&errors, "$.items[0].detect", "missing", "multi");
                assert_true(errors.n_errors >= 12);
                bw_kerrors_done(&errors);
                assert_int_equal(bw_kmanifest_parse(doc, strlen(doc), &m, NULL), -EINVAL);
                assert_null(m);
        }

        /* A missing file. */
        {
                struct bw_kerrors errors = { 0 };
                struct bw_kmanifest *m = NULL;

                assert_int_equal(bw_kmanifest_load(AT_FDCWD, "/nonexistent/bwgov/manifest.json", &m, &errors),
                                 -ENOENT);
                assert_has_error(&errors, "$", "cannot read /nonexistent/bwgov/manifest.json", "missing file");
                bw_kerrors_done(&errors);
        }
}

static void copy_fixture(const char *rel, const char *dir) {
        _cleanup_free_ char *src = fixture_path(rel), *dst = NULL;
        char buf[4096];
        size_t n;
        FILE *in, *out;

        assert_true(asprintf(&dst, "%s/%s", dir, strchr(rel, '/') + 1) >= 0);
        in = fopen(src, "re");
        assert_non_null(in);
        out = fopen(dst, "we");
        assert_non_null(out);
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
                assert_int_equal(fwrite(buf, 1, n, out), n);
        fclose(in);
        assert_int_equal(fclose(out), 0);
}

static bool libcrypto_mapped(void) {
        char line[512];
        bool found = false;
        FILE *f = fopen("/proc/self/maps", "re");

        assert_non_null(f);
        while (fgets(line, sizeof line, f))
                found |= strstr(line, "libcrypto") != NULL;
        fclose(f);
        return found;
}

static void manifest_digests(bool in_child) {
        char tmp[] = "/tmp/bwgov-test-kcheck-XXXXXX";
        _cleanup_close_ int dfd = -EBADF;
        struct bw_kerrors errors = { 0 };
        struct bw_kmanifest *m = NULL;

        bw_kmanifest_set_hash_in_child(in_child);
        assert_non_null(mkdtemp(tmp));
        mkdir_in(tmp, "6.1");
        mkdir_in(tmp, "6.12");
        copy_fixture("manifest/manifest.json", tmp);
        copy_fixture("manifest/6.1/0001-sched-fair-identical-update-noop.patch", tmp);
        copy_fixture("manifest/6.12/0001-sched-fair-identical-update-noop.patch", tmp);

        dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        assert_int_equal(bw_kmanifest_load(dfd, "manifest.json", &m, &errors), 0);
        assert_int_equal(bw_kmanifest_verify_files(m, dfd, &errors), 0);
        assert_int_equal(errors.n_errors, 0);

        /* One byte changed, the other file gone. */
        write_file(tmp, "6.1/0001-sched-fair-identical-update-noop.patch", "tampered\n");
        assert_int_equal(unlinkat(dfd, "6.12/0001-sched-fair-identical-update-noop.patch", 0), 0);
        assert_int_equal(bw_kmanifest_verify_files(m, dfd, &errors), -EBADMSG);
        assert_int_equal(errors.n_errors, 2);
        assert_string_equal(errors.errors[0].path, "$.files[0]");
        assert_string_equal(errors.errors[0].message,
                            "6.1/0001-sched-fair-identical-update-noop.patch: sha256 mismatch: manifest has "
                            "48e13f002c3954d799cc7f51a63ba71d0c42b40bdd937896f9ed2ffea167dedc, file has "
                            "92e78d0b032962f47792a9fa95fd981ef63e1e3ef074d536d6304c75eddbe29f");
        assert_string_equal(errors.errors[1].path, "$.files[1]");
        assert_string_equal(errors.errors[1].message, "6.12/0001-sched-fair-identical-update-noop.patch: missing");
        bw_kerrors_done(&errors);

        /* A directory in place of a file. */
        mkdir_in(tmp, "6.12/0001-sched-fair-identical-update-noop.patch");
        assert_int_equal(bw_kmanifest_verify_files(m, dfd, NULL), -EBADMSG);

        bw_kmanifest_free(m);
        rm_rf(tmp);
        bw_kmanifest_set_hash_in_child(false);
}

/* The same digests hashed in a child process (bwgovd's way): libcrypto is
 * never mapped here. Runs first, before anything loads it in-process. */
static void test_manifest_digests_in_child(void **state) {
        bool before = libcrypto_mapped();

        manifest_digests(true);
        if (!before)
                assert_false(libcrypto_mapped());
}

static void test_manifest_digests(void **state) {
        manifest_digests(false);
        assert_true(libcrypto_mapped());
}

/* ------------------------------------------------------------------------ */
/* Probes */

static struct bw_kprobe_env env_for(int bw_fd, bool v1, int v2_fd, const char *host, const struct bw_kversion *v) {
        return (struct bw_kprobe_env) {
                .bw_root_fd = bw_fd,
                .bw_is_v1 = v1,
                .v2_root_fd = v2_fd,
                .host_root = host,
                .version = v,
        };
}

static void expect(int r, struct bw_kprobe_result *res, enum bw_kstatus status, const char *how) {
        assert_int_equal(r, 0);
        if (res->status != status || (how && strcmp(res->how, how) != 0))
                fail_msg("got %s \"%s\", expected %s \"%s\"", bw_kstatus_to_string(res->status), res->how,
                         bw_kstatus_to_string(status), how ? how : "*");
        bw_kprobe_result_done(res);
        assert_null(res->how);
}

static void test_probe_file_and_cpustat(void **state) {
        _cleanup_close_ int hybrid = open_fixture_dir("hybrid/cpu"), unified = open_fixture_dir("hybrid/unified");
        _cleanup_close_ int old = open_fixture_dir("v2-old"), new = open_fixture_dir("v2-new");
        char *burst[] = { "cpu.max.burst", "cpu.cfs_burst_us" }, *local[] = { "cpu.stat.local" };
        char *bursts[] = { "nr_bursts" }, *both[] = { "burst_usec", "burst_time" };
        struct bw_kprobe_env env;
        struct bw_kprobe_result res;

        env = env_for(hybrid, true, unified, NULL, NULL);
        expect(bw_kprobe_file(&env, burst, 2, &res), &res, BW_KSTATUS_PRESENT, "file: cpu.cfs_burst_us");
        expect(bw_kprobe_file(&env, local, 1, &res), &res, BW_KSTATUS_PRESENT, "file: cpu.stat.local");
        expect(bw_kprobe_cpustat_field(&env, bursts, 1, &res), &res, BW_KSTATUS_PRESENT,
               "cpustat-field: cpu.stat has nr_bursts");
        expect(bw_kprobe_cpustat_field(&env, both, 2, &res), &res, BW_KSTATUS_PRESENT,
               "cpustat-field: cpu.stat has burst_time");

        /* v2: the root has no cpu.max*, a child with cpu.max is asked. */
        env = env_for(old, false, old, NULL, NULL);
        expect(bw_kprobe_file(&env, burst, 2, &res), &res, BW_KSTATUS_ABSENT,
               "file: no cpu.max.burst, cpu.cfs_burst_us (in system.slice)");
        expect(bw_kprobe_cpustat_field(&env, bursts, 1, &res), &res, BW_KSTATUS_ABSENT,
               "cpustat-field: cpu.stat has no nr_bursts");

        /* The first child by name that has cpu.max (not a.slice, not zz.slice);
         * the root's cpu.stat lacks the bandwidth fields, so the child's counts. */
        env = env_for(new, false, new, NULL, NULL);
        expect(bw_kprobe_file(&env, burst, 2, &res), &res, BW_KSTATUS_PRESENT, "file: cpu.max.burst (in system.slice)");
        expect(bw_kprobe_file(&env, local, 1, &res), &res, BW_KSTATUS_PRESENT, "file: cpu.stat.local (in system.slice)");
        expect(bw_kprobe_cpustat_field(&env, bursts, 1, &res), &res, BW_KSTATUS_PRESENT,
               "cpustat-field: system.slice/cpu.stat has nr_bursts");

        /* A v2 tree without the cpu controller anywhere cannot tell. */
        env = env_for(unified, false, unified, NULL, NULL);
        expect(bw_kprobe_file(&env, burst, 2, &res), &res, BW_KSTATUS_UNKNOWN,
               "file: no cpu.max.burst, cpu.cfs_burst_us in the root and no child cgroup with cpu.max");
        expect(bw_kprobe_cpustat_field(&env, bursts, 1, &res), &res, BW_KSTATUS_UNKNOWN,
               "cpustat-field: cpu.stat has no bandwidth fields");
        /* ... while a v1 root simply does not have it. */
        env = env_for(unified, true, -EBADF, NULL, NULL);
        expect(bw_kprobe_file(&env, burst, 2, &res), &res, BW_KSTATUS_ABSENT, "file: no cpu.max.burst, cpu.cfs_burst_us");

        env = env_for(-EBADF, false, -EBADF, NULL, NULL);
        expect(bw_kprobe_file(&env, burst, 2, &res), &res, BW_KSTATUS_UNKNOWN, "file: no cgroup bandwidth root");
        expect(bw_kprobe_cpustat_field(&env, bursts, 1, &res), &res, BW_KSTATUS_UNKNOWN, NULL);
}

static void test_probe_psi(void **state) {
        _cleanup_close_ int unified = open_fixture_dir("hybrid/unified"), old = open_fixture_dir("v2-old");
        _cleanup_close_ int cpu = open_fixture_dir("hybrid/cpu");
        _cleanup_free_ char *debian = fixture_path("host-debian61"), *oldhost = fixture_path("host-old");
        struct bw_kprobe_env env;
        struct bw_kprobe_result res;

        env = env_for(-EBADF, false, unified, debian, NULL);
        expect(bw_kprobe_psi_full(&env, &res), &res, BW_KSTATUS_PRESENT, "psi-full: cpu.pressure has \"full\"");
        expect(bw_kprobe_proc_file(&env, "/proc/pressure/cpu", &res), &res, BW_KSTATUS_PRESENT,
               "proc-file: /proc/pressure/cpu");

        env = env_for(-EBADF, false, old, oldhost, NULL);
        expect(bw_kprobe_psi_full(&env, &res), &res, BW_KSTATUS_ABSENT, "psi-full: cpu.pressure has only \"some\"");
        expect(bw_kprobe_proc_file(&env, "/proc/pressure/cpu", &res), &res, BW_KSTATUS_ABSENT,
               "proc-file: no /proc/pressure/cpu");

        /* No cpu.pressure in that directory / no v2 tree. */
        env = env_for(-EBADF, false, cpu, NULL, NULL);
        expect(bw_kprobe_psi_full(&env, &res), &res, BW_KSTATUS_UNKNOWN, NULL);
        env = env_for(-EBADF, false, -EBADF, NULL, NULL);
        expect(bw_kprobe_psi_full(&env, &res), &res, BW_KSTATUS_UNKNOWN, "psi-full: no cgroup2 tree");

        /* The host root prefix with a trailing slash. */
        {
                _cleanup_free_ char *slash = NULL;

                assert_true(asprintf(&slash, "%s/", debian) >= 0);
                env = env_for(-EBADF, false, -EBADF, slash, NULL);
                expect(bw_kprobe_proc_file(&env, "/proc/pressure/cpu", &res), &res, BW_KSTATUS_PRESENT, NULL);
        }
}

static void test_probe_kconfig(void **state) {
        _cleanup_free_ char *debian = fixture_path("host-debian61"), *oldhost = fixture_path("host-old");
        char tmp[] = "/tmp/bwgov-test-kcheck-XXXXXX";
        struct bw_kversion v61, v510, v618;
        struct bw_kprobe_env env;
        struct bw_kprobe_result res;
        _cleanup_free_ char *gzpath = NULL, *value = NULL, *longline = NULL;
        gzFile gz;

        assert_int_equal(bw_kversion_parse(DEBIAN61, &v61), 0);
        assert_int_equal(bw_kversion_parse("Linux version 5.10.0-30-amd64 (x) #1 SMP Debian 5.10.218-1", &v510), 0);
        assert_int_equal(bw_kversion_parse(HOST, &v618), 0);

        env = env_for(-EBADF, false, -EBADF, debian, &v61);
        expect(bw_kprobe_kconfig(&env, "CONFIG_PSI", &res), &res, BW_KSTATUS_PRESENT,
               "kconfig: CONFIG_PSI=y (/boot/config-6.1.0-28-amd64)");
        expect(bw_kprobe_kconfig(&env, "CONFIG_HZ", &res), &res, BW_KSTATUS_PRESENT,
               "kconfig: CONFIG_HZ=250 (/boot/config-6.1.0-28-amd64)");
        expect(bw_kprobe_kconfig(&env, "CONFIG_SCHED_DEBUG", &res), &res, BW_KSTATUS_PRESENT, NULL);
        expect(bw_kprobe_kconfig(&env, "CONFIG_RT_GROUP_SCHED", &res), &res, BW_KSTATUS_ABSENT,
               "kconfig: CONFIG_RT_GROUP_SCHED not set (/boot/config-6.1.0-28-amd64)");
        expect(bw_kprobe_kconfig(&env, "CONFIG_FOO", &res), &res, BW_KSTATUS_ABSENT, NULL);
        expect(bw_kprobe_kconfig(&env, "CONFIG_NOT_THERE", &res), &res, BW_KSTATUS_ABSENT, NULL);
        /* CONFIG_HZ must not match CONFIG_HZ_250 and the other way round */
        expect(bw_kprobe_kconfig(&env, "CONFIG_HZ_25", &res), &res, BW_KSTATUS_ABSENT, NULL);

        env = env_for(-EBADF, false, -EBADF, oldhost, &v510);
        expect(bw_kprobe_kconfig(&env, "CONFIG_PSI", &res), &res, BW_KSTATUS_ABSENT,
               "kconfig: CONFIG_PSI not set (/boot/config-5.10.0-30-amd64)");

        /* No config for this release, no version: cannot tell. */
        env = env_for(-EBADF, false, -EBADF, oldhost, &v618);
        expect(bw_kprobe_kconfig(&env, "CONFIG_PSI", &res), &res, BW_KSTATUS_UNKNOWN,
               "kconfig: no readable /proc/config.gz or /boot/config-6.18.44-fc-v657");
        env = env_for(-EBADF, false, -EBADF, oldhost, NULL);
        expect(bw_kprobe_kconfig(&env, "CONFIG_PSI", &res), &res, BW_KSTATUS_UNKNOWN,
               "kconfig: no readable /proc/config.gz");

        /* /proc/config.gz, gzip'd, wins over /boot. */
        assert_non_null(mkdtemp(tmp));
        mkdir_in(tmp, "proc");
        assert_true(asprintf(&gzpath, "%s/proc/config.gz", tmp) >= 0);
        gz = gzopen(gzpath, "wb");
        assert_non_null(gz);
        longline = malloc(3001);
        assert_non_null(longline);
        memset(longline, 'x', 3000);
        longline[3000] = '\0';
        assert_true(gzprintf(gz, "CONFIG_CMDLINE=\"%s CONFIG_FAKE=y\"\n", longline) > 0);
        assert_true(gzputs(gz, "CONFIG_CFS_BANDWIDTH=y\n# CONFIG_PSI is not set\nCONFIG_LAST=m") > 0);
        assert_int_equal(gzclose(gz), Z_OK);

        env = env_for(-EBADF, false, -EBADF, tmp, &v618);
        expect(bw_kprobe_kconfig(&env, "CONFIG_CFS_BANDWIDTH", &res), &res, BW_KSTATUS_PRESENT,
               "kconfig: CONFIG_CFS_BANDWIDTH=y (/proc/config.gz)");
        expect(bw_kprobe_kconfig(&env, "CONFIG_PSI", &res), &res, BW_KSTATUS_ABSENT, NULL);

        assert_int_equal(bw_kconfig_lookup(gzpath, "CONFIG_FAKE", &value), 0);     /* inside a long line */
        assert_null(value);
        assert_int_equal(bw_kconfig_lookup(gzpath, "CONFIG_LAST", &value), 1);     /* no final newline */
        assert_string_equal(value, "m");
        free(value);
        value = NULL;
        assert_int_equal(bw_kconfig_lookup("/nonexistent/config", "CONFIG_X", &value), -ENOENT);
        assert_null(value);

        rm_rf(tmp);
}

static void test_probe_btf(void **state) {
        struct bw_kprobe_env env = env_for(-EBADF, false, -EBADF, NULL, NULL);
        struct bw_kprobe_result res;
        _cleanup_free_ char *bogus = fixture_path("manifest/manifest.json");

        if (access("/sys/kernel/btf/vmlinux", R_OK) >= 0) {
                expect(bw_kprobe_btf_member(&env, "cfs_bandwidth", "quota", &res), &res, BW_KSTATUS_PRESENT,
                       "btf: cfs_bandwidth.quota");
                expect(bw_kprobe_btf_member(&env, "cfs_bandwidth", "bwgov_made_up_member", &res), &res,
                       BW_KSTATUS_ABSENT, "btf: no cfs_bandwidth.bwgov_made_up_member");
                expect(bw_kprobe_btf_member(&env, "bwgov_no_such_struct", "quota", &res), &res, BW_KSTATUS_ABSENT,
                       "btf: no struct bwgov_no_such_struct");
                /* A member inside an anonymous union: task_struct has had
                 * some for years; rq.cfs is a named member of struct rq. */
                expect(bw_kprobe_btf_member(&env, "rq", "cfs", &res), &res, BW_KSTATUS_PRESENT, NULL);
        } else
                expect(bw_kprobe_btf_member(&env, "cfs_bandwidth", "quota", &res), &res, BW_KSTATUS_UNKNOWN, NULL);

        /* Not a BTF file, and no file. */
        env.btf_path = bogus;
        expect(bw_kprobe_btf_member(&env, "cfs_bandwidth", "quota", &res), &res, BW_KSTATUS_UNKNOWN, NULL);
        env.btf_path = "/nonexistent/vmlinux";
        expect(bw_kprobe_btf_member(&env, "cfs_bandwidth", "quota", &res), &res, BW_KSTATUS_UNKNOWN,
               "btf: /nonexistent/vmlinux: No such file or directory");
}

/* The run-queue telemetry's view of BTF: the host's (whatever its version,
 * one of the known answers), then no BTF at all. */
static void test_probe_bpf_support(void **state) {
        struct bw_kprobe_env env = env_for(-EBADF, false, -EBADF, NULL, NULL);
        _cleanup_free_ char *bogus = fixture_path("manifest/manifest.json");
        struct bw_kbpf b;

        if (access("/sys/kernel/btf/vmlinux", R_OK) >= 0) {
                assert_int_equal(bw_kprobe_bpf_support(&env, &b), 0);
                assert_true(b.has_runqueue);
                assert_true(strcmp(b.throttled_clock, "exact") == 0 || strcmp(b.throttled_clock, "estimate") == 0);
                assert_true(strcmp(b.throttle_model, "task") == 0 || strcmp(b.throttle_model, "cfs_rq") == 0);
        }
        env.btf_path = bogus;
        assert_int_equal(bw_kprobe_bpf_support(&env, &b), 0);
        assert_false(b.has_runqueue);
        assert_string_equal(b.throttled_clock, "none");
        assert_string_equal(b.throttle_model, "unknown");
        env.btf_path = "/nonexistent/vmlinux";
        assert_int_equal(bw_kprobe_bpf_support(&env, &b), 0);
        assert_false(b.has_runqueue);
}

static void test_probe_behaviour_refused(void **state) {
        _cleanup_close_ int hybrid = open_fixture_dir("hybrid/cpu");
        _cleanup_free_ char *dir = fixture_path("hybrid/cpu");
        struct bw_kprobe_env env = env_for(hybrid, true, -EBADF, NULL, NULL);
        struct bw_kprobe_result res;
        struct stat before, after;

        assert_int_equal(stat(dir, &before), 0);
        for (int b = 0; b < _BW_KBEHAVIOUR_MAX; b++)
                expect(bw_kprobe_behaviour(&env, b, &res), &res, BW_KSTATUS_UNKNOWN, "behaviour: probe not run");

        /* Allowed, but a fixture tree is not a cgroup file system: nothing
         * may be created there. */
        env.allow_behaviour = true;
        env.scratch_prefix = "bwgov-test-probe";
        for (int b = 0; b < _BW_KBEHAVIOUR_MAX; b++)
                expect(bw_kprobe_behaviour(&env, b, &res), &res, BW_KSTATUS_UNKNOWN,
                       "behaviour: bandwidth root is not a cgroup file system");
        assert_int_equal(stat(dir, &after), 0);
        assert_int_equal(before.st_nlink, after.st_nlink);
        assert_int_equal(before.st_mtime, after.st_mtime);

        /* Load-free probes only: write-order gets past the gate (and stops
         * at the fixture tree), the busy-loop probes do not. */
        env.allow_behaviour = false;
        env.allow_load_free_behaviour = true;
        for (int b = 0; b < _BW_KBEHAVIOUR_MAX; b++)
                expect(bw_kprobe_behaviour(&env, b, &res), &res, BW_KSTATUS_UNKNOWN,
                       b == BW_KBEHAVIOUR_WRITE_ORDER ? "behaviour: bandwidth root is not a cgroup file system" :
                                                        "behaviour: probe not run");
        assert_int_equal(stat(dir, &after), 0);
        assert_int_equal(before.st_nlink, after.st_nlink);

        env.bw_root_fd = -EBADF;
        expect(bw_kprobe_behaviour(&env, BW_KBEHAVIOUR_WRITE_ORDER, &res), &res, BW_KSTATUS_UNKNOWN,
               "behaviour: no cgroup bandwidth root");
        env.allow_behaviour = true;
        expect(bw_kprobe_behaviour(&env, BW_KBEHAVIOUR_IDENTICAL_UPDATE_NOOP, &res), &res, BW_KSTATUS_UNKNOWN,
               "behaviour: no cgroup bandwidth root");
}

/* A kernel's tg_set_cfs_bandwidth() as far as the write-order probe sees
 * it, over plain files in a temporary directory: mainline refuses a quota
 * below the burst (and a burst above the quota) with EINVAL, the patched
 * kernel accepts both; burst_bug divides the burst by 1000 on a cpu.max
 * write, as kernels before 6.10 (6.1.93) did. Every accepted value is
 * written to its file, for the probe to read back. */
struct fake_kernel {
        bool patched, burst_bug, fail_all_quota;
        unsigned long long quota, burst;        /* quota 0: max */
        unsigned writes, refused;
};

static int fake_put(int dir_fd, const char *name, const char *value) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_WRONLY | O_TRUNC | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return dprintf(fd, "%s\n", value) < 0 ? -EIO : 0;
}

static int fake_write(int dir_fd, const char *name, const char *value, void *userdata) {
        struct fake_kernel *k = userdata;
        unsigned long long v = strtoull(value, NULL, 10);
        char b[32];

        k->writes++;
        if (strcmp(name, "cpu.cfs_period_us") == 0)
                return fake_put(dir_fd, name, value);
        if (strcmp(name, "cpu.cfs_quota_us") == 0 || strcmp(name, "cpu.max") == 0) {
                /* The bug passed the burst in the wrong unit, before the check. */
                unsigned long long burst = k->burst_bug && strcmp(name, "cpu.max") == 0 ? k->burst / 1000 : k->burst;

                if (k->fail_all_quota || (!k->patched && v < burst)) {
                        k->refused++;
                        return -EINVAL;
                }
                k->quota = v;
                if (burst != k->burst) {
                        k->burst = burst;
                        snprintf(b, sizeof b, "%llu", k->burst);
                        assert_int_equal(fake_put(dir_fd, "cpu.max.burst", b), 0);
                }
                return fake_put(dir_fd, name, value);
        }
        if (strcmp(name, "cpu.cfs_burst_us") == 0 || strcmp(name, "cpu.max.burst") == 0) {
                if (!k->patched && k->quota > 0 && v > k->quota) {
                        k->refused++;
                        return -EINVAL;
                }
                k->burst = v;
                return fake_put(dir_fd, name, value);
        }
        return -ENOENT;
}

/* A temporary cgroup directory of the given hierarchy, fresh. */
static int fake_cgroup(char *dir, bool v1, bool with_burst) {
        int fd;

        assert_non_null(mkdtemp(dir));
        if (v1) {
                write_file(dir, "cpu.cfs_period_us", "100000\n");
                write_file(dir, "cpu.cfs_quota_us", "-1\n");
                if (with_burst)
                        write_file(dir, "cpu.cfs_burst_us", "0\n");
        } else {
                write_file(dir, "cpu.max", "max 100000\n");
                if (with_burst)
                        write_file(dir, "cpu.max.burst", "0\n");
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        return fd;
}

/* The same probe flips with the kernel's answer to one write. */
static void test_probe_write_order(void **state) {
        struct bw_kprobe_result res;

        for (int v1 = 0; v1 <= 1; v1++) {
                char dir[] = "/tmp/bwgov-test-write-order-XXXXXX";
                _cleanup_close_ int fd = fake_cgroup(dir, v1, true);
                struct fake_kernel k = { 0 };
                char buf[64];

                /* Mainline: EINVAL below the burst, accepted once it is 0. */
                expect(bw_kprobe_write_order_at(fd, v1, fake_write, &k, &res), &res, BW_KSTATUS_ABSENT,
                       "behaviour: quota 25000 below burst 50000 refused with EINVAL (accepted with burst 0)");
                assert_int_equal(k.refused, 1);
                assert_int_equal(k.quota, 25000);
                assert_int_equal(k.burst, 0);

                /* Patched: accepted, the burst kept above the quota. */
                k = (struct fake_kernel) { .patched = true };
                expect(bw_kprobe_write_order_at(fd, v1, fake_write, &k, &res), &res, BW_KSTATUS_PRESENT,
                       "behaviour: quota 25000 accepted below burst 50000, burst kept");
                assert_int_equal(k.refused, 0);
                assert_int_equal(k.writes, v1 ? 4 : 3);
                assert_int_equal(bw_read_small_at(fd, v1 ? "cpu.cfs_burst_us" : "cpu.max.burst", 0, buf,
                                                  sizeof buf), 6);
                assert_string_equal(buf, "50000\n");
                assert_int_equal(bw_read_small_at(fd, v1 ? "cpu.cfs_quota_us" : "cpu.max", 0, buf, sizeof buf),
                                 v1 ? 6 : 13);
                assert_string_equal(buf, v1 ? "25000\n" : "25000 100000\n");

                /* Refused whatever the burst: not the order, unknown. */
                k = (struct fake_kernel) { .fail_all_quota = true };
                expect(bw_kprobe_write_order_at(fd, v1, fake_write, &k, &res), &res, BW_KSTATUS_UNKNOWN,
                       v1 ? "behaviour: cannot set up cpu.cfs_quota_us: Invalid argument" :
                            "behaviour: cannot set up cpu.max: Invalid argument");

                rm_rf(dir);
        }

        /* v2 before 6.10: the cpu.max write shrank the burst, so nothing
         * was refused; that says nothing about the order. */
        {
                char dir[] = "/tmp/bwgov-test-write-order-XXXXXX";
                _cleanup_close_ int fd = fake_cgroup(dir, false, true);
                struct fake_kernel k = { .burst_bug = true };

                expect(bw_kprobe_write_order_at(fd, false, fake_write, &k, &res), &res, BW_KSTATUS_UNKNOWN,
                       "behaviour: the cpu.max write divided the burst by 1000 (burst bug), which hides the "
                       "order check");
                rm_rf(dir);
        }

        /* No burst file (before 5.14), or no cpu.max (no cpu controller). */
        {
                char dir[] = "/tmp/bwgov-test-write-order-XXXXXX";
                _cleanup_close_ int fd = fake_cgroup(dir, true, false);
                struct fake_kernel k = { 0 };

                expect(bw_kprobe_write_order_at(fd, true, fake_write, &k, &res), &res, BW_KSTATUS_UNKNOWN,
                       "behaviour: no cpu.cfs_burst_us (no burst, nothing to order)");
                assert_int_equal(k.writes, 0);
                expect(bw_kprobe_write_order_at(fd, false, fake_write, &k, &res), &res, BW_KSTATUS_UNKNOWN,
                       "behaviour: scratch cgroup has no cpu.max" BW_KPROBE_NO_CPU_CONTROLLER);
                rm_rf(dir);
        }
}

static void test_probe_run_version(void **state) {
        struct bw_kitem item = { .has_upstream = true, .release_major = 6, .release_minor = 4,
                                 .stable = (struct bw_kstable[]) { { 6, 1, 42 } }, .n_stable = 1 };
        struct bw_kdetect d = { .method = BW_KDETECT_VERSION };
        struct bw_kversion v;
        struct bw_kprobe_env env = env_for(-EBADF, false, -EBADF, NULL, &v);
        struct bw_kprobe_result res;

        assert_int_equal(bw_kversion_parse(DEBIAN61, &v), 0);
        expect(bw_kprobe_run(&env, &item, &d, &res), &res, BW_KSTATUS_PRESENT,
               "version: 6.1.192 >= 6.1.42 (6.1 stable)");
        assert_int_equal(bw_kversion_parse("6.1.41", &v), 0);
        expect(bw_kprobe_run(&env, &item, &d, &res), &res, BW_KSTATUS_ABSENT, "version: 6.1.41 < 6.1.42 (6.1 stable)");
        env.version = NULL;
        expect(bw_kprobe_run(&env, &item, &d, &res), &res, BW_KSTATUS_UNKNOWN, "version: kernel version unknown");
        item.has_upstream = false;
        expect(bw_kprobe_run(&env, &item, &d, &res), &res, BW_KSTATUS_UNKNOWN, "version: no upstream release");
}

/* ------------------------------------------------------------------------ */
/* The whole check */

static const struct bw_kcheck_row *row_of(const struct bw_kcheck_result *r, const char *id) {
        for (size_t i = 0; i < r->n_rows; i++)
                if (strcmp(r->rows[i].id, id) == 0)
                        return &r->rows[i];
        fail_msg("no row %s", id);
        return NULL;
}

static void test_check_run(void **state) {
        _cleanup_free_ char *path = fixture_path("manifest/manifest.json");
        _cleanup_free_ char *debian = fixture_path("host-debian61"), *oldhost = fixture_path("host-old");
        _cleanup_close_ int cpu = open_fixture_dir("hybrid/cpu"), unified = open_fixture_dir("hybrid/unified");
        _cleanup_close_ int old = open_fixture_dir("v2-old");
        struct bw_kmanifest *m = NULL;
        struct bw_kcheck_result *r = NULL;
        struct bw_kversion v61, v510;
        struct bw_kprobe_env env;
        const struct bw_kcheck_row *row;
        struct bw_kcaps caps;

        assert_int_equal(bw_kmanifest_load(AT_FDCWD, path, &m, NULL), 0);
        assert_int_equal(bw_kversion_parse(DEBIAN61, &v61), 0);
        assert_int_equal(bw_kversion_parse("Linux version 5.10.0-30-amd64 (x) #1 SMP Debian 5.10.218-1", &v510), 0);

        /* Debian 6.1.192 on a hybrid host. */
        env = env_for(cpu, true, unified, debian, &v61);
        env.btf_path = "/nonexistent/vmlinux";
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        assert_int_equal(r->n_rows, 10);
        assert_string_equal(r->rows[0].id, "cfs-burst");
        assert_string_equal(r->rows[0].title, "burstable CFS bandwidth (cpu.max.burst, cpu.cfs_burst_us)");
        assert_string_equal(r->rows[0].fallback, "quota only, no burst");
        assert_int_equal(r->rows[0].status, BW_KSTATUS_PRESENT);
        assert_int_equal(r->rows[0].method, BW_KDETECT_FILE);
        row = row_of(r, "cpu-max-burst-fix");
        assert_int_equal(row->status, BW_KSTATUS_PRESENT);
        assert_int_equal(row->method, BW_KDETECT_VERSION);
        assert_string_equal(row->detected_by, "version: 6.1.192 >= 6.1.93 (6.1 stable)");
        assert_int_equal(row_of(r, "psi")->method, BW_KDETECT_PROC_FILE);
        assert_int_equal(row_of(r, "psi-cpu-full")->status, BW_KSTATUS_PRESENT);
        assert_int_equal(row_of(r, "cpu-stat-local")->status, BW_KSTATUS_PRESENT);
        row = row_of(r, "identical-update-noop");
        assert_int_equal(row->status, BW_KSTATUS_UNKNOWN);
        assert_int_equal(row->method, -1);
        assert_string_equal(row->detected_by, "behaviour: probe not run");
        row = row_of(r, "atomic-pool");
        assert_int_equal(row->status, BW_KSTATUS_UNKNOWN);
        assert_int_equal(row->kind, BW_KITEM_OUT_OF_TREE);
        assert_int_equal(row->importance, BW_KIMPORTANCE_OPTIONAL);
        assert_int_equal(r->verdict, BW_KVERDICT_OK);
        assert_int_equal(r->n_required_absent, 0);
        assert_int_equal(r->n_required_unknown, 0);
        assert_true(r->caps.has_burst);
        assert_false(r->caps.burst_bug);
        assert_true(r->caps.has_psi);
        assert_true(r->caps.has_psi_full);
        assert_true(r->caps.has_psi_triggers_unprivileged);
        assert_true(r->caps.has_burst_stats);
        assert_false(r->caps.identical_update_is_noop);
        row = row_of(r, "burst-write-order");
        assert_int_equal(row->status, BW_KSTATUS_UNKNOWN);
        assert_string_equal(row->detected_by, "behaviour: probe not run");
        assert_int_equal(row->behaviour, -1);
        assert_false(r->caps.write_order_free);
        bw_kcheck_result_free(r);

        /* Debian 5.10 on an old v2 host: burst missing, and so on. */
        env = env_for(old, false, old, oldhost, &v510);
        env.btf_path = "/nonexistent/vmlinux";
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        assert_int_equal(row_of(r, "cfs-burst")->status, BW_KSTATUS_ABSENT);
        assert_string_equal(row_of(r, "cfs-burst")->detected_by,
                            "file: no cpu.max.burst, cpu.cfs_burst_us (in system.slice)");
        assert_int_equal(row_of(r, "cpu-max-burst-fix")->status, BW_KSTATUS_ABSENT);
        row = row_of(r, "psi");
        assert_int_equal(row->status, BW_KSTATUS_ABSENT);
        assert_int_equal(row->method, BW_KDETECT_PROC_FILE);
        assert_int_equal(row_of(r, "psi-cpu-full")->status, BW_KSTATUS_ABSENT);
        assert_int_equal(r->verdict, BW_KVERDICT_REQUIRED_MISSING);
        assert_int_equal(r->n_required_absent, 2);
        bw_kcaps_conservative(&caps);
        assert_memory_equal(&r->caps, &caps, sizeof caps);
        bw_kcheck_result_free(r);

        /* The burst bug: only where cpu.max is written, i.e. on v2. */
        {
                _cleanup_close_ int new = open_fixture_dir("v2-new");
                struct bw_kversion v6150;

                assert_int_equal(bw_kversion_parse("6.1.50", &v6150), 0);
                env = env_for(new, false, new, debian, &v6150);
                assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
                assert_int_equal(row_of(r, "cpu-max-burst-fix")->status, BW_KSTATUS_ABSENT);
                assert_true(r->caps.has_burst);
                assert_true(r->caps.burst_bug);
                assert_true(r->caps.has_psi_triggers_unprivileged);     /* 6.1.50 >= 6.1.42 */
                assert_int_equal(r->verdict, BW_KVERDICT_REQUIRED_MISSING);
                bw_kcheck_result_free(r);

                env = env_for(cpu, true, unified, debian, &v6150);
                assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
                assert_int_equal(row_of(r, "cpu-max-burst-fix")->status, BW_KSTATUS_ABSENT);
                assert_true(r->caps.has_burst);
                assert_false(r->caps.burst_bug);
                bw_kcheck_result_free(r);
        }

        /* Nothing to look at: a required item undecided, all reasons kept. */
        env = env_for(-EBADF, false, -EBADF, oldhost, NULL);
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        row = row_of(r, "cfs-burst");
        assert_int_equal(row->status, BW_KSTATUS_UNKNOWN);
        assert_string_equal(row->detected_by, "file: no cgroup bandwidth root; version: kernel version unknown");
        assert_int_equal(r->verdict, BW_KVERDICT_UNCHECKED);
        assert_int_equal(r->n_required_unknown, 2);
        assert_false(r->caps.has_burst);
        assert_false(r->caps.burst_bug);
        bw_kcheck_result_free(r);
        bw_kcheck_result_free(NULL);

        bw_kmanifest_free(m);
}

/* A fake behaviour probe: the outcome of each probe comes from a table. */
static struct {
        enum bw_kstatus status;
        const char *how;
        unsigned calls;
} fake_behaviour[_BW_KBEHAVIOUR_MAX];

static int fake_behaviour_probe(const struct bw_kprobe_env *env, enum bw_kbehaviour b,
                                struct bw_kprobe_result *ret) {
        fake_behaviour[b].calls++;
        if (!fake_behaviour[b].how)
                fail_msg("no fake outcome for probe %s", bw_kbehaviour_to_string(b));
        *ret = (struct bw_kprobe_result) { .status = fake_behaviour[b].status,
                                           .how = strdup(fake_behaviour[b].how) };
        return ret->how ? 0 : -ENOMEM;
}

static void set_fake(enum bw_kbehaviour b, enum bw_kstatus status, const char *how) {
        fake_behaviour[b].status = status;
        fake_behaviour[b].how = how;
        fake_behaviour[b].calls = 0;
}

static void test_check_corroboration(void **state) {
        _cleanup_free_ char *path = fixture_path("manifest/manifest.json");
        _cleanup_free_ char *debian = fixture_path("host-debian61");
        _cleanup_close_ int cpu = open_fixture_dir("hybrid/cpu"), unified = open_fixture_dir("hybrid/unified");
        struct bw_kmanifest *m = NULL;
        struct bw_kcheck_result *r = NULL;
        const struct bw_kcheck_row *row;
        struct bw_kversion v61;
        struct bw_kprobe_env env;

        assert_int_equal(bw_kmanifest_load(AT_FDCWD, path, &m, NULL), 0);
        assert_int_equal(bw_kversion_parse(DEBIAN61, &v61), 0);
        env = env_for(cpu, true, unified, debian, &v61);
        env.btf_path = "/nonexistent/vmlinux";
        env.behaviour_probe = fake_behaviour_probe;

        /* Not allowed: the probes never run, the version decides alone. */
        set_fake(BW_KBEHAVIOUR_WRITE_ORDER, BW_KSTATUS_UNKNOWN, "behaviour: not decided here");
        set_fake(BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE, BW_KSTATUS_ABSENT, "behaviour: became 20");
        set_fake(BW_KBEHAVIOUR_IDENTICAL_UPDATE_NOOP, BW_KSTATUS_ABSENT, "behaviour: refilled");
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        assert_int_equal(fake_behaviour[BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE].calls, 0);
        assert_int_equal(fake_behaviour[BW_KBEHAVIOUR_IDENTICAL_UPDATE_NOOP].calls, 0);
        assert_string_equal(row_of(r, "cpu-max-burst-fix")->detected_by, "version: 6.1.192 >= 6.1.93 (6.1 stable)");
        assert_int_equal(row_of(r, "cpu-max-burst-fix")->behaviour, -1);
        assert_int_equal(row_of(r, "identical-update-noop")->behaviour, -1);
        bw_kcheck_result_free(r);

        /* Agreeing behaviour is added to the evidence; the deciding method stays. */
        env.allow_behaviour = true;
        set_fake(BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE, BW_KSTATUS_PRESENT, "behaviour: kept 20000");
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        row = row_of(r, "cpu-max-burst-fix");
        assert_int_equal(row->status, BW_KSTATUS_PRESENT);
        assert_int_equal(row->method, BW_KDETECT_VERSION);
        assert_string_equal(row->detected_by, "version: 6.1.192 >= 6.1.93 (6.1 stable); behaviour: kept 20000");
        assert_int_equal(row->behaviour, BW_KSTATUS_PRESENT);
        /* A behaviour-only item is decided by its probe; each probe runs once. */
        row = row_of(r, "identical-update-noop");
        assert_int_equal(row->status, BW_KSTATUS_ABSENT);
        assert_int_equal(row->method, BW_KDETECT_BEHAVIOUR);
        assert_string_equal(row->detected_by, "behaviour: refilled");
        assert_int_equal(row->behaviour, BW_KSTATUS_ABSENT);
        assert_int_equal(fake_behaviour[BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE].calls, 1);
        assert_int_equal(fake_behaviour[BW_KBEHAVIOUR_IDENTICAL_UPDATE_NOOP].calls, 1);
        /* Items without behaviour methods are untouched. */
        assert_string_equal(row_of(r, "cfs-burst")->detected_by, "file: cpu.cfs_burst_us");
        assert_int_equal(row_of(r, "cfs-burst")->behaviour, -1);
        assert_int_equal(r->verdict, BW_KVERDICT_OK);
        bw_kcheck_result_free(r);

        /* Inconclusive behaviour: kept as information, the decision stands. */
        set_fake(BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE, BW_KSTATUS_UNKNOWN, "behaviour: not applicable");
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        row = row_of(r, "cpu-max-burst-fix");
        assert_int_equal(row->status, BW_KSTATUS_PRESENT);
        assert_string_equal(row->detected_by,
                            "version: 6.1.192 >= 6.1.93 (6.1 stable); behaviour: not applicable");
        assert_int_equal(row->behaviour, BW_KSTATUS_UNKNOWN);
        bw_kcheck_result_free(r);

        /* A contradiction: the kernel does not act as its version says
         * (a distribution kernel without the stable fix, say). */
        set_fake(BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE, BW_KSTATUS_ABSENT, "behaviour: became 20");
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        row = row_of(r, "cpu-max-burst-fix");
        assert_int_equal(row->status, BW_KSTATUS_UNKNOWN);
        assert_int_equal(row->method, -1);
        assert_string_equal(row->detected_by,
                            "conflicting: version: 6.1.192 >= 6.1.93 (6.1 stable); behaviour: became 20");
        assert_int_equal(r->verdict, BW_KVERDICT_UNCHECKED);
        assert_int_equal(r->n_required_unknown, 1);
        bw_kcheck_result_free(r);

        bw_kmanifest_free(m);
}

/* write_order_free follows the load-free write-order probe, which runs
 * where the busy-loop probes do not (bwgovd's startup check). */
static void test_check_write_order(void **state) {
        _cleanup_free_ char *path = fixture_path("manifest/manifest.json");
        _cleanup_free_ char *debian = fixture_path("host-debian61");
        _cleanup_close_ int cpu = open_fixture_dir("hybrid/cpu"), unified = open_fixture_dir("hybrid/unified");
        struct bw_kmanifest *m = NULL;
        struct bw_kcheck_result *r = NULL;
        const struct bw_kcheck_row *row;
        struct bw_kversion v61;
        struct bw_kprobe_env env;

        assert_int_equal(bw_kmanifest_load(AT_FDCWD, path, &m, NULL), 0);
        assert_int_equal(bw_kversion_parse(DEBIAN61, &v61), 0);
        env = env_for(cpu, true, unified, debian, &v61);
        env.btf_path = "/nonexistent/vmlinux";
        env.behaviour_probe = fake_behaviour_probe;
        env.allow_load_free_behaviour = true;
        for (int b = 0; b < _BW_KBEHAVIOUR_MAX; b++)
                set_fake(b, BW_KSTATUS_ABSENT, "behaviour: fake");

        /* The patched kernel: present, and the capability with it. */
        set_fake(BW_KBEHAVIOUR_WRITE_ORDER, BW_KSTATUS_PRESENT, "behaviour: quota accepted");
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        row = row_of(r, "burst-write-order");
        assert_int_equal(row->status, BW_KSTATUS_PRESENT);
        assert_int_equal(row->method, BW_KDETECT_BEHAVIOUR);
        assert_int_equal(row->behaviour, BW_KSTATUS_PRESENT);
        assert_string_equal(row->detected_by, "behaviour: quota accepted");
        assert_true(r->caps.write_order_free);
        assert_int_equal(fake_behaviour[BW_KBEHAVIOUR_WRITE_ORDER].calls, 1);
        /* The busy-loop probes stayed off. */
        for (int b = 0; b < _BW_KBEHAVIOUR_MAX; b++)
                if (b != BW_KBEHAVIOUR_WRITE_ORDER)
                        assert_int_equal(fake_behaviour[b].calls, 0);
        assert_string_equal(row_of(r, "identical-update-noop")->detected_by, "behaviour: probe not run");
        assert_int_equal(row_of(r, "cpu-max-burst-fix")->behaviour, -1);
        bw_kcheck_result_free(r);

        /* Mainline: EINVAL, absent, no capability; optional, so the verdict stands. */
        set_fake(BW_KBEHAVIOUR_WRITE_ORDER, BW_KSTATUS_ABSENT, "behaviour: quota refused with EINVAL");
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        row = row_of(r, "burst-write-order");
        assert_int_equal(row->status, BW_KSTATUS_ABSENT);
        assert_false(r->caps.write_order_free);
        assert_int_equal(r->verdict, BW_KVERDICT_OK);
        bw_kcheck_result_free(r);

        /* Inconclusive: unknown, no capability. */
        set_fake(BW_KBEHAVIOUR_WRITE_ORDER, BW_KSTATUS_UNKNOWN, "behaviour: cannot create a scratch cgroup");
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        assert_int_equal(row_of(r, "burst-write-order")->status, BW_KSTATUS_UNKNOWN);
        assert_false(r->caps.write_order_free);
        bw_kcheck_result_free(r);

        /* Not allowed at all: never called, no capability. */
        env.allow_load_free_behaviour = false;
        set_fake(BW_KBEHAVIOUR_WRITE_ORDER, BW_KSTATUS_PRESENT, "behaviour: quota accepted");
        assert_int_equal(bw_kcheck_run(m, &env, &r), 0);
        assert_int_equal(fake_behaviour[BW_KBEHAVIOUR_WRITE_ORDER].calls, 0);
        assert_string_equal(row_of(r, "burst-write-order")->detected_by, "behaviour: probe not run");
        assert_false(r->caps.write_order_free);
        bw_kcheck_result_free(r);

        bw_kmanifest_free(m);
}

/* The nested-siblings verdict: used against allowed, the 7.2 guest's
 * figures (6.0 times unpatched, 0.9 times patched) and the edges. */
static void test_nested_siblings_judge(void **state) {
        const int64_t ms = 1000 * 1000;
        unsigned p;

        assert_int_equal(bw_kprobe_nested_siblings_judge(600 * ms, 100 * ms, &p), BW_KSTATUS_ABSENT);
        assert_int_equal(p, 6000);
        assert_int_equal(bw_kprobe_nested_siblings_judge(90 * ms, 100 * ms, &p), BW_KSTATUS_PRESENT);
        assert_int_equal(p, 900);
        assert_int_equal(bw_kprobe_nested_siblings_judge(200 * ms, 100 * ms, &p), BW_KSTATUS_ABSENT);
        assert_int_equal(bw_kprobe_nested_siblings_judge(150 * ms, 100 * ms, &p), BW_KSTATUS_PRESENT);
        assert_int_equal(bw_kprobe_nested_siblings_judge(50 * ms, 100 * ms, &p), BW_KSTATUS_PRESENT);
        /* Between the bounds, or starved below half the quota: cannot tell. */
        assert_int_equal(bw_kprobe_nested_siblings_judge(170 * ms, 100 * ms, &p), BW_KSTATUS_UNKNOWN);
        assert_int_equal(p, 1700);
        assert_int_equal(bw_kprobe_nested_siblings_judge(49 * ms, 100 * ms, &p), BW_KSTATUS_UNKNOWN);
        assert_int_equal(bw_kprobe_nested_siblings_judge(10 * ms, 0, &p), BW_KSTATUS_UNKNOWN);
        assert_int_equal(bw_kprobe_nested_siblings_judge(-1, 100 * ms, &p), BW_KSTATUS_UNKNOWN);
        /* A day of CPU against a millisecond does not overflow. */
        assert_int_equal(bw_kprobe_nested_siblings_judge(INT64_C(86400) * 1000 * ms, ms, &p), BW_KSTATUS_ABSENT);
        assert_int_equal(p, UINT32_MAX);
}

static void test_lockstat(void **state) {
        static const char good[] =
                "lock_stat version 0.4\n"
                "-----------------------------------------------------------------------\n"
                "                              class name    con-bounces    contentions   waittime-min"
                "   waittime-max waittime-total   waittime-avg    acq-bounces   acquisitions   holdtime-min"
                "   holdtime-max holdtime-total   holdtime-avg\n"
                "-----------------------------------------------------------------------\n"
                "\n"
                "                            &rq->__lock:            12             14           0.11"
                "           3.20          10.00           0.71           1200          98765           0.05"
                "          20.00        5000.00           0.05\n"
                "                            &rq->__lock             14          [<0>] raw_spin_rq_lock_nested+0x1c/0x30\n"
                "                            &cfs_b->lock:             3              4           0.20"
                "           1.00           2.00           0.50             40            217           0.10"
                "           2.00          30.00           0.13\n"
                "                            &cfs_b->lock              4          [<0>] __assign_cfs_rq_runtime+0x10/0x50\n"
                "                       &cfs_b->lock_key:             0              0           0.00"
                "           0.00           0.00           0.00              1             99           0.10"
                "           2.00          30.00           0.13\n"
                "                            &cfs_b->lock:             0              0           0.00"
                "           0.00           0.00           0.00              2              5           0.10"
                "           2.00          30.00           0.13\n";
        static const char absent[] = "lock_stat version 0.4\n-----\n";
        static const char warned[] = "lock_stat version 0.4\n*WARNING* lock debugging disabled!! - possibly due to a lockdep warning\n";
        static const char broken[] = "lock_stat version 0.4\n  &cfs_b->lock: 1 2 x\n";
        static const char other[] = "class name acquisitions\n";
        uint64_t v = 42;
        FILE *f;

#define LOCKSTAT(text, want_r, want_v)                                                  \
        do {                                                                            \
                f = fmemopen((void *) (text), sizeof(text) - 1, "r");                  \
                assert_non_null(f);                                                     \
                v = 42;                                                                 \
                assert_int_equal(bw_lockstat_acquisitions(f, "&cfs_b->lock", &v), want_r); \
                if ((want_r) >= 0)                                                      \
                        assert_int_equal(v, want_v);                                    \
                fclose(f);                                                              \
        } while (0)

        /* Both classes of that name, not the contention points, not a longer name. */
        LOCKSTAT(good, 1, 222);
        LOCKSTAT(absent, 0, 0);
        LOCKSTAT(warned, -ENOTRECOVERABLE, 0);
        LOCKSTAT(broken, -EBADMSG, 0);
        LOCKSTAT(other, -EBADMSG, 0);
#undef LOCKSTAT
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_manifest_digests_in_child),
                cmocka_unit_test(test_version_parse),
                cmocka_unit_test(test_version_compare),
                cmocka_unit_test(test_has_fix),
                cmocka_unit_test(test_strings),
                cmocka_unit_test(test_manifest_fixture),
                cmocka_unit_test(test_manifest_schema_errors),
                cmocka_unit_test(test_manifest_raw_errors),
                cmocka_unit_test(test_manifest_digests),
                cmocka_unit_test(test_probe_file_and_cpustat),
                cmocka_unit_test(test_probe_psi),
                cmocka_unit_test(test_probe_kconfig),
                cmocka_unit_test(test_probe_btf),
                cmocka_unit_test(test_probe_bpf_support),
                cmocka_unit_test(test_probe_behaviour_refused),
                cmocka_unit_test(test_probe_write_order),
                cmocka_unit_test(test_probe_run_version),
                cmocka_unit_test(test_check_run),
                cmocka_unit_test(test_check_corroboration),
                cmocka_unit_test(test_check_write_order),
                cmocka_unit_test(test_nested_siblings_judge),
                cmocka_unit_test(test_lockstat),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
