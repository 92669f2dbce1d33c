/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One governor per cgroup, whatever the path to it: a unit claims its
 * cgroup by identity (the device and inode of its bandwidth directory,
 * after Subgroup= and prefix matching) before anything is read or written
 * as its own. Two units on one cgroup would each take the other's writes
 * for someone else's, re-base on them and raise again (a ratchet up to
 * CPUQuotaMax= and beyond).
 *
 * Within this daemon the first claim keeps the cgroup; a second is
 * refused. Between daemons, a byte-range lock (fcntl(F_SETLK)) on a lock
 * file per device, at the offset of the inode: the kernel drops it when
 * the daemon dies, however it dies, and tells a second daemon the pid of
 * the one that holds it (F_GETLK). The lock files live in one directory
 * for every bwgovd of the host (claims_dir()). */

#include <stdbool.h>
#include <sys/types.h>

typedef struct Claims Claims;

/* Where the lock files of the daemons governing cgroup_root (NULL: the
 * host's) are: BWGOV_RUNTIMEDIR/claims for the host's cgroup tree (and for
 * any tree on a cgroup file system), else a directory .bwgov-claims in the
 * tree (a simulated one, for tests). Returns a malloc'd path, NULL on
 * ENOMEM. */
char *claims_dir(const char *cgroup_root);

/* Claims whose locks between daemons live in dir (made when first needed;
 * NULL: none, claims within this daemon only). Returns 0 or -ENOMEM. */
int claims_new(const char *dir, Claims **ret);
/* Frees (the locks go with their files). NULL is fine. */
Claims *claims_free(Claims *c);

struct claim_holder {
        const void *owner;      /* the owner in this daemon, NULL when another daemon holds it */
        pid_t pid;              /* that daemon's pid (0: not known) */
};

/* Claim the cgroup (dev, ino) for owner. Returns 0 when owner holds it
 * (also when it did before), -EBUSY when another owner of this daemon does
 * (*ret_holder says which), -EADDRINUSE when another daemon does
 * (*ret_holder says its pid), or another negative errno when the lock
 * between daemons could not be taken (the claim stands within this daemon,
 * *ret_holder cleared: the caller may warn). */
int claims_take(Claims *c, dev_t dev, ino_t ino, const void *owner, struct claim_holder *ret_holder);

/* owner lets the cgroup go (nothing when it does not hold it). */
void claims_release(Claims *c, dev_t dev, ino_t ino, const void *owner);

/* How many cgroups are claimed. */
size_t claims_count(const Claims *c);
