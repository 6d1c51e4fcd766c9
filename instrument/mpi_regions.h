/* vigil — code regions in an MPI job's report (mpi_regions.c). Private to
 * libvigil-preload.so, built with MPI. */
#ifndef VIGIL_PRELOAD_MPI_REGIONS_H
#define VIGIL_PRELOAD_MPI_REGIONS_H

#include <mpi.h>

#include "preload.h"
#include "vigil/report.h"

/* Collective on `comm`: every rank's regions (from r, its own report) to
 * rank 0, whose r then holds the job's (static storage). False when the
 * gather failed; rank 0's r then lists none. */
bool preload_mpi_regions_joint(MPI_Comm comm, int rank, int ranks,
                               struct vigil_report *r) PRELOAD_HIDDEN;

#endif
