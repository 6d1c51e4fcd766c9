/* vigild — the statistics providers: each loaded by name from the plugin
 * directory, created from its [provider.NAME] section, started once, and
 * read every tick with its cost measured.
 *
 * A provider that cannot work on this node (no RAPL, a missing file) is
 * logged once with its reason and left out; the daemon runs on with the
 * others. A read that fails is logged the first time, then counted. */
#include <errno.h>
#include <string.h>

#include "sampler.h"
#include "tick_samples.h"
#include "vigil/clock.h"

/* A provider's node samples are gathered here and appended to the tick's
 * array a batch at a time: g_array_append_val for each cost about 80
 * instructions, 5,000 a tick for the default providers' 63 samples. */
#define PENDING_SAMPLES 32

struct sink_target {
    struct vigild_tick_samples *out;
    uint64_t now_ns;
    guint n_pending;
    struct vigil_sample pending[PENDING_SAMPLES];
};

static void flush_node(struct sink_target *t)
{
    if (t->n_pending > 0)
        g_array_append_vals(t->out->node, t->pending, t->n_pending);
    t->n_pending = 0;
}

static void emit_node(void *user, uint32_t metric_id, double value, uint32_t flags)
{
    struct sink_target *t = user;
    if (t->n_pending == PENDING_SAMPLES)
        flush_node(t);
    t->pending[t->n_pending++] = (struct vigil_sample){
        .metric_id = metric_id, .flags = flags, .t_ns = t->now_ns, .value = value};
}

static void emit_process(void *user, uint64_t process_id, uint32_t metric_id, double value,
                         uint32_t flags)
{
    struct sink_target *t = user;
    struct vigild_process_sample s = {
        .process_id = process_id,
        .sample = {.metric_id = metric_id, .flags = flags, .t_ns = t->now_ns, .value = value},
    };
    g_array_append_val(t->out->process, s);
}

void vigild_sampler_init(struct vigild_sampler *s, vigil_plugin_registry *registry,
                         vigil_metric_catalog *catalog)
{
    s->registry = registry;
    s->catalog = catalog;
    s->providers = g_ptr_array_new();
}

static void provider_free(struct vigild_provider *p)
{
    if (p->instance != NULL && p->plugin->descriptor->destroy != NULL)
        p->plugin->descriptor->destroy(p->instance);
    g_free(p->name);
    g_free(p->unavailable);
    g_free(p->last_error);
    g_free(p->config_text);
    g_free(p);
}

static void track_all(struct vigild_provider *p, GHashTable *processes)
{
    if (!p->running || p->ops->track == NULL || processes == NULL)
        return;
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, processes);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        GError *error = NULL;
        if (!p->ops->track(p->instance, *(const uint64_t *)key, (pid_t)GPOINTER_TO_INT(value),
                           &error)) {
            g_message("provider %s: %s", p->name, error->message);
            g_error_free(error);
        }
    }
}

static struct vigild_provider *provider_new(struct vigild_sampler *s, vigil_config *config,
                                            const char *name)
{
    struct vigild_provider *p = g_new0(struct vigild_provider, 1);
    p->name = g_strdup(name);
    char *section = g_strconcat("provider.", name, NULL);
    GError *error = NULL;
    p->plugin = vigil_plugin_registry_load(s->registry, VIGIL_PLUGIN_PROVIDER, name, &error);
    /* A provider without a section in the file runs on its defaults: its
     * keys are declared now so that it can read them. */
    if (p->plugin != NULL && !vigil_config_has_section(config, section))
        vigil_plugin_registry_resolve_section(config, section, s->registry, &error);
    /* Outside the block: cppcheck cannot tell that create() keeps no
     * pointer to it. */
    struct vigil_plugin_context context = {.config = config, .section = section};
    if (error == NULL) {
        p->ops = p->plugin->descriptor->ops;
        p->config_text = vigil_plugin_config_text(config, p->plugin, section);
        p->instance = p->plugin->descriptor->create(&context, &error);
    }
    if (error == NULL && p->ops->start(p->instance, s->catalog, &error))
        p->running = TRUE;
    if (error != NULL) {
        p->unavailable = g_strdup(error->message);
        g_message("provider %s is not running: %s", name, error->message);
        g_error_free(error);
    }
    g_free(section);
    return p;
}

