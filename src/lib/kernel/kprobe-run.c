/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One detection method of a manifest item run: the version table
 * (kversion.c) or the probe that answers it, static (kprobe.c) or behaviour
 * (kprobe-behaviour.c). The top of the kprobe files: it calls them, none of
 * them calls it (contract in include/bwgov/kernel/kprobe-run.h). */
#include "bwgov/kernel/kmanifest.h"
#include "bwgov/kernel/kprobe-behaviour.h"
#include "bwgov/kernel/kprobe-run.h"
#include "bwgov/kernel/kprobe.h"
#include "bwgov/util/kversion.h"
#include "bwgov/util/macro.h"

int bw_kprobe_run(const struct bw_kprobe_env *env, const struct bw_kitem *item, const struct bw_kdetect *d,
                  struct bw_kprobe_result *ret) {
        _cleanup_free_ char *reason = NULL;
        enum bw_kstatus status;
        int r;

        switch (d->method) {
        case BW_KDETECT_VERSION:
                if (!item || !item->has_upstream)
                        return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "version: no upstream release");
                if (!env->version)
                        return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "version: kernel version unknown");
                r = bw_kversion_has_fix(env->version, item->release_major, item->release_minor,
                                        item->stable, item->n_stable, &status, &reason);
                if (r < 0)
                        return r;
                return bw_kprobe_result_set(ret, status, "version: %s", reason);
        case BW_KDETECT_FILE:
                return bw_kprobe_file(env, d->any, d->n_any, ret);
        case BW_KDETECT_PROC_FILE:
                return bw_kprobe_proc_file(env, d->path, ret);
        case BW_KDETECT_CPUSTAT_FIELD:
                return bw_kprobe_cpustat_field(env, d->any, d->n_any, ret);
        case BW_KDETECT_PSI_FULL:
                return bw_kprobe_psi_full(env, ret);
        case BW_KDETECT_KCONFIG:
                return bw_kprobe_kconfig(env, d->option, ret);
        case BW_KDETECT_BTF_MEMBER:
                return bw_kprobe_btf_member(env, d->struct_name, d->member, ret);
        case BW_KDETECT_BEHAVIOUR:
                return bw_kprobe_behaviour(env, d->behaviour, ret);
        default:
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "unknown method");
        }
}
