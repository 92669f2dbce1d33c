/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl explain's text from an Explain reply: the latest decision for one
 * unit, what it saw, the rule that decided and what was written. */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "bwgov/law/policy.h"
#include "explain-render.h"
#include "format.h"
#include "reply.h"
#include "table.h"

/* rq_throttled_permille's whole. */
#define PERMILLE 1000

/* The daemon says what its rule means; an older daemon may not, then the
 * library's table does. */
static const char *rule_words(json_t *d, const char *rule) {
        const char *w = jstr(d, "description");

        if (w)
                return w;
        w = bw_rule_description(bw_rule_from_string(rule));
        return w ? w : "no description for this rule";
}

/* Two Bandwidth objects with the same quota, period and burst. */
static bool bandwidth_same(json_t *a, json_t *b) {
        return json_equal(json_object_get(a, "quota_usec"), json_object_get(b, "quota_usec")) &&
               ju64(a, "period_usec") == ju64(b, "period_usec") && ju64(a, "burst_usec") == ju64(b, "burst_usec");
}

/* "Outcome:": old -> target, and whether it was written (and why not). */
static void print_outcome(FILE *f, json_t *p, json_t *d) {
        json_t *old = json_object_get(d, "old"), *target = json_object_get(d, "target");
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX], e[FMT_MAX];

        fprintf(f, LABEL, "Outcome:");
        if (!jbool(d, "would_change"))
                fprintf(f, "unchanged at %s, burst %s\n", fmt_bw_quota(a, old), fmt_bw_burst(b, old));
        else {
                fprintf(f, "%s, burst %s -> %s, burst %s", fmt_bw_quota(a, old), fmt_bw_burst(b, old),
                           fmt_bw_quota(c, target), fmt_bw_burst(e, target));
                if (jbool(d, "applied"))
                        fprintf(f, " (written)\n");
                else if (!jbool(d, "change"))
                        fprintf(f, " (not written: %s)\n", jbool(p, "paused") ? "paused" : "mode observe");
                else if (bandwidth_same(old, target))
                        fprintf(f, "\n");
                else
                        fprintf(f, " (not written: the write failed or was not needed)\n");
        }
        if (jbool(d, "emergency"))
                fprintf(f, LABEL "a decrease for safety: no hold-off\n", "");
}

/* The run-queue wait over the sample, next to the other inputs of the law,
 * when the daemon had telemetry and the sample saw waits: "run queue: p99
 * 65.5ms, 80% of the wait throttled (over TargetWaitP99=50ms)". The law
 * counts it when the p99 is over the target and at least half of the wait
 * was throttled (rq_over_target); the other cases say why it does not. */
static void print_runqueue(FILE *f, json_t *d, json_t *in) {
        uint64_t p99 = ju64(in, "rq_wait_p99_usec"), target = ju64(d, "target_wait_p99_usec");
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX];

        if (!jhas(in, "rq_wait_p99_usec"))
                return;
        fprintf(f, LABEL "run queue: p99 %s, %s of the wait throttled ", "", fmt_span_fine(a, p99),
                fmt_share(b, ju64(in, "rq_throttled_permille"), PERMILLE));
        if (target == 0)
                fprintf(f, "(TargetWaitP99= off)\n");
        else if (jbool(in, "rq_over_target"))
                fprintf(f, "(over TargetWaitP99=%s)\n", fmt_span_fine(c, target));
        else if (p99 > target)
                fprintf(f, "(over TargetWaitP99=%s, but mostly unthrottled)\n", fmt_span_fine(c, target));
        else
                fprintf(f, "(target %s)\n", fmt_span_fine(c, target));
}

/* "Inputs:": what the sample measured and what the credit did. */
static void print_inputs(FILE *f, json_t *d) {
        json_t *in = json_object_get(d, "inputs");
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX], e[FMT_MAX], g[FMT_MAX];

        fprintf(f, LABEL "over the last %s:\n", "Inputs:", fmt_span(a, ju64(in, "dt_usec")));
        fprintf(f, LABEL "usage %s\n", "", fmt_cpus(a, ju64(in, "usage_rate")));
        fprintf(f, LABEL "throttled %s (target %s), in %" PRIu64 " of %" PRIu64 " periods\n", "",
                   fmt_rate(a, ju64(in, "throttle_rate")), fmt_rate(b, ju64(d, "target_throttle")),
                   ju64(in, "d_nr_throttled"), ju64(in, "d_nr_periods"));
        if (ju64(in, "ancestor_throttle_rate") > 0)
                fprintf(f, LABEL "throttled %s more by an ancestor's limit (more quota here would not help)\n", "",
                           fmt_rate(a, ju64(in, "ancestor_throttle_rate")));
        fprintf(f, LABEL "pressure (full) %s (target %s)\n", "", fmt_rate(a, ju64(in, "pressure_rate")),
                   fmt_rate(b, ju64(d, "target_pressure")));
        print_runqueue(f, d, in);
        fprintf(f, LABEL "%" PRIu64 " bursts\n", "", ju64(in, "d_nr_bursts"));
        fprintf(f, LABEL "credit %s -> %s of %s, earning %s, spending %s%s\n", "",
                   fmt_span(a, ju64(in, "credit_before_usec")), fmt_span(b, ju64(in, "credit_after_usec")),
                   fmt_span(c, ju64(d, "credit_max_usec")), fmt_cpus(e, ju64(in, "earn_rate")),
                   fmt_cpus(g, ju64(in, "spend_rate")), jbool(in, "active") ? " (active)" : "");
        if (ju64(in, "debt_usec") > 0)
                fprintf(f, LABEL "in debt by %s\n", "", fmt_span(a, ju64(in, "debt_usec")));
}

