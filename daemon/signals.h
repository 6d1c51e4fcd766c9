/* vigild — SIGTERM, SIGINT and SIGHUP through a signalfd (signals.c). */
#ifndef VIGILD_SIGNALS_H
#define VIGILD_SIGNALS_H

#include <glib.h>

struct vigild; /* daemon.h */

/* Blocks SIGTERM, SIGINT and SIGHUP and takes them from a signalfd on the
 * main loop. */
gboolean vigild_signals_start(struct vigild *d, GError **error);
/* Handles the signals pending now: a reload, or the main loop told to
 * quit. */
void vigild_signals_take(struct vigild *d);
void vigild_signals_stop(struct vigild *d);

#endif
