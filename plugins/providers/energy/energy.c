/* vigil — the energy provider: the joules the node uses, from the first of
 * the `sources` that can run here (energy_chain.c):
 *
 *   likwid    RAPL through likwid's power API (source_likwid.c)
 *   powercap  RAPL through Linux's powercap sysfs (source_powercap.c)
 *   estimate  a model of power against CPU utilisation (source_estimate.c)
 *
 * Each source that cannot run says why in the log and in `vigil status`
 * (the provider's note), and every metric keeps its source's name
 * ("energy/likwid"); the estimate's is ESTIMATED, so every output marks it. */
#include "vigil/plugin.h"
#include "vigil/provider.h"

#include "energy_source.h"
#ifdef VIGIL_HAVE_LIKWID
#include "likwid_api.h"
#endif

struct energy {
    struct energy_settings settings;
    struct energy_chain chain;
};

static const struct vigil_settings_table settings_table;

/* What the keys' types cannot say. */
static gboolean check(const void *settings, const char *section, const vigil_config *config,
                      GError **error)
{
    (void)config;
    const struct energy_settings *s = settings;
    /* Above max_w, idle_w would make a busy node draw less than an idle one. */
    if (s->idle_w > s->max_w) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "[%s] idle_w (%g W) is above max_w (%g W)", section, s->idle_w, s->max_w);
        return FALSE;
    }
    /* The config refuses an empty list and unknown names already; this is
     * for a config built some other way. */
    gboolean known = s->sources != NULL && s->sources[0] != NULL;
    for (guint i = 0; known && s->sources[i] != NULL; i++)
        known = energy_source_find(s->sources[i]) != NULL;
    if (!known)
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "[%s] sources: expected one or more of likwid, powercap, estimate", section);
    return known;
}

static void energy_destroy(void *instance)
{
    struct energy *e = instance;
    energy_chain_clear(&e->chain);
    vigil_settings_clear(&settings_table, &e->settings);
    g_free(e);
}

static void *energy_create(const struct vigil_plugin_context *ctx, GError **error)
{
    struct energy *e = g_new0(struct energy, 1);
    if (!vigil_plugin_settings_load(ctx, &settings_table, &e->settings, error)) {
        energy_destroy(e);
        return NULL;
    }
#ifdef VIGIL_HAVE_LIKWID
    e->settings.likwid = &likwid_api_real;
#endif
    return e;
}

static gboolean energy_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct energy *e = instance;
    return energy_chain_start(&e->chain, (const char *const *)e->settings.sources, &e->settings,
                              catalog, error);
}

static gboolean energy_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                            const struct vigil_sample_sink *sink, GError **error)
{
    (void)catalog;
    struct energy *e = instance;
    return energy_chain_read(&e->chain, now_ns, sink, error);
}

static const char *energy_note(void *instance)
{
    return energy_chain_note(&((struct energy *)instance)->chain);
}

static const struct vigil_provider_ops energy_provider_ops = {
    .start = energy_start,
    .read = energy_read,
    .note = energy_note,
};

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct energy_settings, root), .type = VIGIL_CONFIG_STRING, .default_value = "/",
     .description = "directory under which sys/ and proc/ are read; likwid runs only on /"},
    {VIGIL_SETTING(struct energy_settings, sources), .type = VIGIL_CONFIG_LIST,
     .default_value = "likwid;powercap;estimate", .choices = "likwid|powercap|estimate",
     .description = "where the node's energy comes from, tried in this order until one runs: "
                    "RAPL through likwid, RAPL through powercap sysfs, an estimate from CPU "
                    "utilisation"},
    {VIGIL_SETTING(struct energy_settings, idle_w), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "50", .min = 0, .max = 2000,
     .description = "estimate: power of one idle socket, in watts"},
    {VIGIL_SETTING(struct energy_settings, max_w), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "150", .min = 0, .max = 2000,
     .description = "estimate: power of one fully busy socket, in watts"},
    {VIGIL_SETTING(struct energy_settings, sockets), .type = VIGIL_CONFIG_INT, .default_value = "1",
     .min = 1, .max = 64, .description = "estimate: number of sockets"},
    {VIGIL_SETTING(struct energy_settings, max_power_w), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "1000", .min = 1, .max = 100000,
     .description = "likwid, powercap: the most one zone can draw, in watts; a longer gap "
                    "between reads than its counter's range at this power is marked uncertain"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct energy_settings, keys, check);

VIGIL_PLUGIN(VIGIL_PLUGIN_PROVIDER, .name = "energy",
             .description =
                 "energy in joules: RAPL through likwid or powercap, or estimated from CPU "
                 "utilisation",
             .settings = &settings_table, .create = energy_create, .destroy = energy_destroy,
             .ops = &energy_provider_ops);
