/* Tests of the procstat provider against fixture /proc/stat files, and
 * once against the real one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_provider.h"
#include "test_support.h"
#include "test_main.h"

#define STAT "proc/stat"

/* Two CPUs; the node line is their sum, as the kernel makes it. The cpu
 * lines carry guest and guest_nice, which must not be read as anything. */
static const char fixture[] = "cpu  100 20 30 400 50 6 7 8 9 10\n"
                              "cpu0 60 10 20 200 25 3 4 5 9 10\n"
                              "cpu1 40 10 10 200 25 3 3 3 0 0\n"
                              "intr 12345 1 2 3 0 0\n"
                              "ctxt 987654\n"
                              "btime 1700000000\n"
                              "processes 4321\n"
                              "procs_running 3\n"
                              "procs_blocked 1\n"
                              "softirq 55 1 2 3\n";

static const char *const fields[] = {"user",   "nice", "system",  "idle",
                                     "iowait", "irq",  "softirq", "steal"};

static double ticks_per_s(void)
{
    return (double)sysconf(_SC_CLK_TCK);
}

/* `prefix`.FIELD_s for each field, against ticks[] converted to seconds. */
static void assert_cpu_times(GHashTable *samples, const char *prefix, const double ticks[8])
{
    for (size_t f = 0; f < G_N_ELEMENTS(fields); f++) {
        char *name = g_strdup_printf("%s.%s_s", prefix, fields[f]);
        test_assert_sample(samples, name, ticks[f] / ticks_per_s());
        g_free(name);
    }
}

/* The three counts: context switches, and processes running and blocked. */
static void assert_counts(GHashTable *samples, double switches, double running, double blocked)
{
    const char *const names[] = {"cpu.context_switches", "procs.running", "procs.blocked"};
    const double want[] = {switches, running, blocked};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        test_assert_sample(samples, names[i], want[i]);
}

