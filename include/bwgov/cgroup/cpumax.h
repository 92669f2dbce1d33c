/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The bandwidth triple (quota, period, burst) and the kernel's text for it:
 * ranges, validation, and the parsers and formatters of cpu.max,
 * cpu.max.burst and the v1 cpu.cfs_* files. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kernel limits (kernel/sched/core.c): quota >= 1 ms, 1 ms <= period <= 1 s,
 * 0 <= burst <= quota. */
#define BW_QUOTA_MAX       UINT64_MAX          /* "max": no limit */
#define BW_QUOTA_MIN_USEC  UINT64_C(1000)
#define BW_PERIOD_MIN_USEC UINT64_C(1000)
#define BW_PERIOD_MAX_USEC UINT64_C(1000000)
/* The kernel also rejects quotas whose ratio would overflow; this is the
 * largest quota it accepts (MAX_BW = 2^44 - 1 µs, period-independent; checked
 * on 6.18: 17592186044415 is accepted, 17592186044416 is EINVAL). */
#define BW_QUOTA_LIMIT_USEC ((UINT64_C(1) << 44) - 1)

/* The bandwidth settings of one cgroup, in µs. */
/* 24 bytes, not 32: a unit keeps five of these, its saved entry three and
 * each history entry two (ten thousand units: 1 MB). Initialise it by
 * field name. */
struct bw_bandwidth {
        uint64_t quota_usec;    /* BW_QUOTA_MAX for unlimited */
        uint64_t burst_usec;    /* 0 when has_burst is false */
        uint32_t period_usec;   /* [BW_PERIOD_MIN_USEC, BW_PERIOD_MAX_USEC], 0 where none is known */
        bool has_burst;         /* the kernel has cpu.max.burst / cpu.cfs_burst_us */
};

/* Validate a bandwidth triple against the kernel's ranges.
 * Returns 0 or -EINVAL (NULL, quota < 1 ms, period outside [1 ms, 1 s],
 * burst > quota, burst + quota above BW_QUOTA_LIMIT_USEC, burst set while
 * quota is max (the kernel would accept it, but it means nothing), burst != 0
 * without has_burst, quota above BW_QUOTA_LIMIT_USEC). */
int bw_bandwidth_validate(const struct bw_bandwidth *bw);

/* Whether a and b hold the same quota, period and burst: what a write of a
 * would leave unchanged on b. has_burst is not compared (burst_usec is 0
 * without it), unlike bw_bandwidth_equal() (state.h), which compares the
 * burst only when both have one. */
bool bw_bandwidth_identical(const struct bw_bandwidth *a, const struct bw_bandwidth *b);

/* v2 "QUOTA PERIOD" or "max PERIOD" with optional trailing newline; one
 * space, unsigned decimals, nothing else. buf need not be NUL-terminated.
 * Returns 0, -EINVAL for garbage, -ERANGE for a quota outside
 * [BW_QUOTA_MIN_USEC, BW_QUOTA_LIMIT_USEC] (unless max), a period outside
 * [BW_PERIOD_MIN_USEC, BW_PERIOD_MAX_USEC] or a number that overflows. */
int bw_cpumax_parse(const char *buf, size_t len, uint64_t *ret_quota_usec, uint64_t *ret_period_usec);

/* Format "QUOTA PERIOD\n" / "max PERIOD\n" (NUL-terminated) into buf.
 * Returns the length written (without NUL), -ENOBUFS when it does not fit, or
 * -EINVAL for values bw_cpumax_parse() would reject. buf is untouched on
 * failure. */
int bw_cpumax_format(uint64_t quota_usec, uint64_t period_usec, char *buf, size_t size);

/* A quota for people (logs, explanations): "max" for BW_QUOTA_MAX, else the
 * number of µs. Writes into BUF (at least BW_QUOTA_STRING_MAX bytes) and
 * returns it. */
#define BW_QUOTA_STRING_MAX 21
const char *bw_quota_to_string(uint64_t quota_usec, char buf[static BW_QUOTA_STRING_MAX]);

/* A single unsigned decimal (cpu.max.burst, cpu.cfs_period_us, cpu.cfs_burst_us)
 * with optional trailing newline; no sign, no blanks. No range check.
 * Returns 0, -EINVAL for garbage (also empty), -ERANGE for overflow. */
int bw_u64_parse(const char *buf, size_t len, uint64_t *ret);

/* v1 cpu.cfs_quota_us: "-1" means max (BW_QUOTA_MAX); any other negative
 * is -EINVAL. Returns 0, -EINVAL, or -ERANGE for a quota outside
 * [BW_QUOTA_MIN_USEC, BW_QUOTA_LIMIT_USEC] or overflow. */
int bw_cfs_quota_parse(const char *buf, size_t len, uint64_t *ret_quota_usec);

/* Format helpers: "V\n" and "QUOTA\n" / "-1\n" (what the kernel prints),
 * NUL-terminated. Return the length without NUL or -ENOBUFS;
 * bw_cfs_quota_format() also -EINVAL for a quota out of range. buf is
 * untouched on failure. */
int bw_u64_format(uint64_t v, char *buf, size_t size);
int bw_cfs_quota_format(uint64_t quota_usec, char *buf, size_t size);
