/* libFuzzer target for the wire decoder.
 *
 * Whatever the decoder accepts must be canonical: encoding the decoded
 * message again gives back exactly the input. Anything else means two byte
 * strings decode to the same message, or the decoder kept something the
 * writer would refuse. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vigil/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void store_u32_le(uint8_t *p, uint32_t v)
{
    for (unsigned i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t load_u32_le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The messages inside a batch carry CRCs of their own: fixed as well, as
 * far as the batch's lengths can be followed, so that the fuzzer reaches
 * the inner messages' payloads too. */
static void reseal_batch_messages(uint8_t *input, size_t size)
{
    if (size < VIGIL_WIRE_HEADER_BYTES || (input[6] | (unsigned)input[7] << 8) != VIGIL_WIRE_BATCH)
        return;
    size_t at = VIGIL_WIRE_HEADER_BYTES;
    while (size - at >= 4) {
        uint32_t length = load_u32_le(input + at);
        at += 4;
        if (length > size - at)
            return;
        if (length >= VIGIL_WIRE_HEADER_BYTES)
            store_u32_le(input + at + VIGIL_WIRE_CRC_OFFSET,
                         vigil_wire_checksum(input + at, length));
        at += length;
    }
}

static void check_round_trip(const struct vigil_wire_message *m, const uint8_t *input, size_t size)
{
    GError *error = NULL;
    GBytes *again = vigil_wire_encode_message(m, &error);
    if (again == NULL)
        abort(); /* the decoder accepted what the writer refuses */
    gsize again_size;
    const uint8_t *again_data = g_bytes_get_data(again, &again_size);
    if (again_size != size || memcmp(again_data, input, size) != 0)
        abort(); /* not canonical */
    g_bytes_unref(again);
}

static gboolean message_is_empty(const struct vigil_wire_message *m)
{
    static const struct vigil_wire_message zero;
    return memcmp(m, &zero, sizeof zero) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy exactly as long as the input, so that ASan sees any read past
     * its end, and writable for the CRC. */
    uint8_t *input = g_malloc(size > 0 ? size : 1);
    if (size > 0)
        memcpy(input, data, size);
    /* Random bytes almost never carry a matching CRC-32: without this the
     * fuzzer would spend its time on the checksum and never reach the
     * payload parser. */
    reseal_batch_messages(input, size);
    if (size >= VIGIL_WIRE_HEADER_BYTES)
        store_u32_le(input + VIGIL_WIRE_CRC_OFFSET, vigil_wire_checksum(input, size));

    struct vigil_wire_message m;
    GError *error = NULL;
    if (vigil_wire_decode(input, size, &m, &error)) {
        check_round_trip(&m, input, size);
        vigil_wire_message_clear(&m);
    } else {
        if (error == NULL || error->message[0] == '\0' || !message_is_empty(&m))
            abort();
        g_error_free(error);
    }
    g_free(input);
    return 0;
}
