/* vigil — vigil-txd in a test (test_txd.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <zmq.h>

#include "test_daemon.h"
#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "vigil/clock.h"
#include "vigil/health.h"
#include "vigil/ontology.h"

#define ACK_TIMEOUT_MS 60000

static void start(struct test_txd *t)
{
    t->pid = test_start_detached(t->dir, test_env_or_fail("VIGIL_TXD"), t->config_path, t->pid_path,
                                 t->log_path, &t->pidfd);
}

void test_txd_start(struct test_txd *t, const char *dir, const char *conninfo,
                    const char *more_config)
{
    char *endpoint = g_strdup_printf("ipc://%s/txd.sock", dir);
    test_txd_start_at(t, dir, endpoint, conninfo, more_config);
    g_free(endpoint);
}

void test_txd_start_at(struct test_txd *t, const char *dir, const char *endpoint,
                       const char *conninfo, const char *more_config)
{
    memset(t, 0, sizeof *t);
    t->dir = g_strdup(dir);
    t->config_path = g_build_filename(dir, "txd.conf", NULL);
    t->log_path = g_build_filename(dir, "txd.log", NULL);
    t->pid_path = g_build_filename(dir, "txd.pid", NULL);
    t->endpoint = g_strdup(endpoint);
    char *config = g_strdup_printf("[txd]\nbind = %s\ncycle_ms = 100\n%s\n"
                                   "[warehouse]\nconninfo = %s\nmigrate = true\n",
                                   t->endpoint, more_config != NULL ? more_config : "", conninfo);
    assert_true(g_file_set_contents(t->config_path, config, -1, NULL));
    g_free(config);
    start(t);
}

void test_txd_restart(struct test_txd *t)
{
    assert_int_equal(t->pid, 0);
    start(t);
}

static char *end(struct test_txd *t, int signal)
{
    assert_true(t->pid > 0);
    char *log = test_end_detached("vigil-txd", t->pid, t->pidfd, signal, t->log_path);
    t->pid = 0;
    t->pidfd = -1;
    return log;
}

char *test_txd_stop(struct test_txd *t)
{
    return end(t, SIGTERM);
}

char *test_txd_kill(struct test_txd *t)
{
    return end(t, SIGKILL);
}

void test_txd_clear(struct test_txd *t)
{
    if (t->pid > 0)
        g_free(test_txd_kill(t));
    g_free(t->dir);
    g_free(t->config_path);
    g_free(t->endpoint);
    g_free(t->log_path);
    g_free(t->pid_path);
    memset(t, 0, sizeof *t);
}

int test_txd_fixture_setup(void **state)
{
    struct test_txd_fixture *f = g_new0(struct test_txd_fixture, 1);
    f->dir = g_dir_make_tmp("vigil-txd-XXXXXX", NULL);
    assert_non_null(f->dir);
    f->conninfo = test_pg_new_database(&test_pg_cluster);
    *state = f;
    return 0;
}

int test_txd_fixture_teardown(void **state)
{
    struct test_txd_fixture *f = *state;
    test_daemon_kill_all(); /* a failed test's vigild, which sent to the server */
    test_txd_clear(&f->txd);
    test_remove_tree(f->dir);
    g_free(f->dir);
    g_free(f->conninfo);
    g_free(f);
    return 0;
}

/* ---- the synthetic daemon -------------------------------------------------------------- */

