/* vigil — a private PostgreSQL for the tests, through tools/pg-private. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_pg.h"
#include "test_support.h"

/* tools/pg-private ACTION [DIR [MORE]]. */
static struct test_run run_script_more(const char *action, const char *dir, const char *more,
                                       const char *more_value)
{
    const char *script = test_env_or_fail("VIGIL_PG_PRIVATE");
    const char *argv[] = {script, action, dir, more, more_value, NULL};
    return test_run_program(NULL, argv, NULL);
}

static struct test_run run_script(const char *action, const char *dir)
{
    return run_script_more(action, dir, NULL, NULL);
}

gboolean test_pg_available(void)
{
    struct test_run r = run_script("check", NULL);
    if (r.status != 0 && r.status != 1)
        test_assert_status(&r, 0, "tools/pg-private check");
    gboolean available = r.status == 0;
    if (!available)
        fprintf(stderr, "%s", r.err);
    test_run_clear(&r);
    return available;
}

/* Starts the cluster in pg->dir (made by pg-private the first time). */
static void start(struct test_pg *pg)
{
    struct test_run r = run_script("start", pg->dir);
    test_assert_status(&r, 0, "tools/pg-private start");
    char *conninfo = g_strstrip(g_strdup(r.out));
    test_run_clear(&r);
    assert_true(conninfo[0] != '\0');
    if (pg->conninfo != NULL) /* a restart gives the same cluster back */
        assert_string_equal(conninfo, pg->conninfo);
    g_free(pg->conninfo);
    pg->conninfo = conninfo;
}

void test_pg_start(struct test_pg *pg)
{
    GError *error = NULL;
    pg->dir = g_dir_make_tmp("vigil-pg-XXXXXX", &error);
    assert_null(error);
    pg->conninfo = NULL;
    start(pg);
}

gboolean test_pg_citus_available(void)
{
    struct test_run r = run_script("check-citus", NULL);
    if (r.status != 0 && r.status != 1)
        test_assert_status(&r, 0, "tools/pg-private check-citus");
    gboolean available = r.status == 0;
    if (!available)
        fprintf(stderr, "%s", r.err);
    test_run_clear(&r);
    return available;
}

void test_pg_start_citus(struct test_pg *pg, unsigned workers)
{
    GError *error = NULL;
    pg->dir = g_dir_make_tmp("vigil-citus-XXXXXX", &error);
    assert_null(error);
    char *n = g_strdup_printf("%u", workers);
    struct test_run r = run_script_more("start-citus", pg->dir, "--workers", n);
    test_assert_status(&r, 0, "tools/pg-private start-citus");
    pg->conninfo = g_strstrip(g_strdup(r.out));
    assert_true(pg->conninfo[0] != '\0');
    test_run_clear(&r);
    g_free(n);
}

void test_pg_restart_citus_worker(const struct test_pg *pg, unsigned worker)
{
    char *dir = g_strdup_printf("%s/worker-%u", pg->dir, worker);
    struct test_run r = run_script("stop", dir);
    test_assert_status(&r, 0, "tools/pg-private stop (a Citus worker)");
    test_run_clear(&r);
    r = run_script("start", dir);
    test_assert_status(&r, 0, "tools/pg-private start (a Citus worker)");
    test_run_clear(&r);
    g_free(dir);
}

void test_pg_stop(struct test_pg *pg)
{
    struct test_run r = run_script("stop", pg->dir);
    test_assert_status(&r, 0, "tools/pg-private stop");
    test_run_clear(&r);
}

void test_pg_restart_after_stop(struct test_pg *pg)
{
    start(pg);
}

void test_pg_cleanup(struct test_pg *pg)
{
    if (pg->dir == NULL)
        return;
    test_pg_stop(pg);
    test_remove_tree(pg->dir);
    g_clear_pointer(&pg->dir, g_free);
    g_clear_pointer(&pg->conninfo, g_free);
}

const char *test_pg_conninfo(const struct test_pg *pg)
{
    return pg->conninfo;
}

char *test_pg_new_database(struct test_pg *pg)
{
    static unsigned made;
    char *name = g_strdup_printf("test_%u", ++made);
    char *sql = g_strdup_printf("CREATE DATABASE %s", name);
    test_pg_exec_in(pg->conninfo, sql);
    /* A keyword given twice: libpq keeps the last. */
    char *conninfo = g_strdup_printf("%s dbname=%s", pg->conninfo, name);
    g_free(sql);
    g_free(name);
    return conninfo;
}

PGconn *test_pg_connect_to(const char *conninfo)
{
    PGconn *db = PQconnectdb(conninfo);
    if (PQstatus(db) != CONNECTION_OK)
        fail_msg("cannot connect to %s: %s", conninfo, PQerrorMessage(db));
    return db;
}

