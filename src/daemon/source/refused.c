/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Refused quota writes from src/bpf/refused.bpf.c through its libbpf
 * skeleton and ring buffer (see refused.h); a stub without BPF. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bwgov/util/macro.h"
#include "config.h"
#include "log.h"
#include "refused.h"
#include "rqstat-bpf.h"

#if HAVE_BPF

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#include "src/bpf/refused.skel.h"
#pragma GCC diagnostic pop

struct Refused {
        struct refused *skel;
        struct ring_buffer *rb;
        sd_event_source *source;
        refused_handler_t handler;
        void *userdata;
        const char *function;
        uint64_t count;
};

static void refused_freep(Refused **r) {
        refused_free(*r);
}

static int on_event(void *ctx, void *data, size_t size) {
        Refused *r = ctx;
        struct bw_refused_write w;

        if (size < sizeof(w))
                return 0;
        memcpy(&w, data, sizeof(w));
        w.comm[sizeof(w.comm) - 1] = '\0';
        r->count++;
        r->handler(&w, r->userdata);
        return 0;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Refused *r = userdata;
        int k = ring_buffer__consume(r->rb);

        if (k < 0)
                log_warning_errno(k, "Reading refused quota writes failed: %s", STRERROR(k));
        return 0;
}

/* Which of the two functions the running kernel has (BTF). */
static const char *pick_function(char reason[static REFUSED_REASON_MAX]) {
        static const char *const names[] = { "tg_set_cfs_bandwidth", "tg_set_bandwidth" };
        struct btf *btf = btf__load_vmlinux_btf();
        const char *found = NULL;

        if (!btf) {
                snprintf(reason, REFUSED_REASON_MAX, "the kernel has no BTF (/sys/kernel/btf/vmlinux)");
                return NULL;
        }
        for (size_t i = 0; i < ELEMENTSOF(names) && !found; i++)
                if (btf__find_by_name_kind(btf, names[i], BTF_KIND_FUNC) > 0)
                        found = names[i];
        btf__free(btf);
        if (!found)
                snprintf(reason, REFUSED_REASON_MAX,
                         "the kernel's BTF has neither tg_set_cfs_bandwidth() nor tg_set_bandwidth()");
        return found;
}

/* libbpf's messages while loading go to the debug log: where tracing
 * programs are not permitted they are four warnings on every start, and the
 * notice the manager logs says the same in one line. */
_printf_(2, 0)
static int libbpf_debug(enum libbpf_print_level level, const char *fmt, va_list ap) {
        _cleanup_free_ char *msg = NULL;

        if (log_get_max_level() < LOG_DEBUG || vasprintf(&msg, fmt, ap) < 0)
                return 0;
        msg[strcspn(msg, "\n")] = '\0';
        log_debug("libbpf: %s", msg);
        return 0;
}

static int fail(int r, const char *step, char reason[static REFUSED_REASON_MAX]) {
        if (r == -EPERM)
                snprintf(reason, REFUSED_REASON_MAX,
                         "%s the fexit program was not permitted (needs CAP_BPF and CAP_PERFMON, and a kernel "
                         "that allows BPF tracing programs)", step);
        else
                snprintf(reason, REFUSED_REASON_MAX, "%s the fexit program failed: %s", step, STRERROR(r));
        return r;
}

int refused_new(sd_event *e, refused_handler_t handler, void *userdata, Refused **ret,
                char reason[static REFUSED_REASON_MAX]) {
        _cleanup_(refused_freep) Refused *r = NULL;
        const char *step = "loading";
        bool cfs;
        int k;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->handler = handler;
        r->userdata = userdata;
        r->function = pick_function(reason);
        if (!r->function)
                return -EOPNOTSUPP;
        cfs = strcmp(r->function, "tg_set_cfs_bandwidth") == 0;

        libbpf_set_print(libbpf_debug);
        r->skel = refused__open();
        k = r->skel ? 0 : -errno;
        if (k >= 0) {
                r->skel->rodata->bw_self_tgid = (uint32_t) getpid();
                k = bpf_program__set_autoload(r->skel->progs.refused_cfs_bandwidth, cfs);
        }
        if (k >= 0)
                k = bpf_program__set_autoload(r->skel->progs.refused_bandwidth, !cfs);
        if (k >= 0)
                k = refused__load(r->skel);
        if (k >= 0 && (k = refused__attach(r->skel)) < 0)
                step = "attaching";
        rqstat_libbpf_log();
        if (k < 0)
                return fail(k, step, reason);
        r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.events), on_event, r, NULL);
        if (!r->rb)
                return fail(-errno, "reading", reason);
        k = sd_event_add_io(e, &r->source, ring_buffer__epoll_fd(r->rb), EPOLLIN, on_io, r);
        if (k < 0)
                return fail(k, "watching", reason);
        (void) sd_event_source_set_description(r->source, "refused-writes");
        *ret = TAKE_PTR(r);
        return 0;
}

Refused *refused_free(Refused *r) {
        if (!r)
                return NULL;
        sd_event_source_disable_unref(r->source);
        ring_buffer__free(r->rb);
        refused__destroy(r->skel);
        free(r);
        return NULL;
}

const char *refused_function(const Refused *r) {
        return r->function;
}

uint64_t refused_count(const Refused *r) {
        return r->count;
}

#else

int refused_new(sd_event *e, refused_handler_t handler, void *userdata, Refused **ret,
                char reason[static REFUSED_REASON_MAX]) {
        snprintf(reason, REFUSED_REASON_MAX, "bwgovd was built without BPF (-Dbpf=disabled)");
        return -EOPNOTSUPP;
}

Refused *refused_free(Refused *r) {
        return NULL;
}

const char *refused_function(const Refused *r) {
        return NULL;
}

uint64_t refused_count(const Refused *r) {
        return 0;
}

#endif
