/* vigil — encoding and decoding of wire messages.
 *
 * Every byte the decoder sees may come from a broken disk or a hostile peer,
 * so it checks each length before reading and each field before keeping it.
 * No code here knows an item type: each type's entry in core/wire_items.c
 * gives its layout, from which its items are sized, encoded, decoded and
 * freed, and the check that the writer and the decoder both run, so that
 * what one refuses the other never produces. Integers are assembled byte by
 * byte so that the format does not depend on the host's endianness or
 * alignment; only an item's leading fields whose wire bytes are, on this
 * host, the struct's own (wire_items.h, struct wire_layout) are copied
 * whole, since field by field an activity cost three times as much. */
#include <inttypes.h>
#include <string.h>
#include <zlib.h>

#include "vigil/wire.h"
#include "wire_items.h"

#define malformed wire_malformed

GQuark vigil_wire_error_quark(void)
{
    return g_quark_from_static_string("vigil-wire-error-quark");
}

/* Header field offsets, as documented in wire.h. */
#define OFFSET_MAGIC         0u
#define OFFSET_VERSION       4u
#define OFFSET_TYPE          6u
#define OFFSET_NODE_ID       8u
#define OFFSET_SEQUENCE      16u
#define OFFSET_COUNT         24u
#define OFFSET_PAYLOAD_BYTES 28u
#define OFFSET_RESERVED      32u

#define PROCESS_ID_BYTES      8u
#define BATCH_LENGTH_BYTES    4u /* before each inner message */
#define BATCH_ENTRY_MIN_BYTES (BATCH_LENGTH_BYTES + VIGIL_WIRE_HEADER_BYTES)

_Static_assert(VIGIL_WIRE_MAX_PAYLOAD_BYTES <= UINT32_MAX, "payload length must fit its u32");
_Static_assert(VIGIL_WIRE_TEXT_MAX < VIGIL_WIRE_MAX_PAYLOAD_BYTES, "a text must fit a message");

/* ---- little-endian primitives ------------------------------------------ */

/* Each width written out, so that the compiler makes one load or store of
 * it: the codec's fields are all 1, 2, 4 or 8 bytes. */
static uint64_t load_u16(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8;
}

static uint64_t load_u32(const uint8_t *p)
{
    return load_u16(p) | load_u16(p + 2) << 16;
}

static uint64_t load_le(const uint8_t *p, size_t bytes)
{
    switch (bytes) {
    case 1:
        return p[0];
    case 2:
        return load_u16(p);
    case 4:
        return load_u32(p);
    default:
        return load_u32(p) | load_u32(p + 4) << 32;
    }
}

