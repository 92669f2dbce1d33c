/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* bwgov-reqserver: an open-loop request server. Worker threads take requests
 * from a FIFO queue and burn a fixed amount of thread CPU time for each.
 * Requests arrive on a schedule (fixed rate or Poisson) that does not depend on
 * how fast they are served; latency runs from the *scheduled* arrival to the
 * completion, so a generator that was itself delayed does not hide the delay
 * (no coordinated omission).
 *
 * Arrivals come either from a generator thread in this process, or, with
 * --serve, from another process (bwgov-reqgen) writing scheduled arrival times
 * to our stdin, so that the generator can stay outside the throttled cgroup:
 *
 *   bwgov-reqgen --rate 475 --duration 30 | bwgov-reqserver --serve --cost-ms 2
 *
 * Wire format (text, one request per line): the scheduled arrival time in
 * nanoseconds of CLOCK_MONOTONIC, which is the same clock in every process. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"

typedef enum Arrivals {
        ARRIVALS_POISSON,
        ARRIVALS_FIXED,
} Arrivals;

typedef struct Args {
        uint64_t workers;
        double rate_per_s;
        double cost_ms;
        Arrivals arrivals;
        double duration_s;
        bool duration_set;
        uint64_t seed;
        bool serve;
        uint64_t input_fd;
        uint64_t drain_ms;
        uint64_t queue_max;
        uint64_t max_samples;
        uint64_t start_delay_ms;
} Args;

typedef struct Server {
        const Args *args;
        uint64_t cost_ns;
        uint64_t t0_ns, end_ns; /* end_ns: no arrival at or after this (0: none) */

        pthread_mutex_t lock;
        pthread_cond_t nonempty;
        uint64_t *ring;
        size_t head, len, cap;
        bool producer_done;
        bool closed;            /* workers leave now */
        unsigned workers_active;

        /* Written by the producer only, read after join. */
        uint64_t issued, dropped, bad_lines;
        uint64_t first_arrival_ns, last_arrival_ns;
        uint64_t max_lag_ns;
        int producer_error;

        SampleStore latency;
} Server;

typedef struct Worker {
        Server *server;
        pthread_t thread;
        uint64_t completed, aborted, cpu_ns;
} Worker;

static void help(void) {
        printf("Usage: bwgov-reqserver [OPTIONS]\n\n"
               "An open-loop request server: worker threads burn a fixed CPU cost per request;\n"
               "latency runs from the scheduled arrival to the completion. Prints one JSON\n"
               "object on stdout.\n\n"
               "  -h --help              Show this help\n"
               "  -w --workers=N         Worker threads (default 3)\n"
               "  -r --rate=R            Arrivals per second (default 475)\n"
               "  -c --cost-ms=MS        CPU time per request, ms (default 2)\n"
               "  -a --arrivals=KIND     poisson or fixed (default poisson)\n"
               "  -d --duration=S        Arrival window, seconds (default 30; with --serve,\n"
               "                         until end of input unless given)\n"
               "  -s --seed=N            RNG seed (default 1)\n"
               "     --serve             Read arrivals from another process (see below)\n"
               "     --input-fd=FD       With --serve, read from this fd (default 0)\n"
               "     --drain-ms=MS       After the last arrival, wait at most this long for\n"
               "                         queued requests (default 2000)\n"
               "     --queue-max=N       Queue capacity; arrivals beyond it are dropped and\n"
               "                         counted (default 1000000)\n"
               "     --max-samples=N     Latency samples kept for percentiles (default 1000000)\n"
               "     --start-delay-ms=MS Wait this long before starting (default 0)\n\n"
               "--serve reads one scheduled arrival per line: nanoseconds of CLOCK_MONOTONIC,\n"
               "as written by bwgov-reqgen, so the generator can run outside the cgroup:\n"
               "  bwgov-reqgen --rate 475 --duration 30 | bwgov-reqserver --serve --cost-ms 2\n"
               "SIGTERM/SIGINT end the run early and print the results so far.\n");
}

