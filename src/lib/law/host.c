/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host protection: when the host is over HostPressureLimit=, and the
 * shedding plan (contracts in include/bwgov/law/host.h). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/law/host.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/util.h"

/* Never withdraw more than half of anyone's headroom per call: repeated
 * calls converge geometrically, one call never resets everything. */
#define SHED_MAX_PERMILLE UINT64_C(500)
#define PERMILLE          UINT64_C(1000)        /* the whole, in the shed shares */

/* /proc/stat's aggregate line starts "cpu " (the per-CPU ones "cpuN "). */
#define STAT_CPU_PREFIX   "cpu "
#define STAT_CPU_NAME_LEN 3                     /* "cpu": the fields start after it */

bool bw_host_over_limit(const struct bw_host_sample *s, bool was_over, uint64_t limit) {
        bool harm = s->governed_excess_rate >= BW_HOST_EXCESS_MIN && s->governed_excess_rate > s->idle_rate;

        if (limit == 0 || s->some_rate <= limit || s->other_usage_rate < BW_HOST_OTHER_USAGE_MIN)
                return false;
        if (was_over)
                return harm || s->idle_rate < BW_HOST_IDLE_MIN;
        return harm && (!s->has_other_behind || s->other_behind_rate > limit);
}

struct shed_order {
        int64_t priority;
        size_t index;
};

static int shed_order_cmp(const void *a, const void *b) {
        const struct shed_order *x = a, *y = b;

        if (x->priority != y->priority)
                return x->priority < y->priority ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

int bw_host_plan_shed(
                const struct bw_shed_unit *units,
                size_t n,
                uint64_t host_pressure_rate,
                uint64_t host_pressure_limit,
                unsigned *ret_shed_permille) {

        _cleanup_free_ struct shed_order *order = NULL;
        uint64_t total = 0, want, frac;

        if (n == 0)
                return 0;
        if (!units || !ret_shed_permille)
                return -EINVAL;

        order = calloc(n, sizeof(*order));
        if (!order)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                ret_shed_permille[i] = 0;
                order[i] = (struct shed_order) { units[i].priority, i };
                total = u64_sat_add(total, units[i].boost_rate);
        }

        if (host_pressure_limit == 0 || host_pressure_rate <= host_pressure_limit || total == 0)
                return 0;

        /* Share of all headroom to withdraw now: proportional to the
         * excess, at most one half. */
        frac = u64_min(u64_muldiv_up(host_pressure_rate - host_pressure_limit, PERMILLE, host_pressure_limit),
                       SHED_MAX_PERMILLE);
        want = u64_muldiv_up(total, frac, PERMILLE);

        qsort(order, n, sizeof(*order), shed_order_cmp);

        /* Fill from the lowest priority up, at most half of each unit. */
        for (size_t i = 0; i < n && want > 0;) {
                uint64_t level = 0, cap;
                unsigned permille;
                size_t j;

                for (j = i; j < n && order[j].priority == order[i].priority; j++)
                        level = u64_sat_add(level, units[order[j].index].boost_rate);

                cap = u64_muldiv(level, SHED_MAX_PERMILLE, PERMILLE);
                if (level == 0)
                        permille = 0;
                else if (want >= cap) {
                        permille = (unsigned) SHED_MAX_PERMILLE;
                        want -= cap;
                } else {
                        permille = (unsigned) u64_min(u64_muldiv_up(want, PERMILLE, level), SHED_MAX_PERMILLE);
                        want = 0;
                }

                for (size_t k = i; k < j; k++)
                        if (units[order[k].index].boost_rate > 0)
                                ret_shed_permille[order[k].index] = permille;
                i = j;
        }

        return 0;
}

static int ticks_to_usec(uint64_t ticks, uint64_t ticks_per_sec, uint64_t *ret) {
        if (ticks > UINT64_MAX / USEC_PER_SEC)
                return -ERANGE;
        *ret = ticks * USEC_PER_SEC / ticks_per_sec;
        return 0;
}

int bw_host_parse_stat(const char *buf, size_t len, uint64_t ticks_per_sec, struct bw_host_cpu *ret) {
        /* Fields after "cpu": user nice system idle iowait irq softirq steal. */
        static const bool busy[8] = { true, true, true, false, false, true, true, true };
        uint64_t sum[2] = { 0, 0 };     /* busy, idle */
        struct bw_host_cpu out;
        size_t i = 0;

        if (!buf || !ret || ticks_per_sec == 0)
                return -EINVAL;
        if (len < strlen(STAT_CPU_PREFIX) || memcmp(buf, STAT_CPU_PREFIX, strlen(STAT_CPU_PREFIX)) != 0)
                return -EINVAL;
        i = STAT_CPU_NAME_LEN;
        for (unsigned f = 0; f < ELEMENTSOF(busy); f++) {
                uint64_t v = 0, *s = &sum[busy[f] ? 0 : 1];
                size_t start;

                while (i < len && buf[i] == ' ')
                        i++;
                start = i;
                while (i < len && buf[i] >= '0' && buf[i] <= '9') {
                        if (v > (UINT64_MAX - (uint64_t) (buf[i] - '0')) / 10)
                                return -ERANGE;
                        v = v * 10 + (uint64_t) (buf[i] - '0');
                        i++;
                }
                if (i == start || (i < len && buf[i] != ' ' && buf[i] != '\n'))
                        return -EINVAL;
                if (*s > UINT64_MAX - v)
                        return -ERANGE;
                *s += v;
        }
        if (ticks_to_usec(sum[0], ticks_per_sec, &out.busy_usec) < 0 ||
            ticks_to_usec(sum[1], ticks_per_sec, &out.idle_usec) < 0)
                return -ERANGE;
        *ret = out;
        return 0;
}