static void store_u16(uint8_t *p, uint64_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void store_u32(uint8_t *p, uint64_t v)
{
    store_u16(p, v);
    store_u16(p + 2, v >> 16);
}

static void store_le(uint8_t *p, uint64_t v, size_t bytes)
{
    switch (bytes) {
    case 1:
        p[0] = (uint8_t)v;
        break;
    case 2:
        store_u16(p, v);
        break;
    case 4:
        store_u32(p, v);
        break;
    default:
        store_u32(p, v);
        store_u32(p + 4, v >> 32);
        break;
    }
}

/* Sequential writes into a span the writer has already reserved. */
static void put_le(uint8_t **p, uint64_t v, size_t bytes)
{
    store_le(*p, v, bytes);
    *p += bytes;
}

static void put_bytes(uint8_t **p, const void *bytes, size_t length)
{
    if (length > 0)
        memcpy(*p, bytes, length);
    *p += length;
}

/* Sequential reads that check the length before they take. */
struct reader {
    const uint8_t *p;
    size_t left_bytes;
};

static const uint8_t *reader_take(struct reader *r, size_t bytes)
{
    if (r->left_bytes < bytes)
        return NULL;
    const uint8_t *p = r->p;
    r->p += bytes;
    r->left_bytes -= bytes;
    return p;
}

static const uint8_t *read_bytes(struct reader *r, const char *field, size_t length, GError **error)
{
    const uint8_t *bytes = reader_take(r, length);
    if (bytes == NULL)
        malformed(error, "%s is truncated: needs %zu bytes, %zu left", field, length,
                  r->left_bytes);
    return bytes;
}

static char *copy_string(const uint8_t *bytes, size_t length)
{
    char *s = g_malloc(length + 1);
    if (length > 0)
        memcpy(s, bytes, length);
    s[length] = '\0';
    return s;
}

/* A string (u16 length) or a text (u32 length). The text checks run later,
 * on the copy; a NUL must be caught here because the copy would silently
 * end at it. A text's length is checked against its limit before its bytes
 * are looked for, so a huge length gets the right error. */
static gboolean read_string(struct reader *r, const char *field, size_t length_bytes, char **out,
                            GError **error)
{
    const uint8_t *length_at = reader_take(r, length_bytes);
    if (length_at == NULL)
        return malformed(error, "length of %s is truncated: needs %zu bytes, %zu left", field,
                         length_bytes, r->left_bytes);
    uint64_t length = load_le(length_at, length_bytes);
    if (length > VIGIL_WIRE_TEXT_MAX)
        return malformed(error, "%s of %" PRIu64 " bytes is longer than %u", field, length,
                         VIGIL_WIRE_TEXT_MAX);
    const uint8_t *bytes = read_bytes(r, field, length, error);
    if (bytes == NULL)
        return FALSE;
    if (memchr(bytes, '\0', length) != NULL)
        return malformed(error, "%s contains a NUL byte", field);
    *out = copy_string(bytes, length);
    return TRUE;
}

/* ---- an item's members, found by a field's offsets ------------------------ */

static uint64_t member_value(const void *item, size_t offset, size_t bytes)
{
    const uint8_t *at = (const uint8_t *)item + offset;
    switch (bytes) {
    case 1:
        return *at;
    case 2: {
        uint16_t v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    }
}

static void set_member_value(void *item, size_t offset, size_t bytes, uint64_t value)
{
    uint8_t *at = (uint8_t *)item + offset;
    switch (bytes) {
    case 1:
        *at = (uint8_t)value;
        break;
    case 2: {
        uint16_t v = (uint16_t)value;
        memcpy(at, &v, sizeof v);
        break;
    }
    case 4: {
        uint32_t v = (uint32_t)value;
        memcpy(at, &v, sizeof v);
        break;
    }
    default:
        memcpy(at, &value, sizeof value);
        break;
    }
}

static void *member_pointer(const void *item, size_t offset)
{
    void *p;
    memcpy(&p, (const uint8_t *)item + offset, sizeof p);
    return p;
}

static void set_member_pointer(void *item, size_t offset, void *p)
{
    memcpy((uint8_t *)item + offset, &p, sizeof p);
}

static size_t field_count_of(const void *item, const struct wire_field *f)
{
    return (size_t)member_value(item, f->count_offset, f->count_bytes);
}

/* ---- any item, by its type's layout --------------------------------------- */

/* The item passed its type's check: every string is there and in bounds.
 * Only the variable fields add to the smallest encoding. */
static size_t item_wire_bytes(const struct wire_type *t, const void *item)
{
    size_t bytes = t->layout.min_bytes;
    for (size_t i = t->layout.fixed_fields; i < t->field_count; i++) {
        const struct wire_field *f = &t->fields[i];
        if (f->kind == WIRE_STRING || f->kind == WIRE_TEXT) {
            bytes += strlen(member_pointer(item, f->offset));
        } else if (f->kind == WIRE_BYTES) {
            bytes += field_count_of(item, f);
        } else if (f->kind == WIRE_ARGV) {
            char **argv = member_pointer(item, f->offset);
            for (size_t k = 0; k < field_count_of(item, f); k++)
                bytes += WIRE_STRING_LENGTH_BYTES + strlen(argv[k]);
        }
    }
    return bytes;
}

static void put_string(uint8_t **p, const char *s, size_t length_bytes)
{
    size_t length = strlen(s);
    put_le(p, length, length_bytes);
    put_bytes(p, s, length);
}

/* Into the item_wire_bytes the writer reserved for it: the fields that are
 * the item's own bytes in one copy, then the others one by one. */
static void encode_item(const struct wire_type *t, const void *item, uint8_t *p)
{
    const struct wire_layout *l = &t->layout;
    put_bytes(&p, (const uint8_t *)item + l->copied_offset, l->copied_bytes);
    for (size_t i = l->copied_fields; i < t->field_count; i++) {
        const struct wire_field *f = &t->fields[i];
        switch (f->kind) {
        case WIRE_FIXED:
            put_le(&p, member_value(item, f->offset, f->member_bytes), f->wire_bytes);
            break;
        case WIRE_ZERO:
            put_le(&p, 0, f->wire_bytes);
            break;
        case WIRE_STRING:
        case WIRE_TEXT:
            put_string(&p, member_pointer(item, f->offset), wire_length_prefix_bytes(f->kind));
            break;
        case WIRE_BYTES:
            put_bytes(&p, member_pointer(item, f->offset), field_count_of(item, f));
            break;
        case WIRE_ARGV: {
            size_t argc = field_count_of(item, f);
            char **argv = member_pointer(item, f->offset);
            put_le(&p, argc, WIRE_COUNT_BYTES);
            for (size_t k = 0; k < argc; k++)
                put_string(&p, argv[k], WIRE_STRING_LENGTH_BYTES);
            break;
        }
        }
    }
}

/* The count is checked before the array it sizes is allocated. */
static gboolean read_argv(struct reader *r, const struct wire_field *f, void *item, GError **error)
{
    const uint8_t *count_at = reader_take(r, WIRE_COUNT_BYTES);
    if (count_at == NULL)
        return malformed(error, "%s is truncated: needs %u bytes, %zu left", f->count_name,
                         WIRE_COUNT_BYTES, r->left_bytes);
    uint32_t argc = (uint32_t)load_le(count_at, WIRE_COUNT_BYTES);
    if (argc > VIGIL_WIRE_ARGV_MAX)
        return malformed(error, "%s %" PRIu32 " is over the limit of %u", f->count_name, argc,
                         VIGIL_WIRE_ARGV_MAX);
    char **argv = g_new0(char *, (size_t)argc + 1);
    set_member_pointer(item, f->offset, argv);
    set_member_value(item, f->count_offset, f->count_bytes, argc);
    for (uint32_t k = 0; k < argc; k++) {
        char field[32];
        g_snprintf(field, sizeof field, "%s[%" PRIu32 "]", f->name, k);
        if (!read_string(r, field, WIRE_STRING_LENGTH_BYTES, &argv[k], error))
            return FALSE;
    }
    return TRUE;
}

/* `fixed` is the item's fixed part, already bounds-checked; anything of
 * variable length is read from `tail`, checked as it goes. Then the whole
 * item passes its type's check. */
static gboolean decode_item(const struct wire_type *t, const uint8_t *fixed, struct reader *tail,
                            void *item, GError **error)
{
    const struct wire_layout *l = &t->layout;
    if (l->copied_bytes > 0)
        memcpy((uint8_t *)item + l->copied_offset, fixed, l->copied_bytes);
    fixed += l->copied_bytes;
    for (size_t i = l->copied_fields; i < t->field_count; i++) {
        const struct wire_field *f = &t->fields[i];
        switch (f->kind) {
        case WIRE_FIXED:
            set_member_value(item, f->offset, f->member_bytes, load_le(fixed, f->wire_bytes));
            fixed += f->wire_bytes;
            break;
        case WIRE_ZERO: {
            uint64_t reserved = load_le(fixed, f->wire_bytes);
            fixed += f->wire_bytes;
            if (reserved != 0)
                return malformed(error, "reserved field is 0x%0*" PRIx64 ", not 0",
                                 (int)(2 * f->wire_bytes), reserved);
            break;
        }
        case WIRE_STRING:
        case WIRE_TEXT: {
            char *s = NULL;
            if (!read_string(tail, f->name, wire_length_prefix_bytes(f->kind), &s, error))
                return FALSE;
            set_member_pointer(item, f->offset, s);
            break;
        }
        case WIRE_BYTES: {
            size_t length = field_count_of(item, f);
            const uint8_t *bytes = read_bytes(tail, f->name, length, error);
            if (bytes == NULL)
                return FALSE;
            set_member_pointer(item, f->offset, copy_string(bytes, length));
            break;
        }
        case WIRE_ARGV:
            if (!read_argv(tail, f, item, error))
                return FALSE;
            break;
        }
    }
    return t->check(item, error);
}

/* Whatever decode_item got to; argv is NULL-terminated however far it got.
 * What an item owns is in its variable fields. */
static void clear_item(const struct wire_type *t, void *item)
{
    for (size_t i = t->layout.fixed_fields; i < t->field_count; i++) {
        const struct wire_field *f = &t->fields[i];
        if (f->kind == WIRE_ARGV)
            g_strfreev(member_pointer(item, f->offset));
        else
            g_free(member_pointer(item, f->offset));
    }
}

/* ---- messages ------------------------------------------------------------ */

const char *vigil_wire_type_name(unsigned type)
{
    const struct wire_type *t = vigil_wire_type(type);
    return t != NULL ? t->name : NULL;
}

uint32_t vigil_wire_checksum(const uint8_t *message, size_t length)
{
    uLong crc = crc32_z(0, Z_NULL, 0);
    crc = crc32_z(crc, message, MIN(length, (size_t)VIGIL_WIRE_CRC_OFFSET));
    if (length > VIGIL_WIRE_HEADER_BYTES)
        crc = crc32_z(crc, message + VIGIL_WIRE_HEADER_BYTES, length - VIGIL_WIRE_HEADER_BYTES);
    return (uint32_t)crc;
}

/* The message's array of items of type t; NULL for a type without items. */
static uint8_t *message_items(const struct vigil_wire_message *m, const struct wire_type *t)
{
    return t->item_bytes > 0 ? member_pointer(m, t->items_offset) : NULL;
}

/* What `count` items of type t own: a batch's messages theirs, other items
 * what their variable fields point to (items of fixed fields alone own
 * nothing, and are not walked). */
static void clear_items(const struct wire_type *t, uint8_t *items, uint32_t count)
{
    gboolean messages = t->item_count == WIRE_SOME_MESSAGES;
    if (!messages && t->layout.fixed_fields == t->field_count)
        return;
    for (uint32_t i = 0; i < count; i++) {
        void *item = items + (size_t)i * t->item_bytes;
        if (messages)
            vigil_wire_message_clear(item);
        else
            clear_item(t, item);
    }
}

void vigil_wire_message_clear(struct vigil_wire_message *m)
{
    if (m == NULL)
        return;
    const struct wire_type *types = vigil_wire_types();
    for (unsigned type = 1; type <= VIGIL_WIRE_TYPE_COUNT; type++) {
        const struct wire_type *t = &types[type];
        uint8_t *items = message_items(m, t);
        /* Only the array of the message's type holds header.count items. */
        if (items != NULL && type == m->header.type)
            clear_items(t, items, m->header.count);
        g_free(items);
    }
    memset(m, 0, sizeof *m);
}

/* Everything that says whether these bytes are one whole message of this
 * format, before anything in them is trusted. The version is checked only
 * when asked: a peek reads the header of any version, since the header's
 * layout is the same in all of them. */
static gboolean decode_envelope(const uint8_t *b, size_t length, gboolean check_version,
                                struct vigil_wire_header *h, GError **error)
{
    if (length < VIGIL_WIRE_HEADER_BYTES)
        return vigil_wire_fail(error, VIGIL_WIRE_ERROR_TRUNCATED,
                               "message of %zu bytes is shorter than the %u-byte header", length,
                               VIGIL_WIRE_HEADER_BYTES);
    h->magic = (uint32_t)load_le(b + OFFSET_MAGIC, 4);
    if (h->magic != VIGIL_WIRE_MAGIC)
        return malformed(error, "not a vigil message: magic 0x%08x", h->magic);
    h->version = (uint16_t)load_le(b + OFFSET_VERSION, 2);
    if (check_version && h->version != VIGIL_WIRE_VERSION)
        return vigil_wire_fail(error, VIGIL_WIRE_ERROR_VERSION,
                               "wire version %u, this vigil reads version %u", h->version,
                               VIGIL_WIRE_VERSION);
    h->payload_bytes = (uint32_t)load_le(b + OFFSET_PAYLOAD_BYTES, 4);
    if (h->payload_bytes > VIGIL_WIRE_MAX_PAYLOAD_BYTES)
        return vigil_wire_fail(error, VIGIL_WIRE_ERROR_TOO_LARGE,
                               "payload of %u bytes is over the limit of %u", h->payload_bytes,
                               VIGIL_WIRE_MAX_PAYLOAD_BYTES);
    size_t expected_bytes = (size_t)VIGIL_WIRE_HEADER_BYTES + h->payload_bytes;
    if (length != expected_bytes)
        return vigil_wire_fail(error,
                               length < expected_bytes ? VIGIL_WIRE_ERROR_TRUNCATED
                                                       : VIGIL_WIRE_ERROR_MALFORMED,
                               "message of %zu bytes, but its header says %zu (%u of payload)",
                               length, expected_bytes, h->payload_bytes);
    uint32_t stored_crc = (uint32_t)load_le(b + VIGIL_WIRE_CRC_OFFSET, 4);
    uint32_t actual_crc = vigil_wire_checksum(b, length);
    if (stored_crc != actual_crc)
        return vigil_wire_fail(error, VIGIL_WIRE_ERROR_CHECKSUM,
                               "checksum mismatch: header says 0x%08x, the message has 0x%08x",
                               stored_crc, actual_crc);
    h->type = (uint16_t)load_le(b + OFFSET_TYPE, 2);
    h->node_id = load_le(b + OFFSET_NODE_ID, 8);
    h->sequence = load_le(b + OFFSET_SEQUENCE, 8);
    h->count = (uint32_t)load_le(b + OFFSET_COUNT, 4);
    return TRUE;
}

gboolean vigil_wire_peek_header(const void *data, size_t length, struct vigil_wire_header *out,
                                GError **error)
{
    g_return_val_if_fail(out != NULL, FALSE);
    memset(out, 0, sizeof *out);
    g_return_val_if_fail(data != NULL || length == 0, FALSE);
    struct vigil_wire_header header;
    if (!decode_envelope(data, length, FALSE, &header, error))
        return FALSE;
    *out = header;
    return TRUE;
}

static gboolean decode_header(const uint8_t *b, size_t length, struct vigil_wire_header *h,
                              GError **error)
{
    if (!decode_envelope(b, length, TRUE, h, error))
        return FALSE;
    uint32_t reserved = (uint32_t)load_le(b + OFFSET_RESERVED, 4);
    if (reserved != 0)
        return malformed(error, "reserved header field is 0x%08x, not 0", reserved);
    if (vigil_wire_type(h->type) == NULL)
        return malformed(error, "unknown message type %u", h->type);
    return TRUE;
}

static gboolean decode_items(struct reader *r, struct vigil_wire_message *m,
                             const struct wire_type *t, GError **error)
{
    uint32_t count = m->header.count;
    size_t item_min_bytes = t->layout.min_bytes, item_fixed_bytes = t->layout.fixed_bytes;
    /* A count the payload cannot hold must not size an allocation. */
    if (count > r->left_bytes / item_min_bytes)
        return malformed(error,
                         "%s message: %u items need at least %zu bytes each, but only %zu "
                         "payload bytes hold items",
                         t->name, count, item_min_bytes, r->left_bytes);
    /* Zeroed where a failed decode could leave a pointer to free unset,
     * or a byte of the item unwritten. */
    uint8_t *items = t->layout.copies_whole_item ? g_malloc_n(count, t->item_bytes)
                                                 : g_malloc0_n(count, t->item_bytes);
    set_member_pointer(m, t->items_offset, items);
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *fixed = reader_take(r, item_fixed_bytes);
        if (fixed == NULL)
            return malformed(error,
                             "%s message: item %u of %u is truncated: needs %zu bytes, %zu left",
                             t->name, i + 1, count, item_fixed_bytes, r->left_bytes);
        if (!decode_item(t, fixed, r, items + (size_t)i * t->item_bytes, error)) {
            g_prefix_error(error, "%s message: item %u of %u: ", t->name, i + 1, count);
            return FALSE;
        }
    }
    if (r->left_bytes != 0)
        return malformed(error, "%s message: %zu bytes left over after its %u items", t->name,
                         r->left_bytes, count);
    return TRUE;
}

/* How many items a message of this type may hold, whatever they are: an
 * ack none, a node or a refusal exactly one, a batch at least its node. */
static gboolean check_item_count(const struct wire_type *t, uint32_t count, GError **error)
{
    switch (t->item_count) {
    case WIRE_NO_ITEMS:
        if (count != 0)
            return malformed(error, "%s message with %u items; an %s carries none", t->name, count,
                             t->name);
        break;
    case WIRE_ONE_ITEM:
        if (count != 1)
            return malformed(error, "%s message with %u items; it holds exactly one", t->name,
                             count);
        break;
    case WIRE_SOME_MESSAGES:
        if (count == 0)
            return malformed(error,
                             "%s message holds no messages; a batch starts with its node "
                             "message",
                             t->name);
        break;
    case WIRE_ANY_ITEMS:
        break;
    }
    return TRUE;
}

/* Where a message sits in a batch: what its header must agree with. */
struct batch_place {
    uint64_t node_id, sequence;
    uint32_t index; /* from 0 */
};

/* What a batch may hold at that place, judged from the inner message's
 * header alone. The caller names the position. */
static gboolean check_inner_header(const struct vigil_wire_header *inner,
                                   const struct batch_place *place, GError **error)
{
    const struct wire_type *t = vigil_wire_type(inner->type);
    if (t->batch_cannot_hold)
        return malformed(error, "%s message, which a batch cannot hold", t->name);
    if (inner->node_id != place->node_id)
        return malformed(error, "%s message of node %" PRIu64 ", but the batch is of node %" PRIu64,
                         t->name, inner->node_id, place->node_id);
    if (inner->sequence != place->sequence)
        return malformed(error, "%s message with sequence %" PRIu64 ", but the batch's is %" PRIu64,
                         t->name, inner->sequence, place->sequence);
    if (place->index == 0 && inner->type != VIGIL_WIRE_NODE)
        return malformed(error, "%s message first; a batch starts with its node message", t->name);
    if (place->index > 0 && inner->type == VIGIL_WIRE_NODE)
        return malformed(error, "a second node message; a batch has exactly one");
    return TRUE;
}

static gboolean decode_payload(const uint8_t *payload, struct vigil_wire_message *m,
                               GError **error);

/* One whole message, or one of a batch (`place` not NULL; shared by the
 * decoder and the writer): its header is judged before its payload, so a
 * batch inside a batch is refused before it could be decoded (and
 * recurse). `out` is left empty on failure. */
static gboolean decode_message(const uint8_t *bytes, size_t length, const struct batch_place *place,
                               struct vigil_wire_message *out, GError **error)
{
    memset(out, 0, sizeof *out);
    struct vigil_wire_header header;
    if (!decode_header(bytes, length, &header, error))
        return FALSE;
    if (place != NULL && !check_inner_header(&header, place, error))
        return FALSE;
    out->header = header;
    if (decode_payload(bytes + VIGIL_WIRE_HEADER_BYTES, out, error))
        return TRUE;
    vigil_wire_message_clear(out);
    return FALSE;
}

/* A batch's items are whole messages, each after its u32 length. */
static gboolean decode_batch(struct reader *r, struct vigil_wire_message *m, GError **error)
{
    uint32_t count = m->header.count;
    if (count > r->left_bytes / BATCH_ENTRY_MIN_BYTES)
        return malformed(error,
                         "batch message: %u messages need at least %u bytes each, but the "
                         "payload has %zu",
                         count, BATCH_ENTRY_MIN_BYTES, r->left_bytes);
    m->inner = g_new0(struct vigil_wire_message, count);
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *length_bytes = reader_take(r, BATCH_LENGTH_BYTES);
        if (length_bytes == NULL)
            return malformed(error,
                             "batch message: length of message %u of %u is truncated: needs %u "
                             "bytes, %zu left",
                             i + 1, count, BATCH_LENGTH_BYTES, r->left_bytes);
        uint32_t length = (uint32_t)load_le(length_bytes, BATCH_LENGTH_BYTES);
        const uint8_t *bytes = reader_take(r, length);
        if (bytes == NULL)
            return malformed(
                error,
                "batch message: message %u of %u is truncated: its length says %" PRIu32
                " bytes, %zu left",
                i + 1, count, length, r->left_bytes);
        const struct batch_place place = {m->header.node_id, m->header.sequence, i};
        if (!decode_message(bytes, length, &place, &m->inner[i], error)) {
            g_prefix_error(error, "batch message: message %u of %u: ", i + 1, count);
            return FALSE;
        }
    }
    if (r->left_bytes != 0)
        return malformed(error, "batch message: %zu bytes left over after its %u messages",
                         r->left_bytes, count);
    return TRUE;
}

