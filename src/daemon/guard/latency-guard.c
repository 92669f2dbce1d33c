/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Latency protection over the governed units: the latency units' ladders
 * from their run-queue wait, then the levers the ladders ask for, set and
 * put back through unit-levers.h. See latency-guard.h and latency.h. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/config/config.h"
#include "bwgov/law/latency.h"
#include "bwgov/cgroup/lever.h"
#include "bwgov/util/parse-util.h"
#include "bwgov/telemetry/rqstat.h"
#include "clock.h"
#include "latency-guard.h"
#include "log.h"
#include "unit/unit-sample.h"

#define P99 9900u

/* The guard's state of one unit: its ladder, its window, its fast samples,
 * its weights and its note. Made at the first pass that sees the unit,
 * forgotten by latency_guard_unit_leaving(). */
struct latency_member {
        Unit *u;
        struct bw_lat_state lat;        /* Class=latency: the ladder */
        bool has_window;
        struct bw_rq_counters *window_start;    /* counters at the start of the window (allocated) */
        uint64_t window_usec;
        uint64_t psi_some_usec;         /* without telemetry: cpu.pressure some at the window's start */
        uint64_t guarantee;             /* CPUGuarantee= after overcommit scaling, µs/s */
        uint64_t weight_own;            /* its weight before the guard raised it (v2 units) */
        uint64_t weight_target;         /* the weight the ladder asks for now (0: none) */
        uint64_t guarantee_weight;      /* ... from CPUGuarantee= against the siblings (0: none) */
        uint64_t weight_samples;        /* lat.n_samples when those were worked out */
        uint64_t siblings;              /* summed weight of its siblings, last read */
        enum bw_lat_level level;        /* the rung in force (bw_lat_level_now()), as applied */
        enum bw_lat_level weight_level; /* the rung weight_target was worked out for */
        uint64_t fast_usec;             /* its last fast sample (0: none): when ... */
        uint64_t fast_usage_usec;       /* ... its CPU use ... */
        uint64_t fast_wait_ns;          /* ... and its run-queue wait (not throttled) then */
        uint64_t demand_mcpu;           /* its runnable demand between its last two fast samples */
        bool has_demand;
        char *note;                     /* what latency protection does to it and why (explain), NULL: nothing */
};

static void member_done(struct latency_member *mb) {
        free(mb->window_start);
        free(mb->note);
}

static struct latency_member *find_member(const struct latency_guard *g, const Unit *u) {
        for (size_t i = 0; i < g->n_members; i++)
                if (g->members[i].u == u)
                        return &g->members[i];
        return NULL;
}

/* The members in the order of units[0..n): the ones there were kept, new
 * ones zeroed, those of units no longer in the table forgotten. Returns 0
 * or -ENOMEM (the members untouched). */
static int sync_members(struct latency_guard *g, Unit *const *units, size_t n) {
        struct latency_member *next;
        size_t j = 0;

        if (g->n_members == n) {
                size_t i = 0;

                while (i < n && g->members[i].u == units[i])
                        i++;
                if (i == n)
                        return 0;
        }
        next = calloc(n > 0 ? n : 1, sizeof(*next));
        if (!next)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct latency_member *old = NULL;

                /* Mostly in the same order: look where the last one was first. */
                if (j < g->n_members && g->members[j].u == units[i])
                        old = &g->members[j];
                else
                        old = find_member(g, units[i]);
                if (old) {
                        next[i] = *old;
                        *old = (struct latency_member) { 0 };
                        j = (size_t) (old - g->members) + 1;
                } else
                        next[i].u = units[i];
        }
        for (size_t i = 0; i < g->n_members; i++)
                if (g->members[i].u)
                        member_done(&g->members[i]);
        free(g->members);
        g->members = next;
        g->n_members = n;
        return 0;
}

void latency_guard_unit_leaving(struct latency_guard *g, Unit *u) {
        struct latency_member *mb = find_member(g, u);
        size_t i;

        if (!mb)
                return;
        i = (size_t) (mb - g->members);
        member_done(mb);
        memmove(mb, mb + 1, (g->n_members - i - 1) * sizeof(*mb));
        g->n_members--;
}

