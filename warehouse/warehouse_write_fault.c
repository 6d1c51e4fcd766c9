/* vigil — what a failed write to the warehouse means for the rows that made
 * it: try them again later, or never (vigil/warehouse.h). vigil-txd decides
 * by it whether a batch is retried, refused, or its day partition made
 * again. */
#include <string.h>

#include "vigil/warehouse.h"

enum vigil_warehouse_fault vigil_warehouse_write_fault(PGconn *db, const PGresult *result,
                                                       const char **timeout, char **said)
{
    const char *state = result != NULL ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : NULL;
    const char *message = result != NULL && PQresultErrorMessage(result)[0] != '\0'
                              ? PQresultErrorMessage(result)
                              : PQerrorMessage(db);
    /* Class 22 (data exception), 23 (integrity constraint violation) and
     * 54 (a program limit: a row or an index entry too large): the rows
     * themselves are wrong, and would be wrong next time too. Retrying
     * such a batch for ever would stop every node's batches behind it. */
    gboolean data_error =
        state != NULL && (g_str_has_prefix(state, "22") || g_str_has_prefix(state, "23") ||
                          g_str_has_prefix(state, "54"));
    if (PQstatus(db) != CONNECTION_OK)
        data_error = FALSE;
    /* A row for a time no partition holds: one was dropped after it was
     * cached (by `vigil db prune` or an admin). Made again next time. */
    gboolean no_partition = state != NULL && strcmp(state, "23514") == 0 &&
                            strstr(message, "no partition of relation") != NULL;
    /* Timeouts are waits, not errors in the rows: say which fired. */
    *timeout = "";
    if (state != NULL && strcmp(state, "55P03") == 0)
        *timeout = "the lock timeout ([warehouse] lock_timeout_ms) fired: ";
    else if (state != NULL && strcmp(state, "57014") == 0 &&
             strstr(message, "statement timeout") != NULL)
        *timeout = "the statement timeout ([warehouse] statement_timeout_ms) fired: ";
    char *trimmed = g_strstrip(g_strdup(message));
    *said = g_strdup_printf("(%s): %s", state != NULL ? state : "no SQLSTATE", trimmed);
    g_free(trimmed);
    return no_partition ? VIGIL_WAREHOUSE_FAULT_NO_PARTITION
           : data_error ? VIGIL_WAREHOUSE_FAULT_REFUSE
                        : VIGIL_WAREHOUSE_FAULT_RETRY;
}
