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
#include "test_warehouse.h"
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

static void test_each_migration_is_its_own_transaction(void **state)
{
    struct test_warehouse_db *t = *state;
    assert_int_equal(vigil_warehouse_latest_version(), 3);
    GError *error = NULL;
    guint applied = 99;
    assert_false(vigil_warehouse_migrate(t->db, &applied, &error));
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
    assert_true(vigil_warehouse_current_version(t->db, &version, &error));
    assert_int_equal(version, 2);
    assert_true(test_pg_relation_exists_in(t->conninfo, "first"));
    assert_int_equal(test_pg_query_u64_in(t->conninfo, "SELECT x FROM second"), 2);
    assert_false(test_pg_relation_exists_in(t->conninfo, "third"));
    assert_int_equal(test_pg_query_u64_in(t->conninfo,
                                          "SELECT count(*) FROM vigil_schema_migrations"
                                          " WHERE (version, name, sha256) IN ("
                                          " (1, '0001_first', repeat('1', 64)),"
                                          " (2, '0002_second', repeat('2', 64)))"),
                     2);

    /* Again: 1 and 2 are not applied twice, 3 fails the same way. */
    assert_false(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_int_equal(applied, 0);
    test_assert_contains(error->message, "migration 0003_broken failed at line");
    g_clear_error(&error);
    assert_int_equal(test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM second"), 1);
}

static void test_only_the_missing_ones_are_applied(void **state)
{
    struct test_warehouse_db *t = *state;
    /* As an older vigil that knew only migration 1 left it. */
    test_pg_exec_in(t->conninfo,
                    "CREATE TABLE vigil_schema_migrations (version integer PRIMARY KEY,"
                    " name text NOT NULL, sha256 text NOT NULL,"
                    " applied_at timestamptz NOT NULL DEFAULT now())");
    test_pg_exec_in(t->conninfo, "INSERT INTO vigil_schema_migrations (version, name, sha256)"
                                 " VALUES (1, '0001_first', repeat('1', 64))");
    GError *error = NULL;
    guint applied = 99;
    assert_false(vigil_warehouse_migrate(t->db, &applied, &error));
    test_assert_contains(error->message, "migration 0003_broken failed");
    g_clear_error(&error);
    assert_int_equal(applied, 1);
    /* Migration 1 was not run again: its table was never made. */
    assert_false(test_pg_relation_exists_in(t->conninfo, "first"));
    assert_true(test_pg_relation_exists_in(t->conninfo, "second"));
}

static void test_a_renamed_migration_counts_as_changed(void **state)
{
    struct test_warehouse_db *t = *state;
    GError *error = NULL;
    assert_false(vigil_warehouse_migrate(t->db, NULL, &error));
    g_clear_error(&error);
    test_pg_exec_in(t->conninfo, "UPDATE vigil_schema_migrations SET name = '0002_renamed'"
                                 " WHERE version = 2");
    assert_false(vigil_warehouse_migrate(t->db, NULL, &error));
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION));
    test_assert_contains(error->message, "migration 0002_second was changed after it was applied");
    test_assert_contains(error->message, "0002_renamed");
    g_clear_error(&error);
}

static void test_a_gap_in_the_records_is_refused(void **state)
{
    struct test_warehouse_db *t = *state;
    GError *error = NULL;
    assert_false(vigil_warehouse_migrate(t->db, NULL, &error));
    g_clear_error(&error);
    test_pg_exec_in(t->conninfo, "DELETE FROM vigil_schema_migrations WHERE version = 1");
    guint applied = 99;
    assert_false(vigil_warehouse_migrate(t->db, &applied, &error));
    assert_int_equal(applied, 0);
    assert_true(g_error_matches(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION));
    test_assert_contains(error->message, "records migration 2 (0002_second) but not 1");
    g_clear_error(&error);
    /* Migration 1 was not applied over what 2 did. */
    assert_int_equal(
        test_pg_query_u64_in(t->conninfo, "SELECT count(*) FROM vigil_schema_migrations"), 1);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_WAREHOUSE_DB(test_each_migration_is_its_own_transaction),
             TEST_WITH_WAREHOUSE_DB(test_only_the_missing_ones_are_applied),
             TEST_WITH_WAREHOUSE_DB(test_a_renamed_migration_counts_as_changed),
             TEST_WITH_WAREHOUSE_DB(test_a_gap_in_the_records_is_refused))
