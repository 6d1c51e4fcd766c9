/* vigil — an ADPI instance's settings: the struct its table fills, loaded
 * by create() and reloaded by reconfigure() (adpi_metric_instance.h,
 * adpi_op_instance.h). */
#ifndef VIGIL_ADPI_SETTINGS_H
#define VIGIL_ADPI_SETTINGS_H

#include "vigil/plugin.h"

struct adpi_settings {
    const struct vigil_settings_table *table;
    void *values; /* the ADPI's settings struct, which `table` fills */
};

/* Loads `table` into `values`; FALSE with `error` set when it does not. */
gboolean adpi_settings_load(struct adpi_settings *s, const struct vigil_settings_table *table,
                            void *values, const struct vigil_plugin_context *ctx, GError **error);
/* The new settings; FALSE with `error` set keeps the old ones. */
gboolean adpi_settings_reload(const struct adpi_settings *s, const struct vigil_plugin_context *ctx,
                              GError **error);
void adpi_settings_clear(const struct adpi_settings *s);

#endif
