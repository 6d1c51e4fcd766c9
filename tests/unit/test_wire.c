/* Tests of the wire format: layout, round trips, and hostile input. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "vigil/health.h"
#include "vigil/ontology.h"
#include "vigil/wire.h"
#include "test_support.h"

#define NODE_ID    UINT64_C(0x1122334455667788)
#define SEQUENCE   UINT64_C(0x99aabbccddeeff00)
#define PROCESS_ID UINT64_C(0xfedcba9876543210)

/* Offsets in the header and in the payloads, written out from wire.h rather
 * than taken from the implementation, so that the tests pin the layout. */
#define HEADER_COUNT         24u
#define HEADER_PAYLOAD_BYTES 28u
#define HEADER_RESERVED      32u
#define PAYLOAD              40u
#define ACTIVITY_BYTES       80u

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

struct name_fixture {
    uint32_t file_id;
    const char *path;
    size_t length;
};

static const struct name_fixture names[] = {
    {1, "/etc/passwd", 11},
    {0xffffffffu, "\xff\xfe/not-utf8", 11}, /* paths are bytes, not text */
    {3, "", 0},
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

static const enum vigil_wire_type all_types[] = {
    VIGIL_WIRE_ACTIVITIES,     VIGIL_WIRE_NAMES,     VIGIL_WIRE_METRICS, VIGIL_WIRE_SAMPLES,
    VIGIL_WIRE_ANOMALIES,      VIGIL_WIRE_STATES,    VIGIL_WIRE_ACK,     VIGIL_WIRE_BATCH,
    VIGIL_WIRE_NODE,           VIGIL_WIRE_PROCESSES, VIGIL_WIRE_ROLLUPS, VIGIL_WIRE_WINDOWS,
    VIGIL_WIRE_SUMMARIES,      VIGIL_WIRE_REFUSED,   VIGIL_WIRE_JOBS,    VIGIL_WIRE_DROPS,
    VIGIL_WIRE_UNWATCHED_ENDS,
};
#define N_TYPES G_N_ELEMENTS(all_types)

/* The fewest items a message of the type may hold. */
static size_t fixture_min_count(enum vigil_wire_type type)
{
    return type == VIGIL_WIRE_NODE || type == VIGIL_WIRE_REFUSED || type == VIGIL_WIRE_BATCH ? 1
                                                                                             : 0;
}

static size_t fixture_count(enum vigil_wire_type type)
{
    switch (type) {
    case VIGIL_WIRE_ACTIVITIES:
        return G_N_ELEMENTS(activities);
    case VIGIL_WIRE_NAMES:
        return G_N_ELEMENTS(names);
    case VIGIL_WIRE_METRICS:
        return G_N_ELEMENTS(metrics);
    case VIGIL_WIRE_SAMPLES:
        return G_N_ELEMENTS(samples);
    case VIGIL_WIRE_ANOMALIES:
        return G_N_ELEMENTS(anomalies);
    case VIGIL_WIRE_STATES:
        return G_N_ELEMENTS(states);
    case VIGIL_WIRE_ACK:
        return 0;
    case VIGIL_WIRE_BATCH:
        return G_N_ELEMENTS(batch_types);
    case VIGIL_WIRE_NODE:
        return G_N_ELEMENTS(nodes);
    case VIGIL_WIRE_PROCESSES:
        return G_N_ELEMENTS(processes);
    case VIGIL_WIRE_ROLLUPS:
        return G_N_ELEMENTS(rollups);
    case VIGIL_WIRE_WINDOWS:
        return G_N_ELEMENTS(windows);
    case VIGIL_WIRE_SUMMARIES:
        return G_N_ELEMENTS(summaries);
    case VIGIL_WIRE_REFUSED:
        return G_N_ELEMENTS(refusals);
    case VIGIL_WIRE_JOBS:
        return G_N_ELEMENTS(jobs);
    case VIGIL_WIRE_DROPS:
        return G_N_ELEMENTS(drops);
    case VIGIL_WIRE_UNWATCHED_ENDS:
        return G_N_ELEMENTS(unwatched_ends);
    }
    return 0;
}

static GBytes *build_seq(enum vigil_wire_type type, size_t n, uint64_t sequence);

static void add_fixture(vigil_wire_writer *w, enum vigil_wire_type type, size_t i)
{
    GError *error = NULL;
    gboolean ok = FALSE;
    switch (type) {
    case VIGIL_WIRE_ACTIVITIES:
        ok = vigil_wire_add_activity(w, &activities[i], &error);
        break;
    case VIGIL_WIRE_NAMES:
        ok = vigil_wire_add_name(w, names[i].file_id, names[i].path, names[i].length, &error);
        break;
    case VIGIL_WIRE_METRICS:
        ok = vigil_wire_add_metric(w, &metrics[i], &error);
        break;
    case VIGIL_WIRE_SAMPLES:
        ok = vigil_wire_add_sample(w, &samples[i], &error);
        break;
    case VIGIL_WIRE_ANOMALIES:
        ok = vigil_wire_add_anomaly(w, &anomalies[i], &error);
        break;
    case VIGIL_WIRE_STATES:
        ok = vigil_wire_add_state(w, &states[i], &error);
        break;
    case VIGIL_WIRE_ACK:
        break;
    case VIGIL_WIRE_BATCH: {
        enum vigil_wire_type inner = batch_types[i];
        GBytes *message = build_seq(inner, fixture_count(inner), BATCH_SEQUENCE);
        ok = vigil_wire_add_message(w, message, &error);
        g_bytes_unref(message);
        break;
    }
    case VIGIL_WIRE_NODE:
        ok = vigil_wire_add_node(w, &nodes[i], &error);
        break;
    case VIGIL_WIRE_PROCESSES:
        ok = vigil_wire_add_process(w, &processes[i], &error);
        break;
    case VIGIL_WIRE_ROLLUPS:
        ok = vigil_wire_add_rollup(w, &rollups[i], &error);
        break;
    case VIGIL_WIRE_WINDOWS:
        ok = vigil_wire_add_window(w, &windows[i], &error);
        break;
    case VIGIL_WIRE_SUMMARIES:
        ok = vigil_wire_add_summary(w, &summaries[i], &error);
        break;
    case VIGIL_WIRE_REFUSED:
        ok = vigil_wire_add_refusal(w, &refusals[i], &error);
        break;
    case VIGIL_WIRE_JOBS:
        ok = vigil_wire_add_job(w, &jobs[i], &error);
        break;
    case VIGIL_WIRE_DROPS:
        ok = vigil_wire_add_drop(w, &drops[i], &error);
        break;
    case VIGIL_WIRE_UNWATCHED_ENDS:
        ok = vigil_wire_add_unwatched_end(w, &unwatched_ends[i], &error);
        break;
    }
    if (error != NULL)
        fail_msg("adding %s fixture %zu: %s", vigil_wire_type_name(type), i, error->message);
    assert_true(ok);
}

static gboolean carries_process_id(enum vigil_wire_type type)
{
    return type == VIGIL_WIRE_ACTIVITIES || type == VIGIL_WIRE_NAMES;
}

/* The first n fixtures of a type as one message. */
static GBytes *build_seq(enum vigil_wire_type type, size_t n, uint64_t sequence)
{
    vigil_wire_writer *w =
        vigil_wire_writer_new(type, NODE_ID, sequence, carries_process_id(type) ? PROCESS_ID : 0);
    assert_non_null(w);
    for (size_t i = 0; i < n; i++)
        add_fixture(w, type, i);
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
    return build(type, fixture_count(type));
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

static uint64_t bits_of(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
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

static void assert_doubles_identical(double a, double b)
{
    assert_int_equal(bits_of(a), bits_of(b));
}

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

/* Takes a full fixture message of `type`, overwrites `bytes` bytes at
 * `offset` with `value`, fixes the CRC, and expects the decoder to refuse. */
static void expect_patched_error(enum vigil_wire_type type, size_t offset, uint64_t value,
                                 size_t bytes, int code, const char *needle)
{
    GBytes *msg = build_full(type);
    size_t length;
    uint8_t *data = copy_of(msg, &length);
    assert_true(offset + bytes <= length);
    store_le(data + offset, value, bytes);
    reseal(data, length);
    expect_error(data, length, code, needle);
    g_free(data);
    g_bytes_unref(msg);
}

/* ---- comparisons ------------------------------------------------------- */

static void assert_activity_equal(const struct vigil_activity *a, const struct vigil_activity *b)
{
    assert_int_equal(a->record_type, b->record_type);
    assert_int_equal(a->layer, b->layer);
    assert_int_equal(a->op, b->op);
    assert_int_equal(a->file_id, b->file_id);
    assert_int_equal(a->seq, b->seq);
    assert_int_equal(a->parent_start_ns, b->parent_start_ns);
    assert_int_equal(a->start_ns, b->start_ns);
    assert_int_equal(a->end_ns, b->end_ns);
    assert_int_equal(a->offset_bytes, b->offset_bytes);
    assert_int_equal(a->bytes_asked, b->bytes_asked);
    assert_int_equal(a->result, b->result);
    assert_int_equal(a->errno_value, b->errno_value);
    assert_int_equal(a->thread_id, b->thread_id);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->comm_size, b->comm_size);
}

static void assert_node_equal(const struct vigil_wire_node *a, const struct vigil_wire_node *b)
{
    assert_int_equal(a->realtime_offset_ns, b->realtime_offset_ns);
    assert_int_equal(a->cycle, b->cycle);
    assert_int_equal(a->cycle_start_ns, b->cycle_start_ns);
    assert_int_equal(a->cycle_end_ns, b->cycle_end_ns);
    assert_int_equal(a->cycle_ms, b->cycle_ms);
    assert_int_equal(a->reserved, 0);
    assert_string_equal(a->hostname, b->hostname);
}

static void assert_process_equal(const struct vigil_wire_process *a,
                                 const struct vigil_wire_process *b)
{
    assert_int_equal(a->process_id, b->process_id);
    assert_int_equal(a->pid, b->pid);
    assert_int_equal(a->uid, b->uid);
    assert_int_equal(a->rank, b->rank);
    assert_int_equal(a->exit_code, b->exit_code);
    assert_int_equal(a->start_ns, b->start_ns);
    assert_int_equal(a->end_ns, b->end_ns);
    assert_string_equal(a->run_key, b->run_key);
    assert_string_equal(a->job, b->job);
    assert_string_equal(a->program, b->program);
    assert_string_equal(a->cwd, b->cwd);
    assert_int_equal(a->argc, b->argc);
    assert_non_null(a->argv);
    for (uint32_t k = 0; k < b->argc; k++)
        assert_string_equal(a->argv[k], b->argv[k]);
    assert_null(a->argv[a->argc]);
}

static void assert_rollup_equal(const struct vigil_wire_rollup *a,
                                const struct vigil_wire_rollup *b)
{
    assert_int_equal(a->metric_id, b->metric_id);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->start_ns, b->start_ns);
    assert_int_equal(a->end_ns, b->end_ns);
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->reserved, 0);
    assert_doubles_identical(a->min, b->min);
    assert_doubles_identical(a->mean, b->mean);
    assert_doubles_identical(a->max, b->max);
    assert_doubles_identical(a->delta, b->delta);
}

