/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Probes that tell whether the running kernel has a manifest item: files in
 * the cgroup bandwidth root, host files, cpu.stat keys, PSI "full", kernel
 * config options, BTF members, BPF support; and the result and host path
 * every probe uses. The behaviour probes that measure a scratch cgroup are
 * kprobe-behaviour.c; running one detection method is kprobe-run.c. Both
 * call this file; it calls neither. */

#include <bpf/btf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bwgov/util/fileio.h"
#include "bwgov/kernel/kprobe.h"
#include "bwgov/util/macro.h"

void bw_kprobe_result_done(struct bw_kprobe_result *r) {
        if (!r)
                return;
        free(r->how);
        r->how = NULL;
}

int bw_kprobe_result_set(struct bw_kprobe_result *ret, enum bw_kstatus status, const char *fmt, ...) {
        va_list ap;
        char *how;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&how, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        *ret = (struct bw_kprobe_result) { .status = status, .how = how };
        return 0;
}

/* "<host_root><path>", path absolute. */
int bw_kprobe_host_path(const struct bw_kprobe_env *env, const char *path, char **ret) {
        const char *root = env->host_root;
        size_t n;

        if (!root || strcmp(root, "/") == 0)
                root = "";
        n = strlen(root);
        while (n > 0 && root[n - 1] == '/')
                n--;
        if (asprintf(ret, "%.*s%s", (int) n, root, path) < 0)
                return -ENOMEM;
        return 0;
}

/* "a, b, c" of a string vector. */
static char *strv_join(char *const *v, size_t n) {
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        if (!f)
                return NULL;
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%s", i > 0 ? ", " : "", v[i]);
        if (fclose(f) != 0) {
                free(s);
                return NULL;
        }
        return s;
}

/* The cgroup v2 root has no cpu.max or cpu.max.burst (the kernel leaves
 * them off the root): the bandwidth files are looked for in a child cgroup
 * that has cpu.max, the first by name for a stable answer. Returns 1 and
 * the malloc'd name, 0 when there is none, or a negative errno. */
static int v2_child_with_cpu_max(int root_fd, char **ret_name) {
        _cleanup_free_ char *best = NULL;
        struct dirent *de;
        DIR *d;
        int fd;

        fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                int r = -errno;

                close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
                        continue;
                if (best && strcmp(de->d_name, best) >= 0)
                        continue;
                if (asprintf(&p, "%s/cpu.max", de->d_name) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
                if (fstatat(root_fd, p, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                free(best);
                best = strdup(de->d_name);
                if (!best) {
                        closedir(d);
                        return -ENOMEM;
                }
        }
        closedir(d);
        if (!best)
                return 0;
        *ret_name = TAKE_PTR(best);
        return 1;
}

int bw_kprobe_file(const struct bw_kprobe_env *env, char *const *any, size_t n_any, struct bw_kprobe_result *ret) {
        _cleanup_free_ char *names = NULL, *child = NULL;
        _cleanup_close_ int child_fd = -EBADF;
        int err = 0, dir_fd, r;

        if (env->bw_root_fd < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "file: no cgroup bandwidth root");

        for (size_t i = 0; i < n_any; i++) {
                struct stat st;

                if (fstatat(env->bw_root_fd, any[i], &st, AT_SYMLINK_NOFOLLOW) >= 0)
                        return bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT, "file: %s", any[i]);
                if (errno != ENOENT)
                        err = errno;
        }

        names = strv_join(any, n_any);
        if (!names)
                return -ENOMEM;
        if (err != 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "file: cannot look up %s: %s", names, strerror(err));
        if (env->bw_is_v1)
                return bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT, "file: no %s", names);

        /* v2: the root may just not show it. */
        r = v2_child_with_cpu_max(env->bw_root_fd, &child);
        if (r == -ENOMEM)
                return r;
        if (r <= 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "file: no %s in the root and no child cgroup with cpu.max",
                                            names);
        child_fd = openat(env->bw_root_fd, child, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (child_fd < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "file: %s: %s", child, strerror(errno));
        dir_fd = child_fd;
        for (size_t i = 0; i < n_any; i++) {
                struct stat st;

                if (fstatat(dir_fd, any[i], &st, AT_SYMLINK_NOFOLLOW) >= 0)
                        return bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT, "file: %s (in %s)", any[i], child);
                if (errno != ENOENT)
                        return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "file: cannot look up %s in %s: %s",
                                                    any[i], child, strerror(errno));
        }
        return bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT, "file: no %s (in %s)", names, child);
}

