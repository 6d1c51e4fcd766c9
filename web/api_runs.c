/* vigil-web — GET /api/v1/runs: a page of runs, filtered and sorted, with
 * keyset pagination (the sort key and run_id of the last row), so every
 * page costs the same and rows stored meanwhile do not shift pages. */
#include <string.h>

#include "api.h"
#include "auth.h"
#include "db_pool.h"
#include "json_rows.h"

/* The RUN object of docs/web-api.md, in two steps, so that a page of 50
 * runs sorted by energy out of 10,000 counts anomalies and captures for
 * its 50 runs only:
 *
 * web_api_run_base_sql: the runs `r` with their totals, for the caller to
 * complete with WHERE terms, ORDER BY and LIMIT. $1 is the viewer's uid
 * (NULL: an admin, who sees all): a non-admin sees their own runs, and of
 * them their own processes (a run stored before issue 30 may hold another
 * user's). Totals come from run_summaries' columns,
 * which under MPI only rank 0's joint report fills, so nothing counts twice. */
const char web_api_run_base_sql[] =
    "SELECT r.run_id, r.run_key, j.scheduler_job_id AS job, r.program, to_json(r.argv) AS argv,"
    "       r.uid, NULL::text AS \"user\", r.start_time, r.end_time,"
    "       extract(epoch FROM r.end_time - r.start_time)::float8 AS duration_s, r.exit_status,"
    "       r.end_time_earliest,"
    "       t.processes, t.ranks, t.nodes, t.calls, t.bytes_read, t.bytes_written,"
    "       t.bytes_read + t.bytes_written AS bytes, t.energy_j, t.energy_source,"
    "       t.energy_estimated, t.process_ids, t.node_ids"
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
    "     WHERE p.run_id = r.run_id AND ($1::bigint IS NULL OR p.uid = $1::bigint)) t"
    " WHERE ($1::bigint IS NULL OR r.uid = $1::bigint)";

/* A run's anomalies and captures: its processes', and its nodes' (those
 * about no process) while it ran. On the alias `b` of a base row. */
#define RUN_COUNTS_SQL                                                                             \
    "(SELECT count(*) FROM anomalies a WHERE a.process_id = ANY (b.process_ids))"                  \
    " + (SELECT count(*) FROM anomalies a WHERE a.process_id IS NULL"                              \
    "     AND a.node_id = ANY (b.node_ids) AND a.time >= b.start_time"                             \
    "     AND a.time <= coalesce(b.end_time, 'infinity')) AS anomalies,"                           \
    " (SELECT count(*) FROM captures c WHERE c.process_id = ANY (b.process_ids))"                  \
    " + (SELECT count(*) FROM captures c WHERE c.process_id IS NULL"                               \
    "     AND c.node_id = ANY (b.node_ids) AND c.end_time >= b.start_time"                         \
    "     AND c.start_time <= coalesce(b.end_time, 'infinity')) AS captures"

char *web_api_run_sql(const char *inner, const char *outer_order)
{
    return g_strdup_printf("SELECT b.*, " RUN_COUNTS_SQL " FROM (%s) b %s", inner, outer_order);
}

JsonArray *web_api_runs_from_result(const PGresult *r, int rows)
{
    JsonArray *runs = json_array_sized_new((guint)rows);
    for (int i = 0; i < rows; i++) {
        JsonObject *run = web_json_row(r, i);
        /* The query's working columns, not the API's. */
        static const char *const working[] = {"process_ids", "node_ids", "sort_key", "ord"};
        for (gsize w = 0; w < G_N_ELEMENTS(working); w++)
            if (json_object_has_member(run, working[w]))
                json_object_remove_member(run, working[w]);
        const char *name = web_user_name(json_object_get_int_member(run, "uid"));
        if (name != NULL)
            json_object_set_string_member(run, "user", name);
        json_array_add_object_element(runs, run);
    }
    return runs;
}

gboolean web_api_run_visible(struct web_request *req, gint64 run_id, char id_text[24],
                             GError **error)
{
    char uid_buf[24];
    g_snprintf(id_text, 24, "%" G_GINT64_FORMAT, run_id);
    const char *params[] = {web_viewer_uid_param(req, uid_buf), id_text};
    PGresult *r = web_db_query_owned(req,
                                     "SELECT 1 FROM runs WHERE run_id = $2::bigint"
                                     "   AND ($1::bigint IS NULL OR uid = $1::bigint)",
                                     2, params, "run", id_text, error);
    if (r == NULL)
        return FALSE;
    PQclear(r);
    return TRUE;
}

