/* vigil — the end-of-run report: its figures, and its two forms, text for
 * people and JSON for programs.
 *
 * One renderer for both. libvigil-preload.so fills a struct vigil_report
 * from what it counted and prints it at exit; `vigil report` reads the JSON
 * stored in the warehouse back into the same struct (report/report_json.c) and
 * prints it with the same code, so a stored report reads exactly as the
 * console showed it.
 *
 * That holds because the JSON carries every figure the text shows, and at
 * the same or a finer precision: each double is first rounded to the
 * decimals the JSON gives it, and both forms print that rounded value.
 * Strings are bytes (paths, argv): a byte that is not part of a valid UTF-8
 * sequence stands for its Latin-1 character in both forms (JSON \u00XX, the
 * text the character itself), so the two forms agree on what a string is.
 * The JSON is printable ASCII: every other character is a \u escape.
 *
 * GLib-free and heap-free: the preload library renders on its way out,
 * perhaps in a signal handler that interrupted malloc. */
#ifndef VIGIL_REPORT_H
#define VIGIL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/ontology.h"

#define VIGIL_REPORT_VERSION   1  /* "vigil_report": only ever added to */
#define VIGIL_REPORT_TOP_FILES 10 /* the busiest files the text lists; the JSON lists all */

enum vigil_report_link_state {
    VIGIL_REPORT_STANDALONE = 0, /* never connected to vigild, or refused: `reason` says why */
    VIGIL_REPORT_CONNECTED = 1,  /* registered, but no summary came: `reason` says why */
    VIGIL_REPORT_SUMMARY = 2,    /* vigild's summary is in */
};

/* What vigild said about the process, or in a job's report about all its
 * ranks (sums, and "mixed" for capture modes that differ). Strings are
 * never NULL. */
struct vigil_report_link {
    enum vigil_report_link_state state;
    uint32_t ranks_with_summary; /* 0 or 1 for a process */
    uint64_t process_id;         /* vigild's name for the process; 0 when it did not say */
    uint64_t activities_drained, names_drained, gaps, dropped, anomalies;
    double cpu_s;              /* as vigild last sampled it; NaN when unknown */
    double energy_j;           /* NaN when there is none */
    uint32_t energy_flags;     /* VIGIL_LOCAL_ENERGY_* (local_protocol.h) */
    const char *energy_source; /* "energy/powercap"; "" when energy_j is NaN */
    const char *energy_note;   /* when energy_j is NaN: why */
    const char *reason;        /* unless state is SUMMARY: why not */
    /* Capture: observed = forwarded + dropped + lost + held. */
    uint64_t cycles, abnormal_cycles;
    uint64_t capture_observed, capture_forwarded, capture_dropped, capture_lost, capture_held;
    const char *capture_mode; /* "anomalies", "all", "none"; "mixed" in a job's report */
};

/* One operation's counts; the time in ns (a job's: summed over ranks). */
struct vigil_report_op {
    uint64_t calls, bytes, time_ns, errors;
};

/* ---- files: Darshan's depth ------------------------------------------------------------------
 * A file's counters for one layer (POSIX, stdio), as Darshan's POSIX module
 * keeps them. Reads and writes are the calls that succeeded; offsets are
 * where they began in the file. */
/* Darshan's bins, each including its upper bound: 0-100 (<= 100), 100-1K
 * (101 .. 1024), 1K-10K, ... 100M-1G, 1G+. */
#define VIGIL_REPORT_SIZE_BINS 10
#define VIGIL_REPORT_COMMON    4 /* the most common access sizes and strides kept */

struct vigil_report_common {
    int64_t value;  /* a size or a stride; > 0 (Darshan lists no 0, no backward stride) */
    uint64_t count; /* never above the truth: a lower bound unless `exact` */
    bool exact;     /* count is the exact number of accesses of this value */
};

