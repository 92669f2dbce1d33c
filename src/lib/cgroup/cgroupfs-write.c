/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one write path of a cgroup's bandwidth: read, compare, write only
 * what differs, in an order the kernel accepts, the burst read back
 * (contracts in include/bwgov/cgroup/cgroupfs-write.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libcgroup.h>

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"

#include "cgroupfs-files.h"
#include "bwgov/cgroup/cgroupfs-write.h"

/* One write of one formatted value of LEN bytes to NAME in the cgroup's
 * bandwidth directory, counted in stats.writes (a negative LEN is the
 * formatter's error, passed on). No read-modify here: callers decide. */
static int cg_write(struct bw_cg *cg, const char *name, const char *buf, int len) {
        int dfd, r;

        if (len < 0)
                return len;

        dfd = bw_cg_dir(cg, BW_CG_TREE_BW);
        if (dfd < 0)
                return dfd;
        r = bw_write_at(dfd, name, O_NOFOLLOW, buf, (size_t) len);
        if (r < 0)
                return r;
        r = bw_cg_fixture_trim(dfd, name, (size_t) len);
        if (r < 0)
                return r;

        cg->stats.writes++;
        return 0;
}

static int write_burst(struct bw_cg *cg, uint64_t burst_usec) {
        char buf[VALUE_MAX];

        return cg_write(cg, cg->layout == BW_CG_LAYOUT_V2 ? V2_BURST : V1_BURST, buf,
                        bw_u64_format(burst_usec, buf, sizeof(buf)));
}

static int write_v1_quota(struct bw_cg *cg, uint64_t quota_usec) {
        char buf[VALUE_MAX];

        return cg_write(cg, V1_QUOTA, buf, bw_cfs_quota_format(quota_usec, buf, sizeof(buf)));
}

static int write_v1_period(struct bw_cg *cg, uint64_t period_usec) {
        char buf[VALUE_MAX];

        return cg_write(cg, V1_PERIOD, buf, bw_u64_format(period_usec, buf, sizeof(buf)));
}

/* v1 hierarchies require a child's quota/period ratio to stay within its
 * parent's at every write. Of the two possible intermediate states, take the
 * one with the lower ratio: quota first leaves new_q/old_p, period first
 * leaves old_q/new_p; new_q/old_p <= old_q/new_p <=> new_q*new_p <= old_q*old_p.
 * "max" is unlimited: going to max, write the quota first (nothing is below
 * unlimited to violate); coming from max, write the period first. */
static bool v1_quota_first(const struct bw_bandwidth *cur, const struct bw_bandwidth *t) {
        __extension__ typedef unsigned __int128 u128;

        if (t->quota_usec == BW_QUOTA_MAX)
                return true;
        if (cur->quota_usec == BW_QUOTA_MAX)
                return false;

        return (u128) t->quota_usec * t->period_usec <= (u128) cur->quota_usec * cur->period_usec;
}

/* Step 2 of bw_cg_write_bandwidth(): quota and period. Sets *ret_written if
 * any file was written. */
static int write_quota_period(struct bw_cg *cg, const struct bw_bandwidth *cur,
                              const struct bw_bandwidth *t, bool *ret_written) {
        bool q = cur->quota_usec != t->quota_usec, p = cur->period_usec != t->period_usec;
        int r;

        *ret_written = q || p;

        if (cg->layout == BW_CG_LAYOUT_V2) {
                char buf[VALUE_MAX];

                if (!q && !p) {
                        cg->stats.skipped++;
                        return 0;
                }
                return cg_write(cg, V2_MAX, buf, bw_cpumax_format(t->quota_usec, t->period_usec, buf, sizeof(buf)));
        }

        cg->stats.skipped += !q + !p;

        if (q && p && v1_quota_first(cur, t)) {
                r = write_v1_quota(cg, t->quota_usec);
                if (r < 0)
                        return r;
                q = false;
        }
        if (p) {
                r = write_v1_period(cg, t->period_usec);
                if (r < 0)
                        return r;
        }
        return q ? write_v1_quota(cg, t->quota_usec) : 0;
}

int bw_cg_write_bandwidth(struct bw_cg *cg, const struct bw_bandwidth *target, struct bw_bandwidth *ret_now) {
        struct bw_bandwidth cur, t;
        uint64_t writes_before, burst_now;
        bool burst_done = false, quota_written;
        int r;

        if (!cg || !target)
                return -EINVAL;

        t = *target;
        r = bw_bandwidth_validate(&t);
        if (r < 0)
                return r;

        r = bw_cg_read_bandwidth(cg, &cur);
        if (r < 0)
                return r;

        if (!cur.has_burst && t.burst_usec != 0)
                return -EOPNOTSUPP;

        writes_before = cg->stats.writes;

        /* 1. Burst down first: the new, lower value fits under the current
         *    quota and under the target one. */
        if (cur.has_burst && t.burst_usec < cur.burst_usec) {
                r = write_burst(cg, t.burst_usec);
                if (r < 0)
                        return r;
                burst_done = true;
        }
        burst_now = burst_done ? t.burst_usec : cur.burst_usec;

        /* 2. Quota and period. The burst in place now is <= both the old
         *    and the new quota, so every intermediate state is valid. */
        r = write_quota_period(cg, &cur, &t, &quota_written);
        if (r < 0)
                return r;

        /* 3. Kernels before 6.10 scale the burst down by 1000 on every cpu.max
         *    write: read it back and put back what belongs there. */
        if (cur.has_burst && quota_written) {
                uint64_t b;
                bool has;

                r = bw_cg_read_burst(cg, &b, &has);
                if (r < 0)
                        return r;

                if (has && b != burst_now) {
                        if (burst_done || burst_now == t.burst_usec) {
                                r = write_burst(cg, t.burst_usec);
                                if (r < 0)
                                        return r;
                                cg->stats.burst_repairs++;
                                burst_done = true;
                        }
                        burst_now = b;
                }
        }

        /* 4. Burst up last, once the quota has room for it. */
        if (cur.has_burst && !burst_done) {
                if (burst_now != t.burst_usec) {
                        r = write_burst(cg, t.burst_usec);
                        if (r < 0)
                                return r;
                } else
                        cg->stats.skipped++;
        }

        if (ret_now) {
                if (cg->stats.writes == writes_before)
                        *ret_now = cur;
                else {
                        r = bw_cg_read_bandwidth(cg, ret_now);
                        if (r < 0)
                                return r;
                }
        }

        return (int) (cg->stats.writes - writes_before);
}
