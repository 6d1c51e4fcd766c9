/* The energy provider with its default sources (likwid;powercap;estimate)
 * on this machine, as vigild starts it: the real liblikwid is called. On
 * the build machine (no RAPL: no /sys/class/powercap, no msr module) the
 * chain must end in the estimate, and the provider's note and log must say
 * why likwid and powercap were not used. On a node with either, this test
 * has nothing to check and is skipped. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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

static void chain_ends_in_estimate_here(void **state)
{
    (void)state;
    test_skip_unless(access("/sys/class/powercap", F_OK) != 0 &&
                         access("/dev/cpu/0/msr", F_OK) != 0,
                     "RAPL may be readable here (powercap or the msr module): this test is about "
                     "a machine without it");
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

int main(void)
{
    /* Kept mapped after the plugin is unloaded, so that LeakSanitizer can
     * name liblikwid's frames in what it leaks (tests/lsan-likwid.supp). */
#ifdef VIGIL_HAVE_LIKWID
    (void)dlopen("liblikwid.so.5", RTLD_NOW | RTLD_NODELETE);
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chain_ends_in_estimate_here),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
