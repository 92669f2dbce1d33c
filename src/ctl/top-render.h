/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* bwgovctl top's screen: the rows taken from a ListUnits reply, their sort
 * orders, and the text of one frame (live, fitted to the terminal, with
 * bars and colours) or of one batch table. Pure: the replies, the terminal's
 * size and the colour decision are parameters, so tests render canned
 * replies. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The columns, left to right; each is also a sort order. */
enum top_column {
        TOP_UNIT,
        TOP_STATE,
        TOP_USAGE,              /* CPU used over the latest sample */
        TOP_BASELINE,           /* the contract, in CPUs */
        TOP_CREDIT,             /* the credit bucket, as a share of CreditMax= */
        TOP_EMPTY,              /* time until the credit is down to its reserve */
        TOP_HEADROOM,           /* the headroom level */
        TOP_THROTTLED,          /* share of the sample throttled by the unit's own limit */
        TOP_P99,                /* run-queue wait p99 */
        TOP_CLASS,
        TOP_RUNG,               /* latency protection's rung */
        _TOP_COLUMN_MAX,
};

/* The column's header ("UNIT", "CPU", ...) and its name for --order= and
 * the screen ("unit", "usage", ...); NULL out of range. */
const char *top_column_header(enum top_column c);
const char *top_column_name(enum top_column c);
/* By --order= name; -EINVAL for none. */
int top_column_from_name(const char *s);
/* The key that sorts by the column on the live screen ('u', 'c', ...). */
char top_column_key(enum top_column c);
/* The column whose key is k, or -EINVAL. */
int top_column_from_key(char k);

/* One unit's row. Strings point into the reply it was taken from. */
struct top_row {
        const char *name;
        const char *state;
        const char *state_colour;       /* ANSI, or NULL */
        bool adopted;
        bool has_activity;              /* a decision was taken */
        uint64_t usage_rate;            /* µs/s */
        bool baseline_max;              /* an unlimited baseline */
        uint64_t baseline_rate;         /* µs/s, when adopted and not max */
        uint64_t credit_usec, credit_max_usec;
        bool has_empty;
        uint64_t empty_usec;
        unsigned level, levels;
        uint64_t throttle_rate;         /* µs/s, own limit */
        bool has_p99;
        uint64_t p99_usec;
        const char *cls;
        const char *rung;
        unsigned rung_index;            /* 0 none ... the ladder's order */
};

/* The rows of a ListUnits "units" array (borrowed: keep it while the rows
 * live). *ret is to free(). Returns 0, -EBADMSG when units is not an array
 * or an element not an object, -ENOMEM. */
int top_rows_from_units(json_t *units, struct top_row **ret, size_t *ret_n);

/* Sort in the column's natural order (names and classes A to Z, the credit
 * least first, the time to empty soonest first, every other number largest
 * first), reversed with reverse; rows without a value last either way, then
 * by name. */
void top_sort(struct top_row *rows, size_t n, enum top_column by, bool reverse);

struct top_frame {
        json_t *status;                 /* the GetStatus reply, or NULL after a failure */
        const struct top_row *rows;
        size_t n_rows;
        uint64_t total;                 /* configured units (ListUnits' total) */
        enum top_column sort;
        bool reverse;
        uint64_t interval_usec;
        bool live;                      /* the live screen: bars, fitted to width x height */
        bool colour;
        bool legend;                    /* the summary lines and the column headers */
        unsigned width, height;         /* live only */
        const char *message;            /* live: shown in place of the keys line (an error), or NULL */
        bool help;                      /* live: the keys, in full, in place of the table */
};

/* The width of the credit bar on the live screen, between its brackets. */
#define TOP_BAR_WIDTH 10

/* Write one frame to f. Batch (live false): the summary lines (with
 * legend), the header and one line per row, nothing cut. Live: at most
 * height lines of at most width columns (the unit names shortened in the
 * middle when the table is wider), each ended by "clear to the end of the
 * line", the rows that do not fit left out and counted. Returns 0 or
 * -ENOMEM. */
int top_render(FILE *f, const struct top_frame *fr);
