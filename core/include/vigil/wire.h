/* vigil — the wire format between vigild and vigil-txd (and the disk spool).
 *
 * A message is a 40-byte header followed by a payload of `count` items of
 * one type. Every integer is little-endian, every float an IEEE-754 double,
 * every string a 16-bit length followed by that many bytes (no NUL), every
 * text (a long string) a 32-bit length followed by at most
 * VIGIL_WIRE_TEXT_MAX bytes (no NUL). The header carries a CRC-32 of the
 * whole message: spool files sit on disks and a flipped bit in an offset
 * would otherwise decode as a different, valid message and change data
 * silently.
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
 * The header is frozen: every version of the format keeps these fields at
 * these offsets with these meanings (a version that needs more carries it
 * in its payload). So a reader can check the frame and name the version,
 * node and sequence of a message it cannot read (vigil_wire_peek_header),
 * and refuse it by name instead of dropping it.
 *
 * Version 2 adds the uplink's types. Their strings and texts are stored in
 * the warehouse as PostgreSQL text: they must be valid UTF-8, and the
 * writer refuses anything else (vigild passes bytes from a process through
 * g_utf8_make_valid first); the decoder refuses invalid UTF-8 and NUL
 * bytes. The version-1 types keep their rules (a name's path is bytes).
 * Version-1 messages are refused with VIGIL_WIRE_ERROR_VERSION.
 *
 * Items of version 2 (offsets within the item; then the variable part):
 *   node      0 i64 realtime_offset_ns, 8 u64 cycle, 16 u64 cycle_start_ns,
 *             24 u64 cycle_end_ns, 32 u32 cycle_ms, 36 u32 reserved;
 *             string hostname
 *   process   0 u64 process_id, 8 i32 pid, 12 u32 uid, 16 i32 rank,
 *             20 i32 exit_code, 24 u64 start_ns, 32 u64 end_ns;
 *             strings run_key, job, program, cwd; u32 argc; argc strings
 *   rollup    0 u32 metric_id, 4 u32 flags, 8 u64 start_ns, 16 u64 end_ns,
 *             24 u32 count, 28 u32 reserved, 32 f64 min, 40 f64 mean,
 *             48 f64 max, 56 f64 delta
 *   window    0 u64 process_id, 8 u64 first_cycle, 16 u64 last_cycle,
 *             24 u64 start_ns, 32 u64 end_ns, 40 u64 activities_forwarded;
 *             text reasons
 *   summary   0 u64 process_id; text report_json
 *   refusal   text reason
 *   job       0 u64 begin_ns, 8 u64 end_ns, 16 u32 uid, 20 u32 flags;
 *             strings job_id, step_id, user, nodes
 *   drop      0 i32 pid, 4 u32 reserved, 8 u64 start_ns, 16 u64 counter,
 *             24 u64 activities, 32 u64 batches
 *   unwatched_end
 *             0 u64 process_id, 8 u64 earliest_end_ns, 16 u64 latest_end_ns,
 *             24 u64 activities, 32 u64 dropped, 40 u64 seq_gaps,
 *             48 f64 cpu_s, 56 f64 energy_j, 64 u32 flags, 68 u32 reserved
 * A BATCH's payload is `count` times (u32 length, one whole message with
 * its own header and CRC). ACTIVITIES and NAMES begin their payload with
 * the u64 process id; no other type does.
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
#define VIGIL_WIRE_VERSION           2u
#define VIGIL_WIRE_HEADER_BYTES      40u
#define VIGIL_WIRE_CRC_OFFSET        36u
#define VIGIL_WIRE_MAX_PAYLOAD_BYTES (64u << 20)
#define VIGIL_WIRE_STRING_MAX        65535u
#define VIGIL_WIRE_TEXT_MAX          (1u << 20) /* a long text: u32 length, then the bytes */
/* Arguments in a process item: as many as a REGISTER message
 * (VIGIL_LOCAL_MAX_BYTES) can hold, so that no process's argv is cut here. */
#define VIGIL_WIRE_ARGV_MAX 16384u

