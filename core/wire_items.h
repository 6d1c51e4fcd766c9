/* vigil — the wire's message types as one table (private to core/wire*.c).
 *
 * An item type is one entry: its layout, field by field in the order
 * wire.h documents, from which core/wire.c sizes, encodes, decodes and
 * frees any item; the check that the writer and the decoder both run on
 * it, so that what one refuses the other never produces; and where a
 * decoded message keeps its items. Adding an item type is adding its
 * struct and its array to wire.h, its entry here, and a one-line add
 * function in core/wire.c. */
#ifndef VIGIL_WIRE_ITEMS_H
#define VIGIL_WIRE_ITEMS_H

#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#include "vigil/wire.h"

#define WIRE_STRING_LENGTH_BYTES 2u
#define WIRE_TEXT_LENGTH_BYTES   4u
#define WIRE_COUNT_BYTES         4u /* an argv's count */

/* Fixed-width fields come before all others: the decoder takes an item's
 * fixed part whole, so that a truncated item is named with its size. */
enum wire_field_kind {
    /* A little-endian integer of wire_bytes, or a double's bits, from a
     * member of member_bytes (an enum member may be wider than its byte). */
    WIRE_FIXED,
    WIRE_ZERO,   /* reserved bytes without a member: written 0, refused unless 0 */
    WIRE_STRING, /* u16 length, then the bytes of a char * member */
    WIRE_TEXT,   /* u32 length (at most VIGIL_WIRE_TEXT_MAX), then the bytes */
    /* The bytes of a char * member, as many as the u16 member at
     * count_offset says (a path: bytes, not text); that length is a fixed
     * field of its own, before. */
    WIRE_BYTES,
    /* u32 count (the member at count_offset), then that many strings of a
     * char ** member, NULL-terminated once decoded. */
    WIRE_ARGV,
};

struct wire_field {
    enum wire_field_kind kind;
    const char *name;   /* the member's: what an error names */
    uint16_t offset;    /* of the member in the item */
    uint8_t wire_bytes; /* WIRE_FIXED, WIRE_ZERO: 1, 2, 4 or 8; else 0 */
    uint8_t member_bytes;
    uint16_t count_offset;  /* WIRE_BYTES, WIRE_ARGV */
    uint8_t count_bytes;    /* that member's size */
    const char *count_name; /* WIRE_ARGV */
};

/* The length or count before a variable field's bytes. */
static inline size_t wire_length_prefix_bytes(enum wire_field_kind kind)
{
    switch (kind) {
    case WIRE_STRING:
        return WIRE_STRING_LENGTH_BYTES;
    case WIRE_TEXT:
        return WIRE_TEXT_LENGTH_BYTES;
    case WIRE_ARGV:
        return WIRE_COUNT_BYTES;
    default:
        return 0; /* fixed, or counted by a fixed field */
    }
}

/* How many items a message of the type holds. */
enum wire_item_count {
    WIRE_ANY_ITEMS,
    WIRE_NO_ITEMS,      /* an ack: nor any payload */
    WIRE_ONE_ITEM,      /* exactly one: a node, a refusal */
    WIRE_SOME_MESSAGES, /* a batch: whole messages, at least its node's */
};

/* What the codec's loops need of a layout, derived from its fields once,
 * at first use (vigil_wire_types): so that an item's fixed part costs no
 * walk of its fields where a copy will do. */
struct wire_layout {
    size_t fixed_fields; /* the leading FIXED and ZERO fields: no other kind is among them */
    size_t fixed_bytes;  /* their wire bytes: what the decoder takes whole */
    size_t min_bytes;    /* an item's smallest encoding: every variable field empty */
    /* The leading fields whose wire bytes are the item's own bytes, copied
     * whole: FIXED members as wide as on the wire, each right after the
     * one before it in the struct, on a little-endian host (none
     * elsewhere). They are item bytes [copied_offset, + copied_bytes). */
    size_t copied_fields;
    size_t copied_offset;
    size_t copied_bytes;
    /* The copy is every byte of the item (every field, no padding): a
     * decoded item is written whole and owns nothing. */
    gboolean copies_whole_item;
};

struct wire_type {
    const char *name;
    enum wire_item_count item_count;
    gboolean carries_process_id; /* the payload starts with it */
    gboolean batch_cannot_hold;  /* a message of the type: an ack, a batch, a refusal */
    /* A decoded message's array of the items (offsetof in struct
     * vigil_wire_message) and the size of one; 0 when it holds none. */
    size_t items_offset;
    size_t item_bytes;
    /* NULL for an ack (no items) and a batch (whole messages, which
     * core/wire.c decodes as messages). */
    const struct wire_field *fields;
    size_t field_count;
    gboolean (*check)(const void *item, GError **error);
    struct wire_layout layout; /* derived: never written in the table */
};

/* The entry of a type, NULL for a type the format does not know. */
G_GNUC_INTERNAL const struct wire_type *vigil_wire_type(unsigned type);
/* Every entry, by type from 0 to VIGIL_WIRE_TYPE_COUNT (a NULL name where
 * no type is): for a walk over all types, one call. */
G_GNUC_INTERNAL const struct wire_type *vigil_wire_types(void);

/* Sets error (when not NULL) and returns FALSE. */
G_GNUC_INTERNAL gboolean vigil_wire_fail(GError **error, enum vigil_wire_error_code code,
                                         const char *format, ...) G_GNUC_PRINTF(3, 4);
/* Nearly every refusal is a malformed field. */
#define wire_malformed(error, ...) vigil_wire_fail((error), VIGIL_WIRE_ERROR_MALFORMED, __VA_ARGS__)

#endif
