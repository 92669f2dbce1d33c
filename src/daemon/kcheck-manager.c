/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bridge from the Manager to kcheck_run(), kept apart so that kcheck.c
 * does not see the Manager. It goes once manager.c calls kcheck_run()
 * itself. */

#include "kcheck.h"
#include "manager.h"

int manager_check_kernel(Manager *m) {
        int r;

        r = kcheck_run(&(struct kcheck_args) {
                                .mode = m->config.global.kernel_check,
                                .manifest_path = m->manifest_path,
                                .root = m->root,
                       }, &m->kcaps, NULL);
        if (r < 0)
                return r;
        m->kcaps_known = r > 0;
        return 0;
}
