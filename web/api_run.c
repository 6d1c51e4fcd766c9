/* vigil-web — GET /api/v1/runs/RUN_ID[?ranks=yes|no]: one run, with its
 * report exactly as `vigil report RUN --format json` prints it (the same
 * reader and writer, report/report_json.c), its processes (unless
 * ranks=no), nodes, neighbours and a report card; GET
 * /api/v1/runs/RUN_ID/ranks: its processes alone, which a page asks for
 * when it shows them (a 1,000-rank run's are 470 KB). */
#include <string.h>

#include "api.h"
#include "db_pool.h"
#include "json_rows.h"
#include "report_json.h"

/* The run's processes the viewer may see ($1 the run, $2 the viewer's uid,
 * NULL for an admin), as every query of a run's processes here filters. */
#define RUN_PROCESSES_OF_VIEWER                                                                    \
    " WHERE p.run_id = $1::bigint AND ($2::bigint IS NULL OR p.uid = $2::bigint)"

/* A report's findings are a dozen kinds at most: more is a broken report. */
#define FINDINGS_MAX 200

/* Rows of `sql` (its $1 the run, $2 the viewer's uid) as array `member`. */
static gboolean add_run_rows(struct web_request *req, const char *run_id, const char *uid,
                             JsonObject *out, const char *member, const char *sql, GError **error)
{
    const char *params[] = {run_id, uid};
    return web_json_query_rows(req, out, member, sql, 2, params, error);
}

/* The run's job report when it has one (rank 0's, for MPI), else its
 * first process's: the one `vigil report RUN` prints. */
static gboolean add_report(struct web_request *req, const char *run_id, const char *uid,
                           const struct web_run_energy *energy, JsonObject *out, GError **error)
{
    const char *params[] = {run_id, uid};
    PGresult *r = web_db_query(req,
                               "SELECT s.report::text, p.pid, n.hostname,"
                               "       (SELECT sum(rp.uplink_dropped_activities) FROM processes rp"
                               "         WHERE rp.run_id = p.run_id)"
                               "  FROM processes p JOIN run_summaries s USING (process_id)"
                               "  JOIN nodes n USING (node_id)"
                               " WHERE p.run_id = $1::bigint"
                               "   AND ($2::bigint IS NULL OR p.uid = $2::bigint)"
                               " ORDER BY (s.report ? 'ranks') DESC, p.start_time, p.process_id"
                               " LIMIT 1",
                               2, params, error);
    if (r == NULL)
        return FALSE;
    if (PQntuples(r) == 0) {
        json_object_set_null_member(out, "report");
        json_object_set_string_member(out, "report_of",
                                      "no process of this run has sent its report yet");
        PQclear(r);
        return TRUE;
    }
    char *whose = g_strdup_printf("pid %s on %s", PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 2));
    struct vigil_cli_report report;
    GError *parse_error = NULL;
    JsonNode *node = NULL;
    if (vigil_cli_report_parse(PQgetvalue(r, 0, 0), -1, &report, &parse_error)) {
        web_api_run_fill_job_energy(energy, &report.r);
        /* As `vigil report RUN` adds it: the run's forwarded activities
         * vigild's uplink dropped, which the report at exit cannot know. */
        report.r.uplink_lost_known = true;
        report.r.uplink_lost_activities = g_ascii_strtoull(PQgetvalue(r, 0, 3), NULL, 10);
        char *json = vigil_cli_report_json(&report.r);
        node = json_from_string(json, NULL);
        g_free(json);
        vigil_cli_report_clear(&report);
    }
    if (node != NULL) {
        json_object_set_member(out, "report", node);
        json_object_set_string_member(out, "report_of", whose);
    } else {
        char *why = g_strdup_printf("the stored report of %s cannot be read: %s", whose,
                                    parse_error != NULL ? parse_error->message : "?");
        json_object_set_null_member(out, "report");
        json_object_set_string_member(out, "report_of", why);
        g_free(why);
    }
    g_clear_error(&parse_error);
    g_free(whose);
    PQclear(r);
    return TRUE;
}

/* Each process with its own figures. A joint MPI report (rank 0's) covers
 * the job, so its process has none of its own here: `job_report` says so,
 * and the job's per-rank figures are the report's per_rank. */
