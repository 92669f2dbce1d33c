/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A Subgroup= unit's own cgroup (its "scope") governed as one with the
 * subgroup when it carries the same quota: podman 5 with crun 1.21 puts a
 * container's --cpus both on libpod-<id>.scope (systemd's CPUQuota=) and on
 * crun's libpod-<id>.scope/container, so a headroom on the subgroup alone
 * stays under the scope's limit and never runs. Contracts in unit-scope.h. And the
 * nearest limited ancestor of any unit, scope or not (unit_ancestor_quota()).
 *
 * Tied: the scope's quota (in its own period) is the subgroup's contract,
 * or what the subgroup holds now, or what bwgovd last wrote there (the
 * subgroup's recorded write after a crash), or what the scope held when it
 * was last found tied or written --
 * and the subgroup is the scope's only child cgroup, so that everything the
 * scope runs is the subgroup's and its credit pays for all of it (budget
 * neutral: the contract is still the subgroup's). Then the scope's quota
 * follows the subgroup's: raised before the subgroup is, lowered after,
 * and the law's nearest limited ancestor is the one above the scope. Any
 * other value on the scope is someone else's limit: left alone, and the
 * headroom stays under it as under any ancestor's, also once the unit is
 * clamped to it (it is remembered while it stays; a bwgovd restarted then
 * cannot tell it from a mirror of its own, and ties the scope again). The scope's burst is
 * never written (systemd's later quota writes to the scope must not meet
 * a burst of ours above them). Nothing of this is saved: the rule above
 * tells after a restart, from the subgroup's recorded values, what is
 * ours. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/config/config.h"
#include "bwgov/util/util.h"
#include "clock.h"
#include "log.h"
#include "unit-types.h"
#include "unit-scope.h"
#include "bwgov/cgroup/cgroupfs-write.h"

/* The ancestors above the scope are read again this often (as a unit's own
 * ancestors are, unit-sample.c). */
#define SCOPE_ANCESTOR_REFRESH_USEC (10 * USEC_PER_SEC)

/* The scope's path: the unit's cgroup path less its "/<Subgroup=>". NULL
 * (ENOMEM, or no such suffix) when there is none to tie. */
static char *scope_path(const Unit *u) {
        size_t n, s;

        if (!u->cfg->subgroup || !u->cgroup_path)
                return NULL;
        n = strlen(u->cgroup_path);
        s = strlen(u->cfg->subgroup);
        if (n <= s + 1 || u->cgroup_path[n - s - 1] != '/' || strcmp(u->cgroup_path + n - s, u->cfg->subgroup) != 0)
                return NULL;
        return strndup(u->cgroup_path, n - s - 1);
}

/* Whether the subgroup's top directory is the scope's only child cgroup.
 * Returns 1, 0, or a negative errno. */
static int scope_only_child(Unit *u) {
        const char *sub = u->cfg->subgroup;
        size_t len = strcspn(sub, "/");
        struct dirent *de;
        DIR *d;
        int fd, r = 1;

        fd = bw_cg_dir(u->scope->cg, BW_CG_TREE_BW);
        if (fd < 0)
                return fd;
        fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (strlen(de->d_name) != len || strncmp(de->d_name, sub, len) != 0) {
                        r = 0;
                        break;
                }
        }
        closedir(d);
        return r;
}

/* Open the scope: u->scope, held while its cgroup is open (a unit with
 * no Subgroup= never has one). Returns 1, 0 when there is none to tie, or
 * a negative errno. */
static int scope_open(Unit *u) {
        _cleanup_free_ char *path = NULL;
        _cleanup_free_ struct unit_scope *s = NULL;
        int r;

        if (u->scope)
                return 1;
        path = scope_path(u);
        if (!path)
                return 0;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        r = bw_cg_open(u->ctx->root, path, &s->cg);
        if (r == -ENOENT || r == -EOPNOTSUPP)
                return 0;               /* no bandwidth there: nothing to tie */
        if (r < 0)
                return r;
        /* Only its directory and quota file are read (the fds are counted with the unit's). */
        (void) bw_cg_release(s->cg, (_BW_CG_FILE_ALL - 1) & ~BW_CG_FILE_QUOTA);
        u->scope = TAKE_PTR(s);
        return 1;
}

void unit_scope_close(Unit *u) {
        if (!u->scope)
                return;
        bw_cg_free(u->scope->cg);
        u->scope = mfree(u->scope);
}

bool unit_scope_tied(const Unit *u) {
        return u->scope && u->scope->tied;
}

/* q (per period_usec) in the scope's period. */
static uint64_t in_scope_period(uint64_t q, uint64_t period_usec, uint64_t scope_period_usec) {
        if (q == BW_QUOTA_MAX || period_usec == 0)
                return BW_QUOTA_MAX;
        return u64_max(u64_muldiv(q, scope_period_usec, period_usec), BW_QUOTA_MIN_USEC);
}

