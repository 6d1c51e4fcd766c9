/* More than one node: three vigild on this machine, each a node of its own
 * (node id, host name, socket, spool folder, CURVE key pair from `vigil
 * keygen`), send over TCP on loopback with CURVE to one vigil-txd that
 * admits only their three keys. One job spans them: dd under each node's
 * vigild with the same run key and SLURM_JOB_ID. The warehouse must hold
 * each node's processes, activities and statistics once (counted against
 * what dd and each vigild say), one run with the three nodes' processes,
 * and vigil-txd's system reasoner must have counted three nodes. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "test_daemon.h"
#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "vigil/ontology.h"

#define NODES       3
#define RUN_KEY     "multinode-run"
#define JOB         "7014"
#define BLOCK_BYTES 4096

struct node {
    const char *hostname;
    guint64 node_id;
    int blocks; /* dd's writes: a different count on each node */
    char *dir;
    char *public_key;
    struct test_daemon daemon;
    pid_t pid;
};

static struct node nodes[NODES] = {
    {.hostname = "node-a", .node_id = 1401, .blocks = 120},
    {.hostname = "node-b", .node_id = 1402, .blocks = 240},
    {.hostname = "node-c", .node_id = 1403, .blocks = 360},
};

/* `vigil keygen PATH`; the public key it wrote to PATH.pub (g_free it). */
static char *keygen(const char *path)
{
    struct test_run run = test_run_vigil(NULL, "keygen", (const char *[]){path, NULL});
    test_assert_status(&run, 0, "vigil keygen");
    test_run_clear(&run);
    char *pub_path = g_strconcat(path, ".pub", NULL);
    char *text = test_read_file(pub_path);
    g_free(pub_path);
    g_strstrip(text);
    assert_int_equal(strlen(text), 40);
    return text;
}

static gboolean file_contains(const char *path, const char *needle)
{
    char *text = NULL;
    gboolean found = g_file_get_contents(path, &text, NULL, NULL) && strstr(text, needle) != NULL;
    g_free(text);
    return found;
}

static char *query_text(const char *conninfo, const char *sql)
{
    char *text = test_pg_query_text_in(conninfo, sql);
    assert_non_null(text);
    return text;
}

/* dd writing `n->blocks` blocks under the node's vigild, in the job; its
 * pid. */
static void run_dd(struct node *n)
{
    char *report_var = g_strdup_printf("VIGIL_REPORT=%s/report.txt", n->dir);
    const char *vars[] = {report_var, "VIGIL_RUN_ID=" RUN_KEY, "SLURM_JOB_ID=" JOB, NULL};
    char **env = test_daemon_preload_env(&n->daemon, vars);
    char *of = g_strdup_printf("of=%s/dd.out", n->dir);
    char *count = g_strdup_printf("count=%d", n->blocks);
    const char *argv[] = {
        "/bin/sh", "-c",  "echo $$; exec dd if=/dev/zero \"$0\" bs=4096 \"$1\" status=none",
        of,        count, NULL};
    struct test_run run = test_run_program(n->dir, argv, env);
    test_assert_status(&run, 0, "dd under vigild");
    n->pid = (pid_t)g_ascii_strtoll(run.out, NULL, 10);
    assert_true(n->pid > 0);
    test_run_clear(&run);
    g_strfreev(env);
    g_free(count);
    g_free(of);
    g_free(report_var);
}

/* The node's process in the warehouse: its activities are those vigild
 * drained, each once; its writes are dd's; its summary is dd's report. */
