/* vigild — the tick (tick.c). */
#ifndef VIGILD_TICK_H
#define VIGILD_TICK_H

#include <stdint.h>
#include <glib.h>

/* A timerfd armed on absolute CLOCK_MONOTONIC deadlines, period apart: a
 * late tick does not move the next one, so there is no drift, and the
 * deadlines that passed while the daemon could not run are counted as
 * missed rather than run in a burst. */
struct vigild_ticker {
    int fd;
    uint64_t period_ns;
    uint64_t ticks;  /* ticks run */
    uint64_t missed; /* deadlines that passed without a tick */
};

gboolean vigild_ticker_start(struct vigild_ticker *t, uint64_t period_ns, GError **error);
/* After the fd polled readable: how many deadlines passed (≥ 1; 0 on a
 * spurious wake-up). One tick runs; the rest are counted as missed. */
uint64_t vigild_ticker_take(struct vigild_ticker *t);
void vigild_ticker_stop(struct vigild_ticker *t);

#endif
