/* The outbox on its own, with a real uplink and a ZeroMQ ROUTER in the test
 * taking its batches: a cycle too big for one batch is cut into several,
 * each with its own sequence and NODE and each describing the process and
 * every file its activities use; every activity is in exactly one; file
 * paths go as their bytes; an activity whose file was never named goes
 * without a file; what the wire cannot carry (an issue whose value is NaN,
 * a roll-up window without a value) is left out and counted; an open
 * expected range goes as infinities; a process without a run key gets one.
 *
 * Every wait polls for a condition under a generous deadline. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <zmq.h>

#include "vigil/health.h"
#include "vigil/ontology.h"
#include "vigil/wire.h"
#include "outbox.h"
#include "processes.h"
#include "reasoning.h"
#include "rollup.h"
#include "tick_samples.h"
#include "uplink.h"
#include "uplink_settings.h"
#include "verdicts.h"
#include "test_support.h"
#include "test_main.h"

#define NODE_ID      7
#define DEADLINE_MS  60000
#define ACTIVITIES   300000 /* 24 MB of activities: more than one batch */
#define FILES        50000
#define UNNAMED_FILE 999999u
#define UNNAMED_EACH 1000 /* every so many activities use the unnamed file */
#define PROCESS_ID   1
#define PID          4321

/* The process's own start: the warehouse keys a process by it. */
static uint64_t process_start_ns;

struct fixture {
    char *dir;
    void *context, *router;
    struct vigild_uplink_settings settings;
    struct vigild_uplink *uplink;
    vigil_metric_catalog *catalog;
    struct vigild_processes processes;
    struct vigild_rollup rollup;
    struct vigild_process process;
};