static void assert_window_equal(const struct vigil_wire_window *a,
                                const struct vigil_wire_window *b)
{
    assert_int_equal(a->process_id, b->process_id);
    assert_int_equal(a->first_cycle, b->first_cycle);
    assert_int_equal(a->last_cycle, b->last_cycle);
    assert_int_equal(a->start_ns, b->start_ns);
    assert_int_equal(a->end_ns, b->end_ns);
    assert_int_equal(a->activities_forwarded, b->activities_forwarded);
    assert_string_equal(a->reasons, b->reasons);
}

static void assert_inner_equal(const struct vigil_wire_message *inner, enum vigil_wire_type type);

static void assert_items_equal(const struct vigil_wire_message *m, size_t i)
{
    switch ((enum vigil_wire_type)m->header.type) {
    case VIGIL_WIRE_ACTIVITIES:
        assert_activity_equal(&m->activities[i], &activities[i]);
        break;
    case VIGIL_WIRE_NAMES:
        assert_int_equal(m->names[i].file_id, names[i].file_id);
        assert_int_equal(m->names[i].length, names[i].length);
        assert_memory_equal(m->names[i].path, names[i].path, names[i].length + 1);
        break;
    case VIGIL_WIRE_METRICS:
        assert_int_equal(m->metrics[i].id, metrics[i].id);
        assert_int_equal(m->metrics[i].kind, metrics[i].kind);
        assert_int_equal(m->metrics[i].origin, metrics[i].origin);
        assert_string_equal(m->metrics[i].name, metrics[i].name);
        assert_string_equal(m->metrics[i].unit, metrics[i].unit);
        assert_string_equal(m->metrics[i].source, metrics[i].source);
        break;
    case VIGIL_WIRE_SAMPLES:
        assert_int_equal(m->samples[i].metric_id, samples[i].metric_id);
        assert_int_equal(m->samples[i].flags, samples[i].flags);
        assert_int_equal(m->samples[i].t_ns, samples[i].t_ns);
        assert_doubles_identical(m->samples[i].value, samples[i].value);
        break;
    case VIGIL_WIRE_ANOMALIES:
        assert_int_equal(m->anomalies[i].cycle, anomalies[i].cycle);
        assert_int_equal(m->anomalies[i].process_id, anomalies[i].process_id);
        assert_int_equal(m->anomalies[i].level, anomalies[i].level);
        assert_int_equal(m->anomalies[i].health, anomalies[i].health);
        assert_doubles_identical(m->anomalies[i].value, anomalies[i].value);
        assert_doubles_identical(m->anomalies[i].expected_min, anomalies[i].expected_min);
        assert_doubles_identical(m->anomalies[i].expected_max, anomalies[i].expected_max);
        assert_string_equal(m->anomalies[i].plugin, anomalies[i].plugin);
        assert_string_equal(m->anomalies[i].metric, anomalies[i].metric);
        assert_string_equal(m->anomalies[i].message, anomalies[i].message);
        break;
    case VIGIL_WIRE_STATES:
        assert_int_equal(m->states[i].cycle, states[i].cycle);
        assert_int_equal(m->states[i].process_id, states[i].process_id);
        assert_int_equal(m->states[i].level, states[i].level);
        assert_int_equal(m->states[i].health, states[i].health);
        assert_int_equal(m->states[i].overloaded_mask, states[i].overloaded_mask);
        assert_int_equal(m->states[i].bad_issues, states[i].bad_issues);
        assert_int_equal(m->states[i].good_issues, states[i].good_issues);
        assert_int_equal(m->states[i].other_issues, states[i].other_issues);
        break;
    case VIGIL_WIRE_ACK:
        fail_msg("an ack has no items");
        break;
    case VIGIL_WIRE_BATCH:
        assert_inner_equal(&m->inner[i], batch_types[i]);
        break;
    case VIGIL_WIRE_NODE:
        assert_node_equal(&m->nodes[i], &nodes[i]);
        break;
    case VIGIL_WIRE_PROCESSES:
        assert_process_equal(&m->processes[i], &processes[i]);
        break;
    case VIGIL_WIRE_ROLLUPS:
        assert_rollup_equal(&m->rollups[i], &rollups[i]);
        break;
    case VIGIL_WIRE_WINDOWS:
        assert_window_equal(&m->windows[i], &windows[i]);
        break;
    case VIGIL_WIRE_SUMMARIES:
        assert_int_equal(m->summaries[i].process_id, summaries[i].process_id);
        assert_string_equal(m->summaries[i].report_json, summaries[i].report_json);
        break;
    case VIGIL_WIRE_REFUSED:
        assert_string_equal(m->refusals[i].reason, refusals[i].reason);
        break;
    case VIGIL_WIRE_JOBS:
        assert_int_equal(m->jobs[i].begin_ns, jobs[i].begin_ns);
        assert_int_equal(m->jobs[i].end_ns, jobs[i].end_ns);
        assert_int_equal(m->jobs[i].uid, jobs[i].uid);
        assert_int_equal(m->jobs[i].flags, jobs[i].flags);
        assert_string_equal(m->jobs[i].job_id, jobs[i].job_id);
        assert_string_equal(m->jobs[i].step_id, jobs[i].step_id);
        assert_string_equal(m->jobs[i].user, jobs[i].user);
        assert_string_equal(m->jobs[i].nodes, jobs[i].nodes);
        break;
    case VIGIL_WIRE_DROPS:
        assert_memory_equal(&m->drops[i], &drops[i], sizeof drops[i]);
        break;
    case VIGIL_WIRE_UNWATCHED_ENDS: {
        const struct vigil_wire_unwatched_end *got = &m->unwatched_ends[i],
                                              *want = &unwatched_ends[i];
        assert_int_equal(got->process_id, want->process_id);
        assert_int_equal(got->earliest_end_ns, want->earliest_end_ns);
        assert_int_equal(got->latest_end_ns, want->latest_end_ns);
        assert_int_equal(got->activities, want->activities);
        assert_int_equal(got->dropped, want->dropped);
        assert_int_equal(got->seq_gaps, want->seq_gaps);
        assert_doubles_identical(got->cpu_s, want->cpu_s);
        assert_doubles_identical(got->energy_j, want->energy_j);
        assert_int_equal(got->flags, want->flags);
        break;
    }
    }
}

/* A batch's i-th message: the fixtures of its type, with the batch's node
 * and sequence. */
static void assert_inner_equal(const struct vigil_wire_message *inner, enum vigil_wire_type type)
{
    assert_int_equal(inner->header.magic, VIGIL_WIRE_MAGIC);
    assert_int_equal(inner->header.version, VIGIL_WIRE_VERSION);
    assert_int_equal(inner->header.type, type);
    assert_int_equal(inner->header.node_id, NODE_ID);
    assert_int_equal(inner->header.sequence, BATCH_SEQUENCE);
    assert_int_equal(inner->header.count, fixture_count(type));
    assert_int_equal(inner->process_id, carries_process_id(type) ? PROCESS_ID : 0);
    for (size_t j = 0; j < fixture_count(type); j++)
        assert_items_equal(inner, j);
}

static size_t process_item_bytes(const struct vigil_wire_process *p)
{
    size_t bytes = 40 + 2 + strlen(p->run_key) + 2 + strlen(p->job) + 2 + strlen(p->program) + 2 +
                   strlen(p->cwd) + 4;
    for (uint32_t k = 0; k < p->argc; k++)
        bytes += 2 + strlen(p->argv[k]);
    return bytes;
}

