/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An entry's lever records (state-levers.c; their JSON is state-internal.h's). */
#pragma once

#include "bwgov/state/state.h"

/* Set lever l's record in u to copies of r's values (r NULL or without an
 * original: clear it). Returns 0, -EINVAL, -ENOMEM (u unchanged). */
int bw_state_unit_set_lever(struct bw_state_unit *u, enum bw_lever l, const struct bw_ledger_lever *r);
