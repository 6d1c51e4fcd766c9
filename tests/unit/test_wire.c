/* Tests of the wire format: layout, round trips, and hostile input.
 *
 * One table of cases, a row per message type (its fixtures, where a
 * decoded message keeps them, and its layout written out from wire.h),
 * drives the round trips, the layouts, the truncations and the corruption
 * of every type. Tables of patches (a field of a fixture message changed,
 * named as wire.h names it) and of bad items (a fixture with fields
 * changed, which the decoder and the writer must both refuse) drive the
 * refusals. The layouts here are the test's own, not the code's: a field
 * the code lays out other than wire.h says shows as a difference; and the
 * bytes every type had when the table came are kept as a fixture. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "vigil/health.h"
#include "vigil/ontology.h"
#include "vigil/wire.h"
#include "test_support.h"

#define NODE_ID    UINT64_C(0x1122334455667788)
#define SEQUENCE   UINT64_C(0x99aabbccddeeff00)
#define PROCESS_ID UINT64_C(0xfedcba9876543210)

/* Offsets in the header, written out from wire.h rather than taken from
 * the implementation, so that the tests pin the layout. */
#define HEADER_VERSION       4u
#define HEADER_TYPE          6u
#define HEADER_COUNT         24u
#define HEADER_PAYLOAD_BYTES 28u
#define HEADER_RESERVED      32u
#define PAYLOAD              40u

/* ---- fixtures -------------------------------------------------------- */

static const struct vigil_activity activities[] = {
    {VIGIL_RECORD_ACTIVITY, VIGIL_LAYER_POSIX, VIGIL_OP_POSIX_WRITE, 7, 1, 0, 1000, 2500, 4096,
     8192, 8192, 0, 4242, 0, 0},
    {VIGIL_RECORD_ACTIVITY, VIGIL_LAYER_MPIIO, VIGIL_OP_MPIIO_WRITE_AT_ALL, 0x89abcdefu,
     UINT64_MAX - 1, UINT64_C(0x0123456789abcdef) - 10, UINT64_C(0x0123456789abcdef),
     UINT64_C(0x0123456789abcdef) + 5, INT64_MAX, UINT64_C(1) << 40, INT64_C(1) << 40, 0,
     UINT32_MAX, VIGIL_ACTIVITY_COLLECTIVE | VIGIL_ACTIVITY_NONBLOCKING, 4096},
    {VIGIL_RECORD_ACTIVITY, VIGIL_LAYER_STDIO, VIGIL_OP_STDIO_FREAD, VIGIL_FILE_NONE, 3, 0, 5, 5,
     VIGIL_OFFSET_UNKNOWN, 100, -1, 4095, 1, 0, 0},
};

static const struct vigil_wire_name names[] = {
    {1, 11, "/etc/passwd"},
    {0xffffffffu, 11, "\xff\xfe/not-utf8"}, /* paths are bytes, not text */
    {3, 0, ""},
};

static const struct vigil_metric_desc metrics[] = {
    {1, VIGIL_METRIC_COUNTER, VIGIL_METRIC_MEASURED, "energy.pkg0_j", "J", "energy/powercap"},
    {2, VIGIL_METRIC_GAUGE, VIGIL_METRIC_ESTIMATED, "cpu.util-pct_2", "percent", "procstat"},
    {UINT32_MAX, VIGIL_METRIC_COUNTER, VIGIL_METRIC_MEASURED, "x", "", "\xc2\xb5-source"},
};

static const struct vigil_sample samples[] = {
    {1, 0, 123, 42.5},
    {2, VIGIL_SAMPLE_UNCERTAIN, UINT64_MAX, -0.0},
    {UINT32_MAX, 0, 0, DBL_MAX},
    {3, 0, 1, 4.9406564584124654e-324}, /* the smallest subnormal */
};

static const struct vigil_wire_anomaly anomalies[] = {
    {1, 0, VIGIL_LEVEL_NODE, VIGIL_HEALTH_ABNORMAL_BAD, 310.5, -INFINITY, 250.0,
     "energy-efficiency", "energy.pkg0_j", "package power above the expected range"},
    {UINT64_MAX, 12345, VIGIL_LEVEL_PROCESS, VIGIL_HEALTH_ABNORMAL_GOOD, -0.0, 0.0, INFINITY,
     "io-latency", "posix.write",
     "Schreibzeit \xc3\xbc"
     "berschritten \xe2\x9c\x93"},
    {2, 0, VIGIL_LEVEL_SYSTEM, VIGIL_HEALTH_OK, 1.0, 1.0, 1.0, "", "", ""},
};

static const struct vigil_wire_state states[] = {
    {1, 0, VIGIL_LEVEL_NODE, VIGIL_HEALTH_OK, 0, 0, 0, 0},
    {UINT64_MAX, 99, VIGIL_LEVEL_PROCESS, VIGIL_HEALTH_ABNORMAL_OTHER, 0xdeadbeefu, 1, 2, 3},
    {7, 0, VIGIL_LEVEL_SYSTEM, VIGIL_HEALTH_BAD, 1, UINT32_MAX, 0, UINT32_MAX},
};

/* Version 2 */

static const struct vigil_wire_node nodes[] = {
    /* Negative offset: pins that it is signed. */
    {INT64_C(-1234567890123), 42, 1000, 2000, 1000, 0, "node-01.cluster"},
};

static char *ior_argv[] = {"/usr/bin/ior", "-w", "-b", "4m", NULL};
static char *shell_argv[] = {"sh", "-c", "echo gr\xc3\xbc\xc3\x9f", "", NULL};

static const struct vigil_wire_process processes[] = {
    {17, 4242, 1000, 3, 0, 1000, 5000, "job-981.step-0", "981", "/usr/bin/ior", "/scratch/u", 4,
     ior_argv},
    /* Still running, not MPI, exit unknown, no arguments. */
    {UINT64_MAX, INT32_MAX, UINT32_MAX, -1, -1, UINT64_MAX - 5, 0, "own:4243", "", "", "/", 0,
     NULL},
    {19, 1, 0, 0, 128 + 9, 7, 7, "r\xc3\xa9sum\xc3\xa9", "", "sh", "/home/\xe2\x9c\x93", 4,
     shell_argv},
};

static const struct vigil_wire_rollup rollups[] = {
    {3, 0, 1000, 2000, 10, 0, 1.0, 2.5, 4.0, NAN}, /* a gauge */
    {1, VIGIL_SAMPLE_UNCERTAIN, 0, UINT64_MAX, UINT32_MAX, 0, -5.0, 1e6, 2e6, 123456.75},
    /* Three samples of 0.1: their mean rounds to just above them. */
    {4, 0, 7, 7, 3, 0, 0.1, 0.10000000000000002, 0.1, -0.0},
    /* A sum that overflowed: the mean is infinite, min and max are not. */
    {5, 0, 7, 8, 2, 0, DBL_MAX, INFINITY, DBL_MAX, INFINITY},
};

static const struct vigil_wire_window windows[] = {
    {0, 5, 5, 1000, 2000, 0, "node ABNORMAL_BAD (sensor-sanity: energy.pkg0_j is stuck)"},
    {17, 6, UINT64_MAX, 0, UINT64_MAX, UINT64_MAX,
     "process ABNORMAL_BAD (latency-histogram: \xe2\x80\xa6)\nnode OK"},
    {18, 0, 0, 5, 5, 3, ""},
};

static const struct vigil_wire_summary summaries[] = {
    {17, "{\"program\":\"/usr/bin/ior\",\"calls\":12,\"energy_j\":3.5}"},
    {UINT64_MAX, "{\"note\":\"gr\xc3\xbc\xc3\x9f\"}"},
};

static const struct vigil_wire_job jobs[] = {
    {1000, 2000, 1000, VIGIL_WIRE_JOB_FROM_ROOT, "4242", "", "alice", "node[01-04]"},
    {5, 0, UINT32_MAX, 0, "4242", "0", "j\xc3\xb6rg", ""}, /* begun, running */
    {0, 7, 0, 0, "4242_3", "batch", "", "n1"},             /* an end alone */
};

static const struct vigil_wire_drop drops[] = {
    {4242, 0, 1000, 1700000000000000, 2500, 3},
    {INT32_MAX, 0, UINT64_MAX, UINT64_MAX, UINT64_MAX, 0},
};

static const struct vigil_wire_unwatched_end unwatched_ends[] = {
    {17, 1000, 2000, 3000, 0, 0, 1.25, 36.5, VIGIL_WIRE_UNWATCHED_ENERGY_ESTIMATED, 0},
    /* Neither CPU time nor energy known; its ring read; an end at once. */
    {UINT64_MAX, 7, 7, UINT64_MAX, UINT64_MAX, 5, NAN, NAN,
     VIGIL_WIRE_UNWATCHED_ENERGY_UNCERTAIN | VIGIL_WIRE_UNWATCHED_RING_READ, 0},
};

static const struct vigil_wire_refusal refusals[] = {
    {"duplicate key value violates unique constraint \"processes_node_id_pid_start_ns_key\""},
};

/* What a batch fixture holds: every type a batch may, node first. */
static const enum vigil_wire_type batch_types[] = {
    VIGIL_WIRE_NODE,    VIGIL_WIRE_PROCESSES,      VIGIL_WIRE_METRICS,    VIGIL_WIRE_ROLLUPS,
    VIGIL_WIRE_SAMPLES, VIGIL_WIRE_NAMES,          VIGIL_WIRE_ACTIVITIES, VIGIL_WIRE_ANOMALIES,
    VIGIL_WIRE_STATES,  VIGIL_WIRE_WINDOWS,        VIGIL_WIRE_SUMMARIES,  VIGIL_WIRE_JOBS,
    VIGIL_WIRE_DROPS,   VIGIL_WIRE_UNWATCHED_ENDS,
};
#define BATCH_SEQUENCE (SEQUENCE + VIGIL_WIRE_BATCH)

/* ---- the layouts, from wire.h --------------------------------------------
 * Each field at its offset in the item as wire.h gives it (AFTER: right
 * after the field before, once a field of variable length came). */

enum wire_kind {
    LE,       /* a little-endian integer of `bytes`, or a double's bits */
    RESERVED, /* `bytes` of zero, kept in no member */
    STR16,    /* u16 length, then the bytes */
    TEXT32,   /* u32 length, then the bytes */
    PATH16,   /* the bytes of the member, as many as the u16 member `length` says */
    ARGV32,   /* u32 argc, then argc STR16s */
};

#define AFTER SIZE_MAX

struct spec {
    size_t at;
    enum wire_kind kind;
    size_t bytes;
    const char *name;
    size_t member, member_bytes;
};

#define AT(at, kind, bytes, item, m)                                                               \
    {                                                                                              \
        (at), (kind), (bytes), #m, offsetof(struct item, m), sizeof(((struct item *)NULL)->m)      \
    }
#define NUMBER(at, bytes, item, m) AT(at, LE, bytes, item, m)
#define STRING(at, item, m)        AT(at, STR16, 0, item, m)
#define TEXT(at, item, m)          AT(at, TEXT32, 0, item, m)

static const struct spec activity_spec[] = {
    NUMBER(0, 1, vigil_activity, record_type),
    NUMBER(1, 1, vigil_activity, layer),
    NUMBER(2, 2, vigil_activity, op),
    NUMBER(4, 4, vigil_activity, file_id),
    NUMBER(8, 8, vigil_activity, seq),
    NUMBER(16, 8, vigil_activity, parent_start_ns),
    NUMBER(24, 8, vigil_activity, start_ns),
    NUMBER(32, 8, vigil_activity, end_ns),
    NUMBER(40, 8, vigil_activity, offset_bytes),
    NUMBER(48, 8, vigil_activity, bytes_asked),
    NUMBER(56, 8, vigil_activity, result),
    NUMBER(64, 4, vigil_activity, errno_value),
    NUMBER(68, 4, vigil_activity, thread_id),
    NUMBER(72, 4, vigil_activity, flags),
    NUMBER(76, 4, vigil_activity, comm_size),
};
static const struct spec name_spec[] = {
    NUMBER(0, 4, vigil_wire_name, file_id),
    NUMBER(4, 2, vigil_wire_name, length),
    AT(6, PATH16, 0, vigil_wire_name, path),
};
static const struct spec metric_spec[] = {
    NUMBER(0, 4, vigil_metric_desc, id),     NUMBER(4, 1, vigil_metric_desc, kind),
    NUMBER(5, 1, vigil_metric_desc, origin), STRING(6, vigil_metric_desc, name),
    STRING(AFTER, vigil_metric_desc, unit),  STRING(AFTER, vigil_metric_desc, source),
};
static const struct spec sample_spec[] = {
    NUMBER(0, 4, vigil_sample, metric_id),
    NUMBER(4, 4, vigil_sample, flags),
    NUMBER(8, 8, vigil_sample, t_ns),
    NUMBER(16, 8, vigil_sample, value),
};
static const struct spec anomaly_spec[] = {
    NUMBER(0, 8, vigil_wire_anomaly, cycle),
    NUMBER(8, 8, vigil_wire_anomaly, process_id),
    NUMBER(16, 1, vigil_wire_anomaly, level),
    NUMBER(17, 1, vigil_wire_anomaly, health),
    {18, RESERVED, 2, "reserved", 0, 0},
    NUMBER(20, 8, vigil_wire_anomaly, value),
    NUMBER(28, 8, vigil_wire_anomaly, expected_min),
    NUMBER(36, 8, vigil_wire_anomaly, expected_max),
    STRING(44, vigil_wire_anomaly, plugin),
    STRING(AFTER, vigil_wire_anomaly, metric),
    STRING(AFTER, vigil_wire_anomaly, message),
};
static const struct spec state_spec[] = {
    NUMBER(0, 8, vigil_wire_state, cycle),         NUMBER(8, 8, vigil_wire_state, process_id),
    NUMBER(16, 1, vigil_wire_state, level),        NUMBER(17, 1, vigil_wire_state, health),
    {18, RESERVED, 2, "reserved", 0, 0},           NUMBER(20, 4, vigil_wire_state, overloaded_mask),
    NUMBER(24, 4, vigil_wire_state, bad_issues),   NUMBER(28, 4, vigil_wire_state, good_issues),
    NUMBER(32, 4, vigil_wire_state, other_issues),
};
static const struct spec node_spec[] = {
    NUMBER(0, 8, vigil_wire_node, realtime_offset_ns),
    NUMBER(8, 8, vigil_wire_node, cycle),
    NUMBER(16, 8, vigil_wire_node, cycle_start_ns),
    NUMBER(24, 8, vigil_wire_node, cycle_end_ns),
    NUMBER(32, 4, vigil_wire_node, cycle_ms),
    NUMBER(36, 4, vigil_wire_node, reserved),
    STRING(40, vigil_wire_node, hostname),
};
static const struct spec process_spec[] = {
    NUMBER(0, 8, vigil_wire_process, process_id), NUMBER(8, 4, vigil_wire_process, pid),
    NUMBER(12, 4, vigil_wire_process, uid),       NUMBER(16, 4, vigil_wire_process, rank),
    NUMBER(20, 4, vigil_wire_process, exit_code), NUMBER(24, 8, vigil_wire_process, start_ns),
    NUMBER(32, 8, vigil_wire_process, end_ns),    STRING(40, vigil_wire_process, run_key),
    STRING(AFTER, vigil_wire_process, job),       STRING(AFTER, vigil_wire_process, program),
    STRING(AFTER, vigil_wire_process, cwd),       AT(AFTER, ARGV32, 0, vigil_wire_process, argv),
};
static const struct spec rollup_spec[] = {
    NUMBER(0, 4, vigil_wire_rollup, metric_id), NUMBER(4, 4, vigil_wire_rollup, flags),
    NUMBER(8, 8, vigil_wire_rollup, start_ns),  NUMBER(16, 8, vigil_wire_rollup, end_ns),
    NUMBER(24, 4, vigil_wire_rollup, count),    NUMBER(28, 4, vigil_wire_rollup, reserved),
    NUMBER(32, 8, vigil_wire_rollup, min),      NUMBER(40, 8, vigil_wire_rollup, mean),
    NUMBER(48, 8, vigil_wire_rollup, max),      NUMBER(56, 8, vigil_wire_rollup, delta),
};
static const struct spec window_spec[] = {
    NUMBER(0, 8, vigil_wire_window, process_id),
    NUMBER(8, 8, vigil_wire_window, first_cycle),
    NUMBER(16, 8, vigil_wire_window, last_cycle),
    NUMBER(24, 8, vigil_wire_window, start_ns),
    NUMBER(32, 8, vigil_wire_window, end_ns),
    NUMBER(40, 8, vigil_wire_window, activities_forwarded),
    TEXT(48, vigil_wire_window, reasons),
};
static const struct spec summary_spec[] = {
    NUMBER(0, 8, vigil_wire_summary, process_id),
    TEXT(8, vigil_wire_summary, report_json),
};
static const struct spec refusal_spec[] = {
    TEXT(0, vigil_wire_refusal, reason),
};
static const struct spec job_spec[] = {
    NUMBER(0, 8, vigil_wire_job, begin_ns), NUMBER(8, 8, vigil_wire_job, end_ns),
    NUMBER(16, 4, vigil_wire_job, uid),     NUMBER(20, 4, vigil_wire_job, flags),
    STRING(24, vigil_wire_job, job_id),     STRING(AFTER, vigil_wire_job, step_id),
    STRING(AFTER, vigil_wire_job, user),    STRING(AFTER, vigil_wire_job, nodes),
};
static const struct spec drop_spec[] = {
    NUMBER(0, 4, vigil_wire_drop, pid),         NUMBER(4, 4, vigil_wire_drop, reserved),
    NUMBER(8, 8, vigil_wire_drop, start_ns),    NUMBER(16, 8, vigil_wire_drop, counter),
    NUMBER(24, 8, vigil_wire_drop, activities), NUMBER(32, 8, vigil_wire_drop, batches),
};
static const struct spec unwatched_end_spec[] = {
    NUMBER(0, 8, vigil_wire_unwatched_end, process_id),
    NUMBER(8, 8, vigil_wire_unwatched_end, earliest_end_ns),
    NUMBER(16, 8, vigil_wire_unwatched_end, latest_end_ns),
    NUMBER(24, 8, vigil_wire_unwatched_end, activities),
    NUMBER(32, 8, vigil_wire_unwatched_end, dropped),
    NUMBER(40, 8, vigil_wire_unwatched_end, seq_gaps),
    NUMBER(48, 8, vigil_wire_unwatched_end, cpu_s),
    NUMBER(56, 8, vigil_wire_unwatched_end, energy_j),
    NUMBER(64, 4, vigil_wire_unwatched_end, flags),
    NUMBER(68, 4, vigil_wire_unwatched_end, reserved),
};