static gboolean add_ranks(struct web_request *req, const char *run_id, const char *uid,
                          JsonObject *out, GError **error)
{
    return add_run_rows(
        req, run_id, uid, out, "ranks",
        "SELECT p.rank, p.process_id, p.pid, p.node_id, n.hostname, p.program,"
        "       p.start_time, p.end_time,"
        "       extract(epoch FROM p.end_time - p.start_time)::float8 AS runtime_s,"
        "       p.exit_status, coalesce(j.joint, false) AS job_report,"
        "       s.process_id IS NOT NULL AS report_sent,"
        "       CASE WHEN NOT j.joint THEN (j.report->'activities'->>'observed')::bigint END"
        "         AS calls,"
        "       CASE WHEN NOT j.joint THEN (j.report->>'io_bytes_read')::bigint END AS bytes_read,"
        "       CASE WHEN NOT j.joint THEN (j.report->>'io_bytes_written')::bigint END"
        "         AS bytes_written,"
        "       CASE WHEN NOT j.joint THEN (j.report->>'cpu_seconds')::float8 END AS cpu_s,"
        "       CASE WHEN NOT j.joint THEN (j.report->>'energy_joule')::float8 END AS energy_j,"
        "       p.uplink_dropped_activities, p.end_time_earliest,"
        /* Ended while no vigild watched: what vigild had counted of it. */
        "       CASE WHEN u.process_id IS NOT NULL THEN json_build_object("
        "         'activities', u.activities, 'dropped', u.dropped, 'seq_gaps', u.seq_gaps,"
        "         'cpu_s', u.cpu_s, 'energy_j', u.energy_j,"
        "         'energy_estimated', u.energy_estimated, 'energy_uncertain', u.energy_uncertain,"
        "         'ring_read', u.ring_read) END"
        "         AS unwatched_end"
        "  FROM processes p JOIN nodes n USING (node_id)"
        "  LEFT JOIN run_summaries s USING (process_id)"
        /* Each report decompressed once, not at each of the seven reads
         * above: a copy (without the joint report's per-rank energies,
         * which are not read) made once per row, as OFFSET 0 keeps the
         * subquery from being folded into each read. */
        "  LEFT JOIN LATERAL (SELECT r ? 'ranks' AS joint, r AS report"
        "                       FROM (SELECT s.report - 'energy_by_rank' AS r OFFSET 0) c) j"
        "    ON true"
        "  LEFT JOIN process_unwatched_ends u USING (process_id)" RUN_PROCESSES_OF_VIEWER
        " ORDER BY p.rank NULLS LAST, p.start_time, p.process_id",
        error);
}

static gboolean add_nodes(struct web_request *req, const char *run_id, const char *uid,
                          JsonObject *out, GError **error)
{
    return add_run_rows(
        req, run_id, uid, out, "nodes",
        "SELECT p.node_id, n.hostname, min(p.start_time) AS start_time,"
        "       CASE WHEN bool_or(p.end_time IS NULL) THEN NULL ELSE max(p.end_time) END"
        "         AS end_time, count(*) AS processes"
        "  FROM processes p JOIN nodes n USING (node_id)" RUN_PROCESSES_OF_VIEWER
        " GROUP BY p.node_id, n.hostname ORDER BY n.hostname",
        error);
}

/* The findings of the run's counted reports (an MPI job's joint report,
 * not its ranks' own), stored whole in run_summaries' JSON: read there by
 * a jsonb path, warnings first. The reports come from processes the node
 * does not control: an entry without a string id, evidence and advice is
 * passed over, a file or rank of another kind shown as null. */
