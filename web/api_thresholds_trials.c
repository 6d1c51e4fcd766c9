/* vigil-web — GET /api/v1/tune-trials and /api/v1/tune-trials/TRIAL_ID:
 * the comparisons `vigil tune --store` kept (warehouse/migrations/0009, the
 * tune_comparisons view), the recorded configuration and a candidate side
 * by side, for the thresholds page. Like the thresholds, they are seen by
 * every viewer: they describe the detectors, not anyone's runs. */
#include "api.h"
#include "db_pool.h"
#include "json_rows.h"

/* $1 trial (NULL: all), $2 node, $3 cursor (the last trial_id shown),
 * $4 limit. Newest first: trial ids grow as trials are stored. */
static const char trials_sql[] = "SELECT * FROM tune_comparisons"
                                 " WHERE ($1::bigint IS NULL OR trial_id = $1::bigint)"
                                 "   AND ($2::text IS NULL OR node = $2)"
                                 "   AND ($3::bigint IS NULL OR trial_id < $3::bigint)"
                                 " ORDER BY trial_id DESC LIMIT $4::bigint";

gboolean web_api_tune_trials(struct web_request *req, GError **error)
{
    gint64 limit = 0, after = 0;
    const char *node = NULL;
    if (!web_param_text(req, "node", 256, &node, error) ||
        !web_param_int(req, "after", 0, 1, G_MAXINT64, &after, error) ||
        !web_param_int(req, "limit", req->settings->page_size, 1, req->settings->page_size_max,
                       &limit, error) ||
        !web_params_done(req, error))
        return FALSE;
    char after_buf[24], limit_buf[24];
    g_snprintf(after_buf, sizeof after_buf, "%" G_GINT64_FORMAT, after);
    g_snprintf(limit_buf, sizeof limit_buf, "%" G_GINT64_FORMAT, limit + 1);
    const char *params[] = {NULL, node, after > 0 ? after_buf : NULL, limit_buf};
    PGresult *r = web_db_query(req, trials_sql, G_N_ELEMENTS(params), params, error);
    if (r == NULL)
        return FALSE;
    int rows = PQntuples(r), shown = rows > limit ? (int)limit : rows;
    JsonArray *list = json_array_sized_new((guint)shown);
    for (int i = 0; i < shown; i++)
        json_array_add_object_element(list, web_json_row(r, i));
    char *next = rows > limit ? g_strdup(PQgetvalue(r, shown - 1, PQfnumber(r, "trial_id"))) : NULL;
    PQclear(r);
    web_answer_page(req, NULL, "trials", list, next);
    return TRUE;
}

gboolean web_api_tune_trial(struct web_request *req, GError **error)
{
    gint64 trial_id = 0;
    if (!web_path_id_only(req, "trial_id", &trial_id, error))
        return FALSE;
    char id[24];
    g_snprintf(id, sizeof id, "%" G_GINT64_FORMAT, trial_id);
    const char *params[] = {id, NULL, NULL, "1"};
    PGresult *r =
        web_db_query_found(req, trials_sql, G_N_ELEMENTS(params), params, "trial", id, error);
    if (r == NULL)
        return FALSE;
    JsonObject *out = json_object_new();
    json_object_set_object_member(out, "trial", web_json_row(r, 0));
    PQclear(r);
    web_answer_object(req, out);
    return TRUE;
}