struct vigil_report_file_layer {
    uint64_t reads, writes, opens, seeks, stats, fsyncs, other;
    uint64_t read_bytes, written_bytes; /* in the POSIX layer: nested in MPI-IO calls too */
    int64_t max_read_offset, max_written_offset; /* offset + size - 1; 0: none (Darshan's) */
    uint64_t seq_reads, seq_writes;              /* began at or after the previous one's end */
    uint64_t consec_reads, consec_writes;        /* began exactly at the previous one's end */
    uint64_t read_size_hist[VIGIL_REPORT_SIZE_BINS], write_size_hist[VIGIL_REPORT_SIZE_BINS];
    int common_size_count, common_stride_count; /* <= VIGIL_REPORT_COMMON, most common first */
    struct vigil_report_common common_sizes[VIGIL_REPORT_COMMON];
    struct vigil_report_common common_strides[VIGIL_REPORT_COMMON];
    double read_time_s, write_time_s, meta_time_s;
    /* Seconds since the process started; -1 when there was none. */
    double first_open_s, last_close_s, first_io_s, last_io_s;
    /* Darshan's names in docs/darshan-counters.md. */
    uint64_t rw_switches;          /* a read after a write, or a write after a read */
    uint64_t fdatasyncs;           /* apart from fsyncs */
    uint64_t filenos, dups;        /* fileno() on its streams; dup, dup2, dup3, F_DUPFD */
    int64_t mode;                  /* the open's mode argument; -1: not known */
    uint64_t file_alignment_bytes; /* the file system's block size; 0: not known */
    uint64_t file_not_aligned;     /* accesses not starting on it */
    uint64_t mem_alignment_bytes;  /* the buffer alignment checked */
    uint64_t mem_not_aligned;      /* accesses whose buffer was not aligned to it */
    double max_read_time_s, max_write_time_s;         /* the slowest single call */
    uint64_t max_read_time_size, max_write_time_size; /* its size */
};

/* What MPI-IO did to a file (Darshan's MPI-IO module): data calls by kind
 * (independent: read, read_at, read_shared and the writes alike;
 * collective: _all, _at_all, _ordered; split: their _begin; nonblocking:
 * the i- calls), the bytes MPI-IO moved (its level: the POSIX calls under
 * it, in the POSIX layer's counters, may move more or less), and its time.
 * A job's report: summed over the ranks. */
struct vigil_report_file_mpiio {
    uint64_t indep_reads, indep_writes, coll_reads, coll_writes;
    uint64_t split_reads, split_writes, nb_reads, nb_writes;
    uint64_t read_bytes, written_bytes;
    double read_time_s, write_time_s, meta_time_s;
    uint64_t indep_opens, coll_opens, syncs, hints, views, rw_switches;
    int64_t mode; /* amode; -1: not known */
    uint64_t read_size_hist[VIGIL_REPORT_SIZE_BINS], write_size_hist[VIGIL_REPORT_SIZE_BINS];
    int common_size_count;
    struct vigil_report_common common_sizes[VIGIL_REPORT_COMMON];
    double max_read_time_s, max_write_time_s;
    uint64_t max_read_time_size, max_write_time_size;
};

/* In an MPI job's report: how its ranks used the file. A rank's time on it
 * is its MPI-IO time there when it used MPI-IO on it, else its POSIX and
 * stdio time; its bytes are the file's (outermost) bytes read and written.
 * Variances are over the ranks that used the file (population variance). */
struct vigil_report_file_ranks {
    int32_t count; /* ranks that used it */
    bool shared;   /* count > 1 */
    int32_t fastest_rank, slowest_rank;
    double fastest_s, slowest_s;
    uint64_t fastest_bytes, slowest_bytes;
    double time_variance_s2, bytes_variance;
    /* The ranks that moved the most and the fewest bytes through POSIX on
     * the file (in a two-phase collective: an aggregator, and a rank whose
     * data it moved); -1 when not known (a report that did not say). */
    int32_t most_posix_rank, least_posix_rank;
    uint64_t most_posix_bytes, least_posix_bytes;
};

