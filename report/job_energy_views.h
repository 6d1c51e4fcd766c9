/* vigil — a run's or a job's energy across its nodes, from the warehouse's
 * views (warehouse/migrations/0005_job_energy.sql), for `vigil report`. */
#ifndef VIGIL_REPORT_JOB_ENERGY_VIEWS_H
#define VIGIL_REPORT_JOB_ENERGY_VIEWS_H

#include <glib.h>
#include <libpq-fe.h>

#include "vigil/report.h"

/* The query of a job's energy ($1: its scheduler job id), and its one row
 * read into `out` (FALSE when it has none: no such job). */
extern const char vigil_cli_job_energy_sql[];
gboolean vigil_cli_job_energy_from_result(const PGresult *result,
                                          struct vigil_report_job_energy *out);
/* The query of a run's energy ($1: its run_id): its nodes' rows (node_id,
 * hostname, energy_j, processes, processes_with_energy, sources,
 * estimated, start_time, end_time, uncertain), by hostname, each with the
 * run's totals after them (run_energy_j, run_nodes, run_node_min_j,
 * run_node_mean_j, run_node_max_j, run_sources, run_estimated,
 * run_uncertain, run_complete); no row when it has none. `vigil report`
 * and vigil-web read it alike, so their figures are the same sums. */
extern const char vigil_cli_run_energy_nodes_sql[];
enum {
    VIGIL_RUN_ENERGY_NODE_HOSTNAME = 1,
    VIGIL_RUN_ENERGY_NODE_J = 2,
    VIGIL_RUN_ENERGY_NODE_PROCESSES = 3,
    VIGIL_RUN_ENERGY_NODE_PROCESSES_WITH_ENERGY = 4,
    VIGIL_RUN_ENERGY_NODE_COLUMNS = 9, /* by_node's, before uncertain */
    VIGIL_RUN_ENERGY_J = 10,           /* the totals' first */
    VIGIL_RUN_ENERGY_NODES,
    VIGIL_RUN_ENERGY_NODE_MIN_J,
    VIGIL_RUN_ENERGY_NODE_MEAN_J,
    VIGIL_RUN_ENERGY_NODE_MAX_J,
    VIGIL_RUN_ENERGY_SOURCES,
    VIGIL_RUN_ENERGY_ESTIMATED,
    VIGIL_RUN_ENERGY_UNCERTAIN,
    VIGIL_RUN_ENERGY_COMPLETE,
    VIGIL_RUN_ENERGY_COLUMNS
};
/* Its rows read into `out` (out->nodes 0 when the run has no figure). */
void vigil_cli_run_energy_from_result(const PGresult *rows, struct vigil_report_job_energy *out);
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
