/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host sample (pressure, the CPU used outside the governed groups, the
 * brake) and the shedding plan, every ActiveInterval= (manager.c's host
 * timer). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "bwgov/law/host.h"
#include "bwgov/cgroup/psi.h"
#include "bwgov/util/util.h"
#include "clock.h"
#include "log.h"
#include "manager-types.h"
#include "unit/unit-state.h"
#include "manager-host.h"
#include "unit/unit-sample.h"
#include "manager-shared.h"

/* The CPU used outside the governed groups is averaged over about this
 * long: the governed groups' samples and the host's come at different
 * times, so one difference of the two is noisy. */
#define HOST_OTHER_TAU_USEC (1 * USEC_PER_SEC)

/* /proc/pressure/cpu is two lines; of /proc/stat only the first,
 * aggregate line is used (a read of its first 4 KiB has it whole). */
#define HOST_FILE_MAX_BYTES 4096

/* A host file through a descriptor held open: pread at offset 0 (a /proc
 * file opened afresh four times a second costs more than its read); opened
 * again once after a failed read. Returns 0 with buf NUL-terminated, or
 * -errno. */
static int host_read(int *fd, const char *path, char *buf, size_t size, size_t *ret_len) {
        ssize_t n;

        for (unsigned attempt = 0; attempt < 2; attempt++) {
                if (*fd < 0) {
                        *fd = open(path, O_RDONLY|O_CLOEXEC|O_NOCTTY);
                        if (*fd < 0)
                                return -errno;
                }
                n = pread(*fd, buf, size - 1, 0);
                if (n >= 0) {
                        buf[n] = '\0';
                        *ret_len = (size_t) n;
                        return 0;
                }
                close(*fd);
                *fd = -1;
        }
        return -EIO;
}

/* CPU time the outermost governed groups have used by `now`: with `fresh`,
 * each active one's counter read now (unit_usage_now(), one file each);
 * otherwise, or when that read fails, its counter at its last sample
 * carried forward at its last rate (their samples come at their own times,
 * the host's at its own). Carried forward, a group whose use has just
 * climbed counts short until its next sample, and /proc/stat's busy time
 * has grown already: the difference would read as work outside the
 * groups, enough to brake a build that filled the host beside nobody.
 *
 * Also their use above their baselines, µs/s: each group's usage rate
 * less its baseline rate, not below 0 (a group under its baseline takes
 * nothing from anyone), summed. With `fresh`, each rate is the one since
 * the host's own last reading of the group, if the host's last sample took
 * it, else since the law's last sample of it; otherwise, the rate of its
 * last sample. A group that climbed just after its own sample would count
 * nothing above its baseline for up to Interval= (a second by default)
 * while it takes the CPU from the others, and the brake would wait that
 * long. */
static uint64_t manager_governed_usage(Manager *m, uint64_t now, bool fresh, uint64_t *ret_excess_rate) {
        uint64_t sum = 0, excess = 0;

        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];
                uint64_t v, f, rate;

                /* Parked: still, its usage noted when it parked (and its
                 * rate 0): one cache line of it, not six. */
                if (u->sampler.parked) {
                        sum = u64_sat_add(sum, u->sampler.parked_usage_usec);
                        continue;
                }
                if (!u->cg || !u->place.outermost || !u->prev.has || !u->sampler.has_last_stat ||
                    !(u->sampler.last_stat.seen & BW_CPUSTAT_USAGE))
                        continue;
                v = u->sampler.last_stat.usage_usec;
                rate = u->prev.decision.usage_rate;
                if (fresh && unit_usage_now(u, now, m->has_host ? m->host_busy_time_usec : 0, &f, &rate) >= 0)
                        v = f;
                else if (now > u->pstate.prev_now_usec)
                        v += u64_muldiv(u->prev.decision.usage_rate, now - u->pstate.prev_now_usec, USEC_PER_SEC);
                sum = u64_sat_add(sum, v);
                if (u->baseline.quota_usec != BW_QUOTA_MAX && u->baseline.period_usec > 0) {
                        uint64_t base = u64_muldiv(u->baseline.quota_usec, USEC_PER_SEC, u->baseline.period_usec);

                        if (rate > base)
                                excess = u64_sat_add(excess, rate - base);
                }
        }
        *ret_excess_rate = excess;
        return sum;
}

