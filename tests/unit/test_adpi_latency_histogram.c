/* Tests of the latency-histogram ADPI: thresholds learned from known
 * durations at their buckets' bounds, and the shares of slow and fast
 * calls in later cycles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "vigil/ontology.h"

#include "test_adpi.h"
#include "test_support.h"
#include "test_main.h"

TEST_ADPI_DESCRIPTOR("latency-histogram",
                     TEST_ADPI_ACTIVITY | TEST_ADPI_NODE_LOAD | TEST_ADPI_RECONFIGURE,
                     TEST_ADPI_SAMPLES)

/* min_ratio = 1: the thresholds are the quantiles alone. */
#define LEARN_100 "learn_calls = 100\nmin_calls = 20\nmax_outer_share = 0.25\nmin_ratio = 1\n"

/* 100 posix.write calls: 5 of 150 ns, 90 of 1000 ns, 5 of 10000 ns. The
 * 5th smallest is in bucket [144, 151] (power 128, 1/16 of it wide), the
 * 95th in [992, 1023]: the thresholds are 144 ns and 1023 ns. */
static void learn(struct test_adpi *a, unsigned layer, unsigned op)
{
    test_adpi_calls(a, layer, op, 150, 5);
    test_adpi_calls(a, layer, op, 1000, 90);
    test_adpi_calls(a, layer, op, 10000, 5);
    test_adpi_cycle_quiet(a, 1 * TEST_S);
}

static void posix_write(struct test_adpi *a, guint64 ns, guint n)
{
    test_adpi_calls(a, VIGIL_LAYER_POSIX, VIGIL_OP_POSIX_WRITE, ns, n);
}

/* Opened with `lines`, and posix.write learned. */
static void open_learned(struct test_adpi *a, const char *lines)
{
    test_adpi_open(a, "latency-histogram", lines);
    learn(a, VIGIL_LAYER_POSIX, VIGIL_OP_POSIX_WRITE);
}

/* The cycle ending at `t_s` s has one issue: `share` of its posix.write
 * calls slow (ABNORMAL_BAD) or fast (ABNORMAL_GOOD). */
static const struct vigil_issue *write_issue(struct test_adpi *a, guint64 t_s,
                                             enum vigil_health health, double share)
{
    const struct vigil_issue *issue = test_adpi_cycle_one(a, t_s * TEST_S);
    test_assert_issue(issue, health, "posix.write", share);
    return issue;
}

static void test_many_slow_calls_are_abnormal_bad(void **state)
{
    (void)state;
    struct test_adpi a;
    open_learned(&a, LEARN_100);

    posix_write(&a, 5000, 41);
    posix_write(&a, 1000, 59);
    const struct vigil_issue *issue = write_issue(&a, 2, VIGIL_HEALTH_ABNORMAL_BAD, 41.0 / 100.0);
    test_assert_expected(issue, 0, 0.25);
    assert_string_equal(issue->message,
                        "41 % of 100 posix.write calls took more than 1.02 µs, the 95th "
                        "percentile of the first 100; expected at most 25 %");

    /* At the bound, not above it: a quarter, which is allowed. */
    posix_write(&a, 1024, 25);
    posix_write(&a, 1023, 75);
    test_adpi_cycle_quiet(&a, 3 * TEST_S);
    posix_write(&a, 1024, 26);
    posix_write(&a, 1023, 74);
    write_issue(&a, 4, VIGIL_HEALTH_ABNORMAL_BAD, 26.0 / 100.0);
    test_adpi_close(&a);
}

/* By default a cycle half slow is an issue: a slow second that straddles
 * two cycles leaves half of each slow at worst (the old default, a half,
 * let such a second through unflagged). */
static void test_by_default_a_cycle_half_slow_is_abnormal(void **state)
{
    (void)state;
    struct test_adpi a;
    open_learned(&a, "learn_calls = 100\n");
    posix_write(&a, 5000, 30);
    posix_write(&a, 1000, 70);
    test_adpi_cycle_quiet(&a, 2 * TEST_S);
    posix_write(&a, 5000, 50);
    posix_write(&a, 1000, 50);
    const struct vigil_issue *issue = write_issue(&a, 3, VIGIL_HEALTH_ABNORMAL_BAD, 0.5);
    test_assert_expected(issue, 0, 0.3);
    test_adpi_close(&a);
}

