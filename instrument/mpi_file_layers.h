/* vigil — one file's layer counters merged across an MPI job's ranks
 * (mpi_file_layers.c). Private to libvigil-preload.so. */
#ifndef VIGIL_PRELOAD_MPI_FILE_LAYERS_H
#define VIGIL_PRELOAD_MPI_FILE_LAYERS_H

#include <stdbool.h>

#include "preload.h"
#include "vigil/report.h"

/* The sizes or strides seen among the ranks' most common ones. */
#define PRELOAD_COMMON_CANDIDATES 16
struct preload_common_candidates {
    int count;
    struct vigil_report_common items[PRELOAD_COMMON_CANDIDATES];
    int exact_ranks[PRELOAD_COMMON_CANDIDATES]; /* ranks that gave it an exact count */
};

struct preload_job_layer {
    struct vigil_report_file_layer layer;
    struct preload_common_candidates sizes, strides;
    int ranks; /* added so far: a count is exact when each of them gave it exactly */
};

/* Adds one rank's counters (`first`: the file's first rank). */
void preload_job_layer_add(struct preload_job_layer *m, const struct vigil_report_file_layer *l,
                           bool first) PRELOAD_HIDDEN;
/* Once every rank is in: the most common sizes and strides. */
void preload_job_layer_finish(struct preload_job_layer *m) PRELOAD_HIDDEN;

#endif
