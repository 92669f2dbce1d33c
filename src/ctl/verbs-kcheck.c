/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl check-kernel: the startup kernel check, as a table or JSON. */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

#include "bwgov/cgroup/cgroupfs.h"
#include "bwgov/kernel/kmanifest.h"
#include "bwgov/kernel/kreport.h"
#include "bwgov/util/macro.h"
#include "table.h"
#include "verbs.h"

#define EXIT_CHECK_FAILED 2

struct args {
        const char *manifest;
        bool json;
        int probe;                      /* -1: when root */
        const char *cgroup_root;
        /* Test seams, not in --help: */
        const char *proc_version;       /* file with the /proc/version text */
        const char *host_root;          /* prefix for /proc and /boot */
        const char *btf;                /* BTF file instead of /sys/kernel/btf/vmlinux */
        const char *scratch_prefix;     /* name prefix of the scratch cgroup */
};

static void help(void) {
        printf("Usage: bwgovctl check-kernel [OPTIONS]\n"
               "\n"
               "Check the running kernel against the bwgov kernel patch-set manifest:\n"
               "for every item, whether the kernel has it, how that was found out, and\n"
               "what bwgov does when it is missing.\n"
               "\n"
               "  -h --help               Show this help\n"
               "     --manifest=PATH      Manifest to check against (default:\n"
               "                          %s)\n"
               "     --json               Print JSON instead of a table\n"
               "     --probe              Run every behaviour probe in a scratch cgroup, the busy-loop\n"
               "                          ones included (root only; the default when run as root)\n"
               "     --no-probe           Run only the load-free ones (write-order: a few writes,\n"
               "                          no load), as bwgovd does at startup\n"
               "     --cgroup-root=DIR    Directory standing in for /sys/fs/cgroup\n"
               "     --socket=PATH        Ignored: this command talks to no daemon\n"
               "\n"
               "Exit status: 0 every required item is present, 1 a required item is\n"
               "missing, 2 the kernel could not be checked.\n", bw_kmanifest_default_path());
}

static int parse_args(int argc, char *argv[], struct args *ret) {
        enum {
                ARG_MANIFEST = 0x100,
                ARG_JSON,
                ARG_PROBE,
                ARG_NO_PROBE,
                ARG_CGROUP_ROOT,
                ARG_PROC_VERSION,
                ARG_HOST_ROOT,
                ARG_BTF,
                ARG_SCRATCH_PREFIX,
                ARG_SOCKET,
        };
        static const struct option options[] = {
                { "help",           no_argument,       NULL, 'h'                },
                { "manifest",       required_argument, NULL, ARG_MANIFEST       },
                { "json",           no_argument,       NULL, ARG_JSON           },
                { "probe",          no_argument,       NULL, ARG_PROBE          },
                { "no-probe",       no_argument,       NULL, ARG_NO_PROBE       },
                { "cgroup-root",    required_argument, NULL, ARG_CGROUP_ROOT    },
                { "proc-version",   required_argument, NULL, ARG_PROC_VERSION   },
                { "host-root",      required_argument, NULL, ARG_HOST_ROOT      },
                { "btf",            required_argument, NULL, ARG_BTF            },
                { "scratch-prefix", required_argument, NULL, ARG_SCRATCH_PREFIX },
                /* Every verb takes it ("bwgovctl --socket=X check-kernel" in
                 * a script); this one talks to no daemon. */
                { "socket",         required_argument, NULL, ARG_SOCKET         },
                { NULL, 0, NULL, 0 }
        };
        struct args a = { .probe = -1 };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_MANIFEST:
                        a.manifest = optarg;
                        break;
                case ARG_JSON:
                        a.json = true;
                        break;
                case ARG_PROBE:
                        a.probe = 1;
                        break;
                case ARG_NO_PROBE:
                        a.probe = 0;
                        break;
                case ARG_CGROUP_ROOT:
                        a.cgroup_root = optarg;
                        break;
                case ARG_PROC_VERSION:
                        a.proc_version = optarg;
                        break;
                case ARG_HOST_ROOT:
                        a.host_root = optarg;
                        break;
                case ARG_BTF:
                        a.btf = optarg;
                        break;
                case ARG_SCRATCH_PREFIX:
                        a.scratch_prefix = optarg;
                        break;
                case ARG_SOCKET:
                        break;          /* no daemon to reach */
                default:
                        return -EINVAL;
                }
        if (optind < argc) {
                fprintf(stderr, "bwgovctl check-kernel: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        *ret = a;
        return 1;
}

/* ------------------------------------------------------------------------ */
/* Human output */

static const char *status_colour(enum bw_kstatus s) {
        switch (s) {
        case BW_KSTATUS_PRESENT:
                return ANSI_GREEN;
        case BW_KSTATUS_ABSENT:
                return ANSI_RED;
        default:
                return ANSI_YELLOW;
        }
}

/* The human output fits TEXT_WIDTH columns (a terminal of 100, or a mail):
 * long values wrap at blanks onto lines indented to where they began; a
 * word longer than a line stays whole. --json is unaffected. */
#define TEXT_WIDTH 100

/* Print text, the cursor at column col, wrapped as above; ends the line. */
static void print_wrapped(size_t col, const char *text) {
        size_t at = col;

        for (const char *p = text; *p;) {
                size_t n = strcspn(p, " ");

                if (at > col && at + 1 + n > TEXT_WIDTH) {
                        printf("\n%*s", (int) col, "");
                        at = col;
                } else if (at > col) {
                        putchar(' ');
                        at++;
                }
                printf("%.*s", (int) n, p);
                at += n;
                p += n;
                p += strspn(p, " ");
        }
        putchar('\n');
}

/* "Label:     text", the text wrapped from column 11. */
static void print_field(const char *label, const char *fmt, ...) _printf_(2, 3);
static void print_field(const char *label, const char *fmt, ...) {
        _cleanup_free_ char *text = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&text, fmt, ap);
        va_end(ap);
        printf("%-11s", label);
        print_wrapped(11, n >= 0 ? text : "(out of memory)");
}

