/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Arms a PSI trigger on a cgroup's cpu.pressure (see psi-trigger.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "bwgov/util/util.h"
#include "log.h"
#include "psi-trigger.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

int psi_trigger_open(int v2_dirfd, const char *name, uint64_t target_pressure, uint64_t window_usec, bool any_window) {
        const uint64_t w2 = PSI_TRIGGER_UNPRIVILEGED_WINDOW_USEC;
        _cleanup_close_ int fd = -1;
        uint64_t threshold;
        struct statfs sfs;
        char buf[64];
        int n;

        fd = openat(v2_dirfd, "cpu.pressure", O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return log_debug_errno(errno, "%s: no cpu.pressure for a trigger: %s", name, STRERROR(errno));
        if (fstatfs(fd, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
                log_debug("%s: cpu.pressure is not on cgroup2, no trigger", name);
                return -EMEDIUMTYPE;
        }

        if (!any_window)
                window_usec = (window_usec + w2 - 1) / w2 * w2;
        threshold = u64_min(u64_max(target_pressure * window_usec / USEC_PER_SEC, USEC_PER_MSEC), window_usec);

        /* The kernel takes the trigger with its NUL (psi_write()), on the
         * fd that is then polled: not a bw_write_at() of a path. */
        n = snprintf(buf, sizeof buf, "full %" PRIu64 " %" PRIu64, threshold, window_usec);
        if (write(fd, buf, (size_t) n + 1) < 0)
                return log_debug_errno(errno, "%s: PSI trigger \"%s\" refused: %s", name, buf, STRERROR(errno));
        log_debug("%s: PSI trigger full %" PRIu64 "us per %" PRIu64 "us", name, threshold, window_usec);
        return TAKE_FD(fd);
}
