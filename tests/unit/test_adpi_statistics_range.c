/* Tests of the statistics-range ADPI: the ends of natural ranges, and
 * ranges learned over the first cycles. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_adpi.h"
#include "test_support.h"
#include "test_main.h"

TEST_ADPI_DESCRIPTOR("statistics-range", TEST_ADPI_SAMPLES | TEST_ADPI_RECONFIGURE,
                     TEST_ADPI_ACTIVITY)

#define NO_LEARNING "training_cycles = 1000000\n"

static void test_cpu_time_near_all_cpus_is_an_issue(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range", "metrics = cpu.user_s;cpu0.user_s\n" NO_LEARNING);
    guint32 node = test_adpi_counter(&a, "cpu.user_s", "s");
    guint32 cpu0 = test_adpi_counter(&a, "cpu0.user_s", "s");
    guint32 cpu1 = test_adpi_counter(&a, "cpu1.user_s", "s");
    test_adpi_counter(&a, "cpu0.system_s", "s"); /* another field: not a CPU of user_s */
    struct vigil_sample first[] = {
        {.metric_id = node, .t_ns = 1 * TEST_S, .value = 0},
        {.metric_id = cpu0, .t_ns = 1 * TEST_S, .value = 0},
        {.metric_id = cpu1, .t_ns = 1 * TEST_S, .value = 0},
    };
    test_adpi_samples(&a, first, G_N_ELEMENTS(first));
    test_adpi_cycle_quiet(&a, 1 * TEST_S);

    /* 1.875 of 2 CPUs and 0.5 of one: below the top 5 %. */
    struct vigil_sample second[] = {
        {.metric_id = node, .t_ns = 2 * TEST_S, .value = 1.875},
        {.metric_id = cpu0, .t_ns = 2 * TEST_S, .value = 0.5},
        {.metric_id = cpu1, .t_ns = 2 * TEST_S, .value = 1},
    };
    test_adpi_samples(&a, second, G_N_ELEMENTS(second));
    test_adpi_cycle_quiet(&a, 2 * TEST_S);

    struct vigil_sample third[] = {
        {.metric_id = node, .t_ns = 3 * TEST_S, .value = 1.875 + 1.9375},
        {.metric_id = cpu0, .t_ns = 3 * TEST_S, .value = 0.5 + 0.96875},
        {.metric_id = cpu1, .t_ns = 3 * TEST_S, .value = 2},
    };
    test_adpi_samples(&a, third, G_N_ELEMENTS(third));
    GArray *issues = test_adpi_cycle(&a, 3 * TEST_S);
    assert_int_equal(issues->len, 2);
    const struct vigil_issue *issue = &g_array_index(issues, struct vigil_issue, 0);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "cpu.user_s", 1.9375);
    test_assert_expected(issue, 0, 2 - 5.0 / 100.0 * 2);
    assert_string_equal(issue->message, "cpu.user_s at 1.9375 s/s, in the top 5 % of its natural "
                                        "range [0, 2] s/s (2 CPUs); expected 0 to 1.9 s/s");
    issue = &g_array_index(issues, struct vigil_issue, 1);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "cpu0.user_s", 0.96875);
    test_assert_expected(issue, 0, 1 - 5.0 / 100.0);
    test_adpi_close(&a);
}

static void test_memory_near_the_total_is_an_issue(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range", "metrics = mem.*\n" NO_LEARNING);
    guint32 total = test_adpi_gauge(&a, "mem.total_bytes", "bytes");
    guint32 used = test_adpi_gauge(&a, "mem.used_bytes", "bytes");
    guint32 swap_total = test_adpi_gauge(&a, "mem.swap_total_bytes", "bytes");
    guint32 swap_free = test_adpi_gauge(&a, "mem.swap_free_bytes", "bytes");

    /* Without the total, no range is known; nor without swap. */
    TEST_ADPI_TICK(&a, 1 * TEST_S, {used, 1e15}, {swap_total, 0}, {swap_free, 0});
    test_adpi_cycle_quiet(&a, 1 * TEST_S);

    /* The totals themselves are no issue, though at the top. */
    TEST_ADPI_TICK(&a, 2 * TEST_S, {total, 1000}, {used, 940});
    test_adpi_sample(&a, used, 2 * TEST_S + 1, 960);
    TEST_ADPI_TICK(&a, 2 * TEST_S, {swap_total, 100}, {swap_free, 95});
    test_adpi_cycle_quiet(&a, 2 * TEST_S);

    TEST_ADPI_TICK(&a, 3 * TEST_S, {total, 1000}, {used, 960}, {swap_total, 100}, {swap_free, 99});
    GArray *issues = test_adpi_cycle(&a, 3 * TEST_S);
    assert_int_equal(issues->len, 2);
    const struct vigil_issue *issue = &g_array_index(issues, struct vigil_issue, 0);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "mem.used_bytes", 960);
    test_assert_expected(issue, 0, 1000 - 5.0 / 100.0 * 1000);
    test_assert_contains(issue->message, "(mem.total_bytes)");
    issue = &g_array_index(issues, struct vigil_issue, 1);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "mem.swap_free_bytes", 99);
    test_assert_expected(issue, 0, 100 - 5.0 / 100.0 * 100);
    test_adpi_close(&a);
}

