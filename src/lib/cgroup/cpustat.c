/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cgroup's CPU statistics: the parsers of cpu.stat and cpu.stat.local in
 * both hierarchies and of v1 cpuacct.usage, table-driven by key, and the
 * counter deltas between two samples (contracts in include/bwgov/cgroup/cpustat.h). */

#include <errno.h>
#include <string.h>

#include "bwgov/cgroup/cpumax.h"
#include "bwgov/cgroup/cpustat.h"
#include "bwgov/util/lines.h"
#include "bwgov/util/macro.h"

/* One key the parser knows: where its value goes (KEY_CHECKED_ONLY: checked
 * like the others, kept nowhere) and by what it is divided (1 for µs and
 * counts, NSEC_PER_USEC for v1's nanoseconds). */
struct cpustat_key {
        const char *name;
        size_t len;                     /* strlen(name) */
        unsigned bit;
        size_t offset;
        uint64_t divisor;
};

#define KEY(n, b, field, div) { n, sizeof(n) - 1, b, offsetof(struct bw_cpu_stat, field), div }
#define KEY_CHECKED_ONLY SIZE_MAX
#define KEY_CHECKED(n, b) { n, sizeof(n) - 1, b, KEY_CHECKED_ONLY, 1 }

static const struct cpustat_key keys_v2[] = {
        KEY("usage_usec",     BW_CPUSTAT_USAGE,        usage_usec,     1),
        /* Nothing reads them: ten thousand units kept two copies each. */
        KEY_CHECKED("user_usec",   BW_CPUSTAT_USER),
        KEY_CHECKED("system_usec", BW_CPUSTAT_SYSTEM),
        KEY("nr_periods",     BW_CPUSTAT_NR_PERIODS,   nr_periods,     1),
        KEY("nr_throttled",   BW_CPUSTAT_NR_THROTTLED, nr_throttled,   1),
        KEY("throttled_usec", BW_CPUSTAT_THROTTLED,    throttled_usec, 1),
        KEY("nr_bursts",      BW_CPUSTAT_NR_BURSTS,    nr_bursts,      1),
        KEY("burst_usec",     BW_CPUSTAT_BURST,        burst_usec,     1),
};

static const struct cpustat_key keys_v1[] = {
        KEY("nr_periods",     BW_CPUSTAT_NR_PERIODS,   nr_periods,     1),
        KEY("nr_throttled",   BW_CPUSTAT_NR_THROTTLED, nr_throttled,   1),
        KEY("throttled_time", BW_CPUSTAT_THROTTLED,    throttled_usec, NSEC_PER_USEC),
        KEY("nr_bursts",      BW_CPUSTAT_NR_BURSTS,    nr_bursts,      1),
        KEY("burst_time",     BW_CPUSTAT_BURST,        burst_usec,     NSEC_PER_USEC),
};

/* cpu.stat.local has one known key per version; it fills the same struct so
 * that parse_stat() and its duplicate check serve it too. */
static const struct cpustat_key keys_local_v2[] = {
        KEY("throttled_usec", BW_CPUSTAT_LOCAL_THROTTLED, local_throttled_usec, 1),
};

static const struct cpustat_key keys_local_v1[] = {
        KEY("throttled_time", BW_CPUSTAT_LOCAL_THROTTLED, local_throttled_usec, NSEC_PER_USEC),
};

#define THROTTLE_SET (BW_CPUSTAT_NR_PERIODS | BW_CPUSTAT_NR_THROTTLED | BW_CPUSTAT_THROTTLED)
#define BURST_SET    (BW_CPUSTAT_NR_BURSTS | BW_CPUSTAT_BURST)

/* Printable ASCII without the blank: what a key or a value may hold. Rejects
 * NUL, CR, tabs and every byte >= 0x80, so non-UTF-8 input is -EINVAL. */
static bool is_token(const char *s, size_t n) {
        if (n == 0)
                return false;

        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] <= 0x20 || (unsigned char) s[i] >= 0x7f)
                        return false;

        return true;
}

/* One file's keys, and the ones it must have. */
struct cpustat_table {
        const struct cpustat_key *keys;
        size_t n_keys;
        unsigned required;
};

static const struct cpustat_table table_v2 = { keys_v2, ELEMENTSOF(keys_v2), BW_CPUSTAT_USAGE };
static const struct cpustat_table table_v1 = { keys_v1, ELEMENTSOF(keys_v1), THROTTLE_SET };
static const struct cpustat_table table_local_v2 = {
        keys_local_v2, ELEMENTSOF(keys_local_v2), BW_CPUSTAT_LOCAL_THROTTLED,
};
static const struct cpustat_table table_local_v1 = {
        keys_local_v1, ELEMENTSOF(keys_local_v1), BW_CPUSTAT_LOCAL_THROTTLED,
};

struct parse_state {
        const struct cpustat_table *table;
        size_t next;                    /* the key after the last one found: the kernel's order */
        struct bw_cpu_stat st;
};

/* The table's index of the key LINE[0..KLEN), or n_keys. The key after
 * the last one found is tried first. */
static size_t find_key(struct parse_state *ps, const char *line, size_t klen) {
        const struct cpustat_key *keys = ps->table->keys;
        size_t n = ps->table->n_keys;

        for (size_t j = 0; j < n; j++) {
                size_t i = (ps->next + j) % n;

                if (keys[i].len == klen && memcmp(keys[i].name, line, klen) == 0) {
                        ps->next = i + 1;
                        return i;
                }
        }
        return n;
}

