/* vigil-web — the web UI and JSON API over the warehouse.
 *
 *   vigil-web [--config FILE]
 *
 * Reads [web] (and [warehouse] conninfo when [web] has none) and the
 * ADPI/reasoner sections it shows on the thresholds page; serves until
 * SIGTERM or SIGINT; SIGHUP reloads what it can (reload.c). When it
 * listens it writes one line to stderr, "vigil-web: listening on
 * http://ADDRESS:PORT/", which scripts can wait for (with listen = …:0 the
 * port is the kernel's choice), and tells systemd it is ready. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <glib-unix.h>

#include "api.h"
#include "db_pool.h"
#include "reload.h"
#include "http_server.h"
#include "web_settings.h"
#include "vigil-build.h"
#include "vigil/log.h"
#include "vigil/server_command_line.h"
#include "vigil/plugin.h"
#include "vigil/schema.h"
#include "vigil/service_notify.h"

/* Pages and uPlot: beside the sources when run from the build tree, else
 * where `meson install` put them, found from the program's own folder
 * (SBINDIR/../share/vigil/web) so that a moved prefix works, else from the
 * configured prefix. */
static void default_web_dirs(char **static_dir, char **vendor_dir)
{
    char *program_dir = vigil_program_directory();
    char *real_program_dir = g_canonicalize_filename(program_dir, NULL);
    char *real_build_dir = g_canonicalize_filename(VIGIL_WEB_BUILD_DIR, NULL);
    char *installed_dir = g_build_filename(program_dir, VIGIL_WEB_DATA_FROM_SBINDIR, NULL);
    if (strcmp(real_program_dir, real_build_dir) == 0) {
        *static_dir = g_build_filename(VIGIL_WEB_SOURCE_DIR, "static", NULL);
        *vendor_dir = g_build_filename(VIGIL_WEB_SOURCE_DIR, "node_modules", "uplot", "dist", NULL);
    } else {
        const char *data_dir =
            g_file_test(installed_dir, G_FILE_TEST_IS_DIR) ? installed_dir : VIGIL_WEB_DATA_DIR;
        *static_dir = g_canonicalize_filename("static", data_dir);
        *vendor_dir = g_canonicalize_filename("uplot", data_dir);
    }
    g_free(installed_dir);
    g_free(program_dir);
    g_free(real_program_dir);
    g_free(real_build_dir);
}

static gboolean on_stop_signal(gpointer data)
{
    g_message("stopping");
    vigil_service_stopping();
    g_main_loop_quit(data);
    return G_SOURCE_REMOVE;
}

int main(int argc, char **argv)
{
    vigil_log_setup("vigil-web", VIGIL_LOG_MESSAGE);
    char *config_path = NULL;
    int exit_status = vigil_server_command_line(
        "vigil-web", "Serves vigil's web UI and its JSON API (/api/v1/) over the warehouse.", NULL,
        NULL, &argc, &argv, &config_path);
    if (exit_status >= 0)
        return exit_status;
    GError *error = NULL;
    signal(SIGPIPE, SIG_IGN);

    char *plugin_dir = vigil_plugin_default_directory();
    vigil_plugin_registry *registry = vigil_plugin_registry_new(plugin_dir);
    g_free(plugin_dir);
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry);
    char *static_dir = NULL, *vendor_dir = NULL;
    default_web_dirs(&static_dir, &vendor_dir);
    struct web_settings settings = {0};
    int status = 1;
    struct web_db_pool *pool = NULL;
    struct web_server *server = NULL;
    GMutex registry_lock;
    g_mutex_init(&registry_lock);
    if (!vigil_schema_declare(config, &error) || !vigil_config_load(config, config_path, &error) ||
        !web_settings_load(config, static_dir, vendor_dir, &settings, &error) ||
        !web_thresholds_prepare(config, registry, &error)) {
        fprintf(stderr, "vigil-web: %s: %s\n", config_path, error->message);
        goto out;
    }
    vigil_log_setup_from_config("vigil-web", config);
    if (!g_file_test(settings.static_dir, G_FILE_TEST_IS_DIR))
        g_warning("[web] static_dir %s is not a folder: the pages will not be found (the API "
                  "works)",
                  settings.static_dir);
    if (!g_file_test(settings.vendor_dir, G_FILE_TEST_IS_DIR))
        g_warning("[web] vendor_dir %s is not a folder (run `npm ci` in web/): the plots will "
                  "not draw",
                  settings.vendor_dir);

    pool = web_db_pool_new(settings.conninfo, settings.db_connections, settings.connect_timeout_s,
                           settings.statement_timeout_ms);
    struct web_context context = {
        .settings = &settings,
        .pool = pool,
        .config = config,
        .registry = registry,
        .registry_lock = &registry_lock,
    };
    char *url = NULL;
    server = web_server_start(&context, &url, &error);
    if (server == NULL) {
        fprintf(stderr, "vigil-web: %s\n", error->message);
        goto out;
    }
    fprintf(stderr, "vigil-web: listening on %s\n", url);
    fflush(stderr);
    g_free(url);
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    g_unix_signal_add(SIGTERM, on_stop_signal, loop);
    g_unix_signal_add(SIGINT, on_stop_signal, loop);
    web_reload_on_sighup(config_path);
    vigil_service_ready();
    g_main_loop_run(loop);
    g_main_loop_unref(loop);
    web_server_stop(server);
    status = 0;

out:
    g_clear_error(&error);
    web_db_pool_free(pool);
    web_settings_clear(&settings);
    vigil_config_free(config);
    vigil_plugin_registry_free(registry);
    g_mutex_clear(&registry_lock);
    g_free(static_dir);
    g_free(vendor_dir);
    g_free(config_path);
    return status;
}
