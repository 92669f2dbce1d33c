/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* bwgov-reqgen: the arrival generator of bwgov-reqserver --serve, as a process
 * of its own so it can run outside the cgroup under test. At each scheduled
 * arrival it writes one line to stdout: the scheduled time in nanoseconds of
 * CLOCK_MONOTONIC. When it falls behind (or the pipe is full) it writes the
 * overdue arrivals with their scheduled times, so the server still measures
 * latency from the schedule. Stdout carries the arrivals; a summary, as one
 * JSON object, goes to stderr. */

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
        double rate_per_s;
        bool fixed;
        double duration_s;
        uint64_t seed;
        uint64_t count;
        uint64_t start_delay_ms;
} Args;

static void help(void) {
        printf("Usage: bwgov-reqgen [OPTIONS] | bwgov-reqserver --serve [OPTIONS]\n\n"
               "Writes scheduled request arrivals to stdout, one per line, as nanoseconds of\n"
               "CLOCK_MONOTONIC, at the time each is due. A JSON summary goes to stderr.\n\n"
               "  -h --help              Show this help\n"
               "  -r --rate=R            Arrivals per second (default 475)\n"
               "  -a --arrivals=KIND     poisson or fixed (default poisson)\n"
               "  -d --duration=S        Arrival window, seconds (default 30)\n"
               "  -n --count=N           Stop after N arrivals (default: no limit)\n"
               "  -s --seed=N            RNG seed (default 1)\n"
               "     --start-delay-ms=MS Wait this long before the first arrival (default 0)\n"
               "SIGTERM/SIGINT stop the stream; the server then drains and reports.\n");
}

static int parse_args(int argc, char *argv[], Args *ret) {
        enum {
                ARG_START_DELAY = 0x100,
        };
        static const struct option options[] = {
                { "help",           no_argument,       NULL, 'h'             },
                { "rate",           required_argument, NULL, 'r'             },
                { "arrivals",       required_argument, NULL, 'a'             },
                { "duration",       required_argument, NULL, 'd'             },
                { "count",          required_argument, NULL, 'n'             },
                { "seed",           required_argument, NULL, 's'             },
                { "start-delay-ms", required_argument, NULL, ARG_START_DELAY },
                { NULL, 0, NULL, 0 }
        };
        Args a = {
                .rate_per_s = 475,
                .duration_s = 30,
                .seed = 1,
        };
        int c, r = 0;

        while ((c = getopt_long(argc, argv, "hr:a:d:n:s:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'r':
                        r = parse_decimal(optarg, &a.rate_per_s);
                        break;
                case 'a':
                        if (strcmp(optarg, "poisson") == 0)
                                a.fixed = false;
                        else if (strcmp(optarg, "fixed") == 0)
                                a.fixed = true;
                        else
                                r = -EINVAL;
                        break;
                case 'd':
                        r = parse_decimal(optarg, &a.duration_s);
                        break;
                case 'n':
                        r = parse_u64(optarg, &a.count);
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
                        fprintf(stderr, "bwgov-reqgen: invalid value '%s' for --%s\n",
                                optarg, option_name(options, c));
                        return r;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "bwgov-reqgen: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (!(a.rate_per_s >= 0.001) || a.rate_per_s > 10000000) {
                fprintf(stderr, "bwgov-reqgen: --rate must be 0.001..10000000\n");
                return -EINVAL;
        }
        if (!(a.duration_s > 0) || a.duration_s > 86400 * 7) {
                fprintf(stderr, "bwgov-reqgen: --duration must be above 0 and at most a week\n");
                return -EINVAL;
        }

        *ret = a;
        return 1;
}

static int write_all(int fd, const char *buf, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, buf, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                buf += n;
                len -= (size_t) n;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        Args args;
        Rng rng;
        uint64_t t0, end, sent = 0, max_lag = 0;
        double t, mean_ns;
        json_t *j;
        char *s;
        int sig = 0, r;

        r = parse_args(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? 2 : 0;

        signals_block();
        rng_seed(&rng, args.seed, 0);

        if (args.start_delay_ms > 0)
                sig = wait_signal_until(monotonic_ns() + args.start_delay_ms * NSEC_PER_MSEC);

        t0 = monotonic_ns();
        end = t0 + (uint64_t) llround(args.duration_s * (double) NSEC_PER_SEC);
        mean_ns = (double) NSEC_PER_SEC / args.rate_per_s;
        t = (double) t0;
        r = 0;

        while (sig == 0 && (args.count == 0 || sent < args.count)) {
                char line[32];
                uint64_t sched, now;
                int len;

                t += args.fixed ? mean_ns : rng_exponential(&rng, mean_ns);
                sched = (uint64_t) t;
                if (sched >= end)
                        break;
                sig = wait_signal_until(sched);
                if (sig > 0)
                        break;

                now = monotonic_ns();
                if (now - sched > max_lag)
                        max_lag = now - sched;
                len = snprintf(line, sizeof(line), "%" PRIu64 "\n", sched);
                r = write_all(STDOUT_FILENO, line, (size_t) len);
                if (r < 0)
                        break;
                sent++;
        }

        if (r < 0)
                fprintf(stderr, "bwgov-reqgen: write: %s\n", strerror(-r));

        j = json_pack("{s:s, s:s, s:f, s:f, s:I, s:b, s:I, s:f, s:f}",
                      "program", "bwgov-reqgen",
                      "arrivals", args.fixed ? "fixed" : "poisson",
                      "rate_per_s", args.rate_per_s,
                      "duration_s", args.duration_s,
                      "seed", (json_int_t) args.seed,
                      "interrupted", sig > 0,
                      "sent", (json_int_t) sent,
                      "wall_s", (double) (monotonic_ns() - t0) / (double) NSEC_PER_SEC,
                      "max_lag_ms", (double) max_lag / (double) NSEC_PER_MSEC);
        s = j ? json_dumps(j, JSON_REAL_PRECISION(7)) : NULL;
        if (s)
                fprintf(stderr, "%s\n", s);
        free(s);
        json_decref(j);

        return r < 0 && r != -EPIPE ? 1 : 0;
}
