/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "bwgov/util/macro.h"
#include "bwgov/state/state.h"
#include "bwgov/state/state-journal.h"
#include "bwgov/state/state-levers.h"

static const struct bw_bandwidth base = { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 0, .has_burst = true };
static const struct bw_bandwidth boosted = { .quota_usec = 120000, .period_usec = 100000, .burst_usec = 40000, .has_burst = true };

/* A lever record of string literals (bw_state_unit_set_lever() copies). */
#define REC(o, w, x) (&(struct bw_ledger_lever) { .original = (char *) (o), .written = (char *) (w), \
                                                  .weight = (char *) (x) })

static void test_roundtrip(void **unused) {
        struct bw_state s = {0}, t = {0};
        struct bw_state_unit *u;
        char *text = NULL;

        u = bw_state_add(&s, "web.slice", "web.slice");
        assert_non_null(u);
        u->baseline = base;
        u->has_written = true;
        u->written = boosted;
        u->credit_usec = 12345678;
        u = bw_state_add(&s, "box", "machine.slice/box");
        assert_non_null(u);
        u->baseline = (struct bw_bandwidth) { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 0, .has_burst = false };
        u->paused = true;
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_WEIGHT, REC("1024", "4096", NULL)), 0);
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_CPUS, REC("0-3", NULL, NULL)), 0);
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_IDLE, REC("0", "1", "500")), 0);
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_FREEZE, REC("0", "1", NULL)), 0);
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_FREEZE, NULL), 0);  /* cleared again */
        u->slice_usec = 125;
        u->cgroup_dev = 30;
        u->cgroup_ino = 4711;

        assert_int_equal(bw_state_format(&s, &text), 0);
        assert_int_equal(bw_state_parse(text, strlen(text), &t), 0);
        assert_int_equal(t.n_units, 2);

        u = bw_state_find(&t, "web.slice");
        assert_non_null(u);
        assert_string_equal(u->cgroup, "web.slice");
        assert_true(bw_bandwidth_equal(&u->baseline, &base));
        assert_true(u->has_written);
        assert_int_equal(u->written.quota_usec, 120000);
        assert_int_equal(u->written.burst_usec, 40000);
        assert_false(u->has_pending);
        assert_int_equal(u->credit_usec, 12345678);
        assert_false(u->paused);
        assert_false(bw_state_unit_has_levers(u));
        assert_null(strstr(text, "\"slice_usec\": 0"));   /* written only when set */

        u = bw_state_find(&t, "box");
        assert_non_null(u);
        assert_string_equal(u->cgroup, "machine.slice/box");
        assert_true(u->baseline.quota_usec == BW_QUOTA_MAX);
        assert_true(u->paused);
        assert_true(bw_state_unit_has_levers(u));
        assert_string_equal(bw_state_unit_lever(u, BW_LEVER_WEIGHT)->original, "1024");
        assert_string_equal(bw_state_unit_lever(u, BW_LEVER_WEIGHT)->written, "4096");
        assert_null(bw_state_unit_lever(u, BW_LEVER_WEIGHT)->weight);
        assert_string_equal(bw_state_unit_lever(u, BW_LEVER_CPUS)->original, "0-3");
        assert_null(bw_state_unit_lever(u, BW_LEVER_CPUS)->written);
        assert_string_equal(bw_state_unit_lever(u, BW_LEVER_IDLE)->original, "0");
        assert_string_equal(bw_state_unit_lever(u, BW_LEVER_IDLE)->written, "1");
        assert_string_equal(bw_state_unit_lever(u, BW_LEVER_IDLE)->weight, "500");
        assert_null(bw_state_unit_lever(u, BW_LEVER_FREEZE));
        assert_int_equal(u->slice_usec, 125);
        assert_int_equal(u->cgroup_dev, 30);
        assert_int_equal(u->cgroup_ino, 4711);
        assert_int_equal(bw_state_find(&t, "web.slice")->cgroup_ino, 0);       /* unknown: not written */
        assert_null(bw_state_find(&t, "web.slice")->levers);          /* no records: no array */

        /* The records go one by one; the array with the last of them. */
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_WEIGHT, NULL), 0);
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_CPUS, NULL), 0);
        assert_non_null(u->levers);
        assert_non_null(bw_state_unit_lever(u, BW_LEVER_IDLE));
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_IDLE, NULL), 0);
        assert_null(u->levers);
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_IDLE, NULL), 0);
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_IDLE, REC("0", "1", "500")), 0);
        assert_string_equal(bw_state_unit_lever(u, BW_LEVER_IDLE)->weight, "500");

        bw_state_remove(&t, "web.slice");
        assert_int_equal(t.n_units, 1);
        assert_null(bw_state_find(&t, "web.slice"));
        assert_non_null(bw_state_find(&t, "box"));

        free(text);
        bw_state_done(&s);
        bw_state_done(&t);
}

