/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Walking the text of a kernel file (cpu.stat, cpu.pressure, ...) line by
 * line without copying it or needing a NUL terminator: the one line
 * splitter the parsers share. */

#include <stddef.h>

/* Called with one line (without its '\n', not NUL-terminated). Returns 0 to
 * go on, or a negative errno that stops the walk. */
typedef int (*bw_line_fn)(const char *line, size_t n, void *userdata);

/* Calls fn for each line of buf[0..len), in order. The last line may lack
 * its newline; a buffer that ends in '\n' has no empty line after it; an
 * empty buffer has no lines. Never reads past len.
 * Returns 0, the first negative value fn returned, or -EINVAL when buf is
 * NULL and len is not 0. */
int bw_lines_foreach(const char *buf, size_t len, bw_line_fn fn, void *userdata);
