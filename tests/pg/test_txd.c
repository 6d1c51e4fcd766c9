/* vigil-txd against a real PostgreSQL: what is acknowledged is stored, once;
 * what is malformed is refused and the server goes on; the warehouse or the
 * server can go away in the middle of a stream and nothing is lost or
 * doubled; daemons with unknown CURVE keys are turned away; the system
 * reasoner's state reaches the daemons. Each test has its own database and
 * its own server; the cluster is the program's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <zmq.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "txd.h"
#include "vigil/clock.h"
#include "vigil/curve.h"
#include "vigil/health.h"
#include "vigil/ontology.h"

static guint64 count(struct test_txd_fixture *f, const char *sql)
{
    return test_pg_query_u64_in(f->conninfo, sql);
}

/* ---- storing ------------------------------------------------------------------------- */

static void test_a_batch_is_stored_then_acknowledged(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 1);
    GBytes *batch = test_batch_new(1, 1, 100, 0, VIGIL_HEALTH_OK);
    test_sender_send_acked(&s, batch, 1);

    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 1);
    assert_int_equal(count(f, "SELECT rows FROM ingested_batches WHERE node_id = 1 AND "
                              "sequence = 1"),
                     1 + 1 + 2 + 1 + 100 + 2 + 1);
    assert_int_equal(count(f, "SELECT count(*) FROM nodes WHERE hostname = 'test-node-1'"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 100);
    assert_int_equal(count(f, "SELECT count(DISTINCT seq) FROM activities"), 100);
    assert_int_equal(count(f, "SELECT sum(bytes) FROM activities"), 100 * 4096);
    assert_int_equal(count(f, "SELECT count(*) FROM run_activities WHERE path = '/tmp/out.dat' "
                              "AND operation = 6"),
                     100);
    assert_int_equal(count(f, "SELECT count(*) FROM runs WHERE run_key = 'test-run-1' AND "
                              "argv = ARRAY['writer', '--size', '4k']"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM processes WHERE pid = 1001 AND rank IS NULL"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups"), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups WHERE delta IS NULL"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM reasoner_states WHERE level = 'node' AND "
                              "state = 'OK'"),
                     1);
    /* The activities' times are the node's monotonic clock made real: within
     * a minute of now. */
    assert_int_equal(count(f, "SELECT count(*) FROM activities WHERE "
                              "abs(extract(epoch FROM now() - start_time)) < 60"),
                     100);
    g_bytes_unref(batch);
    test_sender_close(&s);
}

/* A node's row is written when the node is new, renamed, or first heard
 * in a new minute: a rename shows at once, and a batch of a known node in
 * the same minute leaves the row alone (its xmin: no new version). */
static void test_a_nodes_row_is_written_when_new_renamed_or_a_minute_on(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 1);
    GBytes *batch = test_batch_new(1, 1, 1, 0, VIGIL_HEALTH_OK);
    test_sender_send_acked(&s, batch, 1);
    g_bytes_unref(batch);
    assert_int_equal(count(f, "SELECT count(*) FROM nodes WHERE node_id = 1 AND "
                              "hostname = 'test-node-1'"),
                     1);
    /* test_batch_new_from names node 1 "node-1". */
    struct test_batch_spec spec = {.node = 1, .sequence = 2, .run_key = "rename", .job = ""};
    batch = test_batch_new_from(&spec);
    test_sender_send_acked(&s, batch, 2);
    g_bytes_unref(batch);
    assert_int_equal(
        count(f, "SELECT count(*) FROM nodes WHERE node_id = 1 AND hostname = 'node-1'"), 1);

    batch = test_batch_new(1, 3, 1, 10, VIGIL_HEALTH_OK);
    test_sender_send_acked(&s, batch, 3);
    g_bytes_unref(batch);
    const char *row_sql =
        "SELECT hostname || ' ' || xmin || ' ' || date_trunc('minute', last_seen) "
        "FROM nodes WHERE node_id = 1";
    char *before = test_pg_query_text_in(f->conninfo, row_sql);
    assert_true(g_str_has_prefix(before, "test-node-1 "));
    batch = test_batch_new(1, 4, 1, 20, VIGIL_HEALTH_OK);
    test_sender_send_acked(&s, batch, 4);
    g_bytes_unref(batch);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches WHERE node_id = 1"), 4);
    char *after = test_pg_query_text_in(f->conninfo, row_sql);
    /* The same row version, unless the wall clock's minute turned between
     * the two batches: then a new version with the new minute. */
    char **b = g_strsplit(before, " ", 3), **a = g_strsplit(after, " ", 3);
    if (strcmp(b[2], a[2]) == 0)
        assert_string_equal(after, before);
    else
        assert_string_not_equal(b[1], a[1]);
    g_strfreev(b);
    g_strfreev(a);
    g_free(before);
    g_free(after);
    test_sender_close(&s);
}

/* vigil-txd stores a node's statistics as one row per window (and per
 * tick) holding every metric's values as arrays (migration 13): items of
 * two windows interleaved in one message make two rows, and the views
 * show each item exactly as sent, its flags and a gauge's delta too. */
static void test_statistics_are_one_row_a_window_and_shown_exactly(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 1);
    uint64_t now = vigil_clock_monotonic_ns();
    uint64_t w1 = now - 3000000000u, w2 = now - 2000000000u;
    vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, 1, 1, 0);
    test_txd_add_node(batch, 1, 1, "test-node-1", now - 1000000000u, 0);
    test_txd_add_metrics(batch, 1, 1);
    GError *error = NULL;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_ROLLUPS, 1, 1, 0);
    /* (metric, window, uncertain, mean): metric 1 a counter, 2 a gauge. */
    const struct {
        uint32_t metric;
        uint64_t start_ns;
        gboolean uncertain;
        double mean;
    } rollups[] = {{1, w1, FALSE, 2}, {2, w2, TRUE, INFINITY}, {2, w1, TRUE, 3}, {1, w2, FALSE, 4}};
    for (guint i = 0; i < G_N_ELEMENTS(rollups); i++) {
        gboolean counter = rollups[i].metric == 1;
        struct vigil_wire_rollup r = {.metric_id = rollups[i].metric,
                                      .flags = rollups[i].uncertain ? VIGIL_SAMPLE_UNCERTAIN : 0,
                                      .start_ns = rollups[i].start_ns,
                                      .end_ns = rollups[i].start_ns + 1000000000u,
                                      .count = 10,
                                      .min = 1,
                                      .mean = rollups[i].mean,
                                      .max = INFINITY,
                                      .delta = counter ? 5 : NAN};
        test_txd_check_item(vigil_wire_add_rollup(w, &r, &error), &error);
    }
    test_txd_add_message(batch, w);
    w = vigil_wire_writer_new(VIGIL_WIRE_SAMPLES, 1, 1, 0);
    for (guint i = 0; i < 6; i++) {
        struct vigil_sample x = {.metric_id = 1 + i % 2,
                                 .flags = i == 3 ? VIGIL_SAMPLE_UNCERTAIN : 0,
                                 .t_ns = w1 + (i / 2) * 100000000u,
                                 .value = 0.5 * i};
        test_txd_check_item(vigil_wire_add_sample(w, &x, &error), &error);
    }
    test_txd_add_message(batch, w);
    GBytes *sent = vigil_wire_writer_finish(batch);
    test_sender_send_acked(&s, sent, 1);

    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollup_arrays"), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM window_statistics_arrays"), 3);
    char *rollup_rows = test_pg_query_text_in(
        f->conninfo,
        "SELECT string_agg(format('%s/%s/%s/%s/%s/%s/%s', m.name, r.end_time - r.start_time,"
        " r.samples, r.mean, r.max, coalesce(r.delta::text, 'null'), r.uncertain), ' '"
        " ORDER BY r.start_time, m.name) FROM statistics_rollups r JOIN metrics m"
        " USING (metric_id)");
    assert_string_equal(rollup_rows, "cpu.busy_s/00:00:01/10/2/Infinity/5/f "
                                     "mem.used_bytes/00:00:01/10/3/Infinity/null/t "
                                     "cpu.busy_s/00:00:01/10/4/Infinity/5/f "
                                     "mem.used_bytes/00:00:01/10/Infinity/Infinity/null/t");
    char *sample_rows = test_pg_query_text_in(
        f->conninfo, "SELECT string_agg(format('%s/%s/%s', m.name, w.value, w.uncertain), ' '"
                     " ORDER BY w.t_ns, m.name) FROM window_statistics w JOIN metrics m"
                     " USING (metric_id)");
    assert_string_equal(sample_rows, "cpu.busy_s/0/f mem.used_bytes/0.5/f "
                                     "cpu.busy_s/1/f mem.used_bytes/1.5/t "
                                     "cpu.busy_s/2/f mem.used_bytes/2.5/f");
    /* A window's metrics are in the order they came: 1, 2 in the first,
     * 2, 1 in the second, two metric sets. */
    assert_int_equal(count(f, "SELECT count(DISTINCT metric_set_id) FROM "
                              "statistics_rollup_arrays"),
                     2);
    g_free(rollup_rows);
    g_free(sample_rows);
    g_bytes_unref(sent);
    test_sender_close(&s);
}