gboolean web_api_run_mixed(struct web_request *req, const char *run_id, gboolean *mixed,
                           GError **error)
{
    char uid_buf[24];
    const char *uid = web_viewer_uid_param(req, uid_buf);
    *mixed = FALSE;
    if (uid == NULL)
        return TRUE;
    const char *params[] = {run_id, uid};
    PGresult *r = web_db_query(req,
                               "SELECT EXISTS (SELECT 1 FROM processes WHERE run_id = $1::bigint"
                               "                  AND uid <> $2::bigint)",
                               2, params, error);
    if (r == NULL)
        return FALSE;
    *mixed = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    return TRUE;
}

JsonObject *web_api_run_row(struct web_request *req, gint64 run_id, GError **error)
{
    char uid_buf[24], id_buf[24];
    g_snprintf(id_buf, sizeof id_buf, "%" G_GINT64_FORMAT, run_id);
    const char *params[] = {web_viewer_uid_param(req, uid_buf), id_buf};
    char *inner = g_strconcat(web_api_run_base_sql, " AND r.run_id = $2::bigint", NULL);
    char *sql = web_api_run_sql(inner, "");
    /* Another user's run is "not found" too: a non-admin cannot tell
     * which run ids exist. */
    PGresult *r = web_db_query_owned(req, sql, 2, params, "run", id_buf, error);
    g_free(sql);
    g_free(inner);
    if (r == NULL)
        return NULL;
    JsonArray *one = web_api_runs_from_result(r, 1);
    JsonObject *run = json_object_ref(json_array_get_object_element(one, 0));
    json_array_unref(one);
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
    /* Has-anomalies is asked of every candidate, so as EXISTS; the counts
     * are made for the page's runs only. */
    char *inner = g_strdup_printf(
        "SELECT q.*, (%s)::text AS sort_key, row_number() OVER (ORDER BY %s %s, q.run_id %s) AS ord"
        "  FROM (%s"
        "   AND ($2::bigint IS NULL OR r.uid = $2::bigint)"
        "   AND ($3::text IS NULL OR r.program ILIKE $3)"
        "   AND ($4::text IS NULL OR j.scheduler_job_id = $4)"
        "   AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM processes p JOIN nodes n USING (node_id)"
        "        WHERE p.run_id = r.run_id AND (n.hostname = $5 OR n.node_id::text = $5)))"
        "   AND ($6::bigint IS NULL OR coalesce(r.end_time, 'infinity') >="
        "        to_timestamp($6::bigint / 1e6))"
        "   AND ($7::bigint IS NULL OR r.start_time <= to_timestamp($7::bigint / 1e6))"
        ") q WHERE ($8::text IS NULL OR (EXISTS (SELECT 1 FROM anomalies a"
        "          WHERE a.process_id = ANY (q.process_ids))"
        "        OR EXISTS (SELECT 1 FROM anomalies a WHERE a.process_id IS NULL"
        "          AND a.node_id = ANY (q.node_ids) AND a.time >= q.start_time"
        "          AND a.time <= coalesce(q.end_time, 'infinity'))) = ($8 = 'yes'))"
        "   AND ($9::text IS NULL OR (%s, q.run_id) %s ($9::%s, $10::bigint))"
        " ORDER BY %s %s, q.run_id %s LIMIT $11::bigint",
        key->expression, key->expression, descending ? "DESC" : "ASC", descending ? "DESC" : "ASC",
        web_api_run_base_sql, key->expression, descending ? "<" : ">", key->type, key->expression,
        descending ? "DESC" : "ASC", descending ? "DESC" : "ASC");
    char *sql = web_api_run_sql(inner, "ORDER BY b.ord");
    g_free(inner);
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
    JsonArray *runs = web_api_runs_from_result(r, shown);
    char *next = rows > limit ? cursor_encode(PQgetvalue(r, shown - 1, key_col),
                                              PQgetvalue(r, shown - 1, id_col))
                              : NULL;
    PQclear(r);
    web_answer_page(req, NULL, "runs", runs, next);
    return TRUE;
}
