/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Value parsers and formatters in systemd's style: time spans, percentages,
 * booleans, integers, cgroup paths and string tables. Pure functions of their
 * input: locale free, no I/O, no allocation except where a result is a new
 * string. The configuration loader uses them; the CLI and tests may too.
 *
 * Unless said otherwise, a parser takes the value without blanks around it
 * (the loader strips them), returns 0, -EINVAL (malformed, also NULL or
 * empty) or -ERANGE (overflow, outside the stated range, or a leading '-'
 * where the result is unsigned), and leaves *ret untouched on failure. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BW_PERCENT_UNIT     UINT64_C(10000)         /* µs/s per 1% */
#define BW_CGROUP_PATH_MAX  4096                    /* Cgroup= length limit, PATH_MAX */

int bw_parse_percent_cpu(const char *s, uint64_t *ret);      /* "250%", "12.5%" (at most 3 decimals) -> µs/s; > 0 */
int bw_parse_percent_ratio(const char *s, uint64_t *ret);    /* "5%", "0.5%" (at most 3 decimals) -> µs/s;
                                                              * [0, 100%] */
/* "100ms", "1.5s", "5000us", "2min", "1h", "1s 500ms", "1min30s"; units us,
 * usec, ms, msec, s, sec, m, min, h, hr; a bare number means seconds;
 * fractions below 1 µs are truncated. Blanks between parts, and around the
 * whole, are allowed. */
int bw_parse_timespan(const char *s, uint64_t *ret_usec);
int bw_parse_boolean(const char *s, bool *ret);              /* yes/no/true/false/on/off/y/n/t/f/1/0,
                                                              * ASCII case-insensitive */
int bw_parse_int_range(const char *s, int64_t min, int64_t max, int64_t *ret); /* decimal, optional '-';
                                                                                * -ERANGE outside [min, max] */

/* The run of decimal digits at *P (at least one, no sign) into *RET, and *P
 * moved past it. Returns 0, -EINVAL when *P does not start with a digit, or
 * -ERANGE when the number does not fit 64 bits; *P and *RET untouched on
 * failure. For parsers of longer strings (version numbers, time spans). */
int bw_parse_digits(const char **p, uint64_t *ret);

/* Cgroup= "/machine.slice/foo.scope" or "machine.slice/foo.scope" -> a new
 * string "machine.slice/foo.scope": one optional leading and one optional
 * trailing '/' are dropped. Returns 0, -EINVAL for an empty path, empty, "."
 * or ".." components, or control characters, -ERANGE for more than
 * BW_CGROUP_PATH_MAX characters, -ENOMEM. */
int bw_parse_cgroup_path(const char *s, char **ret);

/* The index of S in TABLE[0..N) (NULL entries never match), or -EINVAL when
 * S is NULL or not there. Case-sensitive. */
int bw_string_table_lookup(const char *const *table, size_t n, const char *s);

/* Define NAME_to_string(TYPE v) over TABLE[0..MAX): TABLE[v], or NULL when v
 * is out of range. */
#define BW_DEFINE_STRING_TABLE_TO_STRING(name, type, table, max)        \
        const char *name##_to_string(type v) {                          \
                if ((unsigned) v >= (unsigned) (max))                   \
                        return NULL;                                    \
                return (table)[v];                                      \
        }

/* Define NAME_to_string() as above and RET_TYPE NAME_from_string(const char
 * *s): the index of S in TABLE, or INVALID for NULL or an unknown name. */
#define BW_DEFINE_STRING_TABLE(name, type, table, max, ret_type, invalid) \
        BW_DEFINE_STRING_TABLE_TO_STRING(name, type, table, max)        \
        ret_type name##_from_string(const char *s) {                    \
                int i = bw_string_table_lookup((table), (max), s);      \
                                                                        \
                return i < 0 ? (invalid) : (ret_type) i;                \
        }

/* Format a µs/s amount as a percentage ("250%", "12.5%", "0.001%") into buf.
 * Returns the length (without NUL) or -ENOBUFS; buf untouched on failure. */
int bw_format_percent(uint64_t usec_per_sec, char *buf, size_t size);
