/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics.prom: the Prometheus text rendering of the governor's snapshots
 * (governor.h), written atomically. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/rqstat.h"
#include "log.h"
#include "metrics.h"

/* Label values are unit names: escape backslash, quote and newline as the
 * exposition format requires. */
static void put_label(FILE *f, const char *s) {
        for (; *s; s++) {
                if (*s == '\\' || *s == '"')
                        fputc('\\', f);
                if (*s == '\n') {
                        fputs("\\n", f);
                        continue;
                }
                fputc(*s, f);
        }
}

/* A unit's value of one family; *ret_ok false leaves the unit out (the
 * value does not exist for it). */
typedef uint64_t (*unit_value_fn)(const struct governor_unit *u, bool *ret_ok);

struct family {
        const char *name;
        const char *type;
        unit_value_fn value;
        const char *help;
};

static void write_family(FILE *f, const struct family *fam, const struct governor_unit *units, size_t n_units) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fam->name, fam->help, fam->name, fam->type);
        for (size_t i = 0; i < n_units; i++) {
                const struct governor_unit *u = &units[i];
                bool ok = true;
                uint64_t v = fam->value(u, &ok);
                if (!ok)
                        continue;
                fprintf(f, "%s{unit=\"", fam->name);
                put_label(f, u->summary.name);
                fprintf(f, "\"} %" PRIu64 "\n", v);
        }
}

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

/* One value without labels: HELP, TYPE and the sample. */
static void scalar(FILE *f, const char *name, const char *type, const char *help, uint64_t v) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %" PRIu64 "\n", name, help, name, type, name, v);
}

static void write_host(FILE *f, const struct governor_status *s) {
        scalar(f, "bwgov_ticks_total", "counter", "Control-loop passes over all units.", s->ticks);
        scalar(f, "bwgov_units", "gauge", "Configured units.", s->counts.units);
        scalar(f, "bwgov_reloads_total", "counter", "Configuration reloads (SIGHUP).", s->reloads);
        scalar(f, "bwgov_state_saves_total", "counter", "Saves of the state file (each rewrites and fsyncs it).",
               s->state_saves);
        scalar(f, "bwgov_reload_failures_total", "counter", "Reloads rejected (old configuration kept).",
               s->reload_failures);
        scalar(f, "bwgov_host_pressure_some_usec_per_second", "gauge",
               "Host CPU pressure (some) over the last interval.", s->host_pressure_rate);
        scalar(f, "bwgov_host_other_usage_usec_per_second", "gauge", "CPU used outside the governed groups.",
               s->host_other_usage_rate);
        scalar(f, "bwgov_runqueue_telemetry", "gauge",
               "1 while the run-queue BPF programs are loaded (GetStatus says why not).", s->telemetry ? 1 : 0);
        scalar(f, "bwgov_host_over_limit", "gauge",
               "1 while the host is over HostPressureLimit= with work outside the governed groups.",
               s->host_over_limit ? 1 : 0);
}

