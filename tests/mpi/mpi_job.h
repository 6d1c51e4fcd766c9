/* vigil — an MPI job of the mpi suite: 4 ranks started with
 *
 *     timeout mpirun --oversubscribe -np 4 $VIGIL_CLI run --report=json:DIR/report-%p.json --
 * PROGRAM…
 *
 * in a clean environment (no LD_PRELOAD, no VIGIL_*) with Open MPI's
 * permission to run as root. Include after <cmocka.h>. */
#ifndef VIGIL_TEST_MPI_JOB_H
#define VIGIL_TEST_MPI_JOB_H

#include <glib.h>

#include "test_report.h"
#include "test_support.h"

#define MPI_JOB_RANKS 4
/* Far above what a job of these programs takes (under a second or two):
 * only there so that a hung job fails the test instead of stalling it. */
#define MPI_JOB_TIMEOUT_S "120"

/* Runs PROGRAM ARGS… (up to a NULL) as the job, in `dir`, with `vars`
 * (NULL-terminated "NAME=value" strings, or NULL) too; fails the test when
 * it does not end within MPI_JOB_TIMEOUT_S. */
struct test_run mpi_job_run(const char *dir, const char *const *vars, const char *program,
                            ...) G_GNUC_NULL_TERMINATED;

/* The job's JSON reports in `dir` (report-PID.json, VIGIL_REPORT_PER_RANK=1):
 * the joint one (-job.json) and each rank's own, by rank; fails the test
 * when one is missing or a rank reports twice. */
void mpi_job_reports_load(const char *dir, struct test_report *joint_report,
                          struct test_report own_reports[MPI_JOB_RANKS]);
void mpi_job_reports_free(struct test_report *joint_report,
                          struct test_report own_reports[MPI_JOB_RANKS]);

#endif
