/* Tests of the meminfo provider against fixture /proc/meminfo files, and
 * once against the real one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_provider.h"
#include "test_support.h"
#include "test_main.h"

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

/* The metrics' values from the fixture. */
static const double fixture_bytes[] = {
    16000000.0 * 1024, 2000000.0 * 1024, 12000000.0 * 1024, 300000.0 * 1024,
    8000000.0 * 1024,  4000000.0 * 1024, 3500000.0 * 1024,  4000000.0 * 1024,
};

/* Beyond 2^32 kB too, and in another order: keys are found by name. */
static const char second_file[] = "MemTotal:       8589934592 kB\n"
                                  "SwapFree:       0 kB\n"
                                  "SwapTotal:      0 kB\n"
                                  "MemFree:        1 kB\n"
                                  "MemAvailable:   589934592 kB\n"
                                  "Cached:         7 kB\n"
                                  "Buffers:        3 kB\n";
static const double second_bytes[] = {
    8589934592.0 * 1024, 1024, 589934592.0 * 1024, 3 * 1024, 7 * 1024, 0, 0, 8000000000.0 * 1024,
};

static void test_reads_follow_the_file(void **state)
{
    const struct test_file_version versions[] = {{fixture, fixture_bytes},
                                                 {second_file, second_bytes}};
    test_provider_assert_versions("meminfo", *state, MEMINFO, metrics, G_N_ELEMENTS(metrics),
                                  versions, G_N_ELEMENTS(versions));
}

static void test_start_registers_the_metrics(void **state)
{
    struct test_provider p;
    test_provider_start_on_fixture(&p, "meminfo", *state, MEMINFO, fixture);
    for (size_t i = 0; i < G_N_ELEMENTS(metrics); i++)
        test_assert_metric(&p, metrics[i], "bytes", VIGIL_METRIC_GAUGE, VIGIL_METRIC_MEASURED,
                           "meminfo");
    assert_int_equal(vigil_metric_count(p.catalog), G_N_ELEMENTS(metrics));
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
    for (size_t i = 0; i < G_N_ELEMENTS(malformed_files); i++)
        test_provider_assert_read_fails("meminfo", *state, MEMINFO, fixture,
                                        malformed_files[i].text, malformed_files[i].in_message);
}

/* The parse stops at the last of the seven keys: what follows it, a key
 * again or a line that is no "Key: value", is not read. */
static void test_lines_after_the_last_key_are_not_read(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    test_provider_start_on_fixture(&p, "meminfo", dir, MEMINFO, fixture);
    g_hash_table_destroy(test_provider_read_ok(&p, 1));

    test_rewrite_file(dir, MEMINFO,
                      "MemTotal: 16 kB\nMemFree: 1 kB\nMemAvailable: 4 kB\nBuffers: 1 kB\n"
                      "Cached: 1 kB\nSwapTotal: 2 kB\nSwapFree: 1 kB\n"
                      "MemTotal: 99 kB\nnot a meminfo line\n");
    GHashTable *samples = test_provider_read_ok(&p, 2);
    test_assert_sample(samples, "mem.total_bytes", 16 * 1024);
    test_assert_sample(samples, "mem.used_bytes", 12 * 1024);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

/* The last key missing, on a file as long as the kernel's: the parse reads
 * to the end and names it, at start and at a read. */
static void test_a_missing_last_key_is_named(void **state)
{
    GString *text = g_string_new("MemTotal: 16 kB\nMemFree: 1 kB\nMemAvailable: 4 kB\n"
                                 "Buffers: 1 kB\nCached: 1 kB\nSwapTotal: 2 kB\n");
    for (int i = 0; i < 50; i++)
        g_string_append_printf(text, "Other%d: %d kB\n", i, i);
    test_provider_assert_start_fails("meminfo", *state, MEMINFO, text->str,
                                     "has no \"SwapFree\" line");
    test_provider_assert_read_fails("meminfo", *state, MEMINFO, fixture, text->str,
                                    "has no \"SwapFree\" line");
    g_string_free(text, TRUE);
}

/* A kernel without MemAvailable is told once, at start. */
static void test_a_missing_key_fails_the_start(void **state)
{
    test_provider_assert_start_fails("meminfo", *state, MEMINFO, without_mem_available,
                                     "MemAvailable");
}

static void test_a_missing_file_makes_it_unavailable(void **state)
{
    test_provider_assert_unavailable("meminfo", *state, MEMINFO, ENOENT);
}

static void test_the_real_proc_meminfo(void **state)
{
    (void)state;
    GHashTable *samples = test_provider_read_this_machine("meminfo");
    double total = test_sample_value(samples, "mem.total_bytes");
    assert_true(total > 0);
    assert_true(test_sample_value(samples, "mem.available_bytes") <= total);
    assert_true(test_sample_value(samples, "mem.free_bytes") <= total);
    assert_true(test_sample_value(samples, "mem.used_bytes") > 0);
    assert_true(test_sample_value(samples, "mem.used_bytes") <= total);
    assert_int_equal(g_hash_table_size(samples), G_N_ELEMENTS(metrics));
    g_hash_table_destroy(samples);
}

TEST_MAIN(TEST_WITH_DIR(test_reads_follow_the_file),
          TEST_WITH_DIR(test_start_registers_the_metrics),
          TEST_WITH_DIR(test_a_malformed_file_fails_the_read),
          TEST_WITH_DIR(test_a_missing_key_fails_the_start),
          TEST_WITH_DIR(test_lines_after_the_last_key_are_not_read),
          TEST_WITH_DIR(test_a_missing_last_key_is_named),
          TEST_WITH_DIR(test_a_missing_file_makes_it_unavailable),
          cmocka_unit_test(test_the_real_proc_meminfo))