static void test_many_fast_calls_are_abnormal_good(void **state)
{
    (void)state;
    struct test_adpi a;
    open_learned(&a, LEARN_100);

    posix_write(&a, 143, 30);
    posix_write(&a, 144, 10); /* the bound: not fast */
    posix_write(&a, 1000, 60);
    const struct vigil_issue *issue = write_issue(&a, 2, VIGIL_HEALTH_ABNORMAL_GOOD, 30.0 / 100.0);
    test_assert_expected(issue, 0, 0.25);
    assert_string_equal(issue->message,
                        "30 % of 100 posix.write calls took less than 144 ns, the 5th "
                        "percentile of the first 100; expected at most 25 %");
    test_adpi_close(&a);
}

static void test_too_few_calls_are_not_judged(void **state)
{
    (void)state;
    struct test_adpi a;
    open_learned(&a, LEARN_100);
    posix_write(&a, 5000, 19);
    test_adpi_cycle_quiet(&a, 2 * TEST_S);
    /* The count starts again each cycle. */
    posix_write(&a, 5000, 19);
    test_adpi_cycle_quiet(&a, 3 * TEST_S);
    posix_write(&a, 5000, 20);
    write_issue(&a, 4, VIGIL_HEALTH_ABNORMAL_BAD, 1);
    test_adpi_close(&a);
}

static void test_calls_while_learning_are_not_judged(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "latency-histogram", LEARN_100);
    posix_write(&a, 1000, 99);
    test_adpi_cycle_quiet(&a, 1 * TEST_S);
    /* The 100th call ends learning; the next ones are judged. */
    posix_write(&a, 1000, 1);
    posix_write(&a, 5000, 20);
    const struct vigil_issue *issue = write_issue(&a, 2, VIGIL_HEALTH_ABNORMAL_BAD, 1);
    test_assert_contains(issue->message, "20 posix.write calls");
    test_adpi_close(&a);
}

static void test_unknown_and_unlisted_operations_are_ignored(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "latency-histogram", LEARN_100 "operations = mpiio.write*\n");
    learn(&a, VIGIL_LAYER_MPIIO, VIGIL_OP_MPIIO_WRITE_AT);
    /* Not listed: neither learned nor judged. */
    learn(&a, VIGIL_LAYER_POSIX, VIGIL_OP_POSIX_WRITE);
    posix_write(&a, 5000, 100);
    /* An operation of another layer, and ids of no operation. */
    test_adpi_calls(&a, VIGIL_LAYER_POSIX, VIGIL_OP_MPIIO_WRITE_AT, 5000, 100);
    test_adpi_calls(&a, VIGIL_LAYER_MPIIO, 299, 5000, 100);
    test_adpi_calls(&a, VIGIL_LAYER_MPIIO, 60000, 5000, 100);
    test_adpi_calls(&a, 0, VIGIL_OP_MPIIO_WRITE_AT, 5000, 100);
    test_adpi_cycle_quiet(&a, 2 * TEST_S);

    test_adpi_calls(&a, VIGIL_LAYER_MPIIO, VIGIL_OP_MPIIO_WRITE_AT, 5000, 100);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 3 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_BAD, "mpiio.write_at", 1);
    test_adpi_close(&a);
}

static void test_reconfigure_keeps_the_histogram(void **state)
{
    (void)state;
    struct test_adpi a;
    open_learned(&a, LEARN_100);

    /* The 99th smallest is in [9728, 10239]: 5000 ns is no longer slow. */
    test_adpi_reconfigure_ok(&a, LEARN_100 "high_quantile = 0.99\n");
    posix_write(&a, 5000, 100);
    test_adpi_cycle_quiet(&a, 2 * TEST_S);
    posix_write(&a, 10240, 30);
    posix_write(&a, 10239, 70);
    const struct vigil_issue *issue = write_issue(&a, 3, VIGIL_HEALTH_ABNORMAL_BAD, 30.0 / 100.0);
    test_assert_contains(issue->message, "more than 10.2 µs, the 99th percentile of the first "
                                         "100");
    test_adpi_close(&a);
}

static void test_fewer_learn_calls_end_learning(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "latency-histogram", "learn_calls = 1000\nmin_calls = 20\n");
    posix_write(&a, 1000, 50);
    test_adpi_cycle_quiet(&a, 1 * TEST_S);
    test_adpi_reconfigure_ok(&a, "learn_calls = 50\nmax_outer_share = 0.5\nmin_calls = 20\n");
    posix_write(&a, 5000, 11);
    posix_write(&a, 1000, 9);
    const struct vigil_issue *issue = write_issue(&a, 2, VIGIL_HEALTH_ABNORMAL_BAD, 11.0 / 20.0);
    test_assert_expected(issue, 0, 0.5);
    test_assert_contains(issue->message, "of the first 50;");
    test_adpi_close(&a);
}

