/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The per-unit families of metrics.prom: name, type, help, and how a
 * unit's value is taken from its snapshot (governor.h). metrics.c renders
 * them. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "governor.h"

/* Labels and family names are copied in blocks of this many bytes, a
 * constant size the compiler turns into a few moves instead of a call to
 * memcpy() per line: their storage is padded to it, and a line reserves
 * that much more than it needs. */
#define BLOCK 16

/* A unit's value of one family; *ret_ok false leaves the unit out (the
 * value does not exist for it). */
typedef uint64_t (*unit_value_fn)(const struct governor_unit *u, bool *ret_ok);

/* Room for the longest family name, in whole BLOCKs; a longer name does
 * not compile (-Werror), one that fills it has no NUL: name_len counts. */
#define FAMILY_NAME_MAX (3 * BLOCK)

struct metrics_family {
        char name[FAMILY_NAME_MAX];
        size_t name_len;
        const char *type;
        unit_value_fn value;
        const char *help;
};

#define METRICS_N_FAMILIES 37

extern const struct metrics_family metrics_families[METRICS_N_FAMILIES];