void vigild_sampler_configure(struct vigild_sampler *s, const vigil_config *config,
                              char *const *names, GHashTable *processes)
{
    /* The plugin registry declares a section's keys on the config it is
     * given; the daemon owns that config, hence the cast. */
    vigil_config *writable = (vigil_config *)config;
    GPtrArray *next = g_ptr_array_new();
    for (char *const *name = names; *name != NULL; name++) {
        struct vigild_provider *kept = NULL;
        for (guint i = 0; i < s->providers->len; i++) {
            struct vigild_provider *p = g_ptr_array_index(s->providers, i);
            if (p == NULL || strcmp(p->name, *name) != 0 || !p->running)
                continue;
            char *section = g_strconcat("provider.", *name, NULL);
            if (!vigil_config_has_section(writable, section))
                vigil_plugin_registry_resolve_section(writable, section, s->registry, NULL);
            char *text = vigil_plugin_config_text(config, p->plugin, section);
            if (strcmp(text, p->config_text) == 0) {
                kept = p;
                g_ptr_array_index(s->providers, i) = NULL;
            }
            g_free(text);
            g_free(section);
            break;
        }
        if (kept == NULL) {
            kept = provider_new(s, writable, *name);
            track_all(kept, processes);
        }
        g_ptr_array_add(next, kept);
    }
    for (guint i = 0; i < s->providers->len; i++) {
        struct vigild_provider *p = g_ptr_array_index(s->providers, i);
        if (p != NULL)
            provider_free(p);
    }
    g_ptr_array_free(s->providers, TRUE);
    s->providers = next;
}

void vigild_sampler_read(struct vigild_sampler *s, uint64_t now_ns, struct vigild_tick_samples *out)
{
    struct sink_target target = {.out = out, .now_ns = now_ns};
    struct vigil_sample_sink sink = {emit_node, emit_process, &target};
    for (guint i = 0; i < s->providers->len; i++) {
        struct vigild_provider *p = g_ptr_array_index(s->providers, i);
        if (!p->running)
            continue;
        GError *error = NULL;
        uint64_t begin_ns = vigil_clock_monotonic_ns();
        gboolean ok = p->ops->read(p->instance, s->catalog, now_ns, &sink, &error);
        flush_node(&target);
        uint64_t cost_ns = vigil_clock_monotonic_ns() - begin_ns;
        p->reads++;
        p->cost_ns_last = cost_ns;
        p->cost_ns_total += cost_ns;
        if (cost_ns > p->cost_ns_max)
            p->cost_ns_max = cost_ns;
        if (!ok) {
            if (p->read_errors++ == 0 || p->last_error == NULL ||
                strcmp(p->last_error, error->message) != 0)
                g_warning("provider %s: %s", p->name, error->message);
            g_free(p->last_error);
            p->last_error = g_strdup(error->message);
            g_error_free(error);
        }
    }
}

void vigild_sampler_track(struct vigild_sampler *s, uint64_t process_id, pid_t pid)
{
    for (guint i = 0; i < s->providers->len; i++) {
        struct vigild_provider *p = g_ptr_array_index(s->providers, i);
        if (!p->running || p->ops->track == NULL)
            continue;
        GError *error = NULL;
        if (!p->ops->track(p->instance, process_id, pid, &error)) {
            g_message("provider %s: %s", p->name, error->message);
            g_error_free(error);
        }
    }
}

void vigild_sampler_untrack(struct vigild_sampler *s, uint64_t process_id)
{
    for (guint i = 0; i < s->providers->len; i++) {
        struct vigild_provider *p = g_ptr_array_index(s->providers, i);
        if (p->running && p->ops->untrack != NULL)
            p->ops->untrack(p->instance, process_id);
    }
}

const struct vigild_provider *vigild_sampler_find(const struct vigild_sampler *s, const char *name)
{
    for (guint i = 0; i < s->providers->len; i++) {
        const struct vigild_provider *p = g_ptr_array_index(s->providers, i);
        if (strcmp(p->name, name) == 0)
            return p;
    }
    return NULL;
}

void vigild_sampler_clear(struct vigild_sampler *s)
{
    if (s->providers == NULL)
        return;
    for (guint i = 0; i < s->providers->len; i++)
        provider_free(g_ptr_array_index(s->providers, i));
    g_ptr_array_free(s->providers, TRUE);
    s->providers = NULL;
}
