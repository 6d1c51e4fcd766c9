/* vigil — a checked query and RUN as users name it, for the subcommands
 * that read the warehouse. */
#include <string.h>

#include "vigil/warehouse.h"
#include "warehouse_query.h"

char *vigil_warehouse_target(const PGconn *db)
{
    const char *host = PQhost(db), *port = PQport(db), *name = PQdb(db), *user = PQuser(db);
    return g_strdup_printf("host %s port %s database %s user %s",
                           host != NULL && host[0] != '\0' ? host : "(default)",
                           port != NULL && port[0] != '\0' ? port : "(default)",
                           name != NULL && name[0] != '\0' ? name : "(default)",
                           user != NULL && user[0] != '\0' ? user : "(default)");
}

/* The SQLSTATEs of a name the database does not know: undefined_table,
 * undefined_function, undefined_column. A vigil query meets them only
 * when the schema is missing or older than this vigil. */
static gboolean names_something_missing(const PGresult *result)
{
    const char *state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
    return state != NULL && (strcmp(state, "42P01") == 0 || strcmp(state, "42883") == 0 ||
                             strcmp(state, "42703") == 0);
}

void vigil_warehouse_set_read_error(PGconn *db, const PGresult *result, const char *what,
                                    GError **error)
{
    char *why = g_strstrip(g_strdup(PQresultErrorMessage(result)));
    guint version = 0, latest = vigil_warehouse_latest_version();
    if (names_something_missing(result) && vigil_warehouse_current_version(db, &version, NULL) &&
        version < latest) {
        /* Its primary message is enough here: "relation … does not exist". */
        const char *primary = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
        if (primary != NULL) {
            g_free(why);
            why = g_strdup(primary);
        }
        char *target = vigil_warehouse_target(db);
        char *has = version == 0 ? g_strdup("has no vigil schema")
                                 : g_strdup_printf("has an older vigil schema (version %u; this "
                                                   "vigil's is %u)",
                                                   version, latest);
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "the database at %s %s: run `vigil db migrate` (with the same --config) to "
                    "bring it up to date, or start vigil-txd with [warehouse] migrate = true "
                    "(PostgreSQL said: %s)",
                    target, has, why);
        g_free(has);
        g_free(target);
    } else {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY, "%s: %s", what, why);
    }
    g_free(why);
}

PGresult *vigil_warehouse_query(PGconn *db, const char *sql, int n, const char *const *params,
                                GError **error)
{
    PGresult *result = PQexecParams(db, sql, n, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
        vigil_warehouse_set_read_error(db, result, "cannot read the warehouse", error);
        PQclear(result);
        return NULL;
    }
    return result;
}

gboolean vigil_warehouse_is_row_number(const char *text)
{
    if (text[0] == '\0' || strlen(text) > 18)
        return FALSE;
    for (const char *p = text; *p != '\0'; p++)
        if (*p < '0' || *p > '9')
            return FALSE;
    return TRUE;
}

char *vigil_warehouse_find_run(PGconn *db, const char *run, GError **error)
{
    const char *const params[] = {run};
    PGresult *result = NULL;
    if (vigil_warehouse_is_row_number(run)) {
        result = vigil_warehouse_query(db, "SELECT run_id FROM runs WHERE run_id = $1::bigint", 1,
                                       params, error);
        if (result == NULL)
            return NULL;
        if (PQntuples(result) == 0)
            g_clear_pointer(&result, PQclear);
    }
    if (result == NULL)
        result = vigil_warehouse_query(db, "SELECT run_id FROM runs WHERE run_key = $1", 1, params,
                                       error);
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

PGresult *vigil_warehouse_query_run(PGconn *db, const char *run, const char *sql, GError **error)
{
    char *run_id = vigil_warehouse_find_run(db, run, error);
    if (run_id == NULL)
        return NULL;
    const char *const params[] = {run_id};
    PGresult *result = vigil_warehouse_query(db, sql, 1, params, error);
    g_free(run_id);
    return result;
}
