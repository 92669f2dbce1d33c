/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovctl check-kernel: the startup kernel check, as a table or JSON. */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

#include "bwgov/cgroupfs.h"
#include "bwgov/kreport.h"
#include "bwgov/macro.h"
#include "check-kernel.h"
#include "table.h"

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
               "     --manifest=PATH      Manifest to check against (default: the installed one)\n"
               "     --json               Print JSON instead of a table\n"
               "     --probe              Run the behaviour probes in a scratch cgroup (root only;\n"
               "                          the default when run as root)\n"
               "     --no-probe           Do not run them\n"
               "     --cgroup-root=DIR    Directory standing in for /sys/fs/cgroup\n"
               "\n"
               "Exit status: 0 every required item is present, 1 a required item is\n"
               "missing, 2 the kernel could not be checked.\n");
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

static void print_ids(const struct bw_kcheck_result *res, enum bw_kstatus status) {
        bool first = true;

        for (size_t i = 0; i < res->n_rows; i++)
                if (res->rows[i].importance == BW_KIMPORTANCE_REQUIRED && res->rows[i].status == status) {
                        printf("%s%s", first ? "" : ", ", res->rows[i].id);
                        first = false;
                }
}

static void print_human(const struct bw_kreport *rep) {
        const struct bw_kcheck_result *res = rep->result;
        bool colour = table_use_colour();
        char ver[BW_KRELEASE_MAX];

        if (rep->version_ok)
                printf("Kernel:    %s (%s%s)\n", rep->version.release,
                       bw_kversion_format(&rep->version, ver, sizeof ver),
                       rep->version.origin == BW_KVERSION_FROM_DEBIAN ? ", from the Debian version" :
                       !rep->version.patch_known ? ", stable level unknown" : "");
        else
                printf("Kernel:    unknown (%s)\n", rep->version_error ? rep->version_error : "?");

        printf("Manifest:  %s", rep->manifest_path);
        if (rep->manifest)
                printf(" (patch set %s, %zu files %s)", rep->manifest->patchset_version, rep->manifest->n_files,
                       rep->files_ok ? "verified" : "NOT verified");
        printf("\n");
        for (size_t i = 0; i < rep->errors.n_errors; i++)
                printf("           %s: %s\n", rep->errors.errors[i].path, rep->errors.errors[i].message);

        if (rep->root)
                printf("Cgroups:   %s, bandwidth in %s\n", bw_cg_layout_to_string(rep->root->layout),
                       rep->root->bw_path);
        else if (rep->root_error)
                printf("Cgroups:   %s\n", rep->root_error);
        if (rep->manifest)
                printf("Probes:    behaviour probes %s\n", rep->probes_note);

        if (res) {
                static const char *const headers[] = { "ITEM", "STATUS", "DETECTED BY", "BWGOV DOES" };
                size_t w_id = strlen(headers[0]), w_status = strlen(headers[1]), w_how = strlen(headers[2]);
                bool first = true;

                for (size_t i = 0; i < res->n_rows; i++) {
                        const struct bw_kcheck_row *row = &res->rows[i];

                        if (strlen(row->id) > w_id)
                                w_id = strlen(row->id);
                        if (strlen(bw_kstatus_to_string(row->status)) > w_status)
                                w_status = strlen(bw_kstatus_to_string(row->status));
                        if (strlen(row->detected_by) > w_how)
                                w_how = strlen(row->detected_by);
                }

                printf("\n%s%-*s  %-*s  %-*s  %s%s\n", colour ? "\033[1m" : "",
                       (int) w_id, headers[0], (int) w_status, headers[1], (int) w_how, headers[2], headers[3],
                       colour ? "\033[0m" : "");
                for (size_t i = 0; i < res->n_rows; i++) {
                        const struct bw_kcheck_row *row = &res->rows[i];
                        const char *st = bw_kstatus_to_string(row->status);

                        printf("%-*s  %s%s%s%*s  %-*s  %s\n",
                               (int) w_id, row->id,
                               colour ? status_colour(row->status) : "", st, colour ? "\033[0m" : "",
                               (int) (w_status - strlen(st)), "",
                               (int) w_how, row->detected_by,
                               row->status == BW_KSTATUS_PRESENT ? "-" : row->fallback);
                }

                printf("\nCapabilities:");
#define CAP(field, name)                                                \
                do {                                                    \
                        if (res->caps.field) {                          \
                                printf("%s%s", first ? " " : ", ", name); \
                                first = false;                          \
                        }                                               \
                } while (0)
                CAP(has_burst, "burst");
                CAP(burst_bug, "burst-bug (repaired after quota writes)");
                CAP(has_burst_stats, "burst-stats");
                CAP(has_psi, "psi");
                CAP(has_psi_full, "psi-full");
                CAP(has_psi_triggers_unprivileged, "psi-triggers-unprivileged");
                CAP(identical_update_is_noop, "identical-update-noop");
                CAP(has_bpf_runqueue, "bpf-runqueue");
#undef CAP
                printf("%s\n", first ? " none" : "");
                if (res->caps.has_bpf_runqueue)
                        printf("Run-queue telemetry: throttled wait %s, %s throttle model\n",
                               strcmp(res->caps.bpf_throttled_clock, "exact") == 0 ? "exact" :
                               strcmp(res->caps.bpf_throttled_clock, "estimate") == 0 ? "estimated (PELT clock)" :
                               "not seen", res->caps.throttle_model);
        }

        printf("Verdict:   %s", bw_kverdict_to_string(rep->verdict));
        if (bw_kreport_problem(rep))
                printf(", %s", bw_kreport_problem(rep));
        if (res && res->n_required_absent > 0) {
                printf("; required but absent: ");
                print_ids(res, BW_KSTATUS_ABSENT);
        }
        if (res && res->n_required_unknown > 0) {
                printf("; required but undecided: ");
                print_ids(res, BW_KSTATUS_UNKNOWN);
        }
        printf("\n");
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
