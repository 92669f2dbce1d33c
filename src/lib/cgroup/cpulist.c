/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CPU lists in the kernel's syntax: parse and format (include/bwgov/cgroup/cpulist.h). */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwgov/cgroup/cpulist.h"
#include "bwgov/util/macro.h"

/* One CPU number at *p (decimal digits only), advancing *p. */
static int parse_cpu(const char **p, const char *end, unsigned *ret) {
        unsigned long v = 0;
        const char *s = *p;

        if (s >= end || *s < '0' || *s > '9')
                return -EINVAL;
        while (s < end && *s >= '0' && *s <= '9') {
                v = v * 10 + (unsigned long) (*s - '0');
                if (v > BW_CPULIST_CPU_MAX)
                        return -EINVAL;
                s++;
        }
        *p = s;
        *ret = (unsigned) v;
        return 0;
}

int bw_cpulist_parse(const char *buf, size_t len, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ bool *set = NULL;
        _cleanup_free_ unsigned *out = NULL;
        const char *p = buf, *end = buf + len;
        size_t n = 0;
        unsigned max = 0;
        bool any = false;
        int r;

        if (len > 0 && end[-1] == '\n')
                end--;
        if (p == end) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        set = calloc(BW_CPULIST_CPU_MAX + 1, sizeof(*set));
        if (!set)
                return -ENOMEM;
        for (;;) {
                unsigned a, b;

                r = parse_cpu(&p, end, &a);
                if (r < 0)
                        return r;
                b = a;
                if (p < end && *p == '-') {
                        p++;
                        r = parse_cpu(&p, end, &b);
                        if (r < 0)
                                return r;
                        if (b < a)
                                return -EINVAL;
                }
                for (unsigned c = a; c <= b; c++)
                        set[c] = true;
                max = b > max || !any ? b : max;
                any = true;
                if (p == end)
                        break;
                if (*p != ',')
                        return -EINVAL;
                p++;
        }
        out = calloc(max + 1, sizeof(*out));
        if (!out)
                return -ENOMEM;
        for (unsigned c = 0; c <= max; c++)
                if (set[c])
                        out[n++] = c;
        *ret = TAKE_PTR(out);
        *ret_n = n;
        return 0;
}

int bw_cpulist_format(const unsigned *cpus, size_t n, char **ret) {
        _cleanup_free_ char *s = NULL;
        size_t len = 0, cap = n * 2 * (sizeof("65535") + 1) + 1;

        for (size_t i = 1; i < n; i++)
                if (cpus[i] <= cpus[i - 1])
                        return -EINVAL;
        s = malloc(cap);
        if (!s)
                return -ENOMEM;
        s[0] = '\0';
        for (size_t i = 0; i < n;) {
                size_t j = i;

                while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
                        j++;
                if (j == i)
                        len += (size_t) snprintf(s + len, cap - len, "%s%u", len ? "," : "", cpus[i]);
                else
                        len += (size_t) snprintf(s + len, cap - len, "%s%u-%u", len ? "," : "", cpus[i], cpus[j]);
                i = j + 1;
        }
        *ret = TAKE_PTR(s);
        return 0;
}
