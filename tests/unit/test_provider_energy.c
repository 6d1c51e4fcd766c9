/* The energy provider on fixture trees: powercap zones whose energy_uj the
 * tests rewrite between reads, and a /proc/stat for the estimate. Every
 * read is given its now_ns, so the expected joules are exact.
 *
 * The provider keeps energy_uj and /proc/stat open and reads them with
 * pread, so the tests rewrite them in place (O_TRUNC on the same inode):
 * g_file_set_contents would put a new file under the name and the provider
 * would go on reading the old one. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_provider.h"
#include "test_support.h"
#include "test_main.h"

#define LOG_DOMAIN "vigil-provider-energy"
#define NS_PER_S   1000000000ull

/* The range of a real package counter (2^38 µJ scaled by the unit). */
#define PKG_RANGE_UJ  "262143328850"
#define DRAM_RANGE_UJ "65712999613"

/* Fixtures ------------------------------------------------------------------------------------ */

static void write_zone(const char *root, const char *zone_dir, const char *name,
                       const char *range_uj, const char *energy_uj)
{
    const char *const files[][2] = {
        {"name", name}, {"max_energy_range_uj", range_uj}, {"energy_uj", energy_uj}};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        char *relative = g_build_filename("sys/class/powercap", zone_dir, files[i][0], NULL);
        char *line = g_strconcat(files[i][1], "\n", NULL);
        test_write_file(root, relative, line);
        g_free(line);
        g_free(relative);
    }
}

static void set_energy_uj(const char *root, const char *zone_dir, const char *energy_uj)
{
    char *relative = g_build_filename("sys/class/powercap", zone_dir, "energy_uj", NULL);
    char *text = g_strconcat(energy_uj, "\n", NULL);
    test_rewrite_file(root, relative, text);
    g_free(text);
    g_free(relative);
}

/* A /proc/stat whose "cpu " line has these ten fields, with a cpu0 line and
 * more after it as on a real node. */
static void write_stat(const char *root, const char *cpu_fields, gboolean in_place)
{
    char *text = g_strdup_printf("cpu  %s\ncpu0 %s\nintr 12345 0 0\nctxt 999\nprocs_running 1\n",
                                 cpu_fields, cpu_fields);
    if (in_place)
        test_rewrite_file(root, "proc/stat", text);
    else
        test_write_file(root, "proc/stat", text);
    g_free(text);
}

static void open_energy(struct test_provider *p, const char *root, const char *source,
                        const char *extra)
{
    char *config = g_strdup_printf("sources = %s\n%s", source, extra != NULL ? extra : "");
    test_provider_open_at(p, "energy", root, config);
    g_free(config);
}

static guint32 sample_flags(GHashTable *samples, const char *metric)
{
    test_sample_value(samples, metric); /* fails when missing */
    return ((const struct test_sample *)g_hash_table_lookup(samples, metric))->flags;
}

/* One read: the metric's value must be want_j, its flags want_flags. */
static void expect_read(struct test_provider *p, guint64 now_ns, const char *metric, double want_j,
                        guint32 want_flags)
{
    GHashTable *samples = test_provider_read_ok(p, now_ns);
    test_assert_sample(samples, metric, want_j);
    assert_int_equal(sample_flags(samples, metric), want_flags);
    g_hash_table_destroy(samples);
}

/* The plugin's g_message lines, as the daemon's log shows them. */
static void capture_begin(struct test_log *log)
{
    test_log_begin(log, LOG_DOMAIN, G_LOG_LEVEL_MESSAGE);
}

/* Opens the provider with sources=powercap;estimate on `root` and starts
 * it; returns what it logged (g_free it). */
static char *start_auto(struct test_provider *p, const char *root)
{
    open_energy(p, root, "powercap;estimate", NULL);
    struct test_log log;
    capture_begin(&log);
    test_provider_start_ok(p);
    return test_log_end(&log);
}

static void assert_estimate_metric(struct test_provider *p)
{
    test_assert_metric(p, "energy.node_j", "J", VIGIL_METRIC_COUNTER, VIGIL_METRIC_ESTIMATED,
                       "energy/estimate");
}

/* One read of a source of one counter: before it the counter holds
 * `counter` (NULL: as before; the first reading's, from before the start),
 * and the read gives want_j, with want_flags. */