void test_sender_open(struct test_sender *s, const char *endpoint, uint64_t node_id,
                      const char *curve_server_key, const char *client_public,
                      const char *client_secret)
{
    memset(s, 0, sizeof *s);
    s->node_id = node_id;
    s->context = zmq_ctx_new();
    s->socket = zmq_socket(s->context, ZMQ_DEALER);
    assert_non_null(s->socket);
    int zero = 0;
    zmq_setsockopt(s->socket, ZMQ_LINGER, &zero, sizeof zero);
    if (curve_server_key != NULL) {
        char public_key[41], secret_key[41];
        if (client_public == NULL) {
            assert_int_equal(zmq_curve_keypair(public_key, secret_key), 0);
            client_public = public_key;
            client_secret = secret_key;
        }
        assert_int_equal(zmq_setsockopt(s->socket, ZMQ_CURVE_SERVERKEY, curve_server_key, 41), 0);
        assert_int_equal(zmq_setsockopt(s->socket, ZMQ_CURVE_PUBLICKEY, client_public, 41), 0);
        assert_int_equal(zmq_setsockopt(s->socket, ZMQ_CURVE_SECRETKEY, client_secret, 41), 0);
    }
    assert_int_equal(zmq_connect(s->socket, endpoint), 0);
}

void test_txd_start_with_sender(struct test_txd_fixture *f, struct test_sender *s, uint64_t node_id)
{
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    test_sender_open(s, f->txd.endpoint, node_id, NULL, NULL, NULL);
}

void test_sender_close(struct test_sender *s)
{
    zmq_close(s->socket);
    zmq_ctx_term(s->context);
    memset(s, 0, sizeof *s);
}

void test_sender_send(struct test_sender *s, GBytes *message)
{
    gsize length;
    const void *data = g_bytes_get_data(message, &length);
    assert_int_equal(zmq_send(s->socket, data, length, 0), (int)length);
}

gboolean test_sender_receive(struct test_sender *s, struct vigil_wire_message *out, int timeout_ms)
{
    zmq_pollitem_t item = {.socket = s->socket, .events = ZMQ_POLLIN};
    if (zmq_poll(&item, 1, timeout_ms) != 1)
        return FALSE;
    zmq_msg_t m;
    zmq_msg_init(&m);
    assert_true(zmq_msg_recv(&m, s->socket, 0) >= 0);
    GError *error = NULL;
    if (!vigil_wire_decode(zmq_msg_data(&m), zmq_msg_size(&m), out, &error))
        fail_msg("the server sent a message that does not decode: %s", error->message);
    zmq_msg_close(&m);
    return TRUE;
}

void test_sender_expect_ack(struct test_sender *s, uint64_t sequence)
{
    for (;;) {
        struct vigil_wire_message m;
        if (!test_sender_receive(s, &m, ACK_TIMEOUT_MS))
            fail_msg("no acknowledgement of batch %" G_GUINT64_FORMAT, sequence);
        unsigned type = m.header.type;
        uint64_t got = m.header.sequence;
        char *reason = type == VIGIL_WIRE_REFUSED ? g_strdup(m.refusals[0].reason) : NULL;
        vigil_wire_message_clear(&m);
        if (type == VIGIL_WIRE_STATES)
            continue;
        if (type == VIGIL_WIRE_REFUSED)
            fail_msg("batch %" G_GUINT64_FORMAT " refused: %s", got, reason);
        assert_int_equal(type, VIGIL_WIRE_ACK);
        assert_int_equal(got, sequence);
        return;
    }
}

void test_sender_send_acked(struct test_sender *s, GBytes *message, uint64_t sequence)
{
    test_sender_send(s, message);
    test_sender_expect_ack(s, sequence);
}

/* ---- batches ------------------------------------------------------------------------------- */

void test_txd_add_message(vigil_wire_writer *batch, vigil_wire_writer *w)
{
    GError *error = NULL;
    if (!vigil_wire_add_writer(batch, w, &error))
        fail_msg("a test batch's message was refused: %s", error->message);
}

void test_txd_check_item(gboolean ok, GError *const *error)
{
    if (!ok)
        fail_msg("a test batch's item was refused: %s",
                 *error != NULL ? (*error)->message : "(no reason given)");
}

