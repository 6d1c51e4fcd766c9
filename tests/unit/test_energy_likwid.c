/* The energy provider's likwid source on the liblikwid test double
 * (plugins/providers/energy/likwid_double.c): counters scripted per CPU and
 * register, units from the double's PowerInfo, and each of likwid 5.2.2's
 * traps giving its own reason. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "energy_source.h"
#include "likwid_double.h"
#include "test_provider.h"
#include "test_support.h"
#include "test_main.h"

#define NS_PER_S 1000000000ull

/* An Intel PKG unit of 2^-14 J: 16384 counts are one joule. */
#define INTEL_COUNTS_PER_J 16384u

struct run {
    vigil_metric_catalog *catalog;
    void *state;
    GHashTable *values; /* metric name → struct sample */
};

struct sample {
    double value;
    uint32_t flags;
};

static void collect(void *user, uint32_t metric_id, double value, uint32_t flags)
{
    struct run *r = user;
    struct sample *s = g_new(struct sample, 1);
    s->value = value;
    s->flags = flags;
    g_hash_table_insert(r->values, g_strdup(vigil_metric_get(r->catalog, metric_id)->name), s);
}

static void collect_process(void *user, uint64_t process_id, uint32_t metric_id, double value,
                            uint32_t flags)
{
    (void)user;
    (void)process_id;
    (void)metric_id;
    (void)value;
    (void)flags;
    fail_msg("the likwid source emitted a process's value");
}

static struct energy_settings settings(void)
{
    return (struct energy_settings){.root = "/", .max_power_w = 1000, .likwid = &likwid_double_api};
}

static void start_ok(struct run *r)
{
    struct energy_settings s = settings();
    r->catalog = vigil_metric_catalog_new();
    r->values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    GError *error = NULL;
    r->state = energy_source_likwid.start(&s, r->catalog, &error);
    if (r->state == NULL)
        fail_msg("start: %s", error->message);
}

/* start() must fail: returns its reason (g_free it). Nothing registered. */
static char *start_error(void)
{
    struct energy_settings s = settings();
    vigil_metric_catalog *catalog = vigil_metric_catalog_new();
    GError *error = NULL;
    void *state = energy_source_likwid.start(&s, catalog, &error);
    assert_null(state);
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE));
    assert_int_equal(vigil_metric_count(catalog), 0);
    vigil_metric_catalog_free(catalog);
    char *message = g_strdup(error->message);
    g_error_free(error);
    return message;
}

static void read_ok(struct run *r, guint64 now_ns)
{
    struct vigil_sample_sink sink = {.emit = collect, .emit_process = collect_process, .user = r};
    g_hash_table_remove_all(r->values);
    GError *error = NULL;
    if (!energy_source_likwid.read(r->state, now_ns, &sink, &error))
        fail_msg("read: %s", error->message);
}

static const struct sample *sample_of(struct run *r, const char *metric)
{
    const struct sample *s = g_hash_table_lookup(r->values, metric);
    if (s == NULL)
        fail_msg("no sample of %s", metric);
    return s;
}

static void expect(struct run *r, const char *metric, double want_j, uint32_t want_flags)
{
    const struct sample *s = sample_of(r, metric);
    if (!(fabs(s->value - want_j) <= 1e-9 * MAX(1.0, fabs(want_j))))
        fail_msg("%s: %.12g J, expected %.12g J", metric, s->value, want_j);
    assert_int_equal(s->flags, want_flags);
}

static void stop(struct run *r)
{
    int finalized = likwid_double.finalized;
    energy_source_likwid.stop(r->state);
    assert_int_equal(likwid_double.finalized, finalized + 2); /* power and topology */
    g_hash_table_destroy(r->values);
    vigil_metric_catalog_free(r->catalog);
}

static void set_counter(int cpu, uint32_t reg, uint32_t value)
{
    likwid_double_counter(cpu, reg)->value = value;
}

/* Intel ---------------------------------------------------------------------------------------- */

/* Two sockets, interleaved CPUs (socket 1's first CPU is 1): PKG, PP0 and
 * DRAM per socket, each with its own unit from PowerInfo. */
