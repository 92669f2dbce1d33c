/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Kernel versions: the running kernel's version parsed from /proc/version
 * or a release name, ordered, formatted, and compared with the mainline and
 * stable releases that carry a change. Also the tri-state answer (present,
 * absent, unknown) shared by version checks, probes and manifest items.
 * Pure: the /proc/version text or its path is a parameter. */

#include <stdbool.h>
#include <stddef.h>

/* Tri-state answer of every probe and of every item. */

enum bw_kstatus {
        BW_KSTATUS_UNKNOWN = 0,
        BW_KSTATUS_PRESENT,
        BW_KSTATUS_ABSENT,
        _BW_KSTATUS_MAX,
};

/* "present", "absent", "unknown"; NULL for an out-of-range value. */
const char *bw_kstatus_to_string(enum bw_kstatus s);

enum bw_kversion_origin {
        BW_KVERSION_FROM_RELEASE = 0,   /* the release token, e.g. "6.18.44-fc-v657" */
        BW_KVERSION_FROM_DEBIAN,        /* the "Debian 6.1.192-2" tag of /proc/version */
};

#define BW_KRELEASE_MAX 65              /* like struct utsname.release */

struct bw_kversion {
        unsigned major;
        unsigned minor;
        unsigned patch;                 /* stable level; meaningful only when patch_known */
        bool patch_known;               /* false for distribution ABI names such as
                                         * "5.15.0-100-generic": the base is 5.15, the
                                         * stable level (and backports) cannot be told */
        unsigned rc;                    /* N of a "-rcN" pre-release of major.minor, 0 for a release */
        enum bw_kversion_origin origin;
        char release[BW_KRELEASE_MAX];  /* the release token as found ("6.1.0-28-amd64"),
                                         * used for /boot/config-<release> and messages */
};

/* Parse a kernel version from either a whole /proc/version line ("Linux
 * version <release> (...) #1 SMP ...") or a bare release ("6.18.44",
 * "6.10.0-rc3", "6.12.117-1", "5.15.0-100-generic").
 *  - A Debian tag in /proc/version ("... Debian 6.1.192-2 (2026-01-02)") of
 *    the same major.minor wins over the release token: "6.1.0-28-amd64" is
 *    an ABI name, the upstream version is 6.1.192. Other "Debian x.y.z" words
 *    (the compiler's version) do not match major.minor and are ignored.
 *  - "X.Y.0-N..." (an ABI number after a .0 release) without such a tag has
 *    an unknown stable level (patch_known = false).
 *  - "X.Y" alone is X.Y.0.
 * Returns 0, or -EINVAL when no version can be found (ret untouched). */
int bw_kversion_parse(const char *s, struct bw_kversion *ret);

/* Read a /proc/version-style file and parse it. Returns 0, -errno when it
 * cannot be opened, -EINVAL when it holds no version (ret untouched). */
int bw_kversion_read(const char *path, struct bw_kversion *ret);

/* Order of two versions by (major, minor, patch, rc), a release sorting after
 * its rcs. An unknown patch compares as 0. Returns <0, 0, >0. */
int bw_kversion_compare(const struct bw_kversion *a, const struct bw_kversion *b);

/* Format as "6.18.44", "6.10.0-rc3" or "5.15.?" (unknown stable level) into
 * buf. Returns buf. size should be at least BW_KRELEASE_MAX. */
char *bw_kversion_format(const struct bw_kversion *v, char *buf, size_t size);

/* First fixed release of one stable branch, e.g. branch 6.1 -> 6.1.93. */
struct bw_kstable {
        unsigned major;
        unsigned minor;
        unsigned patch;
};

/* Does kernel v carry a change that landed in mainline release_major.release_minor,
 * with the given first fixed stable releases?
 *  - PRESENT when v >= the mainline release (an rc of that very release is
 *    UNKNOWN: the change may have landed after that rc), or when v's branch
 *    has a stable entry and v's stable level >= it;
 *  - ABSENT when v's branch has a stable entry and v is below it, or when
 *    v's branch is older than the release and has no stable entry;
 *  - UNKNOWN when v's stable level is unknown (a distribution ABI name: it
 *    may carry backports) and v is older than the release.
 * ret_reason (optional) receives a malloc'd one-line explanation such as
 * "6.1.192 >= 6.1.93 (6.1 stable)". Returns 0 or -ENOMEM. */
int bw_kversion_has_fix(
                const struct bw_kversion *v,
                unsigned release_major,
                unsigned release_minor,
                const struct bw_kstable *stable,
                size_t n_stable,
                enum bw_kstatus *ret_status,
                char **ret_reason);
