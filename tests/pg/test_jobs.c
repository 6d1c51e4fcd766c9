/* A Slurm job's data path end to end, with no Slurm: what a prolog, two
 * srun steps and an epilog do on a node, done by hand. vigild (uplinked to
 * vigil-txd and a private PostgreSQL) is told `vigil job begin` with
 * Slurm's variables, two `vigil run -- dd` with SLURM_JOB_ID and
 * SLURM_STEP_ID 0 and 1 write, then `vigil job end`. The warehouse holds
 * the job with its user, uid, node list, begin and end, and both steps
 * (read from their run keys); `vigil report --job` shows each step and the
 * totals, in text and JSON. */
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

#define JOB      "9301"
#define HOST     "jobs-a"
#define NODE_ID  1701
#define DD_BYTES 65536 /* 16 blocks of 4096 */

/* `vigil ARGS…` with the Slurm variables of the job (and step, unless
 * NULL), the node's socket and its configuration. */
static struct test_run vigil(const struct test_daemon *d, const char *step, const char *const *args)
{
    char *preload_var =
        g_strconcat("VIGIL_PRELOAD_LIB=", test_env_or_fail("VIGIL_PRELOAD_LIB"), NULL);
    char *report_var = g_strdup_printf("VIGIL_REPORT=%s/report.txt", d->dir);
    char *step_var = step != NULL ? g_strconcat("SLURM_STEP_ID=", step, NULL) : NULL;
    const char *vars[] = {preload_var, report_var, "SLURM_JOB_ID=" JOB,
                          /* The test's own uid: a step's processes are
                           * the job's user's (a Slurm key is the uid
                           * root tells vigild the job is). */
                          "SLURM_JOB_USER=root", "SLURM_JOB_UID=0", "SLURM_JOB_NODELIST=" HOST,
                          step_var, NULL};
    struct test_run run = test_daemon_vigil_env(d, d->dir, vars, args);
    g_free(step_var);
    g_free(report_var);
    g_free(preload_var);
    return run;
}

static void run_step(const struct test_daemon *d, const char *step)
{
    char *of = g_strdup_printf("of=%s/step%s.dat", d->dir, step);
    struct test_run run = vigil(d, step,
                                (const char *[]){"run", "--", "dd", "if=/dev/zero", of, "bs=4096",
                                                 "count=16", "status=none", NULL});
    test_assert_status(&run, 0, "vigil run -- dd in a job step");
    test_run_clear(&run);
    g_free(of);
}

static void check_warehouse(const char *conninfo)
{
    char *job = test_pg_query_text_in(
        conninfo, "SELECT user_name || ' ' || uid || ' ' || node_list || ' ' || "
                  "(begin_time < end_time) FROM jobs WHERE scheduler_job_id = '" JOB "'");
    assert_string_equal(job, "root 0 " HOST " true");
    g_free(job);
    /* The prolog and epilog's notice, on its node. */
    assert_int_equal(
        test_pg_query_u64_in(conninfo,
                             "SELECT count(*) FROM job_steps s JOIN jobs j USING (job_id) WHERE "
                             "j.scheduler_job_id = '" JOB
                             "' AND s.step_id = '' AND s.node_id = " G_STRINGIFY(
                                 NODE_ID) " AND s.begin_time < s.end_time"),
        1);
    /* Both steps, from their run keys, each a dd that wrote its bytes. */
    char *steps = test_pg_query_text_in(
        conninfo, "SELECT string_agg(step_id || ':' || run_key || ':' || hosts || ':' || "
                  "bytes_written, ' ' ORDER BY step_id) FROM job_runs WHERE scheduler_job_id = "
                  "'" JOB "'");
    assert_string_equal(steps, "0:slurm-" JOB ".0:" HOST ":65536 1:slurm-" JOB ".1:" HOST ":65536");
    g_free(steps);
    char *summary = test_pg_query_text_in(
        conninfo, "SELECT steps || ' ' || runs || ' ' || processes || ' ' || hosts || ' ' || "
                  "bytes_written || ' ' || (begin_time < end_time) FROM job_summary WHERE "
                  "scheduler_job_id = '" JOB "'");
    assert_string_equal(summary, "2 2 2 " HOST " 131072 true");
    g_free(summary);
}