static gboolean decode_payload(const uint8_t *payload, struct vigil_wire_message *m, GError **error)
{
    const struct vigil_wire_header *h = &m->header;
    const struct wire_type *t = vigil_wire_type(h->type);
    if (!check_item_count(t, h->count, error))
        return FALSE;
    struct reader r = {payload, h->payload_bytes};
    if (t->item_count == WIRE_NO_ITEMS) {
        if (h->payload_bytes != 0)
            return malformed(error, "%s message with %u payload bytes; an %s carries none", t->name,
                             h->payload_bytes, t->name);
        return TRUE;
    }
    if (h->type == VIGIL_WIRE_BATCH)
        return decode_batch(&r, m, error);
    if (t->carries_process_id) {
        const uint8_t *p = reader_take(&r, PROCESS_ID_BYTES);
        if (p == NULL)
            return malformed(error,
                             "%s message: payload of %u bytes has no room for the %u-byte "
                             "process id",
                             t->name, h->payload_bytes, PROCESS_ID_BYTES);
        m->process_id = load_le(p, PROCESS_ID_BYTES);
    }
    return decode_items(&r, m, t, error);
}

gboolean vigil_wire_decode(const void *data, size_t length, struct vigil_wire_message *out,
                           GError **error)
{
    g_return_val_if_fail(out != NULL, FALSE);
    memset(out, 0, sizeof *out);
    g_return_val_if_fail(data != NULL || length == 0, FALSE);
    return decode_message(data, length, NULL, out, error);
}

