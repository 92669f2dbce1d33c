/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A varlink server for one interface on an sd-event loop: the transport
 * only. It knows the socket, connections, access levels and
 * org.varlink.service; the interface brings its description and a method
 * table, and sees each call through its callback and userdata.
 *
 * Non-blocking throughout: every connection is an io event source with a
 * bounded input buffer and an output queue that stops the reading of further
 * calls while it is full; a client that does not read its replies is dropped
 * after a timeout, and so is one that completes no call for a minute. At
 * most 256 connections, the last 32 for uid 0 and the server's own uid,
 * at most 64 for any other uid; a refusal is logged once per uid (then once
 * per 10 minutes). Its sources run at a lower priority than the control
 * loop's timers.
 *
 * The socket: the first listening AF_UNIX stream socket passed by systemd
 * (socket activation), else <runtime_dir>/<interface name>, created with mode
 * 0660 and, when the group exists, owned by the given group. Access is
 * decided from SO_PEERCRED and SO_PEERGROUPS at connect time: uid 0 and the
 * server's own uid may call everything, members of the group the read
 * methods, others only org.varlink.service's methods.
 *
 * Errors of the transport itself (InvalidMessage, MessageTooLarge,
 * PermissionDenied) are raised in the interface's namespace, where its
 * description declares them; the rest are org.varlink.service's. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "varlink-dispatch.h"

typedef struct VarlinkServer VarlinkServer;

/* Set up the listening socket and its event source on e. group names the
 * socket's group, by name or number (NULL or not found: root only). The
 * service is copied; its strings and interface must outlive the server.
 * Logs its errors. Returns 0, -ENAMETOOLONG when the socket path does not
 * fit a sockaddr_un, -EEXIST when something other than a socket is in the
 * way, -EADDRINUSE when another process listens there, or another negative
 * errno. */
int varlink_server_new(sd_event *e, const char *runtime_dir, const char *group,
                       const struct varlink_service *service, VarlinkServer **ret);

/* The loop is over (the daemon exits): answer what was asked before the
 * end. Connections still in the listening queue are taken, and for at most
 * budget_usec every call received is answered and its reply sent, a
 * connection closed once its calls are answered (or its client gone).
 * Only the read methods: a call that would change something closes its
 * connection unanswered, as the exit would have. Blocks (poll()), runs no
 * event loop. */
void varlink_server_drain(VarlinkServer *s, uint64_t budget_usec);

/* Close every connection and the listening socket; removes the socket file
 * when this server created it and it is still the one it created (not
 * when it came from systemd). Accepts NULL; returns NULL. */
VarlinkServer *varlink_server_free(VarlinkServer *s);

size_t varlink_server_n_connections(const VarlinkServer *s);

/* A socket this server bound whose file is gone (its directory deleted) or
 * replaced: bind a new one at the same path and listen there; the open
 * connections stay. Nothing to do for systemd's socket. Returns 0 when
 * nothing was to be done, 1 when the socket is back, or a negative errno
 * (logged: e.g. -EADDRINUSE, another daemon listens there now). */
int varlink_server_check_socket(VarlinkServer *s);

/* The caller's credentials, for logging who asked. */
uid_t varlink_call_uid(const VarlinkCall *call);
pid_t varlink_call_pid(const VarlinkCall *call);
VarlinkServer *varlink_call_server(VarlinkCall *call);

/* ---- the transport's own (varlink-server.c and varlink-dispatch.c) ---- */
