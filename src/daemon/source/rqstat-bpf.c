/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The run-queue BPF programs (src/bpf/rqstat.bpf.c) through their libbpf
 * skeleton: load and attach them with maps sized for the governed cgroups,
 * grow them, track cgroups by id and sum their per-CPU counters. Contracts
 * in rqstat-bpf.h; a stub without BPF. */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "rqstat-bpf.h"

int rqstat_cgroup_id(int dirfd, uint64_t *ret) {
        struct stat st;

        if (dirfd < 0)
                return -EBADF;
        if (fstat(dirfd, &st) < 0)
                return -errno;
        *ret = (uint64_t) st.st_ino;
        return 0;
}

#if HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bwgov/telemetry/rqstat.h"
#include "bwgov/util/macro.h"
/* The skeleton embeds the BPF object as one long string literal. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "src/bpf/rqstat.skel.h"
#pragma GCC diagnostic pop

#define STATS_MIN 64
#define CGCACHE_MIN 1024

struct Rqstat {
        struct rqstat *skel;
        size_t capacity;                /* the stats map's max_entries */
        int ncpus;                      /* possible CPUs: the per-CPU value count */
        uint64_t *ids;                  /* tracked, unsorted */
        size_t n_ids, n_alloc;
        struct bw_rq_counters *percpu;  /* ncpus values, for reading */
        struct bw_rq_others *others_percpu;     /* ncpus values, for reading `others` */
        struct bw_rq_others *others_before;     /* ... as the last reading found them */
        bool has_others_before;
        unsigned others_loads;                  /* loads when others_before was read */
        uint64_t others_cross_ns;               /* bw_rq_others_cross() summed over readings */
        unsigned loads;
        /* Activity (rqstat-bpf.h): the mmapped `activity` array, one flag per
         * slot, and the cgroup each slot watches (0: free). */
        uint64_t *activity;             /* the kernel aligns an array's values to 8 bytes */
        size_t activity_bytes;
        uint64_t *act_ids;
        size_t act_n, act_alloc;        /* slots handed out (the high mark), allocated */
        uint32_t *act_free;             /* slots given back, reused first */
        size_t n_act_free;
        size_t n_watched;
        void **act_owner;               /* what a wake of each slot is handed */
        /* Wakes (rqstat-bpf.h): the `wakes` ring buffer, followed from the loop. */
        sd_event *event;
        rqstat_wake_fn wake_fn;
        void *wake_userdata;
        struct ring_buffer *rb;
        sd_event_source *wake_source;
        uint32_t *woken;                /* slots read from the ring, then handed out */
        size_t n_woken, woken_alloc;
        uint64_t wakes;
};

/* libbpf's warnings (a verifier log, a missing kernel field) go to the
 * journal as warnings: they are what an operator needs when loading fails.
 * A verifier log can run to thousands of lines: its first and last lines
 * (where the verifier says what it refused) are logged. */
#define LOG_HEAD_LINES 4
#define LOG_TAIL_LINES 40

_printf_(2, 0)
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap) {
        int prio = level == LIBBPF_WARN ? LOG_WARNING : LOG_DEBUG;
        _cleanup_free_ char *msg = NULL;
        size_t n_lines = 0, i = 0;

        if (level != LIBBPF_WARN && log_get_max_level() < LOG_DEBUG)
                return 0;
        if (vasprintf(&msg, fmt, ap) < 0)
                return 0;
        for (const char *c = msg; *c; c++)
                n_lines += *c == '\n';
        for (char *line = msg, *nl; line && *line; line = nl, i++) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl++ = '\0';
                if (i < LOG_HEAD_LINES || i + LOG_TAIL_LINES >= n_lines)
                        log_internal(prio, 0, "%s", line);
                else if (i == LOG_HEAD_LINES)
                        log_internal(prio, 0, "libbpf: [... %zu lines ...]",
                                     n_lines - LOG_HEAD_LINES - LOG_TAIL_LINES);
        }
        return 0;
}

