/* vigil-web against hostile requests, each asserted: SQL injection in
 * every parameter of every endpoint, path traversal on the static files,
 * another user's runs, huge page sizes, malformed query strings, methods
 * that write, slow clients, too many clients, and the warehouse going
 * away. Four vigil-web instances on one private warehouse loaded with
 * tests/web/fixture.sql: `admin` (auth = none, a static folder of our
 * own), `remote` (auth = remote-user), `untrusting` (the same with its
 * proxy at 127.0.0.2), `slow` (client_timeout_s = 1) and
 * `capped` (max_clients = 2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_pg.h"
#include "test_report.h"
#include "test_support.h"
#include "test_web.h"

static struct test_pg pg;
static char *dir;
static struct test_web admin, remote, untrusting, slow, capped;

/* What nobody may ever read through vigil-web. */
#define SECRET "SECRET-outside-the-static-folder"

static void write_file(const char *name, const char *text)
{
    g_free(test_new_file(dir, name, text));
}

static void make_link(const char *target, const char *name)
{
    char *path = g_build_filename(dir, name, NULL);
    assert_int_equal(symlink(target, path), 0);
    g_free(path);
}

/* In the static folder (test_web_folder_new's), hidden files and links
 * out of it; a vendor folder; a file beside them that must stay
 * unreachable. */
static void make_static_folders(void)
{
    char *vendor_dir = g_build_filename(dir, "vendor", NULL);
    assert_int_equal(g_mkdir_with_parents(vendor_dir, 0755), 0);
    /* A page that is only its <main>, served inside the template. */
    write_file("static/page.tmpl", "<title>@TITLE@</title><script src=\"@SCRIPT@\"></script>"
                                   "<main>@MAIN@</main>\n");
    write_file("static/run.html", "<!-- page title=\"Run\" script=\"run.js\" -->\n<h1>run</h1>\n");
    write_file("static/.hidden", SECRET "\n");
    write_file("static/.hidden.txt", SECRET "\n");
    write_file("vendor/uPlot.min.css", "/* uplot */\n");
    write_file("secret.html", SECRET "\n");
    write_file("secret.txt", SECRET "\n");
    make_link("/etc/passwd", "static/passwd.txt");
    char *outside = g_build_filename(dir, "secret.html", NULL);
    make_link(outside, "static/outside.html");
    g_free(outside);
    make_link(dir, "static/up");
    g_free(vendor_dir);
}

static int group_setup(void **state)
{
    (void)state;
    dir = test_web_folder_new("hostile");
    test_web_warehouse_start(&pg, dir);
    make_static_folders();
    const char *conninfo = test_pg_conninfo(&pg);
    test_web_startf(&admin, dir, "admin",
                    "[warehouse]\nconninfo = %s\n[web]\nlisten = 127.0.0.1:0\n"
                    "static_dir = %s/static\nvendor_dir = %s/vendor\n",
                    conninfo, dir, dir);
    test_web_startf(&remote, dir, "remote",
                    "[warehouse]\nconninfo = %s\n[web]\nlisten = 127.0.0.1:0\n"
                    "auth = remote-user\ntrusted_proxies = 127.0.0.1\nadmins = root\n"
                    "user_header = X-Remote-User\n",
                    conninfo);
    /* Its proxy elsewhere: nobody on 127.0.0.1 may name a user. */
    test_web_startf(&untrusting, dir, "untrusting",
                    "[warehouse]\nconninfo = %s\n[web]\nlisten = 127.0.0.1:0\n"
                    "auth = remote-user\ntrusted_proxies = 127.0.0.2\nadmins = root\n"
                    "user_header = X-Remote-User\n",
                    conninfo);
    test_web_startf(&slow, dir, "slow",
                    "[warehouse]\nconninfo = %s\n[web]\nlisten = 127.0.0.1:0\n"
                    "client_timeout_s = 1\n",
                    conninfo);
    /* An idle timeout far past the guard: a connection it closes was
     * closed by the cap. */
    test_web_startf(&capped, dir, "capped",
                    "[log]\nlevel = info\n[warehouse]\nconninfo = %s\n[web]\n"
                    "listen = 127.0.0.1:0\nmax_clients = 2\nclient_timeout_s = 300\n",
                    conninfo);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    test_web_stop(&admin);
    test_web_stop(&remote);
    test_web_stop(&untrusting);
    test_web_stop(&slow);
    test_web_stop(&capped);
    test_pg_cleanup(&pg);
    test_remove_tree(dir);
    g_free(dir);
    return 0;
}

/* Each request of a list is checked, and every disagreement is said at
 * the end, not only the first. `problem` is taken (NULL: none). */
static void note(GString *problems, const char *request, char *problem)
{
    if (problem == NULL)
        return;
    g_string_append_printf(problems, "\n  %.200s: %.400s", request, problem);
    g_free(problem);
}

static void assert_no_problems(GString *problems, const char *what)
{
    /* cmocka cuts long messages: the list goes to the log in full. */
    if (problems->len > 0) {
        printf("%s:%s\n", what, problems->str);
        fflush(stdout);
        fail_msg("%s: disagreements listed above", what);
    }
    g_string_free(problems, TRUE);
}

/* ---- SQL injection ------------------------------------------------------------------------ */

