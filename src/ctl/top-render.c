/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl top's rows, sort orders and frames (contracts in top-render.h):
 * only what GetStatus and ListUnits report, laid out. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "format.h"
#include "reply.h"
#include "table.h"
#include "top-render.h"

#define ANSI_REVERSE    "\033[7m"
#define ANSI_CLEAR_EOL  "\033[K"
#define ANSI_CLEAR_DOWN "\033[J"

/* The shortest a shortened unit name gets on the live screen. */
#define UNIT_MIN_WIDTH 16
/* A cell other than the unit's name: a formatted number, or "[##########] " and one. */
#define CELL_MAX (FMT_MAX + TOP_BAR_WIDTH + 4)
#define PPM 1000000u

enum order { ASCENDING = 1, DESCENDING = -1 };

static size_t size_min(size_t a, size_t b) {
        return a < b ? a : b;
}

static size_t size_max(size_t a, size_t b) {
        return a > b ? a : b;
}

static const struct column {
        const char *header, *name;
        char key;
        bool right;
        enum order order;
} columns[_TOP_COLUMN_MAX] = {
        [TOP_UNIT]      = { "UNIT",      "unit",      'n', false, ASCENDING  },
        [TOP_STATE]     = { "STATE",     "state",     's', false, ASCENDING  },
        [TOP_USAGE]     = { "CPU",       "usage",     'u', true,  DESCENDING },
        [TOP_BASELINE]  = { "BASELINE",  "baseline",  'b', true,  DESCENDING },
        [TOP_CREDIT]    = { "CREDIT",    "credit",    'c', false, ASCENDING  },
        [TOP_EMPTY]     = { "EMPTY IN",  "empty",     'e', true,  ASCENDING  },
        [TOP_HEADROOM]  = { "HEADROOM",  "headroom",  'h', true,  DESCENDING },
        [TOP_THROTTLED] = { "THROTTLED", "throttled", 't', true,  DESCENDING },
        [TOP_P99]       = { "RQ P99",    "p99",       'l', true,  DESCENDING },
        [TOP_CLASS]     = { "CLASS",     "class",     'k', false, ASCENDING  },
        [TOP_RUNG]      = { "RUNG",      "rung",      'g', false, DESCENDING },
};

/* The states as `sort by state` orders them: what needs a look first. */
static const char *const state_order[] = {
        "exhausted", "spending", "paused", "resting", "baseline", "new", "absent",
};

/* Latency protection's ladder, bottom up (bw_lat_level). */
static const char *const rungs[] = { "none", "hold", "weight", "weight-high", "slice", "idle" };

const char *top_column_header(enum top_column c) {
        return c >= 0 && c < _TOP_COLUMN_MAX ? columns[c].header : NULL;
}

const char *top_column_name(enum top_column c) {
        return c >= 0 && c < _TOP_COLUMN_MAX ? columns[c].name : NULL;
}

int top_column_from_name(const char *s) {
        for (int c = 0; s && c < _TOP_COLUMN_MAX; c++)
                if (strcmp(columns[c].name, s) == 0)
                        return c;
        return -EINVAL;
}

char top_column_key(enum top_column c) {
        return c >= 0 && c < _TOP_COLUMN_MAX ? columns[c].key : 0;
}

int top_column_from_key(char k) {
        for (int c = 0; c < _TOP_COLUMN_MAX; c++)
                if (columns[c].key == k)
                        return c;
        return -EINVAL;
}

static unsigned index_in(const char *const *table, size_t n, const char *s) {
        for (size_t i = 0; s && i < n; i++)
                if (strcmp(table[i], s) == 0)
                        return (unsigned) i;
        return (unsigned) n;
}

/* ---- rows ------------------------------------------------------------------ */

