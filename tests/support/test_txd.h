/* vigil — vigil-txd in a test: a private server on an ipc:// endpoint in
 * the test's folder, and a synthetic daemon that sends it batches over a
 * DEALER socket as vigild would. Include after <cmocka.h>. */
#ifndef VIGIL_TEST_TXD_H
#define VIGIL_TEST_TXD_H

#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

#include "vigil/wire.h"

struct test_txd {
    char *dir;
    char *config_path;
    char *endpoint; /* ipc://DIR/txd.sock, unless started at another */
    char *log_path;
    char *pid_path;
    pid_t pid;
    int pidfd;
};

/* Writes DIR/txd.conf ([txd] bind on the folder's socket and cycle_ms 100,
 * [warehouse] conninfo and migrate = true, then `more_config`) and starts
 * $VIGIL_TXD with it; returns once it serves (it detaches only then). */
void test_txd_start(struct test_txd *t, const char *dir, const char *conninfo,
                    const char *more_config);
/* The same, bound to `endpoint` (tcp://127.0.0.1:PORT, say) instead. */
void test_txd_start_at(struct test_txd *t, const char *dir, const char *endpoint,
                       const char *conninfo, const char *more_config);
/* Starts the same server again after a stop or a kill. */
void test_txd_restart(struct test_txd *t);
/* SIGTERM (or SIGKILL) and waits for it to be gone; returns its log so far
 * (g_free it). */
char *test_txd_stop(struct test_txd *t);
char *test_txd_kill(struct test_txd *t);
void test_txd_clear(struct test_txd *t);

/* A test's own folder and database (in test_pg_cluster, test_pg.h), and its
 * server, started by the test: cmocka setup and teardown make and remove
 * them (a server left running is killed, and so is every vigild the test
 * started and left, test_daemon_kill_all). */
struct test_txd_fixture {
    char *dir;
    char *conninfo;
    struct test_txd txd;
};
int test_txd_fixture_setup(void **state);
int test_txd_fixture_teardown(void **state);
#define TEST_WITH_TXD_FIXTURE(f)                                                                   \
    cmocka_unit_test_setup_teardown(f, test_txd_fixture_setup, test_txd_fixture_teardown)

/* A synthetic daemon: one DEALER socket. */
struct test_sender {
    void *context, *socket;
    uint64_t node_id;
};

/* Connects to `endpoint`; with `curve_server_key` (Z85, or NULL) as a CURVE
 * client with a fresh key pair, or `client_public`/`client_secret` when
 * given. */
void test_sender_open(struct test_sender *s, const char *endpoint, uint64_t node_id,
                      const char *curve_server_key, const char *client_public,
                      const char *client_secret);
/* Starts the fixture's server (test_txd_start, no more config) and
 * connects `s`, node `node_id`, to it without CURVE. */
void test_txd_start_with_sender(struct test_txd_fixture *f, struct test_sender *s,
                                uint64_t node_id);
void test_sender_close(struct test_sender *s);
void test_sender_send(struct test_sender *s, GBytes *message);
/* The next message from the server, decoded, or FALSE when none came
 * within `timeout_ms` (a generous bound for a reply that must come, or the
 * length of a window in which none may). */
gboolean test_sender_receive(struct test_sender *s, struct vigil_wire_message *out, int timeout_ms);
/* Receives until the ACK of (node, sequence), skipping system states;
 * fails the test on a refusal or when none comes within a minute. */
void test_sender_expect_ack(struct test_sender *s, uint64_t sequence);
/* Sends `message` and waits for the ACK of `sequence` (as above). */
void test_sender_send_acked(struct test_sender *s, GBytes *message, uint64_t sequence);

/* Adds the message `w` (finished and freed) to a test BATCH; fails the test
 * when the batch refuses it. */
void test_txd_add_message(vigil_wire_writer *batch, vigil_wire_writer *w);
/* Fails the test with the writer's reason when adding an item failed.
 * Takes the GError by address: C leaves the order of a call's arguments
 * open, so `check(add(…, &error), error)` could read it before the add. */
void test_txd_check_item(gboolean ok, GError *const *error);
/* The test batches' catalogue: cpu.busy_s (1, a counter) and mem.used_bytes
 * (2, a gauge); test_txd_add_metrics adds it to a batch. */
#define TEST_TXD_METRIC_COUNT 2
extern const struct vigil_metric_desc test_txd_metrics[TEST_TXD_METRIC_COUNT];
void test_txd_add_metrics(vigil_wire_writer *batch, uint64_t node_id, uint64_t sequence);

/* Parts of a batch as test_batch_new adds them. NODE: host `hostname`, a
 * cycle of 1 s from `cycle_start_ns`, the clocks' offset now plus
 * `shift_ns`. ROLLUPS: one per test metric over that cycle. STATES: the
 * node's `health`. */
void test_txd_add_node(vigil_wire_writer *batch, uint64_t node_id, uint64_t sequence,
                       const char *hostname, uint64_t cycle_start_ns, int64_t shift_ns);
void test_txd_add_rollups(vigil_wire_writer *batch, uint64_t node_id, uint64_t sequence,
                          uint64_t cycle_start_ns);
void test_txd_add_node_state(vigil_wire_writer *batch, uint64_t node_id, uint64_t sequence,
                             unsigned health);

/* A batch as vigild would send it: NODE, PROCESSES (one process, pid
 * 1000 + node, run key "test-run-NODE"), METRICS (two), NAMES (one file),
 * ACTIVITIES (`activities` of them, seq from `first_seq`), ROLLUPS (one per
 * metric), STATES (the node's, `node_health`). Times are around now. */
GBytes *test_batch_new(uint64_t node_id, uint64_t sequence, uint32_t activities, uint64_t first_seq,
                       unsigned node_health);

/* A batch from a spec: a run across nodes, its processes, files, writes,
 * roll-ups and one sample. Its cycle, and with it its partitions, is fixed
 * by its sequence (a resent copy lands where the first did); an ended
 * process ends "now". */
struct test_batch_spec {
    uint64_t node, sequence;
    int64_t shift_ns;      /* added to the node's realtime offset: an old day, say */
    const char *run_key;   /* of every process */
    const char *job;       /* "" for none */
    unsigned processes;    /* pids 1000 * node + k, k = 0.. */
    gboolean ended;        /* every process has ended (exit 0) */
    const char *report;    /* with `ended`, every process's summary (report JSON), or NULL */
    unsigned activities;   /* of the first process, writes */
    uint64_t first_seq;    /* of the first activity */
    unsigned files;        /* names /scratch/shared-K for every process */
    int64_t start_step_ns; /* between the starts of the processes */
    /* An UNWATCHED_ENDS item for this daemon process id (0: none): it
     * ended within the 5 s before its end, with these latest_end_ns (0: its
     * end) and activities. */
    uint64_t unwatched_process_id, unwatched_latest_ns, unwatched_activities;
};
GBytes *test_batch_new_from(const struct test_batch_spec *spec);

#endif
