/* vigil — what the warehouse-reading subcommands (report, export, advise)
 * share: a checked query, and RUN as users name it. */
#ifndef VIGIL_CLI_WAREHOUSE_QUERY_H
#define VIGIL_CLI_WAREHOUSE_QUERY_H

#include <glib.h>
#include <libpq-fe.h>

/* Said wherever a run cannot be found. */
#define HOW_TO_LIST_RUNS "psql -c 'select * from run_overview'"

/* Runs a query with text parameters; NULL with error set ("cannot read
 * the warehouse: …") when it does not return rows. */
PGresult *cli_warehouse_query(PGconn *db, const char *sql, int n, const char *const *params,
                              GError **error);

/* Whether `text` can be a row number: 1 to 18 decimal digits, so that it
 * fits a bigint. */
gboolean cli_is_number(const char *text);

/* The run_id of RUN, a run number or else a run key (a key can be all
 * digits too: VIGIL_RUN_ID=42; the number is tried first), as decimal
 * text; NULL with error set, naming RUN, when the warehouse has no such
 * run. */
char *cli_warehouse_find_run(PGconn *db, const char *run, GError **error);

#endif
