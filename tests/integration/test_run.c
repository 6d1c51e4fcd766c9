/* Tests of `vigil run`: exit statuses, the report options, the [preload]
 * configuration, and LD_PRELOAD handling. They run the built `vigil` in a
 * clean environment (test_run_vigil_words: no LD_PRELOAD, no VIGIL_*
 * variable), so the library must be found next to vigil, as a user's
 * would be, and no configuration is read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "test_report.h"
#include "test_support.h"
#include "test_main.h"

/* The report in the one file in `dir` whose name starts with `prefix`. */
static struct test_report load_single_report(const char *dir, const char *prefix)
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
    struct test_report rep = test_report_load(path);
    g_free(path);
    return rep;
}

static void test_exit_status_is_the_programs(void **state)
{
    (void)state;
    struct test_run r =
        test_run_vigil_words(NULL, "run", "--report=off", "--", "sh", "-c", "exit 3", NULL);
    assert_int_equal(r.status, 3);
    test_run_clear(&r);
    r = test_run_vigil_words(NULL, "run", "--report=off", "--", "sh", "-c", "kill -TERM $$", NULL);
    assert_int_equal(r.status, 128 + 15);
    test_run_clear(&r);
}

static void test_failures_of_vigil_itself(void **state)
{
    (void)state;
    struct test_run r = test_run_vigil_words(NULL, "run", "--", "/nonexistent/program", NULL);
    assert_int_equal(r.status, 127);
    test_assert_contains(r.err, "/nonexistent/program: command not found");
    test_run_clear(&r);
    r = test_run_vigil_words(NULL, "run", "--", "/etc/passwd", NULL); /* not executable */
    assert_int_equal(r.status, 126);
    test_assert_contains(r.err, "cannot run /etc/passwd");
    test_run_clear(&r);
    r = test_run_vigil_words(NULL, "run", "--report=xml", "--", "true", NULL);
    assert_int_equal(r.status, 125);
    test_assert_contains(r.err, "--report=xml: expected text, json or off");
    test_run_clear(&r);
    /* A --config on the command line that cannot be read is the user's
     * own mistake, like a bad --report: refused, naming it. */
    r = test_run_vigil_words(NULL, "run", "--config", "/nonexistent/vigil.conf", "--", "true",
                             NULL);
    assert_int_equal(r.status, 125);
    test_assert_contains(r.err, "--config /nonexistent/vigil.conf: cannot read it");
    test_run_clear(&r);
    /* One the environment names (a site's module file) is the admin's:
     * the program runs, with a warning that names it. */
    const char *env[] = {"VIGIL_CONFIG=/nonexistent/vigil.conf", NULL};
    r = test_run_vigil_words(env, "run", "--report=off", "--", "sh", "-c", "exit 4", NULL);
    assert_int_equal(r.status, 4);
    test_assert_contains(r.err, "vigil run: warning: the configuration has problems");
    test_assert_contains(r.err, "/nonexistent/vigil.conf");
    test_run_clear(&r);
    r = test_run_vigil_words(NULL, "run", NULL);
    assert_int_equal(r.status, 2);
    test_assert_contains(r.err, "usage: vigil run");
    test_run_clear(&r);
}

static void test_json_report_to_a_path_with_the_pid(void **state)
{
    const char *dir = *state;
    char *report = g_strdup_printf("json:%s/report-%%p.json", dir);
    char *script = g_strdup_printf("printf abc > %s/data", dir);
    struct test_run r =
        test_run_vigil_words(NULL, "run", "--report", report, "--", "sh", "-c", script, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, ""); /* the report went to the file, not stderr */
    struct test_report rep = load_single_report(dir, "report-");
    JsonObject *o = rep.root;
    assert_int_equal(json_object_get_int_member(o, "vigil_report"), 1);
    assert_int_equal(json_object_get_int_member(o, "io_bytes_written"), 3);
    assert_true(json_object_get_null_member(o, "energy_joule"));
    test_report_free(&rep);
    test_run_clear(&r);
    g_free(script);
    g_free(report);
}

static void test_text_report_on_stderr_by_default(void **state)
{
    (void)state;
    struct test_run r = test_run_vigil_words(NULL, "run", "--", "sh", "-c", "printf hello", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "hello"); /* stdout is the program's alone */
    test_assert_contains(r.err, "== vigil report: sh");
    test_assert_contains(r.err, "\nRUN                        ");
    test_assert_contains(r.err, "CONSUMED_CPU_SECONDS");
    test_assert_contains(r.err, "CONSUMED_ENERGY_JOULE      n/a (");
    test_assert_contains(r.err, "OBSERVED_RUNTIME_MS");
    test_run_clear(&r);
}