static void intel_counts_joules_per_domain(void **state)
{
    (void)state;
    likwid_double_reset_intel(2);
    struct run r;
    start_ok(&r);
    assert_int_equal(likwid_double.mode_set, ACCESSMODE_DIRECT);
    assert_int_equal(likwid_double.power_init_cpu, 0);
    const char *names[] = {"energy.pkg0_j", "energy.pkg0.core_j", "energy.pkg0.dram_j",
                           "energy.pkg1_j", "energy.pkg1.core_j", "energy.pkg1.dram_j"};
    assert_int_equal(vigil_metric_count(r.catalog), G_N_ELEMENTS(names));
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        const struct vigil_metric_desc *m = vigil_metric_lookup(r.catalog, names[i]);
        assert_non_null(m);
        assert_string_equal(m->unit, "J");
        assert_int_equal(m->kind, VIGIL_METRIC_COUNTER);
        assert_int_equal(m->origin, VIGIL_METRIC_MEASURED);
        assert_string_equal(m->source, "energy/likwid");
    }
    assert_string_equal(energy_source_likwid.note(r.state),
                        "likwid domains left out: PP1 not supported, PLATFORM not supported");
    read_ok(&r, 10 * NS_PER_S);
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        expect(&r, names[i], 0.0, 0);

    set_counter(0, LIKWID_MSR_PKG_ENERGY_STATUS, 3 * INTEL_COUNTS_PER_J);
    set_counter(0, LIKWID_MSR_PP0_ENERGY_STATUS, INTEL_COUNTS_PER_J);
    set_counter(0, LIKWID_MSR_DRAM_ENERGY_STATUS, 100000); /* × 15.3 µJ */
    set_counter(1, LIKWID_MSR_PKG_ENERGY_STATUS, 5 * INTEL_COUNTS_PER_J);
    read_ok(&r, 11 * NS_PER_S);
    expect(&r, "energy.pkg0_j", 3.0, 0);
    expect(&r, "energy.pkg0.core_j", 1.0, 0);
    expect(&r, "energy.pkg0.dram_j", 100000 * 15.3e-6, 0);
    expect(&r, "energy.pkg1_j", 5.0, 0);
    expect(&r, "energy.pkg1.core_j", 0.0, 0);
    stop(&r);
}

/* A node of one Intel socket, the source started and read once, at 1 s. */
static void start_one_intel_socket(struct run *r)
{
    likwid_double_reset_intel(1);
    start_ok(r);
    read_ok(r, NS_PER_S);
}

/* A counter that goes past 2^32 - 1 starts again from 0: each read takes
 * the difference modulo 2^32, across two wraps in a row. */
static void intel_counter_wraps(void **state)
{
    (void)state;
    likwid_double_reset_intel(1);
    set_counter(0, LIKWID_MSR_PKG_ENERGY_STATUS, UINT32_MAX - INTEL_COUNTS_PER_J + 1);
    struct run r;
    start_ok(&r);
    read_ok(&r, NS_PER_S);
    expect(&r, "energy.pkg0_j", 0.0, 0);
    set_counter(0, LIKWID_MSR_PKG_ENERGY_STATUS, INTEL_COUNTS_PER_J); /* 1 J to the top, 1 after */
    read_ok(&r, 2 * NS_PER_S);
    expect(&r, "energy.pkg0_j", 2.0, 0);
    set_counter(0, LIKWID_MSR_PKG_ENERGY_STATUS, 2 * INTEL_COUNTS_PER_J);
    read_ok(&r, 3 * NS_PER_S);
    expect(&r, "energy.pkg0_j", 3.0, 0);
    set_counter(0, LIKWID_MSR_PKG_ENERGY_STATUS, 0); /* round again: 2^32 - 2 J... counts */
    read_ok(&r, 4 * NS_PER_S);
    expect(&r, "energy.pkg0_j", 3.0 + (4294967296.0 - 2 * INTEL_COUNTS_PER_J) / INTEL_COUNTS_PER_J,
           0);
    stop(&r);
}

/* At 1000 W a 2^32 counter of 2^-14 J turns in 262 s: a longer gap could
 * hide a whole turn, and the sample says so. */
