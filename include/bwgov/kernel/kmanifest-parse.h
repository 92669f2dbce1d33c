/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reading a manifest (kmanifest-parse.c, with the value checks of
 * kmanifest-schema.c): from a buffer or a file into the struct bw_kmanifest
 * of kmanifest.h, every problem reported at its JSON path. */

#include <stddef.h>

#include "bwgov/kernel/kmanifest.h"

/* Parse and validate a manifest from a buffer. The schema is checked
 * strictly: unknown keys, wrong types, values outside their enumerations,
 * duplicate ids/paths/keys, malformed releases and digests, and references
 * (series entries, item patches) to files not listed in "files" are all
 * errors. Every error found is appended to *ret_errors (when not NULL;
 * existing entries are kept). Returns 0 and *ret on success, -EINVAL when the
 * document is invalid (JSON syntax errors included, reported at "$" with
 * line and column), -ENOMEM. *ret is untouched on failure. */
int bw_kmanifest_parse(const char *buf, size_t len, struct bw_kmanifest **ret, struct bw_kerrors *ret_errors);

/* Read the file at path (relative to dir_fd, or AT_FDCWD) and parse it as
 * above. I/O failures return the negative errno and add one error at "$". */
int bw_kmanifest_load(int dir_fd, const char *path, struct bw_kmanifest **ret, struct bw_kerrors *ret_errors);