void rqstat_libbpf_log(void) {
        libbpf_set_print(libbpf_log);
}

static size_t round_pow2(size_t n) {
        size_t p = 1;

        while (p < n)
                p <<= 1;
        return p;
}

static void explain_failure(int r, const char *step, char reason[static RQSTAT_REASON_MAX]) {
        if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
                snprintf(reason, RQSTAT_REASON_MAX,
                         "the kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF)");
        else if (r == -EPERM)
                snprintf(reason, RQSTAT_REASON_MAX,
                         "%s the BPF programs was not permitted (needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)",
                         step);
        else
                snprintf(reason, RQSTAT_REASON_MAX, "%s the BPF programs failed: %s (the log has libbpf's "
                         "reason)", step, STRERROR(r));
}

/* Open, size, load and attach a fresh copy of the programs. */
static int rqstat_load(Rqstat *t, size_t capacity, char reason[static RQSTAT_REASON_MAX]) {
        long page = sysconf(_SC_PAGESIZE);
        struct rqstat *skel;
        uint64_t *activity;
        size_t bytes;
        int r;

        skel = rqstat__open();
        if (!skel) {
                r = -errno;
                explain_failure(r, "opening", reason);
                return r;
        }
        capacity = round_pow2(capacity < STATS_MIN ? STATS_MIN : capacity);
        r = bpf_map__set_max_entries(skel->maps.stats, capacity);
        if (r >= 0)
                r = bpf_map__set_max_entries(skel->maps.cgcache,
                                             capacity * 8 < CGCACHE_MIN ? CGCACHE_MIN : capacity * 8);
        if (r >= 0)
                r = bpf_map__set_max_entries(skel->maps.actcache,
                                             capacity * 8 < CGCACHE_MIN ? CGCACHE_MIN : capacity * 8);
        if (r >= 0)
                r = bpf_map__set_max_entries(skel->maps.actslots, capacity);
        if (r >= 0)
                r = bpf_map__set_max_entries(skel->maps.activity, capacity);
        if (r < 0) {
                explain_failure(r, "sizing", reason);
                goto fail;
        }
        r = rqstat__load(skel);
        if (r < 0) {
                explain_failure(r, "loading", reason);
                goto fail;
        }
        bytes = (capacity * sizeof(uint64_t) + (size_t) page - 1) / (size_t) page * (size_t) page;
        activity = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(skel->maps.activity), 0);
        if (activity == MAP_FAILED) {
                r = -errno;
                explain_failure(r, "mapping the activity flags of", reason);
                goto fail;
        }
        /* Every slot "ran" until its unit arms it: a slot of a map loaded
         * again has seen nothing yet. */
        for (size_t i = 0; i < capacity; i++)
                activity[i] = 1;
        r = rqstat__attach(skel);
        if (r < 0) {
                explain_failure(r, "attaching", reason);
                munmap(activity, bytes);
                goto fail;
        }
        t->skel = skel;
        t->capacity = capacity;
        t->activity = activity;
        t->activity_bytes = bytes;
        t->loads++;
        return 0;
fail:
        rqstat__destroy(skel);
        return r;
}

