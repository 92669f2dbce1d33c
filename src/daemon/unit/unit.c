/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One governed unit (see unit.h): its cgroup (closed, vanished, its
 * descriptors, its PSI trigger closed), adoption, re-base, the write path
 * with its write-ahead intent, restore. The bottom of the unit's files:
 * unit-resolve.c, unit-sample.c, unit-intent.c and unit-tick.c call it, it
 * calls none of them (scripts/check-layout). The decisions are src/lib's
 * (baseline.c, policy.c); the manager is reached only through the
 * unit_context hooks. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bwgov/law/baseline.h"
#include "bwgov/cgroup/cpumax.h"
#include "bwgov/util/util.h"
#include "clock.h"
#include "log.h"
#include "restore.h"
#include "unit.h"
#include "unit-scope.h"
#include "bwgov/cgroup/cgroupfs-write.h"



/* ---- small helpers ------------------------------------------------------ */

const struct bw_bandwidth *unit_expected(const Unit *u) {
        return u->has_written ? &u->written : &u->baseline;
}

static struct bw_baseline_view unit_view(const Unit *u) {
        return (struct bw_baseline_view) {
                .baseline = u->baseline,
                .has_written = u->has_written,
                .written = u->written,
        };
}

enum bw_mode unit_mode(const Unit *u) {
        return bw_unit_mode(u->ctx->config, u->cfg);
}

static uint64_t unit_interval(const Unit *u) {
        return bw_unit_interval_usec(u->ctx->config, u->cfg);
}

static bool unit_has_usage(const Unit *u) {
        return u->cg && (u->cg->layout == BW_CG_LAYOUT_V2 || u->cg->usage_fd >= 0);
}

/* Mirror the unit into its saved entry (store_record_unit()). */
int unit_record(Unit *u, unsigned flags) {
        const struct store_record r = {
                .cgroup = u->cgroup_path,
                .cgroup_dev = u->cg ? (uint64_t) u->cg->bw_dev : 0,
                .cgroup_ino = u->cg ? (uint64_t) u->cg->bw_ino : 0,
                .baseline = u->baseline,
                .has_written = u->has_written,
                .written = u->written,
                .credit_usec = u->pstate.credit.credit_usec,
                .debt_usec = u->pstate.credit.debt_usec,
                .paused = u->paused,
        };
        int ret;

        ret = store_record_unit(u->ctx->store, u->name, &r, flags);
        if (ret >= 0) {
                u->mirror.credit_usec = r.credit_usec;
                u->mirror.debt_usec = r.debt_usec;
                u->mirror_recorded = true;
        }
        return ret;
}

/* ---- the cgroup and its trigger ------------------------------------------ */

void unit_trigger_close(Unit *u) {
        u->trigger.source = sd_event_source_disable_unref(u->trigger.source);
        if (u->trigger.fd >= 0)
                close(u->trigger.fd);   /* waits for an RCU grace period */
        u->trigger.fd = -1;
}

void unit_unwatch(Unit *u) {
        cgwatch_release(u->ctx->cgwatch, u->watch_wd);
        u->watch_wd = -1;
}

/* The file descriptors the unit holds, in the manager's count. */
void unit_count_fds(Unit *u) {
        unsigned n = (u->cg ? bw_cg_nfds(u->cg) : 0) + (u->scope ? bw_cg_nfds(u->scope->cg) : 0) +
                     (u->trigger.fd >= 0 ? 1 : 0);

        if (n != u->fds.held)
                unit_count(u, &(struct unit_counters) { .fds = (int64_t) n - (int64_t) u->fds.held });
        u->fds.held = (uint16_t) n;
}

