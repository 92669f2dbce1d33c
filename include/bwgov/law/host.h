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

/* What the host sample says, averaged over about a second (rates in µs/s):
 * host CPU pressure "some", the CPU used outside the governed groups, the
 * governed groups' use above their baselines (each outermost group's usage
 * rate less its baseline, not below 0, summed: the headroom actually in
 * use), and the host's idle CPU (all CPUs less the busy time). */
struct bw_host_sample {
        uint64_t some_rate;
        uint64_t other_usage_rate;
        uint64_t governed_excess_rate;
        uint64_t idle_rate;
        /* The CPU time that ran governed work while tasks outside the
         * governed groups waited for that CPU (each CPU's time once, however
         * many waited: at most 1000000 per CPU), when the run-queue
         * telemetry counts it (has_other_behind): the others' wait the
         * governed groups cause, not the one they make each other. */
        bool has_other_behind;
        uint64_t other_behind_rate;
};

/* Over the limit, i.e. the governed groups harm the rest of the host: its
 * CPU pressure "some" is above limit (0 = never), work outside the governed
 * groups uses at least BW_HOST_OTHER_USAGE_MIN of CPU, and either the
 * governed groups use at least BW_HOST_EXCESS_MIN above their baselines and
 * more than the host left idle (headroom served from idle CPU deprived
 * nobody), or the host was over its limit at the last sample (was_over) and
 * is still saturated (less than BW_HOST_IDLE_MIN idle): the groups whose
 * headroom was withdrawn are at their baselines then, their excess is gone,
 * and giving the headroom back would only take the CPU from the waiting
 * others again.
 *
 * Pressure alone says too little. PSI cannot tell whose tasks wait: a
 * governed group with more runnable threads than CPUs stalls the host's
 * "some" all by itself, other processes stall each other, and subtracting
 * the groups' own stall from the host's figure reads zero as soon as a
 * group stalls all the time, even with a starving neighbour beside it. What
 * the brake protects is work outside the governed groups, from the CPU the
 * headroom takes: when nobody else runs, when no group is above its
 * baseline, or when the CPU it uses above its baseline was idle anyway,
 * withdrawing headroom helps nobody (it only throttles a group inside its
 * contract while the others wait as much as before).
 *
 * Where the others' wait is known (has_other_behind), a brake that is off
 * also needs the governed groups to keep them waiting more than the limit
 * (other_behind_rate): using 5 % of a CPU says someone is there, not that
 * the headroom keeps them waiting (the short wake-ups of a few daemons
 * beside a build that fills the host wait 0.02 to 0.17 s/s in all, and
 * 0.01 to 0.04 with the CPUs mostly idle). Only the part of the wait spent
 * behind governed work counts: eight processes of a cron job on two CPUs
 * wait 2 to 3.5 s/s for each other whoever else runs, and once braked a
 * server beside them for it. Once on, the brake holds on the usage alone:
 * the wait it ends is no reason to give the headroom back. */
#define BW_HOST_OTHER_USAGE_MIN UINT64_C(50000)         /* 5 % of one CPU: more than bwgovd and a shell */
#define BW_HOST_EXCESS_MIN      UINT64_C(50000)         /* 5 % of one CPU above the baselines */
#define BW_HOST_IDLE_MIN        UINT64_C(100000)        /* less idle than 10 % of one CPU: saturated */
bool bw_host_over_limit(const struct bw_host_sample *s, bool was_over, uint64_t limit);

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

/* The busy and the idle CPU time of the host from /proc/stat's aggregate
 * "cpu" line ("cpu  user nice system idle iowait irq softirq steal guest
 * guest_nice", in USER_HZ ticks): busy = user + nice + system + irq + softirq
 * + steal (guest time is already part of user), idle = idle + iowait, in µs.
 * buf need not be NUL-terminated; only the first line is read. Returns 0,
 * -EINVAL for a first line that is not a "cpu" line with at least the first
 * eight numbers, -ERANGE on overflow, -EINVAL for ticks_per_sec 0; ret is
 * untouched on failure. */
struct bw_host_cpu {
        uint64_t busy_usec;
        uint64_t idle_usec;
};
int bw_host_parse_stat(const char *buf, size_t len, uint64_t ticks_per_sec, struct bw_host_cpu *ret);
