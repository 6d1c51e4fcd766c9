/* The Fluid model's fit (cli/fluid_model.c): runs and per-second points
 * made from known parameters give those parameters back; the least energy
 * and E·D are where an independent search finds them; bad input is an
 * error naming what is wrong. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fluid_model.h"
#include "test_main.h"

#define GHZ 1e9

/* The parameters the synthetic runs are made from. */
struct truth {
    double max_frequency_hz, duration_at_max_s, alpha, static_power_w, dynamic_power_w, exponent;
};

static const struct truth truth = {
    .max_frequency_hz = 3.0 * GHZ,
    .duration_at_max_s = 100.0,
    .alpha = 0.8,
    .static_power_w = 100.0,
    .dynamic_power_w = 200.0,
    .exponent = 2.3714, /* off the fit's 0.01 grid on purpose */
};

static double true_duration(const struct truth *t, double f)
{
    return ((1 - t->alpha) + t->alpha * t->max_frequency_hz / f) * t->duration_at_max_s;
}

static double true_power(const struct truth *t, double f)
{
    return t->static_power_w + t->dynamic_power_w * pow(f / t->max_frequency_hz, t->exponent);
}

static struct vigil_fluid_run run_at(const struct truth *t, double f)
{
    return (struct vigil_fluid_run){f, true_duration(t, f), true_power(t, f)};
}

static void assert_close(double got, double want, double relative)
{
    if (!(fabs(got - want) <= relative * fmax(fabs(want), 1e-12)))
        fail_msg("got %.12g, want %.12g (relative %.3g)", got, want, relative);
}

static void assert_error(GError *error, int code, const char *words)
{
    assert_non_null(error);
    if (error->domain != VIGIL_FLUID_ERROR || error->code != code)
        fail_msg("error %d \"%s\", want code %d", error->code, error->message, code);
    if (strstr(error->message, words) == NULL)
        fail_msg("\"%s\" does not say \"%s\"", error->message, words);
}

/* The time fit of two runs made from `t`, at `first` and `second` Hz, in
 * that order: the duration at the top frequency and α. */
static void fit_time_of(const struct truth *t, double first, double second, double *duration,
                        double *alpha)
{
    struct vigil_fluid_run a = run_at(t, first), b = run_at(t, second);
    GError *error = NULL;
    if (!vigil_fluid_fit_time(&a, &b, t->max_frequency_hz, 100e6, duration, alpha, &error))
        fail_msg("the time fit of runs at %g and %g Hz fails: %s", first, second, error->message);
}

static void test_two_runs_give_alpha_and_duration_exactly(void **state)
{
    (void)state;
    double duration = 0, alpha = 0;
    fit_time_of(&truth, 2.4 * GHZ, 1.6 * GHZ, &duration, &alpha);
    assert_close(duration, truth.duration_at_max_s, 1e-12);
    assert_close(alpha, truth.alpha, 1e-12);
    /* The order of the runs does not matter; nor does α at its ends. */
    const double alphas[] = {0.0, 0.35, 1.0};
    for (size_t i = 0; i < G_N_ELEMENTS(alphas); i++) {
        struct truth t = truth;
        t.alpha = alphas[i];
        fit_time_of(&t, 3.0 * GHZ, 1.2 * GHZ, &duration, &alpha);
        assert_close(duration, t.duration_at_max_s, 1e-12);
        assert_true(fabs(alpha - t.alpha) < 1e-12);
    }
    /* Equal times: α is 0, printed as 0, not -0. */
    struct vigil_fluid_run a = {1.8 * GHZ, 120, 300}, b = {2.4 * GHZ, 120, 302};
    GError *error = NULL;
    assert_true(vigil_fluid_fit_time(&a, &b, 3 * GHZ, 100e6, &duration, &alpha, &error));
    assert_true(alpha == 0 && !signbit(alpha));
    assert_close(duration, 120, 1e-12);
}

