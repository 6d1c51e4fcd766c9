/* Tests of the call-rate ADPI: calls and bytes per cycle of each operation
 * against the range learned over the first full cycles. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "vigil/ontology.h"

#include "test_adpi.h"
#include "test_support.h"
#include "test_main.h"

TEST_ADPI_DESCRIPTOR("call-rate", TEST_ADPI_ACTIVITY | TEST_ADPI_RECONFIGURE, TEST_ADPI_SAMPLES)

static unsigned posix_op(const char *name)
{
    unsigned op = vigil_op_from_name(VIGIL_LAYER_POSIX, name);
    assert_true(vigil_op_is_valid(op));
    return op;
}

/* `n` calls of posix.OP that each moved `bytes`. */
static void calls(struct test_adpi *a, const char *op, guint n, gint64 bytes)
{
    struct vigil_activity activity = {
        .record_type = VIGIL_RECORD_ACTIVITY,
        .layer = VIGIL_LAYER_POSIX,
        .op = (uint16_t)posix_op(op),
        .start_ns = TEST_S,
        .end_ns = TEST_S + 1000,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
        .bytes_asked = bytes > 0 ? (uint64_t)bytes : 0,
        .result = bytes,
    };
    for (guint i = 0; i < n; i++) {
        activity.seq = i;
        a->ops->activity(a->instance, &activity);
    }
}

/* Opens the ADPI with `lines` and trains it: a partial first cycle of
 * 1000 writes (left out), then cycles of 100, 120 and 110 writes of 4 KiB. */
static void open_trained(struct test_adpi *a, const char *lines)
{
    test_adpi_open(a, "call-rate", lines);
    calls(a, "write", 1000, 4096);
    test_adpi_cycle_quiet(a, 1 * TEST_S);
    const guint n[] = {100, 120, 110};
    for (guint i = 0; i < G_N_ELEMENTS(n); i++) {
        calls(a, "write", n[i], 4096);
        test_adpi_cycle_quiet(a, (i + 2) * TEST_S);
    }
}

#define TRAINED "training_cycles = 3\n"

/* 120 at most in training (the partial first cycle's 1000 left out): 180
 * is half again, no news; 181 is a storm. */
static void test_a_storm_of_calls_is_an_issue(void **state)
{
    (void)state;
    struct test_adpi a;
    open_trained(&a, TRAINED);
    calls(&a, "write", 180, 4096);
    test_adpi_cycle_quiet(&a, 5 * TEST_S);
    calls(&a, "write", 181, 64);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 6 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "posix.write", 181);
    test_assert_expected(issue, 50, 180);
    assert_string_equal(issue->message, "posix.write: 181 calls in the cycle, more than 180 (at "
                                        "most 120 in each of 3 cycles learned, plus 50 % and at "
                                        "least 50)");
    /* Judged cycles are not learned: the storm again is news again. */
    calls(&a, "write", 181, 64);
    test_adpi_cycle_one(&a, 7 * TEST_S);
    test_adpi_close(&a);
}

/* An operation never seen in training may come min_calls times a cycle;
 * more is a storm, however its calls went (the latency histogram would
 * learn it from the storm itself). */
static void test_a_storm_of_a_new_operation_is_an_issue(void **state)
{
    (void)state;
    struct test_adpi a;
    open_trained(&a, TRAINED);
    calls(&a, "write", 110, 4096);
    calls(&a, "open", 50, 3);
    test_adpi_cycle_quiet(&a, 5 * TEST_S);
    calls(&a, "write", 110, 4096);
    calls(&a, "open", 51, 3);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 6 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "posix.open", 51);
    test_assert_expected(issue, -50, 50);
    test_adpi_close(&a);
}

/* At least 100 in training: fewer than 70 (30 % less) and 50 less is a
 * stall; 50 is both. */
static void test_a_drop_in_calls_is_an_issue(void **state)
{
    (void)state;
    struct test_adpi a;
    open_trained(&a, TRAINED);
    calls(&a, "write", 50, 4096);
    test_adpi_cycle_quiet(&a, 5 * TEST_S);
    calls(&a, "write", 49, 4096);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 6 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "posix.write", 49);
    test_assert_contains(issue->message, "49 calls in the cycle, fewer than 50");
    /* Nothing at all is a drop too. */
    test_adpi_cycle_one(&a, 7 * TEST_S);
    test_adpi_close(&a);
}

/* The same calls moving far more bytes: a bandwidth burst. At most
 * 120 × 4 KiB in training; news above that plus 1 MiB. */
