/* The vigil command against warehouses that are not what it expects: an
 * empty database (no schema), one with an older schema, one that cannot be
 * reached. Each error names the database, without its password, and says
 * what to do, instead of PostgreSQL's raw "relation … does not exist". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_warehouse.h"
#include "vigil/warehouse.h"

/* `vigil ARGS…` against the warehouse at `conninfo`. */
static struct test_run vigil_on(const char *conninfo, const char *first, ...)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)test_env_or_fail("VIGIL_CLI"));
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a != NULL; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    struct test_run r = test_run_on_warehouse(conninfo, (const char *const *)argv->pdata);
    g_ptr_array_free(argv, TRUE);
    return r;
}

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
    (void)state;
    char *conninfo = test_pg_new_database(&test_pg_cluster);
    char *name = database_name(conninfo);
    struct test_run r = vigil_on(conninfo, "report", "1", NULL);
    assert_says_migrate(&r, name, "has no vigil schema");
    test_run_clear(&r);
    r = vigil_on(conninfo, "report", "--job", "4242", NULL);
    assert_says_migrate(&r, name, "has no vigil schema");
    test_run_clear(&r);
    r = vigil_on(conninfo, "export", "1", NULL);
    assert_says_migrate(&r, name, "has no vigil schema");
    test_run_clear(&r);
    r = vigil_on(conninfo, "advise", "1", "--against", "2", NULL);
    assert_says_migrate(&r, name, "has no vigil schema");
    test_run_clear(&r);
    g_free(name);
    g_free(conninfo);
}

/* A database some older vigil made: its version is said. */
static void test_older_schema(void **state)
{
    (void)state;
    char *conninfo = test_pg_new_database(&test_pg_cluster);
    char *name = database_name(conninfo);
    test_pg_exec_in(conninfo, "CREATE TABLE vigil_schema_migrations (version int PRIMARY KEY,"
                              " name text NOT NULL); INSERT INTO vigil_schema_migrations"
                              " VALUES (1, '0001_warehouse.sql')");
    struct test_run r = vigil_on(conninfo, "report", "1", NULL);
    char *has = g_strdup_printf("has an older vigil schema (version 1; this vigil's is %u)",
                                vigil_warehouse_latest_version());
    assert_says_migrate(&r, name, has);
    test_run_clear(&r);
    g_free(has);
    g_free(name);
    g_free(conninfo);
}

/* After `vigil db migrate`, the same database answers as an empty
 * warehouse does: no such run. */
static void test_migrated_database(void **state)
{
    (void)state;
    char *conninfo = test_pg_new_database(&test_pg_cluster);
    struct test_run r = vigil_on(conninfo, "db", "migrate", NULL);
    test_assert_status(&r, 0, "vigil db migrate");
    test_run_clear(&r);
    r = vigil_on(conninfo, "report", "1", NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "the warehouse has no run 1");
    test_run_clear(&r);
    g_free(conninfo);
}

int main(void)
{
    if (!test_pg_available())
        return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_database),
        cmocka_unit_test(test_older_schema),
        cmocka_unit_test(test_migrated_database),
    };
    return cmocka_run_group_tests(tests, test_pg_group_setup, test_pg_group_teardown);
}
