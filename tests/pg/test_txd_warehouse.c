/* vigil-txd and the warehouse's upkeep, against a real PostgreSQL: a lock
 * held elsewhere makes a batch wait (lock timeout), never lost or doubled;
 * day partitions are made ahead and before a batch's transaction, never in
 * it; a dropped partition is made again; a run is described once per
 * batch; migration 2 keeps migration 1's rows; `vigil db prune` drops whole
 * partitions; two servers write into one warehouse at once; the loop takes
 * batches while a group waits for the database, and a stop finishes that
 * group. Each test has its own database; the cluster is the program's.
 * Waits are on the database's own views (pg_locks, pg_stat_activity) or
 * vigil-txd's log, never on time. */
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib/gstdio.h>
#include <zmq.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "vigil/clock.h"
#include "vigil/health.h"
#include "vigil/ontology.h"

#define WAIT_MS 60000

static guint64 count(const struct test_txd_fixture *f, const char *sql)
{
    return test_pg_query_u64_in(f->conninfo, sql);
}

/* ---- batches ------------------------------------------------------------------------------ */

static GBytes *simple_batch(uint64_t node, uint64_t sequence, unsigned activities, int64_t shift_ns)
{
    char run_key[32];
    g_snprintf(run_key, sizeof run_key, "run-of-node-%" G_GUINT64_FORMAT, node);
    struct test_batch_spec spec = {.node = node,
                                   .sequence = sequence,
                                   .shift_ns = shift_ns,
                                   .run_key = run_key,
                                   .job = "",
                                   .processes = 1,
                                   .activities = activities,
                                   .first_seq = (sequence - 1) * activities,
                                   .files = 1};
    return test_batch_new_from(&spec);
}

/* ---- waiting on the database and the log ------------------------------------------------------
 */

/* No reply but system states has come. */
static void assert_no_answer(struct test_sender *s)
{
    struct vigil_wire_message m;
    while (test_sender_receive(s, &m, 0)) {
        unsigned type = m.header.type;
        vigil_wire_message_clear(&m);
        if (type != VIGIL_WIRE_STATES)
            fail_msg("a %s came while the batch could not be stored", vigil_wire_type_name(type));
    }
}

static PGconn *session(const struct test_txd_fixture *f, const char *sql)
{
    PGconn *db = test_pg_connect_to(f->conninfo);
    PGresult *r = PQexec(db, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return db;
}

static void end_session(PGconn *db)
{
    PQclear(PQexec(db, "COMMIT"));
    PQfinish(db);
}

/* ---- timeouts -------------------------------------------------------------------------------- */

/* A batch sent while another session holds a lock every insert into the
 * roll-ups waits for. */
struct locked_send {
    PGconn *holder;
    struct test_sender s;
    GBytes *batch;
};

/* Starts the server with `warehouse_lines` in its [warehouse] section (and
 * a short retry_max_ms), waits for its maintenance step (today's partitions
 * made), then has another session hold the lock, sends node `node_id`'s
 * batch of `activities` and waits for the log to say `fired`. */
static void send_while_the_rollups_are_locked(struct test_txd_fixture *f, struct locked_send *l,
                                              const char *warehouse_lines, uint64_t node_id,
                                              unsigned activities, const char *fired)
{
    char *config = g_strdup_printf("retry_max_ms = 200\n[warehouse]\n%s", warehouse_lines);
    test_txd_start(&f->txd, f->dir, f->conninfo, config);
    g_free(config);
    test_pg_wait_for_count_equal_in(
        f->conninfo, "SELECT count(*) FROM vigil_schema_migrations WHERE version = 2", 1);
    l->holder = session(f, "BEGIN; LOCK TABLE statistics_rollups IN EXCLUSIVE MODE");
    test_sender_open(&l->s, f->txd.endpoint, node_id, NULL, NULL, NULL);
    l->batch = simple_batch(node_id, 1, activities, 0);
    test_sender_send(&l->s, l->batch);
    test_wait_for_file_text(f->txd.log_path, fired);
}

/* The lock released: the batch is acknowledged, its `activities` stored. */
static void unlock_and_expect_stored(struct test_txd_fixture *f, struct locked_send *l,
                                     guint64 activities)
{
    end_session(l->holder);
    test_sender_expect_ack(&l->s, 1);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), activities);
}

static void locked_send_clear(struct locked_send *l)
{
    g_bytes_unref(l->batch);
    test_sender_close(&l->s);
}

static void test_a_lock_timeout_keeps_the_batch_queued(void **state)
{
    struct test_txd_fixture *f = *state;
    struct locked_send l;
    send_while_the_rollups_are_locked(f, &l, "lock_timeout_ms = 100\n", 21, 50,
                                      "the lock timeout ([warehouse] lock_timeout_ms) fired");
    test_wait_for_file_text(f->txd.log_path, "batch 21:1 waits, unacknowledged, to be tried again");
    /* Tried again with back-off while the lock is held: never stored,
     * never acknowledged. */
    assert_no_answer(&l.s);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 0);
    unlock_and_expect_stored(f, &l, 50);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups"), 2);
    /* And a resend is recognised. */
    test_sender_send_acked(&l.s, l.batch, 1);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 50);
    locked_send_clear(&l);
}

/* A lock wait longer than the statement may run: the statement timeout
 * fires first. */
static void test_a_statement_timeout_is_named(void **state)
{
    struct test_txd_fixture *f = *state;
    struct locked_send l;
    send_while_the_rollups_are_locked(
        f, &l, "statement_timeout_ms = 100\nlock_timeout_ms = 600000\n", 22, 5,
        "the statement timeout ([warehouse] statement_timeout_ms) fired");
    assert_no_answer(&l.s);
    unlock_and_expect_stored(f, &l, 5);
    locked_send_clear(&l);
}

/* PostgreSQL and the loop at the same time: while a group waits for a
 * lock another session holds (its store's thread blocked in the
 * database), the loop still takes and decodes what comes: a second node's
 * batch, then a message it refuses at once (the ROUTER reads a
 * connection's messages in order, so the refusal says the batch before it
 * was taken too). Storing in the loop itself, nothing would be answered
 * until the lock timeout (ten minutes here). Released, the lock lets the
 * group commit and the next one follow: both batches acknowledged, stored
 * once. */
