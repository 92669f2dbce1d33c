/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One unit per cgroup, as far as the configuration tells: the cgroup each
 * unit names (Cgroup= or its name's, with its Subgroup=) and where it says
 * so, and the refusal of a second claim naming both (config-claims.h).
 * The daemon checks again by device and inode what it finds at run time
 * (units searched for by name, prefix units). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/config/config-dropin.h"
#include "bwgov/config/config-error.h"
#include "bwgov/config/config-types.h"
#include "bwgov/cgroup/discover.h"
#include "bwgov/util/macro.h"
#include "config-claims.h"

struct config_claim {
        char *path;
        char *at;                       /* "file:line" of Cgroup= or Subgroup=, NULL when from the name */
        char *unit;
};

void config_claims_done(struct config_claims *c) {
        for (size_t i = 0; i < c->n; i++)
                free_many(c->v[i].path, c->v[i].at, c->v[i].unit);
        free(c->v);
        *c = (struct config_claims) { 0 };
}

int config_claims_add(struct config_claims *c, const struct bw_unit_config *u, const char *named_at) {
        _cleanup_free_ char *path = NULL, *full = NULL, *at = NULL, *unit = NULL;
        struct config_claim *v;
        int r;

        r = u->cgroup ? ((path = strdup(u->cgroup)) ? 0 : -ENOMEM) : bw_unit_cgroup_path(u->name, &path);
        if (r == -EAGAIN || r == -EINVAL)
                return 0;       /* searched for by name, or no cgroup at all: nothing to claim here */
        if (r < 0)
                return r;
        if (u->subgroup && asprintf(&full, "%s%s%s", path, path[0] ? "/" : "", u->subgroup) < 0)
                return -ENOMEM;
        if ((u->cgroup || u->subgroup) && named_at && !(at = strdup(named_at)))
                return -ENOMEM;
        unit = strdup(u->name);
        if (!unit)
                return -ENOMEM;
        v = reallocarray(c->v, c->n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        c->v = v;
        c->v[c->n++] = (struct config_claim) { full ? TAKE_PTR(full) : TAKE_PTR(path), TAKE_PTR(at), TAKE_PTR(unit) };
        return 0;
}

static int claim_cmp(const void *a, const void *b) {
        const struct config_claim *x = a, *y = b;
        int k = strcmp(x->path, y->path);

        return k != 0 ? k : strcmp(x->unit, y->unit);
}

/* Two units on one cgroup would each take the other's writes for someone
 * else's and re-base on them: refused, naming both. */
int config_claims_check(struct config_claims *c, struct bw_config_error *error) {
        if (c->n < 2)
                return 0;       /* (and qsort() must not see a NULL array) */
        qsort(c->v, c->n, sizeof(*c->v), claim_cmp);
        for (size_t i = 1; i < c->n; i++) {
                const struct config_claim *a = &c->v[i - 1], *b = &c->v[i];
                _cleanup_free_ char *file = NULL;
                const char *colon;

                if (strcmp(a->path, b->path) != 0)
                        continue;
                /* Blame a Cgroup= or Subgroup= line: two names never map to
                 * one cgroup. */
                if (!b->at) {
                        const struct config_claim *t = a;

                        a = b;
                        b = t;
                }
                colon = b->at ? strrchr(b->at, ':') : NULL;
                if (!colon)
                        return bw_config_error_set(error, -EINVAL, NULL, 0, NULL, "units %s and %s govern one cgroup",
                                                   a->unit, b->unit);
                file = strndup(b->at, (size_t) (colon - b->at));
                if (!file)
                        return -ENOMEM;
                return bw_config_error_set(error, -EINVAL, file, (unsigned) strtoul(colon + 1, NULL, 10), "Cgroup",
                                           "unit %s would govern cgroup /%s, which unit %s governs (%s): "
                                           "one unit per cgroup", b->unit, b->path, a->unit,
                                           a->at ? a->at : "by its name");
        }
        return 0;
}

int config_cgroup_source(const struct bw_unit_config *u, const char *cg_file, unsigned cg_line,
                         const char *sub_file, unsigned sub_line, char **ret) {
        int k;

        *ret = NULL;
        /* Subgroup= first: it makes the path the unit governs. */
        if (u->subgroup && sub_file)
                k = asprintf(ret, "%s:%u", sub_file, sub_line);
        else if (u->cgroup && cg_file)
                k = asprintf(ret, "%s:%u", cg_file, cg_line);
        else
                return 0;       /* by its name */
        if (k < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}