/* The payload size the documented layout gives for the first n fixtures. */
static size_t expected_payload_bytes(enum vigil_wire_type type, size_t n)
{
    size_t bytes = carries_process_id(type) ? 8 : 0;
    for (size_t i = 0; i < n; i++) {
        switch (type) {
        case VIGIL_WIRE_ACTIVITIES:
            bytes += ACTIVITY_BYTES;
            break;
        case VIGIL_WIRE_NAMES:
            bytes += 6 + names[i].length;
            break;
        case VIGIL_WIRE_METRICS:
            bytes += 6 + 6 + strlen(metrics[i].name) + strlen(metrics[i].unit) +
                     strlen(metrics[i].source);
            break;
        case VIGIL_WIRE_SAMPLES:
            bytes += 24;
            break;
        case VIGIL_WIRE_ANOMALIES:
            bytes += 44 + 6 + strlen(anomalies[i].plugin) + strlen(anomalies[i].metric) +
                     strlen(anomalies[i].message);
            break;
        case VIGIL_WIRE_STATES:
            bytes += 36;
            break;
        case VIGIL_WIRE_ACK:
            break;
        case VIGIL_WIRE_BATCH: {
            enum vigil_wire_type inner = batch_types[i];
            bytes +=
                4 + VIGIL_WIRE_HEADER_BYTES + expected_payload_bytes(inner, fixture_count(inner));
            break;
        }
        case VIGIL_WIRE_NODE:
            bytes += 40 + 2 + strlen(nodes[i].hostname);
            break;
        case VIGIL_WIRE_PROCESSES:
            bytes += process_item_bytes(&processes[i]);
            break;
        case VIGIL_WIRE_ROLLUPS:
            bytes += 64;
            break;
        case VIGIL_WIRE_WINDOWS:
            bytes += 48 + 4 + strlen(windows[i].reasons);
            break;
        case VIGIL_WIRE_SUMMARIES:
            bytes += 8 + 4 + strlen(summaries[i].report_json);
            break;
        case VIGIL_WIRE_REFUSED:
            bytes += 4 + strlen(refusals[i].reason);
            break;
        case VIGIL_WIRE_JOBS:
            bytes += 24 + 8 + strlen(jobs[i].job_id) + strlen(jobs[i].step_id) +
                     strlen(jobs[i].user) + strlen(jobs[i].nodes);
            break;
        case VIGIL_WIRE_DROPS:
            bytes += 40;
            break;
        case VIGIL_WIRE_UNWATCHED_ENDS:
            bytes += 72;
            break;
        }
    }
    return bytes;
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
    for (size_t t = 0; t < N_TYPES; t++) {
        GBytes *msg = build_full(all_types[t]);
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
    for (size_t t = 0; t < N_TYPES; t++) {
        enum vigil_wire_type type = all_types[t];
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
        assert_int_equal(m.header.count, fixture_count(type));
        for (size_t i = 0; i < fixture_count(type); i++)
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

/* ---- round trips ------------------------------------------------------- */

static void round_trip(enum vigil_wire_type type, size_t n)
{
    GBytes *msg = build(type, n);
    size_t length;
    const uint8_t *data = g_bytes_get_data(msg, &length);
    assert_int_equal(length, VIGIL_WIRE_HEADER_BYTES + expected_payload_bytes(type, n));

    struct vigil_wire_message m;
    GError *error = NULL;
    assert_true(vigil_wire_decode(data, length, &m, &error));
    assert_null(error);
    assert_int_equal(m.header.magic, VIGIL_WIRE_MAGIC);
    assert_int_equal(m.header.version, VIGIL_WIRE_VERSION);
    assert_int_equal(m.header.type, type);
    assert_int_equal(m.header.node_id, NODE_ID);
    assert_int_equal(m.header.sequence, SEQUENCE + type);
    assert_int_equal(m.header.count, n);
    assert_int_equal(m.header.payload_bytes, length - VIGIL_WIRE_HEADER_BYTES);
    assert_int_equal(m.process_id, carries_process_id(type) ? PROCESS_ID : 0);
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
    for (size_t t = 0; t < N_TYPES; t++) {
        round_trip(all_types[t], fixture_count(all_types[t]));
        if (fixture_min_count(all_types[t]) == 0)
            round_trip(all_types[t], 0);
        if (fixture_count(all_types[t]) > 0)
            round_trip(all_types[t], 1);
    }
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

/* The exact bytes of a small message, built by hand from wire.h. */
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

static void test_activity_layout_is_as_documented(void **state)
{
    (void)state;
    GBytes *msg = build(VIGIL_WIRE_ACTIVITIES, 2);
    const uint8_t *d = g_bytes_get_data(msg, NULL);
    assert_int_equal(load_le(d + PAYLOAD, 8), PROCESS_ID);
    const uint8_t *a = d + PAYLOAD + 8 + ACTIVITY_BYTES; /* the second activity */
    const struct vigil_activity *f = &activities[1];
    assert_int_equal(a[0], f->record_type);
    assert_int_equal(a[1], f->layer);
    assert_int_equal(load_le(a + 2, 2), f->op);
    assert_int_equal(load_le(a + 4, 4), f->file_id);
    assert_int_equal(load_le(a + 8, 8), f->seq);
    assert_int_equal(load_le(a + 16, 8), f->parent_start_ns);
    assert_int_equal(load_le(a + 24, 8), f->start_ns);
    assert_int_equal(load_le(a + 32, 8), f->end_ns);
    assert_int_equal(load_le(a + 40, 8), (uint64_t)f->offset_bytes);
    assert_int_equal(load_le(a + 48, 8), f->bytes_asked);
    assert_int_equal(load_le(a + 56, 8), (uint64_t)f->result);
    assert_int_equal(load_le(a + 64, 4), (uint32_t)f->errno_value);
    assert_int_equal(load_le(a + 68, 4), f->thread_id);
    assert_int_equal(load_le(a + 72, 4), f->flags);
    assert_int_equal(load_le(a + 76, 4), f->comm_size);
    g_bytes_unref(msg);
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

static void test_type_names(void **state)
{
    (void)state;
    static const char *const expected[] = {
        "activities", "names",   "metrics", "samples",   "anomalies",     "states",
        "ack",        "batch",   "node",    "processes", "rollups",       "windows",
        "summaries",  "refused", "jobs",    "drops",     "unwatched_ends"};
    G_STATIC_ASSERT(G_N_ELEMENTS(expected) == N_TYPES);
    for (size_t t = 0; t < N_TYPES; t++)
        assert_string_equal(vigil_wire_type_name(all_types[t]), expected[t]);
    /* Every type the format names has its fixtures here. */
    for (unsigned type = 0; type <= VIGIL_WIRE_TYPE_COUNT; type++) {
        gboolean tested = FALSE;
        for (size_t t = 0; t < N_TYPES; t++)
            tested = tested || all_types[t] == type;
        if (vigil_wire_type_name(type) != NULL && !tested)
            fail_msg("type %u (%s) has no fixtures", type, vigil_wire_type_name(type));
    }
    assert_null(vigil_wire_type_name(0));
    assert_null(vigil_wire_type_name(VIGIL_WIRE_TYPE_COUNT + 1));
    assert_null(vigil_wire_type_name(0xffffffffu));
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

/* ---- truncation and trailing bytes -------------------------------------- */

static void test_every_truncation_fails(void **state)
{
    (void)state;
    for (size_t t = 0; t < N_TYPES; t++) {
        GBytes *msg = build_full(all_types[t]);
        size_t length;
        const uint8_t *data = g_bytes_get_data(msg, &length);
        for (size_t cut = 0; cut < length; cut++) {
            /* A copy of exactly `cut` bytes, so ASan catches any read past it. */
            uint8_t *prefix = g_memdup2(data, cut);
            expect_error(prefix, cut, VIGIL_WIRE_ERROR_TRUNCATED,
                         cut < VIGIL_WIRE_HEADER_BYTES ? "shorter than the 40-byte header"
                                                       : "but its header says");
            g_free(prefix);
        }
        g_bytes_unref(msg);
    }
}

static void test_trailing_bytes_fail(void **state)
{
    (void)state;
    for (size_t t = 0; t < N_TYPES; t++) {
        GBytes *msg = build_full(all_types[t]);
        size_t length;
        const uint8_t *data = g_bytes_get_data(msg, &length);
        uint8_t *longer = g_malloc0(length + 3);
        memcpy(longer, data, length);
        char *needle =
            g_strdup_printf("message of %zu bytes, but its header says %zu", length + 3, length);
        expect_error(longer, length + 3, VIGIL_WIRE_ERROR_MALFORMED, needle);
        g_free(needle);
        g_free(longer);
        g_bytes_unref(msg);
    }
}

/* Extra bytes the header does count, after the last item. */
static void test_payload_left_over_fails(void **state)
{
    (void)state;
    for (size_t t = 0; t < N_TYPES; t++) {
        if (all_types[t] == VIGIL_WIRE_ACK)
            continue;
        GBytes *msg = build_full(all_types[t]);
        size_t length;
        const uint8_t *data = g_bytes_get_data(msg, &length);
        uint8_t *longer = g_malloc0(length + 2);
        memcpy(longer, data, length);
        store_le(longer + HEADER_PAYLOAD_BYTES, length + 2 - VIGIL_WIRE_HEADER_BYTES, 4);
        reseal(longer, length + 2);
        expect_error(longer, length + 2, VIGIL_WIRE_ERROR_MALFORMED, "2 bytes left over");
        g_free(longer);
        g_bytes_unref(msg);
    }
}

/* ---- random corruption -------------------------------------------------- */

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
    GBytes *messages[2 * N_TYPES];
    size_t n;
};

static void corpus_init(struct corpus *c)
{
    c->n = 0;
    for (size_t t = 0; t < N_TYPES; t++) {
        c->messages[c->n++] = build_full(all_types[t]);
        if (all_types[t] != VIGIL_WIRE_ACK)
            c->messages[c->n++] = build(all_types[t], 1);
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

/* ---- hostile inputs with a correct CRC ---------------------------------- */

static void test_huge_count_is_refused_before_allocating(void **state)
{
    (void)state;
    expect_patched_error(VIGIL_WIRE_SAMPLES, HEADER_COUNT, UINT32_MAX, 4,
                         VIGIL_WIRE_ERROR_MALFORMED, "4294967295 items need at least 24 bytes");
    expect_patched_error(VIGIL_WIRE_ACTIVITIES, HEADER_COUNT, UINT32_MAX, 4,
                         VIGIL_WIRE_ERROR_MALFORMED, "4294967295 items");
    expect_patched_error(VIGIL_WIRE_METRICS, HEADER_COUNT, UINT32_MAX, 4,
                         VIGIL_WIRE_ERROR_MALFORMED, "4294967295 items");
    expect_patched_error(VIGIL_WIRE_ANOMALIES, HEADER_COUNT, UINT32_MAX, 4,
                         VIGIL_WIRE_ERROR_MALFORMED, "4294967295 items");
    expect_patched_error(VIGIL_WIRE_NAMES, HEADER_COUNT, UINT32_MAX, 4, VIGIL_WIRE_ERROR_MALFORMED,
                         "4294967295 items");
    expect_patched_error(VIGIL_WIRE_STATES, HEADER_COUNT, 1u << 20, 4, VIGIL_WIRE_ERROR_MALFORMED,
                         "1048576 items");
    /* One more sample than the payload holds. */
    expect_patched_error(VIGIL_WIRE_SAMPLES, HEADER_COUNT, G_N_ELEMENTS(samples) + 1, 4,
                         VIGIL_WIRE_ERROR_MALFORMED, "need at least 24 bytes");
}

static void test_count_disagreeing_with_items(void **state)
{
    (void)state;
    /* Plausible for the payload's size, but the third item is not there. */
    GBytes *msg = build(VIGIL_WIRE_METRICS, 2);
    size_t length;
    uint8_t *data = copy_of(msg, &length);
    store_le(data + HEADER_COUNT, 3, 4);
    reseal(data, length);
    expect_error(data, length, VIGIL_WIRE_ERROR_MALFORMED,
                 "metrics message: item 3 of 3 is truncated: needs 6 bytes, 0 left");
    g_free(data);
    g_bytes_unref(msg);

    msg = build(VIGIL_WIRE_ACTIVITIES, 2);
    data = copy_of(msg, &length);
    store_le(data + HEADER_COUNT, 1, 4);
    reseal(data, length);
    expect_error(data, length, VIGIL_WIRE_ERROR_MALFORMED, "80 bytes left over after its 1 items");
    g_free(data);
    g_bytes_unref(msg);
}

static void test_string_running_past_the_end(void **state)
{
    (void)state;
    /* The first metric's name length, after id, kind and origin. */
    expect_patched_error(VIGIL_WIRE_METRICS, PAYLOAD + 6, 0xffff, 2, VIGIL_WIRE_ERROR_MALFORMED,
                         "item 1 of 3: name is truncated: needs 65535 bytes");
    /* The first anomaly's plugin length. */
    expect_patched_error(VIGIL_WIRE_ANOMALIES, PAYLOAD + 44, 0xfff0, 2, VIGIL_WIRE_ERROR_MALFORMED,
                         "plugin is truncated: needs 65520 bytes");
    /* The first name's path length. */
    expect_patched_error(VIGIL_WIRE_NAMES, PAYLOAD + 8 + 4, 5000, 2, VIGIL_WIRE_ERROR_MALFORMED,
                         "path is truncated: needs 5000 bytes");
}

static void test_hostile_activities(void **state)
{
    (void)state;
    size_t first = PAYLOAD + 8, second = first + ACTIVITY_BYTES;
    expect_patched_error(VIGIL_WIRE_ACTIVITIES, second + 1, 9, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "activities message: item 2 of 3: activity seq");
    expect_patched_error(VIGIL_WIRE_ACTIVITIES, second + 1, 9, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "unknown layer 9");
    expect_patched_error(VIGIL_WIRE_ACTIVITIES, first + 2, VIGIL_OP_STDIO_FREAD, 2,
                         VIGIL_WIRE_ERROR_MALFORMED, "is not an operation of layer posix");
    expect_patched_error(VIGIL_WIRE_ACTIVITIES, first + 32, 999, 8, VIGIL_WIRE_ERROR_MALFORMED,
                         "ends (999 ns) before it starts (1000 ns)");
    expect_patched_error(VIGIL_WIRE_ACTIVITIES, first, 0x00, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "is not an activity");
    expect_patched_error(VIGIL_WIRE_ACTIVITIES, first + 72, 0x80, 4, VIGIL_WIRE_ERROR_MALFORMED,
                         "unknown flags 0x80");
}

static void test_hostile_names(void **state)
{
    (void)state;
    size_t first = PAYLOAD + 8;
    expect_patched_error(VIGIL_WIRE_NAMES, first + 6 + 4, 0, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "contains a NUL byte");
    expect_patched_error(VIGIL_WIRE_NAMES, first, 0, 4, VIGIL_WIRE_ERROR_MALFORMED, "file id 0");

    /* Too short for the process id. */
    uint8_t data[PAYLOAD + 4] = {0};
    store_le(data, VIGIL_WIRE_MAGIC, 4);
    store_le(data + 4, VIGIL_WIRE_VERSION, 2);
    store_le(data + 6, VIGIL_WIRE_NAMES, 2);
    store_le(data + HEADER_PAYLOAD_BYTES, 4, 4);
    reseal(data, sizeof data);
    expect_error(data, sizeof data, VIGIL_WIRE_ERROR_MALFORMED,
                 "no room for the 8-byte process id");
}

static void test_hostile_metrics(void **state)
{
    (void)state;
    size_t first = PAYLOAD;
    expect_patched_error(VIGIL_WIRE_METRICS, first, 0, 4, VIGIL_WIRE_ERROR_MALFORMED,
                         "metric id 0");
    expect_patched_error(VIGIL_WIRE_METRICS, first + 4, 3, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "unknown kind 3");
    expect_patched_error(VIGIL_WIRE_METRICS, first + 5, 0, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "unknown origin 0");
    expect_patched_error(VIGIL_WIRE_METRICS, first + 8, 'E', 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "name \"Energy.pkg0_j\" is not a valid metric name");
    /* The unit "J" follows the 13-byte name and its length. */
    expect_patched_error(VIGIL_WIRE_METRICS, first + 8 + 13 + 2, 0xff, 1,
                         VIGIL_WIRE_ERROR_MALFORMED, "unit is not valid UTF-8");
}

static void test_hostile_samples(void **state)
{
    (void)state;
    size_t value = PAYLOAD + 16;
    expect_patched_error(VIGIL_WIRE_SAMPLES, value, bits_of(NAN), 8, VIGIL_WIRE_ERROR_MALFORMED,
                         "samples message: item 1 of 4: sample of metric 1: value");
    expect_patched_error(VIGIL_WIRE_SAMPLES, value, bits_of(NAN), 8, VIGIL_WIRE_ERROR_MALFORMED,
                         "is not finite");
    expect_patched_error(VIGIL_WIRE_SAMPLES, value, bits_of(-INFINITY), 8,
                         VIGIL_WIRE_ERROR_MALFORMED, "value -inf is not finite");
    expect_patched_error(VIGIL_WIRE_SAMPLES, PAYLOAD, 0, 4, VIGIL_WIRE_ERROR_MALFORMED,
                         "sample of metric 0");
    expect_patched_error(VIGIL_WIRE_SAMPLES, PAYLOAD + 4, 2, 4, VIGIL_WIRE_ERROR_MALFORMED,
                         "unknown flags 0x2");
}

static void test_hostile_anomalies(void **state)
{
    (void)state;
    size_t first = PAYLOAD;
    expect_patched_error(VIGIL_WIRE_ANOMALIES, first + 17, 0, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "anomalies message: item 1 of 3: unknown health 0");
    expect_patched_error(VIGIL_WIRE_ANOMALIES, first + 17, VIGIL_HEALTH_COUNT + 1, 1,
                         VIGIL_WIRE_ERROR_MALFORMED, "unknown health 7");
    expect_patched_error(VIGIL_WIRE_ANOMALIES, first + 16, 4, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "unknown level 4");
    expect_patched_error(VIGIL_WIRE_ANOMALIES, first + 18, 1, 2, VIGIL_WIRE_ERROR_MALFORMED,
                         "reserved field is 0x0001");
    expect_patched_error(VIGIL_WIRE_ANOMALIES, first + 20, bits_of(INFINITY), 8,
                         VIGIL_WIRE_ERROR_MALFORMED, "value inf is not finite");
    expect_patched_error(VIGIL_WIRE_ANOMALIES, first + 28, bits_of(NAN), 8,
                         VIGIL_WIRE_ERROR_MALFORMED, "contains NaN");
    expect_patched_error(VIGIL_WIRE_ANOMALIES, first + 36, bits_of(-NAN), 8,
                         VIGIL_WIRE_ERROR_MALFORMED, "contains NaN");
    expect_patched_error(VIGIL_WIRE_ANOMALIES, first + 28, bits_of(1e9), 8,
                         VIGIL_WIRE_ERROR_MALFORMED,
                         "expected minimum 1e+09 is above expected maximum 250");
    /* The first byte of the plugin name. */
    expect_patched_error(VIGIL_WIRE_ANOMALIES, first + 46, 0, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "plugin contains a NUL byte");
}

static void test_hostile_states(void **state)
{
    (void)state;
    expect_patched_error(VIGIL_WIRE_STATES, PAYLOAD + 16, 0, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "states message: item 1 of 3: unknown level 0");
    expect_patched_error(VIGIL_WIRE_STATES, PAYLOAD + 36 + 17, 0xff, 1, VIGIL_WIRE_ERROR_MALFORMED,
                         "item 2 of 3: unknown health 255");
    expect_patched_error(VIGIL_WIRE_STATES, PAYLOAD + 18, 0x100, 2, VIGIL_WIRE_ERROR_MALFORMED,
                         "reserved field is 0x0100");
}

static void test_hostile_headers(void **state)
{
    (void)state;
    expect_patched_error(VIGIL_WIRE_SAMPLES, 4, 1, 2, VIGIL_WIRE_ERROR_VERSION,
                         "wire version 1, this vigil reads version 2");
    expect_patched_error(VIGIL_WIRE_BATCH, 4, 3, 2, VIGIL_WIRE_ERROR_VERSION,
                         "wire version 3, this vigil reads version 2");
    expect_patched_error(VIGIL_WIRE_SAMPLES, 0, 0x46445025, 4, VIGIL_WIRE_ERROR_MALFORMED,
                         "not a vigil message: magic 0x46445025");
    expect_patched_error(VIGIL_WIRE_SAMPLES, HEADER_RESERVED, 1, 4, VIGIL_WIRE_ERROR_MALFORMED,
                         "reserved header field is 0x00000001");
    expect_patched_error(VIGIL_WIRE_SAMPLES, 6, 0, 2, VIGIL_WIRE_ERROR_MALFORMED,
                         "unknown message type 0");
    char *past_last = g_strdup_printf("unknown message type %u", VIGIL_WIRE_TYPE_COUNT + 1u);
    expect_patched_error(VIGIL_WIRE_SAMPLES, 6, VIGIL_WIRE_TYPE_COUNT + 1, 2,
                         VIGIL_WIRE_ERROR_MALFORMED, past_last);
    g_free(past_last);
    expect_patched_error(VIGIL_WIRE_SAMPLES, HEADER_PAYLOAD_BYTES, VIGIL_WIRE_MAX_PAYLOAD_BYTES + 1,
                         4, VIGIL_WIRE_ERROR_TOO_LARGE,
                         "payload of 67108865 bytes is over the limit");
    expect_patched_error(VIGIL_WIRE_ACK, HEADER_COUNT, 1, 4, VIGIL_WIRE_ERROR_MALFORMED,
                         "ack message with 1 items");
    /* The other types read a samples payload: sizes or fields disagree. */
    expect_patched_error(VIGIL_WIRE_SAMPLES, 6, VIGIL_WIRE_STATES, 2, VIGIL_WIRE_ERROR_MALFORMED,
                         "states message");

    GBytes *msg = build_full(VIGIL_WIRE_SAMPLES);
    size_t length;
    uint8_t *data = copy_of(msg, &length);
    data[PAYLOAD + 9] ^= 0x10;
    expect_error(data, length, VIGIL_WIRE_ERROR_CHECKSUM, "checksum mismatch");
    g_free(data);
    g_bytes_unref(msg);
}

/* The CRC is checked before the fields it protects. */
static void test_corrupt_type_is_a_checksum_error(void **state)
{
    (void)state;
    GBytes *msg = build_full(VIGIL_WIRE_STATES);
    size_t length;
    uint8_t *data = copy_of(msg, &length);
    data[6] = 0x7f;
    expect_error(data, length, VIGIL_WIRE_ERROR_CHECKSUM, "checksum");
    g_free(data);
    g_bytes_unref(msg);
}

/* ---- the writer ------------------------------------------------------------ */

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

static void test_writer_refuses_bad_names(void **state)
{
    (void)state;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_NAMES, 1, 1, 77);
    GError *error = NULL;
    assert_true(vigil_wire_add_name(w, 1, "/a", 2, &error));
    expect_refused(vigil_wire_add_name(w, 2, "/b\0c", 4, &error), &error,
                   VIGIL_WIRE_ERROR_MALFORMED,
                   "cannot add to the names message: file 2: path "
                   "contains a NUL byte");
    expect_refused(vigil_wire_add_name(w, VIGIL_FILE_NONE, "/z", 2, &error), &error,
                   VIGIL_WIRE_ERROR_MALFORMED, "file id 0");
    assert_int_equal(vigil_wire_writer_count(w), 1);
    assert_true(vigil_wire_add_name(w, 3, "/c", 2, &error));
    GBytes *msg = vigil_wire_writer_finish(w);

    struct vigil_wire_message m;
    decode_bytes(msg, &m);
    assert_int_equal(m.header.count, 2);
    assert_int_equal(m.process_id, 77);
    assert_int_equal(m.names[0].file_id, 1);
    assert_string_equal(m.names[0].path, "/a");
    assert_int_equal(m.names[1].file_id, 3);
    assert_string_equal(m.names[1].path, "/c");
    vigil_wire_message_clear(&m);
    g_bytes_unref(msg);
}

static void test_writer_refuses_bad_samples(void **state)
{
    (void)state;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_SAMPLES, 1, 1, 0);
    GError *error = NULL;
    const struct vigil_sample good = {4, 0, 10, 2.0};
    const struct vigil_sample nan_value = {4, 0, 11, NAN};
    const struct vigil_sample infinite = {4, 0, 12, INFINITY};
    const struct vigil_sample no_metric = {0, 0, 13, 1.0};
    const struct vigil_sample odd_flags = {4, 0x8, 14, 1.0};
    const struct vigil_sample also_good = {5, VIGIL_SAMPLE_UNCERTAIN, 15, -3.0};
    assert_true(vigil_wire_add_sample(w, &good, &error));
    expect_refused(vigil_wire_add_sample(w, &nan_value, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "is not finite");
    expect_refused(vigil_wire_add_sample(w, &infinite, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "is not finite");
    expect_refused(vigil_wire_add_sample(w, &no_metric, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "metric 0");
    expect_refused(vigil_wire_add_sample(w, &odd_flags, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "unknown flags 0x8");
    assert_true(vigil_wire_add_sample(w, &also_good, &error));
    GBytes *msg = vigil_wire_writer_finish(w);
    assert_int_equal(g_bytes_get_size(msg), VIGIL_WIRE_HEADER_BYTES + 2 * 24);

    struct vigil_wire_message m;
    decode_bytes(msg, &m);
    assert_int_equal(m.header.count, 2);
    assert_int_equal(m.samples[0].t_ns, 10);
    assert_int_equal(m.samples[1].t_ns, 15);
    assert_int_equal(m.samples[1].flags, VIGIL_SAMPLE_UNCERTAIN);
    assert_doubles_identical(m.samples[1].value, -3.0);
    vigil_wire_message_clear(&m);
    g_bytes_unref(msg);
}

static void test_writer_refuses_bad_metrics(void **state)
{
    (void)state;
    char long_unit[VIGIL_METRIC_TEXT_MAX + 2];
    memset(long_unit, 'u', sizeof long_unit - 1);
    long_unit[sizeof long_unit - 1] = '\0';
    const struct vigil_metric_desc bad_name = {
        1, VIGIL_METRIC_GAUGE, VIGIL_METRIC_MEASURED, "Load Average", "", "procstat"};
    const struct vigil_metric_desc no_id = {0,  VIGIL_METRIC_GAUGE, VIGIL_METRIC_MEASURED, "load",
                                            "", "procstat"};
    const struct vigil_metric_desc bad_kind = {
        1, (enum vigil_metric_kind)9, VIGIL_METRIC_MEASURED, "load", "", "procstat"};
    const struct vigil_metric_desc bad_unit = {1,      VIGIL_METRIC_GAUGE, VIGIL_METRIC_MEASURED,
                                               "load", long_unit,          "procstat"};
    const struct vigil_metric_desc bad_source = {
        1, VIGIL_METRIC_GAUGE, VIGIL_METRIC_MEASURED, "load", "", "\xc3("};
    const struct vigil_metric_desc no_source = {
        1, VIGIL_METRIC_GAUGE, VIGIL_METRIC_MEASURED, "load", "", NULL};
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_METRICS, 1, 1, 0);
    GError *error = NULL;
    expect_refused(vigil_wire_add_metric(w, &bad_name, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "name \"Load Average\" is not a valid metric name");
    expect_refused(vigil_wire_add_metric(w, &no_id, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "metric id 0");
    expect_refused(vigil_wire_add_metric(w, &bad_kind, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "unknown kind 9");
    expect_refused(vigil_wire_add_metric(w, &bad_unit, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "unit of 256 bytes is longer than 255");
    expect_refused(vigil_wire_add_metric(w, &bad_source, &error), &error,
                   VIGIL_WIRE_ERROR_MALFORMED, "source is not valid UTF-8");
    expect_refused(vigil_wire_add_metric(w, &no_source, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "source is missing");
    assert_true(vigil_wire_add_metric(w, &metrics[0], &error));
    GBytes *msg = vigil_wire_writer_finish(w);

    struct vigil_wire_message m;
    decode_bytes(msg, &m);
    assert_int_equal(m.header.count, 1);
    assert_string_equal(m.metrics[0].name, metrics[0].name);
    vigil_wire_message_clear(&m);
    g_bytes_unref(msg);
}

static void test_writer_refuses_bad_records(void **state)
{
    (void)state;
    GError *error = NULL;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_ACTIVITIES, 1, 1, 5);
    struct vigil_activity a = activities[0];
    a.op = VIGIL_OP_MPIIO_READ;
    expect_refused(vigil_wire_add_activity(w, &a, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "cannot add to the activities message: activity seq 1: operation 212 is not an "
                   "operation of layer posix");
    assert_int_equal(vigil_wire_writer_count(w), 0);
    vigil_wire_writer_free(w);

    w = vigil_wire_writer_new(VIGIL_WIRE_ANOMALIES, 1, 1, 0);
    struct vigil_wire_anomaly an = anomalies[0];
    an.expected_min = 300.0;
    an.expected_max = 200.0;
    expect_refused(vigil_wire_add_anomaly(w, &an, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "expected minimum 300 is above expected maximum 200");
    an = anomalies[0];
    an.message = "\xff";
    expect_refused(vigil_wire_add_anomaly(w, &an, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "message is not valid UTF-8");
    an = anomalies[0];
    an.plugin = NULL;
    expect_refused(vigil_wire_add_anomaly(w, &an, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "plugin is missing");
    an = anomalies[0];
    an.level = 0;
    expect_refused(vigil_wire_add_anomaly(w, &an, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "unknown level 0");
    assert_int_equal(vigil_wire_writer_count(w), 0);
    vigil_wire_writer_free(w);

    w = vigil_wire_writer_new(VIGIL_WIRE_STATES, 1, 1, 0);
    struct vigil_wire_state st = states[0];
    st.health = 0;
    expect_refused(vigil_wire_add_state(w, &st, &error), &error, VIGIL_WIRE_ERROR_MALFORMED,
                   "unknown health 0");
    assert_int_equal(vigil_wire_writer_count(w), 0);
    GBytes *msg = vigil_wire_writer_finish(w);
    assert_int_equal(g_bytes_get_size(msg), VIGIL_WIRE_HEADER_BYTES);
    g_bytes_unref(msg);
}

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

/* ---- version 2: the layouts, written out by hand from wire.h ------------- */

static void put_le(GByteArray *a, uint64_t v, size_t bytes)
{
    uint8_t b[8];
    store_le(b, v, bytes);
    g_byte_array_append(a, b, (guint)bytes);
}

static void put_string16(GByteArray *a, const char *s)
{
    put_le(a, strlen(s), 2);
    g_byte_array_append(a, (const uint8_t *)s, (guint)strlen(s));
}

static void put_text32(GByteArray *a, const char *s)
{
    put_le(a, strlen(s), 4);
    g_byte_array_append(a, (const uint8_t *)s, (guint)strlen(s));
}

static void hand_node(GByteArray *a, const struct vigil_wire_node *n)
{
    put_le(a, (uint64_t)n->realtime_offset_ns, 8);
    put_le(a, n->cycle, 8);
    put_le(a, n->cycle_start_ns, 8);
    put_le(a, n->cycle_end_ns, 8);
    put_le(a, n->cycle_ms, 4);
    put_le(a, n->reserved, 4);
    put_string16(a, n->hostname);
}

static void hand_process(GByteArray *a, const struct vigil_wire_process *p)
{
    put_le(a, p->process_id, 8);
    put_le(a, (uint32_t)p->pid, 4);
    put_le(a, p->uid, 4);
    put_le(a, (uint32_t)p->rank, 4);
    put_le(a, (uint32_t)p->exit_code, 4);
    put_le(a, p->start_ns, 8);
    put_le(a, p->end_ns, 8);
    put_string16(a, p->run_key);
    put_string16(a, p->job);
    put_string16(a, p->program);
    put_string16(a, p->cwd);
    put_le(a, p->argc, 4);
    for (uint32_t k = 0; k < p->argc; k++)
        put_string16(a, p->argv[k]);
}

static void hand_rollup(GByteArray *a, const struct vigil_wire_rollup *r)
{
    put_le(a, r->metric_id, 4);
    put_le(a, r->flags, 4);
    put_le(a, r->start_ns, 8);
    put_le(a, r->end_ns, 8);
    put_le(a, r->count, 4);
    put_le(a, r->reserved, 4);
    put_le(a, bits_of(r->min), 8);
    put_le(a, bits_of(r->mean), 8);
    put_le(a, bits_of(r->max), 8);
    put_le(a, bits_of(r->delta), 8);
}

static void hand_window(GByteArray *a, const struct vigil_wire_window *w)
{
    put_le(a, w->process_id, 8);
    put_le(a, w->first_cycle, 8);
    put_le(a, w->last_cycle, 8);
    put_le(a, w->start_ns, 8);
    put_le(a, w->end_ns, 8);
    put_le(a, w->activities_forwarded, 8);
    put_text32(a, w->reasons);
}

static void hand_item(GByteArray *a, enum vigil_wire_type type, const void *item)
{
    switch (type) {
    case VIGIL_WIRE_NODE:
        hand_node(a, item);
        break;
    case VIGIL_WIRE_PROCESSES:
        hand_process(a, item);
        break;
    case VIGIL_WIRE_ROLLUPS:
        hand_rollup(a, item);
        break;
    case VIGIL_WIRE_WINDOWS:
        hand_window(a, item);
        break;
    case VIGIL_WIRE_SUMMARIES: {
        const struct vigil_wire_summary *s = item;
        put_le(a, s->process_id, 8);
        put_text32(a, s->report_json);
        break;
    }
    case VIGIL_WIRE_REFUSED:
        put_text32(a, ((const struct vigil_wire_refusal *)item)->reason);
        break;
    case VIGIL_WIRE_JOBS: {
        const struct vigil_wire_job *j = item;
        put_le(a, j->begin_ns, 8);
        put_le(a, j->end_ns, 8);
        put_le(a, j->uid, 4);
        put_le(a, j->flags, 4);
        put_string16(a, j->job_id);
        put_string16(a, j->step_id);
        put_string16(a, j->user);
        put_string16(a, j->nodes);
        break;
    }
    case VIGIL_WIRE_DROPS: {
        const struct vigil_wire_drop *d = item;
        put_le(a, (uint32_t)d->pid, 4);
        put_le(a, d->reserved, 4);
        put_le(a, d->start_ns, 8);
        put_le(a, d->counter, 8);
        put_le(a, d->activities, 8);
        put_le(a, d->batches, 8);
        break;
    }
    case VIGIL_WIRE_UNWATCHED_ENDS: {
        const struct vigil_wire_unwatched_end *e = item;
        put_le(a, e->process_id, 8);
        put_le(a, e->earliest_end_ns, 8);
        put_le(a, e->latest_end_ns, 8);
        put_le(a, e->activities, 8);
        put_le(a, e->dropped, 8);
        put_le(a, e->seq_gaps, 8);
        put_le(a, bits_of(e->cpu_s), 8);
        put_le(a, bits_of(e->energy_j), 8);
        put_le(a, e->flags, 4);
        put_le(a, e->reserved, 4);
        break;
    }
    default:
        fail_msg("no hand encoding of %s items", vigil_wire_type_name(type));
    }
}

static const void *fixture_item(enum vigil_wire_type type, size_t i)
{
    switch (type) {
    case VIGIL_WIRE_NODE:
        return &nodes[i];
    case VIGIL_WIRE_PROCESSES:
        return &processes[i];
    case VIGIL_WIRE_ROLLUPS:
        return &rollups[i];
    case VIGIL_WIRE_WINDOWS:
        return &windows[i];
    case VIGIL_WIRE_SUMMARIES:
        return &summaries[i];
    case VIGIL_WIRE_REFUSED:
        return &refusals[i];
    case VIGIL_WIRE_JOBS:
        return &jobs[i];
    case VIGIL_WIRE_DROPS:
        return &drops[i];
    case VIGIL_WIRE_UNWATCHED_ENDS:
        return &unwatched_ends[i];
    default:
        fail_msg("no fixture items of %s", vigil_wire_type_name(type));
    }
    return NULL;
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

static void expect_bytes_error(GBytes *msg, int code, const char *needle)
{
    expect_error(g_bytes_get_data(msg, NULL), g_bytes_get_size(msg), code, needle);
}

static void unref_all(GBytes **messages, size_t n)
{
    for (size_t i = 0; i < n; i++)
        g_bytes_unref(messages[i]);
}

/* Every version-2 message the writer makes is byte for byte the one built
 * here from the documented layout. */
static void test_version_2_layouts_are_as_documented(void **state)
{
    (void)state;
    static const enum vigil_wire_type types[] = {
        VIGIL_WIRE_NODE,    VIGIL_WIRE_PROCESSES, VIGIL_WIRE_ROLLUPS,
        VIGIL_WIRE_WINDOWS, VIGIL_WIRE_SUMMARIES, VIGIL_WIRE_REFUSED,
        VIGIL_WIRE_JOBS,    VIGIL_WIRE_DROPS,     VIGIL_WIRE_UNWATCHED_ENDS};
    for (size_t t = 0; t < G_N_ELEMENTS(types); t++) {
        GByteArray *payload = g_byte_array_new();
        for (size_t i = 0; i < fixture_count(types[t]); i++)
            hand_item(payload, types[t], fixture_item(types[t], i));
        GBytes *by_hand =
            hand_message(types[t], SEQUENCE + types[t], (uint32_t)fixture_count(types[t]), payload);
        GBytes *by_writer = build_full(types[t]);
        if (!g_bytes_equal(by_hand, by_writer))
            fail_msg("%s message differs from its documented layout",
                     vigil_wire_type_name(types[t]));
        g_bytes_unref(by_hand);
        g_bytes_unref(by_writer);
    }

    GBytes *inner[G_N_ELEMENTS(batch_types)];
    for (size_t i = 0; i < G_N_ELEMENTS(batch_types); i++)
        inner[i] = build_seq(batch_types[i], fixture_count(batch_types[i]), BATCH_SEQUENCE);
    GBytes *by_hand = hand_batch(BATCH_SEQUENCE, inner, G_N_ELEMENTS(inner), G_N_ELEMENTS(inner));
    GBytes *by_writer = build_full(VIGIL_WIRE_BATCH);
    assert_true(g_bytes_equal(by_hand, by_writer));
    g_bytes_unref(by_hand);
    g_bytes_unref(by_writer);
    unref_all(inner, G_N_ELEMENTS(inner));
}

/* ---- version 2: bad items, refused by the decoder and by the writer ----- */

static gboolean add_one(vigil_wire_writer *w, enum vigil_wire_type type, const void *item,
                        GError **error)
{
    switch (type) {
    case VIGIL_WIRE_NODE:
        return vigil_wire_add_node(w, item, error);
    case VIGIL_WIRE_PROCESSES:
        return vigil_wire_add_process(w, item, error);
    case VIGIL_WIRE_ROLLUPS:
        return vigil_wire_add_rollup(w, item, error);
    case VIGIL_WIRE_WINDOWS:
        return vigil_wire_add_window(w, item, error);
    case VIGIL_WIRE_SUMMARIES:
        return vigil_wire_add_summary(w, item, error);
    case VIGIL_WIRE_REFUSED:
        return vigil_wire_add_refusal(w, item, error);
    case VIGIL_WIRE_JOBS:
        return vigil_wire_add_job(w, item, error);
    case VIGIL_WIRE_DROPS:
        return vigil_wire_add_drop(w, item, error);
    case VIGIL_WIRE_UNWATCHED_ENDS:
        return vigil_wire_add_unwatched_end(w, item, error);
    default:
        fail_msg("no add for %s items", vigil_wire_type_name(type));
    }
    return FALSE;
}

/* The decoder refuses the item (encoded by hand, sealed) and the writer
 * refuses to add it, both with an error containing `needle`. */
static void expect_bad_item(enum vigil_wire_type type, const void *item, const char *needle)
{
    GByteArray *payload = g_byte_array_new();
    hand_item(payload, type, item);
    GBytes *msg = hand_message(type, SEQUENCE, 1, payload);
    expect_bytes_error(msg, VIGIL_WIRE_ERROR_MALFORMED, needle);
    g_bytes_unref(msg);

    vigil_wire_writer *w = vigil_wire_writer_new(type, NODE_ID, SEQUENCE, 0);
    GError *error = NULL;
    expect_refused(add_one(w, type, item, &error), &error, VIGIL_WIRE_ERROR_MALFORMED, needle);
    assert_int_equal(vigil_wire_writer_count(w), 0);
    vigil_wire_writer_free(w);
}

static void test_bad_nodes(void **state)
{
    (void)state;
    struct vigil_wire_node n = nodes[0];
    n.reserved = 1;
    expect_bad_item(VIGIL_WIRE_NODE, &n, "reserved field is 0x00000001, not 0");
    n = nodes[0];
    n.cycle_ms = 0;
    expect_bad_item(VIGIL_WIRE_NODE, &n, "cycle_ms is 0");
    n = nodes[0];
    n.cycle_end_ns = 999;
    expect_bad_item(VIGIL_WIRE_NODE, &n, "cycle 42: ends (999 ns) before it starts (1000 ns)");
    n = nodes[0];
    n.hostname = "";
    expect_bad_item(VIGIL_WIRE_NODE, &n, "hostname is empty");
    n.hostname = "n\xff";
    expect_bad_item(VIGIL_WIRE_NODE, &n, "hostname is not valid UTF-8");
    n.hostname = "\xc0\x80"; /* an overlong NUL */
    expect_bad_item(VIGIL_WIRE_NODE, &n, "hostname is not valid UTF-8");
}

static void test_bad_processes(void **state)
{
    (void)state;
    struct vigil_wire_process p = processes[0];
    p.process_id = 0;
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "process id 0, which is never a process");
    p = processes[0];
    p.pid = 0;
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "process 17: pid 0 is not a process id");
    p.pid = -5;
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "process 17: pid -5 is not a process id");
    p = processes[0];
    p.rank = -2;
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "process 17: rank -2 is below -1");
    p = processes[0];
    p.exit_code = 256;
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "exit code 256 is outside -1 (unknown) to 255");
    p.exit_code = -2;
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "exit code -2 is outside");
    p = processes[0];
    p.end_ns = 999;
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p,
                    "process 17: ends (999 ns) before it starts (1000 ns)");
    p = processes[0];
    p.run_key = "";
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "process 17: run_key is empty");
    p = processes[0];
    p.job = "\xe2\x82";
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "process 17: job is not valid UTF-8");
    p = processes[0];
    p.program = "/bin/\xfe";
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "program is not valid UTF-8");
    p = processes[0];
    p.cwd = "/tmp/\x80";
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "cwd is not valid UTF-8");
    p = processes[0];
    char *argv[] = {"a", "b", "\xed\xa0\x80", NULL}; /* a UTF-16 surrogate */
    p.argc = 3;
    p.argv = argv;
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "process 17: argv[2] is not valid UTF-8");

    /* One argument too many, all empty. */
    char **many = g_new0(char *, VIGIL_WIRE_ARGV_MAX + 2);
    for (size_t k = 0; k <= VIGIL_WIRE_ARGV_MAX; k++)
        many[k] = "";
    p = processes[0];
    p.argc = VIGIL_WIRE_ARGV_MAX + 1;
    p.argv = many;
    expect_bad_item(VIGIL_WIRE_PROCESSES, &p, "argc 16385 is over the limit of 16384");
    g_free(many);
}

static void test_bad_unwatched_ends(void **state)
{
    (void)state;
    struct vigil_wire_unwatched_end e = unwatched_ends[0];
    e.process_id = 0;
    expect_bad_item(VIGIL_WIRE_UNWATCHED_ENDS, &e, "process id 0, which is never a process");
    e = unwatched_ends[0];
    e.latest_end_ns = 0;
    e.earliest_end_ns = 0;
    expect_bad_item(VIGIL_WIRE_UNWATCHED_ENDS, &e,
                    "unwatched end of process 17: latest_end_ns is 0");
    e = unwatched_ends[0];
    e.earliest_end_ns = 2001;
    expect_bad_item(VIGIL_WIRE_UNWATCHED_ENDS, &e,
                    "unwatched end of process 17: ends (2000 ns) before it starts (2001 ns)");
    e = unwatched_ends[0];
    e.cpu_s = -1;
    expect_bad_item(VIGIL_WIRE_UNWATCHED_ENDS, &e, "cpu_s is -1; it is NaN (unknown)");
    e = unwatched_ends[0];
    e.energy_j = INFINITY;
    expect_bad_item(VIGIL_WIRE_UNWATCHED_ENDS, &e, "energy_j is inf");
    e = unwatched_ends[0];
    e.flags = 8;
    expect_bad_item(VIGIL_WIRE_UNWATCHED_ENDS, &e, "unknown flags 0x8");
    e = unwatched_ends[0];
    e.reserved = 3;
    expect_bad_item(VIGIL_WIRE_UNWATCHED_ENDS, &e, "reserved field is 0x00000003");
}

static void test_bad_rollups(void **state)
{
    (void)state;
    struct vigil_wire_rollup r = rollups[0];
    r.metric_id = 0;
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "roll-up of metric 0, which is never a metric");
    r = rollups[0];
    r.flags = 2;
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "roll-up of metric 3: unknown flags 0x2");
    r = rollups[0];
    r.reserved = 5;
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "reserved field is 0x00000005");
    r = rollups[0];
    r.end_ns = 999;
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "roll-up of metric 3: ends (999 ns) before it starts");
    r = rollups[0];
    r.count = 0;
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "count 0");
    r = rollups[0];
    r.min = NAN;
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "is NaN");
    r = rollups[0];
    r.mean = -NAN;
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "is NaN");
    r = rollups[0];
    r.max = NAN;
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "is NaN");
    r = rollups[0];
    r.min = 5.0;
    r.mean = 4.5;
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "min 5, mean 4.5 and max 4 are out of order");
    r = rollups[0];
    r.mean = 4.000001; /* past max by far more than rounding */
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "out of order");
    r.mean = 0.5;
    expect_bad_item(VIGIL_WIRE_ROLLUPS, &r, "out of order");
}

