/* vigil — running an anomaly-detection plugin in a test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "test_adpi.h"
#include "test_support.h"

/* A configuration holding `section_lines` in SECTION, loaded as vigild
 * loads its own: through a file, with the registry declaring the plugin's
 * keys. NULL with *error set when it is refused. */
static vigil_config *load_config(vigil_plugin_registry *registry, const char *section,
                                 const char *section_lines, GError **error)
{
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry);
    char *dir = g_dir_make_tmp("vigil-test-adpi-XXXXXX", NULL);
    if (dir == NULL)
        fail_msg("no temporary folder for the configuration");
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    char *text = g_strdup_printf("[%s]\n%s", section, section_lines ? section_lines : "");
    if (!g_file_set_contents(path, text, -1, NULL))
        fail_msg("cannot write %s", path);
    gboolean ok = vigil_config_load(config, path, error);
    /* A section without lines is never read: declare it all the same. */
    if (ok && !vigil_config_has_section(config, section))
        ok = vigil_plugin_registry_resolve_section(config, section, registry, error);
    test_remove_tree(dir);
    g_free(text);
    g_free(path);
    g_free(dir);
    if (!ok) {
        vigil_config_free(config);
        return NULL;
    }
    return config;
}

static const struct vigil_plugin *load_plugin(vigil_plugin_registry *registry, const char *name)
{
    GError *error = NULL;
    const struct vigil_plugin *plugin =
        vigil_plugin_registry_load(registry, VIGIL_PLUGIN_ADPI, name, &error);
    if (plugin == NULL)
        fail_msg("loading adpi %s: %s", name, error->message);
    assert_int_equal(plugin->descriptor->kind, VIGIL_PLUGIN_ADPI);
    assert_non_null(plugin->descriptor->ops);
    return plugin;
}

void test_adpi_open(struct test_adpi *a, const char *name, const char *section_lines)
{
    memset(a, 0, sizeof *a);
    a->registry = vigil_plugin_registry_new(test_env_or_fail("VIGIL_TEST_PROVIDER_DIR"));
    a->plugin = load_plugin(a->registry, name);
    a->ops = a->plugin->descriptor->ops;
    a->section = g_strconcat("adpi.", name, NULL);
    GError *error = NULL;
    a->config = load_config(a->registry, a->section, section_lines, &error);
    if (a->config == NULL)
        fail_msg("configuration of adpi %s: %s", name, error->message);
    struct vigil_plugin_context ctx = {a->config, a->section};
    a->instance = a->plugin->descriptor->create(&ctx, &error);
    if (a->instance == NULL)
        fail_msg("creating adpi %s: %s", name, error->message);
    assert_non_null(a->ops->cycle);
    a->catalog = vigil_metric_catalog_new();
    a->issues = g_array_new(FALSE, TRUE, sizeof(struct vigil_issue));
}

void test_adpi_close(struct test_adpi *a)
{
    if (a->instance != NULL)
        a->plugin->descriptor->destroy(a->instance);
    if (a->issues != NULL)
        g_array_free(a->issues, TRUE);
    if (a->catalog != NULL)
        vigil_metric_catalog_free(a->catalog);
    if (a->config != NULL)
        vigil_config_free(a->config);
    vigil_plugin_registry_free(a->registry);
    g_free(a->section);
    memset(a, 0, sizeof *a);
}

char *test_adpi_open_error(const char *name, const char *section_lines)
{
    vigil_plugin_registry *registry =
        vigil_plugin_registry_new(test_env_or_fail("VIGIL_TEST_PROVIDER_DIR"));
    const struct vigil_plugin *plugin = load_plugin(registry, name);
    char *section = g_strconcat("adpi.", name, NULL);
    GError *error = NULL;
    vigil_config *config = load_config(registry, section, section_lines, &error);
    if (config != NULL) {
        struct vigil_plugin_context ctx = {config, section};
        void *instance = plugin->descriptor->create(&ctx, &error);
        if (instance != NULL)
            fail_msg("adpi %s took the configuration:\n%s", name, section_lines);
        vigil_config_free(config);
    }
    if (error == NULL)
        fail_msg("adpi %s refused its configuration without saying why", name);
    char *message = g_strdup(error->message);
    g_error_free(error);
    g_free(section);
    vigil_plugin_registry_free(registry);
    return message;
}

void test_adpi_assert_refused(const char *name, const char *section_lines, const char *needle)
{
    char *message = test_adpi_open_error(name, section_lines);
    test_assert_contains(message, needle);
    g_free(message);
}

