/* The cpufreq provider on fixture trees: a node whose CPUs have cpufreq in
 * sysfs, and one that has only /proc/cpuinfo's "cpu MHz" (a VM like this
 * build machine). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "test_provider.h"
#include "test_support.h"
#include "test_main.h"

#define CPU_DIR "sys/devices/system/cpu"

static void write_cpu(const char *root, int cpu, int package, int core)
{
    const struct {
        const char *file;
        int value;
    } topology[] = {{"physical_package_id", package}, {"core_id", core}};
    for (size_t i = 0; i < G_N_ELEMENTS(topology); i++) {
        char *file = g_strdup_printf(CPU_DIR "/cpu%d/topology/%s", cpu, topology[i].file);
        char *text = g_strdup_printf("%d\n", topology[i].value);
        test_write_file(root, file, text);
        g_free(text);
        g_free(file);
    }
}

static void set_cur_khz(const char *root, int cpu, const char *khz, gboolean in_place)
{
    char *file = g_strdup_printf(CPU_DIR "/cpu%d/cpufreq/scaling_cur_freq", cpu);
    if (in_place)
        test_rewrite_file(root, file, khz);
    else
        test_write_file(root, file, khz);
    g_free(file);
}

/* Two sockets of two cores of two threads: CPUs 0-7, thread siblings 4
 * apart, as Linux numbers them. */
static void write_big_node(const char *root)
{
    test_write_file(root, CPU_DIR "/online", "0-7\n");
    for (int cpu = 0; cpu < 8; cpu++) {
        write_cpu(root, cpu, (cpu / 2) % 2, cpu % 2);
        set_cur_khz(root, cpu, cpu < 4 ? "2000000\n" : "3000000\n", FALSE);
    }
    test_write_file(root, CPU_DIR "/cpu0/cpufreq/cpuinfo_min_freq", "800000\n");
    test_write_file(root, CPU_DIR "/cpu0/cpufreq/cpuinfo_max_freq", "3500000\n");
    test_write_file(root, "sys/devices/system/node/online", "0-1\n");
}

/* A node of one socket whose online CPUs `cpus` (listed as `online`) are
 * each a core of its own, with `cpuinfo` as /proc/cpuinfo and no cpufreq
 * unless the test adds it. */
static void write_cpuinfo_node(const char *root, const char *online, const int *cpus, size_t n,
                               const char *cpuinfo)
{
    test_write_file(root, CPU_DIR "/online", online);
    for (size_t i = 0; i < n; i++)
        write_cpu(root, cpus[i], 0, (int)i);
    test_write_file(root, "proc/cpuinfo", cpuinfo);
}

static void sysfs_node(void **state)
{
    const char *root = *state;
    write_big_node(root);
    struct test_provider p;
    test_provider_start_at(&p, "cpufreq", root);
    const char *const names[] = {"cpu.frequency_hz",    "node.sockets",      "node.cores",
                                 "node.hw_threads",     "node.numa_domains", "cpu.frequency_min_hz",
                                 "cpu.frequency_max_hz"};
    assert_int_equal(vigil_metric_count(p.catalog), G_N_ELEMENTS(names));
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        const struct vigil_metric_desc *m = test_metric(&p, names[i]);
        assert_int_equal(m->kind, VIGIL_METRIC_GAUGE);
        assert_int_equal(m->origin, VIGIL_METRIC_MEASURED);
    }
    assert_string_equal(test_metric(&p, "cpu.frequency_hz")->unit, "Hz");
    assert_string_equal(p.ops->note(p.instance), "frequency from sysfs cpufreq scaling_cur_freq");

    const double want[] = {2.5e9, 2, 4, 8, 2, 8e8, 3.5e9};
    test_provider_assert_read(&p, 1, names, want, G_N_ELEMENTS(names));

    /* The files are kept open: rewritten in place, the next tick sees them. */
    for (int cpu = 0; cpu < 8; cpu++)
        set_cur_khz(root, cpu, "1000000\n", TRUE);
    GHashTable *s = test_provider_read_ok(&p, 2);
    test_assert_sample(s, "cpu.frequency_hz", 1e9);
    test_assert_sample(s, "node.hw_threads", 8); /* the facts every tick */
    g_hash_table_destroy(s);
    test_provider_close(&p);
}