struct reading {
    const char *counter;
    guint64 now_ns;
    double want_j;
    guint32 want_flags;
};

/* The one counter of the estimate (/proc/stat's cpu fields) or of
 * powercap (intel-rapl:0's energy_uj) holding `counter`, when not NULL;
 * `in_place` once the provider holds the file open. */
static void set_counter(const char *root, gboolean estimate, const char *counter, gboolean in_place)
{
    if (counter != NULL && estimate)
        write_stat(root, counter, in_place);
    else if (counter != NULL)
        set_energy_uj(root, "intel-rapl:0", counter);
}

/* `sources` (powercap or estimate) with `extra` configuration, started on
 * ROOT, through `readings` of its one counter: intel-rapl:0's energy_uj,
 * or the cpu fields of /proc/stat. */
static void expect_readings(const char *root, const char *sources, const char *extra,
                            const struct reading *readings, gsize n)
{
    gboolean estimate = strcmp(sources, "estimate") == 0;
    set_counter(root, estimate, readings[0].counter, FALSE);
    struct test_provider p;
    open_energy(&p, root, sources, extra);
    test_provider_start_ok(&p);
    if (estimate) {
        assert_estimate_metric(&p);
        assert_int_equal(vigil_metric_count(p.catalog), 1);
    }
    for (gsize i = 0; i < n; i++) {
        if (i > 0)
            set_counter(root, estimate, readings[i].counter, TRUE);
        expect_read(&p, readings[i].now_ns, estimate ? "energy.node_j" : "energy.pkg0_j",
                    readings[i].want_j, readings[i].want_flags);
    }
    test_provider_close(&p);
}

/* sources=powercap;estimate must land on the estimate and log why, naming
 * `reason`, which the provider's note gives too. */
static void expect_auto_falls_back(const char *root, const char *reason)
{
    struct test_provider p;
    char *logged = start_auto(&p, root);
    test_assert_contains(logged, "estimated");
    char *want = g_strdup_printf("powercap: %s", reason);
    test_assert_contains(logged, want);
    const char *note = p.ops->note(p.instance);
    test_assert_contains(note, "energy/estimate (estimated); not used: ");
    test_assert_contains(note, want);
    g_free(want);
    assert_int_equal(vigil_metric_count(p.catalog), 1);
    assert_estimate_metric(&p);
    expect_read(&p, NS_PER_S, "energy.node_j", 0.0, 0);
    g_free(logged);
    test_provider_close(&p);
}

/* `sources` on ROOT cannot start: UNAVAILABLE, saying `in_message`. */
static void expect_unavailable(const char *root, const char *sources, const char *in_message)
{
    char *config = g_strdup_printf("sources = %s\n", sources);
    test_provider_assert_cannot_start("energy", root, config, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                                      in_message, NULL);
    g_free(config);
}

/* sources=powercap cannot start, saying exactly `want` after its name; with the estimate
 * after it, the provider falls back to it, logging why. */
/* The powercap source cannot run, for the reason `format` makes. */
static void expect_powercap_unavailable(const char *root, const char *format, ...)
    G_GNUC_PRINTF(2, 3);
static void expect_powercap_unavailable(const char *root, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *want = g_strdup_vprintf(format, args);
    va_end(args);
    struct test_provider p;
    open_energy(&p, root, "powercap", NULL);
    char *message = test_provider_start_error(&p, VIGIL_PROVIDER_ERROR_UNAVAILABLE);
    char *whole = g_strdup_printf("no energy source can run here; powercap: %s", want);
    assert_string_equal(message, whole);
    g_free(whole);
    g_free(message);
    test_provider_close(&p);
    expect_auto_falls_back(root, want);
    g_free(want);
}

/* Powercap ------------------------------------------------------------------------------------ */

