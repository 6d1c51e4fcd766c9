/* Tests of the warehouse's migrations (vigil_warehouse_migrate and `vigil db`)
 * against a private PostgreSQL: each test gets an empty database of its own
 * in one cluster started for the whole program. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_warehouse.h"
#include "vigil/warehouse.h"

/* Every relation and function migration 1 creates, as to_regclass and
 * to_regprocedure know them. */
static const char *const relations[] = {
    "vigil_schema_migrations",
    "nodes",
    "jobs",
    "runs",
    "processes",
    "files",
    "activities",
    "metrics",
    "statistics_rollups",
    "window_statistics",
    "anomalies",
    "reasoner_states",
    "captures",
    "run_summaries",
    "ingested_batches",
    "run_overview",
    "run_statistics",
    "run_activities",
    "run_processes",
    "run_nodes",
};

/* The text of warehouse/migrations/NAME, read from the source tree. */
static char *schema_file(const char *name, gsize *length)
{
    char *path = g_build_filename(test_env_or_fail("VIGIL_SCHEMA_DIR"), name, NULL);
    char *text = NULL;
    GError *error = NULL;
    if (!g_file_get_contents(path, &text, length, &error))
        fail_msg("%s", error->message);
    g_free(path);
    return text;
}

static void test_every_schema_file_is_built_in(void **state)
{
    (void)state;
    /* A migration added to warehouse/migrations/ but not to the meson list would be
     * installed but never applied. */
    GDir *dir = g_dir_open(test_env_or_fail("VIGIL_SCHEMA_DIR"), 0, NULL);
    assert_non_null(dir);
    guint files = 0;
    for (const char *name; (name = g_dir_read_name(dir)) != NULL;)
        if (g_regex_match_simple("^[0-9]{4}_.*\\.sql$", name, 0, 0))
            files++;
    g_dir_close(dir);
    assert_true(files >= 1);
    assert_int_equal(vigil_warehouse_latest_version(), files);
}

static void test_empty_database_gets_every_migration(void **state)
{
    struct test_warehouse_db *t = *state;
    guint version = 99, applied = 0;
    GError *error = NULL;
    assert_true(vigil_warehouse_current_version(t->db, &version, &error));
    assert_int_equal(version, 0);

    assert_true(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_null(error);
    assert_int_equal(applied, vigil_warehouse_latest_version());
    assert_true(vigil_warehouse_current_version(t->db, &version, &error));
    assert_int_equal(version, vigil_warehouse_latest_version());
    for (size_t i = 0; i < G_N_ELEMENTS(relations); i++)
        if (!test_pg_relation_exists_in(t->conninfo, relations[i]))
            fail_msg("%s does not exist after migrating", relations[i]);
    assert_int_equal(
        test_pg_query_u64_in(t->conninfo,
                             "SELECT count(*) FROM (SELECT to_regprocedure("
                             "'vigil_activity_partition(date)') AS f) x WHERE f IS NOT NULL"),
        1);
    /* The partition function works on what the migration made. */
    char *partition =
        test_pg_query_text_in(t->conninfo, "SELECT vigil_activity_partition('2024-02-29')");
    assert_string_equal(partition, "activities_20240229");
    g_free(partition);
}

static void test_second_run_applies_nothing_and_records_are_right(void **state)
{
    struct test_warehouse_db *t = *state;
    guint applied = 99;
    GError *error = NULL;
    assert_true(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_true(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_null(error);
    assert_int_equal(applied, 0);

    guint latest = vigil_warehouse_latest_version();
    assert_int_equal(
        test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM vigil_schema_migrations"), latest);
    /* The record of migration 1 carries the SHA-256 of the file itself. */
    gsize length = 0;
    char *text = schema_file("0001_warehouse.sql", &length);
    char *want = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, length);
    test_pg_assert_text_printf(t->conninfo, "0001_warehouse",
                               "SELECT name FROM vigil_schema_migrations WHERE version = 1");
    test_pg_assert_text_printf(t->conninfo, want,
                               "SELECT sha256 FROM vigil_schema_migrations WHERE version = 1");
    assert_int_equal(test_pg_query_u64_in(t->conninfo,
                                          "SELECT count(*) FROM vigil_schema_migrations"
                                          " WHERE applied_at > now() - interval '1 day'"),
                     latest);
    g_free(want);
    g_free(text);
}

/* test_warehouse_db_setup's database, migrated: where a test starts from
 * the current schema. */
static int migrated_db_setup(void **state)
{
    test_warehouse_db_setup(state);
    struct test_warehouse_db *t = *state;
    GError *error = NULL;
    assert_true(vigil_warehouse_migrate(t->db, NULL, &error));
    return 0;
}
#define TEST_WITH_MIGRATED_DB(f)                                                                   \
    cmocka_unit_test_setup_teardown(f, migrated_db_setup, test_warehouse_db_teardown)

static void test_changed_migration_is_refused(void **state)
{
    struct test_warehouse_db *t = *state;
    GError *error = NULL;
    test_pg_exec_in(t->conninfo, "UPDATE vigil_schema_migrations SET sha256 = repeat('0', 64)"
                                 " WHERE version = 1");
    guint applied = 99;
    assert_false(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_int_equal(applied, 0);
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION));
    test_assert_contains(error->message,
                         "migration 0001_warehouse was changed after it was applied");
    g_clear_error(&error);
}

static void test_newer_schema_is_refused(void **state)
{
    struct test_warehouse_db *t = *state;
    GError *error = NULL;
    guint future = vigil_warehouse_latest_version() + 1;
    char *sql = g_strdup_printf("INSERT INTO vigil_schema_migrations (version, name, sha256)"
                                " VALUES (%u, '%04u_from_the_future', 'x')",
                                future, future);
    test_pg_exec_in(t->conninfo, sql);
    assert_false(vigil_warehouse_migrate(t->db, NULL, &error));
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION));
    char *want = g_strdup_printf("at version %u (migration %04u_from_the_future), newer than this "
                                 "vigil knows",
                                 future, future);
    test_assert_contains(error->message, want);
    g_clear_error(&error);
    guint version = 0;
    assert_true(vigil_warehouse_current_version(t->db, &version, &error));
    assert_int_equal(version, future);
    g_free(want);
    g_free(sql);
}