static const char *const payloads[] = {
    "' OR 1=1 --",
    "1; DROP TABLE runs",
    "1' UNION SELECT usename, passwd FROM pg_shadow --",
    "%27",
    "%27 OR %271%27=%271",
    "\xe2\x80\x99 OR \xe2\x80\x98"
    "1\xe2\x80\x99=\xe2\x80\x98"
    "1",                      /* ’ OR ‘1’=‘1 */
    "\xef\xbc\x87 OR 1=1 --", /* a fullwidth ＇ */
    "'); SELECT pg_sleep(30); --",
    "$1",
    "1)) OR ((1=1",
    "x\x01y",
    "\\' OR 1=1 --",
};

static const struct endpoint {
    const char *path, *base_query; /* the query the parameters are added to */
    const char *params;            /* every parameter it takes, comma-separated */
} endpoints[] = {
    {"/api/v1/runs", "", "user,program,job,node,from,to,anomalies,sort,limit,after"},
    {"/api/v1/runs/1", "", "ranks"},
    {"/api/v1/runs/1/ranks", "", ""},
    {"/api/v1/runs/1/series", "metric=power", "metric,points,from,to,per_node,format"},
    {"/api/v1/runs/1/windows", "", ""},
    {"/api/v1/runs/1/heatmap", "", "bins,from,to"},
    {"/api/v1/runs/1/files", "", "limit"},
    {"/api/v1/windows/1/activities", "", "limit,after"},
    {"/api/v1/anomalies", "", "run,node,plugin,level,from,to,limit,after"},
    {"/api/v1/nodes", "", ""},
    {"/api/v1/nodes/1", "", ""},
    {"/api/v1/nodes/1/series", "metric=power", "metric,points,from,to,format"},
    {"/api/v1/thresholds", "", "from,to"},
    {"/api/v1/tune-trials", "", "node,limit,after"},
    {"/api/v1/tune-trials/1", "", ""},
    {"/api/v1/me", "", ""},
};

/* 400 naming `parameter`, or a normal answer that found nothing. */
static char *refused_or_empty(const struct test_http *a, const char *parameter)
{
    if (a->status == 400)
        return test_web_error_mismatch(a, 400, "bad_parameter", parameter);
    if (a->status != 200 || a->json == NULL)
        return g_strdup_printf("%u (%s), expected 400 naming %s or an empty answer: %.300s",
                               a->status, a->content_type, parameter, a->body);
    static const char *const lists[] = {"runs", "anomalies", "activities", "windows", "trials"};
    for (gsize i = 0; i < G_N_ELEMENTS(lists); i++) {
        JsonNode *list = test_json_node(a->json, lists[i]);
        if (list != NULL && JSON_NODE_HOLDS_ARRAY(list) &&
            json_array_get_length(json_node_get_array(list)) > 0)
            return g_strdup_printf("found %u %s: %.300s",
                                   json_array_get_length(json_node_get_array(list)), lists[i],
                                   a->body);
    }
    return NULL;
}

static char *table_counts(void)
{
    char *counts = test_web_sql_text(
        &pg, "SELECT concat_ws(',', (SELECT count(*) FROM runs), (SELECT count(*) FROM processes),"
             " (SELECT count(*) FROM nodes), (SELECT count(*) FROM anomalies),"
             " (SELECT count(*) FROM captures), (SELECT count(*) FROM activities),"
             " (SELECT count(*) FROM run_summaries), (SELECT count(*) FROM statistics_rollups),"
             " (SELECT count(*) FROM tune_trials))");
    assert_non_null(counts);
    return counts;
}

