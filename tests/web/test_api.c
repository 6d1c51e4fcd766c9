/* vigil-web's JSON API (docs/web-api.md) against a real PostgreSQL loaded
 * with tests/web/fixture.sql: each endpoint's figures equal the
 * warehouse's, computed here with SQL, and `vigil report RUN --format
 * json`'s. One vigil-web (auth = none) serves every test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_pg.h"
#include "test_report.h"
#include "test_support.h"
#include "test_web.h"

static struct test_pg pg;
static char *dir;
static struct test_web web;
static char *config_path;

static int group_setup(void **state)
{
    (void)state;
    GError *error = NULL;
    dir = g_dir_make_tmp("vigil-web-api-XXXXXX", &error);
    assert_null(error);
    test_web_warehouse_start(&pg, dir);
    test_web_startf(&web, dir, "admin",
                    "[warehouse]\nconninfo = %s\n"
                    "[web]\nlisten = 127.0.0.1:0\n"
                    "[adpi.statistics-range]\npercent = 25\n",
                    test_pg_conninfo(&pg));
    config_path = g_build_filename(dir, "admin.conf", NULL);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    test_web_stop(&web);
    test_pg_cleanup(&pg);
    test_remove_tree(dir);
    g_free(dir);
    g_free(config_path);
    return 0;
}

/* ---- helpers ------------------------------------------------------------------------------ */

/* What `sql` returns as text, "" for NULL. */
static char *sql(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static char *sql(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    char *query = g_strdup_vprintf(fmt, args);
    va_end(args);
    char *text = test_web_sql_text(&pg, query);
    g_free(query);
    return text != NULL ? text : g_strdup("");
}

static guint64 sql_count(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static guint64 sql_count(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    char *query = g_strdup_vprintf(fmt, args);
    va_end(args);
    guint64 n = test_pg_query_u64(&pg, query);
    g_free(query);
    return n;
}

static double sql_number(const char *query)
{
    return test_web_sql_number(&pg, query);
}

static void assert_close(double got, double want, const char *what)
{
    if (isnan(got) || !(fabs(got - want) <= 1e-6 * fmax(1.0, fabs(want))))
        fail_msg("%s: %.9g, the warehouse says %.9g", what, got, want);
}

static void assert_same_text(const char *got, const char *want, const char *what)
{
    if (strcmp(got, want) != 0)
        fail_msg("%s: the API gives [%s], the warehouse [%s]", what, got, want);
}

static int compare_i64(const void *a, const void *b)
{
    gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
    return x < y ? -1 : x > y;
}

static int compare_strings(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The ids of `array`, sorted: for answers whose order the contract leaves open. */
static char *sorted_ids(JsonArray *array, const char *member)
{
    guint n = json_array_get_length(array);
    gint64 *ids = g_new(gint64, n + 1);
    for (guint i = 0; i < n; i++)
        ids[i] = json_object_get_int_member(json_array_get_object_element(array, i), member);
    qsort(ids, n, sizeof *ids, compare_i64);
    GString *text = g_string_new(NULL);
    for (guint i = 0; i < n; i++)
        g_string_append_printf(text, "%s%" G_GINT64_FORMAT, i > 0 ? "," : "", ids[i]);
    g_free(ids);
    return g_string_free(text, FALSE);
}

/* A number member that may be null (NAN then). */
static double number_or_nan(JsonNode *node)
{
    if (node == NULL || JSON_NODE_HOLDS_NULL(node))
        return NAN;
    return json_node_get_double(node);
}

/* A run's anomalies, as SQL over runs `r` and anomalies `a`: its
 * processes', and its nodes' while it ran. */
#define RUN_ANOMALY                                                                                \
    "(a.process_id IN (SELECT process_id FROM processes WHERE run_id = r.run_id) OR"               \
    " (a.process_id IS NULL AND a.node_id IN (SELECT node_id FROM processes"                       \
    "  WHERE run_id = r.run_id) AND a.time >= r.start_time"                                        \
    "  AND a.time <= coalesce(r.end_time, 'infinity')))"

/* The ids of runs matching `where` (SQL over runs r), newest first. */
static char *runs_where(const char *where)
{
    return sql("SELECT string_agg(run_id::text, ',' ORDER BY start_time DESC, run_id DESC)"
               "  FROM runs r WHERE %s",
               where);
}

/* Every page of `query` (a /api/v1/runs query string without limit and
 * after) with `limit` rows, followed through `next`: the run ids in the
 * order given; the number of pages in *pages. Fails on a run twice. */
static char *all_pages(const char *query, int limit, GString *page_sizes)
{
    GString *ids = g_string_new(NULL);
    GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    char *next = NULL;
    for (int page = 0; page < 100; page++) {
        char *escaped = next != NULL ? g_uri_escape_string(next, NULL, FALSE) : NULL;
        char *path =
            g_strdup_printf("/api/v1/runs?%s%slimit=%d%s%s", query, query[0] != '\0' ? "&" : "",
                            limit, escaped != NULL ? "&after=" : "", escaped ? escaped : "");
        struct test_http a;
        JsonNode *root = test_web_get_json(&web, path, NULL, 200, &a);
        JsonArray *runs = test_web_array(root, path, "runs");
        guint n = json_array_get_length(runs);
        if (n > (guint)limit)
            fail_msg("%s: %u runs on a page of %d", path, n, limit);
        g_string_append_printf(page_sizes, "%s%u", page > 0 ? "," : "", n);
        for (guint i = 0; i < n; i++) {
            gint64 *id = g_new(gint64, 1);
            *id = json_object_get_int_member(json_array_get_object_element(runs, i), "run_id");
            if (g_hash_table_contains(seen, id))
                fail_msg("%s: run %" G_GINT64_FORMAT " shown twice", path, *id);
            g_hash_table_add(seen, id);
            g_string_append_printf(ids, "%s%" G_GINT64_FORMAT, ids->len > 0 ? "," : "", *id);
        }
        JsonNode *next_node = test_json_node(root, "next");
        g_free(next);
        next = next_node != NULL && JSON_NODE_HOLDS_VALUE(next_node)
                   ? g_strdup(json_node_get_string(next_node))
                   : NULL;
        test_http_clear(&a);
        g_free(path);
        g_free(escaped);
        if (next == NULL)
            break;
    }
    assert_null(next);
    g_hash_table_foreach(seen, (GHFunc)(void (*)(void))g_free, NULL);
    g_hash_table_unref(seen);
    return g_string_free(ids, FALSE);
}

/* ---- /me ---------------------------------------------------------------------------------- */

static void test_me(void **state)
{
    (void)state;
    struct test_http a;
    JsonNode *me = test_web_get_json(&web, "/api/v1/me", NULL, 200, &a);
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(me, "user")));
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(me, "uid")));
    assert_true(json_node_get_boolean(test_json_node(me, "admin")));
    assert_string_equal(test_json_string(me, "/me", "auth"), "none");
    test_http_clear(&a);
}

/* ---- runs --------------------------------------------------------------------------------- */

static const char *const run_fields[] = {
    "run_id",     "run_key",       "job",
    "program",    "argv",          "uid",
    "user",       "start_time",    "end_time",
    "duration_s", "exit_status",   "processes",
    "ranks",      "nodes",         "calls",
    "bytes_read", "bytes_written", "bytes",
    "energy_j",   "energy_source", "energy_estimated",
    "anomalies",  "captures",      "end_time_earliest",
    NULL,
};

/* A RUN object against the warehouse. */
static void check_run(JsonNode *run_node)
{
    JsonObject *run = json_node_get_object(run_node);
    for (const char *const *f = run_fields; *f != NULL; f++)
        if (!json_object_has_member(run, *f))
            fail_msg("a RUN without %s: %s", *f, json_to_string(run_node, FALSE));
    gint64 id = json_object_get_int_member(run, "run_id");
    char *want =
        sql("SELECT concat_ws('|', r.run_key, coalesce(j.scheduler_job_id, '-'),"
            " r.program, array_to_json(r.argv), r.uid,"
            " to_char(r.start_time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
            " extract(epoch FROM r.end_time - r.start_time)::float8,"
            " (SELECT count(*) FROM processes p WHERE p.run_id = r.run_id),"
            " (SELECT count(rank) FROM processes p WHERE p.run_id = r.run_id),"
            " (SELECT count(DISTINCT node_id) FROM processes p WHERE p.run_id = r.run_id),"
            " (SELECT count(*) FROM anomalies a WHERE " RUN_ANOMALY "),"
            " (SELECT count(*) FROM captures c WHERE c.process_id IN"
            "   (SELECT process_id FROM processes p WHERE p.run_id = r.run_id)))"
            " FROM runs r LEFT JOIN jobs j USING (job_id) WHERE r.run_id = %" G_GINT64_FORMAT,
            id);
    JsonNode *job = json_object_get_member(run, "job");
    char *argv = json_to_string(json_object_get_member(run, "argv"), FALSE);
    char *got = g_strdup_printf(
        "%s|%s|%s|%s|%" G_GINT64_FORMAT "|%s|%.17g|%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT
        "|%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT,
        json_object_get_string_member(run, "run_key"),
        JSON_NODE_HOLDS_NULL(job) ? "-" : json_node_get_string(job),
        json_object_get_string_member(run, "program"), argv, json_object_get_int_member(run, "uid"),
        json_object_get_string_member(run, "start_time"),
        json_object_get_double_member(run, "duration_s"),
        json_object_get_int_member(run, "processes"), json_object_get_int_member(run, "ranks"),
        json_object_get_int_member(run, "nodes"), json_object_get_int_member(run, "anomalies"),
        json_object_get_int_member(run, "captures"));
    /* The duration through the same printf as the warehouse's float8. */
    char **want_parts = g_strsplit(want, "|", -1);
    char *duration = g_strdup_printf("%.17g", g_ascii_strtod(want_parts[6], NULL));
    g_free(want_parts[6]);
    want_parts[6] = duration;
    char *want_text = g_strjoinv("|", want_parts);
    char *what = g_strdup_printf("run %" G_GINT64_FORMAT " (run_key|job|program|argv|uid|start|"
                                 "duration|processes|ranks|nodes|anomalies|captures)",
                                 id);
    assert_same_text(got, want_text, what);
    /* The figures, summed over the run's processes' reports. */
    char *sums = sql("SELECT concat_ws('|', sum(calls), sum(bytes_read), sum(bytes_written),"
                     " sum(bytes_read) + sum(bytes_written), sum(energy_j))"
                     " FROM run_summaries JOIN processes USING (process_id)"
                     " WHERE run_id = %" G_GINT64_FORMAT,
                     id);
    char *got_sums = g_strdup_printf(
        "%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT "|%g",
        json_object_get_int_member(run, "calls"), json_object_get_int_member(run, "bytes_read"),
        json_object_get_int_member(run, "bytes_written"), json_object_get_int_member(run, "bytes"),
        json_object_get_double_member(run, "energy_j"));
    char *want_sums = NULL;
    {
        char **p = g_strsplit(sums, "|", -1);
        want_sums =
            g_strdup_printf("%s|%s|%s|%s|%g", p[0], p[1], p[2], p[3], g_ascii_strtod(p[4], NULL));
        g_strfreev(p);
    }
    char *what_sums = g_strdup_printf(
        "run %" G_GINT64_FORMAT " (calls|bytes_read|bytes_written|bytes|energy_j)", id);
    assert_same_text(got_sums, want_sums, what_sums);
    g_free(what_sums);
    g_free(want_sums);
    g_free(got_sums);
    g_free(sums);
    g_free(what);
    g_free(want_text);
    g_strfreev(want_parts);
    g_free(got);
    g_free(argv);
    g_free(want);
}

static void test_runs_first_page_is_every_run_newest_first(void **state)
{
    (void)state;
    struct test_http a;
    JsonNode *root = test_web_get_json(&web, "/api/v1/runs", NULL, 200, &a);
    JsonArray *runs = test_web_array(root, "/api/v1/runs", "runs");
    assert_int_equal(json_array_get_length(runs), 12);
    char *got = test_web_ids(runs, "run_id");
    char *want = runs_where("true");
    assert_same_text(got, want, "GET /api/v1/runs, newest first");
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "next")));
    for (guint i = 0; i < json_array_get_length(runs); i++)
        check_run(json_array_get_element(runs, i));
    /* uid 1 is `daemon` on every Debian. */
    JsonObject *run1 = NULL;
    for (guint i = 0; i < json_array_get_length(runs); i++)
        if (json_object_get_int_member(json_array_get_object_element(runs, i), "run_id") == 1)
            run1 = json_array_get_object_element(runs, i);
    assert_non_null(run1);
    assert_string_equal(json_object_get_string_member(run1, "user"), "daemon");
    assert_string_equal(json_object_get_string_member(run1, "job"), "4242");
    assert_string_equal(json_object_get_string_member(run1, "start_time"),
                        "2026-11-20T10:00:00.000000Z");
    g_free(got);
    g_free(want);
    test_http_clear(&a);
}

static void test_runs_pages_follow_next(void **state)
{
    (void)state;
    GString *sizes = g_string_new(NULL);
    char *got = all_pages("", 5, sizes);
    assert_string_equal(sizes->str, "5,5,2");
    char *want = runs_where("true");
    assert_same_text(got, want, "limit=5, pages through next");
    g_free(got);
    g_free(want);
    g_string_free(sizes, TRUE);
}

