/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl top: the governed units live, in the manner of systemd-cgtop.
 * Every interval one GetStatus and one ListUnits (the latest sample of each
 * unit comes with it, as "activity"), sorted here, drawn by top-render.c on
 * the terminal's alternate screen; keys sort, change the interval and quit.
 * In batch mode (-b, or when the output is not a terminal) it prints plain
 * tables instead, one per interval. */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"
#include "reply.h"
#include "table.h"
#include "top-render.h"
#include "varlink-client.h"
#include "verbs.h"

#define INTERVAL_DEFAULT_USEC USEC_PER_SEC
/* The daemon's own Interval= is rarely below it: faster shows nothing new. */
#define INTERVAL_MIN_USEC     (100 * USEC_PER_MSEC)
#define INTERVAL_MAX_USEC     (3600 * USEC_PER_SEC)

static const struct verb_info info_top = {
        "top", VERB_HAS_TABLE | VERB_TAKES_ALL,
        "Show the governed units live: usage, credit, headroom, throttling, run-queue p99; sortable",
};

struct top {
        struct options o;
        bool batch;
        bool has_iterations;
        uint64_t iterations;
        uint64_t interval_usec;
        enum top_column sort;
        bool reverse;

        VarlinkClient *client;
        json_t *status, *list;          /* the latest replies (the rows point into list) */
        struct top_row *rows;
        size_t n_rows;
        uint64_t total;
        char *message;                  /* live: why the latest refresh failed */
        bool help;
};

static volatile sig_atomic_t got_quit, got_winch;

static void on_quit(int sig) {
        got_quit = 1;
}