const struct vigil_metric_desc test_txd_metrics[TEST_TXD_METRIC_COUNT] = {
    {1, VIGIL_METRIC_COUNTER, VIGIL_METRIC_MEASURED, "cpu.busy_s", "s", "procstat"},
    {2, VIGIL_METRIC_GAUGE, VIGIL_METRIC_MEASURED, "mem.used_bytes", "bytes", "meminfo"},
};

void test_txd_add_metrics(vigil_wire_writer *batch, uint64_t node_id, uint64_t sequence)
{
    GError *error = NULL;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_METRICS, node_id, sequence, 0);
    for (unsigned i = 0; i < TEST_TXD_METRIC_COUNT; i++)
        test_txd_check_item(vigil_wire_add_metric(w, &test_txd_metrics[i], &error), &error);
    test_txd_add_message(batch, w);
}

void test_txd_add_node(vigil_wire_writer *batch, uint64_t node_id, uint64_t sequence,
                       const char *hostname, uint64_t cycle_start_ns, int64_t shift_ns)
{
    GError *error = NULL;
    struct vigil_clock_offset offset;
    vigil_clock_offset_measure(&offset);
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_NODE, node_id, sequence, 0);
    struct vigil_wire_node node = {.realtime_offset_ns =
                                       offset.realtime_minus_monotonic_ns + shift_ns,
                                   .cycle = sequence,
                                   .cycle_start_ns = cycle_start_ns,
                                   .cycle_end_ns = cycle_start_ns + 1000000000u,
                                   .cycle_ms = 1000,
                                   .hostname = (char *)hostname};
    test_txd_check_item(vigil_wire_add_node(w, &node, &error), &error);
    test_txd_add_message(batch, w);
}

void test_txd_add_rollups(vigil_wire_writer *batch, uint64_t node_id, uint64_t sequence,
                          uint64_t cycle_start_ns)
{
    GError *error = NULL;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_ROLLUPS, node_id, sequence, 0);
    for (unsigned i = 0; i < TEST_TXD_METRIC_COUNT; i++) {
        struct vigil_wire_rollup r = {
            .metric_id = test_txd_metrics[i].id,
            .start_ns = cycle_start_ns,
            .end_ns = cycle_start_ns + 1000000000u,
            .count = 10,
            .min = 1,
            .mean = 2,
            .max = 3,
            .delta = test_txd_metrics[i].kind == VIGIL_METRIC_COUNTER ? 5 : NAN};
        test_txd_check_item(vigil_wire_add_rollup(w, &r, &error), &error);
    }
    test_txd_add_message(batch, w);
}

void test_txd_add_node_state(vigil_wire_writer *batch, uint64_t node_id, uint64_t sequence,
                             unsigned health)
{
    GError *error = NULL;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_STATES, node_id, sequence, 0);
    struct vigil_wire_state state = {
        .cycle = sequence, .level = VIGIL_LEVEL_NODE, .health = (uint8_t)health};
    test_txd_check_item(vigil_wire_add_state(w, &state, &error), &error);
    test_txd_add_message(batch, w);
}