static void row_from_unit(json_t *u, struct top_row *r) {
        json_t *a = json_object_get(u, "activity"), *base = json_object_get(u, "baseline"),
               *prot = json_object_get(u, "protection");
        uint64_t period = ju64(base, "period_usec");

        *r = (struct top_row) {
                .name = strq(jstr(u, "name")),
                .adopted = jbool(u, "adopted"),
                .has_activity = json_is_object(a),
                .credit_usec = ju64(u, "credit_usec"),
                .credit_max_usec = ju64(u, "credit_max_usec"),
                .cls = strq(jstr(prot, "class")),
                .rung = strq(jstr(prot, "level")),
        };
        r->state = unit_state(u, &r->state_colour);
        r->rung_index = index_in(rungs, ELEMENTSOF(rungs), r->rung);
        if (json_is_object(base)) {
                r->baseline_max = !jhas(base, "quota_usec");
                if (!r->baseline_max && period > 0)
                        r->baseline_rate = ju64(base, "quota_usec") * PPM / period;
        }
        if (r->has_activity) {
                r->usage_rate = ju64(a, "usage_rate");
                r->throttle_rate = ju64(a, "throttle_rate");
                r->level = (unsigned) ju64(a, "level");
                r->levels = (unsigned) ju64(a, "levels");
                r->has_empty = jhas(a, "time_to_empty_usec");
                r->empty_usec = ju64(a, "time_to_empty_usec");
                r->has_p99 = jhas(a, "rq_wait_p99_usec");
                r->p99_usec = ju64(a, "rq_wait_p99_usec");
        }
        /* A latency unit's p99 of its protection window, where the sample had none. */
        if (!r->has_p99 && jhas(prot, "p99_usec")) {
                r->has_p99 = true;
                r->p99_usec = ju64(prot, "p99_usec");
        }
}

int top_rows_from_units(json_t *units, struct top_row **ret, size_t *ret_n) {
        struct top_row *rows = NULL;
        size_t n = json_array_size(units), i;
        json_t *u;

        if (!json_is_array(units))
                return -EBADMSG;
        if (n > 0) {
                rows = calloc(n, sizeof(*rows));
                if (!rows)
                        return -ENOMEM;
        }
        json_array_foreach(units, i, u) {
                if (!json_is_object(u)) {
                        free(rows);
                        return -EBADMSG;
                }
                row_from_unit(u, &rows[i]);
        }
        *ret = rows;
        *ret_n = n;
        return 0;
}

/* ---- sorting --------------------------------------------------------------- */

/* The row's value in a numeric column; false when it has none. */
static bool row_number(const struct top_row *r, enum top_column c, uint64_t *ret) {
        switch (c) {
        case TOP_STATE:
                *ret = index_in(state_order, ELEMENTSOF(state_order), r->state);
                return true;
        case TOP_USAGE:
                *ret = r->usage_rate;
                return r->has_activity;
        case TOP_BASELINE:
                *ret = r->baseline_max ? UINT64_MAX : r->baseline_rate;
                return r->adopted;
        case TOP_CREDIT:
                *ret = r->credit_max_usec > 0 ? r->credit_usec * PPM / r->credit_max_usec : 0;
                return r->adopted && r->credit_max_usec > 0;
        case TOP_EMPTY:
                *ret = r->empty_usec;
                return r->has_empty;
        case TOP_HEADROOM:
                *ret = r->level;
                return r->has_activity;
        case TOP_THROTTLED:
                *ret = r->throttle_rate;
                return r->has_activity;
        case TOP_P99:
                *ret = r->p99_usec;
                return r->has_p99;
        case TOP_RUNG:
                *ret = r->rung_index;
                return true;
        default:
                return false;
        }
}

struct sort_by {
        enum top_column c;
        int dir;
};

static int compare_rows(const void *x, const void *y, void *userdata) {
        const struct top_row *a = x, *b = y;
        const struct sort_by *s = userdata;
        uint64_t va = 0, vb = 0;
        bool ha, hb;
        int k = 0;

        if (s->c == TOP_CLASS)
                k = strcmp(a->cls, b->cls) * s->dir;
        else if (s->c != TOP_UNIT) {
                ha = row_number(a, s->c, &va);
                hb = row_number(b, s->c, &vb);
                if (ha != hb)
                        return ha ? -1 : 1;     /* without a value: last, either way */
                k = va == vb ? 0 : (va < vb ? -1 : 1) * s->dir;
        }
        if (k != 0)
                return k;
        return strcmp(a->name, b->name) * (s->c == TOP_UNIT ? s->dir : 1);
}

void top_sort(struct top_row *rows, size_t n, enum top_column by, bool reverse) {
        struct sort_by s = { .c = by, .dir = (int) columns[by].order * (reverse ? -1 : 1) };

        if (n > 1)
                qsort_r(rows, n, sizeof(*rows), compare_rows, &s);
}

/* ---- cells ----------------------------------------------------------------- */

/* fmt_cpus() without its " CPU". */
static void cpus(char *buf, uint64_t rate) {
        char t[FMT_MAX];

        fmt_cpus(t, rate);
        t[strcspn(t, " ")] = 0;
        snprintf(buf, CELL_MAX, "%s", t);
}

static const char *credit_colour(uint64_t ppm) {
        return ppm >= PPM / 2 ? ANSI_GREEN : ppm >= PPM / 5 ? ANSI_YELLOW : ANSI_RED;
}