static void powercap_counts_joules_per_zone(void **state)
{
    const char *root = *state;
    write_zone(root, "intel-rapl:0", "package-0", PKG_RANGE_UJ, "1000000");
    write_zone(root, "intel-rapl:0:0", "dram", DRAM_RANGE_UJ, "200000");
    struct test_provider p;
    open_energy(&p, root, "powercap", NULL);
    test_provider_start_ok(&p);
    assert_int_equal(vigil_metric_count(p.catalog), 2);
    const char *names[] = {"energy.pkg0_j", "energy.pkg0.dram_j"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        test_assert_metric(&p, names[i], "J", VIGIL_METRIC_COUNTER, VIGIL_METRIC_MEASURED,
                           "energy/powercap");

    GHashTable *s = test_provider_read_ok(&p, 10 * NS_PER_S);
    assert_int_equal(g_hash_table_size(s), 2);
    test_assert_sample(s, "energy.pkg0_j", 0.0);
    test_assert_sample(s, "energy.pkg0.dram_j", 0.0);
    g_hash_table_destroy(s);

    set_energy_uj(root, "intel-rapl:0", "3500000");
    set_energy_uj(root, "intel-rapl:0:0", "700000");
    s = test_provider_read_ok(&p, 10 * NS_PER_S + 100000000);
    test_assert_sample(s, "energy.pkg0_j", 2.5);
    test_assert_sample(s, "energy.pkg0.dram_j", 0.5);
    assert_int_equal(sample_flags(s, "energy.pkg0_j"), 0);
    assert_int_equal(sample_flags(s, "energy.pkg0.dram_j"), 0);
    g_hash_table_destroy(s);

    set_energy_uj(root, "intel-rapl:0", "4000001");
    s = test_provider_read_ok(&p, 10 * NS_PER_S + 200000000);
    test_assert_sample(s, "energy.pkg0_j", 3000001.0 / 1e6);
    test_assert_sample(s, "energy.pkg0.dram_j", 0.5);
    g_hash_table_destroy(s);
    test_provider_close(&p);
}

static void powercap_names_every_zone(void **state)
{
    const char *root = *state;
    write_zone(root, "intel-rapl:0", "package-0", PKG_RANGE_UJ, "1");
    write_zone(root, "intel-rapl:0:0", "core", PKG_RANGE_UJ, "1");
    write_zone(root, "intel-rapl:0:1", "uncore", PKG_RANGE_UJ, "1");
    write_zone(root, "intel-rapl:1", "package-1", PKG_RANGE_UJ, "1");
    write_zone(root, "intel-rapl:1:0", "dram", DRAM_RANGE_UJ, "1");
    write_zone(root, "intel-rapl:2", "psys", PKG_RANGE_UJ, "1");
    write_zone(root, "intel-rapl:10", "package-0-die-1", PKG_RANGE_UJ, "1");
    /* Left out: the same package through MMIO, and the control type. */
    write_zone(root, "intel-rapl-mmio:0", "package-0", PKG_RANGE_UJ, "1");
    test_write_file(root, "sys/class/powercap/intel-rapl/enabled", "1\n");
    struct test_provider p;
    open_energy(&p, root, "powercap", NULL);
    test_provider_start_ok(&p);
    const char *names[] = {"energy.pkg0_j",      "energy.pkg0.core_j", "energy.pkg0.uncore_j",
                           "energy.pkg1_j",      "energy.pkg1.dram_j", "energy.psys_j",
                           "energy.pkg0_die_1_j"};
    assert_int_equal(vigil_metric_count(p.catalog), G_N_ELEMENTS(names));
    GHashTable *s = test_provider_read_ok(&p, NS_PER_S);
    assert_int_equal(g_hash_table_size(s), G_N_ELEMENTS(names));
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        test_metric(&p, names[i]);
        test_assert_sample(s, names[i], 0.0);
    }
    g_hash_table_destroy(s);
    test_provider_close(&p);
}

static void powercap_unwraps_the_counter(void **state)
{
    const char *root = *state;
    write_zone(root, "intel-rapl:0", "package-0", PKG_RANGE_UJ, "262143000000");
    /* (262143328850 − 262143000000) + 500000 + 1 */
    static const struct reading readings[] = {
        {NULL, NS_PER_S, 0.0, 0},
        {"500000", 2 * NS_PER_S, 828851.0 / 1e6, 0},
        {"1500000", 3 * NS_PER_S, 1828851.0 / 1e6, 0},
    };
    expect_readings(root, "powercap", NULL, readings, G_N_ELEMENTS(readings));
}

/* A range of 1000 J at max_power_w = 1000 W goes round in exactly 1 s:
 * a gap of 1 s cannot hide a wrap, one of 1 s + 1 ns can. */