/* x moved towards v by w/HOST_OTHER_TAU_USEC (an average over about that long). */
static void host_average(int64_t *x, int64_t v, int64_t w) {
        *x += (v - *x) * w / (int64_t) HOST_OTHER_TAU_USEC;
}

/* How long the tasks outside the governed groups waited for a CPU since
 * the last host sample, dt ago, µs/s, and of that the CPU time that ran
 * governed work while they waited (*ret_behind; rqstat_read_others()).
 * *ret_known is false when the telemetry does not count it (none, or a
 * kernel without sched_info); the rates are UINT64_MAX also when there is
 * no earlier reading or the programs were loaded again since (their
 * counters start from 0), and the averages keep their values over such a
 * sample. */
static uint64_t host_others_wait_rate(Manager *m, uint64_t dt, uint64_t *ret_behind, bool *ret_known) {
        struct bw_rq_others o;
        uint64_t rate = UINT64_MAX;
        unsigned loads;

        *ret_known = false;
        *ret_behind = UINT64_MAX;
        if (!m->rqstat || rqstat_read_others(m->rqstat, &o) < 0) {
                m->has_host_wait = false;
                return UINT64_MAX;
        }
        *ret_known = true;
        loads = rqstat_loads(m->rqstat);
        if (m->has_host_wait && loads == m->host_wait_loads && o.wait_ns >= m->host_wait_ns &&
            o.behind_ns >= m->host_behind_ns && dt > 0) {
                rate = u64_muldiv(o.wait_ns - m->host_wait_ns, USEC_PER_SEC / 1000, dt);
                *ret_behind = u64_muldiv(o.behind_ns - m->host_behind_ns, USEC_PER_SEC / 1000, dt);
        }
        m->has_host_wait = true;
        m->host_wait_ns = o.wait_ns;
        m->host_behind_ns = o.behind_ns;
        m->host_wait_loads = loads;
        return rate;
}

/* Host CPU pressure, the CPU used outside the governed groups, the governed
 * groups' use above their baselines and the idle CPU since the last host
 * sample, and whether the governed groups harm the rest of the host, i.e.
 * whether it is over HostPressureLimit= (bw_host_over_limit()). The rates are
 * averaged over about HOST_OTHER_TAU_USEC: governed samples and host samples
 * come at different times, and a single difference of the two is noisy. They
 * count only when the pressure is over the limit: while the pressure is
 * below half of it (and the brake is off), they (/proc/stat and a pass over
 * every unit) are taken once per Interval=, not every ActiveInterval=; the
 * sample whose pressure crosses half the limit takes them at once, over the
 * time since the last one. */
