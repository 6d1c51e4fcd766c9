/* vigil — what the ADPIs that judge I/O operations share
 * (adpi_op_instance.h). */
#include "adpi_op_instance.h"

static void match_operations(struct adpi_op_instance *base)
{
    vigil_ops_matching((const char *const *)*base->operations, base->judged);
}

void *adpi_op_instance_init(struct adpi_op_instance *base, const struct vigil_settings_table *table,
                            void *settings, char ***operations,
                            const struct vigil_plugin_context *ctx, GError **error)
{
    if (!adpi_settings_load(&base->settings, table, settings, ctx, error)) {
        g_free(base);
        return NULL;
    }
    base->operations = operations;
    match_operations(base);
    return base;
}

void adpi_op_instance_destroy(void *instance)
{
    struct adpi_op_instance *base = instance;
    adpi_settings_clear(&base->settings);
    g_free(base);
}

gboolean adpi_op_instance_reconfigure(void *instance, const struct vigil_plugin_context *ctx,
                                      GError **error)
{
    struct adpi_op_instance *base = instance;
    if (!adpi_settings_reload(&base->settings, ctx, error))
        return FALSE;
    match_operations(base);
    return TRUE;
}
