/* Tests — a warehouse to read (see test_warehouse.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_pg.h"
#include "test_warehouse.h"
#include "vigil/warehouse.h"

PGconn *test_warehouse_connect(const char *conninfo)
{
    GError *error = NULL;
    PGconn *db = vigil_warehouse_connect(conninfo, &error);
    if (db == NULL)
        fail_msg("vigil_warehouse_connect: %s", error->message);
    return db;
}

char *test_warehouse_new_migrated(void)
{
    char *conninfo = test_pg_new_database(&test_pg_cluster);
    PGconn *db = test_warehouse_connect(conninfo);
    GError *error = NULL;
    if (!vigil_warehouse_migrate(db, NULL, &error))
        fail_msg("migrating: %s", error->message);
    PQfinish(db);
    return conninfo;
}

int test_warehouse_db_setup(void **state)
{
    struct test_warehouse_db *t = g_new0(struct test_warehouse_db, 1);
    t->conninfo = test_pg_new_database(&test_pg_cluster);
    t->db = test_warehouse_connect(t->conninfo);
    *state = t;
    return 0;
}

int test_warehouse_db_teardown(void **state)
{
    struct test_warehouse_db *t = *state;
    if (t->db != NULL)
        PQfinish(t->db);
    g_free(t->conninfo);
    g_free(t);
    return 0;
}

char *test_warehouse_web_fixture(void)
{
    char *conninfo = test_warehouse_new_migrated();
    const char *argv[] = {"psql", conninfo,          "-X", "-q",
                          "-v",   "ON_ERROR_STOP=1", "-f", test_env_or_fail("VIGIL_WEB_FIXTURE"),
                          NULL};
    struct test_run r = test_run_program(NULL, argv, NULL);
    test_assert_status(&r, 0, "psql -f tests/web/fixture.sql");
    test_run_clear(&r);
    return conninfo;
}

char *test_warehouse_fixture;

static void load_web_fixture(void)
{
    test_warehouse_fixture = test_warehouse_web_fixture();
}

int test_warehouse_fixture_group_setup(void **state)
{
    return test_pg_group_setup_and(state, load_web_fixture);
}

int test_warehouse_fixture_group_teardown(void **state)
{
    g_free(test_warehouse_fixture);
    test_warehouse_fixture = NULL;
    return test_pg_group_teardown(state);
}

struct test_run test_run_vigil_on_warehouse(const char *conninfo, const char *first, ...)
{
    char *config_dir = g_dir_make_tmp("vigil-test-warehouse-XXXXXX", NULL);
    assert_non_null(config_dir);
    char *config = g_build_filename(config_dir, "vigil.conf", NULL);
    char *config_text = g_strdup_printf("[warehouse]\nconninfo = %s\n", conninfo);
    assert_true(g_file_set_contents(config, config_text, -1, NULL));
    char *var = g_strdup_printf("VIGIL_CONFIG=%s", config);
    const char *vars[] = {var, NULL};
    va_list words;
    va_start(words, first);
    struct test_run r = test_run_vigil_va(vars, first, words);
    va_end(words);
    test_remove_tree(config_dir);
    g_free(var);
    g_free(config_text);
    g_free(config);
    g_free(config_dir);
    return r;
}
