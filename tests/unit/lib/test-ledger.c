/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lever ledger's rules (ledger.h): which records bwgovd could have
 * made, what undoing one means for each value the file may hold, the
 * back-off between attempts, a record's values; and the sameness of two
 * values each lever relies on (lever.h). */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bwgov/state/ledger.h"
#include "bwgov/cgroup/lever.h"

#define REC(o, w, x) (&(struct bw_ledger_lever) { .original = (char *) (o), .written = (char *) (w), \
                                                  .weight = (char *) (x) })

static void test_plausible(void **unused) {
        /* freeze and idle: bwgovd only ever sets 1 over 0. */
        assert_true(bw_ledger_plausible(BW_LEVER_FREEZE, REC("0", "1", NULL)));
        assert_true(bw_ledger_plausible(BW_LEVER_FREEZE, REC("THAWED", "FROZEN", NULL)));
        assert_true(bw_ledger_plausible(BW_LEVER_FREEZE, REC("0", NULL, NULL)));       /* an older bwgovd's */
        assert_false(bw_ledger_plausible(BW_LEVER_FREEZE, REC("1", NULL, NULL)));      /* issue 30, finding 4 */
        assert_false(bw_ledger_plausible(BW_LEVER_FREEZE, REC("1", "0", NULL)));
        assert_false(bw_ledger_plausible(BW_LEVER_FREEZE, REC("0", "1", "100")));
        assert_true(bw_ledger_plausible(BW_LEVER_IDLE, REC("0", "1", "1024")));
        assert_true(bw_ledger_plausible(BW_LEVER_IDLE, REC("0", "1", NULL)));
        assert_false(bw_ledger_plausible(BW_LEVER_IDLE, REC("1", NULL, NULL)));
        assert_false(bw_ledger_plausible(BW_LEVER_IDLE, REC("0", "1", "lots")));
        assert_false(bw_ledger_plausible(BW_LEVER_IDLE, REC("0", "1", "0")));
        /* weights: numbers in the files' range. */
        assert_true(bw_ledger_plausible(BW_LEVER_WEIGHT, REC("100", "400", NULL)));
        assert_true(bw_ledger_plausible(BW_LEVER_WEIGHT, REC("1024", "262144", NULL)));
        assert_false(bw_ledger_plausible(BW_LEVER_WEIGHT, REC("1024", "262145", NULL)));
        assert_false(bw_ledger_plausible(BW_LEVER_WEIGHT, REC("0", "400", NULL)));
        assert_false(bw_ledger_plausible(BW_LEVER_WEIGHT, REC("100", "4x", NULL)));
        assert_false(bw_ledger_plausible(BW_LEVER_WEIGHT, REC("100", "400", "100")));
        /* cpus: CPU lists naming some CPU. */
        assert_true(bw_ledger_plausible(BW_LEVER_CPUS, REC("0-3", "1", NULL)));
        assert_false(bw_ledger_plausible(BW_LEVER_CPUS, REC("0-3", "", NULL)));
        assert_false(bw_ledger_plausible(BW_LEVER_CPUS, REC("3-0", "1", NULL)));
        /* No record, no lever. */
        assert_false(bw_ledger_plausible(BW_LEVER_CPUS, REC(NULL, "1", NULL)));
        assert_false(bw_ledger_plausible(_BW_LEVER_MAX, REC("0", "1", NULL)));
}

