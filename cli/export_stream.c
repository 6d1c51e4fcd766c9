/* vigil export — a query's rows written out as they arrive from the
 * warehouse. Memory stays one row (JSON) or one COPY message (CSV) however
 * long the run: libpq hands over each as it comes off the socket, and it
 * goes to `out` before the next is read. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <json-glib/json-glib.h>

#include "export_stream.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

/* libpq's messages span lines ("server closed the connection
 * unexpectedly\n\tThis probably means…"): one line of them. */
static void set_warehouse_error(GError **error, const char *what, const char *message)
{
    char *text =
        vigil_warehouse_one_line(message != NULL && message[0] != '\0' ? message : "unknown");
    g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY, "%s: %s", what, text);
    g_free(text);
}

static gboolean write_all(FILE *out, const void *data, size_t n, int *write_errno)
{
    errno = 0;
    if (fwrite(data, 1, n, out) == n)
        return TRUE;
    *write_errno = errno != 0 ? errno : EIO;
    return FALSE;
}

gboolean export_stream_csv(PGconn *db, const char *select_sql, FILE *out, guint64 *rows,
                           int *write_errno, GError **error)
{
    *rows = 0;
    char *copy = g_strdup_printf("COPY (%s) TO STDOUT WITH (FORMAT csv, HEADER)", select_sql);
    PGresult *result = PQexec(db, copy);
    g_free(copy);
    if (PQresultStatus(result) != PGRES_COPY_OUT) {
        set_warehouse_error(error, "the warehouse refused the export",
                            PQresultErrorMessage(result));
        PQclear(result);
        return FALSE;
    }
    PQclear(result);
    char *row = NULL;
    int n;
    while ((n = PQgetCopyData(db, &row, 0)) > 0) {
        gboolean written = write_all(out, row, (size_t)n, write_errno);
        PQfreemem(row);
        if (!written)
            return FALSE;
        (*rows)++;
    }
    *rows -= *rows > 0; /* the header */
    /* -1: the COPY is over, its result says how; -2: the link broke. */
    gboolean ok = TRUE;
    while ((result = PQgetResult(db)) != NULL) {
        if (ok && PQresultStatus(result) != PGRES_COMMAND_OK) {
            set_warehouse_error(error, "the warehouse failed in the middle of the export",
                                PQresultErrorMessage(result));
            ok = FALSE;
        }
        PQclear(result);
    }
    if (ok && n == -2) {
        set_warehouse_error(error, "the warehouse failed in the middle of the export",
                            PQerrorMessage(db));
        ok = FALSE;
    }
    return ok;
}

static void add_value(JsonBuilder *builder, Oid type, const char *text)
{
    switch (type) {
    case VIGIL_OID_BOOL:
        json_builder_add_boolean_value(builder, text[0] == 't');
        break;
    case VIGIL_OID_INT2:
    case VIGIL_OID_INT4:
    case VIGIL_OID_INT8:
        json_builder_add_int_value(builder, g_ascii_strtoll(text, NULL, 10));
        break;
    case VIGIL_OID_FLOAT4:
    case VIGIL_OID_FLOAT8:
    case VIGIL_OID_NUMERIC: {
        /* The server's text is the shortest that reads back exactly;
         * json-glib writes enough digits to read back the same double. */
        double value = g_ascii_strtod(text, NULL);
        if (isfinite(value))
            json_builder_add_double_value(builder, value);
        else
            json_builder_add_null_value(builder);
        break;
    }
    default:
        json_builder_add_string_value(builder, text);
        break;
    }
}

/* One row as one line. */
static gboolean write_row(PGresult *row, JsonBuilder *builder, JsonGenerator *generator, FILE *out,
                          int *write_errno)
{
    json_builder_reset(builder);
    json_builder_begin_object(builder);
    for (int c = 0; c < PQnfields(row); c++) {
        json_builder_set_member_name(builder, PQfname(row, c));
        if (PQgetisnull(row, 0, c))
            json_builder_add_null_value(builder);
        else
            add_value(builder, PQftype(row, c), PQgetvalue(row, 0, c));
    }
    json_builder_end_object(builder);
    JsonNode *root = json_builder_get_root(builder);
    json_generator_set_root(generator, root);
    gsize length = 0;
    char *line = json_generator_to_data(generator, &length);
    gboolean ok = write_all(out, line, length, write_errno) && write_all(out, "\n", 1, write_errno);
    g_free(line);
    json_node_unref(root);
    return ok;
}

gboolean export_stream_json_lines(PGconn *db, const char *select_sql, FILE *out, guint64 *rows,
                                  int *write_errno, GError **error)
{
    *rows = 0;
    if (!PQsendQuery(db, select_sql) || !PQsetSingleRowMode(db)) {
        set_warehouse_error(error, "cannot send the export's query to the warehouse",
                            PQerrorMessage(db));
        return FALSE;
    }
    JsonBuilder *builder = json_builder_new();
    JsonGenerator *generator = json_generator_new();
    gboolean ok = TRUE;
    PGresult *result;
    while ((result = PQgetResult(db)) != NULL) {
        ExecStatusType status = PQresultStatus(result);
        if (ok && status == PGRES_SINGLE_TUPLE) {
            if (!write_row(result, builder, generator, out, write_errno)) {
                PQclear(result);
                ok = FALSE;
                break; /* the caller drops the connection, and the query with it */
            }
            (*rows)++;
        } else if (ok && status != PGRES_TUPLES_OK) {
            set_warehouse_error(error,
                                status == PGRES_FATAL_ERROR
                                    ? "the warehouse failed in the middle of the export"
                                    : "the warehouse answered the export unexpectedly",
                                PQresultErrorMessage(result));
            ok = FALSE;
        }
        PQclear(result);
    }
    g_object_unref(generator);
    g_object_unref(builder);
    return ok;
}
