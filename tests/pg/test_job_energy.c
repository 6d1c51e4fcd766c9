/* A job's energy across nodes: two vigild on this machine, each a node of
 * its own (node id, host name, socket, spool) with a fixture powercap tree
 * (ROOT/sys/class/powercap/intel-rapl:0, whose energy_uj the test writes)
 * as its only energy source, send to one vigil-txd with a private
 * PostgreSQL. One job spans them: an instrumented cat on each node, with
 * the same run key and SLURM_JOB_ID, waiting on its standard input.
 *
 * The fixture counters move only while the job's processes are registered,
 * by a different amount on each node; the test waits (polling `vigil
 * status`, never sleeping) until each vigild has sampled the increment.
 * Then the job's energy in the warehouse's job_energy view is the sum of
 * the increments, and job_energy_nodes has each node's increment: the job
 * had the nodes to itself, so it gets their whole energy. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "test_daemon.h"
#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"

#define NODES        2
#define RUN_KEY      "job-energy-run"
#define JOB          "8123"
#define WAIT_LIMIT_S 60
#define START_UJ     5000000ull /* the counters' value before the job */
#define RANGE_UJ     "262143328850"

/* The energy provider's source chain: powercap only, so that nothing but
 * the fixture counts. */
#define ENERGY_SOURCE_LINE "sources = powercap"

struct node {
    const char *hostname;
    guint64 node_id;
    guint64 increment_uj; /* what the counter moves while the job runs */
    char *dir, *root;
    struct test_daemon daemon;
    pid_t pid;
    int stdin_fd;
};

static struct node nodes[NODES] = {
    {.hostname = "energy-a", .node_id = 1601, .increment_uj = 1250000},
    {.hostname = "energy-b", .node_id = 1602, .increment_uj = 3500250},
};

/* energy_uj rewritten in place: the provider keeps it open and preads. */
static void set_counter(const struct node *n, guint64 value_uj)
{
    char *path = g_build_filename(n->root, "sys/class/powercap/intel-rapl:0/energy_uj", NULL);
    char *text = g_strdup_printf("%" G_GUINT64_FORMAT "\n", value_uj);
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        fail_msg("opening %s: %s", path, g_strerror(errno));
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(close(fd), 0);
    g_free(text);
    g_free(path);
}

static void write_fixture(struct node *n)
{
    n->root = g_build_filename(n->dir, "root", NULL);
    char *zone = g_build_filename(n->root, "sys/class/powercap/intel-rapl:0", NULL);
    assert_int_equal(g_mkdir_with_parents(zone, 0700), 0);
    const char *files[][2] = {{"name", "package-0\n"}, {"max_energy_range_uj", RANGE_UJ "\n"}};
    for (gsize i = 0; i < G_N_ELEMENTS(files); i++) {
        char *path = g_build_filename(zone, files[i][0], NULL);
        assert_true(g_file_set_contents(path, files[i][1], -1, NULL));
        g_free(path);
    }
    char *path = g_build_filename(zone, "energy_uj", NULL);
    assert_true(g_file_set_contents(path, "0\n", -1, NULL));
    g_free(path);
    g_free(zone);
    set_counter(n, START_UJ);
}

static double json_double(JsonObject *o, const char *name)
{
    if (o == NULL || !json_object_has_member(o, name) ||
        json_node_get_value_type(json_object_get_member(o, name)) == G_TYPE_INVALID)
        return NAN;
    return json_object_get_double_member(o, name);
}

static JsonObject *energy_of(JsonNode *status)
{
    return json_object_get_object_member(json_node_get_object(status), "energy");
}

/* Polls vigild's status until `done` says so: the condition is what the
 * test waits for, the bound only turns a hang into a failure. */
static JsonNode *wait_for_status(const struct node *n, pid_t pid,
                                 gboolean (*done)(JsonNode *status, const struct node *n,
                                                  pid_t pid),
                                 const char *what)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_LIMIT_S * G_USEC_PER_SEC;
    for (;;) {
        JsonNode *status = test_daemon_status(&n->daemon, 0);
        if (done(status, n, pid))
            return status;
        json_node_unref(status);
        if (g_get_monotonic_time() > deadline)
            fail_msg("%s: vigild never showed %s", n->hostname, what);
        g_usleep(20000);
    }
}

