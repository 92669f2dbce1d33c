/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The headroom levels of the control law and what each costs in credit
 * (contracts in include/bwgov/law/headroom.h). */

#include "bwgov/law/headroom.h"
#include "bwgov/util/util.h"

uint64_t bw_headroom_quant_down(uint64_t v) {
        return v / BW_HEADROOM_QUANTUM_USEC * BW_HEADROOM_QUANTUM_USEC;
}

uint64_t bw_headroom_level(const struct bw_headroom *h, unsigned k) {
        return bw_headroom_quant_down(u64_muldiv(h->max_usec, k, BW_HEADROOM_LEVELS));
}

uint64_t bw_headroom_cost(const struct bw_headroom *h, uint64_t extra_usec, uint64_t horizon_usec) {
        return bw_credit_needed(extra_usec, h->period_usec, h->baseline_quota_usec, h->burst_usec, h->slack_usec,
                                horizon_usec);
}

unsigned bw_headroom_affordable(const struct bw_headroom *h, const struct bw_credit *c, uint64_t horizon_usec,
                                bool raise_margin) {
        for (unsigned k = BW_HEADROOM_LEVELS; k > 0; k--) {
                uint64_t need = bw_headroom_cost(h, bw_headroom_level(h, k), horizon_usec);

                if (raise_margin)
                        need = u64_muldiv_up(need, BW_HEADROOM_RAISE_NUM, BW_HEADROOM_RAISE_DEN);
                if (bw_headroom_level(h, k) > 0 && c->debt_usec == 0 && c->credit_usec >= need)
                        return k;
        }
        return 0;
}

unsigned bw_headroom_reachable(const struct bw_headroom *h, uint64_t credit_max_usec) {
        struct bw_credit full = { .credit_usec = credit_max_usec };

        return bw_headroom_affordable(h, &full, h->slow_usec, true);
}

unsigned bw_headroom_way_back(const struct bw_headroom *h, uint64_t credit_max_usec, uint64_t from_usec) {
        unsigned k = bw_headroom_reachable(h, credit_max_usec), half = (k + 1) / 2;

        return bw_headroom_level_at_or_below(h, from_usec) < half ? half : k;
}

unsigned bw_headroom_level_at_or_below(const struct bw_headroom *h, uint64_t extra_usec) {
        for (unsigned k = BW_HEADROOM_LEVELS; k > 0; k--)
                if (bw_headroom_level(h, k) <= extra_usec && bw_headroom_level(h, k) > 0)
                        return k;
        return 0;
}
