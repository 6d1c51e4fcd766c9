/* vigil-web — GET /api/v1/runs: a page of runs, filtered and sorted, with
 * keyset pagination (the sort key and run_id of the last row), so every
 * page costs the same and rows stored meanwhile do not shift pages. */
#include <string.h>

#include "api.h"
#include "auth.h"
#include "db_pool.h"
#include "json_rows.h"

/* The RUN object of docs/web-api.md, for the runs `r` of a FROM the
 * caller completes. A run's anomalies and captures are its processes'
 * and those of its nodes while it ran. Parameter $1 is the viewer's uid
 * (NULL: an admin, who sees all). */
const char web_api_run_columns_sql[] =
    "SELECT r.run_id, r.run_key, j.scheduler_job_id AS job, r.program, to_json(r.argv) AS argv,"
    "       r.uid, NULL::text AS \"user\", r.start_time, r.end_time,"
    "       extract(epoch FROM r.end_time - r.start_time)::float8 AS duration_s, r.exit_status,"
    "       t.processes, t.ranks, t.nodes, t.calls, t.bytes_read, t.bytes_written,"
    "       t.bytes_read + t.bytes_written AS bytes, t.energy_j, t.energy_source,"
    "       t.energy_estimated,"
    "       (SELECT count(*) FROM anomalies a WHERE a.process_id = ANY (t.process_ids))"
    "     + (SELECT count(*) FROM anomalies a WHERE a.process_id IS NULL"
    "           AND a.node_id = ANY (t.node_ids) AND a.time >= r.start_time"
    "           AND a.time <= coalesce(r.end_time, 'infinity')) AS anomalies,"
    "       (SELECT count(*) FROM captures c WHERE c.process_id = ANY (t.process_ids))"
    "     + (SELECT count(*) FROM captures c WHERE c.process_id IS NULL"
    "           AND c.node_id = ANY (t.node_ids) AND c.end_time >= r.start_time"
    "           AND c.start_time <= coalesce(r.end_time, 'infinity')) AS captures"
    "  FROM runs r LEFT JOIN jobs j USING (job_id)"
    "  CROSS JOIN LATERAL ("
    "    SELECT count(*) AS processes, nullif(count(p.rank), 0) AS ranks,"
    "           count(DISTINCT p.node_id) AS nodes,"
    "           sum(s.calls) AS calls, sum(s.bytes_read) AS bytes_read,"
    "           sum(s.bytes_written) AS bytes_written, sum(s.energy_j) AS energy_j,"
    "           string_agg(DISTINCT s.energy_source, ', ') AS energy_source,"
    "           bool_or((s.report->>'energy_estimated')::boolean)"
    "             FILTER (WHERE s.energy_j IS NOT NULL) AS energy_estimated,"
    "           array_agg(p.process_id) AS process_ids,"
    "           array_agg(DISTINCT p.node_id) AS node_ids"
    "      FROM processes p LEFT JOIN run_summaries s USING (process_id)"
    "     WHERE p.run_id = r.run_id) t"
    " WHERE ($1::bigint IS NULL OR r.uid = $1::bigint)";

void web_api_runs_fill_users(JsonArray *runs)
{
    for (guint i = 0; i < json_array_get_length(runs); i++) {
        JsonObject *run = json_array_get_object_element(runs, i);
        const char *name = web_user_name(json_object_get_int_member(run, "uid"));
        if (name != NULL)
            json_object_set_string_member(run, "user", name);
    }
}

JsonObject *web_api_run_row(struct web_request *req, gint64 run_id, GError **error)
{
    char uid_buf[24], id_buf[24];
    g_snprintf(id_buf, sizeof id_buf, "%" G_GINT64_FORMAT, run_id);
    const char *params[] = {web_viewer_uid_param(req, uid_buf), id_buf};
    char *sql = g_strconcat(web_api_run_columns_sql, " AND r.run_id = $2::bigint", NULL);
    PGresult *r = web_db_query(req, sql, 2, params, error);
    g_free(sql);
    if (r == NULL)
        return NULL;
    JsonObject *run = NULL;
    if (PQntuples(r) == 1) {
        run = web_json_row(r, 0);
        const char *name = web_user_name(json_object_get_int_member(run, "uid"));
        if (name != NULL)
            json_object_set_string_member(run, "user", name);
    } else {
        /* Another user's run is "not found" too: a non-admin cannot tell
         * which run ids exist. */
        g_set_error(error, WEB_ERROR, WEB_ERROR_NOT_FOUND,
                    "run %" G_GINT64_FORMAT " does not exist%s", run_id,
                    req->viewer.admin ? "" : " or is not yours");
    }
    PQclear(r);
    return run;
}

/* The sort keys: the column's expression in the outer query (never NULL,
 * so keyset comparisons hold), its SQL type for the cursor, and how a
 * cursor's text is checked before it reaches SQL. */
