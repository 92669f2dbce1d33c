/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An entry's lever ledger in state.json (state.h, ledger.h): each lever's
 * record as {"original": …, "written": …, "weight": …}, or a string (the
 * original alone, as an older bwgovd saved it); the slice given to its
 * threads; the identity of its cgroup; setting a lever; and the reader of
 * the file's numbers. state.c and state-journal.c call this file; it calls
 * neither (contracts in state-internal.h and include/bwgov/state/state-levers.h). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/state/ledger.h"
#include "bwgov/util/macro.h"
#include "bwgov/state/state.h"
#include "state-internal.h"
#include "bwgov/state/state-levers.h"

int state_json_get_u64(json_t *v, uint64_t *ret) {
        json_int_t i;

        if (!json_is_integer(v))
                return -EINVAL;
        i = json_integer_value(v);
        if (i < 0)
                return -EINVAL;
        *ret = (uint64_t) i;
        return 0;
}

int bw_state_unit_set_lever(struct bw_state_unit *u, enum bw_lever l, const struct bw_ledger_lever *r) {
        int k;

        if (!u || (unsigned) l >= _BW_LEVER_MAX)
                return -EINVAL;
        if (!bw_ledger_has(r)) {
                if (!u->levers)
                        return 0;
                bw_ledger_lever_done(&u->levers[l]);
                for (size_t i = 0; i < _BW_LEVER_MAX; i++)
                        if (bw_ledger_has(&u->levers[i]))
                                goto made;
                u->levers = mfree(u->levers);
                goto made;
        }
        if (!u->levers) {
                u->levers = calloc(_BW_LEVER_MAX, sizeof(*u->levers));
                if (!u->levers)
                        return -ENOMEM;
        }
        k = bw_ledger_lever_set(&u->levers[l], r->original, r->written, r->weight);
        if (k < 0)
                return k;       /* an array of empty records left: as none */
made:
        u->made = false;        /* the levers are not in its hashes */
        return 0;
}

/* A record's string member: NULL when absent, -EINVAL when not a string. */
static int member(json_t *o, const char *key, const char **ret) {
        json_t *v = json_object_get(o, key);

        *ret = NULL;
        if (!v || json_is_null(v))
                return 0;
        if (!json_is_string(v))
                return -EINVAL;
        *ret = json_string_value(v);
        return 0;
}

static int lever_from_json(json_t *x, struct bw_ledger_lever *ret) {
        const char *original = NULL, *written = NULL, *weight = NULL;

        if (json_is_string(x))
                original = json_string_value(x);
        else if (!json_is_object(x) || member(x, "original", &original) < 0 || member(x, "written", &written) < 0 ||
                 member(x, "weight", &weight) < 0)
                return -EINVAL;
        if (!original)
                return -EINVAL;
        return bw_ledger_lever_set(ret, original, written, weight);
}

int state_levers_from_json(struct bw_state_unit *u, json_t *v) {
        json_t *levers = json_object_get(v, "levers"), *x;
        const char *key;
        int r;

        if (json_object_get(v, "slice_usec")) {
                r = state_json_get_u64(json_object_get(v, "slice_usec"), &u->slice_usec);
                if (r < 0)
                        return r;
        }
        if (!levers)
                return 0;
        if (!json_is_object(levers))
                return -EINVAL;
        json_object_foreach(levers, key, x) {
                _cleanup_(bw_ledger_lever_done) struct bw_ledger_lever rec = { 0 };
                enum bw_lever l = bw_lever_from_string(key);

                if (l < 0)
                        return -EINVAL;
                r = lever_from_json(x, &rec);
                if (r >= 0)
                        r = bw_state_unit_set_lever(u, l, &rec);
                if (r < 0)
                        return r;
        }
        return 0;
}

int state_identity_from_json(struct bw_state_unit *u, json_t *v) {
        json_t *dev = json_object_get(v, "cgroup_dev"), *ino = json_object_get(v, "cgroup_ino");
        int r = 0;

        if (!dev != !ino)
                return -EINVAL;
        if (dev)
                r = state_json_get_u64(dev, &u->cgroup_dev);
        if (r >= 0 && ino)
                r = state_json_get_u64(ino, &u->cgroup_ino);
        if (u->cgroup_ino == 0)
                u->cgroup_dev = 0;      /* no inode is 0: not known */
        return r;
}

static int lever_to_json(const struct bw_ledger_lever *r, json_t **ret) {
        json_t *o = json_object();

        if (!o || json_object_set_new(o, "original", json_string(r->original)) < 0 ||
            (r->written && json_object_set_new(o, "written", json_string(r->written)) < 0) ||
            (r->weight && json_object_set_new(o, "weight", json_string(r->weight)) < 0)) {
                json_decref(o);
                return -ENOMEM;
        }
        *ret = o;
        return 0;
}

int state_levers_format(const struct bw_state_unit *u, char **ret) {
        json_auto_t *levers = NULL;
        _cleanup_free_ char *text = NULL;

        for (size_t l = 0; l < _BW_LEVER_MAX; l++) {
                const struct bw_ledger_lever *rec = bw_state_unit_lever(u, (enum bw_lever) l);
                json_t *o;

                if (!rec)
                        continue;
                if (!levers && !(levers = json_object()))
                        return -ENOMEM;
                if (lever_to_json(rec, &o) < 0 ||
                    json_object_set_new(levers, bw_lever_to_string((enum bw_lever) l), o) < 0)
                        return -ENOMEM;
        }
        if (!levers)
                return (*ret = strdup("")) ? 0 : -ENOMEM;
        /* Values are what the kernel showed: jansson refuses invalid UTF-8. */
        text = json_dumps(levers, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text)
                return -EINVAL;
        if (asprintf(ret, "\"levers\":%s,", text) < 0)
                return -ENOMEM;
        return 0;
}
