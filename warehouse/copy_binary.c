/* vigil — rows for PostgreSQL's binary COPY format, and sending them
 * (vigil-txd's batches, the roll-up levels' blocks).
 *
 * Binary COPY is what makes the ingest cheap: the server copies fixed-size
 * integers and doubles instead of parsing text, and the writer formats
 * nothing. The format (PostgreSQL's "COPY … (FORMAT binary)"): an 11-byte
 * signature, a flags word and an extension length; then per row a 16-bit
 * field count and per field a 32-bit length (-1 for NULL) and the value in
 * network byte order; then -1 as the trailer. */
#include <string.h>

#include "copy_binary.h"
#include "vigil/warehouse.h"

/* 2000-01-01 in µs since the Unix epoch: PostgreSQL's timestamp origin. */
#define POSTGRES_EPOCH_US G_GINT64_CONSTANT(946684800000000)

/* Room for `n` more bytes at the end of the stream. Inline and without a
 * call in the common case: it runs once per field, 16 times an activity. */
static inline uint8_t *grow(struct vigil_copy *c, size_t n)
{
    if (G_UNLIKELY(c->length + n > c->capacity)) {
        c->capacity = MAX(c->capacity * 2, c->length + n);
        c->data = g_realloc(c->data, c->capacity);
    }
    uint8_t *at = c->data + c->length;
    c->length += n;
    return at;
}

static inline void store_be16(uint8_t *p, uint16_t v)
{
    v = GUINT16_TO_BE(v);
    memcpy(p, &v, 2);
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
    v = GUINT32_TO_BE(v);
    memcpy(p, &v, 4);
}

static inline void store_be64(uint8_t *p, uint64_t v)
{
    v = GUINT64_TO_BE(v);
    memcpy(p, &v, 8);
}

void vigil_copy_init(struct vigil_copy *c)
{
    static const uint8_t signature[11] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0};
    c->capacity = 1u << 16;
    c->data = g_malloc(c->capacity);
    c->length = 0;
    c->rows = 0;
    uint8_t *p = grow(c, sizeof signature + 8);
    memcpy(p, signature, sizeof signature);
    store_be32(p + sizeof signature, 0);     /* flags: no OIDs */
    store_be32(p + sizeof signature + 4, 0); /* header extension */
}

void vigil_copy_clear(struct vigil_copy *c)
{
    g_free(c->data);
    c->data = NULL;
    c->length = c->capacity = 0;
}

void vigil_copy_row(struct vigil_copy *c, uint16_t fields)
{
    store_be16(grow(c, 2), fields);
    c->rows++;
}

void vigil_copy_null(struct vigil_copy *c)
{
    store_be32(grow(c, 4), UINT32_MAX); /* -1 */
}

void vigil_copy_int2(struct vigil_copy *c, int16_t v)
{
    uint8_t *p = grow(c, 6);
    store_be32(p, 2);
    store_be16(p + 4, (uint16_t)v);
}

void vigil_copy_int4(struct vigil_copy *c, int32_t v)
{
    uint8_t *p = grow(c, 8);
    store_be32(p, 4);
    store_be32(p + 4, (uint32_t)v);
}

void vigil_copy_int8(struct vigil_copy *c, int64_t v)
{
    uint8_t *p = grow(c, 12);
    store_be32(p, 8);
    store_be64(p + 4, (uint64_t)v);
}

void vigil_copy_float8(struct vigil_copy *c, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t *p = grow(c, 12);
    store_be32(p, 8);
    store_be64(p + 4, bits);
}

void vigil_copy_float8_or_null(struct vigil_copy *c, double v)
{
    if (isnan(v))
        vigil_copy_null(c);
    else
        vigil_copy_float8(c, v);
}

void vigil_copy_bool(struct vigil_copy *c, gboolean v)
{
    uint8_t *p = grow(c, 5);
    store_be32(p, 1);
    p[4] = v ? 1 : 0;
}

void vigil_copy_text(struct vigil_copy *c, const char *text)
{
    size_t length = strlen(text);
    uint8_t *p = grow(c, 4 + length);
    store_be32(p, (uint32_t)length);
    memcpy(p + 4, text, length);
}

void vigil_copy_int8_array(struct vigil_copy *c, const int64_t *values, uint32_t n)
{
    /* Dimensions, a has-nulls flag, the element type (int8, OID 20), then
     * per dimension its length and lower bound, then the elements. An
     * empty array has no dimension. */
    uint32_t dims = n > 0 ? 1 : 0;
    uint8_t *p = grow(c, 4 + 12 + dims * 8 + (size_t)n * 12);
    store_be32(p, 12 + dims * 8 + n * 12);
    store_be32(p + 4, dims);
    store_be32(p + 8, 0);
    store_be32(p + 12, 20);
    p += 16;
    if (n > 0) {
        store_be32(p, n);
        store_be32(p + 4, 1);
        p += 8;
    }
    for (uint32_t i = 0; i < n; i++, p += 12) {
        store_be32(p, 8);
        store_be64(p + 4, (uint64_t)values[i]);
    }
}

/* A one-dimensional array's header: dimensions, a has-nulls flag, the
 * element type, then the length and lower bound (1). `n` > 0. */
