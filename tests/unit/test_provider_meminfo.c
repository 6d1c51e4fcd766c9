/* Tests of the meminfo provider against fixture /proc/meminfo files, and
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

#define MEMINFO "proc/meminfo"

/* The lines we read, among others, as a kernel writes them; HugePages_
 * lines are counts, without kB. */
static const char fixture[] = "MemTotal:       16000000 kB\n"
                              "MemFree:         2000000 kB\n"
                              "MemAvailable:   12000000 kB\n"
                              "Buffers:          300000 kB\n"
                              "Cached:          8000000 kB\n"
                              "SwapCached:            0 kB\n"
                              "Active:          5000000 kB\n"
                              "SwapTotal:       4000000 kB\n"
                              "SwapFree:        3500000 kB\n"
                              "Dirty:                12 kB\n"
                              "HugePages_Total:       0\n"
                              "Hugepagesize:       2048 kB\n";

static const char *const metrics[] = {
    "mem.total_bytes",  "mem.free_bytes",       "mem.available_bytes", "mem.buffers_bytes",
    "mem.cached_bytes", "mem.swap_total_bytes", "mem.swap_free_bytes", "mem.used_bytes",
};

static void open_at(struct test_provider *p, const char *root)
{
    char *config = g_strdup_printf("[provider.meminfo]\nroot = %s\n", root);
    test_provider_open(p, "meminfo", config);
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
    test_write_file(dir, MEMINFO, fixture);
    struct test_provider p;
    open_at(&p, dir);
    start_or_fail(&p);
    GHashTable *samples = read_or_fail(&p);

    assert_value(samples, "mem.total_bytes", 16000000.0 * 1024);
    assert_value(samples, "mem.free_bytes", 2000000.0 * 1024);
    assert_value(samples, "mem.available_bytes", 12000000.0 * 1024);
    assert_value(samples, "mem.buffers_bytes", 300000.0 * 1024);
    assert_value(samples, "mem.cached_bytes", 8000000.0 * 1024);
    assert_value(samples, "mem.swap_total_bytes", 4000000.0 * 1024);
    assert_value(samples, "mem.swap_free_bytes", 3500000.0 * 1024);
    assert_value(samples, "mem.used_bytes", 4000000.0 * 1024);
    assert_int_equal(g_hash_table_size(samples), G_N_ELEMENTS(metrics));

    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void test_start_registers_the_metrics(void **state)
{
    const char *dir = *state;
    test_write_file(dir, MEMINFO, fixture);
    struct test_provider p;
    open_at(&p, dir);
    start_or_fail(&p);
    for (size_t i = 0; i < G_N_ELEMENTS(metrics); i++) {
        const struct vigil_metric_desc *m = test_metric(&p, metrics[i]);
        assert_string_equal(m->unit, "bytes");
        assert_int_equal(m->kind, VIGIL_METRIC_GAUGE);
        assert_string_equal(m->source, "meminfo");
        assert_int_equal(m->origin, VIGIL_METRIC_MEASURED);
    }
    assert_int_equal(vigil_metric_count(p.catalog), G_N_ELEMENTS(metrics));
    test_provider_close(&p);
}

/* Beyond 2^32 kB too, and in another order: keys are found by name. */
static void test_a_second_read_sees_the_new_contents(void **state)
{
    const char *dir = *state;
    test_write_file(dir, MEMINFO, fixture);
    struct test_provider p;
    open_at(&p, dir);
    start_or_fail(&p);
    GHashTable *samples = read_or_fail(&p);
    g_hash_table_destroy(samples);

    rewrite_in_place(dir, MEMINFO,
                     "MemTotal:       8589934592 kB\n"
                     "SwapFree:       0 kB\n"
                     "SwapTotal:      0 kB\n"
                     "MemFree:        1 kB\n"
                     "MemAvailable:   589934592 kB\n"
                     "Cached:         7 kB\n"
                     "Buffers:        3 kB\n");
    samples = read_or_fail(&p);
    assert_value(samples, "mem.total_bytes", 8589934592.0 * 1024);
    assert_value(samples, "mem.free_bytes", 1024);
    assert_value(samples, "mem.available_bytes", 589934592.0 * 1024);
    assert_value(samples, "mem.buffers_bytes", 3 * 1024);
    assert_value(samples, "mem.cached_bytes", 7 * 1024);
    assert_value(samples, "mem.swap_total_bytes", 0);
    assert_value(samples, "mem.swap_free_bytes", 0);
    assert_value(samples, "mem.used_bytes", 8000000000.0 * 1024);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

struct malformed {
    const char *text;
    const char *in_message; /* besides the path */
};

/* As Linux before 3.14 writes it. */
static const char without_mem_available[] = "MemTotal: 16 kB\nMemFree: 1 kB\nBuffers: 1 kB\n"
                                            "Cached: 1 kB\nSwapTotal: 1 kB\nSwapFree: 1 kB\n";

static const struct malformed malformed_files[] = {
    {"MemTotal: 16 kB\nMemFree: x kB\nMemAvailable: 1 kB\nBuffers: 1 kB\nCached: 1 kB\n"
     "SwapTotal: 1 kB\nSwapFree: 1 kB\n",
     "line 2"},
    {"MemTotal: 16 kB\nMemFree: 1 kB\nMemAvailable: 1 kB\nBuffers: 1 kB\nCached: 1 kB\n"
     "SwapTotal: 1\nSwapFree: 1 kB\n",
     "line 6"},
    {"MemTotal: 16 kB\nMemFree: 1 kB\nMemAvailable: 1 kB\nBuffers: 1 kB\nCached: 1 kB\n"
     "SwapTotal: 1 kB\nSwapFree: 1 MB\n",
     "line 7"},
    {"MemTotal: 16 kB\nMemFree: 1 kB\nMemAvailable: 1 kB\nBuffers: 1 kB\nCached: 1 kB\n"
     "SwapTotal: 1 kB\nSwapFree: 1 kB 2\n",
     "line 7"},
    {"MemTotal: 16 kB\nMemFree: 1 kB\nMemAvailable: -1 kB\nBuffers: 1 kB\nCached: 1 kB\n"
     "SwapTotal: 1 kB\nSwapFree: 1 kB\n",
     "line 3"},
    {"MemTotal: 16 kB\nMemFree: 1 kB\nMemAvailable: 1 kB\nBuffers:\nCached: 1 kB\n"
     "SwapTotal: 1 kB\nSwapFree: 1 kB\n",
     "line 4"},
    {"MemTotal: 16 kB\nMemFree: 1 kB\nMemAvailable: 1 kB\nBuffers: 1 kB\nCached 1 kB\n"
     "SwapTotal: 1 kB\nSwapFree: 1 kB\n",
     "line 5"},
    {"MemTotal: 16 kB\nMemTotal: 16 kB\nMemFree: 1 kB\nMemAvailable: 1 kB\nBuffers: 1 kB\n"
     "Cached: 1 kB\nSwapTotal: 1 kB\nSwapFree: 1 kB\n",
     "line 2"},
    {without_mem_available, "\"MemAvailable\""},
    {"", "\"MemTotal\""},
};

static void test_a_malformed_file_fails_the_read(void **state)
{
    const char *dir = *state;
    char *path = g_build_filename(dir, MEMINFO, NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(malformed_files); i++) {
        test_write_file(dir, MEMINFO, fixture);
        struct test_provider p;
        open_at(&p, dir);
        start_or_fail(&p);
        rewrite_in_place(dir, MEMINFO, malformed_files[i].text);
        GError *error = NULL;
        GHashTable *samples = test_provider_read(&p, 1, &error);
        if (samples != NULL)
            fail_msg("file %zu was read without error", i);
        assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ));
        test_assert_contains(error->message, path);
        test_assert_contains(error->message, malformed_files[i].in_message);
        g_error_free(error);
        test_provider_close(&p);
    }
    g_free(path);
}