static int parse_args(int argc, char *argv[], Args *ret) {
        enum {
                ARG_SERVE = 0x100,
                ARG_INPUT_FD,
                ARG_DRAIN_MS,
                ARG_QUEUE_MAX,
                ARG_MAX_SAMPLES,
                ARG_START_DELAY,
        };
        static const struct option options[] = {
                { "help",           no_argument,       NULL, 'h'             },
                { "workers",        required_argument, NULL, 'w'             },
                { "rate",           required_argument, NULL, 'r'             },
                { "cost-ms",        required_argument, NULL, 'c'             },
                { "arrivals",       required_argument, NULL, 'a'             },
                { "duration",       required_argument, NULL, 'd'             },
                { "seed",           required_argument, NULL, 's'             },
                { "serve",          no_argument,       NULL, ARG_SERVE       },
                { "input-fd",       required_argument, NULL, ARG_INPUT_FD    },
                { "drain-ms",       required_argument, NULL, ARG_DRAIN_MS    },
                { "queue-max",      required_argument, NULL, ARG_QUEUE_MAX   },
                { "max-samples",    required_argument, NULL, ARG_MAX_SAMPLES },
                { "start-delay-ms", required_argument, NULL, ARG_START_DELAY },
                { NULL, 0, NULL, 0 }
        };
        Args a = {
                .workers = 3,
                .rate_per_s = 475,
                .cost_ms = 2,
                .arrivals = ARRIVALS_POISSON,
                .duration_s = 30,
                .seed = 1,
                .drain_ms = 2000,
                .queue_max = 1000000,
                .max_samples = SAMPLES_MAX_DEFAULT,
        };
        int c, r = 0;

        while ((c = getopt_long(argc, argv, "hw:r:c:a:d:s:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'w':
                        r = parse_u64(optarg, &a.workers);
                        break;
                case 'r':
                        r = parse_decimal(optarg, &a.rate_per_s);
                        break;
                case 'c':
                        r = parse_decimal(optarg, &a.cost_ms);
                        break;
                case 'a':
                        if (strcmp(optarg, "poisson") == 0)
                                a.arrivals = ARRIVALS_POISSON;
                        else if (strcmp(optarg, "fixed") == 0)
                                a.arrivals = ARRIVALS_FIXED;
                        else
                                r = -EINVAL;
                        break;
                case 'd':
                        r = parse_decimal(optarg, &a.duration_s);
                        a.duration_set = true;
                        break;
                case 's':
                        r = parse_u64(optarg, &a.seed);
                        break;
                case ARG_SERVE:
                        a.serve = true;
                        break;
                case ARG_INPUT_FD:
                        r = parse_u64(optarg, &a.input_fd);
                        break;
                case ARG_DRAIN_MS:
                        r = parse_u64(optarg, &a.drain_ms);
                        break;
                case ARG_QUEUE_MAX:
                        r = parse_u64(optarg, &a.queue_max);
                        break;
                case ARG_MAX_SAMPLES:
                        r = parse_u64(optarg, &a.max_samples);
                        break;
                case ARG_START_DELAY:
                        r = parse_u64(optarg, &a.start_delay_ms);
                        break;
                default:
                        return -EINVAL;
                }
                if (r < 0) {
                        fprintf(stderr, "bwgov-reqserver: invalid value '%s' for --%s\n",
                                optarg, option_name(options, c));
                        return r;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "bwgov-reqserver: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (a.workers < 1 || a.workers > 1024) {
                fprintf(stderr, "bwgov-reqserver: --workers must be 1..1024\n");
                return -EINVAL;
        }
        if (!a.serve && (!(a.rate_per_s >= 0.001) || a.rate_per_s > 10000000)) {
                fprintf(stderr, "bwgov-reqserver: --rate must be 0.001..10000000\n");
                return -EINVAL;
        }
        if (a.cost_ms > 600000) {
                fprintf(stderr, "bwgov-reqserver: --cost-ms must be at most 600000\n");
                return -EINVAL;
        }
        if ((!a.serve || a.duration_set) && (!(a.duration_s > 0) || a.duration_s > 86400 * 7)) {
                fprintf(stderr, "bwgov-reqserver: --duration must be above 0 and at most a week\n");
                return -EINVAL;
        }
        if (a.input_fd > INT32_MAX) {
                fprintf(stderr, "bwgov-reqserver: --input-fd is out of range\n");
                return -EINVAL;
        }
        if (a.queue_max < 1 || a.queue_max > 100000000 ||
            a.max_samples < 1 || a.max_samples > 100000000) {
                fprintf(stderr, "bwgov-reqserver: --queue-max and --max-samples must be 1..100000000\n");
                return -EINVAL;
        }

        *ret = a;
        return 1;
}

/* Called by the producer only. */
static int enqueue(Server *s, uint64_t sched_ns) {
        uint64_t now = monotonic_ns();
        int r = 0;

        if (s->issued == 0)
                s->first_arrival_ns = sched_ns;
        s->last_arrival_ns = sched_ns;
        s->issued++;
        if (now > sched_ns && now - sched_ns > s->max_lag_ns)
                s->max_lag_ns = now - sched_ns;

        pthread_mutex_lock(&s->lock);
        if (s->len == s->cap) {
                if (s->cap >= s->args->queue_max) {
                        s->dropped++;
                        goto out;
                }

                /* Grow the ring, unwrapping it into the new buffer. */
                size_t cap = s->cap ? s->cap * 2 : 1024;
                uint64_t *ring;

                if (cap > s->args->queue_max)
                        cap = s->args->queue_max;
                ring = malloc(cap * sizeof(uint64_t));
                if (!ring) {
                        s->dropped++;
                        r = -ENOMEM;
                        goto out;
                }
                for (size_t i = 0; i < s->len; i++)
                        ring[i] = s->ring[(s->head + i) % s->cap];
                free(s->ring);
                s->ring = ring;
                s->cap = cap;
                s->head = 0;
        }
        s->ring[(s->head + s->len) % s->cap] = sched_ns;
        s->len++;
        pthread_cond_signal(&s->nonempty);
out:
        pthread_mutex_unlock(&s->lock);
        return r;
}

static void producer_finish(Server *s) {
        pthread_mutex_lock(&s->lock);
        s->producer_done = true;
        pthread_cond_broadcast(&s->nonempty);
        pthread_mutex_unlock(&s->lock);
}

static void *generator_main(void *userdata) {
        Server *s = userdata;
        double mean_ns = (double) NSEC_PER_SEC / s->args->rate_per_s;
        double t = (double) s->t0_ns;
        Rng rng;

        rng_seed(&rng, s->args->seed, 0);
        for (;;) {
                uint64_t sched;

                t += s->args->arrivals == ARRIVALS_FIXED ? mean_ns : rng_exponential(&rng, mean_ns);
                sched = (uint64_t) t;
                if (sched >= s->end_ns)
                        break;
                if (stop_wait_until(sched))
                        break;
                if (enqueue(s, sched) < 0)
                        s->producer_error = -ENOMEM;
        }

        producer_finish(s);
        return NULL;
}

static void *reader_main(void *userdata) {
        Server *s = userdata;
        int fd = (int) s->args->input_fd;
        char buf[4096], line[64];
        size_t line_len = 0;
        bool too_long = false;

        while (!stop_requested()) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t n;
                int r;

                if (s->end_ns > 0 && monotonic_ns() >= s->end_ns)
                        break;

                r = poll(&p, 1, 50);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        s->producer_error = -errno;
                        break;
                }
                if (r == 0)
                        continue;

                n = read(fd, buf, sizeof(buf));
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        s->producer_error = -errno;
                        break;
                }
                if (n == 0)
                        break;

                for (ssize_t i = 0; i < n; i++) {
                        uint64_t sched;

                        if (buf[i] != '\n') {
                                if (line_len + 1 < sizeof(line))
                                        line[line_len++] = buf[i];
                                else
                                        too_long = true;
                                continue;
                        }
                        line[line_len] = '\0';
                        if (!too_long && parse_u64(line, &sched) >= 0 && sched > 0) {
                                if (s->end_ns == 0 || sched < s->end_ns)
                                        if (enqueue(s, sched) < 0)
                                                s->producer_error = -ENOMEM;
                        } else
                                s->bad_lines++;
                        line_len = 0;
                        too_long = false;
                }
        }

        producer_finish(s);
        return NULL;
}

