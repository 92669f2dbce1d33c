/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state store (see store.h): the state directory, the in-memory state,
 * the dirty flag and the batched save timer, write-ahead intents and the
 * one mirror of a unit into its saved entry. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
#include "bwgov/util/util.h"
#include "log.h"
#include "store.h"
#include "bwgov/state/state-journal.h"
#include "bwgov/state/state-levers.h"

#define STATE_FILE "state.json"
#define STATE_JOURNAL "state.journal"

/* The journal takes saves of a few entries until it holds as much as the
 * file (at least this much); then the next save rewrites the file. */
#define STORE_JOURNAL_MIN_BYTES (64u * 1024u)

/* How long changes that need no write-ahead wait to be saved together. */
#define STORE_SAVE_DELAY_USEC (1 * USEC_PER_SEC)

struct Store {
        sd_event *event;
        char *dir;                      /* for messages */
        int dir_fd;                     /* -1 until store_open() */
        int spare_fd;                   /* given up for a save that ran out of file descriptors */
        struct bw_state state;
        sd_event_source *save_source;   /* one-shot timer: saves a dirty state (store_mark()) */
        bool dirty;                     /* memory differs from the file (see store_mark()) */
        bool stopping;
        uint64_t last_periodic_usec;
        bool need_full;                 /* the next save rewrites the file (the first: this boot's id) */
        uint64_t file_bytes;            /* state.json as last saved */
        uint64_t journal_bytes;         /* appended to state.journal since */
        uint64_t *saves;
        int save_error;                 /* the last save's (0: it worked) */
        int lock_fd;                    /* flock()ed STATE_LOCK, -1 before store_lock() */
        size_t n_undo;                  /* entries with records to put back (bw_state_unit.undo) */
};

int store_new(sd_event *event, uint64_t *saves_counter, Store **ret) {
        Store *s = malloc(sizeof(*s));

        if (!s)
                return -ENOMEM;
        *s = (Store) { .event = sd_event_ref(event), .dir_fd = -1, .lock_fd = -1, .saves = saves_counter,
                       .need_full = true };
        /* Out of file descriptors (units hold thousands), a save, which
         * the write-ahead needs before every write, must still go through:
         * this one is closed for it and opened again after. */
        s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        *ret = s;
        return 0;
}

Store *store_free(Store *s) {
        if (!s)
                return NULL;
        sd_event_source_disable_unref(s->save_source);
        sd_event_unref(s->event);
        bw_state_done(&s->state);
        if (s->dir_fd >= 0)
                close(s->dir_fd);
        if (s->spare_fd >= 0)
                close(s->spare_fd);
        if (s->lock_fd >= 0)
                close(s->lock_fd);
        free(s->dir);
        free(s);
        return NULL;
}

/* Values written in another boot are not in the kernel now (the cgroups
 * were made afresh): an entry's "written" and "pending" from then must not
 * make a kernel value that happens to equal them look like bwgov's (issue
 * 17, finding 5). The entries keep their baselines and credit. */
static void store_check_boot(Store *s) {
        char now[BW_BOOT_ID_MAX] = "";
        FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

        if (f) {
                if (!fgets(now, sizeof(now), f))
                        now[0] = '\0';
                fclose(f);
        }
        now[strcspn(now, "\n")] = '\0';
        if (s->state.boot_id[0] && now[0] && strcmp(s->state.boot_id, now) != 0) {
                log_info("%s/%s was saved in an earlier boot: what bwgovd wrote then is not trusted now",
                         s->dir, STATE_FILE);
                /* Nor its levers: the cgroups were made afresh, and a
                 * record put back now could freeze or idle a new group. */
                for (size_t i = 0; i < s->state.n_units; i++) {
                        struct bw_state_unit *u = &s->state.units[i];

                        u->has_written = u->has_pending = false;
                        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                                (void) bw_state_unit_set_lever(u, (enum bw_lever) l, NULL);
                        u->slice_usec = 0;
                        u->cgroup_dev = u->cgroup_ino = 0;
                }
        }
        memcpy(s->state.boot_id, now, sizeof(now));
}

