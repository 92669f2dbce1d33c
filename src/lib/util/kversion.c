/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel version strings: /proc/version, release names, distribution tags,
 * and the "does this version carry that upstream change" decision. */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/util/kversion.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"

static const char *const kstatus_table[_BW_KSTATUS_MAX] = {
        [BW_KSTATUS_UNKNOWN] = "unknown",
        [BW_KSTATUS_PRESENT] = "present",
        [BW_KSTATUS_ABSENT] = "absent",
};

BW_DEFINE_STRING_TABLE_TO_STRING(bw_kstatus, enum bw_kstatus, kstatus_table, _BW_KSTATUS_MAX)

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Parse a run of decimal digits (at least one) that fits in an unsigned of
 * at most 6 digits worth; advance *p. Locale-free. */
static int parse_uint(const char **p, unsigned *ret) {
        const char *s = *p;
        unsigned v = 0;

        if (!is_digit(*s))
                return -EINVAL;
        for (; is_digit(*s); s++) {
                if (v > 99999)          /* no kernel version component is that long */
                        return -ERANGE;
                v = v * 10 + (unsigned) (*s - '0');
        }
        *p = s;
        *ret = v;
        return 0;
}

/* Parse "X.Y[.Z]" followed by "-rcN" (release) or "~rcN" (Debian). Fills
 * major/minor/patch/rc/patch_known and returns the end of what was consumed,
 * NULL when s does not start with a version. */
static const char *parse_numbers(const char *s, char rc_sep, struct bw_kversion *v) {
        unsigned major, minor, patch = 0, rc = 0;

        if (parse_uint(&s, &major) < 0 || *s != '.')
                return NULL;
        s++;
        if (parse_uint(&s, &minor) < 0)
                return NULL;
        if (*s == '.' && is_digit(s[1])) {
                s++;
                if (parse_uint(&s, &patch) < 0)
                        return NULL;
        }
        if (*s == '.' && is_digit(s[1]))        /* a fourth component: not a kernel version */
                return NULL;
        if (s[0] == rc_sep && s[1] == 'r' && s[2] == 'c' && is_digit(s[3])) {
                s += 3;
                if (parse_uint(&s, &rc) < 0 || rc == 0)
                        return NULL;
        }
        if (major == 0)
                return NULL;

        v->major = major;
        v->minor = minor;
        v->patch = patch;
        v->rc = rc;
        v->patch_known = true;
        return s;
}

/* Does the text after the numbers look like an ABI number, "-28-amd64",
 * "-100-generic", "-362.8.1.el9"? Only meaningful after "X.Y.0". */
static bool looks_like_abi(const char *rest) {
        if (*rest != '-' || !is_digit(rest[1]))
                return false;
        rest++;
        while (is_digit(*rest))
                rest++;
        return *rest == '\0' || *rest == '-' || *rest == '.' || *rest == '+' || *rest == '_';
}

int bw_kversion_parse(const char *s, struct bw_kversion *ret) {
        struct bw_kversion v = { 0 };
        const char *tok, *end, *rest;
        size_t len;

        if (!s)
                return -EINVAL;

        while (is_space(*s))
                s++;
        if (strncmp(s, "Linux version ", 14) == 0) {
                s += 14;
                while (is_space(*s))
                        s++;
        }

        tok = s;
        for (end = tok; *end && !is_space(*end); end++)
                ;
        len = (size_t) (end - tok);
        if (len == 0 || len >= sizeof(v.release))
                return -EINVAL;
        memcpy(v.release, tok, len);
        v.release[len] = '\0';

        rest = parse_numbers(v.release, '-', &v);
        if (!rest)
                return -EINVAL;
        if (v.rc == 0 && v.patch == 0 && looks_like_abi(rest))
                v.patch_known = false;
        v.origin = BW_KVERSION_FROM_RELEASE;

        /* A Debian build names its upstream version after the build number:
         * "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-01-02)". The compiler's
         * "(Debian 12.2.0-14)" comes earlier and has another major.minor. */
        for (const char *p = end; (p = strstr(p, "Debian ")); ) {
                struct bw_kversion d = v;
                const char *q;

                p += 7;
                q = parse_numbers(p, '~', &d);
                if (!q || d.major != v.major || d.minor != v.minor)
                        continue;
                if (*q != '-' && *q != '~' && *q != '+' && !is_space(*q) && *q != '\0')
                        continue;
                d.origin = BW_KVERSION_FROM_DEBIAN;
                v = d;
        }

        *ret = v;
        return 0;
}

