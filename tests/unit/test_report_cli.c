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

/* A test given a fresh folder in *state. */
#define IN_DIR(f) cmocka_unit_test_setup_teardown(f, test_make_dir, test_remove_dir)

/* `vigil report ARGS…` (NULL-terminated) in a clean environment, without
 * any PG* variable either, which could point at a real server. */
static struct test_run run_report(const char *const *args)
{
    char **env = test_clean_environment(NULL);
    const char *const pg_vars[] = {"PGHOST", "PGPORT", "PGDATABASE", "PGSERVICE", "PGUSER"};
    for (size_t i = 0; i < G_N_ELEMENTS(pg_vars); i++)
        env = g_environ_unsetenv(env, pg_vars[i]);
    struct test_run r = test_run_vigil_env(NULL, env, "report", args);
    g_strfreev(env);
    return r;
}

/* `vigil report --config DIR/vigil.conf 42`, vigil.conf holding `text`:
 * it fails (status 1), saying `what`. */
static struct test_run report_with_config(const char *dir, const char *text, const char *what)
{
    test_write_file(dir, "vigil.conf", text);
    char *config = g_build_filename(dir, "vigil.conf", NULL);
    struct test_run r = run_report((const char *const[]){"--config", config, "42", NULL});
    test_assert_status(&r, 1, what);
    g_free(config);
    return r;
}

/* A folder where a server's socket would be, and none is. */
static void test_unreachable_warehouse(void **state)
{
    const char *dir = *state;
    char *text = g_strdup_printf("[warehouse]\nconninfo = host=%s dbname=vigil user=vigil\n", dir);
    struct test_run r = report_with_config(dir, text, "vigil report with no server");
    assert_string_equal(r.out, "");
    /* It says it could not connect, and where it tried. */
    test_assert_contains(r.err, "vigil report: cannot connect to the warehouse (host ");
    test_assert_contains(r.err, dir);
    test_assert_contains(r.err, "No such file or directory");
    test_run_clear(&r);
    g_free(text);
}

static void test_configuration_with_problems(void **state)
{
    struct test_run r = report_with_config(*state, "[warehouse]\nconinfo = host=/nowhere\n",
                                           "vigil report with a misspelt key");
    test_assert_contains(r.err, "vigil report: the configuration has problems:");
    test_assert_contains(r.err, "[warehouse] coninfo");
    test_run_clear(&r);
}

/* Each is refused before anything is read: status 2, saying `says`. */
static const struct {
    const char *args[4];
    const char *says;
} usage_errors[] = {
    {{NULL}, "usage: vigil report RUN"},
    {{"1", "2"}, "usage: vigil report RUN"},
    {{"--format", "xml", "1"}, "vigil report: --format xml: expected text or json"},
    {{"--process", "x12", "1"}, "vigil report: --process x12: expected PID or PID@HOST"},
    {{"--process", "12@", "1"}, "vigil report: --process 12@: expected PID or PID@HOST"},
    {{"--process", "@node", "1"}, "vigil report: --process @node: expected PID or PID@HOST"},
    {{"--process", "1x@node", "1"}, "vigil report: --process 1x@node: expected PID or PID@HOST"},
};

static void test_usage_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < G_N_ELEMENTS(usage_errors); i++) {
        struct test_run r = run_report(usage_errors[i].args);
        test_assert_status(&r, 2, usage_errors[i].says);
        test_assert_contains(r.err, usage_errors[i].says);
        test_run_clear(&r);
    }
}

TEST_MAIN(IN_DIR(test_unreachable_warehouse), IN_DIR(test_configuration_with_problems),
          cmocka_unit_test(test_usage_errors))
