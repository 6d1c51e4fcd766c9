/* vigil — a private PostgreSQL for the tests (tools/pg-private): one cluster
 * per test program, in a fresh folder, started in a group setup. Include
 * after <cmocka.h>. A program of the `pg` suite whose server programs are
 * not installed (test_pg_available) skips with TEST_PG_MISSING
 * (test_skip_program: a failure under CI). */
#ifndef VIGIL_TEST_PG_H
#define VIGIL_TEST_PG_H

#include <glib.h>
#include <libpq-fe.h>

struct test_pg {
    char *dir;      /* the cluster's folder: data/, its socket, its log */
    char *conninfo; /* of its database `vigil` */
};

/* Whether the PostgreSQL server programs are here (`pg-private check`);
 * fails the test when the script cannot tell. $VIGIL_PG_PRIVATE names the
 * script (meson test sets it). */
gboolean test_pg_available(void);
#define TEST_PG_MISSING                                                                            \
    "the PostgreSQL server programs are not installed (tools/bootstrap installs them)"
/* What a pg program's main returns: its tests run in their group, or, when
 * the server programs are not here, the program skipped. */
#define test_pg_run_group_tests(tests, group_setup, group_teardown)                                \
    (test_pg_available() ? cmocka_run_group_tests(tests, group_setup, group_teardown)              \
                         : test_skip_program(TEST_PG_MISSING))
/* The main of a pg program that lists its tests and runs them as one group
 * (test_pg_run_group_tests), as TEST_MAIN (test_main.h) does elsewhere:
 *
 *     TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
 *                  cmocka_unit_test(test_a), TEST_WITH_TXD_FIXTURE(test_b))
 */
#define TEST_PG_MAIN(group_setup, group_teardown, ...)                                             \
    int main(void)                                                                                 \
    {                                                                                              \
        const struct CMUnitTest tests[] = {__VA_ARGS__};                                           \
        return test_pg_run_group_tests(tests, group_setup, group_teardown);                        \
    }

/* Makes and starts a cluster in a new temporary folder; fails the test
 * when it cannot. */
void test_pg_start(struct test_pg *pg);
/* Stops it (clients are disconnected) and starts the same cluster again:
 * for tests of what happens while the warehouse is away. */
void test_pg_stop(struct test_pg *pg);
void test_pg_restart_after_stop(struct test_pg *pg);
/* Whether Citus is installed in those server programs (`pg-private
 * check-citus`). */
gboolean test_pg_citus_available(void);
#define TEST_PG_CITUS_MISSING                                                                      \
    "Citus is not installed in PostgreSQL (tools/bootstrap builds it from ../shared/citus)"
/* A Citus cluster (`pg-private start-citus`) of a coordinator, whose
 * database `vigil` pg->conninfo names, and `workers` workers, in a new
 * temporary folder; test_pg_stop and test_pg_cleanup act on all of it. */
void test_pg_start_citus(struct test_pg *pg, unsigned workers);
/* Stops worker `worker` (1…) of such a cluster and starts it again. */
void test_pg_restart_citus_worker(const struct test_pg *pg, unsigned worker);
/* Stops it and removes its folder. */
void test_pg_cleanup(struct test_pg *pg);

/* The cluster of a test program, for cmocka_run_group_tests: the setup
 * starts it, the teardown removes it. */
extern struct test_pg test_pg_cluster;
int test_pg_group_setup(void **state);
int test_pg_group_teardown(void **state);
/* test_pg_group_setup, then `load` (the program's own rows, say). */
int test_pg_group_setup_and(void **state, void (*load)(void));

const char *test_pg_conninfo(const struct test_pg *pg);
/* A new empty database in the cluster; its conninfo (g_free it). */
char *test_pg_new_database(struct test_pg *pg);

/* On the cluster's database `vigil`: */
/* Connects; fails the test when it cannot. PQfinish it. */
PGconn *test_pg_connect(const struct test_pg *pg);
/* Runs a statement that returns no rows; fails the test when it fails. */
void test_pg_exec(const struct test_pg *pg, const char *sql);
/* The one number `sql` returns (one row, one column, not NULL). */
guint64 test_pg_query_u64(const struct test_pg *pg, const char *sql);

/* The same on any database (test_pg_new_database's): */
PGconn *test_pg_connect_to(const char *conninfo);
void test_pg_exec_in(const char *conninfo, const char *sql);
guint64 test_pg_query_u64_in(const char *conninfo, const char *sql);
/* The one text `sql` returns, NULL for SQL NULL. g_free it. */
char *test_pg_query_text_in(const char *conninfo, const char *sql);
/* The one number of the SQL printf makes of `format`. */
guint64 test_pg_query_u64_printf(const char *conninfo, const char *format, ...) G_GNUC_PRINTF(2, 3);
/* Polls `sql` (one number) until it is at least `at_least` (or, _equal,
 * exactly `want`); fails after a minute, which only a failure waits,
 * naming the query and its last answer. */
void test_pg_wait_for_count_in(const char *conninfo, const char *sql, guint64 at_least);
void test_pg_wait_for_count_equal_in(const char *conninfo, const char *sql, guint64 want);
/* Fails, naming the query and what it gave, unless the one text of the
 * SQL printf makes of `format` is `want`. */
void test_pg_assert_text_printf(const char *conninfo, const char *want, const char *format, ...)
    G_GNUC_PRINTF(3, 4);
/* Whether the relation (table, view…) `name` exists, as to_regclass says. */
gboolean test_pg_relation_exists_in(const char *conninfo, const char *name);

#endif