static void test_runs_sorts(void **state)
{
    (void)state;
    static const struct {
        const char *sort, *order;
    } sorts[] = {
        {"-energy_j", "coalesce((SELECT sum(energy_j) FROM run_summaries JOIN processes p USING "
                      "(process_id) WHERE p.run_id = r.run_id), -1) DESC, run_id DESC"},
        {"energy_j", "coalesce((SELECT sum(energy_j) FROM run_summaries JOIN processes p USING "
                     "(process_id) WHERE p.run_id = r.run_id), -1), run_id"},
        {"-bytes", "coalesce((SELECT sum(bytes_read) + sum(bytes_written) FROM run_summaries"
                   " JOIN processes p USING (process_id) WHERE p.run_id = r.run_id), -1) DESC,"
                   " run_id DESC"},
        {"program", "program, run_id"},
        {"-program", "program DESC, run_id DESC"},
        {"start_time", "start_time, run_id"},
        {"-duration_s",
         "coalesce(extract(epoch FROM end_time - start_time), -1) DESC, run_id DESC"},
        {"run_id", "run_id"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(sorts); i++) {
        char *want =
            sql("SELECT string_agg(run_id::text, ',' ORDER BY %s) FROM runs r", sorts[i].order);
        char *query = g_strdup_printf("sort=%s", sorts[i].sort);
        struct test_http a;
        char *path = g_strdup_printf("/api/v1/runs?%s", query);
        JsonNode *root = test_web_get_json(&web, path, NULL, 200, &a);
        char *got = test_web_ids(test_web_array(root, path, "runs"), "run_id");
        assert_same_text(got, want, path);
        /* And the same order across pages of 5: the keyset holds for the key. */
        GString *sizes = g_string_new(NULL);
        char *paged = all_pages(query, 5, sizes);
        assert_same_text(paged, want, query);
        g_string_free(sizes, TRUE);
        g_free(paged);
        g_free(got);
        g_free(path);
        g_free(query);
        g_free(want);
        test_http_clear(&a);
    }
}

static void test_runs_filters(void **state)
{
    (void)state;
    static const struct {
        const char *query, *where;
    } filters[] = {
        {"user=nobody", "uid = 65534"},
        {"user=65534", "uid = 65534"},
        {"user=daemon&program=IOR", "uid = 1 AND program ILIKE '%ior%'"},
        {"program=dd", "program ILIKE '%dd%'"},
        {"program=%25", "program LIKE '%\\%%'"}, /* a literal %: no run has one */
        {"job=4242", "job_id = (SELECT job_id FROM jobs WHERE scheduler_job_id = '4242')"},
        {"node=n2", "run_id IN (SELECT run_id FROM processes JOIN nodes USING (node_id)"
                    " WHERE hostname = 'n2')"},
        {"node=3", "run_id IN (SELECT run_id FROM processes WHERE node_id = 3)"},
        {"from=2026-11-20T10:01:15Z&to=2026-11-20T12:20:00Z",
         "coalesce(end_time, 'infinity') >= '2026-11-20T10:01:15Z'"
         " AND start_time <= '2026-11-20T12:20:00Z'"},
        {"from=1795176000&to=1795179600", /* 12:00 → 13:00 as epoch seconds */
         "coalesce(end_time, 'infinity') >= to_timestamp(1795176000)"
         " AND start_time <= to_timestamp(1795179600)"},
        {"from=2026-11-20T11:01:15%2B01:00&to=2026-11-20T10:30:00Z", /* 10:01:15Z */
         "coalesce(end_time, 'infinity') >= '2026-11-20T10:01:15Z'"
         " AND start_time <= '2026-11-20T10:30:00Z'"},
        {"anomalies=yes", "EXISTS (SELECT 1 FROM anomalies a WHERE " RUN_ANOMALY ")"},
        {"anomalies=no", "NOT EXISTS (SELECT 1 FROM anomalies a WHERE " RUN_ANOMALY ")"},
        {"program=nothing-is-called-this", "false"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(filters); i++) {
        char *want = runs_where(filters[i].where);
        char *path = g_strdup_printf("/api/v1/runs?%s", filters[i].query);
        struct test_http a;
        JsonNode *root = test_web_get_json(&web, path, NULL, 200, &a);
        char *got = test_web_ids(test_web_array(root, path, "runs"), "run_id");
        assert_same_text(got, want, path);
        g_free(got);
        g_free(path);
        g_free(want);
        test_http_clear(&a);
    }
}

/* ---- one run ------------------------------------------------------------------------------ */

static JsonNode *cli_report(const char *run, JsonParser **parser)
{
    const char *args[] = {run, "--format", "json", "--config", config_path, NULL};
    struct test_run r = test_run_vigil(dir, "report", args);
    test_assert_status(&r, 0, "vigil report --format json");
    *parser = json_parser_new();
    GError *error = NULL;
    if (!json_parser_load_from_data(*parser, r.out, -1, &error))
        fail_msg("vigil report --format json printed no JSON: %s\n%s", error->message, r.out);
    test_run_clear(&r);
    return json_parser_get_root(*parser);
}

static void test_run_one(void **state)
{
    (void)state;
    struct test_http a;
    JsonNode *root = test_web_get_json(&web, "/api/v1/runs/1", NULL, 200, &a);
    const char *where = "/api/v1/runs/1";
    check_run(test_json_node(root, "run"));

    /* The report: exactly what `vigil report RUN --format json` prints,
     * for the MPI run, a run of one process and a short one. */
    static const char *const reported[] = {"1", "3", "12"};
    for (gsize i = 0; i < G_N_ELEMENTS(reported); i++) {
        JsonParser *parser = NULL;
        JsonNode *cli = cli_report(reported[i], &parser);
        char *path = g_strconcat("/api/v1/runs/", reported[i], NULL);
        struct test_http one;
        JsonNode *report = test_json_node(test_web_get_json(&web, path, NULL, 200, &one), "report");
        if (report == NULL || !json_node_equal(report, cli))
            fail_msg("%s: its report differs from `vigil report %s --format json`:\nAPI: %.3000s\n"
                     "CLI: %.3000s",
                     path, reported[i], report != NULL ? json_to_string(report, FALSE) : "(none)",
                     json_to_string(cli, FALSE));
        /* The run's figures are the report's. */
        JsonNode *run = test_json_node(one.json, "run");
        static const char *const same[][2] = {{"calls", "activities.observed"},
                                              {"bytes_read", "io_bytes_read"},
                                              {"bytes_written", "io_bytes_written"},
                                              {"energy_j", "energy_joule"}};
        for (gsize k = 0; k < G_N_ELEMENTS(same); k++) {
            char *what = g_strdup_printf("%s: run.%s against vigil report's %s", path, same[k][0],
                                         same[k][1]);
            assert_close(test_json_number(run, path, same[k][0]),
                         test_json_number(cli, "vigil report", same[k][1]), what);
            g_free(what);
        }
        test_http_clear(&one);
        g_free(path);
        g_object_unref(parser);
    }
    assert_non_null(test_json_string(root, where, "report_of"));
    assert_true(json_array_get_length(test_web_array(root, where, "report_card")) > 0);

    /* Every process, with its rank, pid and node. */
    JsonArray *ranks = test_web_array(root, where, "ranks");
    assert_int_equal(json_array_get_length(ranks), 4);
    GString *got = g_string_new(NULL);
    for (guint i = 0; i < 4; i++) {
        JsonObject *r = json_array_get_object_element(ranks, i);
        for (const char *const *f =
                 (const char *const[]){"rank", "process_id", "pid", "node_id", "hostname",
                                       "program", "start_time", "end_time", "runtime_s",
                                       "exit_status", "job_report", "report_sent", "calls",
                                       "bytes_read", "bytes_written", "cpu_s", "energy_j", NULL};
             *f != NULL; f++)
            if (!json_object_has_member(r, *f))
                fail_msg("runs/1: a rank without %s", *f);
        g_string_append_printf(
            got, "%s%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ":%s",
            i > 0 ? "," : "", json_object_get_int_member(r, "rank"),
            json_object_get_int_member(r, "process_id"), json_object_get_int_member(r, "pid"),
            json_object_get_string_member(r, "hostname"));
    }
    char *want = sql("SELECT string_agg(concat_ws(':', rank, process_id, pid, hostname), ','"
                     " ORDER BY rank) FROM processes JOIN nodes USING (node_id) WHERE run_id = 1");
    assert_same_text(got->str, want, "runs/1 ranks (rank:process_id:pid:hostname)");
    g_free(want);
    g_string_free(got, TRUE);

    JsonArray *nodes = test_web_array(root, where, "nodes");
    char *node_ids = test_web_ids(nodes, "node_id");
    assert_string_equal(node_ids, "1,2");
    assert_string_equal(test_json_string(root, where, "nodes.0.hostname"), "n1");
    assert_string_equal(test_json_string(root, where, "nodes.1.hostname"), "n2");
    assert_int_equal(test_json_int(root, where, "nodes.0.processes"), 2);
    assert_int_equal(test_json_int(root, where, "nodes.1.processes"), 2);
    g_free(node_ids);

    /* The run's energy across its nodes: ranks 0 and 1 on n1 (9125 J
     * each), 2 and 3 on n2 (9000 J each); the report shows it too, as
     * `vigil report` adds it (compared above). */
    assert_close(test_json_number(root, where, "job_energy.energy_j"), 36250, "job energy");
    assert_int_equal(test_json_int(root, where, "job_energy.nodes"), 2);
    assert_close(test_json_number(root, where, "job_energy.node_min_j"), 18000, "node min");
    assert_close(test_json_number(root, where, "job_energy.node_mean_j"), 18125, "node mean");
    assert_close(test_json_number(root, where, "job_energy.node_max_j"), 18250, "node max");
    assert_string_equal(test_json_string(root, where, "job_energy.sources"), "powercap");
    assert_false(json_node_get_boolean(test_json_node(root, "job_energy.estimated")));
    assert_true(json_node_get_boolean(test_json_node(root, "job_energy.complete")));
    assert_string_equal(test_json_string(root, where, "job_energy.by_node.0.hostname"), "n1");
    assert_close(test_json_number(root, where, "job_energy.by_node.0.energy_j"), 18250, "n1");
    assert_close(test_json_number(root, where, "job_energy.by_node.1.energy_j"), 18000, "n2");
    assert_close(test_json_number(root, where, "report.job_energy.energy_joule"), 36250,
                 "report's job energy");
    assert_string_equal(test_json_string(root, where, "report.job_energy.node_max_host"), "n1");

    /* Files, each with its figures (the fixture's job report lists none). */
    JsonArray *files = test_web_array(root, where, "files");
    for (guint i = 0; i < json_array_get_length(files); i++) {
        JsonObject *f = json_array_get_object_element(files, i);
        assert_true(json_object_has_member(f, "path") && json_object_has_member(f, "calls"));
    }

    /* Neighbours: runs on the same nodes at the same time; run 3 was on n1. */
    char *neighbours = sorted_ids(test_web_array(root, where, "neighbours"), "run_id");
    char *want_neighbours =
        sql("SELECT string_agg(DISTINCT r.run_id::text, ',') FROM runs r JOIN processes p USING"
            " (run_id) WHERE r.run_id <> 1 AND p.node_id IN (SELECT node_id FROM processes WHERE"
            " run_id = 1) AND r.start_time <= '2026-11-20 10:02:00Z'"
            " AND coalesce(r.end_time, 'infinity') >= '2026-11-20 10:00:00Z'");
    assert_same_text(neighbours, want_neighbours, "runs/1 neighbours");
    assert_string_equal(neighbours, "3");
    g_free(neighbours);
    g_free(want_neighbours);

    /* Each rank's figures: those of its own report; rank 0's report is
     * the job's joint one, so it has none of its own here. */
    for (guint i = 0; i < 4; i++) {
        JsonObject *r = json_array_get_object_element(ranks, i);
        gint64 process = json_object_get_int_member(r, "process_id");
        gboolean joint = json_object_get_boolean_member_with_default(r, "job_report", FALSE);
        char *want_figures =
            sql("SELECT CASE WHEN coalesce((report->>'in_job_report')::boolean, false)"
                " THEN concat_ws('|', report->'activities'->>'observed', report->>'io_bytes_read',"
                " report->>'io_bytes_written', (report->>'cpu_seconds')::float8,"
                " (report->>'energy_joule')::float8)"
                " ELSE 'joint' END FROM run_summaries WHERE process_id = %" G_GINT64_FORMAT,
                process);
        char *got_figures =
            joint ? g_strdup("joint")
                  : g_strdup_printf("%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT
                                    "|%.17g|%.17g",
                                    json_object_get_int_member(r, "calls"),
                                    json_object_get_int_member(r, "bytes_read"),
                                    json_object_get_int_member(r, "bytes_written"),
                                    number_or_nan(json_object_get_member(r, "cpu_s")),
                                    number_or_nan(json_object_get_member(r, "energy_j")));
        if (!joint) { /* the warehouse's float8 through the same printf */
            char **parts = g_strsplit(want_figures, "|", -1);
            if (g_strv_length(parts) == 5) {
                char *again =
                    g_strdup_printf("%s|%s|%s|%.17g|%.17g", parts[0], parts[1], parts[2],
                                    g_ascii_strtod(parts[3], NULL), g_ascii_strtod(parts[4], NULL));
                g_free(want_figures);
                want_figures = again;
            }
            g_strfreev(parts);
        } else {
            static const char *const figures[] = {"calls", "bytes_read", "bytes_written", "cpu_s",
                                                  "energy_j"};
            for (gsize k = 0; k < G_N_ELEMENTS(figures); k++)
                if (!JSON_NODE_HOLDS_NULL(json_object_get_member(r, figures[k])))
                    fail_msg("runs/1: rank %" G_GINT64_FORMAT " holds the joint report, yet has "
                             "%s of its own",
                             json_object_get_int_member(r, "rank"), figures[k]);
        }
        char *what = g_strdup_printf("runs/1 rank %" G_GINT64_FORMAT
                                     " (calls|bytes_read|bytes_written|cpu_s|energy_j)",
                                     json_object_get_int_member(r, "rank"));
        assert_same_text(got_figures, want_figures, what);
        g_free(what);
        g_free(got_figures);
        g_free(want_figures);
    }
    assert_true(
        json_object_get_boolean_member(json_array_get_object_element(ranks, 0), "job_report"));

    /* rank_stats and files: the joint report's per_rank and files, as stored. */
    static const char *const from_report[][2] = {{"rank_stats", "per_rank"}, {"files", "files"}};
    for (gsize i = 0; i < G_N_ELEMENTS(from_report); i++) {
        char *stored_text = sql("SELECT report->'%s' FROM run_summaries WHERE process_id ="
                                " (SELECT process_id FROM processes WHERE run_id = 1 AND rank = 0)",
                                from_report[i][1]);
        JsonParser *stored = json_parser_new();
        assert_true(json_parser_load_from_data(stored, stored_text, -1, NULL));
        JsonNode *got_node = test_json_node(root, from_report[i][0]);
        if (got_node == NULL || !json_node_equal(got_node, json_parser_get_root(stored)))
            fail_msg("runs/1 %s differs from the stored report's %s:\nAPI: %.1500s\nSQL: %.1500s",
                     from_report[i][0], from_report[i][1],
                     got_node != NULL ? json_to_string(got_node, FALSE) : "(none)", stored_text);
        g_object_unref(stored);
        g_free(stored_text);
    }
    assert_int_equal(test_json_int(root, where, "rank_stats.io_time_seconds.max_rank"), 2);

    /* The ranks on their own (runs/1/ranks), and the run without them
     * (ranks=no): together, the same answer. */
    struct test_http alone, without;
    JsonNode *ranks_root = test_web_get_json(&web, "/api/v1/runs/1/ranks", NULL, 200, &alone);
    if (!json_node_equal(test_json_node(ranks_root, "ranks"), test_json_node(root, "ranks")))
        fail_msg("runs/1/ranks differs from runs/1's ranks:\n%.1500s\n%.1500s", alone.body,
                 json_to_string(test_json_node(root, "ranks"), FALSE));
    JsonNode *without_root =
        test_web_get_json(&web, "/api/v1/runs/1?ranks=no", NULL, 200, &without);
    JsonObject *full = json_node_get_object(root), *lean = json_node_get_object(without_root);
    assert_true(JSON_NODE_HOLDS_NULL(json_object_get_member(lean, "ranks")));
    assert_int_equal(json_object_get_size(lean), json_object_get_size(full));
    JsonObjectIter members;
    const char *member;
    JsonNode *value;
    json_object_iter_init(&members, full);
    while (json_object_iter_next(&members, &member, &value))
        if (strcmp(member, "ranks") != 0 &&
            !json_node_equal(value, json_object_get_member(lean, member)))
            fail_msg("runs/1?ranks=no differs from runs/1 in %s", member);
    test_http_clear(&alone);
    test_http_clear(&without);
    test_http_clear(&a);

    a = test_web_get(&web, "/api/v1/runs/1?ranks=some", NULL);
    test_web_assert_error(&a, 400, "bad_parameter", "ranks");
    test_http_clear(&a);
    a = test_web_get(&web, "/api/v1/runs/999/ranks", NULL);
    test_web_assert_error(&a, 404, "not_found", NULL);
    test_http_clear(&a);

    /* A run that is not there. */
    a = test_web_get(&web, "/api/v1/runs/999", NULL);
    test_web_assert_error(&a, 404, "not_found", NULL);
    test_http_clear(&a);
    a = test_web_get(&web, "/api/v1/runs/abc", NULL);
    if (a.status != 400 && a.status != 404)
        fail_msg("runs/abc: %u %s", a.status, a.body);
    test_http_clear(&a);
}

/* ---- series ------------------------------------------------------------------------------- */

struct series_check {
    /* labels: "read,write"…; NULL: one series per node, named as the server likes */
    const char *metric, *unit, *labels;
};

static const struct series_check series_checks[] = {
    {"power", "W", "power"},
    {"energy", "J", NULL},
    {"cpu", "%", NULL},
    {"memory", "bytes", NULL},
    {"io_bytes", "B/s", "read,write"},
    {"io_ops", "ops/s", "read,write"},
    {"network", "B/s", "rx,tx"},
};

/* Checks the shape of a series answer: `points` buckets, each series's
 * min ≤ mean ≤ max, labels among `labels`; the number of series. */
static guint check_series_shape(JsonNode *root, const char *where, const struct series_check *c,
                                gint64 points)
{
    assert_string_equal(test_json_string(root, where, "metric"), c->metric);
    assert_string_equal(test_json_string(root, where, "unit"), c->unit);
    assert_non_null(test_json_node(root, "source"));
    assert_non_null(test_json_node(root, "estimated"));
    assert_non_null(test_json_node(root, "from"));
    assert_non_null(test_json_node(root, "to"));
    assert_true(test_json_number(root, where, "bucket_s") > 0);
    JsonArray *t = test_web_array(root, where, "t");
    if ((gint64)json_array_get_length(t) != points)
        fail_msg("%s: %u entries in t, asked for %" G_GINT64_FORMAT " points", where,
                 json_array_get_length(t), points);
    for (guint i = 1; i < json_array_get_length(t); i++)
        assert_true(json_array_get_double_element(t, i) > json_array_get_double_element(t, i - 1));
    JsonArray *series = test_web_array(root, where, "series");
    char **labels = c->labels != NULL ? g_strsplit(c->labels, ",", -1) : NULL;
    for (guint s = 0; s < json_array_get_length(series); s++) {
        JsonObject *o = json_array_get_object_element(series, s);
        const char *label = json_object_get_string_member_with_default(o, "label", "");
        if (labels != NULL ? !g_strv_contains((const char *const *)labels, label)
                           : label[0] == '\0')
            fail_msg("%s: a series labelled \"%s\", expected one of %s", where, label, c->labels);
        JsonArray *lo = json_object_get_array_member(o, "min");
        JsonArray *mid = json_object_get_array_member(o, "mean");
        JsonArray *hi = json_object_get_array_member(o, "max");
        assert_non_null(lo);
        assert_non_null(mid);
        assert_non_null(hi);
        assert_int_equal(json_array_get_length(lo), points);
        assert_int_equal(json_array_get_length(mid), points);
        assert_int_equal(json_array_get_length(hi), points);
        for (guint i = 0; i < (guint)points; i++) {
            double a = number_or_nan(json_array_get_element(lo, i));
            double b = number_or_nan(json_array_get_element(mid, i));
            double d = number_or_nan(json_array_get_element(hi, i));
            if (!isnan(a) && !(a <= b + 1e-9 * fabs(b) && b <= d + 1e-9 * fabs(d)))
                fail_msg("%s: series %u bucket %u: min %g mean %g max %g out of order", where, s, i,
                         a, b, d);
        }
    }
    g_strfreev(labels);
    return json_array_get_length(series);
}

/* The series of `hostname` labelled `label`. */
static JsonObject *series_of(JsonNode *root, const char *where, const char *hostname,
                             const char *label)
{
    JsonArray *series = test_web_array(root, where, "series");
    for (guint s = 0; s < json_array_get_length(series); s++) {
        JsonObject *o = json_array_get_object_element(series, s);
        if (g_strcmp0(json_object_get_string_member_with_default(o, "hostname", ""), hostname) ==
                0 &&
            (label == NULL ||
             g_strcmp0(json_object_get_string_member_with_default(o, "label", ""), label) == 0))
            return o;
    }
    fail_msg("%s: no series %s of %s", where, label != NULL ? label : "at all", hostname);
    return NULL;
}

/* The largest "max" of a series, and the bucket it is in. */
static double series_max(JsonObject *series, guint *bucket)
{
    JsonArray *hi = json_object_get_array_member(series, "max");
    double best = -INFINITY;
    for (guint i = 0; i < json_array_get_length(hi); i++) {
        double v = number_or_nan(json_array_get_element(hi, i));
        if (!isnan(v) && v > best) {
            best = v;
            if (bucket != NULL)
                *bucket = i;
        }
    }
    return best;
}

static const double spike_epoch = 1795168830.0; /* 2026-11-20T10:00:30Z */

static void check_power_spike(JsonNode *root, const char *where)
{
    JsonArray *t = test_web_array(root, where, "t");
    double bucket_s = test_json_number(root, where, "bucket_s");
    guint spike_bucket = G_MAXUINT;
    for (guint i = 0; i < json_array_get_length(t); i++) {
        double start = json_array_get_double_element(t, i);
        if (start <= spike_epoch + 1e-6 && spike_epoch < start + bucket_s - 1e-6)
            spike_bucket = i;
    }
    if (spike_bucket == G_MAXUINT)
        fail_msg("%s: no bucket holds 10:00:30", where);
    JsonObject *n1 = series_of(root, where, "n1", "power");
    double at_spike = number_or_nan(
        json_array_get_element(json_object_get_array_member(n1, "max"), spike_bucket));
    /* The spike's roll-up: 400 J in its second (max 408 J/s within it). */
    double lo = sql_number("SELECT max(delta / extract(epoch FROM end_time - start_time))"
                           " FROM statistics_rollups WHERE node_id = 1 AND metric_id ="
                           " (SELECT metric_id FROM metrics WHERE name = 'node.energy_j')"
                           " AND start_time >= '2026-11-20 10:00:00Z'"
                           " AND start_time < '2026-11-20 10:02:00Z'");
    double hi = sql_number("SELECT max(max) FROM statistics_rollups WHERE node_id = 1"
                           " AND metric_id = (SELECT metric_id FROM metrics"
                           " WHERE name = 'node.energy_j')"
                           " AND start_time >= '2026-11-20 10:00:00Z'"
                           " AND start_time < '2026-11-20 10:02:00Z'");
    if (!(at_spike >= 400 && at_spike >= lo - 1e-6 && at_spike <= hi + 1e-6))
        fail_msg("%s: n1's max in the bucket of 10:00:30 is %g: the spike (%g … %g W) did not "
                 "survive",
                 where, at_spike, lo, hi);
    /* n2 had none. */
    double n2 = series_max(series_of(root, where, "n2", "power"), NULL);
    if (!(n2 < 400))
        fail_msg("%s: n2's largest power is %g, it never passed 200 W", where, n2);
}

static struct test_http get_series(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static struct test_http get_series(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    char *path = g_strdup_vprintf(fmt, args);
    va_end(args);
    struct test_http a;
    test_web_get_json(&web, path, NULL, 200, &a);
    g_free(path);
    return a;
}

static void test_run_power_spike_survives_downsampling(void **state)
{
    (void)state;
    static const int points[] = {10, 600, 7, 1};
    for (gsize i = 0; i < G_N_ELEMENTS(points); i++) {
        char *where = g_strdup_printf("/api/v1/runs/1/series?metric=power&points=%d", points[i]);
        struct test_http a = get_series("%s", where);
        guint n = check_series_shape(a.json, where, &series_checks[0], points[i]);
        assert_int_equal(n, 2);
        check_power_spike(a.json, where);
        /* Every bucket of n1 but the spike's stays under 400 W… unless the
         * spike's bucket is the only one. */
        test_http_clear(&a);
        g_free(where);
    }
}

static void test_run_series_band_and_heat(void **state)
{
    (void)state;
    const char *where = "/api/v1/runs/1/series?metric=power&points=10&per_node=no";
    struct test_http a = get_series("%s", where);
    assert_int_equal(json_array_get_length(test_web_array(a.json, where, "series")), 0);
    JsonArray *band = test_web_array(a.json, where, "band");
    assert_int_equal(json_array_get_length(band), 1);
    JsonObject *b = json_array_get_object_element(band, 0);
    assert_int_equal(json_object_get_int_member(b, "nodes"), 2);
    static const char *const parts[] = {"median", "min", "max"};
    for (gsize i = 0; i < G_N_ELEMENTS(parts); i++)
        assert_int_equal(json_array_get_length(json_object_get_array_member(b, parts[i])), 10);
    /* The max over the nodes keeps n1's spike. */
    double spike = series_max(b, NULL);
    if (!(spike >= 400 && spike <= 408))
        fail_msg("%s: the band's largest max %g, n1's spike is 400 … 408 W", where, spike);
    /* And the heat map beside it: the nodes' means per bucket. */
    JsonArray *nodes = test_web_array(a.json, where, "heat.nodes");
    assert_int_equal(json_array_get_length(nodes), 2);
    assert_string_equal(json_array_get_string_element(nodes, 0), "n1");
    assert_string_equal(json_array_get_string_element(nodes, 1), "n2");
    JsonArray *values = test_web_array(a.json, where, "heat.values");
    assert_int_equal(json_array_get_length(values), 2);
    for (guint i = 0; i < 2; i++)
        assert_int_equal(json_array_get_length(json_array_get_array_element(values, i)), 10);
    test_http_clear(&a);
    /* per_node=yes (and auto, with 2 nodes): the lines, no band. */
    a = get_series("/api/v1/runs/1/series?metric=power&points=10&per_node=yes");
    assert_int_equal(json_array_get_length(test_web_array(a.json, "per_node=yes", "series")), 2);
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(a.json, "band")));
    test_http_clear(&a);
}

/* min_max_lines=N: the lines' min and max only when there are at most N
 * lines (null beyond), their means and everything else as without it. */
static void test_run_series_min_max_lines(void **state)
{
    (void)state;
    const char *full_path = "/api/v1/runs/1/series?metric=io_bytes&points=10";
    struct test_http full = get_series("%s", full_path);
    JsonArray *full_lines = test_web_array(full.json, full_path, "series");
    assert_int_equal(json_array_get_length(full_lines), 4); /* n1, n2 × read, write */
    static const struct {
        const char *n;
        gboolean min_max;
    } cases[] = {{"4", TRUE}, {"100", TRUE}, {"3", FALSE}, {"0", FALSE}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *where = g_strdup_printf("%s&min_max_lines=%s", full_path, cases[i].n);
        struct test_http a = get_series("%s", where);
        JsonArray *lines = test_web_array(a.json, where, "series");
        assert_int_equal(json_array_get_length(lines), 4);
        for (guint l = 0; l < 4; l++) {
            JsonObject *got = json_array_get_object_element(lines, l);
            JsonObject *want = json_array_get_object_element(full_lines, l);
            for (const char *const *m = (const char *const[]){"min", "max", NULL}; *m; m++) {
                JsonNode *node = json_object_get_member(got, *m);
                if (cases[i].min_max ? !JSON_NODE_HOLDS_ARRAY(node) : !JSON_NODE_HOLDS_NULL(node))
                    fail_msg("%s: line %u's %s is %s", where, l, *m,
                             cases[i].min_max ? "not an array" : "not null");
            }
            /* The means, and with min and max the whole line, as without it. */
            JsonNode *a_mean = json_object_get_member(got, "mean"),
                     *w_mean = json_object_get_member(want, "mean");
            assert_true(json_node_equal(a_mean, w_mean));
            if (cases[i].min_max)
                assert_true(json_node_equal(json_array_get_element(lines, l),
                                            json_array_get_element(full_lines, l)));
        }
        assert_true(json_node_equal(test_json_node(a.json, "t"), test_json_node(full.json, "t")));
        test_http_clear(&a);
        g_free(where);
    }
    test_http_clear(&full);
    /* The CSV leaves them empty the same way. */
    struct test_http csv = test_web_get(
        &web, "/api/v1/runs/1/series?metric=power&points=3&format=csv&min_max_lines=1", NULL);
    assert_int_equal(csv.status, 200);
    char **rows = g_strsplit(csv.body, "\n", -1);
    assert_string_equal(rows[0], "t,label,node_id,hostname,min_W,mean_W,max_W");
    for (guint r = 1; rows[r] != NULL && rows[r][0] != '\0'; r++) {
        char **f = g_strsplit(rows[r], ",", -1);
        if (g_strv_length(f) != 7 || f[4][0] != '\0' || f[6][0] != '\0' || f[5][0] == '\0')
            fail_msg("min_max_lines=1, CSV row \"%s\": min and max not empty, or no mean", rows[r]);
        g_strfreev(f);
    }
    g_strfreev(rows);
    test_http_clear(&csv);
    /* Bad input names the parameter. */
    static const char *const bad[] = {"-1", "x", "1.5", "99999999999"};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *path = g_strdup_printf("/api/v1/runs/1/series?metric=power&min_max_lines=%s", bad[i]);
        struct test_http e = test_web_get(&web, path, NULL);
        test_web_assert_error(&e, 400, "bad_parameter", "min_max_lines");
        test_http_clear(&e);
        g_free(path);
    }
}

