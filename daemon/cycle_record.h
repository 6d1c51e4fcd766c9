/* vigild — the cycle recording: what the reasoner tree was fed and what it
 * decided, in a compact binary file ([daemon] record), for `vigil tune` to
 * replay offline through the same ADPIs and reasoners (reasoning.c).
 *
 * The file: a 16-byte header ("VIGILREC", u32 format version, u32 0), then
 * records, each
 *
 *     u8 type | u32 payload length | payload | u32 CRC-32 of the three before
 *
 * (integers little-endian; in payloads, unsigned integers are LEB128
 * varints, signed ones zigzag varints, doubles 8 bytes, strings a varint
 * length and their bytes). Records come in the order the reasoning module's
 * entry points were called, so a replay calls them again in that order:
 *
 *   START     the first cycle's start, the daemon's version; from version
 *             2 also the node's name (vigild's hostname) and the offset of
 *             wall-clock time from the monotonic clock that every time in
 *             the file is on, so that a recording copied elsewhere still
 *             says where and when it was made
 *   CONFIG    the effective [daemon], [capture], [reasoner.*] and [adpi.*]
 *             sections (vigil_config_to_string), at start and each reload
 *   METRIC    a metric the catalogue got since the last record (id, kind,
 *             origin, name, unit, source): ids are replayed as they were
 *   SAMPLES   one tick's node and process samples and each process's
 *             energy share as reasoning.c read it
 *   PROCESS   a process registered / ended
 *   ACTIVITIES  consecutive activities of one process, delta-encoded
 *   CYCLE     a cycle's end (time, judged or not, the system's state) and
 *             every decision made then, with its issues
 *   LIMIT     record_max_bytes was reached: nothing follows
 *   END       vigild stopped cleanly
 *
 * A version change of the format bumps VIGILD_RECORD_VERSION; a reader
 * reads every version from VIGILD_RECORD_VERSION_OLDEST and refuses
 * others, naming them. */
#ifndef VIGILD_CYCLE_RECORD_H
#define VIGILD_CYCLE_RECORD_H

#include <stdint.h>
#include <stdio.h>
#include <glib.h>

#include "vigil/activity.h"
#include "vigil/config.h"
#include "vigil/metric.h"

#define VIGILD_RECORD_MAGIC          "VIGILREC"
#define VIGILD_RECORD_VERSION        2u
#define VIGILD_RECORD_VERSION_OLDEST 1u
#define VIGILD_RECORD_HEADER_BYTES   16u
/* type + length before a payload, CRC after it */
#define VIGILD_RECORD_FRAME_BYTES 9u
/* No record is larger: a length beyond it is corruption, not a big record. */
#define VIGILD_RECORD_PAYLOAD_MAX (64u << 20)

/* The record types: VIGILD_RECORD_<name>, their number in a recording
 * and their name in its problems (vigild_record_type_name). */
#define VIGILD_RECORD_TYPES(X)                                                                     \
    X(START, 1)                                                                                    \
    X(CONFIG, 2)                                                                                   \
    X(METRIC, 3)                                                                                   \
    X(SAMPLES, 4)                                                                                  \
    X(PROCESS_ADD, 5)                                                                              \
    X(PROCESS_END, 6)                                                                              \
    X(ACTIVITIES, 7)                                                                               \
    X(CYCLE, 8)                                                                                    \
    X(LIMIT, 9)                                                                                    \
    X(END, 10)
enum vigild_record_type {
#define VIGILD_RECORD_TYPE(name, number) VIGILD_RECORD_##name = number,
    VIGILD_RECORD_TYPES(VIGILD_RECORD_TYPE)
#undef VIGILD_RECORD_TYPE
};
#define VIGILD_RECORD_TYPE_MAX 10

const char *vigild_record_type_name(unsigned type);

/* The sections a recording keeps of the configuration: what the replay
 * needs, and nothing of [warehouse] or [uplink] (passwords, keys). */
gboolean vigild_record_section_kept(const char *section);
/* `config` as INI text, only its kept sections. g_free it. */
char *vigild_record_config_text(const vigil_config *config);

/* ---- writing (vigild) ------------------------------------------------------ */

