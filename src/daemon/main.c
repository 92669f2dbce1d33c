/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovd: arguments, prerequisites, the manager, then the varlink server over
 * the manager's governor API; READY, the loop; freed in reverse. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "bwgov/cgroup/cgroupfs-mount.h"
#include "bwgov/cgroup/slice.h"
#include "bwgov/config/config.h"
#include "bwgov/kernel/kmanifest.h"
#include "config.h"
#include "varlink/governor-varlink.h"
#include "log.h"
#include "manager/manager.h"
#include "manager/manager-governor.h"
#include "manager/manager-restore.h"
#include "manager/manager-shared.h"

/* How long the end waits to answer the read calls asked before it: a
 * status polled while the daemon stops (the stop's budget is 2 s). */
#define VARLINK_DRAIN_USEC (100 * USEC_PER_MSEC)

/* The paths are this build's (meson's prefix, sysconfdir, localstatedir),
 * never a distribution's guess. */
static void help(void) {
        const char *const *dirs = bw_config_default_dirs();

        printf("Usage: bwgovd [OPTIONS]\n\n"
               "Adaptive CPU bandwidth governor for cgroups.\n\n"
               "  -h --help                 Show this help\n"
               "     --version              Show the version\n"
               "     --config-dir=DIR       Read configuration from DIR only (instead of\n"
               "                            ");
        for (size_t i = 0; dirs[i]; i++)
                printf("%s%s", i > 0 ? ", " : "", dirs[i]);
        printf(")\n"
               "     --state-dir=DIR        Keep state.json in DIR (default: $STATE_DIRECTORY or\n"
               "                            %s)\n"
               "     --runtime-dir=DIR      Metrics and the socket in DIR (default: $RUNTIME_DIRECTORY or\n"
               "                            %s)\n"
               "     --cgroup-root=DIR      Use the cgroup tree at DIR instead of the host's\n"
               "     --host-pressure=FILE   Read host CPU pressure from FILE (default /proc/pressure/cpu)\n"
               "     --host-stat=FILE       Read host CPU time from FILE (default /proc/stat)\n"
               "     --manifest=FILE        Kernel patch manifest (default:\n"
               "                            %s)\n"
               "     --log-level=LEVEL      err, warning, notice, info or debug (default info)\n"
               "     --restore              Put back what the state directory records (levers,\n"
               "                            slices, raised quotas) without a configuration, and exit:\n"
               "                            after any exit of the daemon (ExecStopPost=)\n",
               BWGOV_STATEDIR, BWGOV_RUNTIMEDIR, bw_kmanifest_default_path());
}

enum {
        ARG_VERSION = 0x100,
        ARG_CONFIG_DIR,
        ARG_STATE_DIR,
        ARG_RUNTIME_DIR,
        ARG_CGROUP_ROOT,
        ARG_HOST_PRESSURE,
        ARG_HOST_STAT,
        ARG_LOG_LEVEL,
        ARG_MANIFEST,
        ARG_RESTORE,
};

/* --restore: put back what the state records, and exit. */
static bool arg_restore;

static int set_string(char **p, const char *v) {
        char *s = strdup(v);
        if (!s)
                return -ENOMEM;
        free(*p);
        *p = s;
        return 0;
}

/* The options that set a path or file name of the manager. */
static const struct {
        int id;
        size_t offset;                  /* of the char * in Manager */
} string_options[] = {
        { ARG_CONFIG_DIR,    offsetof(Manager, config_dir)         },
        { ARG_STATE_DIR,     offsetof(Manager, state_dir)          },
        { ARG_RUNTIME_DIR,   offsetof(Manager, runtime_dir)        },
        { ARG_CGROUP_ROOT,   offsetof(Manager, cgroup_root)        },
        { ARG_HOST_PRESSURE, offsetof(Manager, host_pressure_path) },
        { ARG_HOST_STAT,     offsetof(Manager, host_stat_path)     },
        { ARG_MANIFEST,      offsetof(Manager, manifest_path)      },
};

static char **string_option(Manager *m, int id) {
        for (size_t i = 0; i < ELEMENTSOF(string_options); i++)
                if (string_options[i].id == id)
                        return (char **) ((char *) m + string_options[i].offset);
        return NULL;
}

