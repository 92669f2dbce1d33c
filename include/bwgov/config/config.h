/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bwgov/config/config-error.h"
#include "bwgov/config/config-types.h"
#include "bwgov/util/parse-util.h"

/* Configuration: bwgov.conf plus the *.conf files in bwgov.conf.d (section
 * [Governor]) and per-unit drop-ins, the *.conf files in <dir>/<unit>.d
 * (section [Bandwidth]), searched in
 * /usr/lib/bwgov, /run/bwgov, /etc/bwgov (lowest priority first).
 *
 * Merge rules (systemd's drop-in rules):
 *   - bwgov.conf: the copy in the highest-priority directory that has one is
 *     the only one read; then the bwgov.conf.d drop-ins apply on top.
 *   - Drop-ins (bwgov.conf.d and every <unit>.d): *.conf names are collected
 *     over all directories; the same name in a later directory replaces the
 *     earlier file; the survivors apply in lexical (strcmp) order of their
 *     names, later assignments overriding earlier ones key by key. Hidden
 *     files (".x.conf") and names not ending in ".conf" are ignored.
 *   - Masking: a drop-in that is /dev/null (a symlink to it, or the device
 *     itself) or an empty regular file masks that name; a masked bwgov.conf
 *     means "no main file".
 *   - A unit directory is any subdirectory (or symlink to one) of a search
 *     directory whose name ends in ".d", except bwgov.conf.d. The unit name is
 *     the directory name minus ".d" ("web.slice", "app.service",
 *     "mycontainer"); "", ".", ".." and names with control characters are
 *     errors. A unit whose drop-ins are all masked (or that has none) is not
 *     configured.
 *   - "Key=" (empty value) resets the key to its default.
 *   - Syntax (libinih): "#" or ";" starts a comment line; " ;" (blank, then
 *     semicolon) starts an inline comment; leading blanks are insignificant
 *     (no continuation lines); "Key: value" is accepted like "Key=value".
 *
 * Units of stored values:
 *   CPU amounts ("250%" of one CPU)  -> µs of CPU per second of wall time
 *                                       (250% = 2500000), like systemd's
 *                                       CPUQuotaPerSecUSec.
 *   Ratios of wall time ("5%")        -> µs per second as well (5% = 50000).
 *   Time spans ("100ms", "1.5s")      -> µs.
 *   CPU-time spans (CreditMax=30s)    -> µs of CPU time. */

/* The enums' names in the configuration (config-types.h). */
const char *bw_mode_to_string(enum bw_mode m);
enum bw_mode bw_mode_from_string(const char *s);
const char *bw_kernel_check_to_string(enum bw_kernel_check k);
enum bw_kernel_check bw_kernel_check_from_string(const char *s);
const char *bw_class_to_string(enum bw_class c);
enum bw_class bw_class_from_string(const char *s);
const char *bw_contention_to_string(enum bw_contention c);
enum bw_contention bw_contention_from_string(const char *s);
const char *bw_park_to_string(enum bw_park p);
/* "auto", or a boolean (yes/no, true/false, on/off, 1/0). */
enum bw_park bw_park_from_string(const char *s);

/* Search path for configuration. NULL-terminated list of directories, lowest
 * priority first. bw_config_default_dirs() returns the built-in list
 * { "/usr/lib/bwgov", "/run/bwgov", "/etc/bwgov", NULL } (the first and last
 * follow meson's prefix and sysconfdir). */
const char *const *bw_config_default_dirs(void);

/* Load the whole configuration from dirs (lowest priority first; NULL means
 * bw_config_default_dirs()). Missing directories are fine. Unknown sections
 * and keys are errors (a typo must not pass silently).
 *
 * On success returns 0 and overwrites *ret (its previous contents are NOT
 * freed: load into a fresh struct, or bw_config_done() the old one; a reload
 * loads into a new struct and swaps, so a failed reload keeps the old one).
 * On failure returns -EINVAL (content, including invalid unit directory
 * names), -ENOMEM, or another negative errno (I/O, e.g. -ENOENT for a dangling
 * drop-in symlink, -EACCES), overwrites *ret_error when not NULL (without
 * freeing it first) with the first error found, and leaves *ret untouched: a
 * broken file never yields a half-applied configuration.
 *
 * Thread-safe as long as nobody changes libinih's process-wide option
 * globals (ini_allow_multiline etc.); this library never touches them. */
int bw_config_load(const char *const *dirs, struct bw_config *ret, struct bw_config_error *ret_error);

/* Frees everything and zeroes *c. Accepts NULL. */
void bw_config_done(struct bw_config *c);

/* Frees the strings of *u (name, cgroup, subgroup, cpu_quota_source) and zeroes it.
 * Accepts NULL. */
void bw_unit_config_done(struct bw_unit_config *u);

/* Deep copy of *src into *ret: the strings are duplicated, the rest copied.
 * Returns 0, -EINVAL for NULL arguments, or -ENOMEM; *ret is overwritten
 * without being freed first, and left untouched on failure. */
int bw_unit_config_copy(const struct bw_unit_config *src, struct bw_unit_config *ret);

/* Look up a unit by name; NULL when absent. */
const struct bw_unit_config *bw_config_find_unit(const struct bw_config *c, const char *name);

/* Effective per-unit values after defaults (global Mode=, Interval=). */
enum bw_mode bw_unit_mode(const struct bw_config *c, const struct bw_unit_config *u);
uint64_t bw_unit_interval_usec(const struct bw_config *c, const struct bw_unit_config *u);
/* ActiveInterval= of the unit, else the global one, never above the unit's
 * Interval=. */
uint64_t bw_unit_active_interval_usec(const struct bw_config *c, const struct bw_unit_config *u);

/* Class= of the unit: as set, else latency when LatencyTarget= is set, else
 * throughput. */
enum bw_class bw_unit_class(const struct bw_unit_config *u);
/* LatencyTarget= of a Class=latency unit (its default when unset); 0 for
 * the other classes. */
uint64_t bw_unit_latency_target_usec(const struct bw_unit_config *u);

/* Every key the parser accepts, as "Section.Key", NULL-terminated; used by the
 * test that checks the man page documents them all. */
const char *const *bw_config_known_keys(void);
