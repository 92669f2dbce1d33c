/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Latency protection's pure part: the ladder of levers a latency unit
 * climbs while it misses its target, the guarantee turned into a weight,
 * and the scaling of guarantees that exceed the host. See latency.h. */

#include <errno.h>
#include <stdlib.h>

#include "bwgov/law/latency.h"
#include "bwgov/cgroup/lever.h"
#include "bwgov/util/parse-util.h"
#include "bwgov/cgroup/slice.h"

#define USEC_PER_CPU           UINT64_C(1000000)
#define GUARANTEE_SHARE_PCT    UINT64_C(80)   /* guarantees may take this much of the host */
#define SLICE_MAX_USEC         UINT64_C(3000)

__extension__ typedef unsigned __int128 u128;

static const char *const level_table[_BW_LAT_MAX] = {
        [BW_LAT_NONE] = "none",
        [BW_LAT_HOLD] = "hold",
        [BW_LAT_WEIGHT] = "weight",
        [BW_LAT_WEIGHT_HIGH] = "weight-high",
        [BW_LAT_SLICE] = "slice",
        [BW_LAT_IDLE] = "idle",
};

BW_DEFINE_STRING_TABLE(bw_lat_level, enum bw_lat_level, level_table, _BW_LAT_MAX, enum bw_lat_level,
                       _BW_LAT_INVALID)

static bool rung_exists(enum bw_lat_level l, const struct bw_lat_caps *c) {
        switch (l) {
        case BW_LAT_HOLD:
                return c->others;
        case BW_LAT_SLICE:
                return c->slice;
        case BW_LAT_IDLE:
                return c->best_effort;
        case BW_LAT_NONE:
        case BW_LAT_WEIGHT:
        case BW_LAT_WEIGHT_HIGH:
                return true;
        case _BW_LAT_MAX:
        default:
                return false;
        }
}

static enum bw_lat_level rung_above(enum bw_lat_level l, const struct bw_lat_caps *c) {
        for (int k = (int) l + 1; k < _BW_LAT_MAX; k++)
                if (rung_exists((enum bw_lat_level) k, c))
                        return (enum bw_lat_level) k;
        return l;
}

static enum bw_lat_level rung_below(enum bw_lat_level l, const struct bw_lat_caps *c) {
        for (int k = (int) l - 1; k > 0; k--)
                if (rung_exists((enum bw_lat_level) k, c))
                        return (enum bw_lat_level) k;
        return BW_LAT_NONE;
}

int bw_lat_step(struct bw_lat_state *s, const struct bw_lat_sample *x, const struct bw_lat_caps *caps) {
        enum bw_lat_level was = s->level;
        bool missed, margin;

        if (s->hold == 0)
                s->hold = BW_LAT_HOLD_MIN;
        /* A rung that went away (no best-effort unit left, say) is left. */
        while (s->level > BW_LAT_NONE && !rung_exists(s->level, caps))
                s->level = rung_below(s->level, caps);

        missed = x->has_waits && x->p99_usec > x->target_usec;
        margin = !x->has_waits || x->p99_usec * 4 <= x->target_usec * 3;
        s->has_last = true;
        s->last_missed = missed;
        s->last_p99_usec = x->has_waits ? x->p99_usec : 0;
        s->n_samples++;
        if (s->down_usec > 0)
                s->down_samples++;

        if (missed) {
                s->n_missed++;
                s->met = 0;
                /* The last step down came too soon: wait longer next time. */
                if (s->down_usec > 0 && s->down_samples <= 2 * s->hold && s->hold < BW_LAT_HOLD_MAX)
                        s->hold *= 2;
                s->down_usec = 0;
                s->level = rung_above(s->level, caps);
                /* Far over: the next rung too, within the same window. */
                if (x->p99_usec > x->target_usec * BW_LAT_FAR)
                        s->level = rung_above(s->level, caps);
                /* What the neighbours did when it was needed: the rung
                 * stays until that is gone (bw_lat_pressure_step()). */
                if (s->level > was && s->demand_mcpu >= BW_LAT_NOISE_MCPU && s->demand_mcpu > s->cause_mcpu)
                        s->cause_mcpu = s->demand_mcpu;
        } else if (margin) {
                /* Met because it is protected from a neighbour still there:
                 * not a reason to step down. */
                if (s->cause_mcpu >= BW_LAT_NOISE_MCPU)
                        s->met = 0;
                else if (++s->met >= s->hold && s->level > BW_LAT_NONE) {
                        s->level = rung_below(s->level, caps);
                        s->met = 0;
                        s->down_usec = x->now_usec > 0 ? x->now_usec : 1;
                        s->down_samples = 0;
                }
        } else
                s->met = 0;

        return s->level > was ? 1 : s->level < was ? -1 : 0;
}

static enum bw_lat_level rung_top(const struct bw_lat_caps *c) {
        return rung_below(_BW_LAT_MAX, c);
}

enum bw_lat_level bw_lat_level_now(const struct bw_lat_state *s, const struct bw_lat_caps *caps) {
        enum bw_lat_level l = s->floor > s->level ? s->floor : s->level;

        return l > BW_LAT_NONE && !rung_exists(l, caps) ? rung_below(l, caps) : l;
}

