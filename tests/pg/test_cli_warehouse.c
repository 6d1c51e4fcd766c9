/* The vigil command against warehouses that are not what it expects: an
 * empty database (no schema), one with an older schema, one that cannot be
 * reached. Each error names the database, without its password, and says
 * what to do, instead of PostgreSQL's raw "relation … does not exist".
 * And `vigil runs` on the web suite's warehouse (tests/web/fixture.sql):
 * its twelve runs, newest first, filtered and limited. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pwd.h>

#include <cmocka.h>
#include <json-glib/json-glib.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_warehouse.h"
#include "vigil/warehouse.h"

/* The message of a database without the schema (or with an older one):
 * names the database and `vigil db migrate`, not PostgreSQL's bare words. */
static void assert_says_migrate(const struct test_run *r, const char *database, const char *has)
{
    assert_int_equal(r->status, 1);
    test_assert_contains(r->err, "the database at host ");
    char *named = g_strdup_printf("database %s user ", database);
    test_assert_contains(r->err, named);
    g_free(named);
    test_assert_contains(r->err, has);
    test_assert_contains(r->err, "run `vigil db migrate`");
    assert_null(strstr(r->err, "cannot read the warehouse"));
}

static char *database_name(const char *conninfo)
{
    const char *at = g_strrstr(conninfo, "dbname="); /* the last one counts */
    assert_non_null(at);
    return g_strdup(at + strlen("dbname="));
}

static void test_empty_database(void **state)
{
    struct test_warehouse_db *t = *state;
    char *name = database_name(t->conninfo);
    static const char *const commands[][5] = {
        {"report", "1"}, {"report", "--job", "4242"},
        {"export", "1"}, {"advise", "1", "--against", "2"},
        {"runs"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
        const char *const *c = commands[i]; /* NULL after its last word */
        struct test_run r = test_run_vigil_on_warehouse(t->conninfo, c[0], c[1], c[2], c[3], NULL);
        assert_says_migrate(&r, name, "has no vigil schema");
        test_run_clear(&r);
    }
    g_free(name);
}

/* A database some older vigil made: its version is said. */
static void test_older_schema(void **state)
{
    struct test_warehouse_db *t = *state;
    char *name = database_name(t->conninfo);
    test_pg_exec_in(t->conninfo, "CREATE TABLE vigil_schema_migrations (version int PRIMARY KEY,"
                                 " name text NOT NULL); INSERT INTO vigil_schema_migrations"
                                 " VALUES (1, '0001_warehouse.sql')");
    struct test_run r = test_run_vigil_on_warehouse(t->conninfo, "report", "1", NULL);
    char *has = g_strdup_printf("has an older vigil schema (version 1; this vigil's is %u)",
                                vigil_warehouse_latest_version());
    assert_says_migrate(&r, name, has);
    test_run_clear(&r);
    g_free(has);
    g_free(name);
}

/* After `vigil db migrate`, the same database answers as an empty
 * warehouse does: no such run. */
static void test_migrated_database(void **state)
{
    struct test_warehouse_db *t = *state;
    struct test_run r = test_run_vigil_on_warehouse(t->conninfo, "db", "migrate", NULL);
    test_assert_status(&r, 0, "vigil db migrate");
    test_run_clear(&r);
    r = test_run_vigil_on_warehouse(t->conninfo, "report", "1", NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "the warehouse has no run 1 (neither a run number nor a run key); "
                                "`vigil runs` lists the runs");
    test_run_clear(&r);
    r = test_run_vigil_on_warehouse(t->conninfo, "report", "--job", "4242", NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "the warehouse has no job 4242; `vigil runs` shows each "
                                "run's job");
    test_run_clear(&r);
    r = test_run_vigil_on_warehouse(t->conninfo, "runs", NULL);
    test_assert_status(&r, 0, "vigil runs on an empty warehouse");
    assert_string_equal(r.out, "");
    test_assert_contains(r.err, "vigil runs: no stored runs yet");
    test_run_clear(&r);
}

/* A warehouse that cannot be reached: the error names where vigil tried,
 * never the password. */
static void test_unreachable_warehouse(void **state)
{
    (void)state;
    const char *conninfo = "host=/nonexistent-vigil-socket-dir port=5 dbname=wh user=someone "
                           "password=s3cret";
    struct test_run r = test_run_vigil_on_warehouse(conninfo, "runs", NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "vigil runs: cannot connect to the warehouse (host "
                                "/nonexistent-vigil-socket-dir port 5 database wh user someone)");
    assert_null(strstr(r.err, "s3cret"));
    test_run_clear(&r);
}

/* ---- vigil runs on the web fixture ------------------------------------------------------ */

static char *fixture;

static int fixture_setup(void **state)
{
    (void)state;
    fixture = test_warehouse_web_fixture();
    return 0;
}

/* The run numbers of `vigil runs ARGS… --format json`, space-separated,
 * and the parsed array in *runs when runs is not NULL. */
static char *json_run_ids(JsonParser **parser_out, const char *a, const char *b, const char *c,
                          const char *d)
{
    struct test_run r =
        test_run_vigil_on_warehouse(fixture, "runs", "--format", "json", a, b, c, d, NULL);
    test_assert_status(&r, 0, "vigil runs --format json");
    JsonParser *parser = json_parser_new();
    assert_true(json_parser_load_from_data(parser, r.out, -1, NULL));
    JsonArray *runs = json_node_get_array(json_parser_get_root(parser));
    GString *ids = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(runs); i++)
        g_string_append_printf(
            ids, "%s%" G_GINT64_FORMAT, i ? " " : "",
            json_object_get_int_member(json_array_get_object_element(runs, i), "run_id"));
    test_run_clear(&r);
    if (parser_out != NULL)
        *parser_out = parser;
    else
        g_object_unref(parser);
    return g_string_free(ids, FALSE);
}

