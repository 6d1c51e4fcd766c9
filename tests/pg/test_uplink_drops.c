/* Drops after the ring are counted and reach the warehouse: a program
 * writes 100,000 times while vigil-txd is down and vigild's spool may hold
 * 1 MiB, so its oldest batches are dropped for the newest; vigil-txd
 * starts, the program exits. Every activity vigild forwarded is then
 * either stored or counted as dropped: in `vigil status` (for the process,
 * and the node's total) and, carried by a later batch, in the warehouse
 * (processes, run_overview) and `vigil report`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <json-glib/json-glib.h>

#include "test_daemon.h"
#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "writer.h"

#define WRITES      100000
#define PACE_US     20000 /* between chunks of 1,000 writes: 2 s in all */
#define DEADLINE_US (120 * G_USEC_PER_SEC)
#define POLL_US     20000

static gint64 member_or_zero(JsonObject *o, const char *name)
{
    return o != NULL && json_object_has_member(o, name) ? json_object_get_int_member(o, name) : 0;
}

/* The writer's figures in `vigil status`: what capture forwarded, and what
 * the uplink says it dropped of them. */
static void status_figures(const struct test_daemon *d, GPid pid, gint64 *forwarded,
                           gint64 *dropped, gint64 *node_dropped)
{
    JsonNode *status = test_daemon_status(d, 0);
    JsonObject *p = test_daemon_process(status, pid);
    assert_non_null(p);
    *forwarded =
        json_object_get_int_member(json_object_get_object_member(p, "capture"), "forwarded");
    *dropped = member_or_zero(p, "uplink_dropped_activities");
    JsonObject *uplink = json_object_get_object_member(json_node_get_object(status), "uplink");
    *node_dropped = member_or_zero(uplink, "dropped_activities");
    json_node_unref(status);
}

static void test_drops_after_the_ring_are_counted(void **state)
{
    struct test_txd_fixture *f = *state;
    char *config =
        writer_daemon_config(f, NULL, "spool_max_bytes = 1048576\nmemory_max_bytes = 0\n");
    struct test_daemon d;
    test_daemon_start(&d, f->dir, WRITER_DAEMON_LINES, config);
    struct writer w;
    writer_start_paced(&w, &d, f->dir, WRITES, 0, PACE_US, NULL);
    writer_wait_for_drained(&d, w.pid, WRITES);
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    writer_wait_for_all_sent(&d);
    writer_finish(&w);
    json_node_unref(test_daemon_status(&d, w.pid));
    writer_wait_for_report(f->conninfo, f->dir, w.pid);
    writer_wait_for_all_sent(&d);

    gint64 forwarded, dropped, node_dropped;
    status_figures(&d, w.pid, &forwarded, &dropped, &node_dropped);
    guint64 stored = test_pg_query_u64_printf(
        f->conninfo,
        "SELECT count(*) FROM activities JOIN processes USING (process_id) WHERE pid = %d",
        (int)w.pid);
    print_message("forwarded %" G_GINT64_FORMAT ", stored %" G_GUINT64_FORMAT
                  ", dropped after the ring as vigil status says %" G_GINT64_FORMAT
                  " (node: %" G_GINT64_FORMAT ")\n",
                  forwarded, stored, dropped, node_dropped);
    assert_true(stored < (guint64)forwarded); /* the bound did drop */
    assert_int_equal(stored + (guint64)dropped, forwarded);
    assert_true(node_dropped >= dropped);
    /* Carried by a later batch to the warehouse: the process, its run. */
    assert_int_equal(
        test_pg_query_u64_printf(f->conninfo,
                                 "SELECT uplink_dropped_activities FROM processes WHERE pid = %d",
                                 (int)w.pid),
        dropped);
    assert_int_equal(test_pg_query_u64_printf(f->conninfo,
                                              "SELECT uplink_dropped_activities FROM run_overview "
                                              "WHERE run_key = 'restart'"),
                     dropped);
    /* `vigil report` says what its stored report, written at exit, could
     * not. */
    char *line = g_strdup_printf("UPLINK_LOST_ACTIVITIES     %" G_GINT64_FORMAT " (", dropped);
    struct test_run run = test_run_vigil(
        NULL, "report", (const char *[]){"restart", "--config", d.config_path, NULL});
    test_assert_out(&run, 0, "vigil report", line, NULL);
    test_run_clear(&run);
    char *member = g_strdup_printf("\"uplink_lost_activities\":%" G_GINT64_FORMAT, dropped);
    run = test_run_vigil(
        NULL, "report",
        (const char *[]){"restart", "--config", d.config_path, "--format", "json", NULL});
    test_assert_out(&run, 0, "vigil report --format json", member, NULL);
    test_run_clear(&run);
    g_free(member);
    g_free(line);
    g_free(test_daemon_stop(&d));
    g_free(config);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_drops_after_the_ring_are_counted))