static void test_fixed_exponent_gives_static_and_dynamic_power(void **state)
{
    (void)state;
    struct truth t = truth;
    t.exponent = 3;
    struct vigil_fluid_run a = run_at(&t, 2.4 * GHZ), b = run_at(&t, 1.6 * GHZ);
    double fixed = 0, dynamic = 0;
    GError *error = NULL;
    assert_true(
        vigil_fluid_fit_power_fixed(&a, &b, t.max_frequency_hz, 3.0, &fixed, &dynamic, &error));
    assert_close(fixed, t.static_power_w, 1e-12);
    assert_close(dynamic, t.dynamic_power_w, 1e-12);
}

/* Per-second points at `n_frequencies` frequencies from 1.2 GHz up, each
 * `repeat` times. */
static GArray *points_of(const struct truth *t, int n_frequencies, int repeat)
{
    GArray *points = g_array_new(FALSE, FALSE, sizeof(struct vigil_fluid_point));
    for (int r = 0; r < repeat; r++)
        for (int i = 0; i < n_frequencies; i++) {
            double f = (1.2 + 0.3 * i) * GHZ;
            struct vigil_fluid_point p = {f, true_power(t, f)};
            g_array_append_val(points, p);
        }
    return points;
}

static void test_points_at_many_frequencies_give_the_exponent(void **state)
{
    (void)state;
    const double exponents[] = {truth.exponent, 1.5, 3.0, 4.213};
    for (size_t i = 0; i < G_N_ELEMENTS(exponents); i++) {
        struct truth t = truth;
        t.exponent = exponents[i];
        GArray *points = points_of(&t, 7, 3);
        double fixed = 0, dynamic = 0, exponent = 0, rms = -1;
        GError *error = NULL;
        assert_true(vigil_fluid_fit_power_points((struct vigil_fluid_point *)points->data,
                                                 points->len, t.max_frequency_hz, &fixed, &dynamic,
                                                 &exponent, &rms, &error));
        assert_close(exponent, t.exponent, 1e-6);
        assert_close(fixed, t.static_power_w, 1e-5);
        assert_close(dynamic, t.dynamic_power_w, 1e-5);
        assert_true(rms < 1e-4);
        g_array_unref(points);
    }
}

static void test_whole_fit_fits_the_exponent_only_when_it_can(void **state)
{
    (void)state;
    GArray *points = points_of(&truth, 5, 2);
    struct vigil_fluid_input input = {
        .runs = {run_at(&truth, 2.4 * GHZ), run_at(&truth, 1.5 * GHZ)},
        .max_frequency_hz = truth.max_frequency_hz,
        .frequency_step_hz = 100e6,
        .default_exponent = 3.0,
        .points = (const struct vigil_fluid_point *)points->data,
        .n_points = points->len,
    };
    struct vigil_fluid_model model;
    GError *error = NULL;
    assert_true(vigil_fluid_fit(&input, &model, &error));
    assert_true(model.exponent_fitted);
    assert_int_equal(model.distinct_frequencies, 5);
    assert_int_equal(model.points_used, 10);
    assert_close(model.exponent, truth.exponent, 1e-6);
    assert_close(model.alpha, truth.alpha, 1e-12);
    assert_close(model.duration_at_max_s, truth.duration_at_max_s, 1e-12);
    g_array_unref(points);

    /* Points at the two runs' frequencies only: c is the default, and
     * P_static, P_dyn come from the runs. */
    struct truth t = truth;
    t.exponent = 3.0;
    input.runs[0] = run_at(&t, 2.4 * GHZ);
    input.runs[1] = run_at(&t, 1.5 * GHZ);
    struct vigil_fluid_point two[] = {{2.4 * GHZ, input.runs[0].power_w},
                                      {2.4 * GHZ + 3e6, input.runs[0].power_w},
                                      {1.5 * GHZ, input.runs[1].power_w}};
    input.points = two;
    input.n_points = G_N_ELEMENTS(two);
    assert_true(vigil_fluid_fit(&input, &model, &error));
    assert_false(model.exponent_fitted);
    assert_int_equal(model.distinct_frequencies, 2);
    assert_close(model.exponent, 3.0, 0);
    assert_close(model.static_power_w, t.static_power_w, 1e-12);
    assert_close(model.dynamic_power_w, t.dynamic_power_w, 1e-12);
    assert_string_equal(model.exponent_note, "");
    /* Points at four frequencies whose power falls with the frequency: c
     * stays fixed, and the note says why. */
    struct vigil_fluid_point falling[] = {
        {1.5 * GHZ, 300}, {1.8 * GHZ, 250}, {2.1 * GHZ, 200}, {2.4 * GHZ, 150}};
    input.points = falling;
    input.n_points = G_N_ELEMENTS(falling);
    assert_true(vigil_fluid_fit(&input, &model, &error));
    assert_false(model.exponent_fitted);
    assert_int_equal(model.distinct_frequencies, 4);
    assert_non_null(strstr(model.exponent_note, "did not rise with the frequency"));
    assert_close(model.static_power_w, t.static_power_w, 1e-12);
    /* And the model predicts the truth back. */
    for (double f = 1.2 * GHZ; f <= 3.0 * GHZ; f += 0.1 * GHZ) {
        assert_close(vigil_fluid_duration_s(&model, f), true_duration(&t, f), 1e-12);
        assert_close(vigil_fluid_power_w(&model, f), true_power(&t, f), 1e-12);
    }
}

