/* vigil-web — a run's energy across its nodes for GET /api/v1/runs/RUN_ID:
 * as "job_energy", and as the stored report's job_energy when it has none,
 * from one read of the warehouse's run_energy_nodes view
 * (warehouse/migrations/0005_job_energy.sql) with the run's totals over
 * those rows: `vigil report`'s own query (report/job_energy_views.c), so
 * that the two give the same sums. Each read of the view parses every
 * process's report (a 1,000-rank run's take 40 ms). */
#include <string.h>

#include "api.h"
#include "db_pool.h"
#include "json_rows.h"
#include "job_energy_views.h"

gboolean web_api_run_read_energy(struct web_request *req, const char *run_id,
                                 struct web_run_energy *out, GError **error)
{
    gboolean mixed = FALSE;
    out->nodes = NULL;
    if (!web_api_run_mixed(req, run_id, &mixed, error))
        return FALSE;
    if (mixed)
        return TRUE; /* the sums would count another user's processes */
    const char *params[] = {run_id};
    out->nodes = web_db_query(req, vigil_cli_run_energy_nodes_sql, 1, params, error);
    if (out->nodes == NULL)
        return FALSE;
    if (PQntuples(out->nodes) == 0 || PQgetisnull(out->nodes, 0, VIGIL_RUN_ENERGY_J))
        web_api_run_energy_clear(out); /* no figure */
    return TRUE;
}

void web_api_run_energy_clear(struct web_run_energy *energy)
{
    g_clear_pointer(&energy->nodes, PQclear);
}

void web_api_run_fill_job_energy(const struct web_run_energy *energy, struct vigil_report *report)
{
    if (report->job_energy.nodes > 0 || energy->nodes == NULL)
        return;
    struct vigil_report_job_energy e;
    vigil_cli_run_energy_from_result(energy->nodes, &e);
    if (VIGIL_CLI_REPORT_ADDS_JOB_ENERGY(report, &e))
        report->job_energy = e;
}

/* Columns [first, end) of row `row`, named as `names` (NULL: as the query). */
static JsonObject *columns_object(const PGresult *r, int row, int first, int end,
                                  const char *const *names)
{
    JsonObject *o = json_object_new();
    for (int c = first; c < end; c++)
        json_object_set_member(o, names != NULL ? names[c - first] : PQfname(r, c),
                               web_json_value(r, row, c));
    return o;
}

void web_api_run_add_job_energy(const struct web_run_energy *energy, JsonObject *out)
{
    static const char *const totals[] = {"energy_j",    "nodes",      "node_min_j",
                                         "node_mean_j", "node_max_j", "sources",
                                         "estimated",   "uncertain",  "complete"};
    G_STATIC_ASSERT(G_N_ELEMENTS(totals) == VIGIL_RUN_ENERGY_COLUMNS - VIGIL_RUN_ENERGY_J);
    const PGresult *n = energy->nodes;
    if (n == NULL) {
        json_object_set_null_member(out, "job_energy");
        return;
    }
    JsonObject *o = columns_object(n, 0, VIGIL_RUN_ENERGY_J, VIGIL_RUN_ENERGY_COLUMNS, totals);
    JsonArray *by_node = json_array_new();
    for (int i = 0; i < PQntuples(n); i++)
        json_array_add_object_element(by_node,
                                      columns_object(n, i, 0, VIGIL_RUN_ENERGY_NODE_COLUMNS, NULL));
    json_object_set_array_member(o, "by_node", by_node);
    json_object_set_object_member(out, "job_energy", o);
}
