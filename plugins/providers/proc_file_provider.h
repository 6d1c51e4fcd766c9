/* vigil — what the providers that parse one file under their root share
 * (loadavg, meminfo, procstat): the file, made from the root key, and the
 * start that opens it, parses it and registers the metrics it found.
 *
 * Such a provider's instance starts with a struct proc_file_provider
 * (PROC_FILE_PROVIDER checks it), so that its ops and descriptor can point
 * at the shared functions below. */
#ifndef VIGIL_PROC_FILE_PROVIDER_H
#define VIGIL_PROC_FILE_PROVIDER_H

#include "vigil/plugin.h"
#include "vigil/provider.h"

/* The file a provider reads and what it does with it. */
struct proc_file_kind {
    const char *relative_path;       /* under the root key */
    size_t initial_bytes, max_bytes; /* vigil_provider_file_init's */
    /* Parses the file's text, just read, into the instance. */
    gboolean (*parse)(void *instance, GError **error);
    /* Registers the metrics the parse found. */
    gboolean (*register_metrics)(void *instance, vigil_metric_catalog *catalog, GError **error);
    /* Emits the values of the last parse. */
    void (*emit)(void *instance, const struct vigil_sample_sink *sink);
};

struct proc_file_provider {
    struct vigil_provider_file file;
    const struct proc_file_kind *kind;
};

/* Fails the build when `type` does not start with its proc_file_provider. */
#define PROC_FILE_PROVIDER(type) G_STATIC_ASSERT(G_STRUCT_OFFSET(type, base) == 0)

/* A zeroed instance of `size` bytes that starts with its base, of `kind`'s
 * file under the root key; NULL with `error` set when the key is refused. */
void *proc_file_provider_new(const struct vigil_plugin_context *ctx, size_t size,
                             const struct proc_file_kind *kind, GError **error);

/* The descriptor's destroy: closes the file, frees the instance. */
void proc_file_provider_destroy(void *instance);

/* The ops' start: opens the file, parses it and registers the metrics, so
 * that a file that is not as expected is told at start. */
gboolean proc_file_provider_start(void *instance, vigil_metric_catalog *catalog, GError **error);

/* The ops' read: reads the file again, parses it and emits the values. */
gboolean proc_file_provider_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                                 const struct vigil_sample_sink *sink, GError **error);

/* sysconf(`name`) into *value, for the providers that turn /proc's ticks
 * and pages into seconds and bytes (procstat, process); FALSE with `error`
 * set (VIGIL_PROVIDER_ERROR_UNAVAILABLE: `name_text` gives no `what`) when
 * it has none. */
gboolean proc_sysconf(int name, const char *name_text, const char *what, long *value,
                      GError **error);

/* The ops of a provider that needs no more than the functions above. */
extern const struct vigil_provider_ops proc_file_provider_ops;

/* The plugin of such a provider, whose only key is the root, of instance
 * `type`, the file `relative_path` and the functions of a proc_file_kind. */
#define PROC_FILE_PROVIDER_PLUGIN(type, name_, description_, relative_path, initial_bytes,         \
                                  max_bytes, parse, register_metrics, emit)                        \
    PROC_FILE_PROVIDER(type);                                                                      \
    static const struct proc_file_kind kind = {(relative_path), (initial_bytes),    (max_bytes),   \
                                               (parse),         (register_metrics), (emit)};       \
    static void *proc_file_create(const struct vigil_plugin_context *ctx, GError **error)          \
    {                                                                                              \
        return proc_file_provider_new(ctx, sizeof(type), &kind, error);                            \
    }                                                                                              \
    VIGIL_PLUGIN(VIGIL_PLUGIN_PROVIDER, .name = (name_), .description = (description_),            \
                 .settings = &vigil_provider_root_settings, .create = proc_file_create,            \
                 .destroy = proc_file_provider_destroy, .ops = &proc_file_provider_ops)

#endif
