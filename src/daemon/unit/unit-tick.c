/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's tick (unit-tick.h): five steps, observe, reconcile, decide, act,
 * record, over the unit's files below it (unit.c the cgroup, its
 * adoption and its writes; unit-resolve.c, unit-sample.c, unit-intent.c,
 * unit-scope.c), which never call it; the PSI trigger that runs it early. */
#include <errno.h>
#include <inttypes.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bwgov/config/config.h"
#include "bwgov/util/util.h"
#include "clock.h"
#include "log.h"
#include "source/psi-trigger.h"
#include "unit.h"
#include "unit-sample.h"
#include "unit-intent.h"
#include "unit-resolve.h"
#include "unit-scope.h"
#include "unit-tick.h"

/* A sample closer than the law's 50 ms to the previous one decides nothing:
 * a shedding plan that met one is tried again this much later. */
#define TOO_SOON_RETRY_USEC (60 * USEC_PER_MSEC)

/* PSI triggers can fire in bursts; the law needs one sample per event, not
 * dozens: a second tick closer than this to the last one is not run. */
#define TRIGGER_MIN_SPACING_USEC (100 * USEC_PER_MSEC)

/* A unit that lost its rhythm takes up one on this grid: ten thousand
 * adopted in batches over seconds would otherwise each keep the phase of
 * their batch, a hundred wake-ups a second instead of twenty. */
#define UNIT_REPHASE_USEC (50 * USEC_PER_MSEC)


/* ---- the PSI trigger ------------------------------------------------------ */

static int on_trigger(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Unit *u = userdata;
        uint64_t now;

        if (revents & (EPOLLERR | EPOLLHUP)) {
                /* POLLERR on a PSI trigger: the cgroup is gone. */
                unit_vanished(u);
                return 0;
        }

        (void) sd_event_now(u->ctx->event, CLOCK_MONOTONIC, &now);
        if (now - u->sampler.last_tick_usec < TRIGGER_MIN_SPACING_USEC)
                return 0;
        log_debug("%s: pressure trigger fired", u->name);
        quotawatch_drain(u->ctx->quotawatch);
        (void) unit_tick(u, now);
        return 0;
}

/* A PSI trigger (psi-trigger.h) wakes the unit when it is throttled. */
static void unit_trigger_open(Unit *u) {
        int dfd, fd, r;

        if (!u->cg || !u->cg->has_v2 || u->trigger.fd >= 0 || u->trigger.refused)
                return;
        dfd = bw_cg_dir(u->cg, BW_CG_TREE_V2);
        if (dfd < 0)
                return;         /* gone, or out of descriptors: the next sample says */
        fd = psi_trigger_open(dfd, u->name, u->cfg->target_pressure,
                              u->ctx->config->global.pressure_window_usec, u->ctx->can_trigger_any_window);
        /* Not cgroup2 (a fixture), or a kernel that refuses the trigger:
         * not asked again on every sample while the cgroup is open; out of
         * file descriptors: tried again. */
        if (fd < 0 && fd != -EMFILE && fd != -ENFILE)
                u->trigger.refused = true;
        if (fd < 0)
                return;
        r = sd_event_add_io(u->ctx->event, &u->trigger.source, fd, EPOLLPRI, on_trigger, u);
        if (r < 0) {
                close(fd);
                log_warning_errno(r, "%s: cannot watch PSI trigger: %s", u->name, STRERROR(r));
                return;
        }
        u->trigger.fd = fd;
}

/* ---- after the decision: quiet or near, the PSI trigger ---------------------- */

static bool unit_quiet(Unit *u, const struct bw_decision *d) {
        return u->adopted && u->cg && !d->change && !d->active && d->spend_rate == 0 && d->throttle_rate == 0 &&
                d->rule != BW_RULE_TOO_SOON && bw_unit_class(u->cfg) != BW_CLASS_LATENCY && !u->caps.latency_hold &&
                !unit_levers_any(u) && u->caps.shed_pending == 0;
}