int store_open(Store *s, const char *dir) {
        char bak[sizeof(STATE_FILE ".broken")];
        int r;

        s->dir = strdup(dir);
        if (!s->dir)
                return log_oom();
        s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
        if (s->dir_fd < 0)
                return log_error_errno(errno, "Failed to open state directory %s: %s", dir, STRERROR(errno));

        r = bw_state_load(s->dir_fd, STATE_FILE, &s->state);
        if (r >= 0 || r == -ENOENT) {
                int k = bw_state_journal_replay(s->dir_fd, STATE_JOURNAL, &s->state);

                if (k == -EISDIR || k == -EBADFD || k == -ELOOP) {
                        struct stat st;

                        return log_error_errno(k, "Saved state %s/%s is %s, not a regular file: refusing to start "
                                               "(remove it, or choose another --state-dir=)", dir, STATE_JOURNAL,
                                               fstatat(s->dir_fd, STATE_JOURNAL, &st, AT_SYMLINK_NOFOLLOW) >= 0 ?
                                               bw_file_type_name(st.st_mode) : "no longer there");
                }
                if (k < 0) {
                        /* The lines before the broken one are applied. */
                        (void) renameat(s->dir_fd, STATE_JOURNAL, s->dir_fd, STATE_JOURNAL ".broken");
                        log_warning_errno(k, "Saved state journal %s/%s unreadable (kept as %s.broken), "
                                          "using %s and the journal's lines before the broken one: %s", dir,
                                          STATE_JOURNAL, STATE_JOURNAL, STATE_FILE, STRERROR(k));
                } else if (k > 0)
                        log_debug("Applied %d line(s) of %s/%s over %s", k, dir, STATE_JOURNAL, STATE_FILE);
        }
        store_check_boot(s);
        if (r == -ENOENT)
                log_debug("No saved state, starting fresh");
        else if (r == -EISDIR || r == -EBADFD || r == -ELOOP) {
                struct stat st;

                /* Not ours: bwgovd only ever renames a regular file there.
                 * Moving it aside could break whatever put it there, and
                 * starting fresh could take a boost for a baseline: refuse,
                 * and say what is in the way. */
                return log_error_errno(r, "Saved state %s/%s is %s, not a regular file: refusing to start "
                                       "(remove it, or choose another --state-dir=)", dir, STATE_FILE,
                                       fstatat(s->dir_fd, STATE_FILE, &st, AT_SYMLINK_NOFOLLOW) >= 0 ?
                                       bw_file_type_name(st.st_mode) : "no longer there");
        } else if (r < 0) {
                /* Keep the broken file for inspection; starting fresh adopts
                 * whatever the kernel holds, which may be a boost. Say so. */
                snprintf(bak, sizeof bak, "%s.broken", STATE_FILE);
                (void) renameat(s->dir_fd, STATE_FILE, s->dir_fd, bak);
                /* Its journal continues it: kept beside it. */
                (void) renameat(s->dir_fd, STATE_JOURNAL, s->dir_fd, STATE_JOURNAL ".broken");
                log_warning_errno(r, "Saved state %s/%s unreadable (kept as %s), "
                                  "adopting current values as baselines: %s", dir, STATE_FILE, bak, STRERROR(r));
        }
        return 0;
}

/* A save that ran out of file descriptors (units hold thousands) gets the
 * spare one. */
static int with_spare_fd(Store *s, int (*save)(int, const char *, struct bw_state *), const char *name) {
        int r = save(s->dir_fd, name, &s->state);

        if ((r == -EMFILE || r == -ENFILE) && s->spare_fd >= 0) {
                s->spare_fd = safe_close(s->spare_fd);
                r = save(s->dir_fd, name, &s->state);
                s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        }
        return r;
}

/* A few entries changed in a large state: one line appended to the
 * journal. Returns 1 when appended (or nothing was to save), 0 when the
 * file is to be rewritten instead. */
