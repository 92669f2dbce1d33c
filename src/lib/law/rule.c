/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rule vocabulary of the control law: each rule's name and its
 * description, in one table (contracts in include/bwgov/law/rule.h). */

#include <string.h>

#include "bwgov/law/rule.h"

static const struct {
        const char *name;
        const char *description;
} rule_table[_BW_RULE_MAX] = {
        [BW_RULE_PRIME] = {
                "prime", "first sample: the resting headroom the credit pays for" },
        [BW_RULE_RESET] = {
                "reset", "the counters went backwards (the cgroup was recreated): started over" },
        [BW_RULE_TOO_SOON] = {
                "too-soon", "samples under 50ms apart: this one was ignored" },
        [BW_RULE_MODE_OFF] = {
                "mode-off", "mode off: the baseline holds" },
        [BW_RULE_UNLIMITED] = {
                "unlimited", "the baseline quota is \"max\": nothing to govern" },
        [BW_RULE_CLAMP] = {
                "clamp", "the current value was outside what the mode and limits allow" },
        [BW_RULE_HOLD] = {
                "hold-off", "the credit pays for more, but a decrease was too recent" },
        [BW_RULE_STEADY] = {
                "steady", "nothing to do" },
        [BW_RULE_HEADROOM_RAISE] = {
                "headroom-raise", "the credit pays for more headroom: raised" },
        [BW_RULE_HEADROOM_LOWER] = {
                "headroom-lower", "the credit no longer pays for this headroom: stepped down" },
        [BW_RULE_CREDIT_EXHAUSTED] = {
                "credit-exhausted", "credit spent: exactly the baseline until it pays for the headroom again" },
        [BW_RULE_ANCESTOR_LIMIT] = {
                "ancestor-limit", "headroom capped at the nearest limited ancestor's quota" },
        [BW_RULE_HOST_SHED] = {
                "host-shed", "the host's CPU pressure is over its limit: headroom withdrawn" },
        [BW_RULE_HOST_HOLD] = {
                "host-hold", "the credit pays for more, but the host's CPU pressure is over its limit" },
};

const char *bw_rule_to_string(enum bw_rule r) {
        if (r < 0 || r >= _BW_RULE_MAX)
                return NULL;
        return rule_table[r].name;
}

const char *bw_rule_description(enum bw_rule r) {
        if (r < 0 || r >= _BW_RULE_MAX)
                return NULL;
        return rule_table[r].description;
}

enum bw_rule bw_rule_from_string(const char *s) {
        if (!s)
                return _BW_RULE_INVALID;
        for (int i = 0; i < _BW_RULE_MAX; i++)
                if (strcmp(rule_table[i].name, s) == 0)
                        return (enum bw_rule) i;
        return _BW_RULE_INVALID;
}