static int setup(void **state)
{
    struct fixture *f = g_new0(struct fixture, 1);
    if (!test_uplink_settings_in_new_dir(&f->settings, &f->dir, NODE_ID, 1u << 30)) {
        g_free(f);
        return -1;
    }
    f->context = zmq_ctx_new();
    f->router = zmq_socket(f->context, ZMQ_ROUTER);
    int zero = 0;
    zmq_setsockopt(f->router, ZMQ_LINGER, &zero, sizeof zero);
    assert_int_equal(zmq_bind(f->router, f->settings.endpoint), 0);
    f->uplink = vigild_uplink_new(&f->settings, NULL);
    if (f->uplink == NULL)
        return -1;
    f->catalog = vigil_metric_catalog_new();
    f->processes.by_id = g_hash_table_new(g_int64_hash, g_int64_equal);
    f->processes.ended = g_queue_new();
    vigild_rollup_init(&f->rollup, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    vigild_uplink_free(f->uplink);
    zmq_close(f->router);
    zmq_ctx_term(f->context);
    g_free(f->settings.endpoint);
    g_free(f->settings.spool_dir);
    vigil_metric_catalog_free(f->catalog);
    g_hash_table_destroy(f->processes.by_id);
    g_queue_free(f->processes.ended);
    vigild_rollup_clear(&f->rollup);
    g_free(f->process.program);
    g_free(f->process.cwd);
    g_free(f->process.job);
    if (f->process.argv != NULL)
        g_ptr_array_free(f->process.argv, TRUE);
    void *dir = f->dir;
    g_free(f);
    return test_remove_dir(&dir);
}

/* A running process as processes.c keeps it, with no run key and a
 * working directory that is not UTF-8. */
static void add_process(struct fixture *f)
{
    struct vigild_process *p = &f->process;
    p->id = PROCESS_ID;
    p->pid = PID;
    p->uid = 1000;
    p->state = VIGILD_PROCESS_RUNNING;
    p->program = g_strdup("writer");
    p->cwd = g_strdup("/tmp/caf\xe9");
    p->job = g_strdup("");
    p->argv = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(p->argv, g_strdup("writer"));
    p->mpi_rank = p->mpi_size = -1;
    p->registered_ns = vigil_clock_monotonic_ns();
    p->start_monotonic_ns = process_start_ns = p->registered_ns - 1000;
    p->start_realtime_ns = vigil_clock_realtime_ns();
    p->exit_code = -1;
    g_hash_table_insert(f->processes.by_id, &p->id, p);
}

static char *path_of(uint32_t file_id)
{
    /* Every hundredth path has a byte that is not UTF-8. */
    return g_strdup_printf("/scratch/run/%s/file-%08u.dat", file_id % 100 == 0 ? "\xff" : "data",
                           file_id);
}

static GArray *make_activities(void)
{
    GArray *a = g_array_sized_new(FALSE, FALSE, sizeof(struct vigil_activity), ACTIVITIES);
    uint64_t now = vigil_clock_monotonic_ns();
    for (uint32_t i = 0; i < ACTIVITIES; i++) {
        struct vigil_activity x = {
            .record_type = VIGIL_RECORD_ACTIVITY,
            .layer = VIGIL_LAYER_POSIX,
            .op = VIGIL_OP_POSIX_WRITE,
            .file_id = i % UNNAMED_EACH == 0 ? UNNAMED_FILE : 1 + i % FILES,
            .seq = i,
            .start_ns = now + i,
            .end_ns = now + i + 10,
            .offset_bytes = VIGIL_OFFSET_UNKNOWN,
            .bytes_asked = 1,
            .result = 1,
            .thread_id = 1,
        };
        g_array_append_val(a, x);
    }
    return a;
}

static GHashTable *make_names(void)
{
    GHashTable *names = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    for (uint32_t id = 1; id <= FILES; id++)
        g_hash_table_insert(names, GUINT_TO_POINTER(id), path_of(id));
    return names;
}

/* Roll-ups: a gauge with a value, and a counter sampled once (its window
 * has no rate: count 0). */
static void make_rollups(struct fixture *f, struct vigild_outbox *o)
{
    uint32_t gauge = vigil_metric_register(f->catalog, "mem.free_bytes", "bytes",
                                           VIGIL_METRIC_GAUGE, "test", VIGIL_METRIC_MEASURED, NULL);
    uint32_t counter = vigil_metric_register(f->catalog, "cpu.user_s", "s", VIGIL_METRIC_COUNTER,
                                             "test", VIGIL_METRIC_MEASURED, NULL);
    assert_true(gauge != 0 && counter != 0);
    struct vigild_tick_samples tick = {
        .t_ns = vigil_clock_monotonic_ns(),
        .node = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample)),
        .process = g_array_new(FALSE, FALSE, sizeof(struct vigild_process_sample)),
    };
    struct vigil_sample samples[] = {{.metric_id = gauge, .t_ns = tick.t_ns, .value = 5},
                                     {.metric_id = counter, .t_ns = tick.t_ns, .value = 9}};
    g_array_append_vals(tick.node, samples, G_N_ELEMENTS(samples));
    vigild_rollup_add(&f->rollup, &tick, f->catalog);
    vigild_outbox_take_rollups(o, &tick, f->catalog);
    /* The window's samples as capture hands them for a forwarded cycle. */
    vigild_outbox_samples(o, tick.node);
    g_array_free(tick.node, TRUE);
    g_array_free(tick.process, TRUE);
}

static GBytes *router_receive(struct fixture *f)
{
    zmq_pollitem_t item = {f->router, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, DEADLINE_MS) != 1)
        fail_msg("no batch came");
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    assert_true(zmq_msg_recv(&id, f->router, 0) >= 0);
    assert_true(zmq_msg_recv(&body, f->router, 0) >= 0);
    GBytes *bytes = g_bytes_new(zmq_msg_data(&body), zmq_msg_size(&body));
    zmq_msg_close(&id);
    zmq_msg_close(&body);
    return bytes;
}

/* What one batch holds that the test checks. */
struct batch_check {
    GHashTable *seqs; /* activity seq (boxed) → batch sequence, over every batch */
    GHashTable *sequences;
    guint unnamed, anomalies, rollups, samples, process_items;
    gboolean infinite_range;
};

