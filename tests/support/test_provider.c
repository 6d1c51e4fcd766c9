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
    if (!vigil_settings_declare(p->config, p->plugin->descriptor->settings, section, &error))
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

/* A process's values go in as "NAME@PROCESS_ID". */
static void collect_process_sample(void *user, uint64_t process_id, uint32_t metric_id,
                                   double value, uint32_t flags)
{
    struct collect *c = user;
    const struct vigil_metric_desc *m = vigil_metric_get(c->p->catalog, metric_id);
    if (m == NULL)
        fail_msg("a sample of metric %u, which was never registered", metric_id);
    char *key = g_strdup_printf("%s@%" G_GUINT64_FORMAT, m->name, process_id);
    if (g_hash_table_contains(c->samples, key))
        fail_msg("metric %s emitted twice in one read", key);
    struct test_sample *s = g_new(struct test_sample, 1);
    s->value = value;
    s->flags = flags;
    g_hash_table_insert(c->samples, key, s);
}

GHashTable *test_provider_read(struct test_provider *p, guint64 now_ns, GError **error)
{
    struct collect c = {p, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)};
    struct vigil_sample_sink sink = {collect_sample, collect_process_sample, &c};
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

void test_provider_open_at(struct test_provider *p, const char *name, const char *root,
                           const char *extra_config)
{
    char *config = g_strdup_printf("[provider.%s]\nroot = %s\n%s", name, root,
                                   extra_config != NULL ? extra_config : "");
    test_provider_open(p, name, config);
    g_free(config);
}

void test_provider_start_at(struct test_provider *p, const char *name, const char *root)
{
    test_provider_open_at(p, name, root, NULL);
    test_provider_start_ok(p);
}

void test_provider_start_on_fixture(struct test_provider *p, const char *name, const char *root,
                                    const char *relative, const char *text)
{
    test_write_file(root, relative, text);
    test_provider_start_at(p, name, root);
}

void test_provider_start_ok(struct test_provider *p)
{
    GError *error = NULL;
    if (!test_provider_start(p, &error))
        fail_msg("start: %s", error->message);
}

GHashTable *test_provider_read_ok(struct test_provider *p, guint64 now_ns)
{
    GError *error = NULL;
    GHashTable *samples = test_provider_read(p, now_ns, &error);
    if (samples == NULL)
        fail_msg("read at %" G_GUINT64_FORMAT " ns: %s", now_ns, error->message);
    return samples;
}

char *test_provider_start_error(struct test_provider *p, enum vigil_provider_error_code code)
{
    GError *error = NULL;
    if (test_provider_start(p, &error))
        fail_msg("start succeeded; it should have failed");
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, (gint)code));
    char *message = g_strdup(error->message);
    g_error_free(error);
    return message;
}

void test_provider_assert_cannot_start(const char *name, const char *root, const char *extra_config,
                                       enum vigil_provider_error_code code, ...)
{
    struct test_provider p;
    test_provider_open_at(&p, name, root, extra_config);
    char *message = test_provider_start_error(&p, code);
    va_list ap;
    va_start(ap, code);
    for (const char *needle = va_arg(ap, const char *); needle != NULL;
         needle = va_arg(ap, const char *))
        test_assert_contains(message, needle);
    va_end(ap);
    g_free(message);
    test_provider_close(&p);
}

void test_provider_assert_unavailable(const char *name, const char *root, const char *relative,
                                      int errno_value)
{
    char *path = g_build_filename(root, relative, NULL);
    test_provider_assert_cannot_start(name, root, NULL, VIGIL_PROVIDER_ERROR_UNAVAILABLE, path,
                                      g_strerror(errno_value), NULL);
    g_free(path);
}

void test_provider_assert_start_fails(const char *name, const char *root, const char *relative,
                                      const char *text, const char *in_message)
{
    test_write_file(root, relative, text);
    test_provider_assert_cannot_start(name, root, NULL, VIGIL_PROVIDER_ERROR_READ, in_message,
                                      NULL);
}

void test_provider_assert_read_fails(const char *name, const char *root, const char *relative,
                                     const char *good, const char *bad, const char *in_message)
{
    struct test_provider p;
    test_provider_start_on_fixture(&p, name, root, relative, good);
    test_rewrite_file(root, relative, bad);
    GError *error = NULL;
    GHashTable *samples = test_provider_read(&p, 1, &error);
    if (samples != NULL)
        fail_msg("read without error:\n%s", bad);
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ));
    char *path = g_build_filename(root, relative, NULL);
    test_assert_contains(error->message, path);
    test_assert_contains(error->message, in_message);
    g_free(path);
    g_error_free(error);
    test_provider_close(&p);
}

gboolean test_provider_track(struct test_provider *p, guint64 process_id, pid_t pid, GError **error)
{
    assert_non_null(p->ops->track);
    return p->ops->track(p->instance, process_id, pid, error);
}

void test_provider_track_ok(struct test_provider *p, guint64 process_id, pid_t pid)
{
    GError *error = NULL;
    if (!test_provider_track(p, process_id, pid, &error))
        fail_msg("track of process %" G_GUINT64_FORMAT " (pid %d): %s", process_id, (int)pid,
                 error->message);
}

void test_provider_untrack(struct test_provider *p, guint64 process_id)
{
    assert_non_null(p->ops->untrack);
    p->ops->untrack(p->instance, process_id);
}

void test_assert_sample(GHashTable *samples, const char *metric, double want)
{
    double got = test_sample_value(samples, metric);
    if (got != want)
        fail_msg("%s is %.17g, expected %.17g", metric, got, want);
}

