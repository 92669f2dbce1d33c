/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pressure stall information: the locale-free parser of a pressure file and
 * the stall rate between two readings (contracts in include/bwgov/cgroup/psi.h). */

#include <errno.h>
#include <string.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/util/lines.h"
#include "bwgov/util/macro.h"
#include "bwgov/cgroup/psi.h"
#include "bwgov/util/util.h"

enum {
        FIELD_AVG10  = 1u << 0,
        FIELD_AVG60  = 1u << 1,
        FIELD_AVG300 = 1u << 2,
        FIELD_TOTAL  = 1u << 3,
        FIELD_ALL    = FIELD_AVG10 | FIELD_AVG60 | FIELD_AVG300 | FIELD_TOTAL,
};

#define PSI_AVG_MAX 10000u /* 100.00 % in hundredths */
#define LINE_TYPE_LEN 5         /* "some " and "full " */

static bool has_prefix(const char *s, size_t n, const char *prefix, size_t plen) {
        return n >= plen && memcmp(s, prefix, plen) == 0;
}

/* "D+.D" or "D+.DD" (the kernel prints "%lu.%02lu") into hundredths, without
 * the locale. Above 100.00 is -EINVAL. */
static int parse_avg(const char *s, size_t n, uint32_t *ret) {
        uint32_t ip = 0, frac = 0;
        size_t i = 0, nfrac;

        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
                ip = ip * 10 + (uint32_t) (s[i] - '0');
                if (ip > PSI_AVG_MAX / 100)
                        return -EINVAL; /* also keeps ip from overflowing */
        }
        if (i == 0 || i >= n || s[i] != '.')
                return -EINVAL;
        i++;

        nfrac = n - i;
        if (nfrac < 1 || nfrac > 2)
                return -EINVAL;
        for (size_t j = 0; j < 2; j++) {
                frac *= 10;
                if (j < nfrac) {
                        if (s[i + j] < '0' || s[i + j] > '9')
                                return -EINVAL;
                        frac += (uint32_t) (s[i + j] - '0');
                }
        }

        if (ip * 100 + frac > PSI_AVG_MAX)
                return -EINVAL;

        *ret = ip * 100 + frac;
        return 0;
}

/* One field "NAME=VALUE". */
static int parse_field(const char *s, size_t n, unsigned *seen, struct bw_psi_line *l) {
        static const struct {
                const char *prefix;
                size_t plen;
                unsigned bit;
        } fields[] = {
                { "avg10=",  6, FIELD_AVG10  },
                { "avg60=",  6, FIELD_AVG60  },
                { "avg300=", 7, FIELD_AVG300 },
                { "total=",  6, FIELD_TOTAL  },
        };

        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                size_t plen = fields[i].plen, vlen;
                const char *v;
                int r;

                if (!has_prefix(s, n, fields[i].prefix, plen))
                        continue;
                v = s + plen;
                vlen = n - plen;

                if (*seen & fields[i].bit)
                        return -EINVAL;

                switch (fields[i].bit) {
                case FIELD_AVG10:
                        r = parse_avg(v, vlen, &l->avg10);
                        break;
                case FIELD_AVG60:
                        r = parse_avg(v, vlen, &l->avg60);
                        break;
                case FIELD_AVG300:
                        r = parse_avg(v, vlen, &l->avg300);
                        break;
                default:
                        /* The line was split on '\n', so v holds none and
                         * bw_u64_parse() sees digits or garbage only. */
                        r = bw_u64_parse(v, vlen, &l->total_usec);
                        break;
                }
                if (r < 0)
                        return -EINVAL; /* garbage, or total beyond UINT64_MAX */

                *seen |= fields[i].bit;
                return 0;
        }

        return -EINVAL; /* unknown field */
}

/* "avg10=A avg60=B avg300=C total=T": fields separated by one blank, each
 * exactly once, in any order. */
static int parse_fields(const char *s, size_t n, struct bw_psi_line *ret) {
        struct bw_psi_line l = { 0 };
        unsigned seen = 0;
        size_t i = 0;
        int r;

        for (;;) {
                const char *sp = memchr(s + i, ' ', n - i);
                size_t flen = sp ? (size_t) (sp - (s + i)) : n - i;

                r = parse_field(s + i, flen, &seen, &l);
                if (r < 0)
                        return r;

                if (!sp)
                        break;
                i += flen + 1;
        }

        if (seen != FIELD_ALL)
                return -EINVAL;

        *ret = l;
        return 0;
}

struct parse_state {
        struct bw_psi psi;
        bool has_some;
};

/* "some FIELDS" or "full FIELDS", each once. */
static int parse_line(const char *line, size_t n, void *userdata) {
        struct parse_state *ps = userdata;
        struct bw_psi_line *l;
        bool *have;
        int r;

        if (has_prefix(line, n, "some ", LINE_TYPE_LEN)) {
                l = &ps->psi.some;
                have = &ps->has_some;
        } else if (has_prefix(line, n, "full ", LINE_TYPE_LEN)) {
                l = &ps->psi.full;
                have = &ps->psi.has_full;
        } else
                return -EINVAL; /* empty or unknown line type */

        if (*have)
                return -EINVAL;

        r = parse_fields(line + LINE_TYPE_LEN, n - LINE_TYPE_LEN, l);
        if (r < 0)
                return r;
        *have = true;
        return 0;
}

int bw_psi_parse(const char *buf, size_t len, struct bw_psi *ret) {
        struct parse_state ps = { 0 };
        int r;

        r = bw_lines_foreach(buf, len, parse_line, &ps);
        if (r < 0)
                return r;

        if (!ps.has_some)
                return -ENODATA;

        *ret = ps.psi;
        return 0;
}

int bw_psi_rate(uint64_t prev_total_usec, uint64_t prev_now_usec, uint64_t total_usec, uint64_t now_usec,
                uint64_t *ret_rate) {
        if (now_usec <= prev_now_usec || total_usec < prev_total_usec)
                return 0;

        *ret_rate = u64_min(u64_muldiv(total_usec - prev_total_usec, USEC_PER_SEC, now_usec - prev_now_usec),
                            BW_PSI_RATE_MAX);
        return 1;
}