/* 100 writes of 4 KiB to the page cache, as a real run learned them: a
 * narrow body, 5 % of them slow (the first write after the program slept).
 * Median in [800, 831] ns, 5th percentile in [672, 703], 95th in [800, 831]. */
static void learn_narrow(struct test_adpi *a)
{
    posix_write(a, 700, 5);
    posix_write(a, 820, 90);
    posix_write(a, 16000, 5);
    test_adpi_cycle_quiet(a, 1 * TEST_S);
}

/* The node a fifth faster (a virtual machine's host less busy): every
 * call below the learned 5th percentile, which by the quantile alone is
 * an anomaly every cycle; by default not, since it is not twice as fast. */
static void test_the_node_a_fifth_faster_is_not_an_anomaly(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "latency-histogram", "learn_calls = 100\nmin_calls = 20\n");
    learn_narrow(&a);
    posix_write(&a, 656, 100);
    test_adpi_cycle_quiet(&a, 2 * TEST_S);
    /* Below 800 / 2 ns and outside its bucket ([384, 399]): fast. */
    posix_write(&a, 399, 31);
    posix_write(&a, 400, 30); /* in [400, 415], the bound's bucket: not fast */
    posix_write(&a, 820, 39);
    const struct vigil_issue *issue = write_issue(&a, 3, VIGIL_HEALTH_ABNORMAL_GOOD, 0.31);
    assert_string_equal(issue->message,
                        "31 % of 100 posix.write calls took less than 400 ns, the median over 2 "
                        "of the first 100; expected at most 30 %");
    test_adpi_close(&a);

    test_adpi_open(&a, "latency-histogram", "learn_calls = 100\nmin_calls = 20\nmin_ratio = 1\n");
    learn_narrow(&a);
    posix_write(&a, 656, 100);
    issue = test_adpi_cycle_one(&a, 2 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_GOOD, "posix.write", 1);
    test_assert_contains(issue->message, "less than 672 ns, the 5th percentile of the first 100");
    test_adpi_close(&a);
}

/* A reload that sets min_ratio moves the learned thresholds at once: the
 * histogram is kept. */
static void test_reconfigure_applies_min_ratio(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "latency-histogram", "learn_calls = 100\nmin_calls = 20\nmin_ratio = 1\n");
    learn_narrow(&a);
    posix_write(&a, 656, 100);
    write_issue(&a, 2, VIGIL_HEALTH_ABNORMAL_GOOD, 1);
    test_adpi_reconfigure_ok(&a, "learn_calls = 100\nmin_calls = 20\nmin_ratio = 2\n");
    posix_write(&a, 656, 100);
    test_adpi_cycle_quiet(&a, 3 * TEST_S);
    posix_write(&a, 399, 100);
    test_assert_contains(test_adpi_cycle_one(&a, 4 * TEST_S)->message,
                         "less than 400 ns, the median over 2 of the first 100");
    test_adpi_close(&a);
}

/* Learned without a slow tail, the 95th percentile is the median's bucket:
 * calls half as fast again are the node's speed, twice as slow an issue. */
static void test_a_call_is_slow_only_beyond_twice_the_median(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "latency-histogram", "learn_calls = 100\nmin_calls = 20\n");
    posix_write(&a, 700, 5);
    posix_write(&a, 820, 95);
    test_adpi_cycle_quiet(&a, 1 * TEST_S);
    posix_write(&a, 1230, 100);
    test_adpi_cycle_quiet(&a, 2 * TEST_S);
    /* 2 × 831 = 1662 ns lies in [1600, 1663]: calls there are not slow,
     * those in [1664, 1727] are. */
    posix_write(&a, 1650, 40);
    posix_write(&a, 1700, 31);
    posix_write(&a, 820, 29);
    const struct vigil_issue *issue = write_issue(&a, 3, VIGIL_HEALTH_ABNORMAL_BAD, 0.31);
    assert_string_equal(issue->message,
                        "31 % of 100 posix.write calls took more than 1.66 µs, 2 times the median "
                        "of the first 100; expected at most 30 %");
    test_adpi_close(&a);
}

/* After relearning, 100 calls of 5000 ns are learned (not judged), then
 * judged as normal; beyond the new 95th percentile, [4864, 5119], slow. */
static void assert_learned_again(struct test_adpi *a, guint64 *s)
{
    posix_write(a, 5000, 100);
    test_adpi_cycle_quiet(a, (*s)++ * TEST_S);
    posix_write(a, 5000, 100);
    test_adpi_cycle_quiet(a, (*s)++ * TEST_S);
    posix_write(a, 5120, 100);
    const struct vigil_issue *issue = test_adpi_cycle_one(a, (*s)++ * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_BAD, "posix.write", 1);
    test_assert_contains(issue->message, "more than 5.12 µs, the 95th percentile of the first 100");
}

