/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/kernelcheck.h"
#include "config.h"
#include "kcheck.h"
#include "log.h"
#include "manager.h"


static void log_errors(int level, const char *what, const struct bw_kerrors *e) {
        for (size_t i = 0; i < e->n_errors; i++)
                log_internal(level, 0, "%s: %s: %s", what, e->errors[i].path, e->errors[i].message);
}

int manager_check_kernel(Manager *m) {
        enum bw_kernel_check mode = m->config.global.kernel_check;
        const char *path = m->manifest_path ? m->manifest_path : bw_kmanifest_default_path();
        struct bw_kmanifest *manifest = NULL;
        struct bw_kcheck_result *res = NULL;
        struct bw_kerrors errors = {0};
        struct bw_kversion version;
        bool version_ok = false, files_ok = false;
        enum bw_kverdict verdict = BW_KVERDICT_UNCHECKED;
        int level = mode == BW_KERNEL_CHECK_STRICT ? LOG_ERR : LOG_WARNING;
        int r;

        bw_kcaps_conservative(&m->kcaps);
        m->kcaps_known = false;
        if (mode == BW_KERNEL_CHECK_OFF) {
                log_info("Kernel check disabled (KernelCheck=off)");
                return 0;
        }

        version_ok = bw_kversion_read("/proc/version", &version) >= 0;

        r = bw_kmanifest_load(AT_FDCWD, path, &manifest, &errors);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0) {
                log_internal(level, r, "Kernel check: cannot use manifest %s: %s", path, STRERROR(r));
                log_errors(level, path, &errors);
                goto verdict;
        }
        {
                _cleanup_free_ char *dir = strdup(path);
                _cleanup_close_ int dfd = -1;
                char *slash;

                if (!dir)
                        return log_oom();
                slash = strrchr(dir, '/');
                if (slash)
                        *slash = '\0';
                dfd = open(slash ? (dir[0] ? dir : "/") : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                r = dfd < 0 ? -errno : bw_kmanifest_verify_files(manifest, dfd, &errors);
                if (r == -ENOMEM)
                        return log_oom();
                files_ok = r >= 0;
                if (!files_ok) {
                        log_internal(level, 0, "Kernel check: patch files do not match %s", path);
                        log_errors(level, path, &errors);
                }
        }

        {
                struct bw_kprobe_env env = {
                        .bw_root_fd = m->root->bw_fd,
                        .bw_is_v1 = m->root->layout != BW_CG_LAYOUT_V2,
                        .v2_root_fd = m->root->v2_fd,
                        .host_root = NULL,
                        .btf_path = NULL,
                        .version = version_ok ? &version : NULL,
                        .allow_behaviour = false,
                        .scratch_prefix = NULL,
                };
                r = bw_kcheck_run(manifest, &env, &res);
                if (r < 0) {
                        bw_kmanifest_free(manifest);
                        bw_kerrors_done(&errors);
                        return log_oom();
                }
        }

        log_info("Kernel check against %s (%s):", path, version_ok ? version.release : "version unknown");
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
        m->kcaps = res->caps;
        m->kcaps_known = true;
        verdict = files_ok ? res->verdict : BW_KVERDICT_UNCHECKED;

verdict:
        bw_kcheck_result_free(res);
        bw_kmanifest_free(manifest);
        bw_kerrors_done(&errors);

        if (verdict == BW_KVERDICT_OK) {
                log_info("Kernel check: every required item present");
                return 0;
        }
        log_internal(level, 0, "Kernel check: %s%s", bw_kverdict_to_string(verdict),
                     mode == BW_KERNEL_CHECK_STRICT ? ", refusing to start (KernelCheck=strict)" :
                                                      ", continuing with fallbacks (KernelCheck=warn)");
        return mode == BW_KERNEL_CHECK_STRICT ? -EOPNOTSUPP : 0;
}