void test_adpi_assert_descriptor(const char *name, unsigned has, unsigned lacks)
{
    struct test_adpi a;
    test_adpi_open(&a, name, NULL);
    assert_string_equal(a.plugin->descriptor->name, name);
    test_adpi_assert_settings_sound(name);
    const struct {
        unsigned bit;
        const char *op;
        gboolean present;
    } ops[] = {
        {TEST_ADPI_SAMPLES, "samples", a.ops->samples != NULL},
        {TEST_ADPI_ACTIVITY, "activity", a.ops->activity != NULL},
        {TEST_ADPI_RECONFIGURE, "reconfigure", a.ops->reconfigure != NULL},
        {TEST_ADPI_NODE_LOAD, "node_load", a.ops->node_load != NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
        if ((has & ops[i].bit) && !ops[i].present)
            fail_msg("adpi %s has no %s op; expected one", name, ops[i].op);
        if ((lacks & ops[i].bit) && ops[i].present)
            fail_msg("adpi %s has a %s op; expected none", name, ops[i].op);
    }
    test_adpi_close(&a);
}

/* A value `key`'s type refuses, or NULL when it takes any text. */
static char *refused_value(const struct vigil_config_key *key)
{
    switch (key->type) {
    case VIGIL_CONFIG_INT:
        return key->max < 1e15 ? g_strdup_printf("%.0f", key->max + 1) : g_strdup("many");
    case VIGIL_CONFIG_DOUBLE:
        return key->max < 1e300 ? g_strdup_printf("%.17g", key->max * 2 + 1) : g_strdup("much");
    case VIGIL_CONFIG_BOOL:
        return g_strdup("maybe");
    case VIGIL_CONFIG_ENUM:
        return g_strdup("no-such-choice");
    case VIGIL_CONFIG_LIST:
        return key->choices != NULL ? g_strdup("no-such-choice") : NULL;
    case VIGIL_CONFIG_STRING:
    default:
        return NULL;
    }
}

void test_assert_settings_sound(const char *section, const struct vigil_settings_table *table,
                                char *(*refusal)(const char *lines, void *user), void *user)
{
    assert_non_null(table);
    for (size_t i = 0; i < table->n_keys; i++) {
        const struct vigil_config_key *key = &table->keys[i];
        if (key->description == NULL || key->description[0] == '\0')
            fail_msg("[%s] %s has no description", section, key->name);
        if (key->storage == VIGIL_SETTING_UNBOUND)
            fail_msg("[%s] %s fills no field of its settings", section, key->name);
        char *bad = refused_value(key);
        if (bad == NULL)
            continue;
        char *lines = g_strdup_printf("%s = %s\n", key->name, bad);
        char *message = refusal(lines, user);
        char *names = g_strdup_printf("[%s] %s: expected ", section, key->name);
        char *quoted = g_strdup_printf("\"%s\"", bad);
        test_assert_contains(message, names);
        test_assert_contains(message, quoted);
        g_free(quoted);
        g_free(names);
        g_free(message);
        g_free(lines);
        g_free(bad);
    }
}

static char *adpi_refusal(const char *lines, void *name)
{
    return test_adpi_open_error(name, lines);
}

void test_adpi_assert_settings_sound(const char *name)
{
    struct test_adpi a;
    test_adpi_open(&a, name, NULL); /* the defaults make an instance */
    test_assert_settings_sound(a.section, a.plugin->descriptor->settings, adpi_refusal,
                               (void *)name);
    test_adpi_close(&a);
}

gboolean test_adpi_reconfigure(struct test_adpi *a, const char *section_lines, GError **error)
{
    assert_non_null(a->ops->reconfigure);
    vigil_config *config = load_config(a->registry, a->section, section_lines, error);
    if (config == NULL)
        return FALSE;
    struct vigil_plugin_context ctx = {config, a->section};
    if (!a->ops->reconfigure(a->instance, &ctx, error)) {
        vigil_config_free(config);
        return FALSE;
    }
    vigil_config_free(a->config);
    a->config = config;
    return TRUE;
}

void test_adpi_reconfigure_ok(struct test_adpi *a, const char *section_lines)
{
    GError *error = NULL;
    if (!test_adpi_reconfigure(a, section_lines, &error))
        fail_msg("reconfigure: %s", error->message);
}

guint32 test_adpi_metric(struct test_adpi *a, const char *name, const char *unit,
                         enum vigil_metric_kind kind, enum vigil_metric_origin origin)
{
    GError *error = NULL;
    guint32 id = vigil_metric_register(a->catalog, name, unit, kind, "test", origin, &error);
    if (id == 0)
        fail_msg("registering %s: %s", name, error->message);
    return id;
}

guint32 test_adpi_counter(struct test_adpi *a, const char *name, const char *unit)
{
    return test_adpi_metric(a, name, unit, VIGIL_METRIC_COUNTER, VIGIL_METRIC_MEASURED);
}

guint32 test_adpi_gauge(struct test_adpi *a, const char *name, const char *unit)
{
    return test_adpi_metric(a, name, unit, VIGIL_METRIC_GAUGE, VIGIL_METRIC_MEASURED);
}

void test_adpi_samples(struct test_adpi *a, const struct vigil_sample *samples, size_t n)
{
    assert_non_null(a->ops->samples);
    a->ops->samples(a->instance, a->catalog, samples, n);
}

void test_adpi_sample(struct test_adpi *a, guint32 metric_id, guint64 t_ns, double value)
{
    struct vigil_sample s = {.metric_id = metric_id, .t_ns = t_ns, .value = value};
    test_adpi_samples(a, &s, 1);
}

void test_adpi_tick(struct test_adpi *a, guint64 t_ns, const struct test_adpi_value *values,
                    size_t n)
{
    for (size_t i = 0; i < n; i++)
        test_adpi_sample(a, values[i].metric_id, t_ns, values[i].value);
}

void test_adpi_node_load(struct test_adpi *a, const struct vigil_node_load *load)
{
    assert_non_null(a->ops->node_load);
    a->ops->node_load(a->instance, load);
}

void test_adpi_calls(struct test_adpi *a, unsigned layer, unsigned op, guint64 duration_ns, guint n)
{
    assert_non_null(a->ops->activity);
    struct vigil_activity activity = {
        .record_type = VIGIL_RECORD_ACTIVITY,
        .layer = (uint8_t)layer,
        .op = (uint16_t)op,
        .start_ns = TEST_S,
        .end_ns = TEST_S + duration_ns,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    for (guint i = 0; i < n; i++) {
        activity.seq = i;
        a->ops->activity(a->instance, &activity);
    }
}

static void collect_issue(void *user, const struct vigil_issue *issue)
{
    struct test_adpi *a = user;
    if (memchr(issue->metric, '\0', sizeof issue->metric) == NULL ||
        memchr(issue->message, '\0', sizeof issue->message) == NULL)
        fail_msg("an issue with an unterminated text");
    if (!g_utf8_validate(issue->message, -1, NULL))
        fail_msg("an issue whose message is not UTF-8");
    g_array_append_val(a->issues, *issue);
}

GArray *test_adpi_cycle(struct test_adpi *a, guint64 end_ns)
{
    g_array_set_size(a->issues, 0);
    struct vigil_issue_sink sink = {collect_issue, a};
    a->ops->cycle(a->instance, a->cycle++, end_ns, &sink);
    return a->issues;
}

static void fail_with_issues(const struct test_adpi *a, const char *what)
{
    GString *text = g_string_new(NULL);
    for (guint i = 0; i < a->issues->len; i++) {
        const struct vigil_issue *issue = &g_array_index(a->issues, struct vigil_issue, i);
        g_string_append_printf(text, "\n  %s %s: %s", vigil_health_name(issue->health),
                               issue->metric, issue->message);
    }
    fail_msg("cycle %" G_GUINT64_FORMAT " reported %u issues, %s:%s", a->cycle - 1, a->issues->len,
             what, text->str);
}

void test_adpi_cycle_quiet(struct test_adpi *a, guint64 end_ns)
{
    if (test_adpi_cycle(a, end_ns)->len != 0)
        fail_with_issues(a, "expected none");
}

const struct vigil_issue *test_adpi_cycle_one(struct test_adpi *a, guint64 end_ns)
{
    if (test_adpi_cycle(a, end_ns)->len != 1)
        fail_with_issues(a, "expected one");
    return &g_array_index(a->issues, struct vigil_issue, 0);
}

void test_assert_issue(const struct vigil_issue *issue, enum vigil_health health,
                       const char *metric, double value)
{
    if (issue->health != health)
        fail_msg("issue %s is %s, expected %s: %s", issue->metric, vigil_health_name(issue->health),
                 vigil_health_name(health), issue->message);
    assert_string_equal(issue->metric, metric);
    if (issue->value != value)
        fail_msg("issue %s has value %.17g, expected %.17g: %s", issue->metric, issue->value, value,
                 issue->message);
}

/* NAN matches NAN: an open end. */
static void assert_bound(const char *which, double got, double want)
{
    if ((isnan(want) && !isnan(got)) || (!isnan(want) && got != want))
        fail_msg("expected_%s is %.17g, expected %.17g", which, got, want);
}

void test_assert_expected(const struct vigil_issue *issue, double min, double max)
{
    assert_bound("min", issue->expected_min, min);
    assert_bound("max", issue->expected_max, max);
}