static void *worker_main(void *userdata) {
        Worker *w = userdata;
        Server *s = w->server;

        for (;;) {
                uint64_t sched, cpu;
                bool aborted;

                pthread_mutex_lock(&s->lock);
                while (s->len == 0 && !s->producer_done && !s->closed)
                        pthread_cond_wait(&s->nonempty, &s->lock);
                if (s->closed || s->len == 0) {
                        s->workers_active--;
                        pthread_mutex_unlock(&s->lock);
                        break;
                }
                sched = s->ring[s->head];
                s->head = (s->head + 1) % s->cap;
                s->len--;
                pthread_mutex_unlock(&s->lock);

                cpu = burn_cpu_ns(s->cost_ns, &aborted);
                w->cpu_ns += cpu;
                if (aborted) {
                        w->aborted++;
                        continue;
                }
                w->completed++;
                (void) sample_store_add(&s->latency, (double) (monotonic_ns() - sched));
        }

        return NULL;
}

static void server_close(Server *s) {
        pthread_mutex_lock(&s->lock);
        s->closed = true;
        pthread_cond_broadcast(&s->nonempty);
        pthread_mutex_unlock(&s->lock);
}

static bool server_drained(Server *s) {
        bool done;

        pthread_mutex_lock(&s->lock);
        done = s->workers_active == 0;
        pthread_mutex_unlock(&s->lock);
        return done;
}