/* The table stays sorted whatever the order of adds and removes, and every
 * entry is found by its name (the lookup is a binary search). */
static void test_table_sorted(void **unused) {
        static const char *const names[] = {
                "m.slice", "a.service", "z.scope", "b.slice", "k.service", "a.slice", "y.slice", "c.scope",
        };
        struct bw_state s = {0};

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                struct bw_state_unit *u = bw_state_add(&s, names[i], NULL);

                assert_non_null(u);
                assert_string_equal(u->name, names[i]);
                assert_string_equal(u->cgroup, names[i]);
                u->credit_usec = i + 1;
                /* Adding again returns the same entry, untouched. */
                assert_ptr_equal(bw_state_add(&s, names[i], "other"), u);
        }
        assert_int_equal(s.n_units, ELEMENTSOF(names));
        for (size_t i = 1; i < s.n_units; i++)
                assert_true(strcmp(s.units[i - 1].name, s.units[i].name) < 0);
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                assert_int_equal(bw_state_find(&s, names[i])->credit_usec, i + 1);
        assert_null(bw_state_find(&s, "b.service"));
        assert_null(bw_state_find(&s, ""));

        bw_state_remove(&s, "a.service");       /* the first */
        bw_state_remove(&s, "z.scope");         /* the last */
        bw_state_remove(&s, "k.service");       /* one inside */
        bw_state_remove(&s, "nothing.slice");   /* absent: no-op */
        assert_int_equal(s.n_units, ELEMENTSOF(names) - 3);
        for (size_t i = 1; i < s.n_units; i++)
                assert_true(strcmp(s.units[i - 1].name, s.units[i].name) < 0);
        assert_null(bw_state_find(&s, "k.service"));
        assert_int_equal(bw_state_find(&s, "y.slice")->credit_usec, 7);
        assert_int_equal(bw_state_find(&s, "a.slice")->credit_usec, 6);
        bw_state_done(&s);
}

static void test_parse_rejects(void **unused) {
        static const char *const bad[] = {
                "",
                "{",
                "[]",
                "{\"schema_version\": 2, \"units\": {}}",
                "{\"schema_version\": 1}",
                "{\"schema_version\": 1, \"units\": []}",
                "{\"schema_version\": 1, \"units\": {\"a\": {\"cgroup\": 3}}}",
                /* baseline missing */
                "{\"schema_version\": 1, \"units\": {\"a\": {\"cgroup\": \"a\", \"credit_usec\": 0}}}",
                /* burst above quota: not a state the kernel can hold */
                "{\"schema_version\": 1, \"units\": {\"a\": {\"cgroup\": \"a\", \"credit_usec\": 0,"
                " \"baseline\": {\"quota_usec\": 10000, \"period_usec\": 100000, \"burst_usec\": 20000, \"has_burst\": true}}}}",
                /* an unknown lever, a lever that is not a string, a negative slice */
                "{\"schema_version\": 1, \"units\": {\"a\": {\"cgroup\": \"a\", \"credit_usec\": 0, \"levers\": {\"nice\": \"1\"},"
                " \"baseline\": {\"quota_usec\": 10000, \"period_usec\": 100000, \"burst_usec\": 0, \"has_burst\": true}}}}",
                "{\"schema_version\": 1, \"units\": {\"a\": {\"cgroup\": \"a\", \"credit_usec\": 0, \"levers\": {\"idle\": 1},"
                " \"baseline\": {\"quota_usec\": 10000, \"period_usec\": 100000, \"burst_usec\": 0, \"has_burst\": true}}}}",
                "{\"schema_version\": 1, \"units\": {\"a\": {\"cgroup\": \"a\", \"credit_usec\": 0, \"slice_usec\": -5,"
                " \"baseline\": {\"quota_usec\": 10000, \"period_usec\": 100000, \"burst_usec\": 0, \"has_burst\": true}}}}",
                /* negative credit */
                "{\"schema_version\": 1, \"units\": {\"a\": {\"cgroup\": \"a\", \"credit_usec\": -1,"
                " \"baseline\": {\"quota_usec\": 10000, \"period_usec\": 100000, \"burst_usec\": 0, \"has_burst\": true}}}}",
                /* duplicate keys */
                "{\"schema_version\": 1, \"schema_version\": 1, \"units\": {}}",
                "{\"schema_version\": 1, \"units\": {\"\xff\": {}}}",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct bw_state s = { .units = (void *) 0x1 };
                assert_int_equal(bw_state_parse(bad[i], strlen(bad[i]), &s), -EINVAL);
                /* untouched on failure */
                assert_ptr_equal(s.units, (void *) 0x1);
        }
}

