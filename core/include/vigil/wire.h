/* vigil — the wire format between vigild and vigil-txd (and the disk spool).
 *
 * A message is a 40-byte header followed by a payload of `count` items of
 * one type. Every integer is little-endian, every float an IEEE-754 double,
 * every string a 16-bit length followed by that many bytes (no NUL). The
 * header carries a CRC-32 of the whole message: spool files sit on disks and
 * a flipped bit in an offset would otherwise decode as a different, valid
 * message and change data silently.
 *
 *   offset  size  field
 *        0     4  magic "VGWR"
 *        4     2  version (VIGIL_WIRE_VERSION)
 *        6     2  type (enum vigil_wire_type)
 *        8     8  node id
 *       16     8  sequence: per node, for exactly-once ingest
 *       24     4  count of items in the payload
 *       28     4  payload bytes
 *       32     4  reserved, zero
 *       36     4  CRC-32 (zlib) of bytes 0..35 and the payload
 *
 * The decoder checks every length before it reads and returns an error
 * naming what is wrong for any malformed input; it never reads outside the
 * buffer it is given. */
#ifndef VIGIL_WIRE_H
#define VIGIL_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#include "vigil/activity.h"
#include "vigil/metric.h"

#define VIGIL_WIRE_MAGIC             0x52574756u /* "VGWR" read as a little-endian u32 */
#define VIGIL_WIRE_VERSION           1u
#define VIGIL_WIRE_HEADER_BYTES      40u
#define VIGIL_WIRE_CRC_OFFSET        36u
#define VIGIL_WIRE_MAX_PAYLOAD_BYTES (64u << 20)
#define VIGIL_WIRE_STRING_MAX        65535u

enum vigil_wire_type {
    VIGIL_WIRE_ACTIVITIES = 1, /* process id, then activity records */
    VIGIL_WIRE_NAMES = 2,      /* process id, then interned paths */
    VIGIL_WIRE_METRICS = 3,    /* metric descriptors (the catalogue) */
    VIGIL_WIRE_SAMPLES = 4,    /* statistics samples */
    VIGIL_WIRE_ANOMALIES = 5,  /* issues reported by anomaly plugins */
    VIGIL_WIRE_STATES = 6,     /* reasoner states */
    VIGIL_WIRE_ACK = 7,        /* the header's (node, sequence) was committed; no payload */
};
#define VIGIL_WIRE_TYPE_COUNT 7

struct vigil_wire_header {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint64_t node_id;
    uint64_t sequence;
    uint32_t count;
    uint32_t payload_bytes;
};

struct vigil_wire_name {
    uint32_t file_id;
    uint16_t length;
    char *path; /* NUL-terminated copy */
};

/* One issue from an anomaly-detection plugin. */
struct vigil_wire_anomaly {
    uint64_t cycle;
    uint64_t process_id; /* 0 when the issue is about the node */
    uint8_t level;       /* enum vigil_level of the reasoner it went to */
    uint8_t health;      /* enum vigil_health */
    double value;
    double expected_min; /* -inf when unbounded below */
    double expected_max; /* +inf when unbounded above */
    char *plugin;        /* "energy-efficiency" */
    char *metric;        /* "energy.pkg0_j", or an operation: "posix.write" */
    char *message;
};

/* One reasoner's decision for one cycle. */
struct vigil_wire_state {
    uint64_t cycle;
    uint64_t process_id;      /* 0 for the node and system reasoners */
    uint8_t level;            /* enum vigil_level */
    uint8_t health;           /* enum vigil_health */
    uint32_t overloaded_mask; /* one bit per utilisation category over max_load */
    uint32_t bad_issues;
    uint32_t good_issues;
    uint32_t other_issues;
};

/* A decoded message; the array matching header.type holds header.count
 * items. Free with vigil_wire_message_clear. */
struct vigil_wire_message {
    struct vigil_wire_header header;
    uint64_t process_id; /* ACTIVITIES and NAMES */
    struct vigil_activity *activities;
    struct vigil_wire_name *names;
    struct vigil_metric_desc *metrics;
    struct vigil_sample *samples;
    struct vigil_wire_anomaly *anomalies;
    struct vigil_wire_state *states;
};

#define VIGIL_WIRE_ERROR (vigil_wire_error_quark())
GQuark vigil_wire_error_quark(void);

enum vigil_wire_error_code {
    VIGIL_WIRE_ERROR_TRUNCATED, /* shorter than its header says */
    VIGIL_WIRE_ERROR_MALFORMED, /* a field or length that cannot be right */
    VIGIL_WIRE_ERROR_VERSION,   /* another version of the format */
    VIGIL_WIRE_ERROR_CHECKSUM,  /* changed in transit or on disk */
    VIGIL_WIRE_ERROR_TOO_LARGE, /* over VIGIL_WIRE_MAX_PAYLOAD_BYTES */
};

/* Decodes and validates one whole message. On failure `out` is left empty
 * and error says what is wrong and where. */
gboolean vigil_wire_decode(const void *data, size_t length, struct vigil_wire_message *out,
                           GError **error);
void vigil_wire_message_clear(struct vigil_wire_message *message);

/* The CRC the header must carry for this message (bytes 36..39 ignored). */
uint32_t vigil_wire_checksum(const uint8_t *message, size_t length);

const char *vigil_wire_type_name(unsigned type); /* "activities"; NULL if unknown */

/* Building a message: new, then one add per item, then finish. An add
 * refuses (FALSE, error set) an item the decoder would reject, so nothing
 * malformed is ever sent. */
typedef struct vigil_wire_writer vigil_wire_writer;

vigil_wire_writer *vigil_wire_writer_new(enum vigil_wire_type type, uint64_t node_id,
                                         uint64_t sequence, uint64_t process_id);
gboolean vigil_wire_add_activity(vigil_wire_writer *w, const struct vigil_activity *activity,
                                 GError **error);
gboolean vigil_wire_add_name(vigil_wire_writer *w, uint32_t file_id, const char *path,
                             size_t length, GError **error);
gboolean vigil_wire_add_metric(vigil_wire_writer *w, const struct vigil_metric_desc *metric,
                               GError **error);
gboolean vigil_wire_add_sample(vigil_wire_writer *w, const struct vigil_sample *sample,
                               GError **error);
gboolean vigil_wire_add_anomaly(vigil_wire_writer *w, const struct vigil_wire_anomaly *anomaly,
                                GError **error);
gboolean vigil_wire_add_state(vigil_wire_writer *w, const struct vigil_wire_state *state,
                              GError **error);
uint32_t vigil_wire_writer_count(const vigil_wire_writer *w);
/* Seals the header (count, length, CRC) and frees the writer. */
GBytes *vigil_wire_writer_finish(vigil_wire_writer *w);
void vigil_wire_writer_free(vigil_wire_writer *w);

/* Builds a message from a decoded one (or one filled in the same way): its
 * header's type, node id, sequence and count, its process id and its items;
 * magic, version and payload bytes are recomputed. A decoded message encodes
 * back to exactly the bytes it was decoded from. Returns NULL and sets error
 * for an item the writer refuses or an inconsistent message. */
GBytes *vigil_wire_encode_message(const struct vigil_wire_message *m, GError **error);

#endif