/* Near its quota: spending, throttled, or using half its baseline. */
static bool unit_near(const Unit *u, const struct bw_decision *d) {
        const struct bw_bandwidth *b = &u->baseline;       /* its quota and period: the law's */

        return d->active || d->spend_rate > 0 || d->throttle_rate > 0 ||
                (b->quota_usec != BW_QUOTA_MAX && b->period_usec > 0 &&
                 d->usage_rate * 2 >= u64_muldiv(b->quota_usec, USEC_PER_SEC, b->period_usec));
}

static void unit_sample_after(Unit *u, const struct bw_policy_input *in, const struct bw_decision *d) {
        if (d->rule == BW_RULE_TOO_SOON || !u->cg)
                return;
        if (unit_quiet(u, d)) {
                u->sampler.quiet = true;
                u->sampler.quiet_samples++;
        } else {
                u->sampler.quiet = false;
                u->sampler.quiet_samples = 0;
        }
        if (unit_near(u, d)) {
                u->trigger.near_usec = in->now_usec;
                unit_trigger_open(u);
        } else if (u->trigger.fd >= 0 && in->now_usec - u->trigger.near_usec >= UNIT_TRIGGER_LINGER_USEC &&
                   *u->ctx->trigger_closes_left > 0) {
                unit_count(u, &(struct unit_counters) { .trigger_closes = 1 });
                log_debug("%s: far from its quota for %" PRIu64 "s, closing its PSI trigger", u->name,
                          UNIT_TRIGGER_LINGER_USEC / USEC_PER_SEC);
                unit_trigger_close(u);
        }
}

/* ---- the tick ----------------------------------------------------------- */

/* A tick is five steps, each handed the values of the one before:
 *
 *   observe    what the kernel holds and a sample (light or full): reads only
 *   reconcile  adopt, re-base on someone else's write, or put in place an
 *              intent (unit-intent.c): the only writes before the decision
 *   decide     the law's input from the sample and the caps, then the law:
 *              reads only
 *   act        write the decision (unit_apply())
 *   record     the next sample's time, the history, quiet or near, the store
 *
 * Each returns -ENODEV when the cgroup is gone (unit_vanished() done), the
 * same in every step; the tick then ends, and that is no error. */

struct unit_obs {
        struct bw_bandwidth current;    /* what the kernel holds */
        struct bw_policy_input in;      /* the sample; the law's input once decide completed it */
        bool full;                      /* a full sample (a light one needs no reconcile) */
};

/* Reads cpu.max into ret. Returns 1, -ENODEV when the cgroup vanished
 * (closed), or a negative errno (logged). */
static int unit_read_bandwidth(Unit *u, struct bw_bandwidth *ret) {
        int r;

        /* What this reads is news to the watch: a write after it is told anew. */
        u->quota_watch.written = false;
        r = bw_cg_read_bandwidth(u->cg, ret);
        if (bw_cg_error_is_vanished(r)) {
                unit_vanished(u);
                return -ENODEV;
        }
        if (r < 0)
                return unit_fd_error(u, r, "its bandwidth");
        return 1;
}

/* Step 1: find the cgroup, then a light sample when one is enough, else
 * cpu.max and the reads of a full sample. Returns 1 observed, 0 nothing to
 * observe (the cgroup is not there), -ENODEV, or a negative errno. */
static int unit_observe(Unit *u, struct unit_obs *o) {
        int r;

        r = unit_resolve(u);
        if (r <= 0)
                return r;
        r = unit_sample_light(u, &o->current, &o->in);
        if (r == -ENODEV || r > 0) {
                o->full = false;
                return r;
        }
        o->full = true;
        r = unit_read_bandwidth(u, &o->current);
        if (r <= 0)
                return r;
        return unit_sample(u, &o->in);
}

