/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What someone else means cpu.max to be and the kernel does not hold: a
 * write refused because bwgovd's burst was above the new quota. Two
 * sources: systemd's CPUQuota= (its D-Bus property, sdintent.h), and any
 * writer's refused write as the kernel told it (refused.h). Either way
 * bwgovd lowers its burst, writes the value itself and re-bases on it. */

#include <inttypes.h>
#include <stdio.h>

#include "bwgov/law/baseline.h"
#include "bwgov/cgroup/cpumax.h"
#include "bwgov/util/util.h"
#include "log.h"
#include "unit.h"
#include "unit-intent.h"

/* systemd's intended CPUQuota= is two D-Bus round trips to PID 1: asked
 * on the Interval= rhythm, not on every short-horizon sample. */
static bool unit_sdintent_due(Unit *u, uint64_t now) {
        if (u->sd.asked_usec != 0 &&
            now - u->sd.asked_usec < bw_unit_interval_usec(u->ctx->config, u->cfg))
                return false;
        u->sd.asked_usec = now;
        return true;
}

/* Returns 1 and systemd's intended quota/period when they changed since
 * the last read (the first read is only recorded), 0 otherwise. A unit with
 * its own Cgroup= or a Subgroup= is not systemd's to follow. */
static int unit_sdintent_changed(Unit *u, uint64_t *ret_quota_usec, uint64_t *ret_period_usec) {
        uint64_t quota, period;
        bool had;

        if (u->cfg->cgroup || u->cfg->subgroup || sdintent_read(u->ctx->sdintent, u->name, &quota, &period) <= 0)
                return 0;
        if (u->sd.has && u->sd.quota_usec == quota && u->sd.period_usec == u64_min(period, UINT32_MAX))
                return 0;
        had = u->sd.has;
        u->sd.has = true;
        u->sd.quota_usec = quota;
        u->sd.period_usec = (uint32_t) u64_min(period, UINT32_MAX);
        if (!had)
                return 0;
        *ret_quota_usec = quota;
        *ret_period_usec = period;
        return 1;
}

/* Put quota/period in place (burst lowered under it first) and re-base. */
static int unit_apply_intent(Unit *u, struct bw_bandwidth *cur, uint64_t quota, uint64_t period, const char *reason) {
        struct bw_bandwidth t;
        int r;

        /* The kernel takes none other (and struct bw_bandwidth holds no more). */
        if (period < BW_PERIOD_MIN_USEC || period > BW_PERIOD_MAX_USEC)
                return log_warning_errno(ERANGE, "%s: not applying a period of %" PRIu64 "us (%s): the kernel "
                                         "takes 1 ms to 1 s", u->name, period, reason);
        bw_baseline_intent_target(cur, &u->baseline, quota, period, &t);
        r = unit_apply(u, cur, &t, reason);
        if (r < 0)
                return r;
        r = bw_cg_read_bandwidth(u->cg, cur);
        if (r < 0)
                return r;
        unit_rebase(u, cur);
        return 0;
}

int unit_follow_intents(Unit *u, struct bw_bandwidth *cur, uint64_t now) {
        char q[BW_QUOTA_STRING_MAX];
        uint64_t sq, sp;

        if (u->refused) {
                _cleanup_free_ struct unit_refused *w = TAKE_PTR(u->refused);

                /* Nothing to do either when the kernel or the contract
                 * holds it already: the same write of PID 1 put in place
                 * as systemd's intent (and maybe boosted from) before the
                 * kernel's word of it came in. */
                if ((cur->quota_usec != w->quota_usec || cur->period_usec != w->period_usec) &&
                    (u->baseline.quota_usec != w->quota_usec || u->baseline.period_usec != w->period_usec)) {
                        log_notice("%s: %s[%" PRIu32 "] wrote cpu.max %sus/%" PRIu64 "us, refused by the kernel "
                                   "for the burst of %" PRIu64 "us; applying it",
                                   u->name, w->comm, w->tgid, bw_quota_to_string(w->quota_usec, q),
                                   w->period_usec, w->burst_usec);
                        return unit_apply_intent(u, cur, w->quota_usec, w->period_usec, "refused-write");
                }
        }
        /* Nothing to do when the kernel or the contract already holds it:
         * a refused write of PID 1 told by the kernel was put in place
         * (and maybe boosted from) before systemd's property was read. */
        if (!unit_sdintent_due(u, now) || unit_sdintent_changed(u, &sq, &sp) <= 0 ||
            (cur->quota_usec == sq && cur->period_usec == sp) ||
            (u->baseline.quota_usec == sq && u->baseline.period_usec == sp))
                return 0;
        log_notice("%s: systemd's CPUQuota= now means %sus/%" PRIu64 "us, not in the kernel; applying it",
                   u->name, bw_quota_to_string(sq, q), sp);
        return unit_apply_intent(u, cur, sq, sp, "systemd-intent");
}

void unit_refused_write(Unit *u, const struct bw_refused_write *w) {
        /* Held only while one waits for the tick: ten thousand units kept
         * 480 kB for a write that is rare. */
        if (!u->refused) {
                u->refused = calloc(1, sizeof(*u->refused));
                if (!u->refused) {
                        log_warning("%s: out of memory: the quota write %s[%" PRIu32 "] made, refused by "
                                    "the kernel for the burst, is not put in place", u->name, w->comm, w->tgid);
                        return;
                }
        }
        *u->refused = (struct unit_refused) {
                .quota_usec = w->quota_usec,
                .period_usec = w->period_usec,
                .burst_usec = w->burst_usec,
                .tgid = w->tgid,
        };
        snprintf(u->refused->comm, sizeof(u->refused->comm), "%s", w->comm);
}

void unit_stop_restore_again(Unit *u) {
        u->restore_again = true;
}

void unit_stop_begin(Unit *u) {
        u->write_failed = false;
}

bool unit_stop_write_failed(const Unit *u) {
        return u->write_failed;
}
