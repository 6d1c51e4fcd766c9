/* vigil — what the providers that read one file with a line per device
 * share (diskstats, netdev): the file under the root key, the names of the
 * devices to report from a key of their own ("devices", "interfaces"), and
 * a pass over the file, a line at a time, in start() (which registers the
 * metrics only) and in each read(). */
#ifndef VIGIL_DEVICE_FILE_PROVIDER_H
#define VIGIL_DEVICE_FILE_PROVIDER_H

#include "vigil/plugin.h"
#include "vigil/provider.h"

/* The keys' fields: VIGIL_PROVIDER_PROC_ROOT_KEY, and the list of names. */
struct device_file_settings {
    char *root;
    char **names; /* empty: the provider's default choice */
};

/* An instance. */
struct device_file_provider {
    const struct device_file_kind *kind;
    struct vigil_provider_file file;
    char **names; /* NULL when the key is empty */
    struct vigil_provider_devices devices;
};

/* One pass over the file. */
struct device_file_scan {
    struct device_file_provider *p;
    vigil_metric_catalog *catalog;
    const struct vigil_sample_sink *sink; /* NULL in start(): register only */
    guint line;                           /* the line's number, from 1 */
};

/* The file's buffer: room for a few hundred devices, a bigger file only
 * costing a regrowth; past the most, the file is not the one expected, and
 * growing for it would only eat the node's memory. */
#define DEVICE_FILE_INITIAL_BYTES (64u * 1024u)
#define DEVICE_FILE_MAX_BYTES     (64u * 1024u * 1024u)

/* What a provider reads and how it reads a line. */
struct device_file_kind {
    const struct vigil_settings_table *settings; /* of struct device_file_settings */
    const char *relative_path;                   /* under the root */
    const struct vigil_provider_device_kind *devices;
    gboolean (*scan_line)(struct device_file_scan *s, char *line, GError **error);
    /* Optional: after the last line. */
    gboolean (*scan_end)(const struct device_file_scan *s, GError **error);
};

/* Whether the names key lists `name`; when it is empty, `by_default`. */
gboolean device_file_named(const struct device_file_provider *p, const char *name,
                           gboolean by_default);

/* A new instance of `kind`; NULL with `error` set when its keys are
 * refused. */
void *device_file_provider_new(const struct vigil_plugin_context *ctx,
                               const struct device_file_kind *kind, GError **error);

/* The descriptor's destroy. */
void device_file_provider_destroy(void *instance);

/* The ops: start() opens the file and registers what it lists, read()
 * reads it again and emits. */
extern const struct vigil_provider_ops device_file_provider_ops;

/* The plugin of such a provider: its name and description, its settings
 * table (that of `kind_`) and its struct device_file_kind. */
#define DEVICE_FILE_PROVIDER_PLUGIN(name_, description_, settings_, kind_)                         \
    static void *device_file_create(const struct vigil_plugin_context *ctx, GError **error)        \
    {                                                                                              \
        return device_file_provider_new(ctx, &(kind_), error);                                     \
    }                                                                                              \
    VIGIL_PLUGIN(VIGIL_PLUGIN_PROVIDER, .name = (name_), .description = (description_),            \
                 .settings = (settings_), .create = device_file_create,                            \
                 .destroy = device_file_provider_destroy, .ops = &device_file_provider_ops)

#endif
