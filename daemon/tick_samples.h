/* vigild — the samples of one tick, as the sampler reads them and the
 * statistics multiplexer hands them on. */
#ifndef VIGILD_TICK_SAMPLES_H
#define VIGILD_TICK_SAMPLES_H

#include <stdint.h>
#include <glib.h>

#include "vigil/metric.h"

struct vigild_process_sample {
    uint64_t process_id;
    struct vigil_sample sample;
};

struct vigild_tick_samples {
    uint64_t tick;
    uint64_t t_ns;
    GArray *node;    /* struct vigil_sample */
    GArray *process; /* struct vigild_process_sample */
};

#endif