void latency_guard_cgroup_closed(struct latency_guard *g, Unit *u) {
        struct latency_member *mb = find_member(g, u);

        if (mb)
                mb->has_window = false;
}

void latency_guard_view(const struct latency_guard *g, const Unit *u, struct latency_view *ret) {
        latency_guard_view_at(g, u, SIZE_MAX, ret);
}

void latency_guard_view_at(const struct latency_guard *g, const Unit *u, size_t at, struct latency_view *ret) {
        const struct latency_member *mb = at < g->n_members && g->members[at].u == u ? &g->members[at] :
                find_member(g, u);

        if (!mb) {
                *ret = (struct latency_view) { .level = BW_LAT_NONE, .note = "" };
                return;
        }
        *ret = (struct latency_view) {
                .guarantee = mb->guarantee,
                .level = mb->level,
                .has_p99 = mb->lat.has_last,
                .p99_usec = mb->lat.last_p99_usec,
                .samples = mb->lat.n_samples,
                .missed = mb->lat.n_missed,
                .changes = mb->lat.n_changes,
                .note = mb->note ? mb->note : "",
        };
}

void latency_guard_done(struct latency_guard *g) {
        for (size_t i = 0; i < g->n_members; i++)
                member_done(&g->members[i]);
        g->members = mfree(g->members);
        g->n_members = 0;
}

bool latency_guard_eligible(const Unit *u) {
        enum bw_mode m = unit_mode(u);

        return u->cg && u->adopted && !u->paused && m != BW_MODE_OFF && m != BW_MODE_OBSERVE;
}

static enum bw_class unit_class(const Unit *u) {
        return bw_unit_class(u->cfg);
}

static void fmt_usec(uint64_t usec, char *buf, size_t n) {
        if (usec >= 10 * USEC_PER_MSEC)
                (void) snprintf(buf, n, "%" PRIu64 "ms", usec / USEC_PER_MSEC);
        else if (usec >= USEC_PER_MSEC)
                (void) snprintf(buf, n, "%" PRIu64 ".%" PRIu64 "ms", usec / USEC_PER_MSEC,
                                usec % USEC_PER_MSEC / 100);
        else
                (void) snprintf(buf, n, "%" PRIu64 "us", usec);
}

/* The unit's note for explain: allocated when there is one, replaced only
 * when it changes. */
_printf_(2, 3) static void set_note(struct latency_member *mb, const char *fmt, ...) {
        char buf[256];
        va_list ap;

        if (!fmt) {
                mb->note = mfree(mb->note);
                return;
        }
        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (mb->note && strcmp(mb->note, buf) == 0)
                return;
        free(mb->note);
        mb->note = strdup(buf);      /* NULL on ENOMEM: no note */
}

/* Something of the guard's is held on the member's unit (or its ladder is up). */
static bool guard_holds(struct latency_member *mb) {
        Unit *u = mb->u;

        return u->caps.latency_hold || unit_levers_slice_usec(&u->lv) > 0 || mb->lat.level > BW_LAT_NONE ||
               mb->level > BW_LAT_NONE ||
               (unit_levers_any(u) &&
                (unit_lever_is_set(u, UNIT_LEVER_IDLE) || unit_lever_is_set(u, UNIT_LEVER_WEIGHT)));
}

/* The guard's own levers of one unit (weight, idle, slices) and its hold,
 * back as they were: the unit left the guard's care. */
static void release(struct latency_member *mb, const char *why) {
        Unit *u = mb->u;

        if (unit_levers_slice_usec(&u->lv) > 0)
                (void) unit_slice_apply(u, 0);
        (void) unit_lever_restore(u, UNIT_LEVER_IDLE, why);
        (void) unit_lever_restore(u, UNIT_LEVER_WEIGHT, why);
        unit_set_headroom_cap(u, UNIT_CAP_LATENCY_HOLD, 0, 0);
        mb->weight_target = 0;
        mb->lat = (struct bw_lat_state) { 0 };
        mb->level = mb->weight_level = BW_LAT_NONE;
        mb->has_window = false;
        mb->window_start = mfree(mb->window_start);
        mb->fast_usec = 0;
        mb->has_demand = false;
        set_note(mb, NULL);
}

