/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel-check pipeline (kreport.c) on the fixture trees of
 * tests/fixtures/kcheck, without root: what the report holds when
 * everything is there, when the manifest, its files, the cgroup tree or the
 * kernel version are missing, the behaviour-probe decision, and the one JSON
 * shape of the items. */

#include <errno.h>
#include <fcntl.h>
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
#include <cmocka.h>

#include "bwgov/kernel/kreport.h"
#include "bwgov/util/macro.h"

#define MANIFEST "kcheck/manifest/manifest.json"

/* Relative paths, as in tests/integration/check-kernel-golden.sh. */
static int setup(void **state) {
        const char *dir = getenv("BWGOV_FIXTURES");

        assert_non_null(dir);
        assert_int_equal(chdir(dir), 0);
        return 0;
}

static struct bw_kreport *run(const struct bw_kreport_args *a) {
        struct bw_kreport *rep = NULL;

        assert_int_equal(bw_kreport_run(a, &rep), 0);
        assert_non_null(rep);
        return rep;
}

static void test_complete(void **state) {
        struct bw_kreport *rep = run(&(struct bw_kreport_args) {
                .manifest_path = MANIFEST,
                .cgroup_root = "kcheck/hybrid",
                .host_root = "kcheck/host-debian61",
                .probe = -1,
        });

        assert_string_equal(rep->manifest_path, MANIFEST);
        assert_non_null(rep->manifest);
        assert_int_equal(rep->manifest_error, 0);
        assert_true(rep->files_ok);
        assert_int_equal(rep->errors.n_errors, 0);
        assert_true(rep->version_ok);
        assert_null(rep->version_error);
        assert_string_equal(rep->version.release, "6.1.0-28-amd64");
        assert_non_null(rep->root);
        assert_int_equal(rep->root->layout, BW_CG_LAYOUT_HYBRID);
        /* -1 means "when privileged", and the caller said it is not; the
         * load-free probes run for everyone (here they stop at the fixture
         * tree, which is no cgroup file system). */
        assert_false(rep->probes_allowed);
        assert_true(rep->load_free_probes_allowed);
        assert_string_equal(rep->probes_note, "load-free only (the others need root)");
        assert_string_equal(rep->result->rows[bw_kmanifest_find_item(rep->manifest, "burst-write-order") -
                                              rep->manifest->items].detected_by,
                            "behaviour: bandwidth root is not a cgroup file system");
        assert_false(rep->result->caps.write_order_free);
        assert_non_null(rep->result);
        assert_int_equal(rep->result->n_rows, rep->manifest->n_items);
        assert_int_equal(rep->verdict, BW_KVERDICT_OK);
        assert_null(bw_kreport_problem(rep));
        bw_kreport_free(rep);
}

static void test_required_missing(void **state) {
        struct bw_kreport *rep = run(&(struct bw_kreport_args) {
                .manifest_path = MANIFEST,
                .cgroup_root = "kcheck/v2-old",
                .host_root = "kcheck/host-old",
                .probe = 0,
        });

        assert_int_equal(rep->verdict, BW_KVERDICT_REQUIRED_MISSING);
        assert_int_equal(rep->result->n_required_absent, 2);
        /* bwgovd's startup check: the load-free probes still run. */
        assert_false(rep->probes_allowed);
        assert_true(rep->load_free_probes_allowed);
        assert_string_equal(rep->probes_note, "load-free only (--no-probe)");
        assert_null(bw_kreport_problem(rep));
        bw_kreport_free(rep);
}

static void test_no_manifest(void **state) {
        struct bw_kreport *rep = run(&(struct bw_kreport_args) {
                .manifest_path = "kcheck/nonexistent.json",
                .cgroup_root = "kcheck/hybrid",
                .host_root = "kcheck/host-debian61",
        });

        assert_null(rep->manifest);
        assert_int_equal(rep->manifest_error, -ENOENT);
        assert_int_equal(rep->errors.n_errors, 1);
        assert_string_equal(rep->errors.errors[0].path, "$");
        assert_null(rep->result);
        assert_int_equal(rep->verdict, BW_KVERDICT_UNCHECKED);
        assert_string_equal(bw_kreport_problem(rep), "the manifest could not be loaded");
        bw_kreport_free(rep);

        rep = run(&(struct bw_kreport_args) {
                .manifest_path = "kcheck/broken/manifest.json",
                .cgroup_root = "kcheck/hybrid",
        });
        assert_null(rep->manifest);
        assert_int_equal(rep->manifest_error, -EINVAL);
        assert_true(rep->errors.n_errors > 0);
        assert_int_equal(rep->verdict, BW_KVERDICT_UNCHECKED);
        bw_kreport_free(rep);
}

/* The manifest without the patch files it lists: loaded and probed, but the
 * verdict cannot be trusted. */
static void test_files_missing(void **state) {
        char tmp[] = "/tmp/bwgov-test-kreport-XXXXXX", path[64];
        _cleanup_free_ char *buf = NULL;
        struct bw_kreport *rep;
        FILE *in, *out;
        size_t n;

        assert_non_null(mkdtemp(tmp));
        snprintf(path, sizeof path, "%s/manifest.json", tmp);
        in = fopen(MANIFEST, "re");
        out = fopen(path, "we");
        assert_non_null(in);
        assert_non_null(out);
        buf = malloc(1 << 16);
        assert_non_null(buf);
        n = fread(buf, 1, 1 << 16, in);
        assert_int_equal(fwrite(buf, 1, n, out), n);
        fclose(in);
        assert_int_equal(fclose(out), 0);

        rep = run(&(struct bw_kreport_args) {
                .manifest_path = path,
                .cgroup_root = "kcheck/hybrid",
                .host_root = "kcheck/host-debian61",
        });
        assert_non_null(rep->manifest);
        assert_false(rep->files_ok);
        assert_int_equal(rep->errors.n_errors, rep->manifest->n_files);
        assert_string_equal(rep->errors.errors[0].path, "$.files[0]");
        assert_non_null(rep->result);
        assert_int_equal(rep->result->verdict, BW_KVERDICT_OK);
        assert_int_equal(rep->verdict, BW_KVERDICT_UNCHECKED);
        assert_string_equal(bw_kreport_problem(rep), "the manifest's files do not match their digests");
        bw_kreport_free(rep);

        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(tmp), 0);
}