void test_provider_assert_read(struct test_provider *p, guint64 now_ns, const char *const *metrics,
                               const double *want, gsize n)
{
    GHashTable *samples = test_provider_read_ok(p, now_ns);
    for (gsize i = 0; i < n; i++)
        test_assert_sample(samples, metrics[i], want[i]);
    if (g_hash_table_size(samples) != n)
        fail_msg("the read gave %u samples, not %zu", g_hash_table_size(samples), (size_t)n);
    g_hash_table_destroy(samples);
}

void test_provider_assert_versions(const char *name, const char *root, const char *relative,
                                   const char *const *metrics, gsize n_metrics,
                                   const struct test_file_version *versions, gsize n_versions)
{
    struct test_provider p;
    test_provider_start_on_fixture(&p, name, root, relative, versions[0].text);
    for (gsize i = 0; i < n_versions; i++) {
        if (i > 0)
            test_rewrite_file(root, relative, versions[i].text);
        test_provider_assert_read(&p, 1, metrics, versions[i].values, n_metrics);
    }
    test_provider_close(&p);
}

void test_assert_metric(struct test_provider *p, const char *metric, const char *unit,
                        enum vigil_metric_kind kind, enum vigil_metric_origin origin,
                        const char *source)
{
    const struct vigil_metric_desc *m = test_metric(p, metric);
    assert_string_equal(m->unit, unit);
    assert_int_equal(m->kind, kind);
    assert_int_equal(m->origin, origin);
    assert_string_equal(m->source, source);
}

void test_devices_start(struct test_provider *p, const struct test_devices *d, const char *root,
                        const char *text)
{
    test_provider_start_on_fixture(p, d->provider, root, d->relative, text);
}

static gsize n_suffixes(const struct test_devices *d)
{
    return g_strv_length((gchar **)d->suffixes);
}

static char *device_metric(const struct test_devices *d, const char *device, gsize i)
{
    return g_strdup_printf("%s.%s.%s", d->group, device, d->suffixes[i]);
}

void test_devices_assert(const struct test_devices *d, GHashTable *samples, const char *device,
                         const double *want)
{
    for (gsize i = 0; d->suffixes[i] != NULL; i++) {
        char *name = device_metric(d, device, i);
        test_assert_sample(samples, name, want[i]);
        g_free(name);
    }
}

void test_devices_assert_none(const struct test_devices *d, struct test_provider *p,
                              GHashTable *samples, const char *device)
{
    for (gsize i = 0; d->suffixes[i] != NULL; i++) {
        char *name = device_metric(d, device, i);
        if (g_hash_table_contains(samples, name))
            fail_msg("%s was emitted", name);
        if (vigil_metric_lookup(p->catalog, name) != NULL)
            fail_msg("%s was registered", name);
        g_free(name);
    }
}

void test_devices_assert_count(const struct test_devices *d, GHashTable *samples, gsize n_devices)
{
    assert_int_equal(g_hash_table_size(samples), n_devices * n_suffixes(d));
}

void test_devices_assert_read(struct test_provider *p, const struct test_devices *d,
                              const struct test_device *present, gsize n, const char *const *absent)
{
    GHashTable *samples = test_provider_read_ok(p, 0);
    for (gsize i = 0; i < n; i++)
        test_devices_assert(d, samples, present[i].name, present[i].values);
    for (const char *const *device = absent; device != NULL && *device != NULL; device++)
        test_devices_assert_none(d, p, samples, *device);
    test_devices_assert_count(d, samples, n);
    g_hash_table_destroy(samples);
}

void test_devices_assert_registered(const struct test_devices *d, const char *root,
                                    const char *text, const char *device, gsize n_devices)
{
    struct test_provider p;
    test_devices_start(&p, d, root, text);
    assert_int_equal(vigil_metric_count(p.catalog), n_devices * n_suffixes(d));
    for (gsize i = 0; d->suffixes[i] != NULL; i++) {
        char *name = device_metric(d, device, i);
        test_assert_metric(&p, name, d->units[i], VIGIL_METRIC_COUNTER, VIGIL_METRIC_MEASURED,
                           d->provider);
        g_free(name);
    }
    test_provider_close(&p);
}

void test_devices_assert_bad_lines(const struct test_devices *d, const char *root, const char *good,
                                   const char *before, const char *const *bad_lines, gsize n,
                                   const char *after, unsigned line)
{
    char *path = g_build_filename(root, d->relative, NULL);
    char *where = g_strdup_printf("%s, line %u:", path, line);
    for (gsize i = 0; i < n; i++) {
        char *text = g_strconcat(before, bad_lines[i], after, NULL);
        test_provider_assert_read_fails(d->provider, root, d->relative, good, text, where);
        g_free(text);
    }
    g_free(where);
    g_free(path);
}

GHashTable *test_provider_read_this_machine(const char *name)
{
    struct test_provider p;
    test_provider_start_at(&p, name, "/");
    GHashTable *samples = test_provider_read_ok(&p, 1);
    test_provider_close(&p);
    return samples;
}

GHashTable *test_provider_assert_counters_grow(const char *name, const char *prefix)
{
    struct test_provider p;
    test_provider_start_at(&p, name, "/");
    GHashTable *first = test_provider_read_ok(&p, 0);
    GHashTable *second = test_provider_read_ok(&p, 0);
    GHashTableIter it;
    gpointer metric;
    g_hash_table_iter_init(&it, first);
    while (g_hash_table_iter_next(&it, &metric, NULL)) {
        assert_true(g_str_has_prefix(metric, prefix));
        double before = test_sample_value(first, metric);
        double after = test_sample_value(second, metric);
        if (before < 0 || after < before)
            fail_msg("%s went from %g to %g", (const char *)metric, before, after);
    }
    g_hash_table_destroy(second);
    test_provider_close(&p);
    return first;
}
