/* vigil export — the query of each kind of export.
 *
 * Times go out as ISO 8601 in UTC with µs ("2026-11-20T10:00:00.000000Z"),
 * formatted by the server, so CSV and JSON Lines say the same whatever the
 * session's TimeZone and DateStyle. Floating-point figures go out as the
 * server prints them (float8: the shortest text that reads back to the
 * same double, since PostgreSQL 12). */
#include "export_sql.h"
#include "vigil/ontology.h"

#define ISO_UTC(t) "to_char(" t " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

/* A roll-up window is at most [daemon] rollup_ms ≤ 1 h, and a node's clock
 * is reckoned anew every batch: a margin of an hour around the run's
 * processes lets the planner skip the day partitions outside it without
 * missing a row at the edge. */
#define MARGIN_US G_GINT64_CONSTANT(3600000000)

/* " AND COLUMN >= … AND COLUMN < …": the run's interval with the margin. */
static void append_bounds(GString *sql, const char *column, const struct export_run *r)
{
    if (!r->has_any)
        return;
    g_string_append_printf(
        sql, " AND %s >= timestamptz 'epoch' + %" G_GINT64_FORMAT " * interval '1 microsecond'",
        column, r->start_us - MARGIN_US);
    if (r->ended)
        g_string_append_printf(
            sql, " AND %s < timestamptz 'epoch' + %" G_GINT64_FORMAT " * interval '1 microsecond'",
            column, r->end_us + MARGIN_US);
}

/* " WHERE T.run_id = R", and " AND T.node_id = N" when a node is asked
 * for (`node_id` not 0); `table` "" for none. */
static void append_run_and_node(GString *sql, const char *table, const struct export_run *r,
                                gint64 node_id)
{
    g_string_append_printf(sql, " WHERE %srun_id = %" G_GINT64_FORMAT, table, r->run_id);
    if (node_id != 0)
        g_string_append_printf(sql, " AND %snode_id = %" G_GINT64_FORMAT, table, node_id);
}

/* The run's nodes, each with its interval (to the end of time while a
 * process of the run still runs there). */
static void append_run_nodes(GString *sql, const struct export_run *r, gint64 node_id)
{
    g_string_append(sql, "WITH rn AS (SELECT node_id, hostname, start_time,"
                         "                   coalesce(end_time, 'infinity') AS end_time"
                         "              FROM run_nodes");
    append_run_and_node(sql, "", r, node_id);
    g_string_append(sql, ") ");
}

/* The roll-ups of the run's nodes that overlap the run's time there,
 * whole (a window the run only partly covers is not pro-rated): every
 * metric's, through the view statistics_rollups. */
static void append_rollups_from(GString *sql, const struct export_run *r)
{
    g_string_append(sql, " FROM rn JOIN statistics_rollups st ON st.node_id = rn.node_id"
                         "   AND st.end_time > rn.start_time AND st.start_time < rn.end_time");
    append_bounds(sql, "st.start_time", r);
    g_string_append(sql, " JOIN metrics m ON m.metric_id = st.metric_id");
}

/* The same of the metrics `metrics_where` (a condition on m) only, read
 * from the arrays (migration 13): each such metric at its place i in each
 * metric set, where the view unnests all of a node's metrics. */
static void append_rollups_of(GString *sql, const struct export_run *r, const char *metrics_where)
{
    g_string_append_printf(
        sql,
        " FROM rn JOIN statistics_rollup_arrays a ON a.node_id = rn.node_id"
        "   AND a.end_time > rn.start_time AND a.start_time < rn.end_time"
        " JOIN (SELECT s.metric_set_id, m.*, i FROM metric_sets s"
        "        JOIN metrics m ON m.metric_id = ANY (s.metric_ids) AND %s,"
        "        unnest(array_positions(s.metric_ids, m.metric_id)) AS i) m USING (metric_set_id)"
        " CROSS JOIN LATERAL (SELECT a.start_time, a.end_time, a.delta[m.i] AS delta,"
        "        get_bit(a.uncertain, m.i::integer - 1) = 1 AS uncertain) st"
        " WHERE true",
        metrics_where);
    append_bounds(sql, "a.start_time", r);
}