static void test_a_batch_sent_twice_is_stored_once(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 2);
    GBytes *batch = test_batch_new(2, 5, 50, 0, VIGIL_HEALTH_OK);
    test_sender_send_acked(&s, batch, 5);
    test_sender_send_acked(&s, batch, 5); /* as a daemon that missed the ack would */
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 50);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups"), 2);
    /* The same process and files in the next batch are the same rows. */
    GBytes *next = test_batch_new(2, 6, 50, 50, VIGIL_HEALTH_OK);
    test_sender_send_acked(&s, next, 6);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 100);
    assert_int_equal(count(f, "SELECT count(*) FROM processes"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM files"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM metrics"), 2);
    char *log = test_txd_stop(&f->txd);
    test_assert_contains(log, "stored 2 batches");
    test_assert_contains(log, "1 seen before");
    g_free(log);
    g_bytes_unref(batch);
    g_bytes_unref(next);
    test_sender_close(&s);
}

/* The next reply is a refusal of `sequence` whose reason holds `reason_part`. */
static void expect_refusal(struct test_sender *s, uint64_t sequence, const char *reason_part)
{
    struct vigil_wire_message m;
    assert_true(test_sender_receive(s, &m, 60000));
    while (m.header.type == VIGIL_WIRE_STATES) {
        vigil_wire_message_clear(&m);
        assert_true(test_sender_receive(s, &m, 60000));
    }
    assert_int_equal(m.header.type, VIGIL_WIRE_REFUSED);
    assert_int_equal(m.header.sequence, sequence);
    test_assert_contains(m.refusals[0].reason, reason_part);
    vigil_wire_message_clear(&m);
}

/* ---- batch identity ---------------------------------------------------------------------- */

/* A message's CRC-32 as its header carries it, in the log's hex. */
static char *crc_hex(GBytes *message)
{
    const guint8 *b = g_bytes_get_data(message, NULL);
    const guint8 *c = b + VIGIL_WIRE_CRC_OFFSET;
    return g_strdup_printf("%08x",
                           (unsigned)(c[0] | c[1] << 8 | c[2] << 16 | (uint32_t)c[3] << 24));
}

/* A node whose spool folder was reset sends a sequence vigil-txd has, with
 * other writes, for a later cycle. Before, that was taken for a resend and
 * dropped; now it is stored (its key has the cycle's end), and said in the
 * log at once with both digests. The same bytes again are still a resend. */
static void test_a_reused_sequence_is_stored_and_said(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 3);
    GBytes *first = test_batch_new(3, 1, 50, 0, VIGIL_HEALTH_OK);
    test_sender_send_acked(&s, first, 1);
    GBytes *other = test_batch_new(3, 1, 20, 1000, VIGIL_HEALTH_OK);
    test_sender_send_acked(&s, other, 1);
    test_sender_send_acked(&s, first, 1);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 70);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 2);
    char *first_crc = crc_hex(first), *other_crc = crc_hex(other);
    char *sql = g_strdup_printf("SELECT count(*) FROM ingested_batches WHERE "
                                "lpad(to_hex(content_crc32), 8, '0') = '%s' AND "
                                "content_bytes = %zu",
                                first_crc, g_bytes_get_size(first));
    assert_int_equal(count(f, sql), 1);

    /* A sequence below the node's highest is stored (no batch has it) and
     * said at once. */
    GBytes *high = test_batch_new(3, 10, 5, 2000, VIGIL_HEALTH_OK);
    GBytes *low = test_batch_new(3, 5, 5, 3000, VIGIL_HEALTH_OK);
    test_sender_send_acked(&s, high, 10);
    test_sender_send_acked(&s, low, 5);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 80);

    char *log = test_txd_stop(&f->txd);
    test_assert_contains(log, "sequence reused: was the node's spool folder reset? Node 3 "
                              "sequence 1 was stored with content crc32");
    test_assert_contains(log, "for a later cycle: stored too");
    test_assert_contains(log, first_crc);
    test_assert_contains(log, other_crc);
    test_assert_contains(log, "node 3 sent sequence 5 below its highest stored, 10");
    test_assert_contains(log, "1 reusing a sequence");
    test_assert_contains(log, "1 seen before");
    g_free(log);
    g_free(sql);
    g_free(first_crc);
    g_free(other_crc);
    g_bytes_unref(first);
    g_bytes_unref(other);
    g_bytes_unref(high);
    g_bytes_unref(low);
    test_sender_close(&s);
}

/* ---- bad input -------------------------------------------------------------------------- */

/* A copy of `message` with its version set to `version` and the CRC made
 * right again, so that only the version is wrong. */
static GBytes *with_version(GBytes *message, uint16_t version)
{
    gsize length = g_bytes_get_size(message);
    guint8 *bytes = g_memdup2(g_bytes_get_data(message, NULL), length);
    bytes[4] = (guint8)version;
    bytes[5] = (guint8)(version >> 8);
    uint32_t crc = vigil_wire_checksum(bytes, length);
    for (unsigned i = 0; i < 4; i++)
        bytes[VIGIL_WIRE_CRC_OFFSET + i] = (guint8)(crc >> (8 * i));
    return g_bytes_new_take(bytes, length);
}

