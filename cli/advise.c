/* vigil advise: at which CPU frequency would a program have used less
 * energy? Fits the Fluid model (fluid_model.h) to two stored runs of the
 * same program at different frequencies and prints its prediction at each
 * frequency the node offers, labelled as a model estimate.
 *
 *   vigil advise RUN [--against RUN2] [--config FILE] [--format text|json]
 *                    [--exponent C] [--step-mhz N]
 *
 * A run's figures come from the warehouse's roll-ups on its nodes over its
 * interval (runs.start_time to end_time):
 * - duration: end_time − start_time;
 * - energy: the node's energy counter (node.energy_j, the total vigild
 *   shares out; else energy.psys_j; else the packages plus DRAM; else
 *   energy.node_j), deltas prorated by the part of each window inside the
 *   run, summed over its nodes. Not run_overview.energy_j: that is the
 *   processes' share by CPU time, an attribution whose split itself moves
 *   with the frequency and which leaves out the idle power the model's
 *   P_static is; and the per-second points below need the roll-ups anyway.
 *   An estimate (origin 'estimated': made from CPU time) is refused: it
 *   says nothing about how power changes with the frequency;
 * - power: energy over the seconds the roll-ups cover, per node, summed;
 * - frequency: cpu.frequency_hz's means, weighted the same way; F_max and
 *   F_min: cpu.frequency_max_hz and cpu.frequency_min_hz.
 * Per-second (f, P) points (the windows wholly inside a run, each node's
 * power times the run's nodes: the nodes are taken to be alike) let c be
 * fitted when they hold more than two frequencies. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include <libpq-fe.h>

#include "commands.h"
#include "fluid_model.h"
#include "vigil-build.h"
#include "vigil/config.h"
#include "vigil/warehouse.h"

#define HOW_TO_LIST_RUNS "psql -c 'select * from run_overview'"

/* Where a node's energy is read from, in order of preference. */
static const struct {
    const char *name;
    const char *pattern;
} energy_metrics[] = {
    {"node.energy_j", "^node\\.energy_j$"},
    {"energy.psys_j", "^energy\\.psys_j$"},
    {"energy.pkgN_j + energy.pkgN.dram_j", "^energy\\.pkg[0-9]+(\\.dram)?_j$"},
    {"energy.node_j", "^energy\\.node_j$"},
};

/* The roll-ups of a run's nodes that overlap its interval, of the metrics
 * whose name matches $2; inside_s is the part of the window in the run.
 * No window is longer than an hour ([daemon] rollup_ms): that bound keeps
 * the index scan to the run's time, not the node's whole past. */
#define RUN_WINDOWS                                                                                \
    "WITH r AS (SELECT start_time, end_time FROM runs WHERE run_id = $1::bigint),"                 \
    " n AS (SELECT DISTINCT node_id FROM processes WHERE run_id = $1::bigint),"                    \
    " w AS (SELECT s.node_id, s.start_time, s.end_time, s.mean, s.min, s.max, s.delta,"            \
    "              s.uncertain, m.name, m.kind, m.origin,"                                         \
    "              extract(epoch FROM s.end_time - s.start_time)::float8 AS length_s,"             \
    "              extract(epoch FROM least(s.end_time, r.end_time)"                               \
    "                                 - greatest(s.start_time, r.start_time))::float8 AS "         \
    "inside_s,"                                                                                    \
    "              s.start_time >= r.start_time AND s.end_time <= r.end_time AS whole"             \
    "         FROM r, statistics_rollups s JOIN metrics m USING (metric_id)"                       \
    "        WHERE s.node_id IN (SELECT node_id FROM n)"                                           \
    "          AND s.start_time < r.end_time AND s.end_time > r.start_time AND m.name ~ $2"        \
    "          AND s.start_time > r.start_time - interval '1 hour'"                                \
    "          AND s.end_time > s.start_time)"