static int parse_argv(int argc, char *argv[], Manager *m) {
        static const struct option options[] = {
                { "help",          no_argument,       NULL, 'h'               },
                { "version",       no_argument,       NULL, ARG_VERSION       },
                { "config-dir",    required_argument, NULL, ARG_CONFIG_DIR    },
                { "state-dir",     required_argument, NULL, ARG_STATE_DIR     },
                { "runtime-dir",   required_argument, NULL, ARG_RUNTIME_DIR   },
                { "cgroup-root",   required_argument, NULL, ARG_CGROUP_ROOT   },
                { "host-pressure", required_argument, NULL, ARG_HOST_PRESSURE },
                { "host-stat",     required_argument, NULL, ARG_HOST_STAT     },
                { "log-level",     required_argument, NULL, ARG_LOG_LEVEL     },
                { "manifest",      required_argument, NULL, ARG_MANIFEST      },
                { "restore",       no_argument,       NULL, ARG_RESTORE       },
                { NULL, 0, NULL, 0 }
        };
        int c, r = 0;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("bwgovd %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_RESTORE:
                        arg_restore = true;
                        break;
                case ARG_LOG_LEVEL: {
                        int l = log_level_from_string(optarg);
                        if (l < 0) {
                                log_error("Invalid --log-level=%s: expected err, warning, notice, info or debug",
                                          optarg);
                                return -EINVAL;
                        }
                        log_set_max_level(l);
                        break;
                }
                default: {
                        char **dest = string_option(m, c);
                        if (!dest)
                                return -EINVAL;         /* '?': getopt_long() said why */
                        r = set_string(dest, optarg);
                        break;
                }
                }
                if (r < 0)
                        return r;
        }
        if (optind < argc) {
                log_error("This program takes no positional arguments.");
                return -EINVAL;
        }
        return 1;
}

static int defaults(Manager *m) {
        const char *e;
        int r = 0;

        /* systemd passes StateDirectory=/RuntimeDirectory= in the environment. */
        if (!m->state_dir) {
                e = getenv("STATE_DIRECTORY");
                r = set_string(&m->state_dir, e && *e && !strchr(e, ':') ? e : BWGOV_STATEDIR);
        }
        if (r >= 0 && !m->runtime_dir) {
                e = getenv("RUNTIME_DIRECTORY");
                r = set_string(&m->runtime_dir, e && *e && !strchr(e, ':') ? e : BWGOV_RUNTIMEDIR);
        }
        if (r >= 0 && !m->host_pressure_path)
                r = set_string(&m->host_pressure_path, "/proc/pressure/cpu");
        if (r >= 0 && !m->host_stat_path)
                r = set_string(&m->host_stat_path, "/proc/stat");
        return r;
}

/* bwgovd's own thread reserves itself OWN_RUNTIME_USEC of a CPU every
 * OWN_PERIOD_USEC (SCHED_DEADLINE). On a host whose groups keep every CPU
 * busy, a fair thread's wake-up (the latency guard's fast samples, a
 * bandwidth sample) waited up to 1.6 s behind them even with the shortest
 * slice, while the neighbour it was to hold back hurt a latency unit.
 * Within its budget bwgovd runs as soon as it wakes; past it (a tick over
 * ten thousand units) it waits for the next period, so that it never takes
 * more than a tenth of a CPU ahead of fair work. Not before the adoption of
 * the units there at the start is over (no unit adopted for a second; it
 * works in batches of 10 ms: ten thousand units, 3 s fair, took 53 s
 * within the budget), OWN_WAIT_USEC after the start at the latest. Where
 * the kernel refuses (no CAP_SYS_NICE, an affinity narrower than the CPUs,
 * admission control), the shortest EEVDF slice instead (6.12+).
 * docs/performance.md, "bwgovd's own scheduling". */
#define OWN_RUNTIME_USEC UINT64_C(5000)
#define OWN_PERIOD_USEC UINT64_C(50000)
#define OWN_CHECK_USEC UINT64_C(100000)
#define OWN_QUIET_CHECKS 10
#define OWN_WAIT_USEC UINT64_C(60000000)

/* Where bwgovd's own scheduling stands: whether it holds the budget, and
 * the checks of the wait for a quiet adoption. */
static struct {
        sd_event_source *timer;
        Manager *manager;
        GovernorVarlink *varlink;
        uint64_t waited;
        size_t adopted, quiet;
        bool reserved, again;
} own;

static void own_scheduling(void) {
        int r;

        r = bw_sched_reserve_self(OWN_RUNTIME_USEC, OWN_PERIOD_USEC);
        if (r >= 0) {
                own.reserved = true;
                /* Again after a reload: at debug level. */
                log_internal(own.again ? LOG_DEBUG : LOG_INFO, 0,
                             "bwgovd's own scheduling: SCHED_DEADLINE, %" PRIu64 "ms every %" PRIu64 "ms, "
                             "so that its samples run on time on a busy host",
                             OWN_RUNTIME_USEC / 1000, OWN_PERIOD_USEC / 1000);
                return;
        }
        if (bw_slice_supported() && bw_slice_set_self(BW_SLICE_MIN_USEC) >= 0) {
                log_warning_errno(r, "Failed to reserve bwgovd a share of a CPU (SCHED_DEADLINE: %s): the shortest "
                                  "EEVDF slice (%" PRIu64 "us) instead, its samples may still run late on a busy "
                                  "host", STRERROR(r), (uint64_t) BW_SLICE_MIN_USEC);
                return;
        }
        log_warning_errno(r, "Failed to reserve bwgovd a share of a CPU (SCHED_DEADLINE): %s; its samples may run "
                          "late on a busy host", STRERROR(r));
}

/* Every OWN_CHECK_USEC until no unit was adopted for OWN_QUIET_CHECKS of
 * them (the first batches' units are found as they go: none is known to
 * wait before it is looked for); never once the daemon is stopping. */
