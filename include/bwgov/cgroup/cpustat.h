/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A cgroup's CPU statistics: the fields of cpu.stat, cpu.stat.local and v1
 * cpuacct.usage, their locale-free parsers, and the growth of the counters
 * between two samples. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fields of a cgroup's CPU statistics, all in microseconds or counts.
 * `seen` is a bitmask of BW_CPUSTAT_* telling which fields the files had;
 * a field whose bit is clear is 0 and must not be used. */
enum {
        BW_CPUSTAT_USAGE           = 1u << 0,
        BW_CPUSTAT_USER            = 1u << 1,   /* user_usec was there: checked, not kept (nothing reads it) */
        BW_CPUSTAT_SYSTEM          = 1u << 2,   /* system_usec: the same */
        BW_CPUSTAT_NR_PERIODS      = 1u << 3,
        BW_CPUSTAT_NR_THROTTLED    = 1u << 4,
        BW_CPUSTAT_THROTTLED       = 1u << 5,
        BW_CPUSTAT_NR_BURSTS       = 1u << 6,
        BW_CPUSTAT_BURST           = 1u << 7,
        BW_CPUSTAT_LOCAL_THROTTLED = 1u << 8,   /* from cpu.stat.local, never from cpu.stat */
};

struct bw_cpu_stat {
        uint64_t usage_usec;
        uint64_t nr_periods;
        uint64_t nr_throttled;
        uint64_t throttled_usec;
        uint64_t nr_bursts;
        uint64_t burst_usec;
        /* cpu.stat.local (kernel >= 6.6): time this group's tasks were
         * throttled, by its own limit or by any ancestor's; throttled_usec
         * above counts throttling by the group's own limit only. */
        uint64_t local_throttled_usec;
        unsigned seen;          /* BW_CPUSTAT_* */
};

/* Parse a cgroup v2 cpu.stat ("key value" lines).
 * Mandatory: usage_usec. nr_periods/nr_throttled/throttled_usec come as a set
 * (present only when the cpu controller is enabled); nr_bursts/burst_usec are
 * optional (kernel >= 5.16) and come as a set after the throttling set.
 * Unknown keys are ignored (their line must still be "KEY VALUE").
 * buf need not be NUL-terminated and is never read past len; the last line may
 * lack its newline. Every line is KEY, one blank, VALUE, each printable ASCII
 * without blanks: an empty line, CR, NUL, tabs and bytes >= 0x80 are malformed.
 * Known values are unsigned decimals (no sign).
 * Returns 0 on success; -EINVAL for a malformed line, a duplicate known key,
 * a number that does not fit uint64_t (never -ERANGE), or a partial throttling
 * or burst set; -ENODATA when usage_usec is missing (also for empty input).
 * Malformed lines are reported before missing data. ret is untouched on
 * failure. */
int bw_cpustat_parse_v2(const char *buf, size_t len, struct bw_cpu_stat *ret);

/* Parse a cgroup v1 cpu controller cpu.stat: nr_periods, nr_throttled,
 * throttled_time (ns), optional nr_bursts and burst_time (ns). Times are
 * converted to µs (truncating). Usage is not part of v1 cpu.stat: `seen` never
 * has BW_CPUSTAT_USAGE. Same error contract as the v2 parser, -ENODATA when
 * one of the three mandatory keys is missing. */
int bw_cpustat_parse_v1(const char *buf, size_t len, struct bw_cpu_stat *ret);

/* Parse v1 cpuacct.usage (one decimal number of ns, optional trailing
 * newline) into µs, truncating. Returns 0 or -EINVAL (garbage, empty, or more
 * than UINT64_MAX). */
int bw_cpuacct_usage_parse(const char *buf, size_t len, uint64_t *ret_usec);

/* Parse a cgroup v2 cpu.stat.local: "throttled_usec N" (µs). Same line rules
 * as bw_cpustat_parse_v2(); unknown keys are ignored.
 * Returns 0 with *ret_usec; -EINVAL for a malformed line, a duplicate
 * throttled_usec or a number that does not fit uint64_t; -ENODATA when
 * throttled_usec is missing (also for empty input: a v2 cgroup without the
 * cpu controller has an empty cpu.stat.local). Malformed lines are reported
 * before missing data. *ret_usec is untouched on failure. */
int bw_cpustat_local_parse_v2(const char *buf, size_t len, uint64_t *ret_usec);

/* Parse a cgroup v1 cpu controller cpu.stat.local: "throttled_time N" (ns),
 * converted to µs (truncating). Same contract as bw_cpustat_local_parse_v2(),
 * -ENODATA when throttled_time is missing. */
int bw_cpustat_local_parse_v1(const char *buf, size_t len, uint64_t *ret_usec);

/* The growth of the counters in `fields` (BW_CPUSTAT_* bits) from prev to
 * cur. *ret gets the deltas of the counters both samples have; its seen is
 * prev->seen & cur->seen & fields, and every other field is 0. Returns 0, or
 * -ERANGE when one of those counters went backwards (the cgroup was
 * recreated), *ret untouched. Counters outside `fields` are not looked at. */
int bw_cpustat_delta(const struct bw_cpu_stat *prev, const struct bw_cpu_stat *cur, unsigned fields,
                     struct bw_cpu_stat *ret);
