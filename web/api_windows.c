/* vigil-web — what capture kept:
 *   GET /api/v1/runs/RUN_ID/windows            the windows, with their anomalies and states
 *   GET /api/v1/windows/CAPTURE_ID/activities  one window's activities, a page at a time
 *   GET /api/v1/runs/RUN_ID/heatmap            stored activities per rank and time bin,
 *                                              from their per-second counts
 * A window holds every activity its process (or, for a node's window,
 * every process on the node) started inside it; pages are by key
 * (start_ns, process_id, seq), which the activities' index serves in
 * order, so no page reads the window whole. */
#include <string.h>

#include "api.h"
#include "db_pool.h"
#include "json_rows.h"
#include "vigil/ontology.h"

/* The windows of a run: its processes' and its nodes' while it ran; $2
 * the viewer's uid (NULL: an admin), whose processes alone count. */
static const char windows_sql[] =
    "WITH mine AS (SELECT process_id, node_id, start_time,"
    "                     coalesce(end_time, 'infinity') AS end_time"
    "                FROM processes WHERE run_id = $1::bigint"
    "                 AND ($2::bigint IS NULL OR uid = $2::bigint))"
    "SELECT c.capture_id, c.node_id, n.hostname, c.process_id, p.pid, p.rank, c.first_cycle,"
    "       c.last_cycle, c.start_time, c.end_time, c.activities_forwarded, c.reasons"
    "  FROM captures c JOIN nodes n USING (node_id)"
    "  LEFT JOIN processes p ON p.process_id = c.process_id"
    " WHERE c.process_id IN (SELECT process_id FROM mine)"
    "    OR (c.process_id IS NULL AND EXISTS (SELECT 1 FROM mine m WHERE m.node_id = c.node_id"
    "        AND c.end_time >= m.start_time AND c.start_time <= m.end_time))"
    " ORDER BY c.start_time, c.capture_id LIMIT 10000";

/* What happened on a window's node (and to its process) while it lasted;
 * $1 is the windows' ids, $2 the viewer's uid: another user's process's
 * anomalies and states on the node are not theirs to see. */
static const char window_anomalies_sql[] =
    "SELECT c.capture_id, a.anomaly_id, a.level, a.node_id, n.hostname, a.process_id, p.run_id,"
    "       a.cycle, a.time, a.state, a.plugin, a.metric, a.value, a.expected_min,"
    "       a.expected_max, a.message"
    "  FROM captures c JOIN anomalies a ON a.node_id = c.node_id"
    "   AND a.time BETWEEN c.start_time AND c.end_time"
    "   AND (c.process_id IS NULL OR a.process_id IS NULL OR a.process_id = c.process_id)"
    "  JOIN nodes n ON n.node_id = a.node_id"
    "  LEFT JOIN processes p ON p.process_id = a.process_id"
    " WHERE c.capture_id = ANY ($1::bigint[])"
    "   AND ($2::bigint IS NULL OR a.process_id IS NULL OR p.uid = $2::bigint)"
    " ORDER BY c.capture_id, a.time, a.anomaly_id";

static const char window_states_sql[] =
    "SELECT c.capture_id, s.level, s.process_id, s.cycle, s.time, s.state, s.overloaded_mask,"
    "       s.bad_issues, s.good_issues, s.other_issues"
    "  FROM captures c JOIN reasoner_states s ON s.node_id = c.node_id"
    "   AND s.time BETWEEN c.start_time AND c.end_time"
    "   AND (c.process_id IS NULL OR s.process_id IS NULL OR s.process_id = c.process_id)"
    "  LEFT JOIN processes p ON p.process_id = s.process_id"
    " WHERE c.capture_id = ANY ($1::bigint[])"
    "   AND ($2::bigint IS NULL OR s.process_id IS NULL OR p.uid = $2::bigint)"
    " ORDER BY c.capture_id, s.time LIMIT 100000";

/* Adds each row of `r` (its first column a capture_id) to its window's
 * array `member`. */
static void attach(PGresult *r, GHashTable *windows, const char *member)
{
    for (int row = 0; row < PQntuples(r); row++) {
        gint64 id = g_ascii_strtoll(PQgetvalue(r, row, 0), NULL, 10);
        JsonObject *w = g_hash_table_lookup(windows, &id);
        if (w == NULL)
            continue;
        JsonObject *o = web_json_row(r, row);
        json_object_remove_member(o, "capture_id");
        json_array_add_object_element(json_object_get_array_member(w, member), o);
    }
}

