/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The io.bwgov.Governor varlink interface (described in
 * io.bwgov.Governor.varlink, embedded at build time): its method table and
 * the JSON views of the governor's snapshots (governor.h), served by a
 * varlink server (varlink-server.h) on the given event loop.
 *
 * The socket is <runtime_dir>/io.bwgov.Governor unless systemd passes one
 * (systemd/bwgovd.socket); its group is "bwgov", or what the environment
 * variable BWGOV_SOCKET_GROUP names (by name or number: a test hook). The
 * read methods need that group, Reload, Pause and Resume uid 0 or the
 * daemon's own uid. */

#include <systemd/sd-event.h>

#include "governor.h"

typedef struct GovernorVarlink GovernorVarlink;

/* Serve g (copied; its userdata must outlive the server) on e. Logs its
 * errors. Returns 0 or a negative errno (see varlink_server_new()). */
int governor_varlink_new(sd_event *e, const char *runtime_dir, const Governor *g, GovernorVarlink **ret);

/* Put the socket back if its file was deleted (varlink_server_check_socket();
 * after a reload, which creates the runtime directory again). Returns 0, 1
 * when it was put back, or a negative errno (logged). */
int governor_varlink_check_socket(GovernorVarlink *gv);

/* The loop is over: answer the read calls already asked, within
 * budget_usec (varlink_server_drain()). */
void governor_varlink_drain(GovernorVarlink *gv, uint64_t budget_usec);

/* Close the server. Accepts NULL; returns NULL. */
GovernorVarlink *governor_varlink_free(GovernorVarlink *gv);