static void unit_close_cgroup(Unit *u) {
        bool was_open = u->cg;

        if (u->cg)
                (void) u->ctx->hooks->claim(u, u->cgroup_path, u->cg->bw_dev, u->cg->bw_ino, false,
                                            u->ctx->userdata);
        unit_trigger_close(u);
        unit_rqstat_detach(&u->rq, *u->ctx->rqstat);
        /* Its records stay the store's: a cgroup gone is forgotten whole
         * (unit_vanished()), a lever still to put back is put back by its
         * path (restore.h). */
        unit_levers_done(&u->lv);
        quotawatch_remove(u->ctx->quotawatch, &u->quota_watch);
        usage_gate_put(u->sampler.gate);
        u->sampler.gate = NULL;
        u->sampler.gate_valid = false;
        if (u->cg && !unit_cgroup_path_owned(u)) {
                /* The path outlives the open cgroup (status, the next
                 * resolve's messages): a copy of its own now. */
                u->cgroup_path = strdup(u->cg->path);
                if (!u->cgroup_path)
                        log_oom();
        }
        bw_cg_free(u->cg);
        u->cg = NULL;
        unit_scope_close(u);
        u->sampler.has_last_stat = false;
        u->ancestor.has = false;
        u->sampler.quiet = false;
        u->sampler.quiet_samples = 0;
        u->sampler.parked = false;
        u->sampler.wake_armed = false;
        u->trigger.refused = false;
        unit_count_fds(u);
        if (was_open)
                u->ctx->hooks->cgroup_changed(u, u->ctx->userdata);
}

/* The cgroup is gone: nothing of it is left to restore, and a cgroup of
 * the same name later is a new one (systemd made it afresh, with its own
 * cpu.max) to adopt afresh: its saved entry is forgotten, so a host where
 * containers come and go keeps no trace of the ones that went. */
void unit_vanished(Unit *u) {
        /* A file gone from a cgroup that is still there (a controller
         * disabled above it, a transient error) is not a new cgroup: its
         * record stays, so that adoption finds what bwgov wrote there. */
        bool same = u->cg && bw_cg_same(u->ctx->root, u->cg) > 0;

        if (same)
                log_info("%s: cgroup %s lost its bandwidth files, keeping its baseline until they are back",
                         u->name, u->cgroup_path ? u->cgroup_path : "?");
        else
                log_info("%s: cgroup %s vanished, forgetting it", u->name, u->cgroup_path ? u->cgroup_path : "?");
        unit_close_cgroup(u);
        u->adopted = false;
        u->has_written = false;
        u->prev.has = false;
        u->prev.has_hist_rule = false;
        u->caps.latency_hold = false;
        if (same)
                return;
        store_forget(u->ctx->store, u->name);
        u->mirror_recorded = false;
        store_mark(u->ctx->store);
        /* Its decisions went with it: a new cgroup starts a new history
         * (the ring's memory too, so churn does not add up). */
        bw_history_clear(&u->hist.log);
}

int unit_fd_error(Unit *u, int r, const char *what) {
        if (r != -EMFILE && r != -ENFILE)
                return log_warning_errno(r, "%s: cannot read %s: %s", u->name, what, STRERROR(r));
        /* One line for the host, not one per unit and tick. */
        if (!*u->ctx->fd_limit_said) {
                log_error_errno(r, "Out of file descriptors (%s) opening %s of %s: units whose cgroup files cannot "
                                "be opened are not sampled until some close; raise LimitNOFILE= of bwgovd.service",
                                STRERROR(r), what, u->name);
                unit_count(u, &(struct unit_counters) { .fd_limit_said = true });
        }
        return r;
}

void unit_count(Unit *u, const struct unit_counters *delta) {
        u->ctx->hooks->count(u, delta, u->ctx->userdata);
}

/* After its sample a unit keeps the files the manager's plan allows
 * (manager_plan_fds()): all of them while they fit; near the descriptor
 * limit (ten thousand cgroups with every file held need more than 20 000)
 * what its light samples read with the directories, then only the first
 * file a light sample reads, and at last that one for a share of the
 * units. Without its directories, a unit that is not quiet keeps
 * everything while the units' count stays within the room: its next
 * sample is a full one. The rest is opened again when read (the
 * directories beneath the root). A quiet unit's light samples leave the
 * quota to its full ones when the quota file is not kept. */