/* ---- one case per type -------------------------------------------------- */

/* The add each public function makes, for one fixture. */
typedef gboolean (*add_fn)(vigil_wire_writer *w, const void *item, GError **error);

struct type_case {
    enum vigil_wire_type type;
    const void *fixtures;
    size_t count, fixture_bytes;
    size_t items_offset, item_bytes; /* the decoded message's array of them */
    const struct spec *spec;
    size_t spec_fields;
    add_fn add;
    gboolean process_id; /* the payload starts with one */
    size_t min_items;    /* a node, a refusal, a batch: at least one */
    gboolean one_item;   /* a node, a refusal: exactly one */
};

/* Each public add, for any fixture of its type. */
#define ADD(what)                                                                                  \
    static gboolean add_##what(vigil_wire_writer *w, const void *item, GError **error)             \
    {                                                                                              \
        return vigil_wire_add_##what(w, item, error);                                              \
    }

ADD(activity)
ADD(metric)
ADD(sample)
ADD(anomaly)
ADD(state)
ADD(node)
ADD(process)
ADD(rollup)
ADD(window)
ADD(summary)
ADD(refusal)
ADD(job)
ADD(drop)
ADD(unwatched_end)

static gboolean add_name(vigil_wire_writer *w, const void *item, GError **error)
{
    const struct vigil_wire_name *n = item;
    return vigil_wire_add_name(w, n->file_id, n->path, n->length, error);
}

static gboolean add_inner_fixture(vigil_wire_writer *w, const void *item, GError **error);

#define DECODED_IN(array)                                                                          \
    .items_offset = offsetof(struct vigil_wire_message, array),                                    \
    .item_bytes = sizeof(*((struct vigil_wire_message *)NULL)->array)
#define ITEMS(fixtures_, array, spec_, add_)                                                       \
    .fixtures = (fixtures_), .count = G_N_ELEMENTS(fixtures_),                                     \
    .fixture_bytes = sizeof(fixtures_[0]), DECODED_IN(array), .spec = (spec_),                     \
    .spec_fields = G_N_ELEMENTS(spec_), .add = (add_)

static const struct type_case cases[] = {
    {.type = VIGIL_WIRE_ACTIVITIES,
     ITEMS(activities, activities, activity_spec, add_activity),
     .process_id = TRUE},
    {.type = VIGIL_WIRE_NAMES, ITEMS(names, names, name_spec, add_name), .process_id = TRUE},
    {.type = VIGIL_WIRE_METRICS, ITEMS(metrics, metrics, metric_spec, add_metric)},
    {.type = VIGIL_WIRE_SAMPLES, ITEMS(samples, samples, sample_spec, add_sample)},
    {.type = VIGIL_WIRE_ANOMALIES, ITEMS(anomalies, anomalies, anomaly_spec, add_anomaly)},
    {.type = VIGIL_WIRE_STATES, ITEMS(states, states, state_spec, add_state)},
    {.type = VIGIL_WIRE_ACK},
    /* Its items are whole messages, one of each type in batch_types. */
    {.type = VIGIL_WIRE_BATCH,
     .fixtures = batch_types,
     .count = G_N_ELEMENTS(batch_types),
     .fixture_bytes = sizeof batch_types[0],
     DECODED_IN(inner),
     .add = add_inner_fixture,
     .min_items = 1},
    {.type = VIGIL_WIRE_NODE,
     ITEMS(nodes, nodes, node_spec, add_node),
     .min_items = 1,
     .one_item = TRUE},
    {.type = VIGIL_WIRE_PROCESSES, ITEMS(processes, processes, process_spec, add_process)},
    {.type = VIGIL_WIRE_ROLLUPS, ITEMS(rollups, rollups, rollup_spec, add_rollup)},
    {.type = VIGIL_WIRE_WINDOWS, ITEMS(windows, windows, window_spec, add_window)},
    {.type = VIGIL_WIRE_SUMMARIES, ITEMS(summaries, summaries, summary_spec, add_summary)},
    {.type = VIGIL_WIRE_REFUSED,
     ITEMS(refusals, refusals, refusal_spec, add_refusal),
     .min_items = 1,
     .one_item = TRUE},
    {.type = VIGIL_WIRE_JOBS, ITEMS(jobs, jobs, job_spec, add_job)},
    {.type = VIGIL_WIRE_DROPS, ITEMS(drops, drops, drop_spec, add_drop)},
    {.type = VIGIL_WIRE_UNWATCHED_ENDS,
     ITEMS(unwatched_ends, unwatched_ends, unwatched_end_spec, add_unwatched_end)},
};
#define N_CASES G_N_ELEMENTS(cases)

static const struct type_case *case_of(enum vigil_wire_type type)
{
    for (size_t i = 0; i < N_CASES; i++)
        if (cases[i].type == type)
            return &cases[i];
    fail_msg("no case for %s messages", vigil_wire_type_name(type));
    return NULL;
}

static const void *fixture(const struct type_case *c, size_t i)
{
    return (const uint8_t *)c->fixtures + i * c->fixture_bytes;
}

static const void *decoded_item(const struct type_case *c, const struct vigil_wire_message *m,
                                size_t i)
{
    const uint8_t *items;
    memcpy(&items, (const uint8_t *)m + c->items_offset, sizeof items);
    assert_non_null(items);
    return items + i * c->item_bytes;
}

/* ---- building ------------------------------------------------------------ */

/* The first n fixtures of a type as one message of the writer's. */
static GBytes *build_seq(enum vigil_wire_type type, size_t n, uint64_t sequence)
{
    const struct type_case *c = case_of(type);
    vigil_wire_writer *w =
        vigil_wire_writer_new(type, NODE_ID, sequence, c->process_id ? PROCESS_ID : 0);
    assert_non_null(w);
    for (size_t i = 0; i < n; i++) {
        GError *error = NULL;
        gboolean ok = c->add(w, fixture(c, i), &error);
        if (error != NULL)
            fail_msg("adding %s fixture %zu: %s", vigil_wire_type_name(type), i, error->message);
        assert_true(ok);
    }
    assert_int_equal(vigil_wire_writer_count(w), n);
    GBytes *msg = vigil_wire_writer_finish(w);
    assert_non_null(msg);
    return msg;
}

static GBytes *build(enum vigil_wire_type type, size_t n)
{
    return build_seq(type, n, SEQUENCE + type);
}

static GBytes *build_full(enum vigil_wire_type type)
{
    return build(type, case_of(type)->count);
}

/* A batch's fixtures: the full fixture message of each type, in the batch's
 * node and sequence. */
static gboolean add_inner_fixture(vigil_wire_writer *w, const void *item, GError **error)
{
    enum vigil_wire_type inner = *(const enum vigil_wire_type *)item;
    GBytes *message = build_seq(inner, case_of(inner)->count, BATCH_SEQUENCE);
    gboolean ok = vigil_wire_add_message(w, message, error);
    g_bytes_unref(message);
    return ok;
}

/* ---- helpers ----------------------------------------------------------- */