static gboolean add_findings(struct web_request *req, const char *run_id, const char *uid,
                             JsonObject *out, GError **error)
{
    return add_run_rows(
        req, run_id, uid, out, "findings",
        "SELECT e ->> 'id' AS id,"
        "       CASE WHEN e ->> 'severity' IN ('warning', 'info') THEN e ->> 'severity' END"
        "         AS severity,"
        "       CASE WHEN jsonb_typeof(e -> 'file') = 'string' THEN e ->> 'file' END AS file,"
        "       CASE WHEN jsonb_typeof(e -> 'rank') = 'number' AND e ->> 'rank' ~ '^[0-9]{1,9}$'"
        "            THEN (e ->> 'rank')::integer END AS rank,"
        "       e ->> 'evidence' AS evidence, e ->> 'advice' AS advice,"
        "       p.process_id, p.pid, n.hostname"
        "  FROM processes p JOIN run_summaries s USING (process_id) JOIN nodes n USING (node_id),"
        "       jsonb_array_elements(CASE WHEN jsonb_typeof(s.report -> 'findings') = 'array'"
        "                                 THEN s.report -> 'findings' END)"
        "         WITH ORDINALITY AS f(e, i)" RUN_PROCESSES_OF_VIEWER
        "   AND coalesce(s.report -> 'in_job_report' = 'true'::jsonb, false) = false"
        "   AND jsonb_typeof(e) = 'object' AND jsonb_typeof(e -> 'id') = 'string'"
        "   AND jsonb_typeof(e -> 'evidence') = 'string'"
        "   AND jsonb_typeof(e -> 'advice') = 'string'"
        " ORDER BY e ->> 'severity' = 'warning' DESC, p.rank NULLS LAST, p.start_time,"
        "          p.process_id, f.i"
        " LIMIT " G_STRINGIFY(FINDINGS_MAX),
        error);
}

/* Other runs on the same nodes at the same time: what else was using the
 * disks and the power budget. */
static gboolean add_neighbours(struct web_request *req, const char *run_id, JsonObject *out,
                               GError **error)
{
    char uid_buf[24];
    const char *params[] = {web_viewer_uid_param(req, uid_buf), run_id};
    char *inner =
        g_strconcat(web_api_run_base_sql,
                    " AND r.run_id IN (SELECT DISTINCT p2.run_id"
                    "   FROM (SELECT node_id, min(start_time) AS s,"
                    "                max(coalesce(end_time, 'infinity')) AS e"
                    "           FROM processes WHERE run_id = $2::bigint"
                    "            AND ($1::bigint IS NULL OR uid = $1::bigint)"
                    "          GROUP BY node_id) mine"
                    "   JOIN processes p2 ON p2.node_id = mine.node_id AND p2.start_time <= mine.e"
                    "    AND coalesce(p2.end_time, 'infinity') >= mine.s"
                    "  WHERE p2.run_id <> $2::bigint)"
                    " ORDER BY r.start_time DESC, r.run_id DESC LIMIT 20",
                    NULL);
    char *sql = web_api_run_sql(inner, "ORDER BY b.start_time DESC, b.run_id DESC");
    g_free(inner);
    PGresult *r = web_db_query(req, sql, 2, params, error);
    g_free(sql);
    if (r == NULL)
        return FALSE;
    JsonArray *runs = web_api_runs_from_result(r, PQntuples(r));
    json_object_set_array_member(out, "neighbours", runs);
    PQclear(r);
    return TRUE;
}