int bw_kprobe_proc_file(const struct bw_kprobe_env *env, const char *path, struct bw_kprobe_result *ret) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        char c;
        int r;

        r = bw_kprobe_host_path(env, path, &p);
        if (r < 0)
                return r;

        if (stat(p, &st) < 0) {
                if (errno == ENOENT)
                        return bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT, "proc-file: no %s", path);
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "proc-file: %s: %s", path, strerror(errno));
        }
        if (S_ISREG(st.st_mode)) {
                /* A PSI file exists but fails with EOPNOTSUPP when PSI is
                 * disabled at runtime: only a readable file counts. */
                fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (fd < 0 || read(fd, &c, 1) < 0) {
                        if (errno == EOPNOTSUPP)
                                return bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT,
                                                            "proc-file: %s not supported", path);
                        return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                                    "proc-file: %s: %s", path, strerror(errno));
                }
        }
        return bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT, "proc-file: %s", path);
}

/* Does a "key value" file have key at the start of a line? */
static bool kv_has_key(const char *buf, const char *key) {
        size_t n = strlen(key);

        for (const char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
                if (strncmp(l, key, n) == 0 && (l[n] == ' ' || l[n] == '\t'))
                        return true;
        return false;
}

int bw_kprobe_cpustat_field(const struct bw_kprobe_env *env, char *const *any, size_t n_any,
                            struct bw_kprobe_result *ret) {
        _cleanup_free_ char *names = NULL, *child = NULL, *where = NULL;
        char buf[4096];
        ssize_t n;
        int r;

        if (env->bw_root_fd < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "cpustat-field: no cgroup bandwidth root");

        n = bw_read_small_at(env->bw_root_fd, "cpu.stat", O_NOFOLLOW, buf, sizeof buf);
        if (n < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "cpustat-field: cpu.stat: %s", strerror((int) -n));

        /* Without the bandwidth fields this cpu.stat says nothing about them:
         * on v2, ask a child cgroup that has the cpu controller. */
        if (!kv_has_key(buf, "nr_periods") && !env->bw_is_v1) {
                r = v2_child_with_cpu_max(env->bw_root_fd, &child);
                if (r == -ENOMEM)
                        return r;
                if (r > 0) {
                        if (asprintf(&where, "%s/cpu.stat", child) < 0) {
                                where = NULL;
                                return -ENOMEM;
                        }
                        n = bw_read_small_at(env->bw_root_fd, where, O_NOFOLLOW, buf, sizeof buf);
                        if (n < 0)
                                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "cpustat-field: %s: %s", where,
                                                            strerror((int) -n));
                }
        }
        if (!where) {
                where = strdup("cpu.stat");
                if (!where)
                        return -ENOMEM;
        }

        for (size_t i = 0; i < n_any; i++)
                if (kv_has_key(buf, any[i]))
                        return bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT, "cpustat-field: %s has %s", where, any[i]);

        if (!kv_has_key(buf, "nr_periods"))
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN,
                                            "cpustat-field: %s has no bandwidth fields", where);

        names = strv_join(any, n_any);
        if (!names)
                return -ENOMEM;
        return bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT, "cpustat-field: %s has no %s", where, names);
}

int bw_kprobe_psi_full(const struct bw_kprobe_env *env, struct bw_kprobe_result *ret) {
        char buf[1024];
        ssize_t n;

        if (env->v2_root_fd < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "psi-full: no cgroup2 tree");

        n = bw_read_small_at(env->v2_root_fd, "cpu.pressure", O_NOFOLLOW, buf, sizeof buf);
        if (n == -ENOENT || n == -EOPNOTSUPP)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "psi-full: no cgroup cpu.pressure (PSI off)");
        if (n < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "psi-full: cpu.pressure: %s", strerror((int) -n));
        if (kv_has_key(buf, "full"))
                return bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT, "psi-full: cpu.pressure has \"full\"");
        if (kv_has_key(buf, "some"))
                return bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT, "psi-full: cpu.pressure has only \"some\"");
        return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "psi-full: cpu.pressure unreadable content");
}

