/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.json: bw_state_parse(), bw_state_format(), bw_state_find() and
 * bw_state_classify() on the input as the document.
 *
 * Properties: the result is 0 or -EINVAL; the entries are sorted by name
 * and each is found by name; every stored bandwidth validates; the state
 * formatted and parsed again is the same state (parse(format(x)) == x),
 * and formats to the same text; a second format of unchanged entries
 * formats none of them anew; the baseline is classified as the baseline,
 * the written and pending values as ours. */

#include <errno.h>
#include <string.h>

#include "bwgov/cpumax.h"
#include "bwgov/lever.h"
#include "bwgov/macro.h"
#include "bwgov/state.h"
#include "fuzz-util.h"

static bool same_bw(const struct bw_bandwidth *a, const struct bw_bandwidth *b) {
        return a->quota_usec == b->quota_usec && a->period_usec == b->period_usec &&
                a->burst_usec == b->burst_usec && a->has_burst == b->has_burst;
}

static bool same_str(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_unit(const struct bw_state_unit *a, const struct bw_state_unit *b) {
        if (!same_str(a->name, b->name) || !same_str(a->cgroup, b->cgroup) || !same_bw(&a->baseline, &b->baseline))
                return false;
        if (a->has_written != b->has_written || (a->has_written && !same_bw(&a->written, &b->written)))
                return false;
        if (a->has_pending != b->has_pending || (a->has_pending && !same_bw(&a->pending, &b->pending)))
                return false;
        if (a->credit_usec != b->credit_usec || a->debt_usec != b->debt_usec || a->paused != b->paused ||
            a->slice_usec != b->slice_usec)
                return false;
        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                if (!same_str(a->levers[l], b->levers[l]))
                        return false;
        return true;
}

/* What bwgov may write over a baseline: its period, and a quota no lower
 * (unlimited only over an unlimited baseline). */
static bool could_write(const struct bw_bandwidth *w, const struct bw_bandwidth *b) {
        if (w->period_usec != b->period_usec)
                return false;
        if (b->quota_usec == BW_QUOTA_MAX)
                return w->quota_usec == BW_QUOTA_MAX;
        return w->quota_usec == BW_QUOTA_MAX || w->quota_usec >= b->quota_usec;
}

static void check_units(struct bw_state *s) {
        for (size_t i = 0; i < s->n_units; i++) {
                struct bw_state_unit *u = &s->units[i];

                fuzz_check(i == 0 || strcmp(s->units[i - 1].name, u->name) < 0);
                fuzz_check(bw_state_find(s, u->name) == u);
                fuzz_check(bw_bandwidth_validate(&u->baseline) == 0);
                fuzz_check(!u->has_written || bw_bandwidth_validate(&u->written) == 0);
                fuzz_check(!u->has_pending || bw_bandwidth_validate(&u->pending) == 0);
                fuzz_check(bw_state_classify(u, &u->baseline) == BW_OWNERSHIP_BASELINE);
                /* A recorded value bwgov could have written is its own; one
                 * it could not (another period, below the baseline, a limit
                 * over an unlimited baseline) is stale or edited and never
                 * trusted (bw_state_classify()). */
                fuzz_check(!u->has_written || !could_write(&u->written, &u->baseline) ||
                           bw_state_classify(u, &u->written) != BW_OWNERSHIP_EXTERNAL);
                fuzz_check(!u->has_pending || !could_write(&u->pending, &u->baseline) ||
                           bw_state_classify(u, &u->pending) != BW_OWNERSHIP_EXTERNAL);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(bw_state_done) struct bw_state s = { 0 }, again = { 0 };
        _cleanup_free_ char *text = NULL, *text2 = NULL, *text3 = NULL;
        int r;

        r = bw_state_parse((const char *) data, size, &s);
        fuzz_check(r == 0 || r == -EINVAL);
        if (r < 0) {
                fuzz_check(s.n_units == 0 && !s.units);
                return 0;
        }
        check_units(&s);

        fuzz_check(bw_state_format(&s, &text) == 0);
        fuzz_check(s.formatted == s.n_units);
        fuzz_check(bw_state_parse(text, strlen(text), &again) == 0);
        fuzz_check(again.n_units == s.n_units);
        for (size_t i = 0; i < s.n_units; i++)
                fuzz_check(same_unit(&s.units[i], &again.units[i]));

        fuzz_check(bw_state_format(&again, &text2) == 0);
        fuzz_check(strcmp(text, text2) == 0);
        fuzz_check(bw_state_format(&s, &text3) == 0);
        fuzz_check(s.formatted == 0 && strcmp(text, text3) == 0);
        return 0;
}
