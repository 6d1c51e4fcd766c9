/* Tests of how vigil_warehouse_migrate goes through several migrations,
 * with migrations of the test's own: this program defines the table the
 * build otherwise generates from warehouse/migrations/NNNN_name.sql, so the linker leaves the
 * generated one out of the static library. The last one is broken. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "test_pg.h"
#include "test_support.h"
#include "vigil/warehouse.h"
#include "warehouse_migrations.h"

/* Line 1 has multibyte characters: PostgreSQL counts its error position in
 * characters, and counted as bytes it would point into line 2. */
#define BROKEN_SQL                                                                                 \
    "-- \303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251"          \
    "\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\n"           \
    "CREATE TABLE third (x integer);\n"                                                            \
    "SELECT no_such_column\n"                                                                      \
    "  FROM third;\n"
#define BROKEN_LINE 3

const struct vigil_warehouse_migration vigil_warehouse_migrations[] = {
    {.version = 1,
     .name = "0001_first",
     .sha256 = "1111111111111111111111111111111111111111111111111111111111111111",
     .sql = "CREATE TABLE first (x integer);\n"},
    {.version = 2,
     .name = "0002_second",
     .sha256 = "2222222222222222222222222222222222222222222222222222222222222222",
     .sql = "CREATE TABLE second (x integer);\nINSERT INTO second VALUES (2);\n"},
    {.version = 3,
     .name = "0003_broken",
     .sha256 = "3333333333333333333333333333333333333333333333333333333333333333",
     .sql = BROKEN_SQL},
};
const size_t vigil_warehouse_migration_count =
    sizeof vigil_warehouse_migrations / sizeof vigil_warehouse_migrations[0];

static PGconn *connect_or_fail(const char *conninfo)
{
    GError *error = NULL;
    PGconn *db = vigil_warehouse_connect(conninfo, &error);
    if (db == NULL)
        fail_msg("vigil_warehouse_connect: %s", error->message);
    return db;
}

static guint64 relation_exists(const char *conninfo, const char *name)
{
    char *sql = g_strdup_printf(
        "SELECT count(*) FROM (SELECT to_regclass('%s') AS r) x WHERE r IS NOT NULL", name);
    guint64 n = test_pg_query_u64_in(conninfo, sql);
    g_free(sql);
    return n;
}

static void test_each_migration_is_its_own_transaction(void **state)
{
    (void)state;
    assert_int_equal(vigil_warehouse_latest_version(), 3);
    char *conninfo = test_pg_new_database(&test_pg_cluster);
    PGconn *db = connect_or_fail(conninfo);
    GError *error = NULL;
    guint applied = 99;
    assert_false(vigil_warehouse_migrate(db, &applied, &error));
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION));
    char *want = g_strdup_printf("migration 0003_broken failed at line %d of 0003_broken.sql: "
                                 "column \"no_such_column\" does not exist",
                                 BROKEN_LINE);
    test_assert_contains(error->message, want);
    g_free(want);
    g_clear_error(&error);

    /* 1 and 2 stay, with their records; nothing of 3 does. */
    assert_int_equal(applied, 2);
    guint version = 0;
    assert_true(vigil_warehouse_current_version(db, &version, &error));
    assert_int_equal(version, 2);
    assert_int_equal(relation_exists(conninfo, "first"), 1);
    assert_int_equal(test_pg_query_u64_in(conninfo, "SELECT x FROM second"), 2);
    assert_int_equal(relation_exists(conninfo, "third"), 0);
    assert_int_equal(test_pg_query_u64_in(conninfo, "SELECT count(*) FROM vigil_schema_migrations"
                                                    " WHERE (version, name, sha256) IN ("
                                                    " (1, '0001_first', repeat('1', 64)),"
                                                    " (2, '0002_second', repeat('2', 64)))"),
                     2);

    /* Again: 1 and 2 are not applied twice, 3 fails the same way. */
    assert_false(vigil_warehouse_migrate(db, &applied, &error));
    assert_int_equal(applied, 0);
    test_assert_contains(error->message, "migration 0003_broken failed at line");
    g_clear_error(&error);
    assert_int_equal(test_pg_query_u64_in(conninfo, "SELECT count(*) FROM second"), 1);
    PQfinish(db);
    g_free(conninfo);
}

static void test_only_the_missing_ones_are_applied(void **state)
{
    (void)state;
    char *conninfo = test_pg_new_database(&test_pg_cluster);
    /* As an older vigil that knew only migration 1 left it. */
    test_pg_exec_in(conninfo, "CREATE TABLE vigil_schema_migrations (version integer PRIMARY KEY,"
                              " name text NOT NULL, sha256 text NOT NULL,"
                              " applied_at timestamptz NOT NULL DEFAULT now())");
    test_pg_exec_in(conninfo, "INSERT INTO vigil_schema_migrations (version, name, sha256)"
                              " VALUES (1, '0001_first', repeat('1', 64))");
    PGconn *db = connect_or_fail(conninfo);
    GError *error = NULL;
    guint applied = 99;
    assert_false(vigil_warehouse_migrate(db, &applied, &error));
    test_assert_contains(error->message, "migration 0003_broken failed");
    g_clear_error(&error);
    assert_int_equal(applied, 1);
    /* Migration 1 was not run again: its table was never made. */
    assert_int_equal(relation_exists(conninfo, "first"), 0);
    assert_int_equal(relation_exists(conninfo, "second"), 1);
    PQfinish(db);
    g_free(conninfo);
}

static void test_a_renamed_migration_counts_as_changed(void **state)
{
    (void)state;
    char *conninfo = test_pg_new_database(&test_pg_cluster);
    PGconn *db = connect_or_fail(conninfo);
    GError *error = NULL;
    assert_false(vigil_warehouse_migrate(db, NULL, &error));
    g_clear_error(&error);
    test_pg_exec_in(conninfo, "UPDATE vigil_schema_migrations SET name = '0002_renamed'"
                              " WHERE version = 2");
    assert_false(vigil_warehouse_migrate(db, NULL, &error));
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION));
    test_assert_contains(error->message, "migration 0002_second was changed after it was applied");
    test_assert_contains(error->message, "0002_renamed");
    g_clear_error(&error);
    PQfinish(db);
    g_free(conninfo);
}

static void test_a_gap_in_the_records_is_refused(void **state)
{
    (void)state;
    char *conninfo = test_pg_new_database(&test_pg_cluster);
    PGconn *db = connect_or_fail(conninfo);
    GError *error = NULL;
    assert_false(vigil_warehouse_migrate(db, NULL, &error));
    g_clear_error(&error);
    test_pg_exec_in(conninfo, "DELETE FROM vigil_schema_migrations WHERE version = 1");
    guint applied = 99;
    assert_false(vigil_warehouse_migrate(db, &applied, &error));
    assert_int_equal(applied, 0);
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION));
    test_assert_contains(error->message, "records migration 2 (0002_second) but not 1");
    g_clear_error(&error);
    /* Migration 1 was not applied over what 2 did. */
    assert_int_equal(test_pg_query_u64_in(conninfo, "SELECT count(*) FROM vigil_schema_migrations"),
                     1);
    PQfinish(db);
    g_free(conninfo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_migration_is_its_own_transaction),
        cmocka_unit_test(test_only_the_missing_ones_are_applied),
        cmocka_unit_test(test_a_renamed_migration_counts_as_changed),
        cmocka_unit_test(test_a_gap_in_the_records_is_refused),
    };
    return test_pg_run_group_tests(tests, test_pg_group_setup, test_pg_group_teardown);
}