static void test_run_series_every_metric(void **state)
{
    (void)state;
    for (gsize m = 0; m < G_N_ELEMENTS(series_checks); m++) {
        const struct series_check *c = &series_checks[m];
        char *where = g_strdup_printf("/api/v1/runs/1/series?metric=%s&points=12", c->metric);
        struct test_http a = get_series("%s", where);
        guint n = check_series_shape(a.json, where, c, 12);
        guint labels = c->labels != NULL && strchr(c->labels, ',') != NULL ? 2 : 1;
        if (n != 2 * labels)
            fail_msg("%s: %u series, expected %u (n1 and n2, each %s)", where, n, 2 * labels,
                     c->labels != NULL ? c->labels : "one");
        test_http_clear(&a);
        g_free(where);
    }

    /* A gauge: memory's largest bucket max is the largest roll-up value. */
    struct test_http a = get_series("/api/v1/runs/1/series?metric=memory&points=12");
    double got = series_max(series_of(a.json, "memory", "n1", NULL), NULL);
    double lo = sql_number("SELECT max(mean) FROM statistics_rollups WHERE node_id = 1"
                           " AND metric_id = (SELECT metric_id FROM metrics"
                           " WHERE name = 'mem.used_bytes') AND start_time >= '2026-11-20 10:00Z'"
                           " AND start_time < '2026-11-20 10:02Z'");
    double hi = sql_number("SELECT max(max) FROM statistics_rollups WHERE node_id = 1"
                           " AND metric_id = (SELECT metric_id FROM metrics"
                           " WHERE name = 'mem.used_bytes') AND start_time >= '2026-11-20 10:00Z'"
                           " AND start_time < '2026-11-20 10:02Z'");
    if (!(got >= lo - 1e-6 * lo && got <= hi + 1e-6 * hi))
        fail_msg("memory: n1's largest bucket max %.17g, the roll-ups' largest value is between "
                 "%.17g and %.17g",
                 got, lo, hi);
    test_http_clear(&a);

    /* Energy: the running sum ends at the node's joules over the run. */
    a = get_series("/api/v1/runs/1/series?metric=energy&points=12");
    got = series_max(series_of(a.json, "energy", "n1", NULL), NULL);
    double want = sql_number("SELECT sum(delta) FROM statistics_rollups WHERE node_id = 1"
                             " AND metric_id = (SELECT metric_id FROM metrics"
                             " WHERE name = 'node.energy_j')"
                             " AND start_time >= '2026-11-20 10:00Z'"
                             " AND end_time <= '2026-11-20 10:02Z'");
    assert_close(got, want, "energy: n1's running sum at the run's end");
    test_http_clear(&a);

    /* CPU: a share of the node's CPUs. */
    a = get_series("/api/v1/runs/1/series?metric=cpu&points=12");
    double cpu = series_max(series_of(a.json, "cpu", "n1", NULL), NULL);
    if (!(cpu > 0 && cpu <= 100))
        fail_msg("cpu: n1's largest busy share %g %%, not within (0, 100]", cpu);
    test_http_clear(&a);

    /* A metric that is not one, and too many points. */
    a = test_web_get(&web, "/api/v1/runs/1/series?metric=bogus", NULL);
    test_web_assert_error(&a, 400, "bad_parameter", "metric");
    test_http_clear(&a);
}