struct run_facts {
    char *given; /* as on the command line */
    char *run_id;
    char *run_key;
    char *program;
    char *argv; /* the array as text */
    double duration_s;
    int nodes;
    const char *energy_metric; /* energy_metrics[].name, or NULL */
    double energy_j;
    double power_w;
    double covered_s; /* node-seconds the energy roll-ups cover */
    int energy_nodes;
    long energy_windows, estimated_windows, uncertain_windows;
    double attributed_energy_j; /* run_overview.energy_j; NAN when none */
    double frequency_hz, min_frequency_hz, max_frequency_hz; /* NAN when absent */
    long frequency_windows;
    GArray *points;     /* struct vigil_fluid_point, scaled to the run's nodes */
    GPtrArray *notes;   /* what to know about its figures */
    GPtrArray *missing; /* what keeps them from the model */
};

static void run_facts_clear(struct run_facts *f)
{
    g_free(f->given);
    g_free(f->run_id);
    g_free(f->run_key);
    g_free(f->program);
    g_free(f->argv);
    if (f->points != NULL)
        g_array_unref(f->points);
    if (f->notes != NULL)
        g_ptr_array_unref(f->notes);
    if (f->missing != NULL)
        g_ptr_array_unref(f->missing);
}

static PGresult *query(PGconn *db, const char *sql, int n, const char *const *params,
                       GError **error)
{
    PGresult *result = PQexecParams(db, sql, n, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
        char *why = g_strstrip(g_strdup(PQresultErrorMessage(result)));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "cannot read the warehouse: %s", why);
        g_free(why);
        PQclear(result);
        return NULL;
    }
    return result;
}

static double number(const PGresult *result, int row, int column)
{
    if (PQgetisnull(result, row, column))
        return NAN;
    return g_ascii_strtod(PQgetvalue(result, row, column), NULL);
}

static gboolean all_digits(const char *text)
{
    if (text[0] == '\0' || strlen(text) > 18)
        return FALSE;
    for (const char *p = text; *p != '\0'; p++)
        if (*p < '0' || *p > '9')
            return FALSE;
    return TRUE;
}

/* The run itself, found by number, else by key. */
static gboolean read_run(PGconn *db, struct run_facts *f, GError **error)
{
    static const char sql[] = "SELECT run_id, run_key, program, array_to_string(argv, ' '),"
                              " extract(epoch FROM end_time - start_time)::float8,"
                              " (SELECT count(DISTINCT node_id) FROM processes p"
                              "   WHERE p.run_id = runs.run_id)"
                              "  FROM runs WHERE %s";
    const char *const params[] = {f->given};
    PGresult *result = NULL;
    if (all_digits(f->given)) {
        char *by_id = g_strdup_printf(sql, "run_id = $1::bigint");
        result = query(db, by_id, 1, params, error);
        g_free(by_id);
        if (result == NULL)
            return FALSE;
        if (PQntuples(result) == 0)
            g_clear_pointer(&result, PQclear);
    }
    if (result == NULL) {
        char *by_key = g_strdup_printf(sql, "run_key = $1");
        result = query(db, by_key, 1, params, error);
        g_free(by_key);
        if (result == NULL)
            return FALSE;
    }
    if (PQntuples(result) == 0) {
        PQclear(result);
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "the warehouse has no run %s (neither a run number nor a run key); "
                    "`" HOW_TO_LIST_RUNS "` lists the runs",
                    f->given);
        return FALSE;
    }
    f->run_id = g_strdup(PQgetvalue(result, 0, 0));
    f->run_key = g_strdup(PQgetvalue(result, 0, 1));
    f->program = g_strdup(PQgetvalue(result, 0, 2));
    f->argv = g_strdup(PQgetvalue(result, 0, 3));
    f->duration_s = number(result, 0, 4);
    f->nodes = atoi(PQgetvalue(result, 0, 5));
    PQclear(result);
    if (isnan(f->duration_s)) {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "run %s has not ended (runs.end_time is empty): its duration is not known yet",
                    f->given);
        return FALSE;
    }
    return TRUE;
}