/* Step 2, after a full sample: what the kernel holds against what we
 * expect. Adopt a new unit, re-base on someone else's write, or put in
 * place what someone meant to write and the kernel refused for our burst
 * (unit-intent.c); o->current is then what the kernel holds. Returns 1,
 * -ENODEV, or a negative errno. */
static int unit_reconcile(Unit *u, struct unit_obs *o, uint64_t now) {
        int r = 0;

        if (!o->full)
                return 1;
        if (!u->adopted)
                r = unit_adopt(u, &o->current);
        else if (!bw_bandwidth_equal(&o->current, unit_expected(u)))
                unit_rebase(u, &o->current);
        else
                r = unit_follow_intents(u, &o->current, now);
        /* Vanished under adoption's or an intent's write, or the read after
         * it: whatever the kernel said (ENOENT, ENODEV, ESTALE), "gone". */
        if (bw_cg_error_is_vanished(r) || !u->cg) {
                if (u->cg)
                        unit_vanished(u);
                return -ENODEV;
        }
        if (r < 0)
                return r;
        unit_scope_follow(u, &o->current);
        if (u->params_mode != unit_mode(u))
                unit_update_params(u);
        return 1;
}

/* Step 3: the law, on the sample made its input. A paused unit is still
 * observed (explain and history keep working), but nothing is written and
 * no hold-off starts. */
static int unit_decide(Unit *u, struct unit_obs *o, struct bw_decision *ret) {
        struct bw_policy_params p;
        int r;

        unit_params(u, &p);
        unit_sample_input(u, &o->current, o->full, &o->in);
        /* Parked at its baseline and nothing ran: to the law it rests
         * where it was (unit_park_at_baseline()). */
        if (u->sampler.at_baseline)
                o->in.current = u->sampler.rest;
        if (u->paused && p.mode != BW_MODE_OFF)
                p.mode = BW_MODE_OBSERVE;
        r = bw_policy_decide(&p, &u->pstate, &o->in, ret);
        if (r < 0)
                return log_warning_errno(r, "%s: policy failed: %s", u->name, STRERROR(r));
        u->stats.ticks++;
        bw_decision_keep(ret, &u->prev.decision);
        u->prev.has = true;
        return 0;
}

/* t holds at least what base does: its period, no less quota, no less burst. */
static bool covers_baseline(const struct bw_bandwidth *t, const struct bw_bandwidth *base) {
        return t->period_usec == base->period_usec && t->quota_usec >= base->quota_usec &&
                t->burst_usec >= base->burst_usec;
}

/* Step 4: write the decision. Returns 1 written, 0 not (nothing to write,
 * paused, refused or failed: logged), or -ENODEV. */
static int unit_act(Unit *u, const struct unit_obs *o, const struct bw_decision *d) {
        int r;

        if (!d->change || u->paused)
                return 0;
        /* At its baseline, nothing ran: the rest moves, the kernel keeps the
         * baseline until the first run (a target under the baseline, for
         * an ancestor, is written). */
        if (u->sampler.at_baseline) {
                if (covers_baseline(&d->target, &u->baseline)) {
                        u->sampler.rest = d->target;
                        return 0;
                }
                u->sampler.at_baseline = false;
        }
        r = unit_apply(u, &o->current, &d->target, bw_rule_to_string(d->rule));
        if (bw_cg_error_is_vanished(r))
                return -ENODEV;
        return r > 0;
}

/* Step 5's timing: the law sized the headroom for its horizon, so sample
 * again within it. A too-soon sample commits to nothing new: the last
 * deadline stands (the timer was re-armed for a whole Interval= before this
 * tick, which may be later). A shedding plan that met a sample too close to
 * the last one is not lost: it applies as soon as a sample counts. */
