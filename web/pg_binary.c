/* vigil-web — PostgreSQL's binary wire forms (see pg_binary.h). Each is
 * big-endian; an array is its number of dimensions, a has-nulls flag, the
 * element type's OID, each dimension's length and lower bound, then per
 * element its length (-1: NULL) and bytes. */
#include <math.h>
#include <string.h>

#include "pg_binary.h"
#include "request.h"

#define INT4OID   23
#define FLOAT8OID 701
/* 2000-01-01 − 1970-01-01 in µs: where the server's timestamps start. */
#define POSTGRES_EPOCH_US G_GINT64_CONSTANT(946684800000000)

static guint32 be32(const char *p)
{
    guint32 v;
    memcpy(&v, p, sizeof v);
    return GUINT32_FROM_BE(v);
}

static guint64 be64(const char *p)
{
    guint64 v;
    memcpy(&v, p, sizeof v);
    return GUINT64_FROM_BE(v);
}

gint64 web_pg_int8(const PGresult *r, int row, int column)
{
    return PQgetlength(r, row, column) == 8 ? (gint64)be64(PQgetvalue(r, row, column)) : 0;
}

gboolean web_pg_bool(const PGresult *r, int row, int column)
{
    return PQgetlength(r, row, column) == 1 && PQgetvalue(r, row, column)[0] != 0;
}

gint64 web_pg_timestamptz_us(const PGresult *r, int row, int column)
{
    return web_pg_int8(r, row, column) + POSTGRES_EPOCH_US;
}

static double float8_of(const char *p)
{
    guint64 bits = be64(p);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

double web_pg_float8(const PGresult *r, int row, int column)
{
    if (PQgetisnull(r, row, column) || PQgetlength(r, row, column) != 8)
        return NAN;
    return float8_of(PQgetvalue(r, row, column));
}

gint64 web_pg_float8_array(const PGresult *r, int row, int column, double **values, GError **error)
{
    const char *p = PQgetvalue(r, row, column);
    gint64 left = PQgetlength(r, row, column);
    *values = NULL;
    if (PQgetisnull(r, row, column) || left < 12) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_INTERNAL,
                    "column %s: %s where an array was expected", PQfname(r, column),
                    PQgetisnull(r, row, column) ? "NULL" : "a value too short");
        return -1;
    }
    guint32 ndim = be32(p), type = be32(p + 8);
    if (ndim == 0)
        return 0;
    gint64 width = type == FLOAT8OID ? 8 : type == INT4OID ? 4 : 0;
    if (ndim != 1 || width == 0 || left < 20) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_INTERNAL,
                    "column %s: an array of %u dimensions of type %u where one of float8 or "
                    "int4 was expected",
                    PQfname(r, column), ndim, type);
        return -1;
    }
    gint64 n = (gint32)be32(p + 12);
    p += 20;
    left -= 20;
    double *v = g_new(double, MAX(n, 1));
    for (gint64 i = 0; i < n; i++) {
        gint32 length = left >= 4 ? (gint32)be32(p) : -2;
        if (length == -1) {
            v[i] = NAN;
            p += 4;
            left -= 4;
            continue;
        }
        if (length != width || left < 4 + width) {
            g_free(v);
            g_set_error(error, WEB_ERROR, WEB_ERROR_INTERNAL,
                        "column %s: element %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                        " is cut short",
                        PQfname(r, column), i + 1, n);
            return -1;
        }
        v[i] = width == 8 ? float8_of(p + 4) : (double)(gint32)be32(p + 4);
        p += 4 + width;
        left -= 4 + width;
    }
    *values = v;
    return n;
}
