/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl: global options, then one verb from the table below. Each verb
 * parses its own options and returns the process exit code. */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#include "bwgov/macro.h"
#include "check-kernel.h"

/* Exit code for a command line that cannot be understood. */
#define EXIT_USAGE 2

struct verb {
        const char *name;
        const char *args;
        const char *summary;
        int (*run)(int argc, char *argv[]);
};

static const struct verb verbs[] = {
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
                "Run 'bwgovctl COMMAND --help' for the options of a command.\n");
}

static const struct verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (strcmp(verbs[i].name, name) == 0)
                        return &verbs[i];
        return NULL;
}

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100 };
        static const struct option options[] = {
                { "help",    no_argument, NULL, 'h'         },
                { "version", no_argument, NULL, ARG_VERSION },
                { NULL, 0, NULL, 0 }
        };
        const struct verb *v;
        int c, verb_index;

        /* "+": stop at the verb, its options are its own. */
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help(stdout);
                        return EXIT_SUCCESS;
                case ARG_VERSION:
                        printf("bwgovctl %s\n", PACKAGE_VERSION);
                        return EXIT_SUCCESS;
                default:
                        return EXIT_USAGE;
                }

        if (optind >= argc) {
                fprintf(stderr, "bwgovctl: missing command\n\n");
                help(stderr);
                return EXIT_USAGE;
        }

        v = find_verb(argv[optind]);
        if (!v) {
                fprintf(stderr, "bwgovctl: unknown command '%s', see 'bwgovctl --help'\n", argv[optind]);
                return EXIT_USAGE;
        }

        /* The verb sees argv[0] = its own name; optind = 0 makes getopt
         * start over for it. */
        verb_index = optind;
        optind = 0;
        return v->run(argc - verb_index, argv + verb_index);
}