/* The run's energy from the first of energy_metrics its nodes have. */
static gboolean read_energy(PGconn *db, struct run_facts *f, GError **error)
{
    static const char sql[] = RUN_WINDOWS
        " SELECT count(*), coalesce(sum(delta * inside_s / length_s), 0), coalesce(sum(inside_s),"
        " 0), count(*) FILTER (WHERE estimated), count(*) FILTER (WHERE uncertain),"
        " count(DISTINCT node_id)"
        "  FROM (SELECT node_id, start_time, max(length_s) AS length_s, max(inside_s) AS inside_s,"
        "               sum(coalesce(delta, 0)) AS delta, bool_or(origin = 'estimated') AS "
        "estimated,"
        "               bool_or(uncertain) AS uncertain"
        "          FROM w WHERE kind = 'counter' GROUP BY node_id, start_time) x";
    for (size_t i = 0; i < G_N_ELEMENTS(energy_metrics); i++) {
        const char *const params[] = {f->run_id, energy_metrics[i].pattern};
        PGresult *result = query(db, sql, 2, params, error);
        if (result == NULL)
            return FALSE;
        long windows = atol(PQgetvalue(result, 0, 0));
        if (windows > 0) {
            f->energy_metric = energy_metrics[i].name;
            f->energy_windows = windows;
            f->energy_j = number(result, 0, 1);
            f->covered_s = number(result, 0, 2);
            f->estimated_windows = atol(PQgetvalue(result, 0, 3));
            f->uncertain_windows = atol(PQgetvalue(result, 0, 4));
            f->energy_nodes = atoi(PQgetvalue(result, 0, 5));
            PQclear(result);
            break;
        }
        PQclear(result);
    }
    if (f->energy_metric == NULL) {
        g_ptr_array_add(f->missing,
                        g_strdup_printf("run %s: no energy roll-ups on its nodes while it ran "
                                        "(node.energy_j, energy.psys_j, energy.pkgN_j or "
                                        "energy.node_j): its power is unknown",
                                        f->given));
        return TRUE;
    }
    if (f->estimated_windows > 0)
        g_ptr_array_add(f->missing,
                        g_strdup_printf("run %s: its energy (%s) is estimated in %ld of %ld "
                                        "roll-ups, from CPU time: an estimate cannot tell how "
                                        "power changes with the frequency; measured energy "
                                        "(powercap or likwid) is needed",
                                        f->given, f->energy_metric, f->estimated_windows,
                                        f->energy_windows));
    if (f->energy_nodes < f->nodes)
        g_ptr_array_add(f->missing,
                        g_strdup_printf("run %s: energy roll-ups on %d of its %d nodes only",
                                        f->given, f->energy_nodes, f->nodes));
    if (f->covered_s > 0 && f->energy_nodes > 0)
        f->power_w = f->energy_j / (f->covered_s / f->energy_nodes);
    double share = f->covered_s / (f->duration_s * f->nodes);
    if (share < 0.9)
        g_ptr_array_add(f->notes, g_strdup_printf("run %s: the energy roll-ups cover %.0f %% of "
                                                  "its time; its power is over what they cover",
                                                  f->given, 100 * share));
    if (f->uncertain_windows > 0)
        g_ptr_array_add(f->notes,
                        g_strdup_printf("run %s: %ld of its %ld energy roll-ups are uncertain "
                                        "(a counter went backwards)",
                                        f->given, f->uncertain_windows, f->energy_windows));
    return TRUE;
}

