/* vigil — where `vigil db` and `vigil report` find the warehouse: the
 * [warehouse] conninfo of the configuration (--config, else $VIGIL_CONFIG,
 * else the default file when it exists), or "" for libpq's environment. */
#include "commands.h"
#include "vigil/config.h"

vigil_config *vigil_cli_warehouse_config(const char *config_path, GError **error)
{
    char *path = vigil_cli_config_file(config_path);
    vigil_config *config = vigil_cli_config_load(path, NULL, error);
    if (config == NULL)
        g_prefix_error(error, "the configuration has problems:\n");
    g_free(path);
    return config;
}

char *vigil_cli_warehouse_conninfo(const char *config_path, GError **error)
{
    vigil_config *config = vigil_cli_warehouse_config(config_path, error);
    if (config == NULL)
        return NULL;
    char *conninfo = g_strdup(vigil_config_get_string(config, "warehouse", "conninfo"));
    vigil_config_free(config);
    return conninfo;
}