static void check_batch(struct batch_check *c, GBytes *bytes)
{
    gsize length;
    const void *data = g_bytes_get_data(bytes, &length);
    assert_true(length <= (17u << 20)); /* cut near 16 MiB */
    struct vigil_wire_message batch;
    GError *error = NULL;
    if (!vigil_wire_decode(data, length, &batch, &error))
        fail_msg("a batch does not decode: %s", error->message);
    uint64_t sequence = batch.header.sequence;
    assert_true(g_hash_table_add(c->sequences, g_memdup2(&sequence, sizeof sequence)));
    assert_int_equal(batch.inner[0].header.type, VIGIL_WIRE_NODE);
    assert_int_equal(batch.inner[0].nodes[0].cycle, 3);
    gboolean described = FALSE;
    GHashTable *named = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (uint32_t i = 0; i < batch.header.count; i++) {
        const struct vigil_wire_message *m = &batch.inner[i];
        if (m->header.type == VIGIL_WIRE_PROCESSES) {
            for (uint32_t k = 0; k < m->header.count; k++) {
                const struct vigil_wire_process *p = &m->processes[k];
                assert_int_equal(p->process_id, PROCESS_ID);
                assert_int_equal(p->pid, PID);
                assert_string_equal(p->cwd, "/tmp/caf\xef\xbf\xbd");
                /* None came with it: HOST-PID-START, as the preload makes one. */
                assert_non_null(strstr(p->run_key, "-" G_STRINGIFY(PID) "-"));
                assert_int_equal(p->start_ns, process_start_ns);
                described = TRUE;
                c->process_items++;
            }
        }
        if (m->header.type == VIGIL_WIRE_NAMES) {
            for (uint32_t k = 0; k < m->header.count; k++) {
                char *want = path_of(m->names[k].file_id);
                /* The path's own bytes, not a valid-UTF-8 copy. */
                assert_int_equal(m->names[k].length, strlen(want));
                assert_memory_equal(m->names[k].path, want, strlen(want));
                g_free(want);
                g_hash_table_add(named, GUINT_TO_POINTER(m->names[k].file_id));
            }
        }
    }
    for (uint32_t i = 0; i < batch.header.count; i++) {
        const struct vigil_wire_message *m = &batch.inner[i];
        switch (m->header.type) {
        case VIGIL_WIRE_ACTIVITIES:
            assert_true(described);
            for (uint32_t k = 0; k < m->header.count; k++) {
                const struct vigil_activity *a = &m->activities[k];
                if (a->file_id == VIGIL_FILE_NONE)
                    c->unnamed++;
                else if (!g_hash_table_contains(named, GUINT_TO_POINTER(a->file_id)))
                    fail_msg("batch %" PRIu64 ": file %u is used and not named", sequence,
                             a->file_id);
                uint64_t seq = a->seq;
                if (!g_hash_table_insert(c->seqs, g_memdup2(&seq, sizeof seq),
                                         GSIZE_TO_POINTER((gsize)sequence)))
                    fail_msg("activity %" PRIu64 " is in two batches", seq);
            }
            break;
        case VIGIL_WIRE_ANOMALIES:
            c->anomalies += m->header.count;
            for (uint32_t k = 0; k < m->header.count; k++)
                c->infinite_range = c->infinite_range || (isinf(m->anomalies[k].expected_min) &&
                                                          isinf(m->anomalies[k].expected_max));
            break;
        case VIGIL_WIRE_ROLLUPS:
            c->rollups += m->header.count;
            break;
        case VIGIL_WIRE_SAMPLES:
            c->samples += m->header.count;
            break;
        default:
            break;
        }
    }
    g_hash_table_destroy(named);
    vigil_wire_message_clear(&batch);
}

/* vigild's warnings that a file has no name. */
static void count_unnamed_warnings(const gchar *domain, GLogLevelFlags level, const gchar *message,
                                   gpointer user_data)
{
    (void)domain;
    (void)level;
    if (strstr(message, "has no name") != NULL)
        (*(guint *)user_data)++;
}