/* The per-unit families, in the order the file lists them. */
static const struct family families[] = {
        { "bwgov_unit_present", "gauge", v_present,
          "1 when the unit's cgroup exists and is governed." },
        { "bwgov_unit_paused", "gauge", v_paused,
          "1 when governing is paused for the unit." },
        { "bwgov_unit_ticks_total", "counter", v_ticks,
          "Decisions taken for the unit." },
        { "bwgov_writes_total", "counter", v_writes,
          "Files written (cpu.max, burst)." },
        { "bwgov_skipped_writes_total", "counter", v_skipped,
          "Writes not done because the value was already there." },
        { "bwgov_burst_repairs_total", "counter", v_repairs,
          "Burst re-written after a quota write changed it (kernels < 6.10)." },
        { "bwgov_external_changes_total", "counter", v_external,
          "Values found that bwgov did not write (re-based)." },
        { "bwgov_write_errors_total", "counter", v_errors,
          "Failed writes." },
        { "bwgov_decisions_applied_total", "counter", v_applied,
          "Decisions that changed the kernel's values." },
        { "bwgov_quota_usec", "gauge", v_quota,
          "Current quota per period." },
        { "bwgov_burst_usec", "gauge", v_burst,
          "Current burst." },
        { "bwgov_period_usec", "gauge", v_period,
          "Current period." },
        { "bwgov_baseline_quota_usec", "gauge", v_base_quota,
          "The contract's quota per period." },
        { "bwgov_baseline_burst_usec", "gauge", v_base_burst,
          "The burst found at adoption." },
        { "bwgov_credit_usec", "gauge", v_credit,
          "Credit bucket, CPU-microseconds." },
        { "bwgov_debt_usec", "gauge", v_debt,
          "Usage beyond the credit not yet repaid, CPU-microseconds." },
        { "bwgov_credit_max_usec", "gauge", v_credit_max,
          "CreditMax=, CPU-microseconds." },
        { "bwgov_credit_earn_usec_per_second", "gauge", v_earn,
          "Credit earned over the last sample (baseline minus usage), CPU-microseconds per second." },
        { "bwgov_credit_spend_usec_per_second", "gauge", v_spend,
          "Credit spent over the last sample (usage minus baseline), CPU-microseconds per second." },
        { "bwgov_credit_spend_avg_usec_per_second", "gauge", v_spend_avg,
          "Credit spending averaged over about 10 s, CPU-microseconds per second." },
        { "bwgov_credit_time_to_empty_usec", "gauge", v_tte,
          "At the average spending, time until the credit is down to its reserve (absent when not spending)." },
        { "bwgov_headroom_usec", "gauge", v_headroom,
          "Quota above the baseline the last decision set, per period." },
        { "bwgov_headroom_max_usec", "gauge", v_headroom_max,
          "The largest headroom now (CPUQuotaMax=, the nearest limited ancestor, host shedding), per period." },
        { "bwgov_headroom_level", "gauge", v_level,
          "Headroom level, 0 (baseline) to 4 (all of the largest)." },
        { "bwgov_unit_active", "gauge", v_active,
          "1 while the group spends credit, is throttled, or its run-queue p99 is over TargetWaitP99= "
          "(short horizon)." },
        { "bwgov_throttled_usec_total", "counter", v_throttled,
          "Kernel throttled time." },
        { "bwgov_nr_throttled_total", "counter", v_nr_throttled,
          "Kernel throttled periods." },
        { "bwgov_local_throttled_usec_total", "counter", v_local_throttled,
          "Kernel throttled time by the group's own or an ancestor's limit (cpu.stat.local)." },
        { "bwgov_nr_periods_total", "counter", v_nr_periods,
          "Kernel enforcement periods." },
        { "bwgov_usage_usec_total", "counter", v_usage,
          "CPU time used." },
        { "bwgov_shed_permille", "gauge", v_shed,
          "Share of the unit's headroom the last host shedding plan withdrew." },
        { "bwgov_latency_level", "gauge", v_lat_level,
          "Class=latency: the latency protection rung, 0 (none), 1 hold, 2 weight, 3 weight-high, 4 slice, 5 idle." },
        { "bwgov_latency_wait_p99_usec", "gauge", v_lat_p99,
          "Class=latency: run-queue wait p99 of the latest one-second window, microseconds." },
        { "bwgov_latency_missed_total", "counter", v_lat_missed,
          "Class=latency: windows whose run-queue wait p99 was over LatencyTarget=." },
        { "bwgov_levers_held", "gauge", v_lat_held,
          "Levers bwgov holds on the unit beyond its bandwidth: headroom held for a latency unit, weight, idle, "
          "freezer, cpuset, thread slices." },
};

static void write_units(FILE *f, const struct governor_unit *units, size_t n) {
        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                write_family(f, &families[i], units, n);
}

/* ---- run-queue telemetry: seconds, as Prometheus wants them -------------- */

static void rq_sample(FILE *f, const char *name, const struct governor_unit *u, const char *le, double v) {
        fprintf(f, "%s{unit=\"", name);
        put_label(f, u->summary.name);
        if (le)
                fprintf(f, "\",le=\"%s", le);
        fprintf(f, "\"} %.9g\n", v);
}

