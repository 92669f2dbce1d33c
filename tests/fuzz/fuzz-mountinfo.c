/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/self/mountinfo: bw_cg_mounts_parse() on the input as a stream
 * (fmemopen), then bw_cg_layout_from_mounts().
 *
 * Properties: the parser returns 0 or -EINVAL; every mount point it returns
 * is absolute; the layout follows from the mounts (v2 only with a cgroup2
 * mount whose controllers have cpu, hybrid with both, v1 with cpu alone);
 * a v2 mount point found, escaped again as the kernel escapes it (\ooo for
 * blank, tab, newline and backslash), parses back to itself. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/cgroup/cgroupfs-mount.h"
#include "bwgov/util/macro.h"
#include "fuzz-util.h"

static int parse(const void *data, size_t size, struct bw_cg_mounts *ret) {
        _cleanup_free_ char *copy = fuzz_strndup(data, size);
        _cleanup_fclose_ FILE *f = NULL;

        /* Read mode: the stream ends at size, NUL bytes included. */
        f = fmemopen(copy, size, "r");
        fuzz_check(f);
        return bw_cg_mounts_parse(f, ret);
}

static void check_layout(struct bw_cg_mounts *m) {
        enum bw_cg_layout l;

        m->v2_has_cpu = false;
        l = bw_cg_layout_from_mounts(m);
        fuzz_check(l == (m->cpu ? (m->v2 ? BW_CG_LAYOUT_HYBRID : BW_CG_LAYOUT_V1) : BW_CG_LAYOUT_UNKNOWN));
        m->v2_has_cpu = true;
        l = bw_cg_layout_from_mounts(m);
        fuzz_check(!m->v2 || l == BW_CG_LAYOUT_V2);
        fuzz_check(bw_cg_layout_to_string(l) != NULL);
}

/* One mountinfo line that mounts cgroup2 at PATH, escaped as the kernel does. */
static char *cgroup2_line(const char *path) {
        char *line = malloc(strlen(path) * 4 + 64), *p;

        fuzz_check(line);
        p = stpcpy(line, "30 23 0:26 / ");
        for (const char *s = path; *s; s++)
                if (strchr(" \t\n\\", *s))
                        p += sprintf(p, "\\%03o", (unsigned char) *s);
                else
                        *p++ = *s;
        strcpy(p, " rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n");
        return line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(bw_cg_mounts_done) struct bw_cg_mounts m = { 0 };
        _cleanup_(bw_cg_mounts_done) struct bw_cg_mounts again = { 0 };
        _cleanup_free_ char *line = NULL;
        int r;

        r = parse(data, size, &m);
        fuzz_check(r == 0 || r == -EINVAL);
        if (r < 0)
                return 0;

        fuzz_check(!m.v2 || m.v2[0] == '/');
        fuzz_check(!m.cpu || m.cpu[0] == '/');
        fuzz_check(!m.cpuacct || m.cpuacct[0] == '/');
        fuzz_check(!m.freezer || m.freezer[0] == '/');
        fuzz_check(!m.cpuset || m.cpuset[0] == '/');
        check_layout(&m);

        if (m.v2) {
                line = cgroup2_line(m.v2);
                fuzz_check(parse(line, strlen(line), &again) == 0);
                fuzz_check(again.v2 && strcmp(again.v2, m.v2) == 0);
        }
        return 0;
}