struct vigil_report_file {
    const char *path; /* bytes, not NUL-terminated */
    size_t path_bytes;
    const char *mount;   /* "/" when unknown */
    const char *fs_type; /* "" when unknown */
    /* The outermost calls: an MPI-IO call's own POSIX calls are not here. */
    uint64_t calls, read_bytes, written_bytes;
    /* A report without the counters below (one stored by an older vigil)
     * has has_layers false: none of them is printed. */
    bool has_layers;
    struct vigil_report_file_layer posix;
    bool has_stdio; /* JSON "stdio": null when false */
    struct vigil_report_file_layer stdio;
    bool has_mpiio; /* JSON "mpiio": null when false */
    struct vigil_report_file_mpiio mpiio;
    bool has_ranks; /* JSON "ranks": null when false */
    struct vigil_report_file_ranks ranks;
};

/* A finding (vigil/insight.h): what to change, and the numbers that say
 * so. `file` is NULL for one about the whole run (or job); `rank` -1 when
 * no one rank is meant. */
struct vigil_report_finding {
    const char *id;       /* "small_accesses" */
    const char *severity; /* "warning", "info" */
    const char *file;     /* bytes, not NUL-terminated; NULL: none */
    size_t file_bytes;
    int32_t rank;
    const char *evidence; /* one sentence with the numbers */
    const char *advice;   /* what to change */
};

/* Bytes read and written over the run (Darshan's heatmap): bins of bin_s
 * seconds from the process start; the width doubles as the run goes on,
 * so that at most VIGIL_REPORT_TIMELINE_BINS cover it. */
#define VIGIL_REPORT_TIMELINE_BINS 64
struct vigil_report_timeline {
    double bin_s; /* 0: no timeline (a report from an older vigil) */
    int bins;
    uint64_t read_bytes[VIGIL_REPORT_TIMELINE_BINS], written_bytes[VIGIL_REPORT_TIMELINE_BINS];
};

/* The figures every rank contributes to the joint report of an MPI job. */
#define VIGIL_REPORT_RANK_METRICS(X)                                                               \
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

enum vigil_report_rank_metric {
#define VIGIL_REPORT_RANK_METRIC_ENUM(suffix, name) VIGIL_REPORT_RANK_##suffix,
    VIGIL_REPORT_RANK_METRICS(VIGIL_REPORT_RANK_METRIC_ENUM)
#undef VIGIL_REPORT_RANK_METRIC_ENUM
        VIGIL_REPORT_RANK_METRIC_COUNT
};

struct vigil_report_rank_stats {
    double min, mean, max, sum;
    int32_t max_rank; /* the rank that had the max */
};

/* A job's energy across its nodes: in an MPI job's report its ranks' figures
 * grouped by host (instrument/mpi_job_energy.c), in `vigil report` the
 * warehouse's run_energy (report/job_energy_views.c). nodes 0: none shown. */
#define VIGIL_REPORT_HOST_BYTES 64
struct vigil_report_job_energy {
    int32_t nodes;
    int32_t processes, processes_with_energy; /* ranks, in an MPI job's report */
    double energy_j;                          /* the sum over nodes of what is known */
    double node_min_j, node_mean_j, node_max_j;
    uint32_t flags; /* VIGIL_LOCAL_ENERGY_* of any of its figures */
    char min_host[VIGIL_REPORT_HOST_BYTES], max_host[VIGIL_REPORT_HOST_BYTES];
    char sources[VIGIL_REPORT_HOST_BYTES]; /* "+"-joined */
};

/* Code regions (vigil/vigil.h, and likwid's markers): each region's
 * figures, inclusive of the regions nested in it, summed over its entries
 * on every thread. Rendered by report/report_regions.c. */
#define VIGIL_REPORT_REGIONS_MAX 64 /* names a process tracks */

/* The figures of a region a job's report gives per rank (min, mean, max,
 * sum over the ranks that entered the region). */
