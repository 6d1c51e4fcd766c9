/* Tests of the sensor-sanity ADPI: 0 J cycles, counters going back, stuck
 * values and metrics whose provider stopped answering. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_adpi.h"
#include "test_support.h"
#include "test_main.h"

TEST_ADPI_DESCRIPTOR("sensor-sanity", TEST_ADPI_RECONFIGURE, 0)

static void test_a_cycle_without_energy_is_an_issue(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "sensor-sanity", NULL);
    guint32 pkg = test_adpi_counter(&a, "energy.pkg0_j", "J");
    guint32 node = test_adpi_counter(&a, "node.energy_j", "J");
    guint32 cpu = test_adpi_counter(&a, "cpu.user_s", "s");

    /* The first cycle has nothing before it to compare with. */
    TEST_ADPI_TICK(&a, 1 * TEST_S, {pkg, 500}, {node, 900}, {cpu, 10});
    test_adpi_cycle_quiet(&a, 1 * TEST_S);

    /* cpu is not an energy counter. */
    TEST_ADPI_TICK(&a, 2 * TEST_S, {pkg, 500}, {node, 950}, {cpu, 10});
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 2 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "energy.pkg0_j", 0);
    assert_string_equal(issue->message, "0 J in a cycle: energy.pkg0_j stayed at 500 J; expected "
                                        "it to grow every cycle");

    /* Every cycle it does not grow. */
    TEST_ADPI_TICK(&a, 3 * TEST_S, {pkg, 500}, {node, 950}, {cpu, 11});
    GArray *issues = test_adpi_cycle(&a, 3 * TEST_S);
    assert_int_equal(issues->len, 2);
    assert_string_equal(g_array_index(issues, struct vigil_issue, 0).metric, "energy.pkg0_j");
    assert_string_equal(g_array_index(issues, struct vigil_issue, 1).metric, "node.energy_j");

    TEST_ADPI_TICK(&a, 4 * TEST_S, {pkg, 501}, {node, 951}, {cpu, 12});
    test_adpi_cycle_quiet(&a, 4 * TEST_S);
    test_adpi_close(&a);
}

static void test_a_counter_going_back_is_an_issue(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "sensor-sanity", NULL);
    guint32 bytes = test_adpi_counter(&a, "disk.sda.read_bytes", "bytes");
    test_adpi_sample(&a, bytes, 1 * TEST_S, 4096);
    test_adpi_cycle_quiet(&a, 1 * TEST_S);
    test_adpi_sample(&a, bytes, 2 * TEST_S, 1024);
    test_adpi_sample(&a, bytes, 2 * TEST_S + 1, 2048);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 2 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "disk.sda.read_bytes", 2048);
    test_assert_expected(issue, 4096, NAN);
    assert_string_equal(issue->message,
                        "disk.sda.read_bytes went back: 2048 bytes at the end of the cycle, "
                        "4096 bytes before; expected a counter never to decrease");
    /* It grows from there: fine again. */
    test_adpi_sample(&a, bytes, 3 * TEST_S, 3000);
    test_adpi_cycle_quiet(&a, 3 * TEST_S);
    test_adpi_close(&a);
}

/* `cycles` cycles of `value`, the first at second `from`. */
static void feed(struct test_adpi *a, guint32 id, guint64 from, guint cycles, double value)
{
    for (guint i = 0; i < cycles; i++) {
        test_adpi_sample(a, id, (from + i) * TEST_S, value);
        test_adpi_cycle_quiet(a, (from + i) * TEST_S);
    }
}