void unit_fd_economy(Unit *u) {
        const struct unit_context *c = u->ctx;
        unsigned keep = *c->fd_keep;

        if (!u->cg || keep == UNIT_FILES_ALL)
                return;
        if (u->fds.rank >= *c->fd_share)
                keep = 0;
        if (!(keep & BW_CG_DIRS) && !u->sampler.quiet && *c->fds_held <= UNIT_FD_ROOM(c->fd_budget))
                return;
        if (bw_cg_release(u->cg, UNIT_FILES_ALL & ~keep) > 0)
                unit_count_fds(u);
}

void unit_attach_rqstat(Unit *u) {
        int r;

        if (!u->cg || !*u->ctx->rqstat)
                return;
        r = bw_cg_dir(u->cg, BW_CG_TREE_V2);
        if (r >= 0)
                r = unit_rqstat_attach(&u->rq, *u->ctx->rqstat, r, (uint64_t) u->cg->bw_ino, u);
        /* The gate notes again: by its activity now (unit-sample.c). */
        u->sampler.gate_valid = false;
        if (r == -EOPNOTSUPP && !u->cg->has_v2)
                /* A hybrid cgroup without its v2 twin (yet): attached
                 * when the twin is found (unit-resolve.c). */
                log_debug("%s: no run-queue wait of cgroup %s without its cgroup2 twin", u->name,
                          u->cgroup_path ? u->cgroup_path : "?");
        else if (r < 0)
                log_warning_errno(r, "%s: cannot count the run-queue wait of cgroup %s: %s", u->name,
                                  u->cgroup_path ? u->cgroup_path : "?", STRERROR(r));
}

void unit_detach_rqstat(Unit *u) {
        unit_rqstat_detach(&u->rq, *u->ctx->rqstat);
        u->sampler.gate_valid = false;
        /* Parked at its baseline, no flag wakes it now: its next sample
         * raises it to its rest (unit-tick.c). One parked at its headroom
         * parks again without a wake to count on (the manager then keeps
         * its fast host passes). */
        if ((u->sampler.at_baseline || u->sampler.wake_armed) && u->cg && !*u->ctx->stopping)
                (void) ticker_schedule(u->ctx->ticker, &u->tick, clock_now_usec(CLOCK_MONOTONIC));
        u->sampler.wake_armed = false;
}

/* The law sized the headroom for that horizon: the timer keeps to it. */
int unit_schedule(Unit *u, uint64_t from, uint64_t delay) {
        return ticker_schedule(u->ctx->ticker, &u->tick, from + delay);
}

/* ---- baseline: adopt, re-base, restore -------------------------------- */

void unit_params(const Unit *u, struct bw_policy_params *ret) {
        bw_baseline_params(u->ctx->config, u->cfg, &u->baseline, u->ctx->ncpus, u->ctx->burst_supported, ret);
}

void unit_update_params(Unit *u) {
        u->params_mode = unit_mode(u);
}

static void unit_take_view(Unit *u, const struct bw_baseline_view *v) {
        u->baseline = v->baseline;
        u->has_written = v->has_written;
        u->written = v->written;
}

/* The saved entry names another cgroup than the unit's now (Cgroup=
 * changed while bwgovd was away, a service found in another slice): what
 * it records is put back there, then the entry is forgotten. */
static void unit_restore_elsewhere(Unit *u) {
        const struct restore_ctx c = { .root = u->ctx->root, .store = u->ctx->store };
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC);

        store_orphan(u->ctx->store, u->name, false, now);
        if (restore_entry(&c, u->name, now, "cgroup-moved") <= 0) {
                log_warning("%s: not everything bwgovd changed on its old cgroup could be put back", u->name);
                store_forget(u->ctx->store, u->name);
        }
}