static int insert(Rqstat *t, uint64_t id) {
        struct bw_rq_counters *zero = t->percpu;

        memset(zero, 0, sizeof(*zero) * (size_t) t->ncpus);
        if (bpf_map__update_elem(t->skel->maps.stats, &id, sizeof(id), zero, sizeof(*zero) * (size_t) t->ncpus,
                                 BPF_NOEXIST) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* The governed set changed: cached cgroup → governed answers are stale. */
static void bump_generation(Rqstat *t) {
        __atomic_add_fetch(&t->skel->bss->bw_generation, 1, __ATOMIC_SEQ_CST);
}

int rqstat_new(size_t capacity, Rqstat **ret, char reason[static RQSTAT_REASON_MAX]) {
        Rqstat *t;
        int r;

        rqstat_libbpf_log();
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->ncpus = libbpf_num_possible_cpus();
        if (t->ncpus <= 0) {
                r = t->ncpus < 0 ? t->ncpus : -EINVAL;
                snprintf(reason, RQSTAT_REASON_MAX, "cannot count the possible CPUs: %s", STRERROR(r));
                free(t);
                return r;
        }
        t->percpu = calloc((size_t) t->ncpus, sizeof(*t->percpu));
        t->others_percpu = calloc((size_t) t->ncpus, sizeof(*t->others_percpu));
        t->others_before = calloc((size_t) t->ncpus, sizeof(*t->others_before));
        if (!t->percpu || !t->others_percpu || !t->others_before) {
                free(t->percpu);
                free(t->others_percpu);
                free(t->others_before);
                free(t);
                return -ENOMEM;
        }
        /* A quarter more than configured, rounded up to a power of two:
         * room for prefix instances without a grow (which starts the
         * counters again). The activity flags are mmapped (in the RSS);
         * twice as many were 256 KiB at 10 000 units. */
        r = rqstat_load(t, capacity + capacity / 4, reason);
        if (r < 0) {
                free(t->percpu);
                free(t->others_percpu);
                free(t->others_before);
                free(t);
                return r;
        }
        *ret = t;
        return 0;
}

static void wakes_close(Rqstat *t) {
        t->wake_source = sd_event_source_disable_unref(t->wake_source);
        ring_buffer__free(t->rb);
        t->rb = NULL;
}

Rqstat *rqstat_free(Rqstat *t) {
        if (!t)
                return NULL;
        wakes_close(t);
        sd_event_unref(t->event);
        free(t->woken);
        free(t->act_owner);
        if (t->activity)
                munmap(t->activity, t->activity_bytes);
        rqstat__destroy(t->skel);
        free(t->act_ids);
        free(t->act_free);
        free(t->ids);
        free(t->percpu);
        free(t->others_percpu);
        free(t->others_before);
        free(t);
        return NULL;
}

static int on_wake_record(void *ctx, void *data, size_t size) {
        Rqstat *t = ctx;

        if (size < sizeof(uint32_t))
                return 0;
        if (t->n_woken == t->woken_alloc) {
                size_t n = t->woken_alloc ? t->woken_alloc * 2 : 16;
                uint32_t *p = reallocarray(t->woken, n, sizeof(*p));

                if (!p)
                        return 0;       /* the flag stays raised: the next check finds it */
                t->woken = p;
                t->woken_alloc = n;
        }
        memcpy(&t->woken[t->n_woken++], data, sizeof(uint32_t));
        return 0;
}

/* Read the ring first, then hand the slots out: a wake may add a unit, and
 * the maps grow (the ring with them) under the hand-out, not the read. */
static int on_wakes(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Rqstat *t = userdata;

        t->n_woken = 0;
        (void) ring_buffer__consume(t->rb);
        for (size_t i = 0; i < t->n_woken; i++) {
                uint32_t slot = t->woken[i];

                if (slot >= t->act_n || t->act_ids[slot] == 0 || !t->act_owner[slot])
                        continue;
                t->wakes++;
                t->wake_fn(t->act_owner[slot], t->wake_userdata);
        }
        t->n_woken = 0;
        return 0;
}

static int wakes_open(Rqstat *t) {
        int r;

        t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.wakes), on_wake_record, t, NULL);
        if (!t->rb)
                return -errno;
        r = sd_event_add_io(t->event, &t->wake_source, ring_buffer__epoll_fd(t->rb), EPOLLIN, on_wakes, t);
        if (r < 0) {
                ring_buffer__free(t->rb);
                t->rb = NULL;
                return r;
        }
        (void) sd_event_source_set_description(t->wake_source, "rqstat-wakes");
        return 0;
}

