/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Aligned text tables for bwgovctl: columns padded to the widest cell (in
 * UTF-8 code points), two blanks apart, the last column unpadded; an
 * optional header line (the "legend"), bold on a colour terminal. Also the
 * one decision whether bwgovctl's output is coloured, and the colours. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ANSI SGR sequences for the cells' colours. */
#define ANSI_RED    "\033[31m"
#define ANSI_GREEN  "\033[32m"
#define ANSI_YELLOW "\033[33m"
#define ANSI_GREY   "\033[2m"
#define ANSI_BOLD   "\033[1m"
#define ANSI_RESET  "\033[0m"

/* Colour only on a terminal, unless NO_COLOR is set (https://no-color.org)
 * or TERM=dumb. */
bool table_use_colour(void);

typedef struct Table Table;

/* headers: n_columns strings (copied). NULL on ENOMEM. */
Table *table_new(size_t n_columns, const char *const *headers);
void table_free(Table *t);

/* Right-align a column (numbers). */
void table_set_right(Table *t, size_t column);

/* Append a row: n_columns strings (copied; NULL prints "-"). colours, when
 * not NULL, holds an ANSI SGR sequence (or NULL) per cell, used only when
 * printing with colour. Returns 0 or -ENOMEM. */
int table_add_row(Table *t, const char *const *cells, const char *const *colours);

size_t table_rows(const Table *t);

/* Print; legend = print the header line. */
void table_print(const Table *t, FILE *f, bool legend, bool colour);