gboolean web_api_run_windows(struct web_request *req, GError **error)
{
    gint64 run_id = 0;
    if (!web_path_id_only(req, "run_id", &run_id, error))
        return FALSE;
    char id[24], uid_buf[24];
    if (!web_api_run_visible(req, run_id, id, error))
        return FALSE;
    const char *uid = web_viewer_uid_param(req, uid_buf);
    const char *params[] = {id, uid};
    PGresult *r = web_db_query(req, windows_sql, 2, params, error);
    if (r == NULL)
        return FALSE;
    JsonArray *windows = web_json_rows(r);
    GHashTable *by_id = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    GString *ids = g_string_new("{");
    for (guint i = 0; i < json_array_get_length(windows); i++) {
        JsonObject *w = json_array_get_object_element(windows, i);
        gint64 *key = g_new(gint64, 1);
        *key = json_object_get_int_member(w, "capture_id");
        g_hash_table_insert(by_id, key, w);
        g_string_append_printf(ids, "%s%" G_GINT64_FORMAT, i > 0 ? "," : "", *key);
        json_object_set_array_member(w, "anomalies", json_array_new());
        json_object_set_array_member(w, "reasoner_states", json_array_new());
    }
    g_string_append_c(ids, '}');
    PQclear(r);
    const char *id_params[] = {ids->str, uid};
    gboolean ok = TRUE;
    PGresult *anomalies = web_db_query(req, window_anomalies_sql, 2, id_params, error);
    PGresult *states =
        anomalies != NULL ? web_db_query(req, window_states_sql, 2, id_params, error) : NULL;
    if (anomalies == NULL || states == NULL) {
        ok = FALSE;
    } else {
        attach(anomalies, by_id, "anomalies");
        attach(states, by_id, "reasoner_states");
    }
    if (anomalies != NULL)
        PQclear(anomalies);
    if (states != NULL)
        PQclear(states);
    g_string_free(ids, TRUE);
    g_hash_table_unref(by_id);
    if (!ok) {
        json_array_unref(windows);
        return FALSE;
    }
    JsonObject *out = json_object_new();
    json_object_set_array_member(out, "windows", windows);
    web_answer_object(req, out);
    return TRUE;
}

/* "START_NS.PROCESS_ID.SEQ": plain numbers, checked here. */
static gboolean activity_cursor(struct web_request *req, const char *text, char **parts,
                                GError **error)
{
    char **p = g_strsplit(text, ".", 4);
    gboolean ok = g_strv_length(p) == 3;
    for (guint i = 0; ok && i < 3; i++) {
        gint64 v = 0;
        ok = g_ascii_string_to_signed(p[i], 10, i == 0 ? G_MININT64 : 0, G_MAXINT64, &v, NULL);
    }
    if (ok)
        for (guint i = 0; i < 3; i++)
            parts[i] = g_strdup(p[i]);
    else
        web_bad_parameter(req, error, "after",
                          "not a cursor of this listing (take `next` from the previous page)");
    g_strfreev(p);
    return ok;
}