static void test_failing_migration_leaves_nothing(void **state)
{
    struct test_warehouse_db *t = *state;
    /* Migration 1 creates nodes, then jobs: a jobs already there makes it
     * fail halfway. */
    test_pg_exec_in(t->conninfo, "CREATE TABLE jobs (x integer)");
    GError *error = NULL;
    guint applied = 99;
    assert_false(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_int_equal(applied, 0);
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION));
    /* PostgreSQL gives no position for this one (test_migrate_sequence
     * checks the line of one that has it). */
    test_assert_contains(error->message, "migration 0001_warehouse failed: ");
    test_assert_contains(error->message, "relation \"jobs\" already exists");
    test_assert_contains(error->message, "nothing of it was applied");
    g_clear_error(&error);

    assert_int_equal(test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM pg_class"
                                                       " WHERE relname IN ('nodes', 'runs')"),
                     0);
    assert_int_equal(
        test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM vigil_schema_migrations"), 0);
    /* The migration lock was given back: the session is still open. */
    assert_int_equal(test_pg_query_u64_in(
                         t->conninfo, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"),
                     0);
    guint version = 99;
    assert_true(vigil_warehouse_current_version(t->db, &version, &error));
    assert_int_equal(version, 0);
}

struct racer {
    const char *conninfo;
    guint applied;
    gboolean ok;
    char *message;
};

static gpointer race(gpointer data)
{
    struct racer *r = data;
    GError *error = NULL;
    PGconn *db = vigil_warehouse_connect(r->conninfo, &error);
    r->ok = db != NULL && vigil_warehouse_migrate(db, &r->applied, &error);
    if (error != NULL)
        r->message = g_strdup(error->message);
    g_clear_error(&error);
    if (db != NULL)
        PQfinish(db);
    return NULL;
}

static void test_concurrent_migrations_apply_each_once(void **state)
{
    struct test_warehouse_db *t = *state;
    struct racer racers[3];
    GThread *threads[G_N_ELEMENTS(racers)];
    for (size_t i = 0; i < G_N_ELEMENTS(racers); i++) {
        racers[i] = (struct racer){.conninfo = t->conninfo};
        threads[i] = g_thread_new("migrate", race, &racers[i]);
    }
    guint total = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(racers); i++) {
        g_thread_join(threads[i]);
        if (!racers[i].ok)
            fail_msg("a concurrent migration failed: %s", racers[i].message);
        total += racers[i].applied;
    }
    assert_int_equal(total, vigil_warehouse_latest_version());
    assert_int_equal(
        test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM vigil_schema_migrations"),
        vigil_warehouse_latest_version());
}

static void test_unreachable_server_is_named(void **state)
{
    (void)state;
    char *conninfo = g_strdup_printf("host=%s port=1 dbname=vigil user=vigil", test_pg_cluster.dir);
    GError *error = NULL;
    assert_null(vigil_warehouse_connect(conninfo, &error));
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNECT));
    char *want = g_strdup_printf("(host %s port 1 database vigil user vigil)", test_pg_cluster.dir);
    test_assert_contains(error->message, want);
    test_assert_contains(error->message, "No such file or directory");
    g_clear_error(&error);
    g_free(want);
    g_free(conninfo);

    /* A database that does not exist: PostgreSQL's own words come through. */
    conninfo = g_strdup_printf("%s dbname=no_such_database", test_pg_conninfo(&test_pg_cluster));
    assert_null(vigil_warehouse_connect(conninfo, &error));
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNECT));
    test_assert_contains(error->message, "database no_such_database");
    test_assert_contains(error->message, "database \"no_such_database\" does not exist");
    g_clear_error(&error);
    g_free(conninfo);
}