static void on_winch(int sig) {
        got_winch = 1;
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

/* ---- options --------------------------------------------------------------- */

static void help(void) {
        printf("Usage: bwgovctl top [OPTIONS]\n\n%s.\n\n"
               "  -h --help            Show this help\n"
               "  -d --interval=TIME   Refresh every TIME (default 1s; \"500ms\", \"2\", \"1min\")\n"
               "  -o --order=COLUMN    Sort by COLUMN: unit, state, usage (default), baseline,\n"
               "                      credit, empty, headroom, throttled, p99, class, rung\n"
               "  -r --reverse         Reverse the order\n"
               "  -b --batch           Plain tables, one per interval, no keys (also when the\n"
               "                      output is not a terminal)\n"
               "  -n --iterations=N    Stop after N refreshes\n"
               "     --no-legend       Batch: only the rows, no summary lines and headers\n"
               "  -a --all             Every unit (default: the first %d, units doing\n"
               "                      something before units at rest)\n"
               "     --socket=PATH    The daemon's socket (default: $BWGOV_SOCKET or\n"
               "                      %s)\n"
               "\nKeys: n s u b c e h t l k g sort by a column, r reverse, < > the next column,\n"
               "+ - refresh less or more often, space refresh now, ? help, q quit.\n"
               "\nExit status: 0 success, 1 failure, 2 usage error, 3 bwgovd not running,\n"
               "5 permission denied.\n",
               info_top.summary, STATUS_ROWS, CTL_DEFAULT_SOCKET);
}

static int parse_interval(const char *s, uint64_t *ret) {
        uint64_t usec;

        if (bw_parse_timespan(s, &usec) < 0 || usec < INTERVAL_MIN_USEC || usec > INTERVAL_MAX_USEC) {
                fprintf(stderr, "bwgovctl: invalid interval \"%s\": expected a time from 100ms to 1h, "
                        "e.g. \"2\", \"500ms\"\n", s);
                return -EINVAL;
        }
        *ret = usec;
        return 0;
}

/* Returns 1 with *t set, 0 after --help, -EINVAL (reported) for a usage error. */
static int parse_top_options(int argc, char *argv[], struct top *t) {
        enum { ARG_NO_LEGEND = 0x100, ARG_SOCKET };
        static const struct option options[] = {
                { "help",       no_argument,       NULL, 'h'           },
                { "interval",   required_argument, NULL, 'd'           },
                { "order",      required_argument, NULL, 'o'           },
                { "reverse",    no_argument,       NULL, 'r'           },
                { "batch",      no_argument,       NULL, 'b'           },
                { "iterations", required_argument, NULL, 'n'           },
                { "no-legend",  no_argument,       NULL, ARG_NO_LEGEND },
                { "all",        no_argument,       NULL, 'a'           },
                { "socket",     required_argument, NULL, ARG_SOCKET    },
                { NULL, 0, NULL, 0 }
        };
        int c, k;

        *t = (struct top) {
                .o = { .verb = &info_top, .legend = true, .socket = ctl_default_socket() },
                .interval_usec = INTERVAL_DEFAULT_USEC,
                .sort = TOP_USAGE,
        };
        argv[0] = (char *) "bwgovctl";
        while ((c = getopt_long(argc, argv, "hd:o:rbn:a", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'd':
                        if (parse_interval(optarg, &t->interval_usec) < 0)
                                return -EINVAL;
                        break;
                case 'o':
                        k = top_column_from_name(optarg);
                        if (k < 0) {
                                fprintf(stderr, "bwgovctl: unknown column \"%s\" for --order, see "
                                        "'bwgovctl top --help'\n", optarg);
                                return -EINVAL;
                        }
                        t->sort = (enum top_column) k;
                        break;
                case 'r':
                        t->reverse = true;
                        break;
                case 'b':
                        t->batch = true;
                        break;
                case 'n':
                        if (parse_lines(optarg, &t->iterations) < 0) {
                                fprintf(stderr, "bwgovctl: invalid number of iterations \"%s\": "
                                        "expected a whole number from 1\n", optarg);
                                return -EINVAL;
                        }
                        t->has_iterations = true;
                        break;
                case ARG_NO_LEGEND:
                        t->o.legend = false;
                        break;
                case 'a':
                        t->o.all = true;
                        break;
                case ARG_SOCKET:
                        if (!*optarg) {
                                fprintf(stderr, "bwgovctl: --socket= needs a path\n");
                                return -EINVAL;
                        }
                        t->o.socket = optarg;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc) {
                fprintf(stderr, "bwgovctl: top takes no arguments, got \"%s\"\n", argv[optind]);
                return -EINVAL;
        }
        /* Live needs a terminal to draw on and one to read keys from. */
        if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))
                t->batch = true;
        t->o.colour = table_use_colour();
        return 1;
}

/* ---- the data -------------------------------------------------------------- */

static void top_drop_replies(struct top *t) {
        t->rows = mfree(t->rows);
        t->n_rows = 0;
        t->status = (json_decref(t->status), NULL);
        t->list = (json_decref(t->list), NULL);
}

/* GetStatus and ListUnits, on a new connection once more when the old one
 * broke (the daemon closes one idle for a minute, or restarted). Returns 0,
 * or the exit code with *ret_message saying why (to free()). */
static int top_calls(struct top *t, json_t *params, json_t **ret_status, json_t **ret_list, char **ret_message) {
        int r = CTL_EXIT_FAILURE;

        for (int attempt = 0; attempt < 2; attempt++) {
                bool reused = t->client != NULL;
                json_t *st = NULL, *list = NULL;
                size_t size = 0;
                FILE *err;

                free(*ret_message);
                *ret_message = NULL;
                err = open_memstream(ret_message, &size);
                if (!err)
                        return ctl_oom();
                r = ctl_call_to(err, &t->o, &t->client, CTL_INTERFACE ".GetStatus", NULL, &st);
                if (r == 0)
                        r = ctl_call_to(err, &t->o, &t->client, CTL_INTERFACE ".ListUnits", params, &list);
                fclose(err);
                if (r == 0) {
                        *ret_status = st;
                        *ret_list = list;
                        return 0;
                }
                json_decref(st);
                t->client = varlink_client_free(t->client);
                if (!reused || r != CTL_EXIT_FAILURE)
                        break;
        }
        return r;
}

static int top_fetch(struct top *t, char **ret_message) {
        _cleanup_free_ char *message = NULL;
        json_t *params = NULL, *st = NULL, *list = NULL;
        int r;

        if (!t->o.all) {
                params = json_pack("{s:i}", "limit", STATUS_ROWS);
                if (!params)
                        return ctl_oom();
        }
        r = top_calls(t, params, &st, &list, &message);
        json_decref(params);
        if (r != 0) {
                /* One line: the first of what the call said. */
                if (message)
                        message[strcspn(message, "\n")] = 0;
                *ret_message = TAKE_PTR(message);
                return r;
        }
        top_drop_replies(t);
        t->status = st;
        t->list = list;
        t->total = ju64(list, "total");
        r = top_rows_from_units(json_object_get(list, "units"), &t->rows, &t->n_rows);
        if (r == -ENOMEM)
                return ctl_oom();
        if (r < 0) {
                *ret_message = strdup("bwgovctl: malformed reply to ListUnits");
                return CTL_EXIT_FAILURE;
        }
        top_sort(t->rows, t->n_rows, t->sort, t->reverse);
        return 0;
}

static struct top_frame top_frame(const struct top *t, bool live) {
        return (struct top_frame) {
                .status = t->status,
                .rows = t->rows,
                .n_rows = t->n_rows,
                .total = t->total,
                .sort = t->sort,
                .reverse = t->reverse,
                .interval_usec = t->interval_usec,
                .live = live,
                .colour = t->o.colour,
                .legend = t->o.legend || live,
                .message = t->message,
                .help = t->help,
        };
}

/* ---- batch ----------------------------------------------------------------- */

static int top_batch(struct top *t) {
        for (uint64_t i = 0; !t->has_iterations || i < t->iterations; i++) {
                struct top_frame fr;
                char *message = NULL;
                int r;

                if (i > 0) {
                        struct timespec ts = {
                                .tv_sec = (time_t) (t->interval_usec / USEC_PER_SEC),
                                .tv_nsec = (long) (t->interval_usec % USEC_PER_SEC * NSEC_PER_USEC),
                        };

                        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                                ;
                }
                r = top_fetch(t, &message);
                if (r != 0) {
                        if (message)
                                fprintf(stderr, "%s\n", message);
                        free(message);
                        return r;
                }
                if (i > 0)
                        putchar('\n');
                fr = top_frame(t, false);
                if (top_render(stdout, &fr) < 0)
                        return ctl_oom();
                if (fflush(stdout) != 0)
                        return CTL_EXIT_FAILURE;       /* a closed pipe: the reader is gone */
        }
        return 0;
}

/* ---- live ------------------------------------------------------------------ */

static void write_all(const char *s, size_t len) {
        while (len > 0) {
                ssize_t k = write(STDOUT_FILENO, s, len);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return;
                s += k;
                len -= (size_t) k;
        }
}

static int top_draw(const struct top *t) {
        struct top_frame fr = top_frame(t, true);
        _cleanup_free_ char *buf = NULL;
        struct winsize ws = { 0 };
        size_t len = 0;
        FILE *f;
        int r;

        fr.width = 80;
        fr.height = 24;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
                fr.width = ws.ws_col;
                fr.height = ws.ws_row;
        }
        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        fputs("\033[H", f);
        r = top_render(f, &fr);
        if (fclose(f) != 0 || r < 0)
                return -ENOMEM;
        write_all(buf, len);            /* one write: no flicker */
        return 0;
}

