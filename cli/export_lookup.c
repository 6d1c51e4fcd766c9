/* vigil export — what RUN and --node name in the warehouse. */
#include <string.h>

#include "export_lookup.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

static gint64 int_at(PGresult *result, int row, int column)
{
    return g_ascii_strtoll(PQgetvalue(result, row, column), NULL, 10);
}

/* The run and its processes' interval. */
static const char run_sql[] = "SELECT r.run_id, count(p.process_id),"
                              "       (extract(epoch FROM min(p.start_time)) * 1000000)::bigint,"
                              "       (extract(epoch FROM max(p.end_time)) * 1000000)::bigint,"
                              "       coalesce(bool_and(p.end_time IS NOT NULL), false)"
                              "  FROM runs r LEFT JOIN processes p USING (run_id)"
                              " WHERE r.run_id = $1::bigint GROUP BY r.run_id";

gboolean export_find_run(PGconn *db, const char *run, struct export_run *out, GError **error)
{
    PGresult *result = vigil_warehouse_query_run(db, run, run_sql, error);
    if (result == NULL)
        return FALSE;
    /* The run was there a moment ago; runs are never deleted but by hand. */
    gboolean found = PQntuples(result) == 1;
    if (found) {
        out->run_id = int_at(result, 0, 0);
        out->has_any = int_at(result, 0, 1) > 0;
        out->start_us = out->has_any ? int_at(result, 0, 2) : 0;
        out->ended = out->has_any && PQgetvalue(result, 0, 4)[0] == 't';
        out->end_us = out->ended ? int_at(result, 0, 3) : 0;
    } else {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "run %s went from the warehouse while it was read", run);
    }
    PQclear(result);
    return found;
}

/* "n1 (node 1), n2 (node 2)": the nodes of the run. */
static char *run_nodes_text(PGconn *db, const char *run_id, GError **error)
{
    const char *const params[] = {run_id};
    PGresult *result =
        vigil_warehouse_query(db,
                              "SELECT string_agg(format('%s (node %s)', hostname, node_id), ', '"
                              "                  ORDER BY node_id)"
                              "  FROM run_nodes WHERE run_id = $1::bigint",
                              1, params, error);
    if (result == NULL)
        return NULL;
    char *text = g_strdup(PQgetisnull(result, 0, 0) ? "none" : PQgetvalue(result, 0, 0));
    PQclear(result);
    return text;
}

gboolean export_find_node(PGconn *db, const char *run, const struct export_run *r, const char *node,
                          gint64 *node_id, GError **error)
{
    char run_id[24];
    g_snprintf(run_id, sizeof run_id, "%" G_GINT64_FORMAT, r->run_id);
    const char *const params[] = {run_id, node, vigil_warehouse_is_row_number(node) ? node : NULL};
    /* An id first: a host may be called "17" too. */
    PGresult *result =
        vigil_warehouse_query(db,
                              "SELECT node_id, hostname, node_id = $3::bigint AS by_id"
                              "  FROM run_nodes WHERE run_id = $1::bigint"
                              "   AND (node_id = $3::bigint OR hostname = $2)"
                              " ORDER BY by_id DESC, node_id",
                              3, params, error);
    if (result == NULL)
        return FALSE;
    int rows = PQntuples(result);
    gboolean by_id = rows > 0 && PQgetvalue(result, 0, 2)[0] == 't';
    if (rows == 1 || by_id) {
        *node_id = int_at(result, 0, 0);
        PQclear(result);
        return TRUE;
    }
    if (rows > 1) {
        GString *ids = g_string_new(NULL);
        for (int i = 0; i < rows; i++)
            g_string_append_printf(ids, "%s%s", i > 0 ? ", " : "", PQgetvalue(result, i, 0));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "--node %s: run %s was on %d nodes of that name (ids %s): give the node id",
                    node, run, rows, ids->str);
        g_string_free(ids, TRUE);
        PQclear(result);
        return FALSE;
    }
    PQclear(result);
    /* Say whether the node is unknown or only not the run's. */
    result = vigil_warehouse_query(
        db, "SELECT count(*) FROM nodes WHERE node_id = $2::bigint OR hostname = $1", 2,
        (const char *const[]){node, params[2]}, error);
    if (result == NULL)
        return FALSE;
    gboolean known = int_at(result, 0, 0) > 0;
    PQclear(result);
    char *nodes = run_nodes_text(db, run_id, error);
    if (nodes == NULL)
        return FALSE;
    if (known)
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "--node %s: run %s did not run on that node (its nodes: %s)", node, run, nodes);
    else
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "--node %s: the warehouse has no such node (neither a node id nor a host "
                    "name); run %s's nodes: %s",
                    node, run, nodes);
    g_free(nodes);
    return FALSE;
}
