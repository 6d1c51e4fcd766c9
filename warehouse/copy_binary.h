/* vigil — PostgreSQL's binary COPY format: rows written for
 * "COPY … FROM STDIN (FORMAT binary)" (copy_binary.c) and read from
 * "COPY (SELECT …) TO STDOUT (FORMAT binary)" (copy_binary_read.c).
 * Shared by vigil-txd's ingest and the roll-up levels' build. */
#ifndef VIGIL_COPY_BINARY_H
#define VIGIL_COPY_BINARY_H

#include <math.h>
#include <stdint.h>
#include <glib.h>
#include <libpq-fe.h>

/* ---- writing (copy_binary.c) ---------------------------------------------------------- */

struct vigil_copy {
    uint8_t *data; /* the COPY stream so far */
    size_t length, capacity;
    uint64_t rows;
};

void vigil_copy_init(struct vigil_copy *c);
void vigil_copy_clear(struct vigil_copy *c);
void vigil_copy_row(struct vigil_copy *c, uint16_t fields);
void vigil_copy_null(struct vigil_copy *c);
void vigil_copy_int2(struct vigil_copy *c, int16_t v);
void vigil_copy_int4(struct vigil_copy *c, int32_t v);
void vigil_copy_int8(struct vigil_copy *c, int64_t v);
void vigil_copy_float8(struct vigil_copy *c, double v);
void vigil_copy_float8_or_null(struct vigil_copy *c, double v); /* NaN → NULL */
void vigil_copy_bool(struct vigil_copy *c, gboolean v);
void vigil_copy_text(struct vigil_copy *c, const char *text);
void vigil_copy_timestamp_ns(struct vigil_copy *c, int64_t realtime_ns); /* timestamptz */
void vigil_copy_int8_array(struct vigil_copy *c, const int64_t *values, uint32_t n); /* bigint[] */
void vigil_copy_int4_array(struct vigil_copy *c, const int32_t *values, uint32_t n); /* n > 0 */
/* double precision[] of n > 0; with nan_is_null a NaN is a NULL element. */
void vigil_copy_float8_array(struct vigil_copy *c, const double *values, uint32_t n,
                             gboolean nan_is_null);
/* double precision[] of n > 0 whose element i is NULL where null[i]. */
void vigil_copy_float8_array_nulls(struct vigil_copy *c, const double *values, const gboolean *null,
                                   uint32_t n);
void vigil_copy_varbit(struct vigil_copy *c, const gboolean *bits, uint32_t n); /* bit varying */
void vigil_copy_jsonb(struct vigil_copy *c, const char *json);

/* How a failed COPY statement becomes the caller's error (vigil-txd's
 * retry-or-refuse classification, or the warehouse's). */
typedef void (*vigil_copy_error_fn)(GError **error, PGconn *db, const PGresult *result,
                                    const char *what);
/* COPY … FROM STDIN (FORMAT binary) with the rows added; nothing to do for
 * none. A broken connection is VIGIL_WAREHOUSE_ERROR_CONNECT. */
gboolean vigil_copy_send(PGconn *db, const char *statement, struct vigil_copy *c,
                         vigil_copy_error_fn set_error, GError **error);

/* ---- reading (copy_binary_read.c) ----------------------------------------------------- */

/* One field of a row read: its bytes (NULL for an SQL NULL). */
struct vigil_copy_field {
    const uint8_t *data;
    uint32_t length;
};

/* A "COPY (…) TO STDOUT (FORMAT binary)" being read on `db`. */
struct vigil_copy_reader {
    PGconn *db;
    char *buffer; /* libpq's row, or NULL */
    gboolean header_read, done;
    uint16_t fields_n;
    struct vigil_copy_field *fields;
};

/* Starts `statement` (a COPY … TO STDOUT (FORMAT binary)) on `db`. */
gboolean vigil_copy_reader_start(struct vigil_copy_reader *r, PGconn *db, const char *statement,
                                 GError **error);
/* The next row, its fields in r->fields (valid until the next call):
 * 1; 0 at the end (the statement's result checked); -1 with error set. A
 * row of another field count than `fields` is an error. */
int vigil_copy_reader_next(struct vigil_copy_reader *r, uint16_t fields, GError **error);
/* Frees the reader; a stream left before its end is read to the end and
 * dropped, so that the connection can go on. */
void vigil_copy_reader_clear(struct vigil_copy_reader *r);

/* Field decoders; FALSE (error set, naming `what`) for a NULL or a field of
 * the wrong shape. */
gboolean vigil_copy_get_int4(const struct vigil_copy_field *f, const char *what, int32_t *v,
                             GError **error);
gboolean vigil_copy_get_int8(const struct vigil_copy_field *f, const char *what, int64_t *v,
                             GError **error);
gboolean vigil_copy_get_float8(const struct vigil_copy_field *f, const char *what, double *v,
                               GError **error);
/* A timestamptz as µs since 1970-01-01 UTC. */
gboolean vigil_copy_get_timestamp_us(const struct vigil_copy_field *f, const char *what,
                                     int64_t *us, GError **error);
/* The same wire form is a binary-format libpq result's value (PQgetvalue
 * and PQgetlength of a resultFormat 1 query): vigil-web reads those so.
 * A one-dimensional int4[] (no NULL elements) or float8[] (a NULL element:
 * null[i] TRUE, values[i] 0) of at most `max` elements, into the caller's
 * arrays; *n its length. An empty array has length 0. */
gboolean vigil_copy_get_int4_array(const struct vigil_copy_field *f, const char *what,
                                   int32_t *values, uint32_t max, uint32_t *n, GError **error);
gboolean vigil_copy_get_float8_array(const struct vigil_copy_field *f, const char *what,
                                     double *values, gboolean *null, uint32_t max, uint32_t *n,
                                     GError **error);
/* The length of a one-dimensional array field without reading it. */
gboolean vigil_copy_get_array_length(const struct vigil_copy_field *f, const char *what,
                                     uint32_t *n, GError **error);

#endif