static void unit_reschedule(Unit *u, const struct bw_policy_input *in, const struct bw_decision *d) {
        if (d->next_tick_usec > 0) {
                u->sampler.deadline_usec = in->now_usec + d->next_tick_usec;
                /* Already due within the horizon (the ticker's rhythm, which
                 * runs units up to TICKER_EARLY_USEC early): a move would
                 * only cost the heap a sift. */
                if (u->cg && !(bw_tick_entry_queued(&u->tick) &&
                               u->tick.due_usec <= u->sampler.deadline_usec + TICKER_EARLY_USEC))
                        (void) unit_schedule(u, in->now_usec, d->next_tick_usec);
        } else if (u->cg && u->sampler.deadline_usec > 0)
                (void) unit_schedule(u, in->now_usec, u64_sat_sub(u->sampler.deadline_usec, in->now_usec));
        if (d->rule == BW_RULE_TOO_SOON && in->shed_permille > 0 && u->cg) {
                u->caps.shed_pending = u64_max(in->shed_permille, u->caps.shed_pending);
                (void) unit_schedule(u, in->now_usec, TOO_SOON_RETRY_USEC);
        }
}

/* Step 5's history. Keep transitions, not a copy of every quiet tick: a
 * steady tick that repeats the last entry's rule is not recorded, so
 * HistorySize= entries span hours, not minutes; a sample too close to the
 * last one decided nothing and is dropped. */
static void unit_remember(Unit *u, const struct bw_bandwidth *cur, const struct bw_decision *d, bool applied) {
        struct bw_history_entry e;

        bw_history_entry_from_decision(d, cur, clock_now_usec(CLOCK_REALTIME), applied, &e);
        u->prev.current = *cur;
        u->prev.applied = applied;
        u->prev.realtime_usec = e.realtime_usec;
        if (d->rule != BW_RULE_TOO_SOON &&
            (applied || !u->prev.has_hist_rule || u->prev.hist_rule != d->rule ||
             (d->rule != BW_RULE_STEADY && d->rule != BW_RULE_HOLD))) {
                bw_history_push(&u->hist.log, &e);
                u->prev.hist_rule = (uint8_t) d->rule;
                u->prev.has_hist_rule = true;
        }
}

/* ---- parking (unit-tick.h) ------------------------------------------------ */

static bool unit_may_park(const Unit *u, const struct bw_decision *d) {
        const struct bw_policy_state *s = &u->pstate;

        return u->ctx->park && u->sampler.gated && u->sampler.quiet &&
                u->sampler.quiet_samples >= UNIT_PARK_AFTER && !d->change && d->rule != BW_RULE_TOO_SOON &&
                !u->paused && u->trigger.fd < 0 && !u->refused && u->quota_watch.wd >= 0 &&
                s->credit.credit_usec >= u->cfg->credit_max_usec && s->credit.debt_usec == 0 && !s->active &&
                !s->exhausted && s->host_cap_usec == UINT64_MAX && s->spend_avg == 0 &&
                bw_unit_interval_usec(u->ctx->config, u->cfg) >= u->ctx->config->global.interval_usec;
}

static uint64_t unit_parked_full_usec(const Unit *u) {
        return u->sampler.last_full_usec +
                UNIT_PARKED_FULL_EVERY * bw_unit_interval_usec(u->ctx->config, u->cfg);
}

bool unit_park_resolve(enum bw_park p, bool resting, size_t n_units, uint64_t write_usec) {
        uint64_t stop;

        if (p != BW_PARK_AUTO)
                return p == BW_PARK_YES;
        stop = write_usec > 0 && n_units > UINT64_MAX / write_usec ? UINT64_MAX : n_units * write_usec;
        return stop > (resting ? UNIT_PARK_AUTO_STOP_USEC / 2 : UNIT_PARK_AUTO_STOP_USEC);
}

/* The manager rests idle units at their baselines (ParkAtBaseline=yes, or
 * auto with a stop that would take long) and u's activity flag can tell
 * when it runs. */
static bool unit_rest_wanted(const Unit *u) {
        return u->ctx->rest_at_baseline && *u->ctx->rest_at_baseline && unit_activity_gated(u);
}