static void check_process(const char *conninfo, const struct node *n)
{
    /* The pid ran sh, then dd (exec): two programs, two processes. */
    char *where = g_strdup_printf("p.node_id = %" G_GUINT64_FORMAT
                                  " AND p.pid = %d AND p.program ~ '(^|/)dd$'",
                                  n->node_id, (int)n->pid);
    char *summary = g_strdup_printf("SELECT count(*) FROM run_summaries JOIN processes p "
                                    "USING (process_id) WHERE %s AND p.end_time IS NOT NULL",
                                    where);
    test_pg_wait_for_count_in(conninfo, summary, 1);
    g_free(summary);
    assert_int_equal(
        test_pg_query_u64_printf(conninfo, "SELECT count(*) FROM processes p WHERE %s", where), 1);

    JsonNode *status = test_daemon_status(&n->daemon, n->pid);
    JsonObject *process = test_daemon_process(status, n->pid);
    assert_non_null(process);
    gint64 drained = test_daemon_json_int(process, "activities", NULL);
    assert_int_equal(test_daemon_json_int(process, "dropped", NULL), 0);
    if (drained < n->blocks) {
        JsonNode *node = json_node_init_object(json_node_alloc(), process);
        char *text = json_to_string(node, FALSE);
        fail_msg("%s: vigild drained %" G_GINT64_FORMAT " activities of pid %d, fewer than dd's "
                 "%d writes: %s",
                 n->hostname, drained, (int)n->pid, n->blocks, text);
    }
    /* Every activity vigild drained (capture keeps all), each once. */
    assert_int_equal(test_pg_query_u64_printf(
                         conninfo,
                         "SELECT count(*) FROM activities JOIN processes p USING (process_id) "
                         "WHERE %s",
                         where),
                     drained);
    assert_int_equal(
        test_pg_query_u64_printf(conninfo,
                                 "SELECT count(DISTINCT seq) FROM activities JOIN processes p "
                                 "USING (process_id) WHERE %s",
                                 where),
        drained);
    /* dd's writes into its file: as many and as large as dd made them. */
    char *file = g_strdup_printf("%s/dd.out", n->dir);
    char *writes = g_strdup_printf("FROM activities a JOIN processes p USING (process_id) "
                                   "JOIN files f USING (file_id) WHERE %s AND a.operation = %d "
                                   "AND f.path = '%s'",
                                   where, VIGIL_OP_POSIX_WRITE, file);
    assert_int_equal(test_pg_query_u64_printf(conninfo, "SELECT count(*) %s", writes), n->blocks);
    assert_int_equal(
        test_pg_query_u64_printf(conninfo, "SELECT coalesce(sum(a.bytes), 0) %s", writes),
        (guint64)n->blocks * BLOCK_BYTES);
    assert_int_equal(
        test_pg_query_u64_printf(conninfo,
                                 "SELECT bytes_written FROM run_summaries JOIN processes p "
                                 "USING (process_id) WHERE %s",
                                 where),
        (guint64)n->blocks * BLOCK_BYTES);
    json_node_unref(status);
    g_free(writes);
    g_free(file);
    g_free(where);
}

/* The node's batches and roll-ups: every batch vigild has seen
 * acknowledged is stored, the sequences without a gap; every metric's
 * roll-up windows follow one another, none twice. */
static void check_statistics(const char *conninfo, const struct node *n)
{
    JsonNode *status = test_daemon_status(&n->daemon, 0);
    JsonObject *root = json_node_get_object(status);
    JsonObject *uplink = json_object_get_object_member(root, "uplink");
    assert_string_equal(json_object_get_string_member(uplink, "hostname"), n->hostname);
    assert_int_equal(test_daemon_json_int(uplink, "node_id", NULL), n->node_id);
    assert_true(json_object_get_boolean_member(uplink, "connected"));
    assert_int_equal(test_daemon_json_int(uplink, "refused", NULL), 0);
    gint64 acked = test_daemon_json_int(uplink, "acked", NULL);

    assert_true(acked > 0);
    json_node_unref(status);

    guint64 id = n->node_id;
    assert_true(test_pg_query_u64_printf(
                    conninfo,
                    "SELECT count(*) FROM ingested_batches WHERE node_id = %" G_GUINT64_FORMAT,
                    id) >= (guint64)acked);
    assert_int_equal(
        test_pg_query_u64_printf(conninfo,
                                 "SELECT max(sequence) - min(sequence) + 1 - count(*) FROM "
                                 "ingested_batches WHERE node_id = %" G_GUINT64_FORMAT,
                                 id),
        0);
    /* A node's first roll-up window closes a second after its start and
     * goes out with the cycle after that: on a fast machine the checks
     * above can come first. */
    char *rollups = g_strdup_printf("SELECT count(DISTINCT metric_id) FROM statistics_rollups "
                                    "WHERE node_id = %" G_GUINT64_FORMAT,
                                    id);
    test_pg_wait_for_count_in(conninfo, rollups, 1);
    g_free(rollups);
    /* No window twice. */
    assert_int_equal(
        test_pg_query_u64_printf(conninfo,
                                 "SELECT count(*) - count(DISTINCT (metric_id, start_time)) FROM "
                                 "statistics_rollups WHERE node_id = %" G_GUINT64_FORMAT,
                                 id),
        0);
    /* None missing across metrics: every batch closes the same windows
     * for each of the node's metrics. */
    assert_int_equal(
        test_pg_query_u64_printf(conninfo,
                                 "SELECT count(DISTINCT n) FROM (SELECT count(*) AS n FROM "
                                 "statistics_rollups WHERE node_id = %" G_GUINT64_FORMAT
                                 " GROUP BY metric_id) m",
                                 id),
        1);
}

static char *node_config(const struct node *n, const char *endpoint, const char *server_key,
                         const char *conninfo)
{
    return g_strdup_printf("mode = all\n"
                           "[uplink]\nendpoint = %s\nnode_id = %" G_GUINT64_FORMAT "\n"
                           "hostname = %s\nspool_dir = %s/spool\n"
                           "curve_server_key = %s\ncurve_key_file = %s/node.key\n"
                           "[warehouse]\nconninfo = %s\n",
                           endpoint, n->node_id, n->hostname, n->dir, server_key, n->dir, conninfo);
}