static void test_a_big_cycle_is_cut_into_self_contained_batches(void **state)
{
    struct fixture *f = *state;
    add_process(f);
    struct vigild_outbox *o =
        vigild_outbox_new(f->uplink, NODE_ID, NULL, f->catalog, &f->processes, &f->rollup);
    vigild_outbox_process_started(o, &f->process);
    make_rollups(f, o);
    GHashTable *names = make_names();
    vigild_outbox_activities(o, PROCESS_ID, make_activities(), names);
    g_hash_table_destroy(names);

    /* The node's verdict: one issue the wire cannot carry (its value is
     * NaN), one with an open range. */
    struct vigild_issue issues[2] = {
        {.plugin = "sensor-sanity",
         .issue = {.health = VIGIL_HEALTH_ABNORMAL_OTHER,
                   .value = NAN,
                   .expected_min = NAN,
                   .expected_max = NAN}},
        {.plugin = "statistics-range",
         .issue =
             {.health = VIGIL_HEALTH_BAD, .value = 3, .expected_min = NAN, .expected_max = NAN}},
    };
    g_strlcpy(issues[0].issue.metric, "mem.free_bytes", sizeof issues[0].issue.metric);
    g_strlcpy(issues[1].issue.metric, "mem.free_bytes", sizeof issues[1].issue.metric);
    g_strlcpy(issues[1].issue.message, "caf\xe9 is out of range", sizeof issues[1].issue.message);
    struct vigild_verdict node = {.level = VIGIL_LEVEL_NODE,
                                  .decision = {.state = VIGIL_HEALTH_OK,
                                               .upward = VIGIL_HEALTH_OK,
                                               .upward_raw = VIGIL_HEALTH_OK},
                                  .issues = issues,
                                  .n_issues = 2};
    uint64_t now = vigil_clock_monotonic_ns();
    struct vigild_cycle_verdicts v = {
        .cycle = 3, .start_ns = now - 1000000000, .end_ns = now, .node = &node};
    struct vigild_reasoning reasoning = {.processes =
                                             g_hash_table_new(g_int64_hash, g_int64_equal)};
    guint unnamed_warnings = 0;
    guint handler =
        g_log_set_handler("vigild", G_LOG_LEVEL_WARNING, count_unnamed_warnings, &unnamed_warnings);
    vigild_outbox_close_cycle(o, &v, &reasoning, 1000);
    g_log_remove_handler("vigild", handler);
    g_hash_table_destroy(reasoning.processes);
    /* One line for the process, whatever the count (it had been one line
     * for each of the first ten and then every thousandth, for ever). */
    assert_int_equal(unnamed_warnings, 1);

    struct vigild_outbox_stats stats;
    vigild_outbox_stats(o, &stats);
    assert_true(stats.batches >= 2);
    assert_int_equal(stats.items_skipped, 1); /* the NaN issue */
    assert_int_equal(stats.names_missing, ACTIVITIES / UNNAMED_EACH);

    struct batch_check c = {
        .seqs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
        .sequences = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
    };
    for (uint64_t i = 0; i < stats.batches; i++) {
        GBytes *bytes = router_receive(f);
        check_batch(&c, bytes);
        g_bytes_unref(bytes);
    }
    assert_int_equal(g_hash_table_size(c.seqs), ACTIVITIES);
    assert_int_equal(c.unnamed, ACTIVITIES / UNNAMED_EACH);
    assert_int_equal(c.anomalies, 1);
    assert_true(c.infinite_range);
    assert_int_equal(c.rollups, 1); /* the gauge's; the counter's window has no value */
    assert_int_equal(c.samples, 2);
    assert_int_equal(c.process_items, stats.batches); /* described in each */
    g_hash_table_destroy(c.seqs);
    g_hash_table_destroy(c.sequences);
    vigild_outbox_free(o);
}

TEST_MAIN(cmocka_unit_test_setup_teardown(test_a_big_cycle_is_cut_into_self_contained_batches,
                                          setup, teardown))
