/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A blocking varlink client for bwgovctl: one unix stream connection, one
 * call at a time, NUL-terminated JSON messages. */

#include <jansson.h>

typedef struct VarlinkClient VarlinkClient;

/* Connect to the socket at path. Returns 0, -ENAMETOOLONG when path does
 * not fit a sockaddr_un, or the negative errno of socket()/connect()
 * (-ENOENT, -ECONNREFUSED: nobody listens; -EACCES: the socket's mode). */
int varlink_client_connect(const char *path, VarlinkClient **ret);

VarlinkClient *varlink_client_free(VarlinkClient *c);

/* Call method with parameters (borrowed; NULL for none) and wait for the
 * reply (at most 30 s). Returns
 *   0: success, *ret_parameters the reply's parameters (a new reference,
 *      an empty object when the reply had none), *ret_error NULL;
 *   1: the daemon answered with an error: *ret_error the error name
 *      (malloc'd), *ret_parameters its parameters;
 *   negative errno: -ECONNRESET (the daemon closed the connection),
 *      -ETIMEDOUT, -EBADMSG (not a varlink reply), -EMSGSIZE (reply over
 *      256 MiB), -ENOMEM, or the errno of send()/recv().
 * Outputs are untouched on failure. */
int varlink_client_call(VarlinkClient *c, const char *method, json_t *parameters,
                        json_t **ret_parameters, char **ret_error);
