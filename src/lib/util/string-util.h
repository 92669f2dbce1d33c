/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* ASCII string predicates for src/lib's parsers (the configuration, the
 * levers, the ledger, parse-util.c), private to src/lib. Locale-free on purpose: <ctype.h> answers by the locale, and a
 * configuration file must mean the same thing under every LANG. */

#include <stdbool.h>
#include <string.h>

static inline bool ascii_isdigit(char c) {
        return c >= '0' && c <= '9';
}

static inline bool ascii_isalpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool ascii_isspace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static inline char ascii_tolower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

static inline bool ascii_strcaseeq(const char *a, const char *b) {
        for (; *a && *b; a++, b++)
                if (ascii_tolower(*a) != ascii_tolower(*b))
                        return false;
        return *a == *b;
}

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static inline bool isempty(const char *s) {
        return !s || !*s;
}

/* True when S ends in SUFFIX (S == SUFFIX included). */
static inline bool endswith(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* True for a C0 control byte or DEL anywhere in S. */
static inline bool string_has_cc(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

static inline const char *skip_space(const char *s) {
        while (ascii_isspace(*s))
                s++;
        return s;
}

static inline void strip_trailing_space(char *s) {
        size_t n = strlen(s);

        while (n > 0 && ascii_isspace(s[n - 1]))
                s[--n] = '\0';
}

/* *RET = a copy of S, or NULL for NULL. Returns false on ENOMEM. */
static inline bool strdup_or_null(const char *s, char **ret) {
        *ret = s ? strdup(s) : NULL;
        return !s || *ret;
}
