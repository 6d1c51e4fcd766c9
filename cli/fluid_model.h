/* vigil — the Fluid model of a program's time and power against the CPU
 * frequency (seed 003), and its fit to measured runs. Pure functions: no
 * database, no output.
 *
 *   D(f) = ((1 − α) + α·F_max/f)·D(F_max)     time: a share α scales with 1/f
 *   P(f) = P_static + P_dyn·(f/F_max)^c        power: c = 3 when V ∝ f, P ∝ V²f
 *   E(f) = P(f)·D(f)                           energy; E·D the energy-delay product
 *
 * Two runs at two frequencies fix D(F_max) and α exactly (D is linear in
 * F_max/f). Power has three unknowns: with per-second (f, P) points at more
 * than two frequencies c is fitted (least squares over c on a grid, linear
 * least squares for P_static and P_dyn at each c), else c is fixed and the
 * two runs fix P_static and P_dyn. */
#ifndef VIGIL_CLI_FLUID_MODEL_H
#define VIGIL_CLI_FLUID_MODEL_H

#include <stddef.h>
#include <glib.h>

#define VIGIL_FLUID_ERROR (vigil_fluid_error_quark())
GQuark vigil_fluid_error_quark(void);
enum {
    VIGIL_FLUID_ERROR_INPUT,      /* a figure is zero, negative, NaN or above F_max */
    VIGIL_FLUID_ERROR_DEGENERATE, /* the inputs cannot determine the model */
    VIGIL_FLUID_ERROR_MODEL,      /* the runs do not follow the model */
};

/* The range c is fitted in, and accepted from the configuration. */
#define VIGIL_FLUID_EXPONENT_MIN 0.5
#define VIGIL_FLUID_EXPONENT_MAX 6.0

/* One run: the mean CPU frequency it ran at, its duration, its mean power. */
struct vigil_fluid_run {
    double frequency_hz;
    double duration_s;
    double power_w;
};

/* One per-second measurement of power at a frequency. */
struct vigil_fluid_point {
    double frequency_hz;
    double power_w;
};

struct vigil_fluid_input {
    struct vigil_fluid_run runs[2];
    double max_frequency_hz; /* F_max */
    /* Frequencies less than this apart count as the same: the node's step
     * (100 MHz) is the finest difference a run can be set to. */
    double frequency_step_hz;
    double default_exponent;                /* c when it cannot be fitted */
    const struct vigil_fluid_point *points; /* may be NULL */
    size_t n_points;
};

struct vigil_fluid_model {
    double max_frequency_hz;
    double duration_at_max_s; /* D(F_max) */
    double alpha;
    double static_power_w;
    double dynamic_power_w;
    double exponent; /* c */
    gboolean exponent_fitted;
    /* With c fitted: the points used, the distinct frequencies (to the
     * step) among them, and the fit's root-mean-square residual. */
    size_t points_used;
    unsigned distinct_frequencies;
    double power_rms_w;
    /* Why c is fixed although the points had more than two frequencies
     * (their fit failed: noise, or power that does not follow the model);
     * empty otherwise. */
    char exponent_note[256];
};

/* D(F_max) and α from two runs; FALSE with error set when the runs' figures
 * are bad, their frequencies the same, or α falls outside [0, 1]. */
gboolean vigil_fluid_fit_time(const struct vigil_fluid_run *a, const struct vigil_fluid_run *b,
                              double max_frequency_hz, double frequency_step_hz,
                              double *duration_at_max_s, double *alpha, GError **error);

/* P_static and P_dyn through two (f, P) with c fixed. */
gboolean vigil_fluid_fit_power_fixed(const struct vigil_fluid_run *a,
                                     const struct vigil_fluid_run *b, double max_frequency_hz,
                                     double exponent, double *static_power_w,
                                     double *dynamic_power_w, GError **error);

/* P_static, P_dyn and c by least squares over `points`; c in
 * [VIGIL_FLUID_EXPONENT_MIN, VIGIL_FLUID_EXPONENT_MAX]. */
gboolean vigil_fluid_fit_power_points(const struct vigil_fluid_point *points, size_t n,
                                      double max_frequency_hz, double *static_power_w,
                                      double *dynamic_power_w, double *exponent, double *rms_w,
                                      GError **error);

/* How many distinct frequencies `points` hold, rounded to `step_hz`. */
unsigned vigil_fluid_distinct_frequencies(const struct vigil_fluid_point *points, size_t n,
                                          double step_hz);

/* The whole fit: time from the two runs; power from the points when they
 * hold more than two distinct frequencies and their fit works, else from
 * the two runs with c = default_exponent (exponent_note says why when the
 * points' fit failed). */
gboolean vigil_fluid_fit(const struct vigil_fluid_input *input, struct vigil_fluid_model *model,
                         GError **error);

double vigil_fluid_duration_s(const struct vigil_fluid_model *model, double frequency_hz);
double vigil_fluid_power_w(const struct vigil_fluid_model *model, double frequency_hz);

struct vigil_fluid_prediction {
    double frequency_hz;
    double duration_s;
    double power_w;
    double energy_j;
    double energy_delay_js; /* E·D */
};

/* The frequencies from min to max in steps of step_hz, max included even
 * when the steps do not land on it; NULL with error set when the range or
 * step is bad. g_array_unref it (of double). */
GArray *vigil_fluid_frequencies(double min_hz, double max_hz, double step_hz, GError **error);

/* The model's prediction at each of `frequencies` (n ≥ 1), into `out`, and
 * the indexes of the least energy and the least E·D (the first on a tie:
 * the lower frequency, in vigil_fluid_frequencies' rising list). */
void vigil_fluid_predict(const struct vigil_fluid_model *model, const double *frequencies_hz,
                         size_t n, struct vigil_fluid_prediction *out, size_t *least_energy,
                         size_t *least_energy_delay);

#endif