gboolean web_api_window_activities(struct web_request *req, GError **error)
{
    gint64 capture_id = 0, limit = 0;
    const char *after = NULL;
    if (!web_path_id(req, req->segments[1], "capture_id", &capture_id, error) ||
        !web_param_int(req, "limit", req->settings->page_size, 1, req->settings->page_size_max,
                       &limit, error) ||
        !web_param_text(req, "after", 128, &after, error) || !web_params_done(req, error))
        return FALSE;
    char *cursor[3] = {NULL, NULL, NULL};
    if (after != NULL && !activity_cursor(req, after, cursor, error))
        return FALSE;
    char id[24], uid_buf[24], limit_buf[24];
    g_snprintf(id, sizeof id, "%" G_GINT64_FORMAT, capture_id);
    g_snprintf(limit_buf, sizeof limit_buf, "%" G_GINT64_FORMAT, limit + 1);
    const char *uid = web_viewer_uid_param(req, uid_buf);

    /* The window, if the viewer may see it: a process's window is its
     * owner's, in a run of theirs; a node's window is everybody's, its
     * activities only the viewer's own. */
    const char *wparams[] = {id, uid};
    PGresult *w = web_db_query_owned(
        req,
        "SELECT c.capture_id, c.node_id, n.hostname, c.process_id, p.pid, p.rank, p.run_id,"
        "       c.first_cycle, c.last_cycle, c.start_time, c.end_time, c.activities_forwarded,"
        "       c.reasons"
        "  FROM captures c JOIN nodes n USING (node_id)"
        "  LEFT JOIN processes p ON p.process_id = c.process_id"
        "  LEFT JOIN runs r ON r.run_id = p.run_id"
        " WHERE c.capture_id = $1::bigint"
        "   AND ($2::bigint IS NULL OR c.process_id IS NULL"
        "        OR (r.uid = $2::bigint AND p.uid = $2::bigint))",
        2, wparams, "window", id, error);
    if (w == NULL)
        goto fail;
    JsonObject *window = web_json_row(w, 0);
    /* The window's bounds as parameters, not from a join: the planner then
     * prunes the activities' day partitions when it plans (bench/web: 85 ms
     * of planning for 31 partitions otherwise). */
    char *start = g_strdup(PQgetvalue(w, 0, 9)), *end = g_strdup(PQgetvalue(w, 0, 10));
    PQclear(w);

    /* Its processes: the capture's own, or those on its node then. */
    const char *pparams[] = {id, uid};
    PGresult *procs = web_db_query(
        req,
        "SELECT coalesce('{' || string_agg(p.process_id::text, ',') || '}', '{}')"
        "  FROM captures c JOIN processes p ON c.process_id = p.process_id"
        "    OR (c.process_id IS NULL AND p.node_id = c.node_id AND p.start_time <= c.end_time"
        "        AND coalesce(p.end_time, 'infinity') >= c.start_time)"
        "  JOIN runs r ON r.run_id = p.run_id"
        " WHERE c.capture_id = $1::bigint"
        "   AND ($2::bigint IS NULL OR (r.uid = $2::bigint AND p.uid = $2::bigint))",
        2, pparams, error);
    if (procs == NULL) {
        json_object_unref(window);
        g_free(start);
        g_free(end);
        goto fail;
    }
    char *proc_ids = g_strdup(PQgetvalue(procs, 0, 0));
    PQclear(procs);

    /* One ordered index range per process (activities (process_id,
     * start_ns)), each cut at the cursor and at the page's length, merged:
     * a deep page reads no more than a first one. The cursor's order is
     * (start_ns, process_id, seq); within a process at the cursor's
     * start_ns, the seq bound says whether that process comes before or
     * after the cursor's. Seq is a ring position, never negative. */
    const char *params[] = {proc_ids,
                            start,
                            end,
                            cursor[0] ? cursor[0] : "-9223372036854775808",
                            cursor[1] ? cursor[1] : "0",
                            cursor[2] ? cursor[2] : "-1",
                            limit_buf};
    PGresult *r = web_db_query(
        req,
        "SELECT x.process_id, p.pid, p.rank, x.seq, x.layer, x.operation, f.path,"
        "       x.file_offset, x.bytes, x.result, x.errno, x.start_time, x.start_ns,"
        "       x.duration_ns, x.thread"
        "  FROM unnest($1::bigint[]) AS procs(id),"
        "       LATERAL (SELECT * FROM activities a"
        "                 WHERE a.process_id = procs.id"
        "                   AND a.start_time BETWEEN $2::timestamptz AND $3::timestamptz"
        "                   AND (a.start_ns, a.seq) > ($4::bigint,"
        "                       CASE WHEN procs.id > $5::bigint THEN -1"
        "                            WHEN procs.id < $5::bigint THEN 9223372036854775807"
        "                            ELSE $6::bigint END)"
        "                 ORDER BY a.start_ns, a.seq LIMIT $7::bigint) x"
        "  JOIN processes p ON p.process_id = x.process_id"
        "  LEFT JOIN files f ON f.file_id = x.file_id"
        " ORDER BY x.start_ns, x.process_id, x.seq LIMIT $7::bigint",
        7, params, error);
    g_free(proc_ids);
    g_free(start);
    g_free(end);
    if (r == NULL) {
        json_object_unref(window);
        goto fail;
    }
    int rows = PQntuples(r), shown = rows > limit ? (int)limit : rows;
    JsonArray *activities = json_array_sized_new((guint)shown);
    for (int i = 0; i < shown; i++) {
        JsonObject *a = web_json_row(r, i);
        /* Names, not the ontology's numbers (record/ontology.h). */
        unsigned layer = (unsigned)json_object_get_int_member(a, "layer");
        unsigned op = (unsigned)json_object_get_int_member(a, "operation");
        const char *layer_name = vigil_layer_name(layer), *op_name = vigil_op_name(op);
        json_object_set_string_member(a, "layer", layer_name != NULL ? layer_name : "?");
        json_object_set_string_member(a, "operation", op_name != NULL ? op_name : "?");
        json_array_add_object_element(activities, a);
    }
    JsonObject *out = json_object_new();
    json_object_set_object_member(out, "window", window);
    char *next = rows > limit
                     ? g_strdup_printf("%s.%s.%s", PQgetvalue(r, shown - 1, 12),
                                       PQgetvalue(r, shown - 1, 0), PQgetvalue(r, shown - 1, 3))
                     : NULL;
    PQclear(r);
    web_answer_page(req, out, "activities", activities, next);
    for (int i = 0; i < 3; i++)
        g_free(cursor[i]);
    return TRUE;
fail:
    for (int i = 0; i < 3; i++)
        g_free(cursor[i]);
    return FALSE;
}

