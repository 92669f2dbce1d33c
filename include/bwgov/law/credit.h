/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The credit bucket: the contract on average use, as a balance of CPU time.
 *
 * A group with baseline quota Qb per period P earns Qb/P CPU-µs per µs of
 * wall time and pays for every CPU-µs it uses. The balance is capped at
 * CreditMax= from above and not clamped from below: usage beyond what the
 * balance held (the kernel's pool, a late sample) is a debt that future
 * earnings repay first. A sample says how much was earned and used, not
 * when: the balance nets the two and then caps, so it can stand above what a
 * bucket kept at every instant would hold by what the group earned at a
 * full bucket during one sample, at most one sample's earnings, and that
 * never adds up over samples (the caller holds it in reserve, see
 * policy.c). Because nothing is forgotten, over any window of length t
 *
 *     usage <= Qb/P * t + CreditMax + largest debt,
 *
 * and the control law (policy.c) keeps the largest debt within the contract
 * burst by holding a reserve (bw_credit_reserve()) and by never committing
 * to more extra quota than the balance above that reserve can pay for until
 * the next sample (bw_credit_affordable()).
 *
 * Units: CPU-µs for balances, µs per period for quotas, µs for times. Pure
 * arithmetic, saturating, no I/O. */

#include <stdbool.h>
#include <stdint.h>

struct bw_credit {
        uint64_t credit_usec;   /* balance when positive, [0, max] */
        uint64_t debt_usec;     /* overdraft not yet repaid; credit_usec is 0 while this is > 0 */
};

/* A full or partial bucket: credit = min(credit_usec, max_usec), no debt. */
void bw_credit_init(struct bw_credit *c, uint64_t max_usec, uint64_t credit_usec);

/* Account one sample: earned = Qb/P * dt CPU-µs, used = the usage delta.
 * Earnings repay debt first; the credit never exceeds max_usec (a shrunken
 * CreditMax= clamps it). Netting within the sample: see above. */
void bw_credit_account(struct bw_credit *c, uint64_t max_usec, uint64_t earned_usec, uint64_t used_usec);

/* Balance above a threshold: credit - threshold, 0 when at or below it (or
 * in debt). */
uint64_t bw_credit_above(const struct bw_credit *c, uint64_t threshold_usec);

/* The credit held back while a quota q (µs per period) with burst b is in
 * place, so that at the next sample the group can still be put back to its
 * baseline inside the contract:
 *
 *     R(q) = 2 q + b + Qb + slack
 *
 * (slack: the kernel's per-CPU slack and the accounting uncertainty of one
 * sample, both the caller's to size: see bw_policy_slack_usec().)
 *
 * From a decision to the next sample the group can use what the kernel's
 * pool holds after this decision's write (up to q + b), one refill more than
 * whole periods elapsed (q each), and the per-CPU slack (a runtime slice
 * already handed to a CPU, and tick-granular accounting, by which a CPU
 * overruns its runtime by up to a tick; on 6.18 throttling also waits for
 * the return to user mode); the return to the baseline refills up to Qb more.
 * The extra quota's own cost over the horizon, E * h / P, comes on top (see
 * bw_credit_affordable()). */
uint64_t bw_credit_reserve(uint64_t quota_usec, uint64_t burst_usec, uint64_t baseline_quota_usec,
                           uint64_t slack_usec);

/* The largest extra quota E (µs per period, above the baseline Qb) that the
 * credit pays for when the next sample comes within horizon_usec:
 *
 *     E * horizon / P + R(Qb + E) <= credit,
 *
 * with the burst next to Qb + E fixed at burst_usec (the largest burst set
 * next to any headroom). Not quantized. 0 when even E = 0 does not fit. */
uint64_t bw_credit_affordable(
                const struct bw_credit *c,
                uint64_t period_usec,
                uint64_t baseline_quota_usec,
                uint64_t burst_usec,
                uint64_t slack_usec,
                uint64_t horizon_usec);

/* The credit needed to hold extra quota E for horizon_usec (the left side
 * of the inequality above). */
uint64_t bw_credit_needed(
                uint64_t extra_usec,
                uint64_t period_usec,
                uint64_t baseline_quota_usec,
                uint64_t burst_usec,
                uint64_t slack_usec,
                uint64_t horizon_usec);
