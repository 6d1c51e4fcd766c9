/* vigild — a spool file's pieces: whole batches and the damage between
 * them.
 *
 * A segment is BATCH messages one after another, each with its length and
 * a CRC in its header, so a reader finds every batch from the one before.
 * Damage breaks that chain where it hits a header: its length can no
 * longer be believed. The walk then looks for the next place a BATCH
 * begins whose header and CRC check: the magic alone is not enough (a
 * payload can hold those four bytes, and a batch's inner messages each
 * start with them), but a whole message whose CRC-32 checks is one that
 * was written, to one chance in 2^32, and only a BATCH is taken, never one
 * of a batch's inner messages. So damage costs the messages it touches,
 * not everything written after it. */
#include <string.h>

#include "vigil/wire.h"
#include "spool_scan.h"

static const uint8_t wire_magic[4] = {'V', 'G', 'W', 'R'};

static uint32_t load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The length of the intact BATCH message at `offset`, or 0 with `why` set
 * (when not NULL) when none starts there. */
static size_t batch_at(const uint8_t *data, size_t size, size_t offset,
                       struct vigil_wire_header *header, char **why)
{
    size_t left = size - offset;
    if (left < VIGIL_WIRE_HEADER_BYTES) {
        if (why != NULL)
            *why = g_strdup_printf("a truncated message: %zu bytes, shorter than a header", left);
        return 0;
    }
    /* The payload length sits at bytes 28..31 (wire.h); the CRC check
     * below tells whether it can be trusted. */
    size_t length = (size_t)VIGIL_WIRE_HEADER_BYTES + load_u32(data + offset + 28);
    if (length > left)
        length = left; /* the header check then names the truncation */
    GError *error = NULL;
    if (!vigil_wire_peek_header(data + offset, length, header, why != NULL ? &error : NULL)) {
        if (why != NULL) {
            *why = g_strdup(error->message);
            g_error_free(error);
        }
        return 0;
    }
    if (header->type != VIGIL_WIRE_BATCH) {
        if (why != NULL) {
            const char *name = vigil_wire_type_name(header->type);
            *why = g_strdup_printf("a %s message where a batch was expected",
                                   name != NULL ? name : "unknown");
        }
        return 0;
    }
    return length;
}

/* The next offset after `from` where an intact BATCH begins; `size` when
 * none does. Only offsets with the magic and a batch's type are checked
 * in full (a CRC over the message). */
static size_t next_batch(const uint8_t *data, size_t size, size_t from)
{
    for (size_t at = from + 1; at + VIGIL_WIRE_HEADER_BYTES <= size; at++) {
        const uint8_t *hit = memchr(data + at, wire_magic[0], size - at);
        if (hit == NULL)
            break;
        at = (size_t)(hit - data);
        if (at + VIGIL_WIRE_HEADER_BYTES > size)
            break;
        if (memcmp(hit, wire_magic, sizeof wire_magic) != 0 ||
            (hit[6] | hit[7] << 8) != VIGIL_WIRE_BATCH)
            continue;
        struct vigil_wire_header header;
        if (batch_at(data, size, at, &header, NULL) > 0)
            return at;
    }
    return size;
}

/* A whole batch: where it is and its header's names. */
static void add_batch(GArray *pieces, size_t offset, size_t length,
                      const struct vigil_wire_header *h)
{
    struct vigild_spool_piece piece = {
        .offset_bytes = offset,
        .length_bytes = length,
        .node_id = h->node_id,
        .sequence = h->sequence,
        .messages = h->count,
    };
    g_array_append_val(pieces, piece);
}

GArray *vigild_spool_scan(const uint8_t *data, size_t size)
{
    GArray *pieces = g_array_new(FALSE, TRUE, sizeof(struct vigild_spool_piece));
    size_t offset = 0;
    while (offset < size) {
        struct vigil_wire_header header;
        char *why = NULL;
        size_t length = batch_at(data, size, offset, &header, &why);
        if (length > 0) {
            add_batch(pieces, offset, length, &header);
            offset += length;
            continue;
        }
        size_t next = next_batch(data, size, offset);
        struct vigild_spool_piece damage = {
            .offset_bytes = offset,
            .length_bytes = next - offset,
            .damaged = TRUE,
            .why = why,
        };
        g_array_append_val(pieces, damage);
        offset = next;
    }
    return pieces;
}

void vigild_spool_scan_free(GArray *pieces)
{
    if (pieces == NULL)
        return;
    for (guint i = 0; i < pieces->len; i++)
        g_free(g_array_index(pieces, struct vigild_spool_piece, i).why);
    g_array_free(pieces, TRUE);
}