/* The heat map's counts, (process_id, bin, calls, bytes) rows to add up:
 * $1 the run, $2 and $3 the interval in µs, $4 the bins, $5 the viewer's
 * uid (NULL: an admin). An activity's bin is that of its start_ns in µs.
 * The per-second counts (activity_seconds, migration 14) give every second
 * that lies whole in one bin. A second cut by one bin's edge counts from
 * its activities the shorter side of the edge (one index range), the
 * other side being its count less that; any other second (cut by the
 * interval, or by several edges) is counted from its activities. So the
 * answer is what counting every activity gives. */
static const char heatmap_sql[] =
    "WITH mine AS (SELECT process_id FROM processes WHERE run_id = $1::bigint"
    "                 AND ($5::bigint IS NULL OR uid = $5::bigint)),"
    " counted AS (SELECT c.process_id, extract(epoch FROM c.start_time)::bigint AS sec,"
    "                    sum(c.calls) AS calls, sum(c.bytes) AS bytes"
    "               FROM activity_seconds c"
    "              WHERE c.process_id IN (SELECT process_id FROM mine)"
    "                AND c.start_time >= to_timestamp(floor($2::bigint / 1e6))"
    "                AND c.start_time < to_timestamp(ceil($3::bigint / 1e6))"
    "              GROUP BY 1, 2),"
    " secs AS (SELECT s.*, b.first_bin,"
    "                 CASE WHEN NOT b.inside OR b.last_bin > b.first_bin + 1 THEN 'count'"
    "                      WHEN b.last_bin = b.first_bin THEN 'whole' ELSE 'split' END AS kind,"
    /* The first ns of the later bin, for a split second. */
    "                 ($2::bigint + ((b.first_bin + 1) * ($3::bigint - $2::bigint) + $4::int - 1)"
    "                               / $4::int) * 1000 AS edge_ns"
    "            FROM counted s,"
    "                 LATERAL (SELECT (s.sec * 1000000 - $2::bigint) * $4::int"
    "                                   / ($3::bigint - $2::bigint) AS first_bin,"
    "                                 (s.sec * 1000000 + 999999 - $2::bigint) * $4::int"
    "                                   / ($3::bigint - $2::bigint) AS last_bin,"
    "                                 s.sec * 1000000 >= $2::bigint"
    "                                 AND s.sec * 1000000 + 999999 < $3::bigint AS inside) b),"
    /* A split second: its whole count in the bin of the longer side, and
     * the shorter side's activities moved to theirs (added there, taken
     * off the other). Grouped, so that Citus plans the lateral: it refuses
     * an aggregate without GROUP BY over a CTE's column. */
    " split AS (SELECT s.process_id, s.first_bin, l.lower, p.calls, p.bytes"
    "             FROM secs s,"
    "                  LATERAL (SELECT s.edge_ns - s.sec * 1000000000 <= 500000000 AS lower) l,"
    "                  LATERAL (SELECT count(*) AS calls, coalesce(sum(a.bytes), 0) AS bytes"
    "                             FROM activities a"
    "                            WHERE a.process_id = s.process_id"
    "                              AND a.start_ns >= CASE WHEN l.lower THEN s.sec * 1000000000"
    "                                                     ELSE s.edge_ns END"
    "                              AND a.start_ns < CASE WHEN l.lower THEN s.edge_ns"
    "                                                    ELSE (s.sec + 1) * 1000000000 END"
    "                              AND a.start_time >= to_timestamp($2::bigint / 1e6)"
    "                              AND a.start_time < to_timestamp($3::bigint / 1e6)"
    "                            GROUP BY a.process_id) p"
    "            WHERE s.kind = 'split')"
    "SELECT process_id, first_bin::int, calls, bytes FROM secs WHERE kind = 'whole'"
    " UNION ALL "
    "SELECT process_id, (first_bin + CASE WHEN s.edge_ns - s.sec * 1000000000 <= 500000000"
    "                                     THEN 1 ELSE 0 END)::int, calls, bytes"
    "  FROM secs s WHERE kind = 'split'"
    " UNION ALL "
    "SELECT process_id, (first_bin + CASE WHEN lower THEN 0 ELSE 1 END)::int, calls, bytes"
    "  FROM split"
    " UNION ALL "
    "SELECT process_id, (first_bin + CASE WHEN lower THEN 1 ELSE 0 END)::int, -calls, -bytes"
    "  FROM split"
    " UNION ALL "
    "SELECT s.process_id, a.bin, a.calls, a.bytes"
    "  FROM secs s,"
    /* Aggregated inside, so that it stays one index range per second;
     * by process_id too, which Citus needs to push the lateral down. */
    "       LATERAL (SELECT least($4::int - 1, (a.start_ns / 1000 - $2::bigint) * $4::int"
    "                             / ($3::bigint - $2::bigint))::int AS bin,"
    "                       count(*) AS calls, coalesce(sum(a.bytes), 0) AS bytes"
    "                  FROM activities a"
    "                 WHERE a.process_id = s.process_id"
    "                   AND a.start_ns >= s.sec * 1000000000"
    "                   AND a.start_ns < (s.sec + 1) * 1000000000"
    "                   AND a.start_time >= to_timestamp($2::bigint / 1e6)"
    "                   AND a.start_time < to_timestamp($3::bigint / 1e6)"
    "                   AND a.start_ns >= $2::bigint * 1000 AND a.start_ns < $3::bigint * 1000"
    "                 GROUP BY a.process_id, 1) a"
    " WHERE s.kind = 'count'";

