/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* EEVDF custom slices through sched_getattr()/sched_setattr(), and the task
 * list of a cgroup. See slice.h. */

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bwgov/parse-util.h"
#include "bwgov/slice.h"

/* The kernel's struct sched_attr (SCHED_ATTR_SIZE_VER1), declared here:
 * glibc 2.36 has no wrapper. */
struct bw_sched_attr {
        uint32_t size;
        uint32_t sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime;
        uint64_t sched_deadline;
        uint64_t sched_period;
        uint32_t sched_util_min;
        uint32_t sched_util_max;
};

#define NSEC_PER_USEC UINT64_C(1000)

static int getattr(pid_t tid, struct bw_sched_attr *a) {
        memset(a, 0, sizeof(*a));
        if (syscall(SYS_sched_getattr, tid, a, sizeof(*a), 0) < 0)
                return -errno;
        return 0;
}

static bool fair(uint32_t policy) {
        return policy == SCHED_OTHER || policy == SCHED_BATCH;
}

int bw_slice_get(pid_t tid, uint64_t *ret_usec, bool *ret_fair) {
        struct bw_sched_attr a;
        int r;

        if (tid < 0 || !ret_usec)
                return -EINVAL;
        r = getattr(tid, &a);
        if (r < 0)
                return r;
        *ret_usec = a.sched_runtime / NSEC_PER_USEC;
        if (ret_fair)
                *ret_fair = fair(a.sched_policy);
        return 0;
}

int bw_slice_set(pid_t tid, uint64_t usec) {
        struct bw_sched_attr a;
        int r;

        if (tid < 0 || usec > BW_SLICE_MAX_USEC)
                return -EINVAL;
        r = getattr(tid, &a);
        if (r < 0)
                return r;
        if (!fair(a.sched_policy))
                return -EOPNOTSUPP;
        /* Policy, nice and utilisation clamps as read; only the slice. */
        a.size = sizeof(a);
        a.sched_flags = 0;
        a.sched_priority = 0;
        a.sched_runtime = usec * NSEC_PER_USEC;
        a.sched_deadline = a.sched_period = 0;
        if (syscall(SYS_sched_setattr, tid, &a, 0) < 0)
                return -errno;
        return 0;
}

bool bw_slice_supported(void) {
        uint64_t usec;
        bool is_fair;

        return bw_slice_get(0, &usec, &is_fair) >= 0 && is_fair && usec > 0;
}

static int cmp_pid(const void *a, const void *b) {
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;

        return (x > y) - (x < y);
}

int bw_slice_parse_tids(const char *buf, size_t len, pid_t **ret, size_t *ret_n) {
        pid_t *v = NULL;
        size_t n = 0, cap = 0, start = 0;

        if ((!buf && len > 0) || !ret || !ret_n)
                return -EINVAL;
        for (size_t i = 0; i <= len; i++) {
                char line[24];
                size_t l;
                int64_t tid;

                if (i < len && buf[i] != '\n')
                        continue;
                l = i - start;
                if (l == 0) {
                        start = i + 1;
                        continue;
                }
                if (l >= sizeof(line)) {
                        free(v);
                        return -EINVAL;
                }
                memcpy(line, buf + start, l);
                line[l] = '\0';
                start = i + 1;
                if (bw_parse_int_range(line, 1, INT32_MAX, &tid) < 0) {
                        free(v);
                        return -EINVAL;
                }
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 64;
                        pid_t *nv = reallocarray(v, ncap, sizeof(*v));

                        if (!nv) {
                                free(v);
                                return -ENOMEM;
                        }
                        v = nv;
                        cap = ncap;
                }
                v[n++] = (pid_t) tid;
        }
        if (n > 1)
                qsort(v, n, sizeof(*v), cmp_pid);
        /* Drop duplicates (a v1 tasks file read twice over a migration). */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                if (k == 0 || v[k - 1] != v[i])
                        v[k++] = v[i];
        *ret = v;
        *ret_n = k;
        return 0;
}
