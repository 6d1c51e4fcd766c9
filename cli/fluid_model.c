/* vigil — the Fluid model and its fit (see fluid_model.h). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#include "fluid_model.h"

GQuark vigil_fluid_error_quark(void)
{
    return g_quark_from_static_string("vigil-fluid-error-quark");
}

/* A measured mean frequency may sit a hair above F_max (rounding of a
 * mean of integers in kHz); more than this is a real error. */
#define ABOVE_MAX_TOLERANCE 1e-6
/* The grid c is searched on before the search is refined around its best. */
#define EXPONENT_GRID_STEP 0.01

G_GNUC_PRINTF(3, 4)
static gboolean fail(GError **error, int code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_propagate_error(error, g_error_new_valist(VIGIL_FLUID_ERROR, code, format, args));
    va_end(args);
    return FALSE;
}

static gboolean check_max_frequency(double max_frequency_hz, GError **error)
{
    if (!isfinite(max_frequency_hz) || max_frequency_hz <= 0)
        return fail(error, VIGIL_FLUID_ERROR_INPUT, "F_max is %g Hz: it must be above 0",
                    max_frequency_hz);
    return TRUE;
}

static gboolean check_frequency(const char *what, double frequency_hz, double max_frequency_hz,
                                GError **error)
{
    if (!isfinite(frequency_hz) || frequency_hz <= 0)
        return fail(error, VIGIL_FLUID_ERROR_INPUT, "%s: frequency is %g Hz: it must be above 0",
                    what, frequency_hz);
    if (frequency_hz > max_frequency_hz * (1 + ABOVE_MAX_TOLERANCE))
        return fail(error, VIGIL_FLUID_ERROR_INPUT,
                    "%s: frequency %.4f GHz is above F_max %.4f GHz: the model holds up to F_max",
                    what, frequency_hz / 1e9, max_frequency_hz / 1e9);
    return TRUE;
}

static gboolean check_run(const char *what, const struct vigil_fluid_run *run,
                          double max_frequency_hz, GError **error)
{
    if (!check_frequency(what, run->frequency_hz, max_frequency_hz, error))
        return FALSE;
    if (!isfinite(run->duration_s) || run->duration_s <= 0)
        return fail(error, VIGIL_FLUID_ERROR_INPUT, "%s: duration is %g s: it must be above 0",
                    what, run->duration_s);
    if (!isfinite(run->power_w) || run->power_w <= 0)
        return fail(error, VIGIL_FLUID_ERROR_INPUT, "%s: power is %g W: it must be above 0", what,
                    run->power_w);
    return TRUE;
}

static gboolean check_two_frequencies(const struct vigil_fluid_run *a,
                                      const struct vigil_fluid_run *b, double frequency_step_hz,
                                      GError **error)
{
    double apart = fabs(a->frequency_hz - b->frequency_hz);
    double least = frequency_step_hz > 0 ? frequency_step_hz / 2 : 0;
    if (apart == 0 || apart < least)
        return fail(error, VIGIL_FLUID_ERROR_DEGENERATE,
                    "the two runs ran at the same frequency (%.4f GHz and %.4f GHz, less than "
                    "%.0f MHz apart): two frequencies are needed to tell how time and power "
                    "change with it",
                    a->frequency_hz / 1e9, b->frequency_hz / 1e9, least / 1e6);
    return TRUE;
}

gboolean vigil_fluid_fit_time(const struct vigil_fluid_run *a, const struct vigil_fluid_run *b,
                              double max_frequency_hz, double frequency_step_hz,
                              double *duration_at_max_s, double *alpha, GError **error)
{
    if (!check_max_frequency(max_frequency_hz, error) ||
        !check_run("the first run", a, max_frequency_hz, error) ||
        !check_run("the second run", b, max_frequency_hz, error) ||
        !check_two_frequencies(a, b, frequency_step_hz, error))
        return FALSE;
    /* D = D(F_max)·(1 − α) + D(F_max)·α·x with x = F_max/f: a line in x. */
    double xa = max_frequency_hz / a->frequency_hz, xb = max_frequency_hz / b->frequency_hz;
    double slope = (a->duration_s - b->duration_s) / (xa - xb);
    double at_max = a->duration_s - slope * (xa - 1);
    if (!(at_max > 0))
        return fail(error, VIGIL_FLUID_ERROR_MODEL,
                    "the runs' times (%.3f s at %.4f GHz, %.3f s at %.4f GHz) extrapolate to "
                    "%.3f s at F_max: they do not follow the model",
                    a->duration_s, a->frequency_hz / 1e9, b->duration_s, b->frequency_hz / 1e9,
                    at_max);
    double share = slope / at_max;
    if (share < -1e-9 || share > 1 + 1e-9)
        return fail(
            error, VIGIL_FLUID_ERROR_MODEL,
            "α = %.4f is outside [0, 1]: the run at %.4f GHz took %.3f s and the one at "
            "%.4f GHz %.3f s, %s; the runs do not follow the model (another input, "
            "other load on the node, or noise larger than the effect)",
            share, a->frequency_hz / 1e9, a->duration_s, b->frequency_hz / 1e9, b->duration_s,
            share < 0 ? "so the faster clock took longer" : "more than the clock ratio explains");
    *duration_at_max_s = at_max;
    /* Within the tolerance, onto [0, 1]; and +0, not the −0 equal times give. */
    *alpha = share <= 0 ? 0.0 : share >= 1 ? 1.0 : share;
    return TRUE;
}

