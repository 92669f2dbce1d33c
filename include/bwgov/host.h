/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Host protection, pure: when is the host over HostPressureLimit=, and how
 * much of which unit's headroom to withdraw. The daemon samples the host
 * (PSI some, CPU busy time) and the governed groups (their usage) and
 * asks these functions; it decides nothing itself.
 *
 * Rates are µs per second of wall time (1000000 = one CPU busy, or 100 % of
 * wall time stalled for pressure). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Over the limit: host CPU pressure "some" above limit (µs/s, 0 = never),
 * while work outside the governed groups uses at least
 * BW_HOST_OTHER_USAGE_MIN of CPU (other_usage_rate: the host's busy CPU time
 * less the governed groups' usage, µs/s). PSI cannot tell whose tasks wait:
 * a governed group throttled at its baseline, or one with more runnable
 * threads than CPUs, stalls the host's "some" all by itself, and
 * subtracting the groups' own stall from the host's figure reads zero as
 * soon as a group stalls all the time, even with a starving neighbour
 * beside it. What the brake protects is work outside the governed groups;
 * when there is none, nobody is deprived of the CPU the headroom takes. */
#define BW_HOST_OTHER_USAGE_MIN UINT64_C(50000)         /* 5 % of one CPU: more than bwgovd and a shell */
bool bw_host_over_limit(uint64_t some_rate, uint64_t other_usage_rate, uint64_t limit);

/* Host shedding planner. When the host is over its limit, withdraw part of
 * the headroom, resting or in use: a share of the total proportional to
 * the excess (excess / limit, at most one half per call), taken from the lowest
 * Priority= first, at most half of any unit's headroom per call, equal
 * priorities sharing in proportion to their headroom. Monotone: a larger
 * excess never sheds less from any unit. Never all at once: repeated calls
 * converge geometrically instead of resetting (and then re-raising)
 * everything, which oscillates.
 * ret_shed_permille[i] receives the unit's shed (0..500). limit 0 disables
 * shedding (all 0).
 * Returns 0, -EINVAL (n > 0 with a NULL array), -ENOMEM. */
struct bw_shed_unit {
        int64_t priority;               /* Priority=; lower is shed first */
        uint64_t boost_rate;            /* headroom above the baseline, µs/s (0: at the baseline) */
};
int bw_host_plan_shed(
                const struct bw_shed_unit *units,
                size_t n,
                uint64_t host_pressure_rate,
                uint64_t host_pressure_limit,
                unsigned *ret_shed_permille);

/* The busy CPU time of the host from /proc/stat's aggregate "cpu" line
 * ("cpu  user nice system idle iowait irq softirq steal guest guest_nice",
 * in USER_HZ ticks): user + nice + system + irq + softirq + steal, in µs
 * (guest time is already part of user). buf need not be NUL-terminated;
 * only the first line is read. Returns 0, -EINVAL for a first line that is
 * not a "cpu" line with at least the first eight numbers, -ERANGE on
 * overflow, -EINVAL for ticks_per_sec 0. */
int bw_host_parse_stat(const char *buf, size_t len, uint64_t ticks_per_sec, uint64_t *ret_busy_usec);