/* ---- the writer ------------------------------------------------------------ */

struct vigil_wire_writer {
    /* The header, then the payload so far. Grown here, not by a
     * GByteArray: g_byte_array_set_size cost an add more than encoding an
     * activity does. */
    uint8_t *bytes;
    size_t length_bytes, capacity_bytes;
    const struct wire_type *t;
    enum vigil_wire_type type;
    uint32_t count;
};

/* `more` bytes after the message so far, for the caller to fill; the room
 * at least doubles when it grows. */
static uint8_t *writer_extend(vigil_wire_writer *w, size_t more)
{
    if (more > w->capacity_bytes - w->length_bytes) {
        w->capacity_bytes = MAX(2 * w->capacity_bytes, w->length_bytes + more);
        w->bytes = g_realloc(w->bytes, w->capacity_bytes);
    }
    uint8_t *p = w->bytes + w->length_bytes;
    w->length_bytes += more;
    return p;
}

vigil_wire_writer *vigil_wire_writer_new(enum vigil_wire_type type, uint64_t node_id,
                                         uint64_t sequence, uint64_t process_id)
{
    const struct wire_type *t = vigil_wire_type(type);
    g_return_val_if_fail(t != NULL, NULL);
    g_return_val_if_fail(t->carries_process_id || process_id == 0, NULL);
    vigil_wire_writer *w = g_new0(vigil_wire_writer, 1);
    w->t = t;
    w->type = type;
    uint8_t *h = writer_extend(w, VIGIL_WIRE_HEADER_BYTES);
    memset(h, 0, VIGIL_WIRE_HEADER_BYTES);
    store_le(h + OFFSET_MAGIC, VIGIL_WIRE_MAGIC, 4);
    store_le(h + OFFSET_VERSION, VIGIL_WIRE_VERSION, 2);
    store_le(h + OFFSET_TYPE, type, 2);
    store_le(h + OFFSET_NODE_ID, node_id, 8);
    store_le(h + OFFSET_SEQUENCE, sequence, 8);
    if (t->carries_process_id)
        store_le(writer_extend(w, PROCESS_ID_BYTES), process_id, PROCESS_ID_BYTES);
    return w;
}