static gboolean check_exponent(double exponent, GError **error)
{
    if (!isfinite(exponent) || exponent < VIGIL_FLUID_EXPONENT_MIN ||
        exponent > VIGIL_FLUID_EXPONENT_MAX)
        return fail(error, VIGIL_FLUID_ERROR_INPUT, "the exponent c = %g is outside [%g, %g]",
                    exponent, VIGIL_FLUID_EXPONENT_MIN, VIGIL_FLUID_EXPONENT_MAX);
    return TRUE;
}

static gboolean check_power(double static_power_w, double dynamic_power_w, double exponent,
                            GError **error)
{
    if (!(dynamic_power_w > 0))
        return fail(error, VIGIL_FLUID_ERROR_MODEL,
                    "P_dyn = %.3f W: the power did not rise with the frequency, so the model "
                    "cannot tell what a lower frequency saves",
                    dynamic_power_w);
    if (static_power_w < 0)
        return fail(error, VIGIL_FLUID_ERROR_MODEL,
                    "P_static = %.3f W is negative: the power rose faster with the frequency "
                    "than c = %.3f allows (another exponent may fit)",
                    static_power_w, exponent);
    return TRUE;
}

gboolean vigil_fluid_fit_power_fixed(const struct vigil_fluid_run *a,
                                     const struct vigil_fluid_run *b, double max_frequency_hz,
                                     double exponent, double *static_power_w,
                                     double *dynamic_power_w, GError **error)
{
    if (!check_max_frequency(max_frequency_hz, error) || !check_exponent(exponent, error) ||
        !check_run("the first run", a, max_frequency_hz, error) ||
        !check_run("the second run", b, max_frequency_hz, error) ||
        !check_two_frequencies(a, b, 0, error))
        return FALSE;
    double ya = pow(a->frequency_hz / max_frequency_hz, exponent);
    double yb = pow(b->frequency_hz / max_frequency_hz, exponent);
    double dynamic = (a->power_w - b->power_w) / (ya - yb);
    double fixed = a->power_w - dynamic * ya;
    if (!check_power(fixed, dynamic, exponent, error))
        return FALSE;
    *static_power_w = fixed;
    *dynamic_power_w = dynamic;
    return TRUE;
}

/* The linear least squares of P on (f/F_max)^c: its residual sum of
 * squares, and P_static, P_dyn when the pointers are not NULL; NAN when
 * all points have one frequency. */
static double power_residual(const struct vigil_fluid_point *points, size_t n,
                             double max_frequency_hz, double exponent, double *static_power_w,
                             double *dynamic_power_w)
{
    double mean_y = 0, mean_p = 0;
    for (size_t i = 0; i < n; i++) {
        mean_y += pow(points[i].frequency_hz / max_frequency_hz, exponent);
        mean_p += points[i].power_w;
    }
    mean_y /= (double)n;
    mean_p /= (double)n;
    double syy = 0, syp = 0, spp = 0;
    for (size_t i = 0; i < n; i++) {
        double dy = pow(points[i].frequency_hz / max_frequency_hz, exponent) - mean_y;
        double dp = points[i].power_w - mean_p;
        syy += dy * dy;
        syp += dy * dp;
        spp += dp * dp;
    }
    if (!(syy > 0))
        return NAN;
    double slope = syp / syy;
    if (static_power_w != NULL)
        *static_power_w = mean_p - slope * mean_y;
    if (dynamic_power_w != NULL)
        *dynamic_power_w = slope;
    return fmax(spp - syp * slope, 0);
}

