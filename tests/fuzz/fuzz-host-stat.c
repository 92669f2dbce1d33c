/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/stat's aggregate "cpu" line: bw_host_parse_stat().
 *
 * Properties: the result is 0, -EINVAL or -ERANGE, the output untouched on
 * failure, and the same for every tick rate; the busy time scales with the
 * tick rate (at 10^6 ticks per second it is the sum of the busy fields, at
 * USER_HZ 100 that sum times 10^4); only the first line counts; a tick rate
 * of 0 is -EINVAL. */

#include <errno.h>
#include <string.h>

#include "bwgov/host.h"
#include "bwgov/macro.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *buf = (const char *) data;
        const char *nl = memchr(buf, '\n', size);
        uint64_t ticks = 7, usec = 7, again = 7;
        int r;

        fuzz_check(bw_host_parse_stat(buf, size, 0, &ticks) == -EINVAL && ticks == 7);

        r = bw_host_parse_stat(buf, size, USEC_PER_SEC, &ticks);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        fuzz_check(bw_host_parse_stat(buf, size, 100, &usec) == r);
        if (r < 0) {
                fuzz_check(ticks == 7 && usec == 7);
                return 0;
        }
        fuzz_check(usec == ticks * 10000);

        if (nl) {
                fuzz_check(bw_host_parse_stat(buf, (size_t) (nl - buf), USEC_PER_SEC, &again) == 0);
                fuzz_check(again == ticks);
        }
        return 0;
}
