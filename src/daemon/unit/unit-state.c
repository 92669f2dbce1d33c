/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a unit is doing (unit-state.h), read from its fields: the state in
 * one word, boosted or not, the headroom it holds. */
#include "bwgov/law/policy.h"
#include "unit.h"
#include "unit-state.h"

/* Headroom in use: a quota above the baseline's, and the unit spending
 * credit on it. The resting burst alone (burst = quota at rest, the
 * kernel's own burst, Mode=burst) is no boost (issue 17), nor is headroom a
 * unit rests at without using it (issue 30: "boosted" for an idle unit
 * said it got more than its contract while it got nothing). */
bool unit_is_boosted(const Unit *u) {
        const struct bw_bandwidth *w = &u->written, *b = &u->baseline;

        if (!u->adopted || !u->has_written || b->quota_usec == BW_QUOTA_MAX || unit_state(u) != UNIT_STATE_SPENDING)
                return false;
        if (w->quota_usec == BW_QUOTA_MAX)
                return true;
        /* Per period: quotas (at most 1000 s of CPU) times periods (at most 1 s) fit. */
        return w->quota_usec * b->period_usec > b->quota_usec * w->period_usec;
}

static const char *const unit_state_table[_UNIT_STATE_MAX] = {
        [UNIT_STATE_ABSENT]    = "absent",
        [UNIT_STATE_NEW]       = "new",
        [UNIT_STATE_PAUSED]    = "paused",
        [UNIT_STATE_EXHAUSTED] = "exhausted",
        [UNIT_STATE_BASELINE]  = "baseline",
        [UNIT_STATE_SPENDING]  = "spending",
        [UNIT_STATE_RESTING]   = "resting",
};

enum unit_state unit_state(const Unit *u) {
        if (!u->cg)
                return UNIT_STATE_ABSENT;
        if (!u->adopted)
                return UNIT_STATE_NEW;
        if (u->paused)
                return UNIT_STATE_PAUSED;
        if (u->pstate.exhausted && unit_mode(u) == BW_MODE_ELASTIC)
                return UNIT_STATE_EXHAUSTED;
        if (!u->prev.has || u->prev.decision.headroom_usec == 0)
                return UNIT_STATE_BASELINE;
        if (u->prev.decision.spend_rate > 0)
                return UNIT_STATE_SPENDING;
        return UNIT_STATE_RESTING;
}

const char *unit_state_to_string(const Unit *u) {
        return unit_state_table[unit_state(u)];
}

/* Resting headroom counts: a group idle now is one wake-up away from
 * spending it, and a sample of its own may be a whole Interval= away; host
 * protection has to hold before that, not after. */
uint64_t unit_headroom(const Unit *u) {
        /* The rate needs the baseline's quota and period, no more: not all
         * the law's parameters, for every unit on every host pass. */
        const struct bw_policy_params p = { .baseline = u->baseline };

        if (!u->adopted || !u->has_written || u->baseline.quota_usec == BW_QUOTA_MAX)
                return 0;
        return bw_policy_boost_rate(&p, &u->written);
}