/* "KEY VALUE" with exactly one blank; unknown keys are checked for shape
 * only. The last line may lack its newline: "usage_usec 12" at the end of
 * the buffer is a complete number. */
static int parse_line(const char *line, size_t n, void *userdata) {
        struct parse_state *ps = userdata;
        const struct cpustat_key *keys = ps->table->keys;
        const char *sp, *value;
        size_t klen, vlen, i;
        uint64_t v;
        int r;

        sp = n > 0 ? memchr(line, ' ', n) : NULL;
        if (!sp)
                return -EINVAL;

        klen = (size_t) (sp - line);
        value = sp + 1;
        vlen = n - klen - 1;
        if (!is_token(line, klen))
                return -EINVAL;

        i = find_key(ps, line, klen);
        if (i < ps->table->n_keys) {
                /* A known key's value is digits only, which is a token
                 * (checked by the number's parser, not twice). */
                if (ps->st.seen & keys[i].bit || vlen == 0)
                        return -EINVAL;

                r = bw_u64_parse(value, vlen, &v);
                if (r < 0)
                        return -EINVAL; /* garbage, or more than UINT64_MAX */

                if (keys[i].offset != KEY_CHECKED_ONLY)
                        *(uint64_t *) ((char *) &ps->st + keys[i].offset) = v / keys[i].divisor;
                ps->st.seen |= keys[i].bit;
                return 0;
        }

        /* Unknown key: newer kernel, ignore; but only a well-formed line. */
        return is_token(value, vlen) ? 0 : -EINVAL;
}

/* Sets the kernel prints together must be complete or absent. */
static bool set_ok(unsigned seen, unsigned set) {
        return (seen & set) == 0 || (seen & set) == set;
}

/* Every line, then the table's required keys (-ENODATA when one is
 * missing), then the sets (-EINVAL when one is partial, or the burst set
 * comes without the throttling set, which the kernel prints first).
 * Malformed lines are reported before missing data. */
static int parse_stat(const char *buf, size_t len, const struct cpustat_table *table, struct bw_cpu_stat *ret) {
        struct parse_state ps = { .table = table };
        unsigned seen;
        int r;

        r = bw_lines_foreach(buf, len, parse_line, &ps);
        if (r < 0)
                return r;

        seen = ps.st.seen;
        if ((seen & table->required) != table->required)
                return -ENODATA;

        if (!set_ok(seen, THROTTLE_SET) || !set_ok(seen, BURST_SET))
                return -EINVAL;
        if ((seen & BURST_SET) && !(seen & THROTTLE_SET))
                return -EINVAL;

        *ret = ps.st;
        return 0;
}

int bw_cpustat_parse_v2(const char *buf, size_t len, struct bw_cpu_stat *ret) {
        return parse_stat(buf, len, &table_v2, ret);
}

int bw_cpustat_parse_v1(const char *buf, size_t len, struct bw_cpu_stat *ret) {
        return parse_stat(buf, len, &table_v1, ret);
}

static int parse_local(const char *buf, size_t len, const struct cpustat_table *table, uint64_t *ret_usec) {
        struct bw_cpu_stat st;
        int r;

        r = parse_stat(buf, len, table, &st);
        if (r < 0)
                return r;

        *ret_usec = st.local_throttled_usec;
        return 0;
}

int bw_cpustat_local_parse_v2(const char *buf, size_t len, uint64_t *ret_usec) {
        return parse_local(buf, len, &table_local_v2, ret_usec);
}

int bw_cpustat_local_parse_v1(const char *buf, size_t len, uint64_t *ret_usec) {
        return parse_local(buf, len, &table_local_v1, ret_usec);
}

int bw_cpuacct_usage_parse(const char *buf, size_t len, uint64_t *ret_usec) {
        uint64_t v;
        int r;

        r = bw_u64_parse(buf, len, &v);
        if (r < 0)
                return -EINVAL;

        *ret_usec = v / NSEC_PER_USEC;
        return 0;
}

int bw_cpustat_delta(const struct bw_cpu_stat *prev, const struct bw_cpu_stat *cur, unsigned fields,
                     struct bw_cpu_stat *ret) {
        /* Every counter once: the v2 keys and cpu.stat.local's. */
        static const struct cpustat_table *const tables[] = { &table_v2, &table_local_v2 };
        struct bw_cpu_stat d = { .seen = prev->seen & cur->seen & fields };

        for (size_t t = 0; t < ELEMENTSOF(tables); t++)
                for (size_t i = 0; i < tables[t]->n_keys; i++) {
                        const struct cpustat_key *k = &tables[t]->keys[i];
                        uint64_t a, b;

                        if (!(d.seen & k->bit) || k->offset == KEY_CHECKED_ONLY)
                                continue;       /* not there, or not kept: no value */
                        a = *(const uint64_t *) ((const char *) prev + k->offset);
                        b = *(const uint64_t *) ((const char *) cur + k->offset);
                        if (b < a)
                                return -ERANGE;
                        *(uint64_t *) ((char *) &d + k->offset) = b - a;
                }

        *ret = d;
        return 0;
}