static void test_undo_plan(void **unused) {
        /* The original there: nothing to write. */
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_FREEZE, REC("0", "1", NULL), "0"), BW_LEDGER_UNDO_NOTHING);
        /* What bwgovd wrote there: the original goes back. */
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_FREEZE, REC("0", "1", NULL), "1"), BW_LEDGER_UNDO_WRITE);
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_FREEZE, REC("THAWED", "FROZEN", NULL), "FREEZING"),
                         BW_LEDGER_UNDO_WRITE);
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_WEIGHT, REC("100", "400", NULL), "400\n"),
                         BW_LEDGER_UNDO_WRITE);
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_CPUS, REC("0-3", "0-1", NULL), "0,1"), BW_LEDGER_UNDO_WRITE);
        /* Anything else is someone else's (issue 30, finding 7). */
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_WEIGHT, REC("100", "400", NULL), "250"),
                         BW_LEDGER_UNDO_THEIRS);
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_CPUS, REC("0-3", "0-1", NULL), "2"), BW_LEDGER_UNDO_THEIRS);
        /* An older bwgovd's record (the original alone): 1 was its own. */
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_IDLE, REC("0", NULL, NULL), "1"), BW_LEDGER_UNDO_WRITE);
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_IDLE, REC("0", NULL, NULL), "0"), BW_LEDGER_UNDO_NOTHING);
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_WEIGHT, REC("100", NULL, NULL), "250"), BW_LEDGER_UNDO_WRITE);
        /* No record, or nothing read. */
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_WEIGHT, REC(NULL, NULL, NULL), "250"),
                         BW_LEDGER_UNDO_NOTHING);
        assert_int_equal(bw_ledger_undo_plan(BW_LEVER_WEIGHT, REC("100", "400", NULL), NULL),
                         BW_LEDGER_UNDO_NOTHING);
}

static void test_same(void **unused) {
        assert_true(bw_lever_same(BW_LEVER_WEIGHT, "0100", "100\n"));
        assert_false(bw_lever_same(BW_LEVER_WEIGHT, "101", "100"));
        assert_true(bw_lever_same(BW_LEVER_CPUS, "0-2,5", "0,1,2,5"));
        assert_false(bw_lever_same(BW_LEVER_CPUS, "0-2", "0-3"));
        assert_true(bw_lever_same(BW_LEVER_FREEZE, "FREEZING", "FROZEN"));
        assert_false(bw_lever_same(BW_LEVER_IDLE, "0", "1"));
}

static void test_retry(void **unused) {
        assert_int_equal(bw_ledger_retry_usec(0), BW_LEDGER_RETRY_MIN_USEC);
        assert_int_equal(bw_ledger_retry_usec(1), 2 * BW_LEDGER_RETRY_MIN_USEC);
        assert_int_equal(bw_ledger_retry_usec(8), 256 * BW_LEDGER_RETRY_MIN_USEC);
        assert_int_equal(bw_ledger_retry_usec(9), BW_LEDGER_RETRY_MAX_USEC);
        assert_int_equal(bw_ledger_retry_usec(1000), BW_LEDGER_RETRY_MAX_USEC);
}

static void test_values(void **unused) {
        struct bw_ledger_lever r = { 0 };

        assert_false(bw_ledger_has(&r));
        assert_false(bw_ledger_has(NULL));
        assert_int_equal(bw_ledger_lever_set(&r, NULL, "1", NULL), -EINVAL);
        assert_int_equal(bw_ledger_lever_set(&r, "0\n1", "1", NULL), -EINVAL);
        assert_int_equal(bw_ledger_lever_set(&r, "0", "1", "500"), 0);
        assert_true(bw_ledger_has(&r));
        assert_string_equal(r.original, "0");
        assert_string_equal(r.written, "1");
        assert_string_equal(r.weight, "500");
        assert_int_equal(bw_ledger_lever_set(&r, "100", "400", NULL), 0);   /* replaced whole */
        assert_null(r.weight);
        bw_ledger_lever_done(&r);
        assert_false(bw_ledger_has(&r));
        assert_string_equal(bw_ledger_idle_reset_weight(BW_CG_LAYOUT_V1), "1024");
        assert_string_equal(bw_ledger_idle_reset_weight(BW_CG_LAYOUT_HYBRID), "1024");
        assert_string_equal(bw_ledger_idle_reset_weight(BW_CG_LAYOUT_V2), "100");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plausible),
                cmocka_unit_test(test_undo_plan),
                cmocka_unit_test(test_same),
                cmocka_unit_test(test_retry),
                cmocka_unit_test(test_values),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