/* ---- series at the coarser levels (migration 15) ---------------------------------------- */

/* Every bucket of every series of `b` against `a`'s: `rel` the largest
 * relative difference of min, mean and max allowed (both null counts as
 * equal); with `inside`, b's min, mean and max inside a's band instead. */
static void assert_same_series(JsonNode *a, JsonNode *b, const char *where, double rel,
                               gboolean inside)
{
    JsonArray *sa = test_web_array(a, where, "series"), *sb = test_web_array(b, where, "series");
    assert_int_equal(json_array_get_length(sa), json_array_get_length(sb));
    static const char *const members[] = {"min", "mean", "max"};
    guint compared = 0;
    for (guint s = 0; s < json_array_get_length(sa); s++)
        for (gsize m = 0; m < G_N_ELEMENTS(members); m++) {
            JsonArray *x =
                json_object_get_array_member(json_array_get_object_element(sa, s), members[m]);
            JsonArray *y =
                json_object_get_array_member(json_array_get_object_element(sb, s), members[m]);
            assert_int_equal(json_array_get_length(x), json_array_get_length(y));
            for (guint k = 0; k < json_array_get_length(x); k++) {
                gboolean xn = json_array_get_null_element(x, k),
                         yn = json_array_get_null_element(y, k);
                if (xn || yn) {
                    if (xn != yn)
                        fail_msg("%s: series %u %s bucket %u: null at one level only", where, s,
                                 members[m], k);
                    continue;
                }
                double u = json_array_get_double_element(x, k),
                       v = json_array_get_double_element(y, k);
                if (inside) {
                    JsonObject *band = json_array_get_object_element(sa, s);
                    double lo = json_array_get_double_element(
                               json_object_get_array_member(band, "min"), k),
                           hi = json_array_get_double_element(
                               json_object_get_array_member(band, "max"), k);
                    double slack = 1e-9 * MAX(MAX(fabs(lo), fabs(hi)), 1);
                    if (v < lo - slack || v > hi + slack)
                        fail_msg("%s: series %u %s bucket %u: %.17g, outside level 1's band "
                                 "[%.17g, %.17g]",
                                 where, s, members[m], k, v, lo, hi);
                    compared++;
                    continue;
                }
                if (fabs(u - v) > rel * MAX(MAX(fabs(u), fabs(v)), 1e-9))
                    fail_msg("%s: series %u %s bucket %u: %.17g at level 1, %.17g here", where, s,
                             members[m], k, u, v);
                compared++;
            }
        }
    assert_true(compared > 0);
}

/* A node's series at level 1 and at `level` (auto when NULL), which must
 * answer with level_s `want_level`, compared within `rel` (`inside`: above). */
static void compare_levels(const char *query, const char *level, gint64 want_level, double rel,
                           gboolean inside)
{
    char *one = g_strdup_printf("/api/v1/nodes/1/series?%s&level=1", query);
    char *other = level != NULL
                      ? g_strdup_printf("/api/v1/nodes/1/series?%s&level=%s", query, level)
                      : g_strdup_printf("/api/v1/nodes/1/series?%s", query);
    struct test_http a = get_series("%s", one), b = get_series("%s", other);
    assert_int_equal(test_json_int(a.json, one, "level_s"), 1);
    if (test_json_int(b.json, other, "level_s") != want_level)
        fail_msg("%s: level_s %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT, other,
                 test_json_int(b.json, other, "level_s"), want_level);
    assert_same_series(a.json, b.json, other, rel, inside);
    test_http_clear(&a);
    test_http_clear(&b);
    g_free(one);
    g_free(other);
}

static void test_series_levels(void **state)
{
    (void)state;
    /* The fixture's roll-ups built from 10:00 to 12:00 at both levels, the
     * rest not (as if the builder had got that far). */
    test_pg_exec(&pg, "SELECT vigil_build_level_blocks(l, '2026-11-20 10:00Z',"
                      " '2026-11-20 12:00Z') FROM unnest(ARRAY[5, 60]) l;"
                      "UPDATE statistics_levels SET built_until = '2026-11-20 12:00Z'");
    /* Buckets on the levels' slots: the same answer (but for the order of
     * floating sums). Gauges, rates, a label of one disk. */
    static const char *const metrics[] = {"power", "memory", "io_bytes", "network"};
    for (gsize m = 0; m < G_N_ELEMENTS(metrics); m++) {
        char *q = g_strdup_printf(
            "metric=%s&from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z&points=60", metrics[m]);
        compare_levels(q, NULL, 60, 1e-9, FALSE); /* 60 s buckets: the 60 s level */
        compare_levels(q, "5", 5, 1e-9, FALSE);
        g_free(q);
        q = g_strdup_printf(
            "metric=%s&from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z&points=720", metrics[m]);
        compare_levels(q, NULL, 5, 1e-9, FALSE); /* 5 s buckets */
        g_free(q);
        /* Half built: the rest from the 1 s roll-ups, the same answer. */
        q = g_strdup_printf("metric=%s&from=2026-11-20T11:30:00Z&to=2026-11-20T12:30:00Z&points=60",
                            metrics[m]);
        compare_levels(q, NULL, 60, 1e-9, FALSE);
        g_free(q);
    }
    /* Buckets not on the slots (a slot falls in one bucket whole; the
     * edges not on a slot come from the 1 s roll-ups): close, not equal. */
    compare_levels("metric=power&from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z&points=7", "5",
                   5, 0.05, FALSE);
    compare_levels("metric=power&from=2026-11-20T10:00:02.5Z&to=2026-11-20T10:59:57.5Z&points=59",
                   "60", 60, 0.05, FALSE);
    /* Several rows per bucket and time (cpu's states, energy's running
     * sum): inside level 1's band (a slot's busy share is between its
     * seconds' ones; a running sum at a slot's end is one of the seconds'). */
    compare_levels("metric=cpu&from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z&points=60", NULL,
                   60, 0.05, TRUE);
    compare_levels("metric=energy&from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z&points=60",
                   NULL, 60, 0.05, TRUE);
    /* Too fine for a level: level 1. */
    compare_levels("metric=power&from=2026-11-20T10:00:00Z&to=2026-11-20T10:10:00Z&points=600",
                   NULL, 1, 0, FALSE);
    /* Bad input names the parameter. */
    static const char *const bad[] = {"7", "abc", "0", "-5", "5s"};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *path = g_strdup_printf("/api/v1/nodes/1/series?metric=power&level=%s", bad[i]);
        struct test_http a = test_web_get(&web, path, NULL);
        test_web_assert_error(&a, 400, "bad_parameter", "level");
        test_http_clear(&a);
        g_free(path);
    }
    test_pg_exec(&pg, "DELETE FROM statistics_level_blocks;"
                      "UPDATE statistics_levels SET built_until = NULL");
}