static void test_classify(void **unused) {
        struct bw_state_unit u = { .baseline = base };
        struct bw_bandwidth external = { .quota_usec = 70000, .period_usec = 100000, .burst_usec = 0, .has_burst = true };

        assert_int_equal(bw_state_classify(&u, &base), BW_OWNERSHIP_BASELINE);
        assert_int_equal(bw_state_classify(&u, &boosted), BW_OWNERSHIP_EXTERNAL);

        /* A crash after the write-ahead record but before "written" was
         * saved: the boosted value is still recognised as ours. */
        u.has_pending = true;
        u.pending = boosted;
        assert_int_equal(bw_state_classify(&u, &boosted), BW_OWNERSHIP_OURS);

        u.has_pending = false;
        u.has_written = true;
        u.written = boosted;
        assert_int_equal(bw_state_classify(&u, &boosted), BW_OWNERSHIP_OURS);
        assert_int_equal(bw_state_classify(&u, &external), BW_OWNERSHIP_EXTERNAL);

        /* A crash between the burst and the quota write: new burst, old
         * quota. Each part is a value we left there: ours. */
        {
                struct bw_state_unit v = { .baseline = base, .has_written = true, .written = base,
                                           .has_pending = true, .pending = boosted };
                struct bw_bandwidth mix = base;

                mix.burst_usec = boosted.burst_usec;
                assert_int_equal(bw_state_classify(&v, &mix), BW_OWNERSHIP_OURS);
                mix = boosted;
                mix.burst_usec = base.burst_usec;
                assert_int_equal(bw_state_classify(&v, &mix), BW_OWNERSHIP_OURS);
                /* Somebody else's quota with our burst is not ours. */
                mix.quota_usec = 70000;
                assert_int_equal(bw_state_classify(&v, &mix), BW_OWNERSHIP_EXTERNAL);
        }

        /* Issue 17, finding 5: an edited or stale entry whose "written"
         * matches the kernel but could not be bwgov's (below the baseline,
         * another period) keeps no baseline above the kernel's value. */
        {
                struct bw_bandwidth low = { .quota_usec = 50000, .period_usec = 100000, .burst_usec = 50000, .has_burst = true }, other = { .quota_usec = 400000, .period_usec = 200000, .burst_usec = 0, .has_burst = true };
                struct bw_state_unit edited = { .baseline = { .quota_usec = 200000, .period_usec = 100000, .burst_usec = 0, .has_burst = true }, .has_written = true,
                                                .written = low };

                assert_int_equal(bw_state_classify(&edited, &low), BW_OWNERSHIP_EXTERNAL);
                edited.has_written = false;
                edited.has_pending = true;
                edited.pending = low;
                assert_int_equal(bw_state_classify(&edited, &low), BW_OWNERSHIP_EXTERNAL);
                edited.pending = other;
                assert_int_equal(bw_state_classify(&edited, &other), BW_OWNERSHIP_EXTERNAL);
                /* Unlimited baseline: nothing of ours is limited. */
                edited.baseline = (struct bw_bandwidth) { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 0, .has_burst = true };
                edited.pending = low;
                assert_int_equal(bw_state_classify(&edited, &low), BW_OWNERSHIP_EXTERNAL);
        }

        /* A kernel without burst reports has_burst=false: burst is not compared. */
        external = boosted;
        external.has_burst = false;
        external.burst_usec = 0;
        assert_int_equal(bw_state_classify(&u, &external), BW_OWNERSHIP_OURS);
}

