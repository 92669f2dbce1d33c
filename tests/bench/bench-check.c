/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* bench-check: runs a workload (or a pipeline of two), requires exactly one
 * JSON object on the last program's stdout, and checks fields of it.
 *
 *   bench-check [--kill-after-ms=MS] [--timeout=S] CHECK... -- CMD [ARGS] [| CMD [ARGS]]
 *
 * A CHECK is PATH OP VALUE in one argument, e.g. "stretch.p99>=stretch.p50",
 * "bursts>0", "interrupted==true", "mode==serve". PATH is dot-separated object
 * keys; OP is one of == != >= <= > <; VALUE is a number, true, false, null,
 * another PATH, or (for == and !=) a bare string. A PATH that is missing fails
 * the check. Every program of the pipeline must exit 0. --kill-after-ms sends
 * SIGTERM to every program after that long (to test early exits); --timeout
 * (default 60 s) sends SIGKILL and fails. --expect-exit=N instead requires the
 * last program to exit with N (e.g. 2 for a usage error) and checks nothing
 * else. */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"

#define OUTPUT_MAX (1024 * 1024)
#define PIPELINE_MAX 4

typedef enum Op {
        OP_EQ,
        OP_NE,
        OP_GE,
        OP_LE,
        OP_GT,
        OP_LT,
} Op;

static const char *const op_str[] = {
        [OP_EQ] = "==",
        [OP_NE] = "!=",
        [OP_GE] = ">=",
        [OP_LE] = "<=",
        [OP_GT] = ">",
        [OP_LT] = "<",
};