/* "62%", live "[######    ] 62%". */
static void credit_cell(char *buf, const struct top_row *r, bool bar, const char **ret_colour) {
        char share[FMT_MAX], fill[TOP_BAR_WIDTH + 1];
        uint64_t ppm, filled;

        if (!r->adopted || r->credit_max_usec == 0) {
                snprintf(buf, CELL_MAX, "-");
                return;
        }
        ppm = r->credit_usec >= r->credit_max_usec ? PPM : r->credit_usec * PPM / r->credit_max_usec;
        fmt_share(share, ppm, PPM);
        *ret_colour = credit_colour(ppm);
        if (!bar) {
                snprintf(buf, CELL_MAX, "%s", share);
                return;
        }
        filled = (ppm * TOP_BAR_WIDTH + PPM / 2) / PPM;
        memset(fill, ' ', TOP_BAR_WIDTH);
        memset(fill, '#', (size_t) filled);
        fill[TOP_BAR_WIDTH] = 0;
        snprintf(buf, CELL_MAX, "[%s] %s", fill, share);
}

static void row_cells(const struct top_row *r, bool bar, char cells[][CELL_MAX], const char **colours) {
        char t[FMT_MAX];

        for (size_t c = 0; c < _TOP_COLUMN_MAX; c++) {
                snprintf(cells[c], CELL_MAX, "-");
                colours[c] = NULL;
        }
        snprintf(cells[TOP_STATE], CELL_MAX, "%s", r->state);
        colours[TOP_STATE] = r->state_colour;
        if (r->has_activity) {
                cpus(cells[TOP_USAGE], r->usage_rate);
                snprintf(cells[TOP_HEADROOM], CELL_MAX, "%u/%u", r->level, r->levels);
                snprintf(cells[TOP_THROTTLED], CELL_MAX, "%s", fmt_share(t, r->throttle_rate, PPM));
                colours[TOP_THROTTLED] = r->throttle_rate > 0 ? ANSI_RED : NULL;
        }
        if (r->adopted && r->baseline_max)
                snprintf(cells[TOP_BASELINE], CELL_MAX, "max");
        else if (r->adopted)
                cpus(cells[TOP_BASELINE], r->baseline_rate);
        credit_cell(cells[TOP_CREDIT], r, bar, &colours[TOP_CREDIT]);
        if (r->has_empty)
                snprintf(cells[TOP_EMPTY], CELL_MAX, "%s", fmt_span(t, r->empty_usec));
        if (r->has_p99)
                snprintf(cells[TOP_P99], CELL_MAX, "%s", fmt_span_fine(t, r->p99_usec));
        snprintf(cells[TOP_CLASS], CELL_MAX, "%s", r->cls);
        snprintf(cells[TOP_RUNG], CELL_MAX, "%s", r->rung);
        colours[TOP_RUNG] = r->rung_index > 0 ? ANSI_YELLOW : NULL;
}

/* ---- lines ----------------------------------------------------------------- */

/* One output line: on the live screen cut at max columns (colour codes take
 * none), ended by "clear to the end of the line". */
struct line {
        FILE *f;
        const struct top_frame *fr;
        unsigned col, max;
        unsigned n;             /* lines written */
};

static void put(struct line *l, const char *s, size_t len, const char *colour) {
        size_t k = 0, w = 0;

        /* Bytes of the code points that still fit (UTF-8: count lead bytes). */
        while (k < len && (l->col + w < l->max || ((unsigned char) s[k] & 0xc0) == 0x80)) {
                w += ((unsigned char) s[k] & 0xc0) != 0x80;
                k++;
        }
        if (k == 0)
                return;
        if (colour && l->fr->colour)
                fputs(colour, l->f);
        fwrite(s, 1, k, l->f);
        if (colour && l->fr->colour)
                fputs(ANSI_RESET, l->f);
        l->col += (unsigned) w;
}

static void puts_(struct line *l, const char *s, const char *colour) {
        put(l, s, strlen(s), colour);
}

static void pad(struct line *l, size_t n) {
        while (n-- > 0)
                put(l, " ", 1, NULL);
}

static void line_end(struct line *l) {
        if (l->fr->live)
                fputs(ANSI_CLEAR_EOL, l->f);
        l->n++;
        l->col = 0;
        /* No newline after the screen's last line: it would scroll. */
        if (!l->fr->live || l->n < l->fr->height)
                fputc('\n', l->f);
}

static bool line_room(const struct line *l) {
        return !l->fr->live || l->n < l->fr->height;
}