static void test_the_loop_takes_batches_while_a_group_waits(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo,
                   "[warehouse]\nstatement_timeout_ms = 600000\nlock_timeout_ms = 600000\n");
    test_pg_wait_for_count_equal_in(
        f->conninfo, "SELECT count(*) FROM vigil_schema_migrations WHERE version = 2", 1);
    PGconn *holder = session(f, "BEGIN; LOCK TABLE statistics_rollups IN EXCLUSIVE MODE");
    struct test_sender first, second;
    test_sender_open(&first, f->txd.endpoint, 31, NULL, NULL, NULL);
    test_sender_open(&second, f->txd.endpoint, 32, NULL, NULL, NULL);
    GBytes *first_batch = simple_batch(31, 1, 10, 0);
    test_sender_send(&first, first_batch);
    test_pg_wait_for_count_equal_in(f->conninfo,
                                    "SELECT count(*) FROM pg_stat_activity WHERE "
                                    "wait_event_type = 'Lock' AND datname = current_database()",
                                    1);

    GBytes *second_batch = simple_batch(32, 1, 10, 0);
    test_sender_send(&second, second_batch);
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_ACK, 32, 2, 0);
    GBytes *not_a_batch = vigil_wire_writer_finish(w);
    test_sender_send(&second, not_a_batch);
    struct vigil_wire_message m;
    unsigned type = VIGIL_WIRE_STATES;
    while (type == VIGIL_WIRE_STATES) {
        if (!test_sender_receive(&second, &m, WAIT_MS))
            fail_msg("no refusal while a group waited for the database: the loop waited too");
        type = m.header.type;
        if (type != VIGIL_WIRE_STATES) {
            assert_int_equal(type, VIGIL_WIRE_REFUSED);
            assert_int_equal(m.header.sequence, 2);
        }
        vigil_wire_message_clear(&m);
    }
    /* The group still waits: nothing answered, nothing stored. */
    assert_int_equal(count(f, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
                              "'Lock' AND datname = current_database()"),
                     1);
    assert_no_answer(&first);

    end_session(holder);
    test_sender_expect_ack(&first, 1);
    test_sender_expect_ack(&second, 1);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 20);
    g_bytes_unref(first_batch);
    g_bytes_unref(second_batch);
    g_bytes_unref(not_a_batch);
    test_sender_close(&first);
    test_sender_close(&second);
}

/* SIGTERM while a group waits for the database: vigil-txd finishes it
 * (it commits once the lock goes) before it ends, nothing else; after a
 * restart the node's resend is known as stored. */
static void test_a_stop_finishes_the_group_on_its_way(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo,
                   "[warehouse]\nstatement_timeout_ms = 600000\nlock_timeout_ms = 600000\n");
    test_pg_wait_for_count_equal_in(
        f->conninfo, "SELECT count(*) FROM vigil_schema_migrations WHERE version = 2", 1);
    PGconn *holder = session(f, "BEGIN; LOCK TABLE statistics_rollups IN EXCLUSIVE MODE");
    struct test_sender s;
    test_sender_open(&s, f->txd.endpoint, 33, NULL, NULL, NULL);
    GBytes *batch = simple_batch(33, 1, 10, 0);
    test_sender_send(&s, batch);
    test_pg_wait_for_count_equal_in(f->conninfo,
                                    "SELECT count(*) FROM pg_stat_activity WHERE "
                                    "wait_event_type = 'Lock' AND datname = current_database()",
                                    1);
    assert_int_equal(kill(f->txd.pid, SIGTERM), 0);
    test_wait_for_file_text(f->txd.log_path, "stopping (signal 15)");
    end_session(holder);
    struct pollfd ended = {.fd = f->txd.pidfd, .events = POLLIN};
    if (poll(&ended, 1, WAIT_MS) != 1)
        fail_msg("vigil-txd did not end once its group could commit");
    close(f->txd.pidfd);
    f->txd.pid = 0;
    f->txd.pidfd = -1;
    char *log = NULL;
    assert_true(g_file_get_contents(f->txd.log_path, &log, NULL, NULL));
    test_assert_contains(log, "stored 1 batches (");
    assert_null(strstr(log, "not stored"));
    g_free(log);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 1);

    test_txd_restart(&f->txd);
    test_sender_send_acked(&s, batch, 1);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 10);
    g_bytes_unref(batch);
    test_sender_close(&s);
}

/* A Unix socket that listens and never answers. */
static int listen_unix(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    g_strlcpy(address.sun_path, path, sizeof address.sun_path);
    assert_int_equal(bind(fd, (const struct sockaddr *)&address, sizeof address), 0);
    assert_int_equal(listen(fd, 8), 0);
    return fd;
}

static void test_a_connect_timeout_is_named(void **state)
{
    struct test_txd_fixture *f = *state;
    /* A listening socket that never answers: libpq waits for the server's
     * first reply until connect_timeout_s. */
    char *socket_dir = g_build_filename(f->dir, "silent", NULL);
    g_mkdir(socket_dir, 0700);
    char *socket_path = g_build_filename(socket_dir, ".s.PGSQL.5432", NULL);
    int fd = listen_unix(socket_path);
    char *config = g_strdup_printf("[warehouse]\nconninfo = host=%s port=5432 dbname=x\n"
                                   "connect_timeout_s = 2\n",
                                   socket_dir);
    char *path = g_build_filename(f->dir, "silent.conf", NULL);
    assert_true(g_file_set_contents(path, config, -1, NULL));
    struct test_run run =
        test_run_vigil(f->dir, "db", (const char *[]){"version", "--config", path, NULL});
    test_assert_err(&run, 1, "vigil db version against a server that never answers",
                    "the connect timeout, [warehouse] connect_timeout_s, fired", NULL);
    test_run_clear(&run);
    /* vigil-txd serves all the same, keeping batches until the database
     * answers, and says why it cannot store them. */
    char *conninfo = g_strdup_printf("host=%s port=5432 dbname=x", socket_dir);
    test_txd_start(&f->txd, f->dir, conninfo, "[warehouse]\nconnect_timeout_s = 2\n");
    test_wait_for_file_text(f->txd.log_path, "the warehouse is unavailable at start");
    test_wait_for_file_text(f->txd.log_path,
                            "the connect timeout, [warehouse] connect_timeout_s, fired");
    g_free(test_txd_stop(&f->txd));
    g_free(conninfo);
    close(fd);
    g_free(path);
    g_free(config);
    g_free(socket_path);
    g_free(socket_dir);
}

