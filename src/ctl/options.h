/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The command line of one bwgovctl verb that talks to bwgovd: what the verb
 * takes (struct verb_info), its --help text, and the parsed options. */

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define CTL_INTERFACE      "io.bwgov.Governor"
#define CTL_DEFAULT_SOCKET BWGOV_RUNTIMEDIR "/" CTL_INTERFACE

/* Rows of bwgovctl status without --all: a table a terminal can hold, and a
 * reply that is quick to build and parse at 10 000 units. */
#define STATUS_ROWS 100

enum {
        VERB_TAKES_UNIT  = 1 << 0,
        VERB_TAKES_LINES = 1 << 1,
        VERB_HAS_TABLE   = 1 << 2,      /* --no-legend means something */
        VERB_MUTATING    = 1 << 3,      /* root only */
        VERB_TAKES_ALL   = 1 << 4,      /* -a --all: every unit, not the first STATUS_ROWS */
};

struct verb_info {
        const char *name;
        unsigned flags;                 /* VERB_* */
        const char *summary;            /* the --help line, without the full stop */
};

struct options {
        const struct verb_info *verb;
        bool json;
        bool legend;
        bool colour;
        const char *socket;
        bool all;
        bool has_lines;
        uint64_t lines;
        const char *unit;               /* argv's, with VERB_TAKES_UNIT */
};

/* Parse a verb's argv (argv[0] the verb's name; getopt's optind must be 0 or
 * 1 on entry). The socket comes from --socket=, else $BWGOV_SOCKET, else
 * CTL_DEFAULT_SOCKET. Returns 1 with *ret set, 0 when --help was shown,
 * -EINVAL for a usage error (already reported on stderr). */
int parse_options(int argc, char *argv[], const struct verb_info *v, struct options *ret);

/* $BWGOV_SOCKET when set and not empty, else CTL_DEFAULT_SOCKET. */
const char *ctl_default_socket(void);

/* A whole number from 1, digits only, into *ret. Returns 0 or -EINVAL. */
int parse_lines(const char *s, uint64_t *ret);
