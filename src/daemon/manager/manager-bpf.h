/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's side of its BPF programs: the run-queue telemetry
 * (rqstat-bpf.h), loaded as Telemetry= says, on the host's own cgroup tree
 * only, with the reason kept when there is none, counting every open unit
 * cgroup; and the refused quota writes (refused.h), handed to their unit. */
#pragma once

#include "manager-types.h"

/* Load or unload the run-queue telemetry as Telemetry= says (only on the
 * host's own cgroup tree), and count every open unit cgroup in it. A
 * failure to load is logged with its reason and leaves the daemon without
 * telemetry (manager-bpf.c). */
void manager_apply_rqstat(Manager *m);
/* Follow quota writes the kernel refuses for our burst (refused.h), once,
 * at startup: not needed where the kernel has the write-order patch
 * (write_order_free), nor on a cgroup tree other than the host's. */
void manager_follow_refused(Manager *m, bool write_order_free);
