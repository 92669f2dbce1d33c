/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* bwgovctl explain's text: an Explain reply (io.bwgov.Governor.varlink) as
 * people read it, the layout bwgovctl(1) describes. Pure: the reply, the
 * clock and the colour decision are parameters, so tests render canned
 * replies. */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Print reply to f. now_realtime_usec dates the decision ("N ago"); colour
 * makes the unit's name and the rule bold. A reply whose decision is null
 * prints the unit line and "No decision yet: ...". Returns 0. */
int explain_print(FILE *f, json_t *reply, uint64_t now_realtime_usec, bool colour);
