/* vigil — reading "COPY (SELECT …) TO STDOUT (FORMAT binary)": the roll-up
 * levels read the 1 s roll-ups' arrays this way, without PostgreSQL
 * formatting a number as text or libpq parsing one.
 *
 * The server sends a message a row; the stream's header (11-byte
 * signature, flags, extension length and extension) comes in front of
 * the first row, the trailer (-1) in a message of its own. An array field
 * is: dimensions, a has-nulls flag, the element type, per dimension its
 * length and lower bound, then per element a 32-bit length (-1: NULL) and
 * the value, all in network byte order. */
#include <string.h>

#include "copy_binary.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

static const uint8_t signature[11] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0};

/* 2000-01-01 in µs since the Unix epoch: PostgreSQL's timestamp origin. */
#define POSTGRES_EPOCH_US G_GINT64_CONSTANT(946684800000000)

static inline uint16_t load_be16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return GUINT16_FROM_BE(v);
}

static inline uint32_t load_be32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return GUINT32_FROM_BE(v);
}

static inline uint64_t load_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return GUINT64_FROM_BE(v);
}

static void set_statement_error(GError **error, PGconn *db, const PGresult *result,
                                const char *what)
{
    const char *state = result != NULL ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : NULL;
    char *text = vigil_warehouse_one_line(result != NULL && PQresultErrorMessage(result)[0] != '\0'
                                              ? PQresultErrorMessage(result)
                                              : PQerrorMessage(db));
    g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY, "%s (%s): %s", what,
                state != NULL ? state : "no SQLSTATE", text);
    g_free(text);
}

gboolean vigil_copy_reader_start(struct vigil_copy_reader *r, PGconn *db, const char *statement,
                                 GError **error)
{
    memset(r, 0, sizeof *r);
    r->db = db;
    PGresult *result = PQexec(db, statement);
    gboolean ok = PQresultStatus(result) == PGRES_COPY_OUT && PQbinaryTuples(result) == 1;
    if (!ok)
        set_statement_error(error, db, result, "reading by binary COPY");
    PQclear(result);
    r->done = !ok;
    return ok;
}

static int finish(struct vigil_copy_reader *r, GError **error);

void vigil_copy_reader_clear(struct vigil_copy_reader *r)
{
    if (r->db != NULL && !r->done) {
        /* Left in the middle: the rest read and dropped, so that the
         * connection can go on (and roll back). */
        GError *ignored = NULL;
        finish(r, &ignored);
        g_clear_error(&ignored);
    }
    if (r->buffer != NULL)
        PQfreemem(r->buffer);
    r->buffer = NULL;
    g_free(r->fields);
    r->fields = NULL;
}

static int malformed(GError **error, const char *what)
{
    g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                "reading by binary COPY: %s", what);
    return -1;
}

/* After the trailer or the end: the statement's own result. */
static int finish(struct vigil_copy_reader *r, GError **error)
{
    r->done = TRUE;
    int n;
    char *rest;
    while ((n = PQgetCopyData(r->db, &rest, 0)) > 0)
        PQfreemem(rest);
    gboolean ok = n == -1;
    PGresult *result;
    while ((result = PQgetResult(r->db)) != NULL) {
        if (ok && PQresultStatus(result) != PGRES_COMMAND_OK) {
            set_statement_error(error, r->db, result, "reading by binary COPY");
            ok = FALSE;
        }
        PQclear(result);
    }
    if (n == -2 && ok) {
        set_statement_error(error, r->db, NULL, "reading by binary COPY");
        ok = FALSE;
    }
    return ok ? 0 : -1;
}

int vigil_copy_reader_next(struct vigil_copy_reader *r, uint16_t fields, GError **error)
{
    if (r->buffer != NULL)
        PQfreemem(r->buffer);
    r->buffer = NULL;
    int n = PQgetCopyData(r->db, &r->buffer, 0);
    if (n < 0) {
        if (finish(r, error) < 0)
            return -1;
        return malformed(error, "the stream ended without its trailer");
    }
    const uint8_t *p = (const uint8_t *)r->buffer, *end = p + n;
    if (!r->header_read) {
        if (n < (int)sizeof signature + 8 || memcmp(p, signature, sizeof signature) != 0)
            return malformed(error, "no binary COPY signature");
        uint32_t extension = load_be32(p + sizeof signature + 4);
        if ((size_t)(end - p) < sizeof signature + 8 + (size_t)extension)
            return malformed(error, "a header extension longer than its message");
        p += sizeof signature + 8 + extension;
        r->header_read = TRUE;
    }
    if (end - p < 2)
        return malformed(error, "a row without its field count");
    int16_t count = (int16_t)load_be16(p);
    p += 2;
    if (count == -1)
        return finish(r, error);
    if (count != fields) {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "reading by binary COPY: a row of %d fields where %u were asked", count,
                    fields);
        return -1;
    }
    if (r->fields_n < fields) {
        r->fields = g_renew(struct vigil_copy_field, r->fields, fields);
        r->fields_n = fields;
    }
    for (uint16_t i = 0; i < fields; i++) {
        if (end - p < 4)
            return malformed(error, "a field without its length");
        int32_t length = (int32_t)load_be32(p);
        p += 4;
        if (length < -1 || (length > 0 && end - p < length))
            return malformed(error, "a field longer than its row");
        r->fields[i].data = length == -1 ? NULL : p;
        r->fields[i].length = length == -1 ? 0 : (uint32_t)length;
        p += length > 0 ? length : 0;
    }
    return 1;
}

