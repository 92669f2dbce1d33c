/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Controlled contention, pure: demand from usage samples, the gang slots,
 * the pinning plan and when contention is over (include/bwgov/law/contention.h). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/law/contention.h"
#include "bwgov/util/util.h"

#define USEC_PER_SEC     UINT64_C(1000000)
#define PERMILLE         UINT64_C(1000)
#define WEIGHT_DEFAULT   UINT64_C(100)          /* cpu.weight when the kernel's is not known */

void bw_contention_observe(struct bw_contention_unit *u, uint64_t usage_usec, uint64_t some_usec, uint64_t now_usec) {
        if (u->has_sample && now_usec <= u->last_time_usec)
                return;
        if (u->has_sample && usage_usec >= u->last_usage_usec && !u->frozen) {
                uint64_t dt = now_usec - u->last_time_usec;

                u->demand_rate = u64_muldiv(usage_usec - u->last_usage_usec, USEC_PER_SEC, dt);
                u->starved = some_usec == BW_CONTENTION_NO_PSI || u->last_some_usec == BW_CONTENTION_NO_PSI ||
                             some_usec < u->last_some_usec ||
                             u64_muldiv(some_usec - u->last_some_usec, USEC_PER_SEC, dt) >= BW_CONTENTION_STARVED_MIN;
                u->has_demand = true;
        } else if (u->has_sample && usage_usec < u->last_usage_usec)
                u->has_demand = false;
        u->has_sample = true;
        u->last_usage_usec = usage_usec;
        u->last_some_usec = some_usec;
        u->last_time_usec = now_usec;
}

void bw_contention_forget(struct bw_contention_unit *u) {
        u->has_sample = u->has_demand = u->starved = false;
        u->demand_rate = 0;
        u->last_usage_usec = u->last_time_usec = 0;
}

static uint64_t unit_weight(const struct bw_contention_unit *u) {
        return u->weight > 0 ? u->weight : WEIGHT_DEFAULT;
}

static void release_all(struct bw_contention_unit *units, size_t n) {
        for (size_t i = 0; i < n; i++) {
                units[i].frozen = false;
                units[i].cpu_first = units[i].cpu_count = 0;
        }
}

/* Busy flags, and whether the busy units contend (with the hysteresis of
 * the state they are in). */
static bool update_contended(struct bw_contention_unit *units, size_t n, size_t ncpus, bool was) {
        uint64_t sum = 0, capacity = (uint64_t) ncpus * USEC_PER_SEC;
        size_t busy = 0, starved = 0;

        for (size_t i = 0; i < n; i++) {
                units[i].busy = units[i].has_demand && units[i].demand_rate >= BW_CONTENTION_BUSY_MIN;
                if (units[i].busy) {
                        busy++;
                        starved += units[i].starved;
                        sum = u64_sat_add(sum, units[i].demand_rate);
                }
        }
        if (busy < 2)
                return false;
        return starved >= 2 ||
               sum >= u64_muldiv(capacity, was ? BW_CONTENTION_LEAVE_PERMILLE : BW_CONTENTION_ENTER_PERMILLE, PERMILLE);
}

/* The next busy unit after index i (circular), or i itself when it is the
 * only one; n when none is busy. */
static size_t next_busy(const struct bw_contention_unit *units, size_t n, size_t i) {
        for (size_t k = 1; k <= n; k++) {
                size_t j = (i + k) % n;
                if (units[j].busy)
                        return j;
        }
        return n;
}

/* What a unit would use running alone: its demand, or the whole host when
 * it was starved (or its pressure is unknown). */
static uint64_t unit_want(const struct bw_contention_unit *u, uint64_t capacity) {
        return u->starved ? capacity : u64_min(u->demand_rate, capacity);
}

/* Who runs in the slot led by units[leader]: the leader, then in turn order
 * whoever still fits the CPUs left. */
static void plan_gang_slot(struct bw_contention_unit *units, size_t n, size_t ncpus, size_t leader) {
        uint64_t capacity = (uint64_t) ncpus * USEC_PER_SEC, left;

        for (size_t i = 0; i < n; i++)
                units[i].frozen = units[i].busy;
        units[leader].frozen = false;
        left = capacity - unit_want(&units[leader], capacity);
        for (size_t k = 1; k < n && left > 0; k++) {
                struct bw_contention_unit *u = &units[(leader + k) % n];

                if (!u->busy || unit_want(u, capacity) > left)
                        continue;
                u->frozen = false;
                left -= unit_want(u, capacity);
        }
}

static void plan_gang(struct bw_contention_unit *units, size_t n, size_t ncpus, uint64_t interval_usec,
                      uint64_t now_usec, struct bw_contention_state *st) {
        bool keep = st->has_slot && now_usec < st->slot_end_usec && st->leader < n && units[st->leader].busy;

        if (!keep) {
                /* The first slot goes to the first busy unit; later ones rotate. */
                st->leader = st->has_slot ? next_busy(units, n, st->leader < n ? st->leader : n - 1)
                                          : next_busy(units, n, n - 1);
                st->has_slot = true;
                st->slot_end_usec = now_usec + interval_usec;
        }
        plan_gang_slot(units, n, ncpus, st->leader);
}