/* ITEM, STATUS and DETECTED BY as columns; what bwgov does without an
 * item that is absent or unknown on a line of its own under them, from the
 * STATUS column on. */
static void print_items(const struct bw_kcheck_result *res, bool colour) {
        static const char *const headers[] = { "ITEM", "STATUS", "DETECTED BY" };
        size_t w_id = strlen(headers[0]), w_status = strlen(headers[1]);

        for (size_t i = 0; i < res->n_rows; i++) {
                const struct bw_kcheck_row *row = &res->rows[i];

                if (strlen(row->id) > w_id)
                        w_id = strlen(row->id);
                if (strlen(bw_kstatus_to_string(row->status)) > w_status)
                        w_status = strlen(bw_kstatus_to_string(row->status));
        }

        printf("\n%s%-*s  %-*s  %s%s\n", colour ? ANSI_BOLD : "", (int) w_id, headers[0], (int) w_status, headers[1],
               headers[2], colour ? ANSI_RESET : "");
        for (size_t i = 0; i < res->n_rows; i++) {
                const struct bw_kcheck_row *row = &res->rows[i];
                const char *st = bw_kstatus_to_string(row->status);
                _cleanup_free_ char *does = NULL;

                printf("%-*s  %s%s%s%*s  ", (int) w_id, row->id,
                       colour ? status_colour(row->status) : "", st, colour ? ANSI_RESET : "",
                       (int) (w_status - strlen(st)), "");
                print_wrapped(w_id + 2 + w_status + 2, row->detected_by);
                if (row->status == BW_KSTATUS_PRESENT)
                        continue;
                printf("%*s", (int) (w_id + 2), "");
                if (asprintf(&does, "without it: %s", row->fallback) < 0)
                        does = NULL;
                print_wrapped(w_id + 2, does ? does : row->fallback);
        }
}

/* "Capabilities: a, b, c", wrapped from column 14. */
static void print_caps(const struct bw_kcaps *caps) {
        static const struct {
                size_t offset;
                const char *name;
        } names[] = {
                { offsetof(struct bw_kcaps, has_burst), "burst" },
                { offsetof(struct bw_kcaps, burst_bug), "burst-bug (repaired after quota writes)" },
                { offsetof(struct bw_kcaps, has_burst_stats), "burst-stats" },
                { offsetof(struct bw_kcaps, has_psi), "psi" },
                { offsetof(struct bw_kcaps, has_psi_full), "psi-full" },
                { offsetof(struct bw_kcaps, has_psi_triggers_unprivileged), "psi-triggers-unprivileged" },
                { offsetof(struct bw_kcaps, identical_update_is_noop), "identical-update-noop" },
                { offsetof(struct bw_kcaps, write_order_free), "write-order-free" },
                { offsetof(struct bw_kcaps, has_bpf_runqueue), "bpf-runqueue" },
        };
        char text[512] = "";

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (*(const bool *) ((const char *) caps + names[i].offset))
                        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", *text ? ", " : "",
                                 names[i].name);
        printf("Capabilities: ");
        print_wrapped(14, *text ? text : "none");
}