static int store_append(Store *s) {
        int r;

        if (s->need_full || s->journal_bytes >= u64_max(STORE_JOURNAL_MIN_BYTES, s->file_bytes))
                return 0;
        r = with_spare_fd(s, bw_state_journal_append, STATE_JOURNAL);
        if (r < 0) {
                /* The whole file then, which needs nothing of the journal. */
                log_debug_errno(r, "Cannot append to %s/%s, saving %s: %s", s->dir, STATE_JOURNAL, STATE_FILE,
                                STRERROR(r));
                return 0;
        }
        s->journal_bytes += (uint64_t) r;
        log_debug("Appended %d bytes to %s/%s: %zu entries changed", r, s->dir, STATE_JOURNAL,
                  s->state.changed);
        return 1;
}

static int store_rewrite(Store *s) {
        struct stat st;
        int r;

        r = with_spare_fd(s, bw_state_save, STATE_FILE);
        if (r < 0)
                return r;
        log_debug("Saved %s/%s: %zu of %zu entries changed", s->dir, STATE_FILE, s->state.changed,
                  s->state.n_units);
        /* Its lines are of the generation before: left, they would be
         * skipped; removed, the next start reads nothing it skips. */
        if (unlinkat(s->dir_fd, STATE_JOURNAL, 0) < 0 && errno != ENOENT)
                log_debug_errno(-errno, "Cannot remove %s/%s: %s", s->dir, STATE_JOURNAL, STRERROR(-errno));
        s->file_bytes = fstatat(s->dir_fd, STATE_FILE, &st, AT_SYMLINK_NOFOLLOW) >= 0 ? (uint64_t) st.st_size : 0;
        s->journal_bytes = 0;
        s->need_full = false;
        return 0;
}

static int store_write(Store *s, bool credit_may_lag) {
        int r;

        if (s->dir_fd < 0)
                return 0;
        s->state.credit_may_lag = credit_may_lag;
        r = credit_may_lag ? store_append(s) : 0;
        if (r == 0)
                r = store_rewrite(s);
        s->save_error = r < 0 ? r : 0;
        if (r < 0)
                return log_error_errno(r, "Failed to save %s/%s: %s", s->dir, STATE_FILE, STRERROR(r));
        if (s->saves)
                (*s->saves)++;
        s->dirty = false;
        bw_state_saved(&s->state);
        for (size_t i = 0; i < s->state.n_units; i++)
                s->state.units[i].pending_saved = s->state.units[i].has_pending;
        return 0;
}

int store_save(Store *s) {
        return store_write(s, false);
}

int store_save_intents(Store *s) {
        return store_write(s, true);
}

/* Changes that need no write-ahead are saved together a little later: with
 * many units one save instead of one per unit, each of which rewrites and
 * fsyncs the whole file (a thousand units made adoption quadratic and a
 * stop outlast systemd's timeout). Any write's intent save takes them
 * along. */
static int on_save_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        Store *s = userdata;

        /* A state directory that cannot be written fails every save:
         * logged once, then every LOG_REPEAT_WINDOW_USEC. */
        log_repeat_begin();
        if (s->dirty)
                (void) store_save_intents(s);
        log_repeat_end();
        return 0;
}