static void slow_cycle(struct test_adpi *a, guint64 *s)
{
    posix_write(a, 5000, 100);
    write_issue(a, (*s)++, VIGIL_HEALTH_ABNORMAL_BAD, 1);
}

/* A change that lasts is a new phase: with relearn_cycles = 3 the cycles
 * with an issue are counted keeping 8/9 of the count each judged cycle,
 * and the thresholds are learned again when it reaches 3: the fourth slow
 * cycle in a row (1, 1.89, 2.68, 3.38). */
static void test_a_lasting_change_is_learned_again(void **state)
{
    (void)state;
    struct test_adpi a;
    open_learned(&a, LEARN_100 "relearn_cycles = 3\n");
    guint64 s = 2;
    for (int i = 0; i < 4; i++)
        slow_cycle(&a, &s); /* the fourth still an issue, then learning again */
    assert_learned_again(&a, &s);
    test_adpi_close(&a);
}

/* Calls that flip between slow and not every other cycle never make 3 in
 * a row, but a change all the same: the count (1, 0.89, 1.79, 1.59, 2.41,
 * 2.15, 2.91, 2.59, 3.30) reaches 3 at the fifth slow cycle. A cycle with
 * too few calls to be judged leaves the count as it is. */
static void test_a_flipping_change_is_learned_again(void **state)
{
    (void)state;
    struct test_adpi a;
    open_learned(&a, LEARN_100 "relearn_cycles = 3\n");
    guint64 s = 2;
    for (int i = 0; i < 4; i++) {
        slow_cycle(&a, &s);
        posix_write(&a, 1000, 100);
        test_adpi_cycle_quiet(&a, s++ * TEST_S);
        posix_write(&a, 1000, 19); /* too few: not judged */
        test_adpi_cycle_quiet(&a, s++ * TEST_S);
    }
    slow_cycle(&a, &s);
    assert_learned_again(&a, &s);
    test_adpi_close(&a);
}

/* The node's load over the cycle about to close: `running` threads want
 * its 2 CPUs. */
static void node_cycle_load(struct test_adpi *a, double running)
{
    struct vigil_node_load load = {
        .cpus = 2, .cpu_busy = 1, .iowait = 0, .steal = 0, .running = running};
    test_adpi_node_load(a, &load);
}

/* open_learned, with `running` threads over the learning cycle. */
static void open_learned_at_load(struct test_adpi *a, const char *lines, double running)
{
    test_adpi_open(a, "latency-histogram", lines);
    node_cycle_load(a, running);
    learn(a, VIGIL_LAYER_POSIX, VIGIL_OP_POSIX_WRITE);
}

/* posix_write in a cycle with `running` threads. */
static void loaded_write(struct test_adpi *a, double running, guint64 ns, guint n)
{
    node_cycle_load(a, running);
    posix_write(a, ns, n);
}

/* Learned with 2 threads on 2 CPUs; then 8 want them, each waits for its
 * turn: 4 times the learned 95th percentile is what the load explains. */
static void test_the_node_load_moves_the_slow_threshold(void **state)
{
    (void)state;
    struct test_adpi a;
    open_learned_at_load(&a, LEARN_100, 2);

    /* [2944, 3071] ns: slow on a node as loaded as in learning. */
    loaded_write(&a, 2, 3000, 100);
    write_issue(&a, 2, VIGIL_HEALTH_ABNORMAL_BAD, 1);
    /* Not beyond 4 × 1023 ns. */
    loaded_write(&a, 8, 3000, 100);
    test_adpi_cycle_quiet(&a, 3 * TEST_S);
    /* [4864, 5119] ns is beyond it. */
    loaded_write(&a, 8, 5000, 31);
    posix_write(&a, 3000, 69);
    const struct vigil_issue *issue = write_issue(&a, 4, VIGIL_HEALTH_ABNORMAL_BAD, 0.31);
    assert_string_equal(issue->message,
                        "31 % of 100 posix.write calls took more than 4.09 µs, the 95th "
                        "percentile of the first 100 times 4 for the node's load; expected at "
                        "most 25 %");
    /* Fewer runnable threads than CPUs explain nothing more than learned. */
    loaded_write(&a, 1, 3000, 100);
    write_issue(&a, 5, VIGIL_HEALTH_ABNORMAL_BAD, 1);
    test_adpi_close(&a);
}