/* The column of `header` whose name is `name` or starts with `name`_
 * (min_W…); fails when there is none. */
static int csv_column(char **header, const char *name)
{
    for (int i = 0; header[i] != NULL; i++) {
        const char *h = header[i];
        if (g_str_has_prefix(h, name) && (h[strlen(name)] == '\0' || h[strlen(name)] == '_'))
            return i;
    }
    fail_msg("format=csv: no column %s", name);
    return -1;
}

/* A CSV cell against a JSON number or null. */
static void assert_csv_cell(const char *cell, JsonNode *want, const char *what)
{
    if (want == NULL || JSON_NODE_HOLDS_NULL(want)) {
        if (cell[0] != '\0')
            fail_msg("%s: %s in the CSV, null in the JSON", what, cell);
        return;
    }
    if (cell[0] == '\0')
        fail_msg("%s: empty in the CSV, %g in the JSON", what, json_node_get_double(want));
    assert_close(g_ascii_strtod(cell, NULL), json_node_get_double(want), what);
}

static void test_run_series_csv(void **state)
{
    (void)state;
    struct test_http json = get_series("/api/v1/runs/1/series?metric=io_bytes&points=10");
    JsonArray *series = test_web_array(json.json, "json", "series");
    JsonArray *t = test_web_array(json.json, "json", "t");
    struct test_http csv =
        test_web_get(&web, "/api/v1/runs/1/series?metric=io_bytes&points=10&format=csv", NULL);
    if (csv.status != 200 || g_strcmp0(csv.content_type, "text/csv") != 0)
        fail_msg("format=csv: %u %s: %.500s", csv.status, csv.content_type, csv.body);
    char **lines = g_strsplit(g_strchomp(csv.body), "\n", -1);
    guint rows = g_strv_length(lines);
    /* A header, then one row per bucket and series, with the JSON's figures. */
    guint n_series = json_array_get_length(series);
    if (rows != 1 + 10 * n_series)
        fail_msg("format=csv: %u lines, expected a header and %u rows:\n%.2000s", rows,
                 10 * n_series, csv.body);
    char **header = g_strsplit(g_strchomp(lines[0]), ",", -1);
    int t_col = csv_column(header, "t"), label_col = csv_column(header, "label"),
        host_col = csv_column(header, "hostname");
    const char *const figures[] = {"min", "mean", "max"};
    int figure_col[3];
    for (int f = 0; f < 3; f++)
        figure_col[f] = csv_column(header, figures[f]);
    guint checked = 0;
    for (guint r = 1; r < rows; r++) {
        char **cells = g_strsplit(g_strchomp(lines[r]), ",", -1);
        if ((int)g_strv_length(cells) != (int)g_strv_length(header))
            fail_msg("format=csv: row %u has %u cells, the header %u: %s", r, g_strv_length(cells),
                     g_strv_length(header), lines[r]);
        double start = g_ascii_strtod(cells[t_col], NULL);
        guint bucket = G_MAXUINT;
        for (guint i = 0; i < json_array_get_length(t); i++)
            if (fabs(json_array_get_double_element(t, i) - start) < 1e-3)
                bucket = i;
        if (bucket == G_MAXUINT)
            fail_msg("format=csv: row %u starts at %s, no bucket of the JSON does", r,
                     cells[t_col]);
        JsonObject *o = series_of(json.json, "json", cells[host_col], cells[label_col]);
        for (int f = 0; f < 3; f++) {
            char *what = g_strdup_printf("format=csv: %s %s at %s, %s", cells[host_col],
                                         cells[label_col], cells[t_col], figures[f]);
            assert_csv_cell(
                cells[figure_col[f]],
                json_array_get_element(json_object_get_array_member(o, figures[f]), bucket), what);
            g_free(what);
        }
        checked++;
        g_strfreev(cells);
    }
    assert_int_equal(checked, 10 * n_series);
    g_strfreev(header);
    g_strfreev(lines);
    test_http_clear(&csv);
    test_http_clear(&json);
}

/* ---- windows and activities --------------------------------------------------------------- */

static void test_run_windows(void **state)
{
    (void)state;
    struct test_http a;
    const char *where = "/api/v1/runs/1/windows";
    JsonNode *root = test_web_get_json(&web, where, NULL, 200, &a);
    JsonArray *windows = test_web_array(root, where, "windows");
    char *got = sorted_ids(windows, "capture_id");
    char *want = sql("SELECT string_agg(capture_id::text, ',' ORDER BY capture_id) FROM captures"
                     " WHERE process_id IN (SELECT process_id FROM processes WHERE run_id = 1)");
    assert_same_text(got, want, where);
    assert_int_equal(json_array_get_length(windows), 2);
    for (guint i = 0; i < json_array_get_length(windows); i++) {
        JsonObject *w = json_array_get_object_element(windows, i);
        gint64 id = json_object_get_int_member(w, "capture_id");
        char *fields = g_strdup_printf(
            "%" G_GINT64_FORMAT ":%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT
            ":%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ":%s:%s",
            json_object_get_int_member(w, "node_id"), json_object_get_string_member(w, "hostname"),
            json_object_get_int_member(w, "pid"), json_object_get_int_member(w, "rank"),
            json_object_get_int_member(w, "first_cycle"),
            json_object_get_int_member(w, "last_cycle"),
            json_object_get_int_member(w, "activities_forwarded"),
            json_object_get_string_member(w, "start_time"),
            json_object_get_string_member(w, "reasons"));
        char *want_fields = sql(
            "SELECT concat_ws(':', c.node_id, n.hostname, p.pid, p.rank, first_cycle, last_cycle,"
            " activities_forwarded, to_char(c.start_time AT TIME ZONE 'UTC',"
            " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), reasons) FROM captures c JOIN nodes n USING"
            " (node_id) LEFT JOIN processes p USING (process_id) WHERE capture_id = "
            "%" G_GINT64_FORMAT,
            id);
        assert_same_text(fields, want_fields,
                         "a window (node:host:pid:rank:cycles:forwarded:start:reasons)");
        g_free(fields);
        g_free(want_fields);
        /* Its anomalies: its node's and its process's while it lasted. */
        char *anomalies = sorted_ids(json_object_get_array_member(w, "anomalies"), "anomaly_id");
        char *want_anomalies =
            sql("SELECT string_agg(anomaly_id::text, ',' ORDER BY anomaly_id) FROM anomalies a"
                " JOIN captures c ON a.node_id = c.node_id AND a.time >= c.start_time"
                " AND a.time <= c.end_time AND (a.process_id IS NULL OR a.process_id ="
                " c.process_id) WHERE c.capture_id = %" G_GINT64_FORMAT,
                id);
        char *what = g_strdup_printf("window %" G_GINT64_FORMAT "'s anomalies", id);
        assert_same_text(anomalies, want_anomalies, what);
        assert_int_equal(json_array_get_length(json_object_get_array_member(w, "anomalies")), 2);
        g_free(what);
        g_free(anomalies);
        g_free(want_anomalies);
        /* Its reasoner states: its node's and its process's over its cycles. */
        JsonArray *states = json_object_get_array_member(w, "reasoner_states");
        assert_non_null(states);
        guint64 want_states =
            sql_count("SELECT count(*) FROM reasoner_states s JOIN captures c ON"
                      " s.node_id = c.node_id AND s.time >= c.start_time AND"
                      " s.time <= c.end_time AND (s.process_id IS NULL OR"
                      " s.process_id = c.process_id) WHERE c.capture_id = %" G_GINT64_FORMAT,
                      id);
        if (json_array_get_length(states) != want_states)
            fail_msg("window %" G_GINT64_FORMAT
                     ": %u reasoner states, the warehouse has %" G_GUINT64_FORMAT,
                     id, json_array_get_length(states), want_states);
    }
    g_free(got);
    g_free(want);
    test_http_clear(&a);
    /* Runs without a window of their own. */
    for (int run = 2; run <= 3; run++) {
        char *path = g_strdup_printf("/api/v1/runs/%d/windows", run);
        root = test_web_get_json(&web, path, NULL, 200, &a);
        assert_int_equal(json_array_get_length(test_web_array(root, path, "windows")), 0);
        test_http_clear(&a);
        g_free(path);
    }
}

static void test_window_activities_pages(void **state)
{
    (void)state;
    for (gint64 capture = 1; capture <= 2; capture++) {
        char *window_start = sql("SELECT to_char(start_time AT TIME ZONE 'UTC',"
                                 " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM captures"
                                 " WHERE capture_id = %" G_GINT64_FORMAT,
                                 capture);
        char *window_end = sql("SELECT to_char(end_time AT TIME ZONE 'UTC',"
                               " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM captures"
                               " WHERE capture_id = %" G_GINT64_FORMAT,
                               capture);
        guint64 stored =
            sql_count("SELECT count(*) FROM activities a JOIN captures c USING"
                      " (process_id) WHERE c.capture_id = %" G_GINT64_FORMAT
                      " AND a.start_time >= c.start_time AND a.start_time <= c.end_time",
                      capture);
        guint64 failed =
            sql_count("SELECT count(*) FROM activities a JOIN captures c USING"
                      " (process_id) WHERE c.capture_id = %" G_GINT64_FORMAT " AND a.errno <> 0",
                      capture);
        assert_int_equal(stored, 300);
        char *next = NULL, *last_time = g_strdup("");
        gint64 last_ns = G_MININT64;
        guint total = 0, pages = 0, errors = 0;
        GHashTable *seqs = g_hash_table_new(g_int64_hash, g_int64_equal);
        do {
            char *escaped = next != NULL ? g_uri_escape_string(next, NULL, FALSE) : NULL;
            char *path =
                g_strdup_printf("/api/v1/windows/%" G_GINT64_FORMAT "/activities?limit=100%s%s",
                                capture, escaped ? "&after=" : "", escaped ? escaped : "");
            struct test_http a;
            JsonNode *root = test_web_get_json(&web, path, NULL, 200, &a);
            assert_int_equal(test_json_int(root, path, "window.capture_id"), capture);
            JsonArray *rows = test_web_array(root, path, "activities");
            assert_true(json_array_get_length(rows) <= 100);
            for (guint i = 0; i < json_array_get_length(rows); i++) {
                JsonObject *r = json_array_get_object_element(rows, i);
                const char *t = json_object_get_string_member(r, "start_time");
                gint64 ns = json_object_get_int_member(r, "start_ns");
                if (strcmp(t, window_start) < 0 || strcmp(t, window_end) > 0)
                    fail_msg("%s: an activity at %s, outside the window %s … %s", path, t,
                             window_start, window_end);
                if (ns < last_ns || strcmp(t, last_time) < 0)
                    fail_msg("%s: an activity at %s after one at %s: not in time order", path, t,
                             last_time);
                last_ns = ns;
                g_free(last_time);
                last_time = g_strdup(t);
                gint64 *seq = g_new(gint64, 1);
                *seq = json_object_get_int_member(r, "seq");
                if (g_hash_table_contains(seqs, seq))
                    fail_msg("%s: activity seq %" G_GINT64_FORMAT " twice", path, *seq);
                g_hash_table_add(seqs, seq);
                assert_string_equal(json_object_get_string_member(r, "layer"), "posix");
                assert_string_equal(json_object_get_string_member(r, "path"), "/scratch/ior.dat");
                errors += json_object_get_int_member(r, "errno") != 0;
                total++;
            }
            JsonNode *n = test_json_node(root, "next");
            g_free(next);
            next = n != NULL && JSON_NODE_HOLDS_VALUE(n) ? g_strdup(json_node_get_string(n)) : NULL;
            pages++;
            test_http_clear(&a);
            g_free(path);
            g_free(escaped);
        } while (next != NULL && pages < 10);
        assert_null(next);
        assert_int_equal(total, stored);
        assert_int_equal(errors, failed);
        /* 300 rows in pages of 100: three full pages (and maybe an empty one). */
        assert_true(pages == 3 || pages == 4);
        g_hash_table_foreach(seqs, (GHFunc)(void (*)(void))g_free, NULL);
        g_hash_table_unref(seqs);
        g_free(last_time);
        g_free(window_start);
        g_free(window_end);
    }
    struct test_http a = test_web_get(&web, "/api/v1/windows/99/activities", NULL);
    test_web_assert_error(&a, 404, "not_found", NULL);
    test_http_clear(&a);
}

