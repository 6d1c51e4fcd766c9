/* Tests of the loadavg provider against fixture /proc/loadavg files, and
 * once against the real one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_provider.h"
#include "test_support.h"
#include "test_main.h"

#define LOADAVG "proc/loadavg"

static const char fixture[] = "0.52 1.58 12.25 3/1234 56789\n";

static const char *const metrics[] = {"load.1m", "load.5m", "load.15m", "procs.runnable",
                                      "procs.total"};
static const double fixture_values[] = {0.52, 1.58, 12.25, 3, 1234};

/* And without a final newline. */
static const char second_file[] = "128.00 64.5 0.00 1024/65536 4194304";
static const double second_values[] = {128, 64.5, 0, 1024, 65536};

static void test_reads_follow_the_file(void **state)
{
    const struct test_file_version versions[] = {{fixture, fixture_values},
                                                 {second_file, second_values}};
    test_provider_assert_versions("loadavg", *state, LOADAVG, metrics, G_N_ELEMENTS(metrics),
                                  versions, G_N_ELEMENTS(versions));
}

static void test_start_registers_the_metrics(void **state)
{
    struct test_provider p;
    test_provider_start_on_fixture(&p, "loadavg", *state, LOADAVG, fixture);
    const char *const units[] = {"load", "load", "load", "count", "count"};
    for (size_t i = 0; i < G_N_ELEMENTS(metrics); i++)
        test_assert_metric(&p, metrics[i], units[i], VIGIL_METRIC_GAUGE, VIGIL_METRIC_MEASURED,
                           "loadavg");
    assert_int_equal(vigil_metric_count(p.catalog), G_N_ELEMENTS(metrics));
    /* procstat's name, with another source: both must fit in one catalogue. */
    assert_null(vigil_metric_lookup(p.catalog, "procs.running"));
    test_provider_close(&p);
}

/* procstat and loadavg share vigild's catalogue. */
static void test_it_shares_a_catalogue_with_procstat(void **state)
{
    const char *dir = *state;
    test_write_file(dir, LOADAVG, fixture);
    struct test_provider procstat;
    test_provider_start_on_fixture(
        &procstat, "procstat", dir, "proc/stat",
        "cpu  1 2 3 4 5 6 7 8\nctxt 1\nprocs_running 2\nprocs_blocked 0\n");

    struct test_provider p;
    test_provider_open_at(&p, "loadavg", dir, NULL);
    GError *error = NULL;
    if (!p.ops->start(p.instance, procstat.catalog, &error))
        fail_msg("start with procstat's catalogue: %s", error->message);
    assert_string_equal(test_metric(&procstat, "procs.running")->source, "procstat");
    assert_string_equal(test_metric(&procstat, "procs.runnable")->source, "loadavg");
    assert_string_equal(test_metric(&procstat, "procs.total")->source, "loadavg");
    test_provider_close(&p);
    test_provider_close(&procstat);
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
    for (size_t i = 0; i < G_N_ELEMENTS(malformed_files); i++)
        test_provider_assert_read_fails("loadavg", *state, LOADAVG, fixture, malformed_files[i],
                                        "line 1");
}

static void test_a_missing_file_makes_it_unavailable(void **state)
{
    test_provider_assert_unavailable("loadavg", *state, LOADAVG, ENOENT);
}

static void test_the_real_proc_loadavg(void **state)
{
    (void)state;
    GHashTable *samples = test_provider_read_this_machine("loadavg");
    assert_true(test_sample_value(samples, "load.1m") >= 0);
    assert_true(test_sample_value(samples, "load.15m") >= 0);
    /* This test is one of the tasks, and it is running. */
    double total = test_sample_value(samples, "procs.total");
    assert_true(total >= 1);
    assert_true(test_sample_value(samples, "procs.runnable") >= 1);
    assert_true(test_sample_value(samples, "procs.runnable") <= total);
    g_hash_table_destroy(samples);
}

TEST_MAIN(TEST_WITH_DIR(test_reads_follow_the_file),
          TEST_WITH_DIR(test_start_registers_the_metrics),
          TEST_WITH_DIR(test_it_shares_a_catalogue_with_procstat),
          TEST_WITH_DIR(test_a_malformed_file_fails_the_read),
          TEST_WITH_DIR(test_a_missing_file_makes_it_unavailable),
          cmocka_unit_test(test_the_real_proc_loadavg))
