/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Contention= in the daemon: the members (the throughput and best-effort
 * units taking part), their timer, their samples, and the plan of
 * src/lib/law/contention.c put in place through the units' levers
 * (contention-sched.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/law/contention.h"
#include "bwgov/cgroup/cpulist.h"
#include "bwgov/util/fileio.h"
#include "bwgov/cgroup/lever.h"
#include "bwgov/util/parse-util.h"
#include "bwgov/util/util.h"
#include "clock.h"
#include "contention-sched.h"
#include "log.h"

#define CPU_ONLINE_PATH "/sys/devices/system/cpu/online"
#define CPU_ONLINE_MAX_BYTES 4096

struct member {
        Unit *u;
        struct bw_contention_unit cu;
        bool said_no_cpus;              /* "no cpuset for this unit" said once */
        bool said_no_freeze;
};

struct Contention {
        sd_event *event;
        const struct bw_config *config;
        Unit *const *const *units;      /* the manager's unit table ... */
        const size_t *n_units;          /* ... and its size */
        unsigned *cpus;                 /* the host's online CPUs, ascending */
        size_t ncpus;
        struct member *members;
        size_t n_members;
        struct bw_contention_state st;
        sd_event_source *timer;
        Store *store;                   /* the ledger: what is frozen and pinned in fact */
        bool stopped;
};

int contention_new(sd_event *event, const struct bw_config *config, Unit *const *const *units, const size_t *n_units,
                   unsigned ncpus, Store *store, Contention **ret) {
        _cleanup_free_ char *buf = NULL;
        Contention *c;
        size_t len;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->event = sd_event_ref(event);
        c->config = config;
        c->units = units;
        c->n_units = n_units;
        c->store = store;
        if (bw_read_full_at(AT_FDCWD, CPU_ONLINE_PATH, 0, CPU_ONLINE_MAX_BYTES, &buf, &len) < 0 ||
            bw_cpulist_parse(buf, len, &c->cpus, &c->ncpus) < 0 || c->ncpus == 0) {
                free(c->cpus);
                c->ncpus = ncpus > 0 ? ncpus : 1;
                c->cpus = calloc(c->ncpus, sizeof(*c->cpus));
                if (!c->cpus) {
                        contention_free(c);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < c->ncpus; i++)
                        c->cpus[i] = (unsigned) i;
        }
        *ret = c;
        return 0;
}

Contention *contention_free(Contention *c) {
        if (!c)
                return NULL;
        sd_event_source_disable_unref(c->timer);
        sd_event_unref(c->event);
        free(c->members);
        free(c->cpus);
        free(c);
        return NULL;
}

static bool unit_takes_part(const Unit *u) {
        enum bw_class k = bw_unit_class(u->cfg);
        enum bw_mode m = unit_mode(u);

        return (k == BW_CLASS_THROUGHPUT || k == BW_CLASS_BEST_EFFORT) && u->cg && u->adopted && !u->paused &&
               (m == BW_MODE_BURST || m == BW_MODE_ELASTIC);
}

/* Held, or someone else's value kept in its place (let go all the same). */
static bool member_has(struct member *mb, enum unit_lever l) {
        return unit_levers_yielded(&mb->u->lv, (enum bw_lever) l) || unit_lever_is_set(mb->u, l);
}

/* Put the member's freezer and cpuset back (when held). A failed undo is
 * tried again (restore.h): the unit counts as frozen until it worked. */
static void member_release(struct member *mb, const char *why) {
        if (member_has(mb, UNIT_LEVER_FREEZE))
                (void) unit_lever_restore(mb->u, UNIT_LEVER_FREEZE, why);
        if (member_has(mb, UNIT_LEVER_CPUS))
                (void) unit_lever_restore(mb->u, UNIT_LEVER_CPUS, why);
        mb->cu.frozen = false;
        mb->cu.cpu_count = 0;
}

static void remove_member(Contention *c, size_t i, const char *why) {
        member_release(&c->members[i], why);
        memmove(&c->members[i], &c->members[i + 1], (c->n_members - i - 1) * sizeof(*c->members));
        c->n_members--;
        /* The gang turn order shifted: a new slot starts at the next plan. */
        c->st.has_slot = false;
}

/* cpu.weight, from cpu.shares on v1 (lever.h's mapping); 0 when unreadable
 * (the planner takes the default). */
static uint64_t read_weight(const Unit *u) {
        char native[BW_LEVER_VALUE_MAX], v2[BW_LEVER_VALUE_MAX];
        int64_t v;

        if (bw_lever_read(u->ctx->root, u->cg, BW_LEVER_WEIGHT, native, sizeof native) < 0 ||
            bw_lever_from_native(u->cg->layout, BW_LEVER_WEIGHT, native, v2, sizeof v2) < 0 ||
            bw_parse_int_range(v2, (int64_t) BW_WEIGHT_MIN, (int64_t) BW_WEIGHT_MAX, &v) < 0)
                return 0;
        return (uint64_t) v;
}

static void member_sample(struct member *mb, uint64_t now) {
        struct bw_cpu_stat st;
        struct bw_psi psi;

        mb->cu.weight = read_weight(mb->u);
        if (bw_cg_read_stat(mb->u->cg, &st) < 0 || !(st.seen & BW_CPUSTAT_USAGE)) {
                bw_contention_forget(&mb->cu);
                return;
        }
        bw_contention_observe(&mb->cu, st.usage_usec,
                              bw_cg_read_pressure(mb->u->cg, &psi) >= 0 ? psi.some.total_usec : BW_CONTENTION_NO_PSI,
                              now);
}

/* The plan into the member's levers: frozen or thawed, its CPUs or all. */
static void member_apply(Contention *c, struct member *mb) {
        const char *name = mb->u->name;
        int r;

        if (mb->cu.cpu_count > 0) {
                _cleanup_free_ char *list = NULL;

                r = bw_cpulist_format(c->cpus + mb->cu.cpu_first, mb->cu.cpu_count, &list);
                if (r >= 0)
                        r = unit_lever_set(mb->u, UNIT_LEVER_CPUS, list);
                if (r == -EOPNOTSUPP && !mb->said_no_cpus) {
                        log_notice("%s: no cpuset for its cgroup (on cgroup v2, the cpuset controller is not "
                                   "enabled in its parent; systemd enables it for a unit with AllowedCPUs=): "
                                   "not pinned, it shares the CPUs", name);
                        mb->said_no_cpus = true;
                }
        } else if (member_has(mb, UNIT_LEVER_CPUS))
                (void) unit_lever_restore(mb->u, UNIT_LEVER_CPUS, c->st.contended ? "contention-idle" :
                                                                               "contention-over");

        if (mb->cu.frozen) {
                r = unit_lever_set(mb->u, UNIT_LEVER_FREEZE, "1");
                if (r == -EOPNOTSUPP && !mb->said_no_freeze) {
                        log_notice("%s: its cgroup has no freezer: it runs in every gang slot", name);
                        mb->said_no_freeze = true;
                }
                if (r < 0)
                        mb->cu.frozen = false;  /* it ran: its usage counts */
        } else if (member_has(mb, UNIT_LEVER_FREEZE))
                (void) unit_lever_restore(mb->u, UNIT_LEVER_FREEZE, c->st.contended ? "gang-slot" :
                                                                                 "contention-over");
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata);
static void refresh_members(Contention *c);

/* Sample, plan and apply now; arm the timer for the next plan. */
static void contention_pass(Contention *c) {
        _cleanup_free_ struct bw_contention_unit *cus = NULL;
        const struct bw_global_config *g = &c->config->global;
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC), next = 0;
        bool was = c->st.contended;
        size_t frozen = 0, pinned = 0;
        int r;

        if (c->stopped)
                return;
        refresh_members(c);
        if (g->contention == BW_CONTENTION_SHARE) {
                /* The kernel's sharing: nothing to sample, nothing held, no timer
                 * (a reload to gang or pin calls contention_sync()). */
                for (size_t i = 0; i < c->n_members; i++)
                        member_release(&c->members[i], "contention-share");
                c->st = (struct bw_contention_state) {0};
                (void) sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
                return;
        }
        cus = calloc(c->n_members > 0 ? c->n_members : 1, sizeof(*cus));
        if (!cus) {
                log_oom();
                return;
        }
        for (size_t i = 0; i < c->n_members; i++) {
                member_sample(&c->members[i], now);
                cus[i] = c->members[i].cu;
        }
        r = bw_contention_plan(g->contention, cus, c->n_members, c->ncpus, g->contention_interval_usec, now,
                               &c->st, &next);
        if (r < 0) {
                log_warning_errno(r, "Contention plan failed, releasing every unit: %s", STRERROR(r));
                for (size_t i = 0; i < c->n_members; i++)
                        member_release(&c->members[i], "contention-error");
                next = now + BW_CONTENTION_REPLAN_MAX_USEC;
        } else {
                /* Thaw and unpin first, then freeze and pin: never all frozen at once. */
                for (int pass = 0; pass < 2; pass++)
                        for (size_t i = 0; i < c->n_members; i++) {
                                struct member *mb = &c->members[i];
                                bool releasing = !cus[i].frozen;

                                if (releasing != (pass == 0))
                                        continue;
                                mb->cu = cus[i];
                                member_apply(c, mb);
                        }
        }
        /* What the ledger holds, not what the plan wanted: a thaw that
         * failed is still a frozen group (tried again, restore.h). */
        frozen = store_count_levers(c->store, BW_LEVER_FREEZE);
        pinned = store_count_levers(c->store, BW_LEVER_CPUS);
        log_debug("Contention pass: %zu member(s), %s, %zu frozen, %zu pinned, next in %" PRIu64 "ms",
                  c->n_members, c->st.contended ? "contended" : "not contended", frozen, pinned,
                  (next > now ? next - now : 0) / 1000);
        if (was != c->st.contended)
                log_info("Contention among %zu unit(s) %s (Contention=%s): %zu frozen, %zu pinned",
                         c->n_members, c->st.contended ? "begins" : "is over", bw_contention_to_string(g->contention),
                         frozen, pinned);

        if (!c->timer)
                r = sd_event_add_time(c->event, &c->timer, CLOCK_MONOTONIC, next, 1, on_timer, c);
        else {
                r = sd_event_source_set_time(c->timer, next);
                if (r >= 0)
                        r = sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
        }
        if (r >= 0)
                r = sd_event_source_set_time_accuracy(c->timer, timer_accuracy_usec(next > now ? next - now : 1));
        if (r < 0)
                log_error_errno(r, "Failed to arm the contention timer: %s", STRERROR(r));
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        contention_pass(userdata);
        return 0;
}