static void powercap_long_gap_is_uncertain(void **state)
{
    const char *root = *state;
    write_zone(root, "intel-rapl:0", "package-0", "1000000000", "0");
    static const struct reading readings[] = {
        {NULL, 5 * NS_PER_S, 0.0, 0},
        {"100", 6 * NS_PER_S, 100.0 / 1e6, 0},
        {"300", 7 * NS_PER_S + 1, 300.0 / 1e6, VIGIL_SAMPLE_UNCERTAIN},
        {"600", 7 * NS_PER_S + 100000000, 600.0 / 1e6, 0},
    };
    expect_readings(root, "powercap", "max_power_w = 1000\n", readings, G_N_ELEMENTS(readings));
}

/* The bound scales with max_power_w: at 500 W the same range lasts 2 s. */
static void powercap_gap_bound_follows_max_power(void **state)
{
    const char *root = *state;
    write_zone(root, "intel-rapl:0", "package-0", "1000000000", "0");
    static const struct reading readings[] = {
        {NULL, NS_PER_S, 0.0, 0},
        {NULL, 3 * NS_PER_S, 0.0, 0},
        {NULL, 5 * NS_PER_S + 1, 0.0, VIGIL_SAMPLE_UNCERTAIN},
    };
    expect_readings(root, "powercap", "max_power_w = 500\n", readings, G_N_ELEMENTS(readings));
}

/* energy_uj root-only, as Linux makes it since 5.10: the read overrides
 * are out of the effective set for the start. */
static void powercap_permission_denied(void **state)
{
    const char *root = *state;
    write_zone(root, "intel-rapl:0", "package-0", PKG_RANGE_UJ, "5");
    write_stat(root, "1 0 1 8 0 0 0 0 0 0", FALSE);
    struct test_caps saved;
    test_deny_read(root, "sys/class/powercap/intel-rapl:0/energy_uj", &saved);
    expect_powercap_unavailable(root,
                                "permission denied on %s/sys/class/powercap/intel-rapl:0/energy_uj "
                                "(Linux makes energy_uj root-only since 5.10, against the "
                                "PLATYPUS side channel)",
                                root);
    test_caps_restore(&saved);
}

/* Unreadable for another reason than permissions, which works as root
 * too: energy_uj is a directory, so it opens but cannot be read. */
static void powercap_unreadable_counter(void **state)
{
    const char *root = *state;
    write_zone(root, "intel-rapl:0", "package-0", PKG_RANGE_UJ, "5");
    write_zone(root, "intel-rapl:0:0", "dram", DRAM_RANGE_UJ, "5");
    write_stat(root, "1 0 1 8 0 0 0 0 0 0", FALSE);
    char *energy = g_build_filename(root, "sys/class/powercap/intel-rapl:0:0/energy_uj", NULL);
    assert_int_equal(g_unlink(energy), 0);
    assert_int_equal(g_mkdir(energy, 0755), 0);

    expect_powercap_unavailable(root, "cannot read %s: %s", energy, g_strerror(EISDIR));
    g_free(energy);
}

static void powercap_unreadable_range(void **state)
{
    const char *root = *state;
    write_zone(root, "intel-rapl:0", "package-0", "0", "5");
    expect_unavailable(root, "powercap", "intel-rapl:0/max_energy_range_uj is 0");
}

static void no_powercap_dir(void **state)
{
    const char *root = *state;
    write_stat(root, "1 0 1 8 0 0 0 0 0 0", FALSE);
    expect_powercap_unavailable(root, "%s/sys/class/powercap absent", root);
}

static void powercap_without_rapl_zones(void **state)
{
    const char *root = *state;
    write_stat(root, "1 0 1 8 0 0 0 0 0 0", FALSE);
    write_zone(root, "intel-rapl-mmio:0", "package-0", PKG_RANGE_UJ, "5");
    expect_powercap_unavailable(root, "%s/sys/class/powercap has no intel-rapl:N zone", root);
}

/* Falling back
 * ---------------------------------------------------------------------------------------- */

