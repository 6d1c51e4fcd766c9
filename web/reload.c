/* vigil-web — SIGHUP (reload.h). */
#include <signal.h>
#include <glib-unix.h>

#include "reload.h"
#include "web_settings.h"
#include "vigil/log.h"
#include "vigil/plugin.h"
#include "vigil/schema.h"
#include "vigil/service_notify.h"

/* The same checks as at the start, on a fresh config object, so that a bad
 * file is refused before anything is applied. */
static gboolean reload(const char *config_path, GError **error)
{
    char *plugin_dir = vigil_plugin_default_directory();
    vigil_plugin_registry *registry = vigil_plugin_registry_new(plugin_dir);
    g_free(plugin_dir);
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry);
    struct web_settings settings = {0};
    gboolean ok = vigil_schema_declare(config, error) &&
                  vigil_config_load(config, config_path, error) &&
                  web_settings_load(config, "", "", &settings, error);
    if (ok)
        vigil_log_setup_from_config("vigil-web", config);
    web_settings_clear(&settings);
    vigil_config_free(config);
    vigil_plugin_registry_free(registry);
    return ok;
}

static gboolean on_sighup(gpointer data)
{
    const char *config_path = data;
    vigil_service_reloading();
    GError *error = NULL;
    if (reload(config_path, &error))
        g_message("reloaded %s: the log level (the rest of [web] and the thresholds take a "
                  "restart)",
                  config_path);
    else
        g_warning("reload refused, the running configuration stays: %s: %s", config_path,
                  error->message);
    g_clear_error(&error);
    vigil_service_ready();
    return G_SOURCE_CONTINUE;
}

void web_reload_on_sighup(const char *config_path)
{
    g_unix_signal_add(SIGHUP, on_sighup, (gpointer)config_path);
}
