/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pressure files (cpu.pressure, /proc/pressure/cpu): bw_psi_parse(), and
 * bw_psi_rate() over numbers taken from the input.
 *
 * Properties: the parser returns 0, -EINVAL or -ENODATA and leaves *ret
 * untouched on failure; the averages it returns are at most 100.00; the
 * reading written back as the kernel prints it ("%lu.%02lu") parses to the
 * same reading; a rate is given only when time advanced and the total did
 * not go back, and is at most BW_PSI_RATE_MAX. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bwgov/cgroup/psi.h"
#include "fuzz-util.h"

static int format_line(char *buf, size_t size, const char *type, const struct bw_psi_line *l) {
        return snprintf(buf, size, "%s avg10=%" PRIu32 ".%02" PRIu32 " avg60=%" PRIu32 ".%02" PRIu32
                        " avg300=%" PRIu32 ".%02" PRIu32 " total=%" PRIu64 "\n", type,
                        l->avg10 / 100, l->avg10 % 100, l->avg60 / 100, l->avg60 % 100,
                        l->avg300 / 100, l->avg300 % 100, l->total_usec);
}

static bool same_line(const struct bw_psi_line *a, const struct bw_psi_line *b) {
        return a->avg10 == b->avg10 && a->avg60 == b->avg60 && a->avg300 == b->avg300 &&
                a->total_usec == b->total_usec;
}

static bool avgs_ok(const struct bw_psi_line *l) {
        return l->avg10 <= 10000 && l->avg60 <= 10000 && l->avg300 <= 10000;
}

static void check_rate(struct fuzz_bytes *b) {
        uint64_t prev_total = fuzz_take_u64(b), prev_now = fuzz_take_u64(b);
        uint64_t total = fuzz_take_u64(b), now = fuzz_take_u64(b), rate = 7;
        int r;

        r = bw_psi_rate(prev_total, prev_now, total, now, &rate);
        fuzz_check(r == (now > prev_now && total >= prev_total));
        fuzz_check(r ? rate <= BW_PSI_RATE_MAX : rate == 7);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_bytes b = { data, size };
        struct bw_psi psi, untouched, again;
        char buf[512];
        int r, n;

        memset(&psi, 0xa5, sizeof(psi));
        untouched = psi;
        r = bw_psi_parse((const char *) data, size, &psi);
        fuzz_check(r == 0 || r == -EINVAL || r == -ENODATA);
        if (r < 0)
                fuzz_check(memcmp(&psi, &untouched, sizeof(psi)) == 0);
        else {
                fuzz_check(avgs_ok(&psi.some));
                fuzz_check(!psi.has_full || avgs_ok(&psi.full));

                n = format_line(buf, sizeof(buf), "some", &psi.some);
                if (psi.has_full)
                        n += format_line(buf + n, sizeof(buf) - (size_t) n, "full", &psi.full);
                fuzz_check(n > 0 && (size_t) n < sizeof(buf));
                fuzz_check(bw_psi_parse(buf, (size_t) n, &again) == 0);
                fuzz_check(same_line(&psi.some, &again.some) && psi.has_full == again.has_full);
                fuzz_check(!psi.has_full || same_line(&psi.full, &again.full));
        }

        check_rate(&b);
        return 0;
}