static gboolean wrong(GError **error, const char *what, const char *why)
{
    g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                "%s %s (PostgreSQL's binary form)", what, why);
    return FALSE;
}

static gboolean scalar(const struct vigil_copy_field *f, uint32_t length)
{
    return f->data != NULL && f->length == length;
}

gboolean vigil_copy_get_int4(const struct vigil_copy_field *f, const char *what, int32_t *v,
                             GError **error)
{
    if (!scalar(f, 4))
        return wrong(error, what, "is not a 4-byte integer");
    *v = (int32_t)load_be32(f->data);
    return TRUE;
}

gboolean vigil_copy_get_int8(const struct vigil_copy_field *f, const char *what, int64_t *v,
                             GError **error)
{
    if (!scalar(f, 8))
        return wrong(error, what, "is not an 8-byte integer");
    *v = (int64_t)load_be64(f->data);
    return TRUE;
}

gboolean vigil_copy_get_float8(const struct vigil_copy_field *f, const char *what, double *v,
                               GError **error)
{
    if (!scalar(f, 8))
        return wrong(error, what, "is not a double");
    uint64_t bits = load_be64(f->data);
    memcpy(v, &bits, sizeof bits);
    return TRUE;
}

gboolean vigil_copy_get_timestamp_us(const struct vigil_copy_field *f, const char *what,
                                     int64_t *us, GError **error)
{
    if (!scalar(f, 8))
        return wrong(error, what, "is not a timestamp");
    *us = (int64_t)load_be64(f->data) + POSTGRES_EPOCH_US;
    return TRUE;
}

/* The array's header checked: its element count, and where the elements
 * begin. */
static gboolean array_header(const struct vigil_copy_field *f, const char *what,
                             uint32_t element_oid, uint32_t *n, const uint8_t **elements,
                             GError **error)
{
    if (f->data == NULL)
        return wrong(error, what, "is NULL");
    if (f->length < 12)
        return wrong(error, what, "is not an array");
    uint32_t dims = load_be32(f->data);
    if (element_oid != 0 && load_be32(f->data + 8) != element_oid)
        return wrong(error, what, "is an array of another type");
    if (dims == 0) {
        *n = 0;
        *elements = f->data + 12;
        return TRUE;
    }
    if (dims != 1 || f->length < 20)
        return wrong(error, what, "is not a one-dimensional array");
    *n = load_be32(f->data + 12);
    *elements = f->data + 20;
    /* Each element takes 4 bytes at least (its length): a count beyond
     * that is a damaged value, not a size to allocate. */
    if (*n > (f->length - 20) / 4)
        return wrong(error, what, "is shorter than its length says");
    return TRUE;
}

gboolean vigil_copy_get_array_length(const struct vigil_copy_field *f, const char *what,
                                     uint32_t *n, GError **error)
{
    const uint8_t *elements;
    return array_header(f, what, 0, n, &elements, error);
}

gboolean vigil_copy_get_int4_array(const struct vigil_copy_field *f, const char *what,
                                   int32_t *values, uint32_t max, uint32_t *n, GError **error)
{
    const uint8_t *p;
    if (!array_header(f, what, 23, n, &p, error))
        return FALSE;
    if (*n > max || (size_t)(f->data + f->length - p) != (size_t)*n * 8)
        return wrong(error, what, "has more elements than expected, or a NULL one");
    for (uint32_t i = 0; i < *n; i++, p += 8) {
        if (load_be32(p) != 4)
            return wrong(error, what, "has a NULL element");
        values[i] = (int32_t)load_be32(p + 4);
    }
    return TRUE;
}

gboolean vigil_copy_get_float8_array(const struct vigil_copy_field *f, const char *what,
                                     double *values, gboolean *null, uint32_t max, uint32_t *n,
                                     GError **error)
{
    const uint8_t *p;
    if (!array_header(f, what, 701, n, &p, error))
        return FALSE;
    if (*n > max)
        return wrong(error, what, "has more elements than expected");
    const uint8_t *end = f->data + f->length;
    for (uint32_t i = 0; i < *n; i++) {
        if (end - p < 4)
            return wrong(error, what, "is shorter than its length says");
        uint32_t length = load_be32(p);
        p += 4;
        if (length == UINT32_MAX) {
            null[i] = TRUE;
            values[i] = 0;
            continue;
        }
        if (length != 8 || end - p < 8)
            return wrong(error, what, "has an element that is not a double");
        uint64_t bits = load_be64(p);
        memcpy(&values[i], &bits, sizeof bits);
        null[i] = FALSE;
        p += 8;
    }
    return TRUE;
}
