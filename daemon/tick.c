/* vigild — the tick: a timerfd on absolute deadlines.
 *
 * The kernel re-arms an interval timer from its previous deadline, not
 * from when the daemon got round to reading it, so ticks stay on a grid of
 * multiples of the period and never drift. The grid starts at a multiple
 * of the period on CLOCK_MONOTONIC, which puts the ticks of every daemon on
 * a node's clock at the same instants. */
#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "tick.h"
#include "vigil/clock.h"

static struct timespec timespec_of(uint64_t ns)
{
    return (struct timespec){.tv_sec = (time_t)(ns / VIGIL_NS_PER_S),
                             .tv_nsec = (long)(ns % VIGIL_NS_PER_S)};
}

gboolean vigild_ticker_start(struct vigild_ticker *t, uint64_t period_ns, GError **error)
{
    t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (t->fd < 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                    "cannot create the tick's timer: %s", g_strerror(errno));
        return FALSE;
    }
    t->period_ns = period_ns;
    uint64_t now_ns = vigil_clock_monotonic_ns();
    uint64_t first_ns = (now_ns / period_ns + 1) * period_ns;
    struct itimerspec spec = {.it_value = timespec_of(first_ns),
                              .it_interval = timespec_of(period_ns)};
    if (timerfd_settime(t->fd, TFD_TIMER_ABSTIME, &spec, NULL) != 0) {
        int saved = errno;
        close(t->fd);
        t->fd = -1;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
                    "cannot arm the tick's timer: %s", g_strerror(saved));
        return FALSE;
    }
    return TRUE;
}

uint64_t vigild_ticker_take(struct vigild_ticker *t)
{
    uint64_t expirations = 0;
    if (read(t->fd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations)
        return 0; /* EAGAIN: woken for nothing */
    t->ticks++;
    t->missed += expirations - 1;
    return expirations;
}

void vigild_ticker_stop(struct vigild_ticker *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
}