static uint8_t *array_header(struct vigil_copy *c, size_t body_bytes, gboolean has_nulls,
                             uint32_t element_oid, uint32_t n)
{
    uint8_t *p = grow(c, 4 + 20 + body_bytes);
    store_be32(p, (uint32_t)(20 + body_bytes));
    store_be32(p + 4, 1);
    store_be32(p + 8, has_nulls ? 1 : 0);
    store_be32(p + 12, element_oid);
    store_be32(p + 16, n);
    store_be32(p + 20, 1);
    return p + 24;
}

void vigil_copy_int4_array(struct vigil_copy *c, const int32_t *values, uint32_t n)
{
    uint8_t *p = array_header(c, (size_t)n * 8, FALSE, 23, n);
    for (uint32_t i = 0; i < n; i++, p += 8) {
        store_be32(p, 4);
        store_be32(p + 4, (uint32_t)values[i]);
    }
}

/* Element i is NULL where null[i] (null may be NULL) or, with
 * nan_is_null, where it is NaN. */
static inline gboolean element_null(const double *values, const gboolean *null, uint32_t i,
                                    gboolean nan_is_null)
{
    return (null != NULL && null[i]) || (nan_is_null && isnan(values[i]));
}

static void float8_array(struct vigil_copy *c, const double *values, const gboolean *null,
                         uint32_t n, gboolean nan_is_null)
{
    uint32_t nulls = 0;
    for (uint32_t i = 0; (null != NULL || nan_is_null) && i < n; i++)
        nulls += element_null(values, null, i, nan_is_null) ? 1 : 0;
    uint8_t *p = array_header(c, (size_t)(n - nulls) * 12 + (size_t)nulls * 4, nulls > 0, 701, n);
    for (uint32_t i = 0; i < n; i++) {
        if (nulls > 0 && element_null(values, null, i, nan_is_null)) {
            store_be32(p, UINT32_MAX);
            p += 4;
            continue;
        }
        uint64_t bits;
        memcpy(&bits, &values[i], sizeof bits);
        store_be32(p, 8);
        store_be64(p + 4, bits);
        p += 12;
    }
}

void vigil_copy_float8_array(struct vigil_copy *c, const double *values, uint32_t n,
                             gboolean nan_is_null)
{
    float8_array(c, values, NULL, n, nan_is_null);
}

void vigil_copy_float8_array_nulls(struct vigil_copy *c, const double *values, const gboolean *null,
                                   uint32_t n)
{
    float8_array(c, values, null, n, FALSE);
}

void vigil_copy_varbit(struct vigil_copy *c, const gboolean *bits, uint32_t n)
{
    /* The bit count, then the bits from the first, most significant bit
     * of each byte first, the last byte's unused bits zero. */
    size_t bytes = ((size_t)n + 7) / 8;
    uint8_t *p = grow(c, 8 + bytes);
    store_be32(p, (uint32_t)(4 + bytes));
    store_be32(p + 4, n);
    memset(p + 8, 0, bytes);
    for (uint32_t i = 0; i < n; i++)
        if (bits[i])
            p[8 + i / 8] |= (uint8_t)(0x80u >> (i % 8));
}

void vigil_copy_jsonb(struct vigil_copy *c, const char *json)
{
    size_t length = strlen(json);
    uint8_t *p = grow(c, 5 + length);
    store_be32(p, (uint32_t)length + 1);
    p[4] = 1; /* jsonb's binary format: a version byte, then the text */
    memcpy(p + 5, json, length);
}

void vigil_copy_timestamp_ns(struct vigil_copy *c, int64_t realtime_ns)
{
    /* Floor, not truncation, so that times before 1970 would not round up. */
    int64_t us = realtime_ns >= 0 ? realtime_ns / 1000 : -((-realtime_ns + 999) / 1000);
    vigil_copy_int8(c, us - POSTGRES_EPOCH_US);
}

gboolean vigil_copy_send(PGconn *db, const char *statement, struct vigil_copy *c,
                         vigil_copy_error_fn set_error, GError **error)
{
    if (c->rows == 0)
        return TRUE;
    store_be16(grow(c, 2), UINT16_MAX); /* the trailer: -1 */
    PGresult *result = PQexec(db, statement);
    gboolean ok = PQresultStatus(result) == PGRES_COPY_IN;
    if (!ok)
        set_error(error, db, result, statement);
    PQclear(result);
    if (!ok)
        return FALSE;
    /* libpq buffers what it is given; chunks of 1 MiB keep its buffer and
     * ours from both holding a large batch twice over. */
    const guint chunk = 1u << 20;
    for (size_t done = 0; done < c->length; done += chunk) {
        size_t n = MIN(chunk, c->length - done);
        if (PQputCopyData(db, (const char *)c->data + done, (int)n) != 1) {
            g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNECT,
                        "sending rows for %s: %s", statement, PQerrorMessage(db));
            return FALSE;
        }
    }
    if (PQputCopyEnd(db, NULL) != 1) {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNECT,
                    "ending rows for %s: %s", statement, PQerrorMessage(db));
        return FALSE;
    }
    ok = TRUE;
    while ((result = PQgetResult(db)) != NULL) {
        if (ok && PQresultStatus(result) != PGRES_COMMAND_OK) {
            set_error(error, db, result, statement);
            ok = FALSE;
        }
        PQclear(result);
    }
    return ok;
}
