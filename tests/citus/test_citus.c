/* The warehouse on Citus: a coordinator and two workers (tools/pg-private
 * start-citus), the schema migrated with `vigil db migrate --citus`, and two
 * vigil-txd, each serving a group of nodes, storing into it. One job spans
 * the nodes of both groups. The same batches go to a single PostgreSQL
 * server too, and `vigil runs`, `report`, `export`, `advise` must answer
 * the same from both, and the roll-up levels built in C are the same
 * blocks. Every acknowledged batch is stored once, none twice,
 * through a worker's restart and a vigil-txd killed (SIGKILL). Waits are on
 * acknowledgements, never on time. The layout's refusals are named. Under
 * CI a missing Citus is a failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "test_warehouse.h"
#include "test_web.h"

#define WORKERS         2
#define GROUP_NODES     2 /* per vigil-txd */
#define BATCHES         3 /* per node */
#define PROCESSES       2 /* per node */
#define ACTIVITIES      25
#define FILES           3
#define TXD_MORE_CONFIG "retry_max_ms = 200\n"

static struct test_pg citus; /* the Citus cluster; test_pg_cluster is the single server */
static char *dir;            /* the program's folder: the servers' */

static int group_setup(void **state)
{
    (void)state;
    test_pg_start_citus(&citus, WORKERS);
    char *conninfo_option = g_strdup_printf("--conninfo=%s", citus.conninfo);
    struct test_run r = test_vigil("db", "migrate", "--citus", conninfo_option, NULL);
    test_assert_out(&r, 0, "vigil db migrate --citus", "laid out", NULL);
    test_run_clear(&r);
    /* Twice: the second lays out nothing. */
    r = test_vigil("db", "migrate", "--citus", conninfo_option, NULL);
    test_assert_out(&r, 0, "vigil db migrate --citus (again)", "nothing to do", NULL);
    g_free(conninfo_option);
    test_run_clear(&r);
    test_pg_start(&test_pg_cluster);
    dir = g_dir_make_tmp("vigil-citus-txd-XXXXXX", NULL);
    assert_non_null(dir);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    test_pg_cleanup(&citus);
    test_pg_cleanup(&test_pg_cluster);
    if (dir != NULL)
        test_remove_tree(dir);
    g_clear_pointer(&dir, g_free);
    return 0;
}

/* A vigil-txd of its own folder DIR/NAME on `conninfo`; with `citus`, set
 * as on a Citus cluster ([warehouse] distributed = citus: it lays the
 * tables out when it migrates, here finding them laid out). */
static void start_txd_as(struct test_txd *t, const char *name, const char *conninfo,
                         gboolean citus_setting)
{
    char *folder = g_build_filename(dir, name, NULL);
    assert_int_equal(g_mkdir(folder, 0700), 0);
    test_txd_start(t, folder, conninfo,
                   citus_setting ? TXD_MORE_CONFIG "[warehouse]\ndistributed = citus\n"
                                 : TXD_MORE_CONFIG);
    g_free(folder);
}

static void start_txd(struct test_txd *t, const char *name, const char *conninfo)
{
    start_txd_as(t, name, conninfo, FALSE);
}

static guint64 count(const char *conninfo, const char *sql)
{
    return test_pg_query_u64_in(conninfo, sql);
}

/* `vigil WORDS…` on the Citus cluster and on the single server: the same
 * exit status and the same output; returns the single server's. */
static struct test_run same_answer(const char *what, const char *first, const char *second,
                                   const char *third, const char *fourth)
{
    struct test_run on_citus =
        test_run_vigil_on_warehouse(citus.conninfo, first, second, third, fourth, NULL);
    struct test_run on_single =
        test_run_vigil_on_warehouse(test_pg_cluster.conninfo, first, second, third, fourth, NULL);
    if (on_citus.status != on_single.status || strcmp(on_citus.out, on_single.out) != 0)
        fail_msg("%s differs on Citus (status %d):\n%s%s\nand on one server (status %d):\n%s%s",
                 what, on_citus.status, on_citus.out, on_citus.err, on_single.status, on_single.out,
                 on_single.err);
    test_run_clear(&on_citus);
    return on_single;
}

