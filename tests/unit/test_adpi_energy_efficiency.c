/* Tests of the energy-efficiency ADPI on streams of CPU seconds per joule
 * whose mean and σ are known exactly: the test keeps its own running
 * statistics of the values the plugin should have kept, with the same
 * arithmetic, and compares the bounds exactly. Every value is a sum of
 * powers of two, so the counters' increases give it back without
 * rounding. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_adpi.h"
#include "test_support.h"
#include "test_main.h"

TEST_ADPI_DESCRIPTOR("energy-efficiency", TEST_ADPI_RECONFIGURE, 0)

struct stream {
    struct test_adpi a;
    guint32 user, system, energy;
    double user_s, system_s, energy_j;
    guint64 t_s;
    struct vigil_running_stats kept; /* what the plugin should have learned */
};

static void tick(struct stream *s)
{
    s->t_s++;
    struct vigil_sample samples[] = {
        {.metric_id = s->user, .t_ns = s->t_s * TEST_S, .value = s->user_s},
        {.metric_id = s->system, .t_ns = s->t_s * TEST_S, .value = s->system_s},
        {.metric_id = s->energy, .t_ns = s->t_s * TEST_S, .value = s->energy_j},
    };
    test_adpi_samples(&s->a, samples, G_N_ELEMENTS(samples));
}

static void stream_open(struct stream *s, const char *lines, const char *cpu_name,
                        const char *energy_name, enum vigil_metric_origin origin)
{
    *s = (struct stream){0};
    test_adpi_open(&s->a, "energy-efficiency", lines);
    s->user = test_adpi_counter(&s->a, cpu_name, "s");
    s->system = test_adpi_counter(&s->a, "cpu.system_s", "s");
    s->energy = test_adpi_metric(&s->a, energy_name, "J", VIGIL_METRIC_COUNTER, origin);
    /* The first cycle has no increase yet. */
    s->user_s = 100;
    s->energy_j = 1000;
    tick(s);
    test_adpi_cycle_quiet(&s->a, s->t_s * TEST_S);
}

/* A cycle with `cpu_s` CPU seconds (half a second of it system time) for
 * `energy_j` joules. */
static GArray *stream_cycle(struct stream *s, double cpu_s, double energy_j)
{
    s->user_s += cpu_s - 0.5;
    s->system_s += 0.5;
    s->energy_j += energy_j;
    tick(s);
    return test_adpi_cycle(&s->a, s->t_s * TEST_S);
}

/* A cycle of `x` CPU s per J that must be normal. */
static void normal(struct stream *s, double x)
{
    if (stream_cycle(s, x, 1)->len != 0)
        fail_msg("%.17g CPU s per J was judged abnormal: %s", x,
                 g_array_index(s->a.issues, struct vigil_issue, 0).message);
    vigil_running_stats_add(&s->kept, x);
}

/* 1, 3, 1, 3…: mean 2, σ sqrt(10 / 9) after ten. */
static void stabilise(struct stream *s)
{
    for (int i = 0; i < 10; i++)
        normal(s, i % 2 == 0 ? 1.0 : 3.0);
    assert_true(s->kept.mean == 2.0);
    assert_true(vigil_running_stats_stddev(&s->kept) == sqrt(10.0 / 9.0));
}

/* A cycle of `x` that must be one issue of `health`, with the bounds of
 * the kept statistics. */
static const struct vigil_issue *abnormal(struct stream *s, double x, enum vigil_health health,
                                          double k, double min_relative_deviation)
{
    GArray *issues = stream_cycle(s, x, 1);
    if (issues->len != 1)
        fail_msg("%.17g CPU s per J gave %u issues, expected one", x, issues->len);
    const struct vigil_issue *issue = &g_array_index(issues, struct vigil_issue, 0);
    test_assert_issue(issue, health, "cpu_s_per_j", x);
    double mean = s->kept.mean, sigma = vigil_running_stats_stddev(&s->kept);
    test_assert_expected(issue, MIN(mean - k * sigma, mean * (1 - min_relative_deviation)),
                         MAX(mean + k * sigma, mean * (1 + min_relative_deviation)));
    return issue;
}

static void test_just_above_mean_plus_k_sigma_is_abnormal_good(void **state)
{
    (void)state;
    struct stream s;
    stream_open(&s, NULL, "cpu.user_s", "node.energy_j", VIGIL_METRIC_MEASURED);
    stabilise(&s);
    /* mean + 3σ = 5.16227766… */
    const struct vigil_issue *issue = abnormal(&s, 5.171875, VIGIL_HEALTH_ABNORMAL_GOOD, 3, 0.05);
    assert_true(issue->expected_max == 2 + 3 * sqrt(10.0 / 9.0));
    assert_string_equal(issue->message,
                        "5.17188 CPU s per J, more work per joule than usual: expected -1.16228 "
                        "to 5.16228 (mean 2, σ 1.05409 over 10 cycles, k 3, at least 5 % off)");
    /* It was not added: the same value is abnormal against the same bounds. */
    abnormal(&s, 5.171875, VIGIL_HEALTH_ABNORMAL_GOOD, 3, 0.05);
    /* Just inside: normal, and added. */
    normal(&s, 5.15625);
    /* Which widened the bounds past what was abnormal before. */
    normal(&s, 5.171875);
    test_adpi_close(&s.a);
}