void test_pg_exec_in(const char *conninfo, const char *sql)
{
    PGconn *db = test_pg_connect_to(conninfo);
    PGresult *result = PQexec(db, sql);
    if (PQresultStatus(result) != PGRES_COMMAND_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(result));
    PQclear(result);
    PQfinish(db);
}

/* The single value of `sql`'s single row; fails the test otherwise. */
static char *query_one(const char *conninfo, const char *sql)
{
    PGconn *db = test_pg_connect_to(conninfo);
    PGresult *result = PQexec(db, sql);
    if (PQresultStatus(result) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(result));
    if (PQntuples(result) != 1 || PQnfields(result) != 1)
        fail_msg("%s: %d rows of %d columns, expected one value", sql, PQntuples(result),
                 PQnfields(result));
    char *value = PQgetisnull(result, 0, 0) ? NULL : g_strdup(PQgetvalue(result, 0, 0));
    PQclear(result);
    PQfinish(db);
    return value;
}

guint64 test_pg_query_u64_in(const char *conninfo, const char *sql)
{
    char *text = query_one(conninfo, sql);
    if (text == NULL)
        fail_msg("%s: NULL, expected a number", sql);
    guint64 value = 0;
    GError *error = NULL;
    if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &value, &error))
        fail_msg("%s: %s", sql, error->message);
    g_free(text);
    return value;
}

char *test_pg_query_text_in(const char *conninfo, const char *sql)
{
    return query_one(conninfo, sql);
}

PGconn *test_pg_connect(const struct test_pg *pg)
{
    return test_pg_connect_to(pg->conninfo);
}

void test_pg_exec(const struct test_pg *pg, const char *sql)
{
    test_pg_exec_in(pg->conninfo, sql);
}

guint64 test_pg_query_u64(const struct test_pg *pg, const char *sql)
{
    return test_pg_query_u64_in(pg->conninfo, sql);
}

struct test_pg test_pg_cluster;

int test_pg_group_setup(void **state)
{
    (void)state;
    test_pg_start(&test_pg_cluster);
    return 0;
}

int test_pg_group_teardown(void **state)
{
    (void)state;
    test_pg_cleanup(&test_pg_cluster);
    return 0;
}

int test_pg_group_setup_and(void **state, void (*load)(void))
{
    int status = test_pg_group_setup(state);
    if (status == 0)
        load();
    return status;
}

gboolean test_pg_relation_exists_in(const char *conninfo, const char *name)
{
    char *sql = g_strdup_printf(
        "SELECT count(*) FROM (SELECT to_regclass('%s') AS r) x WHERE r IS NOT NULL", name);
    guint64 n = test_pg_query_u64_in(conninfo, sql);
    g_free(sql);
    return n == 1;
}

guint64 test_pg_query_u64_printf(const char *conninfo, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *sql = g_strdup_vprintf(format, args);
    va_end(args);
    guint64 n = test_pg_query_u64_in(conninfo, sql);
    g_free(sql);
    return n;
}

/* Only a failure waits this long; the poll interval is no synchronisation. */
#define WAIT_LIMIT_US (60 * G_USEC_PER_SEC)
#define WAIT_POLL_US  20000

static void wait_for_count(const char *conninfo, const char *sql, guint64 want, gboolean exactly)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_LIMIT_US;
    guint64 got;
    while ((got = test_pg_query_u64_in(conninfo, sql)) != want && (exactly || got < want)) {
        if (g_get_monotonic_time() > deadline)
            fail_msg("the warehouse never counted %s%" G_GUINT64_FORMAT " (still %" G_GUINT64_FORMAT
                     ") with: %s",
                     exactly ? "" : "at least ", want, got, sql);
        g_usleep(WAIT_POLL_US);
    }
}

void test_pg_wait_for_count_in(const char *conninfo, const char *sql, guint64 at_least)
{
    wait_for_count(conninfo, sql, at_least, FALSE);
}

void test_pg_wait_for_count_equal_in(const char *conninfo, const char *sql, guint64 want)
{
    wait_for_count(conninfo, sql, want, TRUE);
}

void test_pg_assert_text_printf(const char *conninfo, const char *want, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *sql = g_strdup_vprintf(format, args);
    va_end(args);
    char *got = test_pg_query_text_in(conninfo, sql);
    if (g_strcmp0(got, want) != 0)
        fail_msg("%s\n  gave: %s\n  want: %s", sql, got != NULL ? got : "NULL", want);
    g_free(got);
    g_free(sql);
}
