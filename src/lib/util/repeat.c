/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rate-limiting of repeated messages by content (contracts in
 * include/bwgov/util/repeat.h): a small set-associative table of keys. */
#include <errno.h>
#include <stdlib.h>

#include "bwgov/util/repeat.h"

int bw_repeat_init(struct bw_repeat *r) {
        if (!r->slots)
                r->slots = calloc(BW_REPEAT_SLOTS, sizeof(*r->slots));
        return r->slots ? 0 : -ENOMEM;
}

uint64_t bw_repeat_key(const char *text) {
        uint64_t h = 14695981039346656037ULL;

        for (const unsigned char *p = (const unsigned char *) text; *p; p++) {
                h ^= *p;
                h *= 1099511628211ULL;
        }
        return h != 0 ? h : 1;
}

/* The set of a key: FNV-1a's low bits alone spread similar texts (unit
 * names that differ in a digit) unevenly, so mix first (MurmurHash3's
 * finaliser step). */
unsigned bw_repeat_set_of(uint64_t key) {
        key ^= key >> 33;
        key *= 0xff51afd7ed558ccdULL;
        key ^= key >> 33;
        return (unsigned) (key % BW_REPEAT_SETS);
}

bool bw_repeat_check(struct bw_repeat *r, uint64_t key, uint64_t now_usec, uint64_t window_usec,
                     uint32_t *ret_held) {
        struct bw_repeat_slot *set, *victim;

        *ret_held = 0;
        if (bw_repeat_init(r) < 0)
                return true;
        if (key == 0)
                key = 1;
        set = &r->slots[bw_repeat_set_of(key) * BW_REPEAT_WAYS];
        victim = &set[0];
        for (unsigned i = 0; i < BW_REPEAT_WAYS; i++) {
                struct bw_repeat_slot *s = &set[i];

                if (s->key == key) {
                        /* A clock that went back (an injected one) lets it through. */
                        if (now_usec >= s->passed_usec && now_usec - s->passed_usec < window_usec) {
                                if (s->held < UINT32_MAX)
                                        s->held++;
                                return false;
                        }
                        *ret_held = s->held;
                        s->held = 0;
                        s->passed_usec = now_usec;
                        return true;
                }
                if (victim->key != 0 && (s->key == 0 || s->passed_usec < victim->passed_usec))
                        victim = s;
        }
        *victim = (struct bw_repeat_slot) { .key = key, .passed_usec = now_usec };
        return true;
}

void bw_repeat_done(struct bw_repeat *r) {
        free(r->slots);
        r->slots = NULL;
}