static void test_sql_injection_in_every_parameter(void **state)
{
    (void)state;
    char *before = table_counts();
    guint requests = 0;
    GString *problems = g_string_new(NULL);
    for (gsize e = 0; e < G_N_ELEMENTS(endpoints); e++) {
        char **params = g_strsplit(endpoints[e].params, ",", -1);
        for (gsize p = 0; p < G_N_ELEMENTS(payloads); p++) {
            char *value = g_uri_escape_string(payloads[p], NULL, FALSE);
            /* Into each parameter, in place of its normal value. */
            for (char **name = params; *name != NULL && **name != '\0'; name++) {
                GString *query = g_string_new(NULL);
                char **base = g_strsplit(endpoints[e].base_query, "&", -1);
                for (char **b = base; *b != NULL && **b != '\0'; b++) {
                    char *eq = strchr(*b, '=');
                    if (strncmp(*b, *name, (gsize)(eq - *b)) != 0 ||
                        strlen(*name) != (gsize)(eq - *b))
                        g_string_append_printf(query, "%s&", *b);
                }
                g_strfreev(base);
                g_string_append_printf(query, "%s=%s", *name, value);
                char *path = g_strdup_printf("%s?%s", endpoints[e].path, query->str);
                struct test_http a = test_web_get(&admin, path, NULL);
                note(problems, path, refused_or_empty(&a, *name));
                test_http_clear(&a);
                g_free(path);
                g_string_free(query, TRUE);
                requests++;
            }
            /* As a parameter's name: unknown, so refused. */
            char *path = g_strdup_printf("%s?%s%s%s=1", endpoints[e].path, endpoints[e].base_query,
                                         endpoints[e].base_query[0] != '\0' ? "&" : "", value);
            struct test_http a = test_web_get(&admin, path, NULL);
            note(problems, path, test_web_error_mismatch(&a, 400, "bad_parameter", NULL));
            test_http_clear(&a);
            g_free(path);
            requests++;
            g_free(value);
        }
        g_strfreev(params);
    }
    /* In the ids of the paths: not an id, so 400 naming it, or no such thing. */
    static const struct {
        const char *before, *after;
    } id_paths[] = {
        {"/api/v1/runs/", ""},
        {"/api/v1/runs/", "/series?metric=power"},
        {"/api/v1/runs/", "/windows"},
        {"/api/v1/windows/", "/activities"},
        {"/api/v1/runs/", "/files"},
        {"/api/v1/nodes/", ""},
        {"/api/v1/nodes/", "/series?metric=power"},
        {"/api/v1/tune-trials/", ""},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(id_paths); i++)
        for (gsize p = 0; p < G_N_ELEMENTS(payloads); p++) {
            char *value = g_uri_escape_string(payloads[p], NULL, FALSE);
            char *path = g_strconcat(id_paths[i].before, value, id_paths[i].after, NULL);
            struct test_http a = test_web_get(&admin, path, NULL);
            note(problems, path,
                 a.status == 400 ? test_web_error_mismatch(&a, 400, "bad_parameter", NULL)
                                 : test_web_error_mismatch(&a, 404, "not_found", NULL));
            test_http_clear(&a);
            g_free(path);
            g_free(value);
            requests++;
        }
    char *after = table_counts();
    assert_string_equal(after, before);
    assert_no_problems(problems, "SQL injection attempts");
    /* No answer was an SQL error the server hid behind a 400 or 200. */
    char *log = test_web_log(&admin);
    if (strstr(log, "SQLSTATE") != NULL)
        fail_msg("vigil-web logged a failed query during %u injection attempts:\n%s", requests,
                 log);
    g_free(log);
    g_free(before);
    g_free(after);
}

/* ---- path traversal ----------------------------------------------------------------------- */

/* 404; or libsoup's own bare 400 for a request target it will not read
 * (it refuses an encoded "/" next to "..", before vigil-web sees it). */
static char *not_served(guint16 port, const char *target)
{
    char *request =
        g_strdup_printf("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", target);
    struct test_http a = test_web_raw(port, NULL, request);
    g_free(request);
    char *problem = NULL;
    if (strstr(a.body, "root:") != NULL || strstr(a.body, SECRET) != NULL)
        problem = g_strdup_printf("SERVED a file outside the static folders (%u): %.300s", a.status,
                                  a.body);
    else if (a.status != 404 && !(a.status == 400 && a.length == 0))
        problem = g_strdup_printf("%u, expected 404: %s / %.300s", a.status, a.headers, a.body);
    test_http_clear(&a);
    return problem;
}

static void test_path_traversal_on_static_files(void **state)
{
    (void)state;
    /* What is there is served: the 404s below are not for want of files. */
    static const struct {
        const char *path, *content;
    } served[] = {
        {"/", "<title>vigil</title>"},
        {"/static/ok.txt", "ok-file"},
        {"/index.html", "<title>vigil</title>"},
        {"/vendor/uplot/uPlot.min.css", "uplot"},
        {"/run.html",
         "<title>Run</title><script src=\"run.js\"></script><main><h1>run</h1>\n</main>"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(served); i++) {
        struct test_http a = test_web_get(&admin, served[i].path, NULL);
        if (a.status != 200 || strstr(a.body, served[i].content) == NULL)
            fail_msg("GET %s: %u %.200s", served[i].path, a.status, a.body);
        test_http_clear(&a);
    }
    static const char *const targets[] = {
        "/static/../../etc/passwd",
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/static/..%2f..%2fetc/passwd",
        "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/static/..%252f..%252fetc/passwd",
        "/static/....//....//etc/passwd",
        "/static/..\\..\\etc\\passwd",
        "/static/%2fetc%2fpasswd",
        "/static//etc/passwd",
        "/vendor/uplot/../../../etc/passwd",
        "/vendor/uplot/..%2f..%2f..%2fetc%2fpasswd",
        "//etc/passwd",
        "/../../../../etc/passwd",
        "/static/passwd.txt",     /* a link to /etc/passwd inside static_dir */
        "/static/outside.html",   /* a link to a page outside it */
        "/static/up/secret.html", /* through a link to its parent */
        "/static/up/secret.txt",
        "/static/..%2fsecret.html", /* beside it, with a suffix it serves */
        "/..%2fsecret.html",
        "/%2e%2e%2fsecret.html",
        "/static/.hidden",
        "/static/.hidden.txt",
        "/static/%2ehidden.txt",
        "/static/ok.txt%00.html",
        "/static/ok.txt/..%2f..%2fsecret.txt",
        "/static/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd", /* overlong UTF-8 dots */
        "/static/up%2fsecret.html",
        "/static/page.tmpl", /* the pages' template is not a page */
    };
    GString *problems = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(targets); i++)
        note(problems, targets[i], not_served(admin.port, targets[i]));
    assert_no_problems(problems, "path traversal");
}