/* Is the scope's quota s.quota_usec one of ours (see the top)? The
 * contract always is (a runtime's update sets the scope before the
 * subgroup: its new contract may be seen first as someone else's). */
static bool scope_quota_ours(const Unit *u, const struct bw_bandwidth *s, const struct bw_bandwidth *cur) {
        uint64_t p = s->period_usec;

        if (s->quota_usec == BW_QUOTA_MAX)
                return false;
        if (s->quota_usec == in_scope_period(u->baseline.quota_usec, u->baseline.period_usec, p))
                return true;
        /* Someone else's, found so before: even once the unit's headroom
         * is clamped to it, which makes it what the unit holds. */
        if (u->scope->has_foreign && s->quota_usec == u->scope->foreign_quota_usec)
                return false;
        return s->quota_usec == in_scope_period(cur->quota_usec, cur->period_usec, p) ||
               (u->has_written && s->quota_usec == in_scope_period(u->written.quota_usec, u->written.period_usec, p)) ||
               (u->scope->has_ours && s->quota_usec == u->scope->ours_quota_usec);
}

/* Put quota_usec (in the scope's period) on the scope, its burst kept
 * under it. */
static void scope_write(Unit *u, const struct bw_bandwidth *s, uint64_t quota_usec) {
        struct bw_bandwidth t = *s, now;
        int r;

        if (quota_usec == s->quota_usec)
                return;
        t.quota_usec = quota_usec;
        if (t.has_burst && t.burst_usec > quota_usec)
                t.burst_usec = quota_usec;
        r = bw_cg_write_bandwidth(u->scope->cg, &t, &now);
        if (r < 0) {
                log_warning_errno(r, "%s: cannot write the quota of its scope %s: %s", u->name, u->scope->cg->path,
                                  STRERROR(r));
                return;
        }
        u->scope->has_ours = true;
        u->scope->ours_quota_usec = now.quota_usec;
        log_unit_change(LOG_INFO, u->name, s, &now, "scope-follows",
                        "%s: its scope %s follows it: quota %" PRIu64 " -> %" PRIu64 "us per %" PRIu32 "us",
                        u->name, u->scope->cg->path, s->quota_usec, now.quota_usec, now.period_usec);
}

static void scope_set_tied(Unit *u, bool tied, const struct bw_bandwidth *s) {
        if (tied == unit_scope_tied(u))
                return;
        if (tied)
                log_info("%s: its scope %s holds its quota as well: raised and lowered with it, the headroom "
                         "paid from its credit", u->name, u->scope->cg->path);
        else if (s)
                log_info("%s: its scope %s holds %" PRIu64 "us per %" PRIu32 "us, a limit of someone else's: "
                         "the headroom stays under it", u->name, u->scope->cg->path, s->quota_usec, s->period_usec);
        u->scope->tied = tied;
        u->scope->ancestor.has = false;
        /* The law's nearest limited ancestor changes: read again, not
         * taken from what the gate of its siblings kept. */
        unit_forget_ancestor(u);
}

void unit_scope_follow(Unit *u, const struct bw_bandwidth *cur) {
        struct bw_bandwidth s;
        int r;

        if (!u->adopted || !u->cfg->subgroup)
                return;
        r = scope_open(u);
        if (r <= 0) {
                if (r < 0)
                        log_debug_errno(r, "%s: cannot open its scope: %s", u->name, STRERROR(r));
                scope_set_tied(u, false, NULL);
                return;
        }
        r = bw_cg_read_bandwidth(u->scope->cg, &s);
        if (r < 0) {
                log_debug_errno(r, "%s: cannot read its scope's quota: %s", u->name, STRERROR(r));
                if (bw_cg_error_is_vanished(r))
                        unit_scope_close(u);
                return;
        }
        /* A value of someone else's is remembered while it stays. */
        if (u->scope->has_foreign && s.quota_usec != u->scope->foreign_quota_usec)
                u->scope->has_foreign = false;
        if (!scope_quota_ours(u, &s, cur) || scope_only_child(u) <= 0) {
                if (s.quota_usec != BW_QUOTA_MAX && !u->scope->has_foreign) {
                        u->scope->has_foreign = true;
                        u->scope->foreign_quota_usec = s.quota_usec;
                }
                u->scope->has_ours = false;
                scope_set_tied(u, false, s.quota_usec != BW_QUOTA_MAX ? &s : NULL);
                return;
        }
        scope_set_tied(u, true, &s);
        u->scope->has_ours = true;
        u->scope->ours_quota_usec = s.quota_usec;
        /* Observing only: nothing is written, the scope stays as it is. */
        if (bw_unit_mode(u->ctx->config, u->cfg) != BW_MODE_OBSERVE)
                scope_write(u, &s, in_scope_period(cur->quota_usec, cur->period_usec, s.period_usec));
}

