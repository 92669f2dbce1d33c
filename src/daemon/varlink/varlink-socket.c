/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The varlink server's listening socket and its peers' groups (contracts in
 * varlink-socket.h). */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "bwgov/util/child.h"
#include "log.h"
#include "varlink-socket.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

/* rw for the owner and the group, nothing for others. */
#define SOCKET_MODE 0660
#define SOCKET_UMASK 0117

/* Room for this many supplementary groups at first; grown on ERANGE. */
#define PEER_GROUPS_INITIAL 64

static int group_lookup(void *userdata, void *out) {
        struct group *g = getgrnam(userdata);

        if (!g)
                return -ENOENT;
        memcpy(out, &g->gr_gid, sizeof(gid_t));
        return 0;
}

int varlink_socket_group(const char *name, gid_t *ret) {
        char *end;
        unsigned long n;
        gid_t gid = 0;      /* copied into the child, which may not write it */
        int r;

        errno = 0;
        n = strtoul(name, &end, 10);
        if (*name >= '0' && *name <= '9' && !*end && errno == 0 && n < (gid_t) -1) {
                *ret = (gid_t) n;
                return 0;
        }
        /* Looked up in a child: the NSS modules the lookup loads (systemd's,
         * LDAP's, ...) would stay mapped in the daemon for its life. */
        r = bw_call_in_child(group_lookup, (void *) name, &gid, sizeof(gid));
        if (r < 0)
                return r;
        *ret = gid;
        return 0;
}

int varlink_socket_from_systemd(int *ret_fd) {
        int n = sd_listen_fds(true);

        for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
                int flags;

                if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0)
                        continue;
                flags = fcntl(fd, F_GETFL);
                if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
                        int r = log_error_errno(errno, "Varlink: cannot set up the socket from systemd: %s",
                                                STRERROR(errno));
                        close(fd);
                        return r;
                }
                *ret_fd = fd;
                return 1;
        }
        if (n > 0)
                log_warning("Varlink: %d file descriptors passed, none a listening unix stream socket; "
                            "binding my own", n);
        return 0;
}

int varlink_socket_bind(const char *path, const gid_t *group, const char *owner, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        struct stat st;
        mode_t old;
        int r;

        if (strlen(path) >= sizeof sa.sun_path)
                return log_error_errno(ENAMETOOLONG, "Varlink: socket path %s is longer than %zu bytes", path,
                                       sizeof sa.sun_path - 1);
        strcpy(sa.sun_path, path);

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return log_error_errno(errno, "Varlink: socket() failed: %s", STRERROR(errno));

        if (lstat(path, &st) >= 0) {
                _cleanup_close_ int probe = -1;

                if (!S_ISSOCK(st.st_mode))
                        return log_error_errno(EEXIST, "Varlink: %s exists and is not a socket", path);
                /* A previous run's socket is removed; a live one is another
                 * daemon's (a non-blocking connect to a listening socket
                 * succeeds at once, or EAGAIN when its backlog is full). */
                probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (probe >= 0 && (connect(probe, (struct sockaddr *) &sa, sizeof sa) >= 0 || errno == EAGAIN))
                        return log_error_errno(EADDRINUSE, "Varlink: another process listens on %s; "
                                               "is %s already running with this runtime directory?", path, owner);
                (void) unlink(path);
        }

        /* Created 0660 from the start: no window in which others may connect. */
        old = umask(SOCKET_UMASK);
        r = bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 ? -errno : 0;
        umask(old);
        if (r < 0)
                return log_error_errno(r, "Varlink: cannot bind %s: %s", path, STRERROR(r));
        if (group && chown(path, (uid_t) -1, *group) < 0)
                log_warning_errno(errno, "Varlink: cannot give %s to group %u: %s", path, (unsigned) *group,
                                  STRERROR(errno));
        if (chmod(path, SOCKET_MODE) < 0)
                log_warning_errno(errno, "Varlink: cannot chmod %s: %s", path, STRERROR(errno));

        if (listen(fd, SOMAXCONN) < 0) {
                r = log_error_errno(errno, "Varlink: cannot listen on %s: %s", path, STRERROR(errno));
                (void) unlink(path);
                return r;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int varlink_peer_has_group(int fd, gid_t gid) {
        _cleanup_free_ gid_t *groups = NULL;
        socklen_t len = PEER_GROUPS_INITIAL * sizeof(gid_t);

        for (;;) {
                free(groups);
                groups = malloc(len);
                if (!groups)
                        return -ENOMEM;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) >= 0)
                        break;
                if (errno != ERANGE)
                        return -errno;
        }
        for (size_t i = 0; i < len / sizeof(gid_t); i++)
                if (groups[i] == gid)
                        return 1;
        return 0;
}
