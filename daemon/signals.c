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

#include "signals.h"

static gboolean on_signal(gint fd, GIOCondition condition, gpointer user_data)
{
    (void)fd;
    (void)condition;
    vigild_signals_take(user_data);
    return G_SOURCE_CONTINUE;
}

gboolean vigild_signals_start(struct vigild_signals *s, void (*reload)(void *user),
                              void (*stop)(void *user, int signo, uint32_t sender_pid), void *user,
                              GError **error)
{
    s->reload = reload;
    s->stop = stop;
    s->user = user;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
        (s->fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot take signals: %s",
                    g_strerror(errno));
        return FALSE;
    }
    s->watch = g_unix_fd_add(s->fd, G_IO_IN, on_signal, s);
    return TRUE;
}

void vigild_signals_take(struct vigild_signals *s)
{
    if (s->fd < 0)
        return;
    struct signalfd_siginfo info;
    while (read(s->fd, &info, sizeof info) == (ssize_t)sizeof info) {
        if (info.ssi_signo == SIGHUP)
            s->reload(s->user);
        else
            s->stop(s->user, (int)info.ssi_signo, info.ssi_pid);
    }
}

void vigild_signals_stop(struct vigild_signals *s)
{
    g_clear_handle_id(&s->watch, g_source_remove);
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}
