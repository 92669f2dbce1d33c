/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/stat's aggregate "cpu" line: bw_host_parse_stat().
 *
 * Properties: the result is 0, -EINVAL or -ERANGE, the output untouched on
 * failure, and the same for every tick rate; the busy and idle times scale
 * with the tick rate (at 10^6 ticks per second they are the sums of their
 * fields, at USER_HZ 100 those sums times 10^4); only the first line counts;
 * a tick rate of 0 is -EINVAL. */

#include <errno.h>
#include <string.h>

#include "bwgov/law/host.h"
#include "bwgov/util/macro.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *buf = (const char *) data;
        const char *nl = memchr(buf, '\n', size);
        struct bw_host_cpu ticks = { 7, 8 }, usec = { 7, 8 }, again = { 7, 8 };
        int r;

        fuzz_check(bw_host_parse_stat(buf, size, 0, &ticks) == -EINVAL);
        fuzz_check(ticks.busy_usec == 7 && ticks.idle_usec == 8);

        r = bw_host_parse_stat(buf, size, USEC_PER_SEC, &ticks);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        fuzz_check(bw_host_parse_stat(buf, size, 100, &usec) == r);
        if (r < 0) {
                fuzz_check(ticks.busy_usec == 7 && usec.busy_usec == 7 && ticks.idle_usec == 8 && usec.idle_usec == 8);
                return 0;
        }
        fuzz_check(usec.busy_usec == ticks.busy_usec * 10000 && usec.idle_usec == ticks.idle_usec * 10000);

        if (nl) {
                fuzz_check(bw_host_parse_stat(buf, (size_t) (nl - buf), USEC_PER_SEC, &again) == 0);
                fuzz_check(again.busy_usec == ticks.busy_usec && again.idle_usec == ticks.idle_usec);
        }
        return 0;
}