static void test_a_burst_of_bytes_is_an_issue(void **state)
{
    (void)state;
    struct test_adpi a;
    open_trained(&a, TRAINED);
    double hi = 120.0 * 4096 + 1048576;
    calls(&a, "write", 110, 13999);
    test_adpi_cycle_quiet(&a, 5 * TEST_S);
    calls(&a, "write", 110, 256 * 1024);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 6 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "posix.write.bytes", 110 * 256 * 1024);
    assert_true(isnan(issue->expected_min));
    assert_true(issue->expected_max == hi);
    /* Failed calls move nothing. */
    calls(&a, "write", 110, -1);
    test_adpi_cycle_quiet(&a, 7 * TEST_S);
    test_adpi_close(&a);
}

/* Operations outside `operations` are not judged. */
static void test_operations_choose_what_is_judged(void **state)
{
    (void)state;
    struct test_adpi a;
    open_trained(&a, TRAINED "operations = posix.read\n");
    calls(&a, "write", 10000, 1 << 20);
    test_adpi_cycle_quiet(&a, 5 * TEST_S);
    test_adpi_close(&a);
}

/* relearn_cycles flagged cycles in a row are a new phase, learned again. */
static void test_a_lasting_change_is_learned_again(void **state)
{
    (void)state;
    struct test_adpi a;
    open_trained(&a, TRAINED "relearn_cycles = 2\n");
    for (guint i = 0; i < 2; i++) {
        calls(&a, "write", 1000, 64);
        test_adpi_cycle_one(&a, (5 + i) * TEST_S);
    }
    for (guint i = 0; i < 3; i++) {
        calls(&a, "write", 1000, 64);
        test_adpi_cycle_quiet(&a, (7 + i) * TEST_S);
    }
    calls(&a, "write", 1000, 64);
    test_adpi_cycle_quiet(&a, 10 * TEST_S);
    calls(&a, "write", 2000, 64);
    test_adpi_cycle_one(&a, 11 * TEST_S);
    test_adpi_close(&a);
}

/* Trained on cycles of 1 s. A cycle vigild could not end on time, 3 s
 * long, may hold 3 times the calls; one of half a second half. */
static void test_a_longer_cycle_may_hold_more_calls(void **state)
{
    (void)state;
    struct test_adpi a;
    open_trained(&a, TRAINED "min_calls = 1\n");
    calls(&a, "write", 540, 4096);
    test_adpi_cycle_quiet(&a, 7 * TEST_S);
    calls(&a, "write", 541, 4096);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 10 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "posix.write", 541);
    test_assert_expected(issue, 70, 540);
    /* Its message says why the bound is three times the learned one. */
    test_assert_contains(issue->message, "more than 540 (at most 120 in each of");
    test_assert_contains(issue->message, "scaled by 3.00 for a cycle longer than any learned");
    /* Half a second: at least 50, less 30 %: 35 calls are no stall, 34
     * are; in a cycle of 1 s, 35 are. */
    calls(&a, "write", 35, 4096);
    test_adpi_cycle_quiet(&a, 10 * TEST_S + TEST_S / 2);
    calls(&a, "write", 34, 4096);
    issue = test_adpi_cycle_one(&a, 11 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "posix.write", 34);
    test_assert_contains(issue->message, "scaled by 0.50 for a cycle shorter than any learned");
    calls(&a, "write", 35, 4096);
    test_assert_issue(test_adpi_cycle_one(&a, 12 * TEST_S), VIGIL_HEALTH_ABNORMAL_OTHER,
                      "posix.write", 35);
    test_adpi_close(&a);
}

static void test_out_of_range_values_are_refused(void **state)
{
    (void)state;
    test_adpi_assert_refused("call-rate", "max_drop = 2\n", "[adpi.call-rate] max_drop");
    test_adpi_assert_refused("call-rate", "min_calls = 0\n", "[adpi.call-rate] min_calls");
    test_adpi_assert_refused("call-rate", "training_cycles = many\n",
                             "[adpi.call-rate] training_cycles");
}

TEST_MAIN(cmocka_unit_test(test_the_descriptor),
          cmocka_unit_test(test_a_storm_of_calls_is_an_issue),
          cmocka_unit_test(test_a_storm_of_a_new_operation_is_an_issue),
          cmocka_unit_test(test_a_drop_in_calls_is_an_issue),
          cmocka_unit_test(test_a_burst_of_bytes_is_an_issue),
          cmocka_unit_test(test_operations_choose_what_is_judged),
          cmocka_unit_test(test_a_lasting_change_is_learned_again),
          cmocka_unit_test(test_a_longer_cycle_may_hold_more_calls),
          cmocka_unit_test(test_out_of_range_values_are_refused))
