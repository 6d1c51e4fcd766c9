/* vigil — one pass of building the coarser roll-up levels (migration 15's
 * vigil_build_levels): the blocks that ended a margin ago, at most `span`
 * of them a level, and the stale blocks late batches marked. The SQL does
 * the work; this reads its answer. */
#include <string.h>

#include "vigil/warehouse.h"
#include "warehouse_query.h"

const char vigil_warehouse_build_levels_sql[] =
    "SELECT rows_written, caught_up FROM vigil_build_levels($1::interval)";

gboolean vigil_warehouse_build_levels_answer(PGconn *db, PGresult *result, gboolean *busy,
                                             gboolean *caught_up, guint64 *rows, GError **error)
{
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
        const char *state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
        char *text = vigil_warehouse_one_line(
            result != NULL && PQresultErrorMessage(result)[0] != '\0' ? PQresultErrorMessage(result)
                                                                      : PQerrorMessage(db));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "building the roll-up levels (%s): %s", state != NULL ? state : "no SQLSTATE",
                    text);
        g_free(text);
        PQclear(result);
        return FALSE;
    }
    /* No rows: another session is building them. */
    *busy = PQntuples(result) == 0;
    *caught_up = TRUE;
    *rows = 0;
    for (int i = 0; i < PQntuples(result); i++) {
        *rows += g_ascii_strtoull(PQgetvalue(result, i, 0), NULL, 10);
        *caught_up = *caught_up && strcmp(PQgetvalue(result, i, 1), "t") == 0;
    }
    PQclear(result);
    return TRUE;
}

gboolean vigil_warehouse_build_levels(PGconn *db, const char *span, gboolean *busy,
                                      gboolean *caught_up, guint64 *rows, GError **error)
{
    const char *values[] = {span};
    PGresult *result =
        PQexecParams(db, vigil_warehouse_build_levels_sql, 1, NULL, values, NULL, NULL, 0);
    return vigil_warehouse_build_levels_answer(db, result, busy, caught_up, rows, error);
}