static gboolean read_frequency(PGconn *db, struct run_facts *f, GError **error)
{
    static const char sql[] =
        RUN_WINDOWS " SELECT name, sum(mean * inside_s) / nullif(sum(inside_s), 0), min(min),"
                    " max(max), count(*) FROM w WHERE kind = 'gauge' GROUP BY name";
    const char *const params[] = {f->run_id, "^cpu\\.frequency(_min|_max)?_hz$"};
    PGresult *result = query(db, sql, 2, params, error);
    if (result == NULL)
        return FALSE;
    for (int i = 0; i < PQntuples(result); i++) {
        const char *name = PQgetvalue(result, i, 0);
        if (strcmp(name, "cpu.frequency_hz") == 0) {
            f->frequency_hz = number(result, i, 1);
            f->frequency_windows = atol(PQgetvalue(result, i, 4));
        } else if (strcmp(name, "cpu.frequency_min_hz") == 0) {
            f->min_frequency_hz = number(result, i, 2);
        } else {
            f->max_frequency_hz = number(result, i, 3);
        }
    }
    PQclear(result);
    if (isnan(f->frequency_hz))
        g_ptr_array_add(f->missing,
                        g_strdup_printf("run %s: no cpu.frequency_hz roll-ups on its nodes while "
                                        "it ran: the frequency it ran at is unknown",
                                        f->given));
    if (isnan(f->max_frequency_hz) || isnan(f->min_frequency_hz))
        g_ptr_array_add(
            f->missing,
            g_strdup_printf(
                "run %s: no %s roll-ups on its nodes while it ran: %s", f->given,
                isnan(f->max_frequency_hz) ? "cpu.frequency_max_hz" : "cpu.frequency_min_hz",
                isnan(f->max_frequency_hz) ? "F_max and the frequencies the node offers are unknown"
                                           : "the lowest frequency the node offers is unknown"));
    return TRUE;
}

/* Each whole window's (f, P) of each node, P times the run's nodes. */
static gboolean read_points(PGconn *db, struct run_facts *f, GError **error)
{
    static const char sql[] = RUN_WINDOWS
        " SELECT fr.mean, e.delta / e.length_s"
        "  FROM (SELECT node_id, start_time, max(length_s) AS length_s, sum(delta) AS delta"
        "          FROM w WHERE whole AND name !~ '^cpu' AND kind = 'counter'"
        "          GROUP BY node_id, start_time HAVING NOT bool_or(uncertain)"
        "             AND count(delta) = count(*)) e"
        "  JOIN (SELECT node_id, start_time, mean FROM w"
        "         WHERE whole AND name = 'cpu.frequency_hz' AND kind = 'gauge') fr"
        "  USING (node_id, start_time) ORDER BY node_id, start_time";
    if (f->energy_metric == NULL || isnan(f->frequency_hz))
        return TRUE;
    const char *pattern = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(energy_metrics); i++)
        if (energy_metrics[i].name == f->energy_metric)
            pattern = energy_metrics[i].pattern;
    char *both = g_strdup_printf("(%s)|^cpu\\.frequency_hz$", pattern);
    const char *const params[] = {f->run_id, both};
    PGresult *result = query(db, sql, 2, params, error);
    g_free(both);
    if (result == NULL)
        return FALSE;
    for (int i = 0; i < PQntuples(result); i++) {
        struct vigil_fluid_point p = {
            .frequency_hz = number(result, i, 0),
            .power_w = number(result, i, 1) * f->nodes,
        };
        g_array_append_val(f->points, p);
    }
    PQclear(result);
    return TRUE;
}

static gboolean read_facts(PGconn *db, const char *given, struct run_facts *f, GError **error)
{
    f->given = g_strdup(given);
    f->points = g_array_new(FALSE, FALSE, sizeof(struct vigil_fluid_point));
    f->notes = g_ptr_array_new_with_free_func(g_free);
    f->missing = g_ptr_array_new_with_free_func(g_free);
    f->power_w = f->attributed_energy_j = NAN;
    f->frequency_hz = f->min_frequency_hz = f->max_frequency_hz = NAN;
    if (!read_run(db, f, error))
        return FALSE;
    if (f->nodes == 0) {
        g_ptr_array_add(f->missing, g_strdup_printf("run %s has no processes stored: its nodes "
                                                    "are unknown",
                                                    given));
        return TRUE;
    }
    const char *const params[] = {f->run_id};
    PGresult *result =
        query(db, "SELECT energy_j FROM run_overview WHERE run_id = $1::bigint", 1, params, error);
    if (result == NULL)
        return FALSE;
    f->attributed_energy_j = number(result, 0, 0);
    PQclear(result);
    return read_energy(db, f, error) && read_frequency(db, f, error) && read_points(db, f, error);
}

