/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by state.c (the file), state-journal.c (the journal) and
 * state-levers.c (an entry's levers and identity, the file's numbers: it
 * calls neither of the others). */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bw_state;
struct bw_state_unit;

#define STATE_MAX_BYTES (16u * 1024u * 1024u)

/* The index of name's entry, or where it would be inserted. */
size_t state_unit_index(const struct bw_state *s, const char *name, bool *ret_found);
/* Drop entry i, not recorded as forgotten. */
void state_remove_at(struct bw_state *s, size_t i);
/* A JSON integer >= 0 (state-levers.c). Returns 0 or -EINVAL. */
int state_json_get_u64(json_t *v, uint64_t *ret);
/* Add name's entry from its JSON object. */
int state_unit_from_json(struct bw_state *s, const char *name, json_t *v);
/* s as a JSON string (malloc'd), NULL for invalid UTF-8 or no memory. */
char *state_quote(const char *s);
/* Whether u changed since it was last made (s->credit_may_lag: not for its
 * credit alone): 1 when it did, and it is made now (u->saved cleared,
 * s->changed counted), else 0. */
int state_refresh(struct bw_state *s, struct bw_state_unit *u);

/* A document being put together: into buf alone (fd -1; buf grows, is
 * NUL-terminated, and the caller frees it), or written to fd as buf fills
 * (state.c). */
struct state_doc {
        int fd;
        char *buf;
        size_t at, size;
};
/* Append n bytes of p, or u as `"name": {...}`. Returns 0 or a negative
 * errno (-ENOMEM, the write's, -EINVAL for a name that is not UTF-8). */
int state_doc_put(struct state_doc *o, const char *p, size_t n);
int state_doc_put_unit(struct state_doc *o, const struct bw_state_unit *u);
/* An entry's optional "levers" (ledger.h) and "slice_usec" (state-levers.c);
 * its optional "cgroup_dev" and "cgroup_ino". */
int state_levers_from_json(struct bw_state_unit *u, json_t *v);
int state_identity_from_json(struct bw_state_unit *u, json_t *v);
/* The "levers" member followed by a comma, "" when there is none
 * (malloc'd). */
int state_levers_format(const struct bw_state_unit *u, char **ret);
