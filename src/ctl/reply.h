/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reading bwgovd's replies for the human output: typed field accessors that
 * forgive a missing or mistyped field (a newer or older daemon), and the
 * renderings several verbs share (a bandwidth object, a unit's state and
 * credit). */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* printf format of a "show"/"explain" line label, right-aligned. */
#define LABEL "%13s "

/* The string at key, or NULL. */
const char *jstr(json_t *o, const char *key);
/* s, or "?" for NULL. */
const char *strq(const char *s);
/* The boolean at key; false when missing. */
bool jbool(json_t *o, const char *key);
/* Whether key is present and not null. */
bool jhas(json_t *o, const char *key);
/* The integer at key; 0 when missing, negative or not an integer. */
uint64_t ju64(json_t *o, const char *key);
/* A quota at key: BW_QUOTA_MAX when null or missing (the interface's "max"). */
uint64_t jquota(json_t *o, const char *key);

/* A Bandwidth object's quota ("0.50 CPU (50%)", "max") and burst ("10ms";
 * "-" without burst), "-" when bw is not an object. Write into buf
 * (FMT_MAX bytes) and return it. */
char *fmt_bw_quota(char *buf, json_t *bw);
char *fmt_bw_burst(char *buf, json_t *bw);

/* "0.50 CPU (50%), period 100ms, burst 10ms\n"; "-\n" when not an object. */
void print_bandwidth(json_t *bw);

/* The daemon's word for what a unit is doing (see "state" in bwgovctl(1)),
 * "?" when missing; *ret_colour its ANSI colour for tables, or NULL. */
const char *unit_state(json_t *u, const char **ret_colour);

/* CLOCK_REALTIME now, in µs: what a reply's realtime_usec is "ago" from. */
uint64_t now_realtime_usec(void);

/* A unit's credit as "12ms of 1min" ("- of 1min" before the first sample),
 * into buf (FMT_MAX bytes). */
void fmt_credit(char *buf, json_t *u);