static void intel_long_gap_is_uncertain(void **state)
{
    (void)state;
    struct run r;
    start_one_intel_socket(&r);
    set_counter(0, LIKWID_MSR_PKG_ENERGY_STATUS, 10 * INTEL_COUNTS_PER_J);
    read_ok(&r, 261 * NS_PER_S);
    expect(&r, "energy.pkg0_j", 10.0, 0);
    set_counter(0, LIKWID_MSR_PKG_ENERGY_STATUS, 20 * INTEL_COUNTS_PER_J);
    read_ok(&r, 561 * NS_PER_S);
    expect(&r, "energy.pkg0_j", 20.0, VIGIL_SAMPLE_UNCERTAIN);
    stop(&r);
}

/* The units are PowerInfo's, per domain: a changed unit changes the
 * joules, and a domain without its status support is left out. */
static void units_come_from_likwid(void **state)
{
    (void)state;
    likwid_double_reset_intel(1);
    likwid_double.power.domains[PKG].energyUnit = 1.0 / 1024;
    likwid_double.power.domains[DRAM].supportFlags = 0; /* a domain missing */
    likwid_double.power.domains[PLATFORM].supportFlags = POWER_DOMAIN_SUPPORT_STATUS;
    likwid_double.power.domains[PLATFORM].energyUnit = 1.0 / 256;
    struct run r;
    start_ok(&r);
    assert_null(vigil_metric_lookup(r.catalog, "energy.pkg0.dram_j"));
    assert_non_null(vigil_metric_lookup(r.catalog, "energy.psys_j"));
    assert_string_equal(energy_source_likwid.note(r.state),
                        "likwid domains left out: PP1 not supported, DRAM not supported");
    read_ok(&r, NS_PER_S);
    set_counter(0, LIKWID_MSR_PKG_ENERGY_STATUS, 2048);
    set_counter(0, LIKWID_MSR_PLATFORM_ENERGY, 256);
    read_ok(&r, 2 * NS_PER_S);
    expect(&r, "energy.pkg0_j", 2.0, 0);
    expect(&r, "energy.psys_j", 1.0, 0);
    assert_null(g_hash_table_lookup(r.values, "energy.pkg0.dram_j"));
    stop(&r);
}

/* A read that fails names its register and CPU; the other zones are read,
 * and the failed one counts its energy at its next good read. */
static void failed_read_is_caught_up(void **state)
{
    (void)state;
    struct run r;
    start_one_intel_socket(&r);
    likwid_double_counter(0, LIKWID_MSR_DRAM_ENERGY_STATUS)->read_result = -EIO;
    set_counter(0, LIKWID_MSR_DRAM_ENERGY_STATUS, 200000);
    set_counter(0, LIKWID_MSR_PKG_ENERGY_STATUS, INTEL_COUNTS_PER_J);
    struct vigil_sample_sink sink = {.emit = collect, .emit_process = collect_process, .user = &r};
    GError *error = NULL;
    g_hash_table_remove_all(r.values);
    assert_false(energy_source_likwid.read(r.state, 2 * NS_PER_S, &sink, &error));
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ));
    assert_string_equal(error->message,
                        "likwid: power_read of MSR 0x619 (DRAM) on CPU 0 returned -5");
    g_error_free(error);
    expect(&r, "energy.pkg0_j", 1.0, 0);
    likwid_double_counter(0, LIKWID_MSR_DRAM_ENERGY_STATUS)->read_result = 0;
    read_ok(&r, 3 * NS_PER_S);
    expect(&r, "energy.pkg0.dram_j", 200000 * 15.3e-6, 0);
    stop(&r);
}

/* AMD ------------------------------------------------------------------------------------------ */

/* likwid 5.2.2 on Zen: domain 0 is CORE (its type still says PKG), domain
 * 1 is PKG, with AMD's registers. */