/* ---- the neighbours ------------------------------------------------------------ */

/* One fast sample of the unit's runnable demand: its CPU use plus its tasks'
 * run-queue wait (the throttled part left out: a throttled task competes
 * with nobody) since its last one, in milli-CPUs, into demand_mcpu.
 * Without telemetry the use alone. */
static void fast_demand(struct latency_member *mb, Rqstat *t, uint64_t now) {
        Unit *u = mb->u;
        struct bw_cpu_stat st = { 0 };
        struct bw_rq_counters c;
        uint64_t wait_ns = 0, dt = now - mb->fast_usec;
        bool had = mb->fast_usec > 0 && now > mb->fast_usec;
        int r;

        r = bw_cg_read_usage_any(u->cg, &st);
        if (r < 0) {
                mb->fast_usec = 0;
                mb->has_demand = false;
                return;
        }
        if (t && u->rq.cgroup_id != 0 && rqstat_read(t, u->rq.cgroup_id, &c) >= 0)
                wait_ns = c.wait_ns > c.throttled_wait_ns ? c.wait_ns - c.throttled_wait_ns : 0;
        /* Counters that went back (telemetry reloaded): no rate this time. */
        mb->has_demand = had && st.usage_usec >= mb->fast_usage_usec && wait_ns >= mb->fast_wait_ns;
        if (mb->has_demand)
                mb->demand_mcpu = ((st.usage_usec - mb->fast_usage_usec) +
                                      (wait_ns - mb->fast_wait_ns) / 1000) * 1000 / dt;
        mb->fast_usec = now;
        mb->fast_usage_usec = st.usage_usec;
        mb->fast_wait_ns = wait_ns;
}

/* Every governed cgroup's demand now; the sum over those that do not
 * contain another (a parent's use counts its children's). */
static uint64_t sample_demand(struct latency_guard *g, Unit *const *units, size_t n, uint64_t now) {
        Rqstat *t = g->ctx.rqstat ? *g->ctx.rqstat : NULL;
        uint64_t sum = 0;

        for (size_t i = 0; i < n; i++) {
                struct latency_member *mb = &g->members[i];
                Unit *u = units[i];

                if (!latency_guard_eligible(u) || u->place.has_governed_descendants) {
                        mb->fast_usec = 0;
                        mb->has_demand = false;
                        continue;
                }
                fast_demand(mb, t, now);
                if (mb->has_demand)
                        sum += mb->demand_mcpu;
        }
        return sum;
}

/* ---- sampling ---------------------------------------------------------------- */

/* Counters (telemetry) or pressure (without) at the window's start. */
static bool window_open(struct latency_member *mb, Rqstat *t, uint64_t now) {
        Unit *u = mb->u;
        struct bw_psi psi;

        mb->window_usec = now;
        if (t && u->rq.cgroup_id != 0) {
                if (!mb->window_start)
                        mb->window_start = malloc(sizeof(*mb->window_start));
                mb->has_window = mb->window_start &&
                        rqstat_read(t, u->rq.cgroup_id, mb->window_start) >= 0;
        } else if (bw_cg_has(u->cg, BW_CG_FILE_PRESSURE) && bw_cg_read_pressure(u->cg, &psi) >= 0) {
                mb->psi_some_usec = psi.some.total_usec;
                mb->has_window = true;
                mb->window_start = mfree(mb->window_start);
        } else
                mb->has_window = false;
        return mb->has_window;
}

/* The window's p99 when it is long enough: 1 with *ret (has_waits false
 * when there were none), 0 when not yet, negative errno. */