static void test_a_stuck_value_is_reported_once(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "sensor-sanity",
                   "stuck_cycles = 3\nstuck_metrics = mem.free_bytes;mem.available_bytes\n");
    guint32 free_id = test_adpi_gauge(&a, "mem.free_bytes", "bytes");

    /* The first value, then two cycles unchanged. */
    feed(&a, free_id, 1, 3, 1e9);
    test_adpi_sample(&a, free_id, 4 * TEST_S, 1e9);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 4 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "mem.free_bytes", 1e9);
    assert_string_equal(issue->message, "mem.free_bytes stayed at 1000000000 bytes for 3 cycles "
                                        "in a row; expected it to change within 3 cycles");
    /* Not again while it stays. */
    feed(&a, free_id, 5, 3, 1e9);
    /* It changes, then sticks again: three more cycles make a new issue. */
    feed(&a, free_id, 8, 3, 2e9);
    test_adpi_sample(&a, free_id, 11 * TEST_S, 2e9);
    test_assert_issue(test_adpi_cycle_one(&a, 11 * TEST_S), VIGIL_HEALTH_ABNORMAL_OTHER,
                      "mem.free_bytes", 2e9);
    test_adpi_close(&a);
}

static void test_a_metric_that_stops_is_reported_once(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "sensor-sanity", NULL);
    guint32 load = test_adpi_gauge(&a, "load.1m", "load");
    guint32 never = test_adpi_gauge(&a, "load.5m", "load");
    (void)never;
    test_adpi_sample(&a, load, 1 * TEST_S, 0.5);
    test_adpi_cycle_quiet(&a, 1 * TEST_S);

    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 2 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "load.1m", 0.5);
    assert_string_equal(issue->message, "load.1m had no sample in this cycle (the last was 0.5 "
                                        "load): its provider stopped answering; expected "
                                        "samples every cycle");
    test_adpi_cycle_quiet(&a, 3 * TEST_S);
    test_adpi_cycle_quiet(&a, 4 * TEST_S);

    /* It comes back, then stops again. */
    test_adpi_sample(&a, load, 5 * TEST_S, 0.75);
    test_adpi_cycle_quiet(&a, 5 * TEST_S);
    test_assert_issue(test_adpi_cycle_one(&a, 6 * TEST_S), VIGIL_HEALTH_ABNORMAL_OTHER, "load.1m",
                      0.75);
    test_adpi_cycle_quiet(&a, 7 * TEST_S);
    test_adpi_close(&a);
}

static void test_reconfigure_changes_the_lists_and_keeps_the_counts(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "sensor-sanity",
                   "stuck_cycles = 3\nstuck_metrics = mem.free_bytes;mem.available_bytes\n");
    guint32 used = test_adpi_gauge(&a, "mem.used_bytes", "bytes");
    guint32 pkg = test_adpi_counter(&a, "energy.pkg0_j", "J");
    /* Not a stuck_metrics metric: three unchanged cycles are fine. */
    feed(&a, used, 1, 3, 7);
    TEST_ADPI_TICK(&a, 4 * TEST_S, {pkg, 1}, {used, 7});
    test_adpi_cycle_quiet(&a, 4 * TEST_S);

    /* Three unchanged cycles so far: with it listed and the length changed,
     * the fourth makes the issue. And energy no longer has to grow. */
    test_adpi_reconfigure_ok(&a, "stuck_metrics = mem.used_bytes\nstuck_cycles = 4\n"
                                 "zero_metrics = cpu.*\n");
    TEST_ADPI_TICK(&a, 5 * TEST_S, {pkg, 1}, {used, 7});
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 5 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "mem.used_bytes", 7);
    test_assert_contains(issue->message, "for 4 cycles in a row");
    test_adpi_close(&a);
}

static void test_an_out_of_range_value_is_refused(void **state)
{
    (void)state;
    test_adpi_assert_refused("sensor-sanity", "stuck_cycles = 0\n",
                             "[adpi.sensor-sanity] stuck_cycles");
}

TEST_MAIN(cmocka_unit_test(test_the_descriptor),
          cmocka_unit_test(test_a_cycle_without_energy_is_an_issue),
          cmocka_unit_test(test_a_counter_going_back_is_an_issue),
          cmocka_unit_test(test_a_stuck_value_is_reported_once),
          cmocka_unit_test(test_a_metric_that_stops_is_reported_once),
          cmocka_unit_test(test_reconfigure_changes_the_lists_and_keeps_the_counts),
          cmocka_unit_test(test_an_out_of_range_value_is_refused))