int rqstat_follow_wakes(Rqstat *t, sd_event *e, rqstat_wake_fn fn, void *userdata) {
        if (t->rb)
                return 0;
        if (!t->event)
                t->event = sd_event_ref(e);
        t->wake_fn = fn;
        t->wake_userdata = userdata;
        return wakes_open(t);
}

bool rqstat_can_wake(const Rqstat *t) {
        return t && t->rb;
}

uint64_t rqstat_wakes(const Rqstat *t) {
        return t ? t->wakes : 0;
}

/* Load again at twice the size and track everything again: the counters of
 * every tracked cgroup start from zero. */
static int grow(Rqstat *t) {
        char reason[RQSTAT_REASON_MAX];
        struct rqstat *old = t->skel;
        uint64_t *old_activity = t->activity;
        size_t old_bytes = t->activity_bytes;
        int r;

        t->skel = NULL;
        r = rqstat_load(t, t->capacity * 2, reason);
        if (r < 0) {
                t->skel = old;
                return log_warning_errno(r, "Cannot grow the run-queue telemetry maps beyond %zu cgroups: %s",
                                         t->capacity, reason);
        }
        munmap(old_activity, old_bytes);
        /* The ring is the old programs' map: follow the new one. */
        if (t->rb) {
                wakes_close(t);
                r = wakes_open(t);
                if (r < 0)
                        log_warning_errno(r, "Cannot follow the run-queue wakes again: %s (parked units are "
                                          "looked at once per Interval=)", STRERROR(r));
        }
        rqstat__destroy(old);
        for (size_t i = 0; i < t->n_ids; i++) {
                r = insert(t, t->ids[i]);
                if (r < 0)
                        return log_warning_errno(r, "Cannot track cgroup %" PRIu64 " again: %s", t->ids[i],
                                                 STRERROR(r));
        }
        for (uint32_t slot = 0; slot < t->act_n; slot++) {
                if (t->act_ids[slot] == 0)
                        continue;
                r = bpf_map__update_elem(t->skel->maps.actslots, &t->act_ids[slot], sizeof(uint64_t), &slot,
                                         sizeof(slot), BPF_ANY);
                if (r < 0)
                        return log_warning_errno(r, "Cannot watch cgroup %" PRIu64 " again: %s", t->act_ids[slot],
                                                 STRERROR(r));
        }
        log_info("Run-queue telemetry maps grown to %zu cgroups; counters start again.", t->capacity);
        return 0;
}

