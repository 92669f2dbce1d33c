/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The kernel check: every manifest item probed in the order of its detect
 * list, one result table, the verdict and the capabilities the governor
 * adapts to. Includes the headers of the modules it builds on (kversion.h,
 * kmanifest.h, kprobe.h). The whole pipeline, from finding the manifest to
 * the JSON document, is kreport.h. */

#include <stdbool.h>
#include <stddef.h>

#include "bwgov/kernel/kmanifest.h"
#include "bwgov/kernel/kprobe.h"
#include "bwgov/util/kversion.h"

/* What the governor adapts to. Derived from the items by their "effect": a
 * capability is true only when the manifest has items with that effect and
 * every one of them is present (unknown counts as absent). burst_bug is true
 * when the kernel has burst, the bandwidth root is v2 (only cpu.max writes
 * corrupt the burst) and not every burst-repair item is present.
 * write_order_free needs more than presence: every order-writes item must
 * have been seen present by its behaviour probe in this run. The
 * conservative value of everything is false (see bw_kcaps_conservative()). */
struct bw_kcaps {
        bool has_burst;
        bool burst_bug;                 /* needs repair: re-write burst after quota writes */
        bool has_psi;
        bool has_psi_full;              /* implies has_psi */
        bool has_psi_triggers_unprivileged; /* implies has_psi */
        bool has_burst_stats;
        bool identical_update_is_noop;
        /* The kernel accepts a quota below the current burst (and a burst
         * above the quota): no writer of cpu.max / cpu.cfs_quota_us is
         * refused with EINVAL because of the burst bwgovd set, so the order
         * of quota and burst writes does not matter. True only when the
         * load-free write-order probe ran (it does at bwgovd's startup) and
         * saw a quota below the burst accepted; false when it saw EINVAL,
         * could not run, or was inconclusive. */
        bool write_order_free;
        /* From BTF, for the run-queue telemetry (src/bpf): the scheduler
         * tracepoints it attaches to (tp_btf/sched_switch), and what the
         * kernel lets it see of throttling. */
        bool has_bpf_runqueue;
        const char *bpf_throttled_clock;        /* "exact" (6.6+), "estimate" (PELT), "none" */
        const char *throttle_model;             /* "task" (6.18+), "cfs_rq", "unknown" */
};

/* The conservative capabilities used when nothing could be checked. */
void bw_kcaps_conservative(struct bw_kcaps *ret);

enum bw_kverdict {
        BW_KVERDICT_OK = 0,             /* every required item present */
        BW_KVERDICT_REQUIRED_MISSING = 1, /* some required item absent */
        BW_KVERDICT_UNCHECKED = 2,      /* some required item unknown, or the check failed */
};

/* "ok", "required-missing", "could-not-check". The numeric values are the
 * exit codes of `bwgovctl check-kernel`. */
const char *bw_kverdict_to_string(enum bw_kverdict v);

struct bw_kcheck_row {
        char *id;
        char *title;
        enum bw_kitem_kind kind;
        enum bw_kimportance importance;
        enum bw_keffect effect;
        char *fallback;
        enum bw_kstatus status;
        int method;                     /* enum bw_kdetect_method that decided, -1 if none did */
        char *detected_by;              /* "file: cpu.cfs_burst_us", or why nothing decided */
        int behaviour;                  /* enum bw_kstatus the item's behaviour probe saw,
                                         * -1 if none ran */
};

struct bw_kcheck_result {
        struct bw_kcheck_row *rows;     /* in manifest order */
        size_t n_rows;
        struct bw_kcaps caps;
        enum bw_kverdict verdict;
        size_t n_required_absent;
        size_t n_required_unknown;
};

/* Probe every item of m. Behaviour probes run at most once each per call.
 * Returns 0 and a result owning its strings (it does not reference m), or
 * -ENOMEM. */
int bw_kcheck_run(const struct bw_kmanifest *m, const struct bw_kprobe_env *env, struct bw_kcheck_result **ret);

void bw_kcheck_result_free(struct bw_kcheck_result *r);