enum vigil_wire_type {
    VIGIL_WIRE_ACTIVITIES = 1, /* process id, then activity records */
    VIGIL_WIRE_NAMES = 2,      /* process id, then interned paths */
    VIGIL_WIRE_METRICS = 3,    /* metric descriptors (the catalogue) */
    VIGIL_WIRE_SAMPLES = 4,    /* statistics samples */
    VIGIL_WIRE_ANOMALIES = 5,  /* issues reported by anomaly plugins */
    VIGIL_WIRE_STATES = 6,     /* reasoner states */
    VIGIL_WIRE_ACK = 7,        /* the header's (node, sequence) was committed; no payload */
    /* Version 2: the uplink between vigild and vigil-txd. */
    VIGIL_WIRE_BATCH = 8,      /* a container: `count` whole messages of the same (node, seq) */
    VIGIL_WIRE_NODE = 9,       /* one item: the sending node and the batch's cycle */
    VIGIL_WIRE_PROCESSES = 10, /* the processes the batch's other items refer to */
    VIGIL_WIRE_ROLLUPS = 11,   /* 1 s statistics roll-ups */
    VIGIL_WIRE_WINDOWS = 12,   /* captured windows: which cycles were forwarded, and why */
    VIGIL_WIRE_SUMMARIES = 13, /* a process's end-of-run report, as its JSON */
    VIGIL_WIRE_REFUSED = 14, /* txd → vigild: the header's batch can never be stored; one text */
    VIGIL_WIRE_JOBS = 15,    /* scheduler jobs and steps that began or ended on the node */
    VIGIL_WIRE_DROPS = 16, /* forwarded activities vigild's uplink or spool dropped, per process */
    /* Processes that ended while no vigild watched them: the bounds of
     * their end and what vigild had counted of them. */
    VIGIL_WIRE_UNWATCHED_ENDS = 17,
};
#define VIGIL_WIRE_TYPE_COUNT 17

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

/* NODE: exactly one per batch, its first message, and exactly one item.
 * Every time in the batch is the node's CLOCK_MONOTONIC ns; realtime =
 * monotonic + offset. Valid: reserved 0, cycle_ms >= 1, cycle_end_ns >=
 * cycle_start_ns, a hostname that is not empty. */
struct vigil_wire_node {
    int64_t realtime_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC when the batch was made */
    uint64_t cycle;             /* the cycle the batch closes (its states and anomalies) */
    uint64_t cycle_start_ns, cycle_end_ns;
    uint32_t cycle_ms;
    uint32_t reserved; /* zero */
    char *hostname;
};

/* PROCESSES: what vigild knows of a process. process_id is the daemon's
 * name for it (unique on the node while vigild runs); the warehouse keys a
 * process by (node, pid, start). Valid: process_id != 0, pid > 0, rank >=
 * -1, exit_code -1..255, end_ns 0 or >= start_ns, a run_key that is not
 * empty, argc <= VIGIL_WIRE_ARGV_MAX. */
struct vigil_wire_process {
    uint64_t process_id;
    int32_t pid;
    uint32_t uid;
    int32_t rank;      /* -1 when not an MPI process */
    int32_t exit_code; /* -1 unknown; else as wait(2) would give WEXITSTATUS, or 128+signal */
    uint64_t start_ns; /* monotonic, as all times */
    uint64_t end_ns;   /* 0 while it runs */
    char *run_key;     /* groups processes into a run: VIGIL_RUN_ID, MPI job, or own */
    char *job;         /* scheduler job id, "" for none */
    char *program;
    char *cwd;
    uint32_t argc;
    char **argv; /* argc strings; decoded, also NULL-terminated (g_strfreev) */
};

/* ROLLUPS: one metric over one roll-up window (daemon/rollup.c). Valid:
 * metric_id != 0, known flags, reserved 0, end_ns >= start_ns, count >= 1
 * (a window without a value is not sent), min, mean and max not NaN, and
 * when all three are finite, min <= max and mean within [min, max] give
 * or take its rounding (count ulps of the larger of |min|, |max|): a mean
 * computed as sum / count can land a hair outside. */
struct vigil_wire_rollup {
    uint32_t metric_id; /* described by a METRICS message in the same batch */
    uint32_t flags;     /* VIGIL_SAMPLE_UNCERTAIN when a sample in it was */
    uint64_t start_ns, end_ns;
    uint32_t count;
    uint32_t reserved; /* zero */
    double min, mean, max;
    double delta; /* counters only; NaN for gauges */
};

/* WINDOWS: a captured window, sent with (or after) its last cycle. Valid:
 * first_cycle <= last_cycle, end_ns >= start_ns. */
