/* vigil — the end-of-run report's figures, shared by report.c (one
 * process) and mpi_report.c (all the ranks of an MPI job, reduced to rank
 * 0). Private to libvigil-preload.so. */
#ifndef VIGIL_PRELOAD_REPORT_H
#define VIGIL_PRELOAD_REPORT_H

#include "preload.h"

#define PRELOAD_TOP_FILES 10

struct preload_file_figure {
    uint32_t file_id;
    uint64_t calls, read_bytes, written_bytes;
};

struct preload_figures {
    struct preload_totals totals;
    struct vigil_tick_clock clock;
    double runtime_ms, cpu_seconds;
    /* Bytes of the outermost calls only: the POSIX calls an MPI-IO call
     * makes are in the layer table, not counted here a second time. */
    uint64_t io_read_bytes, io_written_bytes, network_bytes, observed;
    char host[256];
    struct preload_file_figure top[PRELOAD_TOP_FILES];
    int top_count;
    struct preload_link_figures link; /* what vigild said: energy, what it drained */
};

/* The figures every rank contributes to the joint report of an MPI job. */
#define PRELOAD_RANK_METRICS(X)                                                                    \
    X(RUNTIME_MS, "runtime_ms")                                                                    \
    X(CPU_SECONDS, "cpu_seconds")                                                                  \
    X(IO_TIME_SECONDS, "io_time_seconds")                                                          \
    X(IO_BYTES_READ, "io_bytes_read")                                                              \
    X(IO_BYTES_WRITTEN, "io_bytes_written")                                                        \
    X(NETWORK_BYTES, "network_bytes")                                                              \
    X(POSIX_BYTES_READ, "posix_bytes_read")                                                        \
    X(POSIX_BYTES_WRITTEN, "posix_bytes_written")                                                  \
    X(STDIO_BYTES_READ, "stdio_bytes_read")                                                        \
    X(STDIO_BYTES_WRITTEN, "stdio_bytes_written")                                                  \
    X(MPIIO_BYTES_READ, "mpiio_bytes_read")                                                        \
    X(MPIIO_BYTES_WRITTEN, "mpiio_bytes_written")                                                  \
    X(POSIX_CALLS, "posix_calls")                                                                  \
    X(STDIO_CALLS, "stdio_calls")                                                                  \
    X(MPIIO_CALLS, "mpiio_calls")                                                                  \
    X(OBSERVED, "activities_observed")                                                             \
    X(RECORDED, "activities_recorded")                                                             \
    X(DROPPED, "activities_dropped")                                                               \
    X(EXCLUDED, "activities_excluded")

enum preload_rank_metric {
#define PRELOAD_RANK_METRIC_ENUM(suffix, name) PRELOAD_RANK_##suffix,
    PRELOAD_RANK_METRICS(PRELOAD_RANK_METRIC_ENUM)
#undef PRELOAD_RANK_METRIC_ENUM
        PRELOAD_RANK_METRIC_COUNT
};

struct preload_rank_stats {
    double min, mean, max, sum;
    int max_rank; /* the rank that had the max */
};

struct preload_mpi_figures {
    int ranks;
    struct preload_rank_stats stats[PRELOAD_RANK_METRIC_COUNT];
    /* What vigild said about each rank, by rank; NULL when not gathered. */
    const struct preload_link_figures *rank_links;
};

const char *preload_rank_metric_name(enum preload_rank_metric metric) PRELOAD_HIDDEN;

/* This process's figures, now. */
void preload_report_gather(struct preload_figures *f) PRELOAD_HIDDEN;
/* The values of `f` for each rank metric. */
void preload_report_rank_values(const struct preload_figures *f,
                                double values[PRELOAD_RANK_METRIC_COUNT]) PRELOAD_HIDDEN;
/* Writes the report where VIGIL_REPORT says; a joint one when `mpi` is set. */
void preload_report_emit(const struct preload_figures *f,
                         const struct preload_mpi_figures *mpi) PRELOAD_HIDDEN;
/* Whether each rank also writes its own report (VIGIL_REPORT_PER_RANK=1). */
bool preload_report_per_rank(void) PRELOAD_HIDDEN;

#endif