/* The run: a fresh key, which every process of the program shares (here a
 * shell and the cat it starts), shown in the reports; one given in
 * VIGIL_RUN_ID or by a launcher is kept; a malformed one is replaced, and
 * said so. */
static void test_run_key(void **state)
{
    const char *dir = *state;
    char *report = g_strdup_printf("json:%s/report-%%p.json", dir);
    struct test_run r = test_run_vigil_words(NULL, "run", "--report", report, "--", "sh", "-c",
                                             "printf %s \"$VIGIL_RUN_ID\"; cat /dev/null", NULL);
    test_assert_status(&r, 0, "vigil run");
    char *host = g_strdup_printf("%s-", g_get_host_name());
    assert_true(g_str_has_prefix(r.out, host)); /* HOST-PID-NS */
    GDir *d = g_dir_open(dir, 0, NULL);
    int reports = 0;
    for (const char *name; (name = g_dir_read_name(d)) != NULL; reports++) {
        char *path = g_build_filename(dir, name, NULL);
        struct test_report rep = test_report_load(path);
        assert_string_equal(test_report_string(&rep, "run_key"), r.out);
        test_report_free(&rep);
        g_unlink(path);
        g_free(path);
    }
    g_dir_close(d);
    assert_int_equal(reports, 2); /* sh and cat */
    test_run_clear(&r);

    const char *given[] = {"VIGIL_RUN_ID=nightly-42", NULL};
    r = test_run_vigil_words(given, "run", "--report=off", "--", "sh", "-c",
                             "printf %s \"$VIGIL_RUN_ID\"", NULL);
    assert_string_equal(r.out, "nightly-42");
    test_run_clear(&r);

    /* Under Slurm the library finds the job step itself: every rank's own
     * `vigil run` leaves it be, and the report names it. */
    const char *slurm[] = {"SLURM_JOB_ID=1234", "SLURM_STEP_ID=5", NULL};
    r = test_run_vigil_words(slurm, "run", "--report", report, "--", "sh", "-c",
                             "printf %s \"${VIGIL_RUN_ID-unset}\"", NULL);
    assert_string_equal(r.out, "unset");
    struct test_report rep = load_single_report(dir, "report-");
    assert_string_equal(test_report_string(&rep, "run_key"), "slurm-1234.5");
    test_report_free(&rep);
    test_run_clear(&r);

    const char *bad[] = {"VIGIL_RUN_ID=two words", NULL};
    r = test_run_vigil_words(bad, "run", "--report=off", "--", "sh", "-c",
                             "printf %s \"$VIGIL_RUN_ID\"", NULL);
    test_assert_err(&r, 0, "vigil run with a malformed VIGIL_RUN_ID",
                    "vigil run: VIGIL_RUN_ID is not 1 to 255 printable ASCII "
                    "characters without spaces: ignored",
                    NULL);
    assert_true(g_str_has_prefix(r.out, host));
    test_run_clear(&r);
    g_free(host);
    g_free(report);
}

static void test_existing_preloads_are_kept(void **state)
{
    (void)state;
    /* /lib/x86_64-linux-gnu/libc.so.6 is harmless to preload twice. */
    const char *env[] = {"LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6", NULL};
    struct test_run r = test_run_vigil_words(env, "run", "--report=off", "--", "sh", "-c",
                                             "printf %s \"$LD_PRELOAD\"", NULL);
    assert_int_equal(r.status, 0);
    test_assert_contains(r.out, "libvigil-preload.so:/lib/x86_64-linux-gnu/libc.so.6");
    test_run_clear(&r);
}

