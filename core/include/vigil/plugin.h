/* vigil — the plugin API.
 *
 * A plugin is a shared module in the plugin directory, named
 * "KIND-NAME.so" (provider-energy.so, adpi-drift.so), that exports one
 * symbol, `vigil_plugin_descriptor`, of type struct vigil_plugin_descriptor:
 *
 *     struct energy_settings {
 *         double idle_w;
 *     };
 *     static const struct vigil_config_key keys[] = {
 *         {VIGIL_SETTING(struct energy_settings, idle_w), .type = VIGIL_CONFIG_DOUBLE,
 *          .default_value = "40", .min = 0, .max = 1000,
 *          .description = "idle power of one socket"},
 *     };
 *     static const struct vigil_settings_table settings =
 *         VIGIL_SETTINGS_TABLE(NULL, struct energy_settings, keys, NULL);
 *     VIGIL_PLUGIN(VIGIL_PLUGIN_PROVIDER, .name = "energy",
 *                  .description = "RAPL energy through likwid or powercap",
 *                  .settings = &settings, .create = energy_create,
 *                  .destroy = energy_destroy, .ops = &energy_provider_ops);
 *
 * (VIGIL_PLUGIN fills abi_version and kind; VIGIL_PLUGIN_EXPORT declares
 * the symbol for a descriptor written out whole.)
 *
 * Its configuration lives in the section "[KIND.NAME]" and is checked
 * against its settings table like every other section; create() fills its
 * struct in one call, vigil_plugin_settings_load (vigil/settings.h). `ops`
 * points to the functions of its kind (struct vigil_provider_ops and so
 * on), declared by the part of vigil that hosts that kind. */
#ifndef VIGIL_PLUGIN_H
#define VIGIL_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <glib.h>
#include <gmodule.h>

#include "vigil/config.h"
#include "vigil/settings.h"

/* Raise it whenever struct vigil_plugin_descriptor, struct
 * vigil_plugin_context or any kind's ops change. */
#define VIGIL_PLUGIN_ABI_VERSION 6u
#define VIGIL_PLUGIN_SYMBOL      "vigil_plugin_descriptor"

enum vigil_plugin_kind {
    VIGIL_PLUGIN_PROVIDER = 1, /* statistics providers */
    VIGIL_PLUGIN_ADPI = 2,     /* anomaly-detection plugins */
    VIGIL_PLUGIN_REASONER = 3,
    VIGIL_PLUGIN_REPORTER = 4,
};
#define VIGIL_PLUGIN_KIND_COUNT 4

/* What a plugin instance is given when it is created. */
struct vigil_plugin_context {
    const vigil_config *config;
    const char *section; /* "KIND.NAME": where its keys are */
};

struct vigil_plugin_descriptor {
    /* First, and never moved: the registry reads it before anything else,
     * so a module built for another ABI is refused before it is used. */
    uint32_t abi_version;
    uint32_t kind; /* enum vigil_plugin_kind */
    const char *name;
    const char *description;
    /* Its keys and the struct they fill; NULL for a plugin without keys. */
    const struct vigil_settings_table *settings;
    /* Makes an instance from its configuration; NULL and error on failure. */
    void *(*create)(const struct vigil_plugin_context *context, GError **error);
    void (*destroy)(void *instance);
    const void *ops; /* the kind's functions */
};

#define VIGIL_PLUGIN_EXPORT                                                                        \
    G_MODULE_EXPORT extern const struct vigil_plugin_descriptor vigil_plugin_descriptor;           \
    const struct vigil_plugin_descriptor vigil_plugin_descriptor

/* The descriptor of a plugin of `kind` built for this ABI, its other members
 * given by name: VIGIL_PLUGIN(VIGIL_PLUGIN_ADPI, .name = "drift", ...); */
#define VIGIL_PLUGIN(kind_, ...)                                                                   \
    VIGIL_PLUGIN_EXPORT = {.abi_version = VIGIL_PLUGIN_ABI_VERSION, .kind = (kind_), __VA_ARGS__}

const char *vigil_plugin_kind_name(unsigned kind);      /* "provider"; NULL if unknown */
unsigned vigil_plugin_kind_from_name(const char *name); /* 0 if unknown */

#define VIGIL_PLUGIN_ERROR (vigil_plugin_error_quark())
GQuark vigil_plugin_error_quark(void);

enum vigil_plugin_error_code {
    VIGIL_PLUGIN_ERROR_NOT_FOUND,  /* no such module in the plugin directory */
    VIGIL_PLUGIN_ERROR_LOAD,       /* the module exists but cannot be loaded */
    VIGIL_PLUGIN_ERROR_NO_SYMBOL,  /* it does not export vigil_plugin_descriptor */
    VIGIL_PLUGIN_ERROR_ABI,        /* built for another plugin ABI */
    VIGIL_PLUGIN_ERROR_DESCRIPTOR, /* the descriptor does not fit its file */
};

/* A loaded plugin; owned by its registry, valid until the registry is freed. */
struct vigil_plugin {
    const struct vigil_plugin_descriptor *descriptor;
    char *path;
};

typedef struct vigil_plugin_registry vigil_plugin_registry;

vigil_plugin_registry *vigil_plugin_registry_new(const char *directory);

/* Where the running program's plugins are: $VIGIL_PLUGIN_DIR, else beside
 * the program in the build tree (build/X/prog → build/plugins) or in its
 * install prefix (bin/ or sbin/ → LIBDIR/vigil/plugins, so that a moved
 * prefix still works), else the configured install path. g_free it. */
char *vigil_plugin_default_directory(void);

/* The directory of the running program's executable (/proc/self/exe), or
 * "." when it cannot be read. g_free it. */
char *vigil_program_directory(void);
void vigil_plugin_registry_free(vigil_plugin_registry *registry);

/* Loads "KIND-NAME.so" once (later calls return the same plugin). Errors
 * name the module's path and say what is wrong with it; for a missing one
 * they list the plugins of that kind that do exist. */
const struct vigil_plugin *vigil_plugin_registry_load(vigil_plugin_registry *registry,
                                                      enum vigil_plugin_kind kind, const char *name,
                                                      GError **error);

/* Names of the plugins of `kind` in the directory, sorted; free with
 * g_strfreev. */
char **vigil_plugin_registry_list(const vigil_plugin_registry *registry,
                                  enum vigil_plugin_kind kind);

/* A vigil_config_section_resolver: for a "KIND.NAME" section, loads the
 * plugin and declares its keys. user_data is the registry. */
gboolean vigil_plugin_registry_resolve_section(vigil_config *config, const char *section,
                                               gpointer user_data, GError **error);

/* Fills the plugin's settings struct from its section and runs the table's
 * check: what create() calls, with its descriptor's table. On failure
 * nothing is left to clear; else vigil_settings_clear frees it. */
gboolean vigil_plugin_settings_load(const struct vigil_plugin_context *context,
                                    const struct vigil_settings_table *table, void *settings,
                                    GError **error);
/* The same for reconfigure(): `settings` (filled before) gets the new
 * values only when they load and pass the check, its old strings freed;
 * otherwise it keeps the old ones. */
gboolean vigil_plugin_settings_reload(const struct vigil_plugin_context *context,
                                      const struct vigil_settings_table *table, void *settings,
                                      GError **error);

/* A plugin's section as text, every key with its value: equal texts mean
 * an unchanged configuration, which lets a reload keep an instance. g_free
 * it. */
char *vigil_plugin_config_text(const vigil_config *config, const struct vigil_plugin *plugin,
                               const char *section);

#endif
