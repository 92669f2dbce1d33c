/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Whether anyone wrote a cgroup's quota, told without reading the file: an
 * inotify IN_MODIFY watch on it. cgroupfs reports every write(2) that
 * succeeds, an identical value included (the VFS does, not the
 * controller); a refused write changed nothing and reports nothing. A quiet
 * unit's light sample reads its quota file only after a write was seen
 * (unit-sample.c): an idle cgroup costs one read per tick instead of two.
 *
 * No event source: the owner drains the queue (quotawatch_drain()) before
 * it looks at the flags, once per batch of samples, so a write costs no
 * wake-up of its own. A write queued after the drain is seen at the next
 * sample. Each watch points at a struct quota_watch the watcher's owner
 * keeps (in its Unit); the watch and the owner's struct go together. */

#include <stdbool.h>
#include <stddef.h>

typedef struct QuotaWatch QuotaWatch;

struct quota_watch {
        int wd;                 /* the inotify watch, -1 when none (never added, the file went, limit) */
        bool written;           /* a write was seen since the owner cleared this (set, too, when in doubt) */
};

int quotawatch_new(QuotaWatch **ret);
QuotaWatch *quotawatch_free(QuotaWatch *w);

/* Watch the file at path for writes; sets slot->wd (and slot->written,
 * so that the first look reads the file). Returns 0 or a negative errno:
 * -ENOSPC at the inotify watch limit, -EEXIST when the file is watched for
 * another slot already (slot->wd stays -1: the owner reads the file). */
int quotawatch_add(QuotaWatch *w, const char *path, struct quota_watch *slot);

/* End slot's watch (nothing when it has none); slot->wd becomes -1. */
void quotawatch_remove(QuotaWatch *w, struct quota_watch *slot);

/* Read what the kernel queued and set the flags of the files written. A
 * file removed (its cgroup with it) ends its watch with its flag set; a
 * queue that overflowed sets every flag. */
void quotawatch_drain(QuotaWatch *w);

/* Watches held. */
size_t quotawatch_size(const QuotaWatch *w);