static void check_report(const struct test_daemon *d)
{
    struct test_run run = vigil(d, NULL, (const char *[]){"report", "--job", JOB, NULL});
    test_assert_status(&run, 0, "vigil report --job");
    assert_true(g_str_has_prefix(run.out, "JOB                        " JOB "\n"
                                          "USER                       root (uid 0)\n"
                                          "NODE_LIST                  " HOST "\n"
                                          "HOSTS                      " HOST "\n"
                                          "BEGIN                      "));
    test_assert_contains(run.out,
                         "STEP 0                     dd on " HOST
                         ", 1 process, read 64.0 KiB (65536 B), written 64.0 KiB (65536 B), ");
    test_assert_contains(run.out, "STEP 1                     dd on " HOST ", 1 process, ");
    test_assert_contains(run.out, "JOB_TOTAL                  2 steps, 2 runs, 2 processes, read "
                                  "128.0 KiB (131072 B), written 128.0 KiB (131072 B), ");
    test_assert_contains(run.out, "JOB_ENERGY_JOULE ");
    test_run_clear(&run);

    run = vigil(d, NULL, (const char *[]){"report", "--job", JOB, "--format", "json", NULL});
    test_assert_status(&run, 0, "vigil report --job --format json");
    JsonParser *parser = json_parser_new();
    GError *error = NULL;
    if (!json_parser_load_from_data(parser, run.out, -1, &error))
        fail_msg("the job's JSON does not parse: %s\n%s", error->message, run.out);
    JsonObject *o = json_node_get_object(json_parser_get_root(parser));
    assert_string_equal(json_object_get_string_member(o, "job"), JOB);
    assert_string_equal(json_object_get_string_member(o, "user"), "root");
    assert_int_equal(json_object_get_int_member(o, "uid"), 0);
    JsonArray *steps = json_object_get_array_member(o, "steps");
    assert_int_equal(json_array_get_length(steps), 2);
    for (guint i = 0; i < 2; i++) {
        JsonObject *s = json_array_get_object_element(steps, i);
        char want[2] = {(char)('0' + i), '\0'};
        assert_string_equal(json_object_get_string_member(s, "step"), want);
        assert_int_equal(json_object_get_int_member(s, "bytes_written"), DD_BYTES);
    }
    JsonObject *total = json_object_get_object_member(o, "total");
    assert_int_equal(json_object_get_int_member(total, "steps"), 2);
    assert_int_equal(json_object_get_int_member(total, "bytes_written"), 2 * DD_BYTES);
    assert_true(json_object_has_member(o, "job_energy"));
    g_object_unref(parser);
    test_run_clear(&run);
}

static void test_job_with_two_steps(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    char *dir = g_build_filename(f->dir, HOST, NULL);
    assert_int_equal(g_mkdir(dir, 0700), 0);
    char *config = g_strdup_printf("[uplink]\nendpoint = %s\nnode_id = %d\nhostname = " HOST
                                   "\nspool_dir = %s/spool\n[warehouse]\nconninfo = %s\n",
                                   f->txd.endpoint, NODE_ID, dir, f->conninfo);
    struct test_daemon d;
    test_daemon_start(&d, dir, "providers = procstat;process\ncycle_ms = 200\n", config);
    g_free(config);

    struct test_run run = vigil(&d, NULL, (const char *[]){"job", "begin", NULL});
    test_assert_status(&run, 0, "vigil job begin (a prolog)");
    test_run_clear(&run);
    run_step(&d, "0");
    run_step(&d, "1");
    run = vigil(&d, NULL, (const char *[]){"job", "end", NULL});
    test_assert_status(&run, 0, "vigil job end (an epilog)");
    test_run_clear(&run);

    /* The end notice and both runs' reports, stored. */
    test_pg_wait_for_count_equal_in(
        f->conninfo,
        "SELECT count(*) FROM jobs WHERE scheduler_job_id = '" JOB "' AND end_time IS NOT NULL", 1);
    test_pg_wait_for_count_equal_in(f->conninfo,
                                    "SELECT count(*) FROM job_runs WHERE scheduler_job_id = '" JOB
                                    "' AND end_time IS NOT NULL AND bytes_written > 0",
                                    2);
    check_warehouse(f->conninfo);
    check_report(&d);

    char *log = test_daemon_stop(&d);
    test_assert_contains(log, "job " JOB " begins (user root, nodes " HOST ")");
    g_free(log);
    g_free(test_txd_stop(&f->txd));
    g_free(dir);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_job_with_two_steps))
