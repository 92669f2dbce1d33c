/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A 64-bit hash to tell "changed since last time" from "the same" without
 * keeping a copy of the old value (the metrics cache's segments, the state
 * file's entries). xxHash64's round and merge: each word moves every bit
 * of the hash. Not for anything an attacker chooses to collide. */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t bw_rotl64(uint64_t x, unsigned r) {
        return (x << r) | (x >> (64 - r));
}

static inline uint64_t bw_hash_word(uint64_t h, uint64_t w) {
        h ^= bw_rotl64(w * 0xC2B2AE3D27D4EB4FULL, 31) * 0x9E3779B185EBCA87ULL;
        return bw_rotl64(h, 27) * 0x9E3779B185EBCA87ULL + 0x85EBCA77C2B2AE63ULL;
}

static inline uint64_t bw_hash_words(uint64_t h, const uint64_t *w, size_t n) {
        for (size_t i = 0; i < n; i++)
                h = bw_hash_word(h, w[i]);
        return h;
}

/* Any n bytes, a word at a time, the last one padded with zeros, and n. */
static inline uint64_t bw_hash_bytes(uint64_t h, const void *p, size_t n) {
        const unsigned char *b = p;
        size_t k;

        for (k = 0; k + sizeof(uint64_t) <= n; k += sizeof(uint64_t)) {
                uint64_t w;

                memcpy(&w, b + k, sizeof(w));
                h = bw_hash_word(h, w);
        }
        if (k < n) {
                uint64_t w = 0;

                memcpy(&w, b + k, n - k);
                h = bw_hash_word(h, w);
        }
        return bw_hash_word(h, n);
}
