/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl history: the decisions the daemon recorded for one unit, as a
 * table, oldest first. */

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bwgov/util/macro.h"
#include "format.h"
#include "reply.h"
#include "table.h"
#include "verbs.h"

/* "2024-05-01 12:00:00" and its NUL. */
#define TIMESTAMP_MAX 64

enum {
        COL_TIME, COL_RULE, COL_QUOTA, COL_BURST, COL_USAGE, COL_THROTTLED, COL_PRESSURE, COL_CREDIT, COL_WRITTEN,
        _COL_MAX,
};

/* "new" when old is the same, else "old -> new"; buf holds 2 * FMT_MAX. */
static void fmt_change(char *buf, const char *old, const char *new) {
        if (strcmp(old, new) == 0)
                snprintf(buf, 2 * FMT_MAX, "%s", new);
        else
                snprintf(buf, 2 * FMT_MAX, "%s -> %s", old, new);
}

/* One history entry as a row. Returns 0 or -ENOMEM. */
static int add_entry_row(Table *t, json_t *e) {
        char when[TIMESTAMP_MAX] = "?", qo[FMT_MAX], qn[FMT_MAX], bo[FMT_MAX], bn[FMT_MAX];
        char quota[2 * FMT_MAX], burst[2 * FMT_MAX], use[FMT_MAX], thr[FMT_MAX], prs[FMT_MAX], cr[FMT_MAX];
        time_t sec = (time_t) (ju64(e, "realtime_usec") / USEC_PER_SEC);
        json_t *old = json_object_get(e, "old"), *new = json_object_get(e, "new");
        bool applied = jbool(e, "applied");
        struct tm tm;

        if (localtime_r(&sec, &tm))
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        fmt_change(quota, fmt_bw_quota(qo, old), fmt_bw_quota(qn, new));
        fmt_change(burst, fmt_bw_burst(bo, old), fmt_bw_burst(bn, new));

        const char *cells[_COL_MAX] = {
                [COL_TIME] = when,
                [COL_RULE] = jstr(e, "rule"),
                [COL_QUOTA] = quota,
                [COL_BURST] = burst,
                [COL_USAGE] = fmt_cpus(use, ju64(e, "usage_rate")),
                [COL_THROTTLED] = fmt_rate(thr, ju64(e, "throttle_rate")),
                [COL_PRESSURE] = fmt_rate(prs, ju64(e, "pressure_rate")),
                [COL_CREDIT] = fmt_span(cr, ju64(e, "credit_usec")),
                [COL_WRITTEN] = applied ? "yes" : "no",
        };
        const char *colours[_COL_MAX] = { [COL_WRITTEN] = applied ? ANSI_GREEN : NULL };

        return table_add_row(t, cells, colours);
}

static int print_history(const struct options *o, json_t *p) {
        static const char *const headers[_COL_MAX] = {
                [COL_TIME] = "TIME", [COL_RULE] = "RULE", [COL_QUOTA] = "QUOTA", [COL_BURST] = "BURST",
                [COL_USAGE] = "USAGE", [COL_THROTTLED] = "THROTTLED", [COL_PRESSURE] = "PRESSURE",
                [COL_CREDIT] = "CREDIT", [COL_WRITTEN] = "WRITTEN",
        };
        json_t *entries = json_object_get(p, "entries"), *e;
        uint64_t recorded = ju64(p, "recorded"), capacity = ju64(p, "capacity");
        size_t i, rows;
        Table *t;

        t = table_new(ELEMENTSOF(headers), headers);
        if (!t)
                return ctl_oom();
        for (size_t k = COL_USAGE; k <= COL_CREDIT; k++)
                table_set_right(t, k);

        json_array_foreach(entries, i, e)
                if (add_entry_row(t, e) < 0) {
                        table_free(t);
                        return ctl_oom();
                }
        rows = table_rows(t);
        if (rows > 0)
                table_print(t, stdout, o->legend, o->colour);
        table_free(t);
        if (o->legend)
                printf("%s%zu shown; %" PRIu64 " held (room for %" PRIu64 "), %" PRIu64 " recorded since start.\n",
                       rows > 0 ? "\n" : "", rows, recorded < capacity ? recorded : capacity, capacity, recorded);
        return 0;
}

/* {"unit": ..., "limit": N} with -n N (N clamped to a JSON integer). */
static json_t *history_params(const struct options *o) {
        if (!o->has_lines)
                return ctl_unit_params(o);
        return json_pack("{s:s, s:I}", "unit", o->unit, "limit",
                         (json_int_t) (o->lines > INT64_MAX ? INT64_MAX : o->lines));
}

DEFINE_VERB_CALL(history, VERB_TAKES_UNIT | VERB_TAKES_LINES | VERB_HAS_TABLE,
                 "Show the decisions recorded for a unit, oldest first",
                 "GetHistory", history_params, print_history);