/* Learned on a loaded node, then the load goes: calls get faster, which is
 * the node's doing; slower ones are still slow. */
static void test_less_load_than_learned_moves_the_fast_threshold_only(void **state)
{
    (void)state;
    struct test_adpi a;
    open_learned_at_load(&a, LEARN_100, 8);

    loaded_write(&a, 2, 143, 100);
    test_adpi_cycle_quiet(&a, 2 * TEST_S);
    loaded_write(&a, 2, 1024, 100);
    write_issue(&a, 3, VIGIL_HEALTH_ABNORMAL_BAD, 1);
    /* A quarter of 144 ns, 36 ns: calls below it are still fast. */
    loaded_write(&a, 2, 35, 100);
    const struct vigil_issue *issue = write_issue(&a, 4, VIGIL_HEALTH_ABNORMAL_GOOD, 1);
    test_assert_contains(issue->message, "less than 36 ns, the 5th percentile of the first 100 "
                                         "times 0.25 for the node's load");
    test_adpi_close(&a);
}

static void test_weigh_node_load_off_keeps_the_learned_thresholds(void **state)
{
    (void)state;
    struct test_adpi a;
    open_learned_at_load(&a, LEARN_100 "weigh_node_load = false\n", 2);
    loaded_write(&a, 8, 3000, 100);
    const struct vigil_issue *issue = write_issue(&a, 2, VIGIL_HEALTH_ABNORMAL_BAD, 1);
    test_assert_contains(issue->message, "more than 1.02 µs, the 95th percentile of the first "
                                         "100; expected");
    test_adpi_close(&a);
}

/* Without the CPU times (procstat not running) the load is unknown: the
 * learned thresholds hold. */
static void test_an_unknown_node_load_keeps_the_learned_thresholds(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "latency-histogram", LEARN_100);
    struct vigil_node_load load = {NAN, NAN, NAN, NAN, 2};
    test_adpi_node_load(&a, &load);
    learn(&a, VIGIL_LAYER_POSIX, VIGIL_OP_POSIX_WRITE);
    load.running = 64;
    test_adpi_node_load(&a, &load);
    posix_write(&a, 3000, 100);
    write_issue(&a, 2, VIGIL_HEALTH_ABNORMAL_BAD, 1);
    test_adpi_close(&a);
}

static void test_out_of_range_values_are_refused(void **state)
{
    (void)state;
    test_adpi_assert_refused("latency-histogram", "high_quantile = 1.5\n",
                             "[adpi.latency-histogram] high_quantile");
    test_adpi_assert_refused("latency-histogram", "min_calls = 0\n",
                             "[adpi.latency-histogram] min_calls");
    test_adpi_assert_refused("latency-histogram", "relearn_cycles = 0\n",
                             "[adpi.latency-histogram] relearn_cycles");
    test_adpi_assert_refused("latency-histogram", "min_ratio = 0.5\n",
                             "[adpi.latency-histogram] min_ratio");
    test_adpi_assert_refused("latency-histogram", "weigh_node_load = maybe\n",
                             "[adpi.latency-histogram] weigh_node_load");
}

TEST_MAIN(cmocka_unit_test(test_the_descriptor),
          cmocka_unit_test(test_many_slow_calls_are_abnormal_bad),
          cmocka_unit_test(test_by_default_a_cycle_half_slow_is_abnormal),
          cmocka_unit_test(test_many_fast_calls_are_abnormal_good),
          cmocka_unit_test(test_too_few_calls_are_not_judged),
          cmocka_unit_test(test_calls_while_learning_are_not_judged),
          cmocka_unit_test(test_unknown_and_unlisted_operations_are_ignored),
          cmocka_unit_test(test_reconfigure_keeps_the_histogram),
          cmocka_unit_test(test_fewer_learn_calls_end_learning),
          cmocka_unit_test(test_the_node_a_fifth_faster_is_not_an_anomaly),
          cmocka_unit_test(test_a_call_is_slow_only_beyond_twice_the_median),
          cmocka_unit_test(test_reconfigure_applies_min_ratio),
          cmocka_unit_test(test_a_lasting_change_is_learned_again),
          cmocka_unit_test(test_a_flipping_change_is_learned_again),
          cmocka_unit_test(test_the_node_load_moves_the_slow_threshold),
          cmocka_unit_test(test_less_load_than_learned_moves_the_fast_threshold_only),
          cmocka_unit_test(test_weigh_node_load_off_keeps_the_learned_thresholds),
          cmocka_unit_test(test_an_unknown_node_load_keeps_the_learned_thresholds),
          cmocka_unit_test(test_out_of_range_values_are_refused))