/* ---- another user's runs ------------------------------------------------------------------ */

static char *sql_text(const char *query)
{
    char *text = test_web_sql_text(&pg, query);
    return text != NULL ? text : g_strdup("");
}

static void test_remote_user_sees_only_their_runs(void **state)
{
    (void)state;
    struct test_http a;
    JsonNode *me = test_web_get_json(&remote, "/api/v1/me", "nobody", 200, &a);
    assert_string_equal(test_json_string(me, "me", "user"), "nobody");
    assert_int_equal(test_json_int(me, "me", "uid"), 65534);
    assert_false(json_node_get_boolean(test_json_node(me, "admin")));
    assert_string_equal(test_json_string(me, "me", "auth"), "remote-user");
    test_http_clear(&a);

    JsonNode *root = test_web_get_json(&remote, "/api/v1/runs", "nobody", 200, &a);
    char *got = test_web_ids(test_web_array(root, "runs", "runs"), "run_id");
    char *want = sql_text("SELECT string_agg(run_id::text, ',' ORDER BY start_time DESC, run_id"
                          " DESC) FROM runs WHERE uid = 65534");
    assert_string_equal(got, want);
    g_free(got);
    g_free(want);
    test_http_clear(&a);
    /* Asking for another user's runs finds none. */
    root = test_web_get_json(&remote, "/api/v1/runs?user=daemon", "nobody", 200, &a);
    assert_int_equal(json_array_get_length(test_web_array(root, "runs", "runs")), 0);
    test_http_clear(&a);

    /* Their own run, and what it shows of others: nothing. */
    root = test_web_get_json(&remote, "/api/v1/runs/3", "nobody", 200, &a);
    JsonArray *neighbours = test_web_array(root, "runs/3", "neighbours");
    for (guint i = 0; i < json_array_get_length(neighbours); i++)
        if (json_object_get_int_member(json_array_get_object_element(neighbours, i), "uid") !=
            65534)
            fail_msg("runs/3 as nobody shows another user's run as a neighbour: %.1000s", a.body);
    test_http_clear(&a);

    /* Another user's run, and all that hangs from it: not found. */
    static const char *const others[] = {
        "/api/v1/runs/1",
        "/api/v1/runs/1/windows",
        "/api/v1/runs/1/series?metric=power",
        "/api/v1/runs/1/heatmap",
        "/api/v1/runs/1/files",
        "/api/v1/runs/1/ranks",
        "/api/v1/windows/1/activities",
        "/api/v1/windows/2/activities",
    };
    for (gsize i = 0; i < G_N_ELEMENTS(others); i++) {
        a = test_web_get(&remote, others[i], "nobody");
        if (a.status != 404)
            fail_msg("GET %s as nobody: %u, expected 404: %.500s", others[i], a.status, a.body);
        test_web_assert_error(&a, 404, "not_found", NULL);
        test_http_clear(&a);
    }
    /* Anomalies of other users' processes are not theirs to see. */
    static const char *const anomaly_lists[] = {"/api/v1/anomalies", "/api/v1/anomalies?run=1"};
    for (gsize i = 0; i < G_N_ELEMENTS(anomaly_lists); i++) {
        a = test_web_get(&remote, anomaly_lists[i], "nobody");
        if (a.status == 404) {
            test_http_clear(&a);
            continue;
        }
        if (a.status != 200 || a.json == NULL)
            fail_msg("GET %s as nobody: %u %.500s", anomaly_lists[i], a.status, a.body);
        JsonArray *list = test_web_array(a.json, anomaly_lists[i], "anomalies");
        for (guint k = 0; k < json_array_get_length(list); k++) {
            JsonNode *process =
                json_object_get_member(json_array_get_object_element(list, k), "process_id");
            if (process == NULL || JSON_NODE_HOLDS_NULL(process))
                continue;
            char *q =
                g_strdup_printf("SELECT uid FROM processes WHERE process_id = %" G_GINT64_FORMAT,
                                json_node_get_int(process));
            char *uid = sql_text(q);
            if (strcmp(uid, "65534") != 0)
                fail_msg("GET %s as nobody shows an anomaly of uid %s's process: %.1000s",
                         anomaly_lists[i], uid, a.body);
            g_free(uid);
            g_free(q);
        }
        test_http_clear(&a);
    }
    /* A node's page lists its runs: only theirs. */
    root = test_web_get_json(&remote, "/api/v1/nodes/1", "nobody", 200, &a);
    JsonArray *node_runs = test_web_array(root, "nodes/1", "runs");
    for (guint i = 0; i < json_array_get_length(node_runs); i++)
        if (json_object_get_int_member(json_array_get_object_element(node_runs, i), "uid") != 65534)
            fail_msg("nodes/1 as nobody lists another user's run: %.1000s", a.body);
    test_http_clear(&a);

    /* An admin sees everything. */
    root = test_web_get_json(&remote, "/api/v1/runs", "root", 200, &a);
    assert_int_equal(json_array_get_length(test_web_array(root, "runs", "runs")), 12);
    test_http_clear(&a);
    test_web_get_json(&remote, "/api/v1/runs/1", "root", 200, &a);
    test_http_clear(&a);
    root = test_web_get_json(&remote, "/api/v1/me", "root", 200, &a);
    assert_true(json_node_get_boolean(test_json_node(root, "admin")));
    test_http_clear(&a);
}

