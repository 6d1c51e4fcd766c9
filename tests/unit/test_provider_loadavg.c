/* Tests of the loadavg provider against fixture /proc/loadavg files, and
 * once against the real one. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_provider.h"
#include "test_support.h"

#define LOADAVG "proc/loadavg"

static void open_at(struct test_provider *p, const char *root)
{
    char *config = g_strdup_printf("[provider.loadavg]\nroot = %s\n", root);
    test_provider_open(p, "loadavg", config);
    g_free(config);
}

static void start_or_fail(struct test_provider *p)
{
    GError *error = NULL;
    if (!test_provider_start(p, &error))
        fail_msg("start: %s", error->message);
}

static GHashTable *read_or_fail(struct test_provider *p)
{
    GError *error = NULL;
    GHashTable *samples = test_provider_read(p, 1, &error);
    if (samples == NULL)
        fail_msg("read: %s", error->message);
    return samples;
}

static void assert_value(GHashTable *samples, const char *metric, double want)
{
    double got = test_sample_value(samples, metric);
    if (got != want)
        fail_msg("%s is %.17g, expected %.17g", metric, got, want);
}

/* Rewrites the file in place, as the kernel's files change: the provider
 * keeps its descriptor, so a new inode (g_file_set_contents renames one
 * over the old) would go unseen. */
static void rewrite_in_place(const char *dir, const char *relative, const char *text)
{
    char *path = g_build_filename(dir, relative, NULL);
    int fd = open(path, O_WRONLY | O_TRUNC);
    if (fd < 0)
        fail_msg("opening %s: %s", path, g_strerror(errno));
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len)
        fail_msg("writing %s: %s", path, g_strerror(errno));
    close(fd);
    g_free(path);
}