static int window_sample(struct latency_member *mb, Rqstat *t, uint64_t now, struct bw_lat_sample *ret) {
        Unit *u = mb->u;
        uint64_t dt = now - mb->window_usec;
        struct bw_rq_counters c, d;
        struct bw_psi psi;
        int r;

        if (!mb->has_window) {
                window_open(mb, t, now);
                return 0;
        }
        if (dt < LATENCY_WINDOW_USEC)
                return 0;
        *ret = (struct bw_lat_sample) { .now_usec = now, .target_usec = bw_unit_latency_target_usec(u->cfg) };
        if (t && u->rq.cgroup_id != 0 && mb->window_start) {
                r = rqstat_read(t, u->rq.cgroup_id, &c);
                if (r < 0 || bw_rq_delta(&c, mb->window_start, &d) < 0) {
                        window_open(mb, t, now);
                        return r < 0 ? r : 0;
                }
                ret->has_waits = bw_rq_waits(&d) > 0 &&
                        bw_rq_quantile_interp_usec(d.wait_slots, d.wait_max_ns, P99, &ret->p99_usec) >= 0;
        } else if (bw_cg_has(u->cg, BW_CG_FILE_PRESSURE) && bw_cg_read_pressure(u->cg, &psi) >= 0) {
                /* Without telemetry: the stall per 100 ms of wall time. */
                uint64_t stall = psi.some.total_usec >= mb->psi_some_usec ?
                        psi.some.total_usec - mb->psi_some_usec : 0;

                ret->p99_usec = stall * 100 * USEC_PER_MSEC / dt;
                ret->has_waits = stall > 0;
        } else {
                window_open(mb, t, now);
                return 0;
        }
        window_open(mb, t, now);
        return 1;
}

/* ---- the ladders -------------------------------------------------------------- */

struct census {
        struct bw_lat_caps caps;
        size_t n_latency;
        const struct latency_member *worst;     /* the latency unit highest on its ladder */
};

static void take_census(const struct latency_guard *g, struct census *c) {
        *c = (struct census) { .caps.slice = g->ctx.slice_supported };
        for (size_t i = 0; i < g->n_members; i++) {
                const struct latency_member *mb = &g->members[i];
                const Unit *u = mb->u;

                if (!latency_guard_eligible(u))
                        continue;
                switch (unit_class(u)) {
                case BW_CLASS_LATENCY:
                        c->n_latency++;
                        if (!c->worst || mb->level > c->worst->level)
                                c->worst = mb;
                        break;
                case BW_CLASS_BEST_EFFORT:
                        c->caps.best_effort = true;
                        c->caps.others = true;
                        break;
                case BW_CLASS_THROUGHPUT:
                case _BW_CLASS_MAX:
                default:
                        c->caps.others = true;
                        break;
                }
        }
}

/* Overcommit: scale the guarantees of all latency units (graceful, never
 * refused), and say so when that changes. */
static void scale_guarantees(struct latency_guard *g, Unit *const *units, size_t n) {
        _cleanup_free_ struct bw_lat_guarantee *in = calloc(n > 0 ? n : 1, sizeof(*in));
        _cleanup_free_ uint64_t *out = calloc(n > 0 ? n : 1, sizeof(*out));
        _cleanup_free_ size_t *idx = calloc(n > 0 ? n : 1, sizeof(*idx));
        uint64_t sum = 0;
        size_t k = 0;
        int r;

        if (!in || !out || !idx) {
                (void) log_oom();
                return;
        }
        for (size_t i = 0; i < n; i++)
                if (latency_guard_eligible(units[i]) && unit_class(units[i]) == BW_CLASS_LATENCY) {
                        in[k] = (struct bw_lat_guarantee) { units[i]->cfg->cpu_guarantee, units[i]->cfg->priority };
                        sum += units[i]->cfg->cpu_guarantee;
                        idx[k++] = i;
                }
        r = bw_lat_scale_guarantees(in, k, g->ctx.ncpus, out);
        if (r < 0)
                return;
        for (size_t j = 0; j < k; j++)
                g->members[idx[j]].guarantee = out[j];
        if (r > 0 && (!g->scaled || g->scaled_sum != sum)) {
                char total[32];

                (void) bw_format_percent(sum, total, sizeof(total));
                log_notice("The CPUGuarantee= of %zu latency unit%s add up to %s of a CPU, more than 80%% of the "
                           "host's %u CPUs: scaled down, lowest Priority= first (bwgovctl explain shows each)",
                           k, k == 1 ? "" : "s", total, g->ctx.ncpus);
        } else if (r == 0 && g->scaled)
                log_notice("The CPUGuarantee= of the latency units fit the host again: no longer scaled");
        g->scaled = r > 0;
        g->scaled_sum = sum;
}

