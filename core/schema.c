/* vigil — the registry of the built-in parts' settings tables. */
#include "vigil/schema.h"

const struct vigil_settings_table *const vigil_schema_tables[] = {
    &vigil_log_keys,
    &vigild_daemon_keys,
    &vigild_capture_keys,
    &vigild_uplink_keys,
    &vigild_metrics_keys,
    &vigil_warehouse_keys,
    &txd_keys,
    &web_keys,
    &vigil_preload_keys,
    &vigil_advise_keys,
    &vigil_insight_keys,
    NULL,
};

gboolean vigil_schema_declare(vigil_config *config, GError **error)
{
    for (size_t i = 0; vigil_schema_tables[i] != NULL; i++)
        if (!vigil_settings_declare(config, vigil_schema_tables[i], NULL, error))
            return FALSE;
    return TRUE;
}

gboolean vigil_schema_check(const vigil_config *config, GError **error)
{
    GString *problems = g_string_new(NULL);
    for (size_t i = 0; vigil_schema_tables[i] != NULL; i++) {
        GError *e = NULL;
        if (vigil_schema_tables[i]->check != NULL &&
            !vigil_settings_check(config, vigil_schema_tables[i], &e)) {
            g_string_append_printf(problems, "%s%s", problems->len > 0 ? "\n" : "", e->message);
            g_error_free(e);
        }
    }
    gboolean ok = problems->len == 0;
    if (!ok)
        g_set_error_literal(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE, problems->str);
    g_string_free(problems, TRUE);
    return ok;
}