static void printf_line(struct line *l, const char *colour, const char *fmt, ...) _printf_(3, 4);
static void printf_line(struct line *l, const char *colour, const char *fmt, ...) {
        char buf[512];
        va_list ap;

        if (!line_room(l))
                return;
        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        puts_(l, buf, colour);
        line_end(l);
}

static size_t text_width(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                n += ((unsigned char) *s & 0xc0) != 0x80;
        return n;
}

/* ---- the summary ----------------------------------------------------------- */

static void put_summary(struct line *l) {
        const struct top_frame *fr = l->fr;
        json_t *st = fr->status;
        size_t spending = 0, exhausted = 0;
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX];

        for (size_t i = 0; i < fr->n_rows; i++) {
                spending += strcmp(fr->rows[i].state, "spending") == 0;
                exhausted += strcmp(fr->rows[i].state, "exhausted") == 0;
        }
        printf_line(l, NULL, "bwgovd %s: %" PRIu64 " units, %" PRIu64 " present, %" PRIu64 " boosted, %" PRIu64
                    " paused; %zu spending, %zu exhausted", strq(jstr(st, "version")), ju64(st, "n_units"),
                    ju64(st, "n_present"), ju64(st, "n_boosted"), ju64(st, "n_paused"), spending, exhausted);

        if (!line_room(l))
                return;
        puts_(l, "Host: CPU pressure ", NULL);
        puts_(l, fmt_rate(a, ju64(st, "host_pressure_rate")), NULL);
        if (ju64(st, "host_pressure_limit") > 0) {
                snprintf(c, sizeof(c), " of %s, ", fmt_rate(b, ju64(st, "host_pressure_limit")));
                puts_(l, c, NULL);
                if (jbool(st, "host_over_limit"))
                        puts_(l, "brake ON: headroom withdrawn", ANSI_RED);
                else
                        puts_(l, "brake off", NULL);
        } else
                puts_(l, ", no limit (no brake)", NULL);
        snprintf(c, sizeof(c), "; outside the governed units %s", fmt_cpus(a, ju64(st, "host_other_usage_rate")));
        puts_(l, c, NULL);
        if (jhas(st, "host_other_wait_rate")) {
                snprintf(c, sizeof(c), ", waiting %s", fmt_rate(a, ju64(st, "host_other_wait_rate")));
                puts_(l, c, NULL);
        }
        if (jhas(st, "host_other_behind_rate")) {
                snprintf(c, sizeof(c), " (%s behind the units)", fmt_rate(a, ju64(st, "host_other_behind_rate")));
                puts_(l, c, NULL);
        }
        line_end(l);
}

static void put_keys_line(struct line *l) {
        const struct top_frame *fr = l->fr;
        char a[FMT_MAX];

        if (fr->message) {
                printf_line(l, ANSI_RED, "%s", fr->message);
                return;
        }
        printf_line(l, NULL, "%zu of %" PRIu64 " units by %s%s, every %s; keys: n s u b c e h t l k g sort, "
                    "r reverse, < > column, + - interval, ? help, q quit",
                    fr->n_rows, fr->total, columns[fr->sort].name, fr->reverse ? " (reversed)" : "",
                    fmt_span(a, fr->interval_usec));
}

static void put_help(struct line *l) {
        static const char *const text[] = {
                "bwgovctl top: what bwgovd does with each unit, refreshed every interval.",
                "",
                "  n s u b c e h t l k g   sort by unit, state, CPU, baseline, credit, empty in,",
                "                          headroom, throttled, run-queue p99, class, rung",
                "  < >                     sort by the column on the left, on the right",
                "  r                       reverse the order",
                "  + -                     refresh less, more often",
                "  space                   refresh now",
                "  q                       quit",
                "",
                "Any key returns to the table; bwgovctl(1), TOP, explains each column.",
        };

        for (size_t i = 0; i < ELEMENTSOF(text) && line_room(l); i++)
                printf_line(l, NULL, "%s", text[i]);
}

/* ---- the table ------------------------------------------------------------- */

struct cells {
        char v[_TOP_COLUMN_MAX][CELL_MAX];
        const char *colour[_TOP_COLUMN_MAX];
};

static void put_cell(struct line *l, const char *s, const char *colour, size_t w, bool right, bool last) {
        size_t tw = text_width(s);

        if (right && tw < w)
                pad(l, w - tw);
        puts_(l, s, colour);
        if (!right && !last && tw < w)
                pad(l, w - tw);
}

