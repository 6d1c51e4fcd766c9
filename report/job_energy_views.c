/* vigil — a run's or a job's energy across its nodes, read from the
 * warehouse's run_energy / job_energy views and their per-node views. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "job_energy_views.h"
#include "vigil/local_protocol.h"
#include "vigil/report.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

/* One row: the totals, then the hosts of the least and the most. $1 is the
 * run's id or the job's scheduler id. */
#define ENERGY_SQL(TOTALS, NODES, KEY, CAST)                                                       \
    "SELECT e.energy_j, e.nodes, e.node_min_j, e.node_mean_j, e.node_max_j, e.estimated,"          \
    "       e.uncertain, coalesce(e.sources, ''),"                                                 \
    "       (SELECT sum(processes) FROM " NODES " WHERE " KEY " = $1" CAST "),"                    \
    "       (SELECT sum(processes_with_energy) FROM " NODES " WHERE " KEY " = $1" CAST "),"        \
    "       (SELECT hostname FROM " NODES " WHERE " KEY " = $1" CAST " AND energy_j IS NOT NULL"   \
    "         ORDER BY energy_j, hostname LIMIT 1),"                                               \
    "       (SELECT hostname FROM " NODES " WHERE " KEY " = $1" CAST " AND energy_j IS NOT NULL"   \
    "         ORDER BY energy_j DESC, hostname LIMIT 1)"                                           \
    "  FROM " TOTALS " e WHERE e." KEY " = $1" CAST

const char vigil_cli_job_energy_sql[] =
    ENERGY_SQL("job_energy", "job_energy_nodes", "scheduler_job_id", "");

/* A run's: its nodes' rows read once (the run_energy view reads them
 * again, and the query above five times: each read parses every
 * process's report, 40 ms for a 1,000-rank run), each row with the run's
 * totals, which are run_energy's aggregates over the same rows. */
const char vigil_cli_run_energy_nodes_sql[] =
    "WITH n AS MATERIALIZED ("
    "  SELECT node_id, hostname, energy_j, processes, processes_with_energy, sources, estimated,"
    "         start_time, end_time, uncertain"
    "    FROM run_energy_nodes WHERE run_id = $1::bigint),"
    " t AS (SELECT sum(energy_j) AS run_energy_j, count(*) AS run_nodes,"
    "              min(energy_j) AS run_node_min_j, avg(energy_j) AS run_node_mean_j,"
    "              max(energy_j) AS run_node_max_j,"
    "              (SELECT string_agg(DISTINCT src, '+' ORDER BY src)"
    "                 FROM unnest(array_agg(n.sources)) AS a(list),"
    "                      unnest(string_to_array(a.list, '+')) AS src) AS run_sources,"
    "              bool_or(estimated) AS run_estimated, bool_or(uncertain) AS run_uncertain,"
    "              bool_and(processes_with_energy = processes) AS run_complete"
    "         FROM n)"
    "SELECT n.node_id, n.hostname, n.energy_j, n.processes, n.processes_with_energy, n.sources,"
    "       n.estimated, n.start_time, n.end_time, n.uncertain, t.*"
    "  FROM n CROSS JOIN t ORDER BY n.hostname, n.node_id";

/* The totals as run_energy gives them, the processes summed over the
 * nodes, and the hosts of the least and the most (ties: the first by
 * hostname, the rows' order, as ENERGY_SQL's ORDER BY energy_j, hostname). */
void vigil_cli_run_energy_from_result(const PGresult *n, struct vigil_report_job_energy *out)
{
    memset(out, 0, sizeof *out);
    if (PQntuples(n) == 0 || PQgetisnull(n, 0, VIGIL_RUN_ENERGY_J))
        return;
    out->energy_j = g_ascii_strtod(PQgetvalue(n, 0, VIGIL_RUN_ENERGY_J), NULL);
    out->nodes = (int32_t)g_ascii_strtoll(PQgetvalue(n, 0, VIGIL_RUN_ENERGY_NODES), NULL, 10);
    out->node_min_j = g_ascii_strtod(PQgetvalue(n, 0, VIGIL_RUN_ENERGY_NODE_MIN_J), NULL);
    out->node_mean_j = g_ascii_strtod(PQgetvalue(n, 0, VIGIL_RUN_ENERGY_NODE_MEAN_J), NULL);
    out->node_max_j = g_ascii_strtod(PQgetvalue(n, 0, VIGIL_RUN_ENERGY_NODE_MAX_J), NULL);
    g_strlcpy(out->sources, PQgetvalue(n, 0, VIGIL_RUN_ENERGY_SOURCES), sizeof out->sources);
    out->flags = (strcmp(PQgetvalue(n, 0, VIGIL_RUN_ENERGY_ESTIMATED), "t") == 0
                      ? VIGIL_LOCAL_ENERGY_ESTIMATED
                      : 0) |
                 (strcmp(PQgetvalue(n, 0, VIGIL_RUN_ENERGY_UNCERTAIN), "t") == 0
                      ? VIGIL_LOCAL_ENERGY_UNCERTAIN
                      : 0);
    int least = -1, most = -1;
    double least_j = 0, most_j = 0;
    for (int i = 0; i < PQntuples(n); i++) {
        out->processes +=
            (int32_t)g_ascii_strtoll(PQgetvalue(n, i, VIGIL_RUN_ENERGY_NODE_PROCESSES), NULL, 10);
        out->processes_with_energy += (int32_t)g_ascii_strtoll(
            PQgetvalue(n, i, VIGIL_RUN_ENERGY_NODE_PROCESSES_WITH_ENERGY), NULL, 10);
        if (PQgetisnull(n, i, VIGIL_RUN_ENERGY_NODE_J))
            continue;
        double j = g_ascii_strtod(PQgetvalue(n, i, VIGIL_RUN_ENERGY_NODE_J), NULL);
        if (least < 0 || j < least_j) {
            least = i;
            least_j = j;
        }
        if (most < 0 || j > most_j) {
            most = i;
            most_j = j;
        }
    }
    if (least >= 0) {
        g_strlcpy(out->min_host, PQgetvalue(n, least, VIGIL_RUN_ENERGY_NODE_HOSTNAME),
                  sizeof out->min_host);
        g_strlcpy(out->max_host, PQgetvalue(n, most, VIGIL_RUN_ENERGY_NODE_HOSTNAME),
                  sizeof out->max_host);
    }
}