static void test_bad_messages_are_refused_and_the_server_goes_on(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 3);

    /* Not a vigil message at all: logged, no answer (it names no batch). */
    static const char request[] = "GET / HTTP/1.1\r\nHost: txd\r\nAccept: */*\r\nUser-Agent: "
                                  "curl/7.88\r\n\r\n";
    GBytes *garbage = g_bytes_new_static(request, sizeof request - 1);
    test_sender_send(&s, garbage);
    /* Truncated: half a batch. */
    GBytes *whole = test_batch_new(3, 10, 20, 0, VIGIL_HEALTH_OK);
    GBytes *half = g_bytes_new_from_bytes(whole, 0, g_bytes_get_size(whole) / 2);
    test_sender_send(&s, half);
    /* A byte changed in transit: the checksum says so. */
    gsize length = g_bytes_get_size(whole);
    guint8 *flipped = g_memdup2(g_bytes_get_data(whole, NULL), length);
    flipped[length - 3] ^= 0x40;
    GBytes *corrupt = g_bytes_new_take(flipped, length);
    test_sender_send(&s, corrupt);
    /* Another version of the format: refused by name, so the daemon keeps
     * it aside for a server that reads it. */
    GBytes *old = with_version(whole, 1);
    test_sender_send(&s, old);
    expect_refusal(&s, 10, "wire version 1");
    /* A message that decodes but is no batch. */
    GBytes *ack = NULL;
    {
        vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_ACK, 3, 11, 0);
        ack = vigil_wire_writer_finish(w);
    }
    test_sender_send(&s, ack);
    expect_refusal(&s, 11, "a ack message where a batch was expected");

    /* Through all of it the server stayed up: a good batch is stored. */
    test_sender_send_acked(&s, whole, 10);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 20);

    char *log = test_txd_stop(&f->txd);
    test_assert_contains(log, "not a vigil message");
    test_assert_contains(log, "but its header says");
    test_assert_contains(log, "checksum mismatch");
    test_assert_contains(log, "wire version 1, this vigil reads version 2");
    test_assert_contains(log, "5 malformed");
    g_free(log);
    g_bytes_unref(garbage);
    g_bytes_unref(whole);
    g_bytes_unref(half);
    g_bytes_unref(corrupt);
    g_bytes_unref(old);
    g_bytes_unref(ack);
    test_sender_close(&s);
}

/* `full` without its processes: activities of a process the batch does
 * not describe, which the database cannot take. */
static GBytes *without_processes(GBytes *full, uint64_t node_id, uint64_t sequence)
{
    GError *error = NULL;
    vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, node_id, sequence, 0);
    struct vigil_wire_message decoded;
    assert_true(
        vigil_wire_decode(g_bytes_get_data(full, NULL), g_bytes_get_size(full), &decoded, &error));
    for (uint32_t i = 0; i < decoded.header.count; i++) {
        if (decoded.inner[i].header.type == VIGIL_WIRE_PROCESSES)
            continue;
        GBytes *inner = vigil_wire_encode_message(&decoded.inner[i], &error);
        assert_non_null(inner);
        assert_true(vigil_wire_add_message(batch, inner, &error));
        g_bytes_unref(inner);
    }
    vigil_wire_message_clear(&decoded);
    return vigil_wire_writer_finish(batch);
}

static void test_a_batch_the_database_cannot_take_is_refused_whole(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 4);
    GBytes *full = test_batch_new(4, 1, 5, 0, VIGIL_HEALTH_OK);
    GBytes *orphan = without_processes(full, 4, 1);
    test_sender_send(&s, orphan);
    expect_refusal(&s, 1, "which the batch does not describe");
    /* Nothing of it was written: not the node, not the rollups. */
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM metrics"), 0);
    /* And the ids it made and rolled back are not used by the next one. */
    test_sender_send_acked(&s, full, 1);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups r JOIN metrics m "
                              "USING (metric_id)"),
                     2);
    g_bytes_unref(full);
    g_bytes_unref(orphan);
    test_sender_close(&s);
}

/* A store on the fixture's warehouse, for the tests that call it directly. */
static struct txd_store *store_new(const struct test_txd_fixture *f)
{
    struct vigil_warehouse_settings settings = {
        .conninfo = f->conninfo,
        .migrate = TRUE,
        .connect_timeout_s = 10,
        .statement_timeout_ms = 60000,
        .lock_timeout_ms = 60000,
        .partitions_ahead_days = 1,
        .maintain_interval_s = 3600,
    };
    return txd_store_new(&settings);
}

static void decode_into(GBytes *message, struct vigil_wire_message *out)
{
    GError *error = NULL;
    assert_true(
        vigil_wire_decode(g_bytes_get_data(message, NULL), g_bytes_get_size(message), out, &error));
}

/* One group, one transaction: a good batch, one the database refuses, a
 * resend of the good one (in the same group: a resend, not a double) and
 * another good one. The refused one is rolled back and refused alone,
 * with its reason; the good ones are stored once each; nothing else. */
static void test_a_group_stores_each_batch_once_and_refuses_the_bad_alone(void **state)
{
    struct test_txd_fixture *f = *state;
    struct txd_store *store = store_new(f);
    GBytes *good = test_batch_new(7, 1, 10, 0, VIGIL_HEALTH_OK);
    GBytes *bad_full = test_batch_new(8, 1, 5, 0, VIGIL_HEALTH_OK);
    GBytes *bad = without_processes(bad_full, 8, 1);
    g_bytes_unref(bad_full);
    GBytes *other = test_batch_new(7, 2, 10, 10, VIGIL_HEALTH_OK);
    GBytes *messages[] = {good, bad, good, other};
    struct vigil_wire_message decoded[4];
    struct txd_group_item items[4];
    for (int i = 0; i < 4; i++) {
        decode_into(messages[i], &decoded[i]);
        const guint8 *c =
            (const guint8 *)g_bytes_get_data(messages[i], NULL) + VIGIL_WIRE_CRC_OFFSET;
        items[i] = (struct txd_group_item){
            .batch = &decoded[i],
            .origin = {.crc32 = (uint32_t)(c[0] | c[1] << 8 | c[2] << 16 | (uint32_t)c[3] << 24),
                       .bytes = g_bytes_get_size(messages[i])},
        };
    }
    GError *error = NULL;
    assert_int_equal(txd_store_group(store, items, 4, &error), TXD_STORED);
    assert_null(error);
    assert_int_equal(items[0].result, TXD_STORED);
    assert_int_equal(items[1].result, TXD_REFUSED);
    assert_non_null(items[1].error);
    test_assert_contains(items[1].error->message, "which the batch does not describe");
    assert_int_equal(items[2].result, TXD_DUPLICATE);
    assert_null(items[2].error);
    assert_int_equal(items[3].result, TXD_STORED);
    struct txd_store_counts counts;
    txd_store_counts(store, &counts);
    assert_int_equal(counts.batches_stored, 2);
    assert_int_equal(counts.batches_duplicate, 1);
    assert_int_equal(counts.batches_refused, 1);

    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches WHERE node_id = 7 AND "
                              "sequence IN (1, 2)"),
                     2);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 20);
    assert_int_equal(count(f, "SELECT count(DISTINCT seq) FROM activities"), 20);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups"), 4);
    assert_int_equal(count(f, "SELECT count(*) FROM reasoner_states"), 2);
    /* Node 8's batch left nothing: no node, no key, no states. */
    assert_int_equal(count(f, "SELECT count(*) FROM nodes"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM nodes WHERE node_id = 8"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM processes"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM metrics"), 2);

    /* The group committed: the next batch uses the ids it learnt. */
    struct vigil_wire_message next;
    GBytes *next_message = test_batch_new(7, 3, 5, 20, VIGIL_HEALTH_OK);
    decode_into(next_message, &next);
    struct txd_batch_origin origin = {.crc32 = 3, .bytes = g_bytes_get_size(next_message)};
    assert_int_equal(txd_store_batch(store, &next, &origin, &error), TXD_STORED);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups r JOIN metrics m "
                              "USING (metric_id)"),
                     6);
    vigil_wire_message_clear(&next);
    g_bytes_unref(next_message);
    for (int i = 0; i < 4; i++)
        vigil_wire_message_clear(&decoded[i]);
    g_clear_error(&items[1].error);
    g_bytes_unref(good);
    g_bytes_unref(bad);
    g_bytes_unref(other);
    txd_store_free(store);
}

