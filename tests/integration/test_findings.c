/* Integration tests of the report's findings (report/insight.c) on real
 * workloads (insight-workloads): each must raise exactly the findings its
 * pattern calls for, in the JSON report's "findings", and a clean large
 * sequential write none. Standalone, so with the default thresholds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "test_report.h"
#include "test_support.h"
#include "test_main.h"

static int setup(void **state)
{
    *state = g_dir_make_tmp("vigil-findings-XXXXXX", NULL);
    return *state != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    test_remove_tree(*state);
    g_free(*state);
    return 0;
}

/* `insight-workloads WORKLOAD` under the library in `dir`, without vigild;
 * its JSON report. */
static struct test_report report_of(const char *dir, const char *workload)
{
    char *program =
        g_build_filename(test_env_or_fail("VIGIL_TEST_PROGRAMS"), "insight-workloads", NULL);
    const char *argv[] = {program, workload, NULL};
    char *report = g_strdup_printf("VIGIL_REPORT=%s/report-%%p.json", dir);
    const char *vars[] = {report, "VIGIL_REPORT_FORMAT=json", "VIGIL_SOCKET=/nonexistent", NULL};
    char **env = test_clean_environment(vars);
    env = g_environ_setenv(env, "LD_PRELOAD", test_env_or_fail("VIGIL_PRELOAD_LIB"), TRUE);
    struct test_run r = test_run_program(dir, argv, env);
    test_assert_status(&r, 0, workload);
    char *path = g_strdup_printf("%s/report-%ld.json", dir, strtol(r.out, NULL, 10));
    struct test_report rep = test_report_load(path);
    test_run_clear(&r);
    g_free(path);
    g_strfreev(env);
    g_free(report);
    g_free(program);
    return rep;
}

/* The file of the report whose path ends in "/NAME". */
static JsonObject *file_named(const struct test_report *rep, const char *name)
{
    JsonArray *files = json_node_get_array(test_report_node(rep, "files"));
    char *suffix = g_strconcat("/", name, NULL);
    JsonObject *found = NULL;
    for (guint i = 0; i < json_array_get_length(files) && found == NULL; i++) {
        JsonObject *f = json_array_get_object_element(files, i);
        if (g_str_has_suffix(json_object_get_string_member(f, "path"), suffix))
            found = f;
    }
    if (found == NULL)
        fail_msg("%s is not in the report's files", name);
    g_free(suffix);
    return found;
}

/* The report's findings are exactly `expected` ("id@file" for one about
 * a file, "id" for one about the run; space-separated, in order), from the
 * default thresholds. */
static void assert_findings(const struct test_report *rep, const char *workload,
                            const char *expected)
{
    assert_string_equal(test_report_string(rep, "findings_thresholds"), "defaults");
    JsonArray *findings = json_node_get_array(test_report_node(rep, "findings"));
    GString *got = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *f = json_array_get_object_element(findings, i);
        g_string_append_printf(got, "%s%s", i > 0 ? " " : "",
                               json_object_get_string_member(f, "id"));
        if (!json_object_get_null_member(f, "file"))
            g_string_append_printf(got, "@%s",
                                   strrchr(json_object_get_string_member(f, "file"), '/') + 1);
        /* Every finding says what it saw and what to do. */
        assert_true(strlen(json_object_get_string_member(f, "evidence")) > 10);
        assert_true(strlen(json_object_get_string_member(f, "advice")) > 10);
        assert_true(json_object_get_null_member(f, "rank")); /* not an MPI rank */
    }
    if (strcmp(got->str, expected) != 0)
        fail_msg("%s: findings \"%s\", expected \"%s\"", workload, got->str, expected);
    g_string_free(got, TRUE);
}

static void expect(void **state, const char *workload, const char *expected)
{
    struct test_report rep = report_of(*state, workload);
    assert_findings(&rep, workload, expected);
    test_report_free(&rep);
}

static void test_small_accesses(void **state)
{
    expect(state, "small", "small_accesses@small.dat");
}

static void test_misaligned(void **state)
{
    expect(state, "misaligned", "small_accesses@misaligned.dat misaligned_accesses@misaligned.dat");
    /* The count behind it: of the 2000 1 KiB writes in a row, those at a
     * multiple of the file system's block (reported: 4096 on most) start
     * on it, the rest do not. */
    struct test_report rep = report_of(*state, "misaligned");
    JsonObject *posix = json_object_get_object_member(file_named(&rep, "misaligned.dat"), "posix");
    gint64 block = json_object_get_int_member(posix, "file_alignment_bytes");
    assert_true(block >= 2048 && block % 1024 == 0);
    gint64 aligned = (2000 + block / 1024 - 1) / (block / 1024);
    assert_int_equal(json_object_get_int_member(posix, "file_not_aligned"), 2000 - aligned);
    test_report_free(&rep);
}

static void test_random(void **state)
{
    expect(state, "random", "random_access@random.dat");
}

static void test_reopen(void **state)
{
    expect(state, "reopen", "metadata_heavy repeated_open@reopen.dat");
}

static void test_fsync(void **state)
{
    expect(state, "fsync", "fsync_per_write@fsync.dat");
}

static void test_flushed_stdio(void **state)
{
    expect(state, "flushed", "unbuffered_stdio@flushed.dat");
}

static void test_unbuffered_stdio(void **state)
{
    expect(state, "unbuffered", "unbuffered_stdio@unbuffered.dat");
}

static void test_clean_says_nothing(void **state)
{
    expect(state, "clean", "");
}

#define WITH_DIR(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
TEST_MAIN(WITH_DIR(test_small_accesses), WITH_DIR(test_misaligned), WITH_DIR(test_random),
          WITH_DIR(test_reopen), WITH_DIR(test_fsync), WITH_DIR(test_flushed_stdio),
          WITH_DIR(test_unbuffered_stdio), WITH_DIR(test_clean_says_nothing))
