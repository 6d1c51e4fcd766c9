/* A node id claimed first by another key: every batch of the real node is
 * refused and kept aside, "not sent again". vigil status says so, with
 * vigil-txd's reason; `vigil node keys` shows the claim and the refusals,
 * `vigil node keys --forget` undoes the claim, and `vigil spool resend`
 * sends what was refused again: every write is then stored.
 *
 * vigil-txd runs with CURVE, admitting two keys: the real node's and an
 * impostor's (a synthetic daemon, test_sender), which sends a batch as the
 * real node's id before the real node ever does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <json-glib/json-glib.h>

#include "vigil/curve.h"
#include "vigil/health.h"
#include "vigil/wire.h"
#include "test_daemon.h"
#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "writer.h"

#define NODE_ID     4242
#define WRITES      1000
#define DEADLINE_US (120 * G_USEC_PER_SEC)
#define POLL_US     20000

struct keys {
    struct vigil_curve_pair server, node, impostor;
    char *node_path;
};

static void make_keys(const char *dir, struct keys *k, char **txd_config)
{
    char *server_path = g_build_filename(dir, "txd.key", NULL);
    char *impostor_path = g_build_filename(dir, "impostor.key", NULL);
    char *authorized = g_build_filename(dir, "authorized", NULL);
    k->node_path = g_build_filename(dir, "node.key", NULL);
    GError *error = NULL;
    assert_true(vigil_curve_keygen(server_path, &k->server, &error));
    assert_true(vigil_curve_keygen(k->node_path, &k->node, &error));
    assert_true(vigil_curve_keygen(impostor_path, &k->impostor, &error));
    char *list = g_strdup_printf("%s\n%s\n", k->node.public_key, k->impostor.public_key);
    assert_true(g_file_set_contents(authorized, list, -1, NULL));
    *txd_config = g_strdup_printf("curve_key_file = %s\ncurve_authorized_keys = %s\n", server_path,
                                  authorized);
    g_free(list);
    g_free(authorized);
    g_free(impostor_path);
    g_free(server_path);
}

static JsonObject *uplink_of(JsonNode *status)
{
    return json_object_get_object_member(json_node_get_object(status), "uplink");
}

/* Waits until vigild has refused batches and has none waiting: everything
 * it made so far was refused and kept aside. */
static void wait_for_refused(const struct test_daemon *d)
{
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    for (;;) {
        JsonNode *status = test_daemon_status(d, 0);
        JsonObject *u = uplink_of(status);
        gint64 refused = json_object_get_int_member(u, "refused");
        gint64 unacked = json_object_get_int_member(u, "unacked");
        json_node_unref(status);
        if (refused > 0 && unacked == 0)
            return;
        if (g_get_monotonic_time() > deadline)
            fail_msg("vigild has %" G_GINT64_FORMAT " batches refused, %" G_GINT64_FORMAT
                     " waiting",
                     refused, unacked);
        g_usleep(POLL_US); /* polling a condition, with a deadline */
    }
}

