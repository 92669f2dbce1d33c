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
#include "bwgov/kernelcheck.h"
#include "bwgov/macro.h"
#include "check-kernel.h"

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

/* What the whole run found, for both output formats. */
struct report {
        const char *manifest_path;
        const struct bw_kmanifest *manifest;
        struct bw_kerrors errors;       /* manifest and file problems */
        bool manifest_ok;
        bool files_ok;
        bool version_ok;
        struct bw_kversion version;
        char *version_error;
        const struct bw_cg_root *root;
        char *root_error;
        bool probes_allowed;
        const char *probes_note;
        const struct bw_kcheck_result *result;
        enum bw_kverdict verdict;
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

static int read_version(const struct args *a, struct bw_kversion *ret, char **ret_error) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (a->proc_version)
                path = strdup(a->proc_version);
        else if (asprintf(&path, "%s/proc/version", a->host_root ? a->host_root : "") < 0)
                path = NULL;
        if (!path)
                return -ENOMEM;

        r = bw_kversion_read(path, ret);
        if (r == -EINVAL)
                return asprintf(ret_error, "%s: no kernel version found", path) < 0 ? -ENOMEM : r;
        if (r < 0)
                return asprintf(ret_error, "%s: %s", path, strerror(-r)) < 0 ? -ENOMEM : r;
        return 0;
}

/* Directory part of path, "." when there is none. */
static char *dir_of(const char *path) {
        const char *slash = strrchr(path, '/');

        if (!slash)
                return strdup(".");
        if (slash == path)
                return strdup("/");
        return strndup(path, (size_t) (slash - path));
}

/* ------------------------------------------------------------------------ */
/* Human output */

static bool use_colour(void) {
        const char *term = getenv("TERM");

        return isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && !(term && strcmp(term, "dumb") == 0);
}