/* ---- output ------------------------------------------------------------------ */

struct advice {
    struct run_facts runs[2];
    int n_runs;
    GPtrArray *notes;
    GPtrArray *missing;
    gboolean fitted;
    struct vigil_fluid_model model;
    double exponent_default;
    double step_hz;
    double min_frequency_hz;
    GArray *predictions; /* struct vigil_fluid_prediction */
    size_t least_energy, least_energy_delay;
    char *others; /* other runs of the program, for one run only */
};

static void print_run_text(const struct run_facts *f)
{
    printf("Run %s (%s): %s\n", f->run_id, f->run_key, f->argv);
    printf("  time %.3f s on %d node%s", f->duration_s, f->nodes, f->nodes == 1 ? "" : "s");
    if (!isnan(f->power_w))
        printf(", mean power %.2f W, energy %.1f J (%s, %s)", f->power_w, f->energy_j,
               f->energy_metric, f->estimated_windows > 0 ? "ESTIMATED" : "measured");
    printf("\n");
    if (!isnan(f->attributed_energy_j))
        printf("  its processes' share of that energy by CPU time: %.1f J (not used)\n",
               f->attributed_energy_j);
    if (!isnan(f->frequency_hz))
        printf("  mean CPU frequency %.3f GHz (cpu.frequency_hz, %ld roll-ups)\n",
               f->frequency_hz / 1e9, f->frequency_windows);
    if (!isnan(f->min_frequency_hz) && !isnan(f->max_frequency_hz))
        printf("  the node's range: %.3f to %.3f GHz\n", f->min_frequency_hz / 1e9,
               f->max_frequency_hz / 1e9);
}

static void print_list(const char *title, const GPtrArray *items)
{
    if (items->len == 0)
        return;
    printf("\n%s\n", title);
    for (guint i = 0; i < items->len; i++)
        printf("  - %s\n", (const char *)g_ptr_array_index(items, i));
}