/* ---- partitions ----------------------------------------------------------------------------- */

#define DAY_NS G_GINT64_CONSTANT(86400000000000)

static void test_ingest_never_takes_an_access_exclusive_lock(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo,
                   "retry_max_ms = 200\n[warehouse]\n"
                   "lock_timeout_ms = 600000\n");
    /* The maintenance step at start made yesterday .. today + 3 for each
     * table. */
    test_pg_wait_for_count_equal_in(
        f->conninfo,
        "SELECT count(*) FROM pg_class WHERE relname = 'activities_' || "
        "to_char((now() AT TIME ZONE 'UTC')::date + 3, 'YYYYMMDD')",
        1);
    /* ACCESS SHARE conflicts with ACCESS EXCLUSIVE only: while it is held,
     * a batch is stored only if its transaction takes no such lock. */
    PGconn *holder =
        session(f, "BEGIN; LOCK TABLE activities, statistics_rollups, window_statistics, "
                   "reasoner_states, ingested_batches IN ACCESS SHARE MODE");
    struct test_sender s;
    test_sender_open(&s, f->txd.endpoint, 23, NULL, NULL, NULL);
    GBytes *today = simple_batch(23, 1, 20, 0);
    test_sender_send_acked(&s, today, 1);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 20);

    /* A batch from ten days ago (an old spool replayed): its days have no
     * partitions. Making one waits for our lock, and it is waited for
     * outside any ingest transaction: the backend waiting for ACCESS
     * EXCLUSIVE runs vigil_day_partition and holds no lock an insert
     * takes. */
    GBytes *old = simple_batch(23, 2, 20, -10 * DAY_NS);
    test_sender_send(&s, old);
    test_pg_wait_for_count_equal_in(
        f->conninfo,
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE "
        "NOT l.granted AND l.mode = 'AccessExclusiveLock' AND l.relation IN "
        "('activities'::regclass, 'statistics_rollup_arrays'::regclass, "
        "'window_statistics_arrays'::regclass, 'reasoner_states'::regclass, "
        "'ingested_batches'::regclass) AND "
        "a.query LIKE 'SELECT vigil_day_partition%'",
        1);
    assert_int_equal(count(f, "SELECT count(*) FROM pg_locks l JOIN pg_locks w ON w.pid = l.pid "
                              "WHERE NOT w.granted AND w.mode = 'AccessExclusiveLock' AND "
                              "l.mode = 'RowExclusiveLock' AND l.relation IN "
                              "('activities'::regclass, 'statistics_rollup_arrays'::regclass, "
                              "'window_statistics_arrays'::regclass, 'reasoner_states'::regclass, "
                              "'ingested_batches'::regclass)"),
                     0);
    assert_no_answer(&s);
    end_session(holder);
    test_sender_expect_ack(&s, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM activities WHERE start_time < now() - "
                              "interval '9 days'"),
                     20);
    assert_int_equal(count(f,
                           "SELECT count(*) FROM pg_class WHERE relname IN "
                           "('activities_' || to_char((now() AT TIME ZONE 'UTC')::date - "
                           "10, 'YYYYMMDD'), 'statistics_rollup_arrays_' || to_char((now() AT TIME "
                           "ZONE 'UTC')::date - 10, 'YYYYMMDD'))"),
                     2);
    g_bytes_unref(today);
    g_bytes_unref(old);
    test_sender_close(&s);
}

static void test_a_dropped_partition_is_made_again(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, "retry_max_ms = 200\n");
    struct test_sender s;
    test_sender_open(&s, f->txd.endpoint, 24, NULL, NULL, NULL);
    GBytes *first = simple_batch(24, 1, 10, -5 * DAY_NS);
    test_sender_send_acked(&s, first, 1);
    /* An admin drops the day the server has just written into (and has
     * cached): the next batch for it is stored all the same, not refused. */
    test_pg_exec_in(f->conninfo, "DO $$ BEGIN EXECUTE format('DROP TABLE %I', 'activities_' || "
                                 "to_char((now() AT TIME ZONE 'UTC')::date - 5, 'YYYYMMDD')); "
                                 "END $$");
    GBytes *second = simple_batch(24, 2, 10, -5 * DAY_NS);
    test_sender_send_acked(&s, second, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 10);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 2);
    char *log = test_txd_stop(&f->txd);
    test_assert_contains(log, "the partitions are checked again");
    g_free(log);
    g_bytes_unref(first);
    g_bytes_unref(second);
    test_sender_close(&s);
}

/* ---- runs -------------------------------------------------------------------------------------
 */

static void test_a_run_is_described_once_per_batch(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 25);
    /* Started means migrated. */
    /* Every UPDATE of a run, counted by the database itself. */
    test_pg_exec_in(f->conninfo,
                    "CREATE TABLE run_updates (run_key text); "
                    "CREATE FUNCTION count_run_update() RETURNS trigger LANGUAGE plpgsql AS $$ "
                    "BEGIN INSERT INTO run_updates VALUES (NEW.run_key); RETURN NEW; END $$; "
                    "CREATE TRIGGER counted AFTER UPDATE ON runs FOR EACH ROW "
                    "EXECUTE FUNCTION count_run_update()");
    /* 64 ranks in one batch, started in reverse order of their ranks. */
    struct test_batch_spec spec = {.node = 25,
                                   .sequence = 2,
                                   .run_key = "mpi-64",
                                   .job = "4711",
                                   .processes = 64,
                                   .files = 0,
                                   .start_step_ns = -1000};
    GBytes *started = test_batch_new_from(&spec);
    test_sender_send_acked(&s, started, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM run_updates WHERE run_key = 'mpi-64'"), 1);
    /* The same processes again, unchanged: the run is not touched. */
    spec.sequence = 3;
    GBytes *again = test_batch_new_from(&spec);
    test_sender_send_acked(&s, again, 3);
    assert_int_equal(count(f, "SELECT count(*) FROM run_updates WHERE run_key = 'mpi-64'"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM runs WHERE run_key = 'mpi-64' AND "
                              "end_time IS NULL AND program = '/bin/solver-63' AND job_id IS "
                              "NOT NULL"),
                     1);
    /* All end: once more, and the run ends, with its first process's
     * status. */
    spec.sequence = 4;
    spec.ended = TRUE;
    GBytes *ended = test_batch_new_from(&spec);
    test_sender_send_acked(&s, ended, 4);
    assert_int_equal(count(f, "SELECT count(*) FROM run_updates WHERE run_key = 'mpi-64'"), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM runs WHERE run_key = 'mpi-64' AND "
                              "end_time IS NOT NULL AND exit_status = 0"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM processes p JOIN runs r USING (run_id) "
                              "WHERE r.run_key = 'mpi-64'"),
                     64);
    g_bytes_unref(started);
    g_bytes_unref(again);
    g_bytes_unref(ended);
    test_sender_close(&s);
}