int unit_adopt(Unit *u, const struct bw_bandwidth *cur) {
        const struct bw_state_unit *su = store_find(u->ctx->store, u->name);
        char q[BW_QUOTA_STRING_MAX];
        struct bw_policy_params params;
        struct bw_adopt_plan p;

        if (su && strcmp(su->cgroup, u->cgroup_path) != 0) {
                log_info("%s: cgroup moved from %s to %s: the old one put back, its state forgotten", u->name,
                         su->cgroup, u->cgroup_path);
                unit_restore_elsewhere(u);
                su = NULL;
        } else if (su && su->cgroup_ino > 0 &&
                   (su->cgroup_dev != (uint64_t) u->cg->bw_dev || su->cgroup_ino != (uint64_t) u->cg->bw_ino)) {
                log_info("%s: cgroup %s was made anew while bwgovd was away: adopting it afresh", u->name,
                         u->cgroup_path);
                store_forget(u->ctx->store, u->name);
                su = NULL;
        }
        /* Governed again: what the entry records is the unit's to hold or
         * let go (a lever still to be put back is, by restore_due()). */
        if (su)
                store_undo_done(u->ctx->store, u->name, BW_STATE_UNDO_ENTRY);

        bw_baseline_adopt(u->cfg, su, cur, &p);
        if (su && p.ownership == BW_OWNERSHIP_OURS)
                log_info("%s: kernel holds the value we last wrote; keeping baseline quota %s",
                         u->name, bw_quota_to_string(su->baseline.quota_usec, q));
        else if (su && p.ownership == BW_OWNERSHIP_EXTERNAL) {
                u->stats.external_changes++;
                log_unit_change(LOG_NOTICE, u->name, &su->baseline, cur, "external-change",
                                "%s: value changed while we were away, adopting it as the new baseline", u->name);
        }
        unit_take_view(u, &p.view);
        if (su)
                u->paused = p.paused;

        unit_update_params(u);
        unit_params(u, &params);
        bw_policy_state_init(&u->pstate, &params, p.credit_usec, p.debt_usec);
        /* Nothing written yet: a crash before the save re-adopts the same
         * kernel value. Saved together with the others, not once per unit. */
        if (unit_record(u, STORE_SETTLED | STORE_SOON) < 0)
                return log_oom();
        u->adopted = true;
        u->ctx->hooks->adopted(u, u->ctx->userdata);

        /* CPUQuota= names the contract: put it in place unless the kernel
         * already holds it (or a boost of ours above it). */
        if (p.set_quota) {
                const char *source = unit_config_source(u)->cpu_quota_source;

                log_info("%s: setting the configured baseline CPUQuota= (%s)", u->name,
                         source ? source : "configuration");
                (void) unit_apply(u, cur, &u->baseline, "configured-baseline");
        }
        return 0;
}

/* Someone else (systemd on daemon-reload or set-property, an operator)
 * wrote cpu.max: their value is the new contract, but for a burst that is
 * still ours (bw_baseline_rebase()). Never write back. */
void unit_rebase(Unit *u, const struct bw_bandwidth *cur) {
        const struct bw_baseline_view was = unit_view(u);
        struct bw_policy_params params;
        struct bw_baseline_view now;

        u->stats.external_changes++;
        log_unit_change(LOG_NOTICE, u->name, unit_expected(u), cur, "external-change",
                        "%s: cpu.max changed by someone else, adopting it as the new baseline", u->name);
        bw_baseline_rebase(&was, cur, &now);
        unit_take_view(u, &now);
        u->sampler.at_baseline = false;        /* the law sees what the kernel holds */
        unit_update_params(u);
        unit_params(u, &params);
        bw_policy_state_init(&u->pstate, &params, u->pstate.credit.credit_usec, u->pstate.credit.debt_usec);
        /* A crash before the save sees the same external change again. */
        (void) unit_record(u, STORE_SETTLED | STORE_SOON);
}