static void auto_prefers_powercap(void **state)
{
    const char *root = *state;
    write_stat(root, "1 0 1 8 0 0 0 0 0 0", FALSE);
    write_zone(root, "intel-rapl:0", "package-0", PKG_RANGE_UJ, "5");
    struct test_provider p;
    char *logged = start_auto(&p, root);
    assert_string_equal(logged, "message: energy from energy/powercap\n");
    assert_string_equal(p.ops->note(p.instance), "energy/powercap");
    assert_int_equal(vigil_metric_count(p.catalog), 1);
    assert_int_equal(test_metric(&p, "energy.pkg0_j")->origin, VIGIL_METRIC_MEASURED);
    assert_null(vigil_metric_lookup(p.catalog, "energy.node_j"));
    g_free(logged);
    test_provider_close(&p);
}

static void auto_with_nothing_to_read(void **state)
{
    const char *root = *state;
    char *powercap = g_strdup_printf("no energy source can run here; powercap: "
                                     "%s/sys/class/powercap absent; estimate: ",
                                     root);
    char *stat_path = g_build_filename(root, "proc/stat", NULL);
    expect_unavailable(root, "powercap;estimate", powercap);
    expect_unavailable(root, "powercap;estimate", stat_path);
    g_free(stat_path);
    g_free(powercap);
}

/* Estimate ------------------------------------------------------------------------------------ */

/* idle 50 W, max 150 W, one socket. */
static void estimate_integrates_the_model(void **state)
{
    static const struct reading readings[] = {
        {"100 0 100 800 0 0 0 0 0 0", NS_PER_S, 0.0, 0},
        /* Half busy for 2 s: 100 W × 2 s. */
        {"150 0 150 900 0 0 0 0 0 0", 3 * NS_PER_S, 200.0, 0},
        /* iowait is idle: 50 W × 1 s. */
        {"150 0 150 950 50 0 0 0 0 0", 4 * NS_PER_S, 250.0, 0},
        /* Every busy field counts, guest does not (it is inside user
         * already): 70 busy ticks of 90, for 0.5 s. */
        {"170 10 160 960 60 10 10 10 1000 0", 4 * NS_PER_S + 500000000,
         250.0 + (50.0 + (150.0 - 50.0) * (1.0 - 20.0 / 90.0)) * 0.5, 0},
    };
    expect_readings(*state, "estimate", "idle_w = 50\nmax_w = 150\nsockets = 1\n", readings,
                    G_N_ELEMENTS(readings));
}

/* Two sockets at 140 W busy: 280 W. Without new ticks the node is taken to
 * be as busy as before. */
static void estimate_sockets_and_quiet_intervals(void **state)
{
    static const struct reading readings[] = {
        {"0 0 0 0 0 0 0 0 0 0", NS_PER_S, 0.0, 0},
        {"100 0 0 0 0 0 0 0 0 0", 2 * NS_PER_S, 280.0, 0},
        {NULL, 2 * NS_PER_S + 500000000, 420.0, 0},
    };
    expect_readings(*state, "estimate", "idle_w = 40\nmax_w = 140\nsockets = 2\n", readings,
                    G_N_ELEMENTS(readings));
}

/* Ticks that go backwards give no utilisation: the previous one is used
 * (idle, at first) and the sample is marked. */
static void estimate_ticks_backwards(void **state)
{
    static const struct reading readings[] = {
        {"500 0 0 500 0 0 0 0 0 0", NS_PER_S, 0.0, 0},
        {"400 0 0 600 0 0 0 0 0 0", 2 * NS_PER_S, 50.0, VIGIL_SAMPLE_UNCERTAIN},
    };
    expect_readings(*state, "estimate", NULL, readings, G_N_ELEMENTS(readings));
}

/* A field past 64 bits is G_MAXUINT64, as strtoull takes it, not the end
 * of the line: idle stays there, and one busy tick in 1 s is 150 W. */
static void estimate_a_number_past_64_bits(void **state)
{
    static const struct reading readings[] = {
        {"1 0 0 99999999999999999999999 0 0 0 0 0 0", NS_PER_S, 0.0, 0},
        {"2 0 0 99999999999999999999999 0 0 0 0 0 0", 2 * NS_PER_S, 150.0, 0},
    };
    expect_readings(*state, "estimate", "idle_w = 50\nmax_w = 150\nsockets = 1\n", readings,
                    G_N_ELEMENTS(readings));
}

static void estimate_bad_stat(void **state)
{
    const char *root = *state;
    test_write_file(root, "proc/stat", "intr 1 2 3\n");
    expect_unavailable(root, "estimate", "does not start with a \"cpu \" line");
}