static void test_the_ends_of_a_percentage(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range",
                   "metrics = *_percent\nends = both\npercent = 10\n" NO_LEARNING);
    guint32 busy = test_adpi_gauge(&a, "gpu.busy_percent", "percent");
    test_adpi_sample(&a, busy, 1 * TEST_S, 50);
    test_adpi_cycle_quiet(&a, 1 * TEST_S);
    test_adpi_sample(&a, busy, 2 * TEST_S, 5);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 2 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "gpu.busy_percent", 5);
    test_assert_expected(issue, 0 + 10.0 / 100.0 * 100, 100 - 10.0 / 100.0 * 100);
    assert_string_equal(issue->message, "gpu.busy_percent at 5 percent, in the bottom 10 % of its "
                                        "natural range [0, 100] percent; expected 10 to 90 "
                                        "percent");
    test_adpi_sample(&a, busy, 3 * TEST_S, 95);
    test_assert_contains(test_adpi_cycle_one(&a, 3 * TEST_S)->message, "in the top 10 %");

    /* The bottom only: the top is fine now. */
    test_adpi_reconfigure_ok(&a, "metrics = *_percent\nends = bottom\npercent = 10\n" NO_LEARNING);
    test_adpi_sample(&a, busy, 4 * TEST_S, 95);
    test_adpi_cycle_quiet(&a, 4 * TEST_S);
    test_adpi_sample(&a, busy, 5 * TEST_S, 5);
    test_assert_expected(test_adpi_cycle_one(&a, 5 * TEST_S), 10, 100);
    test_adpi_close(&a);
}

static void cycle_of(struct test_adpi *a, guint32 id, guint64 t_s, double value)
{
    test_adpi_sample(a, id, t_s * TEST_S, value);
}

/* cycle_of, in a cycle ending then that reports nothing. */
static void quiet_cycle_of(struct test_adpi *a, guint32 id, guint64 t_s, double value)
{
    cycle_of(a, id, t_s, value);
    test_adpi_cycle_quiet(a, t_s * TEST_S);
}

static void test_a_value_outside_the_learned_range_is_an_issue(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range",
                   "metrics = process.rss_bytes\ntraining_cycles = 3\nwiden_percent = 5\n");
    guint32 rss = test_adpi_gauge(&a, "process.rss_bytes", "bytes");
    const double values[] = {10, 12, 11.9};
    for (guint i = 0; i < 3; i++) {
        quiet_cycle_of(&a, rss, i + 1, values[i]);
    }
    /* Learned 10 to 12, widened by 5 % of 12 on each side (more than four
     * of its smallest step, 0.1). */
    double margin = 5.0 / 100.0 * 12.0;
    quiet_cycle_of(&a, rss, 4, 12.5);
    quiet_cycle_of(&a, rss, 5, 9.5);
    cycle_of(&a, rss, 6, 12.75);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 6 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "process.rss_bytes", 12.75);
    test_assert_expected(issue, 10 - margin, 12 + margin);
    assert_string_equal(issue->message, "process.rss_bytes at 12.75 bytes, outside its learned "
                                        "range [9.4, 12.6] bytes: 10 to 12 over its first 3 "
                                        "cycles, widened by 5 % or 4 steps of 0.1");
    /* Frozen: the values after training did not widen it. */
    cycle_of(&a, rss, 7, 9.25);
    test_assert_expected(test_adpi_cycle_one(&a, 7 * TEST_S), 10 - margin, 12 + margin);

    /* A new widening applies to what was learned. */
    test_adpi_reconfigure_ok(&a, "metrics = process.rss_bytes\ntraining_cycles = 3\n"
                                 "widen_percent = 50\n");
    quiet_cycle_of(&a, rss, 8, 12.75);
    cycle_of(&a, rss, 9, 18.5);
    test_assert_expected(test_adpi_cycle_one(&a, 9 * TEST_S), 10 - 50.0 / 100.0 * 12,
                         12 + 50.0 / 100.0 * 12);
    test_adpi_close(&a);
}