void vigil_wire_writer_free(vigil_wire_writer *w)
{
    if (w == NULL)
        return;
    g_free(w->bytes);
    g_free(w);
}

uint32_t vigil_wire_writer_count(const vigil_wire_writer *w)
{
    g_return_val_if_fail(w != NULL, 0);
    return w->count;
}

/* Space for one more item at the end of the payload, counted. */
static uint8_t *writer_append_item(vigil_wire_writer *w, size_t item_bytes, GError **error)
{
    size_t payload_bytes = w->length_bytes - VIGIL_WIRE_HEADER_BYTES;
    if (item_bytes > VIGIL_WIRE_MAX_PAYLOAD_BYTES - payload_bytes) {
        vigil_wire_fail(error, VIGIL_WIRE_ERROR_TOO_LARGE,
                        "cannot add to the %s message: %zu more bytes would take its payload of "
                        "%zu bytes over the limit of %u",
                        w->t->name, item_bytes, payload_bytes, VIGIL_WIRE_MAX_PAYLOAD_BYTES);
        return NULL;
    }
    w->count++;
    return writer_extend(w, item_bytes);
}

static gboolean refuse(const vigil_wire_writer *w, GError **error)
{
    g_prefix_error(error, "cannot add to the %s message: ", w->t->name);
    return FALSE;
}

