/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "bench-util.h"

static uint64_t clock_ns(clockid_t id) {
        struct timespec ts;

        if (clock_gettime(id, &ts) < 0)
                abort();
        return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

uint64_t monotonic_ns(void) {
        return clock_ns(CLOCK_MONOTONIC);
}

uint64_t thread_cpu_ns(void) {
        return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t process_cpu_ns(void) {
        return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static uint64_t splitmix64(uint64_t *x) {
        uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

void rng_seed(Rng *rng, uint64_t seed, uint64_t stream) {
        uint64_t x = seed ^ (stream * UINT64_C(0xd1b54a32d192ed03));

        for (size_t i = 0; i < 4; i++)
                rng->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) {
        return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(Rng *rng) {
        uint64_t *s = rng->s;
        uint64_t result = rotl(s[1] * 5, 7) * 9;
        uint64_t t = s[1] << 17;

        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return result;
}

double rng_uniform(Rng *rng) {
        return (double) ((rng_next(rng) >> 11) + 1) * 0x1.0p-53;
}

double rng_exponential(Rng *rng, double mean) {
        if (!(mean > 0))
                return 0;
        return -mean * log(rng_uniform(rng));
}

/* The stop flag, and a condition variable on CLOCK_MONOTONIC so that sleeping
 * threads wake at once when the run ends. */
static atomic_bool stop_flag;
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cond;
static pthread_once_t stop_once = PTHREAD_ONCE_INIT;

static void stop_cond_init(void) {
        pthread_condattr_t a;

        if (pthread_condattr_init(&a) != 0 ||
            pthread_condattr_setclock(&a, CLOCK_MONOTONIC) != 0 ||
            pthread_cond_init(&stop_cond, &a) != 0)
                abort();
        pthread_condattr_destroy(&a);
}

void stop_request(void) {
        pthread_once(&stop_once, stop_cond_init);
        pthread_mutex_lock(&stop_lock);
        atomic_store(&stop_flag, true);
        pthread_cond_broadcast(&stop_cond);
        pthread_mutex_unlock(&stop_lock);
}

bool stop_requested(void) {
        return atomic_load_explicit(&stop_flag, memory_order_relaxed);
}

bool stop_wait_until(uint64_t deadline_ns) {
        struct timespec ts = {
                .tv_sec = (time_t) (deadline_ns / NSEC_PER_SEC),
                .tv_nsec = (long) (deadline_ns % NSEC_PER_SEC),
        };
        bool stopped;

        pthread_once(&stop_once, stop_cond_init);
        pthread_mutex_lock(&stop_lock);
        while (!(stopped = atomic_load(&stop_flag)) && monotonic_ns() < deadline_ns)
                if (pthread_cond_timedwait(&stop_cond, &stop_lock, &ts) == ETIMEDOUT)
                        break;
        stopped = atomic_load(&stop_flag);
        pthread_mutex_unlock(&stop_lock);
        return stopped;
}

/* Keep the optimiser from removing the work. */
static _Atomic uint64_t burn_sink;

uint64_t burn_cpu_ns(uint64_t cpu_ns, bool *ret_aborted) {
        uint64_t start = thread_cpu_ns(), used = 0, x = start | 1;
        bool aborted = false;

        for (;;) {
                /* About 5–10 µs of integer work between clock reads: the
                 * reads are syscalls, but their cost is CPU time too, so the
                 * burst stays a fixed amount of CPU either way. */
                for (unsigned i = 0; i < 4096; i++) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                }
                used = thread_cpu_ns() - start;
                if (used >= cpu_ns)
                        break;
                if (stop_requested()) {
                        aborted = true;
                        break;
                }
        }

        atomic_store_explicit(&burn_sink, x, memory_order_relaxed);
        if (ret_aborted)
                *ret_aborted = aborted;
        return used;
}

void sample_store_init(SampleStore *s, size_t max, uint64_t seed) {
        *s = (SampleStore) {
                .max = max > 0 ? max : 1,
                .maxv = NAN,
        };
        pthread_mutex_init(&s->lock, NULL);
        rng_seed(&s->rng, seed, UINT64_C(0x5a3b1e));
}

void sample_store_done(SampleStore *s) {
        if (!s)
                return;
        free(s->v);
        s->v = NULL;
        s->n = s->cap = 0;
        pthread_mutex_destroy(&s->lock);
}

int sample_store_add(SampleStore *s, double x) {
        int r = 0;

        pthread_mutex_lock(&s->lock);
        s->count++;
        s->sum += x;
        if (isnan(s->maxv) || x > s->maxv)
                s->maxv = x;

        if (s->n < s->max) {
                if (s->n == s->cap) {
                        size_t cap = s->cap ? s->cap * 2 : 4096;
                        double *v;

                        if (cap > s->max)
                                cap = s->max;
                        v = realloc(s->v, cap * sizeof(double));
                        if (!v) {
                                r = -ENOMEM;
                                goto out;
                        }
                        s->v = v;
                        s->cap = cap;
                }
                s->v[s->n++] = x;
        } else {
                /* Algorithm R: keep each of the count samples with equal
                 * probability max/count. */
                uint64_t j = rng_next(&s->rng) % s->count;

                if (j < s->max)
                        s->v[j] = x;
        }
out:
        pthread_mutex_unlock(&s->lock);
        return r;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

void sample_store_finish(SampleStore *s) {
        if (s->n > 0)
                qsort(s->v, s->n, sizeof(double), cmp_double);
}

double sample_store_percentile(const SampleStore *s, double p) {
        double rank;
        size_t i;

        if (s->n == 0)
                return NAN;
        rank = ceil(p * (double) s->n);
        i = rank < 1 ? 0 : (size_t) rank - 1;
        if (i >= s->n)
                i = s->n - 1;
        return s->v[i];
}

json_t *sample_store_json(const SampleStore *s, double scale) {
        static const struct {
                const char *name;
                double p;
        } table[] = {
                { "p50",  0.50  },
                { "p90",  0.90  },
                { "p99",  0.99  },
                { "p999", 0.999 },
        };
        json_t *o;

        if (s->count == 0 || s->n == 0)
                return json_null();

        o = json_object();
        if (!o)
                return NULL;
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                json_object_set_new(o, table[i].name,
                                    json_real(sample_store_percentile(s, table[i].p) * scale));
        json_object_set_new(o, "max", json_real(s->maxv * scale));
        json_object_set_new(o, "mean", json_real(s->sum / (double) s->count * scale));
        return o;
}

int parse_u64(const char *s, uint64_t *ret) {
        uint64_t v = 0;

        if (!s || !*s)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                unsigned d;

                if (*p < '0' || *p > '9')
                        return -EINVAL;
                d = (unsigned) (*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

int parse_decimal(const char *s, double *ret) {
        uint64_t ip = 0, fp = 0, fscale = 1;
        const char *p = s;
        bool digits = false;

        if (!s)
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                unsigned d = (unsigned) (*p - '0');

                if (ip > (UINT64_C(1) << 52) / 10)
                        return -ERANGE;
                ip = ip * 10 + d;
                digits = true;
        }
        if (*p == '.') {
                p++;
                for (; *p >= '0' && *p <= '9'; p++) {
                        if (fscale >= UINT64_C(1000000000))
                                return -EINVAL;
                        fp = fp * 10 + (uint64_t) (*p - '0');
                        fscale *= 10;
                        digits = true;
                }
        }
        if (!digits || *p != '\0')
                return -EINVAL;

        *ret = (double) ip + (double) fp / (double) fscale;
        return 0;
}

int json_print_line(const json_t *j) {
        char *s = json_dumps(j, JSON_REAL_PRECISION(7));

        if (!s)
                return -ENOMEM;
        if (printf("%s\n", s) < 0 || fflush(stdout) != 0) {
                free(s);
                return -EIO;
        }
        free(s);
        return 0;
}

static sigset_t blocked_signals(void) {
        sigset_t ss;

        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        return ss;
}

void signals_block(void) {
        sigset_t ss = blocked_signals();

        /* Default actions, in case we were started with them ignored (as
         * "cmd &" does for SIGINT in a non-interactive shell): blocked, they
         * stay pending for sigtimedwait(). */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        if (pthread_sigmask(SIG_BLOCK, &ss, NULL) != 0)
                abort();
        /* A reader gone away is an EPIPE from write(), not a silent death. */
        signal(SIGPIPE, SIG_IGN);
        /* Sleeps end on time rather than up to 50 µs late. */
        (void) prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

int wait_signal_until(uint64_t deadline_ns) {
        sigset_t ss = blocked_signals();

        for (;;) {
                uint64_t now = monotonic_ns();
                struct timespec ts;
                int sig;

                if (now >= deadline_ns)
                        return 0;
                ts = (struct timespec) {
                        .tv_sec = (time_t) ((deadline_ns - now) / NSEC_PER_SEC),
                        .tv_nsec = (long) ((deadline_ns - now) % NSEC_PER_SEC),
                };
                sig = sigtimedwait(&ss, NULL, &ts);
                if (sig > 0)
                        return sig;
                assert(errno == EAGAIN || errno == EINTR);
        }
}

const char *option_name(const struct option *options, int val) {
        for (const struct option *o = options; o->name; o++)
                if (o->val == val && !o->flag)
                        return o->name;
        return "?";
}
