/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel check: every manifest item probed in the order of its detect
 * list, one result table, the verdict and the capabilities the governor
 * adapts to. The manifest is kmanifest.c (its parser kmanifest-parse.c),
 * versions kversion.c, the probes kprobe.c and kprobe-behaviour.c; the whole
 * pipeline around this, kreport.c. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/kernel/kcheck.h"
#include "bwgov/kernel/kprobe-run.h"
#include "bwgov/kernel/kprobe-write-order.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"

static const char *const verdict_table[] = {
        [BW_KVERDICT_OK] = "ok",
        [BW_KVERDICT_REQUIRED_MISSING] = "required-missing",
        [BW_KVERDICT_UNCHECKED] = "could-not-check",
};

BW_DEFINE_STRING_TABLE_TO_STRING(bw_kverdict, enum bw_kverdict, verdict_table, ELEMENTSOF(verdict_table))

void bw_kcaps_conservative(struct bw_kcaps *ret) {
        *ret = (struct bw_kcaps) { 0 };
}

static void kcheck_row_done(struct bw_kcheck_row *row) {
        free_many(row->id, row->title, row->fallback, row->detected_by);
}

void bw_kcheck_result_free(struct bw_kcheck_result *r) {
        if (!r)
                return;
        array_done_and_free(r->rows, r->n_rows, kcheck_row_done);
        free(r);
}

static void kcheck_result_freep(struct bw_kcheck_result **r) {
        bw_kcheck_result_free(*r);
}

/* Append "; how" to *acc. */
static int append_reason(char **acc, const char *how) {
        char *n;

        if (!*acc) {
                *acc = strdup(how);
                return *acc ? 0 : -ENOMEM;
        }
        if (asprintf(&n, "%s; %s", *acc, how) < 0)
                return -ENOMEM;
        free(*acc);
        *acc = n;
        return 0;
}

static void compute_caps(const struct bw_kcheck_result *res, bool v1, struct bw_kcaps *ret) {
        bool seen[_BW_KEFFECT_MAX] = { false }, all_present[_BW_KEFFECT_MAX], all_seen_working = true;

        for (size_t e = 0; e < _BW_KEFFECT_MAX; e++)
                all_present[e] = true;
        for (size_t i = 0; i < res->n_rows; i++) {
                enum bw_keffect e = res->rows[i].effect;

                seen[e] = true;
                if (res->rows[i].status != BW_KSTATUS_PRESENT)
                        all_present[e] = false;
                /* A write refused with EINVAL is a hard failure for someone
                 * else: relax the order only on what the kernel did. */
                if (e == BW_KEFFECT_ORDER_WRITES && res->rows[i].behaviour != BW_KSTATUS_PRESENT)
                        all_seen_working = false;
        }

#define HAS(e) (seen[e] && all_present[e])
        *ret = (struct bw_kcaps) {
                .has_burst = HAS(BW_KEFFECT_NO_BURST),
                /* Only cpu.max writes corrupt the burst: never on v1. */
                .burst_bug = HAS(BW_KEFFECT_NO_BURST) && !v1 && !HAS(BW_KEFFECT_BURST_REPAIR),
                .has_psi = HAS(BW_KEFFECT_NO_PSI),
                .has_psi_full = HAS(BW_KEFFECT_NO_PSI) && HAS(BW_KEFFECT_NO_PSI_FULL),
                .has_psi_triggers_unprivileged = HAS(BW_KEFFECT_NO_PSI) && HAS(BW_KEFFECT_NO_PSI_TRIGGERS),
                .has_burst_stats = HAS(BW_KEFFECT_NO_BURST_STATS),
                .identical_update_is_noop = HAS(BW_KEFFECT_AVOID_IDENTICAL_WRITES),
                .write_order_free = HAS(BW_KEFFECT_ORDER_WRITES) && all_seen_working,
        };
#undef HAS
}

/* Behaviour probes are slow and touch the kernel: each runs at most once per
 * check, whatever number of items names it. */
struct behaviour_cache {
        struct bw_kprobe_result result[_BW_KBEHAVIOUR_MAX];
        bool done[_BW_KBEHAVIOUR_MAX];
};

static void behaviour_cache_done(struct behaviour_cache *c) {
        for (size_t b = 0; b < _BW_KBEHAVIOUR_MAX; b++)
                bw_kprobe_result_done(&c->result[b]);
}

static int row_init(struct bw_kcheck_row *row, const struct bw_kitem *it) {
        *row = (struct bw_kcheck_row) {
                .id = strdup(it->id),
                .title = strdup(it->title),
                .fallback = strdup(it->fallback),
                .kind = it->kind,
                .importance = it->importance,
                .effect = it->effect,
                .status = BW_KSTATUS_UNKNOWN,
                .method = -1,
                .behaviour = -1,
        };
        return row->id && row->title && row->fallback ? 0 : -ENOMEM;
}

