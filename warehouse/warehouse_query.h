/* vigil — what the warehouse-reading subcommands (report, export, advise)
 * share: a checked query, and RUN as users name it. */
#ifndef VIGIL_WAREHOUSE_QUERY_H
#define VIGIL_WAREHOUSE_QUERY_H

#include <glib.h>
#include <libpq-fe.h>

/* PostgreSQL's built-in type OIDs (pg_type.dat: stable across versions;
 * pg_type.h is in the server's headers, which a client need not have), for
 * reading a column's text by its PQftype. */
enum vigil_warehouse_type_oid {
    VIGIL_OID_BOOL = 16,
    VIGIL_OID_INT8 = 20,
    VIGIL_OID_INT2 = 21,
    VIGIL_OID_INT4 = 23,
    VIGIL_OID_OID = 26,
    VIGIL_OID_JSON = 114,
    VIGIL_OID_FLOAT4 = 700,
    VIGIL_OID_FLOAT8 = 701,
    VIGIL_OID_TIMESTAMP = 1114,
    VIGIL_OID_TIMESTAMPTZ = 1184,
    VIGIL_OID_NUMERIC = 1700,
    VIGIL_OID_JSONB = 3802,
};

/* Said wherever a run cannot be found. */
#define HOW_TO_LIST_RUNS "vigil runs"

/* Runs a query with text parameters; NULL with error set ("cannot read
 * the warehouse: …", see vigil_warehouse_set_read_error) when it does not return
 * rows. */
PGresult *vigil_warehouse_query(PGconn *db, const char *sql, int n, const char *const *params,
                                GError **error);

/* "host H port P database D user U": where `db` is connected, as its
 * connection string says it but never with its password, for messages. */
char *vigil_warehouse_target(const PGconn *db);

/* Sets error for the failed `result` of a read on `db`: "WHAT: what
 * PostgreSQL said"; but when the statement names a table, view, column or
 * function the database lacks (SQLSTATE 42P01, 42883, 42703), a database
 * without vigil's schema or with an older one: it says which (naming the
 * database and the version) and that `vigil db migrate` brings it up to
 * date, instead of PostgreSQL's raw message. `db` must be idle. */
void vigil_warehouse_set_read_error(PGconn *db, const PGresult *result, const char *what,
                                    GError **error);

/* libpq's and PostgreSQL's messages (which end with a newline, and may
 * span lines with tabs) as one line for a GError. g_free it. */
char *vigil_warehouse_one_line(const char *message);

/* Whether `text` can be a row number: 1 to 18 decimal digits, so that it
 * fits a bigint. */
gboolean vigil_warehouse_is_row_number(const char *text);

/* The run_id of RUN, a run number or else a run key (a key can be all
 * digits too: VIGIL_RUN_ID=42; the number is tried first), as decimal
 * text; NULL with error set, naming RUN, when the warehouse has no such
 * run. */
char *vigil_warehouse_find_run(PGconn *db, const char *run, GError **error);
/* Runs `sql` with that run_id of RUN as its one parameter, $1
 * (vigil_warehouse_query); NULL with error set when there is no such run
 * or the query fails. */
PGresult *vigil_warehouse_query_run(PGconn *db, const char *run, const char *sql, GError **error);

#endif