/* "Limits:" and "Headroom:": how far the quota may go, where it stands. */
static void print_limits(FILE *f, json_t *d) {
        json_t *old = json_object_get(d, "old"), *h = json_object_get(d, "headroom");
        uint64_t period = ju64(old, "period_usec");
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX];

        if (!jhas(old, "quota_usec")) {
                fprintf(f, LABEL "none: the quota is max\n", "Limits:");
                return;
        }
        fprintf(f, LABEL "quota up to %s\n", "Limits:", fmt_quota(a, jquota(d, "quota_limit_usec"), period));
        if (json_is_object(h) && period > 0) {
                fprintf(f, LABEL "%s above the baseline, level %" PRIu64 " of %" PRIu64 " (up to %s now); "
                           "%s held in reserve\n", "Headroom:",
                           fmt_cpus(a, ju64(h, "headroom_usec") * USEC_PER_SEC / period), ju64(h, "level"),
                           ju64(h, "levels"), fmt_cpus(b, ju64(h, "headroom_max_usec") * USEC_PER_SEC / period),
                           fmt_span(c, ju64(h, "reserve_usec")));
                if (jhas(h, "time_to_empty_usec"))
                        fprintf(f, LABEL "at the average spending, down to the reserve in %s\n", "",
                                   fmt_span(a, ju64(h, "time_to_empty_usec")));
        }
        fprintf(f, LABEL "next sample in %s\n", "", fmt_span(a, ju64(d, "next_sample_usec")));
}

/* Latency protection and contention: Class=, the rung and why, the levers
 * held ("Protection:" lines; nothing for a throughput unit left alone). */
static void print_protection(FILE *f, json_t *p) {
        json_t *pr = json_object_get(p, "protection"), *levers, *v;
        const char *cls, *note, *key, *sep = "held: ";
        bool latency;
        char a[FMT_MAX];

        if (!json_is_object(pr))
                return;
        cls = strq(jstr(pr, "class"));
        note = strq(jstr(pr, "note"));
        levers = json_object_get(pr, "levers");
        latency = jhas(pr, "latency_target_usec");
        if (strcmp(cls, "throughput") == 0 && note[0] == '\0' && json_object_size(levers) == 0)
                return;
        fprintf(f, LABEL "Class=%s%s%s\n", "Protection:", cls, latency ? " LatencyTarget=" : "",
                latency ? fmt_span_fine(a, ju64(pr, "latency_target_usec")) : "");
        if (note[0] != '\0')
                fprintf(f, LABEL "%s\n", "", note);
        if (json_object_size(levers) == 0)
                return;
        fprintf(f, LABEL, "");
        json_object_foreach(levers, key, v) {
                fprintf(f, "%s%s=%s", sep, key, strq(json_string_value(v)));
                sep = ", ";
        }
        fprintf(f, "\n");
}

int explain_print(FILE *f, json_t *p, uint64_t now_realtime_usec, bool colour) {
        json_t *d = json_object_get(p, "decision");
        uint64_t t;
        const char *rule;
        char a[FMT_MAX];

        fprintf(f, "%s%s%s (mode %s%s)\n", colour ? ANSI_BOLD : "", strq(jstr(p, "unit")),
                   colour ? ANSI_RESET : "", strq(jstr(p, "mode")), jbool(p, "paused") ? ", paused" : "");
        if (!json_is_object(d)) {
                fprintf(f, "No decision yet: the unit's cgroup has not been found or read.\n");
                print_protection(f, p);
                return 0;
        }
        rule = jstr(d, "rule");
        t = ju64(d, "realtime_usec");

        fprintf(f, LABEL "%s%s%s, %s ago\n", "Decision:", colour ? ANSI_BOLD : "", strq(rule),
                   colour ? ANSI_RESET : "", fmt_span(a, now_realtime_usec > t ? now_realtime_usec - t : 0));
        fprintf(f, LABEL "%s\n", "Because:", rule_words(d, rule));
        print_outcome(f, p, d);
        print_inputs(f, d);
        print_limits(f, d);
        fprintf(f, LABEL "%s\n", "Law:", strq(jstr(d, "explain")));
        print_protection(f, p);
        return 0;
}