static json_t *lookup(json_t *root, const char *path) {
        char *copy = strdup(path), *save = NULL;
        json_t *v = root;

        if (!copy)
                return NULL;
        for (char *k = strtok_r(copy, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
                v = json_is_object(v) ? json_object_get(v, k) : NULL;
        free(copy);
        return v;
}

/* A number for comparisons: JSON integers, reals and booleans (1/0). */
static bool as_number(const json_t *v, double *ret) {
        if (json_is_number(v))
                *ret = json_number_value(v);
        else if (json_is_boolean(v))
                *ret = json_is_true(v) ? 1 : 0;
        else
                return false;
        return true;
}

static bool literal_number(const char *s, double *ret) {
        bool neg = s[0] == '-';
        double d;

        if (parse_decimal(s + neg, &d) < 0)
                return false;
        *ret = neg ? -d : d;
        return true;
}

static bool compare(double a, Op op, double b) {
        switch (op) {
        case OP_EQ: return a == b;
        case OP_NE: return a != b;
        case OP_GE: return a >= b;
        case OP_LE: return a <= b;
        case OP_GT: return a > b;
        case OP_LT: return a < b;
        }
        return false;
}

/* Returns 1 if the check holds, 0 if not, -EINVAL if it is malformed. */
static int check_one(json_t *root, const char *check) {
        /* Two-character operators first, so ">=" is not read as ">". */
        static const Op order[] = { OP_EQ, OP_NE, OP_GE, OP_LE, OP_GT, OP_LT };
        const char *pos = NULL;
        Op op = OP_EQ;
        char *lhs_path;
        const char *rhs;
        json_t *lhs, *rv;
        double a, b;
        bool ok;

        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && !pos; i++) {
                pos = strstr(check, op_str[order[i]]);
                op = order[i];
        }
        if (!pos || pos == check)
                return -EINVAL;
        rhs = pos + strlen(op_str[op]);
        if (!*rhs)
                return -EINVAL;

        lhs_path = strndup(check, (size_t) (pos - check));
        if (!lhs_path)
                return -ENOMEM;
        lhs = lookup(root, lhs_path);
        free(lhs_path);
        if (!lhs) {
                fprintf(stderr, "FAIL %s: field missing\n", check);
                return 0;
        }

        if (strcmp(rhs, "null") == 0) {
                ok = (op == OP_EQ) == json_is_null(lhs);
                if (op != OP_EQ && op != OP_NE)
                        return -EINVAL;
        } else if (json_is_string(lhs)) {
                rv = lookup(root, rhs);
                if (op != OP_EQ && op != OP_NE)
                        return -EINVAL;
                ok = (strcmp(json_string_value(lhs), json_is_string(rv) ? json_string_value(rv) : rhs) == 0) ==
                     (op == OP_EQ);
        } else {
                if (!as_number(lhs, &a)) {
                        fprintf(stderr, "FAIL %s: field is not a number\n", check);
                        return 0;
                }
                if (strcmp(rhs, "true") == 0)
                        b = 1;
                else if (strcmp(rhs, "false") == 0)
                        b = 0;
                else if (!literal_number(rhs, &b)) {
                        rv = lookup(root, rhs);
                        if (!rv || !as_number(rv, &b)) {
                                fprintf(stderr, "FAIL %s: right side is neither a number nor a numeric field\n", check);
                                return 0;
                        }
                }
                ok = !isnan(a) && compare(a, op, b);
                fprintf(stderr, "%s %s (%g %s %g)\n", ok ? "ok  " : "FAIL", check, a, op_str[op], b);
                return ok;
        }

        fprintf(stderr, "%s %s\n", ok ? "ok  " : "FAIL", check);
        return ok;
}

static void help(void) {
        printf("Usage: bench-check [--kill-after-ms=MS] [--timeout=S] CHECK... -- CMD [ARGS] [| CMD [ARGS]]\n"
               "       bench-check --expect-exit=N -- CMD [ARGS]\n"
               "\n"
               "Runs a workload (or a pipeline, \"|\" as an argument of its own), requires one JSON\n"
               "object on the last program's stdout and checks fields of it. Every program must\n"
               "exit 0.\n"
               "\n"
               "  -h --help              Show this help\n"
               "     --kill-after-ms=MS  Send SIGTERM to every program after MS (tests early exits)\n"
               "     --timeout=S         Send SIGKILL and fail after S seconds (default 60)\n"
               "     --expect-exit=N     Require the last program to exit with N (e.g. 2 for a\n"
               "                         usage error) and check nothing else\n"
               "\n"
               "A CHECK is PATH OP VALUE in one argument, e.g. \"stretch.p99>=stretch.p50\",\n"
               "\"bursts>0\", \"mode==serve\": PATH is dot-separated object keys (missing: the check\n"
               "fails), OP one of == != >= <= > <, VALUE a number, true, false, null, another\n"
               "PATH, or (for == and !=) a bare string.\n");
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help",          no_argument,       NULL, 'h' },
                { "kill-after-ms", required_argument, NULL, 'k' },
                { "timeout",       required_argument, NULL, 't' },
                { "expect-exit",   required_argument, NULL, 'e' },
                { NULL, 0, NULL, 0 }
        };
        uint64_t kill_after_ms = 0, timeout_s = 60, expect_exit = UINT64_MAX, start, kill_at, timeout_at;
        char **cmds[PIPELINE_MAX];
        pid_t pids[PIPELINE_MAX];
        unsigned ncmds = 0, nchecks, failed = 0;
        int out[2], in_fd = -1, cmd_start, c, r, status;
        bool killed = false, timed_out = false;
        char *buf;
        size_t len = 0;
        json_t *root;
        json_error_t err;

        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'k':
                        if (parse_u64(optarg, &kill_after_ms) < 0)
                                return 2;
                        break;
                case 't':
                        if (parse_u64(optarg, &timeout_s) < 0)
                                return 2;
                        break;
                case 'e':
                        if (parse_u64(optarg, &expect_exit) < 0 || expect_exit > 255)
                                return 2;
                        break;
                default:
                        return 2;
                }
        }

        /* Checks up to "--", then commands separated by "|". getopt has
         * already eaten the "--" when no check precedes it. */
        nchecks = 0;
        if (strcmp(argv[optind - 1], "--") == 0)
                cmd_start = optind;
        else {
                for (int i = optind; i < argc && strcmp(argv[i], "--") != 0; i++)
                        nchecks++;
                cmd_start = optind + (int) nchecks + 1;
        }
        if (cmd_start >= argc) {
                help();
                return 2;
        }
        cmds[ncmds++] = &argv[cmd_start];
        for (int i = cmd_start; i < argc; i++)
                if (strcmp(argv[i], "|") == 0) {
                        if (ncmds == PIPELINE_MAX || i + 1 >= argc)
                                return 2;
                        argv[i] = NULL;
                        cmds[ncmds++] = &argv[i + 1];
                }

        buf = malloc(OUTPUT_MAX + 1);
        if (!buf)
                return 1;

        signal(SIGPIPE, SIG_IGN);
        for (unsigned k = 0; k < ncmds; k++) {
                int next_in = -1;

                if (pipe(out) < 0) {
                        perror("pipe");
                        return 1;
                }
                pids[k] = fork();
                if (pids[k] < 0) {
                        perror("fork");
                        return 1;
                }
                if (pids[k] == 0) {
                        if (in_fd >= 0 && dup2(in_fd, STDIN_FILENO) < 0)
                                _exit(127);
                        if (dup2(out[1], STDOUT_FILENO) < 0)
                                _exit(127);
                        if (in_fd >= 0)
                                close(in_fd);
                        close(out[0]);
                        close(out[1]);
                        signal(SIGPIPE, SIG_DFL);
                        execv(cmds[k][0], cmds[k]);
                        fprintf(stderr, "bench-check: exec %s: %s\n", cmds[k][0], strerror(errno));
                        _exit(127);
                }
                close(out[1]);
                if (in_fd >= 0)
                        close(in_fd);
                next_in = out[0];
                in_fd = next_in;
        }

        /* in_fd is now the last program's stdout. */
        start = monotonic_ns();
        kill_at = kill_after_ms > 0 ? start + kill_after_ms * NSEC_PER_MSEC : UINT64_MAX;
        timeout_at = start + timeout_s * NSEC_PER_SEC;
        for (;;) {
                uint64_t now = monotonic_ns(), next = timeout_at;
                struct pollfd p = { .fd = in_fd, .events = POLLIN };
                ssize_t n;

                if (!killed && now >= kill_at) {
                        for (unsigned k = 0; k < ncmds; k++)
                                kill(pids[k], SIGTERM);
                        killed = true;
                }
                if (now >= timeout_at) {
                        for (unsigned k = 0; k < ncmds; k++)
                                kill(pids[k], SIGKILL);
                        timed_out = true;
                        break;
                }
                if (!killed && kill_at < next)
                        next = kill_at;

                r = poll(&p, 1, (int) ((next - now) / NSEC_PER_MSEC) + 1);
                if (r < 0 && errno != EINTR) {
                        perror("poll");
                        return 1;
                }
                if (r <= 0)
                        continue;

                n = read(in_fd, buf + len, OUTPUT_MAX - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        perror("read");
                        return 1;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len == OUTPUT_MAX) {
                        fprintf(stderr, "FAIL: more than %d bytes of output\n", OUTPUT_MAX);
                        failed++;
                        break;
                }
        }
        close(in_fd);
        buf[len] = '\0';

        for (unsigned k = 0; k < ncmds; k++) {
                uint64_t want = k == ncmds - 1 && expect_exit != UINT64_MAX ? expect_exit : 0;

                if (waitpid(pids[k], &status, 0) < 0) {
                        perror("waitpid");
                        return 1;
                }
                if (!WIFEXITED(status) || (uint64_t) WEXITSTATUS(status) != want) {
                        fprintf(stderr, "FAIL: %s %s %d\n", cmds[k][0],
                                WIFEXITED(status) ? "exited with" : "killed by signal",
                                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                        failed++;
                }
        }
        if (timed_out) {
                fprintf(stderr, "FAIL: timed out after %u s\n", (unsigned) timeout_s);
                failed++;
        }

        if (expect_exit != UINT64_MAX) {
                free(buf);
                if (failed > 0)
                        return 1;
                fprintf(stderr, "ok   exit status %u\n", (unsigned) expect_exit);
                return 0;
        }

        fprintf(stderr, "output: %s", buf);
        root = json_loads(buf, 0, &err);
        if (!root || !json_is_object(root)) {
                fprintf(stderr, "FAIL: stdout is not one JSON object: %s (line %d)\n",
                        root ? "not an object" : err.text, err.line);
                json_decref(root);
                free(buf);
                return 1;
        }
        if (len == 0 || buf[len - 1] != '\n' || memchr(buf, '\n', len) != buf + len - 1) {
                fprintf(stderr, "FAIL: stdout is not exactly one line\n");
                failed++;
        }

        for (unsigned i = 0; i < nchecks; i++) {
                r = check_one(root, argv[optind + (int) i]);
                if (r < 0) {
                        fprintf(stderr, "FAIL %s: malformed check\n", argv[optind + (int) i]);
                        failed++;
                } else if (r == 0)
                        failed++;
        }

        json_decref(root);
        free(buf);
        if (failed > 0) {
                fprintf(stderr, "%u check(s) failed\n", failed);
                return 1;
        }
        fprintf(stderr, "all %u checks passed\n", nchecks);
        return 0;
}
