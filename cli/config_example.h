/* vigil config example: the commented configuration with every key. */
#ifndef VIGIL_CLI_CONFIG_EXAMPLE_H
#define VIGIL_CLI_CONFIG_EXAMPLE_H

#include <glib.h>

enum vigil_config_example_format {
    VIGIL_CONFIG_EXAMPLE_INI,   /* a vigil.conf, every key commented out */
    VIGIL_CONFIG_EXAMPLE_SCDOC, /* the per-key part of vigil.conf(5) */
};

/* Every section and key of the built-in tables and of the plugins in
 * `plugin_dir`, with defaults, ranges and descriptions; NULL with error
 * set when a plugin cannot be loaded. g_free it. */
char *vigil_config_example(const char *plugin_dir, enum vigil_config_example_format format,
                           GError **error);

#endif