gboolean web_api_run_heatmap(struct web_request *req, GError **error)
{
    gint64 run_id = 0, bins = 0, from_us = 0, to_us = 0;
    gboolean from_given = FALSE, to_given = FALSE;
    if (!web_path_id(req, req->segments[1], "run_id", &run_id, error) ||
        !web_param_int(req, "bins", 200, 1, req->settings->points_max, &bins, error) ||
        !web_param_time(req, "from", &from_us, &from_given, error) ||
        !web_param_time(req, "to", &to_us, &to_given, error) || !web_params_done(req, error))
        return FALSE;
    char id[24], uid_buf[24];
    if (!web_api_run_visible(req, run_id, id, error))
        return FALSE;
    const char *uid = web_viewer_uid_param(req, uid_buf);
    const char *params1[] = {id, uid};
    PGresult *rows = web_db_query(
        req,
        "SELECT rank, process_id, pid, node_id,"
        "       (extract(epoch FROM min(start_time) OVER ()) * 1e6)::bigint AS first_us,"
        "       (extract(epoch FROM max(coalesce(end_time, now())) OVER ()) * 1e6)::bigint"
        "         AS last_us"
        "  FROM processes WHERE run_id = $1::bigint"
        "   AND ($2::bigint IS NULL OR uid = $2::bigint)"
        " ORDER BY rank NULLS LAST, start_time, process_id",
        2, params1, error);
    if (rows == NULL)
        return FALSE;
    int n_rows = PQntuples(rows);
    if (n_rows > 0) {
        if (!from_given)
            from_us = g_ascii_strtoll(PQgetvalue(rows, 0, 4), NULL, 10);
        if (!to_given)
            to_us = g_ascii_strtoll(PQgetvalue(rows, 0, 5), NULL, 10);
    }
    if (to_us <= from_us) {
        PQclear(rows);
        web_bad_parameter(req, error, to_given ? "to" : "from",
                          "the interval is empty: `to` must come after `from`");
        return FALSE;
    }
    char from_text[24], to_text[24], bins_text[24];
    g_snprintf(from_text, sizeof from_text, "%" G_GINT64_FORMAT, from_us);
    g_snprintf(to_text, sizeof to_text, "%" G_GINT64_FORMAT, to_us);
    g_snprintf(bins_text, sizeof bins_text, "%" G_GINT64_FORMAT, bins);
    const char *params[] = {id, from_text, to_text, bins_text, uid};
    PGresult *r = web_db_query(req, heatmap_sql, 5, params, error);
    if (r == NULL) {
        PQclear(rows);
        return FALSE;
    }
    guint nb = (guint)bins;
    GHashTable *row_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    gint64 *calls = g_new0(gint64, (gsize)n_rows * nb), *bytes = g_new0(gint64, (gsize)n_rows * nb);
    JsonArray *row_info = json_array_sized_new((guint)n_rows);
    for (int i = 0; i < n_rows; i++) {
        gint64 *key = g_new(gint64, 1);
        *key = g_ascii_strtoll(PQgetvalue(rows, i, 1), NULL, 10);
        g_hash_table_insert(row_of, key, GINT_TO_POINTER(i + 1));
        JsonObject *o = json_object_new();
        json_object_set_member(o, "rank", web_json_value(rows, i, 0));
        json_object_set_member(o, "process_id", web_json_value(rows, i, 1));
        json_object_set_member(o, "pid", web_json_value(rows, i, 2));
        json_object_set_member(o, "node_id", web_json_value(rows, i, 3));
        json_array_add_object_element(row_info, o);
    }
    for (int i = 0; i < PQntuples(r); i++) {
        gint64 process = g_ascii_strtoll(PQgetvalue(r, i, 0), NULL, 10);
        gint64 bin = g_ascii_strtoll(PQgetvalue(r, i, 1), NULL, 10);
        int row = GPOINTER_TO_INT(g_hash_table_lookup(row_of, &process)) - 1;
        if (row < 0 || bin < 0 || bin >= (gint64)nb)
            continue;
        calls[(gsize)row * nb + (gsize)bin] += g_ascii_strtoll(PQgetvalue(r, i, 2), NULL, 10);
        bytes[(gsize)row * nb + (gsize)bin] += g_ascii_strtoll(PQgetvalue(r, i, 3), NULL, 10);
    }
    PQclear(r);
    PQclear(rows);
    JsonArray *t = json_array_sized_new(nb);
    double bin_s = (double)(to_us - from_us) / 1e6 / nb;
    for (guint k = 0; k < nb; k++)
        json_array_add_double_element(t, (double)from_us / 1e6 + bin_s * k);
    /* Only the cells with activities, row by row and bin by bin: a long
     * run's map is mostly cells no captured window covers, and dense it
     * was 1,000 ranks x 200 bins x 2 zeros (863 KB) for a few thousand
     * numbers. */
    JsonArray *cell_row = json_array_new(), *cell_bin = json_array_new(),
              *cell_calls = json_array_new(), *cell_bytes = json_array_new();
    for (int i = 0; i < n_rows; i++)
        for (guint k = 0; k < nb; k++) {
            gsize at = (gsize)i * nb + k;
            if (calls[at] == 0 && bytes[at] == 0)
                continue;
            json_array_add_int_element(cell_row, i);
            json_array_add_int_element(cell_bin, k);
            json_array_add_int_element(cell_calls, calls[at]);
            json_array_add_int_element(cell_bytes, bytes[at]);
        }
    JsonObject *cells = json_object_new();
    json_object_set_array_member(cells, "row", cell_row);
    json_object_set_array_member(cells, "bin", cell_bin);
    json_object_set_array_member(cells, "calls", cell_calls);
    json_object_set_array_member(cells, "bytes", cell_bytes);
    g_free(calls);
    g_free(bytes);
    g_hash_table_unref(row_of);
    JsonObject *out = json_object_new();
    json_object_set_array_member(out, "t", t);
    json_object_set_double_member(out, "bin_s", bin_s);
    json_object_set_array_member(out, "rows", row_info);
    json_object_set_object_member(out, "cells", cells);
    web_answer_object(req, out);
    return TRUE;
}
