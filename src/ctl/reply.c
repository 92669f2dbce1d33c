/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Field accessors for bwgovd's JSON replies and the renderings of the values
 * more than one verb prints. */

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/util/macro.h"
#include "format.h"
#include "reply.h"
#include "table.h"

const char *jstr(json_t *o, const char *key) {
        return json_string_value(json_object_get(o, key));
}

const char *strq(const char *s) {
        return s ? s : "?";
}

bool jbool(json_t *o, const char *key) {
        return json_is_true(json_object_get(o, key));
}

bool jhas(json_t *o, const char *key) {
        json_t *v = json_object_get(o, key);
        return v && !json_is_null(v);
}

uint64_t ju64(json_t *o, const char *key) {
        json_int_t v = json_integer_value(json_object_get(o, key));
        return v > 0 ? (uint64_t) v : 0;
}

uint64_t jquota(json_t *o, const char *key) {
        return jhas(o, key) ? ju64(o, key) : BW_QUOTA_MAX;
}

char *fmt_bw_quota(char *buf, json_t *bw) {
        if (!json_is_object(bw)) {
                snprintf(buf, FMT_MAX, "-");
                return buf;
        }
        return fmt_quota(buf, jquota(bw, "quota_usec"), ju64(bw, "period_usec"));
}

char *fmt_bw_burst(char *buf, json_t *bw) {
        if (!json_is_object(bw) || !jbool(bw, "has_burst")) {
                snprintf(buf, FMT_MAX, "-");
                return buf;
        }
        return fmt_span(buf, ju64(bw, "burst_usec"));
}

void print_bandwidth(json_t *bw) {
        char q[FMT_MAX], p[FMT_MAX], b[FMT_MAX];

        if (!json_is_object(bw)) {
                printf("-\n");
                return;
        }
        printf("%s, period %s", fmt_bw_quota(q, bw), fmt_span(p, ju64(bw, "period_usec")));
        if (jbool(bw, "has_burst"))
                printf(", burst %s", fmt_bw_burst(b, bw));
        printf("\n");
}

const char *unit_state(json_t *u, const char **ret_colour) {
        static const struct {
                const char *state, *colour;
        } colours[] = {
                { "absent",    ANSI_GREY   },
                { "paused",    ANSI_YELLOW },
                { "exhausted", ANSI_YELLOW },
                { "spending",  ANSI_GREEN  },
                { "resting",   ANSI_GREEN  },
        };
        const char *state = jstr(u, "state");

        *ret_colour = NULL;
        if (!state)
                return "?";
        for (size_t i = 0; i < ELEMENTSOF(colours); i++)
                if (strcmp(colours[i].state, state) == 0)
                        *ret_colour = colours[i].colour;
        return state;
}

void fmt_credit(char *buf, json_t *u) {
        char a[FMT_MAX], b[FMT_MAX];

        if (!jhas(u, "credit_usec"))
                snprintf(buf, FMT_MAX, "- of %s", fmt_span(b, ju64(u, "credit_max_usec")));
        else
                snprintf(buf, FMT_MAX, "%s of %s", fmt_span(a, ju64(u, "credit_usec")),
                         fmt_span(b, ju64(u, "credit_max_usec")));
}

uint64_t now_realtime_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}