static char *long_text(size_t bytes)
{
    char *text = g_malloc(bytes + 1);
    memset(text, 'r', bytes);
    text[bytes] = '\0';
    return text;
}

static void test_bad_windows_summaries_refusals(void **state)
{
    (void)state;
    char *too_long = long_text(VIGIL_WIRE_TEXT_MAX + 1);

    struct vigil_wire_window w = windows[0];
    w.first_cycle = 6;
    expect_bad_item(VIGIL_WIRE_WINDOWS, &w,
                    "window of process 0: first cycle 6 is after its last cycle 5");
    w = windows[1];
    w.end_ns = 0;
    w.start_ns = 1;
    expect_bad_item(VIGIL_WIRE_WINDOWS, &w, "window of process 17: ends (0 ns) before it starts");
    w = windows[0];
    w.reasons = "node \xff";
    expect_bad_item(VIGIL_WIRE_WINDOWS, &w, "reasons is not valid UTF-8");
    w.reasons = too_long;
    expect_bad_item(VIGIL_WIRE_WINDOWS, &w, "reasons of 1048577 bytes is longer than 1048576");

    struct vigil_wire_summary s = summaries[0];
    s.process_id = 0;
    expect_bad_item(VIGIL_WIRE_SUMMARIES, &s, "summary of process id 0");
    s = summaries[0];
    s.report_json = "";
    expect_bad_item(VIGIL_WIRE_SUMMARIES, &s, "report_json is empty");
    s.report_json = "{\"a\":\"\xc3\"}";
    expect_bad_item(VIGIL_WIRE_SUMMARIES, &s, "report_json is not valid UTF-8");
    s.report_json = too_long;
    expect_bad_item(VIGIL_WIRE_SUMMARIES, &s,
                    "report_json of 1048577 bytes is longer than 1048576");

    struct vigil_wire_refusal r = {""};
    expect_bad_item(VIGIL_WIRE_REFUSED, &r, "reason is empty");
    r.reason = "\xf8\x88\x80\x80\x80";
    expect_bad_item(VIGIL_WIRE_REFUSED, &r, "reason is not valid UTF-8");
    g_free(too_long);
}