static void test_runs_newest_first(void **state)
{
    (void)state;
    struct test_run r = test_run_vigil_on_warehouse(fixture, "runs", NULL);
    test_assert_status(&r, 0, "vigil runs");
    char **lines = g_strsplit(r.out, "\n", -1);
    assert_int_equal(g_strv_length(lines), 1 + 12 + 1); /* header, 12 runs, "" */
    assert_true(g_str_has_prefix(lines[0], "RUN  KEY"));
    test_assert_contains(lines[0], "START (UTC)");
    test_assert_contains(lines[0], "ENERGY");
    GString *order = g_string_new(NULL);
    for (int i = 1; i <= 12; i++)
        g_string_append_printf(order, "%s%d", i > 1 ? " " : "", atoi(lines[i]));
    assert_string_equal(order->str, "12 11 10 9 8 7 6 5 4 2 3 1");
    /* Run 1: ior, job 4242, 2 minutes from 10:00 UTC, 4 processes, its
     * energy; with its key, which `vigil report` takes. */
    const char *run1 = lines[12];
    test_assert_contains(run1, "fixture-ior-1");
    test_assert_contains(run1, "4242");
    test_assert_contains(run1, "2026-11-20 10:00:00");
    test_assert_contains(run1, "2m00s");
    test_assert_contains(run1, "36250.00 J");
    g_string_free(order, TRUE);
    g_strfreev(lines);
    test_run_clear(&r);
}