/* Once a method decided, a behaviour probe's answer is evidence: agreeing or
 * inconclusive, it is added to detected_by; a contradiction leaves the item
 * unknown ("conflicting: ..."). Returns 1 on a conflict, 0, or -ENOMEM. */
static int row_corroborate(struct bw_kcheck_row *row, const struct bw_kprobe_result *use) {
        bool conflict = use->status != BW_KSTATUS_UNKNOWN && use->status != row->status;
        char *n = NULL;
        int r;

        r = append_reason(&row->detected_by, use->how);
        if (r < 0)
                return r;
        if (!conflict)
                return 0;
        if (asprintf(&n, "conflicting: %s", row->detected_by) < 0)
                return -ENOMEM;
        free(row->detected_by);
        row->detected_by = n;
        row->status = BW_KSTATUS_UNKNOWN;
        row->method = -1;
        return 1;
}

/* One detection method of IT; the answer in *ret (owned, or borrowed from
 * the cache for behaviour probes: *ret_owned says which). */
static int run_method(const struct bw_kprobe_env *env, const struct bw_kitem *it, const struct bw_kdetect *d,
                      struct behaviour_cache *cache, struct bw_kprobe_result *ret,
                      const struct bw_kprobe_result **ret_use) {
        struct bw_kprobe_result *b;
        int r;

        if (d->method != BW_KDETECT_BEHAVIOUR) {
                r = bw_kprobe_run(env, it, d, ret);
                *ret_use = ret;
                return r;
        }
        b = &cache->result[d->behaviour];
        if (!cache->done[d->behaviour]) {
                r = env->behaviour_probe && bw_kprobe_behaviour_allowed(env, d->behaviour) ?
                            env->behaviour_probe(env, d->behaviour, b) : bw_kprobe_run(env, it, d, b);
                if (r < 0)
                        return r;
                cache->done[d->behaviour] = true;
        }
        *ret_use = b;
        return 0;
}

/* Try IT's methods in order until one decides; its behaviour probes that env
 * allows still run after that (see row_corroborate()). */
static int check_item(const struct bw_kprobe_env *env, const struct bw_kitem *it, struct behaviour_cache *cache,
                      struct bw_kcheck_row *row) {
        _cleanup_free_ char *reasons = NULL;
        int r;

        for (size_t k = 0; k < it->n_detect; k++) {
                const struct bw_kdetect *d = &it->detect[k];
                struct bw_kprobe_result pr = { 0 };
                const struct bw_kprobe_result *use;
                bool probe = d->method == BW_KDETECT_BEHAVIOUR && bw_kprobe_behaviour_allowed(env, d->behaviour);

                if (row->detected_by && !probe)
                        continue;
                r = run_method(env, it, d, cache, &pr, &use);
                if (r < 0)
                        return r;
                if (probe)
                        row->behaviour = use->status;

                if (row->detected_by)
                        r = row_corroborate(row, use);
                else if (use->status != BW_KSTATUS_UNKNOWN) {
                        row->status = use->status;
                        row->method = d->method;
                        row->detected_by = strdup(use->how);
                        r = row->detected_by ? 0 : -ENOMEM;
                } else
                        r = append_reason(&reasons, use->how);
                bw_kprobe_result_done(&pr);
                if (r < 0)
                        return r;
                if (r > 0)
                        break;
        }

        if (!row->detected_by) {
                row->detected_by = reasons ? TAKE_PTR(reasons) : strdup("no detection method");
                if (!row->detected_by)
                        return -ENOMEM;
        }
        return 0;
}

int bw_kcheck_run(const struct bw_kmanifest *m, const struct bw_kprobe_env *env, struct bw_kcheck_result **ret) {
        _cleanup_(kcheck_result_freep) struct bw_kcheck_result *res = NULL;
        struct behaviour_cache cache = { 0 };
        int r = 0;

        res = calloc(1, sizeof(*res));
        if (!res)
                return -ENOMEM;
        res->rows = calloc(m->n_items + 1, sizeof(struct bw_kcheck_row));
        if (!res->rows)
                return -ENOMEM;

        for (size_t i = 0; i < m->n_items && r >= 0; i++) {
                struct bw_kcheck_row *row = &res->rows[res->n_rows++];

                r = row_init(row, &m->items[i]);
                if (r >= 0)
                        r = check_item(env, &m->items[i], &cache, row);
                if (r < 0 || row->importance != BW_KIMPORTANCE_REQUIRED)
                        continue;
                if (row->status == BW_KSTATUS_ABSENT)
                        res->n_required_absent++;
                else if (row->status == BW_KSTATUS_UNKNOWN)
                        res->n_required_unknown++;
        }
        behaviour_cache_done(&cache);
        if (r < 0)
                return r;

        compute_caps(res, env->bw_is_v1, &res->caps);
        res->verdict = res->n_required_absent > 0 ? BW_KVERDICT_REQUIRED_MISSING :
                       res->n_required_unknown > 0 ? BW_KVERDICT_UNCHECKED : BW_KVERDICT_OK;
        *ret = TAKE_PTR(res);
        return 0;
}
