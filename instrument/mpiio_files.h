/* vigil — what MPI-IO did to each file, by file id (mpiio_files.c): the
 * counts Darshan's MPI-IO module keeps (independent, collective, split and
 * nonblocking reads and writes), the bytes MPI-IO was asked to move and its
 * time. Private to libvigil-preload.so; built with or without MPI (without,
 * no file ever has any). */
#ifndef VIGIL_PRELOAD_MPIIO_FILES_H
#define VIGIL_PRELOAD_MPIIO_FILES_H

#include "preload.h"
#include "vigil/report.h"

/* At MPI_Init: maps the table. */
void preload_mpiio_files_start(void) PRELOAD_HIDDEN;

/* After one MPI-IO call on `file_id` (nothing for VIGIL_FILE_NONE or an
 * excluded file): the call's kind comes from its operation, its bytes are
 * what it moved, `ticks` how long it took (a nonblocking one: from the call
 * to its completion). Failed calls are not counted, as in Darshan. */
void preload_mpiio_file_count(uint32_t file_id, unsigned op, bool failed, uint64_t bytes_moved,
                              uint64_t ticks) PRELOAD_HIDDEN;

/* The file's MPI-IO figures, times converted with `clock`; false when MPI-IO
 * never touched it in this process. */
bool preload_mpiio_file_figures(uint32_t file_id, const struct vigil_tick_clock *clock,
                                struct vigil_report_file_mpiio *out) PRELOAD_HIDDEN;

#endif