/* The heat map's cells (only those with activities) as a dense matrix,
 * `rows` x `bins`, of `what` ("calls" or "bytes"); g_free it. Checks that
 * every cell is in the matrix, comes once, in row then bin order, and is
 * not all zeros (those the answer leaves out). */
static gint64 *heatmap_matrix(JsonNode *root, const char *where, const char *what, guint rows,
                              guint bins)
{
    JsonArray *row = test_web_array(root, where, "cells.row");
    JsonArray *bin = test_web_array(root, where, "cells.bin");
    JsonArray *calls = test_web_array(root, where, "cells.calls");
    JsonArray *bytes = test_web_array(root, where, "cells.bytes");
    guint n = json_array_get_length(row);
    assert_int_equal(json_array_get_length(bin), n);
    assert_int_equal(json_array_get_length(calls), n);
    assert_int_equal(json_array_get_length(bytes), n);
    gint64 *matrix = g_new0(gint64, (gsize)rows * bins);
    gint64 last = -1;
    for (guint i = 0; i < n; i++) {
        gint64 r = json_array_get_int_element(row, i), b = json_array_get_int_element(bin, i);
        if (r < 0 || r >= rows || b < 0 || b >= bins || r * bins + b <= last)
            fail_msg("%s: cell %u (row %" G_GINT64_FORMAT ", bin %" G_GINT64_FORMAT
                     ") is outside the %u x %u map or out of order",
                     where, i, r, b, rows, bins);
        last = r * bins + b;
        if (json_array_get_int_element(calls, i) == 0 && json_array_get_int_element(bytes, i) == 0)
            fail_msg("%s: cell %u is all zeros: the answer leaves those out", where, i);
        matrix[last] = json_array_get_int_element(strcmp(what, "calls") == 0 ? calls : bytes, i);
    }
    return matrix;
}

static void test_run_heatmap(void **state)
{
    (void)state;
    struct test_http a;
    const char *where = "/api/v1/runs/1/heatmap?bins=20";
    JsonNode *root = test_web_get_json(&web, where, NULL, 200, &a);
    JsonArray *rows = test_web_array(root, where, "rows");
    assert_int_equal(json_array_get_length(rows), 4);
    assert_int_equal(json_array_get_length(test_web_array(root, where, "t")), 20);
    assert_true(test_json_number(root, where, "bin_s") > 0);
    gint64 *calls = heatmap_matrix(root, where, "calls", 4, 20);
    gint64 *bytes = heatmap_matrix(root, where, "bytes", 4, 20);
    gint64 all_calls = 0;
    double all_bytes = 0;
    for (guint r = 0; r < 4; r++) {
        JsonObject *row = json_array_get_object_element(rows, r);
        gint64 row_calls = 0;
        for (guint i = 0; i < 20; i++) {
            row_calls += calls[r * 20 + i];
            all_bytes += (double)bytes[r * 20 + i];
        }
        guint64 want =
            sql_count("SELECT count(*) FROM activities WHERE process_id = %" G_GINT64_FORMAT,
                      json_object_get_int_member(row, "process_id"));
        if ((guint64)row_calls != want)
            fail_msg("heatmap: rank %" G_GINT64_FORMAT " has %" G_GINT64_FORMAT
                     " calls, the warehouse %" G_GUINT64_FORMAT " activities",
                     json_object_get_int_member(row, "rank"), row_calls, want);
        all_calls += row_calls;
    }
    guint64 want_calls = test_pg_query_u64(&pg, "SELECT count(*) FROM activities WHERE process_id"
                                                " IN (SELECT process_id FROM processes WHERE"
                                                " run_id = 1)");
    assert_int_equal(all_calls, want_calls);
    double want_bytes = sql_number("SELECT sum(bytes) FROM activities WHERE process_id IN"
                                   " (SELECT process_id FROM processes WHERE run_id = 1)");
    assert_close(all_bytes, want_bytes, "heatmap: bytes over every bin and rank");
    g_free(calls);
    g_free(bytes);
    test_http_clear(&a);
    /* A run outside MPI: one row, its process, rank null. */
    root = test_web_get_json(&web, "/api/v1/runs/3/heatmap?bins=4", NULL, 200, &a);
    rows = test_web_array(root, "runs/3/heatmap", "rows");
    assert_int_equal(json_array_get_length(rows), 1);
    assert_int_equal(test_json_int(root, "runs/3/heatmap", "rows.0.process_id"), 9);
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "rows.0.rank")));
    test_http_clear(&a);
}

/* The heat map from activity_seconds equals counting the activities
 * themselves (the query it replaced), where every second lies in one bin,
 * where a bin's edge cuts a second (one side counted, the other the rest),
 * and where several edges or the interval do. */
static void test_run_heatmap_equals_counting_activities(void **state)
{
    (void)state;
    static const struct {
        const char *bins, *from, *to;
    } cases[] = {
        {"20", "2026-11-20T10:00:00Z", "2026-11-20T10:02:00Z"}, /* 6 s bins: seconds whole */
        /* 3.64 s bins: edges at 10:00:29.09 and :32.73 cut window 1's
         * seconds once each, near their start and near their end. */
        {"33", "2026-11-20T10:00:00Z", "2026-11-20T10:02:00Z"},
        /* 0.6 s bins: most seconds cut twice, some once. */
        {"200", "2026-11-20T10:00:00Z", "2026-11-20T10:02:00Z"},
        {"3", "2026-11-20T10:00:28.5Z", "2026-11-20T10:01:11.25Z"}, /* the interval cuts too */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *where = g_strdup_printf("/api/v1/runs/1/heatmap?bins=%s&from=%s&to=%s", cases[i].bins,
                                      cases[i].from, cases[i].to);
        struct test_http a;
        JsonNode *root = test_web_get_json(&web, where, NULL, 200, &a);
        JsonArray *rows = test_web_array(root, where, "rows");
        guint n_rows = json_array_get_length(rows);
        guint bins = (guint)g_ascii_strtoull(cases[i].bins, NULL, 10);
        gint64 *calls = heatmap_matrix(root, where, "calls", n_rows, bins);
        gint64 *bytes = heatmap_matrix(root, where, "bytes", n_rows, bins);
        /* Run 1's rows are ranks 0..3, processes 1..4: in process order. */
        GString *got = g_string_new(NULL);
        for (guint r = 0; r < n_rows; r++) {
            gint64 process =
                json_object_get_int_member(json_array_get_object_element(rows, r), "process_id");
            for (guint k = 0; k < bins; k++)
                if (calls[r * bins + k] != 0)
                    g_string_append_printf(
                        got, "%s%" G_GINT64_FORMAT ":%u:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT,
                        got->len > 0 ? " " : "", process, k, calls[r * bins + k],
                        bytes[r * bins + k]);
        }
        g_free(calls);
        g_free(bytes);
        char *want =
            sql("WITH k AS (SELECT (extract(epoch FROM timestamptz '%s') * 1e6)::bigint AS f,"
                " (extract(epoch FROM timestamptz '%s') * 1e6)::bigint AS t, %s::int AS n)"
                " SELECT string_agg(format('%%s:%%s:%%s:%%s', process_id, bin, c, b), ' '"
                " ORDER BY process_id, bin) FROM (SELECT a.process_id,"
                " least(k.n - 1, (a.start_ns / 1000 - k.f) * k.n / (k.t - k.f))::int AS bin,"
                " count(*) AS c, coalesce(sum(a.bytes), 0) AS b FROM activities a, k"
                " WHERE a.process_id IN (SELECT process_id FROM processes WHERE run_id = 1)"
                " AND a.start_time >= to_timestamp(k.f / 1e6) AND a.start_time < to_timestamp(k.t "
                "/ 1e6)"
                " AND a.start_ns >= k.f * 1000 AND a.start_ns < k.t * 1000 GROUP BY 1, 2) x",
                cases[i].from, cases[i].to, cases[i].bins);
        assert_true(want[0] != '\0');
        assert_same_text(got->str, want, where);
        g_free(want);
        g_string_free(got, TRUE);
        test_http_clear(&a);
        g_free(where);
    }
}

/* A run's files (warehouse/migrations/0008_file_stats.sql, set in the fixture): the
 * busiest first, with Darshan's counters; the run's totals; the timelines
 * of the reports that count (a job's, not its ranks' own). */
static void test_run_files(void **state)
{
    (void)state;
    struct test_http a;
    const char *where = "/api/v1/runs/3/files";
    JsonNode *root = test_web_get_json(&web, where, NULL, 200, &a);
    assert_int_equal(test_json_int(root, where, "files_total"), 2);
    assert_int_equal(json_array_get_length(test_web_array(root, where, "files")), 2);
    assert_string_equal(test_json_string(root, where, "files.0.path"), "/tmp/x");
    assert_string_equal(test_json_string(root, where, "files.0.fs_type"), "tmpfs");
    assert_int_equal(test_json_int(root, where, "files.0.written_bytes"), 8388608);
    assert_int_equal(test_json_int(root, where, "files.0.seq_writes"), 7);
    assert_int_equal(test_json_int(root, where, "files.0.posix_writes"), 8);
    assert_int_equal(test_json_int(root, where, "files.0.write_size_hist.5"), 8);
    assert_int_equal(test_json_int(root, where, "files.0.common_sizes.0.size"), 1048576);
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "files.0.mpiio")));
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "files.0.ranks")));
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "files.1.first_open_s")));
    assert_string_equal(test_json_string(root, where, "files.1.path"), "<stderr>");
    /* Totals over every file of the run. */
    assert_int_equal(test_json_int(root, where, "totals.write_size_hist.0"), 4);
    assert_int_equal(test_json_int(root, where, "totals.write_size_hist.5"), 8);
    assert_int_equal(test_json_int(root, where, "totals.posix_writes"), 12);
    assert_int_equal(test_json_int(root, where, "totals.files_unlisted"), 0);
    assert_int_equal(test_json_int(root, where, "totals.written_bytes"), 8388608 + 93);
    assert_int_equal(test_json_int(root, where, "timelines_total"), 1);
    assert_int_equal(test_json_int(root, where, "timelines.0.pid"), 6100);
    assert_close(test_json_number(root, where, "timelines.0.bin_s"), 0.0025, "bin_s");
    assert_int_equal(test_json_int(root, where, "timelines.0.written_bytes.1"), 4194304);
    assert_string_equal(test_json_string(root, where, "timelines.0.start_time"),
                        "2026-11-20T10:01:00.000000Z");
    /* Issue 33's counters (migration 17): run 3's report has them. */
    assert_true(json_node_get_boolean(test_json_node(root, "files.0.size_bins_upper_inclusive")));
    assert_int_equal(test_json_int(root, where, "files.0.posix_file_not_aligned"), 2);
    assert_int_equal(test_json_int(root, where, "files.0.posix_file_alignment_bytes"), 4096);
    assert_int_equal(test_json_int(root, where, "files.0.posix_mode"), 420);
    assert_close(test_json_number(root, where, "files.0.posix_max_write_time_s"), 0.0015,
                 "posix_max_write_time_s");
    assert_int_equal(test_json_int(root, where, "files.0.posix_max_write_time_size"), 1048576);
    assert_int_equal(test_json_int(root, where, "files.0.posix_rw_switches"), 0);
    assert_int_equal(test_json_int(root, where, "totals.posix_file_not_aligned"), 6);
    assert_true(json_node_get_boolean(test_json_node(root, "totals.size_bins_upper_inclusive")));
    test_http_clear(&a);

    where = "/api/v1/runs/3/files?limit=1";
    root = test_web_get_json(&web, where, NULL, 200, &a);
    assert_int_equal(test_json_int(root, where, "files_total"), 2);
    assert_int_equal(json_array_get_length(test_web_array(root, where, "files")), 1);
    test_http_clear(&a);

    /* An MPI job: its report's file, once, with the ranks' figures. */
    where = "/api/v1/runs/1/files";
    root = test_web_get_json(&web, where, NULL, 200, &a);
    assert_int_equal(test_json_int(root, where, "files_total"), 1);
    assert_int_equal(test_json_int(root, where, "files.0.reports"), 1);
    assert_int_equal(test_json_int(root, where, "files.0.calls"), 525);
    assert_int_equal(test_json_int(root, where, "files.0.mpiio.coll_writes"), 256);
    assert_int_equal(test_json_int(root, where, "files.0.ranks.count"), 4);
    assert_int_equal(test_json_int(root, where, "files.0.ranks.slowest_rank"), 0);
    assert_int_equal(test_json_int(root, where, "files.0.ranks.fastest_rank"), 3);
    assert_int_equal(test_json_int(root, where, "timelines_total"), 1);
    assert_int_equal(test_json_int(root, where, "timelines.0.rank"), 0);
    /* Its rows are from before issue 33: NULL, and the old bins said. */
    assert_false(json_node_get_boolean(test_json_node(root, "files.0.size_bins_upper_inclusive")));
    assert_false(json_node_get_boolean(test_json_node(root, "totals.size_bins_upper_inclusive")));
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "files.0.posix_rw_switches")));
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "files.0.mpiio.coll_opens")));
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "files.0.mpiio.read_size_hist")));
    test_http_clear(&a);

    /* A run without characterized files: empty, not an error. */
    where = "/api/v1/runs/4/files";
    root = test_web_get_json(&web, where, NULL, 200, &a);
    assert_int_equal(test_json_int(root, where, "files_total"), 0);
    assert_int_equal(json_array_get_length(test_web_array(root, where, "files")), 0);
    assert_int_equal(json_array_get_length(test_web_array(root, where, "timelines")), 0);
    test_http_clear(&a);
    a = test_web_get(&web, "/api/v1/runs/99/files", NULL);
    test_web_assert_error(&a, 404, "not_found", NULL);
    test_http_clear(&a);
}