static void test_least_energy_and_energy_delay_are_found(void **state)
{
    (void)state;
    /* α 0.8, c 3: E ∝ (100 + 200x³)(0.2 + 0.8/x), x = f/F_max, least at
     * 3x⁴ + 8x³ = 2, x ≈ 0.589: 1.767 GHz, so 1.8 GHz of the 100 MHz steps. */
    struct vigil_fluid_model model = {
        .max_frequency_hz = 3.0 * GHZ,
        .duration_at_max_s = 100,
        .alpha = 0.8,
        .static_power_w = 100,
        .dynamic_power_w = 200,
        .exponent = 3,
    };
    GError *error = NULL;
    GArray *frequencies = vigil_fluid_frequencies(1.2 * GHZ, 3.0 * GHZ, 100e6, &error);
    assert_non_null(frequencies);
    assert_int_equal(frequencies->len, 19);
    struct vigil_fluid_prediction out[19];
    size_t least_energy = 99, least_energy_delay = 99;
    vigil_fluid_predict(&model, &g_array_index(frequencies, double, 0), frequencies->len, out,
                        &least_energy, &least_energy_delay);
    assert_close(out[least_energy].frequency_hz, 1.8 * GHZ, 1e-12);
    /* An independent search over the same frequencies. */
    size_t want_energy = 0, want_delay = 0;
    double best_energy = INFINITY, best_delay = INFINITY;
    for (size_t i = 0; i < frequencies->len; i++) {
        double f = g_array_index(frequencies, double, i), x = f / model.max_frequency_hz;
        double time = (0.2 + 0.8 / x) * 100, energy = (100 + 200 * x * x * x) * time;
        assert_close(out[i].energy_j, energy, 1e-12);
        assert_close(out[i].energy_delay_js, energy * time, 1e-12);
        if (energy < best_energy) {
            best_energy = energy;
            want_energy = i;
        }
        if (energy * time < best_delay) {
            best_delay = energy * time;
            want_delay = i;
        }
    }
    assert_int_equal(least_energy, want_energy);
    assert_int_equal(least_energy_delay, want_delay);
    /* E·D weighs time more: its best is at a higher frequency. */
    assert_true(out[least_energy_delay].frequency_hz > out[least_energy].frequency_hz);
    g_array_unref(frequencies);

    /* A tie goes to the first (lower) frequency: with α = 0 and no dynamic
     * power every frequency costs the same. */
    model.alpha = 0;
    model.dynamic_power_w = 0;
    double flat[] = {1e9, 2e9, 3e9};
    vigil_fluid_predict(&model, flat, 3, out, &least_energy, &least_energy_delay);
    assert_int_equal(least_energy, 0);
    assert_int_equal(least_energy_delay, 0);
}