/* The next reply is a refusal of `sequence` whose reason holds `reason_part`. */
static void expect_refusal(struct test_sender *s, uint64_t sequence, const char *reason_part)
{
    struct vigil_wire_message m;
    assert_true(test_sender_receive(s, &m, WAIT_MS));
    while (m.header.type == VIGIL_WIRE_STATES) {
        vigil_wire_message_clear(&m);
        assert_true(test_sender_receive(s, &m, WAIT_MS));
    }
    assert_int_equal(m.header.type, VIGIL_WIRE_REFUSED);
    assert_int_equal(m.header.sequence, sequence);
    test_assert_contains(m.refusals[0].reason, reason_part);
    vigil_wire_message_clear(&m);
}

/* A process that ended while no vigild ran (schema 0012): its end is a
 * bound, and so is its run's when it is the run's last; what vigild counted
 * of it is kept. An unwatched end of a process the batch does not describe,
 * or whose latest is not the process's end, is refused. */
static void test_an_unwatched_end_is_stored_as_a_bound(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 26);
    struct test_batch_spec spec = {.node = 26,
                                   .sequence = 2,
                                   .run_key = "unwatched",
                                   .job = "",
                                   .processes = 1,
                                   .ended = TRUE,
                                   .unwatched_process_id = 1,
                                   .unwatched_activities = 300};
    GBytes *ended = test_batch_new_from(&spec);
    test_sender_send_acked(&s, ended, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM processes WHERE pid = 26000 AND "
                              "end_time - end_time_earliest = interval '5 s'"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM runs WHERE run_key = 'unwatched' AND "
                              "end_time - end_time_earliest = interval '5 s'"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM process_unwatched_ends JOIN processes USING "
                              "(process_id) WHERE pid = 26000 AND activities = 300 AND dropped = 2 "
                              "AND seq_gaps = 1 AND cpu_s = 0.25 AND energy_j IS NULL AND "
                              "energy_uncertain AND NOT energy_estimated AND NOT ring_read"),
                     1);
    /* Sent again with every batch that describes it: the same rows. */
    spec.sequence = 3;
    GBytes *again = test_batch_new_from(&spec);
    test_sender_send_acked(&s, again, 3);
    assert_int_equal(count(f, "SELECT count(*) FROM process_unwatched_ends"), 1);

    spec.sequence = 4;
    spec.unwatched_process_id = 9;
    GBytes *undescribed = test_batch_new_from(&spec);
    test_sender_send(&s, undescribed);
    expect_refusal(&s, 4,
                   "an unwatched end refers to process 9, which the batch does not "
                   "describe");
    spec.sequence = 5;
    spec.unwatched_process_id = 1;
    spec.unwatched_latest_ns = vigil_clock_monotonic_ns() + 1000000000u;
    GBytes *other_end = test_batch_new_from(&spec);
    test_sender_send(&s, other_end);
    expect_refusal(&s, 5, "its unwatched end's latest");
    g_bytes_unref(ended);
    g_bytes_unref(again);
    g_bytes_unref(undescribed);
    g_bytes_unref(other_end);
    test_sender_close(&s);
}

/* ---- migration 2 on migration 1's rows
 * ------------------------------------------------------------ */

static const char digest_sql[] =
    "SELECT md5(string_agg(x, '|' ORDER BY x)) FROM ("
    "SELECT format('r %s %s %s %s', node_id, metric_id, start_time, mean) AS x "
    "FROM statistics_rollups UNION ALL "
    "SELECT format('w %s %s %s %s', node_id, metric_id, time, value) FROM window_statistics "
    "UNION ALL SELECT format('b %s %s %s %s', node_id, sequence, messages, rows) "
    "FROM ingested_batches UNION ALL SELECT format('a %s %s', process_id, seq) FROM activities "
    "UNION ALL SELECT format('s %s', run_key) FROM run_statistics JOIN runs USING (run_id)) t";

