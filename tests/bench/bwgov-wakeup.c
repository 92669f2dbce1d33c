/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* bwgov-wakeup: the wake-up latency of a latency-sensitive request server.
 *
 * Each of N worker threads serves its own stream of short requests. A request
 * falls due at an absolute CLOCK_MONOTONIC time, a random gap after the worker
 * finished the previous one; the worker blocks until then
 * (clock_nanosleep(TIMER_ABSTIME), timer slack 1 ns, so the timer fires on
 * time), and the moment it runs again it records its wake-up latency: the time
 * it runs minus the time the request fell due. That is the scheduler's delay
 * (timer interrupt to wake-up to running on a CPU), nothing else: the worker
 * was asleep when the request fell due, and the due time does not move when
 * the worker is late. It then serves the request with a fixed amount of its
 * own CPU time.
 *
 * Cgroup placement: all threads are created by the process itself, so writing
 * the child's PID into cgroup.procs between fork() and exec() puts the whole
 * server in the cgroup. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

/* An exponential gap is cut at this many means, so that a worker never sleeps
 * for long (the chance of a longer gap is e^-10, 4.5e-5). */
#define EXP_CUT_MEANS 10.0

typedef enum Arrivals {
        ARRIVALS_UNIFORM,
        ARRIVALS_EXPONENTIAL,
} Arrivals;

typedef struct Args {
        uint64_t workers;
        double cost_us;
        double gap_min_ms, gap_max_ms;
        Arrivals arrivals;
        double duration_s;
        double warmup_s;
        uint64_t seed;
        uint64_t max_samples;
        uint64_t start_delay_ms;
        double early_s;
} Args;

typedef struct Shared {
        const Args *args;
        uint64_t cost_ns;
        uint64_t gap_min_ns, gap_span_ns;       /* uniform: [min, min + span]; exponential: min + Exp(span / 2) */
        uint64_t t0_ns, measure_ns, end_ns;     /* requests due in [measure_ns, end_ns) are measured */
        uint64_t early_ns;                      /* ... those due before measure_ns + early_ns also apart */
} Shared;

typedef struct Worker {
        Shared *shared;
        unsigned index;
        pthread_t thread;
        pid_t tid;
        Rng rng;
        SampleStore wakeup;     /* ns */
        SampleStore response;   /* due to done, ns */
        SampleStore early;      /* wake-up, of the requests due in the first --early seconds, ns */
        uint64_t requests, warmup_requests, aborted;
        uint64_t over_1ms, over_10ms;
        uint64_t service_cpu_ns;
} Worker;

static void help(void) {
        printf("Usage: bwgov-wakeup [OPTIONS]\n\n"
               "The wake-up latency of a request server: each worker thread sleeps until its next\n"
               "request falls due (an absolute CLOCK_MONOTONIC deadline, timer slack 1 ns), records\n"
               "the time from the due time to running, then burns a fixed CPU cost. The next request\n"
               "falls due a random gap after the previous one was served. Prints one JSON object\n"
               "on stdout.\n\n"
               "  -h --help              Show this help\n"
               "  -w --workers=N         Worker threads (default 4)\n"
               "  -c --cost-us=US        Thread CPU time per request, us (default 200)\n"
               "     --gap-min-ms=MS     Shortest gap between a worker's requests (default 1)\n"
               "     --gap-max-ms=MS     Longest gap (uniform) (default 5)\n"
               "  -a --arrivals=KIND     uniform: gap uniform in [min, max]; exponential: min plus\n"
               "                         an exponential with mean (max - min) / 2, cut at 10 means\n"
               "                         (the same mean gap) (default uniform)\n"
               "  -d --duration=S        Measured window, seconds (default 15)\n"
               "     --warmup=S          Before it, requests served but not counted (default 1)\n"
               "  -s --seed=N            RNG seed (default 1)\n"
               "     --max-samples=N     Latency samples kept for percentiles (default 1000000)\n"
               "     --start-delay-ms=MS Wait this long before starting (default 0)\n"
               "     --early=S           Also report the wake-up latency of the first S seconds of the\n"
               "                         measured window apart (wakeup_early_us; default 0: not)\n\n"
               "wakeup_us is the scheduler's wake-up latency in microseconds; response_us runs from\n"
               "the due time to the end of the request. SIGTERM/SIGINT end the run early and print\n"
               "the results so far.\n");
}

