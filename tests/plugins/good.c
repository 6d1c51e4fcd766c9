/* A well-formed plugin: counts up by its configured step. */
#include "test_counter.h"
#include "vigil/plugin.h"

/* Its keys, each filling the field of its name (the table at the end). */
struct counter_settings {
    gint64 step;
    char *label;
};
static const struct vigil_settings_table settings_table;

struct counter {
    gint64 value;
    struct counter_settings settings;
};

static void *counter_create(const struct vigil_plugin_context *ctx, GError **error)
{
    struct counter *c = g_new0(struct counter, 1);
    if (!vigil_plugin_settings_load(ctx, &settings_table, &c->settings, error)) {
        g_free(c);
        return NULL;
    }
    return c;
}

static void counter_destroy(void *instance)
{
    struct counter *c = instance;
    vigil_settings_clear(&settings_table, &c->settings);
    g_free(c);
}

static gint64 counter_next(void *instance)
{
    struct counter *c = instance;
    c->value += c->settings.step;
    return c->value;
}

static const char *counter_label(void *instance)
{
    return ((struct counter *)instance)->settings.label;
}

static const struct test_counter_ops ops = {counter_next, counter_label};

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct counter_settings, step), .type = VIGIL_CONFIG_INT, .default_value = "1",
     .min = 1, .max = 1000, .description = "how much each call adds"},
    {VIGIL_SETTING(struct counter_settings, label), .type = VIGIL_CONFIG_STRING,
     .default_value = "counter", .description = "a name to show"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct counter_settings, keys, NULL);

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_PROVIDER,
    .name = "test-counter",
    .description = "counts up, for the registry's tests",
    .settings = &settings_table,
    .create = counter_create,
    .destroy = counter_destroy,
    .ops = &ops,
};