static void test_migration_2_keeps_migration_1s_rows(void **state)
{
    struct test_txd_fixture *f = *state;
    /* A warehouse at version 1, as the vigil before this one left it. */
    char *path = g_build_filename(test_env_or_fail("VIGIL_SCHEMA_DIR"), "0001_warehouse.sql", NULL);
    char *sql = NULL;
    gsize length = 0;
    assert_true(g_file_get_contents(path, &sql, &length, NULL));
    char *sha = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)sql, length);
    test_pg_exec_in(f->conninfo, sql);
    char *record = g_strdup_printf(
        "CREATE TABLE vigil_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
        "sha256 text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now()); "
        "INSERT INTO vigil_schema_migrations (version, name, sha256) VALUES (1, "
        "'0001_warehouse', '%s')",
        sha);
    test_pg_exec_in(f->conninfo, record);
    test_pg_exec_in(
        f->conninfo,
        "INSERT INTO nodes (node_id, hostname) VALUES (26, 'node-26'); "
        "INSERT INTO runs (run_key, program, argv, uid, start_time) VALUES ('old', 'x', '{x}', "
        "0, now() - interval '3 days'); "
        "INSERT INTO processes (run_id, node_id, pid, uid, program, argv, cwd, start_time, "
        "start_monotonic_ns) SELECT run_id, 26, 1, 0, 'x', '{x}', '/', now() - interval '3 days', "
        "1 FROM runs; "
        "INSERT INTO metrics (name, unit, kind, source, origin) VALUES ('m', 's', 'gauge', 's', "
        "'measured'); "
        "INSERT INTO statistics_rollups SELECT 26, 1, now() - i * interval '1 hour', now() - i * "
        "interval '1 hour' + interval '1 s', 10, 1, i, 3, NULL, false FROM generate_series(1, "
        "100) i; "
        "INSERT INTO window_statistics SELECT 26, 1, now() - i * interval '1 min', i, i, false "
        "FROM generate_series(1, 50) i; "
        "SELECT vigil_activity_partition((now() AT TIME ZONE 'UTC')::date - 1); "
        "INSERT INTO activities (process_id, seq, layer, operation, errno, start_time, start_ns, "
        "duration_ns, thread, flags) SELECT 1, i, 1, 6, 0, (now() AT TIME ZONE 'UTC')::date - 1 "
        "+ time '12:00', i, 1, 1, 0 FROM generate_series(1, 30) i; "
        "INSERT INTO ingested_batches (node_id, sequence, messages, rows) SELECT 26, i, 1, 1 "
        "FROM generate_series(1, 40) i");
    char *before = test_pg_query_text_in(f->conninfo, digest_sql);

    /* vigil-txd, told to migrate, applies version 2 (and those after it)
     * as it starts. */
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    assert_int_equal(count(f, "SELECT count(*) FROM vigil_schema_migrations WHERE version = 2"), 1);
    char *after = test_pg_query_text_in(f->conninfo, digest_sql);
    assert_string_equal(before, after);
    /* The old rows are each table's first partition, not copies; the
     * statistics' then moved into migration 13's arrays, one row per
     * node and window (one metric here: as many rows). */
    assert_int_equal(count(f, "SELECT count(*) FROM pg_inherits WHERE inhrelid IN "
                              "('ingested_batches_0001'::regclass)"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollup_arrays"), 100);
    assert_int_equal(count(f, "SELECT count(*) FROM window_statistics_arrays"), 50);

    /* A batch stored before the upgrade and sent again after it (its
     * acknowledgement was lost) is recognised: not stored twice. */
    struct test_sender s;
    test_sender_open(&s, f->txd.endpoint, 26, NULL, NULL, NULL);
    GBytes *resent = simple_batch(26, 40, 7, 0);
    test_sender_send_acked(&s, resent, 40);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 30);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 40);
    GBytes *next = simple_batch(26, 41, 7, 0);
    test_sender_send_acked(&s, next, 41);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 37);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 41);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups"), 102);
    g_bytes_unref(resent);
    g_bytes_unref(next);
    test_sender_close(&s);
    g_free(before);
    g_free(after);
    g_free(record);
    g_free(sha);
    g_free(sql);
    g_free(path);
}

/* ---- vigil db maintain and prune ------------------------------------------------------------- */

static struct test_run vigil_db(const struct test_txd_fixture *f, const char *config_text,
                                const char *action, const char *option)
{
    char *path = g_build_filename(f->dir, "db.conf", NULL);
    char *config = g_strdup_printf("[warehouse]\nconninfo = %s\n%s", f->conninfo,
                                   config_text != NULL ? config_text : "");
    assert_true(g_file_set_contents(path, config, -1, NULL));
    struct test_run run =
        test_run_vigil(f->dir, "db", (const char *[]){action, "--config", path, option, NULL});
    g_free(config);
    g_free(path);
    return run;
}

/* ---- roll-up levels (migration 15) ----------------------------------------------------- */

/* The slots of every block against the 1 s roll-ups aggregated from the
 * view (another path than the build's): the slots that differ (beyond
 * floating rounding: sums in another order), and the empty slots (samples
 * 0) that hold anything but NULL. */
static const char levels_differ_sql[] =
    "WITH lv AS (SELECT b.level_s, b.node_id, b.metric_id,"
    "  b.block_start + (u.k - 1) * b.level_s * interval '1 s' AS t, u.samples, u.seconds, u.min,"
    "  u.mean, u.max, u.delta, u.rate_min, u.rate_max FROM statistics_level_blocks b,"
    "  unnest(b.samples, b.seconds, b.min, b.mean, b.max, b.delta, b.rate_min, b.rate_max)"
    "  WITH ORDINALITY AS u (samples, seconds, min, mean, max, delta, rate_min, rate_max, k)"
    "  WHERE u.samples > 0),"
    " r AS (SELECT l.level_s, r.node_id, r.metric_id,"
    "  to_timestamp(floor(date_part('epoch', r.start_time) / l.level_s) * l.level_s) AS t,"
    "  sum(r.samples) AS samples, sum(date_part('epoch', r.end_time - r.start_time)) AS seconds,"
    "  min(r.min) AS min, sum(r.mean * r.samples) / sum(r.samples) AS mean, max(r.max) AS max,"
    "  sum(r.delta) AS delta,"
    "  min(r.delta / date_part('epoch', r.end_time - r.start_time)) AS rate_min,"
    "  max(r.delta / date_part('epoch', r.end_time - r.start_time)) AS rate_max"
    "  FROM statistics_rollups r CROSS JOIN statistics_levels l GROUP BY 1, 2, 3, 4)"
    " SELECT (SELECT count(*) FROM lv FULL JOIN r USING (level_s, node_id, metric_id, t)"
    "  WHERE lv.samples IS DISTINCT FROM r.samples OR EXISTS (SELECT 1 FROM (VALUES"
    "   (lv.seconds, r.seconds), (lv.min, r.min), (lv.mean, r.mean), (lv.max, r.max),"
    "   (lv.delta, r.delta), (lv.rate_min, r.rate_min), (lv.rate_max, r.rate_max)) p (a, b)"
    "   WHERE NOT coalesce((a IS NULL AND b IS NULL)"
    "                      OR abs(a - b) <= 1e-12 * greatest(abs(a), abs(b), 1), false)))"
    " + (SELECT count(*) FROM statistics_level_blocks b, unnest(b.samples, b.seconds, b.min,"
    "  b.mean, b.max, b.delta, b.rate_min, b.rate_max) AS u (samples, seconds, min, mean, max,"
    "  delta, rate_min, rate_max) WHERE u.samples = 0 AND num_nonnulls(u.seconds, u.min, u.mean,"
    "  u.max, u.delta, u.rate_min, u.rate_max) > 0)";

