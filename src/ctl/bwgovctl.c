/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl's main: global options, then one verb from the table below. Each
 * verb parses its own options and returns the process exit code. */

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#include "bwgov/util/macro.h"
#include "verbs.h"

struct verb {
        const char *name;
        const char *args;
        const char *summary;
        int (*run)(int argc, char *argv[]);
};

static const struct verb verbs[] = {
        { "status", "[--json] [--no-legend]",
          "Show the daemon and every configured unit", verb_status },
        { "show", "UNIT [--json]",
          "Show one unit in detail: state, bandwidth, limits, configuration, counters", verb_show },
        { "explain", "UNIT [--json]",
          "Explain the latest decision for a unit: what it saw, the rule, what it did", verb_explain },
        { "history", "UNIT [-n N] [--json] [--no-legend]",
          "Show the decisions recorded for a unit, oldest first", verb_history },
        { "top", "[-d TIME] [-o COLUMN] [-b] [-n N] [--no-legend] [--all]",
          "Show the governed units live, sorted: usage, credit, headroom, throttling, p99", verb_top },
        { "latency", "UNIT [--json]",
          "Show a unit's run-queue waits: percentiles, the throttled share, histograms", verb_latency },
        { "reload", "[--json]",
          "Reload the configuration (root)", verb_reload },
        { "pause", "UNIT [--json]",
          "Stop governing a unit, restoring its baseline (root)", verb_pause },
        { "resume", "UNIT [--json]",
          "Govern a paused unit again (root)", verb_resume },
        { "check-kernel", "[--manifest=PATH] [--json] [--probe|--no-probe] [--cgroup-root=DIR]",
          "Check the running kernel against the bwgov kernel patch-set manifest", verb_check_kernel },
};

static void help(FILE *f) {
        fprintf(f,
                "Usage: bwgovctl [OPTIONS] COMMAND [ARGS...]\n"
                "\n"
                "Query and control the bwgov CPU bandwidth governor.\n"
                "\n"
                "Commands:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                fprintf(f, "  %s %s\n      %s\n", verbs[i].name, verbs[i].args, verbs[i].summary);
        fprintf(f,
                "\n"
                "Options:\n"
                "  -h --help       Show this help\n"
                "     --version    Show the version\n"
                "\n"
                "Run 'bwgovctl COMMAND --help' for the options of a command. The daemon's\n"
                "commands also take --socket=PATH (default $BWGOV_SOCKET or\n"
                CTL_DEFAULT_SOCKET "; check-kernel ignores it).\n"
                "Options may come before or after the command, and an option's value may\n"
                "follow it as --opt=VALUE or as --opt VALUE.\n"
                "\n"
                "Exit status of the daemon's commands: 0 success, 1 failure, 2 usage error,\n"
                "3 bwgovd not running, 4 no such unit, 5 permission denied. check-kernel:\n"
                "0 every required item present, 1 a required item missing, 2 not checked.\n");
}

static const struct verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (strcmp(verbs[i].name, name) == 0)
                        return &verbs[i];
        return NULL;
}

/* The options of any verb whose value may come as the next word
 * ("--socket PATH" as well as "--socket=PATH"): that word is the value,
 * never the verb, whatever it is called. */
static bool takes_separate_value(const char *arg) {
        static const char *const with_value[] = {
                "--socket", "--lines", "-n", "--manifest", "--cgroup-root",
                "--interval", "-d", "--order", "-o", "--iterations",
                "--proc-version", "--host-root", "--btf", "--scratch-prefix",
        };

        for (size_t i = 0; i < ELEMENTSOF(with_value); i++)
                if (strcmp(arg, with_value[i]) == 0)
                        return true;
        return false;
}

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_SOCKET };
        static const struct option options[] = {
                { "help",    no_argument,       NULL, 'h'         },
                { "version", no_argument,       NULL, ARG_VERSION },
                /* Moved behind the verb with the other words before it;
                 * here only without a verb ("bwgovctl --socket=X --help"). */
                { "socket",  required_argument, NULL, ARG_SOCKET  },
                { NULL, 0, NULL, 0 }
        };
        const struct verb *v;
        int c, verb_index;

        /* Like systemctl, options may come before the verb too
         * ("bwgovctl --json status"): move the words before the first known
         * verb behind it, so the verb parses them as its own. */
        for (int k = 1; k < argc; k++) {
                if (takes_separate_value(argv[k])) {
                        k++;
                        continue;
                }
                if (!find_verb(argv[k]))
                        continue;
                if (k > 1) {
                        char *verb = argv[k];
                        memmove(&argv[2], &argv[1], (size_t) (k - 1) * sizeof(char *));
                        argv[1] = verb;
                }
                break;
        }

        /* "+": stop at the verb, its options are its own. */
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help(stdout);
                        return EXIT_SUCCESS;
                case ARG_VERSION:
                        printf("bwgovctl %s\n", PACKAGE_VERSION);
                        return EXIT_SUCCESS;
                case ARG_SOCKET:
                        break;
                default:
                        return CTL_EXIT_USAGE;
                }

        if (optind >= argc) {
                fprintf(stderr, "bwgovctl: missing command\n\n");
                help(stderr);
                return CTL_EXIT_USAGE;
        }

        v = find_verb(argv[optind]);
        if (!v) {
                fprintf(stderr, "bwgovctl: unknown command '%s', see 'bwgovctl --help'\n", argv[optind]);
                return CTL_EXIT_USAGE;
        }

        /* The verb sees argv[0] = its own name; optind = 0 makes getopt
         * start over for it. */
        verb_index = optind;
        optind = 0;
        return v->run(argc - verb_index, argv + verb_index);
}
