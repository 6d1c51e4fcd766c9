/* Tests — a warehouse to read: the web fixture loaded into a fresh
 * database, and the vigil command run against a warehouse. */
#ifndef VIGIL_TEST_WAREHOUSE_H
#define VIGIL_TEST_WAREHOUSE_H

#include "test_support.h"

/* A new database of test_pg_cluster, migrated to the latest schema, with
 * tests/web/fixture.sql ($VIGIL_WEB_FIXTURE) loaded by psql; its conninfo. */
char *test_warehouse_web_fixture(void);

/* Runs argv (argv[0]: $VIGIL_CLI, say) in a clean environment whose
 * VIGIL_CONFIG names a configuration of only [warehouse] conninfo. */
struct test_run test_run_on_warehouse(const char *conninfo, const char *const *argv);

#endif