static void store_le(uint8_t *p, uint64_t v, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t load_le(const uint8_t *p, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* A member of 1, 2, 4 or 8 bytes as an unsigned number, and back. */
static uint64_t member_value(const void *item, const struct spec *f)
{
    const uint8_t *at = (const uint8_t *)item + f->member;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (f->member_bytes) {
    case 1:
        memcpy(&u8, at, 1);
        return u8;
    case 2:
        memcpy(&u16, at, 2);
        return u16;
    case 4:
        memcpy(&u32, at, 4);
        return u32;
    default:
        memcpy(&u64, at, 8);
        return u64;
    }
}

static void set_member_value(void *item, const struct spec *f, uint64_t v)
{
    uint8_t *at = (uint8_t *)item + f->member;
    uint8_t u8 = (uint8_t)v;
    uint16_t u16 = (uint16_t)v;
    uint32_t u32 = (uint32_t)v;
    switch (f->member_bytes) {
    case 1:
        memcpy(at, &u8, 1);
        break;
    case 2:
        memcpy(at, &u16, 2);
        break;
    case 4:
        memcpy(at, &u32, 4);
        break;
    default:
        memcpy(at, &v, 8);
        break;
    }
}

static void *member_pointer(const void *item, const struct spec *f)
{
    void *p;
    memcpy(&p, (const uint8_t *)item + f->member, sizeof p);
    return p;
}

static void set_member_pointer(void *item, const struct spec *f, const void *p)
{
    memcpy((uint8_t *)item + f->member, &p, sizeof p);
}

static const struct spec *spec_field(const struct type_case *c, const char *name)
{
    for (size_t i = 0; i < c->spec_fields; i++)
        if (strcmp(c->spec[i].name, name) == 0)
            return &c->spec[i];
    fail_msg("%s items have no field %s", vigil_wire_type_name(c->type), name);
    return NULL;
}

/* A name item's path length and a process's argc: the members that count. */
static const struct spec name_length = NUMBER(0, 2, vigil_wire_name, length);
static const struct spec process_argc = NUMBER(0, 4, vigil_wire_process, argc);

static const struct spec *count_of(const struct spec *f)
{
    return f->kind == PATH16 ? &name_length : &process_argc;
}

/* zlib's CRC-32, bit by bit: an independent check of the header's CRC. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *bytes, size_t length)
{
    crc = ~crc;
    for (size_t i = 0; i < length; i++) {
        crc ^= bytes[i];
        for (int bit = 0; bit < 8; bit++)
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1u));
    }
    return ~crc;
}

static void reseal(uint8_t *message, size_t length)
{
    store_le(message + VIGIL_WIRE_CRC_OFFSET, vigil_wire_checksum(message, length), 4);
}

static uint8_t *copy_of(GBytes *bytes, size_t *length)
{
    return g_memdup2(g_bytes_get_data(bytes, length), g_bytes_get_size(bytes));
}

static void assert_message_empty(const struct vigil_wire_message *m)
{
    static const struct vigil_wire_message zero;
    assert_memory_equal(m, &zero, sizeof zero);
}

/* ---- encoding by hand, from the layouts ------------------------------------ */

static void put_le(GByteArray *a, uint64_t v, size_t bytes)
{
    uint8_t b[8];
    store_le(b, v, bytes);
    g_byte_array_append(a, b, (guint)bytes);
}

static void put_string(GByteArray *a, const char *s, size_t length_bytes)
{
    put_le(a, strlen(s), length_bytes);
    g_byte_array_append(a, (const uint8_t *)s, (guint)strlen(s));
}

static void hand_field(GByteArray *a, const struct spec *f, const void *item)
{
    switch (f->kind) {
    case LE:
        put_le(a, member_value(item, f), f->bytes);
        break;
    case RESERVED:
        put_le(a, 0, f->bytes);
        break;
    case STR16:
        put_string(a, member_pointer(item, f), 2);
        break;
    case TEXT32:
        put_string(a, member_pointer(item, f), 4);
        break;
    case PATH16:
        g_byte_array_append(a, member_pointer(item, f), (guint)member_value(item, count_of(f)));
        break;
    case ARGV32: {
        uint32_t argc = (uint32_t)member_value(item, count_of(f));
        char **argv = member_pointer(item, f);
        put_le(a, argc, 4);
        for (uint32_t k = 0; k < argc; k++)
            put_string(a, argv[k], 2);
        break;
    }
    }
}

static GBytes *hand_message(unsigned type, uint64_t sequence, uint32_t count, GByteArray *payload);

/* One item, field by field, each where wire.h puts it. A batch's item is a
 * whole message of the type it names, made by hand in turn. */
static void hand_item(GByteArray *a, const struct type_case *c, const void *item)
{
    if (c->type == VIGIL_WIRE_BATCH) {
        const struct type_case *inner = case_of(*(const enum vigil_wire_type *)item);
        GByteArray *payload = g_byte_array_new();
        if (inner->process_id)
            put_le(payload, PROCESS_ID, 8);
        for (size_t i = 0; i < inner->count; i++)
            hand_item(payload, inner, fixture(inner, i));
        GBytes *message =
            hand_message(inner->type, BATCH_SEQUENCE, (uint32_t)inner->count, payload);
        put_le(a, g_bytes_get_size(message), 4);
        g_byte_array_append(a, g_bytes_get_data(message, NULL), (guint)g_bytes_get_size(message));
        g_bytes_unref(message);
        return;
    }
    size_t start = a->len;
    for (size_t i = 0; i < c->spec_fields; i++) {
        if (c->spec[i].at != AFTER && a->len - start != c->spec[i].at)
            fail_msg("%s items: %s at %zu, not %zu", vigil_wire_type_name(c->type), c->spec[i].name,
                     a->len - start, c->spec[i].at);
        hand_field(a, &c->spec[i], item);
    }
}

/* A sealed message of node NODE_ID around `payload` (consumed). */
static GBytes *hand_message(unsigned type, uint64_t sequence, uint32_t count, GByteArray *payload)
{
    GByteArray *m = g_byte_array_new();
    put_le(m, VIGIL_WIRE_MAGIC, 4);
    put_le(m, VIGIL_WIRE_VERSION, 2);
    put_le(m, type, 2);
    put_le(m, NODE_ID, 8);
    put_le(m, sequence, 8);
    put_le(m, count, 4);
    put_le(m, payload->len, 4);
    put_le(m, 0, 8); /* reserved, CRC */
    g_byte_array_append(m, payload->data, payload->len);
    g_byte_array_unref(payload);
    reseal(m->data, m->len);
    return g_byte_array_free_to_bytes(m);
}

/* These items of a type, encoded by hand into a message. */
static GBytes *hand_items(const struct type_case *c, uint64_t sequence, const void *items, size_t n)
{
    GByteArray *payload = g_byte_array_new();
    if (c->process_id)
        put_le(payload, PROCESS_ID, 8);
    for (size_t i = 0; i < n; i++)
        hand_item(payload, c, (const uint8_t *)items + i * c->fixture_bytes);
    return hand_message(c->type, sequence, (uint32_t)n, payload);
}

/* Where a field of fixture `item` of a message of the first n fixtures
 * begins: its value, its length or count, or (byte >= 0) a byte of its
 * string. "argc" is a process's count, "argv[k]" its k-th string. */
static size_t field_offset(const struct type_case *c, size_t item, const char *name, int byte)
{
    GByteArray *a = g_byte_array_new();
    g_byte_array_set_size(a, PAYLOAD);
    if (c->process_id)
        put_le(a, PROCESS_ID, 8);
    for (size_t i = 0; i < item; i++)
        hand_item(a, c, fixture(c, i));
    const void *it = fixture(c, item);
    unsigned argv_k;
    gboolean in_argv = sscanf(name, "argv[%u]", &argv_k) == 1 || strcmp(name, "argc") == 0;
    size_t at = SIZE_MAX;
    for (size_t i = 0; i < c->spec_fields && at == SIZE_MAX; i++) {
        const struct spec *f = &c->spec[i];
        if (in_argv && f->kind == ARGV32) {
            at = a->len;
            if (strcmp(name, "argc") != 0) {
                char **argv = member_pointer(it, f);
                at += 4;
                for (unsigned k = 0; k < argv_k; k++)
                    at += 2 + strlen(argv[k]);
                at += byte >= 0 ? 2 + (size_t)byte : 0;
            }
        } else if (strcmp(f->name, name) == 0) {
            size_t prefix = f->kind == STR16 ? 2 : f->kind == TEXT32 ? 4 : 0;
            at = a->len + (byte >= 0 ? prefix + (size_t)byte : 0);
        }
        hand_field(a, f, it);
    }
    g_byte_array_unref(a);
    if (at == SIZE_MAX)
        fail_msg("%s items have no field %s", vigil_wire_type_name(c->type), name);
    return at;
}

/* How many bytes a patch of that field writes. */
static size_t field_width(const struct type_case *c, const char *name, int byte)
{
    if (byte >= 0)
        return 1;
    if (strcmp(name, "argc") == 0)
        return 4;
    const struct spec *f = spec_field(c, name);
    return f->kind == STR16 ? 2 : f->kind == TEXT32 ? 4 : f->bytes;
}

/* ---- comparisons ------------------------------------------------------- */

static void assert_inner_equal(const struct vigil_wire_message *inner, enum vigil_wire_type type);

/* A decoded item against its fixture, field by field: numbers bit for bit
 * (a double too: NaN, -0.0), strings by content, a path with its NUL. */
static void assert_item_equal(const struct type_case *c, const void *got, const void *want)
{
    if (c->type == VIGIL_WIRE_BATCH) {
        assert_inner_equal(got, *(const enum vigil_wire_type *)want);
        return;
    }
    for (size_t i = 0; i < c->spec_fields; i++) {
        const struct spec *f = &c->spec[i];
        switch (f->kind) {
        case LE:
            if (member_value(got, f) != member_value(want, f))
                fail_msg("%s item: %s is 0x%llx, not 0x%llx", vigil_wire_type_name(c->type),
                         f->name, (unsigned long long)member_value(got, f),
                         (unsigned long long)member_value(want, f));
            break;
        case RESERVED:
            break;
        case STR16:
        case TEXT32:
            assert_string_equal(member_pointer(got, f), member_pointer(want, f));
            break;
        case PATH16:
            assert_memory_equal(member_pointer(got, f), member_pointer(want, f),
                                member_value(want, count_of(f)) + 1);
            break;
        case ARGV32: {
            uint32_t argc = (uint32_t)member_value(want, count_of(f));
            char **a = member_pointer(got, f), **b = member_pointer(want, f);
            assert_int_equal(member_value(got, count_of(f)), argc);
            assert_non_null(a);
            for (uint32_t k = 0; k < argc; k++)
                assert_string_equal(a[k], b[k]);
            assert_null(a[argc]);
            break;
        }
        }
    }
}

static void assert_items_equal(const struct vigil_wire_message *m, size_t i)
{
    const struct type_case *c = case_of(m->header.type);
    assert_item_equal(c, decoded_item(c, m, i), fixture(c, i));
}

/* A batch's i-th message: the fixtures of its type, with the batch's node
 * and sequence. */
static void assert_inner_equal(const struct vigil_wire_message *inner, enum vigil_wire_type type)
{
    const struct type_case *c = case_of(type);
    assert_int_equal(inner->header.magic, VIGIL_WIRE_MAGIC);
    assert_int_equal(inner->header.version, VIGIL_WIRE_VERSION);
    assert_int_equal(inner->header.type, type);
    assert_int_equal(inner->header.node_id, NODE_ID);
    assert_int_equal(inner->header.sequence, BATCH_SEQUENCE);
    assert_int_equal(inner->header.count, c->count);
    assert_int_equal(inner->process_id, c->process_id ? PROCESS_ID : 0);
    for (size_t j = 0; j < c->count; j++)
        assert_items_equal(inner, j);
}

/* ---- refusals ------------------------------------------------------------- */

/* Decoding must fail with this code and a message containing `needle`. */
static void expect_error(const uint8_t *data, size_t length, int code, const char *needle)
{
    struct vigil_wire_message m;
    memset(&m, 0xa5, sizeof m); /* garbage: decode must zero it */
    GError *error = NULL;
    assert_false(vigil_wire_decode(data, length, &m, &error));
    assert_non_null(error);
    if (strstr(error->message, needle) == NULL)
        fail_msg("error \"%s\" does not mention \"%s\"", error->message, needle);
    assert_true(error->domain == VIGIL_WIRE_ERROR);
    if (error->code != code)
        fail_msg("error \"%s\" has code %d, expected %d", error->message, error->code, code);
    assert_message_empty(&m);
    g_error_free(error);
}

static void expect_bytes_error(GBytes *msg, int code, const char *needle)
{
    expect_error(g_bytes_get_data(msg, NULL), g_bytes_get_size(msg), code, needle);
}

/* Overwrites `bytes` bytes at `offset` of the message (consumed) with
 * `value`, fixes the CRC, and expects the decoder to refuse. */
static void expect_patched(GBytes *msg, size_t offset, uint64_t value, size_t bytes, int code,
                           const char *needle)
{
    size_t length;
    uint8_t *data = copy_of(msg, &length);
    assert_true(offset + bytes <= length);
    store_le(data + offset, value, bytes);
    reseal(data, length);
    expect_error(data, length, code, needle);
    g_free(data);
    g_bytes_unref(msg);
}

static void expect_refused(gboolean ok, GError **error, int code, const char *needle)
{
    assert_false(ok);
    assert_non_null(*error);
    assert_true((*error)->domain == VIGIL_WIRE_ERROR);
    assert_int_equal((*error)->code, code);
    if (strstr((*error)->message, needle) == NULL)
        fail_msg("error \"%s\" does not mention \"%s\"", (*error)->message, needle);
    g_clear_error(error);
}

static void decode_bytes(GBytes *msg, struct vigil_wire_message *m)
{
    GError *error = NULL;
    gboolean ok = vigil_wire_decode(g_bytes_get_data(msg, NULL), g_bytes_get_size(msg), m, &error);
    if (!ok)
        fail_msg("decode failed: %s", error->message);
}

static void unref_all(GBytes **messages, size_t n)
{
    for (size_t i = 0; i < n; i++)
        g_bytes_unref(messages[i]);
}

/* ---- the bytes of every type, as released ---------------------------------
 * tests/unit/fixtures/wire-every-type.bin holds, for each type in type
 * order, a u32 length and the full fixture message of that type (the batch
 * holds every type a batch may): bytes a vigild already sends, so a new
 * vigil-txd must read them and a new vigild write them exactly. Written once
 * by this test with VIGIL_WIRE_GOLDEN_WRITE=1; a new type is appended, and
 * the bytes of a released type never change. */

#define GOLDEN_FILE "unit/fixtures/wire-every-type.bin"

static char *golden_path(void)
{
    return g_build_filename(test_env_or_fail("VIGIL_TEST_SOURCE_DIR"), GOLDEN_FILE, NULL);
}

static void write_golden(const char *path)
{
    GByteArray *file = g_byte_array_new();
    for (size_t t = 0; t < N_CASES; t++) {
        GBytes *msg = build_full(cases[t].type);
        uint8_t length[4];
        store_le(length, g_bytes_get_size(msg), 4);
        g_byte_array_append(file, length, sizeof length);
        g_byte_array_append(file, g_bytes_get_data(msg, NULL), (guint)g_bytes_get_size(msg));
        g_bytes_unref(msg);
    }
    GError *error = NULL;
    if (!g_file_set_contents(path, (const char *)file->data, file->len, &error))
        fail_msg("cannot write %s: %s", path, error->message);
    g_byte_array_unref(file);
}

static void test_golden_bytes_of_every_type(void **state)
{
    (void)state;
    char *path = golden_path();
    if (g_getenv("VIGIL_WIRE_GOLDEN_WRITE") != NULL)
        write_golden(path);
    char *golden;
    size_t golden_bytes;
    GError *error = NULL;
    if (!g_file_get_contents(path, &golden, &golden_bytes, &error))
        fail_msg("cannot read %s: %s", path, error->message);
    size_t at = 0;
    for (size_t t = 0; t < N_CASES; t++) {
        enum vigil_wire_type type = cases[t].type;
        assert_true(t == 0 || type > cases[t - 1].type); /* the file's order */
        assert_true(golden_bytes - at >= 4);
        size_t length = load_le((const uint8_t *)golden + at, 4);
        const uint8_t *released = (const uint8_t *)golden + at + 4;
        assert_true(golden_bytes - at - 4 >= length);
        at += 4 + length;

        GBytes *msg = build_full(type);
        size_t written_bytes;
        const uint8_t *written = g_bytes_get_data(msg, &written_bytes);
        for (size_t i = 0; i < MIN(length, written_bytes); i++)
            if (written[i] != released[i])
                fail_msg("%s message: byte %zu is 0x%02x, released as 0x%02x",
                         vigil_wire_type_name(type), i, written[i], released[i]);
        if (written_bytes != length)
            fail_msg("%s message of %zu bytes, released with %zu", vigil_wire_type_name(type),
                     written_bytes, length);
        g_bytes_unref(msg);

        struct vigil_wire_message m;
        if (!vigil_wire_decode(released, length, &m, &error))
            fail_msg("released %s message refused: %s", vigil_wire_type_name(type), error->message);
        assert_int_equal(m.header.type, type);
        assert_int_equal(m.header.count, cases[t].count);
        for (size_t i = 0; i < cases[t].count; i++)
            assert_items_equal(&m, i);
        GBytes *again = vigil_wire_encode_message(&m, &error);
        assert_non_null(again);
        assert_int_equal(g_bytes_get_size(again), length);
        assert_memory_equal(g_bytes_get_data(again, NULL), released, length);
        g_bytes_unref(again);
        vigil_wire_message_clear(&m);
    }
    assert_int_equal(at, golden_bytes);
    g_free(golden);
    g_free(path);
}

/* ---- round trips and layouts, every type ------------------------------------- */

static void round_trip(const struct type_case *c, size_t n)
{
    GBytes *msg = build(c->type, n);
    size_t length;
    const uint8_t *data = g_bytes_get_data(msg, &length);
    GBytes *by_hand = hand_items(c, SEQUENCE + c->type, c->fixtures, n);
    assert_int_equal(length, g_bytes_get_size(by_hand));
    g_bytes_unref(by_hand);

    struct vigil_wire_message m;
    GError *error = NULL;
    assert_true(vigil_wire_decode(data, length, &m, &error));
    assert_null(error);
    assert_int_equal(m.header.magic, VIGIL_WIRE_MAGIC);
    assert_int_equal(m.header.version, VIGIL_WIRE_VERSION);
    assert_int_equal(m.header.type, c->type);
    assert_int_equal(m.header.node_id, NODE_ID);
    assert_int_equal(m.header.sequence, SEQUENCE + c->type);
    assert_int_equal(m.header.count, n);
    assert_int_equal(m.header.payload_bytes, length - VIGIL_WIRE_HEADER_BYTES);
    assert_int_equal(m.process_id, c->process_id ? PROCESS_ID : 0);
    for (size_t i = 0; i < n; i++)
        assert_items_equal(&m, i);

    GBytes *again = vigil_wire_encode_message(&m, &error);
    assert_null(error);
    assert_non_null(again);
    assert_true(g_bytes_equal(again, msg));
    g_bytes_unref(again);

    vigil_wire_message_clear(&m);
    assert_message_empty(&m);
    vigil_wire_message_clear(&m); /* clearing twice is harmless */
    g_bytes_unref(msg);
}

static void test_round_trip_every_type(void **state)
{
    (void)state;
    for (size_t t = 0; t < N_CASES; t++) {
        round_trip(&cases[t], cases[t].count);
        if (cases[t].min_items == 0)
            round_trip(&cases[t], 0);
        if (cases[t].count > 0)
            round_trip(&cases[t], 1);
    }
}

/* Every message the writer makes is byte for byte the one made here from
 * the layouts wire.h documents. */
static void test_layouts_are_as_documented(void **state)
{
    (void)state;
    for (size_t t = 0; t < N_CASES; t++) {
        const struct type_case *c = &cases[t];
        GBytes *by_hand = hand_items(c, SEQUENCE + c->type, c->fixtures, c->count);
        GBytes *by_writer = build_full(c->type);
        if (!g_bytes_equal(by_hand, by_writer))
            fail_msg("%s message differs from its documented layout",
                     vigil_wire_type_name(c->type));
        g_bytes_unref(by_hand);
        g_bytes_unref(by_writer);
    }
}

/* The exact bytes of a small message, header and CRC included, by hand. */
static void test_samples_layout_is_as_documented(void **state)
{
    (void)state;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_SAMPLES, NODE_ID, 5, 0);
    const struct vigil_sample s = {7, VIGIL_SAMPLE_UNCERTAIN, UINT64_C(0x0102030405060708), 1.5};
    assert_true(vigil_wire_add_sample(w, &s, NULL));
    GBytes *msg = vigil_wire_writer_finish(w);

    uint8_t expected[64] = {
        'V',  'G',  'W',  'R',  2,    0,    4,    0,    /* magic, version, type */
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* node id */
        5,    0,    0,    0,    0,    0,    0,    0,    /* sequence */
        1,    0,    0,    0,    24,   0,    0,    0,    /* count, payload bytes */
        0,    0,    0,    0,    0,    0,    0,    0,    /* reserved, CRC (below) */
        7,    0,    0,    0,    1,    0,    0,    0,    /* metric id, flags */
        8,    7,    6,    5,    4,    3,    2,    1,    /* t_ns */
        0,    0,    0,    0,    0,    0,    0xf8, 0x3f, /* 1.5 */
    };
    uint32_t crc = crc32_update(0, expected, VIGIL_WIRE_CRC_OFFSET);
    crc = crc32_update(crc, expected + PAYLOAD, sizeof expected - PAYLOAD);
    store_le(expected + VIGIL_WIRE_CRC_OFFSET, crc, 4);

    assert_int_equal(g_bytes_get_size(msg), sizeof expected);
    assert_memory_equal(g_bytes_get_data(msg, NULL), expected, sizeof expected);
    g_bytes_unref(msg);
}

static void test_longest_path_round_trips(void **state)
{
    (void)state;
    char *path = g_malloc(VIGIL_PATH_MAX + 1);
    for (size_t i = 0; i < VIGIL_PATH_MAX; i++)
        path[i] = (char)('a' + i % 26);
    path[VIGIL_PATH_MAX] = '\0';
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_NAMES, 1, 2, 3);
    GError *error = NULL;
    assert_true(vigil_wire_add_name(w, 9, path, VIGIL_PATH_MAX, &error));
    assert_false(vigil_wire_add_name(w, 10, path, VIGIL_PATH_MAX + 1, &error));
    assert_true(g_error_matches(error, VIGIL_WIRE_ERROR, VIGIL_WIRE_ERROR_MALFORMED));
    g_clear_error(&error);
    /* Longer than the item's u16 length can say: refused by its own length,
     * not cut to fit. */
    char *huge = g_malloc0(UINT16_MAX + 2);
    expect_refused(vigil_wire_add_name(w, 11, huge, UINT16_MAX + 1, &error), &error,
                   VIGIL_WIRE_ERROR_MALFORMED,
                   "cannot add to the names message: file 11: path of 65536 bytes, longer than");
    g_free(huge);
    GBytes *msg = vigil_wire_writer_finish(w);

    struct vigil_wire_message m;
    assert_true(vigil_wire_decode(g_bytes_get_data(msg, NULL), g_bytes_get_size(msg), &m, &error));
    assert_int_equal(m.header.count, 1);
    assert_int_equal(m.process_id, 3);
    assert_int_equal(m.names[0].length, VIGIL_PATH_MAX);
    assert_string_equal(m.names[0].path, path);
    vigil_wire_message_clear(&m);
    g_bytes_unref(msg);
    g_free(path);
}

