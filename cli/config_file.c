/* vigil — the configuration a subcommand reads: which file, and that file
 * loaded the way every vigil program loads it (vigil's keys declared, a
 * plugin's section checked against the plugin installed beside this
 * program). */
#include "commands.h"
#include "vigil/config.h"
#include "vigil/plugin.h"
#include "vigil/schema.h"

char *vigil_cli_config_file(const char *from_option)
{
    if (from_option != NULL)
        return g_strdup(from_option);
    char *path = vigil_config_default_path();
    /* A file the environment names must be there (the loader says so
     * when it is not); the default file may be missing. */
    const char *named = g_getenv("VIGIL_CONFIG");
    if ((named == NULL || named[0] == '\0') && !g_file_test(path, G_FILE_TEST_EXISTS))
        g_clear_pointer(&path, g_free);
    return path;
}

vigil_config *vigil_cli_config_load(const char *path, char **problems, GError **error)
{
    vigil_config *config = vigil_config_new();
    char *plugin_dir = vigil_cli_plugin_dir();
    vigil_plugin_registry *registry = vigil_plugin_registry_new(plugin_dir);
    g_free(plugin_dir);
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry);
    gboolean ok = vigil_schema_declare(config, error);
    if (ok && path != NULL && problems == NULL) {
        ok = vigil_config_load(config, path, error);
    } else if (ok && path != NULL) {
        GError *load_error = NULL;
        if (!vigil_config_load_keeping_valid(config, path, &load_error)) {
            *problems = g_strdup(load_error->message);
            g_error_free(load_error);
        }
    }
    /* Plugin sections were resolved while loading; the registry goes. */
    vigil_config_set_section_resolver(config, NULL, NULL);
    vigil_plugin_registry_free(registry);
    if (!ok)
        g_clear_pointer(&config, vigil_config_free);
    return config;
}
