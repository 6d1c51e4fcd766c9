/* vigild — signals through a signalfd: SIGTERM and SIGINT stop the daemon,
 * SIGHUP reloads its configuration.
 *
 * A signalfd rather than a handler, so that pending signals can be taken
 * at a chosen moment too: a status request takes them before it answers,
 * which makes "reload, then ask" come out in that order for whoever sent
 * both. */
#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <glib-unix.h>

#include "vigil/service_notify.h"
#include "daemon.h"
#include "signals.h"

static gboolean on_signal(gint fd, GIOCondition condition, gpointer user_data)
{
    (void)fd;
    (void)condition;
    vigild_signals_take(user_data);
    return G_SOURCE_CONTINUE;
}

gboolean vigild_signals_start(struct vigild *d, GError **error)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
        (d->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot take signals: %s",
                    g_strerror(errno));
        return FALSE;
    }
    d->signal_watch = g_unix_fd_add(d->signal_fd, G_IO_IN, on_signal, d);
    return TRUE;
}

void vigild_signals_take(struct vigild *d)
{
    if (d->signal_fd < 0)
        return;
    struct signalfd_siginfo info;
    while (read(d->signal_fd, &info, sizeof info) == (ssize_t)sizeof info) {
        if (info.ssi_signo == SIGHUP) {
            vigil_service_reloading();
            vigild_reload(d);
            vigil_service_ready();
        } else if (!d->stopping) {
            g_message("stopping on %s from pid %u", g_strsignal((int)info.ssi_signo), info.ssi_pid);
            vigil_service_stopping();
            d->stopping = TRUE;
            if (d->loop != NULL)
                g_main_loop_quit(d->loop);
        }
    }
}

void vigild_signals_stop(struct vigild *d)
{
    if (d->signal_watch != 0)
        g_source_remove(d->signal_watch);
    d->signal_watch = 0;
    if (d->signal_fd >= 0)
        close(d->signal_fd);
    d->signal_fd = -1;
}
