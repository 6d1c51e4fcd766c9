/* Tests of the metric catalogue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "vigil/metric.h"
#include "test_main.h"

static void test_register_lookup_and_reregister(void **state)
{
    (void)state;
    vigil_metric_catalog *c = vigil_metric_catalog_new();
    GError *error = NULL;
    uint32_t energy = vigil_metric_register(c, "energy.pkg0_j", "J", VIGIL_METRIC_COUNTER,
                                            "energy/powercap", VIGIL_METRIC_MEASURED, &error);
    uint32_t mem = vigil_metric_register(c, "mem.used_bytes", "bytes", VIGIL_METRIC_GAUGE,
                                         "meminfo", VIGIL_METRIC_MEASURED, &error);
    assert_null(error);
    assert_int_equal(energy, 1);
    assert_int_equal(mem, 2);
    assert_int_equal(vigil_metric_count(c), 2);

    const struct vigil_metric_desc *d = vigil_metric_get(c, energy);
    assert_string_equal(d->name, "energy.pkg0_j");
    assert_string_equal(d->unit, "J");
    assert_int_equal(d->kind, VIGIL_METRIC_COUNTER);
    assert_string_equal(d->source, "energy/powercap");
    assert_ptr_equal(vigil_metric_lookup(c, "mem.used_bytes"), vigil_metric_get(c, mem));
    assert_null(vigil_metric_get(c, 0));
    assert_null(vigil_metric_get(c, 3));
    assert_null(vigil_metric_lookup(c, "nope"));

    /* The same description again: the same id (a provider restarting). */
    assert_int_equal(vigil_metric_register(c, "energy.pkg0_j", "J", VIGIL_METRIC_COUNTER,
                                           "energy/powercap", VIGIL_METRIC_MEASURED, &error),
                     energy);
    /* Another description under the same name: refused, and said why. */
    assert_int_equal(vigil_metric_register(c, "energy.pkg0_j", "J", VIGIL_METRIC_COUNTER,
                                           "energy/model", VIGIL_METRIC_ESTIMATED, &error),
                     0);
    assert_true(g_error_matches(error, VIGIL_METRIC_ERROR, VIGIL_METRIC_ERROR_CONFLICT));
    assert_non_null(strstr(error->message, "already registered as a measured counter"));
    g_clear_error(&error);
    vigil_metric_catalog_free(c);
}

static void test_malformed_descriptions_are_refused(void **state)
{
    (void)state;
    vigil_metric_catalog *c = vigil_metric_catalog_new();
    const char *bad_names[] = {"", "Energy", "1cpu", "cpu user", "cpu/user", NULL};
    for (int i = 0; bad_names[i]; i++) {
        GError *error = NULL;
        assert_int_equal(vigil_metric_register(c, bad_names[i], "s", VIGIL_METRIC_GAUGE, "x",
                                               VIGIL_METRIC_MEASURED, &error),
                         0);
        assert_true(g_error_matches(error, VIGIL_METRIC_ERROR, VIGIL_METRIC_ERROR_INVALID));
        g_error_free(error);
    }
    GError *error = NULL;
    assert_int_equal(
        vigil_metric_register(c, "cpu.user_s", "s", 7, "x", VIGIL_METRIC_MEASURED, &error), 0);
    g_clear_error(&error);
    assert_int_equal(vigil_metric_register(c, "cpu.user_s", "\xff", VIGIL_METRIC_GAUGE, "x",
                                           VIGIL_METRIC_MEASURED, &error),
                     0);
    g_clear_error(&error);
    assert_int_equal(vigil_metric_count(c), 0);
    assert_true(vigil_metric_name_is_valid("disk.sda.read_bytes"));
    /* Error domains are matched by name across processes and logs. */
    assert_string_equal(g_quark_to_string(VIGIL_METRIC_ERROR), "vigil-metric-error-quark");
    vigil_metric_catalog_free(c);
}

TEST_MAIN(cmocka_unit_test(test_register_lookup_and_reregister),
          cmocka_unit_test(test_malformed_descriptions_are_refused))
