/* vigil-txd — a failed statement as the error its batch is retried or
 * refused by (txd.h), from the warehouse's classification of it; a
 * statement run with that error. */
#include <string.h>

#include "txd.h"

GQuark txd_error_quark(void)
{
    return g_quark_from_static_string("vigil-txd-error-quark");
}

void txd_set_pg_error(GError **error, PGconn *db, const PGresult *result, const char *what)
{
    static const enum txd_error_code code_of_fault[] = {
        [VIGIL_WAREHOUSE_FAULT_RETRY] = TXD_ERROR_RETRY,
        [VIGIL_WAREHOUSE_FAULT_REFUSE] = TXD_ERROR_REFUSE,
        [VIGIL_WAREHOUSE_FAULT_NO_PARTITION] = TXD_ERROR_NO_PARTITION,
    };
    const char *timeout;
    char *said;
    enum vigil_warehouse_fault fault = vigil_warehouse_write_fault(db, result, &timeout, &said);
    char *short_what = g_strndup(what, 60);
    g_set_error(error, TXD_ERROR, code_of_fault[fault], "%s%s%s %s", timeout, short_what,
                strlen(what) > 60 ? "…" : "", said);
    g_free(short_what);
    g_free(said);
}

gboolean txd_exec_params(PGconn *db, const char *sql, int n_params, const char *const *values,
                         GError **error)
{
    PGresult *result = PQexecParams(db, sql, n_params, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    if (!ok)
        txd_set_pg_error(error, db, result, sql);
    PQclear(result);
    return ok;
}
