/* vigil — what the providers that read one file with a line per device
 * share (device_file_provider.h). */
#include "device_file_provider.h"

void *device_file_provider_new(const struct vigil_plugin_context *ctx,
                               const struct device_file_kind *kind, GError **error)
{
    struct device_file_settings settings;
    if (!vigil_plugin_settings_load(ctx, kind->settings, &settings, error))
        return NULL;
    struct device_file_provider *p = g_new0(struct device_file_provider, 1);
    p->kind = kind;
    vigil_provider_file_init(&p->file, settings.root, kind->relative_path,
                             DEVICE_FILE_INITIAL_BYTES, DEVICE_FILE_MAX_BYTES);
    if (settings.names[0] != NULL)
        p->names = g_steal_pointer(&settings.names);
    vigil_settings_clear(kind->settings, &settings);
    vigil_provider_devices_init(&p->devices, kind->devices, p->file.path);
    return p;
}

gboolean device_file_named(const struct device_file_provider *p, const char *name,
                           gboolean by_default)
{
    if (p->names != NULL)
        return g_strv_contains((const char *const *)p->names, name);
    return by_default;
}

void device_file_provider_destroy(void *instance)
{
    struct device_file_provider *p = instance;
    vigil_provider_devices_clear(&p->devices);
    g_strfreev(p->names);
    vigil_provider_file_clear(&p->file);
    g_free(p);
}

static gboolean scan_file(struct device_file_provider *p, vigil_metric_catalog *catalog,
                          const struct vigil_sample_sink *sink, GError **error)
{
    struct device_file_scan s = {p, catalog, sink, 0};
    vigil_provider_devices_begin_scan(&p->devices);
    char *cursor = p->file.buffer;
    for (char *line; (line = vigil_provider_next_line(&cursor)) != NULL;) {
        s.line++;
        if (!p->kind->scan_line(&s, line, error))
            return FALSE;
    }
    return p->kind->scan_end == NULL || p->kind->scan_end(&s, error);
}

static gboolean device_file_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct device_file_provider *p = instance;
    return vigil_provider_file_open(&p->file, error) && scan_file(p, catalog, NULL, error);
}

static gboolean device_file_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                                 const struct vigil_sample_sink *sink, GError **error)
{
    (void)now_ns;
    struct device_file_provider *p = instance;
    return vigil_provider_file_read(&p->file, error) && scan_file(p, catalog, sink, error);
}

const struct vigil_provider_ops device_file_provider_ops = {
    .start = device_file_start,
    .read = device_file_read,
};
