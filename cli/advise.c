/* vigil advise: at which CPU frequency would a program have used less
 * energy? Fits the Fluid model (fluid_model.h) to two stored runs of the
 * same program at different frequencies and prints its prediction at each
 * frequency the node offers, labelled as a model estimate.
 *
 *   vigil advise RUN [--against RUN2] [--config FILE] [--format text|json]
 *                    [--exponent C] [--step-mhz N]
 *
 * advise_warehouse.c reads each run (what it reads, and why, is said
 * there), fluid_model.c fits the model, advise_output.c prints. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <libpq-fe.h>

#include "advise.h"
#include "cli_settings.h"
#include "commands.h"
#include "vigil-build.h"
#include "vigil/config.h"
#include "vigil/schema.h"
#include "vigil/warehouse.h"

static void check_pair(struct advice *a)
{
    const struct run_facts *x = &a->runs[0], *y = &a->runs[1];
    if (strcmp(x->run_id, y->run_id) == 0)
        g_ptr_array_add(a->missing, g_strdup_printf("RUN and --against name the same run (%s): "
                                                    "the model needs two runs",
                                                    x->run_id));
    else if (strcmp(x->program, y->program) != 0)
        g_ptr_array_add(a->missing,
                        g_strdup_printf("run %s is %s and run %s is %s: the model compares one "
                                        "program at two frequencies",
                                        x->given, x->program, y->given, y->program));
    else if (strcmp(x->argv, y->argv) != 0)
        g_ptr_array_add(a->notes,
                        g_strdup_printf("the runs' arguments differ (%s and %s): the model "
                                        "assumes they did the same work",
                                        x->argv, y->argv));
    if (x->nodes != y->nodes && x->nodes > 0 && y->nodes > 0)
        g_ptr_array_add(a->notes, g_strdup_printf("the runs used %d and %d nodes: the model "
                                                  "compares their totals as they are",
                                                  x->nodes, y->nodes));
    if (!isnan(x->max_frequency_hz) && !isnan(y->max_frequency_hz) &&
        fabs(x->max_frequency_hz - y->max_frequency_hz) >= a->step_hz / 2)
        g_ptr_array_add(a->missing,
                        g_strdup_printf("the runs' nodes differ: F_max %.3f GHz and %.3f GHz",
                                        x->max_frequency_hz / 1e9, y->max_frequency_hz / 1e9));
}

static gboolean fit(struct advice *a, GError **error)
{
    const struct run_facts *x = &a->runs[0], *y = &a->runs[1];
    GArray *points = g_array_new(FALSE, FALSE, sizeof(struct vigil_fluid_point));
    g_array_append_vals(points, x->points->data, x->points->len);
    g_array_append_vals(points, y->points->data, y->points->len);
    struct vigil_fluid_input input = {
        .runs = {{x->frequency_hz, x->duration_s, x->power_w},
                 {y->frequency_hz, y->duration_s, y->power_w}},
        .max_frequency_hz = x->max_frequency_hz,
        .frequency_step_hz = a->step_hz,
        .default_exponent = a->exponent_default,
        .points = (const struct vigil_fluid_point *)points->data,
        .n_points = points->len,
    };
    gboolean ok = vigil_fluid_fit(&input, &a->model, error);
    g_array_unref(points);
    if (!ok) {
        g_prefix_error(error, "(the first run is %s, the second %s) ", x->given, y->given);
        return FALSE;
    }
    a->min_frequency_hz = fmin(x->min_frequency_hz, y->min_frequency_hz);
    GArray *frequencies =
        vigil_fluid_frequencies(a->min_frequency_hz, a->model.max_frequency_hz, a->step_hz, error);
    if (frequencies == NULL)
        return FALSE;
    a->predictions =
        g_array_sized_new(FALSE, TRUE, sizeof(struct vigil_fluid_prediction), frequencies->len);
    g_array_set_size(a->predictions, frequencies->len);
    vigil_fluid_predict(&a->model, &g_array_index(frequencies, double, 0), frequencies->len,
                        (struct vigil_fluid_prediction *)a->predictions->data, &a->least_energy,
                        &a->least_energy_delay);
    g_array_unref(frequencies);
    a->fitted = TRUE;
    return TRUE;
}

struct advise_options {
    char *config_path;
    char *format;
    char *against;
    double exponent;
    gint step_mhz;
};

static int advise(PGconn *db, const char *run, const struct advise_options *options, gboolean json)
{
    struct advice a = {
        .notes = g_ptr_array_new_with_free_func(g_free),
        .missing = g_ptr_array_new_with_free_func(g_free),
        .exponent_default = options->exponent,
        .step_hz = options->step_mhz * 1e6,
    };
    GError *error = NULL;
    int status = VIGIL_EXIT_FAILURE;
    a.n_runs = options->against != NULL ? 2 : 1;
    for (int i = 0; i < a.n_runs; i++)
        if (!advise_read_run(db, i == 0 ? run : options->against, &a.runs[i], &error))
            goto out;
    for (int i = 0; i < a.n_runs; i++) {
        for (guint k = 0; k < a.runs[i].notes->len; k++)
            g_ptr_array_add(a.notes, g_strdup(g_ptr_array_index(a.runs[i].notes, k)));
        for (guint k = 0; k < a.runs[i].missing->len; k++)
            g_ptr_array_add(a.missing, g_strdup(g_ptr_array_index(a.runs[i].missing, k)));
    }
    if (a.n_runs == 1) {
        g_ptr_array_add(a.missing,
                        g_strdup_printf("a second run of %s at another CPU frequency (--against "
                                        "RUN2): the time D(f) has two unknowns, D(F_max) and α, "
                                        "and the power at least two, P_static and P_dyn; one "
                                        "run gives one equation for each",
                                        a.runs[0].program));
        a.others = advise_other_runs(db, &a.runs[0], &error);
        if (a.others == NULL)
            goto out;
    } else {
        check_pair(&a);
        if (a.missing->len == 0 && !fit(&a, &error)) {
            g_ptr_array_add(a.missing, g_strdup(error->message));
            g_clear_error(&error);
        }
    }
    status = a.fitted ? VIGIL_EXIT_OK : VIGIL_EXIT_FAILURE;
    if (json)
        advise_print_json(&a);
    else
        advise_print_text(&a);
    if (fflush(stdout) != 0)
        status = VIGIL_EXIT_FAILURE;
out:
    if (error != NULL) {
        fprintf(stderr, "vigil advise: %s\n", error->message);
        g_error_free(error);
    }
    for (int i = 0; i < 2; i++)
        advise_run_facts_clear(&a.runs[i]);
    g_ptr_array_unref(a.notes);
    g_ptr_array_unref(a.missing);
    if (a.predictions != NULL)
        g_array_unref(a.predictions);
    g_free(a.others);
    return status;
}

int vigil_cli_advise(int argc, char **argv)
{
    struct advise_options options = {.exponent = NAN, .step_mhz = 0};
    GOptionEntry entries[] = {
        {"against", 'a', 0, G_OPTION_ARG_STRING, &options.against,
         "The run of the same program at another CPU frequency", "RUN2"},
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &options.config_path,
         "Configuration file ([warehouse] conninfo, [advise]); default: $VIGIL_CONFIG, "
         "else " VIGIL_SYSCONF_DIR "/vigil.conf if it exists, else libpq's environment",
         "FILE"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &options.format, "text (the default) or json",
         "FORMAT"},
        {"exponent", 'e', 0, G_OPTION_ARG_DOUBLE, &options.exponent,
         "c when it cannot be fitted (default: [advise] power_exponent, 3)", "C"},
        {"step-mhz", 's', 0, G_OPTION_ARG_INT, &options.step_mhz,
         "The step between the frequencies the node offers (default: [advise] "
         "frequency_step_mhz, 100)",
         "N"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = "RUN",
        .summary = "Fits the Fluid model of time and power against the CPU frequency to RUN and "
                   "RUN2, two runs of one program at different frequencies, and prints its "
                   "estimate of time, power and energy at each frequency the node offers.\nThe "
                   "runs: " HOW_TO_LIST_RUNS,
    };
    GError *error = NULL;
    int status = VIGIL_EXIT_USAGE;
    gboolean json = FALSE;
    vigil_config *config = NULL;
    PGconn *db = NULL;

    if (!vigil_cli_options_ok("advise", &help, entries, &argc, &argv))
        goto out;
    if (argc != 2) {
        fprintf(stderr, "usage: vigil advise RUN [--against RUN2] [--config FILE] "
                        "[--format text|json] [--exponent C] [--step-mhz N]\n");
        goto out;
    }
    if (!vigil_cli_format_is_json(options.format, &json, &error)) {
        fprintf(stderr, "vigil advise: %s\n", error->message);
        goto out;
    }
    if (!isnan(options.exponent) && !(options.exponent >= VIGIL_FLUID_EXPONENT_MIN &&
                                      options.exponent <= VIGIL_FLUID_EXPONENT_MAX)) {
        fprintf(stderr, "vigil advise: --exponent %g: expected a number in [%g, %g]\n",
                options.exponent, VIGIL_FLUID_EXPONENT_MIN, VIGIL_FLUID_EXPONENT_MAX);
        goto out;
    }
    if (options.step_mhz < 0 || options.step_mhz > 1000) {
        fprintf(stderr, "vigil advise: --step-mhz %d: expected 1 to 1000\n", options.step_mhz);
        goto out;
    }
    status = VIGIL_EXIT_FAILURE;
    config = vigil_cli_warehouse_config(options.config_path, &error);
    if (config == NULL) {
        fprintf(stderr, "vigil advise: %s\n", error->message);
        goto out;
    }
    struct vigil_advise_settings advise_settings;
    struct vigil_warehouse_settings warehouse;
    if (!vigil_settings_load(config, &vigil_advise_keys, &advise_settings, &error) ||
        !vigil_settings_load(config, &vigil_warehouse_keys, &warehouse, &error)) {
        fprintf(stderr, "vigil advise: %s\n", error->message);
        goto out;
    }
    if (isnan(options.exponent))
        options.exponent = advise_settings.power_exponent;
    if (options.step_mhz == 0)
        options.step_mhz = (gint)advise_settings.frequency_step_mhz;
    db = vigil_warehouse_connect(warehouse.conninfo, &error);
    vigil_settings_clear(&vigil_warehouse_keys, &warehouse);
    if (db == NULL) {
        fprintf(stderr, "vigil advise: %s\n", error->message);
        goto out;
    }
    status = advise(db, argv[1], &options, json);

out:
    g_clear_error(&error);
    if (db != NULL)
        PQfinish(db);
    if (config != NULL)
        vigil_config_free(config);
    g_free(options.config_path);
    g_free(options.format);
    g_free(options.against);
    return status;
}