static void test_frequencies_the_node_offers(void **state)
{
    (void)state;
    GError *error = NULL;
    GArray *f = vigil_fluid_frequencies(1.25 * GHZ, 3.0 * GHZ, 100e6, &error);
    assert_int_equal(f->len, 19); /* 1.25 … 2.95, then 3.0 itself */
    assert_close(g_array_index(f, double, 0), 1.25 * GHZ, 1e-12);
    assert_close(g_array_index(f, double, 17), 2.95 * GHZ, 1e-12);
    assert_close(g_array_index(f, double, 18), 3.0 * GHZ, 1e-12);
    g_array_unref(f);
    f = vigil_fluid_frequencies(2 * GHZ, 2 * GHZ, 100e6, &error);
    assert_int_equal(f->len, 1);
    g_array_unref(f);
    assert_null(vigil_fluid_frequencies(3 * GHZ, 1 * GHZ, 100e6, &error));
    assert_error(error, VIGIL_FLUID_ERROR_INPUT, "not a range");
    g_clear_error(&error);
    assert_null(vigil_fluid_frequencies(1 * GHZ, 3 * GHZ, 0, &error));
    assert_error(error, VIGIL_FLUID_ERROR_INPUT, "step 0 Hz");
    g_clear_error(&error);
    assert_null(vigil_fluid_frequencies(NAN, 3 * GHZ, 100e6, &error));
    assert_error(error, VIGIL_FLUID_ERROR_INPUT, "nan Hz");
    g_clear_error(&error);
}

static void expect_time_error(struct vigil_fluid_run a, struct vigil_fluid_run b,
                              double max_frequency_hz, int code, const char *words)
{
    double duration = -1, alpha = -1;
    GError *error = NULL;
    assert_false(vigil_fluid_fit_time(&a, &b, max_frequency_hz, 100e6, &duration, &alpha, &error));
    assert_error(error, code, words);
    assert_true(duration == -1 && alpha == -1);
    g_error_free(error);
}