/* `vigil db maintain` builds the levels; every slot is the roll-ups that
 * start in it aggregated (a gauge and a counter, samples and lengths that
 * vary, seconds without a roll-up), and bad rows are named. */
static void test_levels_equal_the_rollups_aggregated(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_run run = vigil_db(f, NULL, "migrate", NULL);
    test_assert_status(&run, 0, "vigil db migrate");
    test_run_clear(&run);
    /* Two days ago, 40 minutes (a whole 60 s block and part of another,
     * four 5 s blocks), two nodes; a gap every 17 s, a 2 s roll-up every
     * 11 s, samples 8 to 10. */
    test_pg_exec_in(
        f->conninfo,
        "SELECT vigil_day_partition('statistics_rollups', (now() AT TIME ZONE 'UTC')::date - 2);"
        "INSERT INTO metrics (metric_id, name, unit, kind, source, origin) VALUES"
        " (1, 'mem.used_bytes', 'bytes', 'gauge', 'meminfo', 'measured'),"
        " (2, 'node.energy_j', 'J', 'counter', 'estimate', 'estimated');"
        "INSERT INTO statistics_rollups SELECT n, m, t, t + CASE WHEN s % 11 = 0 THEN interval '2 "
        "s'"
        "  ELSE interval '1 s' END, 8 + s % 3, (s * 7 % 13) * 1.5, (s * 7 % 13) * 1.5 + s % 5,"
        "  (s * 7 % 13) * 1.5 + 10 + s % 4, CASE WHEN m = 2 THEN (s * 31 % 97) * 0.1 END, false"
        " FROM generate_series(1, 2) n, generate_series(1, 2) m, generate_series(0, 2399) s,"
        "  LATERAL (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'"
        "   - interval '2 days' + interval '10 hours 5 minutes' + s * interval '1 s' + n"
        "   * interval '0.25 s' AS t) x WHERE s % 17 <> 3");
    run = vigil_db(f, NULL, "maintain", NULL);
    test_assert_out(&run, 0, "vigil db maintain", "the levels are up to date", NULL);
    test_run_clear(&run);
    /* 2 nodes × 2 metrics: 5 s blocks of 10 min at 10:00..10:40, 60 s ones of 1 h. */
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_level_blocks WHERE level_s = 5"),
                     2 * 2 * 5);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_level_blocks WHERE level_s = 60"),
                     2 * 2 * 1);
    assert_int_equal(count(f, levels_differ_sql), 0);
    /* Built once: a second pass writes nothing and stays caught up. */
    run = vigil_db(f, NULL, "maintain", NULL);
    test_assert_out(&run, 0, "vigil db maintain, again", "built 0 roll-up level blocks", NULL);
    test_run_clear(&run);
    /* The check itself sees a wrong slot. */
    test_pg_exec_in(f->conninfo, "UPDATE statistics_level_blocks SET max[3] = max[3] + 1"
                                 " WHERE level_s = 5 AND node_id = 1 AND metric_id = 1"
                                 " AND samples[3] > 0");
    assert_true(count(f, levels_differ_sql) > 0);
}

/* A batch stored after its block was built (a spool replayed late) marks
 * the block stale in its own transaction, and vigil-txd's next pass builds
 * it again with the batch in it. */
static void test_a_late_batch_rebuilds_its_block(void **state)
{
    struct test_txd_fixture *f = *state;
    /* Built up to now (nothing to build, the database is empty). */
    struct test_run run = vigil_db(f, NULL, "migrate", NULL);
    test_assert_status(&run, 0, "vigil db migrate");
    test_run_clear(&run);
    run = vigil_db(f, NULL, "maintain", NULL);
    test_assert_out(&run, 0, "vigil db maintain", "the levels are up to date", NULL);
    test_run_clear(&run);
    test_txd_start(&f->txd, f->dir, f->conninfo, "retry_max_ms = 200\nlevels_interval_s = 1\n");
    struct test_sender s;
    test_sender_open(&s, f->txd.endpoint, 5, NULL, NULL, NULL);
    /* Two cycles of one node three hours ago, a second apart, in one 60 s
     * slot; the cycle starts on a whole second of the node's clock. */
    struct vigil_clock_offset offset;
    vigil_clock_offset_measure(&offset);
    int64_t shift_ns = -G_GINT64_CONSTANT(3) * 3600 * 1000000000;
    int64_t now_ns = (int64_t)vigil_clock_monotonic_ns();
    int64_t real_ns = now_ns + offset.realtime_minus_monotonic_ns + shift_ns;
    int64_t minute_ns = G_GINT64_CONSTANT(60000000000);
    uint64_t cycle_ns = (uint64_t)(now_ns - (real_ns % minute_ns) - minute_ns + 10000000000);
    GBytes *batches[2];
    for (unsigned i = 0; i < 2; i++) {
        vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, 5, i + 1, 0);
        uint64_t start_ns = cycle_ns + i * 1000000000u;
        test_txd_add_node(batch, 5, i + 1, "late-node", start_ns, shift_ns);
        test_txd_add_metrics(batch, 5, i + 1);
        test_txd_add_rollups(batch, 5, i + 1, start_ns);
        batches[i] = vigil_wire_writer_finish(batch);
    }
    test_sender_send_acked(&s, batches[0], 1);
    /* Its blocks were built (empty) before it came: marked, and built
     * again with its counter and gauge. */
    test_pg_wait_for_count_equal_in(f->conninfo,
                                    "SELECT count(*) FROM statistics_level_blocks b"
                                    " WHERE b.node_id = 5"
                                    " AND (SELECT sum(x) FROM unnest(b.samples) x) = 10",
                                    2 * 2);
    test_sender_send_acked(&s, batches[1], 2);
    /* Marked, then built again with both (samples 10 each). */
    test_pg_wait_for_count_equal_in(
        f->conninfo,
        "SELECT count(*) FROM statistics_level_blocks b WHERE b.node_id = 5"
        " AND (SELECT sum(x) FROM unnest(b.samples) x) = 20",
        2 * 2);
    assert_int_equal(count(f, levels_differ_sql), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_level_stale"), 0);
    g_bytes_unref(batches[0]);
    g_bytes_unref(batches[1]);
    test_sender_close(&s);
}

