/* vigil config check: loads the configuration the way every vigil program
 * does (built-in keys, plugin sections checked against their plugins) and
 * prints the effective result, or every problem found.
 * vigil config example: the commented file with every key (config_example.c). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "config_example.h"
#include "vigil-build.h"
#include "vigil/config.h"
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
    if (!vigil_schema_check(config, &error)) {
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

static int config_example(const char *plugin_dir, const char *format_name)
{
    enum vigil_config_example_format format;
    if (format_name == NULL || strcmp(format_name, "conf") == 0)
        format = VIGIL_CONFIG_EXAMPLE_INI;
    else if (strcmp(format_name, "scdoc") == 0)
        format = VIGIL_CONFIG_EXAMPLE_SCDOC;
    else {
        fprintf(stderr, "vigil config: --format: expected conf or scdoc, not '%s'\n", format_name);
        return VIGIL_EXIT_USAGE;
    }
    GError *error = NULL;
    char *text = vigil_config_example(plugin_dir, format, &error);
    if (text == NULL) {
        fprintf(stderr, "vigil config example: %s\n", error->message);
        g_error_free(error);
        return VIGIL_EXIT_FAILURE;
    }
    fputs(text, stdout);
    g_free(text);
    return VIGIL_EXIT_OK;
}

static const char usage[] =
    "usage: vigil config check [--config FILE] [--plugin-dir DIR]\n"
    "       vigil config example [--format conf|scdoc] [--plugin-dir DIR]\n";

int vigil_cli_config(int argc, char **argv)
{
    char *config_path = NULL, *plugin_dir = NULL, *owned_default = NULL, *format = NULL;
    GOptionEntry entries[] = {
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
         "check: the main configuration file (default: $VIGIL_CONFIG, else " VIGIL_SYSCONF_DIR
         "/vigil.conf)",
         "FILE"},
        {"plugin-dir", 0, 0, G_OPTION_ARG_FILENAME, &plugin_dir,
         "Where plugins are (default: $VIGIL_PLUGIN_DIR, else next to this program, "
         "else " VIGIL_PLUGIN_DIR ")",
         "DIR"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &format,
         "example: conf (a vigil.conf, the default) or scdoc (the keys part of vigil.conf(5))",
         "FORMAT"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = "check|example",
        .summary = "check: checks the configuration: vigil.conf, then conf.d/*.conf beside it.\n"
                   "Prints the effective configuration, or every problem found and exits with "
                   "status 1.\n"
                   "example: prints a vigil.conf with every section and key vigil and its plugins "
                   "know,\neach commented out with its default, what it accepts and what it does.",
    };
    GError *error = NULL;
    int status;
    if (!vigil_cli_options_ok("config", &help, entries, &argc, &argv)) {
        status = VIGIL_EXIT_USAGE;
    } else if (argc != 2 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "example") != 0)) {
        fputs(usage, stderr);
        status = VIGIL_EXIT_USAGE;
    } else if (strcmp(argv[1], "check") == 0 && format != NULL) {
        fprintf(stderr, "vigil config check: --format is an option of 'example'\n%s", usage);
        status = VIGIL_EXIT_USAGE;
    } else if (strcmp(argv[1], "example") == 0 && config_path != NULL) {
        fprintf(stderr, "vigil config example: --config is an option of 'check'\n%s", usage);
        status = VIGIL_EXIT_USAGE;
    } else {
        char *found = plugin_dir ? NULL : vigil_cli_plugin_dir();
        const char *plugins = plugin_dir ? plugin_dir : found;
        if (strcmp(argv[1], "example") == 0)
            status = config_example(plugins, format);
        else {
            const char *path =
                config_path ? config_path : (owned_default = vigil_config_default_path());
            status = config_check(path, plugins);
        }
        g_free(found);
    }
    g_clear_error(&error);
    g_free(config_path);
    g_free(plugin_dir);
    g_free(format);
    g_free(owned_default);
    return status;
}