/* What was abnormal, in plain words, from the anomalies and captures. */
static gboolean add_report_card(struct web_request *req, const char *run_id, const char *uid,
                                JsonObject *run, JsonObject *out, GError **error)
{
    JsonArray *card = json_array_new();
    if (!json_object_get_null_member(run, "exit_status") &&
        json_object_get_int_member(run, "exit_status") != 0) {
        char *line = g_strdup_printf("The program exited with status %" G_GINT64_FORMAT ".",
                                     json_object_get_int_member(run, "exit_status"));
        json_array_add_string_element(card, line);
        g_free(line);
    }
    const char *params[] = {run_id, uid};
    /* The run's anomalies (its processes', and its nodes' while it ran),
     * grouped by what fired where. */
    PGresult *r = web_db_query(
        req,
        "WITH mine AS (SELECT process_id, node_id, start_time,"
        "                     coalesce(end_time, 'infinity') AS end_time"
        "                FROM processes WHERE run_id = $1::bigint"
        "                 AND ($2::bigint IS NULL OR uid = $2::bigint)),"
        " a AS (SELECT a.* FROM anomalies a WHERE a.process_id IN (SELECT process_id FROM mine)"
        "       UNION"
        "       SELECT a.* FROM anomalies a JOIN mine m ON a.node_id = m.node_id"
        "        WHERE a.process_id IS NULL AND a.time BETWEEN m.start_time AND m.end_time)"
        "SELECT count(*) AS n, a.plugin, a.metric, n.hostname, a.level, min(a.time) AS first,"
        "       (array_agg(a.message ORDER BY a.time))[1] AS message"
        "  FROM a JOIN nodes n USING (node_id)"
        " GROUP BY a.plugin, a.metric, n.hostname, a.level ORDER BY count(*) DESC LIMIT 5",
        2, params, error);
    if (r == NULL)
        goto fail;
    for (int i = 0; i < PQntuples(r); i++) {
        char *first = web_json_time_from_pg(PQgetvalue(r, i, 5));
        char *line = g_strdup_printf("%s %s anomal%s from %s on %s (%s), first at %s: %s",
                                     PQgetvalue(r, i, 0), PQgetvalue(r, i, 4),
                                     strcmp(PQgetvalue(r, i, 0), "1") == 0 ? "y" : "ies",
                                     PQgetvalue(r, i, 1), PQgetvalue(r, i, 3), PQgetvalue(r, i, 2),
                                     first != NULL ? first : "?", PQgetvalue(r, i, 6));
        json_array_add_string_element(card, line);
        g_free(line);
        g_free(first);
    }
    PQclear(r);
    gint64 captures = json_object_get_int_member(run, "captures");
    if (captures > 0) {
        r = web_db_query(
            req,
            /* A window's reasons are a line per cycle: its first says why it opened. */
            "SELECT sum(c.activities_forwarded),"
            /* Windows kept before issue 30 under [capture] mode = all have an
             * empty reason: say none rather than "because: ". */
            "       left(string_agg(DISTINCT nullif(split_part(c.reasons, E'\\n', 1), ''),"
            "                       '; '), 400)"
            "  FROM captures c JOIN processes p USING (process_id)" RUN_PROCESSES_OF_VIEWER,
            2, params, error);
        if (r == NULL) {
            json_array_unref(card);
            return FALSE;
        }
        char *line = g_strdup_printf(
            "%" G_GINT64_FORMAT " captured window%s keep%s %s activities in full%s%s.", captures,
            captures == 1 ? "" : "s", captures == 1 ? "s" : "",
            PQgetisnull(r, 0, 0) ? "their" : PQgetvalue(r, 0, 0),
            PQgetisnull(r, 0, 1) ? "" : ", because: ", PQgetvalue(r, 0, 1));
        json_array_add_string_element(card, line);
        g_free(line);
        PQclear(r);
    }
    /* What the run's figures here lack: forwarded, then dropped by vigild's
     * uplink or spool (a bound reached while vigil-txd was away). */
    r = web_db_query(req,
                     "SELECT sum(uplink_dropped_activities), count(*) FILTER"
                     "       (WHERE uplink_dropped_activities > 0)"
                     "  FROM processes WHERE run_id = $1::bigint",
                     1, params, error);
    if (r == NULL)
        goto fail;
    if (!PQgetisnull(r, 0, 0) && strcmp(PQgetvalue(r, 0, 0), "0") != 0) {
        char *line = g_strdup_printf(
            "%s forwarded activities of %s process%s never reached the warehouse: vigild's "
            "uplink dropped them (its spool or memory bound was reached), so the stored "
            "activities and windows lack them.",
            PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1),
            strcmp(PQgetvalue(r, 0, 1), "1") == 0 ? "" : "es");
        json_array_add_string_element(card, line);
        g_free(line);
    }
    PQclear(r);
    /* Processes that ended while no vigild ran: their end is a bound and
     * their report never arrived (vigild kept what it had counted). */
    r = web_db_query(req,
                     "SELECT count(*), min(p.end_time_earliest), max(p.end_time),"
                     "       sum(u.activities)"
                     "  FROM processes p JOIN process_unwatched_ends u USING "
                     "(process_id)" RUN_PROCESSES_OF_VIEWER,
                     2, params, error);
    if (r == NULL)
        goto fail;
    if (strcmp(PQgetvalue(r, 0, 0), "0") != 0) {
        char *from = web_json_time_from_pg(PQgetvalue(r, 0, 1));
        char *to = web_json_time_from_pg(PQgetvalue(r, 0, 2));
        gboolean one = strcmp(PQgetvalue(r, 0, 0), "1") == 0;
        char *line = g_strdup_printf(
            "%s process%s ended while no vigild watched %s (it was stopped or restarting), "
            "between %s and %s: %s report never arrived, so the run's figures lack %s; "
            "vigild had drained %s activities of %s.",
            PQgetvalue(r, 0, 0), one ? "" : "es", one ? "it" : "them", from != NULL ? from : "?",
            to != NULL ? to : "?", one ? "its" : "their", one ? "it" : "them", PQgetvalue(r, 0, 3),
            one ? "it" : "them");
        json_array_add_string_element(card, line);
        g_free(line);
        g_free(from);
        g_free(to);
    }
    PQclear(r);
    if (json_object_get_boolean_member_with_default(run, "energy_estimated", FALSE))
        json_array_add_string_element(card, "Its energy is estimated from CPU use, not measured: "
                                            "the nodes gave no power reading.");
    if (json_array_get_length(card) == 0)
        json_array_add_string_element(card, "Nothing abnormal: no anomaly, no captured window.");
    json_object_set_array_member(out, "report_card", card);
    return TRUE;