static void test_save_load_atomic(void **unused) {
        char dir[] = "/tmp/bwgov-test-state-XXXXXX";
        struct bw_state s = {0}, t = {0};
        struct bw_state_unit *u;
        int dfd;

        assert_non_null(mkdtemp(dir));
        dfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        assert_true(dfd >= 0);

        assert_int_equal(bw_state_load(dfd, "state.json", &t), -ENOENT);

        u = bw_state_add(&s, "a.slice", "a.slice");
        u->baseline = base;
        u->credit_usec = 1;
        assert_int_equal(bw_state_save(dfd, "state.json", &s), 0);
        u->credit_usec = 2;
        assert_int_equal(bw_state_save(dfd, "state.json", &s), 0);

        assert_int_equal(bw_state_load(dfd, "state.json", &t), 0);
        assert_int_equal(t.n_units, 1);
        assert_int_equal(t.units[0].credit_usec, 2);

        /* No temporary file is left behind. */
        {
                char path[256];
                struct stat st;
                snprintf(path, sizeof path, "%s/.state.json.tmp.%d", dir, (int) getpid());
                assert_int_equal(stat(path, &st), -1);
        }

        /* A corrupt file is reported, not half-loaded. */
        {
                int fd = openat(dfd, "bad.json", O_WRONLY | O_CREAT | O_TRUNC, 0644);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, "{\"schema_version\": 1, \"un", 25), 25);
                close(fd);
                bw_state_done(&t);
                assert_int_equal(bw_state_load(dfd, "bad.json", &t), -EINVAL);
                assert_int_equal(t.n_units, 0);
        }

        /* A directory in its place is not a state file. */
        assert_int_equal(mkdirat(dfd, "dir.json", 0755), 0);
        assert_int_equal(bw_state_load(dfd, "dir.json", &t), -EISDIR);
        /* Nor is a symlink followed. */
        assert_int_equal(symlinkat("state.json", dfd, "link.json"), 0);
        assert_true(bw_state_load(dfd, "link.json", &t) < 0);

        unlinkat(dfd, "dir.json", AT_REMOVEDIR);
        unlinkat(dfd, "link.json", 0);
        unlinkat(dfd, "state.json", 0);
        unlinkat(dfd, "bad.json", 0);
        close(dfd);
        rmdir(dir);
        bw_state_done(&s);
        bw_state_done(&t);
}

