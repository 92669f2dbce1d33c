/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's side of claims.h: where the locks between daemons live,
 * and the hook with which each unit claims its cgroup before it governs it
 * (unit.h), saying who holds one it is refused. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef struct Manager Manager;
typedef struct Unit Unit;

/* One governor per cgroup (manager-claims.c, claims.h): the claims and
 * where their locks live (0 or -ENOMEM, logged); the units' claim hook
 * (unit_hooks.claim). */
int manager_claims_new(Manager *m);
int manager_claim(Unit *u, const char *path, dev_t dev, ino_t ino, bool take, void *userdata);