static void test_preload_section_of_the_config(void **state)
{
    const char *dir = *state;
    char *conf = test_new_filef(dir, "vigil.conf",
                                "[preload]\nreport = %s/cfg-%%p.json\nreport_format = json\n"
                                "exclude =\n",
                                dir);
    /* With nothing excluded, writes to /dev/null are recorded. */
    struct test_run r = test_run_vigil_words(NULL, "run", "--config", conf, "--", "sh", "-c",
                                             "printf x > /dev/null", NULL);
    assert_int_equal(r.status, 0);
    struct test_report rep = load_single_report(dir, "cfg-");
    JsonObject *o = rep.root;
    JsonObject *activities = json_object_get_object_member(o, "activities");
    assert_int_equal(json_object_get_int_member(activities, "excluded"), 0);
    test_report_free(&rep);
    test_run_clear(&r);

    /* A ring size that is not a power of two: the program runs with the
     * default, and the warning names the key. */
    g_free(test_new_file(dir, "vigil.conf", "[preload]\nring_slots = 100\n"));
    r = test_run_vigil_words(NULL, "run", "--config", conf, "--report=off", "--", "sh", "-c",
                             "printf %s \"${VIGIL_RING_SLOTS-unset}\"", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "unset");
    test_assert_contains(r.err, "[preload] ring_slots: expected a power of two, got 100");
    test_run_clear(&r);

    /* A typo elsewhere in the file (a key of [daemon] misspelt, a value of
     * the wrong type): the program still runs, the valid keys of the same
     * file are kept, and the warning names file, section, key and what was
     * expected. */
    g_free(test_new_filef(dir, "vigil.conf",
                          "[preload]\nreport = %s/typo-%%p.json\nreport_format = json\n"
                          "ring_slots = many\n[daemon]\nsockett = /x\n",
                          dir));
    r = test_run_vigil_words(NULL, "run", "--config", conf, "--", "sh", "-c", "exit 7", NULL);
    test_assert_err(&r, 7, "vigil run --config (a typo)",
                    "vigil run: warning: the configuration has problems",
                    "[daemon] sockett: unknown key; did you mean 'socket'?",
                    "[preload] ring_slots:", conf, NULL);
    assert_int_equal(test_count_files(dir, "typo-", ""), 1); /* [preload] report was kept */
    test_run_clear(&r);
    /* `vigil config check` still fails on it, for the admin. */
    r = test_run_vigil_words(NULL, "config", "check", "--config", conf, NULL);
    assert_int_not_equal(r.status, 0);
    test_assert_contains(r.err, "sockett");
    test_run_clear(&r);
    g_free(conf);
}

/* A report file in a folder that does not exist: refused before the
 * program starts when the user asked for it (--report, VIGIL_REPORT),
 * since it would be lost at exit; from the configuration (the admin's) the
 * program runs and the library prints the report on stderr, saying why. */
static void test_report_in_a_missing_folder(void **state)
{
    const char *dir = *state;
    char *marker = g_build_filename(dir, "ran", NULL);
    char *script = g_strdup_printf("touch %s; exit 5", marker);
    char *missing = g_build_filename(dir, "missing", "r-%p.json", NULL);
    char *option = g_strdup_printf("--report=json:%s", missing);
    struct test_run r = test_run_vigil_words(NULL, "run", option, "--", "sh", "-c", script, NULL);
    g_free(option);
    assert_int_equal(r.status, 125);
    test_assert_contains(r.err, "--report: the report cannot be written to");
    test_assert_contains(r.err, "/missing: No such file or directory");
    assert_false(g_file_test(marker, G_FILE_TEST_EXISTS));
    test_run_clear(&r);

    char *variable = g_strdup_printf("VIGIL_REPORT=%s", missing);
    const char *env[] = {variable, NULL};
    r = test_run_vigil_words(env, "run", "--", "sh", "-c", script, NULL);
    g_free(variable);
    assert_int_equal(r.status, 125);
    test_assert_contains(r.err, "VIGIL_REPORT: the report cannot be written to");
    assert_false(g_file_test(marker, G_FILE_TEST_EXISTS));
    test_run_clear(&r);

    char *conf = test_new_filef(dir, "missing.conf",
                                "[preload]\nreport = %s\nreport_format = json\n", missing);
    g_free(missing);
    r = test_run_vigil_words(NULL, "run", "--config", conf, "--", "sh", "-c", script, NULL);
    g_free(conf);
    /* Exit 5 is the program's, not changed by the library. */
    test_assert_err(&r, 5, "vigil run --config missing.conf",
                    "vigil run: warning: the configuration's [preload] report",
                    "vigil: cannot write the report to",
                    "No such file or directory; here it is instead:\n{", "\"vigil_report\"", NULL);
    assert_true(g_file_test(marker, G_FILE_TEST_EXISTS));
    test_run_clear(&r);
    g_free(script);
    g_free(marker);
}

/* [preload] exclude becomes VIGIL_EXCLUDE with ';' between prefixes, the
 * one separator; the old ':' form in the environment is passed on as it is,
 * with a warning. */
static void test_exclude_separator(void **state)
{
    const char *dir = *state;
    char *conf = test_new_file(dir, "exclude.conf", "[preload]\nexclude = /scratch;/dev\n");
    struct test_run r = test_run_vigil_words(NULL, "run", "--config", conf, "--report=off", "--",
                                             "sh", "-c", "printf %s \"$VIGIL_EXCLUDE\"", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "/scratch;/dev");
    assert_string_equal(r.err, "");
    test_run_clear(&r);
    /* One prefix holding a ':' keeps it: a ';' after it says so. */
    assert_true(g_file_set_contents(conf, "[preload]\nexclude = /dev/disk/by-path/pci-0000:00\n",
                                    -1, NULL));
    r = test_run_vigil_words(NULL, "run", "--config", conf, "--report=off", "--", "sh", "-c",
                             "printf %s \"$VIGIL_EXCLUDE\"", NULL);
    assert_string_equal(r.out, "/dev/disk/by-path/pci-0000:00;");
    test_run_clear(&r);
    const char *old_form[] = {"VIGIL_EXCLUDE=/proc:/dev", NULL};
    r = test_run_vigil_words(old_form, "run", "--report=off", "--", "sh", "-c",
                             "printf %s \"$VIGIL_EXCLUDE\"", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "/proc:/dev");
    test_assert_contains(r.err, "vigil run: warning: VIGIL_EXCLUDE=/proc:/dev separates its "
                                "prefixes with ':', which is deprecated: write ';'");
    test_run_clear(&r);
    g_free(conf);
}