static void test_checksum_ignores_its_own_field(void **state)
{
    (void)state;
    GBytes *msg = build_full(VIGIL_WIRE_STATES);
    size_t length;
    uint8_t *data = copy_of(msg, &length);
    uint32_t crc = vigil_wire_checksum(data, length);
    assert_int_equal(load_le(data + VIGIL_WIRE_CRC_OFFSET, 4), crc);
    store_le(data + VIGIL_WIRE_CRC_OFFSET, ~(uint64_t)crc, 4);
    assert_int_equal(vigil_wire_checksum(data, length), crc);
    data[PAYLOAD] ^= 1;
    assert_int_not_equal(vigil_wire_checksum(data, length), crc);
    g_free(data);
    g_bytes_unref(msg);
}

static void ignore_log(const gchar *domain, GLogLevelFlags level, const gchar *message,
                       gpointer data)
{
    (void)domain;
    (void)level;
    (void)message;
    (*(unsigned *)data)++;
}

/* What the names are for: errors and logs name a type by them, and the
 * fuzzer's seeds are files named after them. So each type the header's
 * field can carry either has a name, distinct and a word of lowercase
 * letters and underscores, and is one the decoder and the writer know; or
 * it has none, and both refuse it. */
static void test_type_names(void **state)
{
    (void)state;
    unsigned criticals = 0;
    guint handler = g_log_set_handler("vigil-core", G_LOG_LEVEL_CRITICAL, ignore_log, &criticals);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    GBytes *ack = build(VIGIL_WIRE_ACK, 0);
    size_t length;
    uint8_t *data = copy_of(ack, &length);
    for (unsigned type = 0; type <= UINT16_MAX; type++) {
        const char *name = vigil_wire_type_name(type);
        store_le(data + HEADER_TYPE, type, 2);
        reseal(data, length);
        struct vigil_wire_message m;
        GError *error = NULL;
        gboolean decoded = vigil_wire_decode(data, length, &m, &error);
        vigil_wire_writer *w = vigil_wire_writer_new(type, NODE_ID, 1, 0);
        gboolean writable = w != NULL;
        vigil_wire_writer_free(w);
        if (name == NULL) {
            char *needle = g_strdup_printf("unknown message type %u", type);
            expect_refused(decoded, &error, VIGIL_WIRE_ERROR_MALFORMED, needle);
            g_free(needle);
            assert_false(writable);
            continue;
        }
        /* An empty message of a known type: taken, or refused by its name. */
        if (decoded)
            vigil_wire_message_clear(&m);
        else if (strstr(error->message, name) == NULL)
            fail_msg("%s message refused without its name: %s", name, error->message);
        g_clear_error(&error);
        assert_true(writable);
        assert_true(name[0] != '\0');
        for (const char *p = name; *p != '\0'; p++)
            if (!g_ascii_islower(*p) && *p != '_')
                fail_msg("type %u's name \"%s\" is not a lowercase word", type, name);
        if (!g_hash_table_add(seen, (gpointer)name))
            fail_msg("type %u has the name \"%s\" of another", type, name);
        /* Every type the format names has its case here. */
        assert_int_equal(case_of(type)->type, type);
    }
    for (size_t t = 0; t < N_CASES; t++) /* and no case is of a type it does not name */
        assert_non_null(vigil_wire_type_name(cases[t].type));
    assert_null(vigil_wire_type_name(0xffffffffu)); /* beyond the header's field */
    assert_true(criticals > 0); /* the writer refused the unknown types loudly */
    g_hash_table_unref(seen);
    g_free(data);
    g_bytes_unref(ack);
    g_log_remove_handler("vigil-core", handler);
}

static void test_error_domain_name(void **state)
{
    (void)state;
    assert_string_equal(g_quark_to_string(VIGIL_WIRE_ERROR), "vigil-wire-error-quark");
}

static void test_clear_zeroed_message(void **state)
{
    (void)state;
    struct vigil_wire_message m;
    memset(&m, 0, sizeof m);
    vigil_wire_message_clear(&m);
    assert_message_empty(&m);
    vigil_wire_message_clear(NULL);
}

/* ---- truncation and trailing bytes, every type ------------------------------ */

/* Runs `check` on the full fixture message of every type. */
static void for_every_type(void (*check)(const struct type_case *c, const uint8_t *data,
                                         size_t length))
{
    for (size_t t = 0; t < N_CASES; t++) {
        GBytes *msg = build_full(cases[t].type);
        size_t length;
        const uint8_t *data = g_bytes_get_data(msg, &length);
        check(&cases[t], data, length);
        g_bytes_unref(msg);
    }
}

static void truncations_fail(const struct type_case *c, const uint8_t *data, size_t length)
{
    (void)c;
    for (size_t cut = 0; cut < length; cut++) {
        /* A copy of exactly `cut` bytes, so ASan catches any read past it. */
        uint8_t *prefix = g_memdup2(data, cut);
        expect_error(prefix, cut, VIGIL_WIRE_ERROR_TRUNCATED,
                     cut < VIGIL_WIRE_HEADER_BYTES ? "shorter than the 40-byte header"
                                                   : "but its header says");
        g_free(prefix);
    }
}

static void test_every_truncation_fails(void **state)
{
    (void)state;
    for_every_type(truncations_fail);
}

static void trailing_bytes_fail(const struct type_case *c, const uint8_t *data, size_t length)
{
    (void)c;
    uint8_t *longer = g_malloc0(length + 3);
    memcpy(longer, data, length);
    char *needle =
        g_strdup_printf("message of %zu bytes, but its header says %zu", length + 3, length);
    expect_error(longer, length + 3, VIGIL_WIRE_ERROR_MALFORMED, needle);
    g_free(needle);
    g_free(longer);
}

static void test_trailing_bytes_fail(void **state)
{
    (void)state;
    for_every_type(trailing_bytes_fail);
}

/* Extra bytes the header does count, after the last item. */
static void payload_left_over_fails(const struct type_case *c, const uint8_t *data, size_t length)
{
    if (c->type == VIGIL_WIRE_ACK)
        return;
    uint8_t *longer = g_malloc0(length + 2);
    memcpy(longer, data, length);
    store_le(longer + HEADER_PAYLOAD_BYTES, length + 2 - VIGIL_WIRE_HEADER_BYTES, 4);
    reseal(longer, length + 2);
    expect_error(longer, length + 2, VIGIL_WIRE_ERROR_MALFORMED, "2 bytes left over");
    g_free(longer);
}

static void test_payload_left_over_fails(void **state)
{
    (void)state;
    for_every_type(payload_left_over_fails);
}

/* ---- random corruption, every type -------------------------------------------- */

static uint64_t xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

#define FLIP_CASES 12000

struct corpus {
    GBytes *messages[2 * N_CASES];
    size_t n;
};

static void corpus_init(struct corpus *c)
{
    c->n = 0;
    for (size_t t = 0; t < N_CASES; t++) {
        c->messages[c->n++] = build_full(cases[t].type);
        if (cases[t].type != VIGIL_WIRE_ACK)
            c->messages[c->n++] = build(cases[t].type, 1);
    }
}

static void corpus_clear(struct corpus *c)
{
    for (size_t i = 0; i < c->n; i++)
        g_bytes_unref(c->messages[i]);
}

