/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lever ledger's rules: a record's values, whether bwgovd could have
 * made it, what undoing it means given the file's content, the back-off
 * between undo attempts. See ledger.h. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/cgroup/cpulist.h"
#include "bwgov/state/ledger.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"
#include "util/string-util.h"

static bool value_ok(const char *v) {
        return !v || (strlen(v) < BW_LEVER_VALUE_MAX && !strchr(v, '\n'));
}

int bw_ledger_lever_set(struct bw_ledger_lever *r, const char *original, const char *written, const char *weight) {
        struct bw_ledger_lever n = { 0 };

        if (!r || !original || !value_ok(original) || !value_ok(written) || !value_ok(weight))
                return -EINVAL;
        n.original = strdup(original);
        if (n.original && written)
                n.written = strdup(written);
        if (n.original && weight)
                n.weight = strdup(weight);
        if (!n.original || (written && !n.written) || (weight && !n.weight)) {
                bw_ledger_lever_done(&n);
                return -ENOMEM;
        }
        bw_ledger_lever_done(r);
        *r = n;
        return 0;
}

void bw_ledger_lever_done(struct bw_ledger_lever *r) {
        if (!r)
                return;
        free(r->original);
        free(r->written);
        free(r->weight);
        *r = (struct bw_ledger_lever) { 0 };
}

/* A whole decimal number, blanks around allowed. */
static bool number(const char *s, uint64_t min, uint64_t max) {
        const char *p = s;
        uint64_t v;

        while (*p == ' ')
                p++;
        if (bw_parse_digits(&p, &v) < 0)
                return false;
        while (*p == ' ' || *p == '\n')
                p++;
        return *p == '\0' && v >= min && v <= max;
}

static bool cpus(const char *s) {
        _cleanup_free_ unsigned *v = NULL;
        size_t n = 0;

        return bw_cpulist_parse(s, strlen(s), &v, &n) >= 0 && n > 0;
}

/* freeze and idle: 0 or 1, in either syntax (v1's freezer.state). */
static int flag(const char *s) {
        if (!s)
                return -1;
        if (bw_lever_same(BW_LEVER_FREEZE, s, "FROZEN") || streq(s, "1"))
                return 1;
        if (streq(s, "0") || streq(s, "THAWED"))
                return 0;
        return -1;
}

static bool weight_value(const char *s) {
        /* cpu.shares' range covers cpu.weight's. */
        return number(s, BW_WEIGHT_MIN, BW_SHARES_MAX);
}

bool bw_ledger_plausible(enum bw_lever l, const struct bw_ledger_lever *r) {
        if (!bw_ledger_has(r) || !value_ok(r->original) || !value_ok(r->written) || !value_ok(r->weight))
                return false;
        switch (l) {
        case BW_LEVER_FREEZE:
                return flag(r->original) == 0 && (!r->written || flag(r->written) == 1) && !r->weight;
        case BW_LEVER_IDLE:
                return flag(r->original) == 0 && (!r->written || flag(r->written) == 1) &&
                       (!r->weight || weight_value(r->weight));
        case BW_LEVER_WEIGHT:
                return weight_value(r->original) && (!r->written || weight_value(r->written)) && !r->weight;
        case BW_LEVER_CPUS:
                return cpus(r->original) && (!r->written || cpus(r->written)) && !r->weight;
        case _BW_LEVER_MAX:
        default:
                return false;
        }
}

enum bw_ledger_undo bw_ledger_undo_plan(enum bw_lever l, const struct bw_ledger_lever *r, const char *cur) {
        if (!bw_ledger_has(r) || !cur || bw_lever_same(l, cur, r->original))
                return BW_LEDGER_UNDO_NOTHING;
        if (r->written)
                return bw_lever_same(l, cur, r->written) ? BW_LEDGER_UNDO_WRITE : BW_LEDGER_UNDO_THEIRS;
        /* An older bwgovd kept the original alone. It only ever wrote 1 to
         * freeze and idle; of a weight or a cpuset nothing tells. */
        if (l == BW_LEVER_FREEZE || l == BW_LEVER_IDLE)
                return flag(cur) == 1 ? BW_LEDGER_UNDO_WRITE : BW_LEDGER_UNDO_THEIRS;
        return BW_LEDGER_UNDO_WRITE;
}

const char *bw_ledger_idle_reset_weight(enum bw_cg_layout layout) {
        return layout == BW_CG_LAYOUT_V2 ? "100" : "1024";
}

uint64_t bw_ledger_retry_usec(unsigned attempts) {
        uint64_t d = BW_LEDGER_RETRY_MIN_USEC;

        for (unsigned i = 0; i < attempts && d < BW_LEDGER_RETRY_MAX_USEC; i++)
                d *= 2;
        return d < BW_LEDGER_RETRY_MAX_USEC ? d : BW_LEDGER_RETRY_MAX_USEC;
}
