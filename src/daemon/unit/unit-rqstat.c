/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One unit's run-queue telemetry (unit-rqstat.h): its cgroup tracked
 * while open, and at each sample the window since the previous one, whose
 * wait p99 and throttled share go into the law's input. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bwgov/telemetry/rqstat.h"
#include "clock.h"
#include "unit-rqstat.h"

int unit_rqstat_attach(struct unit_rqstat *ut, Rqstat *t, int v2_dirfd, uint64_t cpu_cgroup_id, void *owner) {
        uint32_t slot;
        uint64_t id;
        int r;

        if (!t || ut->cgroup_id != 0)
                return 0;
        r = rqstat_cgroup_id(v2_dirfd, &id);
        if (r < 0)
                return r;
        r = rqstat_track(t, id);
        if (r < 0)
                return r;
        *ut = (struct unit_rqstat) {
                .cgroup_id = id,
                .since_realtime_usec = clock_now_usec(CLOCK_REALTIME),
        };
        r = rqstat_watch(t, cpu_cgroup_id, owner, &slot);
        if (r < 0)
                return r;
        ut->act_watched = true;
        ut->act_slot = slot;
        return 0;
}

const struct unit_rqstat_counts *unit_rqstat_counts(const struct unit_rqstat *ut) {
        static struct unit_rqstat_counts zeros;

        if (ut->c)
                return ut->c;
        if (ut->cgroup_id == 0 || ut->zero_samples == 0)
                return NULL;
        /* Nothing counted: the counters are zero, and so was each window. */
        zeros = (struct unit_rqstat_counts) {
                .has_last = true,
                .last_usec = ut->zero_usec,
                .has_window = ut->zero_samples > 1,
                .window_usec = ut->zero_window_usec,
        };
        return &zeros;
}

static bool counts_zero(const struct bw_rq_counters *c) {
        static const struct bw_rq_counters zero;

        return memcmp(c, &zero, sizeof(zero)) == 0;
}

void unit_rqstat_detach(struct unit_rqstat *ut, Rqstat *t) {
        if (t && ut->cgroup_id != 0)
                (void) rqstat_untrack(t, ut->cgroup_id);
        if (t && ut->act_watched)
                (void) rqstat_unwatch(t, ut->act_slot);
        free(ut->c);
        *ut = (struct unit_rqstat) {0};
}

int unit_rqstat_sample(struct unit_rqstat *ut, Rqstat *t, uint64_t now_usec,
                          struct bw_policy_input *in) {
        struct unit_rqstat_counts *c = ut->c;
        struct bw_rq_counters now;
        uint64_t p99;
        int r;

        in->has_rq = false;
        if (!t || ut->cgroup_id == 0)
                return 0;
        r = rqstat_read(t, ut->cgroup_id, &now);
        if (r < 0)
                return r;
        if (!c) {
                if (counts_zero(&now)) {
                        /* Nothing waited yet: no window to judge, no memory. */
                        if (ut->zero_samples > 0)
                                ut->zero_window_usec = now_usec - ut->zero_usec;
                        ut->zero_samples = (uint8_t) (ut->zero_samples < 2 ? ut->zero_samples + 1 : 2);
                        ut->zero_usec = now_usec;
                        return 0;
                }
                c = ut->c = calloc(1, sizeof(*c));
                if (!c)
                        return -ENOMEM;
                /* The window since the last sample, which found zeros. */
                c->has_last = ut->zero_samples > 0;
                c->last_usec = ut->zero_usec;
        }
        if (c->has_last && bw_rq_delta(&now, &c->last, &c->window) > 0) {
                /* The maps were loaded again (grown): counting started anew
                 * at some point since the last sample, unknown when. */
                ut->since_realtime_usec = clock_now_usec(CLOCK_REALTIME);
                c->has_window = false;
        } else if (c->has_last) {
                c->window_usec = now_usec - c->last_usec;
                c->has_window = true;
        }
        c->last = now;
        c->last_usec = now_usec;
        c->has_last = true;

        if (!c->has_window || bw_rq_quantile_usec(c->window.wait_slots, c->window.wait_max_ns, BW_RQ_P99,
                                                   &p99) < 0)
                return 0;
        in->has_rq = true;
        in->rq_wait_p99_usec = p99;
        in->rq_throttled_permille = c->window.wait_ns > 0 ?
                (unsigned) (c->window.throttled_wait_ns * 1000 / c->window.wait_ns) : 0;
        return 0;
}
