/* Region energy end to end: vigild (energy from its estimate, a tick every
 * 50 ms) publishes each process's energy into its ring, and the regions of
 * regions_energy.c, run under libvigil-preload.so against it, get their
 * energy from there: "measured", which lies wholly after vigild's first
 * figure for the process and holds a tick of computing, has a positive
 * energy, estimated (the estimate's) and certain; "whole", begun before
 * the first figure, has one too, counted from the process's start and
 * marked uncertain. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "test_daemon.h"
#include "test_report.h"
#include "test_support.h"
#include "test_main.h"

static void test_regions_get_vigild_energy(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    test_daemon_start(&d, dir, "providers = procstat;process;energy\ntick_ms = 50\n",
                      "[provider.energy]\nsources = estimate\n");
    char *report_var = g_strdup_printf("VIGIL_REPORT=%s/report.json", dir);
    const char *vars[] = {report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    char **env = test_daemon_preload_env(&d, vars);
    const char *argv[] = {test_env_or_fail("VIGIL_REGIONS_ENERGY"), NULL};
    struct test_run run = test_run_program(dir, argv, env);
    test_assert_status(&run, 0, "regions-energy under vigild");

    char *path = g_build_filename(dir, "report.json", NULL);
    struct test_report rep = test_report_load(path);
    JsonObject *measured = test_report_region(&rep, "measured"),
               *whole = test_report_region(&rep, "whole");
    if (json_object_get_null_member(measured, "energy_joule"))
        fail_msg("region measured has no energy:\n%s", run.err);
    assert_true(json_object_get_double_member(measured, "energy_joule") > 0);
    assert_int_equal(json_object_get_int_member(measured, "energy_missing"), 0);
    assert_true(json_object_get_boolean_member(measured, "energy_estimated"));
    assert_false(json_object_get_boolean_member(measured, "energy_uncertain"));
    assert_false(json_object_get_null_member(whole, "energy_joule"));
    assert_true(json_object_get_boolean_member(whole, "energy_uncertain"));
    assert_int_equal(json_object_get_int_member(whole, "energy_missing"), 0);

    test_report_free(&rep);
    g_free(path);
    test_run_clear(&run);
    g_strfreev(env);
    g_free(report_var);
    g_free(test_daemon_stop(&d));
}

TEST_MAIN(TEST_WITH_DIR(test_regions_get_vigild_energy))