/* The one append behind every vigil_wire_add_* of an item: checked as the
 * decoder will check it, then encoded by its type's layout. */
static gboolean writer_add(vigil_wire_writer *w, enum vigil_wire_type type, const void *item,
                           GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == type, FALSE);
    g_return_val_if_fail(item != NULL, FALSE);
    if (w->t->item_count == WIRE_ONE_ITEM && w->count == 1)
        return malformed(error,
                         "cannot add to the %s message: it holds exactly one item, and has it",
                         w->t->name);
    if (!w->t->check(item, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, item_wire_bytes(w->t, item), error);
    if (p == NULL)
        return FALSE;
    encode_item(w->t, item, p);
    return TRUE;
}

/* Every add of an item is that append for its type: one line each. */
#define WIRE_ADD(what, item_struct, type)                                                          \
    gboolean vigil_wire_add_##what(vigil_wire_writer *w, const struct item_struct *item,           \
                                   GError **error)                                                 \
    {                                                                                              \
        return writer_add(w, (type), item, error);                                                 \
    }

WIRE_ADD(activity, vigil_activity, VIGIL_WIRE_ACTIVITIES)
WIRE_ADD(metric, vigil_metric_desc, VIGIL_WIRE_METRICS)
WIRE_ADD(sample, vigil_sample, VIGIL_WIRE_SAMPLES)
WIRE_ADD(anomaly, vigil_wire_anomaly, VIGIL_WIRE_ANOMALIES)
WIRE_ADD(state, vigil_wire_state, VIGIL_WIRE_STATES)
WIRE_ADD(node, vigil_wire_node, VIGIL_WIRE_NODE)
WIRE_ADD(process, vigil_wire_process, VIGIL_WIRE_PROCESSES)
WIRE_ADD(rollup, vigil_wire_rollup, VIGIL_WIRE_ROLLUPS)
WIRE_ADD(window, vigil_wire_window, VIGIL_WIRE_WINDOWS)
WIRE_ADD(summary, vigil_wire_summary, VIGIL_WIRE_SUMMARIES)
WIRE_ADD(refusal, vigil_wire_refusal, VIGIL_WIRE_REFUSED)
WIRE_ADD(job, vigil_wire_job, VIGIL_WIRE_JOBS)
WIRE_ADD(drop, vigil_wire_drop, VIGIL_WIRE_DROPS)
WIRE_ADD(unwatched_end, vigil_wire_unwatched_end, VIGIL_WIRE_UNWATCHED_ENDS)