/* Flips 1 to 8 distinct random bits: flipping one twice would undo it. */
static void flip_bits(uint8_t *data, size_t length, uint64_t *rng)
{
    size_t n_flips = 1 + xorshift64(rng) % 8;
    size_t flipped[8] = {0};
    for (size_t i = 0; i < n_flips; i++) {
        size_t bit;
        gboolean seen;
        do {
            bit = xorshift64(rng) % (length * 8);
            seen = FALSE;
            for (size_t j = 0; j < i; j++)
                seen |= flipped[j] == bit;
        } while (seen);
        flipped[i] = bit;
        data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
}

static void test_bit_flips_are_detected(void **state)
{
    (void)state;
    struct corpus c;
    corpus_init(&c);
    uint64_t rng = UINT64_C(0x9e3779b97f4a7c15);
    for (int i = 0; i < FLIP_CASES; i++) {
        GBytes *msg = c.messages[i % c.n];
        size_t length;
        uint8_t *data = copy_of(msg, &length);
        flip_bits(data, length, &rng);
        struct vigil_wire_message m;
        GError *error = NULL;
        assert_false(vigil_wire_decode(data, length, &m, &error));
        assert_non_null(error);
        assert_true(error->domain == VIGIL_WIRE_ERROR);
        assert_true(error->message[0] != '\0');
        assert_message_empty(&m);
        g_error_free(error);
        g_free(data);
    }
    corpus_clear(&c);
}

/* With the CRC fixed up the decoder sees well-formed-looking corruption: it
 * must either refuse it or have decoded it into something that encodes back
 * to exactly these bytes. */
static void test_bit_flips_past_the_checksum(void **state)
{
    (void)state;
    struct corpus c;
    corpus_init(&c);
    uint64_t rng = UINT64_C(0x2545f4914f6cdd1d);
    unsigned rejected = 0, accepted = 0;
    for (int i = 0; i < FLIP_CASES; i++) {
        GBytes *msg = c.messages[i % c.n];
        size_t length;
        uint8_t *data = copy_of(msg, &length);
        flip_bits(data, length, &rng);
        reseal(data, length);
        struct vigil_wire_message m;
        GError *error = NULL;
        if (vigil_wire_decode(data, length, &m, &error)) {
            assert_null(error);
            GBytes *again = vigil_wire_encode_message(&m, &error);
            assert_null(error);
            assert_int_equal(g_bytes_get_size(again), length);
            assert_memory_equal(g_bytes_get_data(again, NULL), data, length);
            g_bytes_unref(again);
            vigil_wire_message_clear(&m);
            accepted++;
        } else {
            assert_non_null(error);
            assert_true(error->message[0] != '\0');
            assert_message_empty(&m);
            g_error_free(error);
            rejected++;
        }
        g_free(data);
    }
    print_message("bit flips with a valid CRC: %u rejected, %u accepted\n", rejected, accepted);
    assert_true(rejected > 0);
    assert_true(accepted > 0);
    corpus_clear(&c);
}

/* ---- hostile fields with a correct CRC ------------------------------------------ */

#define ALL SIZE_MAX /* every fixture of the type */

/* A header field of a fixture message changed. */
struct header_patch {
    enum vigil_wire_type type;
    size_t items;
    size_t offset, bytes;
    uint64_t value;
    int code;
    const char *needle;
};

static const struct header_patch header_patches[] = {
    /* Counts the payload cannot hold, refused before they size anything. */
    {VIGIL_WIRE_SAMPLES, ALL, HEADER_COUNT, 4, UINT32_MAX, VIGIL_WIRE_ERROR_MALFORMED,
     "4294967295 items need at least 24 bytes"},
    {VIGIL_WIRE_ACTIVITIES, ALL, HEADER_COUNT, 4, UINT32_MAX, VIGIL_WIRE_ERROR_MALFORMED,
     "4294967295 items"},
    {VIGIL_WIRE_METRICS, ALL, HEADER_COUNT, 4, UINT32_MAX, VIGIL_WIRE_ERROR_MALFORMED,
     "4294967295 items"},
    {VIGIL_WIRE_ANOMALIES, ALL, HEADER_COUNT, 4, UINT32_MAX, VIGIL_WIRE_ERROR_MALFORMED,
     "4294967295 items"},
    {VIGIL_WIRE_NAMES, ALL, HEADER_COUNT, 4, UINT32_MAX, VIGIL_WIRE_ERROR_MALFORMED,
     "4294967295 items"},
    {VIGIL_WIRE_STATES, ALL, HEADER_COUNT, 4, 1u << 20, VIGIL_WIRE_ERROR_MALFORMED,
     "1048576 items"},
    {VIGIL_WIRE_PROCESSES, ALL, HEADER_COUNT, 4, UINT32_MAX, VIGIL_WIRE_ERROR_MALFORMED,
     "4294967295 items need at least 52 bytes"},
    /* One more item than the payload holds. */
    {VIGIL_WIRE_SAMPLES, ALL, HEADER_COUNT, 4, G_N_ELEMENTS(samples) + 1,
     VIGIL_WIRE_ERROR_MALFORMED, "need at least 24 bytes"},
    {VIGIL_WIRE_ROLLUPS, ALL, HEADER_COUNT, 4, G_N_ELEMENTS(rollups) + 1,
     VIGIL_WIRE_ERROR_MALFORMED, "need at least 64 bytes"},
    /* Plausible for the payload's size, but the third item is not there. */
    {VIGIL_WIRE_METRICS, 2, HEADER_COUNT, 4, 3, VIGIL_WIRE_ERROR_MALFORMED,
     "metrics message: item 3 of 3 is truncated: needs 6 bytes, 0 left"},
    {VIGIL_WIRE_ACTIVITIES, 2, HEADER_COUNT, 4, 1, VIGIL_WIRE_ERROR_MALFORMED,
     "80 bytes left over after its 1 items"},
    {VIGIL_WIRE_ACK, ALL, HEADER_COUNT, 4, 1, VIGIL_WIRE_ERROR_MALFORMED,
     "ack message with 1 items"},
    {VIGIL_WIRE_NODE, 1, HEADER_COUNT, 4, 2, VIGIL_WIRE_ERROR_MALFORMED,
     "node message with 2 items; it holds exactly one"},
    {VIGIL_WIRE_NODE, 1, HEADER_COUNT, 4, 0, VIGIL_WIRE_ERROR_MALFORMED,
     "node message with 0 items"},
    {VIGIL_WIRE_REFUSED, 1, HEADER_COUNT, 4, 0, VIGIL_WIRE_ERROR_MALFORMED,
     "refused message with 0 items; it holds exactly one"},
    {VIGIL_WIRE_SAMPLES, ALL, HEADER_VERSION, 2, 1, VIGIL_WIRE_ERROR_VERSION,
     "wire version 1, this vigil reads version 2"},
    {VIGIL_WIRE_BATCH, ALL, HEADER_VERSION, 2, 3, VIGIL_WIRE_ERROR_VERSION,
     "wire version 3, this vigil reads version 2"},
    {VIGIL_WIRE_SAMPLES, ALL, 0, 4, 0x46445025, VIGIL_WIRE_ERROR_MALFORMED,
     "not a vigil message: magic 0x46445025"},
    {VIGIL_WIRE_SAMPLES, ALL, HEADER_RESERVED, 4, 1, VIGIL_WIRE_ERROR_MALFORMED,
     "reserved header field is 0x00000001"},
    {VIGIL_WIRE_SAMPLES, ALL, HEADER_TYPE, 2, 0, VIGIL_WIRE_ERROR_MALFORMED,
     "unknown message type 0"},
    {VIGIL_WIRE_SAMPLES, ALL, HEADER_TYPE, 2, VIGIL_WIRE_TYPE_COUNT + 1, VIGIL_WIRE_ERROR_MALFORMED,
     "unknown message type"},
    {VIGIL_WIRE_SAMPLES, ALL, HEADER_PAYLOAD_BYTES, 4, VIGIL_WIRE_MAX_PAYLOAD_BYTES + 1,
     VIGIL_WIRE_ERROR_TOO_LARGE, "payload of 67108865 bytes is over the limit"},
    /* The other type reads a samples payload: sizes or fields disagree. */
    {VIGIL_WIRE_SAMPLES, ALL, HEADER_TYPE, 2, VIGIL_WIRE_STATES, VIGIL_WIRE_ERROR_MALFORMED,
     "states message"},
};

static GBytes *fixture_message(enum vigil_wire_type type, size_t items)
{
    return items == ALL ? build_full(type) : build(type, items);
}

static void test_header_patches(void **state)
{
    (void)state;
    for (size_t i = 0; i < G_N_ELEMENTS(header_patches); i++) {
        const struct header_patch *p = &header_patches[i];
        expect_patched(fixture_message(p->type, p->items), p->offset, p->value, p->bytes, p->code,
                       p->needle);
    }
}

union value {
    uint64_t u; /* a number: an integer, or (.d) a double's bits */
    double d;
    const char *s;
    char **argv;
};

#define VALUE (-1) /* the field's value, or its string's length */

/* A field of a fixture item changed in its message; the decoder must refuse
 * it as malformed. */
struct item_patch {
    enum vigil_wire_type type;
    size_t items, item;
    const char *field;
    int byte; /* VALUE, or which byte of its string */
    union value value;
    const char *needle;
};

static const struct item_patch item_patches[] = {
    {VIGIL_WIRE_ACTIVITIES,
     ALL,
     1,
     "layer",
     VALUE,
     {.u = 9},
     "activities message: item 2 of 3: activity seq"},
    {VIGIL_WIRE_ACTIVITIES, ALL, 1, "layer", VALUE, {.u = 9}, "unknown layer 9"},
    {VIGIL_WIRE_ACTIVITIES,
     ALL,
     0,
     "op",
     VALUE,
     {.u = VIGIL_OP_STDIO_FREAD},
     "is not an operation of layer posix"},
    {VIGIL_WIRE_ACTIVITIES,
     ALL,
     0,
     "end_ns",
     VALUE,
     {.u = 999},
     "ends (999 ns) before it starts (1000 ns)"},
    {VIGIL_WIRE_ACTIVITIES, ALL, 0, "record_type", VALUE, {.u = 0}, "is not an activity"},
    {VIGIL_WIRE_ACTIVITIES, ALL, 0, "flags", VALUE, {.u = 0x80}, "unknown flags 0x80"},
    {VIGIL_WIRE_NAMES, ALL, 0, "path", 4, {.u = 0}, "contains a NUL byte"},
    {VIGIL_WIRE_NAMES, ALL, 0, "file_id", VALUE, {.u = 0}, "file id 0"},
    {VIGIL_WIRE_NAMES, ALL, 0, "length", VALUE, {.u = 5000}, "path is truncated: needs 5000 bytes"},
    {VIGIL_WIRE_METRICS, ALL, 0, "id", VALUE, {.u = 0}, "metric id 0"},
    {VIGIL_WIRE_METRICS, ALL, 0, "kind", VALUE, {.u = 3}, "unknown kind 3"},
    {VIGIL_WIRE_METRICS, ALL, 0, "origin", VALUE, {.u = 0}, "unknown origin 0"},
    {VIGIL_WIRE_METRICS,
     ALL,
     0,
     "name",
     0,
     {.u = 'E'},
     "name \"Energy.pkg0_j\" is not a valid metric name"},
    {VIGIL_WIRE_METRICS, ALL, 0, "unit", 0, {.u = 0xff}, "unit is not valid UTF-8"},
    {VIGIL_WIRE_METRICS,
     ALL,
     0,
     "name",
     VALUE,
     {.u = 0xffff},
     "item 1 of 3: name is truncated: needs 65535 bytes"},
    {VIGIL_WIRE_SAMPLES,
     ALL,
     0,
     "value",
     VALUE,
     {.d = NAN},
     "samples message: item 1 of 4: sample of metric 1: value"},
    {VIGIL_WIRE_SAMPLES, ALL, 0, "value", VALUE, {.d = NAN}, "is not finite"},
    {VIGIL_WIRE_SAMPLES, ALL, 0, "value", VALUE, {.d = -INFINITY}, "value -inf is not finite"},
    {VIGIL_WIRE_SAMPLES, ALL, 0, "metric_id", VALUE, {.u = 0}, "sample of metric 0"},
    {VIGIL_WIRE_SAMPLES, ALL, 0, "flags", VALUE, {.u = 2}, "unknown flags 0x2"},
    {VIGIL_WIRE_ANOMALIES,
     ALL,
     0,
     "health",
     VALUE,
     {.u = 0},
     "anomalies message: item 1 of 3: unknown health 0"},
    {VIGIL_WIRE_ANOMALIES,
     ALL,
     0,
     "health",
     VALUE,
     {.u = VIGIL_HEALTH_COUNT + 1},
     "unknown health 7"},
    {VIGIL_WIRE_ANOMALIES, ALL, 0, "level", VALUE, {.u = 4}, "unknown level 4"},
    {VIGIL_WIRE_ANOMALIES, ALL, 0, "reserved", VALUE, {.u = 1}, "reserved field is 0x0001"},
    {VIGIL_WIRE_ANOMALIES, ALL, 0, "value", VALUE, {.d = INFINITY}, "value inf is not finite"},
    {VIGIL_WIRE_ANOMALIES, ALL, 0, "expected_min", VALUE, {.d = NAN}, "contains NaN"},
    {VIGIL_WIRE_ANOMALIES, ALL, 0, "expected_max", VALUE, {.d = -NAN}, "contains NaN"},
    {VIGIL_WIRE_ANOMALIES,
     ALL,
     0,
     "expected_min",
     VALUE,
     {.d = 1e9},
     "expected minimum 1e+09 is above expected maximum 250"},
    {VIGIL_WIRE_ANOMALIES, ALL, 0, "plugin", 0, {.u = 0}, "plugin contains a NUL byte"},
    {VIGIL_WIRE_ANOMALIES,
     ALL,
     0,
     "plugin",
     VALUE,
     {.u = 0xfff0},
     "plugin is truncated: needs 65520 bytes"},
    {VIGIL_WIRE_STATES,
     ALL,
     0,
     "level",
     VALUE,
     {.u = 0},
     "states message: item 1 of 3: unknown level 0"},
    {VIGIL_WIRE_STATES, ALL, 1, "health", VALUE, {.u = 0xff}, "item 2 of 3: unknown health 255"},
    {VIGIL_WIRE_STATES, ALL, 0, "reserved", VALUE, {.u = 0x100}, "reserved field is 0x0100"},
    /* A NUL cannot be in a C string, so only the decoder can meet one. */
    {VIGIL_WIRE_NODE,
     1,
     0,
     "hostname",
     4,
     {.u = 0},
     "node message: item 1 of 1: hostname contains a NUL"},
    {VIGIL_WIRE_PROCESSES, 1, 0, "run_key", 0, {.u = 0}, "run_key contains a NUL byte"},
    {VIGIL_WIRE_PROCESSES, 1, 0, "cwd", 3, {.u = 0}, "cwd contains a NUL byte"},
    {VIGIL_WIRE_PROCESSES, 1, 0, "argv[1]", 1, {.u = 0}, "argv[1] contains a NUL byte"},
    {VIGIL_WIRE_WINDOWS, 1, 0, "reasons", 10, {.u = 0}, "reasons contains a NUL byte"},
    {VIGIL_WIRE_SUMMARIES, 1, 0, "report_json", 0, {.u = 0}, "report_json contains a NUL byte"},
    {VIGIL_WIRE_REFUSED, 1, 0, "reason", 9, {.u = 0}, "reason contains a NUL byte"},
    /* Lengths and counts a sender cannot have meant, refused before
     * anything is read or allocated by them. */
    {VIGIL_WIRE_PROCESSES,
     1,
     0,
     "argc",
     VALUE,
     {.u = UINT32_MAX},
     "argc 4294967295 is over the limit of 16384"},
    {VIGIL_WIRE_PROCESSES,
     1,
     0,
     "argc",
     VALUE,
     {.u = 5},
     "length of argv[4] is truncated: needs 2 bytes, 0 left"},
    {VIGIL_WIRE_PROCESSES, 1, 0, "argc", VALUE, {.u = 3}, "4 bytes left over after its 1 items"},
    {VIGIL_WIRE_SUMMARIES,
     1,
     0,
     "report_json",
     VALUE,
     {.u = UINT32_MAX},
     "report_json of 4294967295 bytes is longer than 1048576"},
    {VIGIL_WIRE_SUMMARIES,
     1,
     0,
     "report_json",
     VALUE,
     {.u = VIGIL_WIRE_TEXT_MAX},
     "report_json is truncated: needs 1048576 bytes"},
    {VIGIL_WIRE_WINDOWS,
     1,
     0,
     "reasons",
     VALUE,
     {.u = VIGIL_WIRE_TEXT_MAX + 1},
     "reasons of 1048577 bytes is longer than 1048576"},
};

static void test_item_patches(void **state)
{
    (void)state;
    for (size_t i = 0; i < G_N_ELEMENTS(item_patches); i++) {
        const struct item_patch *p = &item_patches[i];
        const struct type_case *c = case_of(p->type);
        expect_patched(fixture_message(p->type, p->items),
                       field_offset(c, p->item, p->field, p->byte), p->value.u,
                       field_width(c, p->field, p->byte), VIGIL_WIRE_ERROR_MALFORMED, p->needle);
    }
}

/* Too short for the process id it must start with. */
static void test_no_room_for_the_process_id(void **state)
{
    (void)state;
    uint8_t data[PAYLOAD + 4] = {0};
    store_le(data, VIGIL_WIRE_MAGIC, 4);
    store_le(data + HEADER_VERSION, VIGIL_WIRE_VERSION, 2);
    store_le(data + HEADER_TYPE, VIGIL_WIRE_NAMES, 2);
    store_le(data + HEADER_PAYLOAD_BYTES, 4, 4);
    reseal(data, sizeof data);
    expect_error(data, sizeof data, VIGIL_WIRE_ERROR_MALFORMED,
                 "no room for the 8-byte process id");
}

/* The CRC is checked before the fields it protects. */
static void test_damage_under_the_checksum(void **state)
{
    (void)state;
    GBytes *msg = build_full(VIGIL_WIRE_SAMPLES);
    size_t length;
    uint8_t *data = copy_of(msg, &length);
    data[PAYLOAD + 9] ^= 0x10;
    expect_error(data, length, VIGIL_WIRE_ERROR_CHECKSUM, "checksum mismatch");
    g_free(data);
    g_bytes_unref(msg);

    msg = build_full(VIGIL_WIRE_STATES);
    data = copy_of(msg, &length);
    data[HEADER_TYPE] = 0x7f;
    expect_error(data, length, VIGIL_WIRE_ERROR_CHECKSUM, "checksum");
    g_free(data);
    g_bytes_unref(msg);
}

/* ---- bad items, refused by the decoder and by the writer ------------------- */

static void set_field(const struct type_case *c, void *item, const char *name, union value v)
{
    if (strcmp(name, "argc") == 0) {
        set_member_value(item, &process_argc, v.u);
        return;
    }
    const struct spec *f = spec_field(c, name);
    if (f->kind == LE)
        set_member_value(item, f, v.u);
    else if (f->kind == ARGV32)
        set_member_pointer(item, f, v.argv);
    else
        set_member_pointer(item, f, v.s);
}

/* The decoder refuses the item (encoded by hand, sealed) and the writer
 * refuses to add it, both naming the type and with `needle`; the writer
 * goes on as if it had not been asked. A missing string (NULL) only a C
 * caller can give: writer_only. */
static void expect_bad_item(const struct type_case *c, const void *item, const char *needle,
                            gboolean writer_only)
{
    const char *name = vigil_wire_type_name(c->type);
    if (!writer_only) {
        GBytes *msg = hand_items(c, SEQUENCE, item, 1);
        char *named = g_strdup_printf("%s message: item 1 of 1: ", name);
        expect_bytes_error(msg, VIGIL_WIRE_ERROR_MALFORMED, named);
        expect_bytes_error(msg, VIGIL_WIRE_ERROR_MALFORMED, needle);
        g_free(named);
        g_bytes_unref(msg);
    }

    vigil_wire_writer *w =
        vigil_wire_writer_new(c->type, NODE_ID, SEQUENCE, c->process_id ? PROCESS_ID : 0);
    GError *error = NULL;
    if (!c->one_item)
        assert_true(c->add(w, fixture(c, 0), &error));
    uint32_t count = vigil_wire_writer_count(w);
    assert_false(c->add(w, item, &error));
    char *named = g_strdup_printf("cannot add to the %s message: ", name);
    if (!g_str_has_prefix(error->message, named))
        fail_msg("error \"%s\" does not start with \"%s\"", error->message, named);
    g_free(named);
    expect_refused(FALSE, &error, VIGIL_WIRE_ERROR_MALFORMED, needle);
    assert_int_equal(vigil_wire_writer_count(w), count);
    if (c->one_item)
        assert_true(c->add(w, fixture(c, 0), &error));
    GBytes *made = vigil_wire_writer_finish(w), *good = build_seq(c->type, 1, SEQUENCE);
    assert_true(g_bytes_equal(made, good));
    g_bytes_unref(made);
    g_bytes_unref(good);
}

struct change {
    const char *field; /* NULL: none */
    union value value;
};

/* A fixture with up to three fields changed. */
struct bad_item {
    enum vigil_wire_type type;
    size_t fixture;
    struct change set[3];
    const char *needle;
};

static char *surrogate_argv[] = {"a", "b", "\xed\xa0\x80", NULL}; /* a UTF-16 surrogate */

static const struct bad_item bad_items[] = {
    {VIGIL_WIRE_ACTIVITIES,
     0,
     {{"op", {.u = VIGIL_OP_MPIIO_READ}}},
     "activity seq 1: operation 212 is not an operation of layer posix"},
    {VIGIL_WIRE_NAMES,
     0,
     {{"file_id", {.u = 2}}, {"path", {.s = "/b\0c"}}, {"length", {.u = 4}}},
     "file 2: path contains a NUL byte"},
    {VIGIL_WIRE_NAMES, 0, {{"file_id", {.u = VIGIL_FILE_NONE}}}, "file id 0"},
    {VIGIL_WIRE_METRICS,
     0,
     {{"name", {.s = "Load Average"}}},
     "name \"Load Average\" is not a valid metric name"},
    {VIGIL_WIRE_METRICS, 0, {{"id", {.u = 0}}}, "metric id 0"},
    {VIGIL_WIRE_METRICS, 0, {{"kind", {.u = 9}}}, "unknown kind 9"},
    {VIGIL_WIRE_METRICS, 0, {{"source", {.s = "\xc3("}}}, "source is not valid UTF-8"},
    {VIGIL_WIRE_SAMPLES, 0, {{"value", {.d = NAN}}}, "is not finite"},
    {VIGIL_WIRE_SAMPLES, 0, {{"value", {.d = INFINITY}}}, "is not finite"},
    {VIGIL_WIRE_SAMPLES, 0, {{"metric_id", {.u = 0}}}, "metric 0"},
    {VIGIL_WIRE_SAMPLES, 0, {{"flags", {.u = 0x8}}}, "unknown flags 0x8"},
    {VIGIL_WIRE_ANOMALIES,
     0,
     {{"expected_min", {.d = 300.0}}, {"expected_max", {.d = 200.0}}},
     "expected minimum 300 is above expected maximum 200"},
    {VIGIL_WIRE_ANOMALIES, 0, {{"message", {.s = "\xff"}}}, "message is not valid UTF-8"},
    {VIGIL_WIRE_ANOMALIES, 0, {{"level", {.u = 0}}}, "unknown level 0"},
    {VIGIL_WIRE_STATES, 0, {{"health", {.u = 0}}}, "unknown health 0"},
    {VIGIL_WIRE_NODE, 0, {{"reserved", {.u = 1}}}, "reserved field is 0x00000001, not 0"},
    {VIGIL_WIRE_NODE, 0, {{"cycle_ms", {.u = 0}}}, "cycle_ms is 0"},
    {VIGIL_WIRE_NODE,
     0,
     {{"cycle_end_ns", {.u = 999}}},
     "cycle 42: ends (999 ns) before it starts (1000 ns)"},
    {VIGIL_WIRE_NODE, 0, {{"hostname", {.s = ""}}}, "hostname is empty"},
    {VIGIL_WIRE_NODE, 0, {{"hostname", {.s = "n\xff"}}}, "hostname is not valid UTF-8"},
    {VIGIL_WIRE_NODE,
     0,
     {{"hostname", {.s = "\xc0\x80"}}}, /* an overlong NUL */
     "hostname is not valid UTF-8"},
    {VIGIL_WIRE_PROCESSES, 0, {{"process_id", {.u = 0}}}, "process id 0, which is never a process"},
    {VIGIL_WIRE_PROCESSES, 0, {{"pid", {.u = 0}}}, "process 17: pid 0 is not a process id"},
    {VIGIL_WIRE_PROCESSES,
     0,
     {{"pid", {.u = (uint64_t)-5}}},
     "process 17: pid -5 is not a process id"},
    {VIGIL_WIRE_PROCESSES, 0, {{"rank", {.u = (uint64_t)-2}}}, "process 17: rank -2 is below -1"},
    {VIGIL_WIRE_PROCESSES,
     0,
     {{"exit_code", {.u = 256}}},
     "exit code 256 is outside -1 (unknown) to 255"},
    {VIGIL_WIRE_PROCESSES, 0, {{"exit_code", {.u = (uint64_t)-2}}}, "exit code -2 is outside"},
    {VIGIL_WIRE_PROCESSES,
     0,
     {{"end_ns", {.u = 999}}},
     "process 17: ends (999 ns) before it starts (1000 ns)"},
    {VIGIL_WIRE_PROCESSES, 0, {{"run_key", {.s = ""}}}, "process 17: run_key is empty"},
    {VIGIL_WIRE_PROCESSES, 0, {{"job", {.s = "\xe2\x82"}}}, "process 17: job is not valid UTF-8"},
    {VIGIL_WIRE_PROCESSES, 0, {{"program", {.s = "/bin/\xfe"}}}, "program is not valid UTF-8"},
    {VIGIL_WIRE_PROCESSES, 0, {{"cwd", {.s = "/tmp/\x80"}}}, "cwd is not valid UTF-8"},
    {VIGIL_WIRE_PROCESSES,
     0,
     {{"argc", {.u = 3}}, {"argv", {.argv = surrogate_argv}}},
     "process 17: argv[2] is not valid UTF-8"},
    {VIGIL_WIRE_ROLLUPS,
     0,
     {{"metric_id", {.u = 0}}},
     "roll-up of metric 0, which is never a metric"},
    {VIGIL_WIRE_ROLLUPS, 0, {{"flags", {.u = 2}}}, "roll-up of metric 3: unknown flags 0x2"},
    {VIGIL_WIRE_ROLLUPS, 0, {{"reserved", {.u = 5}}}, "reserved field is 0x00000005"},
    {VIGIL_WIRE_ROLLUPS,
     0,
     {{"end_ns", {.u = 999}}},
     "roll-up of metric 3: ends (999 ns) before it starts"},
    {VIGIL_WIRE_ROLLUPS, 0, {{"count", {.u = 0}}}, "count 0"},
    {VIGIL_WIRE_ROLLUPS, 0, {{"min", {.d = NAN}}}, "is NaN"},
    {VIGIL_WIRE_ROLLUPS, 0, {{"mean", {.d = -NAN}}}, "is NaN"},
    {VIGIL_WIRE_ROLLUPS, 0, {{"max", {.d = NAN}}}, "is NaN"},
    {VIGIL_WIRE_ROLLUPS,
     0,
     {{"min", {.d = 5.0}}, {"mean", {.d = 4.5}}},
     "min 5, mean 4.5 and max 4 are out of order"},
    /* Past max by far more than rounding. */
    {VIGIL_WIRE_ROLLUPS, 0, {{"mean", {.d = 4.000001}}}, "out of order"},
    {VIGIL_WIRE_ROLLUPS, 0, {{"mean", {.d = 0.5}}}, "out of order"},
    {VIGIL_WIRE_WINDOWS,
     0,
     {{"first_cycle", {.u = 6}}},
     "window of process 0: first cycle 6 is after its last cycle 5"},
    {VIGIL_WIRE_WINDOWS,
     1,
     {{"end_ns", {.u = 0}}, {"start_ns", {.u = 1}}},
     "window of process 17: ends (0 ns) before it starts"},
    {VIGIL_WIRE_WINDOWS, 0, {{"reasons", {.s = "node \xff"}}}, "reasons is not valid UTF-8"},
    {VIGIL_WIRE_SUMMARIES, 0, {{"process_id", {.u = 0}}}, "summary of process id 0"},
    {VIGIL_WIRE_SUMMARIES, 0, {{"report_json", {.s = ""}}}, "report_json is empty"},
    {VIGIL_WIRE_SUMMARIES,
     0,
     {{"report_json", {.s = "{\"a\":\"\xc3\"}"}}},
     "report_json is not valid UTF-8"},
    {VIGIL_WIRE_REFUSED, 0, {{"reason", {.s = ""}}}, "reason is empty"},
    {VIGIL_WIRE_REFUSED,
     0,
     {{"reason", {.s = "\xf8\x88\x80\x80\x80"}}},
     "reason is not valid UTF-8"},
    {VIGIL_WIRE_JOBS, 0, {{"job_id", {.s = ""}}}, "job : job_id is empty"},
    {VIGIL_WIRE_JOBS,
     0,
     {{"flags", {.u = VIGIL_WIRE_JOB_FROM_ROOT | 2}}},
     "job 4242: unknown flags 0x2"},
    {VIGIL_WIRE_JOBS,
     0,
     {{"end_ns", {.u = 999}}},
     "job 4242: ends (999 ns) before it starts (1000 ns)"},
    {VIGIL_WIRE_JOBS,
     0,
     {{"user",
       {.s = "al\xff"
             "ce"}}},
     "job 4242: user is not valid UTF-8"},
    {VIGIL_WIRE_JOBS, 0, {{"nodes", {.s = "n\xc3"}}}, "job 4242: nodes is not valid UTF-8"},
    {VIGIL_WIRE_DROPS, 0, {{"pid", {.u = 0}}}, "drops of pid 0, not a process"},
    {VIGIL_WIRE_DROPS, 0, {{"counter", {.u = 0}}}, "drops of pid 4242 counted by counter 0"},
    {VIGIL_WIRE_DROPS, 0, {{"reserved", {.u = 1}}}, "reserved field is 0x00000001, not 0"},
    {VIGIL_WIRE_UNWATCHED_ENDS,
     0,
     {{"process_id", {.u = 0}}},
     "process id 0, which is never a process"},
    {VIGIL_WIRE_UNWATCHED_ENDS,
     0,
     {{"latest_end_ns", {.u = 0}}, {"earliest_end_ns", {.u = 0}}},
     "unwatched end of process 17: latest_end_ns is 0"},
    {VIGIL_WIRE_UNWATCHED_ENDS,
     0,
     {{"earliest_end_ns", {.u = 2001}}},
     "unwatched end of process 17: ends (2000 ns) before it starts (2001 ns)"},
    {VIGIL_WIRE_UNWATCHED_ENDS, 0, {{"cpu_s", {.d = -1}}}, "cpu_s is -1; it is NaN (unknown)"},
    {VIGIL_WIRE_UNWATCHED_ENDS, 0, {{"energy_j", {.d = INFINITY}}}, "energy_j is inf"},
    {VIGIL_WIRE_UNWATCHED_ENDS, 0, {{"flags", {.u = 8}}}, "unknown flags 0x8"},
    {VIGIL_WIRE_UNWATCHED_ENDS, 0, {{"reserved", {.u = 3}}}, "reserved field is 0x00000003"},
};

/* A missing string: only a C caller can give one, so only the writer is
 * asked. */
static const struct bad_item missing_strings[] = {
    {VIGIL_WIRE_METRICS, 0, {{"source", {.s = NULL}}}, "source is missing"},
    {VIGIL_WIRE_ANOMALIES, 0, {{"plugin", {.s = NULL}}}, "plugin is missing"},
};

/* A copy of a fixture, to change; big enough for any item. */
union any_item {
    struct vigil_activity activity;
    struct vigil_wire_name name;
    struct vigil_metric_desc metric;
    struct vigil_sample sample;
    struct vigil_wire_anomaly anomaly;
    struct vigil_wire_state state;
    struct vigil_wire_node node;
    struct vigil_wire_process process;
    struct vigil_wire_rollup rollup;
    struct vigil_wire_window window;
    struct vigil_wire_summary summary;
    struct vigil_wire_refusal refusal;
    struct vigil_wire_job job;
    struct vigil_wire_drop drop;
    struct vigil_wire_unwatched_end unwatched_end;
};

static void expect_bad_items(const struct bad_item *bad, size_t n, gboolean writer_only)
{
    for (size_t i = 0; i < n; i++) {
        const struct bad_item *b = &bad[i];
        const struct type_case *c = case_of(b->type);
        union any_item item;
        assert_true(c->fixture_bytes <= sizeof item);
        memcpy(&item, fixture(c, b->fixture), c->fixture_bytes);
        for (size_t k = 0; k < G_N_ELEMENTS(b->set) && b->set[k].field != NULL; k++)
            set_field(c, &item, b->set[k].field, b->set[k].value);
        expect_bad_item(c, &item, b->needle, writer_only);
    }
}

static void test_bad_items(void **state)
{
    (void)state;
    expect_bad_items(bad_items, G_N_ELEMENTS(bad_items), FALSE);
    expect_bad_items(missing_strings, G_N_ELEMENTS(missing_strings), TRUE);
}

static char *long_text(size_t bytes)
{
    char *text = g_malloc(bytes + 1);
    memset(text, 'r', bytes);
    text[bytes] = '\0';
    return text;
}

/* Bad items too long to write out in the table. */
static void test_bad_long_items(void **state)
{
    (void)state;
    char *long_unit = long_text(VIGIL_METRIC_TEXT_MAX + 1);
    struct vigil_metric_desc metric = metrics[0];
    metric.unit = long_unit;
    expect_bad_item(case_of(VIGIL_WIRE_METRICS), &metric, "unit of 256 bytes is longer than 255",
                    FALSE);
    g_free(long_unit);

    char *too_long = long_text(VIGIL_WIRE_TEXT_MAX + 1);
    struct vigil_wire_window window = windows[0];
    window.reasons = too_long;
    expect_bad_item(case_of(VIGIL_WIRE_WINDOWS), &window,
                    "reasons of 1048577 bytes is longer than 1048576", FALSE);
    struct vigil_wire_summary summary = summaries[0];
    summary.report_json = too_long;
    expect_bad_item(case_of(VIGIL_WIRE_SUMMARIES), &summary,
                    "report_json of 1048577 bytes is longer than 1048576", FALSE);
    g_free(too_long);

    /* One argument too many, all empty. */
    char **many = g_new0(char *, VIGIL_WIRE_ARGV_MAX + 2);
    for (size_t k = 0; k <= VIGIL_WIRE_ARGV_MAX; k++)
        many[k] = "";
    struct vigil_wire_process process = processes[0];
    process.argc = VIGIL_WIRE_ARGV_MAX + 1;
    process.argv = many;
    expect_bad_item(case_of(VIGIL_WIRE_PROCESSES), &process,
                    "argc 16385 is over the limit of 16384", FALSE);
    g_free(many);
}

/* ---- the writer ------------------------------------------------------------ */

/* The writer stops at the payload limit and what it made still decodes. */
static void test_writer_refuses_to_grow_too_large(void **state)
{
    (void)state;
    char *text = g_malloc(VIGIL_WIRE_STRING_MAX + 1);
    memset(text, 'm', VIGIL_WIRE_STRING_MAX);
    text[VIGIL_WIRE_STRING_MAX] = '\0';
    struct vigil_wire_anomaly big = anomalies[0];
    big.plugin = big.metric = big.message = text;
    size_t item_bytes = 50 + 3 * VIGIL_WIRE_STRING_MAX;

    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_ANOMALIES, 1, 1, 0);
    GError *error = NULL;
    while (vigil_wire_add_anomaly(w, &big, &error))
        ;
    assert_true(g_error_matches(error, VIGIL_WIRE_ERROR, VIGIL_WIRE_ERROR_TOO_LARGE));
    g_clear_error(&error);
    uint32_t count = vigil_wire_writer_count(w);
    assert_int_equal(count, VIGIL_WIRE_MAX_PAYLOAD_BYTES / item_bytes);
    GBytes *msg = vigil_wire_writer_finish(w);
    assert_int_equal(g_bytes_get_size(msg), VIGIL_WIRE_HEADER_BYTES + count * item_bytes);

    struct vigil_wire_message m;
    decode_bytes(msg, &m);
    assert_int_equal(m.header.count, count);
    assert_string_equal(m.anomalies[count - 1].message, text);
    vigil_wire_message_clear(&m);
    g_bytes_unref(msg);
    g_free(text);
}

