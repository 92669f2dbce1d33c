/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* EEVDF custom slices through sched_getattr()/sched_setattr(), and the task
 * list of a cgroup. See slice.h. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
#include "bwgov/util/kversion.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"
#include "bwgov/cgroup/slice.h"

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
/* <linux/sched.h> and <linux/sched/types.h> would clash with glibc's
 * <sched.h>: the two values, as the kernel's ABI fixes them. */
#define BW_SCHED_FLAG_RESET_ON_FORK UINT64_C(0x01)

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
        struct bw_kversion v, min = { .major = 6, .minor = 12 };
        static bool known, supported;
        struct utsname u;
        uint64_t usec;
        bool is_fair;

        /* Kept: the calling thread may leave the fair class later
         * (bw_sched_reserve_self()). */
        if (known)
                return supported;
        /* Before 6.12 a fair task's sched_runtime is accepted and means
         * nothing (some kernels report it back all the same). */
        if (uname(&u) < 0 || bw_kversion_parse(u.release, &v) < 0 || bw_kversion_compare(&v, &min) < 0) {
                known = true;
                return false;
        }
        /* A thread that is not fair says nothing about the kernel: asked
         * again, not kept. */
        if (bw_slice_get(0, &usec, &is_fair) < 0 || !is_fair)
                return false;
        known = true;
        supported = usec > 0;
        return supported;
}

uint64_t bw_slice_default_usec(void) {
        static uint64_t usec;
        static bool known;
        bool is_fair;

        if (!known) {
                if (bw_slice_get(0, &usec, &is_fair) < 0 || !is_fair)
                        usec = 0;
                known = true;
        }
        return usec;
}

int bw_slice_set_self(uint64_t usec) {
        (void) bw_slice_default_usec();
        return bw_slice_set(0, usec);
}

int bw_sched_reserve_self(uint64_t runtime_usec, uint64_t period_usec) {
        struct bw_sched_attr a = {
                .size = sizeof(a),
                .sched_policy = BW_SCHED_DEADLINE,
                /* A child (the kernel check's hashing) starts fair: a
                 * deadline task could not fork at all. */
                .sched_flags = BW_SCHED_FLAG_RESET_ON_FORK,
                .sched_runtime = runtime_usec * NSEC_PER_USEC,
                .sched_deadline = period_usec * NSEC_PER_USEC,
                .sched_period = period_usec * NSEC_PER_USEC,
        };

        if (runtime_usec == 0 || runtime_usec > period_usec || period_usec > UINT64_MAX / NSEC_PER_USEC)
                return -EINVAL;
        (void) bw_slice_default_usec();
        if (syscall(SYS_sched_setattr, 0, &a, 0) < 0)
                return -errno;
        return 0;
}

int bw_sched_fair_self(void) {
        struct bw_sched_attr a = { .size = sizeof(a), .sched_policy = SCHED_OTHER };
        int nice;

        /* A deadline thread's nice value is kept, not reported by
         * sched_getattr(): getpriority() has it. */
        errno = 0;
        nice = getpriority(PRIO_PROCESS, 0);
        if (nice == -1 && errno != 0)
                return -errno;
        a.sched_nice = nice;
        if (syscall(SYS_sched_setattr, 0, &a, 0) < 0)
                return -errno;
        return 0;
}

int bw_sched_policy(pid_t tid) {
        struct bw_sched_attr a;
        int r;

        if (tid < 0)
                return -EINVAL;
        r = getattr(tid, &a);
        return r < 0 ? r : (int) a.sched_policy;
}

clockid_t bw_sched_cost_clock(void) {
        return bw_sched_policy(0) == BW_SCHED_DEADLINE ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
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

#define TIDS_FILE_MAX (8u << 20)

struct tid_vec {
        pid_t *v;
        size_t n, cap;
};

static int vec_add(struct tid_vec *t, const pid_t *v, size_t n) {
        if (n == 0)
                return 0;       /* v may be NULL: nothing to copy */
        if (t->n + n > t->cap) {
                size_t cap = t->cap ? t->cap : 64;
                pid_t *nv;

                while (cap < t->n + n)
                        cap *= 2;
                nv = reallocarray(t->v, cap, sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                t->v = nv;
                t->cap = cap;
        }
        memcpy(t->v + t->n, v, n * sizeof(*v));
        t->n += n;
        return 0;
}

static int collect(int dfd, const char *file, unsigned depth, struct tid_vec *t) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ pid_t *v = NULL;
        struct dirent *de;
        size_t len, n;
        DIR *d;
        int fd, r;

        r = bw_read_full_at(dfd, file, O_NOFOLLOW, TIDS_FILE_MAX, &buf, &len);
        if (r < 0)
                return r;
        r = bw_slice_parse_tids(buf, len, &v, &n);
        if (r >= 0)
                r = vec_add(t, v, n);
        if (r < 0 || depth == 0)
                return r;

        fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return 0;
        }
        while ((de = readdir(d))) {
                int child;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                child = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (child < 0)
                        continue;
                r = collect(child, file, depth - 1, t);
                close(child);
                if (r == -ENOMEM)
                        break;
                r = 0;          /* a child gone meanwhile, or not a cgroup */
        }
        closedir(d);
        return r;
}

int bw_slice_cgroup_tids(int dfd, const char *file, unsigned max_depth, pid_t **ret, size_t *ret_n) {
        struct tid_vec t = { 0 };
        size_t k = 0;
        int r;

        if (dfd < 0 || !file || !ret || !ret_n)
                return -EINVAL;
        r = collect(dfd, file, max_depth, &t);
        if (r < 0) {
                free(t.v);
                return r;
        }
        if (t.n > 1)
                qsort(t.v, t.n, sizeof(*t.v), cmp_pid);
        for (size_t i = 0; i < t.n; i++)
                if (k == 0 || t.v[k - 1] != t.v[i])
                        t.v[k++] = t.v[i];
        *ret = t.v;
        *ret_n = k;
        return 0;
}
