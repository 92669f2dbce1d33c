/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-unit families of metrics.prom and their values (contracts in
 * metrics-families.h). */
#include "bwgov/util/macro.h"
#include "metrics-families.h"

#define FAMILY(name, type, value, help) { name, sizeof(name) - 1, type, value, help }

#define PRESENT (u->summary.present)
#define ADOPTED (u->summary.adopted)
#define LAST_OK (u->summary.adopted && u->has_decision)
#define LAST (u->decision.d)
#define STAT_OK (u->has_stat)
#define CURRENT (u->summary.current)
#define BASELINE (u->summary.baseline)
typedef const struct governor_unit GU;
static uint64_t v_writes(GU *u, bool *ok) { *ok = PRESENT; return u->counters.io.writes; }
static uint64_t v_skipped(GU *u, bool *ok) { *ok = PRESENT; return u->counters.io.skipped; }
static uint64_t v_repairs(GU *u, bool *ok) { *ok = PRESENT; return u->counters.io.burst_repairs; }
static uint64_t v_external(GU *u, bool *ok) { return u->counters.external_changes; }
static uint64_t v_errors(GU *u, bool *ok) { return u->counters.write_errors; }
static uint64_t v_applied(GU *u, bool *ok) { return u->counters.decisions_applied; }
static uint64_t v_ticks(GU *u, bool *ok) { return u->summary.ticks; }
static uint64_t v_present(GU *u, bool *ok) { return PRESENT; }
static uint64_t v_paused(GU *u, bool *ok) { return u->summary.paused; }
static uint64_t v_credit(GU *u, bool *ok) { *ok = ADOPTED; return u->credit.credit_usec; }
static uint64_t v_debt(GU *u, bool *ok) { *ok = ADOPTED; return u->credit.debt_usec; }
static uint64_t v_credit_max(GU *u, bool *ok) { *ok = ADOPTED; return u->credit.credit_max_usec; }
static uint64_t v_headroom(GU *u, bool *ok) { *ok = LAST_OK; return LAST.headroom_usec; }
static uint64_t v_headroom_max(GU *u, bool *ok) { *ok = LAST_OK; return LAST.headroom_max_usec; }
static uint64_t v_level(GU *u, bool *ok) { *ok = LAST_OK; return LAST.level; }
static uint64_t v_earn(GU *u, bool *ok) { *ok = LAST_OK; return LAST.earn_rate; }
static uint64_t v_spend(GU *u, bool *ok) { *ok = LAST_OK; return LAST.spend_rate; }
static uint64_t v_spend_avg(GU *u, bool *ok) { *ok = LAST_OK; return LAST.spend_avg; }
static uint64_t v_tte(GU *u, bool *ok) {
        *ok = LAST_OK && LAST.time_to_empty_usec != UINT64_MAX;
        return LAST.time_to_empty_usec;
}
static uint64_t v_active(GU *u, bool *ok) { *ok = LAST_OK; return LAST.active; }
static uint64_t v_exhausted(GU *u, bool *ok) { *ok = ADOPTED; return u->credit.exhausted; }
static uint64_t v_local_throttled(GU *u, bool *ok) {
        *ok = STAT_OK && (u->stat.seen & BW_CPUSTAT_LOCAL_THROTTLED);
        return u->stat.local_throttled_usec;
}
static uint64_t v_throttled(GU *u, bool *ok) { *ok = STAT_OK; return u->stat.throttled_usec; }
static uint64_t v_nr_throttled(GU *u, bool *ok) { *ok = STAT_OK; return u->stat.nr_throttled; }
static uint64_t v_nr_periods(GU *u, bool *ok) { *ok = STAT_OK; return u->stat.nr_periods; }
static uint64_t v_usage(GU *u, bool *ok) {
        *ok = STAT_OK && (u->stat.seen & BW_CPUSTAT_USAGE);
        return u->stat.usage_usec;
}
static uint64_t v_shed(GU *u, bool *ok) { return u->shed_permille; }

static uint64_t v_lat_level(const struct governor_unit *u, bool *ok) {
        *ok = u->summary.prot.cls == BW_CLASS_LATENCY;
        return (uint64_t) u->summary.prot.level;
}

static uint64_t v_lat_p99(const struct governor_unit *u, bool *ok) {
        *ok = u->summary.prot.cls == BW_CLASS_LATENCY && u->summary.prot.has_p99;
        return u->summary.prot.p99_usec;
}

static uint64_t v_lat_missed(const struct governor_unit *u, bool *ok) {
        *ok = u->summary.prot.cls == BW_CLASS_LATENCY;
        return u->summary.prot.missed;
}

static uint64_t v_lat_changes(const struct governor_unit *u, bool *ok) {
        *ok = u->summary.prot.cls == BW_CLASS_LATENCY;
        return u->summary.prot.changes;
}

static uint64_t v_lat_held(const struct governor_unit *u, bool *ok) {
        const struct governor_protection *p = &u->summary.prot;
        uint64_t n = p->hold ? 1 : 0;

        for (size_t l = 0; l < _BW_LEVER_MAX; l++)
                n += p->levers[l] ? 1 : 0;
        *ok = true;
        return n + (p->slice_usec > 0 ? 1 : 0);
}
static uint64_t v_quota(GU *u, bool *ok) {
        *ok = ADOPTED && CURRENT.quota_usec != BW_QUOTA_MAX;
        return CURRENT.quota_usec;
}
static uint64_t v_burst(GU *u, bool *ok) { *ok = ADOPTED; return CURRENT.burst_usec; }
static uint64_t v_period(GU *u, bool *ok) { *ok = ADOPTED; return CURRENT.period_usec; }
static uint64_t v_base_quota(GU *u, bool *ok) {
        *ok = ADOPTED && BASELINE.quota_usec != BW_QUOTA_MAX;
        return BASELINE.quota_usec;
}
static uint64_t v_base_burst(GU *u, bool *ok) { *ok = ADOPTED; return BASELINE.burst_usec; }