static void print_ids(const struct bw_kcheck_result *res, enum bw_kstatus status, char *buf, size_t size) {
        for (size_t i = 0; i < res->n_rows; i++)
                if (res->rows[i].importance == BW_KIMPORTANCE_REQUIRED && res->rows[i].status == status)
                        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[strlen(buf) - 1] == ' ' ? "" : ", ",
                                 res->rows[i].id);
}

static void print_human(const struct bw_kreport *rep) {
        const struct bw_kcheck_result *res = rep->result;
        char ver[BW_KRELEASE_MAX], verdict[1024];

        if (rep->version_ok)
                print_field("Kernel:", "%s (%s%s)", rep->version.release,
                            bw_kversion_format(&rep->version, ver, sizeof ver),
                            rep->version.origin == BW_KVERSION_FROM_DEBIAN ? ", from the Debian version" :
                            !rep->version.patch_known ? ", stable level unknown" : "");
        else
                print_field("Kernel:", "unknown (%s)", rep->version_error ? rep->version_error : "?");

        if (rep->manifest)
                print_field("Manifest:", "%s (patch set %s, %zu files %s)", rep->manifest_path,
                            rep->manifest->patchset_version, rep->manifest->n_files,
                            rep->files_ok ? "verified" : "NOT verified");
        else
                print_field("Manifest:", "%s", rep->manifest_path);
        for (size_t i = 0; i < rep->errors.n_errors; i++)
                print_field("", "%s: %s", rep->errors.errors[i].path, rep->errors.errors[i].message);

        if (rep->root)
                print_field("Cgroups:", "%s, bandwidth in %s", bw_cg_layout_to_string(rep->root->layout),
                            rep->root->bw_path);
        else if (rep->root_error)
                print_field("Cgroups:", "%s", rep->root_error);
        if (rep->manifest)
                print_field("Probes:", "behaviour probes %s", rep->probes_note);

        if (res) {
                print_items(res, table_use_colour());
                printf("\n");
                print_caps(&res->caps);
                if (res->caps.has_bpf_runqueue)
                        printf("Run-queue telemetry: throttled wait %s, %s throttle model\n",
                               strcmp(res->caps.bpf_throttled_clock, "exact") == 0 ? "exact" :
                               strcmp(res->caps.bpf_throttled_clock, "estimate") == 0 ? "estimated (PELT clock)" :
                               "not seen", res->caps.throttle_model);
        }

        snprintf(verdict, sizeof verdict, "%s", bw_kverdict_to_string(rep->verdict));
        if (bw_kreport_problem(rep))
                snprintf(verdict + strlen(verdict), sizeof verdict - strlen(verdict), ", %s",
                         bw_kreport_problem(rep));
        if (res && res->n_required_absent > 0) {
                snprintf(verdict + strlen(verdict), sizeof verdict - strlen(verdict), "; required but absent: ");
                print_ids(res, BW_KSTATUS_ABSENT, verdict, sizeof verdict);
        }
        if (res && res->n_required_unknown > 0) {
                snprintf(verdict + strlen(verdict), sizeof verdict - strlen(verdict), "; required but undecided: ");
                print_ids(res, BW_KSTATUS_UNKNOWN, verdict, sizeof verdict);
        }
        print_field("Verdict:", "%s", verdict);
}

int verb_check_kernel(int argc, char *argv[]) {
        struct bw_kreport *rep = NULL;
        struct args a;
        int r;

        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? EXIT_CHECK_FAILED : EXIT_SUCCESS;

        r = bw_kreport_run(&(struct bw_kreport_args) {
                                .manifest_path = a.manifest,
                                .host_root = a.host_root,
                                .proc_version = a.proc_version,
                                .btf_path = a.btf,
                                .cgroup_root = a.cgroup_root,
                                .probe = a.probe,
                                .privileged = geteuid() == 0,
                                .scratch_prefix = a.scratch_prefix,
                           }, &rep);
        if (r < 0)
                goto oom;

        if (!a.json)
                print_human(rep);
        else {
                _cleanup_free_ char *s = NULL;
                json_t *j = bw_kreport_to_json(rep);

                s = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
                json_decref(j);
                if (!s)
                        goto oom;
                printf("%s\n", s);
        }
        r = (int) rep->verdict;
        bw_kreport_free(rep);
        return r;

oom:
        bw_kreport_free(rep);
        fprintf(stderr, "bwgovctl: out of memory\n");
        return EXIT_CHECK_FAILED;
}
