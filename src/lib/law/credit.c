/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The credit bucket: earn, pay, debt, the reserve and what the balance
 * affords (contracts in include/bwgov/law/credit.h). */

#include "bwgov/law/credit.h"
#include "bwgov/util/util.h"

void bw_credit_init(struct bw_credit *c, uint64_t max_usec, uint64_t credit_usec) {
        *c = (struct bw_credit) {
                .credit_usec = u64_min(credit_usec, max_usec),
        };
}

void bw_credit_account(struct bw_credit *c, uint64_t max_usec, uint64_t earned_usec, uint64_t used_usec) {
        /* A shrunken CreditMax= (reload) clamps first. */
        c->credit_usec = u64_min(c->credit_usec, max_usec);

        if (earned_usec >= used_usec) {
                uint64_t gain = earned_usec - used_usec, repay = u64_min(gain, c->debt_usec);

                c->debt_usec -= repay;
                c->credit_usec = u64_min(u64_sat_add(c->credit_usec, gain - repay), max_usec);
        } else {
                uint64_t loss = used_usec - earned_usec, pay = u64_min(loss, c->credit_usec);

                c->credit_usec -= pay;
                c->debt_usec = u64_sat_add(c->debt_usec, loss - pay);
        }
}

uint64_t bw_credit_above(const struct bw_credit *c, uint64_t threshold_usec) {
        if (c->debt_usec > 0 || c->credit_usec <= threshold_usec)
                return 0;
        return c->credit_usec - threshold_usec;
}

uint64_t bw_credit_reserve(uint64_t quota_usec, uint64_t burst_usec, uint64_t baseline_quota_usec,
                           uint64_t slack_usec) {
        return u64_sat_add(u64_sat_add(u64_sat_add(quota_usec, quota_usec), burst_usec),
                           u64_sat_add(baseline_quota_usec, slack_usec));
}

uint64_t bw_credit_needed(
                uint64_t extra_usec,
                uint64_t period_usec,
                uint64_t baseline_quota_usec,
                uint64_t burst_usec,
                uint64_t slack_usec,
                uint64_t horizon_usec) {

        uint64_t q = u64_sat_add(baseline_quota_usec, extra_usec);

        return u64_sat_add(u64_muldiv_up(extra_usec, horizon_usec, period_usec),
                           bw_credit_reserve(q, burst_usec, baseline_quota_usec, slack_usec));
}

uint64_t bw_credit_affordable(
                const struct bw_credit *c,
                uint64_t period_usec,
                uint64_t baseline_quota_usec,
                uint64_t burst_usec,
                uint64_t slack_usec,
                uint64_t horizon_usec) {

        uint64_t base = bw_credit_reserve(baseline_quota_usec, burst_usec, baseline_quota_usec, slack_usec);
        uint64_t spare = bw_credit_above(c, base), e;

        if (spare == 0 || period_usec == 0)
                return 0;
        /* E * h / P + 2 E <= spare  =>  E <= spare * P / (h + 2 P). */
        e = u64_muldiv(spare, period_usec, u64_sat_add(horizon_usec, 2 * period_usec));
        /* Rounding: step down until the exact inequality holds. */
        while (e > 0 && bw_credit_needed(e, period_usec, baseline_quota_usec, burst_usec, slack_usec,
                                         horizon_usec) > c->credit_usec)
                e--;
        return e;
}
