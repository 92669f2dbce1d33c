/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel manifest (io.bwgov.kernel-manifest): bw_kmanifest_parse() on
 * the input as the manifest's JSON text.
 *
 * Properties: the result is 0 or -EINVAL; a rejected manifest comes with at
 * least one error, each with a JSON path ("$...") and a message, and no
 * manifest; an accepted one has no error, unique item ids that
 * bw_kmanifest_find_item() finds, values inside their enumerations whose
 * names map back to them, SHA-256 digests of 64 lowercase hex digits, and
 * item patches that are listed files. */

#include <errno.h>
#include <string.h>

#include "bwgov/kernel/kmanifest-parse.h"
#include "bwgov/util/macro.h"
#include "fuzz-util.h"

static bool listed(const struct bw_kmanifest *m, const char *path) {
        for (size_t i = 0; i < m->n_files; i++)
                if (strcmp(m->files[i].path, path) == 0)
                        return true;
        return false;
}

static void check_item(const struct bw_kmanifest *m, const struct bw_kitem *it) {
        fuzz_check(it->id && it->title);
        fuzz_check(bw_kmanifest_find_item(m, it->id) == it);
        fuzz_check(bw_kitem_kind_from_string(bw_kitem_kind_to_string(it->kind)) == (int) it->kind);
        fuzz_check(bw_kimportance_from_string(bw_kimportance_to_string(it->importance)) == (int) it->importance);
        fuzz_check(bw_keffect_from_string(bw_keffect_to_string(it->effect)) == (int) it->effect);
        /* A commit only with an upstream release; a feature may have the
         * release without its commit. */
        fuzz_check(!it->upstream_commit || it->has_upstream);
        fuzz_check(it->upstream_commit || !it->has_upstream || it->kind == BW_KITEM_FEATURE);
        for (size_t i = 0; i < it->n_patches; i++)
                fuzz_check(listed(m, it->patches[i]));
        for (size_t i = 0; i < it->n_detect; i++) {
                const struct bw_kdetect *d = &it->detect[i];

                fuzz_check(bw_kdetect_method_from_string(bw_kdetect_method_to_string(d->method)) == (int) d->method);
                if (d->method == BW_KDETECT_BEHAVIOUR)
                        fuzz_check(bw_kbehaviour_to_string(d->behaviour) != NULL);
        }
}

static void check_manifest(const struct bw_kmanifest *m) {
        fuzz_check(m->patchset_version);
        for (size_t i = 0; i < m->n_files; i++) {
                fuzz_check(strlen(m->files[i].sha256) == 64);
                fuzz_check(strspn(m->files[i].sha256, "0123456789abcdef") == 64);
        }
        for (size_t i = 0; i < m->n_branches; i++)
                for (size_t j = 0; j < m->branches[i].n_series; j++)
                        fuzz_check(listed(m, m->branches[i].series[j]));
        for (size_t i = 0; i < m->n_items; i++)
                check_item(m, &m->items[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(bw_kerrors_done) struct bw_kerrors errors = { 0 };
        struct bw_kmanifest *m = NULL;
        int r;

        r = bw_kmanifest_parse((const char *) data, size, &m, &errors);
        fuzz_check(r == 0 || r == -EINVAL);
        if (r < 0) {
                fuzz_check(!m && errors.n_errors > 0);
                for (size_t i = 0; i < errors.n_errors; i++)
                        fuzz_check(errors.errors[i].path && errors.errors[i].path[0] == '$' &&
                                   errors.errors[i].message);
                return 0;
        }
        fuzz_check(m && errors.n_errors == 0);
        check_manifest(m);
        bw_kmanifest_free(m);
        return 0;
}