static void append_power(GString *sql, const struct export_run *r, gint64 node_id)
{
    append_run_nodes(sql, r, node_id);
    g_string_append(
        sql,
        "SELECT " ISO_UTC(
            "st.end_time") " AS time, rn.node_id, rn.hostname,"
                           "       m.name AS metric,"
                           "       date_part('epoch', st.end_time - st.start_time) AS interval_s,"
                           "       st.delta / nullif(date_part('epoch', st.end_time - "
                           "st.start_time), 0)"
                           "           AS power_w,"
                           "       sum(st.delta) OVER w AS energy_j,"
                           "       m.source, m.origin = 'estimated' AS estimated, st.uncertain");
    /* Every energy zone (the estimate energy.node_j too) and the node's
     * running total; one running sum per name across a change of source,
     * which the source column of each row shows. */
    append_rollups_of(sql, r,
                      "m.kind = 'counter'"
                      " AND (m.name LIKE 'energy.%\\_j' OR m.name = 'node.energy_j')");
    g_string_append(sql, " WINDOW w AS (PARTITION BY rn.node_id, m.name ORDER BY st.start_time)"
                         " ORDER BY rn.node_id, m.name, st.start_time");
}

static void append_statistics(GString *sql, const struct export_run *r, gint64 node_id)
{
    append_run_nodes(sql, r, node_id);
    g_string_append(sql, "SELECT " ISO_UTC("st.start_time") " AS start_time, " ISO_UTC(
                             "st.end_time") " AS end_time,"
                                            "       rn.node_id, rn.hostname, m.name AS metric,"
                                            " m.unit, m.kind, m.source,"
                                            "       m.origin = 'estimated' AS estimated,"
                                            " st.samples, st.min, st.mean, st.max,"
                                            "       st.delta, st.uncertain");
    append_rollups_from(sql, r);
    g_string_append(sql, " ORDER BY rn.node_id, st.metric_id, st.start_time");
}

/* A SQL string literal of a fixed name (quotes doubled, though the
 * ontology's names have none). */
static void append_literal(GString *sql, const char *text)
{
    g_string_append_c(sql, '\'');
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '\'')
            g_string_append_c(sql, '\'');
        g_string_append_c(sql, *c);
    }
    g_string_append_c(sql, '\'');
}

static void append_activities(GString *sql, const struct export_run *r, gint64 node_id)
{
    g_string_append(sql, "SELECT " ISO_UTC("a.start_time") " AS time, a.start_ns,"
                                                           "       p.node_id, n.hostname, p.pid,"
                                                           " p.rank, a.thread, CASE a.layer");
    for (unsigned layer = 1; layer <= VIGIL_LAYER_COUNT; layer++) {
        g_string_append_printf(sql, " WHEN %u THEN ", layer);
        append_literal(sql, vigil_layer_name(layer));
    }
    g_string_append(sql, " ELSE a.layer::text END AS layer,"
                         "       coalesce(op.name, a.operation::text) AS operation,"
                         "       f.path AS file, a.file_offset, a.bytes, a.result, a.errno,"
                         "       a.duration_ns"
                         "  FROM processes p JOIN nodes n ON n.node_id = p.node_id"
                         "  JOIN activities a ON a.process_id = p.process_id");
    append_bounds(sql, "a.start_time", r);
    g_string_append(sql, "  LEFT JOIN files f ON f.file_id = a.file_id"
                         "  LEFT JOIN (VALUES ");
    gboolean first = TRUE;
    for (unsigned op = 0; op <= VIGIL_OP_MAX_ID; op++) {
        if (!vigil_op_is_valid(op))
            continue;
        g_string_append_printf(sql, "%s(%u, ", first ? "" : ", ", op);
        append_literal(sql, vigil_op_name(op));
        g_string_append_c(sql, ')');
        first = FALSE;
    }
    g_string_append(sql, ") AS op (id, name) ON op.id = a.operation");
    append_run_and_node(sql, "p.", r, node_id);
    g_string_append(sql, " ORDER BY a.start_ns, p.node_id, a.process_id, a.seq");
}

char *export_select_sql(enum export_what what, const struct export_run *r, gint64 node_id)
{
    GString *sql = g_string_new(NULL);
    switch (what) {
    case EXPORT_POWER:
        append_power(sql, r, node_id);
        break;
    case EXPORT_STATISTICS:
        append_statistics(sql, r, node_id);
        break;
    case EXPORT_ACTIVITIES:
        append_activities(sql, r, node_id);
        break;
    }
    return g_string_free(sql, FALSE);
}