/* vigil-web on each warehouse: the same status and body for each of the
 * run's API paths. */
static void same_web_answers(const char *run_id)
{
    struct test_web on_citus, on_single;
    test_web_startf(&on_citus, dir, "citus",
                    "[warehouse]\nconninfo = %s\n[web]\nlisten = 127.0.0.1:0\n", citus.conninfo);
    test_web_startf(&on_single, dir, "single",
                    "[warehouse]\nconninfo = %s\n[web]\nlisten = 127.0.0.1:0\n",
                    test_pg_cluster.conninfo);
    /* The run's paths after /api/v1/runs/ID; "" is the run itself. */
    static const char *const run_paths[] = {
        "",
        "/files",
        "/windows",
        "/heatmap?bins=20",
        "/series?metric=io_bytes&points=10",
        "/series?metric=cpu&points=12",
        "/series?metric=memory&points=12&format=csv",
    };
    /* Not /api/v1/nodes: its first_seen and last_seen are each server's
     * clock when the batch came. */
    static const char *const other_paths[] = {"/api/v1/runs", "/api/v1/anomalies"};
    enum { RUN_PATHS = G_N_ELEMENTS(run_paths) };
    for (size_t i = 0; i < RUN_PATHS + G_N_ELEMENTS(other_paths); i++) {
        char *path = i < RUN_PATHS ? g_strconcat("/api/v1/runs/", run_id, run_paths[i], NULL)
                                   : g_strdup(other_paths[i - RUN_PATHS]);
        struct test_http a = test_web_get(&on_citus, path, NULL);
        struct test_http b = test_web_get(&on_single, path, NULL);
        if (a.status != b.status || g_strcmp0(a.body, b.body) != 0)
            fail_msg("GET %s differs on Citus (%u):\n%s\nand on one server (%u):\n%s", path,
                     a.status, a.body, b.status, b.body);
        assert_int_equal(a.status, 200);
        test_http_clear(&a);
        test_http_clear(&b);
        g_free(path);
    }
    test_web_stop(&on_citus);
    test_web_stop(&on_single);
}

/* Nodes 11, 12 (first vigil-txd) and 21, 22 (second) run one job's ranks;
 * each batch goes to its group's vigil-txd on Citus and to one vigil-txd on
 * the single server, in the same order (one batch at a time: the ids made
 * by sequences then match). */
