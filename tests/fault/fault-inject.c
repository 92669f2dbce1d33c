/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* LD_PRELOAD shim for the fault-matrix tests (tests/FAULTS.md): makes
 * write() fail with a chosen errno on files of a chosen name, and moves
 * CLOCK_REALTIME by a chosen offset, both switched at run time through a
 * control file, so that a running bwgovd meets the fault and its end.
 *
 * BWGOV_FAULT_CTL names the control file; each line one rule:
 *
 *   write NAME ERRNO [count=N] [data=TEXT]
 *                       write()/pwrite() on a file whose last path
 *                       component is NAME fail with ERRNO (EINVAL, EBUSY,
 *                       EACCES, ENOSPC, EIO or a number); with count=, only
 *                       the next N such writes (then the rule is spent);
 *                       with data=, only writes of TEXT (blanks and a
 *                       newline after it ignored: "data=0" fails a thaw of
 *                       cgroup.freeze, not a freeze)
 *   realtime SECONDS    CLOCK_REALTIME (and time()) moved
 *                       by SECONDS, which may be negative
 *
 * The file is read again whenever its modification time or size changes;
 * a missing or empty file injects nothing. Every injected failure is
 * counted in the file named by BWGOV_FAULT_LOG (one line per failure:
 * "NAME ERRNO"), so that a test knows the fault was met. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RULES_MAX 16

struct rule {
        char name[NAME_MAX + 1];
        int error;
        long left;                      /* writes still to fail, -1: every one */
        char data[64];                  /* "" or the only content failed */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rule rules[RULES_MAX];
static size_t n_rules;
static long long realtime_offset;
static struct timespec seen_mtime;
static off_t seen_size = -1;

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static int (*real_clock_gettime)(clockid_t, struct timespec *);

/* dlsym()'s object pointer as the function pointer it is (ISO C has no
 * conversion between the two; POSIX guarantees this one works). */
#define LOOKUP(var, name) do { if (!(var)) *(void **) &(var) = dlsym(RTLD_NEXT, name); } while (0)

static int errno_parse(const char *s) {
        static const struct { const char *name; int value; } table[] = {
                { "EINVAL", EINVAL }, { "EBUSY", EBUSY }, { "EACCES", EACCES }, { "EPERM", EPERM },
                { "ENOSPC", ENOSPC }, { "EIO", EIO }, { "EROFS", EROFS }, { "ENODEV", ENODEV },
        };
        char *end;
        long v;

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                if (strcmp(s, table[i].name) == 0)
                        return table[i].value;
        v = strtol(s, &end, 10);
        return *end == '\0' && v > 0 && v < 4096 ? (int) v : 0;
}

/* Re-read the control file when it changed; called with the lock held. */
static void reload(void) {
        const char *path = getenv("BWGOV_FAULT_CTL");
        char line[512];
        struct stat st;
        FILE *f;

        if (!path || stat(path, &st) < 0) {
                n_rules = 0;
                realtime_offset = 0;
                seen_size = -1;
                return;
        }
        if (st.st_size == seen_size && st.st_mtim.tv_sec == seen_mtime.tv_sec &&
            st.st_mtim.tv_nsec == seen_mtime.tv_nsec)
                return;
        f = fopen(path, "re");
        if (!f)
                return;
        n_rules = 0;
        realtime_offset = 0;
        while (fgets(line, sizeof line, f)) {
                char a[NAME_MAX + 1], b[64], c[80] = "", d[80] = "";

                if (sscanf(line, "write %255s %63s %79s %79s", a, b, c, d) >= 2 && n_rules < RULES_MAX) {
                        struct rule *r = &rules[n_rules];

                        snprintf(r->name, sizeof r->name, "%s", a);
                        r->error = errno_parse(b);
                        r->left = -1;
                        r->data[0] = '\0';
                        for (const char *o = c; o; o = o == c ? d : NULL) {
                                if (strncmp(o, "count=", 6) == 0)
                                        r->left = strtol(o + 6, NULL, 10);
                                else if (strncmp(o, "data=", 5) == 0)
                                        snprintf(r->data, sizeof r->data, "%s", o + 5);
                        }
                        if (r->error)
                                n_rules++;
                } else if (sscanf(line, "realtime %63s", b) == 1)
                        realtime_offset = strtoll(b, NULL, 10);
        }
        fclose(f);
        seen_size = st.st_size;
        seen_mtime = st.st_mtim;
}

static void note(const char *name, int error) {
        const char *path = getenv("BWGOV_FAULT_LOG");
        char buf[NAME_MAX + 32];
        int fd, n;

        if (!path)
                return;
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
                return;
        n = snprintf(buf, sizeof buf, "%s %d\n", name, error);
        (void) real_write(fd, buf, (size_t) n);
        close(fd);
}

/* Whether the bytes written are TEXT (blanks and newlines after it aside). */
static bool data_is(const char *text, const void *buf, size_t len) {
        size_t n = strlen(text);
        const char *p = buf;

        if (len < n || memcmp(p, text, n) != 0)
                return false;
        for (size_t i = n; i < len; i++)
                if (p[i] != ' ' && p[i] != '\n')
                        return false;
        return true;
}

/* The errno to fail a write of buf to FD with, 0 for none. */
static int injected(int fd, const void *buf, size_t len) {
        char link[64], target[PATH_MAX];
        const char *base;
        ssize_t n;
        int error = 0;

        pthread_mutex_lock(&lock);
        reload();
        if (n_rules == 0) {
                pthread_mutex_unlock(&lock);
                return 0;
        }
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof target - 1);
        if (n > 0) {
                target[n] = '\0';
                base = strrchr(target, '/');
                base = base ? base + 1 : target;
                for (size_t i = 0; i < n_rules; i++) {
                        struct rule *r = &rules[i];

                        if (strcmp(base, r->name) != 0 || r->left == 0 || (r->data[0] && !data_is(r->data, buf, len)))
                                continue;
                        if (r->left > 0)
                                r->left--;
                        error = r->error;
                        note(base, error);
                        break;
                }
        }
        pthread_mutex_unlock(&lock);
        return error;
}

ssize_t write(int fd, const void *buf, size_t len) {
        int error;

        LOOKUP(real_write, "write");
        error = fd > 2 ? injected(fd, buf, len) : 0;
        if (error) {
                errno = error;
                return -1;
        }
        return real_write(fd, buf, len);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off) {
        int error;

        LOOKUP(real_pwrite, "pwrite");
        LOOKUP(real_write, "write");
        error = fd > 2 ? injected(fd, buf, len) : 0;
        if (error) {
                errno = error;
                return -1;
        }
        return real_pwrite(fd, buf, len, off);
}

static long long offset_now(void) {
        long long o;

        pthread_mutex_lock(&lock);
        reload();
        o = realtime_offset;
        pthread_mutex_unlock(&lock);
        return o;
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
        int r;

        LOOKUP(real_clock_gettime, "clock_gettime");
        r = real_clock_gettime(clk, ts);
        if (r == 0 && (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE))
                ts->tv_sec += offset_now();
        return r;
}

time_t time(time_t *t) {
        struct timespec ts;

        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return (time_t) -1;
        if (t)
                *t = ts.tv_sec;
        return ts.tv_sec;
}