static void test_encode_message_refuses_inconsistent_messages(void **state)
{
    (void)state;
    struct vigil_wire_message m;
    memset(&m, 0, sizeof m);
    GError *error = NULL;
    assert_null(vigil_wire_encode_message(&m, &error));
    assert_true(g_error_matches(error, VIGIL_WIRE_ERROR, VIGIL_WIRE_ERROR_MALFORMED));
    g_clear_error(&error);

    m.header.type = VIGIL_WIRE_SAMPLES;
    m.process_id = 4;
    assert_null(vigil_wire_encode_message(&m, &error));
    assert_non_null(strstr(error->message, "carries no process id"));
    g_clear_error(&error);

    m.process_id = 0;
    m.header.count = 2;
    assert_null(vigil_wire_encode_message(&m, &error));
    assert_non_null(strstr(error->message, "without its items"));
    g_clear_error(&error);

    struct vigil_sample bad[2] = {samples[0], samples[1]};
    bad[1].value = NAN;
    m.samples = bad;
    assert_null(vigil_wire_encode_message(&m, &error));
    assert_non_null(strstr(error->message, "not finite"));
    g_clear_error(&error);
}

/* The writer's half of it; the decoder's is in header_patches. */
static void test_node_and_refusal_hold_exactly_one(void **state)
{
    (void)state;
    GError *error = NULL;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_NODE, NODE_ID, 1, 0);
    assert_true(vigil_wire_add_node(w, &nodes[0], &error));
    expect_refused(vigil_wire_add_node(w, &nodes[0], &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "cannot add to the node message: it holds exactly one item");
    assert_int_equal(vigil_wire_writer_count(w), 1);
    vigil_wire_writer_free(w);

    w = vigil_wire_writer_new(VIGIL_WIRE_REFUSED, NODE_ID, 1, 0);
    assert_true(vigil_wire_add_refusal(w, &refusals[0], &error));
    expect_refused(vigil_wire_add_refusal(w, &refusals[0], &error), &error,
                   VIGIL_WIRE_ERROR_MALFORMED, "refused message: it holds exactly one item");
    GBytes *msg = vigil_wire_writer_finish(w),
           *by_hand = hand_items(case_of(VIGIL_WIRE_REFUSED), 1, refusals, 1);
    assert_true(g_bytes_equal(msg, by_hand));
    g_bytes_unref(msg);
    g_bytes_unref(by_hand);
}