/* vigil-txd stopped while a levels pass waits on the server (another
 * session holds the levels' rows): the pass is cancelled there, not left
 * waiting after vigil-txd is gone, and vigil-txd stops at once. */
static void test_stopping_cancels_a_levels_pass(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_run run = vigil_db(f, NULL, "migrate", NULL);
    test_assert_status(&run, 0, "vigil db migrate");
    test_run_clear(&run);
    PGconn *holder = session(f, "BEGIN; UPDATE statistics_levels SET block_slots = block_slots");
    test_txd_start(&f->txd, f->dir, f->conninfo, "levels_interval_s = 1\n");
    static const char waiting_pass[] =
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%vigil_levels_plan%'"
        " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()";
    test_pg_wait_for_count_equal_in(f->conninfo, waiting_pass, 1);
    char *log = test_txd_stop(&f->txd);
    g_free(log);
    /* Gone with vigil-txd, while the rows are still held. */
    test_pg_wait_for_count_equal_in(
        f->conninfo,
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%vigil_levels_plan%'"
        " AND pid <> pg_backend_pid()",
        0);
    end_session(holder);
}

static void test_prune_drops_whole_partitions(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_run run = vigil_db(f, NULL, "prune", NULL);
    test_assert_err(&run, 1, "vigil db prune on an empty database", "run 'vigil db migrate'", NULL);
    test_run_clear(&run);
    run = vigil_db(f, NULL, "migrate", NULL);
    test_assert_status(&run, 0, "vigil db migrate");
    test_run_clear(&run);
    run = vigil_db(f, "partitions_ahead_days = 2\n", "maintain", NULL);
    test_assert_out(&run, 0, "vigil db maintain", "made 24 day partitions",
                    "built 0 roll-up level blocks; the levels are up to date", NULL);
    test_run_clear(&run);
    /* Rows 40 days old, 10 days old and of today. */
    test_pg_exec_in(
        f->conninfo,
        "SELECT vigil_day_partition(t, (now() AT TIME ZONE 'UTC')::date - d) FROM "
        "unnest(ARRAY['activities', 'statistics_rollups', 'window_statistics', "
        "'reasoner_states', 'ingested_batches']) t, unnest(ARRAY[40, 10]) d; "
        "INSERT INTO activities (process_id, seq, layer, operation, errno, start_time, start_ns, "
        "duration_ns, thread, flags) SELECT 1, d, 1, 6, 0, now() - d * interval '1 day', d, 1, 1, "
        "0 FROM unnest(ARRAY[40, 10, 0]) d; "
        "INSERT INTO statistics_rollups SELECT 1, 1, now() - d * interval '1 day', now() - d * "
        "interval '1 day', 1, 1, 1, 1, NULL, false FROM unnest(ARRAY[40, 10, 0]) d; "
        "INSERT INTO ingested_batches (node_id, sequence, batch_time, messages, rows) SELECT 1, d, "
        "now() - d * interval '1 day', 1, 1 FROM unnest(ARRAY[40, 10, 0]) d");
    const char *retention = "retain_activities_days = 30\nretain_statistics_rollups_days = 5\n"
                            "retain_window_statistics_days = 5\n"
                            "retain_reasoner_states_days = 5\n"
                            "retain_statistics_levels_days = 60\n"
                            "retain_ingested_batches_days = 1\n";
    run = vigil_db(f, retention, "prune", "--dry-run");
    test_assert_out(&run, 0, "vigil db prune --dry-run", "would drop activities_",
                    "ingested_batches: kept 30 days, not 1 days", "would drop 9 partitions", NULL);
    test_run_clear(&run);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 3);
    run = vigil_db(f, retention, "prune", NULL);
    test_assert_out(&run, 0, "vigil db prune", "dropped 9 partitions", "activity_seconds_", NULL);
    test_run_clear(&run);
    /* Activities keep 30 days, roll-ups, window statistics and states 5,
     * the batches' records as long as the longest (30): 40 days ago is gone
     * from each, 10 only from the roll-ups, window statistics and states.
     * The levels' 60 days do not count for the records: the levels are
     * made from the roll-ups, not from batches.
     * Activities' per-second counts go with activities' days. */
    assert_int_equal(count(f, "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = "
                              "i.inhrelid, vigil_partition_bounds(c.oid::regclass) b WHERE "
                              "i.inhparent = 'activity_seconds'::regclass AND b.upper_bound < "
                              "now() - interval '30 days'"),
                     0);
    assert_int_equal(count(f, "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = "
                              "i.inhrelid, vigil_partition_bounds(c.oid::regclass) b WHERE "
                              "i.inhparent = 'activity_seconds'::regclass AND b.upper_bound < "
                              "now() - interval '5 days'"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 2);
    run = vigil_db(f, retention, "prune", NULL);
    test_assert_out(&run, 0, "vigil db prune, again", "nothing to drop", NULL);
    test_run_clear(&run);
    /* Bad input is named. */
    run = vigil_db(f, "retain_activities_days = -1\n", "prune", NULL);
    test_assert_err(&run, 1, "vigil db prune with a negative retention", "retain_activities_days",
                    NULL);
    test_run_clear(&run);
    run = vigil_db(f, NULL, "maintain", "--dry-run");
    test_assert_err(&run, 2, "vigil db maintain --dry-run", "--dry-run is prune's", NULL);
    test_run_clear(&run);
}

/* ---- two servers, one warehouse ----------------------------------------------------------------
 */

#define SHARED_NODES      3 /* per server */
#define SHARED_BATCHES    15
#define SHARED_ACTIVITIES 100
#define SHARED_FILES      5
#define SHARED_PROCESSES  4 /* per node */

