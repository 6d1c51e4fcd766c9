/* vigil — the files of an MPI job's report (mpi_files.c). Private to
 * libvigil-preload.so, built with MPI. */
#ifndef VIGIL_PRELOAD_MPI_FILES_H
#define VIGIL_PRELOAD_MPI_FILES_H

#include <mpi.h>

#include "preload.h"
#include "vigil/report.h"

/* Collective on `comm`: every rank's files (r->files, its own report's) and timeline to
 * rank 0, whose r then lists the job's, merged by path, with how the ranks
 * shared each. The storage they point into stays until
 * preload_mpi_files_release. False when a collective failed; rank 0's r
 * then lists none. */
bool preload_mpi_files_joint(MPI_Comm comm, int rank, int ranks,
                             struct vigil_report *r) PRELOAD_HIDDEN;
/* After the job's report is written: frees what its files pointed into. */
void preload_mpi_files_release(void) PRELOAD_HIDDEN;

#endif
