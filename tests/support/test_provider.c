/* vigil — running a statistics provider in a test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_provider.h"
#include "test_support.h"

void test_provider_open(struct test_provider *p, const char *name, const char *config_text)
{
    memset(p, 0, sizeof *p);
    p->registry = vigil_plugin_registry_new(test_env_or_fail("VIGIL_TEST_PROVIDER_DIR"));
    p->config = vigil_config_new();
    p->catalog = vigil_metric_catalog_new();
    vigil_config_set_section_resolver(p->config, vigil_plugin_registry_resolve_section,
                                      p->registry);
    GError *error = NULL;
    p->plugin = vigil_plugin_registry_load(p->registry, VIGIL_PLUGIN_PROVIDER, name, &error);
    if (p->plugin == NULL)
        fail_msg("loading provider %s: %s", name, error->message);
    char *section = g_strconcat("provider.", name, NULL);
    if (!vigil_config_declare(p->config, section, p->plugin->descriptor->config_keys,
                              p->plugin->descriptor->n_config_keys, &error))
        fail_msg("declaring %s: %s", section, error->message);
    p->config_dir = g_dir_make_tmp("vigil-test-provider-XXXXXX", NULL);
    char *path = g_build_filename(p->config_dir, "vigil.conf", NULL);
    g_file_set_contents(path, config_text, -1, NULL);
    if (!vigil_config_load(p->config, path, &error))
        fail_msg("configuration: %s", error->message);
    g_free(path);
    struct vigil_plugin_context ctx = {p->config, section};
    p->instance = p->plugin->descriptor->create(&ctx, &error);
    if (p->instance == NULL)
        fail_msg("creating provider %s: %s", name, error->message);
    p->ops = p->plugin->descriptor->ops;
    assert_non_null(p->ops);
    g_free(section);
}

void test_provider_close(struct test_provider *p)
{
    if (p->instance != NULL)
        p->plugin->descriptor->destroy(p->instance);
    vigil_metric_catalog_free(p->catalog);
    vigil_config_free(p->config);
    vigil_plugin_registry_free(p->registry);
    if (p->config_dir != NULL)
        test_remove_tree(p->config_dir);
    g_free(p->config_dir);
    memset(p, 0, sizeof *p);
}

gboolean test_provider_start(struct test_provider *p, GError **error)
{
    return p->ops->start(p->instance, p->catalog, error);
}

struct collect {
    struct test_provider *p;
    GHashTable *samples;
};

static void collect_sample(void *user, uint32_t metric_id, double value, uint32_t flags)
{
    struct collect *c = user;
    const struct vigil_metric_desc *m = vigil_metric_get(c->p->catalog, metric_id);
    if (m == NULL)
        fail_msg("a sample of metric %u, which was never registered", metric_id);
    if (g_hash_table_contains(c->samples, m->name))
        fail_msg("metric %s emitted twice in one read", m->name);
    struct test_sample *s = g_new(struct test_sample, 1);
    s->value = value;
    s->flags = flags;
    g_hash_table_insert(c->samples, g_strdup(m->name), s);
}

GHashTable *test_provider_read(struct test_provider *p, guint64 now_ns, GError **error)
{
    struct collect c = {p, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)};
    struct vigil_sample_sink sink = {collect_sample, &c};
    if (!p->ops->read(p->instance, p->catalog, now_ns, &sink, error)) {
        g_hash_table_destroy(c.samples);
        return NULL;
    }
    return c.samples;
}

double test_sample_value(GHashTable *samples, const char *metric)
{
    const struct test_sample *s = g_hash_table_lookup(samples, metric);
    if (s == NULL) {
        GString *names = g_string_new(NULL);
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, samples);
        while (g_hash_table_iter_next(&it, &key, NULL))
            g_string_append_printf(names, " %s", (const char *)key);
        fail_msg("no sample of %s; the read gave:%s", metric, names->str);
    }
    return s->value;
}

const struct vigil_metric_desc *test_metric(struct test_provider *p, const char *metric)
{
    const struct vigil_metric_desc *m = vigil_metric_lookup(p->catalog, metric);
    if (m == NULL)
        fail_msg("metric %s is not registered", metric);
    return m;
}

void test_write_file(const char *dir, const char *relative, const char *text)
{
    char *path = g_build_filename(dir, relative, NULL);
    char *parent = g_path_get_dirname(path);
    g_mkdir_with_parents(parent, 0755);
    GError *error = NULL;
    if (!g_file_set_contents(path, text, -1, &error))
        fail_msg("writing %s: %s", path, error->message);
    g_free(parent);
    g_free(path);
}