static void on_alarm(int sig) {
        static const char msg[] = "state file I/O blocked for 5 s\n";

        (void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(1);
}

/* Issue 17, finding 2: a FIFO (or another file that is not a regular one)
 * at the state file's name, or at its temporary file's, must never block
 * (open() of a FIFO without a writer waits for one, with the daemon's
 * signals blocked): a load says what is there, a save replaces it. */
static void test_not_a_regular_file(void **unused) {
        char dir[] = "/tmp/bwgov-test-state-XXXXXX", tmp[64];
        struct bw_state s = {0}, t = {0};
        struct bw_state_unit *u;
        struct sigaction sa = { .sa_handler = on_alarm };
        int dfd;

        assert_non_null(mkdtemp(dir));
        dfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        assert_true(dfd >= 0);
        assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
        alarm(5);

        assert_int_equal(mkfifoat(dfd, "state.json", 0600), 0);
        assert_int_equal(bw_state_load(dfd, "state.json", &t), -EBADFD);
        assert_int_equal(t.n_units, 0);

        /* A FIFO (with no reader) and a stale file at the temporary
         * name: the save creates its own file and the FIFO is gone. */
        snprintf(tmp, sizeof tmp, ".state.json.tmp.%d", (int) getpid());
        assert_int_equal(mkfifoat(dfd, tmp, 0600), 0);
        u = bw_state_add(&s, "a.slice", "a.slice");
        assert_non_null(u);
        u->baseline = base;
        assert_int_equal(bw_state_save(dfd, "state.json", &s), 0);
        assert_int_equal(bw_state_load(dfd, "state.json", &t), 0);
        assert_int_equal(t.n_units, 1);
        assert_int_equal(faccessat(dfd, tmp, F_OK, 0), -1);

        /* A directory at the temporary name fails the save, leaving the
         * state file as it was. */
        assert_int_equal(mkdirat(dfd, tmp, 0700), 0);
        assert_int_equal(bw_state_save(dfd, "state.json", &s), -EISDIR);
        bw_state_done(&t);
        assert_int_equal(bw_state_load(dfd, "state.json", &t), 0);
        assert_int_equal(t.n_units, 1);

        alarm(0);
        unlinkat(dfd, tmp, AT_REMOVEDIR);
        unlinkat(dfd, "state.json", 0);
        close(dfd);
        rmdir(dir);
        bw_state_done(&s);
        bw_state_done(&t);
}

/* A save formats again only the entries whose fields changed; the text
 * stays the document parse() reads back. */
static void test_format_incremental(void **unused) {
        struct bw_state s = {0}, t = {0};
        struct bw_state_unit *u;
        char name[32], *text = NULL;

        for (unsigned i = 0; i < 100; i++) {
                snprintf(name, sizeof(name), "u%03u.service", i);
                u = bw_state_add(&s, name, NULL);
                assert_non_null(u);
                u->baseline = base;
                u->credit_usec = i;
        }
        u = bw_state_add(&s, "we\"ird\\name\n.scope", NULL);       /* escapes */
        assert_non_null(u);
        u->baseline = base;
        assert_int_equal(bw_state_format(&s, &text), 0);
        assert_int_equal(s.changed, 101);
        text = mfree(text);

        /* Nothing changed: nothing counted, the same text. */
        assert_int_equal(bw_state_format(&s, &text), 0);
        assert_int_equal(s.changed, 0);
        text = mfree(text);

        /* An intent save (credit_may_lag): an entry whose credit and debt
         * alone moved does not count as changed, and a journal line leaves
         * it out; one with another change counts. The whole document has
         * every credit as it is. Without the lag, the next save counts the
         * credits too. */
        s.credit_may_lag = true;
        bw_state_find(&s, "u003.service")->credit_usec = 333;
        bw_state_find(&s, "u004.service")->debt_usec = 444;
        u = bw_state_find(&s, "u005.service");
        u->credit_usec = 555;
        u->paused = true;
        bw_state_saved(&s);
        assert_int_equal(bw_state_journal_format(&s, &text), 0);
        assert_int_equal(s.changed, 1);
        assert_non_null(text);
        assert_null(strstr(text, "u003.service"));
        assert_null(strstr(text, "u004.service"));
        assert_non_null(strstr(text, "\"u005.service\""));
        text = mfree(text);
        assert_int_equal(bw_state_format(&s, &text), 0);
        assert_int_equal(s.changed, 0);
        assert_int_equal(bw_state_parse(text, strlen(text), &t), 0);
        assert_int_equal(bw_state_find(&t, "u003.service")->credit_usec, 333);
        assert_int_equal(bw_state_find(&t, "u004.service")->debt_usec, 444);
        assert_int_equal(bw_state_find(&t, "u005.service")->credit_usec, 555);
        assert_true(bw_state_find(&t, "u005.service")->paused);
        bw_state_done(&t);
        text = mfree(text);
        s.credit_may_lag = false;
        bw_state_saved(&s);
        assert_int_equal(bw_state_journal_format(&s, &text), 0);
        assert_int_equal(s.changed, 2);
        assert_non_null(strstr(text, "\"u003.service\""));
        assert_non_null(strstr(text, "\"u004.service\""));
        assert_null(strstr(text, "u005.service"));
        text = mfree(text);
        bw_state_saved(&s);

        /* Two changed, one added, one removed, one lever set. */
        bw_state_find(&s, "u007.service")->credit_usec = 777;
        u = bw_state_find(&s, "u008.service");
        u->has_pending = true;
        u->pending = boosted;
        u = bw_state_add(&s, "new.service", NULL);
        assert_non_null(u);
        u->baseline = base;
        bw_state_remove(&s, "u009.service");
        assert_int_equal(bw_state_unit_set_lever(bw_state_find(&s, "u010.service"), BW_LEVER_WEIGHT,
                                                 REC("100", "400", NULL)), 0);
        assert_int_equal(bw_state_format(&s, &text), 0);
        assert_int_equal(s.changed, 4);

        assert_int_equal(bw_state_parse(text, strlen(text), &t), 0);
        assert_int_equal(t.n_units, 101);
        assert_int_equal(bw_state_find(&t, "u007.service")->credit_usec, 777);
        assert_int_equal(bw_state_find(&t, "u006.service")->credit_usec, 6);
        assert_true(bw_state_find(&t, "u008.service")->has_pending);
        assert_int_equal(bw_state_find(&t, "u008.service")->pending.quota_usec, 120000);
        assert_null(bw_state_find(&t, "u009.service"));
        assert_non_null(bw_state_find(&t, "new.service"));
        assert_non_null(bw_state_find(&t, "we\"ird\\name\n.scope"));
        assert_string_equal(bw_state_unit_lever(bw_state_find(&t, "u010.service"), BW_LEVER_WEIGHT)->original, "100");
        free(text);
        bw_state_done(&t);

        /* Empty: still a document. */
        bw_state_done(&s);
        assert_int_equal(bw_state_format(&s, &text), 0);
        assert_int_equal(bw_state_parse(text, strlen(text), &t), 0);
        assert_int_equal(t.n_units, 0);
        free(text);
        bw_state_done(&t);
}

/* The same bandwidth every time, with `fill` in its padding bytes. */
static void padded_bandwidth(struct bw_bandwidth *ret, int fill) {
        struct bw_bandwidth w;

        memset(&w, fill, sizeof(w));
        w.quota_usec = 150000;
        w.burst_usec = 50000;
        w.period_usec = 100000;
        w.has_burst = true;
        memcpy(ret, &w, sizeof(w));
}

/* bw_state_unsaved(): whether a periodic save has anything to write. */
static void test_unsaved(void **unused) {
        struct bw_state s = {0};
        struct bw_state_unit *u;
        char *text = NULL;

        assert_false(bw_state_unsaved(&s));
        u = bw_state_add(&s, "a.service", NULL);
        assert_non_null(u);
        u->baseline = base;
        assert_non_null(bw_state_add(&s, "b.service", NULL));
        assert_true(bw_state_unsaved(&s));              /* never saved */
        assert_int_equal(bw_state_format(&s, &text), 0);
        text = mfree(text);
        assert_true(bw_state_unsaved(&s));              /* made, not saved */
        bw_state_saved(&s);
        assert_false(bw_state_unsaved(&s));

        bw_state_find(&s, "a.service")->credit_usec = 5;        /* the credit alone */
        assert_true(bw_state_unsaved(&s));
        assert_int_equal(bw_state_format(&s, &text), 0);
        text = mfree(text);
        bw_state_saved(&s);
        assert_false(bw_state_unsaved(&s));

        assert_int_equal(bw_state_unit_set_lever(bw_state_find(&s, "b.service"), BW_LEVER_WEIGHT,
                                                 REC("100", "400", NULL)), 0);
        assert_true(bw_state_unsaved(&s));
        assert_int_equal(bw_state_format(&s, &text), 0);
        text = mfree(text);
        bw_state_saved(&s);
        assert_false(bw_state_unsaved(&s));

        /* What was written, then the same values with other bytes in the
         * padding (a bandwidth made on the stack): not a change. */
        u = bw_state_find(&s, "a.service");
        u->has_written = true;
        padded_bandwidth(&u->written, 0xa5);
        assert_true(bw_state_unsaved(&s));
        assert_int_equal(bw_state_format(&s, &text), 0);
        text = mfree(text);
        bw_state_saved(&s);
        assert_false(bw_state_unsaved(&s));
        padded_bandwidth(&u->written, 0x5a);
        assert_false(bw_state_unsaved(&s));

        bw_state_remove(&s, "a.service");
        assert_true(bw_state_unsaved(&s));              /* the removal */
        bw_state_saved(&s);
        assert_false(bw_state_unsaved(&s));
        bw_state_done(&s);
}

/* Entries are put together by hand, not built and dumped by jansson (ten
 * times faster): each must be the text json_dumps(JSON_COMPACT |
 * JSON_SORT_KEYS) gives for the same object, escapes and levers included. */
static json_t *bandwidth_json(const struct bw_bandwidth *b) {
        return json_pack("{s:o, s:I, s:I, s:b}", "quota_usec",
                         b->quota_usec == BW_QUOTA_MAX ? json_null() : json_integer((json_int_t) b->quota_usec),
                         "period_usec", (json_int_t) b->period_usec, "burst_usec", (json_int_t) b->burst_usec,
                         "has_burst", b->has_burst);
}

static char *jansson_entry(const struct bw_state_unit *u) {
        json_t *o, *levers = json_object(), *name = json_string(u->name);
        char *body, *n, *text;

        o = json_pack("{s:s, s:o, s:o, s:o, s:I, s:I, s:b}", "cgroup", u->cgroup, "baseline",
                      bandwidth_json(&u->baseline), "written",
                      u->has_written ? bandwidth_json(&u->written) : json_null(), "pending",
                      u->has_pending ? bandwidth_json(&u->pending) : json_null(), "credit_usec",
                      (json_int_t) u->credit_usec, "debt_usec", (json_int_t) u->debt_usec, "paused", u->paused);
        for (size_t l = 0; l < _BW_LEVER_MAX; l++) {
                const struct bw_ledger_lever *r = bw_state_unit_lever(u, (enum bw_lever) l);
                json_t *x;

                if (!bw_ledger_has(r))
                        continue;
                x = json_pack("{s:s}", "original", r->original);
                if (r->written)
                        json_object_set_new(x, "written", json_string(r->written));
                if (r->weight)
                        json_object_set_new(x, "weight", json_string(r->weight));
                json_object_set_new(levers, bw_lever_to_string((enum bw_lever) l), x);
        }
        if (u->cgroup_ino > 0) {
                json_object_set_new(o, "cgroup_dev", json_integer((json_int_t) u->cgroup_dev));
                json_object_set_new(o, "cgroup_ino", json_integer((json_int_t) u->cgroup_ino));
        }
        if (json_object_size(levers) > 0)
                json_object_set(o, "levers", levers);
        if (u->slice_usec > 0)
                json_object_set_new(o, "slice_usec", json_integer((json_int_t) u->slice_usec));
        body = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        n = json_dumps(name, JSON_ENCODE_ANY);
        assert_true(asprintf(&text, "%s: %s", n, body) > 0);
        free(body);
        free(n);
        json_decref(o);
        json_decref(levers);
        json_decref(name);
        return text;
}

static void test_format_is_jansson(void **unused) {
        struct bw_state s = {0};
        struct bw_state_unit *u;
        char *text = NULL, *line, *save = NULL;
        size_t checked = 0;

        u = bw_state_add(&s, "plain.service", NULL);
        u->baseline = base;
        u->credit_usec = 30000000;
        u = bw_state_add(&s, "boosted.slice", "a/b/boosted.slice");
        u->baseline = (struct bw_bandwidth) { .quota_usec = BW_QUOTA_MAX, .period_usec = 100000, .burst_usec = 0, .has_burst = false };
        u->has_written = u->has_pending = true;
        u->written = boosted;
        u->pending = (struct bw_bandwidth) { .quota_usec = BW_QUOTA_MAX, .period_usec = 250000, .burst_usec = 7, .has_burst = true };
        u->debt_usec = UINT64_MAX / 2;
        u->paused = true;
        u = bw_state_add(&s, "we\"ird\\na\tme\n\x01\x7f.scope", "c\"g/\u00fcn\u00efcode \u2603");
        u->baseline = base;
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_CPUS, REC("0-3,\"7\"", "1", NULL)), 0);
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_WEIGHT, REC("100", "400", NULL)), 0);
        assert_int_equal(bw_state_unit_set_lever(u, BW_LEVER_IDLE, REC("0", "1", "1024")), 0);
        u->slice_usec = 125;
        u->cgroup_dev = 1;
        u->cgroup_ino = UINT64_MAX / 4;
        u = bw_state_add(&s, "slice-only.service", NULL);
        u->baseline = base;
        u->slice_usec = 3000;

        assert_int_equal(bw_state_format(&s, &text), 0);
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                size_t len;
                char *want;

                if (strspn(line, " ") != 4)
                        continue;               /* not an entry: those are indented by four */
                line += 4;
                len = strlen(line);
                if (line[len - 1] == ',')
                        line[len - 1] = '\0';
                want = NULL;
                for (size_t i = 0; i < s.n_units && !want; i++) {
                        char *j = jansson_entry(&s.units[i]);

                        if (strncmp(j, line, strcspn(line, ":")) == 0 && j[strcspn(line, ":")] == ':')
                                want = j;
                        else
                                free(j);
                }
                assert_non_null(want);
                assert_string_equal(line, want);
                free(want);
                checked++;
        }
        assert_int_equal(checked, 4);
        free(text);
        bw_state_done(&s);
}