static struct member *find_member(Contention *c, const Unit *u) {
        for (size_t i = 0; i < c->n_members; i++)
                if (c->members[i].u == u)
                        return &c->members[i];
        return NULL;
}

/* Members follow the unit table: those that no longer take part (paused,
 * mode, class, cgroup closed) leave with their levers back; new ones join
 * in the table's order (the gang's turn order). */
static void refresh_members(Contention *c) {
        Unit *const *units = *c->units;
        size_t n = *c->n_units, i = 0;

        while (i < c->n_members) {
                Unit *u = c->members[i].u;
                bool still = false;

                for (size_t k = 0; k < n && !still; k++)
                        still = units[k] == u && unit_takes_part(u);
                if (!still)
                        remove_member(c, i, u->paused ? "pause" : "contention-leave");
                else
                        i++;
        }
        for (size_t k = 0; k < n; k++) {
                struct member *m;

                if (!unit_takes_part(units[k]) || find_member(c, units[k]))
                        continue;
                m = realloc(c->members, (c->n_members + 1) * sizeof(*c->members));
                if (!m) {
                        log_oom();
                        break;
                }
                c->members = m;
                c->members[c->n_members++] = (struct member) { .u = units[k] };
                c->st.has_slot = false;
        }
}

void contention_sync(Contention *c) {
        if (!c || c->stopped)
                return;
        contention_pass(c);
}

void contention_unit_leaving(Contention *c, Unit *u, const char *why) {
        if (!c)
                return;
        for (size_t i = 0; i < c->n_members; i++)
                if (c->members[i].u == u) {
                        remove_member(c, i, why);
                        return;
                }
}

void contention_restore_all(Contention *c, const char *why) {
        if (!c)
                return;
        c->stopped = true;
        (void) sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
        for (size_t i = 0; i < c->n_members; i++)
                member_release(&c->members[i], why);
        c->n_members = 0;
        c->st = (struct bw_contention_state) {0};
}
