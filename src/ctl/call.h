/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One varlink call to bwgovd on behalf of a verb, with every failure turned
 * into a message on stderr and an exit code; and the run of a verb that is
 * just one call and a printout. */

#include <jansson.h>
#include <stdio.h>

#include "options.h"
#include "varlink-client.h"

/* The exit codes of the daemon's verbs (0 is success), documented in
 * bwgovctl(1) and docs/bwgovctl-json.md. */
#define CTL_EXIT_FAILURE     1  /* an error reply other than those below, a broken reply */
#define CTL_EXIT_USAGE       2  /* the command line */
#define CTL_EXIT_NOT_RUNNING 3  /* cannot connect to the socket */
#define CTL_EXIT_NO_UNIT     4  /* io.bwgov.Governor.UnitNotFound */
#define CTL_EXIT_DENIED      5  /* io.bwgov.Governor.PermissionDenied, or EACCES on connect */

/* Call method (CTL_INTERFACE ".GetStatus", ...) with params (borrowed; NULL for none),
 * connecting first when *client is NULL. Returns 0 with *ret (a new
 * reference), or the exit code after printing why the call failed. */
int ctl_call(const struct options *o, VarlinkClient **client, const char *method, json_t *params, json_t **ret);
/* ctl_call() with its message written to err instead of stderr (bwgovctl top
 * shows it on its screen). */
int ctl_call_to(FILE *err, const struct options *o, VarlinkClient **client, const char *method, json_t *params,
                json_t **ret);

/* Say "out of memory" on stderr. Returns CTL_EXIT_FAILURE. */
int ctl_oom(void);

/* Print v as indented JSON. Returns 0 or CTL_EXIT_FAILURE (ENOMEM). */
int ctl_print_json(json_t *v);

/* {"unit": o->unit}; NULL on ENOMEM. */
json_t *ctl_unit_params(const struct options *o);

/* A verb that makes one call and prints the reply. */
struct verb_call {
        struct verb_info info;
        const char *method;                                     /* CTL_INTERFACE ".GetUnit", ... */
        json_t *(*params)(const struct options *o);             /* NULL: none; returns NULL on ENOMEM */
        int (*print)(const struct options *o, json_t *reply);   /* without --json; returns an exit code */
};

/* Parse the options, make the call, print the reply (as JSON with --json).
 * Returns the process exit code. */
int verb_call_run(const struct verb_call *v, int argc, char *argv[]);

/* Defines `int verb_NAME(int argc, char *argv[])`: one call of METHOD (in
 * CTL_INTERFACE) with the parameters PARAMS builds (NULL: none), printed by
 * PRINT. FLAGS and HELP are the verb's struct verb_info. Used with a
 * trailing semicolon, like a declaration. */
#define DEFINE_VERB_CALL(name_, flags_, help_, method_, params_, print_)                         \
        int verb_##name_(int argc, char *argv[]) {                                              \
                static const struct verb_call call = {                                          \
                        .info = { #name_, (flags_), help_ },                                    \
                        .method = CTL_INTERFACE "." method_,                                    \
                        .params = (params_), .print = (print_),                                 \
                };                                                                              \
                return verb_call_run(&call, argc, argv);                                        \
        }                                                                                       \
        struct verb_call_allow_trailing_semicolon_
