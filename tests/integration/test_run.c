/* Tests of `vigil run`: exit statuses, the report options, the [preload]
 * configuration, and LD_PRELOAD handling. They run the built `vigil`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

struct run {
    int status;
    char *out;
    char *err;
};

/* Runs `vigil ARGS…` with the current environment plus `extra_env`
 * ("NAME=VALUE" strings, NULL-terminated, may be NULL). */
static struct run run_vigil(const char *const *extra_env, const char *first, ...)
{
    const char *cli = g_getenv("VIGIL_CLI");
    if (cli == NULL)
        fail_msg("VIGIL_CLI is not set: run the tests with meson test");
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)cli);
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a != NULL; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);

    char **env = g_get_environ();
    /* The library must be found next to vigil, as a user would have it. */
    env = g_environ_unsetenv(env, "VIGIL_PRELOAD_LIB");
    env = g_environ_unsetenv(env, "LD_PRELOAD");
    env = g_environ_unsetenv(env, "VIGIL_CONFIG");
    for (size_t i = 0; extra_env && extra_env[i]; i++) {
        char **kv = g_strsplit(extra_env[i], "=", 2);
        env = g_environ_setenv(env, kv[0], kv[1] ? kv[1] : "", TRUE);
        g_strfreev(kv);
    }
    struct run r = {0};
    GError *error = NULL;
    int wait_status;
    if (!g_spawn_sync(NULL, (char **)argv->pdata, env, G_SPAWN_DEFAULT, NULL, NULL, &r.out, &r.err,
                      &wait_status, &error))
        fail_msg("cannot run %s: %s", cli, error->message);
    r.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
    g_strfreev(env);
    g_ptr_array_free(argv, TRUE);
    return r;
}

static void run_free(struct run *r)
{
    g_free(r->out);
    g_free(r->err);
}

static void assert_contains(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("\"%s\" does not contain \"%s\"", text, needle);
}

static char *temp_dir(void)
{
    char *dir = g_dir_make_tmp("vigil-test-run-XXXXXX", NULL);
    assert_non_null(dir);
    return dir;
}

static void remove_tree(char *dir)
{
    char *argv[] = {"rm", "-rf", dir, NULL};
    g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
    g_free(dir);
}

/* The one file in `dir` whose name starts with `prefix`, parsed. */
static JsonObject *load_single_report(const char *dir, const char *prefix, JsonParser **parser)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    assert_non_null(d);
    char *path = NULL;
    int found = 0;
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL)
        if (g_str_has_prefix(name, prefix)) {
            found++;
            g_free(path);
            path = g_build_filename(dir, name, NULL);
        }
    g_dir_close(d);
    assert_int_equal(found, 1);
    *parser = json_parser_new();
    GError *error = NULL;
    if (!json_parser_load_from_file(*parser, path, &error))
        fail_msg("%s: %s", path, error->message);
    g_free(path);
    return json_node_get_object(json_parser_get_root(*parser));
}

static void test_exit_status_is_the_programs(void **state)
{
    (void)state;
    struct run r = run_vigil(NULL, "run", "--report=off", "--", "sh", "-c", "exit 3", NULL);
    assert_int_equal(r.status, 3);
    run_free(&r);
    r = run_vigil(NULL, "run", "--report=off", "--", "sh", "-c", "kill -TERM $$", NULL);
    assert_int_equal(r.status, 128 + 15);
    run_free(&r);
}

static void test_failures_of_vigil_itself(void **state)
{
    (void)state;
    struct run r = run_vigil(NULL, "run", "--", "/nonexistent/program", NULL);
    assert_int_equal(r.status, 127);
    assert_contains(r.err, "/nonexistent/program: command not found");
    run_free(&r);
    r = run_vigil(NULL, "run", "--", "/etc/passwd", NULL); /* not executable */
    assert_int_equal(r.status, 126);
    assert_contains(r.err, "cannot run /etc/passwd");
    run_free(&r);
    r = run_vigil(NULL, "run", "--report=xml", "--", "true", NULL);
    assert_int_equal(r.status, 125);
    assert_contains(r.err, "--report=xml: expected text, json or off");
    run_free(&r);
    /* A configuration named but missing is an error, not a silent default. */
    const char *env[] = {"VIGIL_CONFIG=/nonexistent/vigil.conf", NULL};
    r = run_vigil(env, "run", "--", "true", NULL);
    assert_int_equal(r.status, 125);
    assert_contains(r.err, "/nonexistent/vigil.conf");
    run_free(&r);
    r = run_vigil(NULL, "run", NULL);
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "usage: vigil run");
    run_free(&r);
}

