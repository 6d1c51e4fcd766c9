/* vigil — the end-of-run report's figures as this library gathers them,
 * shared by report.c (one process) and mpi_report.c (all the ranks of an
 * MPI job, reduced to rank 0). The report itself, its text and its JSON,
 * is report/report_text.c's (vigil/report.h): `vigil report` prints a stored
 * one with the same code. Private to libvigil-preload.so. */
#ifndef VIGIL_PRELOAD_EXIT_REPORT_H
#define VIGIL_PRELOAD_EXIT_REPORT_H

#include "preload.h"
#include "vigil/insight.h"
#include "vigil/report.h"

/* A report and the storage its strings point into (paths point into the
 * file table, argv into the program's). */
struct preload_report {
    struct vigil_report r;
    struct preload_link_figures link; /* r.link's strings point here */
    char host[256];
};

/* r.link as a view of `link`, whose strings it points into. */
void preload_link_view(const struct preload_link_figures *link,
                       struct vigil_report_link *view) PRELOAD_HIDDEN;

/* Every file's figures and the timeline into r (report_files.c). */
void preload_report_gather_files(struct vigil_report *r,
                                 const struct vigil_tick_clock *clock) PRELOAD_HIDDEN;
/* This process's figures, now. */
void preload_report_gather(struct preload_report *p) PRELOAD_HIDDEN;
/* The values of `r` for each rank metric. */
void preload_report_rank_values(const struct vigil_report *r,
                                double values[VIGIL_REPORT_RANK_METRIC_COUNT]) PRELOAD_HIDDEN;
/* The findings' thresholds vigild sent after its summary (true), else the
 * defaults (daemon_link.c). */
bool preload_link_insight(struct vigil_insight_thresholds *out) PRELOAD_HIDDEN;
/* The paths of the files whose streams the program made unbuffered
 * (wrap_stdio_buffering.c), at most VIGIL_INSIGHT_UNBUFFERED_MAX; their
 * count. */
int preload_unbuffered_paths(const char **paths, size_t *lengths) PRELOAD_HIDDEN;
/* r's findings with those thresholds (vigil/insight.h), and the process's
 * unbuffered streams unless r is a job's report; they stay until the next
 * call. */
void preload_report_findings(struct vigil_report *r) PRELOAD_HIDDEN;
/* Writes the report where VIGIL_REPORT says, in VIGIL_REPORT_FORMAT. */
void preload_report_emit(const struct vigil_report *r) PRELOAD_HIDDEN;
/* Whether each rank also writes its own report (VIGIL_REPORT_PER_RANK=1). */
bool preload_report_per_rank(void) PRELOAD_HIDDEN;

/* The JSON form of the report for vigild, which stores it for `vigil
 * report`: rendered into a sealed memfd, once (a job's report, kept at
 * MPI_Finalize, stays kept at exit). */
void preload_report_keep_json(const struct vigil_report *r) PRELOAD_HIDDEN;
/* The kept JSON's memfd and length; -1 when none was kept. */
int preload_report_kept_json(uint64_t *bytes) PRELOAD_HIDDEN;
/* In a forked child: the parent's kept report is not the child's. */
void preload_report_reset_after_fork(void) PRELOAD_HIDDEN;

#endif
