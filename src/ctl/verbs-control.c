/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl reload, pause and resume: the verbs that change the daemon's
 * state (root only), each one call and a sentence. */

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>

#include "reply.h"
#include "verbs.h"

static int print_reload(const struct options *o, json_t *p) {
        printf("Configuration reloaded: %" PRIu64 " units configured.\n", ju64(p, "units"));
        return 0;
}

static int print_pause(const struct options *o, json_t *p) {
        if (!jbool(p, "changed"))
                printf("%s was already paused.\n", o->unit);
        else
                printf("%s: paused; its baseline is restored and nothing is written until "
                       "'bwgovctl resume %s'.\n", o->unit, o->unit);
        return 0;
}

static int print_resume(const struct options *o, json_t *p) {
        if (!jbool(p, "changed"))
                printf("%s was not paused.\n", o->unit);
        else
                printf("%s: governing resumed.\n", o->unit);
        return 0;
}

DEFINE_VERB_CALL(reload, VERB_MUTATING,
                 "Reload the configuration; a broken one is rejected and the old one kept",
                 "Reload", NULL, print_reload);

DEFINE_VERB_CALL(pause, VERB_TAKES_UNIT | VERB_MUTATING,
                 "Stop governing a unit: restore its baseline, write nothing until resumed",
                 "Pause", ctl_unit_params, print_pause);

DEFINE_VERB_CALL(resume, VERB_TAKES_UNIT | VERB_MUTATING,
                 "Govern a paused unit again",
                 "Resume", ctl_unit_params, print_resume);