static int parse_args(int argc, char *argv[], Args *ret) {
        enum {
                ARG_GAP_MIN = 0x100,
                ARG_GAP_MAX,
                ARG_WARMUP,
                ARG_MAX_SAMPLES,
                ARG_START_DELAY,
                ARG_EARLY,
        };
        static const struct option options[] = {
                { "help",           no_argument,       NULL, 'h'             },
                { "workers",        required_argument, NULL, 'w'             },
                { "cost-us",        required_argument, NULL, 'c'             },
                { "gap-min-ms",     required_argument, NULL, ARG_GAP_MIN     },
                { "gap-max-ms",     required_argument, NULL, ARG_GAP_MAX     },
                { "arrivals",       required_argument, NULL, 'a'             },
                { "duration",       required_argument, NULL, 'd'             },
                { "warmup",         required_argument, NULL, ARG_WARMUP      },
                { "seed",           required_argument, NULL, 's'             },
                { "max-samples",    required_argument, NULL, ARG_MAX_SAMPLES },
                { "start-delay-ms", required_argument, NULL, ARG_START_DELAY },
                { "early",          required_argument, NULL, ARG_EARLY       },
                { NULL, 0, NULL, 0 }
        };
        Args a = {
                .workers = 4,
                .cost_us = 200,
                .gap_min_ms = 1,
                .gap_max_ms = 5,
                .arrivals = ARRIVALS_UNIFORM,
                .duration_s = 15,
                .warmup_s = 1,
                .seed = 1,
                .max_samples = SAMPLES_MAX_DEFAULT,
        };
        int c, r = 0;

        while ((c = getopt_long(argc, argv, "hw:c:a:d:s:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'w':
                        r = parse_u64(optarg, &a.workers);
                        break;
                case 'c':
                        r = parse_decimal(optarg, &a.cost_us);
                        break;
                case ARG_GAP_MIN:
                        r = parse_decimal(optarg, &a.gap_min_ms);
                        break;
                case ARG_GAP_MAX:
                        r = parse_decimal(optarg, &a.gap_max_ms);
                        break;
                case 'a':
                        if (strcmp(optarg, "uniform") == 0)
                                a.arrivals = ARRIVALS_UNIFORM;
                        else if (strcmp(optarg, "exponential") == 0 || strcmp(optarg, "poisson") == 0)
                                a.arrivals = ARRIVALS_EXPONENTIAL;
                        else
                                r = -EINVAL;
                        break;
                case 'd':
                        r = parse_decimal(optarg, &a.duration_s);
                        break;
                case ARG_WARMUP:
                        r = parse_decimal(optarg, &a.warmup_s);
                        break;
                case 's':
                        r = parse_u64(optarg, &a.seed);
                        break;
                case ARG_MAX_SAMPLES:
                        r = parse_u64(optarg, &a.max_samples);
                        break;
                case ARG_START_DELAY:
                        r = parse_u64(optarg, &a.start_delay_ms);
                        break;
                case ARG_EARLY:
                        r = parse_decimal(optarg, &a.early_s);
                        break;
                default:
                        return -EINVAL;
                }
                if (r < 0) {
                        fprintf(stderr, "bwgov-wakeup: invalid value '%s' for --%s\n",
                                optarg, option_name(options, c));
                        return r;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "bwgov-wakeup: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (a.workers < 1 || a.workers > 1024) {
                fprintf(stderr, "bwgov-wakeup: --workers must be 1..1024\n");
                return -EINVAL;
        }
        if (a.cost_us > 1000000) {
                fprintf(stderr, "bwgov-wakeup: --cost-us must be at most 1000000\n");
                return -EINVAL;
        }
        /* A gap of zero would be no sleep, hence no wake-up to measure. */
        if (!(a.gap_min_ms >= 0.01) || a.gap_max_ms < a.gap_min_ms || a.gap_max_ms > 1000) {
                fprintf(stderr, "bwgov-wakeup: need 0.01 <= --gap-min-ms <= --gap-max-ms <= 1000\n");
                return -EINVAL;
        }
        if (!(a.duration_s > 0) || a.duration_s > 86400 * 7 || a.warmup_s > 3600 || a.early_s > a.duration_s) {
                fprintf(stderr, "bwgov-wakeup: --duration must be above 0 and at most a week, --warmup at most 3600, "
                        "--early at most --duration\n");
                return -EINVAL;
        }
        if (a.max_samples < 1 || a.max_samples > 100000000) {
                fprintf(stderr, "bwgov-wakeup: --max-samples must be 1..100000000\n");
                return -EINVAL;
        }

        *ret = a;
        return 1;
}

static uint64_t next_gap_ns(Worker *w) {
        const Shared *s = w->shared;
        double x;

        if (s->args->arrivals == ARRIVALS_UNIFORM)
                x = rng_uniform(&w->rng) * (double) s->gap_span_ns;
        else {
                double mean = (double) s->gap_span_ns / 2;

                x = rng_exponential(&w->rng, mean);
                if (x > EXP_CUT_MEANS * mean)
                        x = EXP_CUT_MEANS * mean;
        }
        return s->gap_min_ns + (uint64_t) x;
}

static void sleep_until(uint64_t t) {
        struct timespec ts = {
                .tv_sec = (time_t) (t / NSEC_PER_SEC),
                .tv_nsec = (long) (t % NSEC_PER_SEC),
        };

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

static void *worker_main(void *userdata) {
        Worker *w = userdata;
        Shared *s = w->shared;
        uint64_t due = s->t0_ns;

        w->tid = gettid();
        for (;;) {
                uint64_t woke, done, cpu;
                bool aborted;

                due += next_gap_ns(w);
                if (due >= s->end_ns || stop_requested())
                        break;
                sleep_until(due);
                woke = monotonic_ns();
                if (stop_requested())
                        break;

                cpu = burn_cpu_ns(s->cost_ns, &aborted);
                done = monotonic_ns();
                if (aborted) {
                        w->aborted++;
                        break;
                }
                if (due < s->measure_ns)
                        w->warmup_requests++;
                else {
                        uint64_t lat = woke > due ? woke - due : 0;

                        w->requests++;
                        w->service_cpu_ns += cpu;
                        w->over_1ms += lat > NSEC_PER_MSEC;
                        w->over_10ms += lat > 10 * NSEC_PER_MSEC;
                        (void) sample_store_add(&w->wakeup, (double) lat);
                        (void) sample_store_add(&w->response, (double) (done - due));
                        if (due < s->measure_ns + s->early_ns)
                                (void) sample_store_add(&w->early, (double) lat);
                }
                /* The next request falls due a gap after this one was served. */
                due = done;
        }

        return NULL;
}

/* The EEVDF slice the kernel reports for a thread ("se.slice" in
 * /proc/self/task/TID/sched), in ns, or -1. */
static int64_t thread_slice_ns(pid_t tid) {
        char path[64], line[256];
        int64_t v = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/self/task/%d/sched", (int) tid);
        f = fopen(path, "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f)) {
                char *colon;

                if (strncmp(line, "se.slice", 8) != 0 || !(colon = strchr(line, ':')))
                        continue;
                v = strtoll(colon + 1, NULL, 10);
                break;
        }
        fclose(f);
        return v;
}

/* All workers' samples in one store: the kept samples, and the exact count,
 * sum and maximum. */
static void merge(SampleStore *into, Worker *workers, unsigned n, size_t field) {
        uint64_t count = 0;
        double sum = 0, maxv = NAN;

        for (unsigned i = 0; i < n; i++) {
                SampleStore *s = (SampleStore *) ((char *) &workers[i] + field);

                for (size_t k = 0; k < s->n; k++)
                        (void) sample_store_add(into, s->v[k]);
                count += s->count;
                sum += s->sum;
                if (s->count > 0 && (isnan(maxv) || s->maxv > maxv))
                        maxv = s->maxv;
        }
        into->count = count;
        into->sum = sum;
        into->maxv = maxv;
        sample_store_finish(into);
}

int main(int argc, char *argv[]) {
        Args args;
        Shared s = { 0 };
        Worker *workers = NULL;
        SampleStore wakeup, response, early;
        unsigned started = 0;
        uint64_t t1 = 0, cpu0 = 0, cpu1 = 0, requests = 0, warmup_requests = 0, aborted = 0, service_cpu = 0;
        uint64_t over_1ms = 0, over_10ms = 0, per_worker_max;
        int64_t *slices = NULL;
        double wall_s, cpu_s, window_s;
        struct rusage ru0 = { 0 }, ru1 = { 0 };
        json_t *j = NULL, *ja;
        int sig = 0, ret = 1, r;

        r = parse_args(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? 2 : 0;

        signals_block();        /* also sets the timer slack to 1 ns, inherited by the workers */

        s.args = &args;
        s.cost_ns = (uint64_t) llround(args.cost_us * 1000.0);
        s.gap_min_ns = (uint64_t) llround(args.gap_min_ms * (double) NSEC_PER_MSEC);
        s.gap_span_ns = (uint64_t) llround((args.gap_max_ms - args.gap_min_ms) * (double) NSEC_PER_MSEC);
        per_worker_max = args.max_samples / args.workers > 0 ? args.max_samples / args.workers : 1;
        sample_store_init(&wakeup, args.max_samples, args.seed);
        sample_store_init(&response, args.max_samples, args.seed + 1);
        sample_store_init(&early, args.max_samples, args.seed + 2);

        workers = calloc(args.workers, sizeof(Worker));
        slices = calloc(args.workers, sizeof(int64_t));
        if (!workers || !slices) {
                fprintf(stderr, "bwgov-wakeup: out of memory\n");
                goto finish;
        }
        for (unsigned i = 0; i < args.workers; i++) {
                workers[i] = (Worker) { .shared = &s, .index = i };
                rng_seed(&workers[i].rng, args.seed, i + 1);
                sample_store_init(&workers[i].wakeup, per_worker_max, args.seed * 1000 + i);
                sample_store_init(&workers[i].response, per_worker_max, args.seed * 1000 + i + 500);
                sample_store_init(&workers[i].early, per_worker_max, args.seed * 1000 + i + 250);
                slices[i] = -1;
        }

        if (args.start_delay_ms > 0) {
                sig = wait_signal_until(monotonic_ns() + args.start_delay_ms * NSEC_PER_MSEC);
                if (sig > 0)
                        goto results;
        }

        fprintf(stderr, "bwgov-wakeup: pid %d, %u workers, %.0f us per request, %s gaps of %.3f–%.3f ms, "
                "%.1f s warm-up, %.1f s measured\n", (int) getpid(), (unsigned) args.workers, args.cost_us,
                args.arrivals == ARRIVALS_UNIFORM ? "uniform" : "exponential", args.gap_min_ms, args.gap_max_ms,
                args.warmup_s, args.duration_s);

        /* The first requests fall due a gap after t0, a little after every
         * worker has been created. */
        s.t0_ns = monotonic_ns() + 5 * NSEC_PER_MSEC;
        s.measure_ns = s.t0_ns + (uint64_t) llround(args.warmup_s * (double) NSEC_PER_SEC);
        s.end_ns = s.measure_ns + (uint64_t) llround(args.duration_s * (double) NSEC_PER_SEC);
        s.early_ns = (uint64_t) llround(args.early_s * (double) NSEC_PER_SEC);
        for (unsigned i = 0; i < args.workers; i++) {
                r = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
                if (r != 0) {
                        fprintf(stderr, "bwgov-wakeup: pthread_create: %s\n", strerror(r));
                        break;
                }
                started++;
        }
        if (started == 0)
                goto finish;

        sig = wait_signal_until(s.measure_ns);
        cpu0 = process_cpu_ns();
        (void) getrusage(RUSAGE_SELF, &ru0);
        if (sig == 0)
                /* Just before the end of the window: the slices the threads
                 * run with (a governor may have set them from outside). */
                sig = wait_signal_until(s.end_ns > 50 * NSEC_PER_MSEC ? s.end_ns - 50 * NSEC_PER_MSEC : s.end_ns);
        for (unsigned i = 0; i < started; i++)
                slices[i] = workers[i].tid > 0 ? thread_slice_ns(workers[i].tid) : -1;
        if (sig == 0)
                sig = wait_signal_until(s.end_ns);

        /* At the end of the window the workers serve what fell due in it
         * and leave; on a signal they leave at once. */
        if (sig > 0)
                stop_request();
        for (unsigned i = 0; i < started; i++)
                pthread_join(workers[i].thread, NULL);
        t1 = monotonic_ns();
        cpu1 = process_cpu_ns();
        (void) getrusage(RUSAGE_SELF, &ru1);

results:
        if (s.t0_ns == 0) {
                s.t0_ns = s.measure_ns = t1 = monotonic_ns();
                cpu0 = cpu1 = 0;
        }
        for (unsigned i = 0; i < started; i++) {
                requests += workers[i].requests;
                warmup_requests += workers[i].warmup_requests;
                aborted += workers[i].aborted;
                service_cpu += workers[i].service_cpu_ns;
                over_1ms += workers[i].over_1ms;
                over_10ms += workers[i].over_10ms;
        }
        merge(&wakeup, workers, started, offsetof(Worker, wakeup));
        merge(&response, workers, started, offsetof(Worker, response));
        merge(&early, workers, started, offsetof(Worker, early));

        wall_s = (double) (t1 - s.t0_ns) / (double) NSEC_PER_SEC;
        window_s = t1 > s.measure_ns ? (double) ((t1 < s.end_ns ? t1 : s.end_ns) - s.measure_ns) / (double) NSEC_PER_SEC : 0;
        cpu_s = (double) (cpu1 - cpu0) / (double) NSEC_PER_SEC;

        j = json_object();
        if (!j)
                goto finish;
        json_object_set_new(j, "program", json_string("bwgov-wakeup"));
        json_object_set_new(j, "workers", json_integer((json_int_t) args.workers));
        json_object_set_new(j, "cost_us", json_real(args.cost_us));
        json_object_set_new(j, "arrivals", json_string(args.arrivals == ARRIVALS_UNIFORM ? "uniform" : "exponential"));
        json_object_set_new(j, "gap_min_ms", json_real(args.gap_min_ms));
        json_object_set_new(j, "gap_max_ms", json_real(args.gap_max_ms));
        json_object_set_new(j, "duration_s", json_real(args.duration_s));
        json_object_set_new(j, "warmup_s", json_real(args.warmup_s));
        json_object_set_new(j, "seed", json_integer((json_int_t) args.seed));
        json_object_set_new(j, "interrupted", json_boolean(sig > 0));
        json_object_set_new(j, "workers_started", json_integer((json_int_t) started));
        json_object_set_new(j, "requests", json_integer((json_int_t) requests));
        json_object_set_new(j, "warmup_requests", json_integer((json_int_t) warmup_requests));
        json_object_set_new(j, "aborted", json_integer((json_int_t) aborted));
        json_object_set_new(j, "measure_start_ns", json_integer((json_int_t) s.measure_ns));
        json_object_set_new(j, "measure_end_ns", json_integer((json_int_t) (s.end_ns ? s.end_ns : s.measure_ns)));
        json_object_set_new(j, "window_s", json_real(window_s));
        json_object_set_new(j, "request_rate_per_s", json_real(window_s > 0 ? (double) requests / window_s : 0));
        json_object_set_new(j, "wall_s", json_real(wall_s));
        json_object_set_new(j, "cpu_s", json_real(cpu_s));
        json_object_set_new(j, "service_cpu_s", json_real((double) service_cpu / (double) NSEC_PER_SEC));
        json_object_set_new(j, "achieved_cpus", json_real(window_s > 0 ? cpu_s / window_s : 0));
        json_object_set_new(j, "voluntary_switches", json_integer((json_int_t) (ru1.ru_nvcsw - ru0.ru_nvcsw)));
        json_object_set_new(j, "involuntary_switches", json_integer((json_int_t) (ru1.ru_nivcsw - ru0.ru_nivcsw)));
        json_object_set_new(j, "over_1ms", json_integer((json_int_t) over_1ms));
        json_object_set_new(j, "over_10ms", json_integer((json_int_t) over_10ms));
        ja = json_array();
        for (unsigned i = 0; ja && i < started; i++)
                json_array_append_new(ja, slices[i] >= 0 ? json_integer((json_int_t) slices[i]) : json_null());
        json_object_set_new(j, "slice_ns", ja ? ja : json_null());
        json_object_set_new(j, "samples", json_integer((json_int_t) wakeup.n));
        json_object_set_new(j, "wakeup_us", sample_store_json(&wakeup, 1e-3));
        json_object_set_new(j, "response_us", sample_store_json(&response, 1e-3));
        if (args.early_s > 0) {
                json_object_set_new(j, "early_s", json_real(args.early_s));
                json_object_set_new(j, "wakeup_early_us", sample_store_json(&early, 1e-3));
        }

        r = json_print_line(j);
        if (r < 0) {
                fprintf(stderr, "bwgov-wakeup: cannot write results: %s\n", strerror(-r));
                goto finish;
        }

        fprintf(stderr, "bwgov-wakeup: %s%" PRIu64 " requests in %.1f s, %.3f CPUs",
                sig > 0 ? "interrupted: " : "", requests, window_s, window_s > 0 ? cpu_s / window_s : 0);
        if (wakeup.n > 0)
                fprintf(stderr, ", wake-up p50 %.1f p99 %.1f p99.9 %.1f max %.1f us",
                        sample_store_percentile(&wakeup, 0.5) / 1e3, sample_store_percentile(&wakeup, 0.99) / 1e3,
                        sample_store_percentile(&wakeup, 0.999) / 1e3, wakeup.maxv / 1e3);
        fputc('\n', stderr);
        ret = 0;

finish:
        json_decref(j);
        if (workers)
                for (unsigned i = 0; i < args.workers; i++) {
                        sample_store_done(&workers[i].wakeup);
                        sample_store_done(&workers[i].response);
                        sample_store_done(&workers[i].early);
                }
        sample_store_done(&wakeup);
        sample_store_done(&response);
        sample_store_done(&early);
        free(workers);
        free(slices);
        return ret;
}