enum cursor_kind { CURSOR_TIME, CURSOR_INT, CURSOR_NUMBER, CURSOR_TEXT };
static const struct sort_key {
    const char *name;
    const char *expression;
    const char *type;
    enum cursor_kind kind;
} sort_keys[] = {
    {"start_time", "q.start_time", "timestamptz", CURSOR_TIME},
    {"energy_j", "coalesce(q.energy_j, -1)", "float8", CURSOR_NUMBER},
    {"bytes", "coalesce(q.bytes, -1)", "numeric", CURSOR_NUMBER},
    {"duration_s", "coalesce(q.duration_s, -1)", "float8", CURSOR_NUMBER},
    {"program", "q.program", "text", CURSOR_TEXT},
    {"run_id", "q.run_id", "bigint", CURSOR_INT},
};

static const char *const sort_choices[] = {
    "start_time",  "-start_time", "energy_j", "-energy_j", "bytes",   "-bytes", "duration_s",
    "-duration_s", "program",     "-program", "run_id",    "-run_id", NULL,
};

/* A cursor is "KEY\x1fRUN_ID" in unpadded base64url: opaque to users, and
 * checked here so that a forged one is a 400 naming `after`, never an SQL
 * error. */
static gboolean cursor_decode(struct web_request *req, const char *text, enum cursor_kind kind,
                              char **key, char **run_id, GError **error)
{
    gsize n = strlen(text);
    char *b64 = g_malloc(n + 4);
    for (gsize i = 0; i < n; i++)
        b64[i] = text[i] == '-' ? '+' : text[i] == '_' ? '/' : text[i];
    gsize padded = n;
    while (padded % 4 != 0)
        b64[padded++] = '=';
    b64[padded] = '\0';
    gboolean alphabet_ok = n > 0 && n <= 512;
    for (gsize i = 0; i < n && alphabet_ok; i++)
        alphabet_ok = g_ascii_isalnum(text[i]) || text[i] == '-' || text[i] == '_';
    gsize len = 0;
    guchar *raw = alphabet_ok ? g_base64_decode(b64, &len) : NULL;
    g_free(b64);
    char *plain = raw != NULL ? g_strndup((const char *)raw, len) : NULL;
    g_free(raw);
    char *sep = plain != NULL && strlen(plain) == len ? strrchr(plain, '\x1f') : NULL;
    gboolean ok = sep != NULL && g_utf8_validate(plain, -1, NULL);
    guint64 id = 0;
    if (ok) {
        *sep = '\0';
        ok = g_ascii_string_to_unsigned(sep + 1, 10, 1, G_MAXINT64, &id, NULL);
    }
    if (ok && kind == CURSOR_TIME) {
        char *iso = g_strdup(plain);
        if (strlen(iso) > 10 && iso[10] == ' ')
            iso[10] = 'T';
        GTimeZone *utc = g_time_zone_new_utc();
        GDateTime *t = g_date_time_new_from_iso8601(iso, utc);
        ok = t != NULL;
        if (t != NULL)
            g_date_time_unref(t);
        g_time_zone_unref(utc);
        g_free(iso);
    } else if (ok && kind == CURSOR_INT) {
        gint64 v = 0;
        ok = g_ascii_string_to_signed(plain, 10, G_MININT64, G_MAXINT64, &v, NULL);
    } else if (ok && kind == CURSOR_NUMBER) {
        char *end = NULL;
        double v = g_ascii_strtod(plain, &end);
        ok = end != plain && *end == '\0' && v == v;
    }
    if (!ok) {
        web_bad_parameter(req, error, "after",
                          "not a cursor of this listing and sort (take `next` from the previous "
                          "page, with the same sort)");
        g_free(plain);
        return FALSE;
    }
    *key = g_strdup(plain);
    *run_id = g_strdup(sep + 1);
    g_free(plain);
    return TRUE;
}

static char *cursor_encode(const char *key, const char *run_id)
{
    char *plain = g_strdup_printf("%s\x1f%s", key, run_id);
    char *b64 = g_base64_encode((const guchar *)plain, strlen(plain));
    g_free(plain);
    for (char *p = b64; *p != '\0'; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
    char *eq = strchr(b64, '=');
    if (eq != NULL)
        *eq = '\0';
    return b64;
}

/* ILIKE's wildcards in a user's text match themselves. */
static char *like_pattern(const char *text)
{
    GString *p = g_string_new("%");
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '%' || *c == '_' || *c == '\\')
            g_string_append_c(p, '\\');
        g_string_append_c(p, *c);
    }
    g_string_append_c(p, '%');
    return g_string_free(p, FALSE);
}

static char *time_param(gint64 us)
{
    return g_strdup_printf("%" G_GINT64_FORMAT, us);
}

