/* vigil-web — a run's energy across its nodes for GET /api/v1/runs/RUN_ID:
 * the warehouse's run_energy and run_energy_nodes views
 * (warehouse/migrations/0005_job_energy.sql), as "job_energy", and as the
 * stored report's job_energy when it has none. Each view is read once:
 * each evaluation reads every process's report (a 1,000-rank run's take
 * 10-30 ms), and the report's figures are those of the same rows. */
#include <string.h>

#include "api.h"
#include "db_pool.h"
#include "json_rows.h"
#include "job_energy_views.h"
#include "vigil/local_protocol.h"

gboolean web_api_run_read_energy(struct web_request *req, const char *run_id,
                                 struct web_run_energy *out, GError **error)
{
    gboolean mixed = FALSE;
    out->totals = out->nodes = NULL;
    if (!web_api_run_mixed(req, run_id, &mixed, error))
        return FALSE;
    if (mixed)
        return TRUE; /* the sums would count another user's processes */
    const char *params[] = {run_id};
    out->totals = web_db_query(
        req,
        "SELECT energy_j, nodes, node_min_j, node_mean_j, node_max_j, sources, estimated,"
        "       uncertain, complete"
        "  FROM run_energy WHERE run_id = $1::bigint AND energy_j IS NOT NULL",
        1, params, error);
    if (out->totals == NULL)
        return FALSE;
    if (PQntuples(out->totals) == 0)
        return TRUE;
    out->nodes = web_db_query(
        req,
        "SELECT node_id, hostname, energy_j, processes, processes_with_energy, sources,"
        "       estimated, start_time, end_time"
        "  FROM run_energy_nodes WHERE run_id = $1::bigint ORDER BY hostname, node_id",
        1, params, error);
    if (out->nodes == NULL) {
        web_api_run_energy_clear(out);
        return FALSE;
    }
    return TRUE;
}

void web_api_run_energy_clear(struct web_run_energy *energy)
{
    g_clear_pointer(&energy->totals, PQclear);
    g_clear_pointer(&energy->nodes, PQclear);
}

/* As report/job_energy_views.c's query gives them (vigil report RUN): the
 * totals, the processes summed over the nodes, and the hosts of the least
 * and the most (ties: the first by hostname, the rows' order). */
void web_api_run_fill_job_energy(const struct web_run_energy *energy, struct vigil_report *report)
{
    if (report->job_energy.nodes > 0 || energy->nodes == NULL)
        return;
    const PGresult *t = energy->totals, *n = energy->nodes;
    struct vigil_report_job_energy e;
    memset(&e, 0, sizeof e);
    e.energy_j = g_ascii_strtod(PQgetvalue(t, 0, 0), NULL);
    e.nodes = (int32_t)g_ascii_strtoll(PQgetvalue(t, 0, 1), NULL, 10);
    e.node_min_j = g_ascii_strtod(PQgetvalue(t, 0, 2), NULL);
    e.node_mean_j = g_ascii_strtod(PQgetvalue(t, 0, 3), NULL);
    e.node_max_j = g_ascii_strtod(PQgetvalue(t, 0, 4), NULL);
    g_strlcpy(e.sources, PQgetvalue(t, 0, 5), sizeof e.sources);
    e.flags = (strcmp(PQgetvalue(t, 0, 6), "t") == 0 ? VIGIL_LOCAL_ENERGY_ESTIMATED : 0) |
              (strcmp(PQgetvalue(t, 0, 7), "t") == 0 ? VIGIL_LOCAL_ENERGY_UNCERTAIN : 0);
    int least = -1, most = -1;
    double least_j = 0, most_j = 0;
    for (int i = 0; i < PQntuples(n); i++) {
        e.processes += (int32_t)g_ascii_strtoll(PQgetvalue(n, i, 3), NULL, 10);
        e.processes_with_energy += (int32_t)g_ascii_strtoll(PQgetvalue(n, i, 4), NULL, 10);
        if (PQgetisnull(n, i, 2))
            continue;
        double j = g_ascii_strtod(PQgetvalue(n, i, 2), NULL);
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
        g_strlcpy(e.min_host, PQgetvalue(n, least, 1), sizeof e.min_host);
        g_strlcpy(e.max_host, PQgetvalue(n, most, 1), sizeof e.max_host);
    }
    if (VIGIL_CLI_REPORT_ADDS_JOB_ENERGY(report, &e))
        report->job_energy = e;
}

void web_api_run_add_job_energy(const struct web_run_energy *energy, JsonObject *out)
{
    if (energy->nodes == NULL) {
        json_object_set_null_member(out, "job_energy");
        return;
    }
    JsonObject *o = web_json_row(energy->totals, 0);
    json_object_set_array_member(o, "by_node", web_json_rows(energy->nodes));
    json_object_set_object_member(out, "job_energy", o);
}