static void print_text(const struct advice *a)
{
    printf("Frequency advice for %s — a MODEL ESTIMATE (the Fluid model), not a measurement\n\n",
           a->runs[0].program);
    for (int i = 0; i < a->n_runs; i++)
        print_run_text(&a->runs[i]);
    print_list("Notes:", a->notes);
    if (!a->fitted) {
        print_list("Missing:", a->missing);
        if (a->others != NULL)
            printf("\n%s", a->others);
        return;
    }
    const struct vigil_fluid_model *m = &a->model;
    printf("\nModel: D(f) = ((1-α) + α·F_max/f)·D(F_max), P(f) = P_static + P_dyn·(f/F_max)^c\n");
    printf("  F_max     %.3f GHz (cpu.frequency_max_hz)\n", m->max_frequency_hz / 1e9);
    printf("  D(F_max)  %.3f s\n", m->duration_at_max_s);
    printf("  α         %.4f (the share of the time that scales with 1/f)\n", m->alpha);
    printf("  P_static  %.2f W\n", m->static_power_w);
    printf("  P_dyn     %.2f W\n", m->dynamic_power_w);
    if (m->exponent_fitted)
        printf("  c         %.3f (fitted to %zu per-second points at %u frequencies, rms %.2f W)\n",
               m->exponent, m->points_used, m->distinct_frequencies, m->power_rms_w);
    else if (m->exponent_note[0] != '\0')
        printf("  c         %.3f (fixed, not fitted: the per-second points at %u frequencies "
               "did not fit: %s; [advise] power_exponent or --exponent)\n",
               m->exponent, m->distinct_frequencies, m->exponent_note);
    else
        printf("  c         %.3f (fixed, not fitted: the runs' per-second frequency took %u "
               "value%s, c needs three; [advise] power_exponent or --exponent)\n",
               m->exponent, m->distinct_frequencies, m->distinct_frequencies == 1 ? "" : "s");
    printf("\nPredicted at the frequencies the node offers (%.3f to %.3f GHz in %.0f MHz steps, "
           "assumed):\n",
           a->min_frequency_hz / 1e9, m->max_frequency_hz / 1e9, a->step_hz / 1e6);
    printf("  %9s  %12s  %10s  %14s  %16s\n", "GHz", "time s", "power W", "energy J", "E·D J·s");
    for (guint i = 0; i < a->predictions->len; i++) {
        const struct vigil_fluid_prediction *p =
            &g_array_index(a->predictions, struct vigil_fluid_prediction, i);
        printf("  %9.3f  %12.3f  %10.2f  %14.1f  %16.1f%s%s\n", p->frequency_hz / 1e9,
               p->duration_s, p->power_w, p->energy_j, p->energy_delay_js,
               i == a->least_energy ? "  <- least energy" : "",
               i == a->least_energy_delay ? "  <- least E·D" : "");
    }
    const struct vigil_fluid_prediction *e =
        &g_array_index(a->predictions, struct vigil_fluid_prediction, a->least_energy);
    const struct vigil_fluid_prediction *d =
        &g_array_index(a->predictions, struct vigil_fluid_prediction, a->least_energy_delay);
    const struct vigil_fluid_prediction *top =
        &g_array_index(a->predictions, struct vigil_fluid_prediction, a->predictions->len - 1);
    printf("\nLeast energy (model estimate): %.3f GHz, %.1f J in %.3f s (%+.1f %% energy, %+.1f "
           "%% time against %.3f GHz)\n",
           e->frequency_hz / 1e9, e->energy_j, e->duration_s,
           100 * (e->energy_j / top->energy_j - 1), 100 * (e->duration_s / top->duration_s - 1),
           top->frequency_hz / 1e9);
    printf("Least E·D (model estimate): %.3f GHz, %.1f J in %.3f s\n", d->frequency_hz / 1e9,
           d->energy_j, d->duration_s);
}

static void add_number(JsonBuilder *b, const char *name, double value)
{
    json_builder_set_member_name(b, name);
    if (isfinite(value))
        json_builder_add_double_value(b, value);
    else
        json_builder_add_null_value(b);
}

static void add_string(JsonBuilder *b, const char *name, const char *value)
{
    json_builder_set_member_name(b, name);
    if (value != NULL)
        json_builder_add_string_value(b, value);
    else
        json_builder_add_null_value(b);
}

static void add_strings(JsonBuilder *b, const char *name, const GPtrArray *items)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    for (guint i = 0; i < items->len; i++)
        json_builder_add_string_value(b, g_ptr_array_index(items, i));
    json_builder_end_array(b);
}

static void add_prediction(JsonBuilder *b, const struct vigil_fluid_prediction *p)
{
    json_builder_begin_object(b);
    add_number(b, "frequency_hz", p->frequency_hz);
    add_number(b, "duration_s", p->duration_s);
    add_number(b, "power_w", p->power_w);
    add_number(b, "energy_j", p->energy_j);
    add_number(b, "energy_delay_js", p->energy_delay_js);
    json_builder_end_object(b);
}