/* A run's findings: its reports' "findings", read where they are stored
 * (run_summaries' JSON), warnings first, an entry without evidence passed
 * over; none is an empty list. */
static void test_run_findings(void **state)
{
    (void)state;
    struct test_http a;
    const char *where = "/api/v1/runs/3";
    JsonNode *root = test_web_get_json(&web, where, NULL, 200, &a);
    assert_int_equal(json_array_get_length(test_web_array(root, where, "findings")), 2);
    assert_string_equal(test_json_string(root, where, "findings.0.id"), "misaligned_accesses");
    assert_string_equal(test_json_string(root, where, "findings.0.severity"), "warning");
    assert_string_equal(test_json_string(root, where, "findings.0.file"), "/tmp/x");
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "findings.0.rank")));
    assert_string_equal(test_json_string(root, where, "findings.0.evidence"),
                        "2 of 8 writes to /tmp/x do not start on a 4 KiB boundary.");
    assert_string_equal(test_json_string(root, where, "findings.0.advice"),
                        "Write in multiples of the file system block size.");
    assert_int_equal(test_json_int(root, where, "findings.0.pid"), 6100);
    assert_string_equal(test_json_string(root, where, "findings.0.hostname"), "n1");
    assert_string_equal(test_json_string(root, where, "findings.1.id"), "odd_members");
    assert_string_equal(test_json_string(root, where, "findings.1.severity"), "info");
    assert_string_equal(test_json_string(root, where, "findings.1.evidence"),
                        "<b id=\"injected\">not bold</b>");
    test_http_clear(&a);
    /* Findings no vigil wrote: one without evidence passed over, members
     * of the wrong kind null, the rest as stored. */
    where = "/api/v1/runs/4";
    root = test_web_get_json(&web, where, NULL, 200, &a);
    assert_int_equal(json_array_get_length(test_web_array(root, where, "findings")), 1);
    assert_string_equal(test_json_string(root, where, "findings.0.id"), "wrong_kinds");
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "findings.0.severity")));
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "findings.0.file")));
    assert_true(JSON_NODE_HOLDS_NULL(test_json_node(root, "findings.0.rank")));
    test_http_clear(&a);
    where = "/api/v1/runs/1";
    root = test_web_get_json(&web, where, NULL, 200, &a);
    assert_int_equal(json_array_get_length(test_web_array(root, where, "findings")), 0);
    test_http_clear(&a);
}

/* ---- anomalies, nodes, thresholds --------------------------------------------------------- */

static void test_anomalies(void **state)
{
    (void)state;
    static const struct {
        const char *query, *where;
    } cases[] = {
        {"run=1", "EXISTS (SELECT 1 FROM runs r WHERE r.run_id = 1 AND " RUN_ANOMALY ")"},
        {"run=3", "EXISTS (SELECT 1 FROM runs r WHERE r.run_id = 3 AND " RUN_ANOMALY ")"},
        {"run=2", "EXISTS (SELECT 1 FROM runs r WHERE r.run_id = 2 AND " RUN_ANOMALY ")"},
        {"node=2", "a.node_id = 2"},
        {"node=n1", "a.node_id = 1"},
        {"plugin=latency-histogram", "a.plugin = 'latency-histogram'"},
        {"level=node", "a.level = 'node'"},
        {"from=2026-11-20T10:00:32Z&to=2026-11-20T10:01:11Z",
         "a.time >= '2026-11-20 10:00:32Z' AND a.time <= '2026-11-20 10:01:11Z'"},
        {"", "true"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *path = g_strdup_printf("/api/v1/anomalies?%s", cases[i].query);
        struct test_http a;
        JsonNode *root = test_web_get_json(&web, path, NULL, 200, &a);
        JsonArray *list = test_web_array(root, path, "anomalies");
        char *got = sorted_ids(list, "anomaly_id");
        char *want = sql("SELECT string_agg(anomaly_id::text, ',' ORDER BY anomaly_id)"
                         " FROM anomalies a WHERE %s",
                         cases[i].where);
        assert_same_text(got, want, path);
        for (guint k = 0; k < json_array_get_length(list); k++) {
            JsonObject *o = json_array_get_object_element(list, k);
            for (const char *const *f =
                     (const char *const[]){"anomaly_id", "level", "node_id", "hostname",
                                           "process_id", "run_id", "cycle", "time", "state",
                                           "plugin", "metric", "value", "expected_min",
                                           "expected_max", "message", NULL};
                 *f != NULL; f++)
                if (!json_object_has_member(o, *f))
                    fail_msg("%s: an anomaly without %s", path, *f);
            /* run_id: its process's run; none for a node's anomaly. */
            char *want_run = sql("SELECT coalesce(p.run_id::text, 'null') FROM anomalies a"
                                 " LEFT JOIN processes p USING (process_id)"
                                 " WHERE a.anomaly_id = %" G_GINT64_FORMAT,
                                 json_object_get_int_member(o, "anomaly_id"));
            JsonNode *run = json_object_get_member(o, "run_id");
            char *got_run = JSON_NODE_HOLDS_NULL(run)
                                ? g_strdup("null")
                                : g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(run));
            assert_same_text(got_run, want_run, "an anomaly's run_id");
            g_free(got_run);
            g_free(want_run);
        }
        g_free(got);
        g_free(want);
        g_free(path);
        test_http_clear(&a);
    }
    /* Pages of 2 through next: every anomaly once, newest first. */
    GString *ids = g_string_new(NULL);
    char *next = NULL;
    guint pages = 0;
    do {
        char *escaped = next != NULL ? g_uri_escape_string(next, NULL, FALSE) : NULL;
        char *path = g_strdup_printf("/api/v1/anomalies?limit=2%s%s", escaped ? "&after=" : "",
                                     escaped ? escaped : "");
        struct test_http a;
        JsonNode *root = test_web_get_json(&web, path, NULL, 200, &a);
        JsonArray *list = test_web_array(root, path, "anomalies");
        assert_true(json_array_get_length(list) <= 2);
        char *page = test_web_ids(list, "anomaly_id");
        if (page[0] != '\0')
            g_string_append_printf(ids, "%s%s", ids->len > 0 ? "," : "", page);
        g_free(page);
        JsonNode *n = test_json_node(root, "next");
        g_free(next);
        next = n != NULL && JSON_NODE_HOLDS_VALUE(n) ? g_strdup(json_node_get_string(n)) : NULL;
        test_http_clear(&a);
        g_free(path);
        g_free(escaped);
    } while (next != NULL && ++pages < 10);
    assert_null(next);
    char *want = sql("SELECT string_agg(anomaly_id::text, ',' ORDER BY time DESC, anomaly_id DESC)"
                     " FROM anomalies");
    assert_same_text(ids->str, want, "anomalies in pages of 2");
    g_free(want);
    g_string_free(ids, TRUE);
}

static void test_nodes(void **state)
{
    (void)state;
    struct test_http a;
    JsonNode *root = test_web_get_json(&web, "/api/v1/nodes", NULL, 200, &a);
    JsonArray *nodes = test_web_array(root, "/api/v1/nodes", "nodes");
    assert_int_equal(json_array_get_length(nodes), 3);
    GString *got = g_string_new(NULL);
    for (guint i = 0; i < 3; i++) {
        JsonObject *n = json_array_get_object_element(nodes, i);
        assert_true(json_object_has_member(n, "first_seen") &&
                    json_object_has_member(n, "last_seen"));
        g_string_append_printf(
            got, "%s%" G_GINT64_FORMAT ":%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT,
            i > 0 ? "," : "", json_object_get_int_member(n, "node_id"),
            json_object_get_string_member(n, "hostname"), json_object_get_int_member(n, "runs"),
            json_object_get_int_member(n, "anomalies"));
    }
    char *want =
        sql("SELECT string_agg(concat_ws(':', node_id, hostname,"
            " (SELECT count(DISTINCT run_id) FROM processes p WHERE p.node_id = n.node_id),"
            " (SELECT count(*) FROM anomalies a WHERE a.node_id = n.node_id)), ','"
            " ORDER BY node_id) FROM nodes n");
    assert_same_text(got->str, want, "/api/v1/nodes (node_id:hostname:runs:anomalies)");
    g_string_free(got, TRUE);
    g_free(want);
    test_http_clear(&a);

    root = test_web_get_json(&web, "/api/v1/nodes/1", NULL, 200, &a);
    assert_string_equal(test_json_string(root, "nodes/1", "node.hostname"), "n1");
    assert_int_equal(test_json_int(root, "nodes/1", "node.node_id"), 1);
    char *anomalies = sorted_ids(test_web_array(root, "nodes/1", "anomalies"), "anomaly_id");
    char *want_anomalies = sql("SELECT string_agg(anomaly_id::text, ',' ORDER BY anomaly_id)"
                               " FROM anomalies WHERE node_id = 1");
    assert_same_text(anomalies, want_anomalies, "nodes/1 anomalies");
    char *runs = test_web_ids(test_web_array(root, "nodes/1", "runs"), "run_id");
    char *want_runs = runs_where("run_id IN (SELECT run_id FROM processes WHERE node_id = 1)");
    assert_same_text(runs, want_runs, "nodes/1 runs, newest first");
    g_free(anomalies);
    g_free(want_anomalies);
    g_free(runs);
    g_free(want_runs);
    test_http_clear(&a);

    a = test_web_get(&web, "/api/v1/nodes/99", NULL);
    test_web_assert_error(&a, 404, "not_found", NULL);
    test_http_clear(&a);

    /* Its series over run 1's time: n1's spike again, one line. */
    const char *where = "/api/v1/nodes/1/series?metric=power&points=24"
                        "&from=2026-11-20T10:00:00Z&to=2026-11-20T10:02:00Z";
    root = test_web_get_json(&web, where, NULL, 200, &a);
    assert_int_equal(check_series_shape(root, where, &series_checks[0], 24), 1);
    double spike = series_max(series_of(root, where, "n1", "power"), NULL);
    if (!(spike >= 400 && spike <= 408))
        fail_msg("%s: n1's largest power %g, the spike is 400 … 408 W", where, spike);
    test_http_clear(&a);
    /* And by default (the node's last hour). */
    root = test_web_get_json(&web, "/api/v1/nodes/3/series?metric=memory&points=60", NULL, 200, &a);
    assert_int_equal(check_series_shape(root, "nodes/3/series", &series_checks[3], 60), 1);
    test_http_clear(&a);
}

/* The fixture's two tune trials, newest first, side by side as
 * tune_comparisons puts them; one page at a time; one by id; 404. */
