/* vigil — one file's MPI-IO record merged across an MPI job's ranks
 * (mpi_file_mpiio.c). Private to libvigil-preload.so. */
#ifndef VIGIL_PRELOAD_MPI_FILE_MPIIO_H
#define VIGIL_PRELOAD_MPI_FILE_MPIIO_H

#include <stdbool.h>

#include "preload.h"
#include "vigil/report.h"

/* A size among the ranks' most common ones: its count so far, how many
 * ranks listed it with their exact count, and whether it came after an
 * eviction (it may be an evicted size back, its earlier counts lost). */
#define PRELOAD_MPIIO_CANDIDATES 16
struct preload_mpiio_candidate {
    int64_t size;
    uint64_t count;
    int exact_ranks;
    bool after_eviction;
};

struct preload_job_mpiio {
    struct vigil_report_file_mpiio mpiio;
    int ranks;          /* ranks added */
    int complete_ranks; /* ranks that listed every size they saw, exactly */
    int candidate_count;
    bool evicted;
    struct preload_mpiio_candidate candidates[PRELOAD_MPIIO_CANDIDATES];
};

/* Adds one rank's record (`first`: the file's first rank with one; ranks
 * come in order, so the mode is rank 0's, or the first that knows it). */
void preload_job_mpiio_add(struct preload_job_mpiio *m, const struct vigil_report_file_mpiio *r,
                           bool first) PRELOAD_HIDDEN;
/* Once every rank is in: the most common sizes. */
void preload_job_mpiio_finish(struct preload_job_mpiio *m) PRELOAD_HIDDEN;

#endif
