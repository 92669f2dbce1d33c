/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* bwgov-warmup: a warm-up step, like a JIT start. First a fixed amount of CPU
 * work (--warm-work-cpu-s) done at up to --warm-cpus CPUs; the time it takes
 * is the figure of merit. Then a steady load of --steady-cpus for --duration
 * seconds. Load of F CPUs is ceil(F) threads, each busy F/ceil(F) of every
 * --cycle-ms (work measured in thread CPU time); a thread that falls behind
 * does not catch up, so the demand never exceeds F. */

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
        double warm_cpus;
        double warm_work_cpu_s;
        double warm_timeout_s;
        double steady_cpus;
        double duration_s;
        double cycle_ms;
        uint64_t seed;
        uint64_t start_delay_ms;
} Args;

typedef struct Loader {
        pthread_t thread;
        uint64_t cycle_ns;
        uint64_t busy_ns;       /* CPU per cycle */
        uint64_t work_ns;       /* total CPU to do; 0: until end_ns */
        uint64_t start_ns;      /* first cycle starts here */
        uint64_t end_ns;        /* give up at this time */
        uint64_t used_ns;       /* out: CPU used in the loop */
        uint64_t done_ns;       /* out: when work_ns was done, 0 if never */
        atomic_bool finished;
} Loader;

static void help(void) {
        printf("Usage: bwgov-warmup [OPTIONS]\n\n"
               "A warm-up step: a fixed amount of CPU work at up to --warm-cpus, then a\n"
               "steady load. Prints one JSON object on stdout.\n\n"
               "  -h --help                Show this help\n"
               "  -w --warm-cpus=CPUS      Demand during the warm-up (default 1.5)\n"
               "  -W --warm-work-cpu-s=S   CPU work of the warm-up, CPU-seconds (default 4.5)\n"
               "     --warm-timeout=S      Give up the warm-up after this long (default 300)\n"
               "  -S --steady-cpus=CPUS    Demand after the warm-up; 0 idles (default 0.25)\n"
               "  -d --duration=S          Length of the steady part, seconds (default 10)\n"
               "     --cycle-ms=MS         Duty cycle of each thread, ms (default 10)\n"
               "  -s --seed=N              Seed of the threads' cycle offsets (default 1)\n"
               "     --start-delay-ms=MS   Wait this long before starting (default 0)\n"
               "SIGTERM/SIGINT end the run early and print the results so far.\n");
}

