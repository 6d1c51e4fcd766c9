/* vigild — the statistics multiplexer: each tick's samples to its
 * subscribers (statmux.c). */
#ifndef VIGILD_STATMUX_H
#define VIGILD_STATMUX_H

#include <glib.h>

#include <json-glib/json-glib.h>

#include "vigil/metric.h"
#include "tick_samples.h"

typedef void (*vigild_samples_fn)(void *user, const struct vigild_tick_samples *samples,
                                  const vigil_metric_catalog *catalog);

struct vigild_statmux {
    GArray *subscribers; /* struct { fn, user } */
};

void vigild_statmux_init(struct vigild_statmux *m);
void vigild_statmux_subscribe(struct vigild_statmux *m, vigild_samples_fn fn, void *user);
/* `name` (static) is the subscriber's in `vigil status`'s tick costs. */
void vigild_statmux_subscribe_named(struct vigild_statmux *m, const char *name,
                                    vigild_samples_fn fn, void *user);
void vigild_statmux_json(JsonBuilder *b, const struct vigild_statmux *m);
void vigild_statmux_publish(const struct vigild_statmux *m,
                            const struct vigild_tick_samples *samples,
                            const vigil_metric_catalog *catalog);
void vigild_statmux_clear(struct vigild_statmux *m);

#endif