struct pin_order {
        uint64_t weight;
        size_t index;
};

/* Heaviest first; equal weights in turn order. */
static int pin_order_cmp(const void *a, const void *b) {
        const struct pin_order *x = a, *y = b;

        if (x->weight != y->weight)
                return x->weight > y->weight ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

/* More busy units than CPUs: one CPU each, heaviest first to the CPU with
 * the least weight so far. */
static int plan_pin_shared(struct bw_contention_unit *units, size_t n, size_t ncpus, size_t busy) {
        _cleanup_free_ struct pin_order *order = calloc(busy, sizeof(*order));
        _cleanup_free_ uint64_t *load = calloc(ncpus, sizeof(*load));
        size_t k = 0;

        if (!order || !load)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (units[i].busy)
                        order[k++] = (struct pin_order) { unit_weight(&units[i]), i };
        qsort(order, busy, sizeof(*order), pin_order_cmp);
        for (size_t j = 0; j < busy; j++) {
                size_t best = 0;

                for (size_t c = 1; c < ncpus; c++)
                        if (load[c] < load[best])
                                best = c;
                load[best] = u64_sat_add(load[best], order[j].weight);
                units[order[j].index].cpu_first = best;
                units[order[j].index].cpu_count = 1;
        }
        return 0;
}

/* As many busy units as CPUs or fewer: weight shares by largest remainder,
 * at least one each, contiguous runs in turn order. */
static int plan_pin_disjoint(struct bw_contention_unit *units, size_t n, size_t ncpus, size_t busy) {
        _cleanup_free_ uint64_t *rem = calloc(n, sizeof(*rem));
        uint64_t total = 0;
        size_t given = 0, first = 0;

        if (!rem)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (units[i].busy)
                        total = u64_sat_add(total, unit_weight(&units[i]));
        for (size_t i = 0; i < n; i++) {
                uint64_t share;

                if (!units[i].busy)
                        continue;
                share = u64_muldiv(ncpus, unit_weight(&units[i]), total);
                rem[i] = (uint64_t) ncpus * unit_weight(&units[i]) % total;
                units[i].cpu_count = share > 0 ? share : 1;
                if (share == 0)
                        rem[i] = 0;     /* raised to one already: no claim on the rest */
                given += units[i].cpu_count;
        }
        /* The minimum of one may have given out more than there is: take
         * back from the largest (the last in turn order on a tie). */
        while (given > ncpus) {
                size_t big = n;

                for (size_t i = 0; i < n; i++)
                        if (units[i].busy && units[i].cpu_count > 1 &&
                            (big == n || units[i].cpu_count >= units[big].cpu_count))
                                big = i;
                units[big].cpu_count--;
                given--;
        }
        /* What is left goes to the largest remainders (the first in turn order on a tie). */
        while (given < ncpus) {
                size_t best = n;

                for (size_t i = 0; i < n; i++)
                        if (units[i].busy && (best == n || rem[i] > rem[best]))
                                best = i;
                units[best].cpu_count++;
                rem[best] = 0;
                given++;
        }
        (void) busy;
        for (size_t i = 0; i < n; i++)
                if (units[i].busy) {
                        units[i].cpu_first = first;
                        first += units[i].cpu_count;
                }
        return 0;
}

int bw_contention_plan(
                enum bw_contention mode,
                struct bw_contention_unit *units,
                size_t n,
                size_t ncpus,
                uint64_t interval_usec,
                uint64_t now_usec,
                struct bw_contention_state *st,
                uint64_t *ret_next_usec) {

        size_t busy = 0;
        int r = 0;

        if (ncpus == 0 || interval_usec == 0 || mode < 0 || mode >= _BW_CONTENTION_MAX || (n > 0 && !units))
                return -EINVAL;

        release_all(units, n);
        st->contended = update_contended(units, n, ncpus, st->contended);
        *ret_next_usec = now_usec + u64_min(interval_usec, BW_CONTENTION_REPLAN_MAX_USEC);
        if (!st->contended || mode == BW_CONTENTION_SHARE) {
                st->has_slot = false;
                return 0;
        }
        if (mode == BW_CONTENTION_GANG) {
                plan_gang(units, n, ncpus, interval_usec, now_usec, st);
                *ret_next_usec = u64_min(st->slot_end_usec, now_usec + BW_CONTENTION_GANG_CHECK_USEC);
                return 0;
        }
        st->has_slot = false;
        for (size_t i = 0; i < n; i++)
                busy += units[i].busy;
        r = busy > ncpus ? plan_pin_shared(units, n, ncpus, busy) : plan_pin_disjoint(units, n, ncpus, busy);
        if (r < 0)
                release_all(units, n);
        return r;
}