static int parse_args(int argc, char *argv[], Args *ret) {
        enum {
                ARG_WARM_TIMEOUT = 0x100,
                ARG_CYCLE_MS,
                ARG_START_DELAY,
        };
        static const struct option options[] = {
                { "help",             no_argument,       NULL, 'h'              },
                { "warm-cpus",        required_argument, NULL, 'w'              },
                { "warm-work-cpu-s",  required_argument, NULL, 'W'              },
                { "warm-timeout",     required_argument, NULL, ARG_WARM_TIMEOUT },
                { "steady-cpus",      required_argument, NULL, 'S'              },
                { "duration",         required_argument, NULL, 'd'              },
                { "cycle-ms",         required_argument, NULL, ARG_CYCLE_MS     },
                { "seed",             required_argument, NULL, 's'              },
                { "start-delay-ms",   required_argument, NULL, ARG_START_DELAY  },
                { NULL, 0, NULL, 0 }
        };
        Args a = {
                .warm_cpus = 1.5,
                .warm_work_cpu_s = 4.5,
                .warm_timeout_s = 300,
                .steady_cpus = 0.25,
                .duration_s = 10,
                .cycle_ms = 10,
                .seed = 1,
        };
        int c, r = 0;

        while ((c = getopt_long(argc, argv, "hw:W:S:d:s:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'w':
                        r = parse_decimal(optarg, &a.warm_cpus);
                        break;
                case 'W':
                        r = parse_decimal(optarg, &a.warm_work_cpu_s);
                        break;
                case ARG_WARM_TIMEOUT:
                        r = parse_decimal(optarg, &a.warm_timeout_s);
                        break;
                case 'S':
                        r = parse_decimal(optarg, &a.steady_cpus);
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
                default:
                        return -EINVAL;
                }
                if (r < 0) {
                        fprintf(stderr, "bwgov-warmup: invalid value '%s' for --%s\n",
                                optarg, option_name(options, c));
                        return r;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "bwgov-warmup: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (!(a.warm_cpus > 0) || a.warm_cpus > 1024 || a.steady_cpus > 1024) {
                fprintf(stderr, "bwgov-warmup: --warm-cpus must be above 0, both at most 1024\n");
                return -EINVAL;
        }
        if (!(a.warm_work_cpu_s > 0) || a.warm_work_cpu_s > 86400) {
                fprintf(stderr, "bwgov-warmup: --warm-work-cpu-s must be above 0 and at most 86400\n");
                return -EINVAL;
        }
        if (!(a.warm_timeout_s > 0) || a.warm_timeout_s > 86400 * 7 || a.duration_s > 86400 * 7) {
                fprintf(stderr, "bwgov-warmup: --warm-timeout must be above 0, times at most a week\n");
                return -EINVAL;
        }
        if (!(a.cycle_ms >= 0.1) || a.cycle_ms > 10000) {
                fprintf(stderr, "bwgov-warmup: --cycle-ms must be 0.1..10000\n");
                return -EINVAL;
        }

        *ret = a;
        return 1;
}

static void *loader_main(void *userdata) {
        Loader *l = userdata;
        uint64_t cycle_start = l->start_ns;

        if (!stop_wait_until(cycle_start))
                for (;;) {
                        uint64_t busy = l->busy_ns, now;
                        bool aborted;

                        if (l->work_ns > 0 && l->work_ns - l->used_ns < busy)
                                busy = l->work_ns - l->used_ns;
                        l->used_ns += burn_cpu_ns(busy, &aborted);
                        if (aborted)
                                break;
                        if (l->work_ns > 0 && l->used_ns >= l->work_ns) {
                                l->done_ns = monotonic_ns();
                                break;
                        }

                        /* Next cycle; a thread that fell behind starts afresh
                         * rather than catching up. */
                        cycle_start += l->cycle_ns;
                        now = monotonic_ns();
                        if (cycle_start < now)
                                cycle_start = now;
                        if (cycle_start >= l->end_ns)
                                break;
                        if (stop_wait_until(cycle_start))
                                break;
                }

        atomic_store(&l->finished, true);
        return NULL;
}

typedef struct Stage {
        Loader *loaders;
        unsigned n, started;
} Stage;

/* Start ceil(cpus) threads at cpus/ceil(cpus) each. */
static int stage_start(Stage *st, const Args *a, Rng *rng, double cpus, uint64_t work_ns,
                       uint64_t start_ns, uint64_t end_ns) {
        uint64_t cycle_ns = (uint64_t) llround(a->cycle_ms * (double) NSEC_PER_MSEC);
        unsigned n = (unsigned) ceil(cpus);
        int r;

        *st = (Stage) { NULL, 0, 0 };
        if (n == 0)
                return 0;
        st->loaders = calloc(n, sizeof(Loader));
        if (!st->loaders)
                return -ENOMEM;
        st->n = n;

        for (unsigned i = 0; i < n; i++) {
                Loader *l = &st->loaders[i];

                l->cycle_ns = cycle_ns;
                l->busy_ns = (uint64_t) llround((double) cycle_ns * cpus / (double) n);
                /* The last thread takes the rounding remainder of the work. */
                l->work_ns = work_ns / n + (i == n - 1 ? work_ns % n : 0);
                l->start_ns = start_ns + (uint64_t) (rng_uniform(rng) * (double) cycle_ns);
                l->end_ns = end_ns;
                r = pthread_create(&l->thread, NULL, loader_main, l);
                if (r != 0)
                        return -r;
                st->started++;
        }
        return 0;
}

static bool stage_finished(const Stage *st) {
        for (unsigned i = 0; i < st->started; i++)
                if (!atomic_load(&st->loaders[i].finished))
                        return false;
        return true;
}

static void stage_join(Stage *st, uint64_t *ret_used_ns, uint64_t *ret_done_ns, bool *ret_all_done) {
        uint64_t used = 0, done = 0;
        bool all_done = st->started == st->n;

        for (unsigned i = 0; i < st->started; i++) {
                Loader *l = &st->loaders[i];

                pthread_join(l->thread, NULL);
                used += l->used_ns;
                if (l->done_ns == 0)
                        all_done = false;
                else if (l->done_ns > done)
                        done = l->done_ns;
        }
        free(st->loaders);
        *st = (Stage) { NULL, 0, 0 };
        *ret_used_ns = used;
        *ret_done_ns = done;
        *ret_all_done = all_done;
}

int main(int argc, char *argv[]) {
        Args args;
        Rng rng;
        Stage st;
        uint64_t t0 = 0, cpu0 = 0, warm_used = 0, warm_done_at = 0, steady_used = 0, steady_t0 = 0, t1, unused;
        bool warm_done = false, unused_b;
        double wall_s, cpu_s, warmup_s, steady_s;
        json_t *j;
        int sig = 0, r;

        r = parse_args(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? 2 : 0;

        signals_block();
        rng_seed(&rng, args.seed, 0);

        if (args.start_delay_ms > 0)
                sig = wait_signal_until(monotonic_ns() + args.start_delay_ms * NSEC_PER_MSEC);

        fprintf(stderr, "bwgov-warmup: pid %d, warm-up %.3f CPU-s at %.3f CPUs, then %.3f CPUs for %.1f s\n",
                (int) getpid(), args.warm_work_cpu_s, args.warm_cpus, args.steady_cpus, args.duration_s);

        t0 = monotonic_ns();
        cpu0 = process_cpu_ns();

        if (sig == 0) {
                uint64_t timeout = t0 + (uint64_t) llround(args.warm_timeout_s * (double) NSEC_PER_SEC);

                r = stage_start(&st, &args, &rng, args.warm_cpus,
                                (uint64_t) llround(args.warm_work_cpu_s * (double) NSEC_PER_SEC), t0, timeout);
                if (r < 0) {
                        fprintf(stderr, "bwgov-warmup: cannot start the warm-up: %s\n", strerror(-r));
                        stop_request();
                }
                while (sig == 0 && !stage_finished(&st))
                        sig = wait_signal_until(monotonic_ns() + 5 * NSEC_PER_MSEC);
                if (sig > 0)
                        stop_request();
                stage_join(&st, &warm_used, &warm_done_at, &warm_done);
        }

        steady_t0 = monotonic_ns();
        if (sig == 0 && !stop_requested()) {
                uint64_t end = steady_t0 + (uint64_t) llround(args.duration_s * (double) NSEC_PER_SEC);

                r = stage_start(&st, &args, &rng, args.steady_cpus, 0, steady_t0, end);
                if (r < 0)
                        fprintf(stderr, "bwgov-warmup: cannot start the steady part: %s\n", strerror(-r));
                else
                        sig = wait_signal_until(end);
                stop_request();
                stage_join(&st, &steady_used, &unused, &unused_b);
        }
        t1 = monotonic_ns();

        wall_s = (double) (t1 - t0) / (double) NSEC_PER_SEC;
        cpu_s = (double) (process_cpu_ns() - cpu0) / (double) NSEC_PER_SEC;
        warmup_s = warm_done ? (double) (warm_done_at - t0) / (double) NSEC_PER_SEC : (double) (steady_t0 - t0) / (double) NSEC_PER_SEC;
        steady_s = (double) (t1 - steady_t0) / (double) NSEC_PER_SEC;

        j = json_object();
        if (!j)
                return 1;
        json_object_set_new(j, "program", json_string("bwgov-warmup"));
        json_object_set_new(j, "warm_cpus", json_real(args.warm_cpus));
        json_object_set_new(j, "warm_threads", json_integer((json_int_t) ceil(args.warm_cpus)));
        json_object_set_new(j, "warm_work_cpu_s", json_real(args.warm_work_cpu_s));
        json_object_set_new(j, "steady_cpus", json_real(args.steady_cpus));
        json_object_set_new(j, "steady_threads", json_integer((json_int_t) ceil(args.steady_cpus)));
        json_object_set_new(j, "duration_s", json_real(args.duration_s));
        json_object_set_new(j, "cycle_ms", json_real(args.cycle_ms));
        json_object_set_new(j, "seed", json_integer((json_int_t) args.seed));
        json_object_set_new(j, "interrupted", json_boolean(sig > 0));
        json_object_set_new(j, "warm_done", json_boolean(warm_done));
        json_object_set_new(j, "warmup_s", json_real(warmup_s));
        json_object_set_new(j, "warmup_cpu_s", json_real((double) warm_used / (double) NSEC_PER_SEC));
        json_object_set_new(j, "ideal_warmup_s", json_real(args.warm_work_cpu_s / args.warm_cpus));
        json_object_set_new(j, "steady_s", json_real(steady_s));
        json_object_set_new(j, "steady_cpu_s", json_real((double) steady_used / (double) NSEC_PER_SEC));
        json_object_set_new(j, "steady_achieved_cpus",
                            json_real(steady_s > 0 ? (double) steady_used / (double) NSEC_PER_SEC / steady_s : 0));
        json_object_set_new(j, "wall_s", json_real(wall_s));
        json_object_set_new(j, "cpu_s", json_real(cpu_s));
        json_object_set_new(j, "achieved_cpus", json_real(wall_s > 0 ? cpu_s / wall_s : 0));

        r = json_print_line(j);
        json_decref(j);
        if (r < 0) {
                fprintf(stderr, "bwgov-warmup: cannot write results: %s\n", strerror(-r));
                return 1;
        }

        fprintf(stderr, "bwgov-warmup: %swarm-up %s in %.3f s (ideal %.3f s), steady %.3f CPUs over %.2f s, %.3f CPU-s in %.2f s\n",
                sig > 0 ? "interrupted: " : "", warm_done ? "done" : "NOT done", warmup_s,
                args.warm_work_cpu_s / args.warm_cpus,
                steady_s > 0 ? (double) steady_used / (double) NSEC_PER_SEC / steady_s : 0, steady_s, cpu_s, wall_s);
        return 0;
}
