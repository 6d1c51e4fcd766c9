/* vigil — a checked query and RUN as users name it, for the subcommands
 * that read the warehouse. */
#include <string.h>

#include "vigil/warehouse.h"
#include "warehouse_query.h"

PGresult *cli_warehouse_query(PGconn *db, const char *sql, int n, const char *const *params,
                              GError **error)
{
    PGresult *result = PQexecParams(db, sql, n, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
        char *why = g_strstrip(g_strdup(PQresultErrorMessage(result)));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "cannot read the warehouse: %s", why);
        g_free(why);
        PQclear(result);
        return NULL;
    }
    return result;
}

gboolean cli_is_number(const char *text)
{
    if (text[0] == '\0' || strlen(text) > 18)
        return FALSE;
    for (const char *p = text; *p != '\0'; p++)
        if (*p < '0' || *p > '9')
            return FALSE;
    return TRUE;
}

char *cli_warehouse_find_run(PGconn *db, const char *run, GError **error)
{
    const char *const params[] = {run};
    PGresult *result = NULL;
    if (cli_is_number(run)) {
        result = cli_warehouse_query(db, "SELECT run_id FROM runs WHERE run_id = $1::bigint", 1,
                                     params, error);
        if (result == NULL)
            return NULL;
        if (PQntuples(result) == 0)
            g_clear_pointer(&result, PQclear);
    }
    if (result == NULL)
        result =
            cli_warehouse_query(db, "SELECT run_id FROM runs WHERE run_key = $1", 1, params, error);
    if (result == NULL)
        return NULL;
    char *run_id = PQntuples(result) > 0 ? g_strdup(PQgetvalue(result, 0, 0)) : NULL;
    PQclear(result);
    if (run_id == NULL)
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "the warehouse has no run %s (neither a run number nor a run key); "
                    "`" HOW_TO_LIST_RUNS "` lists the runs",
                    run);
    return run_id;
}