/* The learned range is widened by margin_steps (4) of the smallest change
 * between the samples seen in training: 90 is within 40 of 50 (the old
 * widening, two steps or 5 %, flagged anything above 70). */
static void test_steps_widen_the_learned_range(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range",
                   "metrics = process.rss_bytes\ntraining_cycles = 4\nwiden_percent = 0\n");
    guint32 rss = test_adpi_gauge(&a, "process.rss_bytes", "bytes");
    const double values[] = {20, 50, 30, 40};
    for (guint i = 0; i < 4; i++) {
        quiet_cycle_of(&a, rss, i + 1, values[i]);
    }
    quiet_cycle_of(&a, rss, 5, 90);
    quiet_cycle_of(&a, rss, 6, -20);
    cycle_of(&a, rss, 7, 91);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 7 * TEST_S);
    test_assert_expected(issue, -20, 90);
    test_adpi_close(&a);
}

/* A CPU-time counter moves in ticks: its resolution is one tick as a rate
 * over the cycle, learned from its samples, not the smallest change
 * between two cycles' rates (which, with cycles of slightly different
 * lengths, is far less than a tick: the old margin was one tick or less).
 * TICK is exact in binary, so the bounds are too. */
#define TICK (1.0 / 64.0)
static void test_a_counters_resolution_is_one_tick_over_the_cycle(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range", "training_cycles = 3\nwiden_percent = 0\n");
    guint32 cpu = test_adpi_counter(&a, "process.cpu_s", "s");
    /* Two samples a cycle, the rates 2 ticks a second in each. */
    const double ticks[] = {0, 1, 2, 3, 4, 5};
    for (guint i = 0; i < 6; i++) {
        test_adpi_sample(&a, cpu, (i + 1) * TEST_S / 2, ticks[i] * TICK);
        if (i % 2 == 1)
            test_adpi_cycle_quiet(&a, (i + 1) * TEST_S / 2);
    }
    /* 5 ticks a second: within 4 ticks of 2 (the old range ended at 2.1). */
    test_adpi_sample(&a, cpu, 7 * TEST_S / 2, 7 * TICK);
    test_adpi_sample(&a, cpu, 4 * TEST_S, 10 * TICK);
    test_adpi_cycle_quiet(&a, 4 * TEST_S);
    test_adpi_sample(&a, cpu, 9 * TEST_S / 2, 13 * TICK);
    test_adpi_sample(&a, cpu, 5 * TEST_S, 17 * TICK);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 5 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "process.cpu_s", 7 * TICK);
    test_assert_expected(issue, -2 * TICK, 6 * TICK);
    test_adpi_close(&a);
}

/* By default a node's memory is judged only against its natural range:
 * another program's allocation is not this node's trouble until memory is
 * nearly full (the old defaults watched only process.cpu_s, which a node
 * instance never gets). */
static void test_node_memory_is_judged_by_its_natural_range_only(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range", "training_cycles = 2\n");
    guint32 total = test_adpi_gauge(&a, "mem.total_bytes", "bytes");
    guint32 used = test_adpi_gauge(&a, "mem.used_bytes", "bytes");
    const double values[] = {10, 11, 50, 94};
    for (guint i = 0; i < 4; i++) {
        struct vigil_sample s[] = {
            {.metric_id = total, .t_ns = (i + 1) * TEST_S, .value = 100},
            {.metric_id = used, .t_ns = (i + 1) * TEST_S, .value = values[i]}};
        test_adpi_samples(&a, s, G_N_ELEMENTS(s));
        test_adpi_cycle_quiet(&a, (i + 1) * TEST_S);
    }
    struct vigil_sample s[] = {{.metric_id = total, .t_ns = 5 * TEST_S, .value = 100},
                               {.metric_id = used, .t_ns = 5 * TEST_S, .value = 96}};
    test_adpi_samples(&a, s, G_N_ELEMENTS(s));
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 5 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "mem.used_bytes", 96);
    test_assert_contains(issue->message, "natural range");
    test_adpi_close(&a);
}