GBytes *test_batch_new(uint64_t node_id, uint64_t sequence, uint32_t activities, uint64_t first_seq,
                       unsigned node_health)
{
    GError *error = NULL;
    uint64_t now = vigil_clock_monotonic_ns();
    /* One process across every batch of a test program, as a real one. */
    static uint64_t process_start_ns;
    if (process_start_ns == 0)
        process_start_ns = now - 60000000000u;
    vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, node_id, sequence, 0);
    char hostname[32];
    g_snprintf(hostname, sizeof hostname, "test-node-%" G_GUINT64_FORMAT, node_id);
    test_txd_add_node(batch, node_id, sequence, hostname, now - 1000000000u, 0);

    const uint64_t process = 7;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, node_id, sequence, 0);
    char run_key[48];
    g_snprintf(run_key, sizeof run_key, "test-run-%" G_GUINT64_FORMAT, node_id);
    char *argv[] = {"writer", "--size", "4k", NULL};
    struct vigil_wire_process p = {.process_id = process,
                                   .pid = (int32_t)(1000 + node_id),
                                   .uid = 0,
                                   .rank = -1,
                                   .exit_code = -1,
                                   .start_ns = process_start_ns,
                                   .run_key = run_key,
                                   .job = "",
                                   .program = "/usr/bin/writer",
                                   .cwd = "/tmp",
                                   .argc = 3,
                                   .argv = argv};
    test_txd_check_item(vigil_wire_add_process(w, &p, &error), &error);
    test_txd_add_message(batch, w);

    test_txd_add_metrics(batch, node_id, sequence);

    w = vigil_wire_writer_new(VIGIL_WIRE_NAMES, node_id, sequence, process);
    test_txd_check_item(vigil_wire_add_name(w, 1, "/tmp/out.dat", strlen("/tmp/out.dat"), &error),
                        &error);
    test_txd_add_message(batch, w);

    w = vigil_wire_writer_new(VIGIL_WIRE_ACTIVITIES, node_id, sequence, process);
    for (uint32_t i = 0; i < activities; i++) {
        struct vigil_activity a = {.record_type = VIGIL_RECORD_ACTIVITY,
                                   .layer = VIGIL_LAYER_POSIX,
                                   .op = VIGIL_OP_POSIX_WRITE,
                                   .file_id = 1,
                                   .seq = first_seq + i,
                                   .start_ns = now - 900000000u + i * 1000u,
                                   .end_ns = now - 900000000u + i * 1000u + 500u,
                                   .offset_bytes = (int64_t)(first_seq + i) * 4096,
                                   .bytes_asked = 4096,
                                   .result = 4096,
                                   .thread_id = 1000};
        test_txd_check_item(vigil_wire_add_activity(w, &a, &error), &error);
    }
    if (activities > 0)
        test_txd_add_message(batch, w);
    else
        vigil_wire_writer_free(w);

    test_txd_add_rollups(batch, node_id, sequence, now - 1000000000u);
    test_txd_add_node_state(batch, node_id, sequence, node_health);
    return vigil_wire_writer_finish(batch);
}

