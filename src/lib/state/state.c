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
#include <sys/uio.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
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
        free(u->name);
        free(u->cgroup);
        free(u->text);
        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                bw_ledger_lever_done(&u->levers[l]);
}

bool bw_state_unit_has_levers(const struct bw_state_unit *u) {
        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                if (bw_ledger_has(&u->levers[l]))
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
                s->units[i].saved = s->units[i].text != NULL;
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

        u.name = strdup(name);
        u.cgroup = strdup(cgroup ? cgroup : name);
        if (!u.name || !u.cgroup) {
                unit_done(&u);
                return NULL;
        }
        if (s->n_units == s->n_allocated) {
                size_t a = s->n_allocated ? s->n_allocated * 2 : 16;

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
        r = state_json_get_u64(json_object_get(o, "period_usec"), &b.period_usec);
        if (r < 0)
                return r;
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

static struct bw_state_fields fields_of(const struct bw_state_unit *u) {
        struct bw_state_fields f;

        /* Zeroed first: compared with memcmp(), padding included. */
        memset(&f, 0, sizeof(f));
        f.baseline = u->baseline;
        f.has_written = u->has_written;
        if (u->has_written)
                f.written = u->written;
        f.has_pending = u->has_pending;
        if (u->has_pending)
                f.pending = u->pending;
        f.credit_usec = u->credit_usec;
        f.debt_usec = u->debt_usec;
        f.paused = u->paused;
        f.slice_usec = u->slice_usec;
        f.cgroup_dev = u->cgroup_dev;
        f.cgroup_ino = u->cgroup_ino;
        return f;
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
        snprintf(buf, size, "{\"burst_usec\":%" PRIu64 ",\"has_burst\":%s,\"period_usec\":%" PRIu64
                 ",\"quota_usec\":%s}", b->burst_usec, b->has_burst ? "true" : "false", b->period_usec, quota);
}

/* One entry as `"name": {...}`, compact with its keys sorted: what
 * json_dumps(JSON_COMPACT | JSON_SORT_KEYS) of the entry's object gives,
 * put together without building the object (ten thousand entries are
 * formatted again on a save after their credit moved). */
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

/* Make u's text again when its fields changed since it was made (with
 * s->credit_may_lag, not for its credit and debt alone). */
int state_refresh(struct bw_state *s, struct bw_state_unit *u) {
        struct bw_state_fields f = fields_of(u);
        char *t;
        int r;

        if (u->text && s->credit_may_lag) {
                struct bw_state_fields lag = f;

                lag.credit_usec = u->text_of.credit_usec;
                lag.debt_usec = u->text_of.debt_usec;
                if (memcmp(&lag, &u->text_of, sizeof(lag)) == 0)
                        return 0;
        }
        if (u->text && memcmp(&f, &u->text_of, sizeof(f)) == 0)
                return 0;
        r = unit_format(u, &t);
        if (r < 0)
                return r;
        free(u->text);
        u->text = t;
        u->text_len = strlen(t);
        u->text_of = f;
        u->saved = false;
        s->formatted++;
        return 1;
}

/* Where the document goes: a buffer of the right size, or a file in
 * writev() batches (ten thousand entries are 3 MB: a save never holds
 * them twice). */
#define DOC_IOV 256

struct doc_out {
        int fd;                         /* -1: into buf */
        char *buf;
        size_t at;
        struct iovec iov[DOC_IOV];
        size_t n_iov;
};

static int doc_flush(struct doc_out *o) {
        struct iovec *v = o->iov;
        size_t n = o->n_iov;

        o->n_iov = 0;
        while (n > 0) {
                ssize_t k = writev(o->fd, v, (int) n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                /* A short write: on from where it stopped. */
                while (n > 0 && (size_t) k >= v->iov_len) {
                        k -= (ssize_t) v->iov_len;
                        v++;
                        n--;
                }
                if (n > 0) {
                        v->iov_base = (char *) v->iov_base + k;
                        v->iov_len -= (size_t) k;
                }
        }
        return 0;
}

static int doc_put(struct doc_out *o, const char *p, size_t n) {
        int r;

        if (o->fd < 0) {
                memcpy(o->buf + o->at, p, n);
                o->at += n;
                return 0;
        }
        if (o->n_iov == DOC_IOV) {
                r = doc_flush(o);
                if (r < 0)
                        return r;
        }
        o->iov[o->n_iov++] = (struct iovec) { (void *) p, n };
        return 0;
}

/* Every entry's text made again where its fields changed; *ret_len: the
 * bytes of the entries with their separators. */
static int state_refresh_all(struct bw_state *s, size_t *ret_len) {
        size_t len = 0;

        s->formatted = 0;
        for (size_t i = 0; i < s->n_units; i++) {
                int r = state_refresh(s, &s->units[i]);

                if (r < 0)
                        return r;
                len += s->units[i].text_len + 6;        /* ",\n    " */
        }
        *ret_len = len;
        return 0;
}

/* The document, one line per entry, from the entries' texts (made). */
static int state_emit(const struct bw_state *s, struct doc_out *o) {
        static const char tail[] = "\n  }\n}", empty[] = "}\n}";
        char head[160];
        int r = 0;

        /* A boot id is 36 characters of hex digits and dashes (checked at
         * parse, written by the caller): no escaping needed. */
        (void) snprintf(head, sizeof(head),
                        "{\n  \"schema_version\": %d,%s%s%s\n  \"generation\": %" PRIu64 ",%s\n  \"units\": {",
                        STATE_SCHEMA_VERSION, s->boot_id[0] ? "\n  \"boot_id\": \"" : "", s->boot_id,
                        s->boot_id[0] ? "\"," : "", s->generation,
                        s->keep_quotas ? "\n  \"restore_on_exit\": false," : "");
        r = doc_put(o, head, strlen(head));
        for (size_t i = 0; i < s->n_units && r >= 0; i++) {
                r = doc_put(o, i > 0 ? ",\n    " : "\n    ", i > 0 ? 6 : 5);
                if (r >= 0)
                        r = doc_put(o, s->units[i].text, s->units[i].text_len);
        }
        if (r >= 0)
                r = s->n_units == 0 ? doc_put(o, empty, sizeof(empty) - 1) : doc_put(o, tail, sizeof(tail) - 1);
        if (r >= 0 && o->fd >= 0)
                r = doc_put(o, "\n", 1);
        if (r >= 0 && o->fd >= 0)
                r = doc_flush(o);
        return r;
}

/* The document: one line per entry, each entry's text formatted only
 * when its fields changed since it was last. */
int bw_state_format(struct bw_state *s, char **ret) {
        struct doc_out o = { .fd = -1 };
        size_t len;
        int r;

        r = state_refresh_all(s, &len);
        if (r < 0)
                return r;
        o.buf = malloc(len + 160 + 16);         /* the head, the tail, the NUL */
        if (!o.buf)
                return -ENOMEM;
        (void) state_emit(s, &o);
        o.buf[o.at] = '\0';
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
        struct doc_out o = { .fd = -1 };
        size_t len;
        int r;

        s->generation++;
        r = state_refresh_all(s, &len);
        if (r < 0) {
                s->generation--;
                return r;
        }

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