/* A run that holds another user's process, as a warehouse from before
 * issue 30 may (a process of uid 1 that named nobody's run 3, stored with
 * it): nobody, whose run it is, sees its own process only, not uid 1's
 * program, arguments, report, files, timeline, window, activities or
 * anomaly (the run's files, summed over every report, are withheld from
 * them with the reason); an admin sees them all. */
static const char foreign_process_sql[] =
    "BEGIN;"
    "INSERT INTO processes (process_id, run_id, node_id, pid, uid, rank, program, argv, cwd,"
    " start_time, start_monotonic_ns, end_time, exit_status) VALUES (100, 3, 1, 6200, 1, NULL,"
    " '/usr/local/bin/secret-tool', '{secret-tool,--key,/home/daemon/secret.key}', '/home',"
    " '2026-11-20 10:00:50Z', 6200000000000, '2026-11-20 10:01:20Z', 3);"
    "INSERT INTO run_summaries (process_id, report, calls, bytes_read, bytes_written, energy_j,"
    " energy_source) SELECT 100, report || '{\"program\": \"secret-tool\", \"pid\": 6200}',"
    " 5, 4096, 0, 1.5, 'powercap' FROM run_summaries WHERE process_id = 9;"
    "INSERT INTO file_stats (process_id, position, in_job_report, path, mount, fs_type, calls,"
    " read_bytes, written_bytes) VALUES (100, 0, false, '/home/daemon/secret.key', '/home',"
    " 'ext4', 3, 4096, 0);"
    "INSERT INTO process_io_timelines (process_id, in_job_report, bin_s, read_bytes,"
    " written_bytes) VALUES (100, false, 0.01, '{4096}', '{0}');"
    "INSERT INTO files (file_id, path_bytes, path) VALUES"
    " (100, convert_to('/home/daemon/secret.key', 'UTF8'), '/home/daemon/secret.key');"
    "INSERT INTO captures (capture_id, node_id, process_id, first_cycle, last_cycle, start_time,"
    " end_time, activities_forwarded, reasons) VALUES (100, 1, 100, 120, 121,"
    " '2026-11-20 10:01:00Z', '2026-11-20 10:01:02Z', 1, 'process 100 BAD: secret-tool');"
    "INSERT INTO activities (process_id, seq, layer, operation, file_id, file_offset, bytes,"
    " result, errno, start_time, start_ns, duration_ns, thread, parent_start_ns, flags,"
    " comm_size) VALUES (100, 1, 1, 5, 100, 0, 4096, 4096, 0, '2026-11-20 10:01:01Z',"
    " 1795168861000000000, 1000, 6200, NULL, 0, NULL);"
    "INSERT INTO anomalies (anomaly_id, level, node_id, process_id, cycle, time, state, plugin,"
    " metric, value, expected_min, expected_max, message) VALUES (100, 'process', 1, 100, 121,"
    " '2026-11-20 10:01:01Z', 'BAD', 'statistics-range', 'secret.metric', 1, 0, 0,"
    " 'secret-tool read its key');"
    "COMMIT";

static void test_remote_user_sees_only_their_processes(void **state)
{
    (void)state;
    test_pg_exec_in(test_pg_conninfo(&pg), foreign_process_sql);
    /* The run's files are summed over all its reports: withheld (403). */
    static const struct {
        const char *path;
        guint status;
    } views[] = {
        {"/api/v1/runs/3", 200},         {"/api/v1/runs?limit=100", 200},
        {"/api/v1/runs/3/windows", 200}, {"/api/v1/windows/100/activities", 404},
        {"/api/v1/runs/3/heatmap", 200}, {"/api/v1/runs/3/files", 403},
        {"/api/v1/anomalies", 200},      {"/api/v1/anomalies?run=3", 200},
        {"/api/v1/nodes/1", 200},
    };
    GString *problems = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(views); i++) {
        struct test_http a = test_web_get(&remote, views[i].path, "nobody");
        if (a.status != views[i].status)
            note(problems, views[i].path,
                 g_strdup_printf("as nobody: %u, expected %u", a.status, views[i].status));
        else if (strstr(a.body, "secret") != NULL || strstr(a.body, "\"pid\":6200") != NULL)
            note(problems, views[i].path,
                 g_strdup_printf("as nobody shows uid 1's process: %.300s",
                                 strstr(a.body, "secret") != NULL
                                     ? strstr(a.body, "secret")
                                     : strstr(a.body, "\"pid\":6200")));
        test_http_clear(&a);
    }
    assert_no_problems(problems, "uid 1's process in nobody's run");
    struct test_http a;
    JsonNode *root = test_web_get_json(&remote, "/api/v1/runs/3", "nobody", 200, &a);
    assert_int_equal(test_json_int(root, "runs/3", "run.processes"), 1);
    assert_int_equal(json_array_get_length(test_web_array(root, "runs/3", "ranks")), 1);
    test_http_clear(&a);
    /* An admin sees it. */
    root = test_web_get_json(&remote, "/api/v1/runs/3", "root", 200, &a);
    assert_int_equal(test_json_int(root, "runs/3", "run.processes"), 2);
    assert_non_null(strstr(a.body, "secret-tool"));
    test_http_clear(&a);
    a = test_web_get(&remote, "/api/v1/windows/100/activities", "root");
    assert_int_equal(a.status, 200);
    test_http_clear(&a);
    a = test_web_get(&remote, "/api/v1/runs/3/files", "root");
    assert_int_equal(a.status, 200);
    assert_non_null(strstr(a.body, "/home/daemon/secret.key"));
    test_http_clear(&a);
    a = test_web_get(&remote, "/api/v1/runs/3/files", "nobody");
    test_web_assert_error(&a, 403, "forbidden", NULL);
    test_assert_contains(a.body, "holds processes of other users");
    test_http_clear(&a);
}

