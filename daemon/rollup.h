/* vigild — statistics subscriber: 1 s roll-ups (rollup.c). */
#ifndef VIGILD_ROLLUP_H
#define VIGILD_ROLLUP_H

#include <stdint.h>
#include <glib.h>

#include "vigil/metric.h"
#include "tick_samples.h"

/* One metric over one window. A gauge's min, mean and max are of its
 * values; a counter's are of its rate per second between consecutive
 * samples, and `delta` is exactly its last value of this window minus its
 * last value of the window before (or its first value in this one). */
struct vigild_rollup_window {
    uint32_t metric_id;
    uint32_t flags; /* VIGIL_SAMPLE_UNCERTAIN when a sample in it was */
    uint64_t start_ns, end_ns;
    uint32_t count;
    double min, mean, max;
    double delta; /* counters only; NaN for gauges */
};

struct vigild_rollup {
    guint window_ticks;
    guint ticks_in_window;
    uint64_t window_start_ns;
    uint64_t last_close_ns; /* the tick that closed the last window; 0 before one */
    GArray *metrics;        /* struct rollup_acc by metric id */
    GArray *latest;         /* struct vigild_rollup_window by metric id: the last closed window */
    uint64_t windows_closed;
};

void vigild_rollup_init(struct vigild_rollup *r, guint window_ticks);
void vigild_rollup_set_window(struct vigild_rollup *r, guint window_ticks);
void vigild_rollup_add(void *rollup, const struct vigild_tick_samples *samples,
                       const vigil_metric_catalog *catalog);
/* The last closed window of `metric_id`, or NULL when none has closed. */
const struct vigild_rollup_window *vigild_rollup_latest(const struct vigild_rollup *r,
                                                        uint32_t metric_id);
void vigild_rollup_clear(struct vigild_rollup *r);

#endif
