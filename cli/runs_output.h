/* vigil runs — printing the runs: a table for people, JSON for programs. */
#ifndef VIGIL_CLI_RUNS_OUTPUT_H
#define VIGIL_CLI_RUNS_OUTPUT_H

#include <libpq-fe.h>

/* The columns of runs.c's statement, in order. */
enum vigil_cli_runs_column {
    COL_RUN_ID,
    COL_RUN_KEY,
    COL_JOB,
    COL_UID,
    COL_PROGRAM,
    COL_START_UTC,
    COL_START_TIME,
    COL_DURATION_S,
    COL_EXIT_STATUS,
    COL_PROCESSES,
    COL_BYTES_READ,
    COL_BYTES_WRITTEN,
    COL_ENERGY_J,
};

/* One line a run under a header line, columns aligned, sizes in IEC
 * units, "n/a" for what is unknown, "running" for a run without an end. */
void vigil_cli_runs_print_text(const PGresult *result);
/* A JSON array of runs, with the names of the web API's RUN object
 * (docs/web-api.md) where they mean the same; null for what is unknown. */
void vigil_cli_runs_print_json(const PGresult *result);

#endif
