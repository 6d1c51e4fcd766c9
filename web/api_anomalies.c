/* vigil-web — GET /api/v1/anomalies: what the ADPIs reported, newest
 * first, filtered, a page at a time (key: time, anomaly_id). A non-admin
 * sees the anomalies of their own processes (in their own runs) and those
 * of nodes. */
#include "api.h"
#include "db_pool.h"
#include "json_rows.h"

/* $1 viewer uid, $2 run, $3 node, $4 plugin, $5 level, $6 from µs, $7 to µs,
 * $8/$9 cursor, $10 limit. */
static const char anomalies_sql[] =
    "SELECT a.anomaly_id, a.level, a.node_id, n.hostname, a.process_id, p.run_id, a.cycle,"
    "       a.time, a.state, a.plugin, a.metric, a.value, a.expected_min, a.expected_max,"
    "       a.message, (extract(epoch FROM a.time) * 1e6)::bigint AS time_us"
    "  FROM anomalies a JOIN nodes n USING (node_id)"
    "  LEFT JOIN processes p ON p.process_id = a.process_id"
    "  LEFT JOIN runs r ON r.run_id = p.run_id"
    " WHERE ($1::bigint IS NULL OR a.process_id IS NULL"
    "        OR (r.uid = $1::bigint AND p.uid = $1::bigint))"
    "   AND ($2::bigint IS NULL"
    "        OR a.process_id IN (SELECT process_id FROM processes WHERE run_id = $2::bigint)"
    "        OR (a.process_id IS NULL AND EXISTS (SELECT 1 FROM processes m"
    "            WHERE m.run_id = $2::bigint AND m.node_id = a.node_id"
    "              AND a.time BETWEEN m.start_time AND coalesce(m.end_time, 'infinity'))))"
    "   AND ($3::text IS NULL OR n.hostname = $3 OR n.node_id::text = $3)"
    "   AND ($4::text IS NULL OR a.plugin = $4)"
    "   AND ($5::text IS NULL OR a.level = $5)"
    "   AND ($6::bigint IS NULL OR a.time >= timestamptz 'epoch' + $6::bigint * interval '1 us')"
    "   AND ($7::bigint IS NULL OR a.time <= timestamptz 'epoch' + $7::bigint * interval '1 us')"
    "   AND ($8::bigint IS NULL OR (a.time, a.anomaly_id) <"
    "        (timestamptz 'epoch' + $8::bigint * interval '1 us', $9::bigint))"
    " ORDER BY a.time DESC, a.anomaly_id DESC LIMIT $10::bigint";

gboolean web_api_anomalies(struct web_request *req, GError **error)
{
    gint64 run = 0, limit = 0, from_us = 0, to_us = 0;
    gboolean from_given = FALSE, to_given = FALSE;
    const char *node = NULL, *plugin = NULL, *after = NULL;
    int level = 0;
    static const char *const levels[] = {"any", "process", "node", "system", NULL};
    if (!web_param_int(req, "run", 0, 1, G_MAXINT64, &run, error) ||
        !web_param_text(req, "node", 256, &node, error) ||
        !web_param_text(req, "plugin", 128, &plugin, error) ||
        !web_param_choice(req, "level", levels, 0, &level, error) ||
        !web_param_time(req, "from", &from_us, &from_given, error) ||
        !web_param_time(req, "to", &to_us, &to_given, error) ||
        !web_param_int(req, "limit", req->settings->page_size, 1, req->settings->page_size_max,
                       &limit, error) ||
        !web_param_text(req, "after", 64, &after, error) || !web_params_done(req, error))
        return FALSE;
    char *cursor_time = NULL, *cursor_id = NULL;
    if (after != NULL) {
        char **p = g_strsplit(after, ".", 3);
        gint64 a = 0, b = 0;
        gboolean ok = g_strv_length(p) == 2 &&
                      g_ascii_string_to_signed(p[0], 10, G_MININT64, G_MAXINT64, &a, NULL) &&
                      g_ascii_string_to_signed(p[1], 10, 1, G_MAXINT64, &b, NULL);
        if (ok) {
            cursor_time = g_strdup(p[0]);
            cursor_id = g_strdup(p[1]);
        }
        g_strfreev(p);
        if (!ok) {
            web_bad_parameter(req, error, "after",
                              "not a cursor of this listing (take `next` from the previous page)");
            return FALSE;
        }
    }
    char uid_buf[24], run_buf[24], from_buf[24], to_buf[24], limit_buf[24];
    g_snprintf(run_buf, sizeof run_buf, "%" G_GINT64_FORMAT, run);
    g_snprintf(from_buf, sizeof from_buf, "%" G_GINT64_FORMAT, from_us);
    g_snprintf(to_buf, sizeof to_buf, "%" G_GINT64_FORMAT, to_us);
    g_snprintf(limit_buf, sizeof limit_buf, "%" G_GINT64_FORMAT, limit + 1);
    const char *params[] = {
        web_viewer_uid_param(req, uid_buf),
        run > 0 ? run_buf : NULL,
        node,
        plugin,
        level > 0 ? levels[level] : NULL,
        from_given ? from_buf : NULL,
        to_given ? to_buf : NULL,
        cursor_time,
        cursor_id,
        limit_buf,
    };
    PGresult *r = web_db_query(req, anomalies_sql, G_N_ELEMENTS(params), params, error);
    g_free(cursor_time);
    g_free(cursor_id);
    if (r == NULL)
        return FALSE;
    int rows = PQntuples(r), shown = rows > limit ? (int)limit : rows;
    int time_col = PQfnumber(r, "time_us"), id_col = PQfnumber(r, "anomaly_id");
    JsonArray *list = json_array_sized_new((guint)shown);
    for (int i = 0; i < shown; i++) {
        JsonObject *o = web_json_row(r, i);
        json_object_remove_member(o, "time_us");
        json_array_add_object_element(list, o);
    }
    char *next = rows > limit ? g_strdup_printf("%s.%s", PQgetvalue(r, shown - 1, time_col),
                                                PQgetvalue(r, shown - 1, id_col))
                              : NULL;
    PQclear(r);
    web_answer_page(req, NULL, "anomalies", list, next);
    return TRUE;
}