gboolean web_api_runs(struct web_request *req, GError **error)
{
    const char *user = NULL, *program = NULL, *job = NULL, *node = NULL, *after = NULL;
    gint64 from_us = 0, to_us = 0, limit = 0;
    gboolean from_given = FALSE, to_given = FALSE;
    int sort = 1, anomalies = 0;
    static const char *const yes_no[] = {"any", "yes", "no", NULL};
    if (!web_param_text(req, "user", 64, &user, error) ||
        !web_param_text(req, "program", 256, &program, error) ||
        !web_param_text(req, "job", 128, &job, error) ||
        !web_param_text(req, "node", 256, &node, error) ||
        !web_param_time(req, "from", &from_us, &from_given, error) ||
        !web_param_time(req, "to", &to_us, &to_given, error) ||
        !web_param_choice(req, "anomalies", yes_no, 0, &anomalies, error) ||
        !web_param_choice(req, "sort", sort_choices, 1, &sort, error) ||
        !web_param_int(req, "limit", req->settings->page_size, 1, req->settings->page_size_max,
                       &limit, error) ||
        !web_param_text(req, "after", 512, &after, error) || !web_params_done(req, error))
        return FALSE;

    /* sort_choices pairs "x" (ascending) with "-x" (descending). */
    const struct sort_key *key = &sort_keys[sort / 2];
    gboolean descending = sort % 2 == 1;
    char *user_uid = NULL;
    if (user != NULL) {
        gint64 uid = -1;
        if (!g_ascii_string_to_signed(user, 10, 0, G_MAXUINT32, &uid, NULL))
            uid = web_user_uid(user);
        if (uid < 0) {
            web_bad_parameter(req, error, "user", "no user %s on the web server", user);
            return FALSE;
        }
        user_uid = g_strdup_printf("%" G_GINT64_FORMAT, uid);
    }
    char *cursor_key = NULL, *cursor_id = NULL;
    if (after != NULL && !cursor_decode(req, after, key->kind, &cursor_key, &cursor_id, error)) {
        g_free(user_uid);
        return FALSE;
    }
    char uid_buf[24], limit_buf[24];
    g_snprintf(limit_buf, sizeof limit_buf, "%" G_GINT64_FORMAT, limit + 1);
    char *pattern = program != NULL ? like_pattern(program) : NULL;
    char *from_text = from_given ? time_param(from_us) : NULL;
    char *to_text = to_given ? time_param(to_us) : NULL;
    const char *params[] = {
        web_viewer_uid_param(req, uid_buf),
        user_uid,
        pattern,
        job,
        node,
        from_text,
        to_text,
        anomalies == 1   ? "yes"
        : anomalies == 2 ? "no"
                         : NULL,
        cursor_key,
        cursor_id,
        limit_buf,
    };
    char *sql = g_strdup_printf(
        "SELECT q.*, (%s)::text AS sort_key FROM (%s"
        "   AND ($2::bigint IS NULL OR r.uid = $2::bigint)"
        "   AND ($3::text IS NULL OR r.program ILIKE $3)"
        "   AND ($4::text IS NULL OR j.scheduler_job_id = $4)"
        "   AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM processes p JOIN nodes n USING (node_id)"
        "        WHERE p.run_id = r.run_id AND (n.hostname = $5 OR n.node_id::text = $5)))"
        "   AND ($6::bigint IS NULL OR coalesce(r.end_time, 'infinity') >="
        "        to_timestamp($6::bigint / 1e6))"
        "   AND ($7::bigint IS NULL OR r.start_time <= to_timestamp($7::bigint / 1e6))"
        ") q WHERE ($8::text IS NULL OR (q.anomalies > 0) = ($8 = 'yes'))"
        "   AND ($9::text IS NULL OR (%s, q.run_id) %s ($9::%s, $10::bigint))"
        " ORDER BY %s %s, q.run_id %s LIMIT $11::bigint",
        key->expression, web_api_run_columns_sql, key->expression, descending ? "<" : ">",
        key->type, key->expression, descending ? "DESC" : "ASC", descending ? "DESC" : "ASC");
    PGresult *r = web_db_query(req, sql, G_N_ELEMENTS(params), params, error);
    g_free(sql);
    g_free(user_uid);
    g_free(pattern);
    g_free(from_text);
    g_free(to_text);
    g_free(cursor_key);
    g_free(cursor_id);
    if (r == NULL)
        return FALSE;
    int rows = PQntuples(r);
    int shown = rows > limit ? (int)limit : rows;
    int key_col = PQfnumber(r, "sort_key"), id_col = PQfnumber(r, "run_id");
    JsonArray *runs = json_array_sized_new((guint)shown);
    for (int i = 0; i < shown; i++) {
        JsonObject *run = web_json_row(r, i);
        json_object_remove_member(run, "sort_key");
        json_array_add_object_element(runs, run);
    }
    web_api_runs_fill_users(runs);
    JsonObject *out = json_object_new();
    json_object_set_array_member(out, "runs", runs);
    if (rows > limit) {
        char *next =
            cursor_encode(PQgetvalue(r, shown - 1, key_col), PQgetvalue(r, shown - 1, id_col));
        json_object_set_string_member(out, "next", next);
        g_free(next);
    } else {
        json_object_set_null_member(out, "next");
    }
    PQclear(r);
    web_answer_json(req, web_json_object_node(out));
    return TRUE;
}