static void fmt_mcpu(uint64_t mcpu, char *buf, size_t n) {
        (void) snprintf(buf, n, "%" PRIu64 ".%02" PRIu64, mcpu / 1000, mcpu % 1000 / 10);
}

/* The ladder from the unit's own wait (a window a second), the floor from
 * its neighbours' demand (every fast sample): the rung in force, and the
 * journal when it changes. */
static void step_unit(struct latency_guard *g, struct latency_member *mb, const struct census *c, uint64_t demand,
                      uint64_t now) {
        Unit *u = mb->u;
        Rqstat *t = g->ctx.rqstat ? *g->ctx.rqstat : NULL;
        uint64_t own = mb->has_demand ? mb->demand_mcpu : 0;
        enum bw_lat_level was = mb->level;
        const struct bw_lat_state before = mb->lat;
        struct bw_lat_sample x;
        char p99[32], target[32], nb[32];
        bool sampled, released = false;
        int r;

        if (mb->has_demand || demand > 0)
                released = bw_lat_pressure_step(&mb->lat, &(struct bw_lat_pressure) {
                                .now_usec = now,
                                .demand_mcpu = demand > own ? demand - own : 0,
                                .own_mcpu = own,
                                .ncpus = g->ctx.ncpus,
                        }, &c->caps) < 0;
        r = window_sample(mb, t, now, &x);
        sampled = r > 0;
        if (sampled)
                (void) bw_lat_step(&mb->lat, &x, &c->caps);
        mb->level = bw_lat_level_now(&mb->lat, &c->caps);
        if (mb->level == was)
                return;
        mb->lat.n_changes++;
        fmt_mcpu(mb->lat.demand_mcpu, nb, sizeof(nb));
        fmt_usec(sampled ? x.p99_usec : mb->lat.last_p99_usec, p99, sizeof(p99));
        fmt_usec(bw_unit_latency_target_usec(u->cfg), target, sizeof(target));
        if (mb->level > was && mb->lat.floor == mb->level)
                log_notice("%s: neighbours' runnable demand %s CPUs fills the host: protection up to \"%s\" at "
                           "once", u->name, nb, bw_lat_level_to_string(mb->level));
        else if (mb->level > was)
                log_notice("%s: run-queue wait p99 %s over LatencyTarget=%s: protection up to \"%s\"", u->name, p99,
                           target, bw_lat_level_to_string(mb->level));
        else if (mb->level > BW_LAT_NONE && bw_lat_level_now(&before, &c->caps) < was)
                /* The rung it stood on is gone (the last best-effort unit
                 * left, say): the one below, nothing released. */
                log_info("%s: rung \"%s\" no longer exists here: protection down to \"%s\"", u->name,
                         bw_lat_level_to_string(was), bw_lat_level_to_string(mb->level));
        else if (released)
                log_info("%s: neighbours' runnable demand down to %s CPUs for %us: protection down to \"none\"",
                         u->name, nb, (unsigned) (BW_LAT_CALM_USEC / USEC_PER_SEC));
        else
                log_info("%s: run-queue wait p99 %s within LatencyTarget=%s for %u samples: protection down to "
                         "\"%s\"", u->name, mb->lat.has_last ? p99 : "-", target, mb->lat.hold,
                         bw_lat_level_to_string(mb->level));
}

/* ---- the levers ---------------------------------------------------------------- */

/* The unit's own weight (v2 units): the original while the guard holds
 * the lever, else what the file says now. */
static uint64_t own_weight(Unit *u) {
        const struct bw_ledger_lever *rec = store_lever(u->ctx->store, u->name, BW_LEVER_WEIGHT);
        char buf[BW_LEVER_VALUE_MAX], v2[BW_LEVER_VALUE_MAX];
        const char *native = rec ? rec->original : NULL;
        uint64_t w;

        if (!native) {
                if (bw_lever_read(u->ctx->root, u->cg, BW_LEVER_WEIGHT, buf, sizeof(buf)) < 0)
                        return BW_WEIGHT_DEFAULT;
                native = buf;
        }
        if (bw_lever_from_native(u->cg->layout, BW_LEVER_WEIGHT, native, v2, sizeof(v2)) < 0 ||
            bw_parse_digits(&(const char *) { v2 }, &w) < 0 || w == 0)
                return BW_WEIGHT_DEFAULT;
        return w;
}