static void test_bad_jobs(void **state)
{
    (void)state;
    struct vigil_wire_job j = jobs[0];
    j.job_id = "";
    expect_bad_item(VIGIL_WIRE_JOBS, &j, "job : job_id is empty");
    j = jobs[0];
    j.flags |= 2;
    expect_bad_item(VIGIL_WIRE_JOBS, &j, "job 4242: unknown flags 0x2");
    j = jobs[0];
    j.end_ns = 999;
    expect_bad_item(VIGIL_WIRE_JOBS, &j, "job 4242: ends (999 ns) before it starts (1000 ns)");
    j = jobs[0];
    j.user = "al\xff"
             "ce";
    expect_bad_item(VIGIL_WIRE_JOBS, &j, "job 4242: user is not valid UTF-8");
    j = jobs[0];
    j.nodes = "n\xc3";
    expect_bad_item(VIGIL_WIRE_JOBS, &j, "job 4242: nodes is not valid UTF-8");
}

static void test_bad_drops(void **state)
{
    (void)state;
    struct vigil_wire_drop d = drops[0];
    d.pid = 0;
    expect_bad_item(VIGIL_WIRE_DROPS, &d, "drops of pid 0, not a process");
    d = drops[0];
    d.counter = 0;
    expect_bad_item(VIGIL_WIRE_DROPS, &d, "drops of pid 4242 counted by counter 0");
    d = drops[0];
    d.reserved = 1;
    expect_bad_item(VIGIL_WIRE_DROPS, &d, "reserved field is 0x00000001, not 0");
}