static void test_malformed_conninfo_is_refused(void **state)
{
    (void)state;
    GError *error = NULL;
    assert_null(vigil_warehouse_connect("host=/tmp nonsense", &error));
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNINFO));
    test_assert_contains(error->message, "the warehouse connection string is malformed");
    test_assert_contains(error->message, "\"nonsense\"");
    g_clear_error(&error);
    assert_null(vigil_warehouse_connect("host=/tmp colour=blue", &error));
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNINFO));
    test_assert_contains(error->message, "\"colour\"");
    g_clear_error(&error);
    /* libpq would quote this whole string, password and all. */
    assert_null(vigil_warehouse_connect("postgresql://vigil:s3cret@[::1/vigil", &error));
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNINFO));
    test_assert_contains(error->message, "the warehouse connection string is malformed");
    assert_null(strstr(error->message, "s3cret"));
    g_clear_error(&error);
}

static void test_connection_settings(void **state)
{
    (void)state;
    PGconn *db = test_warehouse_connect(test_pg_conninfo(&test_pg_cluster));
    PGresult *result = PQexec(db, "SELECT current_setting('application_name'),"
                                  " current_setting('client_min_messages'),"
                                  " current_setting('client_encoding')");
    assert_int_equal(PQresultStatus(result), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(result, 0, 0), "vigil");
    assert_string_equal(PQgetvalue(result, 0, 1), "warning");
    assert_string_equal(PQgetvalue(result, 0, 2), "UTF8");
    PQclear(result);
    PQfinish(db);
    /* An application_name of the caller's own wins over the fallback. */
    char *conninfo =
        g_strdup_printf("%s application_name=vigil-txd", test_pg_conninfo(&test_pg_cluster));
    db = test_warehouse_connect(conninfo);
    assert_string_equal(PQparameterStatus(db, "application_name"), "vigil-txd");
    PQfinish(db);
    g_free(conninfo);
}

/* The harness's stop and restart, which tests of an absent warehouse use:
 * committed migrations survive, and while it is away connecting fails. */
static void test_migrations_survive_a_restart(void **state)
{
    struct test_warehouse_db *t = *state;
    GError *error = NULL;
    PQfinish(t->db);
    t->db = NULL;

    test_pg_stop(&test_pg_cluster);
    assert_null(vigil_warehouse_connect(t->conninfo, &error));
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNECT));
    test_assert_contains(error->message, test_pg_cluster.dir);
    g_clear_error(&error);
    test_pg_restart_after_stop(&test_pg_cluster);

    t->db = test_warehouse_connect(t->conninfo);
    guint version = 0, applied = 99;
    assert_true(vigil_warehouse_current_version(t->db, &version, &error));
    assert_int_equal(version, vigil_warehouse_latest_version());
    assert_true(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_int_equal(applied, 0);
}

/* A database at version `version`, as that vigil left it: migrations 1 to
 * `version` applied from warehouse/migrations/ and recorded. */
static gint compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void migrate_by_hand_to(const char *conninfo, guint version)
{
    /* The migration files in the order of their numbers. */
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    GDir *dir = g_dir_open(test_env_or_fail("VIGIL_SCHEMA_DIR"), 0, NULL);
    assert_non_null(dir);
    for (const char *name; (name = g_dir_read_name(dir)) != NULL;)
        if (g_regex_match_simple("^[0-9]{4}_.*\\.sql$", name, 0, 0))
            g_ptr_array_add(names, g_strndup(name, strlen(name) - strlen(".sql")));
    g_dir_close(dir);
    g_ptr_array_sort(names, compare_names);
    assert_true(version <= names->len);
    test_pg_exec_in(conninfo, "CREATE TABLE vigil_schema_migrations (version integer PRIMARY KEY,"
                              " name text NOT NULL, sha256 text NOT NULL,"
                              " applied_at timestamptz NOT NULL DEFAULT now())");
    for (guint i = 0; i < version; i++) {
        const char *name = g_ptr_array_index(names, i);
        char *file = g_strdup_printf("%s.sql", name);
        gsize length = 0;
        char *sql = schema_file(file, &length);
        char *sha = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)sql, length);
        test_pg_exec_in(conninfo, sql);
        char *record = g_strdup_printf("INSERT INTO vigil_schema_migrations (version, name, sha256)"
                                       " VALUES (%u, '%s', '%s')",
                                       i + 1, name, sha);
        test_pg_exec_in(conninfo, record);
        g_free(record);
        g_free(sha);
        g_free(sql);
        g_free(file);
    }
    g_ptr_array_unref(names);
}

