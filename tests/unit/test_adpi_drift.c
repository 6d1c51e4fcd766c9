/* Tests of the drift ADPI: a short moving average leaving a long one, at
 * onset only, and windows that survive a reload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_adpi.h"
#include "test_support.h"
#include "test_main.h"

TEST_ADPI_DESCRIPTOR("drift", TEST_ADPI_RECONFIGURE, 0)

#define WINDOWS "metrics = process.rss_bytes\nshort_cycles = 2\nlong_cycles = 4\n"

struct series {
    struct test_adpi a;
    guint32 rss;
    guint64 t_s;
};

static void series_open(struct series *s, const char *lines)
{
    *s = (struct series){0};
    test_adpi_open(&s->a, "drift", lines);
    s->rss = test_adpi_gauge(&s->a, "process.rss_bytes", "bytes");
}

static GArray *series_cycle(struct series *s, double value)
{
    s->t_s++;
    test_adpi_sample(&s->a, s->rss, s->t_s * TEST_S, value);
    return test_adpi_cycle(&s->a, s->t_s * TEST_S);
}

static void quiet(struct series *s, double value)
{
    if (series_cycle(s, value)->len != 0)
        fail_msg("%g in cycle %" G_GUINT64_FORMAT " was judged a drift: %s", value, s->a.cycle - 1,
                 g_array_index(s->a.issues, struct vigil_issue, 0).message);
}

/* One issue: the short mean, and the long one ± max_relative_drift. */
static const struct vigil_issue *drifted(struct series *s, double value, double short_mean,
                                         double long_mean, double max_relative_drift)
{
    GArray *issues = series_cycle(s, value);
    if (issues->len != 1)
        fail_msg("%g gave %u issues, expected one", value, issues->len);
    const struct vigil_issue *issue = &g_array_index(issues, struct vigil_issue, 0);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "process.rss_bytes", short_mean);
    double allowed = max_relative_drift * long_mean;
    test_assert_expected(issue, long_mean - allowed, long_mean + allowed);
    return issue;
}

static void test_a_drift_is_reported_at_onset(void **state)
{
    (void)state;
    struct series s;
    series_open(&s, WINDOWS);
    for (int i = 0; i < 4; i++)
        quiet(&s, 10);
    /* [10 10 10 100]: 55 against 32.5, more than 16.25 away. */
    const struct vigil_issue *issue = drifted(&s, 100, 55, 32.5, 0.5);
    assert_string_equal(issue->message,
                        "process.rss_bytes drifted: 55 bytes over the last 2 cycles against "
                        "32.5 bytes over the last 4; expected within 50 % of the latter");
    /* Still drifting ([10 10 100 100]: 100 against 55): not again. */
    quiet(&s, 100);
    /* [10 100 100 100]: 100 against 77.5, within 38.75: back. */
    quiet(&s, 100);
    quiet(&s, 100);
    /* [100 100 100 10] then [100 100 10 10]: 10 against 55. */
    quiet(&s, 10);
    drifted(&s, 10, 10, 55, 0.5);
    test_adpi_close(&s.a);
}

static void test_nothing_is_judged_before_the_window_is_full(void **state)
{
    (void)state;
    struct series s;
    series_open(&s, WINDOWS);
    quiet(&s, 100);
    quiet(&s, 10);
    /* [100 10 10]: 10 against 40 would be a drift, but the window has 3
     * values of 4. */
    quiet(&s, 10);
    /* [100 10 10 100]: 55 against 55. */
    quiet(&s, 100);
    test_adpi_close(&s.a);
}