static void test_json_report_to_a_path_with_the_pid(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char *report = g_strdup_printf("json:%s/report-%%p.json", dir);
    char *script = g_strdup_printf("printf abc > %s/data", dir);
    struct run r = run_vigil(NULL, "run", "--report", report, "--", "sh", "-c", script, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, ""); /* the report went to the file, not stderr */
    JsonParser *parser;
    JsonObject *o = load_single_report(dir, "report-", &parser);
    assert_int_equal(json_object_get_int_member(o, "vigil_report"), 1);
    assert_int_equal(json_object_get_int_member(o, "io_bytes_written"), 3);
    assert_true(json_object_get_null_member(o, "energy_joule"));
    g_object_unref(parser);
    run_free(&r);
    g_free(script);
    g_free(report);
    remove_tree(dir);
}

static void test_text_report_on_stderr_by_default(void **state)
{
    (void)state;
    struct run r = run_vigil(NULL, "run", "--", "sh", "-c", "printf hello", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "hello"); /* stdout is the program's alone */
    assert_contains(r.err, "== vigil report: sh");
    assert_contains(r.err, "CONSUMED_CPU_SECONDS");
    assert_contains(r.err, "CONSUMED_ENERGY_JOULE      n/a (");
    assert_contains(r.err, "OBSERVED_RUNTIME_MS");
    run_free(&r);
}

static void test_existing_preloads_are_kept(void **state)
{
    (void)state;
    /* /lib/x86_64-linux-gnu/libc.so.6 is harmless to preload twice. */
    const char *env[] = {"LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6", NULL};
    struct run r =
        run_vigil(env, "run", "--report=off", "--", "sh", "-c", "printf %s \"$LD_PRELOAD\"", NULL);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "libvigil-preload.so:/lib/x86_64-linux-gnu/libc.so.6");
    run_free(&r);
}

static void test_preload_section_of_the_config(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char *conf = g_build_filename(dir, "vigil.conf", NULL);
    char *text = g_strdup_printf("[preload]\nreport = %s/cfg-%%p.json\nreport_format = json\n"
                                 "exclude =\n",
                                 dir);
    assert_true(g_file_set_contents(conf, text, -1, NULL));
    /* With nothing excluded, writes to /dev/null are recorded. */
    struct run r =
        run_vigil(NULL, "run", "--config", conf, "--", "sh", "-c", "printf x > /dev/null", NULL);
    assert_int_equal(r.status, 0);
    JsonParser *parser;
    JsonObject *o = load_single_report(dir, "cfg-", &parser);
    JsonObject *activities = json_object_get_object_member(o, "activities");
    assert_int_equal(json_object_get_int_member(activities, "excluded"), 0);
    g_object_unref(parser);
    run_free(&r);

    /* A ring size that is not a power of two stops vigil, naming the key. */
    assert_true(g_file_set_contents(conf, "[preload]\nring_slots = 100\n", -1, NULL));
    r = run_vigil(NULL, "run", "--config", conf, "--", "true", NULL);
    assert_int_equal(r.status, 125);
    assert_contains(r.err, "[preload] ring_slots: expected a power of two");
    run_free(&r);
    g_free(text);
    g_free(conf);
    remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_status_is_the_programs),
        cmocka_unit_test(test_failures_of_vigil_itself),
        cmocka_unit_test(test_json_report_to_a_path_with_the_pid),
        cmocka_unit_test(test_text_report_on_stderr_by_default),
        cmocka_unit_test(test_existing_preloads_are_kept),
        cmocka_unit_test(test_preload_section_of_the_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