struct vigil_wire_window {
    uint64_t process_id; /* 0 for the node's own window */
    uint64_t first_cycle, last_cycle;
    uint64_t start_ns, end_ns;
    uint64_t activities_forwarded;
    char *reasons; /* a long text: "process ABNORMAL_BAD (latency-histogram: …)", lines
                      joined by "\n" */
};

/* SUMMARIES: the process's end-of-run report in its JSON form (the one
 * VIGIL_REPORT_FORMAT=json writes), so `vigil report RUN` can print it again.
 * Valid: process_id != 0, report_json not empty (not parsed here: the
 * warehouse's jsonb does, and a batch it refuses is REFUSED). */
struct vigil_wire_summary {
    uint64_t process_id;
    char *report_json; /* a long text: up to VIGIL_WIRE_TEXT_MAX bytes */
};

/* REFUSED: why vigil-txd will never store the batch named by the header;
 * exactly one item. Sent, like an ACK, with the (node, sequence) of the
 * batch it answers. */
struct vigil_wire_refusal {
    char *reason; /* a long text, not empty */
};

/* JOBS: a scheduler job, or one step of it, as its notices to vigild told
 * (daemon/jobs.c). A time is 0 when not told in this item: an end's item
 * leaves the begin its earlier batch gave. Valid: job_id not empty, end_ns
 * 0 or >= begin_ns (when both are known), known flags. The flags word was
 * a reserved zero before VIGIL_WIRE_JOB_FROM_ROOT: a vigil-txd older than
 * it refuses a batch with root's notice in it, so vigil-txd is upgraded
 * first. */
struct vigil_wire_job {
    uint64_t begin_ns, end_ns; /* monotonic, as all times */
    uint32_t uid;              /* UINT32_MAX: not known */
    uint32_t flags;            /* enum vigil_wire_job_flags */
    char *job_id;
    char *step_id; /* "" for the whole job */
    char *user;    /* "" when not known */
    char *nodes;   /* the scheduler's node list, "" when not known */
};

enum vigil_wire_job_flags {
    /* Root or vigild's own user told it (the prolog, the SPANK plugin),
     * not the job's user: only this may set a job's uid, user, node list,
     * begin and end for good. The top bit: new flags come from the top. */
    VIGIL_WIRE_JOB_FROM_ROOT = 1u << 31,
};

/* DROPS (type 16, added like JOBS without a version change: an older
 * vigil-txd refuses a batch holding one, by type): what one vigild's
 * uplink and spool dropped of a process's forwarded activities (a bound
 * reached, a batch lost), cumulative since that vigild started counting.
 * The process is named as the warehouse keys it (the node's, pid, start),
 * not by a process id the batch describes: the batches that described it
 * may be the ones dropped. `counter` names the count (the first sequence
 * of the vigild that keeps it): the warehouse keeps the highest figures
 * per counter and adds the counters, so a later batch's figure replaces an
 * earlier one's, whatever order they come in. Valid: pid > 0, counter >
 * 0, reserved 0. */
struct vigil_wire_drop {
    int32_t pid;
    uint32_t reserved; /* zero */
    uint64_t start_ns; /* the process's monotonic start, as its PROCESSES item says */
    uint64_t counter;
    uint64_t activities; /* forwarded activities dropped */
    uint64_t batches;    /* batches dropped that held some of them */
};

/* UNWATCHED_ENDS (type 17, added without a version change like JOBS: an
 * older vigil-txd refuses a batch holding one, by type): a process that
 * ended while no vigild ran. The batch's PROCESSES item for it says it
 * ended at latest_end_ns (when a vigild found it gone); it ended no
 * earlier than earliest_end_ns (when a vigild last saw it running). Its
 * report never reached a vigild, so what vigild counted of it is here:
 * activities drained, records its ring dropped, sequence gaps, its CPU time
 * and energy share (NaN: not known). Valid: process_id != 0, latest_end_ns
 * != 0, earliest_end_ns <= latest_end_ns, known flags, reserved 0, cpu_s and
 * energy_j NaN or finite and not negative. */
