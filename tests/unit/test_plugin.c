/* Tests of the plugin registry against the modules in tests/plugins. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "../plugins/test_counter.h"
#include "vigil/plugin.h"
#include "test_support.h"
#include "test_main.h"

static const char *plugin_dir(void)
{
    return test_env_or_fail("VIGIL_TEST_PLUGIN_DIR");
}

/* Loads `text` as vigil.conf with the registry as section resolver. */
static gboolean load_with_plugins(vigil_plugin_registry *r, vigil_config *config, const char *text,
                                  GError **error)
{
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, r);
    char *dir = g_dir_make_tmp("vigil-test-plugin-XXXXXX", NULL);
    assert_non_null(dir);
    test_write_file(dir, "vigil.conf", text);
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    gboolean ok = vigil_config_load(config, path, error);
    test_remove_tree(dir);
    g_free(path);
    g_free(dir);
    return ok;
}

static void test_good_plugin_loads_and_runs_with_its_config(void **state)
{
    (void)state;
    vigil_plugin_registry *r = vigil_plugin_registry_new(plugin_dir());
    vigil_config *config = vigil_config_new();
    GError *error = NULL;
    gboolean ok = load_with_plugins(
        r, config, "[provider.test-counter]\nstep = 5\nlabel = disk bytes\n", &error);
    if (!ok)
        fail_msg("load: %s", error->message);

    const struct vigil_plugin *p =
        vigil_plugin_registry_load(r, VIGIL_PLUGIN_PROVIDER, "test-counter", &error);
    assert_non_null(p);
    assert_string_equal(p->descriptor->name, "test-counter");
    test_assert_contains(p->path, "provider-test-counter.so");
    /* Loading again gives the same plugin, not a second copy. */
    assert_ptr_equal(vigil_plugin_registry_load(r, VIGIL_PLUGIN_PROVIDER, "test-counter", NULL), p);

    struct vigil_plugin_context ctx = {config, "provider.test-counter"};
    void *instance = p->descriptor->create(&ctx, &error);
    assert_non_null(instance);
    const struct test_counter_ops *ops = p->descriptor->ops;
    assert_int_equal(ops->next(instance), 5);
    assert_int_equal(ops->next(instance), 10);
    assert_string_equal(ops->label(instance), "disk bytes");
    p->descriptor->destroy(instance);

    vigil_config_free(config);
    vigil_plugin_registry_free(r);
}

static void expect_load_error(const char *name, int code, const char *needle1, const char *needle2)
{
    vigil_plugin_registry *r = vigil_plugin_registry_new(plugin_dir());
    GError *error = NULL;
    assert_null(vigil_plugin_registry_load(r, VIGIL_PLUGIN_PROVIDER, name, &error));
    assert_non_null(error);
    assert_true(error->domain == VIGIL_PLUGIN_ERROR);
    assert_string_equal(g_quark_to_string(error->domain), "vigil-plugin-error-quark");
    assert_int_equal(error->code, code);
    test_assert_contains(error->message, needle1);
    test_assert_contains(error->message, needle2);
    g_error_free(error);
    vigil_plugin_registry_free(r);
}

static void test_wrong_abi_is_refused(void **state)
{
    (void)state;
    char *expected = g_strdup_printf("was built for plugin ABI %u, and this vigil loads ABI %u",
                                     VIGIL_PLUGIN_ABI_VERSION + 1000, VIGIL_PLUGIN_ABI_VERSION);
    expect_load_error("wrong-abi", VIGIL_PLUGIN_ERROR_ABI, "provider-wrong-abi.so", expected);
    g_free(expected);
}

static void test_missing_symbol_is_refused(void **state)
{
    (void)state;
    expect_load_error("no-symbol", VIGIL_PLUGIN_ERROR_NO_SYMBOL, "provider-no-symbol.so",
                      "does not export vigil_plugin_descriptor");
}

static void test_descriptor_that_disagrees_with_its_file_is_refused(void **state)
{
    (void)state;
    expect_load_error("misnamed", VIGIL_PLUGIN_ERROR_DESCRIPTOR, "adpi plugin 'something-else'",
                      "file name says provider 'misnamed'");
}

static void test_missing_module_lists_what_exists(void **state)
{
    (void)state;
    expect_load_error("tset-counter", VIGIL_PLUGIN_ERROR_NOT_FOUND,
                      "provider-tset-counter.so does not exist", "test-counter");
}

static void test_names_cannot_leave_the_directory(void **state)
{
    (void)state;
    expect_load_error("../../etc/passwd", VIGIL_PLUGIN_ERROR_NOT_FOUND, "not a plugin name", "a-z");
    expect_load_error("", VIGIL_PLUGIN_ERROR_NOT_FOUND, "not a plugin name", "a-z");
}

static void test_list_by_kind(void **state)
{
    (void)state;
    vigil_plugin_registry *r = vigil_plugin_registry_new(plugin_dir());
    char **providers = vigil_plugin_registry_list(r, VIGIL_PLUGIN_PROVIDER);
    assert_int_equal(g_strv_length(providers), 4);
    assert_string_equal(providers[0], "misnamed"); /* sorted */
    assert_string_equal(providers[2], "test-counter");
    g_strfreev(providers);
    char **adpis = vigil_plugin_registry_list(r, VIGIL_PLUGIN_ADPI);
    assert_int_equal(g_strv_length(adpis), 0);
    g_strfreev(adpis);
    vigil_plugin_registry_free(r);
}

static void expect_config_error(const char *text, const char *needle1, const char *needle2)
{
    vigil_plugin_registry *r = vigil_plugin_registry_new(plugin_dir());
    vigil_config *config = vigil_config_new();
    GError *error = NULL;
    assert_false(load_with_plugins(r, config, text, &error));
    assert_non_null(error);
    test_assert_contains(error->message, needle1);
    test_assert_contains(error->message, needle2);
    g_error_free(error);
    vigil_config_free(config);
    vigil_plugin_registry_free(r);
}

static void test_plugin_sections_are_checked_against_the_plugin(void **state)
{
    (void)state;
    expect_config_error("[provider.test-counter]\nstpe = 3\n", "[provider.test-counter] stpe",
                        "did you mean 'step'");
    expect_config_error("[provider.test-counter]\nstep = 5000\n", "[provider.test-counter] step",
                        "1000");
    expect_config_error("[provider.tset-counter]\n", "[provider.tset-counter]",
                        "no provider plugin 'tset-counter'");
    expect_config_error("[provider.wrong-abi]\n", "[provider.wrong-abi]", "plugin ABI");
}

TEST_MAIN(cmocka_unit_test(test_good_plugin_loads_and_runs_with_its_config),
          cmocka_unit_test(test_wrong_abi_is_refused),
          cmocka_unit_test(test_missing_symbol_is_refused),
          cmocka_unit_test(test_descriptor_that_disagrees_with_its_file_is_refused),
          cmocka_unit_test(test_missing_module_lists_what_exists),
          cmocka_unit_test(test_names_cannot_leave_the_directory),
          cmocka_unit_test(test_list_by_kind),
          cmocka_unit_test(test_plugin_sections_are_checked_against_the_plugin))