static void print_json(const struct advice *a)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    add_string(b, "estimate", "model: the Fluid model fitted to the runs, not a measurement");
    json_builder_set_member_name(b, "runs");
    json_builder_begin_array(b);
    for (int i = 0; i < a->n_runs; i++) {
        const struct run_facts *f = &a->runs[i];
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "run_id");
        json_builder_add_int_value(b, g_ascii_strtoll(f->run_id, NULL, 10));
        add_string(b, "run_key", f->run_key);
        add_string(b, "program", f->program);
        add_number(b, "duration_s", f->duration_s);
        json_builder_set_member_name(b, "nodes");
        json_builder_add_int_value(b, f->nodes);
        add_number(b, "energy_j", f->energy_metric != NULL ? f->energy_j : NAN);
        add_number(b, "power_w", f->power_w);
        add_string(b, "energy_metric", f->energy_metric);
        json_builder_set_member_name(b, "energy_estimated");
        json_builder_add_boolean_value(b, f->estimated_windows > 0);
        add_number(b, "attributed_energy_j", f->attributed_energy_j);
        add_number(b, "frequency_hz", f->frequency_hz);
        add_number(b, "frequency_min_hz", f->min_frequency_hz);
        add_number(b, "frequency_max_hz", f->max_frequency_hz);
        json_builder_set_member_name(b, "points");
        json_builder_add_int_value(b, f->points->len);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    add_strings(b, "notes", a->notes);
    add_strings(b, "missing", a->missing);
    json_builder_set_member_name(b, "model");
    if (a->fitted) {
        const struct vigil_fluid_model *m = &a->model;
        json_builder_begin_object(b);
        add_number(b, "frequency_max_hz", m->max_frequency_hz);
        add_number(b, "duration_at_max_s", m->duration_at_max_s);
        add_number(b, "alpha", m->alpha);
        add_number(b, "static_power_w", m->static_power_w);
        add_number(b, "dynamic_power_w", m->dynamic_power_w);
        add_number(b, "exponent", m->exponent);
        json_builder_set_member_name(b, "exponent_fitted");
        json_builder_add_boolean_value(b, m->exponent_fitted);
        json_builder_set_member_name(b, "distinct_frequencies");
        json_builder_add_int_value(b, m->distinct_frequencies);
        json_builder_set_member_name(b, "points_used");
        json_builder_add_int_value(b, (gint64)m->points_used);
        add_number(b, "power_rms_w", m->exponent_fitted ? m->power_rms_w : NAN);
        add_string(b, "exponent_note", m->exponent_note[0] != '\0' ? m->exponent_note : NULL);
        add_number(b, "frequency_step_hz", a->step_hz);
        json_builder_end_object(b);
        json_builder_set_member_name(b, "predictions");
        json_builder_begin_array(b);
        for (guint i = 0; i < a->predictions->len; i++)
            add_prediction(b, &g_array_index(a->predictions, struct vigil_fluid_prediction, i));
        json_builder_end_array(b);
        json_builder_set_member_name(b, "least_energy");
        add_prediction(
            b, &g_array_index(a->predictions, struct vigil_fluid_prediction, a->least_energy));
        json_builder_set_member_name(b, "least_energy_delay");
        add_prediction(b, &g_array_index(a->predictions, struct vigil_fluid_prediction,
                                         a->least_energy_delay));
    } else {
        json_builder_add_null_value(b);
    }
    json_builder_end_object(b);
    JsonGenerator *generator = json_generator_new();
    JsonNode *root = json_builder_get_root(b);
    json_generator_set_root(generator, root);
    char *text = json_generator_to_data(generator, NULL);
    printf("%s\n", text);
    g_free(text);
    json_node_unref(root);
    g_object_unref(generator);
    g_object_unref(b);
}

/* ---- the advice ------------------------------------------------------------------ */

/* A run's mean cpu.frequency_hz, NAN when it has none. */
static gboolean mean_frequency(PGconn *db, const char *run_id, double *frequency_hz, GError **error)
{
    static const char sql[] =
        RUN_WINDOWS " SELECT sum(mean * inside_s) / nullif(sum(inside_s), 0) FROM w"
                    " WHERE kind = 'gauge'";
    const char *const params[] = {run_id, "^cpu\\.frequency_hz$"};
    PGresult *result = query(db, sql, 2, params, error);
    if (result == NULL)
        return FALSE;
    *frequency_hz = number(result, 0, 0);
    PQclear(result);
    return TRUE;
}

