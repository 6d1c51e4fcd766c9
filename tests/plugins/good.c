/* A well-formed plugin: counts up by its configured step. */
#include "test_counter.h"
#include "vigil/plugin.h"

struct counter {
    gint64 value;
    gint64 step;
    char *label;
};

static void *counter_create(const struct vigil_plugin_context *ctx, GError **error)
{
    (void)error;
    struct counter *c = g_new0(struct counter, 1);
    c->step = vigil_config_get_int(ctx->config, ctx->section, "step");
    c->label = g_strdup(vigil_config_get_string(ctx->config, ctx->section, "label"));
    return c;
}

static void counter_destroy(void *instance)
{
    struct counter *c = instance;
    g_free(c->label);
    g_free(c);
}

static gint64 counter_next(void *instance)
{
    struct counter *c = instance;
    c->value += c->step;
    return c->value;
}

static const char *counter_label(void *instance)
{
    return ((struct counter *)instance)->label;
}

static const struct test_counter_ops ops = {counter_next, counter_label};

static const struct vigil_config_key keys[] = {
    {.name = "step",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1",
     .min = 1,
     .max = 1000,
     .description = "how much each call adds"},
    {.name = "label",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "counter",
     .description = "a name to show"},
};

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_PROVIDER,
    .name = "test-counter",
    .description = "counts up, for the registry's tests",
    .config_keys = keys,
    .n_config_keys = G_N_ELEMENTS(keys),
    .create = counter_create,
    .destroy = counter_destroy,
    .ops = &ops,
};
