/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* bwgov-phased: a load that alternates a high and a low phase: --high-cpus for
 * --high-s seconds, then --low-cpus for --low-s seconds, over and over for
 * --duration seconds. A load of F CPUs is ceil(F) threads, each busy F/ceil(F)
 * of every --cycle-ms (work measured in thread CPU time), as in bwgov-warmup;
 * a thread that falls behind starts the next cycle afresh rather than catching
 * up, so the demand never exceeds F. Every busy part of a cycle is one work
 * item; its stretch is its wall time over its CPU time (1.0 = unhindered),
 * reported over all items and over the items of the high phases. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"

typedef struct Args {
        double high_cpus;
        double high_s;
        double low_cpus;
        double low_s;
        double duration_s;
        double cycle_ms;
        uint64_t seed;
        uint64_t start_delay_ms;
        uint64_t max_samples;
} Args;

typedef struct Shared {
        const Args *args;
        uint64_t t0;            /* schedule origin: the first high phase starts here */
        uint64_t end_ns;        /* no item starts at or after this */
        uint64_t cycle_ns;
        uint64_t high_ns, period_ns;
        unsigned high_threads, low_threads;
        uint64_t high_busy_ns, low_busy_ns;     /* CPU per cycle of an active thread */
        SampleStore stretch, high_stretch, low_stretch;
} Shared;

typedef struct Worker {
        Shared *shared;
        unsigned index;
        pthread_t thread;
        uint64_t offset_ns;     /* of its cycles within --cycle-ms */
        uint64_t items, high_items, aborted;
        uint64_t cpu_ns, high_cpu_ns;
        int error;
} Worker;

static void help(void) {
        printf("Usage: bwgov-phased [OPTIONS]\n\n"
               "A phased load: --high-cpus for --high-s, then --low-cpus for --low-s, repeated\n"
               "for --duration. Reports the stretch (wall time / CPU time) of every busy part\n"
               "of a duty cycle, over all phases and over the high phases, as one JSON object\n"
               "on stdout.\n\n"
               "  -h --help                Show this help\n"
               "  -H --high-cpus=CPUS      Demand in the high phase (default 0.9)\n"
               "     --high-s=S            Length of the high phase, seconds (default 1)\n"
               "  -L --low-cpus=CPUS       Demand in the low phase; 0 idles (default 0.2)\n"
               "     --low-s=S             Length of the low phase, seconds; 0: high only (default 2)\n"
               "  -d --duration=S          Run time, seconds (default 9)\n"
               "     --cycle-ms=MS         Duty cycle of each thread, ms (default 10)\n"
               "  -s --seed=N              Seed of the threads' cycle offsets (default 1)\n"
               "     --start-delay-ms=MS   Wait this long before starting (default 0)\n"
               "     --max-samples=N       Samples kept for percentiles (default 1000000)\n\n"
               "A load of F CPUs is ceil(F) threads, each busy F/ceil(F) of every cycle; a\n"
               "thread that falls behind starts the next cycle afresh, so the demand never\n"
               "exceeds F. An item belongs to the phase its cycle was scheduled in.\n"
               "SIGTERM/SIGINT end the run early and print the results so far.\n");
}

