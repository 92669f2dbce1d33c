/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* bwgov-bursty: a bursty CPU workload. Each of N threads loops: sleep a random
 * (exponential) gap, then burn a fixed amount of its own CPU time. The stretch
 * of a burst is its wall time over its CPU time: 1.0 when the burst ran
 * unhindered, larger when it waited for a CPU or for the cgroup's quota.
 *
 * Cgroup placement: all threads live in this process and are created after
 * start-up, so a caller that writes the child's PID into cgroup.procs between
 * fork() and exec() (or at any time: cgroup.procs moves every thread) has the
 * whole workload in the cgroup. --start-delay-ms gives a shell caller time to
 * do that before the measurement starts. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-util.h"

typedef struct Args {
        uint64_t threads;
        double mean_demand_cpus;
        double burst_ms;
        double duration_s;
        uint64_t seed;
        bool phase;
        bool open_loop;
        uint64_t start_delay_ms;
        uint64_t max_samples;
} Args;

typedef struct Shared {
        const Args *args;
        uint64_t burst_ns;
        double cycle_mean_ns;   /* open loop: mean time between burst starts */
        double gap_mean_ns;     /* closed loop: mean sleep between bursts */
        SampleStore stretch;
        SampleStore phase_stretch;

        /* Threads wait at this gate until all are created. */
        pthread_mutex_t gate_lock;
        pthread_cond_t gate_cond;
        bool gate_open;
        bool abort_start;
        unsigned nthreads;

        /* phase mode */
        pthread_barrier_t barrier;
        Rng phase_rng;
        uint64_t phase_start_ns;
        bool phase_stop;
        uint64_t *phase_end_ns; /* one slot per thread */
        uint64_t phases;
        uint64_t phase_sched_ns;
} Shared;

typedef struct Worker {
        Shared *shared;
        unsigned index;
        pthread_t thread;
        Rng rng;
        uint64_t bursts;
        uint64_t aborted;
        uint64_t burst_cpu_ns;
        int error;
} Worker;

static void help(void) {
        printf("Usage: bwgov-bursty [OPTIONS]\n\n"
               "A bursty CPU workload: each thread sleeps an exponential gap, then burns\n"
               "a fixed amount of its own CPU time (CLOCK_THREAD_CPUTIME_ID). Reports the\n"
               "stretch of every burst (wall time / CPU time) as one JSON object on stdout.\n\n"
               "  -h --help               Show this help\n"
               "  -t --threads=N          Worker threads (default 4)\n"
               "  -m --mean-demand=CPUS   Mean total demand in CPUs, below N (default 0.45)\n"
               "  -b --burst-ms=MS        CPU time per burst, ms (default 10)\n"
               "  -d --duration=S         Run time, seconds (default 30)\n"
               "  -s --seed=N             RNG seed (default 1)\n"
               "     --phase              All threads burst together (a barrier aligns them):\n"
               "                          one phase is N x burst-ms of CPU at once, e.g. with\n"
               "                          --burst-ms=200, a burst longer than one quota\n"
               "     --open-loop          Draw burst start times on a schedule independent of\n"
               "                          how long bursts take (default: sleep after each burst)\n"
               "     --start-delay-ms=MS  Wait this long before starting (default 0)\n"
               "     --max-samples=N      Samples kept for percentiles (default 1000000)\n\n"
               "Gap law: closed loop, mean gap = burst * (N / demand - 1); open loop, mean\n"
               "time between one thread's burst starts = burst * N / demand. Both assume\n"
               "bursts run unhindered; achieved_demand_cpus reports what really ran.\n"
               "SIGTERM/SIGINT end the run early and print the results so far.\n"
               "Place the process in a cgroup by writing its PID to cgroup.procs after\n"
               "fork() and before exec(); all threads are created afterwards.\n");
}