static void test_tune_trials(void **state)
{
    (void)state;
    struct test_http a;
    const char *where = "/api/v1/tune-trials";
    JsonNode *root = test_web_get_json(&web, where, NULL, 200, &a);
    JsonArray *trials = test_web_array(root, where, "trials");
    char *ids = test_web_ids(trials, "trial_id");
    assert_string_equal(ids, "2,1");
    g_free(ids);
    assert_true(json_node_is_null(test_json_node(root, "next")));
    /* Trial 2: both sides, truth scored, the changed keys with what they moved. */
    assert_string_equal(test_json_string(root, where, "trials.0.node"), "n1");
    assert_string_equal(test_json_string(root, where, "trials.0.recorded_from"),
                        "2026-11-20T13:25:00.000000Z");
    assert_int_equal(test_json_int(root, where, "trials.0.recorded.flagged_cycles"), 12);
    assert_int_equal(test_json_int(root, where, "trials.0.candidate.flagged_cycles"), 4);
    assert_true(test_json_number(root, where, "trials.0.recorded.forwarded_share") == 0.2);
    assert_true(test_json_number(root, where, "trials.0.candidate.recall") == 0.9);
    assert_int_equal(test_json_int(root, where, "trials.0.candidate.own_states.node.warning"), 1);
    assert_string_equal(test_json_string(root, where, "trials.0.changes.0.key"), "min_calls");
    assert_int_equal(test_json_int(root, where, "trials.0.changes.0.measured_recorded"), 9);
    assert_int_equal(test_json_int(root, where, "trials.0.changes.0.measured_candidate"), 2);
    assert_string_equal(test_json_string(root, where, "trials.0.changes.1.section"),
                        "reasoner.node");
    assert_int_equal(test_json_int(root, where, "trials.0.changes.1.measured_recorded"), 6);
    assert_int_equal(test_json_int(root, where, "trials.0.changes.1.measured_candidate"), 1);
    /* ADPIs of either side, busiest first; one the candidate silenced. */
    assert_string_equal(test_json_string(root, where, "trials.0.adpis.0.plugin"),
                        "latency-histogram");
    assert_int_equal(test_json_int(root, where, "trials.0.adpis.0.candidate.cycles"), 2);
    assert_string_equal(test_json_string(root, where, "trials.0.adpis.1.plugin"), "sensor-sanity");
    assert_true(json_node_is_null(test_json_node(root, "trials.0.adpis.1.candidate")));
    assert_string_equal(test_json_string(root, where, "trials.0.adpis.1.recorded.reasons.0.reason"),
                        "mem.total_bytes warning");
    /* Trial 1: the recorded configuration alone. */
    assert_true(json_node_is_null(test_json_node(root, "trials.1.candidate")));
    assert_true(json_node_is_null(test_json_node(root, "trials.1.recorded.recall")));
    assert_int_equal(json_array_get_length(test_web_array(root, where, "trials.1.changes")), 0);
    test_http_clear(&a);

    root = test_web_get_json(&web, "/api/v1/tune-trials?limit=1", NULL, 200, &a);
    assert_int_equal(test_json_int(root, where, "trials.0.trial_id"), 2);
    char *next = g_strdup(test_json_string(root, where, "next"));
    test_http_clear(&a);
    char *second = g_strdup_printf("/api/v1/tune-trials?limit=1&after=%s", next);
    root = test_web_get_json(&web, second, NULL, 200, &a);
    ids = test_web_ids(test_web_array(root, second, "trials"), "trial_id");
    assert_string_equal(ids, "1");
    g_free(ids);
    assert_true(json_node_is_null(test_json_node(root, "next")));
    test_http_clear(&a);
    g_free(second);
    g_free(next);

    root = test_web_get_json(&web, "/api/v1/tune-trials?node=n2", NULL, 200, &a);
    assert_int_equal(json_array_get_length(test_web_array(root, where, "trials")), 0);
    test_http_clear(&a);
    root = test_web_get_json(&web, "/api/v1/tune-trials/1", NULL, 200, &a);
    assert_string_equal(test_json_string(root, where, "trial.recording"),
                        "/var/lib/vigil/rec-1.bin");
    test_http_clear(&a);
    a = test_web_get(&web, "/api/v1/tune-trials/99", NULL);
    test_web_assert_error(&a, 404, "not_found", NULL);
    test_http_clear(&a);
}

static void test_thresholds(void **state)
{
    (void)state;
    struct test_http a;
    const char *where = "/api/v1/thresholds?from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z";
    JsonNode *root = test_web_get_json(&web, where, NULL, 200, &a);
    JsonArray *files = test_web_array(root, where, "config_files");
    gboolean ours = FALSE;
    for (guint i = 0; i < json_array_get_length(files); i++)
        ours = ours || g_strcmp0(json_array_get_string_element(files, i), config_path) == 0;
    if (!ours)
        fail_msg("%s: config_files does not name %s", where, config_path);
    JsonArray *plugins = test_web_array(root, where, "plugins");
    assert_true(json_array_get_length(plugins) > 0);
    gboolean saw_percent = FALSE;
    guint adpis = 0;
    for (guint i = 0; i < json_array_get_length(plugins); i++) {
        JsonObject *p = json_array_get_object_element(plugins, i);
        const char *section = json_object_get_string_member(p, "section");
        JsonArray *keys = json_object_get_array_member(p, "keys");
        if (keys == NULL || json_array_get_length(keys) == 0)
            fail_msg("%s: plugin %s lists no keys", where, section);
        for (guint k = 0; k < json_array_get_length(keys); k++) {
            JsonObject *key = json_array_get_object_element(keys, k);
            for (const char *const *f = (const char *const[]){"name", "value", "default", "source",
                                                              "description", NULL};
                 *f != NULL; f++)
                if (!json_object_has_member(key, *f))
                    fail_msg("%s: a key of %s without %s", where, section, *f);
            if (strcmp(section, "adpi.statistics-range") == 0 &&
                strcmp(json_object_get_string_member(key, "name"), "percent") == 0) {
                saw_percent = TRUE;
                assert_string_equal(json_object_get_string_member(key, "value"), "25");
                assert_string_equal(json_object_get_string_member(key, "default"), "5");
                assert_string_equal(json_object_get_string_member(key, "source"), config_path);
            }
        }
        if (!g_str_has_prefix(section, "adpi."))
            continue;
        adpis++;
        /* How often it fired that day, overall and by metric. */
        const char *plugin = section + strlen("adpi.");
        guint64 want = sql_count("SELECT count(*) FROM anomalies WHERE plugin = '%s'"
                                 " AND time >= '2026-11-20Z' AND time < '2026-11-21Z'",
                                 plugin);
        gint64 fired = json_object_get_int_member(p, "fired");
        if ((guint64)fired != want)
            fail_msg("%s: %s fired %" G_GINT64_FORMAT " times, the warehouse has %" G_GUINT64_FORMAT
                     " anomalies of it",
                     where, section, fired, want);
        JsonArray *by_metric = json_object_get_array_member(p, "fired_by_metric");
        assert_non_null(by_metric);
        GPtrArray *pairs = g_ptr_array_new_with_free_func(g_free);
        for (guint k = 0; k < json_array_get_length(by_metric); k++) {
            JsonObject *m = json_array_get_object_element(by_metric, k);
            g_ptr_array_add(pairs, g_strdup_printf("%s:%" G_GINT64_FORMAT,
                                                   json_object_get_string_member(m, "metric"),
                                                   json_object_get_int_member(m, "count")));
        }
        g_ptr_array_sort(pairs, compare_strings);
        g_ptr_array_add(pairs, NULL);
        char *got_by_metric = g_strjoinv(",", (char **)pairs->pdata);
        char *want_by_metric =
            sql("SELECT string_agg(metric || ':' || n, ',' ORDER BY metric COLLATE \"C\")"
                " FROM (SELECT metric, count(*) AS n FROM anomalies"
                " WHERE plugin = '%s' AND time >= '2026-11-20Z'"
                " AND time < '2026-11-21Z' GROUP BY metric) m",
                plugin);
        char *what = g_strdup_printf("%s: fired_by_metric", section);
        assert_same_text(got_by_metric, want_by_metric, what);
        g_free(what);
        g_free(got_by_metric);
        g_free(want_by_metric);
        g_ptr_array_unref(pairs);
    }
    assert_true(saw_percent);
    assert_int_equal(adpis, 6); /* the six ADPIs of plugins/adpi/ */
    test_http_clear(&a);
}

/* Activities vigild forwarded and its uplink dropped (schema 0011): the
 * process's figure in `ranks`, the run's in the report (as `vigil report`
 * adds it) and a line of the report card. Taken back after, so the other
 * checks see the fixture as it is. */
static void test_run_uplink_drops(void **state)
{
    (void)state;
    test_pg_exec(&pg, "INSERT INTO uplink_drops (node_id, pid, start_monotonic_ns, counter,"
                      " activities, batches) SELECT node_id, pid, start_monotonic_ns, 7, 1234, 2"
                      " FROM processes WHERE run_id = 1 AND rank = 1");
    struct test_http a;
    JsonNode *root = test_web_get_json(&web, "/api/v1/runs/1", NULL, 200, &a);
    const char *where = "/api/v1/runs/1";
    assert_int_equal(test_json_int(root, where, "report.uplink_lost_activities"), 1234);
    JsonArray *ranks = test_web_array(root, where, "ranks");
    gint64 sum = 0;
    for (guint i = 0; i < json_array_get_length(ranks); i++) {
        JsonObject *r = json_array_get_object_element(ranks, i);
        gint64 lost = json_object_get_int_member(r, "uplink_dropped_activities");
        assert_int_equal(lost, json_object_get_int_member(r, "rank") == 1 ? 1234 : 0);
        sum += lost;
    }
    assert_int_equal(sum, 1234);
    JsonArray *card = test_web_array(root, where, "report_card");
    gboolean said = FALSE;
    for (guint i = 0; i < json_array_get_length(card); i++)
        said |=
            strstr(json_array_get_string_element(card, i),
                   "1234 forwarded activities of 1 process never reached the warehouse") != NULL;
    assert_true(said);
    test_http_clear(&a);
    test_pg_exec(&pg, "DELETE FROM uplink_drops");
    assert_int_equal(sql_count("SELECT sum(uplink_dropped_activities) FROM processes"), 0);
}

/* Issue 30: a process that ended while no vigild ran has an end known
 * only as bounds (end_time_earliest .. end_time) and no report; what vigild
 * had counted of it is in process_unwatched_ends. The run, its process and
 * its report card say so, instead of an exact end. */
static void test_run_unwatched_end(void **state)
{
    (void)state;
    test_pg_exec(&pg, "UPDATE processes SET end_time_earliest = end_time - interval '20 s'"
                      " WHERE process_id = 9");
    test_pg_exec(&pg, "UPDATE runs SET end_time_earliest = end_time - interval '20 s'"
                      " WHERE run_id = 3");
    test_pg_exec(&pg, "INSERT INTO process_unwatched_ends (process_id, activities, dropped,"
                      " seq_gaps, cpu_s, energy_j, energy_estimated, energy_uncertain, ring_read)"
                      " VALUES (9, 4321, 5, 0, 1.5, NULL, false, false, true)");
    test_pg_exec(&pg, "CREATE TABLE kept_summary AS SELECT * FROM run_summaries"
                      " WHERE process_id = 9");
    test_pg_exec(&pg, "DELETE FROM run_summaries WHERE process_id = 9");
    char *earliest = sql("SELECT to_char(end_time_earliest AT TIME ZONE 'UTC',"
                         " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM runs WHERE run_id = 3");

    struct test_http a;
    JsonNode *root = test_web_get_json(&web, "/api/v1/runs/3", NULL, 200, &a);
    const char *where = "/api/v1/runs/3";
    assert_string_equal(test_json_string(root, where, "run.end_time_earliest"), earliest);
    assert_string_equal(test_json_string(root, where, "ranks.0.end_time_earliest"), earliest);
    assert_int_equal(test_json_int(root, where, "ranks.0.unwatched_end.activities"), 4321);
    assert_int_equal(test_json_int(root, where, "ranks.0.unwatched_end.dropped"), 5);
    assert_true(json_node_get_boolean(test_json_node(root, "ranks.0.unwatched_end.ring_read")));
    JsonArray *card = test_web_array(root, where, "report_card");
    gboolean said = FALSE;
    for (guint i = 0; i < json_array_get_length(card); i++)
        said |= strstr(json_array_get_string_element(card, i),
                       "1 process ended while no vigild watched it") != NULL;
    if (!said)
        fail_msg("runs/3: the report card does not say its process ended unwatched: %s",
                 json_to_string(test_json_node(root, "report_card"), FALSE));
    test_http_clear(&a);

    /* The list gives the bound too, and null where the end is exact. */
    root = test_web_get_json(&web, "/api/v1/runs?limit=100", NULL, 200, &a);
    JsonArray *runs = test_web_array(root, "/api/v1/runs", "runs");
    guint bounded = 0;
    for (guint i = 0; i < json_array_get_length(runs); i++) {
        JsonObject *r = json_array_get_object_element(runs, i);
        if (json_object_get_null_member(r, "end_time_earliest"))
            continue;
        assert_int_equal(json_object_get_int_member(r, "run_id"), 3);
        assert_string_equal(json_object_get_string_member(r, "end_time_earliest"), earliest);
        bounded++;
    }
    assert_int_equal(bounded, 1);
    test_http_clear(&a);

    g_free(earliest);
    test_pg_exec(&pg, "INSERT INTO run_summaries SELECT * FROM kept_summary");
    test_pg_exec(&pg, "DROP TABLE kept_summary");
    test_pg_exec(&pg, "DELETE FROM process_unwatched_ends");
    test_pg_exec(&pg, "UPDATE processes SET end_time_earliest = NULL");
    test_pg_exec(&pg, "UPDATE runs SET end_time_earliest = NULL");
}

TEST_PG_MAIN(group_setup, group_teardown, cmocka_unit_test(test_me),
             cmocka_unit_test(test_runs_first_page_is_every_run_newest_first),
             cmocka_unit_test(test_runs_pages_follow_next), cmocka_unit_test(test_runs_sorts),
             cmocka_unit_test(test_runs_filters), cmocka_unit_test(test_run_one),
             cmocka_unit_test(test_run_power_spike_survives_downsampling),
             cmocka_unit_test(test_run_series_band_and_heat),
             cmocka_unit_test(test_run_series_every_metric), cmocka_unit_test(test_run_series_csv),
             cmocka_unit_test(test_run_windows), cmocka_unit_test(test_window_activities_pages),
             cmocka_unit_test(test_run_heatmap),
             cmocka_unit_test(test_run_heatmap_equals_counting_activities),
             cmocka_unit_test(test_run_files), cmocka_unit_test(test_run_findings),
             cmocka_unit_test(test_anomalies), cmocka_unit_test(test_nodes),
             cmocka_unit_test(test_thresholds), cmocka_unit_test(test_tune_trials),
             cmocka_unit_test(test_run_uplink_drops), cmocka_unit_test(test_run_unwatched_end),
             cmocka_unit_test(test_series_levels), cmocka_unit_test(test_run_series_min_max_lines))