/* ParkAtBaseline= may keep u at its baseline: wanted, and a run of its
 * tasks can wake the daemon. */
static bool unit_may_rest_at_baseline(const Unit *u) {
        return unit_rest_wanted(u) && rqstat_can_wake(*u->ctx->rqstat);
}

/* ParkAtBaseline=: a unit about to park whose flag can wake it puts its
 * baseline back (so that a stop has nothing to write) and rests there until
 * its first run; once it used nothing for UNIT_BASELINE_AFTER Interval=s
 * (before that it parks at its headroom, as without the setting), so that
 * a group with gaps of seconds between bursts is not written twice per gap.
 * Armed to wake before the write: a run during it wakes the unit. Returns
 * false when it must not park now: something ran since its sample, or this
 * batch of samples spent its time on writes already (it tries again at its
 * next sample). */
static bool unit_park_at_baseline(Unit *u) {
        Rqstat *t = *u->ctx->rqstat;
        struct bw_bandwidth cur, target, rest;
        uint64_t quiet_samples = u->sampler.quiet_samples;
        int r;

        if (!unit_may_rest_at_baseline(u))
                return true;
        if (u->sampler.at_baseline)
                return rqstat_arm_wake_still(t, u->rq.act_slot);
        if (u64_sat_sub(u->sampler.last_tick_usec, u->sampler.used_usec) <
            UNIT_BASELINE_AFTER * bw_unit_interval_usec(u->ctx->config, u->cfg))
                return true;    /* at its headroom: its baseline at a later park */
        if (u->ctx->batch_started_usec && *u->ctx->batch_started_usec > 0 &&
            clock_now_usec(CLOCK_MONOTONIC) - *u->ctx->batch_started_usec > UNIT_PARK_WRITE_BUDGET_USEC)
                return false;
        rest = *unit_expected(u);
        if (unit_restore_plan(u, &cur, &target) <= 0)
                return true;            /* nothing to put back */
        if (!rqstat_arm_wake_still(t, u->rq.act_slot))
                return false;
        r = unit_apply(u, &cur, &target, "parked-at-baseline");
        if (r < 0)
                return r != -ENODEV && !bw_cg_error_is_vanished(r);
        u->sampler.at_baseline = true;
        u->sampler.rest = rest;
        /* The write read back what it wrote: its samples stay light. */
        u->sampler.quiet = true;
        u->sampler.quiet_samples = quiet_samples;
        /* Its own write is no news to its quota watch. */
        quotawatch_drain(u->ctx->quotawatch);
        u->quota_watch.written = false;
        return true;
}

bool unit_rest_at_baseline(Unit *u, const struct bw_bandwidth *cur, const struct bw_bandwidth *rest) {
        Rqstat *t = *u->ctx->rqstat;

        if (!unit_may_rest_at_baseline(u) || !bw_bandwidth_equal(cur, &u->baseline) ||
            !covers_baseline(rest, &u->baseline))
                return false;
        rqstat_arm_wake(t, u->rq.act_slot);
        u->sampler.at_baseline = true;
        u->sampler.rest = *rest;
        log_info("%s: resting at its baseline until its first run", u->name);
        return true;
}

/* At its baseline: a run (its flag raised), no flag to tell any more, or
 * the manager no longer resting units there ends it; the law then sees the
 * baseline the kernel holds and raises it to its rest. */
static void unit_baseline_check(Unit *u) {
        if (!u->sampler.at_baseline)
                return;
        if (unit_rest_wanted(u) && !rqstat_ran(*u->ctx->rqstat, u->rq.act_slot))
                return;
        u->sampler.at_baseline = false;
}

bool unit_wake_headroom(Unit *u) {
        if (!u->sampler.parked || !u->sampler.wake_armed)
                return false;
        log_debug("%s: its first run since it parked at its headroom", u->name);
        u->sampler.wake_armed = false;          /* armed for its first run only */
        return true;
}