static int parse_args(int argc, char *argv[], Args *ret) {
        enum {
                ARG_PHASE = 0x100,
                ARG_OPEN_LOOP,
                ARG_START_DELAY,
                ARG_MAX_SAMPLES,
        };
        static const struct option options[] = {
                { "help",           no_argument,       NULL, 'h'             },
                { "threads",        required_argument, NULL, 't'             },
                { "mean-demand",    required_argument, NULL, 'm'             },
                { "burst-ms",       required_argument, NULL, 'b'             },
                { "duration",       required_argument, NULL, 'd'             },
                { "seed",           required_argument, NULL, 's'             },
                { "phase",          no_argument,       NULL, ARG_PHASE       },
                { "open-loop",      no_argument,       NULL, ARG_OPEN_LOOP   },
                { "start-delay-ms", required_argument, NULL, ARG_START_DELAY },
                { "max-samples",    required_argument, NULL, ARG_MAX_SAMPLES },
                { NULL, 0, NULL, 0 }
        };
        Args a = {
                .threads = 4,
                .mean_demand_cpus = 0.45,
                .burst_ms = 10,
                .duration_s = 30,
                .seed = 1,
                .max_samples = SAMPLES_MAX_DEFAULT,
        };
        int c, r = 0;

        while ((c = getopt_long(argc, argv, "ht:m:b:d:s:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 't':
                        r = parse_u64(optarg, &a.threads);
                        break;
                case 'm':
                        r = parse_decimal(optarg, &a.mean_demand_cpus);
                        break;
                case 'b':
                        r = parse_decimal(optarg, &a.burst_ms);
                        break;
                case 'd':
                        r = parse_decimal(optarg, &a.duration_s);
                        break;
                case 's':
                        r = parse_u64(optarg, &a.seed);
                        break;
                case ARG_PHASE:
                        a.phase = true;
                        break;
                case ARG_OPEN_LOOP:
                        a.open_loop = true;
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
                        fprintf(stderr, "bwgov-bursty: invalid value '%s' for --%s\n",
                                optarg, option_name(options, c));
                        return r;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "bwgov-bursty: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (a.threads < 1 || a.threads > 1024) {
                fprintf(stderr, "bwgov-bursty: --threads must be 1..1024\n");
                return -EINVAL;
        }
        if (!(a.mean_demand_cpus > 0) || a.mean_demand_cpus >= (double) a.threads) {
                fprintf(stderr, "bwgov-bursty: --mean-demand must be above 0 and below --threads\n");
                return -EINVAL;
        }
        if (!(a.burst_ms >= 0.01) || a.burst_ms > 600000) {
                fprintf(stderr, "bwgov-bursty: --burst-ms must be 0.01..600000\n");
                return -EINVAL;
        }
        if (!(a.duration_s > 0) || a.duration_s > 86400 * 7) {
                fprintf(stderr, "bwgov-bursty: --duration must be above 0 and at most a week\n");
                return -EINVAL;
        }
        if (a.max_samples < 1 || a.max_samples > 100000000) {
                fprintf(stderr, "bwgov-bursty: --max-samples must be 1..100000000\n");
                return -EINVAL;
        }

        *ret = a;
        return 1;
}

static void record_burst(Worker *w, uint64_t wall_ns, uint64_t cpu_ns, bool aborted) {
        int r;

        w->burst_cpu_ns += cpu_ns;
        if (aborted || cpu_ns == 0) {
                w->aborted++;
                return;
        }
        w->bursts++;
        r = sample_store_add(&w->shared->stretch, (double) wall_ns / (double) cpu_ns);
        if (r < 0)
                w->error = r;
}

static void run_independent(Worker *w) {
        Shared *sh = w->shared;
        uint64_t next = monotonic_ns();

        while (!stop_requested()) {
                uint64_t start, wall_start, cpu;
                bool aborted;

                if (sh->args->open_loop) {
                        next += (uint64_t) rng_exponential(&w->rng, sh->cycle_mean_ns);
                        start = next;
                } else
                        start = monotonic_ns() + (uint64_t) rng_exponential(&w->rng, sh->gap_mean_ns);

                if (stop_wait_until(start))
                        break;

                wall_start = monotonic_ns();
                cpu = burn_cpu_ns(sh->burst_ns, &aborted);
                record_burst(w, monotonic_ns() - wall_start, cpu, aborted);
        }
}

static void run_phases(Worker *w) {
        Shared *sh = w->shared;
        unsigned n = sh->nthreads;

        for (;;) {
                uint64_t wall_start, cpu;
                bool aborted;
                int r;

                /* Everyone arrives; the serial thread closes the last phase,
                 * decides whether to go on, and schedules the next start. */
                r = pthread_barrier_wait(&sh->barrier);
                if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
                        uint64_t now = monotonic_ns(), end = 0;

                        if (sh->phase_start_ns > 0) {
                                for (unsigned i = 0; i < n; i++)
                                        if (sh->phase_end_ns[i] > end)
                                                end = sh->phase_end_ns[i];
                                if (end > 0) {
                                        sh->phases++;
                                        (void) sample_store_add(&sh->phase_stretch,
                                                                (double) (end - sh->phase_start_ns) /
                                                                (double) sh->burst_ns);
                                }
                        }

                        sh->phase_stop = stop_requested();
                        if (sh->args->open_loop) {
                                sh->phase_sched_ns += (uint64_t) rng_exponential(&sh->phase_rng, sh->cycle_mean_ns);
                                sh->phase_start_ns = sh->phase_sched_ns > now ? sh->phase_sched_ns : now;
                        } else
                                sh->phase_start_ns = now + (uint64_t) rng_exponential(&sh->phase_rng, sh->gap_mean_ns);
                        for (unsigned i = 0; i < n; i++)
                                sh->phase_end_ns[i] = 0;
                }
                (void) pthread_barrier_wait(&sh->barrier);
                if (sh->phase_stop)
                        break;

                /* A stop during the sleep or the burst still reaches the next
                 * barrier, so nobody is left waiting there. */
                (void) stop_wait_until(sh->phase_start_ns);
                if (stop_requested())
                        continue;

                wall_start = monotonic_ns();
                cpu = burn_cpu_ns(sh->burst_ns, &aborted);
                record_burst(w, monotonic_ns() - wall_start, cpu, aborted);
                if (!aborted)
                        sh->phase_end_ns[w->index] = monotonic_ns();
        }
}

static void *worker_main(void *userdata) {
        Worker *w = userdata;
        Shared *sh = w->shared;

        pthread_mutex_lock(&sh->gate_lock);
        while (!sh->gate_open)
                pthread_cond_wait(&sh->gate_cond, &sh->gate_lock);
        pthread_mutex_unlock(&sh->gate_lock);
        if (sh->abort_start)
                return NULL;

        if (w->shared->args->phase)
                run_phases(w);
        else
                run_independent(w);
        return NULL;
}

int main(int argc, char *argv[]) {
        Args args;
        Shared sh = {
                .gate_lock = PTHREAD_MUTEX_INITIALIZER,
                .gate_cond = PTHREAD_COND_INITIALIZER,
        };
        Worker *workers = NULL;
        uint64_t t0, t1, cpu0, cpu1, bursts = 0, aborted = 0, burst_cpu = 0;
        unsigned started = 0;
        bool barrier_ok = false;
        double wall_s, cpu_s;
        json_t *j = NULL;
        int sig = 0, ret = 1, r;

        r = parse_args(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? 2 : 0;

        signals_block();

        sh.args = &args;
        sh.burst_ns = (uint64_t) llround(args.burst_ms * (double) NSEC_PER_MSEC);
        sh.cycle_mean_ns = (double) sh.burst_ns * (double) args.threads / args.mean_demand_cpus;
        sh.gap_mean_ns = sh.cycle_mean_ns - (double) sh.burst_ns;
        sample_store_init(&sh.stretch, args.max_samples, args.seed);
        sample_store_init(&sh.phase_stretch, args.max_samples, args.seed + 1);
        rng_seed(&sh.phase_rng, args.seed, UINT64_MAX);

        workers = calloc(args.threads, sizeof(Worker));
        sh.phase_end_ns = calloc(args.threads, sizeof(uint64_t));
        if (!workers || !sh.phase_end_ns) {
                fprintf(stderr, "bwgov-bursty: out of memory\n");
                goto finish;
        }
        if (args.start_delay_ms > 0) {
                sig = wait_signal_until(monotonic_ns() + args.start_delay_ms * NSEC_PER_MSEC);
                if (sig > 0) {
                        fprintf(stderr, "bwgov-bursty: %s before start\n", strsignal(sig));
                        stop_request();
                }
        }

        fprintf(stderr, "bwgov-bursty: pid %d, %u threads, mean demand %.3f CPUs, bursts of %.3f ms%s%s, %.1f s\n",
                (int) getpid(), (unsigned) args.threads, args.mean_demand_cpus, args.burst_ms,
                args.phase ? ", in phase" : "", args.open_loop ? ", open loop" : "", args.duration_s);

        for (unsigned i = 0; i < args.threads; i++) {
                workers[i] = (Worker) {
                        .shared = &sh,
                        .index = i,
                };
                rng_seed(&workers[i].rng, args.seed, i);
                r = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
                if (r != 0) {
                        fprintf(stderr, "bwgov-bursty: pthread_create: %s\n", strerror(r));
                        stop_request();
                        break;
                }
                started++;
        }
        sh.nthreads = started;
        if (args.phase && started > 0) {
                r = pthread_barrier_init(&sh.barrier, NULL, started);
                if (r != 0) {
                        fprintf(stderr, "bwgov-bursty: pthread_barrier_init: %s\n", strerror(r));
                        /* Workers see this before they touch the barrier. */
                        sh.abort_start = true;
                        stop_request();
                } else
                        barrier_ok = true;
        }

        /* Measure from the moment the workers may run. */
        t0 = monotonic_ns();
        cpu0 = process_cpu_ns();
        sh.phase_sched_ns = t0;
        pthread_mutex_lock(&sh.gate_lock);
        sh.gate_open = true;
        pthread_cond_broadcast(&sh.gate_cond);
        pthread_mutex_unlock(&sh.gate_lock);

        if (sig == 0 && !stop_requested())
                sig = wait_signal_until(t0 + (uint64_t) llround(args.duration_s * (double) NSEC_PER_SEC));
        stop_request();
        for (unsigned i = 0; i < started; i++)
                pthread_join(workers[i].thread, NULL);
        t1 = monotonic_ns();
        cpu1 = process_cpu_ns();

        for (unsigned i = 0; i < started; i++) {
                bursts += workers[i].bursts;
                aborted += workers[i].aborted;
                burst_cpu += workers[i].burst_cpu_ns;
                if (workers[i].error < 0)
                        fprintf(stderr, "bwgov-bursty: some samples were not kept: %s\n",
                                strerror(-workers[i].error));
        }
        sample_store_finish(&sh.stretch);
        sample_store_finish(&sh.phase_stretch);

        wall_s = (double) (t1 - t0) / (double) NSEC_PER_SEC;
        cpu_s = (double) (cpu1 - cpu0) / (double) NSEC_PER_SEC;

        j = json_object();
        if (!j)
                goto finish;
        json_object_set_new(j, "program", json_string("bwgov-bursty"));
        json_object_set_new(j, "threads", json_integer((json_int_t) args.threads));
        json_object_set_new(j, "mean_demand_cpus", json_real(args.mean_demand_cpus));
        json_object_set_new(j, "burst_ms", json_real(args.burst_ms));
        json_object_set_new(j, "duration_s", json_real(args.duration_s));
        json_object_set_new(j, "seed", json_integer((json_int_t) args.seed));
        json_object_set_new(j, "phase", json_boolean(args.phase));
        json_object_set_new(j, "open_loop", json_boolean(args.open_loop));
        json_object_set_new(j, "interrupted", json_boolean(sig > 0));
        json_object_set_new(j, "threads_started", json_integer(started));
        json_object_set_new(j, "bursts", json_integer((json_int_t) bursts));
        json_object_set_new(j, "bursts_aborted", json_integer((json_int_t) aborted));
        json_object_set_new(j, "wall_s", json_real(wall_s));
        json_object_set_new(j, "cpu_s", json_real(cpu_s));
        json_object_set_new(j, "burst_cpu_s", json_real((double) burst_cpu / (double) NSEC_PER_SEC));
        json_object_set_new(j, "achieved_demand_cpus", json_real(wall_s > 0 ? cpu_s / wall_s : 0));
        json_object_set_new(j, "stretch_samples", json_integer((json_int_t) sh.stretch.n));
        json_object_set_new(j, "stretch", sample_store_json(&sh.stretch, 1.0));
        if (args.phase) {
                json_object_set_new(j, "phases", json_integer((json_int_t) sh.phases));
                json_object_set_new(j, "phase_stretch", sample_store_json(&sh.phase_stretch, 1.0));
        }

        r = json_print_line(j);
        if (r < 0) {
                fprintf(stderr, "bwgov-bursty: cannot write results: %s\n", strerror(-r));
                goto finish;
        }

        fprintf(stderr, "bwgov-bursty: %s%" PRIu64 " bursts in %.2f s, %.3f CPU-s used (%.3f CPUs)",
                sig > 0 ? "interrupted: " : "", bursts, wall_s, cpu_s, wall_s > 0 ? cpu_s / wall_s : 0);
        if (sh.stretch.n > 0)
                fprintf(stderr, ", stretch p50 %.2f p99 %.2f max %.2f",
                        sample_store_percentile(&sh.stretch, 0.5),
                        sample_store_percentile(&sh.stretch, 0.99), sh.stretch.maxv);
        fputc('\n', stderr);
        ret = 0;

finish:
        json_decref(j);
        if (barrier_ok)
                pthread_barrier_destroy(&sh.barrier);
        sample_store_done(&sh.stretch);
        sample_store_done(&sh.phase_stretch);
        free(sh.phase_end_ns);
        free(workers);
        return ret;
}
