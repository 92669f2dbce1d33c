/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A directory standing in for /sys/fs/cgroup: bw_cg_root_open_dir() on a
 * scratch tree made from the input, which reads cgroup.controllers and
 * looks for cpu/, unified/, cpuacct/, freezer/ and cpuset/.
 *
 * Input: the first byte's bits say which of cgroup.controllers, cpu/,
 * unified/, cpuacct/, freezer/ and cpuset/ exist; the rest is the content
 * of cgroup.controllers.
 *
 * Properties: the layout is the one the tree describes: v2 when
 * cgroup.controllers lists the word "cpu" (-EOPNOTSUPP when it does not,
 * -EFBIG when it is over a page), else hybrid with cpu/ and unified/, v1
 * with cpu/ alone, -ENOENT without cpu/; every root opened is closed. */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/cgroup/cgroupfs-mount.h"
#include "bwgov/util/macro.h"
#include "fuzz-util.h"

#define CONTROLLERS_READ_MAX 4096       /* as cgroupfs-mount.c reads it */

enum {
        HAS_CONTROLLERS = 1 << 0,
        HAS_CPU         = 1 << 1,
        HAS_UNIFIED     = 1 << 2,
        HAS_CPUACCT     = 1 << 3,
        HAS_FREEZER     = 1 << 4,
        HAS_CPUSET      = 1 << 5,
};

static const char *const subdirs[] = { NULL, "cpu", "unified", "cpuacct", "freezer", "cpuset" };

/* Is "cpu" one of the blank-separated words of s[0..n) (up to a NUL)? */
static bool lists_cpu(const char *s, size_t n) {
        size_t i = 0;

        n = strnlen(s, n);
        while (i < n) {
                size_t start, l;

                while (i < n && strchr(" \t\n", s[i]))
                        i++;
                start = i;
                while (i < n && !strchr(" \t\n", s[i]))
                        i++;
                l = i - start;
                if (l == 3 && memcmp(s + start, "cpu", 3) == 0)
                        return true;
        }
        return false;
}

/* What bw_cg_root_open_dir() must answer: a layout, or a negative errno. */
static int expected(unsigned has, const char *content, size_t len) {
        if (has & HAS_CONTROLLERS) {
                if (len >= CONTROLLERS_READ_MAX)
                        return -EFBIG;
                return lists_cpu(content, len) ? BW_CG_LAYOUT_V2 : -EOPNOTSUPP;
        }
        if (!(has & HAS_CPU))
                return -ENOENT;
        return has & HAS_UNIFIED ? BW_CG_LAYOUT_HYBRID : BW_CG_LAYOUT_V1;
}

static void check(const char *dir, unsigned has, const char *content, size_t len) {
        struct bw_cg_root *root = NULL;
        _cleanup_close_ int dfd = -1;
        int r, want;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        fuzz_check(dfd >= 0);
        if (has & HAS_CONTROLLERS)
                fuzz_check(fuzz_write_file_at(dfd, "cgroup.controllers", content, len) == 0);
        for (size_t i = 1; i < ELEMENTSOF(subdirs); i++)
                if (has & (1u << i))
                        fuzz_check(mkdirat(dfd, subdirs[i], 0755) == 0);

        want = expected(has, content, len);
        r = bw_cg_root_open_dir(dir, &root);
        if (want < 0) {
                fuzz_check(r == want);
                return;
        }
        fuzz_check(r == 0 && root);
        fuzz_check((int) root->layout == want);
        fuzz_check(root->bw_fd >= 0 && root->bw_path);
        fuzz_check(root->layout == BW_CG_LAYOUT_V1 ? root->v2_fd < 0 : root->v2_fd >= 0);
        fuzz_check(root->layout == BW_CG_LAYOUT_V2 || (root->freezer_fd >= 0) == !!(has & HAS_FREEZER));
        bw_cg_root_free(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *dir = NULL;
        unsigned has;

        if (size == 0)
                return 0;
        has = data[0];
        dir = fuzz_mkdtemp("cgroup-root");
        fuzz_check(dir);
        check(dir, has, (const char *) data + 1, size - 1);
        fuzz_check(fuzz_rm_rf(dir) == 0);
        return 0;
}