int bw_lat_pressure_step(struct bw_lat_state *s, const struct bw_lat_pressure *p, const struct bw_lat_caps *caps) {
        enum bw_lat_level was = bw_lat_level_now(s, caps), now;
        uint64_t host = (uint64_t) (p->ncpus > 0 ? p->ncpus : 1) * 1000, total = p->demand_mcpu + p->own_mcpu;

        s->demand_mcpu = p->demand_mcpu;
        if (p->demand_mcpu >= BW_LAT_NOISE_MCPU && total * 1000 >= host * BW_LAT_CONTENDED_PERMILLE) {
                /* The host is full and the neighbours fill it: the top
                 * rung now, not one a window. */
                s->floor = rung_top(caps);
                if (p->demand_mcpu > s->cause_mcpu)
                        s->cause_mcpu = p->demand_mcpu;
                s->calm_usec = 0;
        } else if (s->cause_mcpu >= BW_LAT_NOISE_MCPU) {
                /* Halved, and either down to noise or the host calm: the
                 * unit's own load may keep the host busy (a waking service
                 * under emulation used 1 of 2 CPUs), but it is no neighbour. */
                bool gone = p->demand_mcpu * 2 <= s->cause_mcpu &&
                            (p->demand_mcpu < BW_LAT_NOISE_MCPU || total * 1000 < host * BW_LAT_CALM_PERMILLE);

                if (!gone)
                        s->calm_usec = 0;
                else if (s->calm_usec == 0)
                        s->calm_usec = p->now_usec > 0 ? p->now_usec : 1;
                else if (p->now_usec - s->calm_usec >= BW_LAT_CALM_USEC) {
                        /* The cause is gone: every rung it took, at once. */
                        s->floor = s->level = BW_LAT_NONE;
                        s->cause_mcpu = s->calm_usec = 0;
                        s->met = 0;
                        s->down_usec = 0;
                }
        } else
                s->floor = BW_LAT_NONE;
        now = bw_lat_level_now(s, caps);
        return now > was ? 1 : now < was ? -1 : 0;
}

uint64_t bw_lat_guarantee_weight(uint64_t guarantee, unsigned ncpus, uint64_t others, uint64_t own) {
        uint64_t host = (uint64_t) (ncpus > 0 ? ncpus : 1) * USEC_PER_CPU, w;

        if (guarantee == 0 || others == 0)
                w = own;
        else if (guarantee >= host)
                w = BW_WEIGHT_MAX;
        else    /* w = others * g / (host - g), rounded up */
                w = (uint64_t) (((u128) others * guarantee + (host - guarantee) - 1) /
                                (host - guarantee));
        if (w < own)
                w = own;
        return w > BW_WEIGHT_MAX ? BW_WEIGHT_MAX : w < BW_WEIGHT_MIN ? BW_WEIGHT_MIN : w;
}

uint64_t bw_lat_level_weight(enum bw_lat_level l, uint64_t own, uint64_t gw) {
        uint64_t w;

        if (l < BW_LAT_WEIGHT)
                return own;
        if (l >= BW_LAT_WEIGHT_HIGH)
                w = gw > own * 16 ? gw : own * 16;
        else
                w = gw > 0 ? gw : own * 4;
        if (w < own)
                w = own;
        return w > BW_WEIGHT_MAX ? BW_WEIGHT_MAX : w;
}

uint64_t bw_lat_slice_usec(uint64_t target_usec) {
        uint64_t s = target_usec / 8;

        return s < BW_SLICE_MIN_USEC ? BW_SLICE_MIN_USEC : s > SLICE_MAX_USEC ? SLICE_MAX_USEC : s;
}

static int cmp_priority(const void *a, const void *b, void *userdata) {
        const struct bw_lat_guarantee *g = userdata;
        size_t x = *(const size_t *) a, y = *(const size_t *) b;

        if (g[x].priority != g[y].priority)
                return g[x].priority < g[y].priority ? -1 : 1;
        return (x > y) - (x < y);
}

int bw_lat_scale_guarantees(const struct bw_lat_guarantee *g, size_t n, unsigned ncpus, uint64_t *ret_scaled) {
        uint64_t cap = (uint64_t) (ncpus > 0 ? ncpus : 1) * USEC_PER_CPU * GUARANTEE_SHARE_PCT / 100, sum = 0;
        size_t *order;

        if ((!g || !ret_scaled) && n > 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                ret_scaled[i] = g[i].guarantee;
                sum += g[i].guarantee;
        }
        if (sum <= cap)
                return 0;

        order = calloc(n, sizeof(*order));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                order[i] = i;
        qsort_r(order, n, sizeof(*order), cmp_priority, (void *) g);

        /* Lowest priority first, each down to half, until they fit. */
        for (size_t k = 0; k < n && sum > cap; k++) {
                size_t i = order[k];
                uint64_t half = ret_scaled[i] / 2, cut = ret_scaled[i] - half;

                if (cut > sum - cap)
                        cut = sum - cap;
                ret_scaled[i] -= cut;
                sum -= cut;
        }
        /* Still over: all in proportion. */
        if (sum > cap)
                for (size_t i = 0; i < n; i++)
                        ret_scaled[i] = (uint64_t) ((u128) ret_scaled[i] * cap / sum);
        free(order);
        return 1;
}