void manager_sample_host(Manager *m) {
        uint64_t now, dt, governed, excess, wait, behind, limit = m->config.global.host_pressure_limit;
        struct bw_host_cpu cpu = { 0, 0 };
        bool has_busy = false, fresh, wait_known;
        char buf[HOST_FILE_MAX_BYTES];
        struct bw_host_sample hs;
        struct bw_psi psi;
        size_t n;

        if (host_read(&m->host_pressure_fd, m->host_pressure_path, buf, sizeof(buf), &n) < 0 || n == 0 ||
            bw_psi_parse(buf, n, &psi) < 0)
                return;
        now = clock_now_usec(CLOCK_MONOTONIC);
        if (m->has_host)
                (void) bw_psi_rate(m->host_total_usec, m->host_time_usec, psi.some.total_usec, now,
                                   &m->host_some_rate);
        m->host_total_usec = psi.some.total_usec;
        m->host_time_usec = now;

        if (m->has_host && !m->host_over_limit && m->host_some_rate < limit / 2 &&
            now - m->host_busy_time_usec + host_interval(m) / 2 < m->config.global.interval_usec)
                return;

        /* Only the aggregate "cpu" line, the first one. */
        if (host_read(&m->host_stat_fd, m->host_stat_path, buf, sizeof(buf), &n) >= 0 && n > 0 &&
            bw_host_parse_stat(buf, n, (uint64_t) sysconf(_SC_CLK_TCK), &cpu) >= 0)
                has_busy = true;
        /* Read the active groups' usage now only where it can matter:
         * near or over the limit (the sample that crosses half of it has
         * the carried-forward figure of a calm host before it, which a
         * climb only makes too small, never too large). */
        fresh = limit > 0 && (m->host_over_limit || m->host_some_rate >= limit / 2);
        governed = manager_governed_usage(m, now, fresh, &excess);
        dt = m->has_host && now > m->host_busy_time_usec ? now - m->host_busy_time_usec : 0;
        if (dt > 0 && has_busy && m->has_host_busy && cpu.busy_usec >= m->host_busy_usec &&
            cpu.idle_usec >= m->host_idle_usec && m->host_units_generation == m->units_generation) {
                int64_t busy_delta = (int64_t) (cpu.busy_usec - m->host_busy_usec);
                int64_t governed_delta = (int64_t) governed - (int64_t) m->host_governed_usec;
                int64_t other = (busy_delta - governed_delta) * (int64_t) USEC_PER_SEC / (int64_t) dt;
                int64_t w = (int64_t) u64_min(dt, HOST_OTHER_TAU_USEC);
                int64_t idle = (int64_t) u64_muldiv(cpu.idle_usec - m->host_idle_usec, USEC_PER_SEC, dt);

                m->host_busy_rate = (cpu.busy_usec - m->host_busy_usec) * USEC_PER_SEC / dt;
                if (!m->host_averaged) {
                        /* The first rates start the averages, not a move from 0. */
                        m->host_other_avg = other;
                        m->host_excess_avg = (int64_t) excess;
                        m->host_idle_avg = idle;
                        m->host_averaged = true;
                } else {
                        host_average(&m->host_other_avg, other, w);
                        host_average(&m->host_excess_avg, (int64_t) excess, w);
                        /* Read now, the excess is no noisier than the
                         * host's own counters: a rise that this sample
                         * already shows served from others' CPU (more than
                         * was idle over the same time) counts at once, as
                         * the CPU it takes is taken now; a fall, or a rise
                         * the idle CPU covered, only as the average follows
                         * it (the idle average follows just as slowly). */
                        if (fresh && (int64_t) excess > m->host_excess_avg && (int64_t) excess > idle)
                                m->host_excess_avg = (int64_t) excess;
                        host_average(&m->host_idle_avg, idle, w);
                }
        }
        wait = host_others_wait_rate(m, dt, &behind, &wait_known);
        if (!wait_known)
                m->host_other_wait = m->host_other_behind = UINT64_MAX;
        else if (wait != UINT64_MAX) {
                if (m->host_other_wait == UINT64_MAX) {
                        m->host_wait_avg = (int64_t) wait;
                        m->host_behind_avg = (int64_t) behind;
                } else {
                        int64_t w = (int64_t) u64_min(dt, HOST_OTHER_TAU_USEC);

                        host_average(&m->host_wait_avg, (int64_t) wait, w);
                        host_average(&m->host_behind_avg, (int64_t) behind, w);
                }
                m->host_other_wait = m->host_wait_avg > 0 ? (uint64_t) m->host_wait_avg : 0;
                m->host_other_behind = m->host_behind_avg > 0 ? (uint64_t) m->host_behind_avg : 0;
        }
        m->has_host = true;
        m->has_host_busy = has_busy;
        m->host_busy_usec = cpu.busy_usec;
        m->host_idle_usec = cpu.idle_usec;
        m->host_busy_time_usec = now;
        m->host_governed_usec = governed;
        m->host_units_generation = m->units_generation;
        m->host_other_usage = m->host_other_avg > 0 ? (uint64_t) m->host_other_avg : 0;
        m->host_governed_excess = m->host_excess_avg > 0 ? (uint64_t) m->host_excess_avg : 0;
        m->host_idle = m->host_idle_avg > 0 ? (uint64_t) m->host_idle_avg : 0;

        /* Without /proc/stat there is no telling whether anyone else wants
         * the CPU, or whether it was idle: the pressure and the governed
         * groups' excess alone decide. */
        hs = (struct bw_host_sample) {
                .some_rate = m->host_some_rate,
                .other_usage_rate = has_busy ? m->host_other_usage : UINT64_MAX,
                .governed_excess_rate = has_busy ? m->host_governed_excess : excess,
                .idle_rate = has_busy ? m->host_idle : 0,
                .has_other_behind = m->host_other_behind != UINT64_MAX,
                .other_behind_rate = m->host_other_behind,
        };
        m->host_over_limit = bw_host_over_limit(&hs, m->host_over_limit, limit);
}