fail:
    json_array_unref(card);
    return FALSE;
}

gboolean web_api_run_ranks(struct web_request *req, GError **error)
{
    gint64 run_id = 0;
    char id[24], uid_buf[24];
    if (!web_path_id(req, req->segments[1], "run_id", &run_id, error) ||
        !web_params_done(req, error) || !web_api_run_visible(req, run_id, id, error))
        return FALSE;
    JsonObject *out = json_object_new();
    if (!add_ranks(req, id, web_viewer_uid_param(req, uid_buf), out, error)) {
        json_object_unref(out);
        return FALSE;
    }
    web_answer_object(req, out);
    return TRUE;
}

gboolean web_api_run(struct web_request *req, GError **error)
{
    static const char *const yes_no[] = {"yes", "no", NULL};
    gint64 run_id = 0;
    int without_ranks = 0;
    if (!web_path_id(req, req->segments[1], "run_id", &run_id, error) ||
        !web_param_choice(req, "ranks", yes_no, 0, &without_ranks, error) ||
        !web_params_done(req, error))
        return FALSE;
    JsonObject *run = web_api_run_row(req, run_id, error);
    if (run == NULL)
        return FALSE;
    char id[24], uid_buf[24];
    g_snprintf(id, sizeof id, "%" G_GINT64_FORMAT, run_id);
    const char *uid = web_viewer_uid_param(req, uid_buf);
    JsonObject *out = json_object_new();
    json_object_set_object_member(out, "run", json_object_ref(run));
    struct web_run_energy energy;
    gboolean ok = web_api_run_read_energy(req, id, &energy, error);
    ok = ok && add_report(req, id, uid, &energy, out, error) &&
         add_report_card(req, id, uid, run, out, error) && add_findings(req, id, uid, out, error) &&
         (without_ranks || add_ranks(req, id, uid, out, error)) &&
         add_nodes(req, id, uid, out, error) && add_neighbours(req, id, out, error);
    if (ok)
        web_api_run_add_job_energy(&energy, out);
    if (ok && without_ranks)
        json_object_set_null_member(out, "ranks"); /* runs/RUN_ID/ranks has them */
    web_api_run_energy_clear(&energy);
    if (ok) {
        /* The job's per-rank figures and busiest files, as the report has them. */
        JsonNode *report = json_object_get_member(out, "report");
        JsonObject *ro =
            report != NULL && JSON_NODE_HOLDS_OBJECT(report) ? json_node_get_object(report) : NULL;
        JsonNode *per_rank = ro != NULL ? json_object_get_member(ro, "per_rank") : NULL;
        json_object_set_member(out, "rank_stats",
                               per_rank != NULL ? json_node_copy(per_rank)
                                                : json_node_init_null(json_node_alloc()));
        JsonNode *files = ro != NULL ? json_object_get_member(ro, "files") : NULL;
        json_object_set_member(out, "files",
                               files != NULL ? json_node_copy(files)
                                             : vigil_json_array_node(json_array_new()));
        web_answer_object(req, out);
    } else {
        json_object_unref(out);
    }
    json_object_unref(run);
    return ok;
}