void unit_wake(Unit *u, uint64_t now) {
        if (!u->sampler.at_baseline || !u->cg || *u->ctx->stopping)
                return;
        /* Closer than the law's spacing to its last sample: just after it,
         * on the ticker's grid (below). */
        if (now - u->sampler.last_tick_usec < TOO_SOON_RETRY_USEC) {
                uint64_t t = u->sampler.last_tick_usec + TOO_SOON_RETRY_USEC;

                (void) ticker_schedule(u->ctx->ticker, &u->tick, t + (UNIT_REPHASE_USEC - t % UNIT_REPHASE_USEC));
                return;
        }
        log_debug("%s: its first run since it parked at its baseline", u->name);
        quotawatch_drain(u->ctx->quotawatch);
        (void) unit_tick(u, now);
        /* Woken at any moment, its samples would keep that phase, one
         * wake-up of the loop each (five hundred bursty groups woke it four
         * times as often). Its next one on a grid instead, a little early
         * (the law's horizon is a latest time): whole Interval=s when it is
         * one away, so that those woken share a phase, else the ticker's. */
        if (bw_tick_entry_queued(&u->tick)) {
                uint64_t due = u->tick.due_usec, g = bw_unit_interval_usec(u->ctx->config, u->cfg);

                if (due < now + g)
                        g = UNIT_REPHASE_USEC;
                if (due - due % g > now)
                        (void) ticker_schedule(u->ctx->ticker, &u->tick, due - due % g);
        }
}

/* A unit about to park at its headroom can run up to it at any moment:
 * where its activity flag can wake bwgovd, it is armed to, so that its
 * first run brings the host passes back to every ActiveInterval= (its
 * sample still waits for the next check of the parked units, or for a
 * host pass near the limit: manager.c). While every parked unit can wake
 * bwgovd so, the host passes come once per Interval= only. Returns false
 * when something ran since its sample: it must not park now. */
static bool unit_park_arm_wake(Unit *u) {
        Rqstat *t = *u->ctx->rqstat;

        u->sampler.wake_armed = false;
        if (u->sampler.at_baseline || !unit_activity_gated(u) || !rqstat_can_wake(t))
                return true;
        if (!rqstat_arm_wake_still(t, u->rq.act_slot))
                return false;
        u->sampler.wake_armed = true;
        return true;
}

static void unit_park(Unit *u, uint64_t now) {
        uint64_t full = unit_parked_full_usec(u);

        if (!unit_park_at_baseline(u) || !unit_park_arm_wake(u))
                return;
        if (!u->sampler.parked) {
                u->sampler.parked = true;
                u->sampler.parked_usec = now;
        }
        /* Still: its usage stays what its last sample read (the rate 0). */
        u->sampler.parked_usage_usec = u->place.outermost && u->prev.has && u->sampler.has_last_stat &&
                (u->sampler.last_stat.seen & BW_CPUSTAT_USAGE) ? u->sampler.last_stat.usage_usec : 0;
        /* This sample proved it still up to now. */
        u->sampler.still_usec = now;
        (void) ticker_schedule(u->ctx->ticker, &u->tick, full > now ? full : now);
}

/* The first tick after parking: from the last reading that proved the
 * unit still, as the skipped light samples would have advanced it (each
 * left the usage as it was and moved the sample's time on). Never closer
 * to now than the law's spacing, so that this tick decides. */
static void unit_unpark(Unit *u, uint64_t now) {
        uint64_t t = u->sampler.still_usec;

        u->sampler.parked = false;
        u->sampler.wake_armed = false;
        if (now - t < TRIGGER_MIN_SPACING_USEC)
                t = u64_sat_sub(now, TRIGGER_MIN_SPACING_USEC);
        if (u->pstate.primed && t > u->pstate.prev_now_usec)
                u->pstate.prev_now_usec = t;
        if (now >= unit_parked_full_usec(u))
                u->sampler.full_due = true;
}

