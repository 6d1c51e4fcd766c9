/* vigil — what the providers that parse one file under their root share
 * (proc_file_provider.h). */
#include <errno.h>
#include <unistd.h>

#include "proc_file_provider.h"

void *proc_file_provider_new(const struct vigil_plugin_context *ctx, size_t size,
                             const struct proc_file_kind *kind, GError **error)
{
    char *root = vigil_provider_root(ctx, error);
    if (root == NULL)
        return NULL;
    struct proc_file_provider *base = g_malloc0(size);
    vigil_provider_file_init(&base->file, root, kind->relative_path, kind->initial_bytes,
                             kind->max_bytes);
    g_free(root);
    base->kind = kind;
    return base;
}

void proc_file_provider_destroy(void *instance)
{
    struct proc_file_provider *base = instance;
    vigil_provider_file_clear(&base->file);
    g_free(base);
}

gboolean proc_file_provider_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct proc_file_provider *base = instance;
    return vigil_provider_file_open(&base->file, error) && base->kind->parse(instance, error) &&
           base->kind->register_metrics(instance, catalog, error);
}

gboolean proc_file_provider_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                                 const struct vigil_sample_sink *sink, GError **error)
{
    (void)catalog;
    (void)now_ns;
    struct proc_file_provider *base = instance;
    if (!vigil_provider_file_read(&base->file, error) || !base->kind->parse(instance, error))
        return FALSE;
    base->kind->emit(instance, sink);
    return TRUE;
}

const struct vigil_provider_ops proc_file_provider_ops = {
    .start = proc_file_provider_start,
    .read = proc_file_provider_read,
};

gboolean proc_sysconf(int name, const char *name_text, const char *what, long *value,
                      GError **error)
{
    *value = sysconf(name);
    if (*value > 0)
        return TRUE;
    g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                "sysconf(%s) gives no %s: %s", name_text, what, g_strerror(errno));
    return FALSE;
}