static void test_runs_json(void **state)
{
    (void)state;
    JsonParser *parser = NULL;
    char *ids = json_run_ids(&parser, "--job", "4242", NULL, NULL);
    assert_string_equal(ids, "1");
    JsonObject *run =
        json_array_get_object_element(json_node_get_array(json_parser_get_root(parser)), 0);
    assert_string_equal(json_object_get_string_member(run, "run_key"), "fixture-ior-1");
    assert_string_equal(json_object_get_string_member(run, "job"), "4242");
    assert_string_equal(json_object_get_string_member(run, "program"), "ior");
    assert_string_equal(json_object_get_string_member(run, "start_time"),
                        "2026-11-20T10:00:00.000000Z");
    assert_true(json_object_get_double_member(run, "duration_s") == 120.0);
    assert_int_equal(json_object_get_int_member(run, "exit_status"), 0);
    assert_int_equal(json_object_get_int_member(run, "uid"), 1);
    const struct passwd *pw = getpwuid(1);
    if (pw != NULL)
        assert_string_equal(json_object_get_string_member(run, "user"), pw->pw_name);
    assert_int_equal(json_object_get_int_member(run, "processes"), 4);
    /* The warehouse's own figures, as run_overview sums them. */
    assert_int_equal(json_object_get_int_member(run, "bytes_read"),
                     (gint64)test_pg_query_u64_in(
                         fixture, "SELECT bytes_read FROM run_overview WHERE run_id = 1"));
    assert_int_equal(json_object_get_int_member(run, "bytes_written"),
                     (gint64)test_pg_query_u64_in(
                         fixture, "SELECT bytes_written FROM run_overview WHERE run_id = 1"));
    assert_true(json_object_get_double_member(run, "energy_j") == 36250.0);
    g_object_unref(parser);
    g_free(ids);
}

static void test_runs_filters(void **state)
{
    (void)state;
    char *ids = json_run_ids(NULL, "--limit", "3", NULL, NULL);
    assert_string_equal(ids, "12 11 10");
    g_free(ids);
    /* uid 65534 by number and by name (nobody, on Debian). */
    ids = json_run_ids(NULL, "--user", "65534", NULL, NULL);
    assert_string_equal(ids, "12 9 6 3");
    g_free(ids);
    const struct passwd *pw = getpwuid(65534);
    if (pw != NULL) {
        ids = json_run_ids(NULL, "--user", pw->pw_name, NULL, NULL);
        assert_string_equal(ids, "12 9 6 3");
        g_free(ids);
    }
    ids = json_run_ids(NULL, "--since", "2026-11-20 13:00Z", NULL, NULL);
    assert_string_equal(ids, "12 11 10 9 8");
    g_free(ids);
    ids = json_run_ids(NULL, "--since", "100000 days", "--user", "1");
    assert_string_equal(ids, "11 8 5 2 1");
    g_free(ids);
    ids = json_run_ids(NULL, "--job", "9999", NULL, NULL);
    assert_string_equal(ids, "");
    g_free(ids);
    struct test_run r = test_run_vigil_on_warehouse(fixture, "runs", "--job", "9999", NULL);
    test_assert_err(&r, 0, "vigil runs --job 9999", "vigil runs: no stored run matches", NULL);
    test_run_clear(&r);
}

/* Bad options are usage errors naming what is wrong. */
static void test_runs_bad_options(void **state)
{
    (void)state;
    static const struct {
        const char *option, *value, *says;
    } cases[] = {
        {"--limit", "0", "--limit 0: expected a number of runs from 1 to 100000"},
        {"--format", "xml", "--format xml: expected text or json"},
        {"--job", "a b", "--job a b: a scheduler job id is letters"},
        {"--user", "no-such-user-here", "--user no-such-user-here: no such user"},
        {"--since", "notatime", "--since notatime: expected a time"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        struct test_run r =
            test_run_vigil_on_warehouse(fixture, "runs", cases[i].option, cases[i].value, NULL);
        assert_int_equal(r.status, 2);
        test_assert_contains(r.err, cases[i].says);
        test_run_clear(&r);
    }
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_WAREHOUSE_DB(test_empty_database), TEST_WITH_WAREHOUSE_DB(test_older_schema),
             TEST_WITH_WAREHOUSE_DB(test_migrated_database),
             cmocka_unit_test(test_unreachable_warehouse),
             cmocka_unit_test_setup(test_runs_newest_first, fixture_setup),
             cmocka_unit_test(test_runs_json), cmocka_unit_test(test_runs_filters),
             cmocka_unit_test(test_runs_bad_options))
