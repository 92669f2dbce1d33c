/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The line splitter the kernel-file parsers share (contract in
 * include/bwgov/util/lines.h). */

#include <errno.h>
#include <string.h>

#include "bwgov/util/lines.h"

int bw_lines_foreach(const char *buf, size_t len, bw_line_fn fn, void *userdata) {
        size_t i = 0;
        int r;

        if (!buf && len > 0)
                return -EINVAL;

        while (i < len) {
                const char *line = buf + i, *nl;
                size_t n;

                nl = memchr(line, '\n', len - i);
                n = nl ? (size_t) (nl - line) : len - i;
                i += n + (nl ? 1 : 0);

                r = fn(line, n, userdata);
                if (r < 0)
                        return r;
        }

        return 0;
}