/* The one add whose item is not passed whole: the path's length is a
 * size_t here and a u16 in the item, so a longer path is refused by its own
 * length before it could be cut to fit. */
gboolean vigil_wire_add_name(vigil_wire_writer *w, uint32_t file_id, const char *path,
                             size_t length, GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_NAMES, FALSE);
    g_return_val_if_fail(path != NULL || length == 0, FALSE);
    if (length > UINT16_MAX) {
        struct vigil_error err;
        vigil_name_check(file_id, path, length, &err); /* over VIGIL_PATH_MAX: refused */
        malformed(error, "%s", err.message);
        return refuse(w, error);
    }
    const struct vigil_wire_name name = {file_id, (uint16_t)length,
                                         (char *)(path != NULL ? path : "")};
    return writer_add(w, VIGIL_WIRE_NAMES, &name, error);
}

/* Where the next message added to a batch writer goes. */
static struct batch_place writer_place(const vigil_wire_writer *w)
{
    const uint8_t *h = w->bytes;
    return (struct batch_place){load_le(h + OFFSET_NODE_ID, 8), load_le(h + OFFSET_SEQUENCE, 8),
                                w->count};
}

/* One whole message into a batch, after its u32 length. */
static gboolean batch_append(vigil_wire_writer *w, const uint8_t *bytes, size_t length,
                             GError **error)
{
    uint8_t *p = writer_append_item(w, BATCH_LENGTH_BYTES + length, error);
    if (p == NULL)
        return FALSE;
    put_le(&p, length, BATCH_LENGTH_BYTES); /* under the payload limit, as it was checked */
    put_bytes(&p, bytes, length);
    return TRUE;
}

/* The message is decoded whole, with the decoder's own batch rules: a
 * batch the writer makes is then one the decoder takes, whatever bytes the
 * caller passed. */