static void test_remote_user_refuses_the_unnamed_and_the_untrusted(void **state)
{
    (void)state;
    /* No header, an empty one, a user with no account, not a user name. */
    static const char *const users[] = {NULL, "", "no-such-user-here", "root; DROP TABLE runs",
                                        "../root"};
    GString *problems = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(users); i++) {
        struct test_http a = test_web_get(&remote, "/api/v1/runs", users[i]);
        note(problems, users[i] != NULL ? users[i] : "(no header)",
             test_web_error_mismatch(&a, 403, "forbidden", NULL));
        test_http_clear(&a);
    }
    /* The header twice (a proxy that appends instead of replacing). */
    struct test_http a = test_web_raw(remote.port, NULL,
                                      "GET /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                      "X-Remote-User: root\r\nX-Remote-User: nobody\r\n"
                                      "Connection: close\r\n\r\n");
    note(problems, "X-Remote-User: root and X-Remote-User: nobody",
         test_web_error_mismatch(&a, 403, "forbidden", NULL));
    test_http_clear(&a);
    /* The right header from an address that is not a trusted proxy. */
    a = test_web_raw(remote.port, "127.0.0.2",
                     "GET /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Remote-User: root\r\n"
                     "Connection: close\r\n\r\n");
    note(problems, "X-Remote-User: root from 127.0.0.2 (not a trusted proxy)",
         test_web_error_mismatch(&a, 403, "forbidden", NULL));
    test_http_clear(&a);
    /* And from 127.0.0.1 to an instance whose proxy is 127.0.0.2. */
    a = test_web_get(&untrusting, "/api/v1/runs", "root");
    note(problems, "X-Remote-User: root from 127.0.0.1, trusted_proxies = 127.0.0.2",
         test_web_error_mismatch(&a, 403, "forbidden", NULL));
    test_http_clear(&a);
    /* The same from the proxy's address is believed. */
    a = test_web_raw(remote.port, "127.0.0.1",
                     "GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Remote-User: root\r\n"
                     "Connection: close\r\n\r\n");
    if (a.status != 200)
        note(problems, "X-Remote-User: root from 127.0.0.1",
             g_strdup_printf("%u, expected 200", a.status));
    test_http_clear(&a);
    assert_no_problems(problems, "remote-user");
}

/* ---- sizes, malformed queries, methods ---------------------------------------------------- */

static void test_huge_page_sizes_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *path, *parameter;
    } cases[] = {
        {"/api/v1/runs?limit=100000000", "limit"},
        {"/api/v1/runs?limit=99999999999999999999999", "limit"},
        {"/api/v1/runs?limit=0", "limit"},
        {"/api/v1/runs?limit=-1", "limit"},
        {"/api/v1/runs?limit=1e3", "limit"},
        {"/api/v1/anomalies?limit=100000000", "limit"},
        {"/api/v1/windows/1/activities?limit=100000000", "limit"},
        {"/api/v1/runs/1/series?metric=power&points=1000000000", "points"},
        {"/api/v1/runs/1/series?metric=power&points=5001", "points"},
        {"/api/v1/nodes/1/series?metric=power&points=1000000000", "points"},
        {"/api/v1/runs/1/heatmap?bins=1000000000", "bins"},
        {"/api/v1/runs/1/files?limit=10001", "limit"},
        {"/api/v1/runs/1/files?limit=0", "limit"},
        {"/api/v1/tune-trials?limit=100000000", "limit"},
        {"/api/v1/tune-trials?after=0", "after"},
    };
    GString *problems = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        struct test_http a = test_web_get(&admin, cases[i].path, NULL);
        note(problems, cases[i].path,
             test_web_error_mismatch(&a, 400, "bad_parameter", cases[i].parameter));
        test_http_clear(&a);
    }
    assert_no_problems(problems, "page sizes");
    /* The largest allowed is served. */
    struct test_http a;
    test_web_get_json(&admin, "/api/v1/runs?limit=1000", NULL, 200, &a);
    test_http_clear(&a);
}