int unit_restore_plan(Unit *u, struct bw_bandwidth *ret_cur, struct bw_bandwidth *ret_target) {
        const struct bw_baseline_view v = unit_view(u);
        struct bw_bandwidth cur, baseline, target;

        if (!u->cg || !u->adopted || bw_cg_read_bandwidth(u->cg, &cur) < 0)
                return 0;
        switch (bw_baseline_restore_plan(&v, &cur, &baseline, &target)) {
        case BW_RESTORE_NOTHING:
                return 0;
        case BW_RESTORE_NOT_OURS:
                log_info("%s: not restoring, the current value is not ours", u->name);
                return 0;
        case BW_RESTORE_BURST:
                log_info("%s: the quota is someone else's now, restoring only the burst", u->name);
                u->baseline = baseline;
                break;
        case BW_RESTORE_BASELINE:
                break;
        }
        *ret_cur = cur;
        *ret_target = target;
        return 1;
}

int unit_restore_baseline(Unit *u, const char *why) {
        struct bw_bandwidth cur, target;

        if (unit_restore_plan(u, &cur, &target) > 0)
                return unit_apply(u, &cur, &target, why);
        return 0;
}

bool unit_rest_plan(Unit *u, const struct bw_bandwidth *cur, struct bw_bandwidth *ret_target) {
        struct bw_policy_params params;
        uint64_t anc;

        unit_params(u, &params);
        if (!bw_baseline_may_rest(&params, u->paused, cur))
                return false;
        /* Never above the nearest limited ancestor (cgroup v1 would refuse it). */
        anc = unit_ancestor_quota(u, clock_now_usec(CLOCK_MONOTONIC));
        return bw_baseline_rest_plan(&params, u->pstate.credit.credit_usec, unit_has_usage(u), u->paused, cur,
                                     anc, ret_target);
}

/* ---- the write path ------------------------------------------------------ */

void unit_lower_to(Unit *u, const char *ancestor, uint64_t quota_usec, uint64_t period_usec) {
        struct bw_bandwidth cur, t;
        uint64_t q;

        if (!u->cg || !u->adopted || bw_cg_read_bandwidth(u->cg, &cur) < 0 || cur.quota_usec == BW_QUOTA_MAX)
                return;
        /* In the child's own period. */
        q = u64_muldiv(quota_usec, cur.period_usec, period_usec);
        if (cur.quota_usec <= q)
                return;
        t = cur;
        t.quota_usec = u64_max(q, BW_QUOTA_MIN_USEC);
        if (t.has_burst && t.burst_usec > t.quota_usec)
                t.burst_usec = t.quota_usec;
        log_info("%s: its ancestor %s goes down to %" PRIu64 "us per %" PRIu64 "us: lowering it first",
                 u->name, ancestor, quota_usec, period_usec);
        (void) unit_apply(u, &cur, &t, bw_rule_to_string(BW_RULE_ANCESTOR_LIMIT));
        u->ancestor.has = false;        /* read the new ancestor at the next tick */
}

static void log_applied(const Unit *u, const struct bw_bandwidth *before, const struct bw_bandwidth *now,
                        const char *reason) {
        char qa[BW_QUOTA_STRING_MAX], qb[BW_QUOTA_STRING_MAX];

        log_unit_change(LOG_INFO, u->name, before, now, reason,
                        "%s: quota %s -> %sus/%" PRIu32 "us, burst %" PRIu64 " -> %" PRIu64 "us (%s)",
                        u->name, bw_quota_to_string(before->quota_usec, qa), bw_quota_to_string(now->quota_usec, qb),
                        now->period_usec, before->burst_usec, now->burst_usec, reason);
}