static void test_a_claimed_node_id_is_seen_fixed_and_resent(void **state)
{
    struct test_txd_fixture *f = *state;
    struct keys k;
    char *txd_config;
    make_keys(f->dir, &k, &txd_config);
    test_txd_start(&f->txd, f->dir, f->conninfo, txd_config);

    /* The impostor claims the real node's id first. */
    struct test_sender impostor;
    test_sender_open(&impostor, f->txd.endpoint, NODE_ID, k.server.public_key,
                     k.impostor.public_key, k.impostor.secret_key);
    GBytes *claim = test_batch_new(NODE_ID, 1, 1, 0, VIGIL_HEALTH_OK);
    test_sender_send_acked(&impostor, claim, 1);

    char *uplink = g_strdup_printf("node_id = %d\ncurve_server_key = %s\ncurve_key_file = %s\n",
                                   NODE_ID, k.server.public_key, k.node_path);
    char *config = writer_daemon_config(f, NULL, uplink);
    struct test_daemon d;
    test_daemon_start(&d, f->dir, WRITER_DAEMON_LINES, config);
    struct writer w;
    writer_start(&w, &d, f->dir, WRITES, 0, NULL);
    writer_finish(&w);
    json_node_unref(test_daemon_status(&d, w.pid));
    writer_wait_for_drained(&d, w.pid, WRITES);
    wait_for_refused(&d);
    print_message("before: %" G_GUINT64_FORMAT " of %d writes stored\n",
                  writer_writes_stored(f->conninfo, w.pid), WRITES);
    assert_int_equal(writer_writes_stored(f->conninfo, w.pid), 0);

    /* vigil status says batches are refused, and why. */
    JsonNode *status = test_daemon_status(&d, 0);
    const char *reason = json_object_get_string_member(uplink_of(status), "last_refusal");
    assert_non_null(reason);
    test_assert_contains(reason, "belongs to CURVE key");
    assert_true(json_object_get_int_member(uplink_of(status), "refused_kept") > 0);
    json_node_unref(status);
    struct test_run run = test_daemon_vigil(&d, (const char *[]){"status", NULL});
    test_assert_out(&run, 0, "vigil status", "refused by vigil-txd", "vigil spool resend", NULL);
    test_run_clear(&run);

    /* vigil node keys: the claim, and the refusals it caused. */
    run = test_daemon_vigil(&d, (const char *[]){"node", "keys", NULL});
    test_assert_status(&run, 0, "vigil node keys");
    char *row = g_strdup_printf("%d", NODE_ID);
    test_assert_contains(run.out, row);
    test_assert_contains(run.out, k.impostor.public_key);
    test_assert_contains(run.out, k.node.public_key); /* the refused key */
    test_run_clear(&run);
    run = test_daemon_vigil(&d, (const char *[]){"node", "keys", "--forget", row, NULL});
    test_assert_status(&run, 0, "vigil node keys --forget");
    test_run_clear(&run);
    /* Gone; the node's next batch may have claimed the id already, with
     * its own key. */
    assert_int_equal(
        test_pg_query_u64_printf(f->conninfo,
                                 "SELECT count(*) FROM node_keys WHERE node_id = %d AND "
                                 "curve_public_key = '%s'",
                                 NODE_ID, k.impostor.public_key),
        0);

    /* Sent again, everything is stored. */
    run = test_daemon_vigil(&d, (const char *[]){"spool", "resend", NULL});
    test_assert_status(&run, 0, "vigil spool resend");
    test_run_clear(&run);
    writer_wait_for_report(f->conninfo, f->dir, w.pid);
    guint64 stored = writer_writes_stored(f->conninfo, w.pid);
    print_message("after: %" G_GUINT64_FORMAT " of %d writes stored\n", stored, WRITES);
    assert_int_equal(stored, WRITES);
    assert_int_equal(
        test_pg_query_u64_printf(f->conninfo,
                                 "SELECT count(*) FROM node_keys WHERE node_id = %d AND "
                                 "curve_public_key = '%s'",
                                 NODE_ID, k.node.public_key),
        1);

    /* --set writes a node's key (its refusals start again); a key that is
     * not one is refused by name. */
    run = test_daemon_vigil(&d,
                            (const char *[]){"node", "keys", "--set", row, "--key", "short", NULL});
    test_assert_err(&run, 2, "vigil node keys --set with a bad key", "--key", NULL);
    test_run_clear(&run);
    run = test_daemon_vigil(
        &d, (const char *[]){"node", "keys", "--set", row, "--key", k.impostor.public_key, NULL});
    test_assert_status(&run, 0, "vigil node keys --set");
    test_run_clear(&run);
    run = test_daemon_vigil(&d, (const char *[]){"node", "keys", "--format", "json", NULL});
    test_assert_status(&run, 0, "vigil node keys --format json");
    char *member = g_strdup_printf("\"curve_public_key\" : \"%s\"", k.impostor.public_key);
    test_assert_contains(run.out, member);
    test_assert_contains(run.out, "\"refused_batches\" : 0");
    test_run_clear(&run);
    g_free(member);
    g_free(test_daemon_stop(&d));
    test_sender_close(&impostor);
    g_bytes_unref(claim);
    g_free(row);
    g_free(config);
    g_free(uplink);
    g_free(txd_config);
    g_free(k.node_path);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_a_claimed_node_id_is_seen_fixed_and_resent))
