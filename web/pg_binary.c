/* vigil-web — the values of a binary-format libpq result (see
 * pg_binary.h). A value's wire form is the one a binary COPY's field has,
 * so the warehouse library's decoder (warehouse/copy_binary_read.c) reads
 * them: one reader of PostgreSQL's binary forms in the project. */
#include <math.h>

#include "copy_binary.h"
#include "pg_binary.h"

/* A result's value as a binary COPY field (NULL: no data). */
static struct vigil_copy_field cell(const PGresult *r, int row, int column)
{
    return (struct vigil_copy_field){
        .data = PQgetisnull(r, row, column) ? NULL : (const uint8_t *)PQgetvalue(r, row, column),
        .length = (uint32_t)PQgetlength(r, row, column),
    };
}

gint64 web_pg_int8(const PGresult *r, int row, int column)
{
    struct vigil_copy_field f = cell(r, row, column);
    int64_t v = 0;
    vigil_copy_get_int8(&f, PQfname(r, column), &v, NULL);
    return v;
}

gboolean web_pg_bool(const PGresult *r, int row, int column)
{
    return PQgetlength(r, row, column) == 1 && PQgetvalue(r, row, column)[0] != 0;
}

gint64 web_pg_timestamptz_us(const PGresult *r, int row, int column)
{
    struct vigil_copy_field f = cell(r, row, column);
    int64_t us = 0;
    vigil_copy_get_timestamp_us(&f, PQfname(r, column), &us, NULL);
    return us;
}

double web_pg_float8(const PGresult *r, int row, int column)
{
    struct vigil_copy_field f = cell(r, row, column);
    double v = NAN;
    vigil_copy_get_float8(&f, PQfname(r, column), &v, NULL);
    return v;
}

gint64 web_pg_float8_array(const PGresult *r, int row, int column, double **values, GError **error)
{
    struct vigil_copy_field f = cell(r, row, column);
    const char *name = PQfname(r, column);
    uint32_t n = 0;
    *values = NULL;
    if (!vigil_copy_get_array_length(&f, name, &n, error))
        return -1;
    double *v = g_new(double, MAX(n, 1));
    gboolean *null = g_new(gboolean, MAX(n, 1));
    gboolean ok = vigil_copy_get_float8_array(&f, name, v, null, n, &n, error);
    for (uint32_t i = 0; ok && i < n; i++)
        if (null[i])
            v[i] = NAN;
    g_free(null);
    if (!ok || n == 0) {
        g_free(v);
        return ok ? 0 : -1;
    }
    *values = v;
    return n;
}

gint64 web_pg_int4_array(const PGresult *r, int row, int column, double **values, GError **error)
{
    struct vigil_copy_field f = cell(r, row, column);
    const char *name = PQfname(r, column);
    uint32_t n = 0;
    *values = NULL;
    if (!vigil_copy_get_array_length(&f, name, &n, error))
        return -1;
    int32_t *ints = g_new(int32_t, MAX(n, 1));
    gboolean ok = vigil_copy_get_int4_array(&f, name, ints, n, &n, error);
    double *v = ok && n > 0 ? g_new(double, n) : NULL;
    for (uint32_t i = 0; v != NULL && i < n; i++)
        v[i] = ints[i];
    g_free(ints);
    *values = v;
    return ok ? (gint64)n : -1;
}
