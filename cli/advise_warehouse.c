/* vigil advise: a run's figures from the warehouse (advise.h).
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
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

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
 * the index scan to the run's time, not the node's whole past. Read from
 * the arrays (migration 13), each wanted metric at its place i in each
 * metric set, not through the view statistics_rollups, which unnests all
 * of a node's metrics to keep the few energy ones. */
#define RUN_WINDOWS                                                                                \
    "WITH r AS (SELECT start_time, end_time FROM runs WHERE run_id = $1::bigint),"                 \
    " n AS (SELECT DISTINCT node_id FROM processes WHERE run_id = $1::bigint),"                    \
    " m AS MATERIALIZED (SELECT s.metric_set_id, m.name, m.kind, m.origin, i FROM metric_sets s"   \
    "        JOIN metrics m ON m.metric_id = ANY (s.metric_ids) AND m.name ~ $2,"                  \
    "        unnest(array_positions(s.metric_ids, m.metric_id)) AS i),"                            \
    " w AS (SELECT a.node_id, a.start_time, a.end_time, a.mean[m.i] AS mean, a.min[m.i] AS min,"   \
    "              a.max[m.i] AS max, a.delta[m.i] AS delta,"                                      \
    "              get_bit(a.uncertain, m.i::integer - 1) = 1 AS uncertain,"                       \
    "              m.name, m.kind, m.origin,"                                                      \
    "              extract(epoch FROM a.end_time - a.start_time)::float8 AS length_s,"             \
    "              extract(epoch FROM least(a.end_time, r.end_time)"                               \
    "                                 - greatest(a.start_time, r.start_time))::float8 AS "         \
    "inside_s,"                                                                                    \
    "              a.start_time >= r.start_time AND a.end_time <= r.end_time AS whole"             \
    "         FROM r, statistics_rollup_arrays a JOIN m USING (metric_set_id)"                     \
    "        WHERE a.node_id IN (SELECT node_id FROM n)"                                           \
    "          AND a.start_time < r.end_time AND a.end_time > r.start_time"                        \
    "          AND a.start_time > r.start_time - interval '1 hour'"                                \
    "          AND a.end_time > a.start_time)"

void advise_run_facts_clear(struct run_facts *f)
{
    g_free(f->given);
    g_free(f->run_id);
    g_free(f->run_key);
    g_free(f->program);
    g_free(f->argv);
    g_clear_pointer(&f->points, g_array_unref);
    g_clear_pointer(&f->notes, g_ptr_array_unref);
    g_clear_pointer(&f->missing, g_ptr_array_unref);
}

static double number(const PGresult *result, int row, int column)
{
    if (PQgetisnull(result, row, column))
        return NAN;
    return g_ascii_strtod(PQgetvalue(result, row, column), NULL);
}

/* The run itself, found by number, else by key. */
static gboolean read_run(PGconn *db, struct run_facts *f, GError **error)
{
    static const char sql[] = "SELECT run_id, run_key, program, array_to_string(argv, ' '),"
                              " extract(epoch FROM end_time - start_time)::float8,"
                              " (SELECT count(DISTINCT node_id) FROM processes p"
                              "   WHERE p.run_id = runs.run_id)"
                              "  FROM runs WHERE run_id = $1::bigint";
    PGresult *result = vigil_warehouse_query_run(db, f->given, sql, error);
    if (result == NULL)
        return FALSE;
    if (PQntuples(result) == 0) {
        PQclear(result);
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "run %s went from the warehouse while it was read", f->given);
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
        PGresult *result = vigil_warehouse_query(db, sql, 2, params, error);
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
    PGresult *result = vigil_warehouse_query(db, sql, 2, params, error);
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
    if (pattern == NULL)
        return TRUE; /* a metric of the table's, always: nothing to fit otherwise */
    char *both = g_strdup_printf("(%s)|^cpu\\.frequency_hz$", pattern);
    const char *const params[] = {f->run_id, both};
    PGresult *result = vigil_warehouse_query(db, sql, 2, params, error);
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

gboolean advise_read_run(PGconn *db, const char *given, struct run_facts *f, GError **error)
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
    PGresult *result = vigil_warehouse_query(
        db, "SELECT energy_j FROM run_overview WHERE run_id = $1::bigint", 1, params, error);
    if (result == NULL)
        return FALSE;
    f->attributed_energy_j = number(result, 0, 0);
    PQclear(result);
    return read_energy(db, f, error) && read_frequency(db, f, error) && read_points(db, f, error);
}

/* A run's mean cpu.frequency_hz, NAN when it has none. */
static gboolean mean_frequency(PGconn *db, const char *run_id, double *frequency_hz, GError **error)
{
    static const char sql[] =
        RUN_WINDOWS " SELECT sum(mean * inside_s) / nullif(sum(inside_s), 0) FROM w"
                    " WHERE kind = 'gauge'";
    const char *const params[] = {run_id, "^cpu\\.frequency_hz$"};
    PGresult *result = vigil_warehouse_query(db, sql, 2, params, error);
    if (result == NULL)
        return FALSE;
    *frequency_hz = number(result, 0, 0);
    PQclear(result);
    return TRUE;
}

/* For one run: the other runs of its program, to name as --against. */
char *advise_other_runs(PGconn *db, const struct run_facts *f, GError **error)
{
    const char *const params[] = {f->program, f->run_id};
    PGresult *result =
        vigil_warehouse_query(db,
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