static void amd_domain_zero_is_core(void **state)
{
    (void)state;
    likwid_double_reset_amd(1);
    assert_int_equal(likwid_double.power.domains[0].type, PKG); /* the trap */
    struct run r;
    start_ok(&r);
    assert_int_equal(vigil_metric_count(r.catalog), 2);
    read_ok(&r, NS_PER_S);
    set_counter(0, LIKWID_MSR_AMD_CORE_ENERGY, 65536);
    set_counter(0, LIKWID_MSR_AMD_PKG_ENERGY, 3 * 65536);
    read_ok(&r, 2 * NS_PER_S);
    expect(&r, "energy.pkg0.core_j", 1.0, 0);
    expect(&r, "energy.pkg0_j", 3.0, 0);
    stop(&r);
}

/* Reasons -------------------------------------------------------------------------------------- */

static void expect_reason(const char *want)
{
    int finalized = likwid_double.finalized;
    char *message = start_error();
    assert_string_equal(message, want);
    g_free(message);
    assert_true(likwid_double.finalized > finalized); /* what was set up is undone */
}

/* This build machine's case: AMD family 0x1a, no msr module, root. */
static void no_access_on_a_new_amd(void **state)
{
    (void)state;
    likwid_double_reset_amd(1);
    likwid_double.info.family = 0x1a;
    likwid_double.power_init_result = -1;
    expect_reason("cannot read MSR 0xc0010299: no access (power_init returned -1; /dev/cpu/0/msr "
                  "absent: the msr kernel module is not loaded; likwid 5.2.2 knows RAPL on AMD "
                  "families 0x17 and 0x19 only, this CPU is family 0x1a: power_init would find "
                  "no RAPL with access either)");
    assert_int_equal(likwid_double.mode_set, ACCESSMODE_DIRECT);
}

/* Not root: the MSR device is root-only, and Debian's access daemon is not
 * setuid, so it would not help. */
static void no_access_as_a_user(void **state)
{
    (void)state;
    likwid_double_reset_intel(1);
    likwid_double.power_init_result = -13;
    likwid_double.msr_errno = EACCES;
    likwid_double.euid = 1000;
    expect_reason("cannot read MSR 0x606: no access (power_init returned -13; /dev/cpu/0/msr: "
                  "permission denied, it needs root and CAP_SYS_RAWIO; /usr/sbin/likwid-accessD "
                  "is not setuid root, so likwid's access daemon gives no access either)");
    likwid_double.daemon_setuid_root = true;
    expect_reason("cannot read MSR 0x606: no access (power_init returned -13; /dev/cpu/0/msr: "
                  "permission denied, it needs root and CAP_SYS_RAWIO)");
}

static void power_init_finds_no_rapl(void **state)
{
    (void)state;
    likwid_double_reset_intel(1);
    likwid_double.info.model = 0xcf;
    likwid_double.power_init_result = 0;
    expect_reason("power_init found no RAPL on CPU family 0x6 model 0xcf: likwid returns 0 for CPU "
                  "models newer than its release");
}

static void perf_event_mode(void **state)
{
    (void)state;
    likwid_double_reset_intel(1);
    likwid_double.configuration.daemonMode = ACCESSMODE_PERF;
    expect_reason("likwid is configured for perf_event access, where power_init returns 0: no "
                  "RAPL through likwid");
    assert_int_equal(likwid_double.power_init_cpu, -1); /* never called */
}

static void second_socket_without_access(void **state)
{
    (void)state;
    likwid_double_reset_intel(2);
    likwid_double.add_thread_result = -19;
    expect_reason("cannot read MSR 0x606 on CPU 1: no access (HPMaddThread returned -19)");
}

/* A supported domain whose first read fails fails the source: a total
 * without it would under-report. */
static void supported_domain_unreadable(void **state)
{
    (void)state;
    likwid_double_reset_intel(1);
    likwid_double_counter(0, LIKWID_MSR_PP0_ENERGY_STATUS)->read_result = -5;
    expect_reason("cannot read MSR 0x639 (PP0) on CPU 0: power_read returned -5");
}

static void no_domain_at_all(void **state)
{
    (void)state;
    likwid_double_reset_intel(1);
    for (int d = 0; d < NUM_POWER_DOMAINS; d++)
        likwid_double.power.domains[d].supportFlags = 0;
    expect_reason("power_init found RAPL but no domain vigil can read");
}