GBytes *test_batch_new_from(const struct test_batch_spec *spec)
{
    GError *error = NULL;
    static uint64_t first_start_ns;
    uint64_t now = vigil_clock_monotonic_ns();
    if (first_start_ns == 0)
        first_start_ns = now - 60000000000u;
    uint64_t node_id = spec->node, sequence = spec->sequence;
    vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, node_id, sequence, 0);

    char hostname[32];
    g_snprintf(hostname, sizeof hostname, "node-%" G_GUINT64_FORMAT, node_id);
    /* The batch's own time, and with it its record's partition, must be the
     * same in each copy of the batch: a fixed cycle per sequence. */
    uint64_t cycle_start_ns = first_start_ns + sequence * 1000000000u;
    test_txd_add_node(batch, node_id, sequence, hostname, cycle_start_ns, spec->shift_ns);

    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, node_id, sequence, 0);
    char *argv[] = {"solver", "--steps", "10", NULL};
    for (unsigned k = 0; k < spec->processes; k++) {
        char program[32];
        g_snprintf(program, sizeof program, "/bin/solver-%u", k);
        struct vigil_wire_process p = {.process_id = k + 1,
                                       .pid = (int32_t)(1000 * node_id + k),
                                       .uid = 1000,
                                       .rank = (int32_t)k,
                                       .exit_code = spec->ended ? 0 : -1,
                                       .start_ns =
                                           first_start_ns + (uint64_t)(spec->start_step_ns * k),
                                       .end_ns = spec->ended ? now - 1000 : 0,
                                       .run_key = (char *)spec->run_key,
                                       .job = (char *)spec->job,
                                       .program = program,
                                       .cwd = "/scratch",
                                       .argc = 3,
                                       .argv = argv};
        test_txd_check_item(vigil_wire_add_process(w, &p, &error), &error);
    }
    test_txd_add_message(batch, w);

    if (spec->ended && spec->report != NULL) {
        w = vigil_wire_writer_new(VIGIL_WIRE_SUMMARIES, node_id, sequence, 0);
        for (unsigned k = 0; k < spec->processes; k++) {
            struct vigil_wire_summary s = {.process_id = k + 1,
                                           .report_json = (char *)spec->report};
            test_txd_check_item(vigil_wire_add_summary(w, &s, &error), &error);
        }
        test_txd_add_message(batch, w);
    }

    if (spec->unwatched_process_id != 0) {
        w = vigil_wire_writer_new(VIGIL_WIRE_UNWATCHED_ENDS, node_id, sequence, 0);
        uint64_t latest_ns =
            spec->unwatched_latest_ns != 0 ? spec->unwatched_latest_ns : now - 1000;
        struct vigil_wire_unwatched_end e = {.process_id = spec->unwatched_process_id,
                                             .earliest_end_ns = latest_ns - 5000000000u,
                                             .latest_end_ns = latest_ns,
                                             .activities = spec->unwatched_activities,
                                             .dropped = 2,
                                             .seq_gaps = 1,
                                             .cpu_s = 0.25,
                                             .energy_j = NAN,
                                             .flags = VIGIL_WIRE_UNWATCHED_ENERGY_UNCERTAIN};
        test_txd_check_item(vigil_wire_add_unwatched_end(w, &e, &error), &error);
        test_txd_add_message(batch, w);
    }

    test_txd_add_metrics(batch, node_id, sequence);

    for (unsigned k = 0; k < spec->processes && spec->files > 0; k++) {
        w = vigil_wire_writer_new(VIGIL_WIRE_NAMES, node_id, sequence, k + 1);
        /* Backwards on odd nodes: two servers meet the new files in
         * opposite orders. */
        for (unsigned i = 0; i < spec->files; i++) {
            unsigned file = node_id % 2 == 1 ? spec->files - 1 - i : i;
            char path[64];
            g_snprintf(path, sizeof path, "/scratch/shared-%u", file);
            test_txd_check_item(vigil_wire_add_name(w, file + 1, path, strlen(path), &error),
                                &error);
        }
        test_txd_add_message(batch, w);
    }

    if (spec->activities > 0) {
        w = vigil_wire_writer_new(VIGIL_WIRE_ACTIVITIES, node_id, sequence, 1);
        for (uint32_t i = 0; i < spec->activities; i++) {
            struct vigil_activity a = {.record_type = VIGIL_RECORD_ACTIVITY,
                                       .layer = VIGIL_LAYER_POSIX,
                                       .op = VIGIL_OP_POSIX_WRITE,
                                       .file_id = spec->files > 0 ? 1 + i % spec->files : 0,
                                       .seq = spec->first_seq + i,
                                       .start_ns = cycle_start_ns + i * 1000u,
                                       .end_ns = cycle_start_ns + i * 1000u + 500u,
                                       .offset_bytes = (int64_t)(spec->first_seq + i) * 4096,
                                       .bytes_asked = 4096,
                                       .result = 4096,
                                       .thread_id = 1};
            test_txd_check_item(vigil_wire_add_activity(w, &a, &error), &error);
        }
        test_txd_add_message(batch, w);
    }

    test_txd_add_rollups(batch, node_id, sequence, cycle_start_ns);

    w = vigil_wire_writer_new(VIGIL_WIRE_SAMPLES, node_id, sequence, 0);
    struct vigil_sample sample = {
        .metric_id = 2, .t_ns = cycle_start_ns + 1000000000u, .value = 42};
    test_txd_check_item(vigil_wire_add_sample(w, &sample, &error), &error);
    test_txd_add_message(batch, w);

    test_txd_add_node_state(batch, node_id, sequence, VIGIL_HEALTH_OK);
    return vigil_wire_writer_finish(batch);
}