/* test_provider_open fails the test on a create error: this one is done by
 * hand, to see create refuse idle_w above max_w. */
static void idle_above_max_is_refused(void **state)
{
    const char *root = *state;
    vigil_plugin_registry *registry =
        vigil_plugin_registry_new(test_env_or_fail("VIGIL_TEST_PROVIDER_DIR"));
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry);
    GError *error = NULL;
    const struct vigil_plugin *plugin =
        vigil_plugin_registry_load(registry, VIGIL_PLUGIN_PROVIDER, "energy", &error);
    assert_non_null(plugin);
    test_write_file(root, "vigil.conf", "[provider.energy]\nidle_w = 200\nmax_w = 150\n");
    char *path = g_build_filename(root, "vigil.conf", NULL);
    assert_true(vigil_config_load(config, path, &error));
    struct vigil_plugin_context ctx = {config, "provider.energy"};
    assert_null(plugin->descriptor->create(&ctx, &error));
    assert_true(g_error_matches(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE));
    assert_string_equal(error->message, "[provider.energy] idle_w (200 W) is above max_w (150 W)");
    g_error_free(error);
    g_free(path);
    vigil_config_free(config);
    vigil_plugin_registry_free(registry);
}

/* This machine ------------------------------------------------------------------------------- */

/* Where the node has RAPL and vigil may read it, powercap starts; where it
 * has none (this build machine) the message must say powercap is why. */
static void real_node_powercap(void **state)
{
    (void)state;
    struct test_provider p;
    open_energy(&p, "/", "powercap", NULL);
    GError *error = NULL;
    if (test_provider_start(&p, &error)) {
        assert_true(vigil_metric_count(p.catalog) >= 1);
        assert_null(vigil_metric_lookup(p.catalog, "energy.node_j"));
    } else {
        assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE));
        test_assert_contains(error->message, "/sys/class/powercap");
        g_error_free(error);
    }
    test_provider_close(&p);
}

static void real_node_auto(void **state)
{
    (void)state;
    struct test_provider p;
    /* Without likwid, which tests/integration/test_energy_chain.c runs. */
    char *logged = start_auto(&p, "/");
    GHashTable *s = test_provider_read_ok(&p, NS_PER_S);
    GHashTable *later = test_provider_read_ok(&p, 2 * NS_PER_S);
    if (vigil_metric_lookup(p.catalog, "energy.node_j") != NULL) {
        test_assert_contains(logged, "powercap");
        test_assert_sample(s, "energy.node_j", 0.0);
        /* Whatever the load, one second lies between idle and max power. */
        double joules = test_sample_value(later, "energy.node_j");
        assert_true(joules >= 50.0 && joules <= 150.0);
    } else {
        test_assert_contains(logged, "energy from energy/");
        assert_true(g_hash_table_size(s) >= 1);
    }
    g_hash_table_destroy(later);
    g_hash_table_destroy(s);
    g_free(logged);
    test_provider_close(&p);
}

TEST_MAIN(TEST_WITH_DIR(powercap_counts_joules_per_zone), TEST_WITH_DIR(powercap_names_every_zone),
          TEST_WITH_DIR(powercap_unwraps_the_counter),
          TEST_WITH_DIR(powercap_long_gap_is_uncertain),
          TEST_WITH_DIR(powercap_gap_bound_follows_max_power),
          TEST_WITH_DIR(powercap_permission_denied), TEST_WITH_DIR(powercap_unreadable_counter),
          TEST_WITH_DIR(powercap_unreadable_range), TEST_WITH_DIR(no_powercap_dir),
          TEST_WITH_DIR(powercap_without_rapl_zones), TEST_WITH_DIR(auto_prefers_powercap),
          TEST_WITH_DIR(auto_with_nothing_to_read), TEST_WITH_DIR(estimate_integrates_the_model),
          TEST_WITH_DIR(estimate_sockets_and_quiet_intervals),
          TEST_WITH_DIR(estimate_ticks_backwards), TEST_WITH_DIR(estimate_a_number_past_64_bits),
          TEST_WITH_DIR(estimate_bad_stat), TEST_WITH_DIR(idle_above_max_is_refused),
          TEST_WITH_DIR(real_node_powercap), TEST_WITH_DIR(real_node_auto))
