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

static const char run_energy_sql[] =
    ENERGY_SQL("run_energy", "run_energy_nodes", "run_id", "::bigint");
const char vigil_cli_job_energy_sql[] =
    ENERGY_SQL("job_energy", "job_energy_nodes", "scheduler_job_id", "");

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
    gboolean found;
    return read_energy(db, run_energy_sql, run_id, out, &found, error);
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
