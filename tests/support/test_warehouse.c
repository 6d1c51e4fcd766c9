/* Tests — a warehouse to read (see test_warehouse.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_pg.h"
#include "test_warehouse.h"
#include "vigil/warehouse.h"

char *test_warehouse_web_fixture(void)
{
    char *conninfo = test_pg_new_database(&test_pg_cluster);
    GError *error = NULL;
    PGconn *db = vigil_warehouse_connect(conninfo, &error);
    if (db == NULL || !vigil_warehouse_migrate(db, NULL, &error))
        fail_msg("migrating: %s", error->message);
    PQfinish(db);
    const char *argv[] = {"psql", conninfo,          "-X", "-q",
                          "-v",   "ON_ERROR_STOP=1", "-f", test_env_or_fail("VIGIL_WEB_FIXTURE"),
                          NULL};
    struct test_run r = test_run_program(NULL, argv, NULL);
    test_assert_status(&r, 0, "psql -f tests/web/fixture.sql");
    test_run_clear(&r);
    return conninfo;
}

struct test_run test_run_on_warehouse(const char *conninfo, const char *const *argv)
{
    char *config_dir = g_dir_make_tmp("vigil-test-warehouse-XXXXXX", NULL);
    assert_non_null(config_dir);
    char *config = g_build_filename(config_dir, "vigil.conf", NULL);
    char *config_text = g_strdup_printf("[warehouse]\nconninfo = %s\n", conninfo);
    assert_true(g_file_set_contents(config, config_text, -1, NULL));
    char *var = g_strdup_printf("VIGIL_CONFIG=%s", config);
    const char *vars[] = {var, NULL};
    char **env = test_clean_environment(vars);
    struct test_run r = test_run_program(NULL, argv, env);
    g_strfreev(env);
    test_remove_tree(config_dir);
    g_free(var);
    g_free(config_text);
    g_free(config);
    g_free(config_dir);
    return r;
}
