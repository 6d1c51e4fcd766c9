/* vigil config check: loads the configuration the way every vigil program
 * does (built-in keys, plugin sections checked against their plugins) and
 * prints the effective result, or every problem found. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "vigil-build.h"
#include "vigil/config.h"
#include "vigil/curve.h"
#include "vigil/plugin.h"
#include "vigil/schema.h"

static int config_check(const char *path, const char *plugin_dir)
{
    vigil_config *config = vigil_config_new();
    vigil_plugin_registry *registry = vigil_plugin_registry_new(plugin_dir);
    GError *error = NULL;
    int status = VIGIL_EXIT_OK;

    if (!vigil_schema_declare(config, &error)) {
        fprintf(stderr, "vigil: internal error in the built-in keys: %s\n", error->message);
        status = VIGIL_EXIT_FAILURE;
        goto out;
    }
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry);
    if (!vigil_config_load(config, path, &error)) {
        fprintf(stderr, "vigil: the configuration has problems:\n%s\n", error->message);
        status = VIGIL_EXIT_FAILURE;
        goto out;
    }
    /* The key files the daemons would refuse at start, refused here too,
     * by the same function. */
    if (!vigil_curve_check_config(config, &error) || !vigil_preload_check_config(config, &error) ||
        !vigil_web_check_config(config, NULL, NULL, &error)) {
        fprintf(stderr, "vigil: the configuration has problems:\n%s\n", error->message);
        status = VIGIL_EXIT_FAILURE;
        goto out;
    }
    char *text = vigil_config_to_string(config);
    fputs(text, stdout);
    g_free(text);

out:
    g_clear_error(&error);
    vigil_plugin_registry_free(registry);
    vigil_config_free(config);
    return status;
}

int vigil_cli_config(int argc, char **argv)
{
    char *config_path = NULL, *plugin_dir = NULL, *owned_default = NULL;
    GOptionEntry entries[] = {
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
         "The main configuration file (default: $VIGIL_CONFIG, else " VIGIL_SYSCONF_DIR
         "/vigil.conf)",
         "FILE"},
        {"plugin-dir", 0, 0, G_OPTION_ARG_FILENAME, &plugin_dir,
         "Where plugins are (default: $VIGIL_PLUGIN_DIR, else next to this program, "
         "else " VIGIL_PLUGIN_DIR ")",
         "DIR"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context = g_option_context_new("check");
    g_option_context_set_summary(context,
                                 "Checks the configuration: vigil.conf, then conf.d/*.conf beside "
                                 "it.\nPrints the effective configuration, or every problem found "
                                 "and exits with status 1.");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    int status;
    if (!g_option_context_parse(context, &argc, &argv, &error)) {
        fprintf(stderr, "vigil config: %s\n", error->message);
        status = VIGIL_EXIT_USAGE;
    } else if (argc != 2 || strcmp(argv[1], "check") != 0) {
        fprintf(stderr, "usage: vigil config check [--config FILE] [--plugin-dir DIR]\n");
        status = VIGIL_EXIT_USAGE;
    } else {
        const char *path =
            config_path ? config_path : (owned_default = vigil_config_default_path());
        char *found = plugin_dir ? NULL : vigil_cli_plugin_dir();
        status = config_check(path, plugin_dir ? plugin_dir : found);
        g_free(found);
    }
    g_clear_error(&error);
    g_option_context_free(context);
    g_free(config_path);
    g_free(plugin_dir);
    g_free(owned_default);
    return status;
}
