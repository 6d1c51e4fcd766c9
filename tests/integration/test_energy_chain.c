/* The energy provider with its default sources (likwid;powercap;estimate)
 * on this machine, as vigild starts it: the real liblikwid is called. On
 * the build machine (no RAPL: no /sys/class/powercap, no msr module) the
 * chain must end in the estimate, and the provider's note and log must say
 * why likwid and powercap were not used. On a node with either, the chain
 * must measure (likwid or powercap, every metric MEASURED, counters that
 * do not go back), or, where RAPL is there but closed to this user, end in
 * the estimate with a reason for each source that is not "absent". */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_provider.h"
#include "test_support.h"

#define LOG_DOMAIN "vigil-provider-energy"

static void capture_message(const gchar *domain, GLogLevelFlags level, const gchar *message,
                            gpointer user_data)
{
    (void)domain;
    (void)level;
    g_string_append_printf(user_data, "%s\n", message);
}

static gboolean rapl_may_be_here(void)
{
    return access("/sys/class/powercap", F_OK) == 0 || access("/dev/cpu/0/msr", F_OK) == 0;
}

/* No RAPL here: the estimate, saying why likwid and powercap were not used. */
static void check_chain_ends_in_estimate(void)
{
    struct test_provider p;
    test_provider_open(&p, "energy", "[provider.energy]\n");
    GString *log = g_string_new(NULL);
    guint handler = g_log_set_handler(LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, capture_message, log);
    test_provider_start_ok(&p);
    g_log_remove_handler(LOG_DOMAIN, handler);

    test_assert_metric(&p, "energy.node_j", "J", VIGIL_METRIC_COUNTER, VIGIL_METRIC_ESTIMATED,
                       "energy/estimate");
    assert_int_equal(vigil_metric_count(p.catalog), 1);

    const char *note = p.ops->note(p.instance);
#ifdef VIGIL_HAVE_LIKWID
    const char *likwid = "likwid: cannot read MSR 0x";
    const char *likwid_why = ": no access (power_init returned -1; /dev/cpu/0/msr absent: the "
                             "msr kernel module is not loaded";
#else
    const char *likwid = "likwid: vigil was built without likwid";
    const char *likwid_why = likwid;
#endif
    const char *powercap = "powercap: /sys/class/powercap absent";
    assert_true(g_str_has_prefix(note, "energy/estimate (estimated); not used: likwid: "));
    test_assert_contains(note, likwid);
    test_assert_contains(note, likwid_why);
    assert_true(g_str_has_suffix(note, "; powercap: /sys/class/powercap absent"));
    test_assert_contains(log->str, likwid);
    test_assert_contains(log->str, likwid_why);
    test_assert_contains(log->str, powercap);
    test_assert_contains(log->str, "energy is estimated from /proc/stat");

    GHashTable *s = test_provider_read_ok(&p, 1000000000ull);
    test_assert_sample(s, "energy.node_j", 0.0);
    g_hash_table_destroy(s);
    g_string_free(log, TRUE);
    test_provider_close(&p);
}

/* RAPL may be here: the chain measures, or says why it cannot. */
static void check_chain_measures_or_says_why(void)
{
    struct test_provider p;
    test_provider_open(&p, "energy", "[provider.energy]\n");
    test_provider_start_ok(&p);
    const char *note = p.ops->note(p.instance);
    if (g_str_has_prefix(note, "energy/estimate")) {
        /* RAPL is there but closed to this user (energy_uj is root's since
         * Linux 5.10; the msr device needs CAP_SYS_RAWIO): each measuring
         * source must say so, not that it is absent. */
        test_assert_contains(note, "; not used: likwid: ");
        test_assert_contains(note, "; powercap: ");
        if (access("/sys/class/powercap", F_OK) == 0)
            assert_null(strstr(note, "powercap: /sys/class/powercap absent"));
        test_provider_close(&p);
        return;
    }
    const char *source =
        g_str_has_prefix(note, "energy/likwid") ? "energy/likwid" : "energy/powercap";
    assert_true(g_str_has_prefix(note, source));
    uint32_t n = vigil_metric_count(p.catalog);
    assert_true(n > 0);
    GHashTable *first = test_provider_read_ok(&p, 1000000000ull);
    GHashTable *second = test_provider_read_ok(&p, 2000000000ull);
    for (uint32_t id = 1; id <= n; id++) {
        const struct vigil_metric_desc *m = vigil_metric_get(p.catalog, id);
        assert_int_equal(m->origin, VIGIL_METRIC_MEASURED);
        assert_int_equal(m->kind, VIGIL_METRIC_COUNTER);
        assert_string_equal(m->unit, "J");
        assert_string_equal(m->source, source);
        /* A counter of joules does not go back. */
        assert_true(test_sample_value(second, m->name) >= test_sample_value(first, m->name));
    }
    g_hash_table_destroy(second);
    g_hash_table_destroy(first);
    test_provider_close(&p);
}

static void chain_on_this_machine(void **state)
{
    (void)state;
    if (rapl_may_be_here())
        check_chain_measures_or_says_why();
    else
        check_chain_ends_in_estimate();
}

int main(void)
{
    /* Kept mapped after the plugin is unloaded, so that LeakSanitizer can
     * name liblikwid's frames in what it leaks (tests/lsan-likwid.supp). */
#ifdef VIGIL_HAVE_LIKWID
    (void)dlopen("liblikwid.so.5", RTLD_NOW | RTLD_NODELETE);
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chain_on_this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