static void topology_fails(void **state)
{
    (void)state;
    likwid_double_reset_intel(1);
    likwid_double.topology_result = -1;
    char *message = start_error();
    assert_string_equal(message, "topology_init failed");
    g_free(message);
}

/* likwid reads this machine: a fixture root is not for it. */
static void fixture_root_is_refused(void **state)
{
    (void)state;
    likwid_double_reset_intel(1);
    struct energy_settings s = settings();
    s.root = "/tmp/fixture";
    vigil_metric_catalog *catalog = vigil_metric_catalog_new();
    GError *error = NULL;
    assert_null(energy_source_likwid.start(&s, catalog, &error));
    assert_string_equal(error->message, "root is /tmp/fixture, and likwid reads this machine's "
                                        "registers, not a fixture tree");
    g_error_free(error);
    vigil_metric_catalog_free(catalog);
}

/* The chain ---------------------------------------------------------------------------------------
 */

/* likwid first and unavailable: the chain goes on to the estimate (on a
 * fixture /proc/stat), and its note gives likwid's and powercap's reasons. */
static void chain_falls_back_with_reasons(void **state)
{
    const char *root = *state;
    test_write_file(root, "proc/stat", "cpu  1 0 1 8 0 0 0 0 0 0\n");
    likwid_double_reset_intel(1);
    likwid_double.power_init_result = -1;
    struct energy_settings s = settings();
    s.idle_w = 50;
    s.max_w = 150;
    s.sockets = 1;
    /* The estimate reads the fixture; likwid is the double whatever the root. */
    s.root = (char *)root; /* the test keeps it */
    const char *names[] = {"powercap", "estimate", NULL};
    vigil_metric_catalog *catalog = vigil_metric_catalog_new();
    struct energy_chain chain;
    GError *error = NULL;
    assert_true(energy_chain_start(&chain, names, &s, catalog, &error));
    assert_ptr_equal(chain.active, &energy_source_estimate);
    char *want = g_strdup_printf("energy/estimate (estimated); not used: powercap: "
                                 "%s/sys/class/powercap absent",
                                 root);
    assert_string_equal(energy_chain_note(&chain), want);
    g_free(want);
    energy_chain_clear(&chain);
    vigil_metric_catalog_free(catalog);

    /* likwid first, on this machine's /proc/stat for the estimate. */
    s.root = "/";
    const char *likwid_first[] = {"likwid", "estimate", NULL};
    catalog = vigil_metric_catalog_new();
    assert_true(energy_chain_start(&chain, likwid_first, &s, catalog, &error));
    assert_ptr_equal(chain.active, &energy_source_estimate);
    test_assert_contains(energy_chain_note(&chain),
                         "energy/estimate (estimated); not used: likwid: cannot read MSR 0x606: "
                         "no access (power_init returned -1; ");
    assert_non_null(vigil_metric_lookup(catalog, "energy.node_j"));
    assert_null(vigil_metric_lookup(catalog, "energy.pkg0_j"));
    energy_chain_clear(&chain);
    vigil_metric_catalog_free(catalog);
}

TEST_MAIN(cmocka_unit_test(intel_counts_joules_per_domain), cmocka_unit_test(intel_counter_wraps),
          cmocka_unit_test(intel_long_gap_is_uncertain), cmocka_unit_test(units_come_from_likwid),
          cmocka_unit_test(failed_read_is_caught_up), cmocka_unit_test(amd_domain_zero_is_core),
          cmocka_unit_test(no_access_on_a_new_amd), cmocka_unit_test(no_access_as_a_user),
          cmocka_unit_test(power_init_finds_no_rapl), cmocka_unit_test(perf_event_mode),
          cmocka_unit_test(second_socket_without_access),
          cmocka_unit_test(supported_domain_unreadable), cmocka_unit_test(no_domain_at_all),
          cmocka_unit_test(topology_fails), cmocka_unit_test(fixture_root_is_refused),
          cmocka_unit_test_setup_teardown(chain_falls_back_with_reasons, test_make_dir,
                                          test_remove_dir))