/* A key of the live screen. Returns true when the rows need sorting again. */
static bool top_key(struct top *t, char k, bool *refresh, bool *quit) {
        int c;

        if (t->help) {
                t->help = false;        /* any key leaves the help */
                return false;
        }
        switch (k) {
        case 'q': case 'Q':
                *quit = true;
                return false;
        case '?':
                t->help = true;
                return false;
        case 'r':
                t->reverse = !t->reverse;
                return true;
        case '<':
                t->sort = (enum top_column) ((t->sort + _TOP_COLUMN_MAX - 1) % _TOP_COLUMN_MAX);
                return true;
        case '>':
                t->sort = (enum top_column) ((t->sort + 1) % _TOP_COLUMN_MAX);
                return true;
        case '+':
                t->interval_usec = t->interval_usec * 2 > INTERVAL_MAX_USEC ? INTERVAL_MAX_USEC : t->interval_usec * 2;
                return false;
        case '-':
                t->interval_usec = t->interval_usec / 2 < INTERVAL_MIN_USEC ? INTERVAL_MIN_USEC : t->interval_usec / 2;
                return false;
        case ' ':
                *refresh = true;
                return false;
        }
        c = top_column_from_key(k);
        if (c < 0)
                return false;
        t->sort = (enum top_column) c;
        t->reverse = false;
        return true;
}

