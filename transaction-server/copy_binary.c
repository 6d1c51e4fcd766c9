/* vigil-txd — rows for PostgreSQL's binary COPY format, and sending them.
 *
 * Binary COPY is what makes the ingest cheap: the server copies fixed-size
 * integers and doubles instead of parsing text, and the writer formats
 * nothing. The format (PostgreSQL's "COPY … (FORMAT binary)"): an 11-byte
 * signature, a flags word and an extension length; then per row a 16-bit
 * field count and per field a 32-bit length (-1 for NULL) and the value in
 * network byte order; then -1 as the trailer. */
#include <string.h>

#include "txd.h"

/* 2000-01-01 in µs since the Unix epoch: PostgreSQL's timestamp origin. */
#define POSTGRES_EPOCH_US G_GINT64_CONSTANT(946684800000000)

static void put_be16(GByteArray *b, uint16_t v)
{
    uint8_t bytes[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    g_byte_array_append(b, bytes, 2);
}

static void put_be32(GByteArray *b, uint32_t v)
{
    uint8_t bytes[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    g_byte_array_append(b, bytes, 4);
}

static void put_be64(GByteArray *b, uint64_t v)
{
    put_be32(b, (uint32_t)(v >> 32));
    put_be32(b, (uint32_t)v);
}

void txd_copy_init(struct txd_copy *c)
{
    static const uint8_t signature[11] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0};
    c->buffer = g_byte_array_sized_new(1u << 16);
    c->rows = 0;
    g_byte_array_append(c->buffer, signature, sizeof signature);
    put_be32(c->buffer, 0); /* flags: no OIDs */
    put_be32(c->buffer, 0); /* header extension */
}

void txd_copy_clear(struct txd_copy *c)
{
    if (c->buffer != NULL)
        g_byte_array_unref(c->buffer);
    c->buffer = NULL;
}

void txd_copy_row(struct txd_copy *c, uint16_t fields)
{
    put_be16(c->buffer, fields);
    c->rows++;
}

void txd_copy_null(struct txd_copy *c)
{
    put_be32(c->buffer, UINT32_MAX); /* -1 */
}

void txd_copy_int2(struct txd_copy *c, int16_t v)
{
    put_be32(c->buffer, 2);
    put_be16(c->buffer, (uint16_t)v);
}

void txd_copy_int4(struct txd_copy *c, int32_t v)
{
    put_be32(c->buffer, 4);
    put_be32(c->buffer, (uint32_t)v);
}

void txd_copy_int8(struct txd_copy *c, int64_t v)
{
    put_be32(c->buffer, 8);
    put_be64(c->buffer, (uint64_t)v);
}

void txd_copy_float8(struct txd_copy *c, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put_be32(c->buffer, 8);
    put_be64(c->buffer, bits);
}

void txd_copy_float8_or_null(struct txd_copy *c, double v)
{
    if (isnan(v))
        txd_copy_null(c);
    else
        txd_copy_float8(c, v);
}

void txd_copy_bool(struct txd_copy *c, gboolean v)
{
    put_be32(c->buffer, 1);
    uint8_t byte = v ? 1 : 0;
    g_byte_array_append(c->buffer, &byte, 1);
}

void txd_copy_text(struct txd_copy *c, const char *text)
{
    size_t length = strlen(text);
    put_be32(c->buffer, (uint32_t)length);
    g_byte_array_append(c->buffer, (const uint8_t *)text, (guint)length);
}

void txd_copy_timestamp_ns(struct txd_copy *c, int64_t realtime_ns)
{
    /* Floor, not truncation, so that times before 1970 would not round up. */
    int64_t us = realtime_ns >= 0 ? realtime_ns / 1000 : -((-realtime_ns + 999) / 1000);
    txd_copy_int8(c, us - POSTGRES_EPOCH_US);
}

gboolean txd_copy_send(PGconn *db, const char *statement, struct txd_copy *c, GError **error)
{
    if (c->rows == 0)
        return TRUE;
    put_be16(c->buffer, UINT16_MAX); /* the trailer: -1 */
    PGresult *result = PQexec(db, statement);
    gboolean ok = PQresultStatus(result) == PGRES_COPY_IN;
    if (!ok)
        txd_set_pg_error(error, db, result, statement);
    PQclear(result);
    if (!ok)
        return FALSE;
    /* libpq buffers what it is given; chunks of 1 MiB keep its buffer and
     * ours from both holding a large batch twice over. */
    const guint chunk = 1u << 20;
    for (guint done = 0; done < c->buffer->len; done += chunk) {
        guint n = MIN(chunk, c->buffer->len - done);
        if (PQputCopyData(db, (const char *)c->buffer->data + done, (int)n) != 1) {
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
            txd_set_pg_error(error, db, result, statement);
            ok = FALSE;
        }
        PQclear(result);
    }
    return ok;
}