/* A NUL cannot be in a C string, so only the decoder can meet one. */
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

static void test_nul_in_version_2_strings(void **state)
{
    (void)state;
    expect_patched(build(VIGIL_WIRE_NODE, 1), PAYLOAD + 40 + 2 + 4, 0, 1,
                   VIGIL_WIRE_ERROR_MALFORMED,
                   "node message: item 1 of 1: hostname contains a NUL");
    const struct vigil_wire_process *p = &processes[0];
    size_t run_key = PAYLOAD + 40 + 2;
    size_t cwd = run_key + strlen(p->run_key) + 2 + strlen(p->job) + 2 + strlen(p->program) + 2;
    size_t argv1 = cwd + strlen(p->cwd) + 4 + 2 + strlen(p->argv[0]) + 2;
    expect_patched(build(VIGIL_WIRE_PROCESSES, 1), run_key, 0, 1, VIGIL_WIRE_ERROR_MALFORMED,
                   "run_key contains a NUL byte");
    expect_patched(build(VIGIL_WIRE_PROCESSES, 1), cwd + 3, 0, 1, VIGIL_WIRE_ERROR_MALFORMED,
                   "cwd contains a NUL byte");
    expect_patched(build(VIGIL_WIRE_PROCESSES, 1), argv1 + 1, 0, 1, VIGIL_WIRE_ERROR_MALFORMED,
                   "argv[1] contains a NUL byte");
    expect_patched(build(VIGIL_WIRE_WINDOWS, 1), PAYLOAD + 48 + 4 + 10, 0, 1,
                   VIGIL_WIRE_ERROR_MALFORMED, "reasons contains a NUL byte");
    expect_patched(build(VIGIL_WIRE_SUMMARIES, 1), PAYLOAD + 8 + 4, 0, 1,
                   VIGIL_WIRE_ERROR_MALFORMED, "report_json contains a NUL byte");
    expect_patched(build(VIGIL_WIRE_REFUSED, 1), PAYLOAD + 4 + 9, 0, 1, VIGIL_WIRE_ERROR_MALFORMED,
                   "reason contains a NUL byte");
}