/* A group whose COPY the database refuses as a whole (here a row breaks a
 * constraint an admin added; the batch itself is well formed): the group
 * is halved until the batch is found, which alone is refused with
 * PostgreSQL's reason; every other batch of the group is stored, once. */
static void test_a_row_the_database_refuses_in_a_group_copy_is_found(void **state)
{
    struct test_txd_fixture *f = *state;
    struct txd_store *store = store_new(f);
    GError *error = NULL;
    assert_true(txd_store_connect(store, &error));
    test_pg_exec_in(f->conninfo, "ALTER TABLE reasoner_states ADD CONSTRAINT no_abnormal_bad "
                                 "CHECK (state <> 'ABNORMAL_BAD')");
    enum { N = 7, BAD = 4 };
    GBytes *messages[N];
    struct vigil_wire_message decoded[N];
    struct txd_group_item items[N];
    for (int i = 0; i < N; i++) {
        messages[i] = test_batch_new(20 + (uint64_t)i, 1, 3, 0,
                                     i == BAD ? VIGIL_HEALTH_ABNORMAL_BAD : VIGIL_HEALTH_OK);
        decode_into(messages[i], &decoded[i]);
        items[i] = (struct txd_group_item){
            .batch = &decoded[i],
            .origin = {.crc32 = (uint32_t)i + 1, .bytes = g_bytes_get_size(messages[i])},
        };
    }
    assert_int_equal(txd_store_group(store, items, N, &error), TXD_STORED);
    assert_null(error);
    for (int i = 0; i < N; i++) {
        if (i == BAD) {
            assert_int_equal(items[i].result, TXD_REFUSED);
            assert_non_null(items[i].error);
            test_assert_contains(items[i].error->message, "no_abnormal_bad");
            g_clear_error(&items[i].error);
        } else {
            assert_int_equal(items[i].result, TXD_STORED);
            assert_null(items[i].error);
        }
    }
    struct txd_store_counts counts;
    txd_store_counts(store, &counts);
    assert_int_equal(counts.batches_stored, N - 1);
    assert_int_equal(counts.batches_refused, 1);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), N - 1);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches WHERE node_id = 24"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM nodes WHERE node_id = 24"), 0);
    assert_int_equal(count(f, "SELECT count(DISTINCT node_id) FROM reasoner_states"), N - 1);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 3 * (N - 1));
    for (int i = 0; i < N; i++) {
        vigil_wire_message_clear(&decoded[i]);
        g_bytes_unref(messages[i]);
    }
    txd_store_free(store);
}

/* A path of 4095 bytes (the longest a name record carries) is stored and
 * found again: files are keyed by the path's digest, since an index entry
 * cannot hold the path itself. */
static void test_the_longest_path_is_stored(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 10);
    char path[4096];
    for (size_t i = 0; i < sizeof path - 1; i++)
        path[i] = i % 64 == 0 ? '/' : (char)('a' + (i * 7) % 26);
    path[sizeof path - 1] = '\0';
    for (uint64_t sequence = 1; sequence <= 2; sequence++) {
        GError *error = NULL;
        GBytes *plain = test_batch_new(10, sequence, 4, (sequence - 1) * 4, VIGIL_HEALTH_OK);
        struct vigil_wire_message decoded;
        assert_true(vigil_wire_decode(g_bytes_get_data(plain, NULL), g_bytes_get_size(plain),
                                      &decoded, &error));
        vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, 10, sequence, 0);
        for (uint32_t i = 0; i < decoded.header.count; i++) {
            struct vigil_wire_message *m = &decoded.inner[i];
            if (m->header.type == VIGIL_WIRE_NAMES) {
                g_free(m->names[0].path);
                m->names[0].path = g_strdup(path);
                m->names[0].length = (uint16_t)strlen(path);
            }
            GBytes *inner = vigil_wire_encode_message(m, &error);
            assert_non_null(inner);
            assert_true(vigil_wire_add_message(batch, inner, &error));
            g_bytes_unref(inner);
        }
        vigil_wire_message_clear(&decoded);
        GBytes *long_named = vigil_wire_writer_finish(batch);
        test_sender_send_acked(&s, long_named, sequence);
        g_bytes_unref(long_named);
        g_bytes_unref(plain);
    }
    assert_int_equal(count(f, "SELECT count(*) FROM files WHERE length(path_bytes) = 4095"), 1);
    assert_int_equal(count(f, "SELECT count(DISTINCT file_id) FROM activities"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM run_activities WHERE length(path) = 4095"), 8);
    test_sender_close(&s);
}

/* ---- failures in the middle of a stream ---------------------------------------------------- */

#define STREAM_BATCHES    120
#define STREAM_ACTIVITIES 200

/* Everything a stream stored, checked for exactly once. */
static void assert_stream_stored_once(struct test_txd_fixture *f, uint64_t node)
{
    char *sql = g_strdup_printf(
        "SELECT count(*) FROM ingested_batches WHERE node_id = %" G_GUINT64_FORMAT, node);
    assert_int_equal(count(f, sql), STREAM_BATCHES);
    g_free(sql);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"),
                     STREAM_BATCHES * STREAM_ACTIVITIES);
    assert_int_equal(count(f, "SELECT count(*) FROM (SELECT process_id, seq FROM activities "
                              "GROUP BY 1, 2 HAVING count(*) > 1) AS doubled"),
                     0);
    assert_int_equal(count(f, "SELECT count(DISTINCT seq) FROM activities"),
                     STREAM_BATCHES * STREAM_ACTIVITIES);
    assert_int_equal(count(f, "SELECT count(*) FROM statistics_rollups"), STREAM_BATCHES * 2);
}

/* Receives replies for up to `timeout_ms` until one acknowledges a batch,
 * then takes what is already here; marks acknowledged batches. System
 * states (every cycle) are not answers. */