/* Settings have one order: the command line, then the environment, then
 * the configuration file, then the default. */
static void test_settings_order(void **state)
{
    const char *dir = *state;
    char *conf = test_new_filef(dir, "order.conf",
                                "[preload]\nreport = %s/order-file-%%p.json\n"
                                "report_format = json\n",
                                dir);
    /* The environment's VIGIL_REPORT=off over the file's report. */
    const char *off[] = {"VIGIL_REPORT=off", NULL};
    struct test_run r = test_run_vigil_words(off, "run", "--config", conf, "--", "true", NULL);
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.err, "vigil report"));
    assert_int_equal(test_count_files(dir, "order-file-", ""), 0);
    test_run_clear(&r);
    /* The command line over both. */
    char *option = g_strdup_printf("--report=json:%s/order-cli-%%p.json", dir);
    r = test_run_vigil_words(off, "run", "--config", conf, option, "--", "true", NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(test_count_files(dir, "order-cli-", ""), 1);
    assert_int_equal(test_count_files(dir, "order-file-", ""), 0);
    test_run_clear(&r);
    /* And the file over the default (stderr), with nothing in the way. */
    r = test_run_vigil_words(NULL, "run", "--config", conf, "--", "true", NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(test_count_files(dir, "order-file-", ""), 1);
    test_run_clear(&r);
    g_free(option);
    g_free(conf);
}

/* Installed into a prefix, vigil finds its library there (and libvigil
 * through its relative rpath), with nothing set in the environment. */
static void test_installed_vigil_finds_its_library(void **state)
{
    const char *dir = *state;
    const char *install[] = {
        "meson",        "install", "-C", test_env_or_fail("VIGIL_BUILD_DIR"), "--destdir", dir,
        "--no-rebuild", "--quiet", NULL};
    struct test_run r = test_run_program(NULL, install, NULL);
    test_assert_status(&r, 0, "meson install");
    test_run_clear(&r);

    char *vigil = NULL;
    const char *find[] = {"find", dir, "-path", "*/bin/vigil", "-type", "f", NULL};
    r = test_run_program(NULL, find, NULL);
    vigil = g_strstrip(g_strdup(r.out));
    assert_true(vigil[0] == '/');
    test_run_clear(&r);

    char **env = test_clean_environment(NULL);
    const char *argv[] = {
        vigil, "run", "--report=off", "--", "sh", "-c", "printf %s \"$LD_PRELOAD\"", NULL};
    r = test_run_program(NULL, argv, env);
    test_assert_status(&r, 0, "the installed vigil run");
    /* The library it preloads is the installed one, under the prefix. */
    test_assert_contains(r.out, dir);
    test_assert_contains(r.out, "/vigil/libvigil-preload.so");
    test_run_clear(&r);
    g_strfreev(env);
    g_free(vigil);
}

TEST_MAIN(cmocka_unit_test(test_exit_status_is_the_programs),
          cmocka_unit_test(test_failures_of_vigil_itself),
          cmocka_unit_test_setup_teardown(test_json_report_to_a_path_with_the_pid, test_make_dir,
                                          test_remove_dir),
          cmocka_unit_test(test_text_report_on_stderr_by_default),
          cmocka_unit_test(test_existing_preloads_are_kept),
          cmocka_unit_test_setup_teardown(test_run_key, test_make_dir, test_remove_dir),
          cmocka_unit_test_setup_teardown(test_installed_vigil_finds_its_library, test_make_dir,
                                          test_remove_dir),
          cmocka_unit_test_setup_teardown(test_preload_section_of_the_config, test_make_dir,
                                          test_remove_dir),
          cmocka_unit_test_setup_teardown(test_settings_order, test_make_dir, test_remove_dir),
          cmocka_unit_test_setup_teardown(test_report_in_a_missing_folder, test_make_dir,
                                          test_remove_dir),
          cmocka_unit_test_setup_teardown(test_exclude_separator, test_make_dir, test_remove_dir))