/* The per-unit families, in the order the file lists them. */
const struct metrics_family metrics_families[METRICS_N_FAMILIES] = {
        FAMILY("bwgov_unit_present", "gauge", v_present,
                "1 when the unit's cgroup exists and is governed."),
        FAMILY("bwgov_unit_paused", "gauge", v_paused,
                "1 when governing is paused for the unit."),
        FAMILY("bwgov_unit_ticks_total", "counter", v_ticks,
                "Decisions taken for the unit."),
        FAMILY("bwgov_writes_total", "counter", v_writes,
                "Files written (cpu.max, burst)."),
        FAMILY("bwgov_skipped_writes_total", "counter", v_skipped,
                "Writes not done because the value was already there."),
        FAMILY("bwgov_burst_repairs_total", "counter", v_repairs,
                "Burst re-written after a quota write changed it (kernels < 6.10)."),
        FAMILY("bwgov_external_changes_total", "counter", v_external,
                "Values found that bwgov did not write (re-based)."),
        FAMILY("bwgov_write_errors_total", "counter", v_errors,
                "Failed writes."),
        FAMILY("bwgov_decisions_applied_total", "counter", v_applied,
                "Decisions that changed the kernel's values."),
        FAMILY("bwgov_quota_usec", "gauge", v_quota,
                "Current quota per period."),
        FAMILY("bwgov_burst_usec", "gauge", v_burst,
                "Current burst."),
        FAMILY("bwgov_period_usec", "gauge", v_period,
                "Current period."),
        FAMILY("bwgov_baseline_quota_usec", "gauge", v_base_quota,
                "The contract's quota per period."),
        FAMILY("bwgov_baseline_burst_usec", "gauge", v_base_burst,
                "The burst found at adoption."),
        FAMILY("bwgov_credit_usec", "gauge", v_credit,
                "Credit bucket, CPU-microseconds."),
        FAMILY("bwgov_debt_usec", "gauge", v_debt,
                "Usage beyond the credit not yet repaid, CPU-microseconds."),
        FAMILY("bwgov_credit_max_usec", "gauge", v_credit_max,
                "CreditMax=, CPU-microseconds."),
        FAMILY("bwgov_credit_earn_usec_per_second", "gauge", v_earn,
                "Credit earned over the last sample (baseline minus usage), CPU-microseconds per second."),
        FAMILY("bwgov_credit_spend_usec_per_second", "gauge", v_spend,
                "Credit spent over the last sample (usage minus baseline), CPU-microseconds per second."),
        FAMILY("bwgov_credit_spend_avg_usec_per_second", "gauge", v_spend_avg,
                "Credit spending averaged over about 10 s, CPU-microseconds per second."),
        FAMILY("bwgov_credit_time_to_empty_usec", "gauge", v_tte,
                "At the average spending, time until the credit is down to its reserve (absent when not spending)."),
        FAMILY("bwgov_credit_exhausted", "gauge", v_exhausted,
                "1 while the quota is held at the baseline because the credit is spent (until it pays for "
                "the headroom again)."),
        FAMILY("bwgov_headroom_usec", "gauge", v_headroom,
                "Quota above the baseline the last decision set, per period."),
        FAMILY("bwgov_headroom_max_usec", "gauge", v_headroom_max,
                "The largest headroom now (CPUQuotaMax=, the nearest limited ancestor, host shedding), per period."),
        FAMILY("bwgov_headroom_level", "gauge", v_level,
                "Headroom level, 0 (baseline) to 4 (all of the largest)."),
        FAMILY("bwgov_unit_active", "gauge", v_active,
                "1 while the group spends credit, is throttled, or its run-queue p99 is over TargetWaitP99= "
                "(short horizon)."),
        FAMILY("bwgov_throttled_usec_total", "counter", v_throttled,
                "Kernel throttled time."),
        FAMILY("bwgov_nr_throttled_total", "counter", v_nr_throttled,
                "Kernel throttled periods."),
        FAMILY("bwgov_local_throttled_usec_total", "counter", v_local_throttled,
                "Kernel throttled time by the group's own or an ancestor's limit (cpu.stat.local)."),
        FAMILY("bwgov_nr_periods_total", "counter", v_nr_periods,
                "Kernel enforcement periods."),
        FAMILY("bwgov_usage_usec_total", "counter", v_usage,
                "CPU time used."),
        FAMILY("bwgov_shed_permille", "gauge", v_shed,
                "Share of the unit's headroom the last host shedding plan withdrew."),
        FAMILY("bwgov_latency_level", "gauge", v_lat_level,
                "Class=latency: the latency protection rung, 0 (none), 1 hold, 2 weight, 3 weight-high, 4 slice, "
                "5 idle."),
        FAMILY("bwgov_latency_wait_p99_usec", "gauge", v_lat_p99,
                "Class=latency: run-queue wait p99 of the latest one-second window, microseconds."),
        FAMILY("bwgov_latency_missed_total", "counter", v_lat_missed,
                "Class=latency: windows whose run-queue wait p99 was over LatencyTarget=."),
        FAMILY("bwgov_latency_changes_total", "counter", v_lat_changes,
                "Class=latency: times the latency protection rung changed, up or down."),
        FAMILY("bwgov_levers_held", "gauge", v_lat_held,
                "Levers bwgov holds on the unit beyond its bandwidth: headroom held for a latency unit, weight, idle, "
                "freezer, cpuset, thread slices."),
};

_Static_assert(ELEMENTSOF(metrics_families) == METRICS_N_FAMILIES, "METRICS_N_FAMILIES");