static guint take_acks(struct test_sender *s, gboolean *acked, int timeout_ms)
{
    guint n = 0;
    gboolean answered = FALSE;
    gint64 deadline_us = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    struct vigil_wire_message m;
    for (;;) {
        gint64 left_ms = (deadline_us - g_get_monotonic_time()) / 1000;
        if (!test_sender_receive(s, &m, answered ? 0 : (int)MAX(left_ms, 0)))
            break;
        if (m.header.type == VIGIL_WIRE_REFUSED)
            fail_msg("batch %" G_GUINT64_FORMAT " refused: %s", m.header.sequence,
                     m.refusals[0].reason);
        if (m.header.type == VIGIL_WIRE_ACK) {
            assert_true(m.header.sequence >= 1 && m.header.sequence <= STREAM_BATCHES);
            if (!acked[m.header.sequence])
                n++;
            acked[m.header.sequence] = TRUE;
            answered = TRUE;
        }
        vigil_wire_message_clear(&m);
    }
    return n;
}

/* Sends every batch not acknowledged, as a daemon's resend does, and
 * collects acknowledgements until all are in. */
static void resend_until_all_acked(struct test_sender *s, GBytes **batches, gboolean *acked)
{
    for (int round = 0; round < 20; round++) {
        guint missing = 0;
        for (unsigned i = 1; i <= STREAM_BATCHES; i++)
            if (!acked[i]) {
                test_sender_send(s, batches[i]);
                missing++;
            }
        if (missing == 0)
            return;
        /* Every batch sent gets an answer; wait for them (a long bound). */
        for (guint got = 0; got < missing;) {
            guint n = take_acks(s, acked, 60000);
            if (n == 0)
                break;
            got += n;
        }
    }
    for (unsigned i = 1; i <= STREAM_BATCHES; i++)
        if (!acked[i])
            fail_msg("batch %u was never acknowledged", i);
}

static void test_killed_server_in_a_stream_loses_and_doubles_nothing(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 5);
    GBytes *batches[STREAM_BATCHES + 1] = {NULL};
    gboolean acked[STREAM_BATCHES + 1] = {FALSE};
    for (unsigned i = 1; i <= STREAM_BATCHES; i++)
        batches[i] =
            test_batch_new(5, i, STREAM_ACTIVITIES, (i - 1) * STREAM_ACTIVITIES, VIGIL_HEALTH_OK);
    /* Send them all; once a third are acknowledged, SIGKILL the server in
     * the middle of the rest. */
    for (unsigned i = 1; i <= STREAM_BATCHES; i++)
        test_sender_send(&s, batches[i]);
    guint got = 0;
    while (got < STREAM_BATCHES / 3) {
        guint n = take_acks(&s, acked, 60000);
        assert_true(n > 0);
        got += n;
    }
    g_free(test_txd_kill(&f->txd));
    guint stored_at_kill = (guint)count(f, "SELECT count(*) FROM ingested_batches");
    assert_true(stored_at_kill >= got);
    test_txd_restart(&f->txd);
    resend_until_all_acked(&s, batches, acked);
    assert_stream_stored_once(f, 5);
    for (unsigned i = 1; i <= STREAM_BATCHES; i++)
        g_bytes_unref(batches[i]);
    test_sender_close(&s);
}

static void test_database_away_for_20_s_loses_and_doubles_nothing(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, "retry_max_ms = 1000\n");
    struct test_sender s;
    test_sender_open(&s, f->txd.endpoint, 6, NULL, NULL, NULL);
    GBytes *batches[STREAM_BATCHES + 1] = {NULL};
    gboolean acked[STREAM_BATCHES + 1] = {FALSE};
    for (unsigned i = 1; i <= STREAM_BATCHES; i++)
        batches[i] =
            test_batch_new(6, i, STREAM_ACTIVITIES, (i - 1) * STREAM_ACTIVITIES, VIGIL_HEALTH_OK);
    /* A third before the database goes. */
    const unsigned before = STREAM_BATCHES / 3;
    for (unsigned i = 1; i <= before; i++)
        test_sender_send(&s, batches[i]);
    for (guint got = 0; got < before;) {
        guint n = take_acks(&s, acked, 60000);
        assert_true(n > 0);
        got += n;
    }
    test_pg_stop(&test_pg_cluster);
    /* The rest while it is away, spread over 20 s as a stream would be. Not
     * one may be acknowledged: nothing can have been committed. */
    const unsigned away = STREAM_BATCHES - before;
    for (unsigned i = before + 1; i <= STREAM_BATCHES; i++) {
        test_sender_send(&s, batches[i]);
        gint64 until_us = g_get_monotonic_time() + 20000000 / away;
        for (gint64 left_us; (left_us = until_us - g_get_monotonic_time()) > 0;) {
            guint n = take_acks(&s, acked, (int)(left_us / 1000) + 1);
            if (n != 0)
                fail_msg("%u batches acknowledged while the database was down", n);
        }
    }
    test_pg_restart_after_stop(&test_pg_cluster);
    /* The server stored what waited; a daemon would resend anything it
     * held back past its limit: so do we. */
    for (guint got = 0; got < away;) {
        guint n = take_acks(&s, acked, 60000);
        if (n == 0)
            break;
        got += n;
    }
    resend_until_all_acked(&s, batches, acked);
    assert_stream_stored_once(f, 6);
    char *log = test_txd_stop(&f->txd);
    test_assert_contains(log, "the warehouse is unavailable");
    test_assert_contains(log, "the warehouse is back");
    g_free(log);
    for (unsigned i = 1; i <= STREAM_BATCHES; i++)
        g_bytes_unref(batches[i]);
    test_sender_close(&s);
}

/* ---- the system reasoner -----------------------------------------------------------------------
 */

/* The next system state `s` is sent, skipping acknowledgements. */
static enum vigil_health next_system_state(struct test_sender *s)
{
    for (;;) {
        struct vigil_wire_message m;
        assert_true(test_sender_receive(s, &m, 60000));
        unsigned type = m.header.type;
        enum vigil_health health = 0;
        if (type == VIGIL_WIRE_STATES) {
            assert_int_equal(m.header.count, 1);
            assert_int_equal(m.states[0].level, VIGIL_LEVEL_SYSTEM);
            health = m.states[0].health;
        }
        vigil_wire_message_clear(&m);
        if (type == VIGIL_WIRE_STATES)
            return health;
        assert_int_equal(type, VIGIL_WIRE_ACK);
    }
}

/* Node 7 is ABNORMAL_BAD, node 17 OK. The system counts both (threshold 0:
 * one bad against no good is ABNORMAL_BAD); node 17 hears that, node 7
 * hears the system without itself, which is OK: its own state never comes
 * back to it as the system's. */
static void test_the_system_state_reaches_the_daemons(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender bad, good;
    test_txd_start_with_sender(f, &bad, 7);
    test_sender_open(&good, f->txd.endpoint, 17, NULL, NULL, NULL);
    GBytes *bad_batch = test_batch_new(7, 1, 1, 0, VIGIL_HEALTH_ABNORMAL_BAD);
    GBytes *good_batch = test_batch_new(17, 1, 1, 0, VIGIL_HEALTH_OK);
    test_sender_send_acked(&bad, bad_batch, 1);
    test_sender_send_acked(&good, good_batch, 1);
    /* Node 17 hears of node 7 within a few cycles (a generous bound). */
    gboolean heard = FALSE;
    for (int i = 0; i < 200 && !heard; i++)
        heard = next_system_state(&good) == VIGIL_HEALTH_ABNORMAL_BAD;
    assert_true(heard);
    /* From the cycle node 17 heard it in on, node 7 was counted too; it
     * hears only node 17's OK, however many cycles. */
    for (int i = 0; i < 5; i++)
        assert_int_equal(next_system_state(&bad), VIGIL_HEALTH_OK);
    assert_int_equal(count(f, "SELECT count(*) FROM reasoner_states WHERE level = 'system' AND "
                              "state = 'ABNORMAL_BAD'"),
                     1);
    g_bytes_unref(bad_batch);
    g_bytes_unref(good_batch);
    test_sender_close(&bad);
    test_sender_close(&good);
}

