/* vigil-web — reading the values of a binary-format libpq result
 * (PQexecParams with resultFormat 1): PostgreSQL's wire forms of bigint,
 * boolean, timestamptz and one-dimensional int4 and float8 arrays, read
 * without printing and parsing a hundred thousand numbers as text. */
#ifndef VIGIL_WEB_PG_BINARY_H
#define VIGIL_WEB_PG_BINARY_H

#include <glib.h>
#include <libpq-fe.h>

/* A bigint (int8) value. */
gint64 web_pg_int8(const PGresult *r, int row, int column);
/* A boolean value. */
gboolean web_pg_bool(const PGresult *r, int row, int column);
/* A timestamptz as µs since 1970 (the server keeps µs since 2000). */
gint64 web_pg_timestamptz_us(const PGresult *r, int row, int column);
/* A float8 value, NAN for NULL. */
double web_pg_float8(const PGresult *r, int row, int column);

/* A one-dimensional array of float8, its NULL elements NAN: the number
 * of elements, or -1 with `error` saying what the value is instead
 * (another type, more dimensions, a short value). An empty array has 0. */
gint64 web_pg_float8_array(const PGresult *r, int row, int column, double **values, GError **error);
/* The same of an int4 array (no NULL elements), read as doubles. */
gint64 web_pg_int4_array(const PGresult *r, int row, int column, double **values, GError **error);

#endif