enum vigil_wire_unwatched_end_flags {
    VIGIL_WIRE_UNWATCHED_ENERGY_ESTIMATED = 1u << 0,
    VIGIL_WIRE_UNWATCHED_ENERGY_UNCERTAIN = 1u << 1,
    /* What its ring held after the last vigild's last commit was read: the
     * ring was still reachable (else it went with the process). */
    VIGIL_WIRE_UNWATCHED_RING_READ = 1u << 2,
};
struct vigil_wire_unwatched_end {
    uint64_t process_id;
    uint64_t earliest_end_ns, latest_end_ns; /* monotonic, as all times */
    uint64_t activities, dropped, seq_gaps;
    double cpu_s, energy_j;
    uint32_t flags;    /* enum vigil_wire_unwatched_end_flags */
    uint32_t reserved; /* zero */
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
    struct vigil_wire_node *nodes;
    struct vigil_wire_process *processes;
    struct vigil_wire_rollup *rollups;
    struct vigil_wire_window *windows;
    struct vigil_wire_summary *summaries;
    struct vigil_wire_refusal *refusals;
    struct vigil_wire_job *jobs;
    struct vigil_wire_drop *drops;
    struct vigil_wire_unwatched_end *unwatched_ends;
    /* BATCH: its `count` inner messages, decoded. An inner message has the
     * batch's node and sequence and is neither a BATCH, an ACK nor REFUSED. */
    struct vigil_wire_message *inner;
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
gboolean vigil_wire_add_node(vigil_wire_writer *w, const struct vigil_wire_node *node,
                             GError **error);
gboolean vigil_wire_add_process(vigil_wire_writer *w, const struct vigil_wire_process *process,
                                GError **error);
gboolean vigil_wire_add_rollup(vigil_wire_writer *w, const struct vigil_wire_rollup *rollup,
                               GError **error);
gboolean vigil_wire_add_window(vigil_wire_writer *w, const struct vigil_wire_window *window,
                               GError **error);
gboolean vigil_wire_add_summary(vigil_wire_writer *w, const struct vigil_wire_summary *summary,
                                GError **error);
gboolean vigil_wire_add_job(vigil_wire_writer *w, const struct vigil_wire_job *job, GError **error);
gboolean vigil_wire_add_drop(vigil_wire_writer *w, const struct vigil_wire_drop *drop,
                             GError **error);
gboolean vigil_wire_add_unwatched_end(vigil_wire_writer *w,
                                      const struct vigil_wire_unwatched_end *end, GError **error);
gboolean vigil_wire_add_refusal(vigil_wire_writer *w, const struct vigil_wire_refusal *refusal,
                                GError **error);
/* BATCH: adds one whole message (from vigil_wire_writer_finish) whose
 * header has the batch's node and sequence: a NODE message first, then any
 * but BATCH, ACK, REFUSED and another NODE. The message is decoded to check
 * it, so bytes from anywhere are safe to pass; refused as the decoder would
 * refuse them, or with VIGIL_WIRE_ERROR_TOO_LARGE when the batch would
 * pass VIGIL_WIRE_MAX_PAYLOAD_BYTES (then finish this batch and start the
 * next sequence with its own NODE). */
gboolean vigil_wire_add_message(vigil_wire_writer *w, GBytes *message, GError **error);
/* BATCH: finishes `inner` (always: it is freed) and adds it. Its items were
 * checked as they were added, so only its header is checked against the
 * batch here, and its payload is not decoded again as add_message does. */
gboolean vigil_wire_add_writer(vigil_wire_writer *w, vigil_wire_writer *inner, GError **error);
uint32_t vigil_wire_writer_count(const vigil_wire_writer *w);
/* Seals the header (count, length, CRC) and frees the writer. A NODE or
 * REFUSED message without its item, or a BATCH without messages, is a
 * programming error: a g_critical and NULL, never a message the decoder
 * would refuse. */
GBytes *vigil_wire_writer_finish(vigil_wire_writer *w);
void vigil_wire_writer_free(vigil_wire_writer *w);

/* Reads only the header of a message whose whole length is `length`: for a
 * receiver that must name the (node, sequence) of a batch it then refuses.
 * Checks magic, the payload length (against `length` and the limit) and the
 * CRC; not the version, the reserved word, the type or the payload. Since
 * the header is frozen across versions, this works on a message of any
 * version. On failure `out` is zeroed. */
gboolean vigil_wire_peek_header(const void *data, size_t length, struct vigil_wire_header *out,
                                GError **error);

/* Builds a message from a decoded one (or one filled in the same way): its
 * header's type, node id, sequence and count, its process id and its items;
 * magic, version and payload bytes are recomputed. A decoded message encodes
 * back to exactly the bytes it was decoded from. Returns NULL and sets error
 * for an item the writer refuses or an inconsistent message. */
GBytes *vigil_wire_encode_message(const struct vigil_wire_message *m, GError **error);

#endif