static void apply_latency_unit(struct latency_guard *g, struct latency_member *mb) {
        Unit *u = mb->u;
        enum bw_lat_level l = mb->level;
        char p99[32], target[32], val[32], gpct[32] = "", weight[96] = "";
        uint64_t gw;
        unsigned nsib = 0;

        if (l >= BW_LAT_WEIGHT) {
                /* Once per window, not every tick: the siblings' weights
                 * are a walk of the parent directory. */
                if (mb->weight_target == 0 || mb->weight_samples != mb->lat.n_samples ||
                    mb->weight_level != l) {
                        mb->weight_own = own_weight(u);
                        mb->guarantee_weight = 0;
                        if (mb->guarantee > 0 &&
                            bw_lever_sibling_weights(u->ctx->root, u->cg, &mb->siblings, &nsib) >= 0)
                                mb->guarantee_weight = bw_lat_guarantee_weight(
                                                mb->guarantee, g->ctx.ncpus, mb->siblings, mb->weight_own);
                        mb->weight_target = bw_lat_level_weight(l, mb->weight_own, mb->guarantee_weight);
                        mb->weight_samples = mb->lat.n_samples;
                        mb->weight_level = l;
                }
                (void) snprintf(val, sizeof(val), "%" PRIu64, mb->weight_target);
                (void) unit_lever_set(u, UNIT_LEVER_WEIGHT, val);
        } else {
                if (unit_lever_is_set(u, UNIT_LEVER_WEIGHT) || unit_levers_yielded(&u->lv, BW_LEVER_WEIGHT))
                        (void) unit_lever_restore(u, UNIT_LEVER_WEIGHT, "latency-met");
                mb->weight_target = mb->guarantee_weight = 0;
        }
        gw = mb->guarantee_weight;
        /* The rungs are ordered, but a skipped one holds nothing: no slice
         * before 6.12, even at the rung above it. */
        if (l >= BW_LAT_SLICE && g->ctx.slice_supported)
                (void) unit_slice_apply(u, bw_lat_slice_usec(bw_unit_latency_target_usec(u->cfg)));
        else if (unit_levers_slice_usec(&u->lv) > 0)
                (void) unit_slice_apply(u, 0);

        fmt_usec(mb->lat.last_p99_usec, p99, sizeof(p99));
        fmt_usec(bw_unit_latency_target_usec(u->cfg), target, sizeof(target));
        if (mb->guarantee > 0)
                (void) bw_format_percent(mb->guarantee, gpct, sizeof(gpct));
        if (mb->weight_target > 0)
                (void) snprintf(weight, sizeof(weight), ", weight %" PRIu64 " (own %" PRIu64 ")%s%s",
                                mb->weight_target, mb->weight_own, gw > 0 ? " from CPUGuarantee=" : "",
                                gw > 0 ? gpct : "");
        if (l == BW_LAT_NONE)
                set_note(mb, "latency: p99 %s, LatencyTarget=%s met; no lever",
                                mb->lat.has_last ? p99 : "-", target);
        else if (mb->lat.floor == l) {
                char nb[32];

                fmt_mcpu(mb->lat.demand_mcpu, nb, sizeof(nb));
                set_note(mb, "latency: its neighbours' runnable demand (%s CPUs) fills the host; p99 %s, "
                                "LatencyTarget=%s; lever \"%s\"%s%s",
                                nb, mb->lat.has_last ? p99 : "-", target, bw_lat_level_to_string(l), weight,
                                unit_levers_slice_usec(&u->lv) > 0 ? ", short EEVDF slice for its threads" : "");
        } else
                set_note(mb, "latency: p99 %s %s LatencyTarget=%s (%" PRIu64 " of %" PRIu64 " samples missed); "
                                "lever \"%s\"%s%s",
                                p99, mb->lat.last_missed ? "over" : "within", target, mb->lat.n_missed,
                                mb->lat.n_samples, bw_lat_level_to_string(l), weight,
                                unit_levers_slice_usec(&u->lv) > 0 ? ", short EEVDF slice for its threads" : "");
}