/* Lengths and counts a sender cannot have meant, refused before anything
 * is read or allocated by them. */
static void test_hostile_version_2_lengths(void **state)
{
    (void)state;
    const struct vigil_wire_process *p = &processes[0];
    size_t argc_at = PAYLOAD + 40 + 2 + strlen(p->run_key) + 2 + strlen(p->job) + 2 +
                     strlen(p->program) + 2 + strlen(p->cwd);
    expect_patched(build(VIGIL_WIRE_PROCESSES, 1), argc_at, UINT32_MAX, 4,
                   VIGIL_WIRE_ERROR_MALFORMED, "argc 4294967295 is over the limit of 16384");
    expect_patched(build(VIGIL_WIRE_PROCESSES, 1), argc_at, p->argc + 1, 4,
                   VIGIL_WIRE_ERROR_MALFORMED,
                   "length of argv[4] is truncated: needs 2 bytes, 0 left");
    expect_patched(build(VIGIL_WIRE_PROCESSES, 1), argc_at, p->argc - 1, 4,
                   VIGIL_WIRE_ERROR_MALFORMED, "4 bytes left over after its 1 items");
    expect_patched(build(VIGIL_WIRE_SUMMARIES, 1), PAYLOAD + 8, UINT32_MAX, 4,
                   VIGIL_WIRE_ERROR_MALFORMED,
                   "report_json of 4294967295 bytes is longer than 1048576");
    expect_patched(build(VIGIL_WIRE_SUMMARIES, 1), PAYLOAD + 8, VIGIL_WIRE_TEXT_MAX, 4,
                   VIGIL_WIRE_ERROR_MALFORMED, "report_json is truncated: needs 1048576 bytes");
    expect_patched(build(VIGIL_WIRE_WINDOWS, 1), PAYLOAD + 48, VIGIL_WIRE_TEXT_MAX + 1, 4,
                   VIGIL_WIRE_ERROR_MALFORMED, "reasons of 1048577 bytes is longer than 1048576");
    expect_patched(build_full(VIGIL_WIRE_PROCESSES), HEADER_COUNT, UINT32_MAX, 4,
                   VIGIL_WIRE_ERROR_MALFORMED, "4294967295 items need at least 52 bytes");
    expect_patched(build_full(VIGIL_WIRE_ROLLUPS), HEADER_COUNT, G_N_ELEMENTS(rollups) + 1, 4,
                   VIGIL_WIRE_ERROR_MALFORMED, "need at least 64 bytes");
}