static void test_a_counter_is_judged_by_its_rate(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range",
                   "training_cycles = 2\nwiden_percent = 5\nmargin_steps = 0\n");
    guint32 cpu = test_adpi_counter(&a, "process.cpu_s", "s");
    quiet_cycle_of(&a, cpu, 1, 0);
    quiet_cycle_of(&a, cpu, 2, 0.5);
    cycle_of(&a, cpu, 4, 1.5); /* 0.5 s/s over 2 s */
    test_adpi_cycle_quiet(&a, 4 * TEST_S);
    cycle_of(&a, cpu, 5, 2.5);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 5 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "process.cpu_s", 1);
    test_assert_expected(issue, 0.5 - 5.0 / 100.0 * 0.5, 0.5 + 5.0 / 100.0 * 0.5);
    test_assert_contains(issue->message, "at 1 s/s, outside its learned range");
    test_adpi_close(&a);
}

static void test_zeros_in_training_leave_no_margin(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range", "metrics = net.*\nlearn = net.*\ntraining_cycles = 2\n");
    guint32 errors = test_adpi_gauge(&a, "net.eth0.errors", "count");
    quiet_cycle_of(&a, errors, 1, 0);
    quiet_cycle_of(&a, errors, 2, 0);
    quiet_cycle_of(&a, errors, 3, 0);
    cycle_of(&a, errors, 4, 0.001);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 4 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "net.eth0.errors", 0.001);
    test_assert_expected(issue, 0, 0);
    test_adpi_close(&a);
}

static void test_one_value_gives_one_issue(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range",
                   "metrics = disk.*\nlearn = disk.*\ntraining_cycles = 1\n");
    guint32 busy = test_adpi_counter(&a, "disk.sda.busy_s", "s");
    quiet_cycle_of(&a, busy, 1, 0);
    quiet_cycle_of(&a, busy, 2, 0.25);
    /* Outside the learned [0.2375, 0.2625] and in the top 5 % of [0, 1]:
     * the natural range speaks. */
    cycle_of(&a, busy, 3, 1.25);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 3 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "disk.sda.busy_s", 1);
    test_assert_expected(issue, 0, 1 - 5.0 / 100.0);
    test_assert_contains(issue->message, "natural range");
    test_adpi_close(&a);
}

static void test_out_of_range_values_are_refused(void **state)
{
    (void)state;
    test_adpi_assert_refused("statistics-range", "percent = 60\n",
                             "[adpi.statistics-range] percent");
    test_adpi_assert_refused("statistics-range", "percent = 0\n",
                             "[adpi.statistics-range] percent");
    test_adpi_assert_refused("statistics-range", "margin_steps = -1\n",
                             "[adpi.statistics-range] margin_steps");
    test_adpi_assert_refused("statistics-range", "ends = middle\n", "[adpi.statistics-range] ends");

    /* A refused reload keeps the instance as it was. */
    struct test_adpi a;
    test_adpi_open(&a, "statistics-range", NULL);
    GError *error = NULL;
    assert_false(test_adpi_reconfigure(&a, "training_cycles = 0\n", &error));
    test_assert_contains(error->message, "[adpi.statistics-range] training_cycles");
    g_error_free(error);
    test_adpi_close(&a);
}

TEST_MAIN(cmocka_unit_test(test_the_descriptor),
          cmocka_unit_test(test_cpu_time_near_all_cpus_is_an_issue),
          cmocka_unit_test(test_memory_near_the_total_is_an_issue),
          cmocka_unit_test(test_the_ends_of_a_percentage),
          cmocka_unit_test(test_a_value_outside_the_learned_range_is_an_issue),
          cmocka_unit_test(test_steps_widen_the_learned_range),
          cmocka_unit_test(test_a_counters_resolution_is_one_tick_over_the_cycle),
          cmocka_unit_test(test_node_memory_is_judged_by_its_natural_range_only),
          cmocka_unit_test(test_a_counter_is_judged_by_its_rate),
          cmocka_unit_test(test_zeros_in_training_leave_no_margin),
          cmocka_unit_test(test_one_value_gives_one_issue),
          cmocka_unit_test(test_out_of_range_values_are_refused))