static void gzclosep(gzFile *f) {
        if (*f)
                gzclose(*f);
}

int bw_kconfig_lookup(const char *path, const char *option, char **ret_value) {
        _cleanup_(gzclosep) gzFile f = NULL;
        size_t n = strlen(option);
        char line[1024];
        bool continuation = false;

        f = gzopen(path, "rbe");
        if (!f)
                return errno > 0 ? -errno : -ENOMEM;

        while (gzgets(f, line, sizeof line)) {
                size_t len = strlen(line);
                bool complete = len > 0 && line[len - 1] == '\n';
                bool was_continuation = continuation;

                /* Skip the tail of an over-long line (CONFIG_CMDLINE and such). */
                continuation = !complete;
                if (was_continuation)
                        continue;
                if (complete)
                        line[--len] = '\0';

                if (strncmp(line, option, n) == 0 && line[n] == '=') {
                        char *v;

                        if (!complete && !gzeof(f))
                                return -E2BIG;
                        v = strdup(line + n + 1);
                        if (!v)
                                return -ENOMEM;
                        if (strcmp(v, "n") == 0) {
                                free(v);
                                *ret_value = NULL;
                                return 0;
                        }
                        *ret_value = v;
                        return 1;
                }
                if (strncmp(line, "# ", 2) == 0 && strncmp(line + 2, option, n) == 0 &&
                    strcmp(line + 2 + n, " is not set") == 0) {
                        *ret_value = NULL;
                        return 0;
                }
        }
        if (!gzeof(f)) {
                int e;

                gzerror(f, &e);
                return e == Z_ERRNO ? -errno : -EIO;
        }
        *ret_value = NULL;
        return 0;
}

int bw_kprobe_kconfig(const struct bw_kprobe_env *env, const char *option, struct bw_kprobe_result *ret) {
        _cleanup_free_ char *boot = NULL;
        const char *shown[2] = { 0 };
        char *paths[2] = { 0 };
        size_t n = 0;
        int r;

        shown[n] = "/proc/config.gz";
        r = bw_kprobe_host_path(env, shown[n], &paths[n]);
        if (r < 0)
                goto finish;
        n++;
        if (env->version && env->version->release[0]) {
                if (asprintf(&boot, "/boot/config-%s", env->version->release) < 0) {
                        boot = NULL;
                        r = -ENOMEM;
                        goto finish;
                }
                shown[n] = boot;
                r = bw_kprobe_host_path(env, boot, &paths[n]);
                if (r < 0)
                        goto finish;
                n++;
        }

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *value = NULL;

                r = bw_kconfig_lookup(paths[i], option, &value);
                if (r == -ENOMEM)
                        goto finish;
                if (r < 0)
                        continue;
                if (r > 0)
                        r = bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT,
                                                 "kconfig: %s=%s (%s)", option, value, shown[i]);
                else
                        r = bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT, "kconfig: %s not set (%s)", option, shown[i]);
                goto finish;
        }
        r = bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "kconfig: no readable %s%s%s",
                                 shown[0], n > 1 ? " or " : "", n > 1 ? shown[1] : "");
finish:
        for (size_t i = 0; i < n; i++)
                free(paths[i]);
        return r;
}

/* Search struct/union t for member name, descending into anonymous members. */
static bool btf_has_member(const struct btf *btf, const struct btf_type *t, const char *name, unsigned depth) {
        const struct btf_member *m = btf_members(t);

        if (depth > 8)
                return false;
        for (unsigned i = 0; i < btf_vlen(t); i++, m++) {
                const char *mn = btf__name_by_offset(btf, m->name_off);

                if (mn && mn[0]) {
                        if (strcmp(mn, name) == 0)
                                return true;
                        continue;
                }
                /* Anonymous struct or union: look through modifiers/typedefs. */
                const struct btf_type *mt = btf__type_by_id(btf, m->type);
                while (mt && (btf_is_mod(mt) || btf_is_typedef(mt)))
                        mt = btf__type_by_id(btf, mt->type);
                if (mt && btf_is_composite(mt) && btf_has_member(btf, mt, name, depth + 1))
                        return true;
        }
        return false;
}

