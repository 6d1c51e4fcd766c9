/* Tests of the `vigil` program itself: runs the built binary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_support.h"

/* Runs `vigil ARGS…` (NULL-terminated) with our environment. */
static struct test_run run_vigil(const char *first, ...)
{
    const char *cli = test_env_or_fail("VIGIL_CLI");
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)cli);
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a != NULL; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    struct test_run r = test_run_program(NULL, (const char *const *)argv->pdata, NULL);
    g_ptr_array_free(argv, TRUE);
    return r;
}

/* A folder with vigil.conf (and conf.d/ entries); removed by remove_tree. */
static char *make_config(const char *main_text, const char *dropin_name, const char *dropin)
{
    char *dir = g_dir_make_tmp("vigil-test-cli-XXXXXX", NULL);
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    assert_true(g_file_set_contents(path, main_text, -1, NULL));
    if (dropin_name != NULL) {
        char *confd = g_build_filename(dir, "conf.d", NULL);
        g_mkdir(confd, 0700);
        char *p = g_build_filename(confd, dropin_name, NULL);
        assert_true(g_file_set_contents(p, dropin, -1, NULL));
        g_free(p);
        g_free(confd);
    }
    g_free(dir);
    return path;
}

static void remove_tree(char *config_path)
{
    char *dir = g_path_get_dirname(config_path);
    test_remove_tree(dir);
    g_free(dir);
    g_free(config_path);
}

static void test_version(void **state)
{
    (void)state;
    struct test_run r = run_vigil("--version", NULL);
    assert_int_equal(r.status, 0);
    assert_true(g_str_has_prefix(r.out, "vigil "));
    test_run_clear(&r);
}

static void test_unknown_command_is_a_usage_error(void **state)
{
    (void)state;
    struct test_run r = run_vigil("frobnicate", NULL);
    assert_int_equal(r.status, 2);
    test_assert_contains(r.err, "unknown command 'frobnicate'");
    test_run_clear(&r);
    r = run_vigil("config", "chek", NULL);
    assert_int_equal(r.status, 2);
    test_assert_contains(r.err, "usage: vigil config check");
    test_run_clear(&r);
}

static void test_config_check_prints_the_effective_config(void **state)
{
    (void)state;
    char *path = make_config("[log]\nlevel = info\n", "50-debug.conf", "[log]\nlevel = debug\n");
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 0);
    test_assert_contains(r.out, "[log]");
    test_assert_contains(r.out, "level = debug");
    test_assert_contains(r.out, "50-debug.conf"); /* where the value came from */
    test_run_clear(&r);
    remove_tree(path);
}

static void test_config_check_names_a_misspelt_key(void **state)
{
    (void)state;
    char *path = make_config("[log]\nlevle = debug\n", NULL, NULL);
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, path);
    test_assert_contains(r.err, "[log] levle");
    test_assert_contains(r.err, "did you mean 'level'");
    assert_string_equal(r.out, "");
    test_run_clear(&r);
    remove_tree(path);
}

static void test_config_check_reports_every_problem(void **state)
{
    (void)state;
    char *path = make_config("[log]\nlevel = loud\n[lgo]\n", "10-x.conf", "[log]\nlevel = warn\n");
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "\"loud\"");
    test_assert_contains(r.err, "[lgo]");
    test_assert_contains(r.err, "10-x.conf");
    test_assert_contains(r.err, "\"warn\"");
    test_run_clear(&r);
    remove_tree(path);
}

static void test_config_check_of_a_missing_file(void **state)
{
    (void)state;
    struct test_run r = run_vigil("config", "check", "--config", "/nonexistent/vigil.conf", NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "/nonexistent/vigil.conf");
    test_run_clear(&r);
}

static void test_config_check_checks_plugin_sections(void **state)
{
    (void)state;
    const char *plugins = test_env_or_fail("VIGIL_TEST_PLUGIN_DIR");
    char *path = make_config("[provider.test-counter]\nsetp = 2\n", NULL, NULL);
    struct test_run r =
        run_vigil("config", "check", "--config", path, "--plugin-dir", plugins, NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "[provider.test-counter] setp");
    test_assert_contains(r.err, "did you mean 'step'");
    test_run_clear(&r);
    remove_tree(path);
}

/* Run from the build tree, vigil finds the providers next to it: their
 * sections are checked against their own keys with no --plugin-dir. */
static void test_config_check_finds_the_providers(void **state)
{
    (void)state;
    char *path = make_config("[provider.energy]\nsource = estimate\nidel_w = 40\n", NULL, NULL);
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "[provider.energy] idel_w");
    test_assert_contains(r.err, "did you mean 'idle_w'");
    test_run_clear(&r);
    remove_tree(path);

    path = make_config("[provider.energy]\nsource = estimate\nidle_w = 40\n", NULL, NULL);
    r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 0);
    test_assert_contains(r.out, "[provider.energy]");
    test_assert_contains(r.out, "idle_w = 40");
    test_run_clear(&r);
    remove_tree(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_unknown_command_is_a_usage_error),
        cmocka_unit_test(test_config_check_prints_the_effective_config),
        cmocka_unit_test(test_config_check_names_a_misspelt_key),
        cmocka_unit_test(test_config_check_reports_every_problem),
        cmocka_unit_test(test_config_check_of_a_missing_file),
        cmocka_unit_test(test_config_check_checks_plugin_sections),
        cmocka_unit_test(test_config_check_finds_the_providers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