static void test_degenerate_inputs_are_errors_naming_the_problem(void **state)
{
    (void)state;
    struct vigil_fluid_run a = run_at(&truth, 2.4 * GHZ), b = run_at(&truth, 1.6 * GHZ);
    double F = truth.max_frequency_hz;
    /* The same frequency, exactly or within half a step. */
    expect_time_error(a, a, F, VIGIL_FLUID_ERROR_DEGENERATE, "same frequency");
    struct vigil_fluid_run near = run_at(&truth, 2.43 * GHZ);
    expect_time_error(a, near, F, VIGIL_FLUID_ERROR_DEGENERATE, "less than 50 MHz apart");
    /* Above F_max. */
    struct vigil_fluid_run above = a;
    above.frequency_hz = 3.3 * GHZ;
    expect_time_error(above, b, F, VIGIL_FLUID_ERROR_INPUT,
                      "the first run: frequency 3.3000 GHz is above F_max 3.0000 GHz");
    /* Zero and NaN. */
    struct vigil_fluid_run bad = b;
    bad.duration_s = 0;
    expect_time_error(a, bad, F, VIGIL_FLUID_ERROR_INPUT, "the second run: duration is 0 s");
    bad = b;
    bad.power_w = NAN;
    expect_time_error(a, bad, F, VIGIL_FLUID_ERROR_INPUT, "the second run: power is nan W");
    bad = b;
    bad.frequency_hz = 0;
    expect_time_error(a, bad, F, VIGIL_FLUID_ERROR_INPUT, "frequency is 0 Hz");
    expect_time_error(a, b, 0, VIGIL_FLUID_ERROR_INPUT, "F_max is 0 Hz");
    expect_time_error(a, b, NAN, VIGIL_FLUID_ERROR_INPUT, "F_max is nan Hz");
    /* The faster clock took longer: α < 0. */
    struct vigil_fluid_run slower = a;
    slower.duration_s = b.duration_s * 1.1;
    expect_time_error(slower, b, F, VIGIL_FLUID_ERROR_MODEL, "the faster clock took longer");

    /* Power that falls with the frequency. */
    double fixed = 0, dynamic = 0, exponent = 0, rms = 0;
    GError *error = NULL;
    struct vigil_fluid_run falling = a;
    falling.power_w = b.power_w / 2;
    assert_false(vigil_fluid_fit_power_fixed(&falling, &b, F, 3, &fixed, &dynamic, &error));
    assert_error(error, VIGIL_FLUID_ERROR_MODEL, "did not rise with the frequency");
    g_clear_error(&error);
    assert_false(vigil_fluid_fit_power_fixed(&a, &b, F, 9, &fixed, &dynamic, &error));
    assert_error(error, VIGIL_FLUID_ERROR_INPUT, "c = 9 is outside [0.5, 6]");
    g_clear_error(&error);

    /* Points: one frequency, too few, bad values. */
    static const struct vigil_fluid_point one[] = {{2e9, 150}, {2e9, 151}, {2e9, 152}};
    static const struct vigil_fluid_point nan_point[] = {{1e9, 150}, {2e9, NAN}, {3e9, 152}};
    static const struct vigil_fluid_point above_max[] = {{1e9, 150}, {2e9, 160}, {3.5e9, 170}};
    static const struct {
        const struct vigil_fluid_point *points;
        size_t n;
        int code;
        const char *words;
    } bad_points[] = {
        {one, 3, VIGIL_FLUID_ERROR_DEGENERATE, "all have one frequency"},
        {one, 2, VIGIL_FLUID_ERROR_DEGENERATE, "needs three at least"},
        {nan_point, 3, VIGIL_FLUID_ERROR_INPUT, "point 1: power is nan W"},
        {above_max, 3, VIGIL_FLUID_ERROR_INPUT, "point 2: frequency 3.5000 GHz is above F_max"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad_points); i++) {
        assert_false(vigil_fluid_fit_power_points(bad_points[i].points, bad_points[i].n, F, &fixed,
                                                  &dynamic, &exponent, &rms, &error));
        assert_error(error, bad_points[i].code, bad_points[i].words);
        g_clear_error(&error);
    }

    /* The whole fit refuses a default exponent out of range. */
    struct vigil_fluid_input input = {
        .runs = {a, b}, .max_frequency_hz = F, .frequency_step_hz = 100e6, .default_exponent = 0};
    struct vigil_fluid_model model;
    assert_false(vigil_fluid_fit(&input, &model, &error));
    assert_error(error, VIGIL_FLUID_ERROR_INPUT, "c = 0 is outside");
    g_clear_error(&error);
}

static void test_distinct_frequencies_are_counted_to_the_step(void **state)
{
    (void)state;
    struct vigil_fluid_point p[] = {{1.2e9, 1},  {1.21e9, 1}, {1.8e9, 1},
                                    {1.79e9, 1}, {2.4e9, 1},  {NAN, 1}};
    assert_int_equal(vigil_fluid_distinct_frequencies(p, G_N_ELEMENTS(p), 100e6), 3);
    assert_int_equal(vigil_fluid_distinct_frequencies(p, G_N_ELEMENTS(p), 0), 5);
    assert_int_equal(vigil_fluid_distinct_frequencies(p, 0, 100e6), 0);
}

TEST_MAIN(cmocka_unit_test(test_two_runs_give_alpha_and_duration_exactly),
          cmocka_unit_test(test_fixed_exponent_gives_static_and_dynamic_power),
          cmocka_unit_test(test_points_at_many_frequencies_give_the_exponent),
          cmocka_unit_test(test_whole_fit_fits_the_exponent_only_when_it_can),
          cmocka_unit_test(test_least_energy_and_energy_delay_are_found),
          cmocka_unit_test(test_frequencies_the_node_offers),
          cmocka_unit_test(test_degenerate_inputs_are_errors_naming_the_problem),
          cmocka_unit_test(test_distinct_frequencies_are_counted_to_the_step))
