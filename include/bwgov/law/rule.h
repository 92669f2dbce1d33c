/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The vocabulary of the control law: one rule per kind of decision, its
 * stable name (journal, varlink, `bwgovctl explain` and history) and its
 * one-line description for humans. The one place both binaries take them
 * from; bwgovd(8) lists them too (checked by the man-bwgovd test). */

enum bw_rule {
        BW_RULE_PRIME,                  /* first sample: nothing to compare with; resting level set */
        BW_RULE_RESET,                  /* counters went backwards (cgroup recreated): re-primed */
        BW_RULE_TOO_SOON,               /* samples closer than 50 ms: ignored, state untouched */
        BW_RULE_MODE_OFF,               /* mode off: target is the baseline */
        BW_RULE_UNLIMITED,              /* baseline quota is "max": nothing to govern */
        BW_RULE_CLAMP,                  /* current value outside what the mode and limits allow */
        BW_RULE_HOLD,                   /* the credit would pay for more, but a decrease was too recent */
        BW_RULE_STEADY,                 /* nothing to do */
        BW_RULE_HEADROOM_RAISE,         /* the credit pays for a higher headroom level: raised */
        BW_RULE_HEADROOM_LOWER,         /* the credit no longer pays for this level: stepped down */
        BW_RULE_CREDIT_EXHAUSTED,       /* credit spent: exactly the baseline until it pays for headroom */
        BW_RULE_ANCESTOR_LIMIT,         /* headroom capped at the nearest limited ancestor's quota */
        BW_RULE_HOST_SHED,              /* host pressure: part of the headroom withdrawn */
        BW_RULE_HOST_HOLD,              /* the credit would pay for more, but the host is over its limit */
        _BW_RULE_MAX,
        _BW_RULE_INVALID = -1,
};

/* Stable machine-readable names ("headroom-raise", ...); NULL when out of
 * range. */
const char *bw_rule_to_string(enum bw_rule r);
/* The rule of that name; _BW_RULE_INVALID for NULL or an unknown name. */
enum bw_rule bw_rule_from_string(const char *s);
/* One sentence for humans ("the credit pays for more headroom: raised"),
 * never empty; NULL when out of range. */
const char *bw_rule_description(enum bw_rule r);