/* No cgroup tree and no kernel version: both recorded, the items still
 * probed with what is left. */
static void test_no_root_no_version(void **state) {
        struct bw_kreport *rep = run(&(struct bw_kreport_args) {
                .manifest_path = MANIFEST,
                .cgroup_root = "kcheck/nonexistent",
                .proc_version = "kcheck/nonexistent-version",
                .probe = 1,
                .privileged = true,
        });

        assert_null(rep->root);
        assert_non_null(rep->root_error);
        assert_non_null(strstr(rep->root_error, "no cgroup CPU bandwidth controller found in kcheck/nonexistent"));
        assert_false(rep->probes_allowed);
        assert_false(rep->load_free_probes_allowed);
        assert_string_equal(rep->probes_note, "not run (no cgroup bandwidth root)");
        assert_false(rep->version_ok);
        assert_string_equal(rep->version_error, "kcheck/nonexistent-version: No such file or directory");
        assert_non_null(rep->result);
        assert_int_equal(rep->verdict, BW_KVERDICT_UNCHECKED);
        bw_kreport_free(rep);
}

/* Roots handed in are used, not opened again, and not freed by the report. */
static void test_borrowed_root(void **state) {
        struct bw_cg_root *root = NULL;
        struct bw_kreport *rep;

        assert_int_equal(bw_cg_root_open_dir("kcheck/v2-new", &root), 0);
        rep = run(&(struct bw_kreport_args) {
                .manifest_path = MANIFEST,
                .root = root,
                .cgroup_root = "kcheck/nonexistent",
                .proc_version = "kcheck/proc-version-6.18",
        });
        assert_ptr_equal(rep->root, root);
        assert_null(rep->root_error);
        bw_kreport_free(rep);
        assert_true(root->bw_fd >= 0);
        bw_cg_root_free(root);
}

/* The one item shape, the same in the whole document and in the items
 * array alone; null items and capabilities without a manifest. */
static void test_json(void **state) {
        static const char *const keys[] = { "id", "title", "kind", "importance", "status", "method",
                                            "detected_by", "behaviour", "effect", "fallback" };
        struct bw_kreport *rep = run(&(struct bw_kreport_args) {
                .manifest_path = MANIFEST,
                .cgroup_root = "kcheck/hybrid",
                .host_root = "kcheck/host-debian61",
        });
        json_t *doc = bw_kreport_to_json(rep), *items = bw_kreport_items_to_json(rep), *caps, *it;
        size_t i;

        assert_non_null(doc);
        assert_non_null(items);
        assert_true(json_equal(json_object_get(doc, "items"), items));
        assert_string_equal(json_string_value(json_object_get(doc, "verdict")), "ok");
        assert_int_equal(json_array_size(items), rep->result->n_rows);
        json_array_foreach(items, i, it) {
                assert_int_equal(json_object_size(it), ELEMENTSOF(keys));
                for (size_t k = 0; k < ELEMENTSOF(keys); k++)
                        assert_non_null(json_object_get(it, keys[k]));
                assert_string_equal(json_string_value(json_object_get(it, "id")), rep->result->rows[i].id);
        }
        /* The document's capabilities are the varlink reply's, write_order_free included. */
        caps = bw_kreport_caps_to_json(rep);
        assert_non_null(json_object_get(caps, "write_order_free"));
        assert_int_equal(json_is_true(json_object_get(caps, "write_order_free")),
                         rep->result->caps.write_order_free);
        assert_true(json_equal(json_object_get(doc, "capabilities"), caps));
        assert_int_equal(json_is_true(json_object_get(caps, "has_burst")), rep->result->caps.has_burst);
        json_decref(caps);
        assert_true(json_is_true(json_object_get(json_object_get(doc, "probes"), "load_free")));
        json_decref(items);
        json_decref(doc);
        bw_kreport_free(rep);

        rep = run(&(struct bw_kreport_args) { .manifest_path = "kcheck/nonexistent.json",
                                              .cgroup_root = "kcheck/hybrid" });
        doc = bw_kreport_to_json(rep);
        items = bw_kreport_items_to_json(rep);
        assert_true(json_is_null(json_object_get(doc, "items")));
        assert_true(json_is_null(json_object_get(doc, "capabilities")));
        assert_false(json_is_true(json_object_get(json_object_get(doc, "manifest"), "valid")));
        assert_int_equal(json_array_size(items), 0);
        json_decref(items);
        json_decref(doc);
        bw_kreport_free(rep);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_complete),
                cmocka_unit_test(test_required_missing),
                cmocka_unit_test(test_no_manifest),
                cmocka_unit_test(test_files_missing),
                cmocka_unit_test(test_no_root_no_version),
                cmocka_unit_test(test_borrowed_root),
                cmocka_unit_test(test_json),
        };

        return cmocka_run_group_tests(tests, setup, NULL);
}