void unit_scope_before_write(Unit *u, const struct bw_bandwidth *target) {
        struct bw_bandwidth s;
        uint64_t q;

        if (!unit_scope_tied(u) || bw_cg_read_bandwidth(u->scope->cg, &s) < 0)
                return;
        q = in_scope_period(target->quota_usec, target->period_usec, s.period_usec);
        /* Raised first, so the subgroup's new quota is never held back. */
        if (s.quota_usec != BW_QUOTA_MAX && q > s.quota_usec)
                scope_write(u, &s, q);
}

void unit_scope_after_write(Unit *u, const struct bw_bandwidth *now) {
        struct bw_bandwidth s;

        if (!unit_scope_tied(u) || bw_cg_read_bandwidth(u->scope->cg, &s) < 0)
                return;
        /* Someone else's value by now (between the two writes): untied at
         * the next full sample, not written over. */
        if (!scope_quota_ours(u, &s, now))
                return;
        scope_write(u, &s, in_scope_period(now->quota_usec, now->period_usec, s.period_usec));
}

uint64_t unit_scope_ancestor_quota(Unit *u, uint64_t now) {
        _cleanup_free_ char *path = NULL;
        uint64_t q;
        int r;

        if (u->scope->ancestor.has && now - u->scope->ancestor.read_usec < SCOPE_ANCESTOR_REFRESH_USEC)
                return u->scope->ancestor.quota_usec;
        r = bw_cg_read_ancestor_quota(u->ctx->root, u->scope->cg, u->baseline.period_usec, &q, &path);
        if (r < 0) {
                log_debug_errno(r, "%s: cannot read the quotas above its scope: %s", u->name, STRERROR(r));
                return u->scope->ancestor.has ? u->scope->ancestor.quota_usec : BW_QUOTA_MAX;
        }
        if (r > 0 && (!u->scope->ancestor.has || u->scope->ancestor.quota_usec != q))
                log_info("%s: nearest limited ancestor above its scope, %s, allows %" PRIu64 "us per %" PRIu32
                         "us period: the headroom stays under it", u->name, path, q, u->baseline.period_usec);
        u->scope->ancestor.has = true;
        u->scope->ancestor.quota_usec = r > 0 ? q : BW_QUOTA_MAX;
        u->scope->ancestor.read_usec = now;
        return u->scope->ancestor.quota_usec;
}

/* An ancestor's quota is read again this often (unit_ancestor_quota()). */
#define ANCESTOR_REFRESH_USEC (10 * USEC_PER_SEC)

/* The nearest limited ancestor's quota in this unit's period, or
 * BW_QUOTA_MAX: the headroom never goes above it. Walking up is a few
 * open/read/close per ancestor, more than the whole sample costs: it is
 * read again every ANCESTOR_REFRESH_USEC, and at once for a new cgroup;
 * siblings share one walk through their parent's gate (usagegate.h). */
uint64_t unit_ancestor_quota(Unit *u, uint64_t now) {
        _cleanup_free_ char *path = NULL;
        const char *shared = NULL;
        uint64_t q, t;
        int r;

        /* A scope tied to the unit is no limit: the one above it is. */
        if (unit_scope_tied(u))
                return unit_scope_ancestor_quota(u, now);
        if (u->ancestor.has && now - u->ancestor.read_usec < ANCESTOR_REFRESH_USEC)
                return u->ancestor.quota_usec;
        if (usage_gate_ancestor_get(u->sampler.gate, u->baseline.period_usec, now, ANCESTOR_REFRESH_USEC, &q,
                                    &shared, &t)) {
                if (shared && (!u->ancestor.has || u->ancestor.quota_usec != q))
                        log_info("%s: nearest limited ancestor %s allows %" PRIu64 "us per %" PRIu32 "us period: "
                                 "the headroom stays under it", u->name, shared, q,
                                 u->baseline.period_usec);
                u->ancestor.has = true;
                u->ancestor.quota_usec = q;
                u->ancestor.read_usec = t;
                return q;
        }
        r = bw_cg_read_ancestor_quota(u->ctx->root, u->cg, u->baseline.period_usec, &q, &path);
        if (r < 0) {
                log_debug_errno(r, "%s: cannot read the ancestors' quotas: %s", u->name, STRERROR(r));
                return u->ancestor.has ? u->ancestor.quota_usec : BW_QUOTA_MAX;
        }
        if (r > 0 && (!u->ancestor.has || u->ancestor.quota_usec != q))
                log_info("%s: nearest limited ancestor %s allows %" PRIu64 "us per %" PRIu32 "us period: "
                         "the headroom stays under it", u->name, path, q, u->baseline.period_usec);
        u->ancestor.has = true;
        u->ancestor.quota_usec = r > 0 ? q : BW_QUOTA_MAX;
        u->ancestor.read_usec = now;
        usage_gate_ancestor_put(u->sampler.gate, u->baseline.period_usec, now, u->ancestor.quota_usec,
                                r > 0 ? path : NULL);
        return u->ancestor.quota_usec;
}

void unit_forget_ancestor(Unit *u) {
        u->ancestor.has = false;
        usage_gate_ancestor_forget(u->sampler.gate);
}
