/* Tests — a warehouse to read: the web fixture loaded into a fresh
 * database, and the vigil command run against a warehouse. */
#ifndef VIGIL_TEST_WAREHOUSE_H
#define VIGIL_TEST_WAREHOUSE_H

#include <libpq-fe.h>

#include "test_support.h"

/* vigil_warehouse_connect, as vigil connects; fails the test when it
 * cannot. PQfinish it. */
PGconn *test_warehouse_connect(const char *conninfo);

/* A new database of test_pg_cluster, migrated to the latest schema; its
 * conninfo (g_free it). */
char *test_warehouse_new_migrated(void);

/* A test's own empty database in test_pg_cluster, connected
 * (test_warehouse_connect): cmocka setup and teardown, *state is a
 * struct test_warehouse_db. The teardown closes `db` unless the test did
 * (and set it NULL). */
struct test_warehouse_db {
    char *conninfo;
    PGconn *db;
};
int test_warehouse_db_setup(void **state);
int test_warehouse_db_teardown(void **state);
#define TEST_WITH_WAREHOUSE_DB(f)                                                                  \
    cmocka_unit_test_setup_teardown(f, test_warehouse_db_setup, test_warehouse_db_teardown)

/* A new database of test_pg_cluster, migrated to the latest schema, with
 * tests/web/fixture.sql ($VIGIL_WEB_FIXTURE) loaded by psql; its conninfo. */
char *test_warehouse_web_fixture(void);
/* A program's cluster (test_pg_group_setup) with such a database, whose
 * conninfo is test_warehouse_fixture: cmocka group setup and teardown. */
extern char *test_warehouse_fixture;
int test_warehouse_fixture_group_setup(void **state);
int test_warehouse_fixture_group_teardown(void **state);

/* `$VIGIL_CLI WORDS…` (up to a NULL) in a clean environment whose
 * VIGIL_CONFIG names a configuration of only [warehouse] conninfo. */
struct test_run test_run_vigil_on_warehouse(const char *conninfo, const char *first,
                                            ...) G_GNUC_NULL_TERMINATED;

#endif
