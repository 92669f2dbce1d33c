/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One usage read per parent cgroup for its governed children (usagegate.h). */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "usagegate.h"
#include "bwgov/cgroup/cgroupfs-usage.h"

struct UsageGate {
        UsageGates *owner;
        char *path;                     /* the parent, relative to the root */
        const struct bw_cg_root *root;
        int fd;                         /* its usage file, -1 until the first read */
        bool refused;                   /* the file could not be opened or read: not used again */
        unsigned children;
        bool has_read;
        uint64_t usage_usec;            /* the last reading ... */
        uint64_t read_usec;             /* ... and when it was taken */
        bool has_ancestor;              /* the nearest limited ancestor's quota ... */
        uint64_t anc_period_usec;       /* ... in this period ... */
        uint64_t anc_quota_usec;        /* ... (BW_QUOTA_MAX: none) ... */
        uint64_t anc_read_usec;         /* ... read then ... */
        char *anc_path;                 /* ... at this ancestor (NULL: none) */
};

struct UsageGates {
        void *tree;                     /* tsearch() of UsageGate by path */
        size_t n;
        size_t fds;
        uint64_t skipped;
        bool require_kernfs;
};

static int gate_compare(const void *a, const void *b) {
        return strcmp(((const UsageGate *) a)->path, ((const UsageGate *) b)->path);
}

int usage_gates_new(bool require_kernfs, UsageGates **ret) {
        UsageGates *g = calloc(1, sizeof(*g));

        if (!g)
                return -ENOMEM;
        g->require_kernfs = require_kernfs;
        *ret = g;
        return 0;
}

UsageGates *usage_gates_free(UsageGates *g) {
        if (!g)
                return NULL;
        /* Every unit put its gate back; a leftover is a bug, not freed here
         * under a unit that still points at it. */
        free(g);
        return NULL;
}

UsageGate *usage_gate_get(UsageGates *g, const struct bw_cg_root *root, const char *path) {
        UsageGate key, *gate, **slot;
        const char *slash;
        char *parent;

        if (!g || !root || !path)
                return NULL;
        path += strspn(path, "/");
        slash = strrchr(path, '/');
        if (!slash || slash == path)
                return NULL;            /* the root's child: its parent always moves */
        parent = strndup(path, (size_t) (slash - path));
        if (!parent)
                return NULL;
        key.path = parent;
        slot = tfind(&key, &g->tree, gate_compare);
        if (slot) {
                free(parent);
                (*slot)->children++;
                return *slot;
        }
        gate = calloc(1, sizeof(*gate));
        if (!gate) {
                free(parent);
                return NULL;
        }
        *gate = (UsageGate) { .owner = g, .path = parent, .root = root, .fd = -1, .children = 1 };
        slot = tsearch(gate, &g->tree, gate_compare);
        if (!slot) {
                free(parent);
                free(gate);
                return NULL;
        }
        g->n++;
        return gate;
}

void usage_gate_put(UsageGate *gate) {
        UsageGates *g;

        if (!gate)
                return;
        if (--gate->children > 0) {
                /* Below the threshold the file is not read: not held either. */
                if (gate->children < USAGE_GATE_MIN_CHILDREN && gate->fd >= 0) {
                        close(gate->fd);
                        gate->fd = -1;
                        gate->has_read = false;
                        gate->owner->fds--;
                }
                return;
        }
        g = gate->owner;
        (void) tdelete(gate, &g->tree, gate_compare);
        g->n--;
        if (gate->fd >= 0) {
                close(gate->fd);
                g->fds--;
        }
        free(gate->anc_path);
        free(gate->path);
        free(gate);
}

unsigned usage_gate_children(const UsageGate *gate) {
        return gate ? gate->children : 0;
}

int usage_gate_read(UsageGate *gate, uint64_t now_usec, uint64_t after_usec,
                    uint64_t *ret_usage, uint64_t *ret_read_usec) {
        uint64_t usage;
        int r;

        if (!gate || gate->refused || gate->children < USAGE_GATE_MIN_CHILDREN)
                return -EAGAIN;
        if (gate->has_read && gate->read_usec > after_usec && gate->read_usec <= now_usec &&
            now_usec - gate->read_usec <= USAGE_GATE_MAX_AGE_USEC) {
                *ret_usage = gate->usage_usec;
                *ret_read_usec = gate->read_usec;
                return 0;
        }
        if (gate->fd < 0) {
                r = bw_cg_usage_open(gate->root, gate->path, gate->owner->require_kernfs);
                if (r == -EMFILE || r == -ENFILE)
                        return r;               /* tried again at the next read */
                if (r < 0) {
                        gate->refused = true;   /* not cgroupfs, no such tree: never */
                        return -EAGAIN;
                }
                gate->fd = r;
                gate->owner->fds++;
        }
        r = bw_cg_usage_read(gate->root, gate->fd, &usage);
        if (r < 0) {
                gate->has_read = false;
                return r;
        }
        gate->usage_usec = usage;
        gate->read_usec = now_usec;
        gate->has_read = true;
        *ret_usage = usage;
        *ret_read_usec = now_usec;
        return 0;
}

void usage_gate_ancestor_put(UsageGate *gate, uint64_t period_usec, uint64_t now_usec, uint64_t quota_usec,
                             const char *path) {
        char *p = NULL;

        if (!gate)
                return;
        if (path && !(p = strdup(path))) {
                gate->has_ancestor = false;     /* not kept: the next child walks */
                return;
        }
        free(gate->anc_path);
        gate->anc_path = p;
        gate->has_ancestor = true;
        gate->anc_period_usec = period_usec;
        gate->anc_quota_usec = quota_usec;
        gate->anc_read_usec = now_usec;
}

bool usage_gate_ancestor_get(UsageGate *gate, uint64_t period_usec, uint64_t now_usec, uint64_t max_age_usec,
                             uint64_t *ret_quota_usec, const char **ret_path, uint64_t *ret_read_usec) {
        if (!gate || !gate->has_ancestor || gate->anc_period_usec != period_usec ||
            now_usec < gate->anc_read_usec || now_usec - gate->anc_read_usec >= max_age_usec)
                return false;
        *ret_quota_usec = gate->anc_quota_usec;
        if (ret_path)
                *ret_path = gate->anc_path;
        *ret_read_usec = gate->anc_read_usec;
        return true;
}

void usage_gate_ancestor_forget(UsageGate *gate) {
        if (gate)
                gate->has_ancestor = false;
}

void usage_gate_skipped(UsageGate *gate) {
        if (gate)
                gate->owner->skipped++;
}

size_t usage_gates_size(const UsageGates *g) {
        return g ? g->n : 0;
}

size_t usage_gates_fds(const UsageGates *g) {
        return g ? g->fds : 0;
}

uint64_t usage_gates_skipped(const UsageGates *g) {
        return g ? g->skipped : 0;
}
