/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* bwgov-mix: one application of the contention benchmark (tests/bench/
 * contention.py): a fixed amount of work done by --threads threads in
 * --rounds rounds, all threads meeting at a barrier after each round, as
 * the PARSEC programs of the slides do. The work is counted in operations,
 * not CPU time, so that interference (a cold cache, a descheduled thread
 * that the others wait for at the barrier) shows as a longer run:
 *   cpu    floating-point arithmetic in registers (blackscholes, swaptions);
 *   cache  dependent loads along one random cycle through a --ws-kib working
 *          set shared by the threads (canneal, streamcluster); with a set
 *          larger than the CPU's L2 every load misses it.
 * Prints one JSON object on stdout: its wall time from start to the last
 * barrier, its CPU time, and a checksum that keeps the work from being
 * optimised away. */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"

#define CACHE_LINE 64

enum kind { KIND_CPU, KIND_CACHE };

typedef struct Args {
        enum kind kind;
        unsigned threads;
        uint64_t rounds;
        double mops;            /* total work, millions of operations */
        uint64_t ws_kib;
        uint64_t seed;
} Args;

/* One node per cache line: the next index and padding. */
typedef struct Node {
        uint64_t next;
        char pad[CACHE_LINE - sizeof(uint64_t)];
} Node;

typedef struct Shared {
        const Args *args;
        Node *nodes;
        size_t n_nodes;
        uint64_t ops_per_round;         /* per thread */
        /* The barrier: a count and a generation under a lock, so that a stop
         * can release threads that wait at it (pthread_barrier_wait cannot
         * be interrupted). */
        pthread_mutex_t lock;
        pthread_cond_t cond;
        unsigned waiting;
        uint64_t generation;
        bool released;
        atomic_uint finished;
        atomic_bool aborted;
} Shared;

typedef struct Worker {
        pthread_t thread;
        Shared *sh;
        unsigned id;
        uint64_t checksum;
        uint64_t ops;
} Worker;

static void help(void) {
        printf("Usage: bwgov-mix [OPTIONS]\n\n"
               "A fixed amount of work by threads meeting at a barrier after each round.\n"
               "Prints one JSON object on stdout.\n\n"
               "  -h --help            Show this help\n"
               "  -k --kind=KIND       cpu (arithmetic) or cache (random loads in --ws-kib) (default cpu)\n"
               "  -t --threads=N       Worker threads (default 2)\n"
               "  -r --rounds=N        Rounds, a barrier after each (default 100)\n"
               "  -m --mops=M          Total work in millions of operations (default 100)\n"
               "  -w --ws-kib=KIB      Working set of --kind=cache, KiB (default 16384)\n"
               "  -s --seed=N          Seed of the random cycle (default 1)\n"
               "SIGTERM/SIGINT end the run early and print the results so far.\n");
}

static int parse_args(int argc, char *argv[], Args *ret) {
        static const struct option options[] = {
                { "help",    no_argument,       NULL, 'h' },
                { "kind",    required_argument, NULL, 'k' },
                { "threads", required_argument, NULL, 't' },
                { "rounds",  required_argument, NULL, 'r' },
                { "mops",    required_argument, NULL, 'm' },
                { "ws-kib",  required_argument, NULL, 'w' },
                { "seed",    required_argument, NULL, 's' },
                { NULL, 0, NULL, 0 }
        };
        Args a = { .kind = KIND_CPU, .threads = 2, .rounds = 100, .mops = 100, .ws_kib = 16384, .seed = 1 };
        uint64_t v;
        int c;

        while ((c = getopt_long(argc, argv, "hk:t:r:m:w:s:", options, NULL)) >= 0) {
                int r = 0;

                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'k':
                        if (strcmp(optarg, "cpu") == 0)
                                a.kind = KIND_CPU;
                        else if (strcmp(optarg, "cache") == 0)
                                a.kind = KIND_CACHE;
                        else
                                r = -EINVAL;
                        break;
                case 't':
                        r = parse_u64(optarg, &v);
                        if (r >= 0 && (v < 1 || v > 256))
                                r = -ERANGE;
                        a.threads = (unsigned) v;
                        break;
                case 'r':
                        r = parse_u64(optarg, &a.rounds);
                        if (r >= 0 && a.rounds < 1)
                                r = -ERANGE;
                        break;
                case 'm':
                        r = parse_decimal(optarg, &a.mops);
                        if (r >= 0 && !(a.mops > 0))
                                r = -ERANGE;
                        break;
                case 'w':
                        r = parse_u64(optarg, &a.ws_kib);
                        if (r >= 0 && (a.ws_kib < 4 || a.ws_kib > 4 * 1024 * 1024))
                                r = -ERANGE;
                        break;
                case 's':
                        r = parse_u64(optarg, &a.seed);
                        break;
                default:
                        return -EINVAL;
                }
                if (r < 0) {
                        fprintf(stderr, "bwgov-mix: bad value for --%s: %s\n", option_name(options, c), optarg);
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "bwgov-mix: unexpected argument %s\n", argv[optind]);
                return -EINVAL;
        }
        *ret = a;
        return 1;
}

