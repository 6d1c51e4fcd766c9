/* vigild — SIGTERM, SIGINT and SIGHUP through a signalfd (signals.c). */
#ifndef VIGILD_SIGNALS_H
#define VIGILD_SIGNALS_H

#include <stdint.h>
#include <glib.h>

/* What the signals do is the daemon's: signals.c only takes them. */
struct vigild_signals {
    int fd; /* -1 until started, and once stopped */
    guint watch;
    void (*reload)(void *user); /* SIGHUP */
    /* SIGTERM or SIGINT (`signo`), sent by `sender_pid`: each one, the
     * daemon tells a second from the first. */
    void (*stop)(void *user, int signo, uint32_t sender_pid);
    void *user;
};

/* Blocks SIGTERM, SIGINT and SIGHUP and takes them from a signalfd on the
 * main loop, calling `reload` or `stop` with `user`. */
gboolean vigild_signals_start(struct vigild_signals *s, void (*reload)(void *user),
                              void (*stop)(void *user, int signo, uint32_t sender_pid), void *user,
                              GError **error);
/* Handles the signals pending now (none before the start). */
void vigild_signals_take(struct vigild_signals *s);
void vigild_signals_stop(struct vigild_signals *s);

#endif