#define VIGIL_REPORT_REGION_FIGURES(X)                                                             \
    X(ENTERED, "entered")                                                                          \
    X(CALLS, "calls")                                                                              \
    X(BYTES_READ, "bytes_read")                                                                    \
    X(BYTES_WRITTEN, "bytes_written")                                                              \
    X(WALL_SECONDS, "wall_seconds")                                                                \
    X(CPU_SECONDS, "cpu_seconds")                                                                  \
    X(ENERGY_JOULE, "energy_joule")

enum vigil_report_region_figure {
#define VIGIL_REPORT_REGION_FIGURE_ENUM(suffix, name) VIGIL_REPORT_REGION_##suffix,
    VIGIL_REPORT_REGION_FIGURES(VIGIL_REPORT_REGION_FIGURE_ENUM)
#undef VIGIL_REPORT_REGION_FIGURE_ENUM
        VIGIL_REPORT_REGION_FIGURE_COUNT
};

struct vigil_report_region {
    const char *name;
    uint64_t entered;                   /* times it was begun (and ended) */
    uint64_t calls;                     /* I/O calls made inside it */
    uint64_t read_bytes, written_bytes; /* file I/O inside it */
    double wall_s, cpu_s;               /* summed over entries (and threads) */
    double energy_j;                    /* NaN when no entry had an energy figure */
    uint64_t energy_missing;            /* entries without one (no vigild, or not yet) */
    uint32_t energy_flags;              /* VIGIL_LOCAL_ENERGY_* */
    uint64_t open; /* entries still open when the report was taken: not in the figures */
    int32_t ranks; /* a job's report: the ranks that entered it; 0 otherwise */
    struct vigil_report_rank_stats per_rank[VIGIL_REPORT_REGION_FIGURE_COUNT]; /* when ranks > 0 */
};

/* What the regions' bookkeeping could not follow. */
struct vigil_report_region_notes {
    uint64_t names_dropped;   /* begins of names past VIGIL_REPORT_REGIONS_MAX */
    uint64_t unmatched_ends;  /* ends naming no open region of their thread */
    uint64_t closed_by_outer; /* regions closed by the end of one they were open in */
    uint64_t too_deep;        /* begins past the nesting a thread can follow */
    uint64_t dropped_calls;   /* calls from a signal handler, or past the threads followed */
};

struct vigil_report {
    const char *run_key; /* the run the process belongs to (vigil/run_key.h) */
    const char *program; /* argv[0], or "(unknown)" */
    int argc;
    const char *const *argv;
    int32_t pid;
    int32_t rank; /* an MPI rank's own report; -1 otherwise, and in a job's report */
    /* An MPI rank's own report: whether rank 0's job report counts it too. */
    bool in_job_report;
    const char *host;
    double runtime_ms, cpu_seconds;
    struct vigil_report_link link;
    /* Bytes of the outermost calls only: the POSIX calls an MPI-IO call
     * makes are in the operation table, not counted here a second time. */
    uint64_t io_read_bytes, io_written_bytes, network_bytes;
    uint64_t observed, recorded, dropped, excluded;  /* activities */
    struct vigil_report_op ops[VIGIL_OP_MAX_ID + 1]; /* by operation id; calls 0: not shown */
    /* Every file the process used, the busiest first (by bytes, then calls);
     * files_total of them, of which the first file_count are listed (the
     * JSON kept for vigild lists fewer when all would not fit its bound). */
    int file_count;
    const struct vigil_report_file *files;
    uint64_t files_total;
    /* Paths the process used that were not followed as files (its file
     * table was full): their calls are in the totals only. A count of
     * the times a path found no room, so a file opened twice counts
     * twice. 0 in a report from an older vigil. */
    uint64_t files_untracked;
    struct vigil_report_timeline timeline;
    /* A job's report (rank 0 of an MPI job): ranks > 0. */
    int32_t ranks;
    struct vigil_report_rank_stats per_rank[VIGIL_REPORT_RANK_METRIC_COUNT];
    const struct vigil_report_link *rank_links; /* `ranks` of them, or NULL */
    struct vigil_report_job_energy job_energy;
    /* `vigil report` only, from the warehouse: of the activities vigild
     * forwarded, those its uplink or spool dropped before they were stored
     * (processes.uplink_dropped_activities). A report written at exit
     * cannot know it: shown only when uplink_lost_known, and only when
     * some were lost, so that a report of a run that lost none is printed
     * exactly as the console showed it. */
    bool uplink_lost_known;
    uint64_t uplink_lost_activities;
    /* Code regions; none: region_count 0 and notes all 0. */
    int region_count;
    const struct vigil_report_region *regions;
    struct vigil_report_region_notes region_notes;
    /* Findings, and whose thresholds made them ("vigild", "defaults");
     * NULL in a report from a vigil that made none: nothing is printed. */
    const char *findings_thresholds;
    int finding_count;
    const struct vigil_report_finding *findings;
};

