/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Units made from prefix directories (bwgov.conf(5)): a cgroup named like
 * a unit that a prefix directory applies to ("libpod-.scope.d/" and
 * machine.slice/libpod-0f1e….scope) is governed as a unit of that name,
 * made when bwgovd finds it and forgotten when the cgroup goes. bwgovd
 * looks where systemd puts units: the root and every slice below it, each
 * watched for new directories (cgwatch.h), and again every
 * PREFIX_RESCAN_USEC for what a watch missed. */
#pragma once

#include "manager-types.h"

/* Units made from prefix directories (manager-prefix.c): look for their
 * cgroups below the root and every slice, and watch the slices; a new
 * directory in a watched one (returns false when wd is not one); the
 * units whose cgroup went, freed (not while stopping); the configurations
 * of the ones a reload keeps (*ret malloc'd, its items too). */
void manager_scan_prefixes(Manager *m, uint64_t now);
bool manager_prefix_dir_event(Manager *m, int wd, const char *name, bool made);
void manager_prune_instances(Manager *m);
int manager_instance_configs(Manager *m, struct bw_unit_config **ret, size_t *ret_n);
void manager_prefix_done(Manager *m);
