/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The write-order behaviour probe. Mainline's tg_set_cfs_bandwidth() refuses
 * a burst above the quota, and so any quota below the current burst: with
 * bwgovd's resting burst = quota, every other writer that lowers the quota
 * (systemd's CPUQuota=, a container runtime's cpu.max, echo) gets EINVAL
 * (seen on 6.18: quota 50000, burst 50000, "echo 25000 > cpu.cfs_quota_us"
 * is "Invalid argument"). The bwgov patch "sched/core: Do not refuse a CFS
 * quota below the burst" (like the change under review upstream in 2026)
 * accepts it and caps the refill at quota + min(burst, quota).
 *
 * The probe needs no task and no load: an empty scratch cgroup, four or five
 * writes, two reads, milliseconds. That is why it also runs where the
 * busy-loop probes never do (bwgovd's startup check). */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bwgov/kernel/kprobe-write-order.h"
#include "bwgov/kernel/kprobe.h"
#include "bwgov/util/macro.h"
#include "kprobe-scratch.h"

#define WO_PERIOD_USEC  100000ULL
#define WO_QUOTA_USEC   50000ULL
#define WO_LOWER_USEC   (WO_QUOTA_USEC / 2)

bool bw_kbehaviour_is_load_free(enum bw_kbehaviour b) {
        return b == BW_KBEHAVIOUR_WRITE_ORDER;
}

bool bw_kprobe_behaviour_allowed(const struct bw_kprobe_env *env, enum bw_kbehaviour b) {
        return env->allow_behaviour || (env->allow_load_free_behaviour && bw_kbehaviour_is_load_free(b));
}

static int write_direct(int dir_fd, const char *name, const char *value, void *userdata) {
        return bw_scratch_write(dir_fd, name, value);
}

struct wo_files {
        const char *quota;              /* v1: cpu.cfs_quota_us; v2: cpu.max */
        const char *burst;              /* cpu.cfs_burst_us, cpu.max.burst */
        bool v1;
};

/* The value that sets quota_us (v2 with the period; v1 alone). */
static void quota_value(const struct wo_files *f, unsigned long long quota_us, char *buf, size_t size) {
        if (f->v1)
                snprintf(buf, size, "%llu", quota_us);
        else
                snprintf(buf, size, "%llu %llu", quota_us, WO_PERIOD_USEC);
}

/* Quota and burst WO_QUOTA_USEC, the order mainline needs: period, quota,
 * burst. Returns 0 or the failing write's negative errno (*ret_what names it). */
static int wo_setup(int dir_fd, const struct wo_files *f, bw_kprobe_write_fn write, void *userdata,
                    const char **ret_what) {
        char v[64];
        int r = 0;

        if (f->v1) {
                snprintf(v, sizeof v, "%llu", WO_PERIOD_USEC);
                *ret_what = "cpu.cfs_period_us";
                r = write(dir_fd, "cpu.cfs_period_us", v, userdata);
        }
        if (r >= 0) {
                quota_value(f, WO_QUOTA_USEC, v, sizeof v);
                *ret_what = f->quota;
                r = write(dir_fd, f->quota, v, userdata);
        }
        if (r >= 0) {
                snprintf(v, sizeof v, "%llu", WO_QUOTA_USEC);
                *ret_what = f->burst;
                r = write(dir_fd, f->burst, v, userdata);
        }
        return r;
}

/* The quota write was refused with EINVAL: is the burst the reason? With
 * the burst at 0 the same quota must go through. */
static int wo_refused(int dir_fd, const struct wo_files *f, bw_kprobe_write_fn write, void *userdata,
                      const char *lower, struct bw_kprobe_result *ret) {
        int r;

        r = write(dir_fd, f->burst, "0", userdata);
        if (r >= 0)
                r = write(dir_fd, f->quota, lower, userdata);
        if (r < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: quota %llu refused with EINVAL, and still refused "
                                            "without a burst: %s", WO_LOWER_USEC, strerror(-r));
        return bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT,
                                    "behaviour: quota %llu below burst %llu refused with EINVAL "
                                    "(accepted with burst 0)", WO_LOWER_USEC, WO_QUOTA_USEC);
}

int bw_kprobe_write_order_at(int dir_fd, bool v1, bw_kprobe_write_fn write, void *userdata,
                             struct bw_kprobe_result *ret) {
        const struct wo_files f = {
                .quota = v1 ? "cpu.cfs_quota_us" : "cpu.max",
                .burst = v1 ? "cpu.cfs_burst_us" : "cpu.max.burst",
                .v1 = v1,
        };
        const char *what = NULL;
        uint64_t burst = 0;
        char lower[64];
        struct stat st;
        int r;

        if (!write)
                write = write_direct;
        if (fstatat(dir_fd, f.quota, &st, 0) < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: scratch cgroup has no %s%s", f.quota,
                                            v1 ? "" : BW_KPROBE_NO_CPU_CONTROLLER);
        if (fstatat(dir_fd, f.burst, &st, 0) < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: no %s (no burst, nothing to order)", f.burst);

        r = wo_setup(dir_fd, &f, write, userdata, &what);
        if (r < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: cannot set up %s: %s", what,
                                            strerror(-r));

        quota_value(&f, WO_LOWER_USEC, lower, sizeof lower);
        r = write(dir_fd, f.quota, lower, userdata);
        if (r == -EINVAL)
                return wo_refused(dir_fd, &f, write, userdata, lower, ret);
        if (r < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: quota %llu: %s", WO_LOWER_USEC,
                                            strerror(-r));

        r = bw_scratch_read_u64(dir_fd, f.burst, &burst);
        if (r < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: quota %llu accepted below burst %llu, but %s: %s",
                                            WO_LOWER_USEC, WO_QUOTA_USEC, f.burst, strerror(-r));
        /* cpu.max writes before 6.10 (6.1.93) passed the burst in the wrong
         * unit: 50000 came back as 50, too small to be checked at all. */
        if (!v1 && burst == WO_QUOTA_USEC / 1000)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "behaviour: the cpu.max write divided the burst by 1000 "
                                            "(burst bug), which hides the order check");
        if (burst == WO_QUOTA_USEC)
                return bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT,
                                            "behaviour: quota %llu accepted below burst %llu, burst kept",
                                            WO_LOWER_USEC, WO_QUOTA_USEC);
        return bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT,
                                    "behaviour: quota %llu accepted below burst %llu, burst now %llu",
                                    WO_LOWER_USEC, WO_QUOTA_USEC, (unsigned long long) burst);
}

int bw_kprobe_write_order(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret) {
        struct bw_scratch s;
        int r;

        r = bw_scratch_create(env, &s);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "behaviour: cannot create a scratch cgroup: %s",
                                            strerror(-r));
        r = bw_kprobe_write_order_at(s.dir_fd, env->bw_is_v1, NULL, NULL, ret);
        bw_scratch_done(&s);
        return r;
}