void store_mark(Store *s) {
        int enabled = SD_EVENT_OFF;

        s->dirty = true;
        /* Stopping: the loop is done and the caller saves last. */
        if (s->stopping)
                return;
        if (!s->save_source) {
                if (sd_event_add_time_relative(s->event, &s->save_source, CLOCK_MONOTONIC, STORE_SAVE_DELAY_USEC,
                                               0, on_save_timer, s) < 0) {
                        (void) store_save_intents(s);   /* cannot defer: save now */
                        return;
                }
                (void) sd_event_source_set_enabled(s->save_source, SD_EVENT_ONESHOT);
                return;
        }
        if (sd_event_source_get_enabled(s->save_source, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;         /* a save is already on its way */
        if (sd_event_source_set_time_relative(s->save_source, STORE_SAVE_DELAY_USEC) < 0 ||
            sd_event_source_set_enabled(s->save_source, SD_EVENT_ONESHOT) < 0)
                (void) store_save_intents(s);
}

void store_stop(Store *s) {
        s->stopping = true;
}

bool store_periodic(Store *s, uint64_t now_usec) {
        if (now_usec - s->last_periodic_usec < STORE_SAVE_INTERVAL_USEC)
                return false;
        s->last_periodic_usec = now_usec;
        /* Idle groups with full buckets: the file says it all already (a
         * thousand of them rewrote and fsynced it every ten seconds, a
         * third of the daemon's CPU). The journal is folded in anyway. */
        if (!s->dirty && !s->need_full && s->journal_bytes == 0 && !bw_state_unsaved(&s->state))
                return false;
        (void) store_save(s);
        return true;
}

const struct bw_state_unit *store_find(Store *s, const char *name) {
        return bw_state_find(&s->state, name);
}

/* The one place that changes an entry's undo bits: n_undo follows. */
static void set_undo(Store *s, struct bw_state_unit *su, unsigned undo) {
        if (!su->undo != !undo)
                s->n_undo = undo ? s->n_undo + 1 : s->n_undo - 1;
        su->undo = undo;
        if (!undo)
                su->undo_attempts = 0;
}

void store_forget(Store *s, const char *name) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (su)
                set_undo(s, su, 0);
        bw_state_remove(&s->state, name);
}

int store_record_unit(Store *s, const char *name, const struct store_record *r, unsigned flags) {
        struct bw_state_unit *su = bw_state_add(&s->state, name, r->cgroup);

        if (!su)
                return -ENOMEM;
        if (r->cgroup_ino > 0) {
                su->cgroup_dev = r->cgroup_dev;
                su->cgroup_ino = r->cgroup_ino;
        }
        su->baseline = r->baseline;
        su->has_written = r->has_written;
        su->written = r->written;
        su->credit_usec = r->credit_usec;
        su->debt_usec = r->debt_usec;
        su->paused = r->paused;
        if (flags & STORE_SETTLED) {
                /* The pending intent in the file already names what the
                 * kernel now holds: the save can wait. */
                su->has_pending = false;
                su->pending_saved = false;
        }
        if (flags & STORE_SOON)
                store_mark(s);
        return 0;
}

void store_set_paused(Store *s, const char *name, bool paused) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (su)
                su->paused = paused;
}

int store_intent(Store *s, const char *name, const struct bw_bandwidth *target, bool save) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (!su)
                return 0;
        if (su->has_pending && su->pending_saved && bw_bandwidth_equal(&su->pending, target) &&
            su->pending.burst_usec == target->burst_usec)
                return 0;
        su->has_pending = true;
        su->pending = *target;
        su->pending_saved = false;
        return save ? store_save_intents(s) : 0;
}

const struct bw_ledger_lever *store_lever(Store *s, const char *name, enum bw_lever l) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        return su ? bw_state_unit_lever(su, l) : NULL;
}

bool store_lever_releasing(Store *s, const char *name, enum bw_lever l) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        return su && (su->undo & (1u << l));
}

int store_lever_intent(Store *s, const char *name, enum bw_lever l, const struct bw_ledger_lever *rec) {
        _cleanup_(bw_ledger_lever_done) struct bw_ledger_lever was = { 0 };
        struct bw_state_unit *su = bw_state_find(&s->state, name);
        const struct bw_ledger_lever *cur;
        int r;

        if (!su)
                return -ENOENT;
        cur = bw_state_unit_lever(su, l);
        if (cur) {
                r = bw_ledger_lever_set(&was, cur->original, cur->written, cur->weight);
                if (r < 0)
                        return r;
        }
        r = bw_state_unit_set_lever(su, l, rec);
        if (r < 0)
                return r;
        r = store_save_intents(s);
        su = bw_state_find(&s->state, name);
        if (r < 0) {
                /* Nothing is written: the record stays what it was. */
                if (su)
                        (void) bw_state_unit_set_lever(su, l, &was);
                return r;
        }
        if (su)
                set_undo(s, su, su->undo & ~(1u << l));
        return 0;
}