/* Where a report goes: bytes are collected in `buffer` and handed to
 * `write` whenever it is full, and by vigil_report_sink_flush. */
typedef void (*vigil_report_write_fn)(void *user, const char *bytes, size_t length);

struct vigil_report_sink {
    vigil_report_write_fn write;
    void *user;
    size_t length;
    char buffer[8192];
};

void vigil_report_sink_init(struct vigil_report_sink *sink, vigil_report_write_fn write,
                            void *user);
void vigil_report_sink_flush(struct vigil_report_sink *sink);

/* The report for people; starts with an empty line. */
void vigil_report_write_text(struct vigil_report_sink *sink, const struct vigil_report *r);
/* The report for programs: one JSON object and a newline. */
void vigil_report_write_json(struct vigil_report_sink *sink, const struct vigil_report *r);

const char *vigil_report_rank_metric_name(enum vigil_report_rank_metric metric);
/* The metric with this JSON name, or VIGIL_REPORT_RANK_METRIC_COUNT. */
enum vigil_report_rank_metric vigil_report_rank_metric_from_name(const char *name);
const char *vigil_report_link_state_name(enum vigil_report_link_state state);

const char *vigil_report_region_figure_name(enum vigil_report_region_figure figure);
/* The figure with this JSON name, or VIGIL_REPORT_REGION_FIGURE_COUNT. */
enum vigil_report_region_figure vigil_report_region_figure_from_name(const char *name);

/* `value` as it reads back from `decimals` decimals (printf's %.Nf, then
 * strtod): what both forms print. NaN stays NaN. */
double vigil_report_round(double value, int decimals);

/* A job's energy from its processes' figures (report/report_job_energy.c):
 * grouped by host, summed per node, then the sum over the nodes and the
 * per-node min, mean and max; heap-free, for the preload library at
 * MPI_Finalize. One process's figure: its host, its energy (NaN: none), its
 * VIGIL_LOCAL_ENERGY_* flags and "+"-joined sources. */
struct vigil_report_process_energy {
    const char *host;
    double energy_j;
    uint32_t flags;
    const char *source;
};

/* `order` is room for `count` ints. A node none of whose processes has a
 * figure counts in no min, mean or max; out->nodes is 0 when no process
 * has one (the report then shows none). */
void vigil_report_job_energy_from_processes(const struct vigil_report_process_energy *processes,
                                            int count, int *order,
                                            struct vigil_report_job_energy *out);

/* Its line of the report's text ("JOB_ENERGY_JOULE …\n"), and its JSON
 * member ("job_energy":{…}, no comma before it): report/report_text.c. */
void vigil_report_write_job_energy_text(struct vigil_report_sink *s,
                                        const struct vigil_report_job_energy *j);
void vigil_report_write_job_energy_json(struct vigil_report_sink *s,
                                        const struct vigil_report_job_energy *j);

#endif