int bw_kversion_compare(const struct bw_kversion *a, const struct bw_kversion *b) {
        unsigned pa = a->patch_known ? a->patch : 0, pb = b->patch_known ? b->patch : 0;
        /* A release sorts after all of its rcs. */
        unsigned ra = a->rc == 0 ? UINT_MAX : a->rc, rb = b->rc == 0 ? UINT_MAX : b->rc;

        if (a->major != b->major)
                return a->major < b->major ? -1 : 1;
        if (a->minor != b->minor)
                return a->minor < b->minor ? -1 : 1;
        if (pa != pb)
                return pa < pb ? -1 : 1;
        if (ra != rb)
                return ra < rb ? -1 : 1;
        return 0;
}

char *bw_kversion_format(const struct bw_kversion *v, char *buf, size_t size) {
        if (!v->patch_known)
                snprintf(buf, size, "%u.%u.?", v->major, v->minor);
        else if (v->rc > 0)
                snprintf(buf, size, "%u.%u.%u-rc%u", v->major, v->minor, v->patch, v->rc);
        else
                snprintf(buf, size, "%u.%u.%u", v->major, v->minor, v->patch);
        return buf;
}

static int reason_set(char **ret_reason, const char *fmt, ...) _printf_(2, 3);
static int reason_set(char **ret_reason, const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        if (!ret_reason)
                return 0;
        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        *ret_reason = s;
        return 0;
}

int bw_kversion_has_fix(
                const struct bw_kversion *v,
                unsigned release_major,
                unsigned release_minor,
                const struct bw_kstable *stable,
                size_t n_stable,
                enum bw_kstatus *ret_status,
                char **ret_reason) {

        const struct bw_kstable *entry = NULL;
        enum bw_kstatus status;
        char ver[BW_KRELEASE_MAX];
        int cmp, r;

        bw_kversion_format(v, ver, sizeof ver);

        if (v->major != release_major)
                cmp = v->major < release_major ? -1 : 1;
        else if (v->minor != release_minor)
                cmp = v->minor < release_minor ? -1 : 1;
        else
                cmp = 0;

        if (cmp > 0 || (cmp == 0 && v->rc == 0)) {
                status = BW_KSTATUS_PRESENT;
                r = reason_set(ret_reason, "%s >= %u.%u", ver, release_major, release_minor);
                goto done;
        }
        if (cmp == 0) {
                status = BW_KSTATUS_UNKNOWN;
                r = reason_set(ret_reason, "%s is a pre-release of %u.%u, the change may land after it",
                               ver, release_major, release_minor);
                goto done;
        }

        for (size_t i = 0; i < n_stable; i++)
                if (stable[i].major == v->major && stable[i].minor == v->minor) {
                        entry = &stable[i];
                        break;
                }

        if (!v->patch_known) {
                status = BW_KSTATUS_UNKNOWN;
                r = reason_set(ret_reason, "stable level of %s unknown (%s), fixed in %u.%u%s",
                               ver, v->release, release_major, release_minor,
                               entry ? " and a stable release" : "");
                goto done;
        }

        if (!entry) {
                status = BW_KSTATUS_ABSENT;
                r = reason_set(ret_reason, "%s < %u.%u, no fix in %u.%u stable",
                               ver, release_major, release_minor, v->major, v->minor);
                goto done;
        }

        if (v->rc == 0 && v->patch >= entry->patch) {
                status = BW_KSTATUS_PRESENT;
                r = reason_set(ret_reason, "%s >= %u.%u.%u (%u.%u stable)",
                               ver, entry->major, entry->minor, entry->patch, entry->major, entry->minor);
        } else {
                status = BW_KSTATUS_ABSENT;
                r = reason_set(ret_reason, "%s < %u.%u.%u (%u.%u stable)",
                               ver, entry->major, entry->minor, entry->patch, entry->major, entry->minor);
        }

done:
        if (r < 0)
                return r;
        *ret_status = status;
        return 0;
}

int bw_kversion_read(const char *path, struct bw_kversion *ret) {
        _cleanup_fclose_ FILE *f = NULL;
        char buf[4096];
        size_t n;

        f = fopen(path, "re");
        if (!f)
                return -errno;
        n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        return bw_kversion_parse(buf, ret);
}
