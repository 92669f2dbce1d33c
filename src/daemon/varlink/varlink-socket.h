/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The listening socket of the varlink server and the peer's groups: socket
 * activation, binding a fresh AF_UNIX socket (mode 0660, a group), and
 * SO_PEERGROUPS. Used by varlink-server.c only; errors are logged here. */

#include <stdbool.h>
#include <sys/types.h>

/* The gid a group name or number names. Returns 0, -ENOENT when there is no
 * such group. */
int varlink_socket_group(const char *name, gid_t *ret);

/* The first listening AF_UNIX stream socket systemd passed, made
 * non-blocking and close-on-exec. Returns 1 with *ret_fd, 0 when systemd
 * passed none, or a negative errno. */
int varlink_socket_from_systemd(int *ret_fd);

/* Bind and listen on path, mode 0660 from the start, owned by *group when
 * group is not NULL. A stale socket at path is replaced; owner names the
 * program in the message when a live one is there. Returns 0 with *ret_fd,
 * -ENAMETOOLONG when path does not fit a sockaddr_un, -EEXIST when
 * something other than a socket is in the way, -EADDRINUSE when another
 * process listens there, or another negative errno; path does not exist
 * after a failure that removed or created it. */
int varlink_socket_bind(const char *path, const gid_t *group, const char *owner, int *ret_fd);

/* The peer's supplementary groups (SO_PEERGROUPS, kernel >= 4.13) contain
 * gid? Returns 1 yes, 0 no, or a negative errno. */
int varlink_peer_has_group(int fd, gid_t gid);