/* ---- runs ------------------------------------------------------------------------------ */

/* A batch describing one process of run "family": NODE and PROCESSES only. */
static GBytes *process_batch(uint64_t sequence, int32_t pid, const char *program, uint64_t start_ns,
                             uint64_t end_ns, int32_t exit_code)
{
    GError *error = NULL;
    vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, 9, sequence, 0);
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_NODE, 9, sequence, 0);
    struct vigil_wire_node node = {.realtime_offset_ns = 1700000000000000000,
                                   .cycle = sequence,
                                   .cycle_start_ns = 1000000000,
                                   .cycle_end_ns = 2000000000,
                                   .cycle_ms = 1000,
                                   .hostname = "node-9"};
    assert_true(vigil_wire_add_node(w, &node, &error));
    GBytes *bytes = vigil_wire_writer_finish(w);
    assert_true(vigil_wire_add_message(batch, bytes, &error));
    g_bytes_unref(bytes);
    w = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, 9, sequence, 0);
    char *argv[] = {(char *)program, NULL};
    struct vigil_wire_process process = {.process_id = (uint64_t)pid,
                                         .pid = pid,
                                         .rank = -1,
                                         .exit_code = exit_code,
                                         .start_ns = start_ns,
                                         .end_ns = end_ns,
                                         .run_key = "family",
                                         .job = "",
                                         .program = (char *)program,
                                         .cwd = "/",
                                         .argc = 1,
                                         .argv = argv};
    assert_true(vigil_wire_add_process(w, &process, &error));
    bytes = vigil_wire_writer_finish(w);
    assert_true(vigil_wire_add_message(batch, bytes, &error));
    g_bytes_unref(bytes);
    return vigil_wire_writer_finish(batch);
}

/* A run is its first stored process's: a child stored before its parent
 * (one node's batches come in order, so only a reordered replay does this)
 * makes the run, and the parent, stored later with an earlier start, joins
 * it without changing its program, argv or start (issue 30: a later
 * batch's earlier start had taken runs over, another user's too). The run
 * has no end while a process of it runs, then the last one's; its exit
 * status is its first process's pid's. */
static void test_a_run_is_its_first_stored_process(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 9);
    /* The child (started later, exit 7) is stored before its parent. */
    GBytes *child = process_batch(1, 200, "child", 1500000000, 1800000000, 7);
    test_sender_send_acked(&s, child, 1);
    GBytes *parent_running = process_batch(2, 100, "parent", 1000000000, 0, -1);
    test_sender_send_acked(&s, parent_running, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM runs WHERE program = 'child' AND "
                              "end_time IS NULL"),
                     1);
    GBytes *parent_ended = process_batch(3, 100, "parent", 1000000000, 1900000000, 0);
    test_sender_send_acked(&s, parent_ended, 3);
    assert_int_equal(count(f, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM runs WHERE program = 'child' AND "
                              "argv = ARRAY['child'] AND exit_status = 7 AND "
                              "end_time - start_time = interval '0.4 s'"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM processes WHERE exit_status = 7"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM processes"), 2);
    g_bytes_unref(child);
    g_bytes_unref(parent_running);
    g_bytes_unref(parent_ended);
    test_sender_close(&s);
}

/* The same (node, sequence) and cycle end with other content: not a
 * resend, and no key of its own: refused with the reason and both digests,
 * so that the daemon keeps it aside rather than lose it. */
static void test_a_reused_sequence_of_the_same_cycle_is_refused(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 9);
    GBytes *first = process_batch(1, 100, "first", 1000000000, 0, -1);
    GBytes *other = process_batch(1, 200, "other", 1000000000, 0, -1);
    test_sender_send_acked(&s, first, 1);
    test_sender_send(&s, other);
    expect_refusal(&s, 1, "sequence reused: was the node's spool folder reset?");
    test_sender_send_acked(&s, first, 1);
    assert_int_equal(count(f, "SELECT count(*) FROM processes"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM ingested_batches"), 1);
    char *log = test_txd_stop(&f->txd);
    char *first_crc = crc_hex(first), *other_crc = crc_hex(other);
    char *want =
        g_strdup_printf("Node 9 sequence 1 was stored with content crc32 %s (%zu bytes); "
                        "this batch has crc32 %s (%zu bytes), for the same cycle end, "
                        "and is not stored",
                        first_crc, g_bytes_get_size(first), other_crc, g_bytes_get_size(other));
    test_assert_contains(log, want);
    test_assert_contains(log, "1 reusing a sequence");
    g_free(want);
    g_free(log);
    g_free(first_crc);
    g_free(other_crc);
    g_bytes_unref(first);
    g_bytes_unref(other);
    test_sender_close(&s);
}

/* ---- security ------------------------------------------------------------------------------- */

/* Waits for the CURVE handshake's outcome on `s`: TRUE for a connection,
 * FALSE for a refused key. */
static gboolean handshake_outcome(struct test_sender *s, const char *monitor_endpoint)
{
    void *monitor = zmq_socket(s->context, ZMQ_PAIR);
    assert_int_equal(zmq_connect(monitor, monitor_endpoint), 0);
    int outcome = -1;
    while (outcome < 0) {
        zmq_pollitem_t item = {.socket = monitor, .events = ZMQ_POLLIN};
        assert_int_equal(zmq_poll(&item, 1, 60000), 1);
        zmq_msg_t event, address;
        zmq_msg_init(&event);
        zmq_msg_init(&address);
        assert_true(zmq_msg_recv(&event, monitor, 0) >= 6);
        uint16_t id;
        memcpy(&id, zmq_msg_data(&event), 2);
        assert_true(zmq_msg_recv(&address, monitor, 0) >= 0);
        if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            outcome = 1;
        else if (id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH || id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
            outcome = 0;
        zmq_msg_close(&event);
        zmq_msg_close(&address);
    }
    zmq_close(monitor);
    return outcome == 1;
}

/* Starts the fixture's server with CURVE: its key pair (*server) in
 * DIR/txd.key, and `n` nodes' pairs (nodes[i], in DIR/node-I.key) listed
 * in its authorized keys (after a comment line). */
static void start_with_curve(struct test_txd_fixture *f, struct vigil_curve_pair *server,
                             struct vigil_curve_pair *nodes, size_t n)
{
    GError *error = NULL;
    char *server_keys = g_build_filename(f->dir, "txd.key", NULL);
    assert_true(vigil_curve_keygen(server_keys, server, &error));
    GString *list = g_string_new("# the nodes\n");
    for (size_t i = 0; i < n; i++) {
        char *name = g_strdup_printf("node-%zu.key", i);
        char *node_keys = g_build_filename(f->dir, name, NULL);
        assert_true(vigil_curve_keygen(node_keys, &nodes[i], &error));
        g_string_append_printf(list, "%s\n", nodes[i].public_key);
        g_free(node_keys);
        g_free(name);
    }
    char *authorized = g_build_filename(f->dir, "authorized", NULL);
    assert_true(g_file_set_contents(authorized, list->str, -1, NULL));
    char *config = g_strdup_printf("curve_key_file = %s\ncurve_authorized_keys = %s\n", server_keys,
                                   authorized);
    test_txd_start(&f->txd, f->dir, f->conninfo, config);
    g_free(config);
    g_free(authorized);
    g_string_free(list, TRUE);
    g_free(server_keys);
}

static void test_curve_admits_listed_keys_only(void **state)
{
    struct test_txd_fixture *f = *state;
    /* Several keys listed: the one used is looked up among them (a set),
     * whichever its place in the list. */
    struct vigil_curve_pair server, daemons[3];
    start_with_curve(f, &server, daemons, G_N_ELEMENTS(daemons));
    const struct vigil_curve_pair *daemon = &daemons[1];

    /* A stranger: the handshake fails, nothing is stored. */
    struct test_sender stranger;
    test_sender_open(&stranger, f->txd.endpoint, 8, server.public_key, NULL, NULL);
    assert_int_equal(zmq_socket_monitor(stranger.socket, "inproc://stranger",
                                        ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                                            ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                            ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL),
                     0);
    /* The monitor was set after the connect began: reconnect to see it. */
    assert_int_equal(zmq_disconnect(stranger.socket, f->txd.endpoint), 0);
    assert_int_equal(zmq_connect(stranger.socket, f->txd.endpoint), 0);
    assert_false(handshake_outcome(&stranger, "inproc://stranger"));
    test_sender_close(&stranger);

    /* The listed daemon: admitted, its batch stored. */
    struct test_sender known;
    test_sender_open(&known, f->txd.endpoint, 8, server.public_key, daemon->public_key,
                     daemon->secret_key);
    GBytes *batch = test_batch_new(8, 1, 3, 0, VIGIL_HEALTH_OK);
    test_sender_send_acked(&known, batch, 1);
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), 3);
    char *log = test_txd_stop(&f->txd);
    test_assert_contains(log, "is not in [txd] curve_authorized_keys");
    test_assert_contains(log, "with CURVE");
    g_free(log);
    g_bytes_unref(batch);
    test_sender_close(&known);
}