int unit_apply(Unit *u, const struct bw_bandwidth *seen, const struct bw_bandwidth *target, const char *reason) {
        struct bw_bandwidth before = *unit_expected(u), now;
        int r;

        /* cgroup v1 refuses a quota below a child's
         * (tg_cfs_schedulable_down()): the governed cgroups below go down
         * first. v2 needs none of this. Lowering keeps every contract. */
        if (seen && target->quota_usec != BW_QUOTA_MAX &&
            (seen->quota_usec == BW_QUOTA_MAX || target->quota_usec < seen->quota_usec) &&
            u->cg && u->cg->layout != BW_CG_LAYOUT_V2 && u->cgroup_path)
                u->ctx->hooks->lowering(u, target->quota_usec, target->period_usec, u->ctx->userdata);

        /* Write-ahead: a crash between the write and the next save must still
         * recognise the kernel's value as ours. Putting the baseline back
         * needs no record saved first (after a crash the kernel holds the
         * baseline, which adoption takes, or still the recorded boost):
         * restoring ten thousand units is not ten thousand saves, and never
         * waits for a state directory that was removed or went read-only. */
        r = store_intent(u->ctx->store, u->name, target, !bw_bandwidth_equal(target, &u->baseline));
        if (r < 0)
                return log_error_errno(r, "%s: not writing: cannot record intent in state: %s", u->name, STRERROR(r));

        /* The write-ahead fsync widens the window in which systemd may
         * rewrite cpu.max: then nothing is written, the next tick re-bases. */
        if (seen) {
                r = bw_cg_read_bandwidth(u->cg, &now);
                if (r >= 0 && !bw_bandwidth_identical(&now, seen)) {
                        log_info("%s: cpu.max changed while deciding, not writing", u->name);
                        return -EAGAIN;
                }
        }

        unit_scope_before_write(u, target);
        r = bw_cg_write_bandwidth(u->cg, target, &now);
        if (bw_cg_error_is_vanished(r)) {
                unit_vanished(u);
                return r;
        }
        if (r < 0) {
                u->stats.write_errors++;
                u->write_failed = true;
                if (r == -EMFILE || r == -ENFILE)
                        return unit_fd_error(u, r, "cpu.max");
                return log_warning_errno(r, "%s: writing bandwidth failed: %s", u->name, STRERROR(r));
        }

        u->has_written = !bw_bandwidth_equal(&now, &u->baseline);
        if (u->has_written)
                u->written = now;
        unit_scope_after_write(u, &now);
        /* The last sample's idea of cpu.max is stale: the next one is full. */
        u->sampler.quiet = false;
        u->sampler.quiet_samples = 0;
        if (now.quota_usec != before.quota_usec || now.period_usec != before.period_usec)
                u->ctx->hooks->quota_changed(u, u->ctx->userdata);
        if (r > 0) {
                u->stats.decisions_applied++;
                log_applied(u, &before, &now, reason);
        }
        (void) unit_record(u, STORE_SETTLED | STORE_SOON);
        return r;
}

/* ---- life ----------------------------------------------------------------- */

static void unit_drop_own_config(Unit *u) {
        if (!u->own_cfg)
                return;
        bw_unit_config_done(u->own_cfg);
        u->own_cfg = mfree(u->own_cfg);
}

/* Give u cfg. The configuration's own entry is shared, not copied: ten
 * thousand units kept 2.3 MB of copies. The manager keeps an old
 * configuration until no unit points into it (manager_sync_units()). A
 * unit made from prefix directories has no entry there and keeps a copy
 * of its own. Returns 0, or -ENOMEM with u unchanged. */
static int unit_take_config(Unit *u, const struct bw_unit_config *cfg) {
        _cleanup_free_ struct bw_unit_config *own = NULL;
        int r;

        if (bw_config_find_unit(u->ctx->config, cfg->name) != cfg) {
                own = calloc(1, sizeof(*own));
                if (!own)
                        return -ENOMEM;
                r = bw_unit_config_copy(cfg, own);
                if (r < 0)
                        return r;
        }
        unit_drop_own_config(u);
        u->own_cfg = TAKE_PTR(own);
        u->cfg = u->own_cfg ? u->own_cfg : cfg;
        u->name = u->cfg->name;
        return 0;
}

const struct bw_unit_config *unit_config_source(const Unit *u) {
        return u->cfg;
}

int unit_new(const struct unit_context *ctx, const struct bw_unit_config *cfg, Unit **ret) {
        Unit *u;
        int r;

        u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        u->ctx = ctx;
        u->watch_wd = -1;
        u->quota_watch.wd = -1;
        u->fds.rank = (uint16_t) (((uintptr_t) u >> 4) * 2654435761u % 1000);
        u->trigger.fd = -1;
        u->lv.maybe_recorded = true;    /* an undo still to retry, say */
        r = unit_take_config(u, cfg);
        if (r >= 0)
                r = bw_history_init(&u->hist.log, ctx->config->global.history_size);
        if (r >= 0)
                r = ticker_schedule(ctx->ticker, &u->tick, clock_now_usec(CLOCK_MONOTONIC));
        if (r < 0) {
                unit_free(u);
                return r;
        }
        *ret = u;
        return 0;
}