struct logged {
    unsigned criticals;
    char *last;
};

static void record_log(const gchar *domain, GLogLevelFlags level, const gchar *message,
                       gpointer data)
{
    (void)domain;
    struct logged *log = data;
    if (level & G_LOG_LEVEL_CRITICAL)
        log->criticals++;
    g_free(log->last);
    log->last = g_strdup(message);
}

/* Finishing a message the decoder would refuse whole is a programming
 * error: a critical and no message, never a malformed one. */
static void test_finish_refuses_a_message_without_its_items(void **state)
{
    (void)state;
    struct logged log = {0, NULL};
    guint handler = g_log_set_handler("vigil-core", G_LOG_LEVEL_CRITICAL, record_log, &log);
    static const enum vigil_wire_type types[] = {VIGIL_WIRE_NODE, VIGIL_WIRE_REFUSED,
                                                 VIGIL_WIRE_BATCH};
    static const char *const needles[] = {"node message with 0 items", "refused message with 0",
                                          "batch message holds no messages"};
    for (size_t t = 0; t < G_N_ELEMENTS(types); t++) {
        vigil_wire_writer *w = vigil_wire_writer_new(types[t], NODE_ID, 1, 0);
        assert_null(vigil_wire_writer_finish(w));
        assert_int_equal(log.criticals, t + 1);
        if (strstr(log.last, needles[t]) == NULL)
            fail_msg("critical \"%s\" does not mention \"%s\"", log.last, needles[t]);
    }
    g_log_remove_handler("vigil-core", handler);
    g_free(log.last);
}

static void test_longest_argv_and_text_round_trip(void **state)
{
    (void)state;
    char **many = g_new0(char *, VIGIL_WIRE_ARGV_MAX + 1);
    for (size_t k = 0; k < VIGIL_WIRE_ARGV_MAX; k++)
        many[k] = k % 2 ? "" : "\xe2\x9c\x93";
    struct vigil_wire_process p = processes[0];
    p.argc = VIGIL_WIRE_ARGV_MAX;
    p.argv = many;
    char *text = long_text(VIGIL_WIRE_TEXT_MAX);
    const struct vigil_wire_summary s = {3, text};

    GError *error = NULL;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, NODE_ID, 1, 0);
    assert_true(vigil_wire_add_process(w, &p, &error));
    GBytes *msg = vigil_wire_writer_finish(w);
    struct vigil_wire_message m;
    decode_bytes(msg, &m);
    assert_item_equal(case_of(VIGIL_WIRE_PROCESSES), &m.processes[0], &p);
    vigil_wire_message_clear(&m);
    g_bytes_unref(msg);

    w = vigil_wire_writer_new(VIGIL_WIRE_SUMMARIES, NODE_ID, 1, 0);
    assert_true(vigil_wire_add_summary(w, &s, &error));
    msg = vigil_wire_writer_finish(w);
    decode_bytes(msg, &m);
    assert_int_equal(strlen(m.summaries[0].report_json), VIGIL_WIRE_TEXT_MAX);
    vigil_wire_message_clear(&m);
    g_bytes_unref(msg);
    g_free(text);
    g_free(many);
}

/* ---- batches ---------------------------------------------------------------- */

/* The first n fixtures of a type in a writer of its own. */
static vigil_wire_writer *writer_of(enum vigil_wire_type type, size_t n, uint64_t node_id,
                                    uint64_t sequence)
{
    const struct type_case *c = case_of(type);
    vigil_wire_writer *w =
        vigil_wire_writer_new(type, node_id, sequence, c->process_id ? PROCESS_ID : 0);
    for (size_t i = 0; i < n; i++)
        assert_true(c->add(w, fixture(c, i), NULL));
    return w;
}

static GBytes *build_for_node(enum vigil_wire_type type, size_t n, uint64_t node_id,
                              uint64_t sequence)
{
    return vigil_wire_writer_finish(writer_of(type, n, node_id, sequence));
}

static GBytes *node_message(uint64_t sequence)
{
    return build_seq(VIGIL_WIRE_NODE, 1, sequence);
}

static GBytes *processes_message(uint64_t sequence)
{
    return build_seq(VIGIL_WIRE_PROCESSES, G_N_ELEMENTS(processes), sequence);
}

/* A batch of these messages, whatever they are, with `count` in its header. */
static GBytes *hand_batch(uint64_t sequence, GBytes *const *messages, size_t n, uint32_t count)
{
    GByteArray *payload = g_byte_array_new();
    for (size_t i = 0; i < n; i++) {
        put_le(payload, g_bytes_get_size(messages[i]), 4);
        g_byte_array_append(payload, g_bytes_get_data(messages[i], NULL),
                            (guint)g_bytes_get_size(messages[i]));
    }
    return hand_message(VIGIL_WIRE_BATCH, sequence, count, payload);
}

/* A batch of node + `second`, decoded: refused with `needle`. */
static void expect_batch_of_two_refused(GBytes *second, int code, const char *needle)
{
    GBytes *messages[2] = {node_message(BATCH_SEQUENCE), second};
    GBytes *batch = hand_batch(BATCH_SEQUENCE, messages, 2, 2);
    expect_bytes_error(batch, code, needle);
    g_bytes_unref(batch);
    unref_all(messages, 2);
}

static void test_hostile_batches(void **state)
{
    (void)state;
    const uint64_t seq = BATCH_SEQUENCE;
    expect_batch_of_two_refused(processes_message(seq + 1), VIGIL_WIRE_ERROR_MALFORMED,
                                "batch message: message 2 of 2: processes message with sequence "
                                "11072869122414935817, but the batch's is 11072869122414935816");
    expect_batch_of_two_refused(build_for_node(VIGIL_WIRE_STATES, 1, NODE_ID + 1, seq),
                                VIGIL_WIRE_ERROR_MALFORMED,
                                "message 2 of 2: states message of node 1234605616436508553, but "
                                "the batch is of node 1234605616436508552");
    expect_batch_of_two_refused(build_seq(VIGIL_WIRE_ACK, 0, seq), VIGIL_WIRE_ERROR_MALFORMED,
                                "message 2 of 2: ack message, which a batch cannot hold");
    expect_batch_of_two_refused(build_seq(VIGIL_WIRE_REFUSED, 1, seq), VIGIL_WIRE_ERROR_MALFORMED,
                                "refused message, which a batch cannot hold");
    expect_batch_of_two_refused(node_message(seq), VIGIL_WIRE_ERROR_MALFORMED,
                                "message 2 of 2: a second node message; a batch has exactly one");

    /* A batch in a batch: refused from its header, before it is decoded. */
    GBytes *nested = build_seq(VIGIL_WIRE_BATCH, 2, seq);
    expect_batch_of_two_refused(nested, VIGIL_WIRE_ERROR_MALFORMED,
                                "message 2 of 2: batch message, which a batch cannot hold");

    /* No node first. */
    GBytes *messages[3] = {processes_message(seq), node_message(seq), NULL};
    GBytes *batch = hand_batch(seq, messages, 2, 2);
    expect_bytes_error(batch, VIGIL_WIRE_ERROR_MALFORMED,
                       "batch message: message 1 of 2: processes message first; a batch starts "
                       "with its node message");
    g_bytes_unref(batch);
    unref_all(messages, 2);

    batch = hand_batch(seq, NULL, 0, 0);
    expect_bytes_error(batch, VIGIL_WIRE_ERROR_MALFORMED,
                       "batch message holds no messages; a batch starts with its node message");
    g_bytes_unref(batch);

    messages[0] = node_message(seq);
    messages[1] = processes_message(seq);
    batch = hand_batch(seq, messages, 2, UINT32_MAX);
    expect_bytes_error(batch, VIGIL_WIRE_ERROR_MALFORMED,
                       "batch message: 4294967295 messages need at least 44 bytes each");
    g_bytes_unref(batch);
    batch = hand_batch(seq, messages, 2, 3);
    expect_bytes_error(batch, VIGIL_WIRE_ERROR_MALFORMED,
                       "batch message: length of message 3 of 3 is truncated: needs 4 bytes, 0 "
                       "left");
    g_bytes_unref(batch);
    batch = hand_batch(seq, messages, 2, 1);
    expect_bytes_error(batch, VIGIL_WIRE_ERROR_MALFORMED, "bytes left over after its 1 messages");
    g_bytes_unref(batch);

    /* The second message's length one byte longer than what is left. */
    batch = hand_batch(seq, messages, 2, 2);
    size_t second = PAYLOAD + 4 + g_bytes_get_size(messages[0]);
    char *needle =
        g_strdup_printf("batch message: message 2 of 2 is truncated: its length says "
                        "%zu bytes, %zu left",
                        g_bytes_get_size(messages[1]) + 1, g_bytes_get_size(messages[1]));
    expect_patched(batch, second, g_bytes_get_size(messages[1]) + 1, 4, VIGIL_WIRE_ERROR_MALFORMED,
                   needle);
    g_free(needle);

    /* Damage inside the second message, under a good outer CRC. */
    batch = hand_batch(seq, messages, 2, 2);
    size_t inner = second + 4;
    expect_patched(batch, inner + PAYLOAD + 9, 0x5a, 1, VIGIL_WIRE_ERROR_CHECKSUM,
                   "batch message: message 2 of 2: checksum mismatch");
    unref_all(messages, 2);

    /* A version-1 message inside, and a bad item inside. */
    GBytes *good = processes_message(seq);
    size_t length;
    uint8_t *data = copy_of(good, &length);
    store_le(data + 4, 1, 2);
    reseal(data, length);
    GBytes *old = g_bytes_new_take(data, length);
    expect_batch_of_two_refused(old, VIGIL_WIRE_ERROR_VERSION,
                                "batch message: message 2 of 2: wire version 1, this vigil reads "
                                "version 2");
    data = copy_of(good, &length);
    store_le(data + PAYLOAD + 8, 0, 4); /* the first process's pid */
    reseal(data, length);
    expect_batch_of_two_refused(g_bytes_new_take(data, length), VIGIL_WIRE_ERROR_MALFORMED,
                                "batch message: message 2 of 2: processes message: item 1 of 3: "
                                "process 17: pid 0 is not a process id");
    g_bytes_unref(good);
}

/* Cut anywhere, with the outer header and CRC made to match the cut: the
 * decoder sees a whole batch whose last message is short. */