static gboolean energy_sampled(JsonNode *status, const struct node *n, pid_t pid)
{
    (void)n, (void)pid;
    return !isnan(json_double(energy_of(status), "total_j"));
}

/* The process is registered and the process provider has sampled its CPU
 * time: from the next tick on it has its share of every delta. */
static gboolean process_sampled(JsonNode *status, const struct node *n, pid_t pid)
{
    (void)n;
    JsonObject *p = test_daemon_process(status, pid);
    return p != NULL && !isnan(json_double(p, "cpu_s"));
}

static gboolean increment_sampled(JsonNode *status, const struct node *n, pid_t pid)
{
    (void)pid;
    double total_j = json_double(energy_of(status), "total_j");
    return !isnan(total_j) && total_j >= n->increment_uj / 1e6 - 1e-9;
}

/* cat under the node's vigild, in the job, reading the pipe the test holds. */
static void start_cat(struct node *n)
{
    char *report_var = g_strdup_printf("VIGIL_REPORT=%s/report.txt", n->dir);
    const char *vars[] = {report_var, "VIGIL_RUN_ID=" RUN_KEY, "SLURM_JOB_ID=" JOB, NULL};
    char **env = test_daemon_preload_env(&n->daemon, vars);
    const char *argv[] = {"/bin/cat", NULL};
    GError *error = NULL;
    if (!g_spawn_async_with_pipes(n->dir, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                  &n->pid, &n->stdin_fd, NULL, NULL, &error))
        fail_msg("starting cat: %s", error->message);
    g_strfreev(env);
    g_free(report_var);
}