Unit *unit_free(Unit *u) {
        if (!u)
                return NULL;
        unit_close_cgroup(u);
        unit_unwatch(u);
        unit_levers_done(&u->lv);
        ticker_cancel(u->ctx->ticker, &u->tick);
        bw_history_done(&u->hist.log);
        unit_drop_own_config(u);
        free(u->refused);
        if (unit_cgroup_path_owned(u))
                free((char *) u->cgroup_path);
        free(u);
        return NULL;
}

int unit_reconfigure(Unit *u, const struct bw_unit_config *cfg) {
        uint64_t now, next;
        bool moved;
        int r;

        moved = (cfg->cgroup || u->cfg->cgroup) &&
                (!cfg->cgroup || !u->cfg->cgroup || strcmp(cfg->cgroup, u->cfg->cgroup) != 0);
        r = unit_take_config(u, cfg);   /* u->name: the same name, in the new configuration */
        if (r < 0)
                return r;
        if (moved) {
                unit_levers_restore(u, "cgroup-moved");
                unit_restore_baseline(u, "cgroup-moved");
                unit_close_cgroup(u);
                u->adopted = false;
        }
        if (u->adopted) {
                unit_update_params(u);
                if (u->pstate.credit.credit_usec > u->cfg->credit_max_usec)
                        u->pstate.credit.credit_usec = u->cfg->credit_max_usec;
        }
        if (bw_history_capacity(&u->hist.log) != u->ctx->config->global.history_size) {
                r = bw_history_set_capacity(&u->hist.log, u->ctx->config->global.history_size);
                if (r < 0)
                        return r;
        }
        /* Keep the rhythm: the next tick comes one (possibly new) interval
         * after the last one, not at once. */
        next = u->sampler.last_tick_usec + unit_interval(u);
        (void) sd_event_now(u->ctx->event, CLOCK_MONOTONIC, &now);
        (void) ticker_schedule(u->ctx->ticker, &u->tick, u->sampler.last_tick_usec == 0 || next <= now ? now : next);
        return 0;
}

void unit_unconfigure(Unit *u) {
        const struct bw_state_unit *su;
        int r;

        log_info("%s: no longer configured, restoring its baseline", u->name);
        unit_levers_restore(u, "unconfigured");
        r = unit_restore_baseline(u, "unconfigured");
        su = store_find(u->ctx->store, u->name);
        if ((r < 0 && r != -EAGAIN && !bw_cg_error_is_vanished(r)) || (su && bw_state_unit_has_levers(su))) {
                /* Not all of it went back: the entry stays until it has
                 * (restore.h), then it is forgotten. */
                log_warning("%s: not everything of it is back yet: tried again until it is", u->name);
                store_orphan(u->ctx->store, u->name, r < 0, clock_now_usec(CLOCK_MONOTONIC));
        } else
                store_forget(u->ctx->store, u->name);
        store_mark(u->ctx->store);
}

void unit_set_paused(Unit *u, bool paused) {
        u->paused = paused;
        log_info("%s: governing %s", u->name, paused ? "paused, restoring the baseline" : "resumed");
        /* A paused unit holds its baseline: the operator asked bwgov to stand
         * back, not to freeze a boost in place. */
        if (paused) {
                unit_levers_restore(u, "paused");
                u->caps.latency_hold = false;
                unit_restore_baseline(u, "paused");
        }
        /* A unit not adopted yet takes paused from its saved entry. */
        if (u->adopted)
                (void) unit_record(u, 0);
        else
                store_set_paused(u->ctx->store, u->name, paused);
        (void) store_save_intents(u->ctx->store);
}