static void test_values_from_a_fixture(void **state)
{
    const char *dir = *state;
    test_write_file(dir, LOADAVG, "0.52 1.58 12.25 3/1234 56789\n");
    struct test_provider p;
    open_at(&p, dir);
    start_or_fail(&p);
    GHashTable *samples = read_or_fail(&p);

    assert_value(samples, "load.1m", 0.52);
    assert_value(samples, "load.5m", 1.58);
    assert_value(samples, "load.15m", 12.25);
    assert_value(samples, "procs.runnable", 3);
    assert_value(samples, "procs.total", 1234);
    assert_int_equal(g_hash_table_size(samples), 5);

    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void assert_desc(struct test_provider *p, const char *name, const char *unit)
{
    const struct vigil_metric_desc *m = test_metric(p, name);
    assert_string_equal(m->unit, unit);
    assert_int_equal(m->kind, VIGIL_METRIC_GAUGE);
    assert_string_equal(m->source, "loadavg");
    assert_int_equal(m->origin, VIGIL_METRIC_MEASURED);
}

static void test_start_registers_the_metrics(void **state)
{
    const char *dir = *state;
    test_write_file(dir, LOADAVG, "0.52 1.58 12.25 3/1234 56789\n");
    struct test_provider p;
    open_at(&p, dir);
    start_or_fail(&p);
    assert_desc(&p, "load.1m", "load");
    assert_desc(&p, "load.5m", "load");
    assert_desc(&p, "load.15m", "load");
    assert_desc(&p, "procs.runnable", "count");
    assert_desc(&p, "procs.total", "count");
    assert_int_equal(vigil_metric_count(p.catalog), 5);
    /* procstat's name, with another source: both must fit in one catalogue. */
    assert_null(vigil_metric_lookup(p.catalog, "procs.running"));
    test_provider_close(&p);
}

/* procstat and loadavg share vigild's catalogue. */
static void test_it_shares_a_catalogue_with_procstat(void **state)
{
    const char *dir = *state;
    test_write_file(dir, LOADAVG, "0.52 1.58 12.25 3/1234 56789\n");
    test_write_file(dir, "proc/stat",
                    "cpu  1 2 3 4 5 6 7 8\nctxt 1\nprocs_running 2\nprocs_blocked 0\n");
    struct test_provider procstat;
    char *config = g_strdup_printf("[provider.procstat]\nroot = %s\n", dir);
    test_provider_open(&procstat, "procstat", config);
    g_free(config);
    start_or_fail(&procstat);

    struct test_provider p;
    open_at(&p, dir);
    GError *error = NULL;
    if (!p.ops->start(p.instance, procstat.catalog, &error))
        fail_msg("start with procstat's catalogue: %s", error->message);
    assert_string_equal(test_metric(&procstat, "procs.running")->source, "procstat");
    assert_string_equal(test_metric(&procstat, "procs.runnable")->source, "loadavg");
    assert_string_equal(test_metric(&procstat, "procs.total")->source, "loadavg");
    test_provider_close(&p);
    test_provider_close(&procstat);
}

static void test_a_second_read_sees_the_new_contents(void **state)
{
    const char *dir = *state;
    test_write_file(dir, LOADAVG, "0.52 1.58 12.25 3/1234 56789\n");
    struct test_provider p;
    open_at(&p, dir);
    start_or_fail(&p);
    GHashTable *samples = read_or_fail(&p);
    g_hash_table_destroy(samples);

    /* And without a final newline. */
    rewrite_in_place(dir, LOADAVG, "128.00 64.5 0.00 1024/65536 4194304");
    samples = read_or_fail(&p);
    assert_value(samples, "load.1m", 128);
    assert_value(samples, "load.5m", 64.5);
    assert_value(samples, "load.15m", 0);
    assert_value(samples, "procs.runnable", 1024);
    assert_value(samples, "procs.total", 65536);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static const char *const malformed_files[] = {
    "0.52 1.58 3/1234 56789\n",
    "0.52 1.58 12.25 3 1234 56789\n",
    "0.52 1.58 12.25 3/1234\n",
    "0.52 x 12.25 3/1234 56789\n",
    "-0.52 1.58 12.25 3/1234 56789\n",
    "nan 1.58 12.25 3/1234 56789\n",
    "0.52 1.58 12.25 3/ 56789\n",
    "0.52 1.58 1.2.3 3/1234 56789\n",
    "0.52 1.58 12.25 3/1234 56789 7\n",
    "0.52 1.58 12.25 3/1234 56789\nmore\n",
    "",
};

static void test_a_malformed_file_fails_the_read(void **state)
{
    const char *dir = *state;
    char *path = g_build_filename(dir, LOADAVG, NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(malformed_files); i++) {
        test_write_file(dir, LOADAVG, "0.52 1.58 12.25 3/1234 56789\n");
        struct test_provider p;
        open_at(&p, dir);
        start_or_fail(&p);
        rewrite_in_place(dir, LOADAVG, malformed_files[i]);
        GError *error = NULL;
        GHashTable *samples = test_provider_read(&p, 1, &error);
        if (samples != NULL)
            fail_msg("\"%s\" was read without error", malformed_files[i]);
        assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ));
        test_assert_contains(error->message, path);
        test_assert_contains(error->message, "line 1");
        g_error_free(error);
        test_provider_close(&p);
    }
    g_free(path);
}

static void test_a_missing_file_makes_it_unavailable(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    open_at(&p, dir);
    GError *error = NULL;
    assert_false(test_provider_start(&p, &error));
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE));
    char *path = g_build_filename(dir, LOADAVG, NULL);
    test_assert_contains(error->message, path);
    test_assert_contains(error->message, g_strerror(ENOENT));
    g_free(path);
    g_error_free(error);
    test_provider_close(&p);
}

static void test_the_real_proc_loadavg(void **state)
{
    (void)state;
    struct test_provider p;
    open_at(&p, "/");
    start_or_fail(&p);
    GHashTable *samples = read_or_fail(&p);
    assert_true(test_sample_value(samples, "load.1m") >= 0);
    assert_true(test_sample_value(samples, "load.15m") >= 0);
    /* This test is one of the tasks, and it is running. */
    double total = test_sample_value(samples, "procs.total");
    assert_true(total >= 1);
    assert_true(test_sample_value(samples, "procs.runnable") >= 1);
    assert_true(test_sample_value(samples, "procs.runnable") <= total);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_values_from_a_fixture, test_make_dir, test_remove_dir),
        cmocka_unit_test_setup_teardown(test_start_registers_the_metrics, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_it_shares_a_catalogue_with_procstat, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_a_second_read_sees_the_new_contents, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_a_malformed_file_fails_the_read, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_a_missing_file_makes_it_unavailable, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test(test_the_real_proc_loadavg),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