static void test_reads_follow_the_file(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    test_provider_start_on_fixture(&p, "procstat", dir, STAT, fixture);
    GHashTable *samples = test_provider_read_ok(&p, 1);
    assert_cpu_times(samples, "cpu", (const double[]){100, 20, 30, 400, 50, 6, 7, 8});
    assert_cpu_times(samples, "cpu0", (const double[]){60, 10, 20, 200, 25, 3, 4, 5});
    assert_cpu_times(samples, "cpu1", (const double[]){40, 10, 10, 200, 25, 3, 3, 3});
    assert_counts(samples, 987654, 3, 1);
    /* 3 × 8 times and 3 counts: nothing else. */
    assert_int_equal(g_hash_table_size(samples), 27);
    g_hash_table_destroy(samples);

    test_rewrite_file(dir, STAT,
                      "cpu  200 21 31 401 51 7 8 9 0 0\n"
                      "cpu0 110 11 21 201 26 4 5 6 0 0\n"
                      "cpu1 90 10 10 200 25 3 3 3 0 0\n"
                      "ctxt 1000000\n"
                      "procs_running 17\n"
                      "procs_blocked 0\n");
    samples = test_provider_read_ok(&p, 1);
    assert_cpu_times(samples, "cpu", (const double[]){200, 21, 31, 401, 51, 7, 8, 9});
    assert_cpu_times(samples, "cpu0", (const double[]){110, 11, 21, 201, 26, 4, 5, 6});
    test_assert_sample(samples, "cpu1.user_s", 90 / ticks_per_s());
    assert_counts(samples, 1000000, 17, 0);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void assert_desc(struct test_provider *p, const char *name, const char *unit,
                        enum vigil_metric_kind kind)
{
    test_assert_metric(p, name, unit, kind, VIGIL_METRIC_MEASURED, "procstat");
}

/* Everything present at start is described before the first read. */
static void test_start_registers_the_metrics(void **state)
{
    struct test_provider p;
    test_provider_start_on_fixture(&p, "procstat", *state, STAT, fixture);

    for (size_t f = 0; f < G_N_ELEMENTS(fields); f++) {
        const char *prefixes[] = {"cpu", "cpu0", "cpu1"};
        for (size_t i = 0; i < G_N_ELEMENTS(prefixes); i++) {
            char *name = g_strdup_printf("%s.%s_s", prefixes[i], fields[f]);
            assert_desc(&p, name, "s", VIGIL_METRIC_COUNTER);
            g_free(name);
        }
    }
    assert_desc(&p, "cpu.context_switches", "count", VIGIL_METRIC_COUNTER);
    assert_desc(&p, "procs.running", "count", VIGIL_METRIC_GAUGE);
    assert_desc(&p, "procs.blocked", "count", VIGIL_METRIC_GAUGE);
    assert_int_equal(vigil_metric_count(p.catalog), 27);
    test_provider_close(&p);
}

/* The descriptor opened at start is the one read: the path is not opened
 * again each tick. */
static void test_reads_keep_the_file_opened_at_start(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    test_provider_start_on_fixture(&p, "procstat", dir, STAT, fixture);
    char *path = g_build_filename(dir, STAT, NULL);
    assert_int_equal(g_unlink(path), 0);
    g_free(path);

    GHashTable *samples = test_provider_read_ok(&p, 1);
    test_assert_sample(samples, "cpu.context_switches", 987654);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void test_a_cpu_that_comes_online_is_registered(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    test_provider_start_on_fixture(&p, "procstat", dir, STAT,
                                   "cpu  60 10 20 200 25 3 4 5 0 0\n"
                                   "cpu0 60 10 20 200 25 3 4 5 0 0\n"
                                   "ctxt 5\nprocs_running 1\nprocs_blocked 0\n");
    assert_null(vigil_metric_lookup(p.catalog, "cpu1.user_s"));
    GHashTable *samples = test_provider_read_ok(&p, 1);
    assert_false(g_hash_table_contains(samples, "cpu1.user_s"));
    g_hash_table_destroy(samples);

    test_rewrite_file(dir, STAT, fixture);
    samples = test_provider_read_ok(&p, 1);
    assert_cpu_times(samples, "cpu1", (const double[]){40, 10, 10, 200, 25, 3, 3, 3});
    assert_desc(&p, "cpu1.steal_s", "s", VIGIL_METRIC_COUNTER);
    assert_int_equal(g_hash_table_size(samples), 27);
    g_hash_table_destroy(samples);

    /* It goes offline: no sample, and no error. */
    test_rewrite_file(dir, STAT,
                      "cpu  60 10 20 200 25 3 4 5 0 0\n"
                      "cpu0 60 10 20 200 25 3 4 5 0 0\n"
                      "ctxt 6\nprocs_running 1\nprocs_blocked 0\n");
    samples = test_provider_read_ok(&p, 1);
    assert_false(g_hash_table_contains(samples, "cpu1.user_s"));
    assert_int_equal(g_hash_table_size(samples), 19);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

/* Kernels before 2.6.11 write seven times: steal is 0 there. */
static void test_a_line_without_steal_reads_steal_as_zero(void **state)
{
    struct test_provider p;
    test_provider_start_on_fixture(&p, "procstat", *state, STAT,
                                   "cpu  100 20 30 400 50 6 7\n"
                                   "cpu0 100 20 30 400 50 6 7\n"
                                   "ctxt 1\nprocs_running 1\nprocs_blocked 0\n");
    GHashTable *samples = test_provider_read_ok(&p, 1);
    assert_cpu_times(samples, "cpu", (const double[]){100, 20, 30, 400, 50, 6, 7, 0});
    assert_cpu_times(samples, "cpu0", (const double[]){100, 20, 30, 400, 50, 6, 7, 0});
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

/* A node with 1024 CPUs and a long interrupt line: far more than the
 * provider's first buffer, and the lines it needs come last. */
static void test_a_big_machine_is_read_whole(void **state)
{
    GString *text = g_string_new("cpu  1024 0 0 1024 0 0 0 0 0 0\n");
    for (unsigned cpu = 0; cpu < 1024; cpu++)
        g_string_append_printf(text, "cpu%u %u 0 0 1 0 0 0 %u 0 0\n", cpu, cpu, cpu + 1);
    g_string_append(text, "intr 123456789");
    for (unsigned irq = 0; irq < 20000; irq++)
        g_string_append_printf(text, " %u", irq);
    g_string_append(text, "\nctxt 42\nprocs_running 1024\nprocs_blocked 7\n");
    struct test_provider p;
    test_provider_start_on_fixture(&p, "procstat", *state, STAT, text->str);
    g_string_free(text, TRUE);
    GHashTable *samples = test_provider_read_ok(&p, 1);
    test_assert_sample(samples, "cpu1023.user_s", 1023 / ticks_per_s());
    test_assert_sample(samples, "cpu1023.steal_s", 1024 / ticks_per_s());
    assert_counts(samples, 42, 1024, 7);
    assert_int_equal(g_hash_table_size(samples), 8 * 1025 + 3);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

struct malformed {
    const char *text;
    const char *in_message; /* besides the path */
};

/* Each is a good file with one thing wrong. */
static const struct malformed malformed_files[] = {
    {"cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 x 4 5 6 7 8\nctxt 1\nprocs_running 1\nprocs_blocked 0\n",
     "line 2"},
    {"cpu  1 2 3 4 5 6\nctxt 1\nprocs_running 1\nprocs_blocked 0\n", "line 1"},
    {"cpu  1 2 3 4 5 6 7 8\nctxt\nprocs_running 1\nprocs_blocked 0\n", "line 2"},
    {"cpu  1 2 3 4 5 6 7 8\nctxt 1\nprocs_running -1\nprocs_blocked 0\n", "line 3"},
    {"cpu  1 2 3 4 5 6 7 8\nctxt 1\nprocs_running 1\nprocs_blocked 0 3\n", "line 4"},
    {"cpu  1 2 3 4 5 6 7 8 1e5\nctxt 1\nprocs_running 1\nprocs_blocked 0\n", "line 1"},
    {"cpu  1 2 3 4 5 6 7 99999999999999999999\nctxt 1\nprocs_running 1\nprocs_blocked 0\n",
     "line 1"},
    {"cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\nctxt 1\n"
     "procs_running 1\nprocs_blocked 0\n",
     "line 3"},
    {"cpu  1 2 3 4 5 6 7 8\nprocs_running 1\nprocs_blocked 0\n", "\"ctxt\""},
    {"ctxt 1\nprocs_running 1\nprocs_blocked 0\n", "\"cpu\""},
    {"", "\"cpu\""},
};

static void test_a_malformed_file_fails_the_read(void **state)
{
    for (size_t i = 0; i < G_N_ELEMENTS(malformed_files); i++)
        test_provider_assert_read_fails("procstat", *state, STAT, fixture, malformed_files[i].text,
                                        malformed_files[i].in_message);
}

static void test_a_malformed_file_fails_the_start(void **state)
{
    test_provider_assert_start_fails("procstat", *state, STAT, malformed_files[0].text, "line 2");
}

static void test_a_missing_file_makes_it_unavailable(void **state)
{
    test_provider_assert_unavailable("procstat", *state, STAT, ENOENT);
}

static void test_the_real_proc_stat(void **state)
{
    (void)state;
    GHashTable *samples = test_provider_read_this_machine("procstat");
    assert_true(test_sample_value(samples, "cpu.idle_s") > 0);
    assert_true(test_sample_value(samples, "cpu.context_switches") > 0);
    /* This test runs, so something is running. */
    assert_true(test_sample_value(samples, "procs.running") >= 1);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(cpus >= 1);
    assert_true(g_hash_table_size(samples) >= 8 * (guint)(cpus + 1) + 3);
    g_hash_table_destroy(samples);
}

/* procstat and the energy estimate both read /proc/stat: in one tick the
 * file is read once and the other reader gets the same text; a new tick,
 * or the reader itself reading again, reads the file. */
static void test_one_tick_reads_a_shared_file_once(void **state)
{
    const char *dir = *state;
    test_write_file(dir, STAT, fixture);
    struct vigil_provider_file first, second;
    vigil_provider_file_init(&first, dir, STAT, 16, 1 << 20);
    vigil_provider_file_init(&second, dir, STAT, 16, 1 << 20);
    GError *error = NULL;
    assert_true(vigil_provider_file_open(&first, &error));
    assert_true(vigil_provider_file_open(&second, &error));
    static const char later[] = "cpu  1 2 3 4\nctxt 5\nprocs_running 1\nprocs_blocked 0\n";

    assert_true(vigil_provider_file_read_at(&first, 10, &error));
    assert_string_equal(first.buffer, fixture);
    test_rewrite_file(dir, STAT, later);
    assert_true(vigil_provider_file_read_at(&second, 10, &error));
    assert_string_equal(second.buffer, fixture); /* the tick's text, not read again */
    assert_int_equal(second.length, strlen(fixture));
    assert_true(vigil_provider_file_read_at(&first, 10, &error));
    assert_string_equal(first.buffer, later); /* its own read again: the file now */
    assert_true(vigil_provider_file_read_at(&second, 20, &error));
    assert_string_equal(second.buffer, later);
    /* A reader made after the first is gone does not get its text. */
    vigil_provider_file_clear(&second);
    test_rewrite_file(dir, STAT, fixture);
    vigil_provider_file_init(&second, dir, STAT, 16, 1 << 20);
    assert_true(vigil_provider_file_open(&second, &error));
    assert_true(vigil_provider_file_read_at(&second, 20, &error));
    assert_string_equal(second.buffer, fixture);
    /* Nor does one whose buffer may not hold it: it reads, and is refused. */
    struct vigil_provider_file small;
    vigil_provider_file_init(&small, dir, STAT, 16, 32);
    assert_false(vigil_provider_file_open(&small, &error));
    assert_non_null(strstr(error->message, "is larger than 31 bytes"));
    g_clear_error(&error);
    vigil_provider_file_clear(&small);
    vigil_provider_file_clear(&second);
    vigil_provider_file_clear(&first);
}

TEST_MAIN(TEST_WITH_DIR(test_reads_follow_the_file),
          TEST_WITH_DIR(test_start_registers_the_metrics),
          TEST_WITH_DIR(test_reads_keep_the_file_opened_at_start),
          TEST_WITH_DIR(test_a_cpu_that_comes_online_is_registered),
          TEST_WITH_DIR(test_a_line_without_steal_reads_steal_as_zero),
          TEST_WITH_DIR(test_a_big_machine_is_read_whole),
          TEST_WITH_DIR(test_a_malformed_file_fails_the_read),
          TEST_WITH_DIR(test_a_malformed_file_fails_the_start),
          TEST_WITH_DIR(test_a_missing_file_makes_it_unavailable),
          TEST_WITH_DIR(test_one_tick_reads_a_shared_file_once),
          cmocka_unit_test(test_the_real_proc_stat))