static void test_malformed_query_strings(void **state)
{
    (void)state;
    GString *long_query = g_string_new("/api/v1/runs?program=");
    while (long_query->len < 10 * 1024)
        g_string_append(long_query, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    const char *const targets[] = {
        "/api/v1/runs?%zz",
        "/api/v1/runs?a=%",
        "/api/v1/runs?=x",
        "/api/v1/runs?program=%ff",
        "/api/v1/runs?program=%c3%28",
        "/api/v1/runs?program=%00",
        "/api/v1/runs?limit=1&limit=2",
        "/api/v1/runs?sort=program&sort=-program",
        "/api/v1/runs?user=nobody&user=root",
        "/api/v1/anomalies?run=1&run=2",
        "/api/v1/runs/1/series?metric=power&metric=cpu",
        long_query->str,
    };
    GString *problems = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(targets); i++) {
        char *request = g_strdup_printf(
            "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", targets[i]);
        struct test_http a = test_web_raw(admin.port, NULL, request);
        /* Ours is JSON; libsoup's own 400 (a request line it cannot read) is not. */
        if (a.status != 400)
            note(problems, targets[i],
                 g_strdup_printf("%u, expected 400: %.300s", a.status, a.body));
        else if (a.json != NULL)
            note(problems, targets[i], test_web_error_mismatch(&a, 400, "bad_parameter", NULL));
        test_http_clear(&a);
        g_free(request);
    }
    g_string_free(long_query, TRUE);
    assert_no_problems(problems, "malformed query strings");
}

static void test_methods_that_write_are_refused(void **state)
{
    (void)state;
    static const char *const methods[] = {"POST", "PUT", "DELETE", "PATCH"};
    static const char *const paths[] = {"/api/v1/runs", "/api/v1/runs/1", "/static/ok.txt", "/"};
    GString *problems = g_string_new(NULL);
    for (gsize m = 0; m < G_N_ELEMENTS(methods); m++)
        for (gsize p = 0; p < G_N_ELEMENTS(paths); p++) {
            struct test_http a = test_web_request(&admin, methods[m], paths[p]);
            char *request = g_strdup_printf("%s %s", methods[m], paths[p]);
            note(problems, request, test_web_error_mismatch(&a, 405, "method_not_allowed", NULL));
            g_free(request);
            test_http_clear(&a);
        }
    assert_no_problems(problems, "methods");
    /* HEAD reads. */
    struct test_http a = test_web_request(&admin, "HEAD", "/api/v1/runs");
    assert_int_equal(a.status, 200);
    test_http_clear(&a);
}

static void test_a_cursor_of_another_sort_is_refused(void **state)
{
    (void)state;
    struct test_http a;
    JsonNode *root = test_web_get_json(&admin, "/api/v1/runs?sort=program&limit=5", NULL, 200, &a);
    char *next = g_uri_escape_string(test_json_string(root, "runs", "next"), NULL, FALSE);
    test_http_clear(&a);
    static const char *const sorts[] = {"-energy_j", "start_time", "run_id"};
    GString *problems = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(sorts); i++) {
        char *path = g_strdup_printf("/api/v1/runs?sort=%s&limit=5&after=%s", sorts[i], next);
        a = test_web_get(&admin, path, NULL);
        note(problems, path, test_web_error_mismatch(&a, 400, "bad_parameter", "after"));
        test_http_clear(&a);
        g_free(path);
    }
    g_free(next);
    assert_no_problems(problems, "cursors of another sort");
}