/* With CURVE a node id belongs to the key it first came with: another
 * daemon (admitted, with a key of its own) claiming it is refused, both
 * while vigil-txd remembers the key and after a restart, from the
 * warehouse; the real node's batches and its own are stored. */
static void test_a_batch_claiming_another_nodes_id_is_refused(void **state)
{
    struct test_txd_fixture *f = *state;
    struct vigil_curve_pair server, keys[2];
    start_with_curve(f, &server, keys, 2);
    const struct vigil_curve_pair *node = &keys[0], *other = &keys[1];
    struct test_sender real, impostor;
    test_sender_open(&real, f->txd.endpoint, 8, server.public_key, node->public_key,
                     node->secret_key);
    test_sender_open(&impostor, f->txd.endpoint, 9, server.public_key, other->public_key,
                     other->secret_key);
    GBytes *batches[5];
    batches[0] = test_batch_new(8, 1, 3, 0, VIGIL_HEALTH_OK);
    test_sender_send_acked(&real, batches[0], 1);
    batches[1] = test_batch_new(8, 2, 4, 100, VIGIL_HEALTH_ABNORMAL_BAD);
    test_sender_send(&impostor, batches[1]);
    expect_refusal(&impostor, 2, "node 8 belongs to CURVE key");
    batches[2] = test_batch_new(9, 1, 5, 0, VIGIL_HEALTH_OK);
    test_sender_send_acked(&impostor, batches[2], 1);

    /* A new vigil-txd knows the keys from the warehouse. */
    char *log = test_txd_stop(&f->txd);
    test_txd_restart(&f->txd);
    batches[3] = test_batch_new(8, 3, 6, 200, VIGIL_HEALTH_OK);
    test_sender_send(&impostor, batches[3]);
    expect_refusal(&impostor, 3, "node 8 belongs to CURVE key");
    batches[4] = test_batch_new(8, 4, 7, 300, VIGIL_HEALTH_OK);
    test_sender_send_acked(&real, batches[4], 4);

    assert_int_equal(count(f, "SELECT count(*) FROM activities a JOIN processes p USING "
                              "(process_id) WHERE p.node_id = 8"),
                     3 + 7);
    assert_int_equal(count(f, "SELECT count(*) FROM activities a JOIN processes p USING "
                              "(process_id) WHERE p.node_id = 9"),
                     5);
    char *sql = g_strdup_printf("SELECT count(*) FROM node_keys WHERE (node_id, curve_public_key) "
                                "IN ((8, '%s'), (9, '%s'))",
                                node->public_key, other->public_key);
    assert_int_equal(count(f, sql), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM node_keys"), 2);
    char *want = g_strdup_printf("node 8 belongs to CURVE key %s, and this batch came with key %s",
                                 node->public_key, other->public_key);
    test_assert_contains(log, want);
    g_free(log);
    log = test_txd_stop(&f->txd);
    test_assert_contains(log, want);
    test_assert_contains(log, "1 naming another key's node");
    g_free(log);
    g_free(want);
    g_free(sql);
    for (unsigned i = 0; i < G_N_ELEMENTS(batches); i++)
        g_bytes_unref(batches[i]);
    test_sender_close(&real);
    test_sender_close(&impostor);
}

static void test_open_endpoint_without_curve_is_refused(void **state)
{
    struct test_txd_fixture *f = *state;
    char *config_path = g_build_filename(f->dir, "open.conf", NULL);
    char *config = g_strdup_printf("[txd]\nbind = tcp://0.0.0.0:5799\n[warehouse]\nconninfo = %s\n",
                                   f->conninfo);
    assert_true(g_file_set_contents(config_path, config, -1, NULL));
    const char *argv[] = {test_env_or_fail("VIGIL_TXD"), "--foreground", "--config", config_path,
                          NULL};
    char **env = test_clean_environment(NULL);
    struct test_run run = test_run_program(f->dir, argv, env);
    g_strfreev(env);
    test_assert_err(&run, 1, "vigil-txd with an open endpoint and no CURVE",
                    "[txd] bind = tcp://0.0.0.0:5799", "vigil keygen", NULL);
    test_run_clear(&run);
    g_free(config);
    g_free(config_path);
}

/* ---- activity_seconds ---------------------------------------------------------------------- */

#define SECONDS_PROCESSES  3
#define SECONDS_ACTIVITIES 60 /* per process and batch, 60 ms apart: 3.54 s */

/* Node 9's batch `sequence`: SECONDS_PROCESSES processes' activities from
 * `first_ns` on, of two layers and three operations (by i % 6), bytes and
 * durations varying. */
static GBytes *seconds_batch(uint64_t sequence, uint64_t process_start_ns, uint64_t first_ns)
{
    GError *error = NULL;
    vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, 9, sequence, 0);
    test_txd_add_node(batch, 9, sequence, "seconds-node", first_ns, 0);
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, 9, sequence, 0);
    char *argv[] = {"solver", NULL};
    for (unsigned k = 0; k < SECONDS_PROCESSES; k++) {
        struct vigil_wire_process p = {.process_id = k + 1,
                                       .pid = (int32_t)(9000 + k),
                                       .rank = (int32_t)k,
                                       .exit_code = -1,
                                       .start_ns = process_start_ns,
                                       .run_key = "seconds-run",
                                       .job = "",
                                       .program = "/bin/solver",
                                       .cwd = "/tmp",
                                       .argc = 1,
                                       .argv = argv};
        test_txd_check_item(vigil_wire_add_process(w, &p, &error), &error);
    }
    test_txd_add_message(batch, w);
    static const struct {
        uint8_t layer;
        uint16_t op;
    } kinds[] = {{VIGIL_LAYER_POSIX, VIGIL_OP_POSIX_WRITE},
                 {VIGIL_LAYER_POSIX, VIGIL_OP_POSIX_READ},
                 {VIGIL_LAYER_STDIO, VIGIL_OP_STDIO_FWRITE}};
    for (unsigned k = 0; k < SECONDS_PROCESSES; k++) {
        w = vigil_wire_writer_new(VIGIL_WIRE_ACTIVITIES, 9, sequence, k + 1);
        for (uint32_t i = 0; i < SECONDS_ACTIVITIES; i++) {
            uint64_t start_ns = first_ns + i * 60000000u + k * 7000000u;
            struct vigil_activity a = {.record_type = VIGIL_RECORD_ACTIVITY,
                                       .layer = kinds[i % 6 / 2].layer,
                                       .op = kinds[i % 6 / 2].op,
                                       .file_id = VIGIL_FILE_NONE,
                                       .seq = (sequence - 1) * SECONDS_ACTIVITIES + i,
                                       .start_ns = start_ns,
                                       .end_ns = start_ns + 1000u + 17u * i + k,
                                       .offset_bytes = VIGIL_OFFSET_UNKNOWN,
                                       .bytes_asked = 100u * i + k,
                                       .result = 1,
                                       .thread_id = 9000 + k};
            test_txd_check_item(vigil_wire_add_activity(w, &a, &error), &error);
        }
        test_txd_add_message(batch, w);
    }
    return vigil_wire_writer_finish(batch);
}