/* For one run: the other runs of its program, to name as --against. */
static char *other_runs(PGconn *db, const struct run_facts *f, GError **error)
{
    const char *const params[] = {f->program, f->run_id};
    PGresult *result = query(db,
                             "SELECT run_id, run_key, extract(epoch FROM end_time - start_time)"
                             "  FROM runs WHERE program = $1 AND run_id <> $2::bigint"
                             "   AND end_time IS NOT NULL ORDER BY start_time DESC LIMIT 5",
                             2, params, error);
    if (result == NULL)
        return NULL;
    GString *text = g_string_new(NULL);
    if (PQntuples(result) == 0)
        g_string_append_printf(text, "The warehouse has no other ended run of %s.\n", f->program);
    else
        g_string_append_printf(text, "Other runs of %s (newest first; try --against):\n",
                               f->program);
    gboolean ok = TRUE;
    for (int i = 0; ok && i < PQntuples(result); i++) {
        double frequency_hz = NAN;
        ok = mean_frequency(db, PQgetvalue(result, i, 0), &frequency_hz, error);
        g_string_append_printf(text, "  %s (%s), %.3f s", PQgetvalue(result, i, 0),
                               PQgetvalue(result, i, 1), number(result, i, 2));
        if (isnan(frequency_hz))
            g_string_append(text, ", no cpu.frequency_hz\n");
        else
            g_string_append_printf(text, " at %.3f GHz\n", frequency_hz / 1e9);
    }
    PQclear(result);
    if (!ok) {
        g_string_free(text, TRUE);
        return NULL;
    }
    return g_string_free(text, FALSE);
}

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
        if (!read_facts(db, i == 0 ? run : options->against, &a.runs[i], &error))
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
        a.others = other_runs(db, &a.runs[0], &error);
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
        print_json(&a);
    else
        print_text(&a);
    if (fflush(stdout) != 0)
        status = VIGIL_EXIT_FAILURE;
out:
    if (error != NULL) {
        fprintf(stderr, "vigil advise: %s\n", error->message);
        g_error_free(error);
    }
    for (int i = 0; i < 2; i++)
        run_facts_clear(&a.runs[i]);
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
    GOptionContext *context = g_option_context_new("RUN");
    g_option_context_set_summary(
        context, "Fits the Fluid model of time and power against the CPU frequency to RUN and "
                 "RUN2, two runs of one program at different frequencies, and prints its "
                 "estimate of time, power and energy at each frequency the node offers.\nThe "
                 "runs: " HOW_TO_LIST_RUNS);
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    int status = VIGIL_EXIT_USAGE;
    vigil_config *config = NULL;
    PGconn *db = NULL;

    if (!g_option_context_parse(context, &argc, &argv, &error)) {
        fprintf(stderr, "vigil advise: %s\n", error->message);
        goto out;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: vigil advise RUN [--against RUN2] [--config FILE] "
                        "[--format text|json] [--exponent C] [--step-mhz N]\n");
        goto out;
    }
    if (options.format != NULL && strcmp(options.format, "text") != 0 &&
        strcmp(options.format, "json") != 0) {
        fprintf(stderr, "vigil advise: --format %s: expected text or json\n", options.format);
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
    if (isnan(options.exponent))
        options.exponent = vigil_config_get_double(config, "advise", "power_exponent");
    if (options.step_mhz == 0)
        options.step_mhz = (gint)vigil_config_get_int(config, "advise", "frequency_step_mhz");
    db = vigil_warehouse_connect(vigil_config_get_string(config, "warehouse", "conninfo"), &error);
    if (db == NULL) {
        fprintf(stderr, "vigil advise: %s\n", error->message);
        goto out;
    }
    status = advise(db, argv[1], &options,
                    options.format != NULL && strcmp(options.format, "json") == 0);

out:
    g_clear_error(&error);
    if (db != NULL)
        PQfinish(db);
    if (config != NULL)
        vigil_config_free(config);
    g_free(options.config_path);
    g_free(options.format);
    g_free(options.against);
    g_option_context_free(context);
    return status;
}