/* The wait histogram: the log2 buckets as cumulative "le" buckets. */
static void write_rq_histogram(FILE *f, const struct governor_unit *units, size_t n) {
        static const char name[] = "bwgov_runqueue_wait_seconds";

        fprintf(f, "# HELP %s Run-queue wait of the unit's tasks, from wake-up or preemption until they ran "
                "(BPF, since the cgroup was first counted).\n# TYPE %s histogram\n", name, name);
        for (size_t i = 0; i < n; i++) {
                const struct governor_unit *u = &units[i];
                uint64_t cum = 0;

                if (!u->has_rq)
                        continue;
                for (unsigned slot = 0; slot < BW_RQ_SLOTS; slot++) {
                        uint64_t lo, hi;
                        char le[32];

                        cum += u->rq.wait_slots[slot];
                        bw_rq_slot_range(slot, &lo, &hi);
                        if (hi == UINT64_MAX)
                                snprintf(le, sizeof(le), "+Inf");
                        else
                                snprintf(le, sizeof(le), "%.9g", (double) hi / 1e6);
                        rq_sample(f, "bwgov_runqueue_wait_seconds_bucket", u, le, (double) cum);
                }
                rq_sample(f, "bwgov_runqueue_wait_seconds_sum", u, NULL, (double) u->rq.wait_ns / 1e9);
                rq_sample(f, "bwgov_runqueue_wait_seconds_count", u, NULL, (double) cum);
        }
}

struct rq_family {
        const char *name;
        const char *help;
        double scale;                   /* to seconds; 1 for counts */
        size_t offset;                  /* of the counter in struct bw_rq_counters */
};

static const struct rq_family rq_families[] = {
        { "bwgov_runqueue_throttled_wait_seconds_total",
          "Of the run-queue wait, the part while the group or an ancestor was throttled.",
          1e-9, offsetof(struct bw_rq_counters, throttled_wait_ns) },
        { "bwgov_runqueue_throttles_total",
          "Throttles seen: a runnable task of the group left a CPU throttled.",
          1, offsetof(struct bw_rq_counters, throttles) },
        { "bwgov_runqueue_throttle_seconds_total",
          "Summed duration of those throttles.",
          1e-9, offsetof(struct bw_rq_counters, throttle_ns) },
};

static void write_rq(FILE *f, const struct governor_unit *units, size_t n) {
        write_rq_histogram(f, units, n);
        for (size_t k = 0; k < ELEMENTSOF(rq_families); k++) {
                const struct rq_family *fam = &rq_families[k];

                fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", fam->name, fam->help, fam->name);
                for (size_t i = 0; i < n; i++) {
                        uint64_t v;

                        if (!units[i].has_rq)
                                continue;
                        memcpy(&v, (const char *) &units[i].rq + fam->offset, sizeof(v));
                        rq_sample(f, fam->name, &units[i], NULL, (double) v * fam->scale);
                }
        }
}

/* The text of the whole file, from one status and one unit snapshot. */
static int metrics_render(const Governor *g, FILE *f) {
        _cleanup_free_ struct governor_unit *units = NULL;
        struct governor_status status;
        size_t n;
        int r;

        r = g->ops->get_status(g->userdata, &status);
        if (r < 0)
                return r;
        r = g->ops->list_units(g->userdata, &units, &n);
        if (r < 0)
                return r;
        write_host(f, &status);
        write_units(f, units, n);
        write_rq(f, units, n);
        return 0;
}

int metrics_write(const Governor *g, const char *runtime_dir) {
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        FILE *f;
        int fd, r;

        if (asprintf(&path, "%s/metrics.prom", runtime_dir) < 0 ||
            asprintf(&tmp, "%s/.metrics.prom.%d", runtime_dir, (int) getpid()) < 0)
                return log_oom();

        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return log_debug_errno(errno, "Cannot write %s: %s", tmp, STRERROR(errno));
        f = fdopen(fd, "w");
        if (!f) {
                close(fd);
                return -errno;
        }

        r = metrics_render(g, f);
        if (r == 0 && (fflush(f) != 0 || ferror(f)))
                r = -EIO;
        fclose(f);
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                return log_debug_errno(r, "Cannot replace %s: %s", path, STRERROR(r));
        }
        return 0;
}
