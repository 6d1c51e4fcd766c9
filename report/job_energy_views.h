/* vigil — a run's or a job's energy across its nodes, from the warehouse's
 * views (warehouse/migrations/0005_job_energy.sql), for `vigil report`. */
#ifndef VIGIL_REPORT_JOB_ENERGY_VIEWS_H
#define VIGIL_REPORT_JOB_ENERGY_VIEWS_H

#include <glib.h>
#include <libpq-fe.h>

#include "vigil/report.h"

/* The query of a job's energy ($1: its scheduler job id), and its one row
 * read into `out` (FALSE when it has none: no such job). vigil-web reads
 * a run's from the same views' rows (web/api_run_energy.c), once for its
 * answer and its report; suite web checks the two agree. */
extern const char vigil_cli_job_energy_sql[];
gboolean vigil_cli_job_energy_from_result(const PGresult *result,
                                          struct vigil_report_job_energy *out);
/* A stored report shows the run's energy across its nodes when it has
 * none of its own and the run had more than one process. */
#define VIGIL_CLI_REPORT_ADDS_JOB_ENERGY(report, energy)                                           \
    ((report)->job_energy.nodes == 0 && (energy)->processes > 1)
/* The energy of run `run_id` (runs.run_id, as text) across its nodes;
 * out->nodes is 0 when none of its processes has a figure. FALSE with
 * error set when the warehouse cannot be read. */
gboolean vigil_cli_run_energy(PGconn *db, const char *run_id, struct vigil_report_job_energy *out,
                              GError **error);
/* A scheduler job id `vigil report --job` takes: letters, digits, "._+-". */
gboolean vigil_cli_job_id_valid(const char *job);
/* The same for every run of scheduler job `job`; FALSE with error set
 * also when the warehouse has no such job. */
gboolean vigil_cli_job_energy(PGconn *db, const char *job, struct vigil_report_job_energy *out,
                              GError **error);
/* `vigil report --job ID`: "JOB ID" and the job's energy line, or
 * {"job":"ID","job_energy":{…}} (null when it has none). */
char *vigil_cli_job_energy_render(const char *job, const struct vigil_report_job_energy *j,
                                  gboolean json);

#endif