gboolean vigil_cli_job_energy_from_result(const PGresult *result,
                                          struct vigil_report_job_energy *out)
{
    memset(out, 0, sizeof *out);
    gboolean found = PQntuples(result) > 0;
    if (found && !PQgetisnull(result, 0, 0)) {
        out->energy_j = g_ascii_strtod(PQgetvalue(result, 0, 0), NULL);
        out->nodes = (int32_t)g_ascii_strtoll(PQgetvalue(result, 0, 1), NULL, 10);
        out->node_min_j = g_ascii_strtod(PQgetvalue(result, 0, 2), NULL);
        out->node_mean_j = g_ascii_strtod(PQgetvalue(result, 0, 3), NULL);
        out->node_max_j = g_ascii_strtod(PQgetvalue(result, 0, 4), NULL);
        out->flags =
            (strcmp(PQgetvalue(result, 0, 5), "t") == 0 ? VIGIL_LOCAL_ENERGY_ESTIMATED : 0) |
            (strcmp(PQgetvalue(result, 0, 6), "t") == 0 ? VIGIL_LOCAL_ENERGY_UNCERTAIN : 0);
        g_strlcpy(out->sources, PQgetvalue(result, 0, 7), sizeof out->sources);
        out->processes = (int32_t)g_ascii_strtoll(PQgetvalue(result, 0, 8), NULL, 10);
        out->processes_with_energy = (int32_t)g_ascii_strtoll(PQgetvalue(result, 0, 9), NULL, 10);
        g_strlcpy(out->min_host, PQgetvalue(result, 0, 10), sizeof out->min_host);
        g_strlcpy(out->max_host, PQgetvalue(result, 0, 11), sizeof out->max_host);
    }
    return found;
}

static gboolean read_energy(PGconn *db, const char *sql, const char *key,
                            struct vigil_report_job_energy *out, gboolean *found, GError **error)
{
    const char *const params[] = {key};
    PGresult *result = PQexecParams(db, sql, 1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
        vigil_warehouse_set_read_error(db, result,
                                       "cannot read the job's energy from the warehouse", error);
        PQclear(result);
        return FALSE;
    }
    *found = vigil_cli_job_energy_from_result(result, out);
    PQclear(result);
    return TRUE;
}

gboolean vigil_cli_run_energy(PGconn *db, const char *run_id, struct vigil_report_job_energy *out,
                              GError **error)
{
    const char *const params[] = {run_id};
    PGresult *result =
        PQexecParams(db, vigil_cli_run_energy_nodes_sql, 1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
        vigil_warehouse_set_read_error(db, result,
                                       "cannot read the run's energy from the warehouse", error);
        PQclear(result);
        return FALSE;
    }
    vigil_cli_run_energy_from_result(result, out);
    PQclear(result);
    return TRUE;
}

gboolean vigil_cli_job_id_valid(const char *job)
{
    if (job == NULL || job[0] == '\0' || strlen(job) > 128)
        return FALSE;
    for (const char *p = job; *p != '\0'; p++)
        if (!g_ascii_isalnum(*p) && strchr("._+-", *p) == NULL)
            return FALSE;
    return TRUE;
}

gboolean vigil_cli_job_energy(PGconn *db, const char *job, struct vigil_report_job_energy *out,
                              GError **error)
{
    gboolean found = FALSE;
    if (!read_energy(db, vigil_cli_job_energy_sql, job, out, &found, error))
        return FALSE;
    if (!found) {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "the warehouse has no job %s with a stored report; `" HOW_TO_LIST_RUNS
                    "` shows each run's job",
                    job);
        return FALSE;
    }
    return TRUE;
}

static void append(void *user, const char *bytes, size_t length)
{
    g_string_append_len(user, bytes, (gssize)length);
}

char *vigil_cli_job_energy_render(const char *job, const struct vigil_report_job_energy *j,
                                  gboolean json)
{
    GString *out = g_string_new(NULL);
    static struct vigil_report_sink sink;
    vigil_report_sink_init(&sink, append, out);
    if (json) {
        /* The job id is checked: letters, digits and ._+- only. */
        g_string_append_printf(out, "{\"job\":\"%s\",", job);
        if (j->nodes > 0) {
            vigil_report_write_job_energy_json(&sink, j);
            vigil_report_sink_flush(&sink);
        } else {
            g_string_append(out, "\"job_energy\":null");
        }
        g_string_append(out, "}\n");
    } else {
        g_string_append_printf(out, "JOB                        %s\n", job);
        if (j->nodes > 0) {
            vigil_report_write_job_energy_text(&sink, j);
            vigil_report_sink_flush(&sink);
        } else {
            g_string_append(out, "JOB_ENERGY_JOULE           n/a (none of its processes' reports "
                                 "has an energy figure)\n");
        }
    }
    return g_string_free(out, FALSE);
}
