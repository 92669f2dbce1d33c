/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "manager.h"
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

typedef uint64_t (*unit_value_fn)(const Unit *u, bool *ret_ok);

static void family(FILE *f, Manager *m, const char *name, const char *type, const char *help, unit_value_fn fn) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
        for (size_t i = 0; i < m->n_units; i++) {
                const Unit *u = m->units[i];
                bool ok = true;
                uint64_t v = fn(u, &ok);
                if (!ok)
                        continue;
                fprintf(f, "%s{unit=\"", name);
                put_label(f, u->name);
                fprintf(f, "\"} %" PRIu64 "\n", v);
        }
}

#define CG_OK (u->cg != NULL)
static uint64_t v_writes(const Unit *u, bool *ok) { *ok = CG_OK; return CG_OK ? u->cg->stats.writes : 0; }
static uint64_t v_skipped(const Unit *u, bool *ok) { *ok = CG_OK; return CG_OK ? u->cg->stats.skipped : 0; }
static uint64_t v_repairs(const Unit *u, bool *ok) { *ok = CG_OK; return CG_OK ? u->cg->stats.burst_repairs : 0; }
static uint64_t v_external(const Unit *u, bool *ok) { return u->external_changes; }
static uint64_t v_errors(const Unit *u, bool *ok) { return u->write_errors; }
static uint64_t v_applied(const Unit *u, bool *ok) { return u->decisions_applied; }
static uint64_t v_ticks(const Unit *u, bool *ok) { return u->ticks; }
static uint64_t v_present(const Unit *u, bool *ok) { return u->cg != NULL; }
static uint64_t v_paused(const Unit *u, bool *ok) { return u->paused; }
static uint64_t v_credit(const Unit *u, bool *ok) { *ok = u->adopted; return u->pstate.credit.credit_usec; }
static uint64_t v_debt(const Unit *u, bool *ok) { *ok = u->adopted; return u->pstate.credit.debt_usec; }
static uint64_t v_credit_max(const Unit *u, bool *ok) { *ok = u->adopted; return u->params.credit_max_usec; }
#define LAST_OK (u->adopted && u->has_last)
static uint64_t v_headroom(const Unit *u, bool *ok) { *ok = LAST_OK; return u->last.headroom_usec; }
static uint64_t v_headroom_max(const Unit *u, bool *ok) { *ok = LAST_OK; return u->last.headroom_max_usec; }
static uint64_t v_level(const Unit *u, bool *ok) { *ok = LAST_OK; return u->last.level; }
static uint64_t v_earn(const Unit *u, bool *ok) { *ok = LAST_OK; return u->last.earn_rate; }
static uint64_t v_spend(const Unit *u, bool *ok) { *ok = LAST_OK; return u->last.spend_rate; }
static uint64_t v_spend_avg(const Unit *u, bool *ok) { *ok = LAST_OK; return u->last.spend_avg; }
static uint64_t v_tte(const Unit *u, bool *ok) {
        *ok = LAST_OK && u->last.time_to_empty_usec != UINT64_MAX;
        return u->last.time_to_empty_usec;
}
static uint64_t v_active(const Unit *u, bool *ok) { *ok = LAST_OK; return u->last.active; }
static uint64_t v_local_throttled(const Unit *u, bool *ok) {
        *ok = u->has_last_stat && (u->last_stat.seen & BW_CPUSTAT_LOCAL_THROTTLED);
        return u->last_stat.local_throttled_usec;
}
static uint64_t v_throttled(const Unit *u, bool *ok) { *ok = u->has_last_stat; return u->last_stat.throttled_usec; }
static uint64_t v_nr_throttled(const Unit *u, bool *ok) { *ok = u->has_last_stat; return u->last_stat.nr_throttled; }
static uint64_t v_nr_periods(const Unit *u, bool *ok) { *ok = u->has_last_stat; return u->last_stat.nr_periods; }
static uint64_t v_usage(const Unit *u, bool *ok) { *ok = u->has_last_stat && (u->last_stat.seen & BW_CPUSTAT_USAGE); return u->last_stat.usage_usec; }
static uint64_t v_shed(const Unit *u, bool *ok) { return u->shed_permille; }