bool unit_parked_still(Unit *u, uint64_t now) {
        uint64_t t;

        if (!u->sampler.parked)
                return false;
        /* A governed ancestor's quota changed: a full sample reads it. */
        if (!u->cg || u->quota_watch.wd < 0 || u->quota_watch.written || !u->ancestor.has ||
            !unit_gate_unmoved(u, now, &t))
                return false;
        u->sampler.still_usec = t;
        return true;
}

void unit_cgroup_removed(Unit *u, uint64_t now) {
        log_debug("%s: cgroup %s removed", u->name, u->cgroup_path ? u->cgroup_path : "?");
        u->sampler.full_due = true;
        (void) ticker_schedule(u->ctx->ticker, &u->tick, now);
}

/* Step 5: what came of it, for the next tick and the others. */
static void unit_record_tick(Unit *u, const struct unit_obs *o, const struct bw_decision *d, bool applied) {
        if (d->usage_rate > 0 || d->rule == BW_RULE_PRIME || d->rule == BW_RULE_RESET)
                u->sampler.used_usec = o->in.now_usec;
        unit_reschedule(u, &o->in, d);
        unit_remember(u, &o->current, d, applied);
        unit_sample_after(u, &o->in, d);
        /* The credit bucket: saved with the next save, not on every tick;
         * mirrored only when it moved (a full bucket stays full). Whatever
         * else the entry holds is recorded where it changes. */
        if (!u->mirror_recorded || u->mirror.credit_usec != u->pstate.credit.credit_usec ||
            u->mirror.debt_usec != u->pstate.credit.debt_usec)
                (void) unit_record(u, 0);
        if (unit_may_park(u, d))
                unit_park(u, o->in.now_usec);
}

static int unit_tick_pass(Unit *u, uint64_t now) {
        struct unit_obs o;
        struct bw_decision d;
        int r, applied;

        u->sampler.last_tick_usec = now;
        unit_count(u, &(struct unit_counters) { .ticks = 1 });

        r = unit_observe(u, &o);
        if (r <= 0)
                return r;
        r = unit_reconcile(u, &o, now);
        if (r < 0)
                return r;
        r = unit_decide(u, &o, &d);
        if (r < 0)
                return r;
        applied = unit_act(u, &o, &d);
        if (applied < 0)
                return applied;
        unit_record_tick(u, &o, &d, applied);
        return 0;
}

int unit_tick(Unit *u, uint64_t now) {
        int r;

        /* Stopping: nothing may raise a unit the stop put back. */
        if (*u->ctx->stopping)
                return 0;
        if (u->sampler.parked)
                unit_unpark(u, now);
        unit_baseline_check(u);
        u->sampler.gated = false;
        r = unit_tick_pass(u, now);
        /* A sample that read nothing opened nothing; but a unit that parks,
         * or is gated while the units hold more than their room (the files
         * its adoption opened), lets go of what the plan does not keep now:
         * it may not sample again for a minute. */
        if (!u->sampler.gated || u->sampler.parked || *u->ctx->fds_held > UNIT_FD_ROOM(u->ctx->fd_budget)) {
                unit_count_fds(u);
                unit_fd_economy(u);
        }
        /* The cgroup gone is no error: the unit waits for one again. */
        return r == -ENODEV ? 0 : r;
}

/* ---- the timer ------------------------------------------------------------ */

void unit_on_due(Unit *u, uint64_t due, uint64_t now) {
        uint64_t interval = bw_unit_interval_usec(u->ctx->config, u->cfg);

        /* Schedule first, so a pass that fails early never stops the
         * schedule; the decision then sets its own horizon. Interval= is at
         * least 100 ms, twice the grid. */
        (void) ticker_schedule(u->ctx->ticker, &u->tick, ticker_next_due(due, now, interval, UNIT_REPHASE_USEC));
        (void) unit_tick(u, now);
}