static void test_node_and_refusal_hold_exactly_one(void **state)
{
    (void)state;
    expect_patched(build(VIGIL_WIRE_NODE, 1), HEADER_COUNT, 2, 4, VIGIL_WIRE_ERROR_MALFORMED,
                   "node message with 2 items; it holds exactly one");
    expect_patched(build(VIGIL_WIRE_NODE, 1), HEADER_COUNT, 0, 4, VIGIL_WIRE_ERROR_MALFORMED,
                   "node message with 0 items");
    expect_patched(build(VIGIL_WIRE_REFUSED, 1), HEADER_COUNT, 0, 4, VIGIL_WIRE_ERROR_MALFORMED,
                   "refused message with 0 items; it holds exactly one");

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
    GBytes *msg = vigil_wire_writer_finish(w);
    assert_int_equal(g_bytes_get_size(msg),
                     VIGIL_WIRE_HEADER_BYTES + expected_payload_bytes(VIGIL_WIRE_REFUSED, 1));
    g_bytes_unref(msg);
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
    assert_process_equal(&m.processes[0], &p);
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

static GBytes *build_for_node(enum vigil_wire_type type, size_t n, uint64_t node_id,
                              uint64_t sequence)
{
    vigil_wire_writer *w =
        vigil_wire_writer_new(type, node_id, sequence, carries_process_id(type) ? PROCESS_ID : 0);
    for (size_t i = 0; i < n; i++)
        add_fixture(w, type, i);
    return vigil_wire_writer_finish(w);
}

static GBytes *node_message(uint64_t sequence)
{
    return build_seq(VIGIL_WIRE_NODE, 1, sequence);
}

static GBytes *processes_message(uint64_t sequence)
{
    return build_seq(VIGIL_WIRE_PROCESSES, G_N_ELEMENTS(processes), sequence);
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

    vigil_wire_writer *procs = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, NODE_ID, seq, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(processes); i++)
        add_fixture(procs, VIGIL_WIRE_PROCESSES, i);
    expect_refused(vigil_wire_add_writer(by_writer, procs, &error), &error,
                   VIGIL_WIRE_ERROR_MALFORMED,
                   "cannot add to the batch message: message 1: processes message first; a batch "
                   "starts with its node message");
    vigil_wire_writer *node = vigil_wire_writer_new(VIGIL_WIRE_NODE, NODE_ID, seq, 0);
    add_fixture(node, VIGIL_WIRE_NODE, 0);
    assert_true(vigil_wire_add_writer(by_writer, node, &error));
    vigil_wire_writer *other = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, NODE_ID, seq + 1, 0);
    add_fixture(other, VIGIL_WIRE_PROCESSES, 0);
    expect_refused(vigil_wire_add_writer(by_writer, other, &error), &error,
                   VIGIL_WIRE_ERROR_MALFORMED, "but the batch's is");
    procs = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, NODE_ID, seq, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(processes); i++)
        add_fixture(procs, VIGIL_WIRE_PROCESSES, i);
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
        cmocka_unit_test(test_longest_path_round_trips),
        cmocka_unit_test(test_samples_layout_is_as_documented),
        cmocka_unit_test(test_activity_layout_is_as_documented),
        cmocka_unit_test(test_checksum_ignores_its_own_field),
        cmocka_unit_test(test_type_names),
        cmocka_unit_test(test_error_domain_name),
        cmocka_unit_test(test_clear_zeroed_message),
        cmocka_unit_test(test_every_truncation_fails),
        cmocka_unit_test(test_trailing_bytes_fail),
        cmocka_unit_test(test_payload_left_over_fails),
        cmocka_unit_test(test_bit_flips_are_detected),
        cmocka_unit_test(test_bit_flips_past_the_checksum),
        cmocka_unit_test(test_huge_count_is_refused_before_allocating),
        cmocka_unit_test(test_count_disagreeing_with_items),
        cmocka_unit_test(test_string_running_past_the_end),
        cmocka_unit_test(test_hostile_activities),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_hostile_metrics),
        cmocka_unit_test(test_hostile_samples),
        cmocka_unit_test(test_hostile_anomalies),
        cmocka_unit_test(test_hostile_states),
        cmocka_unit_test(test_hostile_headers),
        cmocka_unit_test(test_corrupt_type_is_a_checksum_error),
        cmocka_unit_test(test_writer_refuses_bad_names),
        cmocka_unit_test(test_writer_refuses_bad_samples),
        cmocka_unit_test(test_writer_refuses_bad_metrics),
        cmocka_unit_test(test_writer_refuses_bad_records),
        cmocka_unit_test(test_writer_refuses_to_grow_too_large),
        cmocka_unit_test(test_encode_message_refuses_inconsistent_messages),
        cmocka_unit_test(test_version_2_layouts_are_as_documented),
        cmocka_unit_test(test_bad_unwatched_ends),
        cmocka_unit_test(test_bad_nodes),
        cmocka_unit_test(test_bad_processes),
        cmocka_unit_test(test_bad_rollups),
        cmocka_unit_test(test_bad_windows_summaries_refusals),
        cmocka_unit_test(test_bad_jobs),
        cmocka_unit_test(test_bad_drops),
        cmocka_unit_test(test_nul_in_version_2_strings),
        cmocka_unit_test(test_hostile_version_2_lengths),
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
