/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Writes to quota files through inotify (see quotawatch.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "log.h"
#include "quotawatch.h"

#define QUOTAWATCH_MASK (IN_MODIFY | IN_DONT_FOLLOW)

struct entry {
        int wd;
        struct quota_watch *slot;
};

/* Sorted by wd: the kernel hands out watch descriptors in increasing order
 * (cyclically, so an insert may land anywhere after a wrap). */
struct QuotaWatch {
        int fd;
        struct entry *entries;
        size_t n, n_allocated;
};

/* The index of wd, or of where it would go. */
static size_t entry_search(const QuotaWatch *w, int wd, bool *found) {
        size_t lo = 0, hi = w->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (w->entries[mid].wd < wd)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < w->n && w->entries[lo].wd == wd;
        return lo;
}

static void entry_drop(QuotaWatch *w, size_t i) {
        memmove(w->entries + i, w->entries + i + 1, (w->n - i - 1) * sizeof(*w->entries));
        w->n--;
}

int quotawatch_new(QuotaWatch **ret) {
        QuotaWatch *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->fd < 0) {
                int r = -errno;

                free(w);
                return r;
        }
        *ret = w;
        return 0;
}

QuotaWatch *quotawatch_free(QuotaWatch *w) {
        if (!w)
                return NULL;
        close(w->fd);
        free(w->entries);
        free(w);
        return NULL;
}

int quotawatch_add(QuotaWatch *w, const char *path, struct quota_watch *slot) {
        bool found;
        size_t i;
        int wd;

        slot->written = true;
        if (slot->wd >= 0)
                return 0;
        wd = inotify_add_watch(w->fd, path, QUOTAWATCH_MASK);
        if (wd < 0)
                return -errno;
        i = entry_search(w, wd, &found);
        if (found)
                return -EEXIST;         /* the same inode: its watch is another slot's */
        if (w->n == w->n_allocated) {
                size_t n = grow_capacity(w->n_allocated, 64);
                struct entry *a = reallocarray(w->entries, n, sizeof(*a));

                if (!a) {
                        (void) inotify_rm_watch(w->fd, wd);
                        return -ENOMEM;
                }
                w->entries = a;
                w->n_allocated = n;
        }
        memmove(w->entries + i + 1, w->entries + i, (w->n - i) * sizeof(*w->entries));
        w->entries[i] = (struct entry) { wd, slot };
        w->n++;
        slot->wd = wd;
        return 0;
}

void quotawatch_remove(QuotaWatch *w, struct quota_watch *slot) {
        bool found;
        size_t i;

        if (!w || slot->wd < 0)
                return;
        i = entry_search(w, slot->wd, &found);
        if (found && w->entries[i].slot == slot) {
                (void) inotify_rm_watch(w->fd, slot->wd);
                entry_drop(w, i);
        }
        slot->wd = -1;
}

void quotawatch_drain(QuotaWatch *w) {
        /* IN_MODIFY carries no name: 16 bytes an event, a thousand a read. */
        char buf[16 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));

        if (!w)
                return;
        for (;;) {
                ssize_t n = read(w->fd, buf, sizeof(buf));

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                log_warning_errno(-errno, "Failed to read the quota watch: %s", STRERROR(-errno));
                        return;
                }
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *e = (const struct inotify_event *) p;
                        bool found;
                        size_t i;

                        p += sizeof(*e) + e->len;
                        if (e->mask & IN_Q_OVERFLOW) {
                                /* Some writes were not told: every file is read once. */
                                log_debug("The quota watch overflowed");
                                for (i = 0; i < w->n; i++)
                                        w->entries[i].slot->written = true;
                                continue;
                        }
                        i = entry_search(w, e->wd, &found);
                        if (!found)
                                continue;       /* removed since the kernel queued it */
                        w->entries[i].slot->written = true;
                        if (e->mask & IN_IGNORED) {
                                /* The file went (its cgroup with it): the watch did. */
                                w->entries[i].slot->wd = -1;
                                entry_drop(w, i);
                        }
                }
                if ((size_t) n < sizeof(buf) - sizeof(struct inotify_event) - NAME_MAX - 1)
                        return;         /* a short read: the queue is empty */
        }
}

size_t quotawatch_size(const QuotaWatch *w) {
        return w ? w->n : 0;
}
