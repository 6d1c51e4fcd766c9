/* vigil — what MPI-IO did to each file, by file id (mpiio_files.c): the
 * per-file record of Darshan's MPI-IO module (independent, collective, split
 * and nonblocking reads and writes, opens, hints, views, syncs, read/write
 * switches, the size histograms, the common access sizes, the slowest read
 * and write), the bytes MPI-IO was asked to move and its time. Private to
 * libvigil-preload.so; built with or without MPI (without, no file ever has
 * any). */
#ifndef VIGIL_PRELOAD_MPIIO_FILES_H
#define VIGIL_PRELOAD_MPIIO_FILES_H

#include "preload.h"
#include "vigil/report.h"

/* At MPI_Init: maps the table. */
void preload_mpiio_files_start(void) PRELOAD_HIDDEN;

/* After one MPI-IO call (nothing for VIGIL_FILE_NONE or an excluded file):
 * the call's kind comes from its operation; the bytes it moved are the
 * totals', the bytes it asked for the histograms' and the common sizes' (as
 * Darshan's: count × the datatype's size); `ticks` how long it took (a
 * nonblocking one: from the call to its completion). Failed calls are not
 * counted, as in Darshan. */
void preload_mpiio_file_count(const struct preload_outcome *o, uint64_t ticks) PRELOAD_HIDDEN;

/* After a successful MPI_File_open of `file_id`: `amode` is the file's mode
 * from now on; `collective` when its communicator has more than one process
 * (Darshan's COLL_OPENS, else INDEP_OPENS); `hinted` when it was given an
 * info object. */
void preload_mpiio_file_opened(uint32_t file_id, int amode, bool collective,
                               bool hinted) PRELOAD_HIDDEN;

/* After a successful call that gave the file hints (an info object to
 * MPI_File_set_view or MPI_File_set_info). */
void preload_mpiio_file_hinted(uint32_t file_id) PRELOAD_HIDDEN;

/* Up to VIGIL_REPORT_COMMON of `count` values, most common first and on
 * equal counts the larger value (Darshan's order), size 0 never (Darshan
 * never lists it). Counts are the values' exact counts: `exact`. */
int preload_mpiio_common_top(const uint64_t *values, const uint64_t *counts, int count,
                             struct vigil_report_common *out) PRELOAD_HIDDEN;

/* The file's MPI-IO figures, times converted with `clock`; false when MPI-IO
 * never touched it in this process. */
bool preload_mpiio_file_figures(uint32_t file_id, const struct vigil_tick_clock *clock,
                                struct vigil_report_file_mpiio *out) PRELOAD_HIDDEN;

#endif
