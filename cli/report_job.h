/* vigil — `vigil report --job ID`: a scheduler job across its steps and
 * nodes, from the warehouse's job_summary and job_runs views
 * (warehouse/migrations/0007_jobs.sql) and its energy (job_energy). */
#ifndef VIGIL_CLI_REPORT_JOB_H
#define VIGIL_CLI_REPORT_JOB_H

#include <glib.h>
#include <libpq-fe.h>

/* The job's report as text or JSON (g_free it); NULL with error set when
 * the warehouse cannot be read or has no such job. */
char *vigil_cli_report_job(PGconn *db, const char *job, gboolean json, GError **error);

#endif