gboolean vigil_wire_add_message(vigil_wire_writer *w, GBytes *message, GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_BATCH, FALSE);
    g_return_val_if_fail(message != NULL, FALSE);
    gsize length;
    const uint8_t *bytes = g_bytes_get_data(message, &length);
    const struct batch_place place = writer_place(w);
    struct vigil_wire_message inner;
    if (!decode_message(bytes, length, &place, &inner, error)) {
        g_prefix_error(error, "cannot add to the batch message: message %u: ", w->count + 1);
        return FALSE;
    }
    vigil_wire_message_clear(&inner);
    return batch_append(w, bytes, length, error);
}

gboolean vigil_wire_add_writer(vigil_wire_writer *w, vigil_wire_writer *inner, GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_BATCH, FALSE);
    g_return_val_if_fail(inner != NULL, FALSE);
    GBytes *message = vigil_wire_writer_finish(inner);
    if (message == NULL)
        return malformed(error, "cannot add to the batch message: message %u could not be finished",
                         w->count + 1);
    /* Its items passed the writer's checks as they were added: only what
     * makes it fit this batch is left to check, not its payload again. */
    gsize length;
    const uint8_t *bytes = g_bytes_get_data(message, &length);
    struct vigil_wire_header header = {
        .type = (uint16_t)load_le(bytes + OFFSET_TYPE, 2),
        .node_id = load_le(bytes + OFFSET_NODE_ID, 8),
        .sequence = load_le(bytes + OFFSET_SEQUENCE, 8),
    };
    const struct batch_place place = writer_place(w);
    gboolean ok = check_inner_header(&header, &place, error);
    if (!ok)
        g_prefix_error(error, "cannot add to the batch message: message %u: ", w->count + 1);
    ok = ok && batch_append(w, bytes, length, error);
    g_bytes_unref(message);
    return ok;
}

GBytes *vigil_wire_writer_finish(vigil_wire_writer *w)
{
    g_return_val_if_fail(w != NULL, NULL);
    GError *error = NULL;
    if (!check_item_count(w->t, w->count, &error)) {
        /* The caller forgot its node or refusal, or built an empty batch. */
        g_critical("vigil_wire_writer_finish: %s", error->message);
        g_error_free(error);
        vigil_wire_writer_free(w);
        return NULL;
    }
    uint8_t *h = w->bytes;
    size_t length = w->length_bytes;
    store_le(h + OFFSET_COUNT, w->count, 4);
    store_le(h + OFFSET_PAYLOAD_BYTES, length - VIGIL_WIRE_HEADER_BYTES, 4);
    store_le(h + VIGIL_WIRE_CRC_OFFSET, vigil_wire_checksum(h, length), 4);
    GBytes *bytes = g_bytes_new_take(h, length);
    g_free(w);
    return bytes;
}

/* ---- re-encoding a decoded message --------------------------------------- */

/* An inner message of a batch, encoded on its own and added whole. Its type
 * is checked first so that a batch in a batch cannot recurse. */
static gboolean add_inner(vigil_wire_writer *w, const struct vigil_wire_message *inner, uint32_t i,
                          GError **error)
{
    if (inner->header.type == VIGIL_WIRE_BATCH)
        return malformed(error,
                         "cannot add to the batch message: message %u: batch message, "
                         "which a batch cannot hold",
                         i + 1);
    GBytes *bytes = vigil_wire_encode_message(inner, error);
    if (bytes == NULL) {
        g_prefix_error(error, "cannot add to the batch message: message %u: ", i + 1);
        return FALSE;
    }
    gboolean ok = vigil_wire_add_message(w, bytes, error);
    g_bytes_unref(bytes);
    return ok;
}

GBytes *vigil_wire_encode_message(const struct vigil_wire_message *m, GError **error)
{
    g_return_val_if_fail(m != NULL, NULL);
    unsigned type = m->header.type;
    const struct wire_type *t = vigil_wire_type(type);
    if (t == NULL) {
        malformed(error, "cannot encode a message of unknown type %u", type);
        return NULL;
    }
    if (!t->carries_process_id && m->process_id != 0) {
        malformed(error, "a %s message carries no process id, but it is %llu", t->name,
                  (unsigned long long)m->process_id);
        return NULL;
    }
    if (!check_item_count(t, m->header.count, error))
        return NULL;
    const uint8_t *items = message_items(m, t);
    if (m->header.count > 0 && items == NULL) {
        malformed(error, "a %s message of %u items without its items", t->name, m->header.count);
        return NULL;
    }
    vigil_wire_writer *w =
        vigil_wire_writer_new(type, m->header.node_id, m->header.sequence, m->process_id);
    for (uint32_t i = 0; i < m->header.count; i++) {
        const void *item = items + (size_t)i * t->item_bytes;
        gboolean ok = type == VIGIL_WIRE_BATCH ? add_inner(w, item, i, error)
                                               : writer_add(w, type, item, error);
        if (!ok) {
            vigil_wire_writer_free(w);
            return NULL;
        }
    }
    return vigil_wire_writer_finish(w);
}