void store_lever_restore_record(Store *s, const char *name, enum bw_lever l, const struct bw_ledger_lever *rec) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (su && bw_state_unit_set_lever(su, l, rec) >= 0)
                store_mark(s);
}

void store_lever_hold(Store *s, const char *name, enum bw_lever l) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (su && bw_state_unit_lever(su, l))
                set_undo(s, su, su->undo & ~(1u << l));
}

/* An undo of what entry su records failed: the next try after the
 * back-off. */
static void undo_failed(struct bw_state_unit *su, uint64_t now) {
        su->undo_due_usec = now + bw_ledger_retry_usec(su->undo_attempts);
        if (su->undo_attempts < 64)
                su->undo_attempts++;
}

void store_lever_release(Store *s, const char *name, enum bw_lever l, bool failed, uint64_t now) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (!su || !bw_state_unit_lever(su, l))
                return;
        if (!(su->undo & (1u << l)))
                su->undo_due_usec = now;
        set_undo(s, su, su->undo | 1u << l);
        if (failed)
                undo_failed(su, now);
}

void store_lever_clear(Store *s, const char *name, enum bw_lever l) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (!su)
                return;
        set_undo(s, su, su->undo & ~(1u << l));
        if (bw_state_unit_lever(su, l)) {
                (void) bw_state_unit_set_lever(su, l, NULL);
                store_mark(s);
        }
}

int store_slice(Store *s, const char *name, uint64_t slice_usec) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (!su)
                return -ENOENT;
        if (slice_usec > 0)
                set_undo(s, su, su->undo & ~BW_STATE_UNDO_SLICE);
        if (su->slice_usec == slice_usec)
                return 0;
        if (slice_usec == 0) {
                set_undo(s, su, su->undo & ~BW_STATE_UNDO_SLICE);
                su->slice_usec = 0;
                store_mark(s);
                return 0;
        }
        su->slice_usec = slice_usec;
        return store_save_intents(s);
}

void store_slice_release(Store *s, const char *name, bool failed, uint64_t now) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (!su || su->slice_usec == 0)
                return;
        if (!(su->undo & BW_STATE_UNDO_SLICE))
                su->undo_due_usec = now;
        set_undo(s, su, su->undo | BW_STATE_UNDO_SLICE);
        if (failed)
                undo_failed(su, now);
}

/* Every record of su, to be put back. */
static unsigned undo_bits(const struct bw_state_unit *su) {
        unsigned undo = su->slice_usec > 0 ? BW_STATE_UNDO_SLICE : 0;

        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                if (bw_state_unit_lever(su, (enum bw_lever) l))
                        undo |= 1u << l;
        return undo;
}

void store_orphan(Store *s, const char *name, bool failed, uint64_t now) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (!su)
                return;
        if (!su->undo)
                su->undo_due_usec = now;
        set_undo(s, su, su->undo | undo_bits(su) | BW_STATE_UNDO_ENTRY);
        if (failed)
                undo_failed(su, now);
}

void store_undo_quota(Store *s, const char *name, uint64_t now) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (!su || !(su->has_written || su->has_pending))
                return;
        if (!su->undo)
                su->undo_due_usec = now;
        set_undo(s, su, su->undo | BW_STATE_UNDO_QUOTA);
}

void store_undo_failed(Store *s, const char *name, uint64_t now) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (su && su->undo)
                undo_failed(su, now);
}

void store_undo_done(Store *s, const char *name, unsigned bits) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (su)
                set_undo(s, su, su->undo & ~bits);
}

void store_undo_all(Store *s, bool quotas, uint64_t now) {
        for (size_t i = 0; i < s->state.n_units; i++) {
                struct bw_state_unit *su = &s->state.units[i];
                unsigned undo = su->undo | undo_bits(su) | (quotas ? BW_STATE_UNDO_QUOTA : 0);

                if (undo != su->undo)
                        su->undo_due_usec = now;
                set_undo(s, su, undo);
        }
}

size_t store_undo_count(const Store *s) {
        return s ? s->n_undo : 0;
}