static void test_every_inner_truncation_fails(void **state)
{
    (void)state;
    GBytes *msg = build_full(VIGIL_WIRE_BATCH);
    size_t length;
    const uint8_t *data = g_bytes_get_data(msg, &length);
    for (size_t cut = VIGIL_WIRE_HEADER_BYTES; cut < length; cut++) {
        uint8_t *prefix = g_memdup2(data, cut);
        store_le(prefix + HEADER_PAYLOAD_BYTES, cut - VIGIL_WIRE_HEADER_BYTES, 4);
        reseal(prefix, cut);
        expect_error(prefix, cut, VIGIL_WIRE_ERROR_MALFORMED, "batch message");
        g_free(prefix);
    }
    g_bytes_unref(msg);
}

static void test_writer_refuses_bad_batches(void **state)
{
    (void)state;
    const uint64_t seq = BATCH_SEQUENCE;
    GError *error = NULL;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_BATCH, NODE_ID, seq, 0);
    GBytes *procs = processes_message(seq);
    expect_refused(vigil_wire_add_message(w, procs, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "cannot add to the batch message: message 1: processes message first; a batch "
                   "starts with its node message");
    GBytes *node = node_message(seq);
    assert_true(vigil_wire_add_message(w, node, &error));
    expect_refused(vigil_wire_add_message(w, node, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "message 2: a second node message");

    GBytes *refused[] = {
        processes_message(seq + 1),
        build_for_node(VIGIL_WIRE_PROCESSES, 1, NODE_ID + 1, seq),
        build_seq(VIGIL_WIRE_ACK, 0, seq),
        build_seq(VIGIL_WIRE_REFUSED, 1, seq),
        build_seq(VIGIL_WIRE_BATCH, 1, seq),
        g_bytes_new_static("not a message at all, but long enough for a header", 51),
    };
    static const char *const needles[] = {
        "with sequence 11072869122414935817, but the batch's is 11072869122414935816",
        "of node 1234605616436508553, but the batch is of node 1234605616436508552",
        "ack message, which a batch cannot hold",
        "refused message, which a batch cannot hold",
        "batch message, which a batch cannot hold",
        "not a vigil message",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++)
        expect_refused(vigil_wire_add_message(w, refused[i], &error), &error,
                       VIGIL_WIRE_ERROR_MALFORMED, needles[i]);
    unref_all(refused, G_N_ELEMENTS(refused));

    /* Damage the writer would otherwise copy into the batch as it is. */
    size_t length;
    uint8_t *data = copy_of(procs, &length);
    data[PAYLOAD + 3] ^= 1;
    GBytes *damaged = g_bytes_new_take(data, length);
    expect_refused(vigil_wire_add_message(w, damaged, &error), &error, VIGIL_WIRE_ERROR_CHECKSUM,
                   "cannot add to the batch message: message 2: checksum mismatch");
    g_bytes_unref(damaged);
    data = copy_of(procs, &length);
    store_le(data + 4, 1, 2);
    reseal(data, length);
    damaged = g_bytes_new_take(data, length);
    expect_refused(vigil_wire_add_message(w, damaged, &error), &error, VIGIL_WIRE_ERROR_VERSION,
                   "wire version 1");
    g_bytes_unref(damaged);

    assert_int_equal(vigil_wire_writer_count(w), 1);
    assert_true(vigil_wire_add_message(w, procs, &error));
    GBytes *batch = vigil_wire_writer_finish(w);
    struct vigil_wire_message m;
    decode_bytes(batch, &m);
    assert_int_equal(m.header.count, 2);
    assert_int_equal(m.inner[0].header.type, VIGIL_WIRE_NODE);
    assert_inner_equal(&m.inner[1], VIGIL_WIRE_PROCESSES);
    vigil_wire_message_clear(&m);
    g_bytes_unref(batch);
    g_bytes_unref(procs);
    g_bytes_unref(node);
}

/* A writer added whole makes the same bytes as its finished message added
 * as bytes, and the batch's rules hold for it too. */
static void test_writer_added_whole(void **state)
{
    (void)state;
    const uint64_t seq = BATCH_SEQUENCE;
    GError *error = NULL;
    vigil_wire_writer *by_bytes = vigil_wire_writer_new(VIGIL_WIRE_BATCH, NODE_ID, seq, 0);
    vigil_wire_writer *by_writer = vigil_wire_writer_new(VIGIL_WIRE_BATCH, NODE_ID, seq, 0);

    vigil_wire_writer *procs =
        writer_of(VIGIL_WIRE_PROCESSES, G_N_ELEMENTS(processes), NODE_ID, seq);
    expect_refused(vigil_wire_add_writer(by_writer, procs, &error), &error,
                   VIGIL_WIRE_ERROR_MALFORMED,
                   "cannot add to the batch message: message 1: processes message first; a batch "
                   "starts with its node message");
    vigil_wire_writer *node = writer_of(VIGIL_WIRE_NODE, 1, NODE_ID, seq);
    assert_true(vigil_wire_add_writer(by_writer, node, &error));
    vigil_wire_writer *other = writer_of(VIGIL_WIRE_PROCESSES, 1, NODE_ID, seq + 1);
    expect_refused(vigil_wire_add_writer(by_writer, other, &error), &error,
                   VIGIL_WIRE_ERROR_MALFORMED, "but the batch's is");
    procs = writer_of(VIGIL_WIRE_PROCESSES, G_N_ELEMENTS(processes), NODE_ID, seq);
    assert_true(vigil_wire_add_writer(by_writer, procs, &error));

    GBytes *node_bytes = node_message(seq), *procs_bytes = processes_message(seq);
    assert_true(vigil_wire_add_message(by_bytes, node_bytes, &error));
    assert_true(vigil_wire_add_message(by_bytes, procs_bytes, &error));
    GBytes *a = vigil_wire_writer_finish(by_bytes), *b = vigil_wire_writer_finish(by_writer);
    assert_true(g_bytes_equal(a, b));
    struct vigil_wire_message m;
    decode_bytes(b, &m);
    assert_int_equal(m.header.count, 2);
    assert_inner_equal(&m.inner[1], VIGIL_WIRE_PROCESSES);
    vigil_wire_message_clear(&m);
    g_bytes_unref(a);
    g_bytes_unref(b);
    g_bytes_unref(node_bytes);
    g_bytes_unref(procs_bytes);
}

/* The batch stops at the payload limit, and what it made still decodes. */
static void test_batch_refuses_to_grow_too_large(void **state)
{
    (void)state;
    const uint64_t seq = BATCH_SEQUENCE;
    char *text = long_text(VIGIL_WIRE_TEXT_MAX);
    const struct vigil_wire_summary s = {9, text};
    vigil_wire_writer *big = vigil_wire_writer_new(VIGIL_WIRE_SUMMARIES, NODE_ID, seq, 0);
    GError *error = NULL;
    for (int i = 0; i < 40; i++)
        assert_true(vigil_wire_add_summary(big, &s, &error));
    GBytes *summaries_message = vigil_wire_writer_finish(big);

    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_BATCH, NODE_ID, seq, 0);
    GBytes *node = node_message(seq);
    assert_true(vigil_wire_add_message(w, node, &error));
    assert_true(vigil_wire_add_message(w, summaries_message, &error));
    assert_false(vigil_wire_add_message(w, summaries_message, &error));
    assert_true(g_error_matches(error, VIGIL_WIRE_ERROR, VIGIL_WIRE_ERROR_TOO_LARGE));
    assert_non_null(strstr(error->message, "cannot add to the batch message"));
    g_clear_error(&error);
    GBytes *batch = vigil_wire_writer_finish(w);
    assert_int_equal(g_bytes_get_size(batch), VIGIL_WIRE_HEADER_BYTES + 4 + g_bytes_get_size(node) +
                                                  4 + g_bytes_get_size(summaries_message));
    struct vigil_wire_message m;
    decode_bytes(batch, &m);
    assert_int_equal(m.header.count, 2);
    assert_int_equal(m.inner[1].header.count, 40);
    vigil_wire_message_clear(&m);
    g_bytes_unref(batch);
    g_bytes_unref(node);
    g_bytes_unref(summaries_message);
    g_free(text);
}

static void test_encode_message_refuses_inconsistent_batches(void **state)
{
    (void)state;
    struct vigil_wire_message m;
    memset(&m, 0, sizeof m);
    m.header.type = VIGIL_WIRE_BATCH;
    m.header.node_id = NODE_ID;
    GError *error = NULL;
    assert_null(vigil_wire_encode_message(&m, &error));
    assert_non_null(strstr(error->message, "batch message holds no messages"));
    g_clear_error(&error);

    m.header.count = 2;
    assert_null(vigil_wire_encode_message(&m, &error));
    assert_non_null(strstr(error->message, "without its items"));
    g_clear_error(&error);

    /* A batch that holds itself: refused, not recursed into. */
    struct vigil_wire_message inner[2];
    memset(inner, 0, sizeof inner);
    inner[0].header.type = VIGIL_WIRE_NODE;
    inner[0].header.node_id = NODE_ID;
    inner[0].header.count = 1;
    inner[0].nodes = (struct vigil_wire_node *)&nodes[0];
    inner[1] = m;
    m.inner = inner;
    inner[1].inner = inner;
    assert_null(vigil_wire_encode_message(&m, &error));
    assert_non_null(strstr(error->message, "message 2: batch message, which a batch cannot hold"));
    g_clear_error(&error);

    inner[1].header.type = VIGIL_WIRE_NODE;
    inner[1].header.count = 2;
    inner[1].inner = NULL;
    inner[1].nodes = (struct vigil_wire_node *)&nodes[0];
    assert_null(vigil_wire_encode_message(&m, &error));
    assert_non_null(strstr(error->message, "message 2: node message with 2 items"));
    g_clear_error(&error);

    m.header.count = 1;
    GBytes *ok = vigil_wire_encode_message(&m, &error);
    assert_null(error);
    assert_non_null(ok);
    g_bytes_unref(ok);
}

/* ---- peeking at headers ------------------------------------------------------ */

static void test_peek_header(void **state)
{
    (void)state;
    GBytes *msg = build_full(VIGIL_WIRE_BATCH);
    size_t length;
    uint8_t *data = copy_of(msg, &length);
    struct vigil_wire_header h;
    GError *error = NULL;
    assert_true(vigil_wire_peek_header(data, length, &h, &error));
    struct vigil_wire_message m;
    decode_bytes(msg, &m);
    assert_memory_equal(&h, &m.header, sizeof h);
    vigil_wire_message_clear(&m);

    /* Another version, an unknown type and a reserved word it does not
     * know: the frame is still read, so the sender can be told by name. */
    store_le(data + 4, 1, 2);
    store_le(data + 6, 99, 2);
    store_le(data + HEADER_RESERVED, 7, 4);
    reseal(data, length);
    assert_true(vigil_wire_peek_header(data, length, &h, &error));
    assert_int_equal(h.version, 1);
    assert_int_equal(h.type, 99);
    assert_int_equal(h.node_id, NODE_ID);
    assert_int_equal(h.sequence, BATCH_SEQUENCE);
    assert_int_equal(h.count, G_N_ELEMENTS(batch_types));
    assert_int_equal(h.payload_bytes, length - VIGIL_WIRE_HEADER_BYTES);
    expect_error(data, length, VIGIL_WIRE_ERROR_VERSION,
                 "wire version 1, this vigil reads version 2");

    struct {
        size_t offset, bytes;
        uint64_t value;
        gboolean reseal;
        int code;
        const char *needle;
    } const bad[] = {
        {PAYLOAD + 5, 1, 0x77, FALSE, VIGIL_WIRE_ERROR_CHECKSUM, "checksum mismatch"},
        {0, 4, 0x41424344, TRUE, VIGIL_WIRE_ERROR_MALFORMED, "not a vigil message"},
        {HEADER_PAYLOAD_BYTES, 4, VIGIL_WIRE_MAX_PAYLOAD_BYTES + 1, TRUE,
         VIGIL_WIRE_ERROR_TOO_LARGE, "over the limit"},
        {HEADER_PAYLOAD_BYTES, 4, 0, TRUE, VIGIL_WIRE_ERROR_MALFORMED, "but its header says"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        uint8_t *copy = copy_of(msg, &length);
        store_le(copy + bad[i].offset, bad[i].value, bad[i].bytes);
        if (bad[i].reseal)
            reseal(copy, length);
        memset(&h, 0xa5, sizeof h);
        assert_false(vigil_wire_peek_header(copy, length, &h, &error));
        assert_true(g_error_matches(error, VIGIL_WIRE_ERROR, bad[i].code));
        if (strstr(error->message, bad[i].needle) == NULL)
            fail_msg("peek error \"%s\" does not mention \"%s\"", error->message, bad[i].needle);
        g_clear_error(&error);
        static const struct vigil_wire_header zero;
        assert_memory_equal(&h, &zero, sizeof h);
        g_free(copy);
    }
    assert_false(vigil_wire_peek_header(data, VIGIL_WIRE_HEADER_BYTES - 1, &h, &error));
    assert_true(g_error_matches(error, VIGIL_WIRE_ERROR, VIGIL_WIRE_ERROR_TRUNCATED));
    g_clear_error(&error);
    assert_false(vigil_wire_peek_header(data, length - 1, &h, &error));
    assert_true(g_error_matches(error, VIGIL_WIRE_ERROR, VIGIL_WIRE_ERROR_TRUNCATED));
    g_clear_error(&error);
    g_free(data);
    g_bytes_unref(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_bytes_of_every_type),
        cmocka_unit_test(test_round_trip_every_type),
        cmocka_unit_test(test_layouts_are_as_documented),
        cmocka_unit_test(test_samples_layout_is_as_documented),
        cmocka_unit_test(test_longest_path_round_trips),
        cmocka_unit_test(test_checksum_ignores_its_own_field),
        cmocka_unit_test(test_type_names),
        cmocka_unit_test(test_error_domain_name),
        cmocka_unit_test(test_clear_zeroed_message),
        cmocka_unit_test(test_every_truncation_fails),
        cmocka_unit_test(test_trailing_bytes_fail),
        cmocka_unit_test(test_payload_left_over_fails),
        cmocka_unit_test(test_bit_flips_are_detected),
        cmocka_unit_test(test_bit_flips_past_the_checksum),
        cmocka_unit_test(test_header_patches),
        cmocka_unit_test(test_item_patches),
        cmocka_unit_test(test_no_room_for_the_process_id),
        cmocka_unit_test(test_damage_under_the_checksum),
        cmocka_unit_test(test_bad_items),
        cmocka_unit_test(test_bad_long_items),
        cmocka_unit_test(test_writer_refuses_to_grow_too_large),
        cmocka_unit_test(test_encode_message_refuses_inconsistent_messages),
        cmocka_unit_test(test_node_and_refusal_hold_exactly_one),
        cmocka_unit_test(test_finish_refuses_a_message_without_its_items),
        cmocka_unit_test(test_longest_argv_and_text_round_trip),
        cmocka_unit_test(test_hostile_batches),
        cmocka_unit_test(test_every_inner_truncation_fails),
        cmocka_unit_test(test_writer_refuses_bad_batches),
        cmocka_unit_test(test_writer_added_whole),
        cmocka_unit_test(test_batch_refuses_to_grow_too_large),
        cmocka_unit_test(test_encode_message_refuses_inconsistent_batches),
        cmocka_unit_test(test_peek_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
