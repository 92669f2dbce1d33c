/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel versions (/proc/version, release names): bw_kversion_parse() on
 * the input up to its first NUL, bw_kversion_format(), bw_kversion_compare()
 * and bw_kversion_has_fix() against a release and a stable entry taken from
 * the input's first bytes.
 *
 * Properties: the result is 0 or -EINVAL, *ret untouched on failure; a
 * version with a known stable level formats to text that parses to the same
 * version (parse(format(x)) == x, compare() == 0); a version compares equal
 * to itself; has_fix() answers one of the three states with a reason. */

#include <errno.h>
#include <string.h>

#include "bwgov/util/kversion.h"
#include "bwgov/util/macro.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = fuzz_strndup(data, size), *reason = NULL;
        struct fuzz_bytes b = { data, size };
        struct bw_kversion v, untouched, again;
        struct bw_kstable stable;
        enum bw_kstatus status = _BW_KSTATUS_MAX;
        char buf[BW_KRELEASE_MAX];
        unsigned major, minor;
        int r;

        memset(&v, 0xa5, sizeof(v));
        untouched = v;
        r = bw_kversion_parse(s, &v);
        fuzz_check(r == 0 || r == -EINVAL);
        if (r < 0) {
                fuzz_check(memcmp(&v, &untouched, sizeof(v)) == 0);
                return 0;
        }
        fuzz_check(v.major > 0 && strlen(v.release) > 0 && strlen(v.release) < BW_KRELEASE_MAX);
        fuzz_check(bw_kversion_compare(&v, &v) == 0);

        bw_kversion_format(&v, buf, sizeof(buf));
        if (v.patch_known) {
                fuzz_check(bw_kversion_parse(buf, &again) == 0);
                fuzz_check(again.major == v.major && again.minor == v.minor && again.patch == v.patch &&
                           again.rc == v.rc && again.patch_known);
                fuzz_check(bw_kversion_compare(&v, &again) == 0);
        }

        major = fuzz_take_u8(&b) % 8;
        minor = fuzz_take_u8(&b) % 20;
        stable = (struct bw_kstable) { .major = v.major, .minor = v.minor, .patch = fuzz_take_u8(&b) };
        fuzz_check(bw_kversion_has_fix(&v, major, minor, &stable, fuzz_take_u8(&b) & 1, &status, &reason) == 0);
        fuzz_check(status < _BW_KSTATUS_MAX && bw_kstatus_to_string(status) && reason);
        return 0;
}
