# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pure computations on what a run recorded (no I/O): the credit the
contract allows as the harness counts it, the overload figures, and the
host-protection ratios. Timeline rows are those of runner.Sampler:
[t_s, quota_usec or None, period_usec, burst_usec, usage_usec, throttled_usec,
nr_throttled, nr_periods, psi_full_usec]."""

import os
import statistics

# The worst-window contract is checked on windows between 100 ms samples,
# which do not start at period boundaries: a static quota alone shows up to
# one quota above baseline × t on such a window (the part of a period before
# the window may have been idle, the whole quota used inside it). So the
# window check allows one baseline quota more, plus the skew of a row's time
# stamp, taken just before the cgroup's files are read (a few hundred µs at
# up to 2 CPUs), plus what the kernel lets every CPU run beyond the period's
# quota, as the law's reserve counts it (policy.c, SLACK_PER_CPU_USEC, 15 ms):
# the runtime slice a CPU already holds when the period is refilled
# (sched_cfs_bandwidth_slice_us, 5 ms; local runtime has not expired since
# 5.4), the tick by which it overruns before the accounting notices (4 ms at
# Debian's HZ=250, 10 at HZ=100), and a task finishing a system call before
# 6.18's task-based throttling takes it off the CPU. Measured under a static
# 50 ms quota on 2 CPUs: a multi-threaded apache2 up to 59.8 ms in a window,
# xz -T2, throttled in 98 % of its periods for 11 s at a time, up to 77.6 ms
# (issue 29): over one tick per CPU, within the law's slack.
SLACK_PER_CPU_S = 0.015
WINDOW_TOLERANCE_S = 0.005 + SLACK_PER_CPU_S * (os.cpu_count() or 1)


def window_allowance_s(extra, quota_s):
    return None if extra is None else extra + quota_s + WINDOW_TOLERANCE_S


# The new law samples groups that spend credit every ActiveInterval= (default
# 250 ms): a quota cut may land that much after the credit ran out.
ACTIVE_INTERVAL_S = 0.25


def expected_credit(rows, baseline_cpus, credit_max_s):
    """[(t, credit CPU-s)] over the timeline: C(0) = CreditMax (the bucket is
    full at adoption, and the group idles until the first row), then
    C(t + dt) = min(CreditMax, C(t) + baseline·dt − usage(dt)), with no lower
    clamp: a negative value is CPU used beyond what the contract funds."""
    out = []
    c = credit_max_s
    prev = None
    for r in rows:
        if prev is not None:
            dt = r[0] - prev[0]
            used = (r[4] - prev[4]) / 1e6
            c = min(credit_max_s, c + baseline_cpus * dt - used)
        out.append((r[0], c))
        prev = r
    return out


def overload_analysis(rows, quota_usec, period_usec, credit_max_s, burst_s, active_interval_s=ACTIVE_INTERVAL_S,
                      slack_s=0.0):
    """The figures of the overload scenario from its timeline:

    back_s            first sample at exactly the baseline quota after the quota
                      had been above it (None: never back, or never above)
    credit_at_back_s  the harness credit then (>= 0: cut before the credit was
                      overdrawn)
    overdrawn_s       first sample with the harness credit below 0 (None: never)
    min_credit_s      the lowest harness credit (the largest debt; the contract
                      needs it >= -burst)
    rose_again        the quota went above the baseline again after back_s
    cut_in_time       back at the baseline before the credit was overdrawn, or
                      within one ActiveInterval= of it, and never above again
                      (True also when the quota never went above the baseline)
    debt_within_burst min_credit_s >= -(burst_s + slack_s): the lowest credit is
                      CreditMax minus the worst window's excess, so slack_s is
                      the window check's allowance for period alignment
    """
    base_cpus = quota_usec / period_usec
    cred = expected_credit(rows, base_cpus, credit_max_s)
    above_seen = False
    back = credit_at_back = None
    rose_again = False
    max_q = None
    for r, (t, c) in zip(rows, cred):
        q = r[1]
        above = q is None or q > quota_usec
        if q is not None:
            max_q = q if max_q is None else max(max_q, q)
        if back is None:
            if above:
                above_seen = True
            elif above_seen and q == quota_usec:
                back, credit_at_back = t, c
        elif above:
            rose_again = True
    overdrawn = next((t for t, c in cred if c < 0), None)
    min_credit = min((c for _, c in cred), default=None)
    if not above_seen:
        cut = True
    elif back is None:
        cut = False
    else:
        cut = ((credit_at_back >= 0 or (overdrawn is not None and back <= overdrawn + active_interval_s))
               and not rose_again)
    return {
        "back_s": back, "credit_at_back_s": credit_at_back, "overdrawn_s": overdrawn,
        "min_credit_s": min_credit, "debt_s": max(0.0, -min_credit) if min_credit is not None else None,
        "rose_again": rose_again, "quota_ever_above": above_seen,
        "max_quota_cpus": max_q / period_usec if max_q is not None else None,
        "cut_in_time": cut,
        "debt_allowed_s": burst_s + slack_s,
        "debt_within_burst": None if min_credit is None else min_credit >= -(burst_s + slack_s) - 1e-9,
        "credit_series": [[round(t, 3), round(c, 4)] for t, c in cred],
    }


def host_protect_ratios(records, scenario="host-protect", governed="bwgovd-elastic", ref="static"):
    """Per repetition: the antagonist's CPU in the hog window under the
    governor over the same under static quotas (runs of one repetition run
    back to back), and the median ratio. Returns {"per_rep": [{rep,
    governed_cpu_s, static_cpu_s, ratio}], "median": ratio or None}."""
    by = {}
    for r in records:
        if r.get("scenario") != scenario or not r.get("ok"):
            continue
        if r.get("config") in (governed, ref):
            by.setdefault(r["rep"], {})[r["config"]] = r.get("metric")
    per = []
    for rep in sorted(by):
        g, s = by[rep].get(governed), by[rep].get(ref)
        ratio = g / s if g is not None and s else None
        per.append({"rep": rep, "governed_cpu_s": g, "static_cpu_s": s, "ratio": ratio})
    ratios = [p["ratio"] for p in per if p["ratio"] is not None]
    return {"per_rep": per, "median": statistics.median(ratios) if ratios else None}
