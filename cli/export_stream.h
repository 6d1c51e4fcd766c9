/* vigil export — a query's rows written out as they arrive from the
 * warehouse, never all of them in memory. */
#ifndef VIGIL_CLI_EXPORT_STREAM_H
#define VIGIL_CLI_EXPORT_STREAM_H

#include <stdio.h>
#include <glib.h>
#include <libpq-fe.h>

/* How a stream ended when it did not end well: the warehouse failed (error
 * set), or writing to `out` failed (*write_errno set: EPIPE when the
 * reader went away, ENOSPC on a full disk…). After a failure the
 * connection is in the middle of a statement: PQfinish it. *rows gets
 * how many rows were written. */

/* CSV with a header line, through COPY (SELECT …) TO STDOUT: each row as
 * PostgreSQL's COPY makes it (RFC 4180 quoting, NULL as an empty field). */
gboolean export_stream_csv(PGconn *db, const char *select_sql, FILE *out, guint64 *rows,
                           int *write_errno, GError **error);

/* JSON Lines: one object per row, its members the columns in order,
 * numbers and booleans as JSON numbers and booleans, NULL (and a
 * non-finite number) as null; the rows come one at a time (libpq's
 * single-row mode). */
gboolean export_stream_json_lines(PGconn *db, const char *select_sql, FILE *out, guint64 *rows,
                                  int *write_errno, GError **error);

#endif