static const char *status_colour(enum bw_kstatus s) {
        switch (s) {
        case BW_KSTATUS_PRESENT:
                return "\033[32m";
        case BW_KSTATUS_ABSENT:
                return "\033[31m";
        default:
                return "\033[33m";
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

static void print_human(const struct report *rep) {
        const struct bw_kcheck_result *res = rep->result;
        bool colour = use_colour();
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
#undef CAP
                printf("%s\n", first ? " none" : "");
        }

        printf("Verdict:   %s", bw_kverdict_to_string(rep->verdict));
        if (!rep->manifest)
                printf(", the manifest could not be loaded");
        else if (!rep->files_ok)
                printf(", the manifest's files do not match their digests");
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

/* ------------------------------------------------------------------------ */
/* JSON output */

static json_t *json_string_or_null(const char *s) {
        return s ? json_string(s) : json_null();
}

static json_t *kernel_json(const struct report *rep) {
        char ver[BW_KRELEASE_MAX];

        if (!rep->version_ok)
                return json_pack("{s:n, s:s?}", "release", "error", rep->version_error);
        return json_pack("{s:s, s:s, s:i, s:i, s:o, s:i, s:s}",
                         "release", rep->version.release,
                         "version", bw_kversion_format(&rep->version, ver, sizeof ver),
                         "major", (json_int_t) rep->version.major,
                         "minor", (json_int_t) rep->version.minor,
                         "patch", rep->version.patch_known ? json_integer(rep->version.patch) : json_null(),
                         "rc", (json_int_t) rep->version.rc,
                         "origin", rep->version.origin == BW_KVERSION_FROM_DEBIAN ? "debian" : "release");
}

static json_t *errors_json(const struct bw_kerrors *e) {
        json_t *arr = json_array();

        if (!arr)
                return NULL;
        for (size_t i = 0; i < e->n_errors; i++)
                if (json_array_append_new(arr, json_pack("{s:s, s:s}", "path", e->errors[i].path,
                                                         "message", e->errors[i].message)) < 0) {
                        json_decref(arr);
                        return NULL;
                }
        return arr;
}

static int print_json(const struct report *rep) {
        const struct bw_kcheck_result *res = rep->result;
        json_t *root, *items = NULL, *caps = NULL, *cgroup;
        char *s;

        if (res) {
                items = json_array();
                if (!items)
                        return -ENOMEM;
                for (size_t i = 0; i < res->n_rows; i++) {
                        const struct bw_kcheck_row *row = &res->rows[i];

                        if (json_array_append_new(items, json_pack(
                                        "{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:s, s:s}",
                                        "id", row->id,
                                        "title", row->title,
                                        "kind", bw_kitem_kind_to_string(row->kind),
                                        "importance", bw_kimportance_to_string(row->importance),
                                        "status", bw_kstatus_to_string(row->status),
                                        "method", json_string_or_null(row->method >= 0 ?
                                                        bw_kdetect_method_to_string(row->method) : NULL),
                                        "detected_by", row->detected_by,
                                        "behaviour", json_string_or_null(row->behaviour >= 0 ?
                                                        bw_kstatus_to_string(row->behaviour) : NULL),
                                        "effect", bw_keffect_to_string(row->effect),
                                        "fallback", row->fallback)) < 0) {
                                json_decref(items);
                                return -ENOMEM;
                        }
                }
                caps = json_pack("{s:b, s:b, s:b, s:b, s:b, s:b, s:b}",
                                 "has_burst", res->caps.has_burst,
                                 "burst_bug", res->caps.burst_bug,
                                 "has_psi", res->caps.has_psi,
                                 "has_psi_full", res->caps.has_psi_full,
                                 "has_psi_triggers_unprivileged", res->caps.has_psi_triggers_unprivileged,
                                 "has_burst_stats", res->caps.has_burst_stats,
                                 "identical_update_is_noop", res->caps.identical_update_is_noop);
        }

        if (rep->root)
                cgroup = json_pack("{s:s, s:s, s:s?}",
                                   "layout", bw_cg_layout_to_string(rep->root->layout),
                                   "bandwidth_root", rep->root->bw_path,
                                   "v2_root", rep->root->v2_path);
        else
                cgroup = json_pack("{s:n, s:s?}", "layout", "error", rep->root_error);

        root = json_pack("{s:o, s:{s:s, s:s?, s:b, s:b, s:o}, s:o, s:{s:b, s:s}, s:s, s:o, s:o}",
                         "kernel", kernel_json(rep),
                         "manifest",
                                 "path", rep->manifest_path,
                                 "patchset_version", rep->manifest ? rep->manifest->patchset_version : NULL,
                                 "valid", rep->manifest_ok,
                                 "files_verified", rep->files_ok,
                                 "errors", errors_json(&rep->errors),
                         "cgroup", cgroup,
                         "probes",
                                 "behaviour", rep->probes_allowed,
                                 "note", rep->probes_note,
                         "verdict", bw_kverdict_to_string(rep->verdict),
                         "items", items ? items : json_null(),
                         "capabilities", caps ? caps : json_null());
        if (!root)
                return -ENOMEM;
        s = json_dumps(root, JSON_INDENT(2));
        json_decref(root);
        if (!s)
                return -ENOMEM;
        printf("%s\n", s);
        free(s);
        return 0;
}

/* ------------------------------------------------------------------------ */

int verb_check_kernel(int argc, char *argv[]) {
        _cleanup_free_ char *manifest_dir = NULL;
        struct bw_kmanifest *manifest = NULL;
        struct bw_kcheck_result *result = NULL;
        struct bw_cg_root *root = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        struct report rep = { .verdict = BW_KVERDICT_UNCHECKED };
        struct bw_kprobe_env env = { .bw_root_fd = -EBADF, .v2_root_fd = -EBADF };
        struct args a;
        int r, ret = EXIT_CHECK_FAILED;

        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? EXIT_CHECK_FAILED : EXIT_SUCCESS;

        /* The kernel version. */
        r = read_version(&a, &rep.version, &rep.version_error);
        if (r == -ENOMEM)
                goto oom;
        rep.version_ok = r >= 0;

        /* The manifest and its files. */
        rep.manifest_path = a.manifest ? a.manifest : bw_kmanifest_default_path();
        r = bw_kmanifest_load(AT_FDCWD, rep.manifest_path, &manifest, &rep.errors);
        if (r == -ENOMEM)
                goto oom;
        if (r >= 0) {
                rep.manifest = manifest;
                rep.manifest_ok = true;
                manifest_dir = dir_of(rep.manifest_path);
                if (!manifest_dir)
                        goto oom;
                dir_fd = open(manifest_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dir_fd < 0) {
                        r = -errno;
                        rep.files_ok = false;
                } else {
                        r = bw_kmanifest_verify_files(manifest, dir_fd, &rep.errors);
                        if (r == -ENOMEM)
                                goto oom;
                        rep.files_ok = r >= 0;
                }
        }

        /* The cgroup roots the probes look at. */
        if (a.cgroup_root)
                r = bw_cg_root_open_dir(a.cgroup_root, &root);
        else
                r = bw_cg_root_open_host(&root);
        if (r == -ENOMEM)
                goto oom;
        if (r < 0) {
                root = NULL;
                if (asprintf(&rep.root_error, "no cgroup CPU bandwidth controller found%s%s: %s",
                             a.cgroup_root ? " in " : "", a.cgroup_root ? a.cgroup_root : "", strerror(-r)) < 0) {
                        rep.root_error = NULL;
                        goto oom;
                }
        }
        rep.root = root;

        rep.probes_allowed = a.probe != 0 && geteuid() == 0 && root;
        rep.probes_note = rep.probes_allowed ? "run" :
                          a.probe == 0 ? "not run (--no-probe)" :
                          !root ? "not run (no cgroup bandwidth root)" : "not run (needs root)";

        if (manifest) {
                env = (struct bw_kprobe_env) {
                        .bw_root_fd = root ? root->bw_fd : -EBADF,
                        .bw_is_v1 = root && root->layout != BW_CG_LAYOUT_V2,
                        .v2_root_fd = root ? root->v2_fd : -EBADF,
                        .host_root = a.host_root,
                        .btf_path = a.btf,
                        .version = rep.version_ok ? &rep.version : NULL,
                        .allow_behaviour = rep.probes_allowed,
                        .scratch_prefix = a.scratch_prefix,
                };
                r = bw_kcheck_run(manifest, &env, &result);
                if (r < 0)
                        goto oom;
                rep.result = result;
                rep.verdict = rep.files_ok ? result->verdict : BW_KVERDICT_UNCHECKED;
        }

        if (!a.json)
                print_human(&rep);
        else if (print_json(&rep) < 0)
                goto oom;

        ret = (int) rep.verdict;
        goto finish;

oom:
        fprintf(stderr, "bwgovctl: out of memory\n");
        ret = EXIT_CHECK_FAILED;
finish:
        bw_kcheck_result_free(result);
        bw_cg_root_free(root);
        bw_kmanifest_free(manifest);
        bw_kerrors_done(&rep.errors);
        free(rep.version_error);
        free(rep.root_error);
        return ret;
}
