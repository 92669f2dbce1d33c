/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Quota writes the kernel refused for the burst, told by
 * src/bpf/refused.bpf.c (fexit on tg_set_cfs_bandwidth()/tg_set_bandwidth())
 * through a ring buffer that the event loop drains. The manager loads it on
 * kernels without the write-order patch, so that a runtime's or an
 * operator's lower quota still lands: the handler gets each refused write
 * (never bwgovd's own). Built without BPF, refused_new() fails with
 * -EOPNOTSUPP and says so. */

#include <systemd/sd-event.h>

#include "bwgov/telemetry/refused-abi.h"

typedef struct Refused Refused;

#define REFUSED_REASON_MAX 256

typedef void (*refused_handler_t)(const struct bw_refused_write *w, void *userdata);

/* Load, attach and watch. On failure returns a negative errno and writes
 * why, for people, into reason. */
int refused_new(sd_event *e, refused_handler_t handler, void *userdata, Refused **ret,
                char reason[static REFUSED_REASON_MAX]);
Refused *refused_free(Refused *r);

/* The kernel function the program is attached to ("tg_set_cfs_bandwidth"). */
const char *refused_function(const Refused *r);
/* Refused writes told so far. */
uint64_t refused_count(const Refused *r);