/* activity_seconds, summed per (node, process, second, layer, operation),
 * equals counting activities by their start_ns: also where two batches
 * brought activities of the same second, and when a batch comes twice. */
static void test_activity_seconds_equal_the_counted_activities(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 9);
    uint64_t now = vigil_clock_monotonic_ns();
    /* The second batch begins 3 s after the first: both have activities
     * in the half second from 3 s to 3.54 s. */
    GBytes *first = seconds_batch(1, now - 30000000000u, now - 20000000000u);
    GBytes *second = seconds_batch(2, now - 30000000000u, now - 17000000000u);
    test_sender_send_acked(&s, first, 1);
    test_sender_send_acked(&s, second, 2);
    test_sender_send_acked(&s, first, 1); /* as a daemon that missed the ack would */
    enum { ALL = 2 * SECONDS_PROCESSES * SECONDS_ACTIVITIES };
    assert_int_equal(count(f, "SELECT count(*) FROM activities"), ALL);
    assert_int_equal(count(f, "SELECT sum(calls) FROM activity_seconds"), ALL);
    assert_int_equal(count(f, "SELECT count(DISTINCT process_id) FROM activity_seconds"),
                     SECONDS_PROCESSES);
    assert_true(count(f, "SELECT count(DISTINCT start_time) FROM activity_seconds") >= 6);
    assert_int_equal(count(f, "SELECT count(DISTINCT layer) FROM activity_seconds"), 2);
    /* Some second of a process came in both batches: two rows to sum. */
    assert_true(count(f, "SELECT count(*) FROM (SELECT 1 FROM activity_seconds GROUP BY "
                         "process_id, start_time, layer, operation HAVING count(*) > 1) x") > 0);
    assert_int_equal(
        count(f, "WITH a AS (SELECT p.node_id, a.process_id, floor(a.start_ns / 1e9)::bigint AS s, "
                 "a.layer, a.operation, count(*) AS calls, coalesce(sum(a.bytes), 0) AS bytes, "
                 "sum(a.duration_ns) AS d FROM activities a JOIN processes p USING (process_id) "
                 "GROUP BY 1, 2, 3, 4, 5), "
                 "c AS (SELECT node_id, process_id, extract(epoch FROM start_time)::bigint AS s, "
                 "layer, operation, sum(calls) AS calls, sum(bytes) AS bytes, "
                 "sum(duration_ns) AS d FROM activity_seconds GROUP BY 1, 2, 3, 4, 5) "
                 "SELECT count(*) FROM a FULL JOIN c USING (node_id, process_id, s, layer, "
                 "operation) WHERE a.calls IS DISTINCT FROM c.calls OR a.bytes IS DISTINCT FROM "
                 "c.bytes OR a.d IS DISTINCT FROM c.d"),
        0);
    g_bytes_unref(first);
    g_bytes_unref(second);
    test_sender_close(&s);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_a_batch_is_stored_then_acknowledged),
             TEST_WITH_TXD_FIXTURE(test_a_nodes_row_is_written_when_new_renamed_or_a_minute_on),
             TEST_WITH_TXD_FIXTURE(test_statistics_are_one_row_a_window_and_shown_exactly),
             TEST_WITH_TXD_FIXTURE(test_a_batch_sent_twice_is_stored_once),
             TEST_WITH_TXD_FIXTURE(test_activity_seconds_equal_the_counted_activities),
             TEST_WITH_TXD_FIXTURE(test_a_reused_sequence_is_stored_and_said),
             TEST_WITH_TXD_FIXTURE(test_a_reused_sequence_of_the_same_cycle_is_refused),
             TEST_WITH_TXD_FIXTURE(test_bad_messages_are_refused_and_the_server_goes_on),
             TEST_WITH_TXD_FIXTURE(test_a_batch_the_database_cannot_take_is_refused_whole),
             TEST_WITH_TXD_FIXTURE(test_a_group_stores_each_batch_once_and_refuses_the_bad_alone),
             TEST_WITH_TXD_FIXTURE(test_a_row_the_database_refuses_in_a_group_copy_is_found),
             TEST_WITH_TXD_FIXTURE(test_the_longest_path_is_stored),
             TEST_WITH_TXD_FIXTURE(test_killed_server_in_a_stream_loses_and_doubles_nothing),
             TEST_WITH_TXD_FIXTURE(test_database_away_for_20_s_loses_and_doubles_nothing),
             TEST_WITH_TXD_FIXTURE(test_the_system_state_reaches_the_daemons),
             TEST_WITH_TXD_FIXTURE(test_a_run_is_its_first_stored_process),
             TEST_WITH_TXD_FIXTURE(test_curve_admits_listed_keys_only),
             TEST_WITH_TXD_FIXTURE(test_a_batch_claiming_another_nodes_id_is_refused),
             TEST_WITH_TXD_FIXTURE(test_open_endpoint_without_curve_is_refused))