/* The keys in buf; the arrow keys' escape sequences (ESC [ C, ESC [ D) move
 * the sort column, other sequences are skipped. */
static void top_keys(struct top *t, const char *buf, size_t n, bool *refresh, bool *quit) {
        bool resort = false;

        for (size_t i = 0; i < n; i++) {
                char k = buf[i];

                if (k == '\033') {
                        if (i + 2 < n && buf[i + 1] == '[')
                                resort |= top_key(t, buf[i + 2] == 'C' ? '>' : buf[i + 2] == 'D' ? '<' : 0,
                                                  refresh, quit);
                        break;
                }
                resort |= top_key(t, k, refresh, quit);
        }
        if (resort)
                top_sort(t->rows, t->n_rows, t->sort, t->reverse);
}

static void top_refresh_live(struct top *t) {
        char *message = NULL;
        int r;

        r = top_fetch(t, &message);
        free(t->message);
        t->message = NULL;
        if (r == 0)
                return;
        top_drop_replies(t);
        if (asprintf(&t->message, "%s; trying again every interval (q quits)",
                     message ? message : "bwgovctl: the refresh failed") < 0)
                t->message = NULL;
        free(message);
}

static int top_loop(struct top *t) {
        uint64_t due = now_usec() + t->interval_usec, n = 1;
        bool draw = true, quit = false;

        while (!got_quit && !quit) {
                bool refresh = false;
                struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
                uint64_t now;
                char buf[16];
                ssize_t k;

                if (draw && top_draw(t) < 0)
                        return ctl_oom();
                draw = false;
                if (t->has_iterations && n >= t->iterations)
                        break;
                now = now_usec();
                if (poll(&p, 1, due > now ? (int) ((due - now + 999) / 1000) : 0) < 0 && errno != EINTR)
                        return CTL_EXIT_FAILURE;
                if (got_winch)
                        got_winch = 0, draw = true;
                if (p.revents & (POLLHUP | POLLERR))
                        break;                  /* the terminal is gone */
                if (p.revents & POLLIN) {
                        k = read(STDIN_FILENO, buf, sizeof(buf));
                        if (k > 0)
                                top_keys(t, buf, (size_t) k, &refresh, &quit);
                        draw = true;
                }
                if (refresh || now_usec() >= due) {
                        top_refresh_live(t);
                        due = now_usec() + t->interval_usec;
                        draw = true;
                        n++;
                }
        }
        return 0;
}

static int top_live(struct top *t) {
        struct sigaction quit = { .sa_handler = on_quit }, winch = { .sa_handler = on_winch };
        static const char enter[] = "\033[?1049h\033[?25l", leave[] = "\033[?25h\033[?1049l";
        struct termios saved, raw;
        int r;

        if (tcgetattr(STDIN_FILENO, &saved) < 0)
                return top_batch(t);
        raw = saved;
        raw.c_lflag &= ~(tcflag_t) (ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        /* No SA_RESTART: a signal ends the wait in poll(). */
        (void) sigaction(SIGINT, &quit, NULL);
        (void) sigaction(SIGTERM, &quit, NULL);
        (void) sigaction(SIGHUP, &quit, NULL);
        (void) sigaction(SIGWINCH, &winch, NULL);
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
                return top_batch(t);
        write_all(enter, sizeof(enter) - 1);

        r = top_loop(t);

        write_all(leave, sizeof(leave) - 1);
        (void) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
        return r;
}

int verb_top(int argc, char *argv[]) {
        struct top t;
        char *message = NULL;
        int r;

        r = parse_top_options(argc, argv, &t);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : 0;

        if (t.batch)
                r = top_batch(&t);
        else {
                /* The first refresh before the screen: a daemon that is not
                 * there, or a refusal, is said on the terminal as by the
                 * other commands. */
                r = top_fetch(&t, &message);
                if (r != 0 && message)
                        fprintf(stderr, "%s\n", message);
                free(message);
                if (r == 0)
                        r = top_live(&t);
        }
        top_drop_replies(&t);
        free(t.message);
        varlink_client_free(t.client);
        return r;
}