/* A kernel without MemAvailable is told once, at start. */
static void test_a_missing_key_fails_the_start(void **state)
{
    const char *dir = *state;
    test_write_file(dir, MEMINFO, without_mem_available);
    struct test_provider p;
    open_at(&p, dir);
    GError *error = NULL;
    assert_false(test_provider_start(&p, &error));
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ));
    test_assert_contains(error->message, "MemAvailable");
    g_error_free(error);
    test_provider_close(&p);
}

static void test_a_missing_file_makes_it_unavailable(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    open_at(&p, dir);
    GError *error = NULL;
    assert_false(test_provider_start(&p, &error));
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE));
    char *path = g_build_filename(dir, MEMINFO, NULL);
    test_assert_contains(error->message, path);
    test_assert_contains(error->message, g_strerror(ENOENT));
    g_free(path);
    g_error_free(error);
    test_provider_close(&p);
}

static void test_the_real_proc_meminfo(void **state)
{
    (void)state;
    struct test_provider p;
    open_at(&p, "/");
    start_or_fail(&p);
    GHashTable *samples = read_or_fail(&p);
    double total = test_sample_value(samples, "mem.total_bytes");
    assert_true(total > 0);
    assert_true(test_sample_value(samples, "mem.available_bytes") <= total);
    assert_true(test_sample_value(samples, "mem.free_bytes") <= total);
    assert_true(test_sample_value(samples, "mem.used_bytes") > 0);
    assert_true(test_sample_value(samples, "mem.used_bytes") <= total);
    assert_int_equal(g_hash_table_size(samples), G_N_ELEMENTS(metrics));
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_values_from_a_fixture, test_make_dir, test_remove_dir),
        cmocka_unit_test_setup_teardown(test_start_registers_the_metrics, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_a_second_read_sees_the_new_contents, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_a_malformed_file_fails_the_read, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_a_missing_key_fails_the_start, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_a_missing_file_makes_it_unavailable, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test(test_the_real_proc_meminfo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