void manager_plan_shedding(Manager *m, uint64_t now) {
        uint64_t limit = m->config.global.host_pressure_limit;
        _cleanup_free_ struct bw_shed_unit *units = NULL;
        _cleanup_free_ unsigned *shed = NULL;
        size_t n_shed = 0, n_new = 0;
        char waited[96] = "";
        int r;

        /* Under the limit and nothing withdrawn: no plan to make (four
         * passes a second over ten thousand units otherwise). */
        if (m->n_units == 0 || (!m->host_over_limit && !m->shedding))
                return;

        units = calloc(m->n_units, sizeof(*units));
        shed = calloc(m->n_units, sizeof(*shed));
        if (!units || !shed) {
                log_oom();
                return;
        }
        for (size_t i = 0; i < m->n_units; i++) {
                units[i].priority = m->units[i]->cfg->priority;
                units[i].boost_rate = unit_headroom(m->units[i]);
        }
        r = bw_host_plan_shed(units, m->n_units, m->host_over_limit ? m->host_some_rate : 0, limit, shed);
        if (r < 0) {
                log_warning_errno(r, "Shedding plan failed: %s", STRERROR(r));
                return;
        }
        m->shedding = false;    /* until a unit is found withdrawn below */
        for (size_t i = 0; i < m->n_units; i++) {
                Unit *u = m->units[i];

                if (shed[i] > 0) {
                        n_shed++;
                        if (u->caps.shed_permille == 0)
                                n_new++;
                }
                if (shed[i] > 0)
                        m->shedding = true;
                unit_set_headroom_cap(u, UNIT_CAP_HOST_SHED, shed[i], now);
        }
        /* One line per plan that reaches new units, not one per unit: with
         * thousands of units each write says "host-shed" anyway. */
        if (n_new > 0 && m->host_other_wait != UINT64_MAX)
                snprintf(waited, sizeof(waited),
                         " (its tasks waiting %" PRIu64 "us/s, %" PRIu64 "us/s of it behind them)",
                         m->host_other_wait, m->host_other_behind);
        if (n_new > 0)
                log_notice("Host CPU pressure %" PRIu64 "us/s over limit %" PRIu64 "us/s while the governed groups "
                           "use %" PRIu64 "us/s above their baselines, %" PRIu64 "us/s of CPU is used outside them%s "
                           "and %" PRIu64 "us/s is idle: withdrawing headroom from %zu unit%s, lowest Priority= first",
                           m->host_some_rate, limit, m->host_governed_excess, m->host_other_usage, waited,
                           m->host_idle, n_shed, n_shed == 1 ? "" : "s");
}
