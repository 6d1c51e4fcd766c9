/* vigild — the node daemon's command line.
 *
 *   vigild [--config FILE] [--foreground] [--socket PATH] [--pid-file FILE]
 *
 * It logs to stderr, as systemd and a terminal both want. Without
 * --foreground it detaches, and its parent returns only once the socket is
 * served (status 0) or the start failed (status 1, the reason printed), so
 * that a script that starts it can use it at once. SIGTERM and SIGINT stop
 * it after a last drain of every ring; SIGHUP reloads its configuration
 * (signals.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "vigil-build.h"
#include "vigil/detach.h"
#include "vigil/log.h"
#include "vigil/server_command_line.h"
#include "vigil/service_notify.h"
#include "daemon.h"
#include "signals.h"

/* Each registered process holds a connection and a pidfd: a thousand
 * processes need more descriptors than the usual soft limit of 1024. */
static void raise_descriptor_limit(void)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

int main(int argc, char **argv)
{
    vigil_log_setup("vigild", VIGIL_LOG_MESSAGE);
    char *config_path = NULL, *socket_path = NULL;
    struct vigil_server_detach detach = {.ready_when = "the socket is served"};
    GOptionEntry entries[] = {
        {"socket", 0, 0, G_OPTION_ARG_FILENAME, &socket_path,
         "Serve this socket, whatever the configuration says (so does $VIGIL_SOCKET)", "PATH"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    int exit_status = vigil_server_command_line(
        "vigild",
        "vigil's node daemon: samples the node's statistics, follows the processes run under "
        "vigil, and sends what is captured to vigil-txd.",
        &detach, entries, &argc, &argv, &config_path);
    if (exit_status >= 0)
        return exit_status;
    GError *error = NULL;
    if (socket_path == NULL && g_getenv("VIGIL_SOCKET") != NULL && g_getenv("VIGIL_SOCKET")[0])
        socket_path = g_strdup(g_getenv("VIGIL_SOCKET"));
    vigil_detach_keep_path(&socket_path);

    signal(SIGPIPE, SIG_IGN);
    raise_descriptor_limit();
    int ready_fd = -1;
    if (!detach.foreground && vigil_detach("vigild", &ready_fd) != 0)
        return 1;

    struct vigild d;
    gboolean started = vigild_start(&d, config_path, socket_path, &error);
    if (started && detach.pid_file != NULL)
        started = vigil_pid_file_write(detach.pid_file, &error);
    if (!started) {
        vigil_detach_fail(ready_fd, G_LOG_DOMAIN, error->message);
        vigild_stop(&d);
        return 1;
    }
    vigil_detach_report(ready_fd, NULL); /* the parent may return: the socket is served */
    vigil_service_ready();

    d.loop = g_main_loop_new(NULL, FALSE);
    vigild_signals_take(&d.signals); /* any that came during the start */
    if (!d.stopping)
        g_main_loop_run(d.loop);
    g_main_loop_unref(d.loop);
    vigild_stop(&d);
    if (detach.pid_file != NULL)
        g_unlink(detach.pid_file);
    g_message("stopped");
    g_free(config_path);
    g_free(socket_path);
    g_free(detach.pid_file);
    return 0;
}