/* Only CPUs 0 and 2 online, one without cpufreq: /proc/cpuinfo for all. */
static void cpuinfo_node(void **state)
{
    const char *root = *state;
    write_cpuinfo_node(root, "0,2\n", (const int[]){0, 2}, 2,
                       "processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2000.000\n\n"
                       "processor\t: 2\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 3000.500\n\n");
    set_cur_khz(root, 0, "2000000\n", FALSE);
    struct test_provider p;
    test_provider_start_at(&p, "cpufreq", root);
    assert_null(vigil_metric_lookup(p.catalog, "cpu.frequency_min_hz"));
    assert_null(vigil_metric_lookup(p.catalog, "cpu.frequency_max_hz"));
    const char *note = p.ops->note(p.instance);
    char *want = g_strdup_printf("frequency from %s/proc/cpuinfo \"cpu MHz\": not every online "
                                 "CPU has cpufreq/scaling_cur_freq; cpu.frequency_min_hz left "
                                 "out: cannot open %s/" CPU_DIR "/cpu0/cpufreq/cpuinfo_min_freq",
                                 root, root);
    test_assert_contains(note, want);
    g_free(want);
    test_assert_contains(note, "; node.numa_domains is 1: cannot open ");
    const char *const names[] = {"cpu.frequency_hz", "node.sockets", "node.cores",
                                 "node.hw_threads", "node.numa_domains"};
    const double values[] = {2500.25e6, 1, 2, 2, 1};
    test_provider_assert_read(&p, 1, names, values, G_N_ELEMENTS(names));

    test_rewrite_file(root, "proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: fast\n");
    GError *error = NULL;
    assert_null(test_provider_read(&p, 2, &error));
    test_assert_contains(error->message, "/proc/cpuinfo, line 2: expected \"cpu MHz : NUMBER\"");
    g_clear_error(&error);
    test_rewrite_file(root, "proc/cpuinfo", "processor\t: 0\n");
    assert_null(test_provider_read(&p, 3, &error));
    test_assert_contains(error->message, "/proc/cpuinfo has no \"cpu MHz\" line");
    g_error_free(error);
    test_provider_close(&p);
}

/* Without a cpufreq driver, "cpu MHz" is fixed unless the CPU has
 * APERF/MPERF: then it is read once, at start; with the flag, every tick. */
static void fixed_cpuinfo_is_read_once(void **state)
{
    const char *root = *state;
    write_cpuinfo_node(root, "0\n", (const int[]){0}, 1,
                       "processor\t: 0\ncpu MHz\t\t: 2000.500\n"
                       "flags\t\t: fpu vme tsc msr constant_tsc rep_good nopl\n\n");
    struct test_provider p;
    test_provider_start_at(&p, "cpufreq", root);
    test_assert_contains(p.ops->note(p.instance), "; read once: without a cpufreq driver");
    test_rewrite_file(root, "proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 1000.000\n");
    GHashTable *s = test_provider_read_ok(&p, 1);
    test_assert_sample(s, "cpu.frequency_hz", 2000.5e6);
    g_hash_table_destroy(s);
    test_provider_close(&p);

    static const char measured[] = "processor\t: 0\ncpu MHz\t\t: 2000.500\n"
                                   "flags\t\t: fpu tsc constant_tsc aperfmperf rep_good\n\n";
    test_rewrite_file(root, "proc/cpuinfo", measured);
    test_provider_start_at(&p, "cpufreq", root);
    assert_null(strstr(p.ops->note(p.instance), "read once"));
    test_rewrite_file(root, "proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 1000.000\n");
    s = test_provider_read_ok(&p, 1);
    test_assert_sample(s, "cpu.frequency_hz", 1000e6);
    g_hash_table_destroy(s);
    test_provider_close(&p);
}

static void bad_trees(void **state)
{
    const char *root = *state;
    test_provider_assert_unavailable("cpufreq", root, CPU_DIR "/online", ENOENT);

    test_write_file(root, CPU_DIR "/online", "0-x\n");
    test_provider_assert_cannot_start("cpufreq", root, NULL, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                                      "online is not a list of numbers like \"0-3,8\": \"0-x\"",
                                      NULL);
    test_rewrite_file(root, CPU_DIR "/online", "0\n");
    test_provider_assert_cannot_start("cpufreq", root, NULL, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                                      "cpu0/topology/physical_package_id", NULL);
}

/* This machine, whatever it has: a frequency and at least one of each. */
static void real_node(void **state)
{
    (void)state;
    GHashTable *s = test_provider_read_this_machine("cpufreq");
    assert_true(test_sample_value(s, "cpu.frequency_hz") > 1e6);
    assert_true(test_sample_value(s, "node.sockets") >= 1);
    assert_true(test_sample_value(s, "node.cores") >= test_sample_value(s, "node.sockets"));
    assert_true(test_sample_value(s, "node.hw_threads") >= test_sample_value(s, "node.cores"));
    assert_true(test_sample_value(s, "node.numa_domains") >= 1);
    g_hash_table_destroy(s);
}

TEST_MAIN(TEST_WITH_DIR(sysfs_node), TEST_WITH_DIR(cpuinfo_node),
          TEST_WITH_DIR(fixed_cpuinfo_is_read_once), TEST_WITH_DIR(bad_trees),
          TEST_WITH_DIR(real_node))