static int parse_args(int argc, char *argv[], Args *ret) {
        enum {
                ARG_HIGH_S = 0x100,
                ARG_LOW_S,
                ARG_CYCLE_MS,
                ARG_START_DELAY,
                ARG_MAX_SAMPLES,
        };
        static const struct option options[] = {
                { "help",           no_argument,       NULL, 'h'             },
                { "high-cpus",      required_argument, NULL, 'H'             },
                { "high-s",         required_argument, NULL, ARG_HIGH_S      },
                { "low-cpus",       required_argument, NULL, 'L'             },
                { "low-s",          required_argument, NULL, ARG_LOW_S       },
                { "duration",       required_argument, NULL, 'd'             },
                { "cycle-ms",       required_argument, NULL, ARG_CYCLE_MS    },
                { "seed",           required_argument, NULL, 's'             },
                { "start-delay-ms", required_argument, NULL, ARG_START_DELAY },
                { "max-samples",    required_argument, NULL, ARG_MAX_SAMPLES },
                { NULL, 0, NULL, 0 }
        };
        Args a = {
                .high_cpus = 0.9,
                .high_s = 1,
                .low_cpus = 0.2,
                .low_s = 2,
                .duration_s = 9,
                .cycle_ms = 10,
                .seed = 1,
                .max_samples = SAMPLES_MAX_DEFAULT,
        };
        int c, r = 0;

        while ((c = getopt_long(argc, argv, "hH:L:d:s:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'H':
                        r = parse_decimal(optarg, &a.high_cpus);
                        break;
                case ARG_HIGH_S:
                        r = parse_decimal(optarg, &a.high_s);
                        break;
                case 'L':
                        r = parse_decimal(optarg, &a.low_cpus);
                        break;
                case ARG_LOW_S:
                        r = parse_decimal(optarg, &a.low_s);
                        break;
                case 'd':
                        r = parse_decimal(optarg, &a.duration_s);
                        break;
                case ARG_CYCLE_MS:
                        r = parse_decimal(optarg, &a.cycle_ms);
                        break;
                case 's':
                        r = parse_u64(optarg, &a.seed);
                        break;
                case ARG_START_DELAY:
                        r = parse_u64(optarg, &a.start_delay_ms);
                        break;
                case ARG_MAX_SAMPLES:
                        r = parse_u64(optarg, &a.max_samples);
                        break;
                default:
                        return -EINVAL;
                }
                if (r < 0) {
                        fprintf(stderr, "bwgov-phased: invalid value '%s' for --%s\n",
                                optarg, option_name(options, c));
                        return r;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "bwgov-phased: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (!(a.high_cpus > 0) || a.high_cpus > 1024 || a.low_cpus > 1024) {
                fprintf(stderr, "bwgov-phased: --high-cpus must be above 0, both at most 1024\n");
                return -EINVAL;
        }
        if (!(a.high_s >= 0.001) || a.high_s > 86400 || a.low_s > 86400) {
                fprintf(stderr, "bwgov-phased: --high-s must be 0.001..86400, --low-s at most 86400\n");
                return -EINVAL;
        }
        if (!(a.duration_s > 0) || a.duration_s > 86400 * 7) {
                fprintf(stderr, "bwgov-phased: --duration must be above 0 and at most a week\n");
                return -EINVAL;
        }
        if (!(a.cycle_ms >= 0.1) || a.cycle_ms > 10000) {
                fprintf(stderr, "bwgov-phased: --cycle-ms must be 0.1..10000\n");
                return -EINVAL;
        }
        if (a.max_samples < 1 || a.max_samples > 100000000) {
                fprintf(stderr, "bwgov-phased: --max-samples must be 1..100000000\n");
                return -EINVAL;
        }

        *ret = a;
        return 1;
}

static uint64_t s_to_ns(double s) {
        return (uint64_t) llround(s * (double) NSEC_PER_SEC);
}

static bool in_high_phase(const Shared *sh, uint64_t t) {
        return t < sh->t0 || (t - sh->t0) % sh->period_ns < sh->high_ns;
}

/* Start of the phase after the one that holds t. */
static uint64_t next_phase_start(const Shared *sh, uint64_t t) {
        uint64_t since = t - sh->t0, base = since - since % sh->period_ns;

        if (since % sh->period_ns < sh->high_ns && sh->high_ns < sh->period_ns)
                return sh->t0 + base + sh->high_ns;
        return sh->t0 + base + sh->period_ns;
}

/* Time spent in high and in low phases over [0, t) of the schedule. */
static void schedule_split(const Args *a, double t, double *ret_high_s, double *ret_low_s) {
        double period = a->high_s + a->low_s, full = floor(t / period), rest = t - full * period;

        *ret_high_s = full * a->high_s + fmin(rest, a->high_s);
        *ret_low_s = full * a->low_s + fmax(rest - a->high_s, 0);
}

static uint64_t phases_begun(const Args *a, double t, bool high_only) {
        double period = a->high_s + a->low_s, full = floor(t / period), rest = t - full * period;
        uint64_t n = (uint64_t) full * (high_only || a->low_s <= 0 ? 1 : 2);

        if (rest > 0)
                n++;
        if (!high_only && a->low_s > 0 && rest > a->high_s)
                n++;
        return n;
}

static void record_item(Worker *w, bool high, uint64_t wall_ns, uint64_t cpu_ns, bool aborted) {
        Shared *sh = w->shared;
        double x;
        int r;

        w->cpu_ns += cpu_ns;
        if (high)
                w->high_cpu_ns += cpu_ns;
        if (aborted || cpu_ns == 0) {
                w->aborted++;
                return;
        }
        w->items++;
        x = (double) wall_ns / (double) cpu_ns;
        r = sample_store_add(&sh->stretch, x);
        if (high) {
                w->high_items++;
                if (r >= 0)
                        r = sample_store_add(&sh->high_stretch, x);
        } else if (r >= 0)
                r = sample_store_add(&sh->low_stretch, x);
        if (r < 0)
                w->error = r;
}

static void *worker_main(void *userdata) {
        Worker *w = userdata;
        Shared *sh = w->shared;
        uint64_t cycle_start = sh->t0 + w->offset_ns;

        while (cycle_start < sh->end_ns) {
                bool high = in_high_phase(sh, cycle_start), aborted;
                unsigned active = high ? sh->high_threads : sh->low_threads;
                uint64_t busy = high ? sh->high_busy_ns : sh->low_busy_ns, wall_start, cpu, now;

                if (w->index >= active || busy == 0) {
                        /* Idle in this phase: sleep until the next one, on
                         * this thread's cycle grid. */
                        uint64_t next = next_phase_start(sh, cycle_start), k;

                        k = (next - cycle_start + sh->cycle_ns - 1) / sh->cycle_ns;
                        cycle_start += (k > 0 ? k : 1) * sh->cycle_ns;
                        continue;
                }
                if (stop_wait_until(cycle_start))
                        break;

                wall_start = monotonic_ns();
                cpu = burn_cpu_ns(busy, &aborted);
                now = monotonic_ns();
                record_item(w, high, now - wall_start, cpu, aborted);
                if (aborted)
                        break;

                /* Next cycle; a thread that fell behind starts afresh rather
                 * than catching up. */
                cycle_start += sh->cycle_ns;
                if (cycle_start < now)
                        cycle_start = now;
        }
        return NULL;
}

int main(int argc, char *argv[]) {
        Args args;
        Shared sh = {
                .args = &args,
        };
        Worker *workers = NULL;
        Rng rng;
        uint64_t t1, cpu0, items = 0, high_items = 0, aborted = 0, item_cpu = 0, high_cpu = 0;
        unsigned nthreads, started = 0;
        double wall_s, cpu_s, sched_s, high_time_s, low_time_s, demand_s;
        json_t *j = NULL;
        int sig = 0, ret = 1, r;

        r = parse_args(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? 2 : 0;

        signals_block();
        rng_seed(&rng, args.seed, 0);

        sh.cycle_ns = (uint64_t) llround(args.cycle_ms * (double) NSEC_PER_MSEC);
        sh.high_ns = s_to_ns(args.high_s);
        sh.period_ns = sh.high_ns + s_to_ns(args.low_s);
        sh.high_threads = (unsigned) ceil(args.high_cpus);
        sh.low_threads = (unsigned) ceil(args.low_cpus);
        sh.high_busy_ns = (uint64_t) llround((double) sh.cycle_ns * args.high_cpus / (double) sh.high_threads);
        sh.low_busy_ns = sh.low_threads > 0 ?
                (uint64_t) llround((double) sh.cycle_ns * args.low_cpus / (double) sh.low_threads) : 0;
        sample_store_init(&sh.stretch, args.max_samples, args.seed);
        sample_store_init(&sh.high_stretch, args.max_samples, args.seed + 1);
        sample_store_init(&sh.low_stretch, args.max_samples, args.seed + 2);
        nthreads = sh.high_threads > sh.low_threads ? sh.high_threads : sh.low_threads;

        workers = calloc(nthreads, sizeof(Worker));
        if (!workers) {
                fprintf(stderr, "bwgov-phased: out of memory\n");
                goto finish;
        }
        if (args.start_delay_ms > 0) {
                sig = wait_signal_until(monotonic_ns() + args.start_delay_ms * NSEC_PER_MSEC);
                if (sig > 0) {
                        fprintf(stderr, "bwgov-phased: %s before start\n", strsignal(sig));
                        stop_request();
                }
        }

        fprintf(stderr, "bwgov-phased: pid %d, %.3f CPUs for %.3f s, then %.3f CPUs for %.3f s, for %.1f s\n",
                (int) getpid(), args.high_cpus, args.high_s, args.low_cpus, args.low_s, args.duration_s);

        /* Measure from the moment the schedule starts; threads created
         * after it catch up with their first cycle at once. */
        sh.t0 = monotonic_ns();
        sh.end_ns = sh.t0 + s_to_ns(args.duration_s);
        cpu0 = process_cpu_ns();
        for (unsigned i = 0; i < nthreads && sig == 0; i++) {
                workers[i] = (Worker) {
                        .shared = &sh,
                        .index = i,
                        .offset_ns = (uint64_t) (rng_uniform(&rng) * (double) sh.cycle_ns) % sh.cycle_ns,
                };
                r = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
                if (r != 0) {
                        fprintf(stderr, "bwgov-phased: pthread_create: %s\n", strerror(r));
                        stop_request();
                        break;
                }
                started++;
        }

        if (sig == 0 && !stop_requested())
                sig = wait_signal_until(sh.end_ns);
        stop_request();
        for (unsigned i = 0; i < started; i++)
                pthread_join(workers[i].thread, NULL);
        t1 = monotonic_ns();

        for (unsigned i = 0; i < started; i++) {
                items += workers[i].items;
                high_items += workers[i].high_items;
                aborted += workers[i].aborted;
                item_cpu += workers[i].cpu_ns;
                high_cpu += workers[i].high_cpu_ns;
                if (workers[i].error < 0)
                        fprintf(stderr, "bwgov-phased: some samples were not kept: %s\n",
                                strerror(-workers[i].error));
        }
        sample_store_finish(&sh.stretch);
        sample_store_finish(&sh.high_stretch);
        sample_store_finish(&sh.low_stretch);

        wall_s = (double) (t1 - sh.t0) / (double) NSEC_PER_SEC;
        cpu_s = (double) (process_cpu_ns() - cpu0) / (double) NSEC_PER_SEC;
        /* The schedule's own length: the run, or less when interrupted. */
        sched_s = fmin(wall_s, args.duration_s);
        schedule_split(&args, sched_s, &high_time_s, &low_time_s);
        demand_s = args.high_cpus * high_time_s + args.low_cpus * low_time_s;

        j = json_object();
        if (!j)
                goto finish;
        json_object_set_new(j, "program", json_string("bwgov-phased"));
        json_object_set_new(j, "high_cpus", json_real(args.high_cpus));
        json_object_set_new(j, "high_s", json_real(args.high_s));
        json_object_set_new(j, "low_cpus", json_real(args.low_cpus));
        json_object_set_new(j, "low_s", json_real(args.low_s));
        json_object_set_new(j, "duration_s", json_real(args.duration_s));
        json_object_set_new(j, "cycle_ms", json_real(args.cycle_ms));
        json_object_set_new(j, "seed", json_integer((json_int_t) args.seed));
        json_object_set_new(j, "interrupted", json_boolean(sig > 0));
        json_object_set_new(j, "threads", json_integer((json_int_t) nthreads));
        json_object_set_new(j, "threads_started", json_integer((json_int_t) started));
        json_object_set_new(j, "phases", json_integer((json_int_t) phases_begun(&args, sched_s, false)));
        json_object_set_new(j, "high_phases", json_integer((json_int_t) phases_begun(&args, sched_s, true)));
        json_object_set_new(j, "items", json_integer((json_int_t) items));
        json_object_set_new(j, "high_items", json_integer((json_int_t) high_items));
        json_object_set_new(j, "items_aborted", json_integer((json_int_t) aborted));
        json_object_set_new(j, "mean_demand_cpus",
                            json_real(sched_s > 0 ? demand_s / sched_s : 0));
        json_object_set_new(j, "wall_s", json_real(wall_s));
        json_object_set_new(j, "cpu_s", json_real(cpu_s));
        json_object_set_new(j, "item_cpu_s", json_real((double) item_cpu / (double) NSEC_PER_SEC));
        json_object_set_new(j, "achieved_cpus", json_real(wall_s > 0 ? cpu_s / wall_s : 0));
        json_object_set_new(j, "high_achieved_cpus",
                            json_real(high_time_s > 0 ? (double) high_cpu / (double) NSEC_PER_SEC / high_time_s : 0));
        json_object_set_new(j, "low_achieved_cpus",
                            json_real(low_time_s > 0 ?
                                      (double) (item_cpu - high_cpu) / (double) NSEC_PER_SEC / low_time_s : 0));
        json_object_set_new(j, "stretch_samples", json_integer((json_int_t) sh.stretch.n));
        json_object_set_new(j, "stretch", sample_store_json(&sh.stretch, 1.0));
        json_object_set_new(j, "high_stretch", sample_store_json(&sh.high_stretch, 1.0));
        json_object_set_new(j, "low_stretch", sample_store_json(&sh.low_stretch, 1.0));

        r = json_print_line(j);
        if (r < 0) {
                fprintf(stderr, "bwgov-phased: cannot write results: %s\n", strerror(-r));
                goto finish;
        }

        fprintf(stderr, "bwgov-phased: %s%" PRIu64 " items (%" PRIu64 " in high phases) in %.2f s, "
                "%.3f CPU-s used (%.3f CPUs)",
                sig > 0 ? "interrupted: " : "", items, high_items, wall_s, cpu_s, wall_s > 0 ? cpu_s / wall_s : 0);
        if (sh.stretch.n > 0)
                fprintf(stderr, ", stretch p50 %.2f p99 %.2f max %.2f",
                        sample_store_percentile(&sh.stretch, 0.5),
                        sample_store_percentile(&sh.stretch, 0.99), sh.stretch.maxv);
        if (sh.high_stretch.n > 0)
                fprintf(stderr, ", high p99 %.2f", sample_store_percentile(&sh.high_stretch, 0.99));
        fputc('\n', stderr);
        ret = 0;

finish:
        json_decref(j);
        sample_store_done(&sh.stretch);
        sample_store_done(&sh.high_stretch);
        sample_store_done(&sh.low_stretch);
        free(workers);
        return ret;
}
