/* vigil-web — the nodes: GET /api/v1/nodes and /api/v1/nodes/NODE_ID (its
 * last anomalies and runs; its statistics are api_series.c's). Nodes are
 * everybody's; the runs and process anomalies shown are the viewer's. */
#include "api.h"
#include "db_pool.h"
#include "json_rows.h"

static const char nodes_sql[] =
    "SELECT n.node_id, n.hostname, n.first_seen, n.last_seen,"
    "       (SELECT count(DISTINCT run_id) FROM processes p WHERE p.node_id = n.node_id) AS runs,"
    "       (SELECT count(*) FROM anomalies a WHERE a.node_id = n.node_id) AS anomalies"
    "  FROM nodes n WHERE ($1::bigint IS NULL OR n.node_id = $1::bigint)"
    " ORDER BY n.hostname, n.node_id LIMIT 100000";

gboolean web_api_nodes(struct web_request *req, GError **error)
{
    if (!web_params_done(req, error))
        return FALSE;
    const char *params[] = {NULL};
    JsonObject *out = json_object_new();
    if (!web_json_query_rows(req, out, "nodes", nodes_sql, 1, params, error)) {
        json_object_unref(out);
        return FALSE;
    }
    web_answer_object(req, out);
    return TRUE;
}

gboolean web_api_node(struct web_request *req, GError **error)
{
    gint64 node_id = 0;
    if (!web_path_id_only(req, "node_id", &node_id, error))
        return FALSE;
    char id[24], uid_buf[24];
    g_snprintf(id, sizeof id, "%" G_GINT64_FORMAT, node_id);
    const char *params[] = {id};
    PGresult *r = web_db_query_found(req, nodes_sql, 1, params, "node", id, error);
    if (r == NULL)
        return FALSE;
    JsonObject *out = json_object_new();
    json_object_set_object_member(out, "node", web_json_row(r, 0));
    PQclear(r);

    const char *uid = web_viewer_uid_param(req, uid_buf);
    const char *aparams[] = {id, uid};
    if (!web_json_query_rows(
            req, out, "anomalies",
            "SELECT a.anomaly_id, a.level, a.node_id, n.hostname, a.process_id, p.run_id,"
            "       a.cycle,"
            "       a.time, a.state, a.plugin, a.metric, a.value, a.expected_min,"
            "       a.expected_max, a.message"
            "  FROM anomalies a JOIN nodes n ON n.node_id = a.node_id"
            "  LEFT JOIN processes p ON p.process_id = a.process_id"
            "  LEFT JOIN runs r ON r.run_id = p.run_id"
            " WHERE a.node_id = $1::bigint"
            "   AND ($2::bigint IS NULL OR a.process_id IS NULL"
            "        OR (r.uid = $2::bigint AND p.uid = $2::bigint))"
            " ORDER BY a.time DESC, a.anomaly_id DESC LIMIT 50",
            2, aparams, error)) {
        json_object_unref(out);
        return FALSE;
    }

    const char *rparams[] = {uid, id};
    char *inner = g_strconcat(web_api_run_base_sql,
                              " AND r.run_id IN (SELECT run_id FROM processes"
                              "                   WHERE node_id = $2::bigint)"
                              " ORDER BY r.start_time DESC, r.run_id DESC LIMIT 20",
                              NULL);
    char *sql = web_api_run_sql(inner, "ORDER BY b.start_time DESC, b.run_id DESC");
    g_free(inner);
    r = web_db_query(req, sql, 2, rparams, error);
    g_free(sql);
    if (r == NULL) {
        json_object_unref(out);
        return FALSE;
    }
    JsonArray *runs = web_api_runs_from_result(r, PQntuples(r));
    json_object_set_array_member(out, "runs", runs);
    PQclear(r);
    web_answer_object(req, out);
    return TRUE;
}