/* Every row of the tables migration 4 indexes, as one text to compare;
 * runs with the columns up to migration 4 and a process without the
 * columns later migrations add (0011's uplink_dropped_activities, 0 for
 * every old row; 0012's end_time_earliest, NULL in these rows). */
static const char digest_sql[] = "SELECT md5(string_agg(t, '|' ORDER BY t)) FROM ("
                                 " SELECT 'r' || (r.run_id, r.run_key, r.job_id, r.program,"
                                 " r.argv, r.uid, r.start_time, r.end_time, r.exit_status)::text"
                                 " AS t FROM runs r UNION ALL"
                                 " SELECT 'p' || (to_jsonb(p) - 'uplink_dropped_activities'"
                                 " - 'end_time_earliest')::text FROM processes p UNION ALL"
                                 " SELECT 's' || s::text FROM run_summaries s UNION ALL"
                                 " SELECT 'c' || c::text FROM captures c UNION ALL"
                                 " SELECT 'a' || a::text FROM anomalies a UNION ALL"
                                 " SELECT 'm' || m::text FROM statistics_rollups m) x";

static void test_migration_4_keeps_rows_and_its_views_show_them(void **state)
{
    struct test_warehouse_db *t = *state;
    migrate_by_hand_to(t->conninfo, 3);
    test_pg_exec_in(
        t->conninfo,
        "INSERT INTO nodes (node_id, hostname) VALUES (1, 'n1'), (2, 'n2');"
        "INSERT INTO runs (run_id, run_key, program, argv, uid, start_time, end_time)"
        " VALUES (1, 'k1', 'ior', '{ior}', 1000, '2026-11-20 10:00Z', '2026-11-20 10:02Z'),"
        "        (2, 'k2', 'dd', '{dd}', 0, '2026-11-20 11:00Z', NULL);"
        /* Run 1: ranks 0 and 1 on n1, 2 on n2; run 2: one process, still running. */
        "INSERT INTO processes (process_id, run_id, node_id, pid, uid, rank, program, argv, cwd,"
        " start_time, start_monotonic_ns, end_time, exit_status) VALUES"
        " (1, 1, 1, 100, 1000, 0, 'ior', '{ior}', '/', '2026-11-20 10:00Z', 1,"
        "  '2026-11-20 10:02Z', 0),"
        " (2, 1, 1, 101, 1000, 1, 'ior', '{ior}', '/', '2026-11-20 10:00:01Z', 2,"
        "  '2026-11-20 10:01:59Z', 0),"
        " (3, 1, 2, 200, 1000, 2, 'ior', '{ior}', '/', '2026-11-20 10:00:02Z', 3,"
        "  '2026-11-20 10:01:58Z', 0),"
        " (4, 2, 2, 300, 0, NULL, 'dd', '{dd}', '/', '2026-11-20 11:00Z', 4, NULL, NULL);"
        "INSERT INTO run_summaries (process_id, report, calls, bytes_read, bytes_written,"
        " energy_j, energy_source) VALUES"
        " (1, '{\"ranks\": 3}', 10, 100, 1000, 5.5, 'powercap'),"
        " (3, '{}', 30, 300, 3000, NULL, NULL);"
        "INSERT INTO captures (node_id, process_id, first_cycle, last_cycle, start_time,"
        " end_time, activities_forwarded, reasons) VALUES"
        " (1, 1, 5, 7, '2026-11-20 10:00:30Z', '2026-11-20 10:00:34Z', 12, 'x');"
        "INSERT INTO anomalies (level, node_id, process_id, cycle, time, state, plugin, metric,"
        " message) VALUES ('process', 1, 1, 6, '2026-11-20 10:00:31Z', 'BAD',"
        " 'statistics-range', 'm', 'm'), ('node', 2, NULL, 9, '2026-11-20 11:00:31Z', 'BAD',"
        " 'latency-histogram', 'm', 'm');"
        "INSERT INTO metrics (name, unit, kind, source, origin) VALUES"
        " ('energy.node_j', 'J', 'counter', 'powercap', 'measured');"
        "SELECT vigil_day_partition('statistics_rollups', DATE '2026-11-20');"
        "INSERT INTO statistics_rollups SELECT 1, 1, t, t + interval '1 s', 10, 150, 150, 150,"
        " 150, false FROM generate_series(timestamptz '2026-11-20 10:00Z',"
        " '2026-11-20 10:01:39Z', interval '1 s') t");
    char *before = test_pg_query_text_in(t->conninfo, digest_sql);

    guint applied = 0;
    GError *error = NULL;
    assert_true(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_null(error);
    assert_int_equal(applied, vigil_warehouse_latest_version() - 3);

    char *after = test_pg_query_text_in(t->conninfo, digest_sql);
    assert_string_equal(before, after);
    assert_int_equal(test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM statistics_rollups"),
                     100);
    /* Its indexes exist, the one on the partitioned parent on the
     * partition of old rows too (the roll-ups' since migration 13 is
     * statistics_rollup_arrays', where those rows moved). */
    assert_int_equal(test_pg_query_u64_in(
                         t->conninfo, "SELECT count(*) FROM pg_indexes WHERE indexname IN"
                                      " ('runs_start_time_run', 'runs_uid_start_time_run',"
                                      "  'processes_node_start_time', 'captures_node_start_time',"
                                      "  'anomalies_time', 'anomalies_plugin_time',"
                                      "  'statistics_rollup_arrays_node_time')"),
                     7);
    assert_int_equal(test_pg_query_u64_in(t->conninfo,
                                          "SELECT count(*) FROM pg_indexes WHERE tablename ="
                                          " 'statistics_rollup_arrays_20261120' AND indexdef"
                                          " LIKE '%(node_id, start_time)%'"),
                     1);

    /* run_processes: every process, with its node's name and its report's
     * figures when it sent one. */
    assert_int_equal(test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM run_processes"), 4);
    char *rows = test_pg_query_text_in(
        t->conninfo, "SELECT string_agg(format('%s/%s/%s/%s/%s/%s/%s/%s', run_id, process_id,"
                     " coalesce(rank::text, '-'), hostname, coalesce(calls::text, '-'),"
                     " coalesce(energy_j::text, '-'), coalesce(energy_source, '-'), report_sent),"
                     " ' ' ORDER BY process_id) FROM run_processes");
    assert_string_equal(rows, "1/1/0/n1/10/5.5/powercap/t 1/2/1/n1/-/-/-/f 1/3/2/n2/30/-/-/t "
                              "2/4/-/n2/-/-/-/f");
    g_free(rows);
    /* run_nodes: each run's nodes, from the first start to the last end
     * there; no end while a process runs. */
    rows = test_pg_query_text_in(
        t->conninfo, "SELECT string_agg(format('%s/%s/%s/%s/%s', run_id, node_id, hostname,"
                     " to_char(start_time AT TIME ZONE 'UTC', 'HH24:MI:SS'),"
                     " coalesce(to_char(end_time AT TIME ZONE 'UTC', 'HH24:MI:SS'), '-')),"
                     " ' ' ORDER BY run_id, node_id) FROM run_nodes");
    assert_string_equal(rows, "1/1/n1/10:00:00/10:02:00 1/2/n2/10:00:02/10:01:58 "
                              "2/2/n2/11:00:00/-");
    g_free(rows);
    /* Migration 5's energy views over reports from before it (no figures
     * in them): each reporting process's node, no sum, not complete. */
    rows = test_pg_query_text_in(
        t->conninfo, "SELECT string_agg(format('%s/%s/%s/%s/%s', run_id, nodes,"
                     " coalesce(energy_j::text, '-'), coalesce(sources, '-'), complete), ' ')"
                     " FROM run_energy");
    assert_string_equal(rows, "1/2/-/-/f");
    g_free(rows);
    assert_int_equal(test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM job_energy"), 0);
    g_free(after);
    g_free(before);
}

/* The migration of activity_seconds fills it from the activities stored
 * before: summed per (node, process, second, layer, operation) it equals
 * counting them, across midnight and with unknown bytes; every day
 * activities had a partition of has one of activity_seconds. */
#define ACTIVITY_SECONDS_MIGRATION 14

static void test_activity_seconds_migration_counts_the_stored_activities(void **state)
{
    struct test_warehouse_db *t = *state;
    migrate_by_hand_to(t->conninfo, ACTIVITY_SECONDS_MIGRATION - 1);
    test_pg_exec_in(
        t->conninfo,
        "INSERT INTO nodes (node_id, hostname) VALUES (1, 'n1'), (2, 'n2');"
        "INSERT INTO runs (run_id, run_key, program, argv, uid, start_time)"
        " VALUES (1, 'k1', 'ior', '{ior}', 1000, '2026-11-20 23:59Z');"
        "INSERT INTO processes (process_id, run_id, node_id, pid, uid, rank, program, argv, cwd,"
        " start_time, start_monotonic_ns) VALUES"
        " (1, 1, 1, 100, 1000, 0, 'ior', '{ior}', '/', '2026-11-20 23:59Z', 1),"
        " (2, 1, 2, 200, 1000, 1, 'ior', '{ior}', '/', '2026-11-20 23:59Z', 2);"
        "SELECT vigil_day_partition('activities', d) FROM unnest(ARRAY[DATE '2026-11-20',"
        " '2026-11-21', '2026-11-25']) d;"
        /* 400 activities each, 13 ms apart from 23:59:57.5: 5.2 s over midnight. */
        "INSERT INTO activities (process_id, seq, layer, operation, bytes, errno, start_time,"
        " start_ns, duration_ns, thread, flags)"
        " SELECT p, i, 1 + i % 2, 5 + i % 3, CASE WHEN i % 10 = 0 THEN NULL ELSE i * p END, 0,"
        " to_timestamp(ns / 1000 / 1e6), ns, 1000 + i, 1, 0"
        " FROM generate_series(1, 2) p, generate_series(0, 399) i,"
        " LATERAL (SELECT extract(epoch FROM timestamptz '2026-11-20 23:59:57Z')::bigint"
        " * 1000000000 + 500000000 + i * 13000000::bigint + p * 1000 AS ns) x");
    guint applied = 0;
    GError *error = NULL;
    assert_true(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_null(error);
    assert_int_equal(test_pg_query_u64_in(t->conninfo, "SELECT sum(calls) FROM activity_seconds"),
                     800);
    assert_true(test_pg_query_u64_in(t->conninfo, "SELECT count(DISTINCT start_time) FROM "
                                                  "activity_seconds") >= 5);
    assert_int_equal(
        test_pg_query_u64_in(
            t->conninfo,
            "WITH a AS (SELECT p.node_id, a.process_id, floor(a.start_ns / 1e9)::bigint AS s, "
            "a.layer, a.operation, count(*) AS calls, coalesce(sum(a.bytes), 0) AS bytes, "
            "sum(a.duration_ns) AS d FROM activities a JOIN processes p USING (process_id) "
            "GROUP BY 1, 2, 3, 4, 5), "
            "c AS (SELECT node_id, process_id, extract(epoch FROM start_time)::bigint AS s, "
            "layer, operation, sum(calls) AS calls, sum(bytes) AS bytes, sum(duration_ns) AS d "
            "FROM activity_seconds GROUP BY 1, 2, 3, 4, 5) "
            "SELECT count(*) FROM a FULL JOIN c USING (node_id, process_id, s, layer, operation) "
            "WHERE a.calls IS DISTINCT FROM c.calls OR a.bytes IS DISTINCT FROM c.bytes "
            "OR a.d IS DISTINCT FROM c.d"),
        0);
    assert_int_equal(test_pg_query_u64_in(
                         t->conninfo, "SELECT count(*) FROM pg_class WHERE relname IN"
                                      " ('activity_seconds_20261120', 'activity_seconds_20261121',"
                                      "  'activity_seconds_20261125')"),
                     3);
    /* A day of activities made from now on brings its day of counts. */
    test_pg_exec_in(t->conninfo, "DO $$ BEGIN PERFORM vigil_day_partition('activities',"
                                 " DATE '2026-12-01'); END $$");
    assert_int_equal(test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM pg_class WHERE"
                                                       " relname = 'activity_seconds_20261201'"),
                     1);
}

/* Migration 17 (issue 33's counters) over files stored before it: their
 * rows kept as they were, the new columns NULL, and run_files the same
 * figures as before (common values without "exact"), saying the path's
 * histograms follow the old bins. */
#define DARSHAN_COUNTERS_MIGRATION 17

static void test_darshan_counters_migration_keeps_the_stored_files(void **state)
{
    struct test_warehouse_db *t = *state;
    migrate_by_hand_to(t->conninfo, DARSHAN_COUNTERS_MIGRATION - 1);
    static const char *const run_files_before_sql =
        "SELECT concat_ws(' ', path, reports, posix_writes, max_read_offset, write_size_hist, "
        "common_sizes, common_strides) FROM run_files";
    test_pg_exec_in(
        t->conninfo,
        "INSERT INTO nodes (node_id, hostname) VALUES (1, 'n1');"
        "INSERT INTO runs (run_id, run_key, program, argv, uid, start_time)"
        " VALUES (1, 'k1', 'tar', '{tar}', 1000, '2026-11-20 10:00Z');"
        "INSERT INTO processes (process_id, run_id, node_id, pid, uid, program, argv, cwd,"
        " start_time, start_monotonic_ns) VALUES"
        " (1, 1, 1, 100, 1000, 'tar', '{tar}', '/', '2026-11-20 10:00Z', 1),"
        " (2, 1, 1, 101, 1000, 'tar', '{tar}', '/', '2026-11-20 10:00Z', 2);"
        /* tar's 10240-byte writes, binned one bin up then (10K-100K). */
        "INSERT INTO file_stats (process_id, position, in_job_report, path, mount, fs_type,"
        " calls, read_bytes, written_bytes, posix_reads, posix_writes, max_read_offset,"
        " write_size_hist, common_sizes, common_strides) VALUES"
        " (1, 0, false, '/t.tar', '/', 'ext4', 3, 0, 20480, 0, 2, -1,"
        "  '{0,0,0,2,0,0,0,0,0,0}', '[{\"size\": 10240, \"count\": 2}]',"
        "  '[{\"stride\": 0, \"count\": 1}]'),"
        " (2, 0, false, '/t.tar', '/', 'ext4', 2, 0, 10240, 0, 1, -1,"
        "  '{0,0,0,1,0,0,0,0,0,0}', '[{\"size\": 10240, \"count\": 1}]', '[]')");
    char *before = test_pg_query_text_in(t->conninfo, run_files_before_sql);
    assert_string_equal(before, "/t.tar 2 3 -1 {0,0,0,3,0,0,0,0,0,0} "
                                "[{\"size\": 10240, \"count\": 3}] "
                                "[{\"count\": 1, \"stride\": 0}]");
    guint applied = 0;
    GError *error = NULL;
    assert_true(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_null(error);
    assert_int_equal(applied, vigil_warehouse_latest_version() - (DARSHAN_COUNTERS_MIGRATION - 1));
    char *after = test_pg_query_text_in(t->conninfo, run_files_before_sql);
    assert_string_equal(after, before);
    char *marks = test_pg_query_text_in(
        t->conninfo, "SELECT concat_ws(' ', size_bins_upper_inclusive, posix_rw_switches IS NULL,"
                     " posix_mode IS NULL, mpiio_common_sizes IS NULL,"
                     " posix_max_write_time_size IS NULL) FROM run_files");
    assert_string_equal(marks, "f t t t t");
    assert_int_equal(test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM file_stats WHERE"
                                                       " size_bins_upper_inclusive IS NULL AND"
                                                       " posix_file_not_aligned IS NULL"),
                     2);
    g_free(marks);
    g_free(after);
    g_free(before);
}

/* ---- the `vigil db` command ------------------------------------------------ */

static void test_cli_refuses_a_password_on_the_command_line(void **state)
{
    struct test_warehouse_db *t = *state;
    char *with_password = g_strdup_printf("%s password=secret", t->conninfo);
    struct test_run r =
        test_run_vigil_words(NULL, "db", "migrate", "--conninfo", with_password, NULL);
    test_assert_err(&r, 2, "vigil db migrate --conninfo '… password=…'",
                    "--conninfo holds a password", "~/.pgpass", "PGPASSWORD", NULL);
    assert_null(strstr(r.err, "secret"));
    test_run_clear(&r);

    char *uri = g_strdup_printf("postgresql://vigil:secret@/vigil?host=%s", test_pg_cluster.dir);
    r = test_run_vigil_words(NULL, "db", "migrate", "--conninfo", uri, NULL);
    test_assert_err(&r, 2, "vigil db migrate --conninfo postgresql://vigil:secret@…",
                    "--conninfo holds a password", NULL);
    assert_null(strstr(r.err, "secret"));
    test_run_clear(&r);
    /* Nothing was applied. */
    assert_int_equal(test_pg_query_u64_in(t->conninfo,
                                          "SELECT count(*) FROM pg_class"
                                          " WHERE relname = 'vigil_schema_migrations'"),
                     0);
    g_free(uri);
    g_free(with_password);
}

static void test_cli_migrate_with_conninfo(void **state)
{
    struct test_warehouse_db *t = *state;
    struct test_run r =
        test_run_vigil_words(NULL, "db", "version", "--conninfo", t->conninfo, NULL);
    test_assert_out(&r, 1, "vigil db version (empty database)", "schema at version 0;",
                    "vigil db migrate", NULL);
    test_run_clear(&r);

    r = test_run_vigil_words(NULL, "db", "migrate", "--conninfo", t->conninfo, NULL);
    test_assert_status(&r, 0, "vigil db migrate");
    char *want = g_strdup_printf("applied 0001_warehouse");
    test_assert_contains(r.out, want);
    g_free(want);
    want = g_strdup_printf("; schema at version %u\n", vigil_warehouse_latest_version());
    test_assert_contains(r.out, want);
    g_free(want);
    test_run_clear(&r);

    r = test_run_vigil_words(NULL, "db", "migrate", "--conninfo", t->conninfo, NULL);
    test_assert_status(&r, 0, "vigil db migrate (again)");
    want =
        g_strdup_printf("schema at version %u, nothing to do\n", vigil_warehouse_latest_version());
    assert_string_equal(r.out, want);
    g_free(want);
    test_run_clear(&r);

    r = test_run_vigil_words(NULL, "db", "version", "--conninfo", t->conninfo, NULL);
    test_assert_out(&r, 0, "vigil db version", "up to date", NULL);
    test_run_clear(&r);
}

/* A folder with vigil.conf holding `text`; its path (remove its folder). */
static char *write_config(const char *text)
{
    char *dir = g_dir_make_tmp("vigil-test-pg-XXXXXX", NULL);
    assert_non_null(dir);
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    assert_true(g_file_set_contents(path, text, -1, NULL));
    g_free(dir);
    return path;
}

static void remove_config(char *path)
{
    char *dir = g_path_get_dirname(path);
    test_remove_tree(dir);
    g_free(dir);
    g_free(path);
}

static void test_cli_migrate_with_config(void **state)
{
    struct test_warehouse_db *t = *state;
    char *text = g_strdup_printf("[warehouse]\nconninfo = %s\n", t->conninfo);
    char *config = write_config(text);
    struct test_run r = test_run_vigil_words(NULL, "db", "migrate", "--config", config, NULL);
    test_assert_out(&r, 0, "vigil db migrate --config", "applied 0001_warehouse", NULL);
    test_run_clear(&r);
    r = test_run_vigil_words(NULL, "db", "version", "--config", config, NULL);
    test_assert_out(&r, 0, "vigil db version --config", "up to date", NULL);
    test_run_clear(&r);
    assert_int_equal(
        test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM vigil_schema_migrations"),
        vigil_warehouse_latest_version());
    remove_config(config);
    g_free(text);

    /* A problem in the configuration is reported with its key. */
    config = write_config("[warehouse]\nmigrate = perhaps\n");
    r = test_run_vigil_words(NULL, "db", "migrate", "--config", config, NULL);
    test_assert_err(&r, 1, "vigil db migrate --config (bad value)", "[warehouse] migrate", NULL);
    test_run_clear(&r);
    remove_config(config);
}

static void test_cli_migrate_from_libpq_environment(void **state)
{
    struct test_warehouse_db *t = *state;
    char *database = test_pg_query_text_in(t->conninfo, "SELECT current_database()");
    char *port = test_pg_query_text_in(t->conninfo, "SELECT current_setting('port')");
    /* An empty [warehouse] conninfo: libpq's variables say where. */
    char *config = write_config("[log]\nlevel = warning\n");
    char *vars[] = {
        g_strdup_printf("VIGIL_CONFIG=%s", config),
        g_strdup_printf("PGHOST=%s", test_pg_cluster.dir),
        g_strdup_printf("PGPORT=%s", port),
        g_strdup_printf("PGDATABASE=%s", database),
        g_strdup("PGUSER=vigil"),
        NULL,
    };
    struct test_run r = test_run_vigil_words((const char *const *)vars, "db", "migrate", NULL);
    test_assert_out(&r, 0, "vigil db migrate (PG* variables)", "applied 0001_warehouse", NULL);
    test_run_clear(&r);
    assert_int_equal(
        test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM vigil_schema_migrations"),
        vigil_warehouse_latest_version());
    for (size_t i = 0; vars[i] != NULL; i++)
        g_free(vars[i]);
    remove_config(config);
    g_free(port);
    g_free(database);
}

static void test_cli_names_an_unreachable_server(void **state)
{
    (void)state;
    char *conninfo = g_strdup_printf("host=%s port=1 dbname=vigil user=vigil", test_pg_cluster.dir);
    struct test_run r = test_run_vigil_words(NULL, "db", "migrate", "--conninfo", conninfo, NULL);
    test_assert_err(&r, 1, "vigil db migrate (no server)",
                    "vigil db migrate: cannot connect to the warehouse (host ", " port 1 ", NULL);
    test_run_clear(&r);
    r = test_run_vigil_words(NULL, "db", "frobnicate", NULL);
    test_assert_err(&r, 2, "vigil db frobnicate", "usage: vigil db migrate|version", NULL);
    test_run_clear(&r);
    g_free(conninfo);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             cmocka_unit_test(test_every_schema_file_is_built_in),
             TEST_WITH_WAREHOUSE_DB(test_empty_database_gets_every_migration),
             TEST_WITH_WAREHOUSE_DB(test_second_run_applies_nothing_and_records_are_right),
             TEST_WITH_MIGRATED_DB(test_changed_migration_is_refused),
             TEST_WITH_MIGRATED_DB(test_newer_schema_is_refused),
             TEST_WITH_WAREHOUSE_DB(test_failing_migration_leaves_nothing),
             TEST_WITH_WAREHOUSE_DB(test_concurrent_migrations_apply_each_once),
             cmocka_unit_test(test_unreachable_server_is_named),
             cmocka_unit_test(test_malformed_conninfo_is_refused),
             cmocka_unit_test(test_connection_settings),
             TEST_WITH_MIGRATED_DB(test_migrations_survive_a_restart),
             TEST_WITH_WAREHOUSE_DB(test_migration_4_keeps_rows_and_its_views_show_them),
             TEST_WITH_WAREHOUSE_DB(test_activity_seconds_migration_counts_the_stored_activities),
             TEST_WITH_WAREHOUSE_DB(test_darshan_counters_migration_keeps_the_stored_files),
             TEST_WITH_WAREHOUSE_DB(test_cli_refuses_a_password_on_the_command_line),
             TEST_WITH_WAREHOUSE_DB(test_cli_migrate_with_conninfo),
             TEST_WITH_WAREHOUSE_DB(test_cli_migrate_with_config),
             TEST_WITH_WAREHOUSE_DB(test_cli_migrate_from_libpq_environment),
             cmocka_unit_test(test_cli_names_an_unreachable_server))