gboolean vigil_fluid_fit_power_points(const struct vigil_fluid_point *points, size_t n,
                                      double max_frequency_hz, double *static_power_w,
                                      double *dynamic_power_w, double *exponent, double *rms_w,
                                      GError **error)
{
    if (!check_max_frequency(max_frequency_hz, error))
        return FALSE;
    if (n < 3)
        return fail(error, VIGIL_FLUID_ERROR_DEGENERATE,
                    "%zu per-second points: fitting P_static, P_dyn and c needs three at least", n);
    for (size_t i = 0; i < n; i++) {
        char *what = g_strdup_printf("point %zu", i);
        gboolean ok = check_frequency(what, points[i].frequency_hz, max_frequency_hz, error);
        if (ok && (!isfinite(points[i].power_w) || points[i].power_w <= 0))
            ok = fail(error, VIGIL_FLUID_ERROR_INPUT, "%s: power is %g W: it must be above 0", what,
                      points[i].power_w);
        g_free(what);
        if (!ok)
            return FALSE;
    }
    /* The grid first, then a golden-section search between its best's
     * neighbours: the residual is smooth and has one minimum there. */
    double best_c = NAN, best_sse = INFINITY;
    int steps =
        (int)lround((VIGIL_FLUID_EXPONENT_MAX - VIGIL_FLUID_EXPONENT_MIN) / EXPONENT_GRID_STEP);
    for (int k = 0; k <= steps; k++) {
        double c = VIGIL_FLUID_EXPONENT_MIN + k * EXPONENT_GRID_STEP;
        double sse = power_residual(points, n, max_frequency_hz, c, NULL, NULL);
        if (isnan(sse))
            return fail(error, VIGIL_FLUID_ERROR_DEGENERATE,
                        "the per-second points all have one frequency: c cannot be fitted");
        if (sse < best_sse) {
            best_sse = sse;
            best_c = c;
        }
    }
    double lo = fmax(best_c - EXPONENT_GRID_STEP, VIGIL_FLUID_EXPONENT_MIN);
    double hi = fmin(best_c + EXPONENT_GRID_STEP, VIGIL_FLUID_EXPONENT_MAX);
    const double golden = (sqrt(5.0) - 1) / 2;
    double x1 = hi - golden * (hi - lo), x2 = lo + golden * (hi - lo);
    double f1 = power_residual(points, n, max_frequency_hz, x1, NULL, NULL);
    double f2 = power_residual(points, n, max_frequency_hz, x2, NULL, NULL);
    for (int i = 0; i < 80 && hi - lo > 1e-12; i++) {
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - golden * (hi - lo);
            f1 = power_residual(points, n, max_frequency_hz, x1, NULL, NULL);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + golden * (hi - lo);
            f2 = power_residual(points, n, max_frequency_hz, x2, NULL, NULL);
        }
    }
    double refined = (lo + hi) / 2;
    double refined_sse = power_residual(points, n, max_frequency_hz, refined, NULL, NULL);
    if (refined_sse <= best_sse) {
        best_c = refined;
        best_sse = refined_sse;
    }
    if (best_c <= VIGIL_FLUID_EXPONENT_MIN + EXPONENT_GRID_STEP / 2 ||
        best_c >= VIGIL_FLUID_EXPONENT_MAX - EXPONENT_GRID_STEP / 2)
        return fail(error, VIGIL_FLUID_ERROR_MODEL,
                    "the best c is at the edge of [%g, %g]: the per-second power does not follow "
                    "the model",
                    VIGIL_FLUID_EXPONENT_MIN, VIGIL_FLUID_EXPONENT_MAX);
    double fixed = 0, dynamic = 0;
    power_residual(points, n, max_frequency_hz, best_c, &fixed, &dynamic);
    if (!check_power(fixed, dynamic, best_c, error))
        return FALSE;
    *static_power_w = fixed;
    *dynamic_power_w = dynamic;
    *exponent = best_c;
    *rms_w = sqrt(best_sse / (double)n);
    return TRUE;
}

static int compare_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

unsigned vigil_fluid_distinct_frequencies(const struct vigil_fluid_point *points, size_t n,
                                          double step_hz)
{
    if (n == 0)
        return 0;
    double unit = step_hz > 0 ? step_hz : 1;
    long *levels = g_new(long, n);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(points[i].frequency_hz))
            levels[m++] = lround(points[i].frequency_hz / unit);
    qsort(levels, m, sizeof *levels, compare_long);
    unsigned distinct = 0;
    for (size_t i = 0; i < m; i++)
        if (i == 0 || levels[i] != levels[i - 1])
            distinct++;
    g_free(levels);
    return distinct;
}

