/* vigil — where `vigil db` and `vigil report` find the warehouse: the
 * [warehouse] conninfo of the configuration (--config, else $VIGIL_CONFIG,
 * else the default file when it exists), or "" for libpq's environment. */
#include "commands.h"
#include "vigil-build.h"
#include "vigil/config.h"
#include "vigil/plugin.h"
#include "vigil/schema.h"

vigil_config *vigil_cli_warehouse_config(const char *config_path, GError **error)
{
    char *default_path = NULL;
    if (config_path == NULL) {
        /* A file the user named must be there (its absence is an error the
         * loader names); the default one may be missing. */
        const char *env_config = g_getenv("VIGIL_CONFIG");
        if (env_config != NULL && env_config[0] != '\0') {
            config_path = env_config;
        } else {
            default_path = g_build_filename(VIGIL_SYSCONF_DIR, "vigil.conf", NULL);
            if (g_file_test(default_path, G_FILE_TEST_EXISTS))
                config_path = default_path;
        }
    }
    vigil_config *config = vigil_config_new();
    char *plugin_dir = vigil_cli_plugin_dir();
    vigil_plugin_registry *registry = vigil_plugin_registry_new(plugin_dir);
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry);
    gboolean ok = vigil_schema_declare(config, error);
    if (ok && config_path != NULL)
        ok = vigil_config_load(config, config_path, error);
    if (!ok) {
        g_prefix_error(error, "the configuration has problems:\n");
        vigil_config_free(config);
        config = NULL;
    } else {
        /* Plugin sections were resolved while loading; the registry goes. */
        vigil_config_set_section_resolver(config, NULL, NULL);
    }
    vigil_plugin_registry_free(registry);
    g_free(plugin_dir);
    g_free(default_path);
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
