/* vigild — statistics subscriber: the last history_s seconds at full
 * resolution (history.c). */
#ifndef VIGILD_HISTORY_H
#define VIGILD_HISTORY_H

#include <stdint.h>
#include <glib.h>

#include "vigil/metric.h"
#include "tick_samples.h"

/* The node's samples of the last `length` ticks, for a captured window
 * to carry at full resolution. */
struct vigild_history {
    guint length;      /* ticks kept */
    GPtrArray *frames; /* GArray of struct vigil_sample per tick, circular */
    guint count;       /* frames filled */
    guint next;        /* the frame the next tick goes in */
};

void vigild_history_init(struct vigild_history *h, guint length);
/* Keeps the newest samples when the length shrinks. */
void vigild_history_resize(struct vigild_history *h, guint length);
void vigild_history_add(void *history, const struct vigild_tick_samples *samples,
                        const vigil_metric_catalog *catalog);
/* The kept samples of `metric_id` from `since_ns` on, oldest first, into
 * `out` (struct vigil_sample); returns how many. */
guint vigild_history_get(const struct vigild_history *h, uint32_t metric_id, uint64_t since_ns,
                         GArray *out);
/* Every kept sample taken after `after_ns` and up to `until_ns`, oldest
 * first, into `out`; returns how many. */
guint vigild_history_span(const struct vigild_history *h, uint64_t after_ns, uint64_t until_ns,
                          GArray *out);
void vigild_history_clear(struct vigild_history *h);

#endif