/* The names of the entries (all, or those due at now), malloc'd. */
static int names(Store *s, bool all, uint64_t now, char ***ret, size_t *ret_n) {
        size_t max = all ? s->state.n_units : s->n_undo, n = 0;
        char **v = NULL;

        *ret = NULL;
        *ret_n = 0;
        if (max == 0)
                return 0;
        v = calloc(max, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < s->state.n_units && n < max; i++) {
                const struct bw_state_unit *su = &s->state.units[i];

                if (!all && (!su->undo || su->undo_due_usec > now))
                        continue;
                v[n] = strdup(su->name);
                if (!v[n]) {
                        for (size_t k = 0; k < n; k++)
                                free(v[k]);
                        free(v);
                        return -ENOMEM;
                }
                n++;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int store_undo_due(Store *s, uint64_t now, char ***ret, size_t *ret_n) {
        return names(s, false, now, ret, ret_n);
}

int store_names(Store *s, char ***ret, size_t *ret_n) {
        return names(s, true, 0, ret, ret_n);
}

void store_quota_restored(Store *s, const char *name) {
        struct bw_state_unit *su = bw_state_find(&s->state, name);

        if (!su || (!su->has_written && !su->has_pending))
                return;
        su->has_written = su->has_pending = su->pending_saved = false;
        store_mark(s);
}

void store_set_keep_quotas(Store *s, bool keep) {
        if (s->state.keep_quotas == keep)
                return;
        s->state.keep_quotas = keep;
        s->need_full = true;            /* the journal carries entries, not this */
        store_mark(s);
}

bool store_keep_quotas(const Store *s) {
        return s->state.keep_quotas;
}

size_t store_count_levers(const Store *s, enum bw_lever l) {
        size_t n = 0;

        for (size_t i = 0; i < s->state.n_units; i++)
                n += bw_state_unit_lever(&s->state.units[i], l) != NULL;
        return n;
}

int store_save_error(const Store *s) {
        return s ? s->save_error : 0;
}

#define STATE_LOCK ".lock"


/* The lock is held on a read-only descriptor: bwgovd keeps nothing open
 * for writing in the state directory, so that it can be remounted
 * read-only under a running daemon (then saves fail, and say so). The pid
 * goes in through a descriptor of its own, closed at once. */
int store_lock(Store *s, const char *dir) {
        _cleanup_close_ int dfd = -1, wfd = -1;
        char pid[32] = "", buf[32];
        struct stat st;
        ssize_t n;
        int fd;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return log_error_errno(-errno, "Failed to open state directory %s: %s", dir,
                                       STRERROR(-errno));
        /* O_NONBLOCK: no file type at that name can hold up the start. */
        fd = openat(dfd, STATE_LOCK, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
        if (fd < 0)
                return log_error_errno(-errno, "Failed to open %s/%s: %s", dir, STATE_LOCK,
                                       STRERROR(-errno));
        s->lock_fd = fd;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return log_error_errno(-EBADF, "%s/%s is not a regular file: refusing to start", dir,
                                       STATE_LOCK);
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int r = -errno;

                n = pread(fd, pid, sizeof(pid) - 1, 0);
                pid[n > 0 ? n : 0] = '\0';
                pid[strcspn(pid, "\n")] = '\0';
                if (r == -EWOULDBLOCK)
                        return log_error_errno(-EBUSY, "State directory %s is in use by another bwgovd%s%s: "
                                               "refusing to start (two daemons on one state would take each "
                                               "other's writes for external changes)", dir,
                                               *pid ? ", pid " : "", pid);
                return log_error_errno(r, "Failed to lock %s/%s: %s", dir, STATE_LOCK, STRERROR(r));
        }
        n = snprintf(buf, sizeof(buf), "%d\n", (int) getpid());
        wfd = openat(dfd, STATE_LOCK, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (wfd < 0 || ftruncate(wfd, 0) < 0 || pwrite(wfd, buf, (size_t) n, 0) != n)
                log_debug_errno(-errno, "Cannot write the pid into %s/%s", dir, STATE_LOCK);
        return 0;
}