static void test_a_huge_request_line_leaves_the_server_serving(void **state)
{
    (void)state;
    GString *request = g_string_new("GET /api/v1/runs/");
    for (int i = 0; i < 100000; i++)
        g_string_append_c(request, '1');
    g_string_append(request, "?program=");
    for (int i = 0; i < 100000; i++)
        g_string_append_c(request, 'a');
    g_string_append(request, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    struct test_http a = test_web_raw(admin.port, NULL, request->str);
    /* Refused (by vigil-web or libsoup) or closed unanswered: never a 2xx or a 5xx. */
    if (a.status != 0 && (a.status < 400 || a.status >= 500))
        fail_msg("a 200 kB request line: %u %.300s", a.status, a.body);
    test_http_clear(&a);
    g_string_free(request, TRUE);
    test_web_get_json(&admin, "/api/v1/me", NULL, 200, &a);
    test_http_clear(&a);
}

/* ---- slow and too many clients ------------------------------------------------------------ */

static void test_a_slow_client_is_dropped(void **state)
{
    (void)state;
    /* The instance answers whoever asks in time. */
    struct test_http a = test_web_raw(slow.port, NULL,
                                      "GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                      "Connection: close\r\n\r\n");
    assert_int_equal(a.status, 200);
    test_http_clear(&a);
    /* Half a request line, then nothing: the server closes the
     * connection (client_timeout_s = 1; the read's guard is 30 s). */
    GSocketConnection *c = test_web_connect(slow.port, NULL);
    test_web_write(c, "GET /api/v1/me HT");
    gsize n = 0;
    char *got = test_web_read_to_eof(c, &n);
    if (strstr(got, " 200 ") != NULL)
        fail_msg("half a request line was answered: %s", got);
    g_free(got);
    g_object_unref(c);
    /* Headers that never end, likewise. */
    c = test_web_connect(slow.port, NULL);
    test_web_write(c, "GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    got = test_web_read_to_eof(c, &n);
    if (strstr(got, " 200 ") != NULL)
        fail_msg("unfinished headers were answered: %s", got);
    g_free(got);
    g_object_unref(c);
}

/* "HTTP/1.1 200" read from a connection, which stays open. */
static void assert_answered(GSocketConnection *c, const char *which)
{
    struct test_http a = test_web_read_answer(c);
    if (a.status != 200)
        fail_msg("%s was not answered: %u %s", which, a.status, a.body);
    test_http_clear(&a);
}

static void assert_closed_unanswered(GSocketConnection *c, const char *which)
{
    gsize n = 0;
    /* Closed long before the idle timeout (300 s): to make room. */
    char *got = test_web_read_to_eof(c, &n);
    if (n != 0)
        fail_msg("%s got an answer: %s", which, got);
    g_free(got);
}

static void test_past_max_clients_the_oldest_waiting_gives_way(void **state)
{
    (void)state;
    const char *request = "GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    /* Two clients that send nothing yet fill it (once it has taken them: a
     * connection is never replaced by one accepted in the same turn); a
     * third takes the place of the first, which waited longest for its
     * headers. */
    GSocketConnection *first = test_web_connect(capped.port, NULL);
    GSocketConnection *second = test_web_connect(capped.port, NULL);
    test_web_wait_open_connections(&capped, 2);
    GSocketConnection *third = test_web_connect(capped.port, NULL);
    assert_closed_unanswered(first, "the first of three clients (max_clients = 2)");
    g_object_unref(first);
    test_web_write(second, request);
    assert_answered(second, "the second client");
    test_web_write(third, request);
    assert_answered(third, "the third client");
    /* Now both idle between requests: a fourth takes the place of the one
     * idle longest, the second. */
    GSocketConnection *fourth = test_web_connect(capped.port, NULL);
    assert_closed_unanswered(second, "the second client, idle the longest");
    g_object_unref(second);
    test_web_write(fourth, request);
    assert_answered(fourth, "the fourth client");
    test_web_write(third, request);
    assert_answered(third, "the third client's second request");
    g_object_unref(third);
    g_object_unref(fourth);
}

/* ---- the warehouse gone ------------------------------------------------------------------- */

static void test_the_warehouse_gone_is_a_503(void **state)
{
    (void)state;
    test_pg_stop(&pg);
    static const char *const paths[] = {"/api/v1/runs", "/api/v1/runs/1", "/api/v1/nodes",
                                        "/api/v1/runs/1/series?metric=power"};
    for (gsize i = 0; i < G_N_ELEMENTS(paths); i++) {
        struct test_http a = test_web_get(&admin, paths[i], NULL);
        if (a.status != 503)
            fail_msg("GET %s with the warehouse stopped: %u, expected 503: %.500s", paths[i],
                     a.status, a.body);
        test_web_assert_error(&a, 503, "database_unavailable", NULL);
        test_assert_contains(test_json_string(a.json, paths[i], "error.message"), "warehouse");
        test_http_clear(&a);
    }
    /* The pages do not need it. */
    struct test_http a = test_web_get(&admin, "/static/ok.txt", NULL);
    assert_int_equal(a.status, 200);
    test_http_clear(&a);
    test_pg_restart_after_stop(&pg);
    /* vigil-web answers 503 at once for a second after a failed connection
     * (web/db_pool.c) instead of trying again each request: until it
     * tries again, 503 is the only other answer allowed. */
    gint64 guard = g_get_monotonic_time() + TEST_WEB_GUARD_S * G_USEC_PER_SEC;
    guint refused = 0;
    for (;;) {
        a = test_web_get(&admin, "/api/v1/runs", NULL);
        if (a.status == 200)
            break;
        test_web_assert_error(&a, 503, "database_unavailable", NULL);
        test_http_clear(&a);
        refused++;
        if (g_get_monotonic_time() > guard)
            fail_msg("still 503 %d s after the warehouse came back (%u requests)", TEST_WEB_GUARD_S,
                     refused);
    }
    test_http_clear(&a);
    JsonNode *root = test_web_get_json(&admin, "/api/v1/runs", NULL, 200, &a);
    assert_int_equal(json_array_get_length(test_web_array(root, "runs", "runs")), 12);
    test_http_clear(&a);
    test_web_get_json(&admin, "/api/v1/runs/1", NULL, 200, &a);
    test_http_clear(&a);
}

TEST_PG_MAIN(group_setup, group_teardown, cmocka_unit_test(test_sql_injection_in_every_parameter),
             cmocka_unit_test(test_path_traversal_on_static_files),
             cmocka_unit_test(test_remote_user_sees_only_their_runs),
             cmocka_unit_test(test_remote_user_refuses_the_unnamed_and_the_untrusted),
             cmocka_unit_test(test_huge_page_sizes_are_refused),
             cmocka_unit_test(test_malformed_query_strings),
             cmocka_unit_test(test_methods_that_write_are_refused),
             cmocka_unit_test(test_a_cursor_of_another_sort_is_refused),
             cmocka_unit_test(test_a_huge_request_line_leaves_the_server_serving),
             cmocka_unit_test(test_a_slow_client_is_dropped),
             cmocka_unit_test(test_past_max_clients_the_oldest_waiting_gives_way),
             /* Late: it adds a process the tests before count without. */
             cmocka_unit_test(test_remote_user_sees_only_their_processes),
             /* Last: it stops the warehouse (and starts it again). */
             cmocka_unit_test(test_the_warehouse_gone_is_a_503))
