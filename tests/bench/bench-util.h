/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared helpers of the benchmark workloads (bwgov-bursty, bwgov-reqserver,
 * bwgov-reqgen, bwgov-warmup, bwgov-phased, bwgov-wakeup): clocks, a seeded RNG, CPU burning
 * measured in thread CPU time, bounded sample stores with percentiles,
 * locale-free argument parsing, and the stop flag set on SIGTERM/SIGINT.
 *
 * The workloads are test tools, not part of libbwgov: they may print and exit. */

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NSEC_PER_SEC  UINT64_C(1000000000)
#define NSEC_PER_MSEC UINT64_C(1000000)

/* Default capacity of a sample store: 1M samples, 8 MiB. */
#define SAMPLES_MAX_DEFAULT ((size_t) 1000000)

/* Clocks, in nanoseconds. monotonic_ns() uses CLOCK_MONOTONIC, which is the
 * same clock in every process of the host (bwgov-reqgen relies on that). */
uint64_t monotonic_ns(void);
uint64_t thread_cpu_ns(void);
uint64_t process_cpu_ns(void);

/* xoshiro256** seeded through splitmix64: the same seed and stream give the
 * same sequence on every run and host. */
typedef struct Rng {
        uint64_t s[4];
} Rng;

void rng_seed(Rng *rng, uint64_t seed, uint64_t stream);
uint64_t rng_next(Rng *rng);
/* Uniform in (0, 1]. */
double rng_uniform(Rng *rng);
/* Exponentially distributed with the given mean (mean <= 0 gives 0). */
double rng_exponential(Rng *rng, double mean);

/* The process-wide stop flag: set by the main thread on SIGTERM/SIGINT or when
 * the run is over; every loop polls it. stop_wait_until() sleeps until an
 * absolute CLOCK_MONOTONIC deadline or until stop_request() is called,
 * whichever comes first, and returns true if stop was requested. */
void stop_request(void);
bool stop_requested(void);
bool stop_wait_until(uint64_t deadline_ns);

/* Burn CPU in the calling thread until it has used cpu_ns of its own CPU time
 * (CLOCK_THREAD_CPUTIME_ID), so the amount of work does not depend on how
 * often the thread is preempted or throttled. Gives up early when
 * stop_requested() becomes true. Returns the thread CPU time actually used;
 * *ret_aborted (may be NULL) says whether it stopped early. */
uint64_t burn_cpu_ns(uint64_t cpu_ns, bool *ret_aborted);

/* A bounded, thread-safe store of double samples: keeps up to max samples
 * (reservoir sampling, seeded, beyond that), plus the exact count, sum and
 * maximum of everything added. */
typedef struct SampleStore {
        pthread_mutex_t lock;
        double *v;
        size_t n, cap, max;
        uint64_t count;
        double sum, maxv;
        Rng rng;
} SampleStore;

void sample_store_init(SampleStore *s, size_t max, uint64_t seed);
void sample_store_done(SampleStore *s);
/* Returns 0, or -ENOMEM (the sample still counts in count/sum/max). */
int sample_store_add(SampleStore *s, double x);
/* Sorts the kept samples; call once all writers are done. */
void sample_store_finish(SampleStore *s);
/* Nearest-rank percentile (0 < p <= 1) of the kept samples; needs
 * sample_store_finish(). Returns NaN when empty. */
double sample_store_percentile(const SampleStore *s, double p);
/* {"p50","p90","p99","p999","max","mean"} scaled by scale, or JSON null when
 * the store is empty. Needs sample_store_finish(). */
json_t *sample_store_json(const SampleStore *s, double scale);

/* Locale-free parsing of a non-negative decimal ("12", "0.45", "2.5"): at most
 * 9 fractional digits, no sign, no exponent. Returns 0 or -EINVAL/-ERANGE. */
int parse_decimal(const char *s, double *ret);
int parse_u64(const char *s, uint64_t *ret);

/* Print the JSON object as one line on stdout. Returns 0 or -EIO/-ENOMEM. */
int json_print_line(const json_t *j);

/* Block SIGTERM, SIGINT (and SIGPIPE) in the calling thread, before any other
 * thread is created, so that only the main thread sees them through
 * wait_signal_until(). Also makes timers precise (1 ns timer slack). */
void signals_block(void);
/* Wait until the deadline (CLOCK_MONOTONIC ns) for SIGTERM/SIGINT. Returns the
 * signal number, or 0 at the deadline. */
int wait_signal_until(uint64_t deadline_ns);

/* The long name of the option whose getopt value is val, for messages. */
struct option;
const char *option_name(const struct option *options, int val);
