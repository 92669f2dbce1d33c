/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwgovd's logging: to the journal with structured BWGOV_* fields when
 * stderr is connected to it (JOURNAL_STREAM), to stderr otherwise, and the
 * one line per unit change (contracts in log.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "bwgov/util/repeat.h"
#include "clock.h"
#include "log.h"

static int max_level = LOG_INFO;
static int use_journal = 0;
static unsigned repeat_scope;           /* depth of log_repeat_begin() */
static struct bw_repeat repeats;

void log_repeat_begin(void) {
        repeat_scope++;
}

void log_repeat_end(void) {
        if (repeat_scope > 0)
                repeat_scope--;
}

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

int log_level_from_string(const char *s) {
        static const char *const names[] = {
                "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
        };
        char *end;
        long v;

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strcasecmp(s, names[i]) == 0)
                        return (int) i;
        if (strcasecmp(s, "error") == 0)
                return LOG_ERR;
        if (strcasecmp(s, "warn") == 0)
                return LOG_WARNING;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno == 0 && *s && !*end && v >= 0 && v <= 7)
                return (int) v;
        return -EINVAL;
}

/* Like systemd: stderr goes to the journal when JOURNAL_STREAM names its
 * device and inode; then log natively so structured fields survive. */
void log_setup(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        /* The repeat table at the start, not at the first warning it
         * holds back: a soak read the 96 KiB it took then, minutes in, as
         * the heap growing. Without it now, it is tried again then. */
        (void) bw_repeat_init(&repeats);
        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return;
        if (fstat(STDERR_FILENO, &st) < 0)
                return;
        use_journal = st.st_dev == (dev_t) dev && st.st_ino == (ino_t) ino;
}

static const char *level_prefix(int level) {
        switch (level) {
        case LOG_DEBUG:   return "debug: ";
        case LOG_INFO:    return "";
        case LOG_NOTICE:  return "";
        case LOG_WARNING: return "warning: ";
        default:          return "error: ";
        }
}

/* A warning or error seen LOG_REPEAT_WINDOW_USEC after it was last logged
 * says how often it was held back meanwhile. Returns false to hold msg. */
static bool repeat_pass(char *msg, size_t size) {
        uint32_t held;
        size_t n;

        if (!bw_repeat_check(&repeats, bw_repeat_key(msg), clock_now_usec(CLOCK_MONOTONIC), LOG_REPEAT_WINDOW_USEC,
                             &held))
                return false;
        n = strlen(msg);
        if (held > 0 && n < size)
                snprintf(msg + n, size - n, " (%" PRIu32 " more time%s in the last %" PRIu64 " min, not logged)",
                         held, held == 1 ? "" : "s", LOG_REPEAT_WINDOW_USEC / USEC_PER_SEC / 60);
        return true;
}

_printf_(6, 0)
static void emit(int level, int error, const char *fields[], size_t n_fields, bool limited, const char *fmt,
                 va_list ap) {
        char msg[2048];
        int saved = errno;

        if (error != 0)
                errno = abs(error);     /* so %m in fmt means this error */
        vsnprintf(msg, sizeof msg, fmt, ap);
        errno = saved;
        if ((limited || repeat_scope > 0) && level <= LOG_WARNING && !repeat_pass(msg, sizeof msg))
                return;

        if (use_journal) {
                struct iovec iov[16];
                char *bufs[16] = {0};
                size_t k = 0;

                if (asprintf(&bufs[k], "MESSAGE=%s", msg) >= 0) {
                        iov[k].iov_base = bufs[k];
                        iov[k].iov_len = strlen(bufs[k]);
                        k++;
                }
                if (asprintf(&bufs[k], "PRIORITY=%d", level) >= 0) {
                        iov[k].iov_base = bufs[k];
                        iov[k].iov_len = strlen(bufs[k]);
                        k++;
                }
                if (error != 0 && asprintf(&bufs[k], "ERRNO=%d", abs(error)) >= 0) {
                        iov[k].iov_base = bufs[k];
                        iov[k].iov_len = strlen(bufs[k]);
                        k++;
                }
                for (size_t i = 0; i < n_fields && k < ELEMENTSOF(iov); i++) {
                        iov[k].iov_base = (void *) fields[i];
                        iov[k].iov_len = strlen(fields[i]);
                        k++;
                }
                (void) sd_journal_sendv(iov, (int) k);
                for (size_t i = 0; i < ELEMENTSOF(bufs); i++)
                        free(bufs[i]);
                return;
        }

        fprintf(stderr, "bwgovd: %s%s", level_prefix(level), msg);
        for (size_t i = 0; i < n_fields; i++)
                fprintf(stderr, " %s", fields[i]);
        fputc('\n', stderr);
}

int log_internal(int level, int error, const char *fmt, ...) {
        va_list ap;

        if (level <= max_level) {
                va_start(ap, fmt);
                emit(level, error, NULL, 0, false, fmt, ap);
                va_end(ap);
        }
        return error == 0 ? 0 : -abs(error);
}

int log_limited(int level, int error, const char *fmt, ...) {
        va_list ap;

        if (level <= max_level) {
                va_start(ap, fmt);
                emit(level, error, NULL, 0, true, fmt, ap);
                va_end(ap);
        }
        return error == 0 ? 0 : -abs(error);
}

/* A bandwidth's quota for a journal field: "none" without one. */
static const char *quota_field(const struct bw_bandwidth *b, char buf[static BW_QUOTA_STRING_MAX]) {
        return b ? bw_quota_to_string(b->quota_usec, buf) : "none";
}

void log_unit_change(int level, const char *unit, const struct bw_bandwidth *old,
                     const struct bw_bandwidth *new, const char *reason, const char *fmt, ...) {
        char f_unit[512], f_qold[64], f_qnew[64], f_bold[64], f_bnew[64], f_reason[128], q[BW_QUOTA_STRING_MAX];
        const char *fields[6];
        va_list ap;

        if (level > max_level)
                return;

        snprintf(f_unit, sizeof f_unit, "BWGOV_UNIT=%s", unit);
        snprintf(f_qold, sizeof f_qold, "BWGOV_QUOTA_OLD=%s", quota_field(old, q));
        snprintf(f_qnew, sizeof f_qnew, "BWGOV_QUOTA_NEW=%s", quota_field(new, q));
        snprintf(f_bold, sizeof f_bold, "BWGOV_BURST_OLD=%" PRIu64, old ? old->burst_usec : 0);
        snprintf(f_bnew, sizeof f_bnew, "BWGOV_BURST_NEW=%" PRIu64, new ? new->burst_usec : 0);
        snprintf(f_reason, sizeof f_reason, "BWGOV_REASON=%s", reason);
        fields[0] = f_unit;
        fields[1] = f_qold;
        fields[2] = f_qnew;
        fields[3] = f_bold;
        fields[4] = f_bnew;
        fields[5] = f_reason;

        va_start(ap, fmt);
        emit(level, 0, fields, ELEMENTSOF(fields), false, fmt, ap);
        va_end(ap);
}
