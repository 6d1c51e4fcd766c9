/* vigil-txd — the transaction server's command line.
 *
 *   vigil-txd [--config FILE] [--foreground] [--pid-file FILE]
 *
 * Without --foreground it detaches, and its parent returns once the socket
 * is bound (status 0) or the start failed (status 1, the reason printed).
 * SIGTERM and SIGINT stop it; SIGHUP reads the configuration again for the
 * system reasoner's rule and the log level (the endpoint, the keys and the
 * database need a restart, and a reload says so). The connection string
 * comes from [warehouse] conninfo or libpq's PG* variables, never from the
 * command line. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "txd.h"
#include "vigil-build.h"
#include "vigil/detach.h"
#include "vigil/log.h"
#include "vigil/server_command_line.h"
#include "vigil/service_notify.h"
#include "vigil/plugin.h"
#include "vigil/schema.h"

struct txd_main {
    char *config_path;
    vigil_plugin_registry *registry;
};

static struct txd_main txd_main;

/* The whole configuration, checked, with the system reasoner's rule. */
static vigil_config *load_config(const char *path, struct txd_settings *settings,
                                 struct vigil_warehouse_settings *warehouse,
                                 struct vigil_reasoner_rule *rule, GError **error)
{
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section,
                                      txd_main.registry);
    gboolean ok = vigil_schema_declare(config, error) && vigil_config_load(config, path, error);
    if (ok && !vigil_config_has_section(config, "reasoner.system"))
        ok = vigil_plugin_registry_resolve_section(config, "reasoner.system", txd_main.registry,
                                                   error);
    if (ok && !txd_settings_load(config, settings, error))
        ok = FALSE;
    else if (ok && !vigil_settings_load(config, &vigil_warehouse_keys, warehouse, error)) {
        txd_settings_clear(settings);
        ok = FALSE;
    }
    struct vigil_reasoner_settings system;
    if (ok && !vigil_reasoner_settings_load(config, "reasoner.system", &system, error)) {
        txd_settings_clear(settings);
        vigil_settings_clear(&vigil_warehouse_keys, warehouse);
        ok = FALSE;
    }
    if (!ok) {
        vigil_config_free(config);
        return NULL;
    }
    *rule = system.rule;
    vigil_reasoner_settings_clear(&system);
    vigil_log_setup_from_config("vigil-txd", config);
    return config;
}

static void on_signal(struct txd_server *s, int signal)
{
    if (signal != SIGHUP) {
        g_message("stopping (signal %d)", signal);
        vigil_service_stopping();
        txd_server_stop(s);
        return;
    }
    vigil_service_reloading();
    struct txd_settings settings;
    struct vigil_warehouse_settings warehouse;
    struct vigil_reasoner_rule rule;
    GError *error = NULL;
    vigil_config *config = load_config(txd_main.config_path, &settings, &warehouse, &rule, &error);
    if (config == NULL) {
        g_warning("reload refused, the running configuration stays: %s", error->message);
        g_error_free(error);
        vigil_service_ready();
        return;
    }
    txd_server_set_rule(s, &rule);
    g_message("reloaded: the system reasoner's rule and the log level (a new endpoint, keys or "
              "database take a restart)");
    txd_settings_clear(&settings);
    vigil_settings_clear(&vigil_warehouse_keys, &warehouse);
    vigil_config_free(config);
    vigil_service_ready();
}

static int take_signals(GError **error)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    int fd = -1;
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
        (fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot take signals: %s",
                    g_strerror(errno));
    return fd;
}

int main(int argc, char **argv)
{
    vigil_log_setup("vigil-txd", VIGIL_LOG_MESSAGE);
    struct vigil_server_detach detach = {.ready_when = "the endpoint is bound"};
    int exit_status = vigil_server_command_line(
        "vigil-txd",
        "vigil's transaction server: takes the nodes' batches, runs the system reasoner and "
        "writes the warehouse (PostgreSQL).",
        &detach, NULL, &argc, &argv, &txd_main.config_path);
    if (exit_status >= 0)
        return exit_status;
    GError *error = NULL;
    signal(SIGPIPE, SIG_IGN);
    int ready_fd = -1;
    if (!detach.foreground && vigil_detach("vigil-txd", &ready_fd) != 0)
        return 1;

    char *plugin_dir = vigil_plugin_default_directory();
    txd_main.registry = vigil_plugin_registry_new(plugin_dir);
    g_free(plugin_dir);
    struct txd_settings settings = {0};
    struct vigil_warehouse_settings warehouse = {0};
    struct vigil_reasoner_rule rule;
    struct txd_server *server = NULL;
    int signal_fd = take_signals(&error);
    vigil_config *config =
        signal_fd >= 0 ? load_config(txd_main.config_path, &settings, &warehouse, &rule, &error)
                       : NULL;
    if (config != NULL)
        server = txd_server_new(&settings, &warehouse, &rule, signal_fd, &error);
    if (server != NULL && detach.pid_file != NULL &&
        !vigil_pid_file_write(detach.pid_file, &error)) {
        txd_server_free(server);
        server = NULL;
    }
    int status = 0;
    if (server == NULL) {
        vigil_detach_fail(ready_fd, G_LOG_DOMAIN, error->message);
        g_error_free(error);
        status = 1;
    } else {
        vigil_detach_report(ready_fd, NULL);
        vigil_service_ready();
        while (!txd_server_stopping(server))
            txd_server_turn(server, on_signal);
        txd_server_free(server);
        if (detach.pid_file != NULL)
            g_unlink(detach.pid_file);
        g_message("stopped");
    }
    txd_settings_clear(&settings);
    vigil_settings_clear(&vigil_warehouse_keys, &warehouse);
    if (config != NULL)
        vigil_config_free(config);
    if (signal_fd >= 0)
        close(signal_fd);
    vigil_plugin_registry_free(txd_main.registry);
    g_free(txd_main.config_path);
    g_free(detach.pid_file);
    return status;
}
