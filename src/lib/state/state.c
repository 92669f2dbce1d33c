/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state file: ownership classification, the sorted table of unit
 * entries, and state.json parsing, formatting, loading and atomic saving
 * (contracts in include/bwgov/state/state.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
#include "bwgov/util/hash.h"
#include "bwgov/util/macro.h"
#include "bwgov/state/state.h"
#include "bwgov/util/util.h"
#include "state-internal.h"

#define STATE_SCHEMA_VERSION 1

bool bw_bandwidth_equal(const struct bw_bandwidth *a, const struct bw_bandwidth *b) {
        if (a->quota_usec != b->quota_usec || a->period_usec != b->period_usec)
                return false;
        if (a->has_burst && b->has_burst && a->burst_usec != b->burst_usec)
                return false;
        return true;
}

static bool quota_is(const struct bw_bandwidth *a, const struct bw_bandwidth *b) {
        return a->quota_usec == b->quota_usec && a->period_usec == b->period_usec;
}

static bool burst_is(const struct bw_bandwidth *a, const struct bw_bandwidth *b) {
        return !a->has_burst || !b->has_burst || a->burst_usec == b->burst_usec;
}

/* Whether bwgov could have written w over baseline b: the baseline's
 * period and a quota no lower than the baseline's (the headroom goes up;
 * only an ancestor's lowering on cgroup v1 goes below, and after a crash
 * then the lower value becomes the baseline: the safe side). An entry
 * whose "written" or "pending" is not is stale or edited: it never keeps a
 * baseline above what the kernel holds (issue 17, finding 5). */
static bool plausible(const struct bw_bandwidth *w, const struct bw_bandwidth *b) {
        if (w->period_usec != b->period_usec)
                return false;
        if (b->quota_usec == BW_QUOTA_MAX)
                return w->quota_usec == BW_QUOTA_MAX;
        return w->quota_usec == BW_QUOTA_MAX || w->quota_usec >= b->quota_usec;
}

enum bw_ownership bw_state_classify(const struct bw_state_unit *u, const struct bw_bandwidth *cur) {
        bool written = u->has_written && plausible(&u->written, &u->baseline);
        bool pending = u->has_pending && plausible(&u->pending, &u->baseline);
        bool quota_ours, burst_ours;

        if (bw_bandwidth_equal(&u->baseline, cur))
                return BW_OWNERSHIP_BASELINE;

        /* Quota and burst are separate files, written one after the other:
         * a crash between the two leaves a mix of old and new values, each
         * of them ours. Judge each part against every value we may have
         * left there. */

        quota_ours = quota_is(cur, &u->baseline) || (written && quota_is(cur, &u->written)) ||
                     (pending && quota_is(cur, &u->pending));
        burst_ours = burst_is(cur, &u->baseline) || (written && burst_is(cur, &u->written)) ||
                     (pending && burst_is(cur, &u->pending));
        if (quota_ours && burst_ours)
                return BW_OWNERSHIP_OURS;
        return BW_OWNERSHIP_EXTERNAL;
}

static void unit_done(struct bw_state_unit *u) {
        free(u->name);                  /* and cgroup with it (bw_state_add()) */
        if (u->levers)
                for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                        bw_ledger_lever_done(&u->levers[l]);
        free(u->levers);
}

bool bw_state_unit_has_levers(const struct bw_state_unit *u) {
        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                if (bw_state_unit_lever(u, (enum bw_lever) l))
                        return true;
        return u->slice_usec > 0;
}

static void forgotten_done(struct bw_state *s) {
        for (size_t i = 0; i < s->n_forgotten; i++)
                free(s->forgotten[i]);
        s->forgotten = mfree(s->forgotten);
        s->n_forgotten = 0;
}

void bw_state_done(struct bw_state *s) {
        if (!s)
                return;
        array_done_and_free(s->units, s->n_units, unit_done);
        s->n_allocated = 0;
        forgotten_done(s);
}

void bw_state_saved(struct bw_state *s) {
        for (size_t i = 0; i < s->n_units; i++)
                s->units[i].saved = s->units[i].made;
        forgotten_done(s);
}

/* Entries are kept sorted by name: lookups are a binary search, not a
 * scan, which matters with a thousand units looked up on every write. */
static int unit_name_cmp(const void *key, const void *entry) {
        return strcmp(key, ((const struct bw_state_unit *) entry)->name);
}

/* The index where name is, or where it would be inserted. */
size_t state_unit_index(const struct bw_state *s, const char *name, bool *ret_found) {
        size_t lo = 0, hi = s->n_units;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = unit_name_cmp(name, &s->units[mid]);

                if (c == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        *ret_found = false;
        return lo;
}

struct bw_state_unit *bw_state_find(struct bw_state *s, const char *name) {
        bool found;
        size_t i = state_unit_index(s, name, &found);

        return found ? &s->units[i] : NULL;
}

struct bw_state_unit *bw_state_add(struct bw_state *s, const char *name, const char *cgroup) {
        struct bw_state_unit u = {0}, *n;
        bool found;
        size_t i = state_unit_index(s, name, &found);

        if (found)
                return &s->units[i];

        /* Name and cgroup in one allocation (one string when they are the
         * same): ten thousand entries, two chunks each, were 0.3 MB more. */
        if (!cgroup)
                cgroup = name;
        {
                size_t nl = strlen(name) + 1, cl = strcmp(cgroup, name) == 0 ? 0 : strlen(cgroup) + 1;

                u.name = malloc(nl + cl);
                if (!u.name)
                        return NULL;
                memcpy(u.name, name, nl);
                u.cgroup = cl > 0 ? memcpy(u.name + nl, cgroup, cl) : u.name;
        }
        if (s->n_units == s->n_allocated) {
                /* Ten thousand entries in an array for 16 384 were 1.5 MB
                 * of the daemon's heap. */
                size_t a = grow_capacity(s->n_allocated, 16);

                n = reallocarray(s->units, a, sizeof(*n));
                if (!n) {
                        unit_done(&u);
                        return NULL;
                }
                s->units = n;
                s->n_allocated = a;
        }
        memmove(&s->units[i + 1], &s->units[i], (s->n_units - i) * sizeof(*n));
        s->units[i] = u;
        s->n_units++;
        return &s->units[i];
}

void state_remove_at(struct bw_state *s, size_t i) {
        unit_done(&s->units[i]);
        memmove(&s->units[i], &s->units[i + 1], (s->n_units - i - 1) * sizeof(*s->units));
        s->n_units--;
}

void bw_state_remove(struct bw_state *s, const char *name) {
        bool found;
        size_t i = state_unit_index(s, name, &found);
        char **f;

        if (!found)
                return;
        /* The journal's next line says so; without memory for that, the
         * entry stays (a stale entry is harmless, it is checked at
         * adoption like any other). */
        if ((s->n_forgotten & (s->n_forgotten - 1)) == 0) {      /* 0, 1, 2, 4, ...: room doubles */
                f = reallocarray(s->forgotten, s->n_forgotten ? s->n_forgotten * 2 : 4, sizeof(*f));
                if (!f)
                        return;
                s->forgotten = f;
        }
        f = s->forgotten;
        f[s->n_forgotten] = s->units[i].name;
        s->units[i].name = NULL;
        s->n_forgotten++;
        state_remove_at(s, i);
}

static int bandwidth_from_json(json_t *o, struct bw_bandwidth *ret) {
        struct bw_bandwidth b = {0};
        uint64_t period;
        json_t *q, *hb;
        int r;

        if (!json_is_object(o))
                return -EINVAL;

        q = json_object_get(o, "quota_usec");
        if (json_is_null(q))
                b.quota_usec = BW_QUOTA_MAX;
        else {
                r = state_json_get_u64(q, &b.quota_usec);
                if (r < 0)
                        return r;
        }
        r = state_json_get_u64(json_object_get(o, "period_usec"), &period);
        if (r < 0)
                return r;
        if (period > BW_PERIOD_MAX_USEC)
                return -EINVAL;
        b.period_usec = (uint32_t) period;
        r = state_json_get_u64(json_object_get(o, "burst_usec"), &b.burst_usec);
        if (r < 0)
                return r;
        hb = json_object_get(o, "has_burst");
        if (!json_is_boolean(hb))
                return -EINVAL;
        b.has_burst = json_is_true(hb);

        r = bw_bandwidth_validate(&b);
        if (r < 0)
                return r;
        *ret = b;
        return 0;
}

static int optional_bandwidth(json_t *o, const char *key, bool *ret_has, struct bw_bandwidth *ret) {
        json_t *v = json_object_get(o, key);

        if (!v || json_is_null(v)) {
                *ret_has = false;
                return 0;
        }
        *ret_has = true;
        return bandwidth_from_json(v, ret);
}

/* One entry of "units": name -> {cgroup, baseline, written, pending,
 * credit_usec, debt_usec, paused}. */
int state_unit_from_json(struct bw_state *s, const char *name, json_t *v) {
        struct bw_state_unit *u;
        json_t *cg, *debt;
        int r;

        if (!json_is_object(v) || name[0] == '\0')
                return -EINVAL;
        cg = json_object_get(v, "cgroup");
        if (!json_is_string(cg))
                return -EINVAL;
        u = bw_state_add(s, name, json_string_value(cg));
        if (!u)
                return -ENOMEM;
        r = bandwidth_from_json(json_object_get(v, "baseline"), &u->baseline);
        if (r >= 0)
                r = optional_bandwidth(v, "written", &u->has_written, &u->written);
        if (r >= 0)
                r = optional_bandwidth(v, "pending", &u->has_pending, &u->pending);
        if (r >= 0)
                r = state_json_get_u64(json_object_get(v, "credit_usec"), &u->credit_usec);
        /* Optional (files written before the debt was kept have none). */
        debt = json_object_get(v, "debt_usec");
        if (r >= 0 && debt)
                r = state_json_get_u64(debt, &u->debt_usec);
        if (r < 0)
                return r;
        u->paused = json_is_true(json_object_get(v, "paused"));
        r = state_identity_from_json(u, v);
        if (r < 0)
                return r;
        return state_levers_from_json(u, v);
}

int bw_state_parse(const char *buf, size_t len, struct bw_state *ret) {
        _cleanup_(bw_state_done) struct bw_state s = {0};
        json_error_t err;
        json_t *root, *units, *v;
        const char *name;
        int r = 0;

        root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
        if (!root)
                return -EINVAL;

        v = json_object_get(root, "schema_version");
        units = json_object_get(root, "units");
        if (!json_is_integer(v) || json_integer_value(v) != STATE_SCHEMA_VERSION || !json_is_object(units))
                r = -EINVAL;
        else if ((v = json_object_get(root, "boot_id")) && (!json_is_string(v) ||
                                                           json_string_length(v) >= sizeof(s.boot_id) ||
                                                           strspn(json_string_value(v), "0123456789abcdef-") !=
                                                           json_string_length(v)))
                r = -EINVAL;
        else if ((v = json_object_get(root, "generation")) && state_json_get_u64(v, &s.generation) < 0)
                r = -EINVAL;
        else if ((v = json_object_get(root, "restore_on_exit")) && !json_is_boolean(v))
                r = -EINVAL;
        else {
                s.keep_quotas = json_is_false(json_object_get(root, "restore_on_exit"));
                v = json_object_get(root, "boot_id");
                if (v)
                        memcpy(s.boot_id, json_string_value(v), json_string_length(v) + 1);
                json_object_foreach(units, name, v) {
                        r = state_unit_from_json(&s, name, v);
                        if (r < 0)
                                break;
                }
        }
        json_decref(root);
        if (r < 0)
                return r;
        *ret = s;
        s = (struct bw_state) {0};
        return 0;
}

/* The serialised fields of an entry but its levers, whose changes clear
 * u->made instead (bw_state_unit_set_lever()). */
struct state_fields {
        struct bw_bandwidth baseline, written, pending;
        uint64_t credit_usec, debt_usec, slice_usec, cgroup_dev, cgroup_ino;
        bool has_written, has_pending, paused;
};

/* Member by member: a struct assignment may copy the source's padding,
 * which a value made on the stack leaves undefined (valgrind saw it, from
 * unit_apply_intent()'s target), and the hash reads every byte. */
_Static_assert(sizeof(struct bw_bandwidth) == 24, "struct bw_bandwidth changed: update bandwidth_fields()");

static void bandwidth_fields(struct bw_bandwidth *dst, const struct bw_bandwidth *src) {
        dst->quota_usec = src->quota_usec;
        dst->burst_usec = src->burst_usec;
        dst->period_usec = src->period_usec;
        dst->has_burst = src->has_burst;
}

static struct state_fields fields_of(const struct bw_state_unit *u) {
        struct state_fields f;

        /* Zeroed first: hashed as bytes, padding included. */
        memset(&f, 0, sizeof(f));
        bandwidth_fields(&f.baseline, &u->baseline);
        f.has_written = u->has_written;
        if (u->has_written)
                bandwidth_fields(&f.written, &u->written);
        f.has_pending = u->has_pending;
        if (u->has_pending)
                bandwidth_fields(&f.pending, &u->pending);
        f.credit_usec = u->credit_usec;
        f.debt_usec = u->debt_usec;
        f.paused = u->paused;
        f.slice_usec = u->slice_usec;
        f.cgroup_dev = u->cgroup_dev;
        f.cgroup_ino = u->cgroup_ino;
        return f;
}

bool bw_state_unsaved(const struct bw_state *s) {
        if (s->n_forgotten > 0)
                return true;
        for (size_t i = 0; i < s->n_units; i++) {
                const struct bw_state_unit *u = &s->units[i];
                struct state_fields f = fields_of(u);

                if (!u->made || !u->saved || bw_hash_bytes(0, &f, sizeof(f)) != u->made_hash)
                        return true;
        }
        return false;
}

/* s as a JSON string: copied between quotes when it needs no escaping
 * (names of units and cgroups always do), else escaped by jansson (NULL for
 * invalid UTF-8, which json_string() refuses). */
char *state_quote(const char *s) {
        json_auto_t *j = NULL;
        char *q;

        for (const unsigned char *c = (const unsigned char *) s; *c; c++)
                if (*c < 0x20 || *c >= 0x7f || *c == '"' || *c == '\\') {
                        j = json_string(s);
                        return j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
                }
        return asprintf(&q, "\"%s\"", s) < 0 ? NULL : q;
}

/* A bandwidth value as jansson would dump its object, keys sorted. */
static void bandwidth_format(const struct bw_bandwidth *b, char *buf, size_t size) {
        char quota[24] = "null";

        if (b->quota_usec != BW_QUOTA_MAX)
                snprintf(quota, sizeof(quota), "%" PRIu64, b->quota_usec);
        snprintf(buf, size, "{\"burst_usec\":%" PRIu64 ",\"has_burst\":%s,\"period_usec\":%" PRIu32
                 ",\"quota_usec\":%s}", b->burst_usec, b->has_burst ? "true" : "false", b->period_usec, quota);
}

/* One entry as `"name": {...}`, compact with its keys sorted: what
 * json_dumps(JSON_COMPACT | JSON_SORT_KEYS) of the entry's object gives,
 * put together without building the object (a whole save formats every
 * entry: ten thousand of them). */
static int unit_format(const struct bw_state_unit *u, char **ret) {
        _cleanup_free_ char *name = NULL, *cgroup = NULL, *levers = NULL;
        char baseline[160], written[160] = "null", pending[160] = "null", slice[48] = "", id[64] = "";
        char *text;

        name = state_quote(u->name);
        cgroup = state_quote(u->cgroup);
        if (!name || !cgroup)
                return -EINVAL;
        if (state_levers_format(u, &levers) < 0)
                return -ENOMEM;
        if (u->cgroup_ino > 0)
                snprintf(id, sizeof(id), "\"cgroup_dev\":%" PRIu64 ",\"cgroup_ino\":%" PRIu64 ",", u->cgroup_dev,
                         u->cgroup_ino);
        if (u->slice_usec > 0)
                snprintf(slice, sizeof(slice), "\"slice_usec\":%" PRIu64 ",", u->slice_usec);
        bandwidth_format(&u->baseline, baseline, sizeof(baseline));
        if (u->has_written)
                bandwidth_format(&u->written, written, sizeof(written));
        if (u->has_pending)
                bandwidth_format(&u->pending, pending, sizeof(pending));
        /* "cgroup_*" sort after "cgroup", "levers" before "paused",
         * "slice_usec" before "written". */
        if (asprintf(&text, "%s: {\"baseline\":%s,\"cgroup\":%s,%s\"credit_usec\":%" PRIu64 ",\"debt_usec\":%" PRIu64
                     ",%s\"paused\":%s,\"pending\":%s,%s\"written\":%s}",
                     name, baseline, cgroup, id, u->credit_usec, u->debt_usec, levers, u->paused ? "true" : "false",
                     pending, slice, written) < 0)
                return -ENOMEM;
        *ret = text;
        return 0;
}

/* Whether u changed since it was last made (with s->credit_may_lag, not
 * for its credit and debt alone); if so it is made now: 1, u->saved
 * cleared. */
int state_refresh(struct bw_state *s, struct bw_state_unit *u) {
        struct state_fields f = fields_of(u);
        uint64_t all, lag;

        all = bw_hash_bytes(0, &f, sizeof(f));
        f.credit_usec = f.debt_usec = 0;
        lag = bw_hash_bytes(0, &f, sizeof(f));
        if (u->made && (all == u->made_hash || (s->credit_may_lag && lag == u->made_hash_lag)))
                return 0;
        u->made_hash = all;
        u->made_hash_lag = lag;
        u->made = true;
        u->saved = false;
        s->changed++;
        return 1;
}

/* Where the document goes: a buffer that grows (fd -1), or a file that a
 * buffer of DOC_FLUSH bytes is written to as it fills (ten thousand
 * entries are 3 MB: a save never holds them). */
#define DOC_FLUSH (64u * 1024u)

static int doc_flush(struct state_doc *o) {
        size_t done = 0;

        while (done < o->at) {
                ssize_t k = write(o->fd, o->buf + done, o->at - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EIO;
                done += (size_t) k;
        }
        o->at = 0;
        return 0;
}

int state_doc_put(struct state_doc *o, const char *p, size_t n) {
        int r;

        if (o->fd >= 0 && o->at > 0 && o->at + n > DOC_FLUSH) {
                r = doc_flush(o);
                if (r < 0)
                        return r;
        }
        if (o->at + n + 1 > o->size) {
                size_t a = o->size < DOC_FLUSH ? DOC_FLUSH : o->size * 2;

                if (a < o->at + n + 1)
                        a = o->at + n + 1;
                char *b = realloc(o->buf, a);

                if (!b)
                        return -ENOMEM;
                o->buf = b;
                o->size = a;
        }
        memcpy(o->buf + o->at, p, n);
        o->at += n;
        o->buf[o->at] = '\0';
        return 0;
}

int state_doc_put_unit(struct state_doc *o, const struct bw_state_unit *u) {
        _cleanup_free_ char *t = NULL;
        int r;

        r = unit_format(u, &t);
        if (r < 0)
                return r;
        return state_doc_put(o, t, strlen(t));
}

/* The document, one line per entry. */
static int state_emit(struct bw_state *s, struct state_doc *o) {
        static const char tail[] = "\n  }\n}", empty[] = "}\n}";
        char head[160];
        int r = 0;

        s->changed = 0;
        for (size_t i = 0; i < s->n_units; i++)
                (void) state_refresh(s, &s->units[i]);

        /* A boot id is 36 characters of hex digits and dashes (checked at
         * parse, written by the caller): no escaping needed. */
        (void) snprintf(head, sizeof(head),
                        "{\n  \"schema_version\": %d,%s%s%s\n  \"generation\": %" PRIu64 ",%s\n  \"units\": {",
                        STATE_SCHEMA_VERSION, s->boot_id[0] ? "\n  \"boot_id\": \"" : "", s->boot_id,
                        s->boot_id[0] ? "\"," : "", s->generation,
                        s->keep_quotas ? "\n  \"restore_on_exit\": false," : "");
        r = state_doc_put(o, head, strlen(head));
        for (size_t i = 0; i < s->n_units && r >= 0; i++) {
                r = state_doc_put(o, i > 0 ? ",\n    " : "\n    ", i > 0 ? 6 : 5);
                if (r >= 0)
                        r = state_doc_put_unit(o, &s->units[i]);
        }
        if (r >= 0)
                r = s->n_units == 0 ? state_doc_put(o, empty, sizeof(empty) - 1) :
                                      state_doc_put(o, tail, sizeof(tail) - 1);
        if (r >= 0 && o->fd >= 0)
                r = state_doc_put(o, "\n", 1);
        if (r >= 0 && o->fd >= 0)
                r = doc_flush(o);
        return r;
}

int bw_state_format(struct bw_state *s, char **ret) {
        struct state_doc o = { .fd = -1 };
        int r;

        r = state_emit(s, &o);
        if (r < 0) {
                free(o.buf);
                return r;
        }
        *ret = o.buf;
        return 0;
}

int bw_state_load(int dirfd, const char *name, struct bw_state *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        /* Never opened blocking: a FIFO put in its place would hang the
         * start in open() with the signals blocked. */
        r = bw_read_regular_at(dirfd, name, O_NOFOLLOW, STATE_MAX_BYTES, &buf, &len);
        if (r < 0)
                return r;
        return bw_state_parse(buf, len, ret);
}

int bw_state_save(int dirfd, const char *name, struct bw_state *s) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        struct state_doc o = { .fd = -1 };
        int r;

        s->generation++;
        if (asprintf(&tmp, ".%s.tmp.%d", name, (int) getpid()) < 0) {
                s->generation--;
                return -ENOMEM;
        }

        /* A new file, whatever was left at that name: a FIFO there would
         * block the open, and a file to truncate could be anything. */
        if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT) {
                s->generation--;
                return -errno;
        }
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
        if (fd < 0) {
                s->generation--;
                return -errno;
        }

        o.fd = fd;
        r = state_emit(s, &o);
        buf = o.buf;
        if (r < 0)
                goto fail;
        if (fsync(fd) < 0) {
                r = -errno;
                goto fail;
        }
        if (renameat(dirfd, tmp, dirfd, name) < 0) {
                r = -errno;
                goto fail;
        }
        (void) fsync(dirfd);
        return 0;
fail:
        s->generation--;
        (void) unlinkat(dirfd, tmp, 0);
        return r;
}