static void end_cat(struct node *n)
{
    assert_int_equal(close(n->stdin_fd), 0);
    int status = 0;
    assert_int_equal(waitpid(n->pid, &status, 0), n->pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static double query_double(const char *conninfo, const char *format, ...) G_GNUC_PRINTF(2, 3);
static double query_double(const char *conninfo, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    char *sql = g_strdup_vprintf(format, ap);
    va_end(ap);
    char *text = test_pg_query_text_in(conninfo, sql);
    if (text == NULL)
        fail_msg("no value for: %s", sql);
    double value = g_ascii_strtod(text, NULL);
    g_free(text);
    g_free(sql);
    return value;
}

/* `vigil report ARGS…` with the node's configuration (its [warehouse]). */
static struct test_run vigil_report(const struct node *n, const char *const *args)
{
    const char *words[8] = {"--config", n->daemon.config_path};
    for (size_t i = 0; args[i] != NULL; i++) {
        assert_true(2 + i + 1 < G_N_ELEMENTS(words));
        words[2 + i] = args[i];
    }
    return test_run_vigil(NULL, "report", words);
}

#define JOB_LINE                                                                                   \
    "JOB_ENERGY_JOULE           4.750 on 2 nodes (energy/powercap); per node: min 1.250 "          \
    "(energy-a), mean 2.375, max 3.500 (energy-b)\n"
#define JOB_JSON                                                                                   \
    "\"job_energy\":{\"nodes\":2,\"processes\":2,\"processes_with_energy\":2,"                     \
    "\"energy_joule\":4.750250,\"node_min_joule\":1.250000,\"node_min_host\":\"energy-a\","        \
    "\"node_mean_joule\":2.375125,\"node_max_joule\":3.500250,\"node_max_host\":\"energy-b\","     \
    "\"sources\":\"energy/powercap\",\"estimated\":false,\"uncertain\":false}"

/* `vigil report RUN` adds the run's energy across its nodes to the stored
 * report; `vigil report --job` gives the job's (its first line the job,
 * its last the energy; its steps are tests/pg/test_jobs.c's). */
static void check_vigil_report(const struct node *n)
{
    struct test_run run = vigil_report(n, (const char *[]){RUN_KEY, NULL});
    test_assert_out(&run, 0, "vigil report RUN", JOB_LINE, NULL);
    test_run_clear(&run);
    run = vigil_report(n, (const char *[]){RUN_KEY, "--format", "json", NULL});
    test_assert_out(&run, 0, "vigil report RUN --format json", "," JOB_JSON ",", NULL);
    test_run_clear(&run);
    run = vigil_report(n, (const char *[]){"--job", JOB, NULL});
    test_assert_status(&run, 0, "vigil report --job");
    assert_true(g_str_has_prefix(run.out, "JOB                        " JOB "\n"));
    assert_true(g_str_has_suffix(run.out, "\n" JOB_LINE));
    test_assert_contains(run.out, "JOB_TOTAL                  0 steps, 1 runs, 2 processes, ");
    test_run_clear(&run);
    run = vigil_report(n, (const char *[]){"--job", JOB, "--format", "json", NULL});
    test_assert_status(&run, 0, "vigil report --job --format json");
    assert_true(g_str_has_prefix(run.out, "{\"job\":\"" JOB "\","));
    assert_true(g_str_has_suffix(run.out, "," JOB_JSON "}\n"));
    test_run_clear(&run);
    /* Bad input is named. */
    run = vigil_report(n, (const char *[]){"--job", "99", NULL});
    test_assert_err(&run, 1, "vigil report --job of no job", "the warehouse has no job 99", NULL);
    test_run_clear(&run);
    run = vigil_report(n, (const char *[]){"--job", "1;2", NULL});
    test_assert_err(&run, 2, "vigil report --job with a bad id",
                    "--job 1;2: a scheduler job id is letters, digits and ._+-", NULL);
    test_run_clear(&run);
}

static char *node_config(const struct node *n, const char *endpoint, const char *conninfo)
{
    return g_strdup_printf("mode = all\n"
                           "[provider.energy]\nroot = %s\n" ENERGY_SOURCE_LINE "\n"
                           "[uplink]\nendpoint = %s\nnode_id = %" G_GUINT64_FORMAT "\n"
                           "hostname = %s\nspool_dir = %s/spool\n"
                           "[warehouse]\nconninfo = %s\n",
                           n->root, endpoint, n->node_id, n->hostname, n->dir, conninfo);
}

static void test_one_job_on_two_nodes(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    for (int i = 0; i < NODES; i++) {
        struct node *n = &nodes[i];
        n->dir = g_build_filename(f->dir, n->hostname, NULL);
        assert_int_equal(g_mkdir(n->dir, 0700), 0);
        write_fixture(n);
        char *config = node_config(n, f->txd.endpoint, f->conninfo);
        test_daemon_start(&n->daemon, n->dir,
                          "providers = procstat;process;energy\ntick_ms = 50\ncycle_ms = 200\n",
                          config);
        g_free(config);
        json_node_unref(wait_for_status(n, 0, energy_sampled, "an energy total"));
    }

    /* The job's processes, registered and sampled; then the counters move,
     * and each vigild counts the increment before the job ends. */
    for (int i = 0; i < NODES; i++) {
        start_cat(&nodes[i]);
        json_node_unref(
            wait_for_status(&nodes[i], nodes[i].pid, process_sampled, "the job's process"));
    }
    for (int i = 0; i < NODES; i++)
        set_counter(&nodes[i], START_UJ + nodes[i].increment_uj);
    double total_j = 0;
    for (int i = 0; i < NODES; i++) {
        struct node *n = &nodes[i];
        double want_j = n->increment_uj / 1e6;
        total_j += want_j;
        JsonNode *status = wait_for_status(n, n->pid, increment_sampled, "the increment");
        JsonObject *energy = energy_of(status);
        /* One segment, from powercap, and nothing before the job. */
        assert_float_equal(json_double(energy, "total_j"), want_j, 1e-9);
        JsonArray *segments = json_object_get_array_member(energy, "segments");
        assert_int_equal(json_array_get_length(segments), 1);
        assert_string_equal(
            json_object_get_string_member(json_array_get_object_element(segments, 0), "source"),
            "energy/powercap");
        /* `vigil status` says so too. */
        struct test_run text = test_daemon_status_text(n->daemon.socket_path);
        test_assert_status(&text, 0, "vigil status");
        char *line = g_strdup_printf("  node total %.3f J in 1 segment:\n    1   energy/powercap, "
                                     "packages ×1, from ",
                                     want_j);
        test_assert_contains(text.out, line);
        g_free(line);
        test_run_clear(&text);
        /* Alone on its node, the job's process has all of it. */
        JsonObject *p = test_daemon_process(status, n->pid);
        assert_float_equal(json_double(p, "energy_j"), want_j, 1e-9);
        assert_string_equal(json_object_get_string_member(p, "energy_source"), "energy/powercap");
        json_node_unref(status);
    }
    for (int i = 0; i < NODES; i++)
        end_cat(&nodes[i]);

    /* Both reports stored: the job's energy is the nodes' increments. */
    test_pg_wait_for_count_in(f->conninfo,
                              "SELECT count(*) FROM process_energy WHERE scheduler_job_id = '" JOB
                              "' AND end_time IS NOT NULL AND energy_j IS NOT NULL",
                              NODES);
    assert_float_equal(query_double(f->conninfo,
                                    "SELECT energy_j FROM job_energy WHERE scheduler_job_id = '" JOB
                                    "'"),
                       total_j, 1e-9);
    assert_int_equal(test_pg_query_u64_in(f->conninfo, "SELECT nodes FROM job_energy WHERE "
                                                       "scheduler_job_id = '" JOB "'"),
                     NODES);
    for (int i = 0; i < NODES; i++)
        assert_float_equal(query_double(f->conninfo,
                                        "SELECT energy_j FROM job_energy_nodes WHERE "
                                        "scheduler_job_id = '" JOB
                                        "' AND node_id = %" G_GUINT64_FORMAT " AND hostname = '%s'",
                                        nodes[i].node_id, nodes[i].hostname),
                           nodes[i].increment_uj / 1e6, 1e-9);
    double a_j = nodes[0].increment_uj / 1e6, b_j = nodes[1].increment_uj / 1e6;
    assert_float_equal(query_double(f->conninfo, "SELECT node_min_j FROM job_energy"), a_j, 1e-9);
    assert_float_equal(query_double(f->conninfo, "SELECT node_max_j FROM job_energy"), b_j, 1e-9);
    assert_float_equal(query_double(f->conninfo, "SELECT node_mean_j FROM job_energy"),
                       (a_j + b_j) / 2, 1e-9);
    char *label = test_pg_query_text_in(
        f->conninfo, "SELECT sources || ' ' || estimated || ' ' || complete FROM job_energy");
    assert_string_equal(label, "energy/powercap false true");
    /* The run is the job's one run: the same figures. */
    char *run = test_pg_query_text_in(
        f->conninfo, "SELECT e.nodes || ' ' || e.sources FROM run_energy e JOIN runs r "
                     "USING (run_id) WHERE r.run_key = '" RUN_KEY "'");
    assert_string_equal(run, "2 energy/powercap");
    assert_float_equal(query_double(f->conninfo, "SELECT energy_j FROM run_energy"), total_j, 1e-9);

    /* node.energy_j, the node's running sum, reaches the warehouse's
     * roll-ups like any provider's metric, labelled measured: each node's
     * sum of deltas is its increment. */
    for (int i = 0; i < NODES; i++) {
        char *reached = g_strdup_printf(
            "SELECT count(*) FROM statistics_rollups s JOIN metrics m USING (metric_id)"
            " WHERE m.name = 'node.energy_j' AND m.origin = 'measured' AND s.node_id = "
            "%" G_GUINT64_FORMAT " AND s.max >= %.9f",
            nodes[i].node_id, nodes[i].increment_uj / 1e6 - 1e-9);
        test_pg_wait_for_count_in(f->conninfo, reached, 1);
        g_free(reached);
        assert_float_equal(query_double(f->conninfo,
                                        "SELECT sum(s.delta) FROM statistics_rollups s JOIN metrics"
                                        " m USING (metric_id) WHERE m.name = 'node.energy_j' AND"
                                        " s.node_id = %" G_GUINT64_FORMAT,
                                        nodes[i].node_id),
                           nodes[i].increment_uj / 1e6, 1e-9);
    }

    check_vigil_report(&nodes[0]);

    for (int i = 0; i < NODES; i++)
        g_free(test_daemon_stop(&nodes[i].daemon));
    g_free(test_txd_stop(&f->txd));
    for (int i = 0; i < NODES; i++) {
        g_free(nodes[i].dir);
        g_free(nodes[i].root);
    }
    g_free(run);
    g_free(label);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_one_job_on_two_nodes))
