/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* New cgroups through inotify (see cgwatch.h). */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "cgwatch.h"
#include "log.h"

#define CGWATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR)

struct watch {
        int wd;
        unsigned refs;
};

struct CgWatch {
        int fd;
        sd_event_source *source;
        struct watch *watches;          /* few: one per parent directory */
        size_t n_watches, n_allocated;
        cgwatch_fn fn;
        void *userdata;
};

static struct watch *watch_find(CgWatch *w, int wd) {
        for (size_t i = 0; i < w->n_watches; i++)
                if (w->watches[i].wd == wd)
                        return &w->watches[i];
        return NULL;
}

static void watch_drop(CgWatch *w, struct watch *x) {
        *x = w->watches[--w->n_watches];
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        /* Room for many events, aligned for struct inotify_event. */
        char buf[16 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
        CgWatch *w = userdata;

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));

                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                log_warning_errno(-errno, "Failed to read the cgroup watch: %s", STRERROR(-errno));
                        return 0;
                }
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *e = (const struct inotify_event *) p;
                        struct watch *x;

                        p += sizeof(*e) + e->len;
                        if (e->mask & IN_Q_OVERFLOW) {
                                /* Missed some: the interval's look finds them. */
                                log_debug("The cgroup watch overflowed");
                                continue;
                        }
                        if (e->mask & IN_IGNORED) {
                                x = watch_find(w, e->wd);
                                if (x) {
                                        watch_drop(w, x);
                                        w->fn(e->wd, NULL, false, w->userdata);
                                }
                                continue;
                        }
                        if ((e->mask & IN_ISDIR) && e->len > 0 && watch_find(w, e->wd))
                                w->fn(e->wd, e->name, e->mask & (IN_CREATE | IN_MOVED_TO), w->userdata);
                }
        }
}

int cgwatch_new(sd_event *event, cgwatch_fn fn, void *userdata, CgWatch **ret) {
        CgWatch *w = calloc(1, sizeof(*w));
        int r;

        if (!w)
                return -ENOMEM;
        w->fn = fn;
        w->userdata = userdata;
        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->fd < 0) {
                r = -errno;
                free(w);
                return r;
        }
        r = sd_event_add_io(event, &w->source, w->fd, EPOLLIN, on_inotify, w);
        if (r < 0) {
                cgwatch_free(w);
                return r;
        }
        *ret = w;
        return 0;
}

CgWatch *cgwatch_free(CgWatch *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->source);
        if (w->fd >= 0)
                close(w->fd);
        free(w->watches);
        free(w);
        return NULL;
}

int cgwatch_add(CgWatch *w, const char *path) {
        struct watch *x;
        int wd;

        /* The kernel hands back the same wd for the same inode. */
        wd = inotify_add_watch(w->fd, path, CGWATCH_MASK);
        if (wd < 0)
                return -errno;
        x = watch_find(w, wd);
        if (x) {
                x->refs++;
                return wd;
        }
        if (w->n_watches == w->n_allocated) {
                size_t n = w->n_allocated ? w->n_allocated * 2 : 8;
                struct watch *a = reallocarray(w->watches, n, sizeof(*a));

                if (!a) {
                        (void) inotify_rm_watch(w->fd, wd);
                        return -ENOMEM;
                }
                w->watches = a;
                w->n_allocated = n;
        }
        w->watches[w->n_watches++] = (struct watch) { wd, 1 };
        return wd;
}

void cgwatch_release(CgWatch *w, int wd) {
        struct watch *x;

        if (!w || wd < 0)
                return;
        x = watch_find(w, wd);
        if (!x || --x->refs > 0)
                return;
        (void) inotify_rm_watch(w->fd, wd);
        watch_drop(w, x);
}

size_t cgwatch_size(const CgWatch *w) {
        return w ? w->n_watches : 0;
}
