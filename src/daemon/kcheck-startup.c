/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovd's startup kernel check: runs the kreport pipeline on the daemon's
 * cgroup roots, logs what it found at levels KernelCheck= chooses, and
 * turns the verdict into "start" or "refuse". */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "kcheck-startup.h"
#include "log.h"

static void log_errors(int level, const char *what, const struct bw_kerrors *e) {
        for (size_t i = 0; i < e->n_errors; i++)
                log_internal(level, 0, "%s: %s: %s", what, e->errors[i].path, e->errors[i].message);
}

static void log_report(int level, const struct bw_kreport *rep) {
        const struct bw_kcheck_result *res = rep->result;

        if (!rep->manifest) {
                log_internal(level, rep->manifest_error, "Kernel check: cannot use manifest %s: %s",
                             rep->manifest_path, STRERROR(rep->manifest_error));
                log_errors(level, rep->manifest_path, &rep->errors);
                return;
        }
        if (!rep->files_ok) {
                log_internal(level, 0, "Kernel check: patch files do not match %s", rep->manifest_path);
                log_errors(level, rep->manifest_path, &rep->errors);
        }

        log_info("Kernel check against %s (%s):", rep->manifest_path,
                 rep->version_ok ? rep->version.release : "version unknown");
        for (size_t i = 0; i < res->n_rows; i++) {
                const struct bw_kcheck_row *row = &res->rows[i];
                bool missing = row->status != BW_KSTATUS_PRESENT;
                int l = missing && row->importance == BW_KIMPORTANCE_REQUIRED ? level :
                        missing ? LOG_NOTICE : LOG_INFO;

                log_internal(l, 0, "  %-28s %-8s %s%s%s", row->id, bw_kstatus_to_string(row->status),
                             row->detected_by ? row->detected_by : "",
                             missing && row->fallback ? "; without it: " : "",
                             missing && row->fallback ? row->fallback : "");
        }
}

int kcheck_startup_run(const struct kcheck_startup_args *a, struct bw_kcaps *ret_caps, struct bw_kreport **ret_report) {
        struct bw_kreport *rep = NULL;
        bool strict = a->mode == BW_KERNEL_CHECK_STRICT;
        int level = strict ? LOG_ERR : LOG_WARNING;
        int r;

        if (a->mode == BW_KERNEL_CHECK_OFF) {
                log_info("Kernel check disabled (KernelCheck=off)");
                bw_kcaps_conservative(ret_caps);
                if (ret_report)
                        *ret_report = NULL;
                return 0;
        }

        /* The daemon's own roots, the real /proc, /boot and BTF, no busy-loop
         * behaviour probes (only the load-free write-order probe, which
         * bw_kreport_run() allows wherever there is a cgroup root). */
        r = bw_kreport_run(&(struct bw_kreport_args) {
                                .manifest_path = a->manifest_path,
                                .root = a->root,
                                .probe = 0,
                           }, &rep);
        if (r < 0)
                return log_oom();
        log_report(level, rep);

        if (rep->verdict == BW_KVERDICT_OK)
                log_info("Kernel check: every required item present");
        else
                log_internal(level, 0, "Kernel check: %s%s", bw_kverdict_to_string(rep->verdict),
                             strict ? ", refusing to start (KernelCheck=strict)" :
                                      ", continuing with fallbacks (KernelCheck=warn)");
        if (strict && rep->verdict != BW_KVERDICT_OK) {
                bw_kreport_free(rep);
                return -EOPNOTSUPP;
        }

        r = rep->result ? 1 : 0;
        if (rep->result)
                *ret_caps = rep->result->caps;
        else
                bw_kcaps_conservative(ret_caps);
        if (ret_report)
                *ret_report = rep;
        else
                bw_kreport_free(rep);
        return r;
}
