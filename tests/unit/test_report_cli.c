/* Tests of `vigil report` that need no database: its usage errors, and
 * what it says when the warehouse cannot be reached or the configuration
 * is wrong. (Printing a stored report is tested against a real
 * PostgreSQL, suite pg.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_support.h"
#include "test_main.h"

/* Runs `vigil report ARGS…` (NULL-terminated) in a clean environment
 * (no VIGIL_*, and no PG* variable that could point at a real server). */
static struct test_run run_report(const char *first, ...)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)test_env_or_fail("VIGIL_CLI"));
    g_ptr_array_add(argv, "report");
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a != NULL; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    char **env = test_clean_environment(NULL);
    const char *const pg_vars[] = {"PGHOST", "PGPORT", "PGDATABASE", "PGSERVICE", "PGUSER"};
    for (size_t i = 0; i < G_N_ELEMENTS(pg_vars); i++)
        env = g_environ_unsetenv(env, pg_vars[i]);
    struct test_run r = test_run_program(NULL, (const char *const *)argv->pdata, env);
    g_strfreev(env);
    g_ptr_array_free(argv, TRUE);
    return r;
}

/* vigil.conf in `dir` with `text`; its path (g_free it). */
static char *write_config(const char *dir, const char *text)
{
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* A folder where a server's socket would be, and none is. */
static void test_unreachable_warehouse(void **state)
{
    const char *dir = *state;
    char *text = g_strdup_printf("[warehouse]\nconninfo = host=%s dbname=vigil user=vigil\n", dir);
    char *config = write_config(dir, text);
    struct test_run r = run_report("--config", config, "42", NULL);
    test_assert_status(&r, 1, "vigil report with no server");
    assert_string_equal(r.out, "");
    /* It says it could not connect, and where it tried. */
    test_assert_contains(r.err, "vigil report: cannot connect to the warehouse (host ");
    test_assert_contains(r.err, dir);
    test_assert_contains(r.err, "No such file or directory");
    test_run_clear(&r);
    g_free(config);
    g_free(text);
}

static void test_configuration_with_problems(void **state)
{
    const char *dir = *state;
    char *config = write_config(dir, "[warehouse]\nconinfo = host=/nowhere\n");
    struct test_run r = run_report("--config", config, "42", NULL);
    test_assert_status(&r, 1, "vigil report with a misspelt key");
    test_assert_contains(r.err, "vigil report: the configuration has problems:");
    test_assert_contains(r.err, "[warehouse] coninfo");
    test_run_clear(&r);
    g_free(config);
}

static void test_usage_errors(void **state)
{
    (void)state;
    struct test_run r = run_report(NULL);
    test_assert_status(&r, 2, "vigil report without a run");
    test_assert_contains(r.err, "usage: vigil report RUN");
    test_run_clear(&r);

    r = run_report("1", "2", NULL);
    test_assert_status(&r, 2, "vigil report with two runs");
    test_assert_contains(r.err, "usage: vigil report RUN");
    test_run_clear(&r);

    r = run_report("--format", "xml", "1", NULL);
    test_assert_status(&r, 2, "vigil report --format xml");
    test_assert_contains(r.err, "vigil report: --format xml: expected text or json");
    test_run_clear(&r);

    const char *const bad_processes[] = {"x12", "12@", "@node", "1x@node"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad_processes); i++) {
        r = run_report("--process", bad_processes[i], "1", NULL);
        test_assert_status(&r, 2, "vigil report with a bad --process");
        char *expected = g_strdup_printf("vigil report: --process %s: expected PID or PID@HOST",
                                         bad_processes[i]);
        test_assert_contains(r.err, expected);
        g_free(expected);
        test_run_clear(&r);
    }
}

TEST_MAIN(cmocka_unit_test_setup_teardown(test_unreachable_warehouse, test_make_dir,
                                          test_remove_dir),
          cmocka_unit_test_setup_teardown(test_configuration_with_problems, test_make_dir,
                                          test_remove_dir),
          cmocka_unit_test(test_usage_errors))
