/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The options every daemon verb of bwgovctl but top shares (--json,
 * --no-legend, --socket=, -n, -a, -h) and their --help text: one parser,
 * the verb's flags saying which apply. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "options.h"
#include "table.h"

static void help(const struct verb_info *v) {
        printf("Usage: bwgovctl %s [OPTIONS]%s\n\n%s.\n\n"
               "  -h --help            Show this help\n"
               "     --json           Print the result as JSON (schema: bwgovctl(1))\n",
               v->name, v->flags & VERB_TAKES_UNIT ? " UNIT" : "", v->summary);
        if (v->flags & VERB_HAS_TABLE)
                printf("     --no-legend      No column headers and summary lines\n");
        if (v->flags & VERB_TAKES_LINES)
                printf("  -n --lines=N         Only the newest N entries (default: all held)\n");
        if (v->flags & VERB_TAKES_ALL)
                printf("  -a --all             Every unit (default: the first %d, units doing\n"
                       "                      something before units at rest)\n", STATUS_ROWS);
        printf("     --socket=PATH    The daemon's socket (default: $BWGOV_SOCKET or\n"
               "                      %s)\n"
               "\n"
               "Exit status: 0 success, 1 failure, 2 usage error, 3 bwgovd not running,\n"
               "4 no such unit, 5 permission denied%s.\n",
               CTL_DEFAULT_SOCKET, v->flags & VERB_MUTATING ? " (this command needs root)" : "");
}

const char *ctl_default_socket(void) {
        const char *e = getenv("BWGOV_SOCKET");

        return e && *e ? e : CTL_DEFAULT_SOCKET;
}

/* A whole number from 1, digits only (strtoull alone takes blanks and a
 * sign). Returns 0 or -EINVAL. */
int parse_lines(const char *s, uint64_t *ret) {
        unsigned long long n;
        char *end;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        n = strtoull(s, &end, 10);
        if (*end || errno != 0 || n == 0)
                return -EINVAL;
        *ret = n;
        return 0;
}

/* The words after the options: one unit, or none. */
static int parse_args(int n_args, char *args[], const struct verb_info *v, struct options *o) {
        if (!(v->flags & VERB_TAKES_UNIT)) {
                if (n_args > 0) {
                        fprintf(stderr, "bwgovctl: %s takes no arguments, got \"%s\"\n", v->name, args[0]);
                        return -EINVAL;
                }
                return 0;
        }
        if (n_args < 1) {
                fprintf(stderr, "bwgovctl: %s needs a unit name, e.g. 'bwgovctl %s app.slice'\n", v->name, v->name);
                return -EINVAL;
        }
        if (n_args > 1) {
                fprintf(stderr, "bwgovctl: %s takes one unit, got %d arguments\n", v->name, n_args);
                return -EINVAL;
        }
        o->unit = args[0];
        return 0;
}

int parse_options(int argc, char *argv[], const struct verb_info *v, struct options *ret) {
        enum { ARG_JSON = 0x100, ARG_NO_LEGEND, ARG_SOCKET };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h'           },
                { "json",      no_argument,       NULL, ARG_JSON      },
                { "no-legend", no_argument,       NULL, ARG_NO_LEGEND },
                { "socket",    required_argument, NULL, ARG_SOCKET    },
                { "lines",     required_argument, NULL, 'n'           },
                { "all",       no_argument,       NULL, 'a'           },
                { NULL, 0, NULL, 0 }
        };
        struct options o = {
                .verb = v,
                .legend = true,
                .socket = ctl_default_socket(),
        };
        int c, r;

        /* getopt prints "bwgovctl: ..." for unknown options and missing
         * arguments; argv[0] is the verb, so give it the tool's name. */
        argv[0] = (char *) "bwgovctl";
        while ((c = getopt_long(argc, argv, "hn:a", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help(v);
                        return 0;
                case ARG_JSON:
                        o.json = true;
                        break;
                case ARG_NO_LEGEND:
                        o.legend = false;
                        break;
                case ARG_SOCKET:
                        if (!*optarg) {
                                fprintf(stderr, "bwgovctl: --socket= needs a path\n");
                                return -EINVAL;
                        }
                        o.socket = optarg;
                        break;
                case 'a':
                        if (!(v->flags & VERB_TAKES_ALL)) {
                                fprintf(stderr, "bwgovctl: %s takes no --all\n", v->name);
                                return -EINVAL;
                        }
                        o.all = true;
                        break;
                case 'n':
                        if (!(v->flags & VERB_TAKES_LINES)) {
                                fprintf(stderr, "bwgovctl: %s takes no --lines\n", v->name);
                                return -EINVAL;
                        }
                        if (parse_lines(optarg, &o.lines) < 0) {
                                fprintf(stderr, "bwgovctl: invalid number of lines \"%s\": "
                                        "expected a whole number from 1\n", optarg);
                                return -EINVAL;
                        }
                        o.has_lines = true;
                        break;
                default:
                        return -EINVAL;
                }

        r = parse_args(argc - optind, argv + optind, v, &o);
        if (r < 0)
                return r;
        o.colour = !o.json && table_use_colour();
        *ret = o;
        return 1;
}
