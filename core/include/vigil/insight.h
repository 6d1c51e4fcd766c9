/* vigil — findings: what a report's figures say to change, each with its
 * evidence in numbers (issue 33's list, in the spirit of what HPC I/O
 * experts look for in a Darshan log).
 *
 * The engine (report/insight.c) reads a struct vigil_report and a typed set
 * of thresholds and writes at most VIGIL_INSIGHT_MAX findings into the
 * caller's storage: GLib-free and heap-free, since libvigil-preload.so runs
 * it at exit, just before it prints the report. The thresholds are the
 * [insight] section of vigil.conf (core/insight_keys.c): vigild sends its
 * own to each process after the SUMMARY (an INSIGHT message,
 * vigil/local_protocol.h); a process without vigild uses the defaults.
 *
 * Every threshold is a uint64_t or a double, so that the struct is the
 * INSIGHT message's payload as it is. */
#ifndef VIGIL_INSIGHT_H
#define VIGIL_INSIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/report.h"

struct vigil_insight_thresholds {
    /* A file with fewer reads and writes raises no access-pattern finding. */
    uint64_t min_accesses;
    /* small_accesses: at least this share of a file's POSIX accesses are of
     * at most small_access_bytes (one of Darshan's size-bin edges). */
    uint64_t small_access_bytes;
    double small_access_share;
    /* misaligned_accesses: this share of accesses not on the file system's
     * block. */
    double misaligned_share;
    /* random_access: fewer than this share of accesses began after the
     * previous one ended. */
    double sequential_share;
    /* metadata_heavy: at least metadata_min_calls opens and stats, making at
     * least metadata_share of the metadata and data calls together. */
    uint64_t metadata_min_calls;
    double metadata_share;
    /* many_small_files: at least small_files_min files, each of fewer than
     * small_file_bytes read and written. */
    uint64_t small_file_bytes;
    uint64_t small_files_min;
    /* rank_imbalance: the busiest rank at least imbalance_ratio times the
     * mean, in bytes (when the ranks moved imbalance_min_bytes together) or
     * in I/O time (when the busiest spent imbalance_min_io_s). */
    double imbalance_ratio;
    uint64_t imbalance_min_bytes;
    double imbalance_min_io_s;
    /* independent_mpiio: a file shared by ranks, read or written by at
     * least min_accesses independent MPI-IO calls and no collective one,
     * of fewer than collective_below_bytes on average. */
    uint64_t collective_below_bytes;
    /* unbuffered_stdio: at least min_accesses stdio writes of at most
     * small_access_bytes on average, of which this share reached the kernel
     * one by one (a flush, or a POSIX write, per stdio write). */
    double stdio_flush_share;
    /* repeated_open: one file opened at least this many times. */
    uint64_t repeated_opens;
    /* fsync_per_write: at least fsync_min_calls fsyncs and fdatasyncs, one
     * per 1 / fsync_per_write writes or more often. */
    uint64_t fsync_min_calls;
    double fsync_per_write;
    /* io_time_share: at least io_time_min_s in I/O, at least this share of
     * the run. */
    double io_time_share;
    double io_time_min_s;
};
_Static_assert(sizeof(struct vigil_insight_thresholds) == 19 * 8, "insight thresholds changed");

#define VIGIL_INSIGHT_MAX        32  /* findings a report carries */
#define VIGIL_INSIGHT_PER_KIND   3   /* files one kind of finding names, the busiest first */
#define VIGIL_INSIGHT_TEXT_BYTES 256 /* an evidence sentence */

/* Where the findings and their evidence live. */
struct vigil_insight_findings {
    int count;
    struct vigil_report_finding findings[VIGIL_INSIGHT_MAX];
    char evidence[VIGIL_INSIGHT_MAX][VIGIL_INSIGHT_TEXT_BYTES];
};

/* What a report's counters cannot say, from the process itself: the files
 * whose streams it made unbuffered (setvbuf _IONBF, setbuf or setbuffer
 * with no buffer), whose every write glibc makes in a write(2) no wrapper
 * sees. */
#define VIGIL_INSIGHT_UNBUFFERED_MAX 8
struct vigil_insight_process {
    int unbuffered_count;
    const char *unbuffered_paths[VIGIL_INSIGHT_UNBUFFERED_MAX]; /* bytes, as report files' */
    size_t unbuffered_bytes[VIGIL_INSIGHT_UNBUFFERED_MAX];
};

void vigil_insight_defaults(struct vigil_insight_thresholds *t);
/* NULL when every threshold is usable, else what is wrong, naming the key
 * ("small_access_bytes: 1000 is not one of Darshan's size-bin edges (100,
 * 1024, …)"), written into `why`. */
const char *vigil_insight_check(const struct vigil_insight_thresholds *t, char *why, size_t size);

/* The findings of `r` (a process's report, or a job's when r->ranks > 0),
 * with what `process` adds (NULL: nothing), into `out`; points r->findings
 * at them. `source` ("vigild", "defaults") becomes r->findings_thresholds. */
void vigil_insight_find(struct vigil_report *r, const struct vigil_insight_thresholds *t,
                        const struct vigil_insight_process *process, const char *source,
                        struct vigil_insight_findings *out);

#endif