/* The journal: a save of a few entries appends a line; a load applies the
 * lines of its file's generation over the file, whole lines only. */
static void append_raw(int dfd, const char *text) {
        int fd = openat(dfd, "state.journal", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

static void load_all(int dfd, struct bw_state *t, int applied) {
        bw_state_done(t);
        assert_int_equal(bw_state_load(dfd, "state.json", t), 0);
        assert_int_equal(bw_state_journal_replay(dfd, "state.journal", t), applied);
}

static void test_journal(void **unused) {
        char dir[] = "/tmp/bwgov-test-state-XXXXXX";
        struct bw_state s = {0}, t = {0};
        struct bw_state_unit *u;
        struct stat st;
        char *text = NULL;
        int dfd;

        assert_non_null(mkdtemp(dir));
        dfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        assert_true(dfd >= 0);
        assert_int_equal(bw_state_journal_replay(dfd, "state.journal", &s), 0);        /* none yet */
        for (const char *n = "abc"; *n; n++) {
                char name[16];

                snprintf(name, sizeof(name), "%c.service", *n);
                u = bw_state_add(&s, name, NULL);
                u->baseline = base;
                u->credit_usec = 10;
        }
        assert_int_equal(bw_state_save(dfd, "state.json", &s), 0);
        assert_int_equal(s.generation, 1);
        bw_state_saved(&s);

        /* Nothing changed: nothing to append. */
        s.credit_may_lag = true;
        assert_int_equal(bw_state_journal_format(&s, &text), 0);
        assert_null(text);
        assert_int_equal(bw_state_journal_append(dfd, "state.journal", &s), 0);

        /* An intent, a removal, a new entry, a credit that may lag. */
        u = bw_state_find(&s, "b.service");
        u->has_pending = true;
        u->pending = boosted;
        bw_state_remove(&s, "c.service");
        u = bw_state_add(&s, "d.service", NULL);
        u->baseline = base;
        bw_state_find(&s, "a.service")->credit_usec = 99;
        assert_true(bw_state_journal_append(dfd, "state.journal", &s) > 0);
        bw_state_saved(&s);
        assert_int_equal(bw_state_journal_append(dfd, "state.journal", &s), 0);      /* all saved now */

        load_all(dfd, &t, 1);
        assert_int_equal(t.n_units, 3);
        assert_true(bw_state_find(&t, "b.service")->has_pending);
        assert_int_equal(bw_state_find(&t, "b.service")->pending.quota_usec, 120000);
        assert_null(bw_state_find(&t, "c.service"));
        assert_non_null(bw_state_find(&t, "d.service"));
        assert_int_equal(bw_state_find(&t, "a.service")->credit_usec, 10);         /* lagged */

        /* A line cut short by a crash, and one of an older file: skipped. */
        append_raw(dfd, "{\"generation\":0,\"forget\":[\"a.service\"],\"units\":{}}\n");
        append_raw(dfd, "{\"generation\":1,\"forget\":[\"a.ser");
        load_all(dfd, &t, 1);
        assert_non_null(bw_state_find(&t, "a.service"));

        /* An entry that does not parse: its whole line changes nothing, and
         * says so. */
        assert_int_equal(bw_state_journal_apply(&t, "{\"generation\":1,\"forget\":[\"a.service\"],"
                                                "\"units\":{\"x\":{\"cgroup\":5}}}\n", 77), -EINVAL);
        assert_non_null(bw_state_find(&t, "a.service"));
        assert_null(bw_state_find(&t, "x"));
        assert_int_equal(bw_state_journal_apply(&t, "garbage\n", 8), -EINVAL);

        /* A full save: the next generation, the old lines skipped. */
        s.credit_may_lag = false;
        assert_int_equal(bw_state_save(dfd, "state.json", &s), 0);
        assert_int_equal(s.generation, 2);
        load_all(dfd, &t, 0);
        assert_int_equal(t.generation, 2);
        assert_int_equal(bw_state_find(&t, "a.service")->credit_usec, 99);

        /* Not a regular file: refused both ways. */
        assert_int_equal(unlinkat(dfd, "state.journal", 0), 0);
        assert_int_equal(mkdirat(dfd, "state.journal", 0755), 0);
        bw_state_find(&s, "d.service")->paused = true;
        assert_int_equal(bw_state_journal_append(dfd, "state.journal", &s), -EISDIR);
        assert_int_equal(bw_state_journal_replay(dfd, "state.journal", &t), -EISDIR);
        assert_int_equal(unlinkat(dfd, "state.journal", AT_REMOVEDIR), 0);

        /* A failed append leaves the entry unsaved: the next one takes it. */
        assert_true(bw_state_journal_append(dfd, "state.journal", &s) > 0);
        assert_int_equal(fstatat(dfd, "state.journal", &st, 0), 0);
        load_all(dfd, &t, 1);
        assert_true(bw_state_find(&t, "d.service")->paused);

        unlinkat(dfd, "state.journal", 0);
        unlinkat(dfd, "state.json", 0);
        close(dfd);
        rmdir(dir);
        bw_state_done(&s);
        bw_state_done(&t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_roundtrip),
                cmocka_unit_test(test_table_sorted),
                cmocka_unit_test(test_parse_rejects),
                cmocka_unit_test(test_classify),
                cmocka_unit_test(test_save_load_atomic),
                cmocka_unit_test(test_not_a_regular_file),
                cmocka_unit_test(test_format_incremental),
                cmocka_unit_test(test_unsaved),
                cmocka_unit_test(test_format_is_jansson),
                cmocka_unit_test(test_journal),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