/* A random cycle through all nodes (Sattolo's shuffle of the identity). */
static int build_cycle(Shared *sh, uint64_t seed) {
        size_t n = (size_t) (sh->args->ws_kib * 1024 / CACHE_LINE);
        uint64_t *perm;
        Rng rng;

        if (n < 2)
                n = 2;
        sh->nodes = aligned_alloc(CACHE_LINE, n * sizeof(Node));
        perm = malloc(n * sizeof(*perm));
        if (!sh->nodes || !perm) {
                free(perm);
                return -ENOMEM;
        }
        rng_seed(&rng, seed, 0);
        for (size_t i = 0; i < n; i++)
                perm[i] = i;
        for (size_t i = n - 1; i > 0; i--) {
                size_t j = (size_t) (rng_next(&rng) % i);
                uint64_t t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
        }
        for (size_t i = 0; i < n; i++)
                sh->nodes[perm[i]].next = perm[(i + 1) % n];
        free(perm);
        sh->n_nodes = n;
        return 0;
}

static void barrier_wait(Shared *sh) {
        uint64_t gen;

        pthread_mutex_lock(&sh->lock);
        gen = sh->generation;
        if (++sh->waiting == sh->args->threads) {
                sh->waiting = 0;
                sh->generation++;
                pthread_cond_broadcast(&sh->cond);
        } else
                while (gen == sh->generation && !sh->released)
                        pthread_cond_wait(&sh->cond, &sh->lock);
        pthread_mutex_unlock(&sh->lock);
}

/* Stop: every thread waiting at the barrier goes on (and then stops). */
static void barrier_release(Shared *sh) {
        pthread_mutex_lock(&sh->lock);
        sh->released = true;
        pthread_cond_broadcast(&sh->cond);
        pthread_mutex_unlock(&sh->lock);
}

/* Work is done in chunks of this many operations, checking for a stop in between. */
#define CHUNK_OPS UINT64_C(1000000)

/* ops dependent floating-point steps; the result feeds the next call. */
static double work_cpu(double x, uint64_t ops) {
        for (uint64_t i = 0; i < ops; i++)
                x = x * 0.999999 + 1.0 / (1.0 + x * x);
        return x;
}

static uint64_t work_cache(const Node *nodes, uint64_t at, uint64_t ops) {
        for (uint64_t i = 0; i < ops; i++)
                at = nodes[at].next;
        return at;
}

