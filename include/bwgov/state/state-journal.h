/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.journal: saves of a few entries appended as a line, replayed over
 * state.json at load (state-journal.c). */
#pragma once

#include "bwgov/state/state.h"

/* The journal: a save of a few changed entries in a large state appends
 * one line to a file next to the state file instead of rewriting it (ten
 * thousand units make a 3 MB state.json). A line is
 *   {"generation": G, "forget": ["name", ...], "units": {"name": {...}, ...}}
 * with each entry whole, as in the file; it applies only over the file of
 * generation G (a full save counts the generation up, so the lines of an
 * older file are skipped, and the caller removes the journal after it).
 *
 * bw_state_journal_format(): the line for the entries not saved as they
 * are (changed since they were last made, s->credit_may_lag as in
 * bw_state_format()) and the names removed since; *ret NULL when there is
 * nothing to save. bw_state_journal_append(): that line appended to NAME in
 * dirfd and fdatasync()ed (the directory fsync()ed too when the file is
 * new); on failure the file is cut back to what it was. Returns the bytes
 * appended (0: nothing to save) or a negative errno. Either way the caller
 * calls bw_state_saved() after a successful save.
 * bw_state_journal_replay(): applies NAME's lines of s->generation in
 * order; a last line cut short by a crash (no newline) is ignored. Returns
 * the lines applied (0 also when there is no journal), -EINVAL when a line
 * does not parse (the lines before it are applied), -EBADFD/-EISDIR/-ELOOP
 * when NAME is not a regular file, another negative errno. */
int bw_state_journal_format(struct bw_state *s, char **ret);
int bw_state_journal_append(int dirfd, const char *name, struct bw_state *s);
int bw_state_journal_replay(int dirfd, const char *name, struct bw_state *s);

/* What replay does with the journal's text: the lines of buf (len bytes).
 * A line with an entry that does not parse changes nothing and fails. */
int bw_state_journal_apply(struct bw_state *s, const char *buf, size_t len);