static void test_a_counter_drifts_by_its_rate(void **state)
{
    (void)state;
    struct test_adpi a;
    test_adpi_open(&a, "drift", "short_cycles = 1\nlong_cycles = 2\nmax_relative_drift = 0.25\n");
    guint32 cpu = test_adpi_counter(&a, "process.cpu_s", "s");
    guint32 other = test_adpi_counter(&a, "process.disk_read_bytes", "bytes"); /* not listed */
    const double totals[] = {0, 1, 2, 4};
    for (guint i = 0; i < 3; i++) {
        TEST_ADPI_TICK(&a, (i + 1) * TEST_S, {cpu, totals[i]}, {other, 1e6 * i * i});
        test_adpi_cycle_quiet(&a, (i + 1) * TEST_S);
    }
    /* Rates 1, 1, then 2: 2 against 1.5. */
    test_adpi_sample(&a, cpu, 4 * TEST_S, totals[3]);
    const struct vigil_issue *issue = test_adpi_cycle_one(&a, 4 * TEST_S);
    test_assert_issue(issue, VIGIL_HEALTH_ABNORMAL_OTHER, "process.cpu_s", 2);
    test_assert_expected(issue, 1.5 - 0.25 * 1.5, 1.5 + 0.25 * 1.5);
    test_assert_contains(issue->message, "2 s/s over the last 1 cycles against 1.5 s/s");
    test_adpi_close(&a);
}

static void test_shorter_windows_keep_the_newest_values(void **state)
{
    (void)state;
    struct series s;
    series_open(&s, WINDOWS);
    quiet(&s, 1);
    quiet(&s, 2);
    quiet(&s, 3);
    quiet(&s, 4); /* [1 2 3 4]: 3.5 against 2.5, within 1.25 */

    test_adpi_reconfigure_ok(&s.a, "metrics = process.rss_bytes\nshort_cycles = 1\n"
                                   "long_cycles = 2\n");
    /* [4 40]: 40 against 22; had it kept [1 2], it would be [2 40]. */
    drifted(&s, 40, 40, 22, 0.5);
    test_adpi_close(&s.a);
}

static void test_longer_windows_fill_up_first(void **state)
{
    (void)state;
    struct series s;
    series_open(&s, WINDOWS);
    for (int i = 0; i < 4; i++)
        quiet(&s, 10);
    test_adpi_reconfigure_ok(&s.a, "metrics = process.rss_bytes\nshort_cycles = 2\n"
                                   "long_cycles = 6\nmax_relative_drift = 0.25\n");
    /* Five values of six: not judged yet. */
    quiet(&s, 100);
    /* [10 10 10 10 100 100]: 100 against 40. */
    drifted(&s, 100, 100, 40, 0.25);
    test_adpi_close(&s.a);
}

static void test_a_long_window_not_longer_than_the_short_is_refused(void **state)
{
    (void)state;
    test_adpi_assert_refused("drift", "short_cycles = 30\nlong_cycles = 30\n",
                             "[adpi.drift] long_cycles (30) must be greater than "
                             "short_cycles (30)");

    /* A reload that does it is refused, and the windows stay as they were. */
    struct series s;
    series_open(&s, WINDOWS);
    GError *error = NULL;
    assert_false(test_adpi_reconfigure(&s.a, "short_cycles = 9\nlong_cycles = 3\n", &error));
    test_assert_contains(error->message, "long_cycles (3) must be greater than short_cycles (9)");
    g_error_free(error);
    for (int i = 0; i < 4; i++)
        quiet(&s, 10);
    drifted(&s, 100, 55, 32.5, 0.5);
    test_adpi_close(&s.a);
}

static void test_an_out_of_range_value_is_refused(void **state)
{
    (void)state;
    test_adpi_assert_refused("drift", "max_relative_drift = -0.5\n",
                             "[adpi.drift] max_relative_drift");
}

TEST_MAIN(cmocka_unit_test(test_the_descriptor),
          cmocka_unit_test(test_a_drift_is_reported_at_onset),
          cmocka_unit_test(test_nothing_is_judged_before_the_window_is_full),
          cmocka_unit_test(test_a_counter_drifts_by_its_rate),
          cmocka_unit_test(test_shorter_windows_keep_the_newest_values),
          cmocka_unit_test(test_longer_windows_fill_up_first),
          cmocka_unit_test(test_a_long_window_not_longer_than_the_short_is_refused),
          cmocka_unit_test(test_an_out_of_range_value_is_refused))