/* A unit name cut to w columns in the middle: "libpod-0123...ef.scope". */
static const char *shorten(const char *name, size_t w, char *buf, size_t size) {
        size_t len = strlen(name), head, tail;

        if (len <= w || w < 5 || w >= size)
                return name;
        head = (w - 3) / 2;
        tail = w - 3 - head;
        snprintf(buf, size, "%.*s...%s", (int) head, name, name + len - tail);
        return buf;
}

static void put_header_row(struct line *l, const size_t *w) {
        for (size_t c = 0; c < _TOP_COLUMN_MAX; c++) {
                const char *colour = l->fr->live && c == (size_t) l->fr->sort ? ANSI_REVERSE : ANSI_BOLD;

                if (c > 0)
                        pad(l, 2);
                put_cell(l, columns[c].header, colour, w[c], columns[c].right, c + 1 == _TOP_COLUMN_MAX);
        }
        line_end(l);
}

/* Column widths; the unit's column narrowed to fit a live screen. */
static void widths(const struct top_frame *fr, const struct cells *cells, size_t n, size_t *w) {
        size_t total = 0;

        for (size_t c = 0; c < _TOP_COLUMN_MAX; c++)
                w[c] = fr->legend ? strlen(columns[c].header) : 0;
        for (size_t i = 0; i < n; i++) {
                size_t k = text_width(fr->rows[i].name);

                if (k > w[TOP_UNIT])
                        w[TOP_UNIT] = k;
                for (size_t c = 1; c < _TOP_COLUMN_MAX; c++)
                        if (text_width(cells[i].v[c]) > w[c])
                                w[c] = text_width(cells[i].v[c]);
        }
        for (size_t c = 0; c < _TOP_COLUMN_MAX; c++)
                total += w[c] + (c > 0 ? 2 : 0);
        if (fr->live && total > fr->width && w[TOP_UNIT] > UNIT_MIN_WIDTH)
                w[TOP_UNIT] = size_max(total - w[TOP_UNIT] < fr->width ? fr->width - (total - w[TOP_UNIT]) : 0,
                                       UNIT_MIN_WIDTH);
}

static int put_table(struct line *l) {
        const struct top_frame *fr = l->fr;
        size_t n = fr->n_rows, shown = 0, w[_TOP_COLUMN_MAX];
        _cleanup_free_ struct cells *cells = NULL;

        /* Live: only the rows a screen can hold are laid out. */
        if (fr->live)
                n = size_min(n, fr->height > l->n ? (size_t) (fr->height - l->n) : 0);
        if (n > 0) {
                cells = calloc(n, sizeof(*cells));
                if (!cells)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                row_cells(&fr->rows[i], fr->live, cells[i].v, cells[i].colour);
        widths(fr, cells, n, w);

        if (fr->legend && line_room(l))
                put_header_row(l, w);
        for (size_t i = 0; i < n && line_room(l); i++) {
                char name[256];

                /* The last line of a full screen says what did not fit. */
                if (fr->live && l->n + 1 == fr->height && i + 1 < fr->n_rows)
                        break;
                put_cell(l, shorten(fr->rows[i].name, w[TOP_UNIT], name, sizeof(name)),
                         fr->live ? ANSI_BOLD : NULL, w[TOP_UNIT], false, false);
                for (size_t c = 1; c < _TOP_COLUMN_MAX; c++) {
                        pad(l, 2);
                        put_cell(l, cells[i].v[c], cells[i].colour[c], w[c], columns[c].right,
                                 c + 1 == _TOP_COLUMN_MAX);
                }
                line_end(l);
                shown++;
        }
        if (fr->live && shown < fr->n_rows)
                printf_line(l, ANSI_GREY, "%zu more not shown: a taller terminal, or sort to bring them up",
                            fr->n_rows - shown);
        return 0;
}

int top_render(FILE *f, const struct top_frame *fr) {
        struct line l = { .f = f, .fr = fr, .max = fr->live ? fr->width : UINT32_MAX };

        if (fr->live && (fr->width == 0 || fr->height == 0))
                return 0;
        if (fr->legend && fr->status) {
                put_summary(&l);
                if (fr->live)
                        put_keys_line(&l);
                if (line_room(&l))
                        line_end(&l);
        } else if (fr->live && fr->message)
                printf_line(&l, ANSI_RED, "%s", fr->message);
        if (fr->live && fr->help)
                put_help(&l);
        else if (fr->status && put_table(&l) < 0)
                return -ENOMEM;
        if (fr->live)
                fputs(ANSI_CLEAR_DOWN, f);
        return 0;
}