struct vigild_tick_samples;
struct vigild_energy_share;
struct vigild_reasoning;
struct vigild_cycle_verdicts;

struct vigild_cycle_record;

/* Opens (truncates) `path`; at most `max_bytes` are written, then a LIMIT
 * record and nothing more (logged once). `node` is the name vigild gives
 * the warehouse. NULL with error set. */
struct vigild_cycle_record *vigild_cycle_record_open(const char *path, uint64_t max_bytes,
                                                     uint64_t first_cycle_start_ns,
                                                     const char *node, GError **error);
void vigild_cycle_record_config(struct vigild_cycle_record *w, const vigil_config *config);
void vigild_cycle_record_samples(struct vigild_cycle_record *w,
                                 const struct vigild_tick_samples *samples,
                                 const vigil_metric_catalog *catalog,
                                 const struct vigild_energy_share *energy);
void vigild_cycle_record_process(struct vigild_cycle_record *w, uint64_t process_id,
                                 gboolean ended);
void vigild_cycle_record_activity(struct vigild_cycle_record *w, uint64_t process_id,
                                  const struct vigil_activity *activity);
/* The cycle just decided: its inputs and every verdict in `v`. */
void vigild_cycle_record_cycle(struct vigild_cycle_record *w, const struct vigild_reasoning *r,
                               gboolean judge, const struct vigild_cycle_verdicts *v);
/* Writes END, closes and frees. */
void vigild_cycle_record_close(struct vigild_cycle_record *w);
/* Bytes written so far, and whether the bound stopped it. */
uint64_t vigild_cycle_record_bytes(const struct vigild_cycle_record *w);
gboolean vigild_cycle_record_limited(const struct vigild_cycle_record *w);
const char *vigild_cycle_record_path(const struct vigild_cycle_record *w);

/* ---- reading (vigil tune, tests) -------------------------------------------- */

#define VIGILD_RECORD_ERROR (g_quark_from_static_string("vigild-record-error"))
enum vigild_record_error_code {
    VIGILD_RECORD_ERROR_IO,
    VIGILD_RECORD_ERROR_FORMAT,    /* not a recording, or a version not known */
    VIGILD_RECORD_ERROR_TRUNCATED, /* the file ends inside a record */
    VIGILD_RECORD_ERROR_CORRUPT,   /* a checksum, a length or a field is wrong */
};

/* A whole recording in memory, read record by record. */
struct vigild_record_reader {
    char *path;
    uint32_t version; /* the file's format version */
    guint8 *data;
    gsize size;
    gsize offset; /* of the next record */
};

/* Reads `path` and checks its header. FALSE with error set. */
gboolean vigild_record_reader_open(struct vigild_record_reader *r, const char *path,
                                   GError **error);
void vigild_record_reader_clear(struct vigild_record_reader *r);

/* One record's payload, being decoded. */
struct vigild_record_payload {
    unsigned type;
    uint32_t version; /* the file's format version */
    gsize offset;     /* of the record in the file, for errors */
    const guint8 *data;
    gsize size, at;
    gboolean bad; /* a read ran past the end or met a bad value */
    const char *bad_what;
};

/* The next record, its frame and checksum checked: TRUE with `out` set;
 * FALSE at the end (error not set) or on a problem (error set, naming the
 * offset). */
gboolean vigild_record_next(struct vigild_record_reader *r, struct vigild_record_payload *out,
                            GError **error);

uint64_t vigild_payload_u64(struct vigild_record_payload *p, const char *what);
int64_t vigild_payload_i64(struct vigild_record_payload *p, const char *what);
double vigild_payload_double(struct vigild_record_payload *p, const char *what);
guint8 vigild_payload_u8(struct vigild_record_payload *p, const char *what);
/* A string in the payload (NUL-terminated copy): g_free it. */
char *vigild_payload_string(struct vigild_record_payload *p, const char *what);
/* After decoding: an error when a read failed or bytes are left over. */
gboolean vigild_payload_done(struct vigild_record_payload *p, GError **error);

/* The activities of an ACTIVITIES record, decoded into `out` (struct
 * vigil_activity). */
uint64_t vigild_payload_activities(struct vigild_record_payload *p, GArray *out);

#endif
