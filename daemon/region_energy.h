/* vigild — each running process's energy into its ring's header, for its
 * code regions (region_energy.c). */
#ifndef VIGILD_REGION_ENERGY_H
#define VIGILD_REGION_ENERGY_H

#include "vigil/metric.h"
#include "tick_samples.h"

/* A statistics subscriber, after the energy sharing: each running
 * process's energy into its ring's header, for its code regions.
 * `user` is the struct vigild. */
void vigild_region_energy_publish(void *user, const struct vigild_tick_samples *samples,
                                  const vigil_metric_catalog *catalog);

#endif