/* The raw BTF file to read: env->btf_path, else the host's vmlinux BTF. */
static int btf_path(const struct bw_kprobe_env *env, char **ret) {
        if (env->btf_path) {
                *ret = strdup(env->btf_path);
                return *ret ? 0 : -ENOMEM;
        }
        return bw_kprobe_host_path(env, "/sys/kernel/btf/vmlinux", ret);
}

int bw_kprobe_btf_member(const struct bw_kprobe_env *env, const char *struct_name, const char *member,
                         struct bw_kprobe_result *ret) {
        _cleanup_free_ char *p = NULL;
        struct btf *btf;
        const struct btf_type *t;
        int id, r;
        bool found;

        r = btf_path(env, &p);
        if (r < 0)
                return r;

        if (access(p, R_OK) < 0)
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "btf: %s: %s",
                                            env->btf_path ? env->btf_path : "/sys/kernel/btf/vmlinux", strerror(errno));

        btf = btf__parse_raw(p);
        if (!btf) {
                r = errno;
                if (r == ENOMEM)
                        return -ENOMEM;
                return bw_kprobe_result_set(ret, BW_KSTATUS_UNKNOWN, "btf: cannot parse %s: %s",
                                            env->btf_path ? env->btf_path : "/sys/kernel/btf/vmlinux", strerror(r));
        }

        id = btf__find_by_name_kind(btf, struct_name, BTF_KIND_STRUCT);
        if (id < 0) {
                btf__free(btf);
                return bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT, "btf: no struct %s", struct_name);
        }
        t = btf__type_by_id(btf, (unsigned) id);
        found = t && btf_has_member(btf, t, member, 0);
        btf__free(btf);

        if (found)
                return bw_kprobe_result_set(ret, BW_KSTATUS_PRESENT, "btf: %s.%s", struct_name, member);
        return bw_kprobe_result_set(ret, BW_KSTATUS_ABSENT, "btf: no %s.%s", struct_name, member);
}

static bool btf_struct_has(const struct btf *btf, const char *struct_name, const char *member) {
        int id = btf__find_by_name_kind(btf, struct_name, BTF_KIND_STRUCT);
        const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, (unsigned) id);

        return t && btf_has_member(btf, t, member, 0);
}

int bw_kprobe_bpf_support(const struct bw_kprobe_env *env, struct bw_kbpf *caps) {
        _cleanup_free_ char *p = NULL;
        struct btf *btf;
        int r;

        caps->has_runqueue = false;
        caps->throttled_clock = "none";
        caps->throttle_model = "unknown";
        r = btf_path(env, &p);
        if (r < 0)
                return r;
        btf = access(p, R_OK) < 0 ? NULL : btf__parse_raw(p);
        if (!btf)
                return errno == ENOMEM ? -ENOMEM : 0;

        /* The programs' five tracepoints, as tp_btf sees them, and the
         * task group the activity flags go by. */
        caps->has_runqueue =
                btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF) >= 0 &&
                btf__find_by_name_kind(btf, "btf_trace_sched_wakeup", BTF_KIND_TYPEDEF) >= 0 &&
                btf__find_by_name_kind(btf, "btf_trace_sched_wakeup_new", BTF_KIND_TYPEDEF) >= 0 &&
                btf__find_by_name_kind(btf, "btf_trace_sched_stat_runtime", BTF_KIND_TYPEDEF) >= 0 &&
                btf__find_by_name_kind(btf, "btf_trace_cgroup_rmdir", BTF_KIND_TYPEDEF) >= 0 &&
                btf_struct_has(btf, "task_struct", "se") && btf_struct_has(btf, "sched_entity", "cfs_rq") &&
                btf_struct_has(btf, "task_struct", "sched_task_group");
        if (btf_struct_has(btf, "cfs_rq", "throttled_clock_self_time"))
                caps->throttled_clock = "exact";
        else if (btf_struct_has(btf, "cfs_rq", "throttled_clock_pelt_time"))
                caps->throttled_clock = "estimate";
        if (btf_struct_has(btf, "task_struct", "throttle_node"))
                caps->throttle_model = "task";
        else if (btf_struct_has(btf, "cfs_rq", "throttle_count"))
                caps->throttle_model = "cfs_rq";
        btf__free(btf);
        return 0;
}
