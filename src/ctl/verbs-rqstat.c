/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl latency: the run-queue waits of one unit as the daemon's BPF
 * programs counted them (GetLatency), rendered by rqstat-render.c. */

#include <stdio.h>

#include "rqstat-render.h"
#include "reply.h"
#include "verbs.h"

/* Like explain without a decision, a unit without telemetry is an answer,
 * not a failure: the reason on standard output, exit 0. */
static int print_latency(const struct options *o, json_t *reply) {
        if (rqstat_print(stdout, reply, now_realtime_usec(), o->colour) < 0) {
                fprintf(stderr, "bwgovctl: malformed reply to GetLatency: available, but no figures\n");
                return CTL_EXIT_FAILURE;
        }
        return 0;
}

DEFINE_VERB_CALL(latency, VERB_TAKES_UNIT,
                 "Show a unit's run-queue waits: percentiles, the throttled share, histograms",
                 "GetLatency", ctl_unit_params, print_latency);