static void test_just_below_mean_minus_k_sigma_is_abnormal_bad(void **state)
{
    (void)state;
    struct stream s;
    stream_open(&s, "k = 0.5\n", "cpu.user_s", "node.energy_j", VIGIL_METRIC_MEASURED);
    stabilise(&s);
    /* mean − σ / 2 = 1.47295…, below mean × 0.95 = 1.9. */
    const struct vigil_issue *issue = abnormal(&s, 1.46875, VIGIL_HEALTH_ABNORMAL_BAD, 0.5, 0.05);
    assert_true(issue->expected_min == 2 - 0.5 * sqrt(10.0 / 9.0));
    test_assert_contains(issue->message, "less work per joule than usual");
    normal(&s, 1.484375);
    test_adpi_close(&s.a);
}

static void test_a_steady_baseline_needs_the_relative_deviation(void **state)
{
    (void)state;
    struct stream s;
    stream_open(&s, NULL, "cpu.user_s", "node.energy_j", VIGIL_METRIC_MEASURED);
    for (int i = 0; i < 10; i++)
        normal(&s, 2);
    assert_true(vigil_running_stats_stddev(&s.kept) == 0);
    /* Beyond 3σ = 0, but only 3.125 % above the mean. */
    normal(&s, 2.0625);
    abnormal(&s, 2.125, VIGIL_HEALTH_ABNORMAL_GOOD, 3, 0.05);
    abnormal(&s, 1.875, VIGIL_HEALTH_ABNORMAL_BAD, 3, 0.05);
    test_adpi_close(&s.a);
}

static void test_cycles_without_energy_are_skipped(void **state)
{
    (void)state;
    struct stream s;
    stream_open(&s, NULL, "cpu.user_s", "node.energy_j", VIGIL_METRIC_MEASURED);
    for (int i = 0; i < 10; i++) {
        normal(&s, i % 2 == 0 ? 1.0 : 3.0);
        /* No energy: nothing to judge, nothing learned. */
        assert_int_equal(stream_cycle(&s, 50, 0)->len, 0);
    }
    abnormal(&s, 5.171875, VIGIL_HEALTH_ABNORMAL_GOOD, 3, 0.05);
    test_adpi_close(&s.a);
}

static void test_reconfigure_keeps_the_mean(void **state)
{
    (void)state;
    struct stream s;
    stream_open(&s, NULL, "cpu.user_s", "node.energy_j", VIGIL_METRIC_MEASURED);
    stabilise(&s);
    normal(&s, 3.5);

    /* k = 1 from the next cycle on, against the mean learned so far: 4 is
     * within mean + 3σ (5.43…), beyond mean + σ (3.23…). */
    test_adpi_reconfigure_ok(&s.a, "k = 1\n");
    const struct vigil_issue *issue = abnormal(&s, 4, VIGIL_HEALTH_ABNORMAL_GOOD, 1, 0.05);
    test_assert_contains(issue->message, "over 11 cycles, k 1,");
    test_adpi_close(&s.a);
}

/* vigil's estimate follows CPU load: CPU seconds per estimated joule
 * measure load, so by default they are not judged at all. */
static void test_estimated_energy_is_not_judged_by_default(void **state)
{
    (void)state;
    struct stream s;
    stream_open(&s, NULL, "process.cpu_s", "process.energy_j", VIGIL_METRIC_ESTIMATED);
    for (guint i = 0; i < 10; i++)
        assert_int_equal(stream_cycle(&s, i % 2 ? 3 : 1, 1)->len, 0);
    assert_int_equal(stream_cycle(&s, 5.171875, 1)->len, 0);
    assert_int_equal(stream_cycle(&s, 0.01, 1)->len, 0);
    test_adpi_close(&s.a);
}

static void test_estimated_energy_is_said(void **state)
{
    (void)state;
    struct stream s;
    stream_open(&s, "judge_estimated = true\n", "process.cpu_s", "process.energy_j",
                VIGIL_METRIC_ESTIMATED);
    stabilise(&s);
    const struct vigil_issue *issue = abnormal(&s, 5.171875, VIGIL_HEALTH_ABNORMAL_GOOD, 3, 0.05);
    test_assert_contains(issue->message, "5.17188 CPU s per J (estimated energy), more work");
    test_adpi_close(&s.a);
}

static void test_out_of_range_values_are_refused(void **state)
{
    (void)state;
    test_adpi_assert_refused("energy-efficiency", "k = -1\n", "[adpi.energy-efficiency] k");
    test_adpi_assert_refused("energy-efficiency", "stabilisation_cycles = 1\n",
                             "[adpi.energy-efficiency] stabilisation_cycles");
}

TEST_MAIN(cmocka_unit_test(test_the_descriptor),
          cmocka_unit_test(test_just_above_mean_plus_k_sigma_is_abnormal_good),
          cmocka_unit_test(test_just_below_mean_minus_k_sigma_is_abnormal_bad),
          cmocka_unit_test(test_a_steady_baseline_needs_the_relative_deviation),
          cmocka_unit_test(test_cycles_without_energy_are_skipped),
          cmocka_unit_test(test_reconfigure_keeps_the_mean),
          cmocka_unit_test(test_estimated_energy_is_not_judged_by_default),
          cmocka_unit_test(test_estimated_energy_is_said),
          cmocka_unit_test(test_out_of_range_values_are_refused))
