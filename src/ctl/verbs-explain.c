/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl explain: the latest decision for one unit, what it saw, the rule
 * that decided and what was written, from the daemon's Explain reply,
 * rendered by explain-render.c. */

#include <stdio.h>

#include "explain-render.h"
#include "reply.h"
#include "verbs.h"

static int print_explain(const struct options *o, json_t *reply) {
        return explain_print(stdout, reply, now_realtime_usec(), o->colour);
}

DEFINE_VERB_CALL(explain, VERB_TAKES_UNIT,
                 "Explain the latest decision for a unit: what it saw, the rule, what it did",
                 "Explain", ctl_unit_params, print_explain);
