/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl's aligned text tables: cells copied row by row, widths measured
 * at print time; and whether to colour at all. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "table.h"

bool table_use_colour(void) {
        const char *term = getenv("TERM");

        return isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && !(term && strcmp(term, "dumb") == 0);
}

struct Table {
        size_t n_columns;
        char **headers;
        bool *right;
        char **cells;           /* row-major, n_rows * n_columns */
        const char **colours;   /* static strings, same layout */
        size_t n_rows;
};

Table *table_new(size_t n_columns, const char *const *headers) {
        Table *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        t->n_columns = n_columns;
        t->headers = calloc(n_columns, sizeof(char *));
        t->right = calloc(n_columns, sizeof(bool));
        if (!t->headers || !t->right) {
                table_free(t);
                return NULL;
        }
        for (size_t i = 0; i < n_columns; i++) {
                t->headers[i] = strdup(headers[i]);
                if (!t->headers[i]) {
                        table_free(t);
                        return NULL;
                }
        }
        return t;
}

void table_free(Table *t) {
        if (!t)
                return;
        for (size_t i = 0; t->headers && i < t->n_columns; i++)
                free(t->headers[i]);
        for (size_t i = 0; i < t->n_rows * t->n_columns; i++)
                free(t->cells[i]);
        free(t->headers);
        free(t->right);
        free(t->cells);
        free(t->colours);
        free(t);
}

void table_set_right(Table *t, size_t column) {
        if (column < t->n_columns)
                t->right[column] = true;
}

int table_add_row(Table *t, const char *const *cells, const char *const *colours) {
        size_t base = t->n_rows * t->n_columns;
        char **c;
        const char **k;

        c = realloc(t->cells, (base + t->n_columns) * sizeof(char *));
        if (!c)
                return -ENOMEM;
        t->cells = c;
        k = realloc(t->colours, (base + t->n_columns) * sizeof(char *));
        if (!k)
                return -ENOMEM;
        t->colours = k;

        for (size_t i = 0; i < t->n_columns; i++) {
                t->cells[base + i] = strdup(cells[i] ? cells[i] : "-");
                t->colours[base + i] = colours ? colours[i] : NULL;
                if (!t->cells[base + i]) {
                        for (size_t j = 0; j < i; j++)
                                free(t->cells[base + j]);
                        return -ENOMEM;
                }
        }
        t->n_rows++;
        return 0;
}

size_t table_rows(const Table *t) {
        return t->n_rows;
}

/* Display width: code points, not bytes (no wide characters expected). */
static size_t width(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                n += ((unsigned char) *s & 0xc0) != 0x80;
        return n;
}

static void print_cell(FILE *f, const char *s, const char *colour, size_t w, bool right, bool last) {
        size_t pad = w - width(s);

        if (right)
                fprintf(f, "%*s", (int) pad, "");
        fprintf(f, "%s%s%s", colour ? colour : "", s, colour ? ANSI_RESET : "");
        if (!right && !last)
                fprintf(f, "%*s", (int) pad, "");
}

void table_print(const Table *t, FILE *f, bool legend, bool colour) {
        size_t *w = calloc(t->n_columns, sizeof(size_t));

        if (!w)
                return;
        for (size_t i = 0; i < t->n_columns; i++) {
                w[i] = legend ? width(t->headers[i]) : 0;
                for (size_t r = 0; r < t->n_rows; r++) {
                        size_t k = width(t->cells[r * t->n_columns + i]);
                        if (k > w[i])
                                w[i] = k;
                }
        }

        if (legend) {
                for (size_t i = 0; i < t->n_columns; i++) {
                        if (i > 0)
                                fputs("  ", f);
                        print_cell(f, t->headers[i], colour ? ANSI_BOLD : NULL, w[i], t->right[i],
                                   i + 1 == t->n_columns);
                }
                fputc('\n', f);
        }
        for (size_t r = 0; r < t->n_rows; r++) {
                for (size_t i = 0; i < t->n_columns; i++) {
                        if (i > 0)
                                fputs("  ", f);
                        print_cell(f, t->cells[r * t->n_columns + i],
                                   colour ? t->colours[r * t->n_columns + i] : NULL, w[i], t->right[i],
                                   i + 1 == t->n_columns);
                }
                fputc('\n', f);
        }
        free(w);
}
