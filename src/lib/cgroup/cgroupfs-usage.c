/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cgroup's cumulative usage alone, from one file the caller holds open
 * (contracts in include/bwgov/cgroup/cgroupfs-usage.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/util/macro.h"
#include "cgroupfs-files.h"
#include "bwgov/cgroup/cgroupfs-path.h"
#include "bwgov/cgroup/cgroupfs-usage.h"

int bw_cg_usage_open(const struct bw_cg_root *root, const char *path, bool require_kernfs) {
        const bool v1 = root && root->layout == BW_CG_LAYOUT_V1;
        int dirfd, fd;

        if (!root || !path)
                return -EINVAL;
        if ((v1 ? root->acct_fd : root->v2_fd) < 0)
                return -EOPNOTSUPP;
        dirfd = bw_cg_openat_beneath(v1 ? root->acct_fd : root->v2_fd, path, O_RDONLY|O_DIRECTORY, true);
        if (dirfd < 0)
                return dirfd;
        fd = openat(dirfd, v1 ? "cpuacct.usage" : "cpu.stat", O_RDONLY|O_CLOEXEC|O_NOFOLLOW|O_NOCTTY);
        fd = fd < 0 ? -errno : fd;
        close(dirfd);
        if (fd >= 0 && require_kernfs) {
                struct statfs sfs;

                if (fstatfs(fd, &sfs) < 0 ||
                    (sfs.f_type != CGROUP_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC)) {
                        close(fd);
                        return -EOPNOTSUPP;
                }
        }
        return fd;
}

int bw_cg_usage_read(const struct bw_cg_root *root, int fd, uint64_t *ret_usec) {
        struct bw_cpu_stat st = { 0 };
        char buf[CG_READ_MAX];
        ssize_t n;
        int r;

        if (!root || fd < 0 || !ret_usec)
                return -EINVAL;
        n = pread(fd, buf, sizeof(buf), 0);
        if (n < 0)
                return -errno;
        if ((size_t) n >= sizeof(buf))
                return -EFBIG;
        if (root->layout == BW_CG_LAYOUT_V1)
                return bw_cpuacct_usage_parse(buf, (size_t) n, ret_usec);
        r = bw_cpustat_parse_v2(buf, (size_t) n, &st);
        if (r < 0)
                return r;
        if (!(st.seen & BW_CPUSTAT_USAGE))
                return -ENODATA;
        *ret_usec = st.usage_usec;
        return 0;
}