static void test_three_nodes_one_job(void **state)
{
    struct test_txd_fixture *f = *state;
    /* The keys: vigil-txd's pair, each node's, and the file of the nodes'
     * public keys vigil-txd admits. */
    char *txd_key_path = g_build_filename(f->dir, "txd.key", NULL);
    char *txd_public = keygen(txd_key_path);
    GString *authorized = g_string_new("# the three nodes\n");
    for (int i = 0; i < NODES; i++) {
        nodes[i].dir = g_build_filename(f->dir, nodes[i].hostname, NULL);
        assert_int_equal(g_mkdir(nodes[i].dir, 0700), 0);
        char *key_path = g_build_filename(nodes[i].dir, "node.key", NULL);
        nodes[i].public_key = keygen(key_path);
        g_string_append_printf(authorized, "%s\n", nodes[i].public_key);
        g_free(key_path);
    }
    char *authorized_path = g_build_filename(f->dir, "authorized_keys", NULL);
    assert_true(g_file_set_contents(authorized_path, authorized->str, -1, NULL));

    char *endpoint = g_strdup_printf("tcp://127.0.0.1:%d", test_free_port());
    char *txd_config = g_strdup_printf("curve_key_file = %s\ncurve_authorized_keys = %s\n",
                                       txd_key_path, authorized_path);
    test_txd_start_at(&f->txd, f->dir, endpoint, f->conninfo, txd_config);
    char *serving = g_strdup_printf("serving %s with CURVE", endpoint);
    assert_true(file_contains(f->txd.log_path, serving));

    for (int i = 0; i < NODES; i++) {
        char *config = node_config(&nodes[i], endpoint, txd_public, f->conninfo);
        test_daemon_start(&nodes[i].daemon, nodes[i].dir,
                          "providers = procstat;meminfo;process\ncycle_ms = 200\n", config);
        g_free(config);
    }
    /* The system reasoner counts a node while its states keep coming: the
     * three daemons run at once now. */
    test_wait_for_file_text(f->txd.log_path, "system reasoner: 3 nodes counted");

    for (int i = 0; i < NODES; i++)
        run_dd(&nodes[i]);
    for (int i = 0; i < NODES; i++)
        check_process(f->conninfo, &nodes[i]);

    /* The nodes as they named themselves, each once. */
    char *stored_nodes = query_text(f->conninfo, "SELECT string_agg(node_id || '=' || hostname, "
                                                 "',' ORDER BY node_id) FROM nodes");
    assert_string_equal(stored_nodes, "1401=node-a,1402=node-b,1403=node-c");
    /* One run, in the job, with one process on each node; ended, with
     * dd's exit status. */
    assert_int_equal(test_pg_query_u64_printf(
                         f->conninfo, "SELECT count(*) FROM runs r JOIN jobs j USING (job_id) "
                                      "WHERE r.run_key = '" RUN_KEY "' AND "
                                      "j.scheduler_job_id = '" JOB "' AND r.exit_status = 0 "
                                      "AND r.end_time IS NOT NULL"),
                     1);
    assert_int_equal(test_pg_query_u64_printf(f->conninfo, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(test_pg_query_u64_printf(f->conninfo, "SELECT count(*) FROM jobs"), 1);
    char *run_nodes = query_text(f->conninfo, "SELECT string_agg(DISTINCT p.node_id::text, ',') "
                                              "FROM processes p JOIN runs r USING (run_id) "
                                              "WHERE r.run_key = '" RUN_KEY "'");
    assert_string_equal(run_nodes, "1401,1402,1403");

    for (int i = 0; i < NODES; i++)
        check_statistics(f->conninfo, &nodes[i]);

    for (int i = 0; i < NODES; i++)
        g_free(test_daemon_stop(&nodes[i].daemon));
    char *log = test_txd_stop(&f->txd);
    /* Each node connected with its own key, and none was turned away. */
    test_assert_contains(log, "node 1401 connected");
    test_assert_contains(log, "node 1402 connected");
    test_assert_contains(log, "node 1403 connected");
    assert_null(strstr(log, "refused a "));
    test_assert_contains(log,
                         " 0 refused by the database (0 naming another key's node), 0 malformed");
    g_free(log);

    for (int i = 0; i < NODES; i++) {
        g_free(nodes[i].dir);
        g_free(nodes[i].public_key);
    }
    g_free(run_nodes);
    g_free(stored_nodes);
    g_free(serving);
    g_free(txd_config);
    g_free(endpoint);
    g_free(authorized_path);
    g_string_free(authorized, TRUE);
    g_free(txd_public);
    g_free(txd_key_path);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_three_nodes_one_job))
