/* vigil — where `vigil db` and `vigil report` find the warehouse: the
 * [warehouse] conninfo of the configuration (--config, else $VIGIL_CONFIG,
 * else the default file when it exists), or "" for libpq's environment. */
#include "commands.h"
#include "vigil/config.h"
#include "vigil/schema.h"
#include "vigil/warehouse_settings.h"

vigil_config *vigil_cli_warehouse_config(const char *config_path, GError **error)
{
    char *path = vigil_cli_config_file(config_path);
    vigil_config *config = vigil_cli_config_load(path, NULL, error);
    if (config == NULL)
        g_prefix_error(error, "the configuration has problems:\n");
    g_free(path);
    return config;
}

gboolean vigil_cli_warehouse_settings(const char *config_path, struct vigil_warehouse_settings *out,
                                      GError **error)
{
    vigil_config *config = vigil_cli_warehouse_config(config_path, error);
    gboolean ok = config != NULL && vigil_settings_load(config, &vigil_warehouse_keys, out, error);
    vigil_config_free(config);
    return ok;
}

char *vigil_cli_warehouse_conninfo(const char *config_path, GError **error)
{
    struct vigil_warehouse_settings warehouse;
    if (!vigil_cli_warehouse_settings(config_path, &warehouse, error))
        return NULL;
    char *conninfo = g_steal_pointer(&warehouse.conninfo);
    vigil_settings_clear(&vigil_warehouse_keys, &warehouse);
    return conninfo;
}