static void test_the_same_answers_as_one_server(void **state)
{
    (void)state;
    struct test_txd groups[2], single;
    start_txd(&groups[0], "same-a", citus.conninfo);
    start_txd(&groups[1], "same-b", citus.conninfo);
    start_txd(&single, "same-single", test_pg_cluster.conninfo);
    enum { NODES = 2 * GROUP_NODES };
    /* Every process's report: dd's under `vigil run`, with its file (file_stats too). */
    char *report_path = g_build_filename(dir, "report.json", NULL);
    char *report_option = g_strdup_printf("--report=json:%s", report_path);
    char *out = g_build_filename(dir, "dd.out", NULL);
    char *of = g_strdup_printf("of=%s", out);
    struct test_run dd =
        test_vigil("run", report_option, "--", "dd", "if=/dev/zero", of, "bs=4k", "count=16", NULL);
    test_assert_status(&dd, 0, "vigil run -- dd");
    test_run_clear(&dd);
    char *report = test_read_file(report_path);
    g_free(of);
    g_free(out);
    g_free(report_option);
    g_free(report_path);
    struct test_sender to_citus[NODES], to_single[NODES];
    uint64_t node_ids[NODES];
    for (unsigned n = 0; n < NODES; n++) {
        node_ids[n] = 10 * (1 + n / GROUP_NODES) + 1 + n % GROUP_NODES;
        test_sender_open(&to_citus[n], groups[n / GROUP_NODES].endpoint, node_ids[n], NULL, NULL,
                         NULL);
        test_sender_open(&to_single[n], single.endpoint, node_ids[n], NULL, NULL, NULL);
    }
    for (uint64_t seq = 1; seq <= BATCHES; seq++)
        for (unsigned n = 0; n < NODES; n++) {
            struct test_batch_spec spec = {.node = node_ids[n],
                                           .sequence = seq,
                                           .run_key = "citus-job",
                                           .job = "5151",
                                           .processes = PROCESSES,
                                           .ended = seq == BATCHES,
                                           .report = report,
                                           .activities = ACTIVITIES,
                                           .first_seq = (seq - 1) * ACTIVITIES,
                                           .files = FILES,
                                           .start_step_ns = 1000};
            GBytes *batch = test_batch_new_from(&spec);
            test_sender_send_acked(&to_citus[n], batch, seq);
            test_sender_send_acked(&to_single[n], batch, seq);
            g_bytes_unref(batch);
        }
    for (unsigned n = 0; n < NODES; n++) {
        test_sender_close(&to_citus[n]);
        test_sender_close(&to_single[n]);
    }
    g_free(report);
    g_free(test_txd_stop(&groups[0]));
    g_free(test_txd_stop(&groups[1]));
    g_free(test_txd_stop(&single));

    /* The same rows… */
    static const char *const counts[] = {
        "SELECT count(*) FROM nodes",
        "SELECT count(*) FROM processes",
        "SELECT count(*) FROM activities",
        "SELECT count(*) FROM statistics_rollups",
        "SELECT count(*) FROM window_statistics",
        "SELECT count(*) FROM ingested_batches",
        "SELECT count(*) FROM files",
        "SELECT count(*) FROM run_summaries",
        "SELECT count(*) FROM file_stats",
        "SELECT processes FROM run_overview WHERE run_key = 'citus-job'",
        "SELECT nodes FROM run_overview WHERE run_key = 'citus-job'",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
        assert_int_equal(count(citus.conninfo, counts[i]),
                         count(test_pg_cluster.conninfo, counts[i]));
    assert_int_equal(count(citus.conninfo, counts[1]), NODES * PROCESSES);
    assert_int_equal(count(citus.conninfo, counts[2]), NODES * BATCHES * ACTIVITIES);
    /* vigil-web's files of a run (run_files, migration 17's merge of the
     * common values) the same on Citus, where file_stats is a reference
     * table. */
    static const char run_files_sql[] =
        "SELECT count(*) || ' ' || md5(string_agg(concat_ws(' ', path, reports, calls,"
        " common_sizes, common_strides, size_bins_upper_inclusive, posix_rw_switches), ';'"
        " ORDER BY path)) FROM run_files";
    char *files_citus = test_pg_query_text_in(citus.conninfo, run_files_sql);
    char *files_single = test_pg_query_text_in(test_pg_cluster.conninfo, run_files_sql);
    assert_string_equal(files_citus, files_single);
    assert_false(g_str_has_prefix(files_citus, "0 "));
    g_free(files_citus);
    g_free(files_single);
    /* …spread over both workers… */
    assert_int_equal(count(citus.conninfo, "SELECT count(DISTINCT nodename) FROM citus_shards "
                                           "WHERE table_name = 'activities'::regclass"),
                     WORKERS);
    /* …and the same answers. */
    struct test_run r = same_answer("vigil runs", "runs", NULL, NULL, NULL);
    test_assert_out(&r, 0, "vigil runs", "citus-job", NULL);
    test_run_clear(&r);
    r = same_answer("vigil report", "report", "citus-job", NULL, NULL);
    test_assert_out(&r, 0, "vigil report", "dd", "written", NULL);
    test_run_clear(&r);
    static const char *const exports[] = {"power", "statistics", "activities"};
    for (size_t i = 0; i < G_N_ELEMENTS(exports); i++) {
        char *what = g_strdup_printf("--what=%s", exports[i]);
        r = same_answer(what, "export", what, "citus-job", NULL);
        /* The test metrics are no energy: power has its header alone. */
        test_assert_out(&r, 0, "vigil export", i == 0 ? "power_w" : "node-22", NULL);
        test_run_clear(&r);
        r = same_answer(what, "export", what, "--format=json", "citus-job");
        test_assert_status(&r, 0, "vigil export --format=json");
        test_run_clear(&r);
        g_free(what);
    }
    r = same_answer("vigil advise", "advise", "citus-job", NULL, NULL);
    test_run_clear(&r);
    static const char run_id_sql[] = "SELECT run_id FROM runs WHERE run_key = 'citus-job'";
    guint64 run_id = count(citus.conninfo, run_id_sql);
    assert_int_equal(run_id, count(test_pg_cluster.conninfo, run_id_sql));
    char *run_id_text = g_strdup_printf("%" G_GUINT64_FORMAT, run_id);
    same_web_answers(run_id_text);
    g_free(run_id_text);
    test_txd_clear(&groups[0]);
    test_txd_clear(&groups[1]);
    test_txd_clear(&single);
}

/* Batch `seq` of `node` in the fault test's run. */
static GBytes *fault_batch(uint64_t node, uint64_t seq)
{
    struct test_batch_spec spec = {.node = node,
                                   .sequence = seq,
                                   .run_key = "citus-faults",
                                   .job = "5152",
                                   .processes = PROCESSES,
                                   .activities = ACTIVITIES,
                                   .first_seq = (seq - 1) * ACTIVITIES,
                                   .files = FILES,
                                   .start_step_ns = 1000};
    return test_batch_new_from(&spec);
}

#define FAULT_NODES "node_id IN (31, 32, 41, 42)"

/* The roll-up levels built in C (binary COPY out of and into distributed
 * tables, through the coordinator) are the single server's, element for
 * element: roll-ups of two days ago of two nodes (not in `nodes`), a
 * gauge and a counter, built again from nothing by `vigil db maintain` on
 * each. */
static void test_the_same_levels_as_one_server(void **state)
{
    (void)state;
    static const char rollups[] =
        "SELECT vigil_day_partition('statistics_rollup_arrays',"
        " (now() AT TIME ZONE 'UTC')::date - 2);"
        "INSERT INTO metric_sets (metric_set_id, metric_ids) VALUES (9101, '{9001,9002}');"
        "INSERT INTO statistics_rollup_arrays SELECT n, 9101, t, t + interval '1 s',"
        " ARRAY[8, 9 + s % 2], ARRAY[s % 7, 1.5], ARRAY[s % 7 + 0.5, 2], ARRAY[s % 7 + 1, 2.5],"
        " ARRAY[NULL, s * 0.25]::float8[], B'00'"
        " FROM unnest(ARRAY[91, 92]) n, generate_series(0, 1799) s,"
        " LATERAL (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'"
        "  - interval '2 days' + interval '3 hours' + s * interval '1 s' + n * interval '0.5 s'"
        "  AS t) x WHERE s % 13 <> 4;"
        "UPDATE statistics_levels SET built_until = NULL";
    static const char blocks_sql[] =
        "SELECT count(*) || ' ' || md5(string_agg((node_id, metric_id, level_s, block_start,"
        " samples, seconds, min, mean, max, delta, rate_min, rate_max)::text, ';'"
        " ORDER BY node_id, metric_id, level_s, block_start))"
        " FROM statistics_level_blocks WHERE node_id IN (91, 92)";
    const char *conninfos[] = {citus.conninfo, test_pg_cluster.conninfo};
    char *blocks[2];
    for (unsigned i = 0; i < 2; i++) {
        test_pg_exec_in(conninfos[i], rollups);
        struct test_run r = test_run_vigil_on_warehouse(conninfos[i], "db", "maintain", NULL);
        test_assert_out(&r, 0, "vigil db maintain", "the levels are up to date", NULL);
        test_run_clear(&r);
        blocks[i] = test_pg_query_text_in(conninfos[i], blocks_sql);
    }
    /* 2 nodes × 2 metrics: four 5 s blocks of 10 min (03:00 to 03:40), one 60 s block. */
    test_assert_contains(blocks[1], "20 ");
    assert_string_equal(blocks[0], blocks[1]);
    g_free(blocks[0]);
    g_free(blocks[1]);
}

/* Nodes 31, 32 on the first vigil-txd, 41, 42 on the second. Batch 1
 * stored; batch 2 sent, and a worker restarted meanwhile; batch 3 sent to
 * the first vigil-txd, which is killed at once, started again, and sent
 * batches 2 (stored already) and 3 again, as vigild resends what it has no
 * acknowledgement of. */
static void test_exactly_once_through_a_worker_restart_and_a_txd_kill(void **state)
{
    (void)state;
    struct test_txd groups[2];
    start_txd(&groups[0], "faults-a", citus.conninfo);
    start_txd_as(&groups[1], "faults-b", citus.conninfo, TRUE);
    enum { NODES = 2 * GROUP_NODES };
    struct test_sender senders[NODES];
    uint64_t node_ids[NODES];
    for (unsigned n = 0; n < NODES; n++) {
        node_ids[n] = 10 * (3 + n / GROUP_NODES) + 1 + n % GROUP_NODES;
        test_sender_open(&senders[n], groups[n / GROUP_NODES].endpoint, node_ids[n], NULL, NULL,
                         NULL);
    }
    GBytes *batches[NODES][4];
    for (unsigned n = 0; n < NODES; n++)
        for (uint64_t seq = 1; seq <= 3; seq++)
            batches[n][seq] = fault_batch(node_ids[n], seq);
    for (unsigned n = 0; n < NODES; n++)
        test_sender_send_acked(&senders[n], batches[n][1], 1);

    for (unsigned n = 0; n < NODES; n++)
        test_sender_send(&senders[n], batches[n][2]);
    test_pg_restart_citus_worker(&citus, 1);
    for (unsigned n = 0; n < NODES; n++)
        test_sender_expect_ack(&senders[n], 2);

    for (unsigned n = 0; n < GROUP_NODES; n++)
        test_sender_send(&senders[n], batches[n][3]);
    g_free(test_txd_kill(&groups[0]));
    /* A new connection, as a vigild's after its server went away: no
     * acknowledgement of the killed server's can reach it. */
    for (unsigned n = 0; n < GROUP_NODES; n++)
        test_sender_close(&senders[n]);
    test_txd_restart(&groups[0]);
    for (unsigned n = 0; n < NODES; n++) {
        if (n < GROUP_NODES)
            test_sender_open(&senders[n], groups[0].endpoint, node_ids[n], NULL, NULL, NULL);
        test_sender_send_acked(&senders[n], batches[n][2], 2);
        test_sender_send_acked(&senders[n], batches[n][3], 3);
    }

    assert_int_equal(
        count(citus.conninfo, "SELECT count(*) FROM ingested_batches WHERE " FAULT_NODES),
        NODES * 3);
    assert_int_equal(
        count(citus.conninfo,
              "SELECT count(*) FROM activities a JOIN processes p USING (process_id) WHERE p."
              "node_id IN (31, 32, 41, 42)"),
        NODES * 3 * ACTIVITIES);
    assert_int_equal(count(citus.conninfo,
                           "SELECT count(*) FROM (SELECT process_id, seq FROM activities GROUP BY "
                           "1, 2 HAVING count(*) > 1) AS doubled"),
                     0);
    assert_int_equal(
        count(citus.conninfo, "SELECT count(*) FROM statistics_rollups WHERE " FAULT_NODES),
        NODES * 3 * 2);
    assert_int_equal(
        count(citus.conninfo, "SELECT count(*) FROM window_statistics WHERE " FAULT_NODES),
        NODES * 3);
    assert_int_equal(count(citus.conninfo, "SELECT count(*) FROM processes WHERE " FAULT_NODES),
                     NODES * PROCESSES);
    assert_int_equal(count(citus.conninfo, "SELECT processes FROM run_overview WHERE run_key = "
                                           "'citus-faults'"),
                     NODES * PROCESSES);
    for (unsigned n = 0; n < NODES; n++) {
        test_sender_close(&senders[n]);
        for (uint64_t seq = 1; seq <= 3; seq++)
            g_bytes_unref(batches[n][seq]);
    }
    g_free(test_txd_stop(&groups[0]));
    g_free(test_txd_stop(&groups[1]));
    test_txd_clear(&groups[0]);
    test_txd_clear(&groups[1]);
}

/* uplink_drops and processes are reference tables whose triggers keep each
 * node's copy of processes.uplink_dropped_activities from its own copy of
 * uplink_drops: a drop recorded before its process and one after, summed
 * on every placement. */
static void test_uplink_drops_reach_every_copy_of_processes(void **state)
{
    (void)state;
    test_pg_exec_in(citus.conninfo,
                    "INSERT INTO nodes (node_id, hostname) VALUES (51, 'node-51');"
                    "INSERT INTO uplink_drops (node_id, pid, start_monotonic_ns, counter, "
                    "activities, batches) VALUES (51, 5100, 77, 1, 7, 1);"
                    "INSERT INTO runs (run_key, program, argv, uid, start_time) VALUES "
                    "('citus-drops', '/bin/x', '{}', 0, now());"
                    "INSERT INTO processes (run_id, node_id, pid, uid, program, argv, cwd, "
                    "start_time, start_monotonic_ns) SELECT run_id, 51, 5100, 0, '/bin/x', '{}', "
                    "'/', now(), 77 FROM runs WHERE run_key = 'citus-drops';"
                    "INSERT INTO uplink_drops (node_id, pid, start_monotonic_ns, counter, "
                    "activities, batches) VALUES (51, 5100, 77, 2, 3, 1)");
    assert_int_equal(
        count(citus.conninfo, "SELECT uplink_dropped_activities FROM processes WHERE node_id = 51"),
        10);
    /* The coordinator's copy and each worker's. */
    assert_int_equal(count(citus.conninfo,
                           "SELECT count(*) FROM run_command_on_placements('processes', "
                           "'SELECT uplink_dropped_activities FROM %s WHERE node_id = 51') "
                           "WHERE success AND result = '10'"),
                     1 + WORKERS);
}

/* `vigil db migrate` with a configuration of [warehouse] conninfo and
 * distributed = citus. */
static struct test_run migrate_by_setting(const char *conninfo)
{
    char *config = test_new_filef(dir, "citus.conf",
                                  "[warehouse]\nconninfo = %s\ndistributed = citus\n", conninfo);
    char *option = g_strdup_printf("--config=%s", config);
    struct test_run r = test_vigil("db", "migrate", option, NULL);
    g_free(option);
    g_free(config);
    return r;
}

/* What the layout refuses, each with a clear error: a database without
 * Citus, a table without a row in the layout, --citus on another action. */
static void test_the_layout_refuses_what_it_cannot_lay_out(void **state)
{
    (void)state;
    struct test_run r = migrate_by_setting(test_pg_cluster.conninfo);
    test_assert_err(&r, 1, "vigil db migrate on one server with distributed = citus",
                    "the database has no Citus", "CREATE EXTENSION citus", NULL);
    test_run_clear(&r);

    test_pg_exec_in(citus.conninfo, "CREATE TABLE unplaced (x integer)");
    r = migrate_by_setting(citus.conninfo);
    test_assert_err(&r, 1, "vigil db migrate with a table the layout lacks",
                    "table unplaced has no place in the Citus layout",
                    "warehouse/warehouse_citus.c", NULL);
    test_run_clear(&r);
    test_pg_exec_in(citus.conninfo, "DROP TABLE unplaced");
    r = migrate_by_setting(citus.conninfo);
    test_assert_out(&r, 0, "vigil db migrate by the setting", "nothing to do", NULL);
    test_run_clear(&r);

    char *conninfo_option = g_strdup_printf("--conninfo=%s", citus.conninfo);
    r = test_vigil("db", "version", "--citus", conninfo_option, NULL);
    test_assert_err(&r, 2, "vigil db version --citus", "--citus is migrate's", NULL);
    test_run_clear(&r);
    g_free(conninfo_option);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_same_answers_as_one_server),
        cmocka_unit_test(test_the_same_levels_as_one_server),
        cmocka_unit_test(test_exactly_once_through_a_worker_restart_and_a_txd_kill),
        cmocka_unit_test(test_uplink_drops_reach_every_copy_of_processes),
        cmocka_unit_test(test_the_layout_refuses_what_it_cannot_lay_out),
    };
    if (!test_pg_available())
        return test_skip_program(TEST_PG_MISSING);
    if (!test_pg_citus_available())
        return test_skip_program(TEST_PG_CITUS_MISSING);
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
