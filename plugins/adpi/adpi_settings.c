/* vigil — an ADPI instance's settings (adpi_settings.h). */
#include "adpi_settings.h"

gboolean adpi_settings_load(struct adpi_settings *s, const struct vigil_settings_table *table,
                            void *values, const struct vigil_plugin_context *ctx, GError **error)
{
    s->table = table;
    s->values = values;
    return vigil_plugin_settings_load(ctx, table, values, error);
}

gboolean adpi_settings_reload(const struct adpi_settings *s, const struct vigil_plugin_context *ctx,
                              GError **error)
{
    return vigil_plugin_settings_reload(ctx, s->table, s->values, error);
}

void adpi_settings_clear(const struct adpi_settings *s)
{
    vigil_settings_clear(s->table, s->values);
}