gboolean vigil_fluid_fit(const struct vigil_fluid_input *input, struct vigil_fluid_model *model,
                         GError **error)
{
    struct vigil_fluid_model m = {.max_frequency_hz = input->max_frequency_hz};
    if (!check_exponent(input->default_exponent, error) ||
        !vigil_fluid_fit_time(&input->runs[0], &input->runs[1], input->max_frequency_hz,
                              input->frequency_step_hz, &m.duration_at_max_s, &m.alpha, error))
        return FALSE;
    if (input->points != NULL)
        m.distinct_frequencies = vigil_fluid_distinct_frequencies(input->points, input->n_points,
                                                                  input->frequency_step_hz);
    if (m.distinct_frequencies > 2) {
        /* Noisy points that straddle a step look like three frequencies:
         * their failure leaves c fixed, said, rather than no advice. */
        GError *why = NULL;
        m.exponent_fitted = vigil_fluid_fit_power_points(
            input->points, input->n_points, input->max_frequency_hz, &m.static_power_w,
            &m.dynamic_power_w, &m.exponent, &m.power_rms_w, &why);
        if (m.exponent_fitted) {
            m.points_used = input->n_points;
        } else {
            g_snprintf(m.exponent_note, sizeof m.exponent_note, "%s", why->message);
            g_error_free(why);
        }
    }
    if (!m.exponent_fitted) {
        m.exponent = input->default_exponent;
        if (!vigil_fluid_fit_power_fixed(&input->runs[0], &input->runs[1], input->max_frequency_hz,
                                         m.exponent, &m.static_power_w, &m.dynamic_power_w, error))
            return FALSE;
    }
    *model = m;
    return TRUE;
}

double vigil_fluid_duration_s(const struct vigil_fluid_model *model, double frequency_hz)
{
    return ((1 - model->alpha) + model->alpha * model->max_frequency_hz / frequency_hz) *
           model->duration_at_max_s;
}

double vigil_fluid_power_w(const struct vigil_fluid_model *model, double frequency_hz)
{
    return model->static_power_w +
           model->dynamic_power_w * pow(frequency_hz / model->max_frequency_hz, model->exponent);
}

GArray *vigil_fluid_frequencies(double min_hz, double max_hz, double step_hz, GError **error)
{
    if (!isfinite(min_hz) || !isfinite(max_hz) || min_hz <= 0 || max_hz < min_hz) {
        fail(error, VIGIL_FLUID_ERROR_INPUT,
             "the frequency range %g Hz to %g Hz is not a range of frequencies", min_hz, max_hz);
        return NULL;
    }
    if (!isfinite(step_hz) || step_hz <= 0 || (max_hz - min_hz) / step_hz > 100000) {
        fail(error, VIGIL_FLUID_ERROR_INPUT,
             "the frequency step %g Hz is not a step from %g Hz to %g Hz", step_hz, min_hz, max_hz);
        return NULL;
    }
    GArray *frequencies = g_array_new(FALSE, FALSE, sizeof(double));
    double slack = step_hz * 1e-6;
    double f = min_hz;
    for (long k = 1; f <= max_hz + slack; k++) {
        g_array_append_val(frequencies, f);
        f = min_hz + (double)k * step_hz;
    }
    double last = g_array_index(frequencies, double, frequencies->len - 1);
    if (last < max_hz - slack)
        g_array_append_val(frequencies, max_hz);
    return frequencies;
}

void vigil_fluid_predict(const struct vigil_fluid_model *model, const double *frequencies_hz,
                         size_t n, struct vigil_fluid_prediction *out, size_t *least_energy,
                         size_t *least_energy_delay)
{
    *least_energy = 0;
    *least_energy_delay = 0;
    for (size_t i = 0; i < n; i++) {
        struct vigil_fluid_prediction *p = &out[i];
        p->frequency_hz = frequencies_hz[i];
        p->duration_s = vigil_fluid_duration_s(model, p->frequency_hz);
        p->power_w = vigil_fluid_power_w(model, p->frequency_hz);
        p->energy_j = p->power_w * p->duration_s;
        p->energy_delay_js = p->energy_j * p->duration_s;
        if (p->energy_j < out[*least_energy].energy_j)
            *least_energy = i;
        if (p->energy_delay_js < out[*least_energy_delay].energy_delay_js)
            *least_energy_delay = i;
    }
}