static int on_own_scheduling(sd_event_source *s, uint64_t usec, void *userdata) {
        size_t n = manager_adopted(own.manager);

        /* Stopping: the restore is bulk work too (on_terminate()). */
        if (own.manager->stopping)
                return 0;
        own.quiet = n == own.adopted ? own.quiet + 1 : 0;
        own.adopted = n;
        if (own.quiet < OWN_QUIET_CHECKS && own.waited < OWN_WAIT_USEC) {
                own.waited += OWN_CHECK_USEC;
                (void) sd_event_source_set_time_relative(s, OWN_CHECK_USEC);
                return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        own_scheduling();
        return 0;
}

/* The wait for a quiet adoption, from now. */
static void own_scheduling_wait(void) {
        own.waited = own.quiet = 0;
        own.adopted = manager_adopted(own.manager);
        if (!own.timer || sd_event_source_set_time_relative(own.timer, 0) < 0 ||
            sd_event_source_set_enabled(own.timer, SD_EVENT_ONESHOT) < 0)
                own_scheduling();
}

/* After a reload: the socket back if the runtime directory was deleted;
 * the budget, which the reload gave back for its bulk work (ten thousand
 * units: 2.0 s within it, 0.19 s fair, no sample taken meanwhile), taken
 * again once the units it added are adopted. */
static void on_reloaded(void *userdata) {
        (void) governor_varlink_check_socket(own.varlink);
        if (own.reserved && bw_sched_policy(0) != BW_SCHED_DEADLINE) {
                own.reserved = false;
                own.again = true;
                own_scheduling_wait();
        }
}

int main(int argc, char *argv[]) {
        GovernorVarlink *varlink = NULL;
        Manager *m = NULL;
        int r;

        log_setup();
        /* The snapshots of every unit (metrics, ListUnits) are large and
         * short-lived: always mmap()ed and given back when freed. glibc
         * would otherwise raise its threshold to their size after the
         * first and keep them in the heap for good (megabytes at ten
         * thousand units). Setting it turns that adjustment off. */
        (void) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        (void) mallopt(M_TRIM_THRESHOLD, 256 * 1024);
        /* The kernel check's hashing maps libcrypto, which cannot be
         * unloaded: done in a child, it is never resident here. */
        bw_kmanifest_set_hash_in_child(true);
        /* So does libcgroup's initialisation (its cross-check of where the
         * cpu controller is mounted), 800 KiB of static tables. */
        bw_cg_set_libcgroup_in_child(true);

        r = manager_new(&m);
        if (r < 0) {
                log_error_errno(r, "Failed to set up the event loop: %s", STRERROR(r));
                return EXIT_FAILURE;
        }
        m->governor = (Governor) { &manager_governor_ops, m };

        r = parse_argv(argc, argv, m);
        if (r <= 0)
                goto finish;
        r = defaults(m);
        if (r < 0) {
                log_oom();
                goto finish;
        }

        if (arg_restore) {
                /* After any exit (ExecStopPost=): no configuration needed,
                 * none read. */
                r = manager_restore_only(m, "restore");
                goto finish;
        }

        r = manager_load_config(m);
        if (r < 0) {
                /* A broken configuration must not keep a group frozen, idle
                 * or raised behind a daemon that will not start. */
                if (manager_restore_only(m, "configuration-broken") == -EAGAIN)
                        log_error("Not everything a previous bwgovd changed could be put back");
                goto finish;
        }

        r = manager_startup(m);
        if (r < 0) {
                /* Whatever stops the start (the kernel check, a cgroup
                 * tree), what the state records goes back. */
                (void) manager_restore_exit(m, "start-failed");
                goto finish;
        }
        own.manager = m;
        r = sd_event_add_time_relative(m->event, &own.timer, CLOCK_MONOTONIC, 0, 0, on_own_scheduling, NULL);
        if (r < 0)
                own_scheduling();

        r = governor_varlink_new(m->event, m->runtime_dir, &m->governor, &varlink);
        if (r < 0)
                goto finish;
        own.varlink = varlink;
        m->reloaded = on_reloaded;
        m->reloaded_userdata = NULL;

        log_info("bwgovd %s started: %zu units configured, interval %" PRIu64 "ms",
                 PACKAGE_VERSION, m->n_units, m->config.global.interval_usec / 1000);

        r = manager_run(m);
        /* The loop is over: what was asked before the end is answered
         * (VARLINK_DRAIN_USEC at most), then a client is told so at once
         * (the socket gone), not left waiting behind the last save and the
         * teardown. */
        governor_varlink_drain(varlink, VARLINK_DRAIN_USEC);
        varlink = own.varlink = governor_varlink_free(varlink);
        if (manager_shutdown(m) > 0 && r >= 0)
                r = -EIO;       /* a baseline not put back fails the stop */
        else if (r < 0)
                log_error_errno(r, "Event loop failed: %s", STRERROR(r));

finish:
        governor_varlink_free(varlink);
        own.timer = sd_event_source_unref(own.timer);
        manager_free(m);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