static void test_two_servers_share_one_warehouse(void **state)
{
    struct test_txd_fixture *f = *state;
    char *dir_b = g_build_filename(f->dir, "b", NULL);
    g_mkdir(dir_b, 0700);
    test_txd_start(&f->txd, f->dir, f->conninfo, "retry_max_ms = 200\n");
    struct test_txd second;
    test_txd_start(&second, dir_b, f->conninfo, "retry_max_ms = 200\n");
    /* Three nodes on each server, and one more whose batches go to both
     * in turn (a node that fails over and back): its node and process rows
     * are written by both at once. */
    enum { SENDERS = 2 * SHARED_NODES + 2, MOVING = 40 + 2 * SHARED_NODES };
    struct test_sender senders[SENDERS];
    for (unsigned n = 0; n < SENDERS; n++) {
        gboolean on_a = n < SHARED_NODES || n == 2 * SHARED_NODES;
        test_sender_open(&senders[n], on_a ? f->txd.endpoint : second.endpoint,
                         n < 2 * SHARED_NODES ? 40 + n : MOVING, NULL, NULL, NULL);
    }
    /* Every node runs ranks of one MPI run of one job, writes the same
     * files and has the same metrics; the last batch ends its ranks. All
     * batches go at once, to both servers. */
    GPtrArray *batches = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    for (uint64_t seq = 1; seq <= SHARED_BATCHES; seq++)
        for (unsigned n = 0; n <= 2 * SHARED_NODES; n++) {
            struct test_batch_spec spec = {.node = 40 + n,
                                           .sequence = seq,
                                           .run_key = "shared-run",
                                           .job = "9001",
                                           .processes = SHARED_PROCESSES,
                                           .ended = seq == SHARED_BATCHES,
                                           .activities = SHARED_ACTIVITIES,
                                           .first_seq = (seq - 1) * SHARED_ACTIVITIES,
                                           .files = SHARED_FILES,
                                           .start_step_ns = 1000};
            GBytes *b = test_batch_new_from(&spec);
            /* The moving node's odd batches to the first server, even ones
             * to the second. */
            unsigned to = n < 2 * SHARED_NODES ? n : n + (seq % 2 == 0 ? 1 : 0);
            test_sender_send(&senders[to], b);
            g_ptr_array_add(batches, b);
        }
    for (unsigned n = 0; n < 2 * SHARED_NODES; n++)
        for (uint64_t seq = 1; seq <= SHARED_BATCHES; seq++)
            test_sender_expect_ack(&senders[n], seq);
    for (uint64_t seq = 1; seq <= SHARED_BATCHES; seq++)
        test_sender_expect_ack(&senders[2 * SHARED_NODES + (seq % 2 == 0 ? 1 : 0)], seq);

    const guint64 nodes = 2 * SHARED_NODES + 1;
    assert_int_equal(count(f, "SELECT count(*) FROM nodes"), nodes);
    assert_int_equal(count(f, "SELECT count(*) FROM jobs"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM files"), SHARED_FILES);
    assert_int_equal(count(f, "SELECT count(*) FROM metrics"), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM processes"), nodes * SHARED_PROCESSES);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), nodes * SHARED_BATCHES);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"),
                     nodes * SHARED_BATCHES * SHARED_ACTIVITIES);
    assert_int_equal(count(f, "SELECT count(*) FROM (SELECT process_id, seq FROM activities "
                              "GROUP BY 1, 2 HAVING count(*) > 1) AS doubled"),
                     0);
    assert_int_equal(count(f, "SELECT count(DISTINCT file_id) FROM activities"), SHARED_FILES);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups"),
                     nodes * SHARED_BATCHES * 2);
    assert_int_equal(count(f, "SELECT count(*) FROM window_statistics"), nodes * SHARED_BATCHES);
    /* The run: its ranks on every node, all ended, so it has ended; its
     * first process is the first rank of one of the nodes (all started at
     * the same instant of the same clock), its job the shared one. */
    assert_int_equal(count(f, "SELECT count(*) FROM runs r JOIN jobs j USING (job_id) WHERE "
                              "j.scheduler_job_id = '9001' AND r.end_time IS NOT NULL AND "
                              "r.exit_status = 0 AND r.program = '/bin/solver-0'"),
                     1);
    assert_int_equal(count(f, "SELECT processes FROM run_overview"), nodes * SHARED_PROCESSES);
    char *log_a = test_txd_stop(&f->txd);
    char *log_b = test_txd_stop(&second);
    for (unsigned i = 0; i < 2; i++) {
        const char *log = i == 0 ? log_a : log_b;
        /* The moving node's odd batches to the first, even ones to the
         * second. */
        char *stored = g_strdup_printf(
            "stored %d batches", SHARED_NODES * SHARED_BATCHES +
                                     (i == 0 ? (SHARED_BATCHES + 1) / 2 : SHARED_BATCHES / 2));
        test_assert_contains(log, stored);
        test_assert_contains(log, "0 refused by the database");
        g_free(stored);
        if (strstr(log, "deadlock") != NULL)
            fail_msg("a server met a deadlock:\n%s", log);
    }
    g_free(log_a);
    g_free(log_b);
    for (unsigned n = 0; n < SENDERS; n++)
        test_sender_close(&senders[n]);
    g_ptr_array_unref(batches);
    test_txd_clear(&second);
    g_free(dir_b);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_a_lock_timeout_keeps_the_batch_queued),
             TEST_WITH_TXD_FIXTURE(test_a_statement_timeout_is_named),
             TEST_WITH_TXD_FIXTURE(test_the_loop_takes_batches_while_a_group_waits),
             TEST_WITH_TXD_FIXTURE(test_a_stop_finishes_the_group_on_its_way),
             TEST_WITH_TXD_FIXTURE(test_a_connect_timeout_is_named),
             TEST_WITH_TXD_FIXTURE(test_ingest_never_takes_an_access_exclusive_lock),
             TEST_WITH_TXD_FIXTURE(test_a_dropped_partition_is_made_again),
             TEST_WITH_TXD_FIXTURE(test_a_run_is_described_once_per_batch),
             TEST_WITH_TXD_FIXTURE(test_an_unwatched_end_is_stored_as_a_bound),
             TEST_WITH_TXD_FIXTURE(test_migration_2_keeps_migration_1s_rows),
             TEST_WITH_TXD_FIXTURE(test_prune_drops_whole_partitions),
             TEST_WITH_TXD_FIXTURE(test_levels_equal_the_rollups_aggregated),
             TEST_WITH_TXD_FIXTURE(test_a_late_batch_rebuilds_its_block),
             TEST_WITH_TXD_FIXTURE(test_stopping_cancels_a_levels_pass),
             TEST_WITH_TXD_FIXTURE(test_two_servers_share_one_warehouse))