static void *worker_main(void *p) {
        Worker *w = p;
        Shared *sh = w->sh;
        uint64_t at = (sh->n_nodes ? (w->id * (sh->n_nodes / sh->args->threads)) % sh->n_nodes : 0);
        double x = 1.0 + w->id;

        for (uint64_t r = 0; r < sh->args->rounds; r++) {
                if (stop_requested()) {
                        sh->aborted = true;
                        break;
                }
                for (uint64_t done = 0; done < sh->ops_per_round && !stop_requested();) {
                        uint64_t k = sh->ops_per_round - done < CHUNK_OPS ? sh->ops_per_round - done : CHUNK_OPS;

                        if (sh->args->kind == KIND_CPU)
                                x = work_cpu(x, k);
                        else
                                at = work_cache(sh->nodes, at, k);
                        w->ops += k;
                        done += k;
                }
                barrier_wait(sh);
        }
        w->checksum = sh->args->kind == KIND_CPU ? (uint64_t) (x * 1e6) : at;
        atomic_fetch_add(&sh->finished, 1);
        return NULL;
}

int main(int argc, char *argv[]) {
        Args args;
        Shared sh = {0};
        Worker *w;
        uint64_t t0, t_setup, t1, cpu0, ops = 0, sum = 0;
        unsigned started = 0;
        json_t *j;
        int r, sig = 0;

        r = parse_args(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        signals_block();

        t0 = monotonic_ns();
        cpu0 = process_cpu_ns();
        sh.args = &args;
        sh.ops_per_round = (uint64_t) llround(args.mops * 1e6 / (double) args.threads / (double) args.rounds);
        if (sh.ops_per_round == 0)
                sh.ops_per_round = 1;
        if (args.kind == KIND_CACHE && build_cycle(&sh, args.seed) < 0) {
                fprintf(stderr, "bwgov-mix: out of memory for a %" PRIu64 " KiB working set\n", args.ws_kib);
                return 1;
        }
        t_setup = monotonic_ns();
        w = calloc(args.threads, sizeof(*w));
        pthread_mutex_init(&sh.lock, NULL);
        pthread_cond_init(&sh.cond, NULL);
        if (!w) {
                fprintf(stderr, "bwgov-mix: out of memory\n");
                return 1;
        }
        for (unsigned i = 0; i < args.threads; i++) {
                w[i] = (Worker) { .sh = &sh, .id = i };
                if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0) {
                        fprintf(stderr, "bwgov-mix: cannot start thread %u\n", i);
                        stop_request();
                        break;
                }
                started++;
        }
        while (atomic_load(&sh.finished) < started && sig == 0)
                sig = wait_signal_until(monotonic_ns() + 2 * NSEC_PER_MSEC);
        if (sig > 0 || started < args.threads) {
                stop_request();
                barrier_release(&sh);
        }
        for (unsigned i = 0; i < started; i++) {
                pthread_join(w[i].thread, NULL);
                ops += w[i].ops;
                sum ^= w[i].checksum;
        }
        t1 = monotonic_ns();

        j = json_pack("{s:s, s:s, s:i, s:I, s:f, s:I, s:b, s:I, s:f, s:f, s:f, s:I}",
                      "program", "bwgov-mix",
                      "kind", args.kind == KIND_CPU ? "cpu" : "cache",
                      "threads", (int) args.threads,
                      "rounds", (json_int_t) args.rounds,
                      "mops", args.mops,
                      "ws_kib", (json_int_t) (args.kind == KIND_CACHE ? args.ws_kib : 0),
                      "interrupted", sig > 0 || sh.aborted,
                      "ops", (json_int_t) ops,
                      "setup_s", (double) (t_setup - t0) / 1e9,
                      "wall_s", (double) (t1 - t0) / 1e9,
                      "cpu_s", (double) (process_cpu_ns() - cpu0) / 1e9,
                      "checksum", (json_int_t) (sum & INT64_MAX));
        if (!j || json_print_line(j) < 0)
                return 1;
        json_decref(j);
        fprintf(stderr, "bwgov-mix: %s, %u threads, %.1f Mops in %.3f s wall, %.3f s CPU%s\n",
                args.kind == KIND_CPU ? "cpu" : "cache", args.threads, (double) ops / 1e6,
                (double) (t1 - t0) / 1e9, (double) (process_cpu_ns() - cpu0) / 1e9, sig > 0 ? " (interrupted)" : "");
        free(w);
        free(sh.nodes);
        return 0;
}
