/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl's calls to bwgovd: connect, call, and map each way it can fail
 * (no daemon, no permission, an error reply, a broken reply) to one message
 * and one exit code. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/util/macro.h"
#include "call.h"

static const char *method_short(const char *method) {
        const char *dot = strrchr(method, '.');
        return dot ? dot + 1 : method;
}

int ctl_oom(void) {
        fprintf(stderr, "bwgovctl: out of memory\n");
        return CTL_EXIT_FAILURE;
}

/* Print why the daemon refused; returns the exit code. */
static int report_error(FILE *f, const struct options *o, const char *method, const char *error, json_t *params) {
        _cleanup_free_ char *s = NULL;

        if (strcmp(error, CTL_INTERFACE ".UnitNotFound") == 0) {
                fprintf(f, "bwgovctl: no unit \"%s\" is configured (see 'bwgovctl status')\n",
                        o->unit ? o->unit : "?");
                return CTL_EXIT_NO_UNIT;
        }
        if (strcmp(error, CTL_INTERFACE ".PermissionDenied") == 0) {
                fprintf(f, "bwgovctl: permission denied: %s needs %s\n", o->verb->name,
                        o->verb->flags & VERB_MUTATING ? "root" : "root or membership of group bwgov");
                return CTL_EXIT_DENIED;
        }
        if (strcmp(error, CTL_INTERFACE ".ReloadFailed") == 0) {
                const char *reason = json_string_value(json_object_get(params, "reason"));

                /* --json: the error's parameters (file, line, key, message)
                 * on stdout, for a script to point at the line. */
                if (o->json && json_is_object(params) &&
                    json_object_set_new(params, "error", json_string(error)) == 0)
                        (void) ctl_print_json(params);
                fprintf(f, "bwgovctl: reload failed: %s; the previous configuration stays\n",
                        reason ? reason : "no reason given");
                return CTL_EXIT_FAILURE;
        }

        s = json_dumps(params, JSON_COMPACT);
        fprintf(f, "bwgovctl: %s failed: %s %s\n", method_short(method), error, s ? s : "");
        return CTL_EXIT_FAILURE;
}

/* Returns 0, or the exit code after printing why not. */
static int connect_daemon(FILE *f, const struct options *o, VarlinkClient **ret) {
        int r;

        r = varlink_client_connect(o->socket, ret);
        if (r == -EACCES || r == -EPERM) {
                fprintf(f, "bwgovctl: permission denied: cannot connect to %s: %s "
                        "(%s needs root or membership of group bwgov)\n", o->socket, strerror(-r), o->verb->name);
                return CTL_EXIT_DENIED;
        }
        if (r == -ENOMEM)
                return ctl_oom();
        if (r < 0) {
                fprintf(f, "bwgovd is not running (cannot connect to %s: %s)\n", o->socket, strerror(-r));
                return CTL_EXIT_NOT_RUNNING;
        }
        return 0;
}

/* The transport's failure (a negative errno from varlink_client_call()). */
static void report_call_failure(FILE *f, const char *method, int r) {
        switch (r) {
        case -ECONNRESET:
                fprintf(f, "bwgovctl: bwgovd closed the connection during %s\n", method);
                break;
        case -ETIMEDOUT:
                fprintf(f, "bwgovctl: bwgovd did not answer %s in time\n", method);
                break;
        case -EBADMSG:
                fprintf(f, "bwgovctl: malformed reply to %s\n", method);
                break;
        default:
                fprintf(f, "bwgovctl: %s failed: %s\n", method, strerror(-r));
        }
}

int ctl_call_to(FILE *err, const struct options *o, VarlinkClient **client, const char *method, json_t *params,
                json_t **ret) {
        _cleanup_free_ char *error = NULL;
        json_t *reply = NULL;
        int r, code;

        if (!*client) {
                r = connect_daemon(err, o, client);
                if (r != 0)
                        return r;
        }

        r = varlink_client_call(*client, method, params, &reply, &error);
        if (r < 0) {
                report_call_failure(err, method_short(method), r);
                return CTL_EXIT_FAILURE;
        }
        if (r > 0) {
                code = report_error(err, o, method, error, reply);
                json_decref(reply);
                return code;
        }
        *ret = reply;
        return 0;
}

int ctl_call(const struct options *o, VarlinkClient **client, const char *method, json_t *params, json_t **ret) {
        return ctl_call_to(stderr, o, client, method, params, ret);
}

int ctl_print_json(json_t *v) {
        _cleanup_free_ char *s = json_dumps(v, JSON_INDENT(2));

        if (!s)
                return ctl_oom();
        printf("%s\n", s);
        return 0;
}

json_t *ctl_unit_params(const struct options *o) {
        return json_pack("{s:s}", "unit", o->unit);
}

int verb_call_run(const struct verb_call *v, int argc, char *argv[]) {
        VarlinkClient *client = NULL;
        json_t *params = NULL, *reply = NULL;
        struct options o;
        int r;

        r = parse_options(argc, argv, &v->info, &o);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : 0;

        if (v->params) {
                params = v->params(&o);
                if (!params)
                        return ctl_oom();
        }
        r = ctl_call(&o, &client, v->method, params, &reply);
        json_decref(params);
        if (r == 0)
                r = o.json ? ctl_print_json(reply) : v->print(&o, reply);
        json_decref(reply);
        varlink_client_free(client);
        return r;
}