/* ids[] is sorted: the index of id, or where it would go (*ret_found false). */
static size_t find_id(const Rqstat *t, uint64_t id, bool *ret_found) {
        size_t lo = 0, hi = t->n_ids;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (t->ids[mid] < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *ret_found = lo < t->n_ids && t->ids[lo] == id;
        return lo;
}

int rqstat_track(Rqstat *t, uint64_t id) {
        bool found;
        size_t i = find_id(t, id, &found);
        int r;

        if (found)
                return 0;
        if (t->n_ids == t->n_alloc) {
                size_t n = grow_capacity(t->n_alloc, 16);
                uint64_t *p = reallocarray(t->ids, n, sizeof(*p));

                if (!p)
                        return -ENOMEM;
                t->ids = p;
                t->n_alloc = n;
        }
        if (t->n_ids >= t->capacity) {
                r = grow(t);
                if (r < 0)
                        return r;
        }
        r = insert(t, id);
        if (r < 0)
                return r;
        memmove(t->ids + i + 1, t->ids + i, (t->n_ids - i) * sizeof(*t->ids));
        t->ids[i] = id;
        t->n_ids++;
        bump_generation(t);
        return 0;
}

int rqstat_untrack(Rqstat *t, uint64_t id) {
        bool found;
        size_t i = find_id(t, id, &found);

        if (!found)
                return 0;
        memmove(t->ids + i, t->ids + i + 1, (t->n_ids - i - 1) * sizeof(*t->ids));
        t->n_ids--;
        if (bpf_map__delete_elem(t->skel->maps.stats, &id, sizeof(id), 0) < 0 && errno != ENOENT)
                return -errno;
        bump_generation(t);
        return 0;
}

int rqstat_read(Rqstat *t, uint64_t id, struct bw_rq_counters *ret) {
        struct bw_rq_counters sum = {0};

        if (bpf_map__lookup_elem(t->skel->maps.stats, &id, sizeof(id), t->percpu,
                                 sizeof(*t->percpu) * (size_t) t->ncpus, 0) < 0)
                return -errno;
        for (int c = 0; c < t->ncpus; c++)
                bw_rq_add(&sum, &t->percpu[c]);
        *ret = sum;
        return 0;
}

int rqstat_read_others(Rqstat *t, struct bw_rq_others *ret) {
        struct bw_rq_others sum = {0}, *swap;
        uint32_t zero = 0;

        if (bpf_map__lookup_elem(t->skel->maps.others, &zero, sizeof(zero), t->others_percpu,
                                 sizeof(*t->others_percpu) * (size_t) t->ncpus, 0) < 0)
                return -errno;
        if (t->has_others_before && t->others_loads == t->loads)
                t->others_cross_ns += bw_rq_others_cross(t->others_percpu, t->others_before, (size_t) t->ncpus);
        for (int c = 0; c < t->ncpus; c++) {
                sum.wait_ns += t->others_percpu[c].wait_ns;
                sum.behind_ns += t->others_percpu[c].behind_ns;
                sum.waiting_ns += t->others_percpu[c].waiting_ns;
                sum.governed_ns += t->others_percpu[c].governed_ns;
                sum.waits += t->others_percpu[c].waits;
                sum.known |= t->others_percpu[c].known;
        }
        swap = t->others_before;
        t->others_before = t->others_percpu;
        t->others_percpu = swap;
        t->has_others_before = true;
        t->others_loads = t->loads;
        if (!sum.known)
                return -ENODATA;
        sum.behind_ns += t->others_cross_ns;
        *ret = sum;
        return 0;
}

size_t rqstat_tracked(const Rqstat *t) {
        return t->n_ids;
}

int rqstat_watch(Rqstat *t, uint64_t cpu_cgroup_id, void *owner, uint32_t *ret_slot) {
        uint32_t slot;
        int r;

        if (cpu_cgroup_id == 0)
                return -EINVAL;
        if (t->n_act_free > 0)
                slot = t->act_free[--t->n_act_free];
        else {
                if (t->act_n == t->act_alloc) {
                        size_t n = grow_capacity(t->act_alloc, 16);
                        uint64_t *p = reallocarray(t->act_ids, n, sizeof(*p));
                        uint32_t *f;
                        void **o;

                        if (!p)
                                return -ENOMEM;
                        t->act_ids = p;
                        f = reallocarray(t->act_free, n, sizeof(*f));
                        if (!f)
                                return -ENOMEM;
                        t->act_free = f;
                        o = reallocarray(t->act_owner, n, sizeof(*o));
                        if (!o)
                                return -ENOMEM;
                        t->act_owner = o;
                        t->act_alloc = n;
                }
                if (t->act_n >= t->capacity) {
                        r = grow(t);
                        if (r < 0)
                                return r;
                }
                slot = (uint32_t) t->act_n++;
        }
        t->activity[slot] = 1;
        if (bpf_map__update_elem(t->skel->maps.actslots, &cpu_cgroup_id, sizeof(cpu_cgroup_id), &slot, sizeof(slot),
                                 BPF_ANY) < 0) {
                r = -errno;
                t->act_free[t->n_act_free++] = slot;
                return r;
        }
        t->act_ids[slot] = cpu_cgroup_id;
        t->act_owner[slot] = owner;
        t->n_watched++;
        bump_generation(t);
        *ret_slot = slot;
        return 0;
}

int rqstat_unwatch(Rqstat *t, uint32_t slot) {
        uint64_t id;

        if (slot >= t->act_n || t->act_ids[slot] == 0)
                return 0;
        id = t->act_ids[slot];
        t->act_ids[slot] = 0;
        t->act_owner[slot] = NULL;
        t->act_free[t->n_act_free++] = slot;
        t->n_watched--;
        bump_generation(t);
        if (bpf_map__delete_elem(t->skel->maps.actslots, &id, sizeof(id), 0) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

void rqstat_arm(Rqstat *t, uint32_t slot) {
        if (slot < t->act_n)
                __atomic_store_n(&t->activity[slot], 0, __ATOMIC_SEQ_CST);
}


/* A flag: 0 armed, 1 ran (or unknown), 2 armed to wake (rqstat.bpf.c). */
#define ACT_ARMED 0
#define ACT_RAN 1
#define ACT_WAKE 2

bool rqstat_ran(const Rqstat *t, uint32_t slot) {
        return slot >= t->act_n || __atomic_load_n(&t->activity[slot], __ATOMIC_SEQ_CST) == ACT_RAN;
}

void rqstat_arm_wake(Rqstat *t, uint32_t slot) {
        if (slot < t->act_n)
                __atomic_store_n(&t->activity[slot], ACT_WAKE, __ATOMIC_SEQ_CST);
}

bool rqstat_arm_wake_still(Rqstat *t, uint32_t slot) {
        uint64_t v = ACT_ARMED;

        if (slot >= t->act_n)
                return false;
        return __atomic_compare_exchange_n(&t->activity[slot], &v, ACT_WAKE, false, __ATOMIC_SEQ_CST,
                                           __ATOMIC_SEQ_CST) || v == ACT_WAKE;
}

size_t rqstat_watched(const Rqstat *t) {
        return t->n_watched;
}

unsigned rqstat_loads(const Rqstat *t) {
        return t->loads;
}

#else /* !HAVE_BPF */

int rqstat_new(size_t capacity, Rqstat **ret, char reason[static RQSTAT_REASON_MAX]) {
        snprintf(reason, RQSTAT_REASON_MAX, "bwgovd was built without BPF (-Dbpf=disabled)");
        return -EOPNOTSUPP;
}

Rqstat *rqstat_free(Rqstat *t) {
        return NULL;
}

int rqstat_track(Rqstat *t, uint64_t cgroup_id) {
        return -EOPNOTSUPP;
}

int rqstat_untrack(Rqstat *t, uint64_t cgroup_id) {
        return 0;
}

int rqstat_read(Rqstat *t, uint64_t cgroup_id, struct bw_rq_counters *ret) {
        return -ENOENT;
}

int rqstat_read_others(Rqstat *t, struct bw_rq_others *ret) {
        return -EOPNOTSUPP;
}

size_t rqstat_tracked(const Rqstat *t) {
        return 0;
}

int rqstat_watch(Rqstat *t, uint64_t cpu_cgroup_id, void *owner, uint32_t *ret_slot) {
        return -EOPNOTSUPP;
}

int rqstat_unwatch(Rqstat *t, uint32_t slot) {
        return 0;
}

void rqstat_arm(Rqstat *t, uint32_t slot) {
}

bool rqstat_ran(const Rqstat *t, uint32_t slot) {
        return true;
}

int rqstat_follow_wakes(Rqstat *t, sd_event *e, rqstat_wake_fn fn, void *userdata) {
        return -EOPNOTSUPP;
}

bool rqstat_can_wake(const Rqstat *t) {
        return false;
}

void rqstat_arm_wake(Rqstat *t, uint32_t slot) {
}

bool rqstat_arm_wake_still(Rqstat *t, uint32_t slot) {
        return false;
}

uint64_t rqstat_wakes(const Rqstat *t) {
        return 0;
}

size_t rqstat_watched(const Rqstat *t) {
        return 0;
}

unsigned rqstat_loads(const Rqstat *t) {
        return 0;
}

#endif