static bool producer_is_done(Server *s) {
        bool done;

        pthread_mutex_lock(&s->lock);
        done = s->producer_done;
        pthread_mutex_unlock(&s->lock);
        return done;
}

int main(int argc, char *argv[]) {
        Args args;
        Server s = {
                .lock = PTHREAD_MUTEX_INITIALIZER,
                .nonempty = PTHREAD_COND_INITIALIZER,
        };
        Worker *workers = NULL;
        pthread_t producer;
        bool producer_started = false;
        unsigned started = 0;
        uint64_t t1 = 0, cpu0 = 0, cpu1 = 0, completed = 0, aborted = 0, service_cpu = 0, pending, drain_end;
        double wall_s, cpu_s, span_s, offered_cpus, arrival_rate;
        json_t *j = NULL;
        int sig = 0, ret = 1, r;

        r = parse_args(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? 2 : 0;

        signals_block();

        s.args = &args;
        s.cost_ns = (uint64_t) llround(args.cost_ms * (double) NSEC_PER_MSEC);
        sample_store_init(&s.latency, args.max_samples, args.seed);

        workers = calloc(args.workers, sizeof(Worker));
        if (!workers) {
                fprintf(stderr, "bwgov-reqserver: out of memory\n");
                goto finish;
        }

        if (args.start_delay_ms > 0) {
                sig = wait_signal_until(monotonic_ns() + args.start_delay_ms * NSEC_PER_MSEC);
                if (sig > 0)
                        goto results;
        }

        if (args.serve)
                fprintf(stderr, "bwgov-reqserver: pid %d, %u workers, %.3f ms per request, arrivals from fd %u\n",
                        (int) getpid(), (unsigned) args.workers, args.cost_ms, (unsigned) args.input_fd);
        else
                fprintf(stderr, "bwgov-reqserver: pid %d, %u workers, %.3f ms per request, %s arrivals at %.1f/s (%.3f CPUs) for %.1f s\n",
                        (int) getpid(), (unsigned) args.workers, args.cost_ms,
                        args.arrivals == ARRIVALS_FIXED ? "fixed" : "poisson",
                        args.rate_per_s, args.rate_per_s * args.cost_ms / 1000, args.duration_s);

        s.t0_ns = monotonic_ns();
        cpu0 = process_cpu_ns();
        if (!args.serve || args.duration_set)
                s.end_ns = s.t0_ns + (uint64_t) llround(args.duration_s * (double) NSEC_PER_SEC);

        for (unsigned i = 0; i < args.workers; i++) {
                workers[i] = (Worker) { .server = &s };
                pthread_mutex_lock(&s.lock);
                s.workers_active++;
                pthread_mutex_unlock(&s.lock);
                r = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
                if (r != 0) {
                        pthread_mutex_lock(&s.lock);
                        s.workers_active--;
                        pthread_mutex_unlock(&s.lock);
                        fprintf(stderr, "bwgov-reqserver: pthread_create: %s\n", strerror(r));
                        break;
                }
                started++;
        }
        if (started == 0)
                goto finish;

        r = pthread_create(&producer, NULL, args.serve ? reader_main : generator_main, &s);
        if (r != 0) {
                fprintf(stderr, "bwgov-reqserver: pthread_create: %s\n", strerror(r));
                producer_finish(&s);
        } else
                producer_started = true;

        /* Arrival window: until the producer is done (end of window or of
         * input), a signal, or the end of the window. */
        while (!producer_is_done(&s)) {
                sig = wait_signal_until(monotonic_ns() + 20 * NSEC_PER_MSEC);
                if (sig > 0)
                        break;
        }

        /* Drain what is queued, within bounds. */
        drain_end = monotonic_ns() + args.drain_ms * NSEC_PER_MSEC;
        while (sig == 0 && !server_drained(&s)) {
                uint64_t now = monotonic_ns(), next = now + 10 * NSEC_PER_MSEC;

                if (now >= drain_end)
                        break;
                sig = wait_signal_until(next < drain_end ? next : drain_end);
        }

        stop_request();
        server_close(&s);
        if (producer_started)
                pthread_join(producer, NULL);
        for (unsigned i = 0; i < started; i++)
                pthread_join(workers[i].thread, NULL);
        t1 = monotonic_ns();
        cpu1 = process_cpu_ns();

results:
        if (s.t0_ns == 0) {
                s.t0_ns = t1 = monotonic_ns();
                cpu0 = cpu1 = 0;
        }
        for (unsigned i = 0; i < started; i++) {
                completed += workers[i].completed;
                aborted += workers[i].aborted;
                service_cpu += workers[i].cpu_ns;
        }
        pending = s.len + aborted;
        sample_store_finish(&s.latency);

        wall_s = (double) (t1 - s.t0_ns) / (double) NSEC_PER_SEC;
        cpu_s = (double) (cpu1 - cpu0) / (double) NSEC_PER_SEC;
        if (args.serve)
                span_s = s.issued > 1 ? (double) (s.last_arrival_ns - s.first_arrival_ns) / (double) NSEC_PER_SEC *
                                        (double) s.issued / (double) (s.issued - 1) : 0;
        else
                span_s = s.end_ns > s.t0_ns ? (double) (s.end_ns - s.t0_ns) / (double) NSEC_PER_SEC : 0;
        if (sig > 0 && !args.serve && t1 - s.t0_ns < s.end_ns - s.t0_ns)
                span_s = wall_s;
        arrival_rate = span_s > 0 ? (double) s.issued / span_s : 0;
        offered_cpus = args.serve ? arrival_rate * args.cost_ms / 1000 : args.rate_per_s * args.cost_ms / 1000;

        j = json_object();
        if (!j)
                goto finish;
        json_object_set_new(j, "program", json_string("bwgov-reqserver"));
        json_object_set_new(j, "mode", json_string(args.serve ? "serve" : "internal"));
        json_object_set_new(j, "workers", json_integer((json_int_t) args.workers));
        json_object_set_new(j, "cost_ms", json_real(args.cost_ms));
        if (!args.serve) {
                json_object_set_new(j, "arrivals", json_string(args.arrivals == ARRIVALS_FIXED ? "fixed" : "poisson"));
                json_object_set_new(j, "rate_per_s", json_real(args.rate_per_s));
                json_object_set_new(j, "seed", json_integer((json_int_t) args.seed));
        }
        json_object_set_new(j, "duration_s", !args.serve || args.duration_set ? json_real(args.duration_s) : json_null());
        json_object_set_new(j, "arrival_window_s", json_real(span_s));
        json_object_set_new(j, "interrupted", json_boolean(sig > 0));
        json_object_set_new(j, "offered_cpus", json_real(offered_cpus));
        json_object_set_new(j, "arrival_rate_per_s", json_real(arrival_rate));
        json_object_set_new(j, "issued", json_integer((json_int_t) s.issued));
        json_object_set_new(j, "completed", json_integer((json_int_t) completed));
        json_object_set_new(j, "dropped", json_integer((json_int_t) s.dropped));
        json_object_set_new(j, "pending", json_integer((json_int_t) pending));
        if (args.serve)
                json_object_set_new(j, "bad_lines", json_integer((json_int_t) s.bad_lines));
        json_object_set_new(j, "max_enqueue_lag_ms", json_real((double) s.max_lag_ns / (double) NSEC_PER_MSEC));
        json_object_set_new(j, "wall_s", json_real(wall_s));
        json_object_set_new(j, "cpu_s", json_real(cpu_s));
        json_object_set_new(j, "service_cpu_s", json_real((double) service_cpu / (double) NSEC_PER_SEC));
        json_object_set_new(j, "achieved_cpus", json_real(wall_s > 0 ? cpu_s / wall_s : 0));
        json_object_set_new(j, "latency_samples", json_integer((json_int_t) s.latency.n));
        json_object_set_new(j, "latency_ms", sample_store_json(&s.latency, 1.0 / (double) NSEC_PER_MSEC));

        r = json_print_line(j);
        if (r < 0) {
                fprintf(stderr, "bwgov-reqserver: cannot write results: %s\n", strerror(-r));
                goto finish;
        }

        fprintf(stderr, "bwgov-reqserver: %s%" PRIu64 " issued, %" PRIu64 " completed, %" PRIu64 " dropped, %" PRIu64 " pending, %.3f CPUs offered, %.3f used",
                sig > 0 ? "interrupted: " : "", s.issued, completed, s.dropped, pending, offered_cpus,
                wall_s > 0 ? cpu_s / wall_s : 0);
        if (s.latency.n > 0)
                fprintf(stderr, ", latency p50 %.3f p99 %.3f p999 %.3f max %.3f ms",
                        sample_store_percentile(&s.latency, 0.5) / (double) NSEC_PER_MSEC,
                        sample_store_percentile(&s.latency, 0.99) / (double) NSEC_PER_MSEC,
                        sample_store_percentile(&s.latency, 0.999) / (double) NSEC_PER_MSEC,
                        s.latency.maxv / (double) NSEC_PER_MSEC);
        fputc('\n', stderr);
        if (s.producer_error < 0)
                fprintf(stderr, "bwgov-reqserver: arrivals: %s\n", strerror(-s.producer_error));
        ret = s.producer_error < 0 && s.producer_error != -ENOMEM ? 1 : 0;

finish:
        json_decref(j);
        sample_store_done(&s.latency);
        free(s.ring);
        free(workers);
        return ret;
}