static void apply_other_unit(struct latency_member *mb, const struct census *c) {
        const struct latency_member *w = c->worst;
        Unit *u = mb->u;
        bool hold = w && w->level >= BW_LAT_HOLD, idle = w && w->level >= BW_LAT_IDLE &&
                unit_class(u) == BW_CLASS_BEST_EFFORT;

        /* A hold that begins withdraws the headroom at once. */
        unit_set_headroom_cap(u, UNIT_CAP_LATENCY_HOLD, hold ? 1000 : 0,
                              hold && !u->caps.latency_hold ? clock_now_usec(CLOCK_MONOTONIC) : 0);
        if (idle)
                (void) unit_lever_set(u, UNIT_LEVER_IDLE, "1");
        else if (unit_lever_is_set(u, UNIT_LEVER_IDLE) || unit_levers_yielded(&u->lv, BW_LEVER_IDLE))
                (void) unit_lever_restore(u, UNIT_LEVER_IDLE, "latency-met");
        if (!hold)
                set_note(mb, NULL);
        else
                set_note(mb, "latency: %s for %s (%s)",
                                idle ? "in cpu.idle and headroom held at the contract" :
                                       "headroom held at the contract",
                                w->u->name, w->lat.floor == w->level ? "its neighbours fill the host" :
                                                                        "LatencyTarget= missed");
}

/* Whether any unit is configured Class=latency, governed or not (a paused
 * one keeps its ladder's counts). */
static bool any_latency_unit(Unit *const *units, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (unit_class(units[i]) == BW_CLASS_LATENCY)
                        return true;
        return false;
}

void latency_guard_tick(struct latency_guard *g, Unit *const *units, size_t n, uint64_t now) {
        struct census c;
        uint64_t demand;

        /* No latency unit and nothing held since the last pass: no members
         * kept (240 bytes a unit, 2.4 MB at ten thousand, for nothing). A
         * unit's view is then the zeroes of a unit not seen yet. */
        if (g->idle && !any_latency_unit(units, n)) {
                latency_guard_done(g);
                g->scaled = false;
                return;
        }
        if (sync_members(g, units, n) < 0) {
                (void) log_oom();
                return;
        }
        take_census(g, &c);
        /* Nothing to protect, nothing held: the common case costs a scan. */
        if (c.n_latency == 0) {
                g->idle = true;
                for (size_t i = 0; i < n; i++)
                        if (guard_holds(&g->members[i])) {
                                release(&g->members[i], "no-latency-unit");
                                g->idle = false;
                        }
                g->scaled = false;
                return;
        }
        g->idle = false;
        scale_guarantees(g, units, n);
        demand = sample_demand(g, units, n, now);
        for (size_t i = 0; i < n; i++)
                if (latency_guard_eligible(units[i]) && unit_class(units[i]) == BW_CLASS_LATENCY)
                        step_unit(g, &g->members[i], &c, demand, now);
        take_census(g, &c);

        for (size_t i = 0; i < n; i++) {
                struct latency_member *mb = &g->members[i];
                Unit *u = units[i];

                if (!latency_guard_eligible(u)) {
                        if (guard_holds(mb))
                                release(mb, "not-governed");
                        continue;
                }
                if (unit_class(u) == BW_CLASS_LATENCY) {
                        if (u->caps.latency_hold || unit_lever_is_set(u, UNIT_LEVER_IDLE))
                                release(mb, "class-changed");
                        apply_latency_unit(g, mb);
                } else {
                        if (unit_lever_is_set(u, UNIT_LEVER_WEIGHT) || unit_levers_slice_usec(&u->lv) > 0 ||
                            mb->lat.level > BW_LAT_NONE || mb->level > BW_LAT_NONE) {
                                (void) unit_slice_apply(u, 0);
                                (void) unit_lever_restore(u, UNIT_LEVER_WEIGHT, "class-changed");
                                mb->lat = (struct bw_lat_state) { 0 };
                                mb->level = BW_LAT_NONE;
                        }
                        apply_other_unit(mb, &c);
                }
        }
}
