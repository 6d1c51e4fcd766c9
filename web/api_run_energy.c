/* vigil-web — a run's energy across its nodes for GET /api/v1/runs/RUN_ID:
 * the warehouse's run_energy and run_energy_nodes views
 * (warehouse/migrations/0005_job_energy.sql), as "job_energy". */
#include "api.h"
#include "db_pool.h"
#include "json_rows.h"
#include "job_energy_views.h"

gboolean web_api_run_fill_job_energy(struct web_request *req, const char *run_id,
                                     struct vigil_report *report, GError **error)
{
    gboolean mixed = FALSE;
    if (report->job_energy.nodes > 0)
        return TRUE;
    if (!web_api_run_mixed(req, run_id, &mixed, error))
        return FALSE;
    if (mixed)
        return TRUE; /* the sum would count another user's processes */
    const char *params[] = {run_id};
    PGresult *r = web_db_query(req, vigil_cli_run_energy_sql, 1, params, error);
    if (r == NULL)
        return FALSE;
    struct vigil_report_job_energy energy;
    vigil_cli_job_energy_from_result(r, &energy);
    if (VIGIL_CLI_REPORT_ADDS_JOB_ENERGY(report, &energy))
        report->job_energy = energy;
    PQclear(r);
    return TRUE;
}

gboolean web_api_run_add_job_energy(struct web_request *req, const char *run_id, JsonObject *out,
                                    GError **error)
{
    gboolean mixed = FALSE;
    if (!web_api_run_mixed(req, run_id, &mixed, error))
        return FALSE;
    if (mixed) {
        json_object_set_null_member(out, "job_energy");
        return TRUE;
    }
    const char *params[] = {run_id};
    PGresult *totals = web_db_query(
        req,
        "SELECT energy_j, nodes, node_min_j, node_mean_j, node_max_j, sources, estimated,"
        "       uncertain, complete"
        "  FROM run_energy WHERE run_id = $1::bigint AND energy_j IS NOT NULL",
        1, params, error);
    if (totals == NULL)
        return FALSE;
    if (PQntuples(totals) == 0) {
        PQclear(totals);
        json_object_set_null_member(out, "job_energy");
        return TRUE;
    }
    PGresult *nodes = web_db_query(
        req,
        "SELECT node_id, hostname, energy_j, processes, processes_with_energy, sources,"
        "       estimated, start_time, end_time"
        "  FROM run_energy_nodes WHERE run_id = $1::bigint ORDER BY hostname, node_id",
        1, params, error);
    if (nodes == NULL) {
        PQclear(totals);
        return FALSE;
    }
    JsonObject *energy = web_json_row(totals, 0);
    json_object_set_array_member(energy, "by_node", web_json_rows(nodes));
    json_object_set_object_member(out, "job_energy", energy);
    PQclear(nodes);
    PQclear(totals);
    return TRUE;
}
