/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The daemon's varlink server: interface io.bwgov.Governor (described in
 * io.bwgov.Governor.varlink, embedded at build time and served by
 * org.varlink.service.GetInterfaceDescription) on the event loop of the
 * manager. Non-blocking throughout: every connection is an io event source
 * with a bounded input buffer and an output queue that stops the reading of
 * further calls while it is full; a client that does not read its replies
 * is dropped after a timeout. Its sources run at a lower priority than the
 * control loop's timers.
 *
 * The socket: the first listening AF_UNIX stream socket passed by systemd
 * (socket activation, systemd/bwgovd.socket), else <runtime_dir>/io.bwgov.Governor,
 * created with mode 0660 and, when the group exists, owned by group "bwgov"
 * (the environment variable BWGOV_SOCKET_GROUP names another group, by name
 * or number: a test hook). Access is decided from SO_PEERCRED and
 * SO_PEERGROUPS at connect time: uid 0 and the daemon's own uid may call
 * everything, members of the group the read methods, others only
 * org.varlink.service's methods. */

typedef struct Manager Manager;
typedef struct Varlink Varlink;

/* Set up the listening socket and its event source on m->event. Logs its
 * errors. Returns 0, -ENAMETOOLONG when the socket path does not fit a
 * sockaddr_un, -EEXIST when something other than a socket is in the way, or
 * another negative errno. */
int varlink_new(Manager *m, Varlink **ret);

/* Close every connection and the listening socket; removes the socket file
 * when this server created it (not when it came from systemd). Accepts
 * NULL; returns NULL. */
Varlink *varlink_free(Varlink *v);