static const struct bw_bandwidth *current(const Unit *u) {
        return u->has_written ? &u->written : &u->baseline;
}
static uint64_t v_quota(const Unit *u, bool *ok) {
        *ok = u->adopted && current(u)->quota_usec != BW_QUOTA_MAX;
        return current(u)->quota_usec;
}
static uint64_t v_burst(const Unit *u, bool *ok) { *ok = u->adopted; return current(u)->burst_usec; }
static uint64_t v_period(const Unit *u, bool *ok) { *ok = u->adopted; return current(u)->period_usec; }
static uint64_t v_base_quota(const Unit *u, bool *ok) {
        *ok = u->adopted && u->baseline.quota_usec != BW_QUOTA_MAX;
        return u->baseline.quota_usec;
}
static uint64_t v_base_burst(const Unit *u, bool *ok) { *ok = u->adopted; return u->baseline.burst_usec; }

int metrics_write(Manager *m) {
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        FILE *f;
        int fd, r = 0;

        if (asprintf(&path, "%s/metrics.prom", m->runtime_dir) < 0 ||
            asprintf(&tmp, "%s/.metrics.prom.%d", m->runtime_dir, (int) getpid()) < 0)
                return log_oom();

        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return log_debug_errno(errno, "Cannot write %s: %s", tmp, STRERROR(errno));
        f = fdopen(fd, "w");
        if (!f) {
                close(fd);
                return -errno;
        }

        fprintf(f, "# HELP bwgov_ticks_total Control-loop passes over all units.\n"
                   "# TYPE bwgov_ticks_total counter\nbwgov_ticks_total %" PRIu64 "\n", m->ticks);
        fprintf(f, "# HELP bwgov_units Configured units.\n# TYPE bwgov_units gauge\nbwgov_units %zu\n", m->n_units);
        fprintf(f, "# HELP bwgov_reloads_total Configuration reloads (SIGHUP).\n"
                   "# TYPE bwgov_reloads_total counter\nbwgov_reloads_total %" PRIu64 "\n", m->reloads);
        fprintf(f, "# HELP bwgov_state_saves_total Saves of the state file (each rewrites and fsyncs it).\n"
                   "# TYPE bwgov_state_saves_total counter\nbwgov_state_saves_total %" PRIu64 "\n", m->state_saves);
        fprintf(f, "# HELP bwgov_reload_failures_total Reloads rejected (old configuration kept).\n"
                   "# TYPE bwgov_reload_failures_total counter\nbwgov_reload_failures_total %" PRIu64 "\n", m->reload_failures);
        fprintf(f, "# HELP bwgov_host_pressure_some_usec_per_second Host CPU pressure (some) over the last interval.\n"
                   "# TYPE bwgov_host_pressure_some_usec_per_second gauge\nbwgov_host_pressure_some_usec_per_second %" PRIu64 "\n",
                m->host_some_rate);
        fprintf(f, "# HELP bwgov_host_other_usage_usec_per_second CPU used outside the governed groups.\n"
                   "# TYPE bwgov_host_other_usage_usec_per_second gauge\nbwgov_host_other_usage_usec_per_second %" PRIu64 "\n",
                m->host_other_usage);
        fprintf(f, "# HELP bwgov_host_over_limit 1 while the host is over HostPressureLimit= with work outside the "
                   "governed groups.\n# TYPE bwgov_host_over_limit gauge\nbwgov_host_over_limit %d\n",
                m->host_over_limit ? 1 : 0);

        family(f, m, "bwgov_unit_present", "gauge", "1 when the unit's cgroup exists and is governed.", v_present);
        family(f, m, "bwgov_unit_paused", "gauge", "1 when governing is paused for the unit.", v_paused);
        family(f, m, "bwgov_unit_ticks_total", "counter", "Decisions taken for the unit.", v_ticks);
        family(f, m, "bwgov_writes_total", "counter", "Files written (cpu.max, burst).", v_writes);
        family(f, m, "bwgov_skipped_writes_total", "counter", "Writes not done because the value was already there.", v_skipped);
        family(f, m, "bwgov_burst_repairs_total", "counter", "Burst re-written after a quota write changed it (kernels < 6.10).", v_repairs);
        family(f, m, "bwgov_external_changes_total", "counter", "Values found that bwgov did not write (re-based).", v_external);
        family(f, m, "bwgov_write_errors_total", "counter", "Failed writes.", v_errors);
        family(f, m, "bwgov_decisions_applied_total", "counter", "Decisions that changed the kernel's values.", v_applied);
        family(f, m, "bwgov_quota_usec", "gauge", "Current quota per period.", v_quota);
        family(f, m, "bwgov_burst_usec", "gauge", "Current burst.", v_burst);
        family(f, m, "bwgov_period_usec", "gauge", "Current period.", v_period);
        family(f, m, "bwgov_baseline_quota_usec", "gauge", "The contract's quota per period.", v_base_quota);
        family(f, m, "bwgov_baseline_burst_usec", "gauge", "The burst found at adoption.", v_base_burst);
        family(f, m, "bwgov_credit_usec", "gauge", "Credit bucket, CPU-microseconds.", v_credit);
        family(f, m, "bwgov_debt_usec", "gauge", "Usage beyond the credit not yet repaid, CPU-microseconds.", v_debt);
        family(f, m, "bwgov_credit_max_usec", "gauge", "CreditMax=, CPU-microseconds.", v_credit_max);
        family(f, m, "bwgov_credit_earn_usec_per_second", "gauge",
               "Credit earned over the last sample (baseline minus usage), CPU-microseconds per second.", v_earn);
        family(f, m, "bwgov_credit_spend_usec_per_second", "gauge",
               "Credit spent over the last sample (usage minus baseline), CPU-microseconds per second.", v_spend);
        family(f, m, "bwgov_credit_spend_avg_usec_per_second", "gauge",
               "Credit spending averaged over about 10 s, CPU-microseconds per second.", v_spend_avg);
        family(f, m, "bwgov_credit_time_to_empty_usec", "gauge",
               "At the average spending, time until the credit is down to its reserve (absent when not spending).",
               v_tte);
        family(f, m, "bwgov_headroom_usec", "gauge", "Quota above the baseline the last decision set, per period.",
               v_headroom);
        family(f, m, "bwgov_headroom_max_usec", "gauge",
               "The largest headroom now (CPUQuotaMax=, the nearest limited ancestor, host shedding), per period.",
               v_headroom_max);
        family(f, m, "bwgov_headroom_level", "gauge", "Headroom level, 0 (baseline) to 4 (all of the largest).", v_level);
        family(f, m, "bwgov_unit_active", "gauge", "1 while the group spends credit or is throttled (short horizon).",
               v_active);
        family(f, m, "bwgov_throttled_usec_total", "counter", "Kernel throttled time.", v_throttled);
        family(f, m, "bwgov_nr_throttled_total", "counter", "Kernel throttled periods.", v_nr_throttled);
        family(f, m, "bwgov_local_throttled_usec_total", "counter",
               "Kernel throttled time by the group's own or an ancestor's limit (cpu.stat.local).", v_local_throttled);
        family(f, m, "bwgov_nr_periods_total", "counter", "Kernel enforcement periods.", v_nr_periods);
        family(f, m, "bwgov_usage_usec_total", "counter", "CPU time used.", v_usage);
        family(f, m, "bwgov_shed_permille", "gauge", "Share of the unit's headroom the last host shedding plan withdrew.",
               v_shed);

        if (fflush(f) != 0 || ferror(f))
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
